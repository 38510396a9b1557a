//! The elements a server lists and their fields (`rules/elements.toml`): the kinds
//! ([`Kind`]), each kind's list, key and schema-bearing fields with their direction, the
//! canonical key order, the transport fields, and the server's own fields. The reader,
//! the canonical writer, the normaliser, the surface diff, witness placement and lint
//! read this table, so a new element field (or server field) is a row.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

pub const TABLE: (&str, &str) = (
    "rules/elements.toml",
    include_str!("../rules/elements.toml"),
);

/// The four kinds of element a server lists, in the order of a lockfile's lists.
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

    /// This kind's row of the embedded rules/elements.toml.
    pub fn spec(self) -> &'static Element {
        static SPECS: OnceLock<[&'static Element; 4]> = OnceLock::new();
        SPECS.get_or_init(|| Kind::ALL.map(|k| element(k.word())))[self as usize]
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

/// What a schema-bearing field describes, seen from the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// What a caller sends.
    Input,
    /// What a caller receives.
    Output,
}

/// How a schema-bearing field holds its schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// A JSON Schema: an object or a boolean.
    #[default]
    Schema,
    /// A list of objects named by `name` (with an optional `required` flag), compared as
    /// the properties of one object schema.
    Arguments,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaField {
    pub field: String,
    pub direction: Direction,
    #[serde(default)]
    pub form: Form,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Element {
    pub kind: String,
    pub list: String,
    pub key: String,
    #[serde(default)]
    pub schema: Vec<SchemaField>,
}

impl Element {
    /// The schema-bearing fields that describe what a caller sends (`inputSchema`,
    /// `arguments`): where lint finds a kind's parameters.
    pub fn inputs(&self) -> impl Iterator<Item = &SchemaField> {
        self.schema
            .iter()
            .filter(|s| s.direction == Direction::Input)
    }
}

/// What one of the server's own fields is to mcp-covenant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// What the server is called: written even when it gave none (as `""`), compared as
    /// text. Exactly one field.
    Name,
    /// What the server says about itself: compared as text by its `server.FIELD.*`
    /// rows of rules/surface.toml (without them `surface.field.unhandled`), linted.
    #[default]
    Text,
    /// The server's declared version: checked against the bump the changes require
    /// (`server.version.*`), linted. Exactly one field.
    Version,
    /// What the session agreed on (the protocol version): recorded, neither compared nor
    /// linted.
    Session,
}

/// One of the server's own fields (the lockfile's `server`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerField {
    pub field: String,
    #[serde(default)]
    pub role: Role,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fields {
    pub order: Vec<String>,
    pub transport: Vec<String>,
    pub keep: Vec<String>,
    /// Keys of an element's `_meta` that vary per request: dropped, never stored.
    #[serde(default)]
    pub per_request_meta: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    element: Vec<Element>,
    fields: Fields,
    server: Vec<ServerField>,
}

/// The most schema-bearing fields one kind may have (the reader checks them without
/// allocating).
pub const MAX_SCHEMA_FIELDS: usize = 4;

#[derive(Debug)]
pub struct Table {
    pub elements: Vec<Element>,
    pub fields: Fields,
    /// The server's own fields, in the order the canonical text writes them.
    pub server: Vec<ServerField>,
    index: HashMap<String, usize>,
}

impl Table {
    pub fn parse(text: &str) -> Result<Table, String> {
        let raw: RawTable = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut index = HashMap::new();
        for (i, e) in raw.element.iter().enumerate() {
            if index.insert(e.kind.clone(), i).is_some() {
                return Err(format!("element `{}` is listed twice", e.kind));
            }
            if e.schema.len() > MAX_SCHEMA_FIELDS {
                return Err(format!(
                    "element `{}`: at most {MAX_SCHEMA_FIELDS} schema fields",
                    e.kind
                ));
            }
            if e.schema
                .iter()
                .filter(|s| s.form == Form::Arguments)
                .count()
                > 1
            {
                return Err(format!(
                    "element `{}`: at most one field of form `arguments`",
                    e.kind
                ));
            }
            if e.schema.iter().any(|s| s.field == e.key) {
                return Err(format!("element `{}`: its key is not a schema", e.kind));
            }
            if Kind::from_word(&e.kind).is_none() {
                return Err(format!(
                    "unknown element `{}` (expected tool, resource, template or prompt)",
                    e.kind
                ));
            }
        }
        if let Some(k) = Kind::ALL.iter().find(|k| !index.contains_key(k.word())) {
            return Err(format!("no element `{}`", k.word()));
        }
        check_server(&raw.server)?;
        for keep in &raw.fields.keep {
            let top = keep.split('.').next().unwrap_or_default();
            if !raw.fields.transport.iter().any(|t| t == top) || !keep.contains('.') {
                return Err(format!(
                    "`keep` path `{keep}` is not inside a transport field"
                ));
            }
        }
        Ok(Table {
            elements: raw.element,
            fields: raw.fields,
            server: raw.server,
            index,
        })
    }

    pub fn get(&self, kind: &str) -> Option<&Element> {
        self.index.get(kind).map(|&i| &self.elements[i])
    }

    /// The row of `kind` (every kind has one: `parse` checks).
    pub fn of(&self, kind: Kind) -> &Element {
        &self.elements[self.index[kind.word()]]
    }
}

/// The server's fields: each named once; exactly one name and one version.
fn check_server(fields: &[ServerField]) -> Result<(), String> {
    for (i, f) in fields.iter().enumerate() {
        if fields[..i].iter().any(|g| g.field == f.field) {
            return Err(format!("server field `{}` is listed twice", f.field));
        }
    }
    for (role, word) in [(Role::Name, "name"), (Role::Version, "version")] {
        if fields.iter().filter(|f| f.role == role).count() != 1 {
            return Err(format!("exactly one server field has role `{word}`"));
        }
    }
    Ok(())
}

/// The embedded table. The test suite parses it, so a malformed table fails CI.
pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table::parse(TABLE.1).unwrap_or_else(|e| panic!("{}: {e}", TABLE.0)))
}

/// The row of one kind (`tool`, `resource`, `template`, `prompt`).
pub fn element(kind: &str) -> &'static Element {
    table()
        .get(kind)
        .unwrap_or_else(|| panic!("{}: no element `{kind}`", TABLE.0))
}

/// The server's own fields (the embedded table's `[[server]]` rows), in order.
pub fn server_fields() -> &'static [ServerField] {
    &table().server
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_parses_and_names_every_kind() {
        let t = Table::parse(TABLE.1).unwrap();
        for kind in ["tool", "resource", "template", "prompt"] {
            assert!(t.get(kind).is_some(), "{kind}");
        }
        assert!(Table::parse("[[element]]\nkind='x'\nlist='x'\nkey='k'\n[fields]\norder=[]\ntransport=['_meta']\nkeep=['ttl.x']\n").is_err());
    }

    #[test]
    fn every_kind_has_a_row_and_the_server_one_name_and_one_version() {
        let refused = |from: &str, to: &str| {
            let text = TABLE.1.replacen(from, to, 1);
            assert_ne!(text, TABLE.1, "`{from}` is not in the table");
            Table::parse(&text).err().unwrap_or_default()
        };
        assert_eq!(
            refused("kind = \"template\"", "kind = \"form\""),
            "unknown element `form` (expected tool, resource, template or prompt)"
        );
        assert_eq!(
            refused(
                "field = \"version\"\nrole = \"version\"",
                "field = \"version\""
            ),
            "exactly one server field has role `version`"
        );
        assert_eq!(
            refused("field = \"title\"\n", "field = \"name\"\n"),
            "server field `name` is listed twice"
        );
        let t = Table::parse(TABLE.1).unwrap();
        let version = t.server.iter().find(|f| f.role == Role::Version);
        assert_eq!(version.map(|f| f.field.as_str()), Some("version"));
        assert_eq!(t.server[0].field, "name", "the name is written first");
    }
}
