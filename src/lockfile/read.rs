//! The one reader: strict about shape (exit 2 with file, line and column), lenient
//! about age (0.1.x files without `resourceTemplates` are fine), and lazy. A file is
//! parsed once by serde_json into its envelope and each element's text (borrowed, not
//! built); every element is then checked in one pass ([`super::probe`]: serde_json's own
//! parse of the element, every string decoded and every number read, as a
//! `serde_json::Value` would be) and validated ([`check_element`]). Only then may an
//! element be built. [`Lockfile::parse`] builds them all; the offline check builds only
//! the elements whose bytes differ between two files. Either way a file is accepted or
//! refused by the same steps, with the same message.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{Element, Kind, Lockfile, ServerInfo, Surface, COVENANT_VERSION};
use super::normalise::normalize_element;
use super::probe::{self, Fields};
use crate::elements::Form;
use crate::error::{Error, Result};
use crate::io::read_input;

impl Lockfile {
    /// Parse lockfile text; `origin` names the file in error messages.
    pub fn parse(text: &[u8], origin: &str) -> Result<Lockfile> {
        Raw::read(text, origin, true)?.build()
    }

    /// [`Lockfile::parse`] for `lint`: duplicate names are findings there, not errors.
    pub fn parse_lenient(text: &[u8], origin: &str) -> Result<Lockfile> {
        Raw::read(text, origin, false)?.build()
    }

    pub fn read(path: &Path) -> Result<Lockfile> {
        let text = read_input(path, "lockfile")?;
        Lockfile::parse(&text, &path.display().to_string())
    }

    /// Read a lockfile for `lint`: duplicate names are findings there, not errors.
    pub fn read_lenient(path: &Path) -> Result<Lockfile> {
        let text = read_input(path, "lockfile")?;
        Lockfile::parse_lenient(&text, &path.display().to_string())
    }
}

/// The deepest nesting serde_json reads (its recursion limit).
pub(crate) const MAX_DEPTH: usize = 127;

/// One element as read: its key and its text in the file, checked, not built.
#[derive(Clone, Debug)]
pub struct RawElement<'a> {
    pub key: Cow<'a, str>,
    pub text: &'a str,
}

/// A lockfile read (every element checked) with its elements not built.
pub struct Raw<'a> {
    pub covenant_version: String,
    pub captured_at_unix: u64,
    pub server: ServerInfo,
    /// Each kind's elements in file order, in [`Kind::ALL`] order.
    pub lists: Vec<Vec<RawElement<'a>>>,
    /// Where each kind's list is named in the file (the offset of its key), when the
    /// key is written without escapes.
    pub(super) list_at: [Option<usize>; 4],
    pub(super) bytes: &'a [u8],
    pub origin: String,
}

/// The file as serde_json reads it: the envelope, and each element's text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    covenant_version: String,
    captured_at_unix: u64,
    #[serde(default)]
    server: ServerInfo,
    #[serde(borrow)]
    surface: Lists<'a>,
}

/// `surface`: each list's elements as text, and where each list's key is.
#[derive(Default)]
struct Lists<'a> {
    lists: [Vec<&'a RawValue>; 4],
    keys: [Option<&'a str>; 4],
}

/// The lists, in [`Kind::ALL`] order.
fn list_names() -> &'static [&'static str; 4] {
    static NAMES: std::sync::OnceLock<[&'static str; 4]> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| Kind::ALL.map(Kind::list_name))
}

impl<'de: 'a, 'a> Deserialize<'de> for Lists<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_map(ListsVisitor(std::marker::PhantomData))
    }
}

struct ListsVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ListsVisitor<'a> {
    type Value = Lists<'a>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Surface")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Lists<'a>, A::Error> {
        let mut out = Lists::default();
        let mut seen = [false; 4];
        let names = list_names();
        while let Some(key) = map.next_key_seed(Key)? {
            let Some(k) = names.iter().position(|n| *n == key) else {
                return Err(de::Error::unknown_field(&key, names));
            };
            if std::mem::replace(&mut seen[k], true) {
                return Err(de::Error::duplicate_field(names[k]));
            }
            if let Cow::Borrowed(text) = key {
                out.keys[k] = Some(text);
            }
            out.lists[k] = map.next_value::<Vec<&'de RawValue>>()?;
        }
        Ok(out)
    }
}

/// A key, borrowed from the file when it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }
}

/// A file read as far as its envelope: its elements' text, not yet checked.
struct Unchecked<'a> {
    envelope: (String, u64, ServerInfo),
    texts: Vec<Vec<&'a str>>,
    list_at: [Option<usize>; 4],
}

fn envelope<'a>(bytes: &'a [u8], origin: &str) -> Result<Unchecked<'a>> {
    let e: Envelope<'a> = serde_json::from_slice(bytes).map_err(|e| position_error(origin, &e))?;
    check_version(&e.covenant_version, origin)?;
    let Lists { lists, keys } = e.surface;
    Ok(Unchecked {
        envelope: (e.covenant_version, e.captured_at_unix, e.server),
        texts: lists
            .into_iter()
            .map(|l| l.into_iter().map(RawValue::get).collect())
            .collect(),
        list_at: keys.map(|k| k.map(|k| offset(bytes, k))),
    })
}

/// Where `part` starts in `bytes` (it borrows from them).
pub(super) fn offset(bytes: &[u8], part: &str) -> usize {
    part.as_ptr() as usize - bytes.as_ptr() as usize
}

impl<'a> Raw<'a> {
    /// Read one file: its envelope, and every element checked and validated.
    pub fn read(bytes: &'a [u8], origin: &str, unique: bool) -> Result<Raw<'a>> {
        let u = envelope(bytes, origin)?;
        let fields = u
            .texts
            .iter()
            .zip(Kind::ALL)
            .map(|(l, kind)| {
                l.iter()
                    .map(|t| probe_element(bytes, t, origin, kind))
                    .collect()
            })
            .collect::<Result<Vec<Vec<_>>>>()?;
        Raw::finish(bytes, origin, u, fields, unique)
    }

    /// Read the two files of an offline check, sharing the work between them and the
    /// two threads: each file's envelope on its own thread, the baseline's elements half
    /// on each, and an element of the other file whose bytes equal the baseline element
    /// at the same place in key order takes that element's reading (the same bytes read
    /// the same). Only the other file's differing elements are read again.
    pub fn read_pair<'b>(a: (&'a [u8], &str), b: (&'b [u8], &str)) -> Result<(Raw<'a>, Raw<'b>)> {
        let (ua, ub) = std::thread::scope(|s| {
            let ta = s.spawn(|| envelope(a.0, a.1));
            let ub = envelope(b.0, b.1);
            (joined(ta.join()), ub)
        });
        let (ua, ub) = (ua?, ub?);
        let half = |first: bool| {
            ua.texts
                .iter()
                .zip(Kind::ALL)
                .map(|(l, kind)| {
                    let part = if first {
                        &l[..l.len() / 2]
                    } else {
                        &l[l.len() / 2..]
                    };
                    part.iter()
                        .map(|t| probe_element(a.0, t, a.1, kind))
                        .collect()
                })
                .collect::<Result<Vec<Vec<_>>>>()
        };
        let (first, second) = std::thread::scope(|s| {
            let t = s.spawn(|| half(true));
            let second = half(false);
            (joined(t.join()), second)
        });
        let fields_a: Vec<Vec<Fields<'a>>> = first?
            .into_iter()
            .zip(second?)
            .map(|(mut x, y)| {
                x.extend(y);
                x
            })
            .collect();
        let mut fields_b = Vec::new();
        for (k, kind) in Kind::ALL.into_iter().enumerate() {
            let (ta, fa) = (&ua.texts[k], &fields_a[k]);
            let mut i = 0;
            let mut out = Vec::new();
            for text in &ub.texts[k] {
                if ta.get(i).is_some_and(|x| x == text) {
                    out.push(fa[i].detached());
                    i += 1;
                    continue;
                }
                let f = probe_element(b.0, text, b.1, kind)?;
                // Keep the place in the baseline: past the keys before this one (a guess;
                // a wrong guess only costs a reading).
                while i < ta.len() && fa[i].key_text() < f.key_text() {
                    i += 1;
                }
                if i < ta.len() && fa[i].key_text() == f.key_text() {
                    i += 1;
                }
                out.push(f);
            }
            fields_b.push(out);
        }
        Ok((
            Raw::finish(a.0, a.1, ua, fields_a, true)?,
            Raw::finish(b.0, b.1, ub, fields_b, true)?,
        ))
    }

    /// Validate every element ([`check_element`]) and keep its key.
    fn finish(
        bytes: &'a [u8],
        origin: &str,
        u: Unchecked<'a>,
        fields: Vec<Vec<Fields<'a>>>,
        unique: bool,
    ) -> Result<Raw<'a>> {
        let mut lists = Vec::new();
        for ((kind, fields), texts) in Kind::ALL.into_iter().zip(fields).zip(u.texts) {
            let mut seen = HashSet::new();
            for (i, f) in fields.iter().enumerate() {
                check_element(origin, kind, i, f, &mut seen, unique)?;
            }
            let list = fields
                .into_iter()
                .zip(texts)
                .map(|(f, text)| RawElement {
                    key: f.key.flatten().unwrap_or_default(),
                    text,
                })
                .collect();
            lists.push(list);
        }
        let (covenant_version, captured_at_unix, server) = u.envelope;
        Ok(Raw {
            covenant_version,
            captured_at_unix,
            server,
            lists,
            list_at: u.list_at,
            bytes,
            origin: origin.to_string(),
        })
    }

    /// Each kind's elements by key (in key order).
    pub fn index(&self) -> Vec<BTreeMap<&str, &'a str>> {
        self.lists
            .iter()
            .map(|l| l.iter().map(|e| (e.key.as_ref(), e.text)).collect())
            .collect()
    }

    /// Build one element of this file (already checked: it is an object of JSON the
    /// parser reads), normalised.
    pub fn build_element(&self, text: &str, kind: Kind) -> Result<Element> {
        let mut e: Element = serde_json::from_str(text).map_err(|err| {
            Error::new(format!(
                "{}: an element of surface.{}: {err}",
                self.origin,
                kind.list_name()
            ))
        })?;
        normalize_element(kind, &mut e);
        Ok(e)
    }

    /// Every element built: the lockfile, normalised.
    pub fn build(self) -> Result<Lockfile> {
        let mut surface = Surface::default();
        for (kind, list) in Kind::ALL.into_iter().zip(&self.lists) {
            let built = list
                .iter()
                .map(|e| self.build_element(e.text, kind))
                .collect::<Result<Vec<_>>>()?;
            *surface.list_mut(kind) = built;
        }
        surface.normalize();
        Ok(Lockfile {
            covenant_version: self.covenant_version,
            captured_at_unix: self.captured_at_unix,
            server: self.server,
            surface,
        })
    }
}

fn joined<T>(r: std::thread::Result<Result<T>>) -> Result<T> {
    r.unwrap_or_else(|_| Err(Error::new("reading a lockfile failed")))
}

/// Check one element's text ([`probe::read`]) and how deep it nests. An error names the
/// place in the file, as a parse of the whole file would.
fn probe_element<'a>(
    bytes: &'a [u8],
    text: &'a str,
    origin: &str,
    kind: Kind,
) -> Result<Fields<'a>> {
    let at = offset(bytes, text);
    let fields = probe::read(text, kind.spec()).map_err(|e| {
        let (line, column) = line_and_column(bytes, at);
        let (line, column) = match e.line() {
            0 | 1 => (line, column + e.column().saturating_sub(1)),
            l => (line + l - 1, e.column()),
        };
        Error::new(format!(
            "{origin}:{line}:{column}: not a valid lockfile: {}",
            strip_position(&e.to_string())
        ))
    })?;
    // The element sits at depth 3: inside the file, the surface and a list.
    if 3 + fields.depth > MAX_DEPTH {
        let (line, column) = line_and_column(bytes, at);
        return Err(Error::new(format!(
            "{origin}:{line}:{column}: not a valid lockfile: an element of surface.{} nests deeper than the {MAX_DEPTH} levels a lockfile may",
            kind.list_name()
        )));
    }
    Ok(fields)
}

/// The 1-based line and column of byte `at`.
pub(super) fn line_and_column(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    (line, at - start + 1)
}

/// An element's `arguments`, as validation sees them.
#[derive(Clone, Debug)]
pub(crate) enum Arguments {
    Absent,
    NotArray,
    /// Per argument: whether it has a string `name`.
    Names(Vec<bool>),
}

/// The one validation of an element, of a file read or of a surface about to be
/// written, so every path refuses the same elements with the same message.
pub(crate) fn check_element(
    origin: &str,
    kind: Kind,
    i: usize,
    shape: &Fields<'_>,
    seen: &mut HashSet<String>,
    unique: bool,
) -> Result<()> {
    let key = kind.key_field();
    let where_ = || format!("{origin}: surface.{}[{i}]", kind.list_name());
    match &shape.key {
        Some(Some(k)) => {
            if !seen.insert(k.to_string()) && unique {
                return Err(Error::new(format!(
                    "{}: duplicate {} `{k}`",
                    where_(),
                    kind.word()
                )));
            }
        }
        Some(None) => {
            return Err(Error::new(format!(
                "{}: `{key}` must be a string",
                where_()
            )))
        }
        None => return Err(Error::new(format!("{}: missing `{key}`", where_()))),
    }
    for (field, k) in kind.spec().schema.iter().zip(shape.schemas) {
        if field.form == Form::Schema && !matches!(k, None | Some('{' | 't' | 'f')) {
            return Err(Error::new(format!(
                "{}: `{}` must be a JSON Schema object",
                where_(),
                field.field
            )));
        }
    }
    let Some(named) = kind
        .spec()
        .schema
        .iter()
        .find(|s| s.form == Form::Arguments)
    else {
        return Ok(());
    };
    let field = &named.field;
    match &shape.arguments {
        Arguments::Absent => Ok(()),
        Arguments::NotArray => Err(Error::new(format!(
            "{}: `{field}` must be an array",
            where_()
        ))),
        Arguments::Names(names) => match names.iter().position(|ok| !ok) {
            Some(j) => Err(Error::new(format!(
                "{}.{field}[{j}]: missing string `name`",
                where_()
            ))),
            None => Ok(()),
        },
    }
}

/// The `captured_at_unix` of lockfile bytes, read without building the surface.
pub(super) fn captured_at_of(bytes: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        captured_at_unix: u64,
        #[allow(dead_code)]
        #[serde(borrow)]
        surface: &'a RawValue,
    }
    serde_json::from_slice::<Envelope<'_>>(bytes)
        .ok()
        .map(|e| e.captured_at_unix)
}

/// `file:line:column: not a valid lockfile: ...` for a parse error.
pub(crate) fn position_error(origin: &str, e: &serde_json::Error) -> Error {
    Error::new(format!(
        "{origin}:{}:{}: not a valid lockfile: {}",
        e.line(),
        e.column(),
        strip_position(&e.to_string())
    ))
}

/// Refuse files written by a newer mcp-covenant than this one (a newer minor may
/// record things we would silently misread).
pub(crate) fn check_version(version: &str, origin: &str) -> Result<()> {
    let parse = |v: &str| -> Option<(u64, u64)> {
        let mut it = v.split('.');
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    };
    let ours = parse(COVENANT_VERSION).unwrap_or((0, 0));
    match parse(version) {
        Some(theirs) if theirs <= ours => Ok(()),
        Some(_) => Err(Error::new(format!(
            "{origin}: written by mcp-covenant {version}, newer than this {COVENANT_VERSION}; upgrade mcp-covenant to read it"
        ))),
        None => Err(Error::new(format!(
            "{origin}: `covenant_version` is `{version}`, expected a version like {COVENANT_VERSION}"
        ))),
    }
}

/// serde_json appends " at line L column C"; we print the position up front instead.
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}
