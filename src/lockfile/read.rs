//! The one reader: strict about shape (exit 2 with file, line and column), lenient
//! about age (0.1.x files without `resourceTemplates` are fine), and lazy. A file is
//! parsed once by serde_json into its envelope and its elements, each element checked
//! as it is parsed ([`super::probe`]: serde_json's own parse of it, every string decoded
//! and every number read, as a `serde_json::Value` would be) and validated
//! ([`check_element`]), but not built; each element's text is then found where the
//! parse left its first key. Only then may an element be built. [`Lockfile::parse`]
//! builds them all; the offline check builds only the elements whose bytes differ
//! between two files. Either way a file is accepted or refused by the same steps.
//!
//! The other file of an offline check is read as text first (serde_json's grammar pass,
//! `RawValue`), and only its elements whose bytes differ from the baseline's are
//! checked, each on its own ([`probe::read`]). A file the one pass refuses is read that
//! way too, so that an error names what that reading names first.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;

use serde::de::{self, Deserializer, MapAccess, Visitor};
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

/// The file as serde_json reads it: the envelope, and each element as `T` reads it
/// (its text, or its [`Fields`] checked as it is parsed).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound(deserialize = "T: ReadList<'de>, 'de: 'a"))]
struct Envelope<'a, T> {
    covenant_version: String,
    captured_at_unix: u64,
    #[serde(default)]
    server: ServerInfo,
    surface: Lists<'a, T>,
}

/// `surface`: each list's elements, and where each list's key is.
struct Lists<'a, T> {
    lists: [Vec<T>; 4],
    keys: [Option<&'a str>; 4],
}

/// How one list's elements are read: as their text, or checked as they are parsed.
trait ReadList<'de>: Sized {
    fn list<A: MapAccess<'de>>(map: &mut A, kind: Kind)
        -> std::result::Result<Vec<Self>, A::Error>;
}

impl<'de> ReadList<'de> for &'de RawValue {
    fn list<A: MapAccess<'de>>(map: &mut A, _: Kind) -> std::result::Result<Vec<Self>, A::Error> {
        map.next_value()
    }
}

impl<'de> ReadList<'de> for Fields<'de> {
    fn list<A: MapAccess<'de>>(
        map: &mut A,
        kind: Kind,
    ) -> std::result::Result<Vec<Self>, A::Error> {
        map.next_value_seed(probe::List(kind.spec()))
    }
}

/// The lists, in [`Kind::ALL`] order.
fn list_names() -> &'static [&'static str; 4] {
    static NAMES: std::sync::OnceLock<[&'static str; 4]> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| Kind::ALL.map(Kind::list_name))
}

impl<'de: 'a, 'a, T: ReadList<'de>> Deserialize<'de> for Lists<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_map(ListsVisitor(std::marker::PhantomData))
    }
}

struct ListsVisitor<'a, T>(std::marker::PhantomData<(&'a (), T)>);

impl<'de: 'a, 'a, T: ReadList<'de>> Visitor<'de> for ListsVisitor<'a, T> {
    type Value = Lists<'a, T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Surface")
    }
    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut out = Lists {
            lists: Default::default(),
            keys: [None; 4],
        };
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
            out.lists[k] = T::list(&mut map, Kind::ALL[k])?;
        }
        Ok(out)
    }
}

/// A key, borrowed from the file when it has no escapes.
struct Key;

impl<'de> de::DeserializeSeed<'de> for Key {
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

/// A file read as far as its envelope: its elements' text.
struct Unchecked<'a> {
    envelope: (String, u64, ServerInfo),
    texts: Vec<Vec<&'a str>>,
    list_at: [Option<usize>; 4],
}

/// A file parsed: its envelope, its lists as `T` reads them, and its text when UTF-8.
type Parsed<'a, T> = (Unchecked<'a>, [Vec<T>; 4], Option<&'a str>);

/// Parse `bytes` as a lockfile whose elements `T` reads; the envelope's version checked.
/// With the text, when it is UTF-8 (else serde_json says where it is not).
fn envelope<'a, T: ReadList<'a>>(bytes: &'a [u8], origin: &str) -> Result<Parsed<'a, T>> {
    let text = std::str::from_utf8(bytes).ok();
    let parsed = match text {
        Some(text) => serde_json::from_str::<Envelope<'a, T>>(text),
        None => serde_json::from_slice(bytes),
    };
    let e = parsed.map_err(|e| position_error(origin, &e))?;
    check_version(&e.covenant_version, origin)?;
    let Lists { lists, keys } = e.surface;
    let u = Unchecked {
        envelope: (e.covenant_version, e.captured_at_unix, e.server),
        texts: Vec::new(),
        list_at: keys.map(|k| k.map(|k| offset(bytes, k))),
    };
    Ok((u, lists, text))
}

/// Read a file as text, every element's text found by serde_json's grammar pass.
fn as_text<'a>(bytes: &'a [u8], origin: &str) -> Result<Unchecked<'a>> {
    let (mut u, lists, _) = envelope::<&RawValue>(bytes, origin)?;
    u.texts = lists
        .into_iter()
        .map(|l| l.into_iter().map(RawValue::get).collect())
        .collect();
    Ok(u)
}

/// Read a file in one pass: every element checked as it is parsed, and its text found
/// from where its first key is ([`texts`]). A file refused here is read again as text
/// and element by element, and that reading's error is the one given.
fn one_pass<'a>(bytes: &'a [u8], origin: &str) -> Result<(Unchecked<'a>, Vec<Vec<Fields<'a>>>)> {
    let Ok((mut u, lists, text)) = envelope::<Fields<'a>>(bytes, origin) else {
        return by_element(bytes, origin);
    };
    let found: Option<Vec<Vec<&str>>> =
        text.and_then(|text| lists.iter().map(|l| texts(text, l)).collect());
    u.texts = match found {
        Some(t) => t,
        None => as_text(bytes, origin)?.texts,
    };
    Ok((u, lists.into()))
}

/// Read a file as text, then check each element on its own.
fn by_element<'a>(bytes: &'a [u8], origin: &str) -> Result<(Unchecked<'a>, Vec<Vec<Fields<'a>>>)> {
    let u = as_text(bytes, origin)?;
    let fields = u
        .texts
        .iter()
        .zip(Kind::ALL)
        .map(|(l, kind)| {
            l.iter()
                .map(|t| probe_element(bytes, t, origin, kind))
                .collect()
        })
        .collect::<Result<_>>()?;
    Ok((u, fields))
}

/// Each element's text in `text`, from where the one pass found its first key: an
/// element starts at the `{` before its first key's quote, and ends at the `}` before
/// the comma before the next element's start; the last one, or one before an element
/// whose first key has escapes, ends where serde_json's grammar pass over it ends, and
/// an element after it starts past the comma. Only whitespace is skipped, and only
/// between tokens of a parse that has succeeded. `None` when a list's first element
/// cannot be placed (its first key has escapes, or it is `{}`).
fn texts<'a>(text: &'a str, list: &[Fields<'a>]) -> Option<Vec<&'a str>> {
    let b = text.as_bytes();
    let ws = |c: &u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t');
    // The index of `want` just before `i`, past whitespace.
    let back = |i: usize, want: u8| -> Option<usize> {
        let j = b[..i].iter().rposition(|c| !ws(c))?;
        (b[j] == want).then_some(j)
    };
    // The index of `want` at or after `i`, past whitespace.
    let ahead = |i: usize, want: u8| -> Option<usize> {
        let j = i + b.get(i..)?.iter().position(|c| !ws(c))?;
        (b[j] == want).then_some(j)
    };
    let start = |f: &Fields<'a>| back(offset(b, f.anchor?).checked_sub(1)?, b'{');
    let mut out = Vec::with_capacity(list.len());
    let mut next = match list.first() {
        Some(f) => Some(start(f)?),
        None => return Some(out),
    };
    for (i, _) in list.iter().enumerate() {
        let s = match next {
            Some(s) => s,
            None => {
                let last: &str = out.last()?;
                ahead(ahead(offset(b, last) + last.len(), b',')? + 1, b'{')?
            }
        };
        next = list.get(i + 1).and_then(start);
        let end = match next {
            Some(n) => back(back(n, b',')?, b'}')? + 1,
            None => {
                let mut de = serde_json::Deserializer::from_str(&text[s..]);
                s + <&RawValue>::deserialize(&mut de).ok()?.get().len()
            }
        };
        out.push(&text[s..end]);
    }
    Some(out)
}

/// Where `part` starts in `bytes` (it borrows from them).
pub(super) fn offset(bytes: &[u8], part: &str) -> usize {
    part.as_ptr() as usize - bytes.as_ptr() as usize
}

impl<'a> Raw<'a> {
    /// Read one file: its envelope, and every element checked and validated.
    pub fn read(bytes: &'a [u8], origin: &str, unique: bool) -> Result<Raw<'a>> {
        let (u, fields) = one_pass(bytes, origin)?;
        Raw::finish(bytes, origin, u, fields, unique)
    }

    /// Read the two files of an offline check on two threads: the baseline in one pass,
    /// the other as text. An element of the other file whose bytes equal the baseline
    /// element at the same place in key order takes that element's reading (the same
    /// bytes read the same); only its differing elements are checked on their own.
    pub fn read_pair<'b>(a: (&'a [u8], &str), b: (&'b [u8], &str)) -> Result<(Raw<'a>, Raw<'b>)> {
        let (ra, ub) = std::thread::scope(|s| {
            let ta = s.spawn(|| one_pass(a.0, a.1));
            let ub = as_text(b.0, b.1);
            (joined(ta.join()), ub)
        });
        let (ua, fields_a) = ra?;
        let ub = ub?;
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

/// Check one element's text on its own ([`probe::read`]). An error names the place in
/// the file, as a parse of the whole file would.
fn probe_element<'a>(
    bytes: &'a [u8],
    text: &'a str,
    origin: &str,
    kind: Kind,
) -> Result<Fields<'a>> {
    probe::read(text, kind.spec()).map_err(|e| {
        let (line, column) = line_and_column(bytes, offset(bytes, text));
        // The text was read after three brackets, on its first line.
        let (line, column) = match e.line() {
            0 | 1 => (line, (column + e.column()).saturating_sub(4).max(1)),
            l => (line + l - 1, e.column()),
        };
        Error::new(format!(
            "{origin}:{line}:{column}: not a valid lockfile: {}",
            strip_position(&e.to_string())
        ))
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts the one pass finds, when it finds them all without the grammar pass.
    fn found(bytes: &[u8]) -> Option<Vec<Vec<&str>>> {
        let (_, lists, text) = envelope::<Fields<'_>>(bytes, "t").unwrap();
        let text = text.unwrap();
        lists.iter().map(|l| texts(text, l)).collect()
    }

    #[test]
    fn one_pass_finds_each_element_where_the_grammar_pass_does() {
        let element = |i: usize, first: &str| {
            format!(
                r#"{{"{first}": "t{i}", "x": [1, {{"y": "}}, {{"}}, -2e3, true, null], "inputSchema": {{"a": "\"}}"}}}}"#
            )
        };
        let file = |tools: &[String], prompts: &[String]| {
            format!(
                r#"{{"covenant_version": "0.2.0", "captured_at_unix": 0, "surface": {{"tools": [{}], "prompts": [{}]}}}}"#,
                tools.join(", "),
                prompts.join(",")
            )
        };
        let plain: Vec<String> = (0..4).map(|i| element(i, "name")).collect();
        let mut cases = vec![(file(&plain, &plain[..1]), true), (file(&[], &[]), true)];
        // Whitespace of every kind between every token.
        let value: serde_json::Value = serde_json::from_str(&cases[0].0).unwrap();
        for indent in [&b""[..], b"\t", b" \r\n\t ", b"\n"] {
            let mut out = Vec::new();
            let f = serde_json::ser::PrettyFormatter::with_indent(indent);
            let mut ser = serde_json::Serializer::with_formatter(&mut out, f);
            serde::Serialize::serialize(&value, &mut ser).unwrap();
            cases.push((String::from_utf8(out).unwrap(), true));
        }
        cases.push((serde_json::to_string(&value).unwrap(), true));
        // A first key with escapes: placed from the element before it, except first.
        for at in [1, 3] {
            let mut tools = plain.clone();
            tools[at] = element(at, r"n\u0061me");
            cases.push((file(&tools, &plain), true));
        }
        let mut tools = plain.clone();
        tools[0] = element(0, r"n\u0061me");
        cases.push((file(&tools, &plain), false));
        for (n, (text, placed)) in cases.iter().enumerate() {
            let bytes = text.as_bytes();
            let want = as_text(bytes, "t").unwrap().texts;
            let (got, _) = one_pass(bytes, "t").unwrap();
            assert_eq!(got.texts, want, "case {n}: {text}");
            match found(bytes) {
                Some(f) => assert_eq!(f, want, "case {n}"),
                None => assert!(!placed, "case {n}: not placed"),
            }
        }
    }
}
