//! The lockfile model: the four kinds of element, the server's information, the
//! surface, and the lockfile around them.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::elements;
use crate::error::{Error, Result};

pub const COVENANT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The four kinds of element a server lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Tool,
    Resource,
    Template,
    Prompt,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Tool, Kind::Resource, Kind::Template, Kind::Prompt];

    /// The word used in subjects (`tool:NAME`) and rule tables (`element = "tool"`).
    pub fn word(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Template => "template",
            Kind::Prompt => "prompt",
        }
    }

    pub fn from_word(word: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.word() == word)
    }

    /// This kind's row of rules/elements.toml.
    pub fn spec(self) -> &'static elements::Element {
        static SPECS: std::sync::OnceLock<[&'static elements::Element; 4]> =
            std::sync::OnceLock::new();
        let specs = SPECS.get_or_init(|| Kind::ALL.map(|k| elements::element(k.word())));
        let at = Kind::ALL
            .iter()
            .position(|k| *k == self)
            .unwrap_or_default();
        specs[at]
    }

    /// The field that identifies an element of this kind.
    pub fn key_field(self) -> &'static str {
        &self.spec().key
    }

    /// The key of this kind's list in `surface`.
    pub fn list_name(self) -> &'static str {
        &self.spec().list
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerInfo {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default, rename = "protocolVersion")]
    pub protocol_version: Option<String>,
    /// What the server tells the model about itself (initialize result or
    /// `server/discover`); compared by the `server.instructions.*` rows.
    #[serde(default)]
    pub instructions: Option<String>,
}

pub type Element = Map<String, Value>;

/// An element's `_meta` field.
pub const META: &str = "_meta";

/// The elements, by kind. Read only through `Raw` (the one reader), never derived.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Surface {
    pub tools: Vec<Element>,
    pub resources: Vec<Element>,
    pub resource_templates: Vec<Element>,
    pub prompts: Vec<Element>,
}

impl Surface {
    pub fn list(&self, kind: Kind) -> &[Element] {
        match kind {
            Kind::Tool => &self.tools,
            Kind::Resource => &self.resources,
            Kind::Template => &self.resource_templates,
            Kind::Prompt => &self.prompts,
        }
    }

    pub(super) fn list_mut(&mut self, kind: Kind) -> &mut Vec<Element> {
        match kind {
            Kind::Tool => &mut self.tools,
            Kind::Resource => &mut self.resources,
            Kind::Template => &mut self.resource_templates,
            Kind::Prompt => &mut self.prompts,
        }
    }

    pub fn len(&self) -> usize {
        Kind::ALL.iter().map(|k| self.list(*k).len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub fn key_of<'a>(element: &'a Element, key_field: &str) -> &'a str {
    element
        .get(key_field)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[derive(Clone, Debug, PartialEq)]
pub struct Lockfile {
    pub covenant_version: String,
    pub captured_at_unix: u64,
    pub server: ServerInfo,
    pub surface: Surface,
}

impl Lockfile {
    pub fn new(server: ServerInfo, mut surface: Surface, captured_at_unix: u64) -> Lockfile {
        surface.normalize();
        Lockfile {
            covenant_version: COVENANT_VERSION.to_string(),
            captured_at_unix,
            server,
            surface,
        }
    }
}

/// The capture time: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now.
pub fn capture_time() -> Result<u64> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => v.trim().parse::<u64>().map_err(|_| {
            Error::new(format!(
                "SOURCE_DATE_EPOCH must be a whole number of seconds, not `{v}`"
            ))
        }),
        Err(_) => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)),
    }
}
