//! The one reader: strict about shape (exit 2 with file, line and column), lenient
//! about age (0.1.x files without `resourceTemplates` are fine), and lazy. Every byte
//! of a file is parsed by serde_json, and every element is checked as a
//! `serde_json::Value` parse would check it ([`super::probe`]: every string decoded,
//! every number read, serde_json's recursion limit) and validated ([`check_element`]),
//! but not built. Only then may an element be built: [`Lockfile::parse`] builds them
//! all; the offline check builds only the elements whose bytes differ between two
//! files. However a file is read, it is accepted or refused by the same steps.
//!
//! Each element's text is found without a parser of our own: by [`one_pass`] (a file
//! alone, and the baseline of a pair) or placed beside the baseline ([`other_file`]),
//! both in `place`; else by serde_json's grammar pass ([`as_text`]). A file the one pass
//! refuses is read that way, then element by element ([`by_element`]), so that an error
//! names what that reading meets first.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde_json::value::RawValue;

use super::envelope::{self, offset, Parsed, ReadList, Unchecked};
use super::model::{Element, Kind, Lockfile, ServerInfo, Surface, COVENANT_VERSION};
use super::normalise::normalize_element;
use super::place;
use super::probe::{self, Arguments, Fields};
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
    /// The other file of a pair has the same bytes at this place (and so the same key).
    pub shared: bool,
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

/// Parse `bytes` as a lockfile whose elements `T` reads; the envelope's version checked.
/// With the text, when it is UTF-8 (else serde_json says where it is not).
fn envelope<'a, T: ReadList<'a>>(bytes: &'a [u8], origin: &str) -> Result<Parsed<'a, T>> {
    let parsed = envelope::parse(bytes).map_err(|e| position_error(origin, &e))?;
    check_version(&parsed.0.envelope.0, origin)?;
    Ok(parsed)
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

/// The other file of a pair: placed beside the baseline (`place::beside`), its version
/// checked; else read as text.
fn other_file<'b>(
    bytes: &'b [u8],
    origin: &str,
    base: (&Unchecked<'_>, &[u8]),
) -> Result<Unchecked<'b>> {
    match place::beside(bytes, base) {
        Some(u) => check_version(&u.envelope.0, origin).map(|()| u),
        None => as_text(bytes, origin),
    }
}

/// Read a file in one pass: every element checked as it is parsed, and its text found
/// from where its first key is (`place::texts`). A file refused here is read again as text
/// and element by element, and that reading's error is the one given.
fn one_pass<'a>(bytes: &'a [u8], origin: &str) -> Result<(Unchecked<'a>, Vec<Vec<Fields<'a>>>)> {
    let Ok((mut u, lists, text)) = envelope::<Fields<'a>>(bytes, origin) else {
        return by_element(bytes, origin);
    };
    let found: Option<Vec<Vec<&str>>> =
        text.and_then(|text| lists.iter().map(|l| place::texts(text, l)).collect());
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

impl<'a> Raw<'a> {
    /// Read one file: its envelope, and every element checked and validated.
    pub fn read(bytes: &'a [u8], origin: &str, unique: bool) -> Result<Raw<'a>> {
        let (u, fields) = one_pass(bytes, origin)?;
        validate(origin, &fields, unique)?;
        Ok(Raw::assemble(bytes, origin, u, fields))
    }

    /// Read the two files of an offline check: the baseline in one pass, the other
    /// placed beside it (`place::beside`). An element of the other file whose bytes equal the
    /// baseline element at the same place in key order takes that element's reading
    /// (the same bytes read the same); only its differing elements are checked on their
    /// own.
    pub fn read_pair<'b>(a: (&'a [u8], &str), b: (&'b [u8], &str)) -> Result<(Raw<'a>, Raw<'b>)> {
        let (ua, fields_a) = one_pass(a.0, a.1)?;
        // The baseline refused before the other file is read, as it is when read alone.
        validate(a.1, &fields_a, true)?;
        let ub = other_file(b.0, b.1, (&ua, a.0))?;
        let mut fields_b = Vec::new();
        for (k, kind) in Kind::ALL.into_iter().enumerate() {
            let (ta, fa) = (&ua.texts[k], &fields_a[k]);
            let mut i = 0;
            let mut out = Vec::new();
            for text in &ub.texts[k] {
                if ta.get(i).is_some_and(|x| x == text) {
                    out.push(fa[i].shared());
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
        validate(b.1, &fields_b, true)?;
        Ok((
            Raw::assemble(a.0, a.1, ua, fields_a),
            Raw::assemble(b.0, b.1, ub, fields_b),
        ))
    }
    /// The elements (validated) with their keys.
    fn assemble(
        bytes: &'a [u8],
        origin: &str,
        u: Unchecked<'a>,
        fields: Vec<Vec<Fields<'a>>>,
    ) -> Raw<'a> {
        let mut lists = Vec::new();
        for (fields, texts) in fields.into_iter().zip(u.texts) {
            let list = fields
                .into_iter()
                .zip(texts)
                .map(|(f, text)| RawElement {
                    shared: f.shared,
                    key: f.key.flatten().unwrap_or_default(),
                    text,
                })
                .collect();
            lists.push(list);
        }
        let (covenant_version, captured_at_unix, server) = u.envelope;
        Raw {
            covenant_version,
            captured_at_unix,
            server,
            lists,
            list_at: u.list_at,
            bytes,
            origin: origin.to_string(),
        }
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

/// Validate every element of a file ([`check_element`]), in file order per list.
fn validate(origin: &str, fields: &[Vec<Fields<'_>>], unique: bool) -> Result<()> {
    for (kind, fields) in Kind::ALL.into_iter().zip(fields) {
        let mut seen = HashSet::new();
        for (i, f) in fields.iter().enumerate() {
            check_element(origin, kind, i, f, &mut seen, unique)?;
        }
    }
    Ok(())
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
    let fail = |what: String| Err(Error::new(format!("{}{what}", where_())));
    match &shape.key {
        Some(Some(k)) if !seen.insert(k.to_string()) && unique => {
            return fail(format!(": duplicate {} `{k}`", kind.word()))
        }
        Some(Some(_)) => {}
        Some(None) => return fail(format!(": `{key}` must be a string")),
        None => return fail(format!(": missing `{key}`")),
    }
    let schema = &kind.spec().schema;
    for (field, k) in schema.iter().zip(shape.schemas) {
        if field.form == Form::Schema && !matches!(k, None | Some('{' | 't' | 'f')) {
            return fail(format!(": `{}` must be a JSON Schema object", field.field));
        }
    }
    let Some(named) = schema.iter().find(|s| s.form == Form::Arguments) else {
        return Ok(());
    };
    let field = &named.field;
    match &shape.arguments {
        Arguments::Absent => Ok(()),
        Arguments::NotArray => fail(format!(": `{field}` must be an array")),
        Arguments::Names(names) => match names.iter().position(|ok| !ok) {
            Some(j) => fail(format!(".{field}[{j}]: missing string `name`")),
            None => Ok(()),
        },
    }
}

/// The `captured_at_unix` of a lockfile's bytes, read without checking its elements.
pub(super) fn captured_at_of(bytes: &[u8]) -> Option<u64> {
    envelope::<&RawValue>(bytes, "")
        .ok()
        .map(|(u, ..)| u.envelope.1)
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
        lists.iter().map(|l| place::texts(text, l)).collect()
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

    /// A canonical lockfile of these tools and prompts (each a JSON object text).
    fn canonical(tools: &[String], prompts: &[String]) -> String {
        let text = format!(
            r#"{{"covenant_version": "0.2.0", "captured_at_unix": 7, "surface": {{"tools": [{}], "prompts": [{}]}}}}"#,
            tools.join(","),
            prompts.join(",")
        );
        Lockfile::parse(text.as_bytes(), "t").unwrap().to_text()
    }

    fn tool(i: usize, v: usize) -> String {
        format!(
            r#"{{"name": "t{i:03}", "description": "v{v} }}, {{", "inputSchema": {{"type": "object", "properties": {{"p{v}": {{"type": "string"}}}}}}}}"#
        )
    }

    /// The other file placed beside the baseline reads exactly as it does alone, texts
    /// and errors; `placed` says whether the places were proved (no grammar pass).
    fn beside_reads_as_alone(a: &str, b: &str) -> bool {
        let (ua, _) = one_pass(a.as_bytes(), "a").unwrap();
        let alone = as_text(b.as_bytes(), "b");
        let got = other_file(b.as_bytes(), "b", (&ua, a.as_bytes()));
        match (alone, got) {
            (Ok(x), Ok(y)) => {
                assert_eq!(y.texts, x.texts, "{b}");
                assert_eq!(y.list_at, x.list_at, "{b}");
                assert_eq!(y.envelope, x.envelope, "{b}");
            }
            (Err(x), Err(y)) => assert_eq!(y.to_string(), x.to_string()),
            (x, y) => panic!("alone {:?}, beside {:?}", x.err(), y.err()),
        }
        place::beside(b.as_bytes(), (&ua, a.as_bytes())).is_some()
    }

    #[test]
    fn the_other_file_is_placed_beside_the_baseline_only_where_its_parse_proves_it() {
        let tools = |v: &dyn Fn(usize) -> usize, n: usize| -> Vec<String> {
            (0..n).map(|i| tool(i, v(i))).collect()
        };
        let prompts = vec![r#"{"name": "p", "arguments": [{"name": "x"}]}"#.to_string()];
        let a = canonical(&tools(&|_| 0, 40), &prompts);
        // Changed in place (one, a run longer than the window, the first, the last),
        // added, removed, and lists the baseline lacks.
        let mut b_cases = vec![
            canonical(&tools(&|i| usize::from(i == 5), 40), &prompts),
            canonical(&tools(&|i| usize::from((3..20).contains(&i)), 40), &prompts),
            canonical(&tools(&|i| usize::from(i == 0 || i == 39), 40), &prompts),
            canonical(&tools(&|_| 0, 45), &prompts),
            canonical(&tools(&|_| 0, 30), &[]),
            canonical(&[], &prompts),
        ];
        let mut more = tools(&|_| 0, 40);
        more.insert(7, tool(999, 3));
        more.remove(20);
        b_cases.push(canonical(&more, &prompts));
        for b in &b_cases {
            assert!(beside_reads_as_alone(&a, b), "not placed: {b}");
        }
        // Another layout: nothing placed, every element read from the skeleton's parse
        // (the file itself).
        let minified = serde_json::from_str::<serde_json::Value>(&b_cases[0]).unwrap();
        beside_reads_as_alone(&a, &minified.to_string());
        // Not placed, and read alone: the baseline's first tool inside an earlier
        // element's value after a key ending like the list's; a broken element; a list
        // given twice. Text that is not UTF-8 is for serde_json to name.
        let mut hostile = vec![];
        let first = tool(0, 0);
        let (ua, _) = one_pass(a.as_bytes(), "a").unwrap();
        let first_text = ua.texts[0][0];
        let context = &a[ua.list_at[0].unwrap()..offset(a.as_bytes(), first_text)];
        let decoy = format!(r#"{{"name": "p", "xtools": [], "x{context}{first_text}]}}"#);
        let text = format!(
            r#"{{"covenant_version": "0.2.0", "captured_at_unix": 7, "surface": {{"prompts": [{decoy}], "tools": [{first}]}}}}"#
        );
        assert!(
            serde_json::from_str::<serde_json::Value>(&text).is_ok(),
            "{text}"
        );
        hostile.push(text);
        hostile.push(b_cases[0].replacen("\"t005\"", "\"t005\" 5", 1));
        hostile.push(b_cases[0].replacen("\"prompts\": [", "\"tools\": [], \"prompts\": [", 1));
        for b in &hostile {
            assert!(!beside_reads_as_alone(&a, b), "placed: {b}");
        }
        let mut bad = b_cases[0].clone().into_bytes();
        let at = bad.len() / 2;
        bad[at] = 0xff;
        assert_eq!(
            other_file(&bad, "b", (&ua, a.as_bytes()))
                .err()
                .map(|e| e.to_string()),
            as_text(&bad, "b").err().map(|e| e.to_string())
        );
    }
}
