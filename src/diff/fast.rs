//! The offline fast path of `check --against`: both lockfiles are scanned, not built.
//!
//! Elements are kept as borrowed raw JSON text (`&RawValue`, no allocation). Two
//! canonical lockfiles write an unchanged element as the same bytes, so an element
//! whose text is identical on both sides cannot hold a change and is never parsed;
//! only the rest (a few percent in a typical PR) is built into values, normalized,
//! and handed to the ordinary diff. Files that are not canonical simply take the slow
//! road for the elements whose bytes differ: the result is the same either way. The
//! two files are scanned on two threads.
//!
//! The formats that point at lockfile lines (SARIF, GitHub) take this road too: when a
//! file is canonical (its envelope and list layout, its element order, and the text of
//! every element that changed, checked here), the lines of an element are counted in
//! the file's own bytes, and the lines inside a changed element come from writing it
//! canonically. A file that is not canonical gives no line map, and the caller takes the
//! full parse, which warns that line numbers may be off.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{diff_server, diff_with_budget, Change};
use crate::canon::{self, Ctx, Track};
use crate::error::{Error, Result};
use crate::lockfile::{
    check_element, check_version, key_of, max_depth, normalize_element, position_error, Arguments,
    Element, Kind, LineMap, Lockfile, ServerInfo, Shape, Surface, MAX_DEPTH,
};
use crate::rules::Rules;

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

/// What validation reads of an element (its key, and the kind of its schema and
/// argument fields); everything else is skipped unread.
#[derive(Deserialize)]
struct RawShape<'a> {
    name: Option<serde_json::Value>,
    uri: Option<serde_json::Value>,
    #[serde(rename = "uriTemplate")]
    uri_template: Option<serde_json::Value>,
    #[serde(rename = "inputSchema", borrow, default, deserialize_with = "present")]
    input_schema: Option<&'a RawValue>,
    #[serde(rename = "outputSchema", borrow, default, deserialize_with = "present")]
    output_schema: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    arguments: Option<&'a RawValue>,
}

/// A field that is there, `null` included (serde's `Option` would read `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn kind_of(raw: &RawValue) -> char {
    // `{`, `[`, `"`, `t`, `f`, `n`, or a number's first character.
    raw.get().trim_start().chars().next().unwrap_or('0')
}

/// An argument's name, when it is an object.
#[derive(Deserialize)]
struct ArgName {
    name: Option<serde_json::Value>,
}

/// One side, indexed: element key → raw text, per kind.
struct Side<'a> {
    covenant_version: String,
    captured_at_unix: u64,
    server: ServerInfo,
    index: Vec<BTreeMap<String, &'a RawValue>>,
    /// Each kind's elements in file order.
    lists: Vec<Vec<&'a RawValue>>,
    /// Every list is in key order, as a canonical file writes it.
    ordered: bool,
}

/// Scan one file. When the scan finds anything unusual (a shape problem, a duplicate
/// key, nesting past the reader's limit), the caller reads both files with the full
/// reader instead, so the two paths accept the same files and give the same errors.
fn scan<'a>(bytes: &'a [u8], origin: &str) -> Result<Side<'a>> {
    scan_fast(bytes, origin)
}

fn scan_fast<'a>(bytes: &'a [u8], origin: &str) -> Result<Side<'a>> {
    // RawValue skips nested values without the reader's depth limit: check it here.
    if max_depth(bytes) > MAX_DEPTH {
        return Err(Error::new(format!("{origin}: nested too deeply")));
    }
    let raw: RawLock<'a> = serde_json::from_slice(bytes).map_err(|e| position_error(origin, &e))?;
    check_version(&raw.covenant_version, origin)?;
    let mut index = Vec::new();
    let mut ordered = true;
    for kind in Kind::ALL {
        let mut map = BTreeMap::new();
        let mut names: Vec<serde_json::Value> = Vec::new();
        let mut shapes = Vec::new();
        for element in raw.surface.list(kind) {
            if kind_of(element) != '{' {
                return Err(Error::new(format!("{origin}: an element is not an object")));
            }
            let shape: RawShape<'_> = serde_json::from_str(element.get())
                .map_err(|e| Error::new(format!("{origin}: {e}")))?;
            let arguments = match shape.arguments {
                None => Arguments::Absent,
                Some(a) if kind_of(a) == 'n' => Arguments::Absent,
                Some(a) if kind_of(a) == '[' => {
                    let list: Vec<&RawValue> = serde_json::from_str(a.get())
                        .map_err(|e| Error::new(format!("{origin}: {e}")))?;
                    Arguments::Names(
                        list.iter()
                            .map(|arg| {
                                kind_of(arg) == '{'
                                    && serde_json::from_str::<ArgName>(arg.get())
                                        .is_ok_and(|n| n.name.is_some_and(|v| v.is_string()))
                            })
                            .collect(),
                    )
                }
                Some(_) => Arguments::NotArray,
            };
            let key = match kind {
                Kind::Tool | Kind::Prompt => shape.name,
                Kind::Resource => shape.uri,
                Kind::Template => shape.uri_template,
            };
            names.push(key.unwrap_or(serde_json::Value::Null));
            let missing = names.last().is_some_and(serde_json::Value::is_null);
            shapes.push((
                missing,
                shape.input_schema.map(kind_of),
                shape.output_schema.map(kind_of),
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
    Ok(Side {
        covenant_version: raw.covenant_version,
        captured_at_unix: raw.captured_at_unix,
        server: raw.server,
        index,
        lists: vec![s.tools, s.resources, s.resource_templates, s.prompts],
        ordered,
    })
}

/// What an offline check needs from the two files.
pub struct Compared {
    pub servers: (ServerInfo, ServerInfo),
    pub changes: Vec<Change>,
    /// Every element subject of either side (for JUnit).
    pub subjects: Vec<String>,
    /// Where the changed elements sit in each file (baseline, new), when lines were
    /// asked for and both files are canonical.
    pub lines: Option<(LineMap, LineMap)>,
}

fn parse_element(raw: &RawValue, origin: &str, kind: Kind) -> Result<Element> {
    let mut e: Element = serde_json::from_str(raw.get()).map_err(|err| {
        Error::new(format!(
            "{origin}: an element of surface.{}: {err}",
            kind.list_name()
        ))
    })?;
    normalize_element(&mut e);
    Ok(e)
}

/// Compare two lockfiles given as bytes.
pub fn compare_files(
    rules: &Rules,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
) -> Result<Compared> {
    compare(rules, a, b, budget, false)
}

/// [`compare_files`], with the line map of each file (`None` when either file is not
/// canonical: then only a full parse can count lines as the canonical text has them).
pub fn compare_files_with_lines(
    rules: &Rules,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
) -> Result<Compared> {
    compare(rules, a, b, budget, true)
}

fn compare(
    rules: &Rules,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
    with_lines: bool,
) -> Result<Compared> {
    let (sa, sb) = std::thread::scope(|s| {
        let ta = s.spawn(|| scan(a.0, a.1));
        let sb = scan(b.0, b.1);
        let sa = ta
            .join()
            .unwrap_or_else(|_| Err(Error::new("scanning the baseline failed")));
        (sa, sb)
    });
    let (sa, sb) = match (sa, sb) {
        (Ok(sa), Ok(sb)) => (sa, sb),
        // The full reader decides: its error, or (for what only the scan minds) the
        // full comparison.
        // (No line map: the caller's full parse counts lines, and warns.)
        _ => return compare_full(rules, a, b, budget),
    };
    let mut pa = Surface::default();
    let mut pb = Surface::default();
    let mut subjects = Vec::new();
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        let (ia, ib) = (&sa.index[k], &sb.index[k]);
        let mut la = Vec::new();
        let mut lb = Vec::new();
        for (name, raw) in ia {
            subjects.push(format!("{}:{name}", kind.word()));
            match ib.get(name) {
                Some(other) if other.get() == raw.get() => {} // the same bytes: no change
                _ => la.push(parse_element(raw, a.1, kind)?),
            }
        }
        for (name, raw) in ib {
            match ia.get(name) {
                Some(other) if other.get() == raw.get() => {}
                Some(_) => lb.push(parse_element(raw, b.1, kind)?),
                None => {
                    subjects.push(format!("{}:{name}", kind.word()));
                    lb.push(parse_element(raw, b.1, kind)?);
                }
            }
        }
        set_list(&mut pa, kind, la);
        set_list(&mut pb, kind, lb);
    }
    subjects.sort();
    let mut changes = diff_with_budget(rules, &pa, &pb, budget);
    changes.extend(diff_server(rules, &sa.server, &sb.server));
    let lines = match with_lines {
        // Each file's lines on its own thread, as the scans.
        true => std::thread::scope(|s| {
            let la = s.spawn(|| line_map(a.0, &sa, &pa));
            let lb = line_map(b.0, &sb, &pb);
            la.join().ok().flatten().zip(lb)
        }),
        false => None,
    };
    Ok(Compared {
        servers: (sa.server, sb.server),
        changes,
        subjects,
        lines,
    })
}

/// Where `raw` starts in `bytes` (it borrows from them).
fn offset(bytes: &[u8], raw: &RawValue) -> usize {
    raw.get().as_ptr() as usize - bytes.as_ptr() as usize
}

/// The line map of a canonical lockfile, from its bytes: every list's line, and for
/// each element in `parsed` (the ones that changed, built and normalized) its lines and
/// the lines of every value inside. `None` when the file is not canonical where that
/// can be seen without building the unchanged elements: the envelope, the layout of
/// the lists, the order of the elements, the text of each changed element.
fn line_map(bytes: &[u8], side: &Side<'_>, parsed: &Surface) -> Option<LineMap> {
    if !side.ordered {
        return None;
    }
    // The envelope, written canonically with empty lists; the file must start with
    // it up to the surface's opening brace.
    let envelope = Lockfile {
        covenant_version: side.covenant_version.clone(),
        captured_at_unix: side.captured_at_unix,
        server: side.server.clone(),
        surface: Surface::default(),
    }
    .to_text();
    const OPEN: &str = "  \"surface\": {\n";
    let header = &envelope[..envelope.rfind(OPEN)? + OPEN.len()];
    let mut pos = 0;
    let expect = |pos: &mut usize, text: &[u8]| -> Option<()> {
        (bytes.get(*pos..*pos + text.len())? == text).then(|| *pos += text.len())
    };
    expect(&mut pos, header.as_bytes())?;
    // Walk the layout, noting each list's offset.
    let mut list_at = Vec::new();
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        list_at.push(pos);
        expect(
            &mut pos,
            format!("    \"{}\": [", kind.list_name()).as_bytes(),
        )?;
        let list = &side.lists[k];
        if !list.is_empty() {
            expect(&mut pos, b"\n")?;
            for (i, raw) in list.iter().enumerate() {
                expect(&mut pos, b"      ")?;
                if offset(bytes, raw) != pos {
                    return None;
                }
                pos += raw.get().len();
                expect(&mut pos, if i + 1 == list.len() { b"\n" } else { b",\n" })?;
            }
            expect(&mut pos, b"    ")?;
        }
        expect(&mut pos, b"]")?;
        expect(
            &mut pos,
            if k + 1 == Kind::ALL.len() {
                b"\n"
            } else {
                b",\n"
            },
        )?;
    }
    expect(&mut pos, b"  }\n}\n")?;
    if pos != bytes.len() {
        return None;
    }
    // Lines: count newlines once, in offset order, up to the last place asked for.
    // (offset, kind, the changed element there or None for the list's own line)
    type Place<'e> = (usize, Kind, Option<(&'e str, &'e Element)>);
    let mut wanted: Vec<Place<'_>> = Kind::ALL
        .into_iter()
        .zip(list_at)
        .map(|(kind, at)| (at, kind, None))
        .collect();
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        for element in parsed.list(kind) {
            let key = key_of(element, kind.key_field());
            let raw = side.index[k].get(key)?;
            wanted.push((offset(bytes, raw), kind, Some((key, element))));
        }
    }
    wanted.sort_by_key(|w| w.0);
    let mut counter = LineCounter::default();
    let mut map = LineMap::default();
    let mut text = String::new();
    for (at, kind, element) in wanted {
        let start = counter.line_at(bytes, at);
        let Some((key, element)) = element else {
            map.lists.insert(kind, start);
            continue;
        };
        text.clear();
        let mut track = Track::at(&text, start);
        canon::write_object_tracked(&mut text, element, Ctx::Element, 3, Some(&mut track));
        if bytes.get(at..at + text.len())? != text.as_bytes() {
            return None; // this element is not written canonically
        }
        let end = track.line_now(&text);
        map.elements
            .insert((kind, key.to_string()), (start, end, track.spans));
    }
    Some(map)
}

/// Counts newlines forward through a file: the 1-based line of an offset.
#[derive(Default)]
struct LineCounter {
    at: usize,
    newlines: usize,
}

impl LineCounter {
    /// The line `offset` is on; offsets must not decrease between calls.
    fn line_at(&mut self, bytes: &[u8], offset: usize) -> usize {
        if offset > self.at {
            self.newlines += count_newlines(&bytes[self.at..offset]);
            self.at = offset;
        }
        self.newlines + 1
    }
}

fn count_newlines(bytes: &[u8]) -> usize {
    // Word at a time: the count of 0x0a bytes in each 8-byte word.
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut n = 0usize;
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().unwrap_or_default()) ^ (LO * u64::from(b'\n'));
        // A zero byte in w is a newline; this marks exactly the zero bytes.
        let zero = !(((w & !HI).wrapping_add(!HI)) | w) & HI;
        n += zero.count_ones() as usize;
    }
    n + chunks.remainder().iter().filter(|b| **b == b'\n').count()
}

/// [`compare_files`] the slow way: both files read whole, as `check` does without
/// `--against`.
fn compare_full(
    rules: &Rules,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
) -> Result<Compared> {
    let la = Lockfile::parse(a.0, a.1)?;
    let lb = Lockfile::parse(b.0, b.1)?;
    let mut changes = diff_with_budget(rules, &la.surface, &lb.surface, budget);
    changes.extend(diff_server(rules, &la.server, &lb.server));
    let mut subjects = std::collections::BTreeSet::new();
    for surface in [&la.surface, &lb.surface] {
        for kind in Kind::ALL {
            for e in surface.list(kind) {
                subjects.insert(format!("{}:{}", kind.word(), key_of(e, kind.key_field())));
            }
        }
    }
    Ok(Compared {
        servers: (la.server, lb.server),
        changes,
        subjects: subjects.into_iter().collect(),
        lines: None,
    })
}

fn set_list(s: &mut Surface, kind: Kind, list: Vec<Element>) {
    match kind {
        Kind::Tool => s.tools = list,
        Kind::Resource => s.resources = list,
        Kind::Template => s.resource_templates = list,
        Kind::Prompt => s.prompts = list,
    }
}
