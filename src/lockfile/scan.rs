//! The raw scan of a lockfile's bytes, for the offline check: elements kept as
//! borrowed JSON text (`&str`, no allocation), indexed by key, and validated as the
//! full reader validates them (the same checks, the same messages); only elements a
//! caller asks for are built ([`build_element`]).
//!
//! A file in the canonical layout is split by that layout ([`split`]) instead of being
//! parsed whole, and each element is checked as it is read ([`super::probe`]); an
//! element of the second file whose bytes equal the baseline element at the same place
//! is not read again. Any other file is parsed whole, its elements skipped over as raw
//! text and then read the same way.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{Element, Kind, ServerInfo};
use super::normalise::normalize_element;
use super::probe::{self, Fields};
use super::read::{check_element, check_version, position_error, Shape, MAX_DEPTH};
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

/// The envelope of a file split by its canonical layout: everything before the surface.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    covenant_version: String,
    captured_at_unix: u64,
    #[serde(default)]
    server: ServerInfo,
}

/// One file's envelope, its elements as text, per kind in [`Kind::ALL`] order.
struct Envelope<'a> {
    covenant_version: String,
    captured_at_unix: u64,
    server: ServerInfo,
    lists: Vec<Vec<&'a str>>,
    /// Where each kind's list starts, when the file was split by the canonical layout.
    layout: Option<Vec<usize>>,
}

/// One side, indexed: element key → raw text, per kind.
pub(crate) struct Scanned<'a> {
    pub(crate) covenant_version: String,
    pub(crate) captured_at_unix: u64,
    pub(crate) server: ServerInfo,
    pub(crate) index: Vec<BTreeMap<String, &'a str>>,
    /// Where each kind's list starts (the line `    "tools": [`), when the file has the
    /// canonical layout: its envelope, lists and elements laid out as the writer lays
    /// them (the elements' own text is not compared with the writer's here).
    pub(crate) layout: Option<Vec<usize>>,
    /// Every list is in key order, as a canonical file writes it.
    pub(crate) ordered: bool,
}

/// Scan the two files of an offline check. When the scan finds anything unusual (a
/// shape problem, a duplicate key, nesting past the reader's limit), the caller reads
/// both files with the full reader instead, so the two paths accept the same files and
/// give the same errors.
///
/// Work is shared between the files and the two threads: each file's envelope is found
/// on its own thread (split by the canonical layout, or parsed), the baseline's
/// elements are read (checked as the full reader checks them, their fields and depth)
/// half on each, and an element of the other file whose bytes equal the baseline
/// element at the same place in key order takes that element's reading: the same bytes
/// read the same. Only the other file's differing elements are read again.
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
    let (first_half, second_half) = std::thread::scope(|s| {
        let t = s.spawn(|| {
            ra.lists
                .iter()
                .zip(Kind::ALL)
                .map(|(l, kind)| read_all(&l[..l.len() / 2], a.1, kind))
                .collect::<Result<Vec<_>>>()
        });
        let second = ra
            .lists
            .iter()
            .zip(Kind::ALL)
            .map(|(l, kind)| read_all(&l[l.len() / 2..], a.1, kind))
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
        let (la, fa) = (&ra.lists[k], &fields_a[k]);
        let mut i = 0;
        let mut out = Vec::new();
        for raw in &rb.lists[k] {
            if la.get(i).is_some_and(|x| x == raw) {
                out.push(fa[i].clone());
                i += 1;
                continue;
            }
            let f = read(raw, b.1, kind)?;
            // Keep the place in the baseline: past the keys before this one (a guess;
            // a wrong guess only costs a reading).
            while i < la.len() && fa[i].key < f.key {
                i += 1;
            }
            if i < la.len() && fa[i].key == f.key {
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
    let fields = raw
        .lists
        .iter()
        .zip(Kind::ALL)
        .map(|(l, kind)| read_all(l, origin, kind))
        .collect::<Result<Vec<_>>>()?;
    finish(raw, fields, origin)
}

/// The envelope of one file, and its elements as text (not yet checked: [`read`] does
/// that): split by the canonical layout when the file has it ([`split`]), or parsed
/// (the elements skipped over as raw text). Its version is checked.
fn envelope<'a>(bytes: &'a [u8], origin: &str) -> Result<Envelope<'a>> {
    if let Some(split) = split(bytes) {
        return Ok(split);
    }
    // RawValue skips nested values without the reader's depth limit: it is checked on
    // each element (the only place a lockfile the envelope's types accept can nest:
    // at depth 3, inside the file, the surface and a list), in the element's one pass.
    let raw: RawLock<'a> = serde_json::from_slice(bytes).map_err(|e| position_error(origin, &e))?;
    check_version(&raw.covenant_version, origin)?;
    let s = raw.surface;
    let text = |l: Vec<&'a RawValue>| l.into_iter().map(RawValue::get).collect();
    Ok(Envelope {
        covenant_version: raw.covenant_version,
        captured_at_unix: raw.captured_at_unix,
        server: raw.server,
        lists: vec![
            text(s.tools),
            text(s.resources),
            text(s.resource_templates),
            text(s.prompts),
        ],
        layout: None,
    })
}

/// A file in the canonical layout, split by that layout without parsing it: the
/// envelope before the surface is parsed on its own (closed with `}`), each element is
/// the text from a line's `      {` to the next line that is exactly `      }`, and every
/// byte between them must be the layout the writer puts there. In a JSON document a raw
/// newline is never inside a string, so the layout is all a line break can be.
///
/// Nothing here trusts the layout: when each element is checked as one JSON value (as
/// it is read), the file is that envelope with those elements, exactly as the parser
/// would have found it. `None` (the caller parses the whole file, which decides) for
/// anything else: another layout, text that is not UTF-8, a header the envelope's type
/// refuses or whose version is not this one's.
fn split(bytes: &[u8]) -> Option<Envelope<'_>> {
    const SURFACE: &[u8] = b",\n  \"surface\": {\n";
    const CLOSE: &[u8] = b"\n      }";
    let text = std::str::from_utf8(bytes).ok()?;
    let at = memchr::memmem::find(bytes, SURFACE)?;
    let header: RawHeader = serde_json::from_str(&format!("{}\n}}", text.get(..at)?)).ok()?;
    check_version(&header.covenant_version, "").ok()?;
    let close = memchr::memmem::Finder::new(CLOSE);
    let mut pos = at + SURFACE.len();
    let expect = |pos: &mut usize, want: &[u8]| -> Option<()> {
        (bytes.get(*pos..*pos + want.len())? == want).then(|| *pos += want.len())
    };
    let (mut lists, mut layout) = (Vec::new(), Vec::new());
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        layout.push(pos);
        expect(&mut pos, b"    \"")?;
        expect(&mut pos, kind.list_name().as_bytes())?;
        expect(&mut pos, b"\": [")?;
        let mut list = Vec::new();
        if expect(&mut pos, b"]").is_none() {
            expect(&mut pos, b"\n")?;
            loop {
                expect(&mut pos, b"      ")?;
                let start = pos;
                expect(&mut pos, b"{")?;
                pos += close.find(bytes.get(pos..)?)? + CLOSE.len();
                list.push(text.get(start..pos)?);
                if expect(&mut pos, b",\n").is_none() {
                    expect(&mut pos, b"\n    ]")?;
                    break;
                }
            }
        }
        expect(
            &mut pos,
            if k + 1 == Kind::ALL.len() {
                b"\n"
            } else {
                b",\n"
            },
        )?;
        lists.push(list);
    }
    expect(&mut pos, b"  }\n}\n")?;
    (pos == bytes.len()).then_some(Envelope {
        covenant_version: header.covenant_version,
        captured_at_unix: header.captured_at_unix,
        server: header.server,
        lists,
        layout: Some(layout),
    })
}

/// One element read ([`probe::read`]): checked as the full reader checks it, what
/// validation reads of it, its depth within the reader's limit.
fn read<'a>(element: &'a str, origin: &str, kind: Kind) -> Result<Fields<'a>> {
    let fields =
        probe::read(element, kind.key_field()).map_err(|e| Error::new(format!("{origin}: {e}")))?;
    if 3 + fields.depth > MAX_DEPTH {
        return Err(Error::new(format!("{origin}: nested too deeply")));
    }
    Ok(fields)
}

fn read_all<'a>(list: &[&'a str], origin: &str, kind: Kind) -> Result<Vec<Fields<'a>>> {
    list.iter().map(|e| read(e, origin, kind)).collect()
}

/// One file's elements validated (as the full reader validates them) and indexed by key.
fn finish<'a>(
    raw: Envelope<'a>,
    fields: Vec<Vec<Fields<'_>>>,
    origin: &str,
) -> Result<Scanned<'a>> {
    let mut index = Vec::new();
    let mut ordered = true;
    for ((kind, fields), list) in Kind::ALL.into_iter().zip(fields).zip(&raw.lists) {
        let mut map = BTreeMap::new();
        // The key as validation sees it: a string, something else, or missing.
        let keys: Vec<Option<serde_json::Value>> = fields
            .iter()
            .map(|f| {
                f.key.as_ref().map(|k| match k {
                    Some(text) => serde_json::Value::String(text.to_string()),
                    None => serde_json::Value::Null,
                })
            })
            .collect();
        let mut seen = HashSet::new();
        for (i, (fields, key)) in fields.into_iter().zip(&keys).enumerate() {
            let shape = Shape {
                key: key.as_ref(),
                input_schema: fields.input_schema,
                output_schema: fields.output_schema,
                arguments: fields.arguments,
            };
            check_element(origin, kind, i, &shape, &mut seen, true)?;
        }
        ordered &= keys
            .windows(2)
            .all(|w| matches!((&w[0], &w[1]), (Some(serde_json::Value::String(x)), Some(serde_json::Value::String(y))) if x < y));
        for (key, element) in keys.into_iter().zip(list) {
            if let Some(serde_json::Value::String(key)) = key {
                map.insert(key, *element);
            }
        }
        index.push(map);
    }
    Ok(Scanned {
        covenant_version: raw.covenant_version,
        captured_at_unix: raw.captured_at_unix,
        server: raw.server,
        index,
        layout: raw.layout,
        ordered,
    })
}

pub(crate) fn build_element(raw: &str, origin: &str, kind: Kind) -> Result<Element> {
    let mut e: Element = serde_json::from_str(raw).map_err(|err| {
        Error::new(format!(
            "{origin}: an element of surface.{}: {err}",
            kind.list_name()
        ))
    })?;
    normalize_element(&mut e);
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::{envelope, split};
    use crate::lockfile::Kind;
    use crate::lockfile::Lockfile;

    const LOCK: &str = r#"{"covenant_version": "0.2.0", "captured_at_unix": 7,
        "server": {"name": "s", "version": "1"},
        "surface": {"tools": [{"name": "a", "inputSchema": {"type": "object", "properties": {"x": {}}}},
                              {"name": "b", "description": "one\ntwo \"}\""}],
                    "prompts": [{"name": "p", "arguments": [{"name": "x"}]}]}}"#;

    /// A canonical file is split by its layout, into exactly the elements the parser
    /// finds; the same file in any other layout is not (the parser reads it).
    #[test]
    fn a_canonical_file_splits_into_the_parsers_elements() {
        let text = Lockfile::parse(LOCK.as_bytes(), "x").unwrap().to_text();
        let parsed: super::RawLock = serde_json::from_str(&text).unwrap();
        let s = split(text.as_bytes()).expect("the canonical layout splits");
        let p = &parsed.surface;
        for (got, want) in
            s.lists
                .iter()
                .zip([&p.tools, &p.resources, &p.resource_templates, &p.prompts])
        {
            let want: Vec<&str> = want.iter().map(|r| r.get()).collect();
            assert_eq!(got, &want);
        }
        assert_eq!((s.captured_at_unix, s.server.name.as_str()), (7, "s"));
        assert!(envelope(text.as_bytes(), "x").unwrap().lists[0].len() == 2);
        for other in [
            LOCK.to_string(),
            text.replacen("\n      },\n", "\n      }, \n", 1),
            text.trim_end().to_string(),
            text.replacen("\"resources\": [],\n", "", 1),
            text.replacen(
                "\"covenant_version\": \"0.2.0\"",
                "\"covenant_version\": \"9.0.0\"",
                1,
            ),
            text.replacen("  \"server\"", "  \"surface\": {},\n  \"server\"", 1),
        ] {
            assert!(split(other.as_bytes()).is_none(), "{other}");
        }
        // Split, but an element is not one JSON value: found when it is read.
        let broken = text.replacen("\"type\": \"object\"", "\"type\": \"object\",", 1);
        let s = split(broken.as_bytes()).expect("the layout is intact");
        assert!(super::read(s.lists[0][0], "x", Kind::Tool).is_err());
    }
}
