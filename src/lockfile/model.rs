//! The lockfile model: the server's information (its fields from the element table),
//! the surface (a list per `elements::Kind`), and the lockfile around them.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::elements::{self, Role};
use crate::error::{Error, Result};

pub const COVENANT_VERSION: &str = env!("CARGO_PKG_VERSION");

pub use crate::elements::Kind;

/// What the server says about itself: a value for each of its fields in
/// rules/elements.toml (`[[server]]`), in their order. The name (the field of role
/// `name`) is never absent: `""` when the server gave none.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerInfo {
    values: Vec<Option<String>>,
}

impl Default for ServerInfo {
    fn default() -> ServerInfo {
        let fields = elements::server_fields();
        ServerInfo {
            values: fields
                .iter()
                .map(|f| (f.role == Role::Name).then(String::new))
                .collect(),
        }
    }
}

impl ServerInfo {
    /// The value of `field` (`None`: absent, or no field of the table).
    pub fn get(&self, field: &str) -> Option<&str> {
        let at = elements::server_fields()
            .iter()
            .position(|f| f.field == field)?;
        self.values[at].as_deref()
    }

    /// Set `field` (a field the table does not list is not recorded).
    pub fn set(&mut self, field: &str, value: Option<String>) {
        let fields = elements::server_fields();
        if let Some(at) = fields.iter().position(|f| f.field == field) {
            self.values[at] = match fields[at].role {
                Role::Name => Some(value.unwrap_or_default()),
                _ => value,
            };
        }
    }

    /// Each field of the table, with its value, in the table's order.
    pub fn fields(&self) -> impl Iterator<Item = (&'static elements::ServerField, Option<&str>)> {
        elements::server_fields()
            .iter()
            .zip(&self.values)
            .map(|(f, v)| (f, v.as_deref()))
    }

    fn of_role(&self, role: Role) -> Option<&str> {
        self.fields()
            .find(|(f, _)| f.role == role)
            .and_then(|(_, v)| v)
    }

    /// What the server is called (`""`: it gave no name).
    pub fn name(&self) -> &str {
        self.of_role(Role::Name).unwrap_or_default()
    }

    /// The server's declared version.
    pub fn version(&self) -> Option<&str> {
        self.of_role(Role::Version)
    }
}

/// Read as an object of the table's server fields, each a string (the name's never
/// null) and none twice.
impl<'de> Deserialize<'de> for ServerInfo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<ServerInfo, D::Error> {
        d.deserialize_struct("ServerInfo", server_field_names(), ServerVisitor)
    }
}

/// The server's field names, as serde's errors list them.
fn server_field_names() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        elements::server_fields()
            .iter()
            .map(|f| f.field.as_str())
            .collect()
    })
}

struct ServerVisitor;

impl<'de> Visitor<'de> for ServerVisitor {
    type Value = ServerInfo;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("struct ServerInfo")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<ServerInfo, A::Error> {
        let fields = elements::server_fields();
        let mut info = ServerInfo::default();
        let mut seen = vec![false; fields.len()];
        while let Some(FieldAt(at)) = map.next_key()? {
            let f = &fields[at];
            if std::mem::replace(&mut seen[at], true) {
                return Err(de::Error::duplicate_field(server_field_names()[at]));
            }
            info.values[at] = match f.role {
                Role::Name => Some(map.next_value::<String>()?),
                _ => map.next_value::<Option<String>>()?,
            };
        }
        Ok(info)
    }
}

/// A key of the server's object: the position of its field in the table, or serde's
/// unknown-field error.
struct FieldAt(usize);

impl<'de> Deserialize<'de> for FieldAt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<FieldAt, D::Error> {
        d.deserialize_identifier(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = FieldAt;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> std::result::Result<FieldAt, E> {
        let names = server_field_names();
        match names.iter().position(|n| *n == key) {
            Some(at) => Ok(FieldAt(at)),
            None => Err(E::unknown_field(key, names)),
        }
    }
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
