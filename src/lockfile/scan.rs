//! The raw scan of a lockfile's bytes, for the offline check: elements kept as
//! borrowed JSON text (`&RawValue`, no allocation), indexed by key, and validated as the
//! full reader validates them (the same checks, the same messages); only elements a
//! caller asks for are built ([`build_element`]).

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{Element, Kind, ServerInfo};
use super::normalise::normalize_element;
use super::read::{check_element, check_version, position_error, Arguments, Shape, MAX_DEPTH};
use crate::error::{Error, Result};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLock<'a> {
    covenant_version: String,
    captured_at_unix: u64,
    #[serde(default)]
    server: ServerInfo,
    #[serde(borrow)]
    surface: RawSurface<'a>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSurface<'a> {
    #[serde(borrow, default)]
    tools: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    resources: Vec<&'a RawValue>,
    #[serde(borrow, default, rename = "resourceTemplates")]
    resource_templates: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    prompts: Vec<&'a RawValue>,
}

impl<'a> RawSurface<'a> {
    fn list(&self, kind: Kind) -> &[&'a RawValue] {
        match kind {
            Kind::Tool => &self.tools,
            Kind::Resource => &self.resources,
            Kind::Template => &self.resource_templates,
            Kind::Prompt => &self.prompts,
        }
    }
}

fn raw_kind(raw: &RawValue) -> char {
    // `{`, `[`, `"`, `t`, `f`, `n`, or a number's first character.
    raw.get().trim_start().chars().next().unwrap_or('0')
}

/// An argument's name, when it is an object.
#[derive(Deserialize)]
struct ArgName {
    name: Option<serde_json::Value>,
}

/// One side, indexed: element key → raw text, per kind.
pub(crate) struct Scanned<'a> {
    pub(crate) covenant_version: String,
    pub(crate) captured_at_unix: u64,
    pub(crate) server: ServerInfo,
    pub(crate) index: Vec<BTreeMap<String, &'a RawValue>>,
    /// Each kind's elements in file order.
    pub(crate) lists: Vec<Vec<&'a RawValue>>,
    /// Every list is in key order, as a canonical file writes it.
    pub(crate) ordered: bool,
}

/// Scan the two files of an offline check. When the scan finds anything unusual (a
/// shape problem, a duplicate key, nesting past the reader's limit), the caller reads
/// both files with the full reader instead, so the two paths accept the same files and
/// give the same errors.
///
/// Work is shared between the files and the two threads: the envelopes are parsed
/// one on each thread, the baseline's elements are read (their fields and depth) half
/// on each, and an element of the other file whose bytes equal the baseline element
/// at the same place in key order takes that element's reading: the same bytes read
/// the same. Only the other file's differing elements are read again.
pub(crate) fn scan_pair<'a, 'b>(
    a: (&'a [u8], &str),
    b: (&'b [u8], &str),
) -> Result<(Scanned<'a>, Scanned<'b>)> {
    let (ra, rb) = std::thread::scope(|s| {
        let ta = s.spawn(|| envelope(a.0, a.1));
        let rb = envelope(b.0, b.1);
        (joined(ta.join()), rb)
    });
    let (ra, rb) = (ra?, rb?);
    // The baseline's elements, the first half of each list on a second thread.
    let lists_a: Vec<&[&'a RawValue]> = Kind::ALL.iter().map(|k| ra.surface.list(*k)).collect();
    let (first_half, second_half) = std::thread::scope(|s| {
        let t = s.spawn(|| {
            lists_a
                .iter()
                .map(|l| read_all(&l[..l.len() / 2], a.1))
                .collect::<Result<Vec<_>>>()
        });
        let second = lists_a
            .iter()
            .map(|l| read_all(&l[l.len() / 2..], a.1))
            .collect::<Result<Vec<_>>>();
        (joined(t.join()), second)
    });
    let fields_a: Vec<Vec<Fields<'a>>> = first_half?
        .into_iter()
        .zip(second_half?)
        .map(|(mut x, y)| {
            x.extend(y);
            x
        })
        .collect();
    // The other file's, reusing the baseline's for the same bytes.
    let mut fields_b: Vec<Vec<Fields<'_>>> = Vec::new();
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        let (la, fa) = (lists_a[k], &fields_a[k]);
        let mut i = 0;
        let mut out = Vec::new();
        for raw in rb.surface.list(kind) {
            if la.get(i).is_some_and(|x| x.get() == raw.get()) {
                out.push(fa[i].clone());
                i += 1;
                continue;
            }
            let f = read(raw, b.1)?;
            // Keep the place in the baseline: past the keys before this one (a guess
            // from the keys' text; a wrong guess only costs a reading).
            let key = f.get(kind.key_field());
            while i < la.len() && fa[i].get(kind.key_field()) < key {
                i += 1;
            }
            if i < la.len() && fa[i].get(kind.key_field()) == key {
                i += 1;
            }
            out.push(f);
        }
        fields_b.push(out);
    }
    Ok((finish(ra, fields_a, a.1)?, finish(rb, fields_b, b.1)?))
}

fn joined<T>(r: std::thread::Result<Result<T>>) -> Result<T> {
    r.unwrap_or_else(|_| Err(Error::new("scanning a lockfile failed")))
}

/// Scan one file (see [`scan_pair`]).
pub(crate) fn scan<'a>(bytes: &'a [u8], origin: &str) -> Result<Scanned<'a>> {
    let raw = envelope(bytes, origin)?;
    let fields = Kind::ALL
        .iter()
        .map(|k| read_all(raw.surface.list(*k), origin))
        .collect::<Result<Vec<_>>>()?;
    finish(raw, fields, origin)
}

/// The envelope of one file: parsed (every byte found valid JSON, the elements left as
/// raw text) and its version checked.
fn envelope<'a>(bytes: &'a [u8], origin: &str) -> Result<RawLock<'a>> {
    // RawValue skips nested values without the reader's depth limit: it is checked on
    // each element (the only place a lockfile the envelope's types accept can nest:
    // at depth 3, inside the file, the surface and a list), in the element's one pass.
    let raw: RawLock<'a> = serde_json::from_slice(bytes).map_err(|e| position_error(origin, &e))?;
    check_version(&raw.covenant_version, origin)?;
    Ok(raw)
}

/// One element read: an object, its fields, its depth within the reader's limit.
fn read<'a>(element: &'a RawValue, origin: &str) -> Result<Fields<'a>> {
    if raw_kind(element) != '{' {
        return Err(Error::new(format!("{origin}: an element is not an object")));
    }
    let fields = Fields::of(element.get())
        .ok_or_else(|| Error::new(format!("{origin}: an element the scan does not read")))?;
    if 3 + fields.depth > MAX_DEPTH {
        return Err(Error::new(format!("{origin}: nested too deeply")));
    }
    Ok(fields)
}

fn read_all<'a>(list: &[&'a RawValue], origin: &str) -> Result<Vec<Fields<'a>>> {
    list.iter().map(|e| read(e, origin)).collect()
}

/// One file's elements validated (as the full reader validates them) and indexed by key.
fn finish<'a>(raw: RawLock<'a>, fields: Vec<Vec<Fields<'_>>>, origin: &str) -> Result<Scanned<'a>> {
    let mut index = Vec::new();
    let mut ordered = true;
    for (kind, fields) in Kind::ALL.into_iter().zip(fields) {
        let mut map = BTreeMap::new();
        let mut names: Vec<serde_json::Value> = Vec::new();
        let mut shapes = Vec::new();
        for fields in &fields {
            let arguments = match fields.get("arguments") {
                None => Arguments::Absent,
                Some(a) if first(a) == 'n' => Arguments::Absent,
                Some(a) if first(a) == '[' => {
                    let list: Vec<&RawValue> = serde_json::from_str(a)
                        .map_err(|e| Error::new(format!("{origin}: {e}")))?;
                    Arguments::Names(
                        list.iter()
                            .map(|arg| {
                                raw_kind(arg) == '{'
                                    && serde_json::from_str::<ArgName>(arg.get())
                                        .is_ok_and(|n| n.name.is_some_and(|v| v.is_string()))
                            })
                            .collect(),
                    )
                }
                Some(_) => Arguments::NotArray,
            };
            let key = match fields.get(kind.key_field()) {
                None => serde_json::Value::Null,
                Some(v) => match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                    Some(plain) if !plain.contains('\\') => {
                        serde_json::Value::String(plain.to_string())
                    }
                    _ => {
                        serde_json::from_str(v).map_err(|e| Error::new(format!("{origin}: {e}")))?
                    }
                },
            };
            names.push(key);
            let missing = names.last().is_some_and(serde_json::Value::is_null);
            shapes.push((
                missing,
                fields.get("inputSchema").map(first),
                fields.get("outputSchema").map(first),
                arguments,
            ));
        }
        let mut seen = HashSet::new();
        for (i, ((missing, input, output, arguments), name)) in
            shapes.into_iter().zip(&names).enumerate()
        {
            let shape = Shape {
                key: (!missing).then_some(name),
                input_schema: input,
                output_schema: output,
                arguments,
            };
            check_element(origin, kind, i, &shape, &mut seen, true)?;
        }
        ordered &= names
            .windows(2)
            .all(|w| matches!((&w[0], &w[1]), (serde_json::Value::String(x), serde_json::Value::String(y)) if x < y));
        for (name, element) in names.into_iter().zip(raw.surface.list(kind)) {
            if let serde_json::Value::String(name) = name {
                map.insert(name, *element);
            }
        }
        index.push(map);
    }
    let s = raw.surface;
    Ok(Scanned {
        covenant_version: raw.covenant_version,
        captured_at_unix: raw.captured_at_unix,
        server: raw.server,
        index,
        lists: vec![s.tools, s.resources, s.resource_templates, s.prompts],
        ordered,
    })
}

pub(crate) fn build_element(raw: &RawValue, origin: &str, kind: Kind) -> Result<Element> {
    let mut e: Element = serde_json::from_str(raw.get()).map_err(|err| {
        Error::new(format!(
            "{origin}: an element of surface.{}: {err}",
            kind.list_name()
        ))
    })?;
    normalize_element(&mut e);
    Ok(e)
}

/// The first character of a value's text (`{`, `[`, `"`, `t`, `f`, `n`, or a number's).
fn first(value: &str) -> char {
    value.chars().next().unwrap_or('0')
}

/// The fields validation reads of an element, found in one pass over its text (which the
/// envelope's parse has already found to be valid JSON), with the element's nesting
/// depth. `None` for anything this pass does not read as the full reader would (a key
/// with an escape, a field validation reads given twice): the caller then falls back to
/// the full reader, which decides.
#[derive(Clone)]
struct Fields<'a> {
    /// (key, value text) of `name`, `uri`, `uriTemplate`, `inputSchema`,
    /// `outputSchema`, `arguments`, as found.
    found: Vec<(&'a str, &'a str)>,
    /// How deep the element nests, itself included (`{}` is 1).
    depth: usize,
}

const READ: [&str; 6] = [
    "name",
    "uri",
    "uriTemplate",
    "inputSchema",
    "outputSchema",
    "arguments",
];

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a str> {
        self.found.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn of(text: &'a str) -> Option<Fields<'a>> {
        let b = text.as_bytes();
        let ws = |i: &mut usize| {
            while matches!(b.get(*i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
                *i += 1;
            }
        };
        let mut i = 0;
        ws(&mut i);
        if b.get(i) != Some(&b'{') {
            return None;
        }
        i += 1;
        let mut fields = Fields {
            found: Vec::new(),
            depth: 1,
        };
        loop {
            ws(&mut i);
            match b.get(i)? {
                b'}' => return Some(fields),
                b'"' => {}
                _ => return None,
            }
            let start = i + 1;
            let end = start
                + b.get(start..)?
                    .iter()
                    .position(|c| *c == b'"' || *c == b'\\')?;
            if b[end] != b'"' {
                return None; // an escaped key: the full reader decodes it
            }
            let key = text.get(start..end)?;
            i = end + 1;
            ws(&mut i);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i += 1;
            ws(&mut i);
            let value_start = i;
            match b.get(i)? {
                b'"' => i = skip_string(b, i + 1)?,
                b'{' | b'[' => {
                    let (end, depth) = skip_container(b, i)?;
                    fields.depth = fields.depth.max(1 + depth);
                    i = end;
                }
                _ => {
                    while !matches!(
                        b.get(i),
                        None | Some(b',' | b'}' | b' ' | b'\n' | b'\r' | b'\t')
                    ) {
                        i += 1;
                    }
                }
            }
            let value = text.get(value_start..i)?;
            if READ.contains(&key) {
                if fields.get(key).is_some() {
                    return None; // given twice
                }
                fields.found.push((key, value));
            }
            ws(&mut i);
            match b.get(i)? {
                b',' => i += 1,
                b'}' => return Some(fields),
                _ => return None,
            }
        }
    }
}

/// The offset just past the string whose text starts at `i` (after its opening quote).
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i += b.get(i..)?.iter().position(|c| *c == b'"' || *c == b'\\')?;
        if b[i] == b'"' {
            return Some(i + 1);
        }
        i += 2; // a backslash and the byte it escapes
    }
}

/// The offset just past the array or object that starts at `i`, and how deep it nests
/// (itself included). Bytes that cannot matter are skipped eight at a time
/// ([`super::read::skip_quiet`], as [`super::read::Depth`] does).
fn skip_container(b: &[u8], mut i: usize) -> Option<(usize, usize)> {
    let (mut depth, mut max, mut in_string) = (0usize, 0usize, false);
    loop {
        i = super::read::skip_quiet(b, i, in_string);
        match (in_string, *b.get(i)?) {
            (true, b'\\') => i += 1,
            (_, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                max = max.max(depth);
            }
            (false, b']' | b'}') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some((i + 1, max));
                }
            }
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::Fields;

    #[test]
    fn one_pass_reads_fields_and_depth_as_the_full_reader_would() {
        let f = Fields::of(
            r#" {"name" : "a\"b", "x": [1, {"y": "]}{["}], "inputSchema": {"a": [[]]}, "n": -1e5}"#,
        )
        .unwrap();
        assert_eq!(f.get("name"), Some(r#""a\"b""#));
        assert_eq!(f.get("inputSchema"), Some(r#"{"a": [[]]}"#));
        assert_eq!(f.depth, 4);
        assert_eq!(Fields::of("{}").unwrap().depth, 1);
        // What the full reader must decide: an escaped key, a field given twice.
        assert!(Fields::of(r#"{"n\u0061me": "a"}"#).is_none());
        assert!(Fields::of(r#"{"name": "a", "name": "b"}"#).is_none());
        assert!(Fields::of(r#"{"d": 1, "d": 2}"#).is_some());
    }
}
