//! The raw scan of a lockfile's bytes, for the offline check: elements kept as
//! borrowed JSON text (`&RawValue`, no allocation), indexed by key, and validated as the
//! full reader validates them (the same checks, the same messages); only elements a
//! caller asks for are built ([`build_element`]).

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{Element, Kind, ServerInfo};
use super::normalise::normalize_element;
use super::read::{
    check_element, check_version, max_depth, position_error, Arguments, Shape, MAX_DEPTH,
};
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
/// Scan one file. When the scan finds anything unusual (a shape problem, a duplicate
/// key, nesting past the reader's limit), the caller reads both files with the full
/// reader instead, so the two paths accept the same files and give the same errors.
pub(crate) fn scan<'a>(bytes: &'a [u8], origin: &str) -> Result<Scanned<'a>> {
    scan_fast(bytes, origin)
}
fn scan_fast<'a>(bytes: &'a [u8], origin: &str) -> Result<Scanned<'a>> {
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
            if raw_kind(element) != '{' {
                return Err(Error::new(format!("{origin}: an element is not an object")));
            }
            let shape: RawShape<'_> = serde_json::from_str(element.get())
                .map_err(|e| Error::new(format!("{origin}: {e}")))?;
            let arguments = match shape.arguments {
                None => Arguments::Absent,
                Some(a) if raw_kind(a) == 'n' => Arguments::Absent,
                Some(a) if raw_kind(a) == '[' => {
                    let list: Vec<&RawValue> = serde_json::from_str(a.get())
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
            let key = match kind {
                Kind::Tool | Kind::Prompt => shape.name,
                Kind::Resource => shape.uri,
                Kind::Template => shape.uri_template,
            };
            names.push(key.unwrap_or(serde_json::Value::Null));
            let missing = names.last().is_some_and(serde_json::Value::is_null);
            shapes.push((
                missing,
                shape.input_schema.map(raw_kind),
                shape.output_schema.map(raw_kind),
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
