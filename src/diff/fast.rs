//! The offline fast path of `check --against`: both lockfiles are scanned, not built.
//!
//! Elements are kept as borrowed raw JSON text (`&RawValue`, no allocation). Two
//! canonical lockfiles write an unchanged element as the same bytes, so an element
//! whose text is identical on both sides cannot hold a change and is never parsed;
//! only the rest (a few percent in a typical PR) is built into values, normalized,
//! and handed to the ordinary diff. Files that are not canonical simply take the slow
//! road for the elements whose bytes differ: the result is the same either way. The
//! two files are scanned on two threads.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{diff_server, diff_with_budget, Change};
use crate::error::{Error, Result};
use crate::lockfile::{
    check_version, normalize_element, position_error, Element, Kind, ServerInfo, Surface,
};
use crate::rules::Rules;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLock<'a> {
    covenant_version: String,
    #[allow(dead_code)]
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

/// Just the identifying field of an element; everything else is skipped unread.
#[derive(Deserialize)]
struct Key {
    name: Option<serde_json::Value>,
    uri: Option<serde_json::Value>,
    #[serde(rename = "uriTemplate")]
    uri_template: Option<serde_json::Value>,
}

/// One side, indexed: element key → raw text, per kind.
struct Side<'a> {
    server: ServerInfo,
    index: Vec<BTreeMap<String, &'a RawValue>>,
}

fn scan<'a>(bytes: &'a [u8], origin: &str) -> Result<Side<'a>> {
    let raw: RawLock<'a> = serde_json::from_slice(bytes).map_err(|e| position_error(origin, &e))?;
    check_version(&raw.covenant_version, origin)?;
    let mut index = Vec::new();
    for kind in Kind::ALL {
        let mut map = BTreeMap::new();
        let mut seen = HashSet::new();
        for (i, element) in raw.surface.list(kind).iter().enumerate() {
            let where_ = format!("{origin}: surface.{}[{i}]", kind.list_name());
            let key: Key = serde_json::from_str(element.get()).map_err(|e| {
                Error::new(format!(
                    "{where_}: {}",
                    e.to_string().split(" at line").next().unwrap_or("")
                ))
            })?;
            let value = match kind {
                Kind::Tool | Kind::Prompt => key.name,
                Kind::Resource => key.uri,
                Kind::Template => key.uri_template,
            };
            let field = kind.key_field();
            let name = match value {
                Some(serde_json::Value::String(s)) => s,
                Some(_) => return Err(Error::new(format!("{where_}: `{field}` must be a string"))),
                None => return Err(Error::new(format!("{where_}: missing `{field}`"))),
            };
            if !seen.insert(name.clone()) {
                return Err(Error::new(format!(
                    "{where_}: duplicate {} `{name}`",
                    kind.word()
                )));
            }
            map.insert(name, *element);
        }
        index.push(map);
    }
    Ok(Side {
        server: raw.server,
        index,
    })
}

/// What an offline check needs from the two files.
pub struct Compared {
    pub servers: (ServerInfo, ServerInfo),
    pub changes: Vec<Change>,
    /// Every element subject of either side (for JUnit).
    pub subjects: Vec<String>,
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
    let (sa, sb) = std::thread::scope(|s| {
        let ta = s.spawn(|| scan(a.0, a.1));
        let sb = scan(b.0, b.1);
        let sa = ta
            .join()
            .unwrap_or_else(|_| Err(Error::new("scanning the baseline failed")));
        (sa, sb)
    });
    let (sa, sb) = (sa?, sb?);
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
    Ok(Compared {
        servers: (sa.server, sb.server),
        changes,
        subjects,
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
