//! The elements a server lists and their fields (`rules/elements.toml`): each kind's
//! list, key and schema-bearing fields with their direction, the canonical key order,
//! and the transport fields. The reader, the canonical writer, the normaliser, the
//! surface diff and witness placement read this table, so a new element field is a row.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

pub const TABLE: (&str, &str) = (
    "rules/elements.toml",
    include_str!("../rules/elements.toml"),
);

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
}

/// The most schema-bearing fields one kind may have (the reader checks them without
/// allocating).
pub const MAX_SCHEMA_FIELDS: usize = 4;

pub struct Table {
    pub elements: Vec<Element>,
    pub fields: Fields,
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
        }
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
            index,
        })
    }

    pub fn get(&self, kind: &str) -> Option<&Element> {
        self.index.get(kind).map(|&i| &self.elements[i])
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_parses_and_names_every_kind() {
        let t = Table::parse(TABLE.1).unwrap();
        for kind in ["tool", "resource", "template", "prompt"] {
            assert!(t.get(kind).is_some(), "{kind}");
        }
        assert_eq!(t.get("tool").unwrap().schema.len(), 2);
        assert!(Table::parse("[[element]]\nkind='x'\nlist='x'\nkey='k'\n[fields]\norder=[]\ntransport=['_meta']\nkeep=['ttl.x']\n").is_err());
    }
}
