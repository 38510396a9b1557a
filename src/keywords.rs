//! The JSON Schema vocabulary (`rules/keywords.toml`): every keyword and its role, read
//! by the walker, the canonical writer and the rule-table validator, so no module keeps
//! its own list of keywords.

use rustc_hash::FxHashMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};

pub const TABLE: (&str, &str) = (
    "rules/keywords.toml",
    include_str!("../rules/keywords.toml"),
);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Applicator,
    Assertion,
    Annotation,
    Reference,
    Definitions,
    Identifier,
}

/// What an applicator holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Holds {
    Schema,
    List,
    Map,
    SchemaOrList,
    Dependencies,
}

/// How a change inside an applicator relates to what the whole schema accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Polarity {
    /// A tighter subschema accepts fewer instances.
    Same,
    /// No fixed direction (`not`, `if`).
    None,
}

/// How the walker descends into an applicator (its `comparator` column): each of these
/// has a dispatch in the walker, whose match over them is exhaustive, so a row naming
/// any other comparator is refused when the table loads, never walked past.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Descent {
    /// A map of named fields, compared with `required` (`properties`).
    Fields,
    /// A map of subschemas, entry by entry (`patternProperties`).
    Entries,
    /// One subschema (`contains`, `not`).
    Subschema,
    /// A list of subschemas: alternatives or conjuncts when `unordered` (`anyOf`),
    /// positions otherwise (`prefixItems`).
    Variants,
    /// A subschema for what the object's other keywords leave out, `false` closing it
    /// (`additionalProperties`).
    Openness,
    /// A subschema that constrains something only when it is there (`items`).
    Presence,
}

impl Descent {
    /// The comparator's name in the tables.
    pub fn word(self) -> &'static str {
        match self {
            Descent::Fields => "fields",
            Descent::Entries => "entries",
            Descent::Subschema => "subschema",
            Descent::Variants => "variants",
            Descent::Openness => "openness",
            Descent::Presence => "presence",
        }
    }

    /// What an applicator walked this way may hold.
    fn fits(self, holds: Holds) -> bool {
        match self {
            Descent::Fields | Descent::Entries => holds == Holds::Map,
            Descent::Subschema => matches!(holds, Holds::Schema | Holds::Dependencies),
            Descent::Variants => holds == Holds::List,
            Descent::Openness => holds == Holds::Schema,
            Descent::Presence => matches!(holds, Holds::Schema | Holds::SchemaOrList),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Lower,
    Upper,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Keyword {
    pub name: String,
    pub role: Role,
    pub holds: Option<Holds>,
    pub polarity: Option<Polarity>,
    /// (Applicators) how the walker descends into it, and the comparator its rows use
    /// (`rules::load` checks every row against it).
    pub comparator: Option<Descent>,
    #[serde(default)]
    pub unordered: bool,
    pub bound: Option<Bound>,
    #[serde(default)]
    pub exclusive: bool,
    #[serde(default)]
    pub data: bool,
    /// The value holds property names (`required`, `dependentRequired`).
    #[serde(default)]
    pub names: bool,
    /// (Applicators) the keywords beside it that decide what it applies to
    /// (`additionalProperties` sees `properties` and `patternProperties`).
    #[serde(default)]
    pub neighbours: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    keyword: Vec<Keyword>,
}

pub struct Vocabulary {
    pub keywords: Vec<Keyword>,
    /// Looked up for every key of every schema compared or normalised, with short names,
    /// in a table no input can add to: rustc's Fx hash (SipHash's defence against chosen
    /// collisions buys nothing here, and it cost 60 % of normalising a schema).
    index: FxHashMap<String, usize>,
}

impl Vocabulary {
    pub fn parse(text: &str) -> Result<Vocabulary, String> {
        let raw: RawTable = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut index = FxHashMap::default();
        for (i, k) in raw.keyword.iter().enumerate() {
            if index.insert(k.name.clone(), i).is_some() {
                return Err(format!("keyword `{}` is listed twice", k.name));
            }
            let applicator = k.role == Role::Applicator;
            if applicator != (k.holds.is_some() && k.polarity.is_some())
                || applicator != k.comparator.is_some()
            {
                return Err(format!(
                    "keyword `{}`: an applicator states `holds`, `polarity` and `comparator`, nothing else does",
                    k.name
                ));
            }
            if let (Some(c), Some(h)) = (k.comparator, k.holds) {
                if !c.fits(h) {
                    return Err(format!(
                        "keyword `{}`: the `{}` comparator does not walk what `holds = {:?}` holds",
                        k.name,
                        c.word(),
                        h
                    ));
                }
            }
            if k.polarity == Some(Polarity::None) && k.comparator != Some(Descent::Subschema) {
                return Err(format!(
                    "keyword `{}`: `polarity = \"none\"` (compared as a value) goes with the `subschema` comparator",
                    k.name
                ));
            }
            if k.unordered && applicator && k.comparator != Some(Descent::Variants) {
                return Err(format!(
                    "keyword `{}`: an applicator is `unordered` only with the `variants` comparator",
                    k.name
                ));
            }
            if k.exclusive && k.bound.is_none() {
                return Err(format!(
                    "keyword `{}`: `exclusive` goes with `bound`",
                    k.name
                ));
            }
        }
        for k in &raw.keyword {
            if !k.neighbours.is_empty() && k.role != Role::Applicator {
                return Err(format!(
                    "keyword `{}`: only an applicator has `neighbours`",
                    k.name
                ));
            }
            if let Some(n) = k
                .neighbours
                .iter()
                .find(|n| !index.contains_key(n.as_str()))
            {
                return Err(format!(
                    "keyword `{}`: neighbour `{n}` is not listed",
                    k.name
                ));
            }
        }
        Ok(Vocabulary {
            keywords: raw.keyword,
            index,
        })
    }

    pub fn get(&self, name: &str) -> Option<&Keyword> {
        self.index.get(name).map(|&i| &self.keywords[i])
    }
}

/// The embedded table, parsed once: the vocabulary, or why the table was refused.
fn loaded() -> &'static Result<Vocabulary, String> {
    static V: OnceLock<Result<Vocabulary, String>> = OnceLock::new();
    V.get_or_init(|| Vocabulary::parse(TABLE.1))
}

/// Whether the embedded table loads: `rules::Rules::embedded` refuses to start without
/// it (one error line naming the table and the row).
pub fn check() -> Result<(), String> {
    loaded().as_ref().map(|_| ()).map_err(Clone::clone)
}

/// The embedded vocabulary. A table that does not load stops the rule tables from
/// loading (see [`check`]); should anything read it regardless, no keyword is known and
/// every keyword is compared as a value, conservatively.
pub fn vocabulary() -> &'static Vocabulary {
    #[cfg(test)]
    if let Some(v) = testing::installed() {
        return v;
    }
    static NONE: OnceLock<Vocabulary> = OnceLock::new();
    match loaded() {
        Ok(v) => v,
        Err(_) => NONE.get_or_init(|| Vocabulary {
            keywords: Vec::new(),
            index: FxHashMap::default(),
        }),
    }
}

pub fn get(name: &str) -> Option<&'static Keyword> {
    vocabulary().get(name)
}

pub fn role(name: &str) -> Option<Role> {
    get(name).map(|k| k.role)
}

/// A keyword that describes a value without constraining it.
pub fn is_annotation(name: &str) -> bool {
    matches!(
        role(name),
        Some(Role::Annotation | Role::Definitions | Role::Identifier)
    )
}

/// An array value whose order carries no meaning (`enum`, `type`, `required`, and the
/// variants of `anyOf` / `oneOf` / `allOf`): the table's `unordered` column.
pub fn unordered(name: &str) -> bool {
    get(name).is_some_and(|k| k.unordered)
}

/// What a keyword's value holds, when it holds subschemas: an applicator's `holds`, and
/// a map of named subschemas for the definitions keywords (`$defs`, `definitions`).
pub fn holds(name: &str) -> Option<Holds> {
    let k = get(name)?;
    match k.role {
        Role::Definitions => Some(Holds::Map),
        _ => k.holds,
    }
}

/// Where a subschema sits under its keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot<'a> {
    /// The keyword's value itself (`not`, `additionalProperties`, object `items`).
    Whole,
    /// An item of a list (`anyOf[1]`, `prefixItems[0]`, array `items`).
    Index(usize),
    /// An entry of a map (`properties.name`, `$defs.Name`, a `dependencies` schema).
    Entry(&'a str),
}

/// Each subschema of one schema object, placed as the vocabulary says: an applicator's or
/// definitions keyword's values by what it holds. Nothing else holds a schema: data
/// (`enum`, `default`), names (`required`, a `dependencies` list), assertions,
/// annotations and unknown keywords are never read as schemas, and a property named
/// `enum` is a schema like any other. Every walk over a schema's subschemas (the
/// normaliser, lint) takes them from here.
pub fn subschemas(schema: &Map<String, Value>) -> Vec<(&str, Slot<'_>, &Value)> {
    let mut out = Vec::new();
    for (key, value) in schema {
        let Some(holds) = holds(key) else { continue };
        match (holds, value) {
            (Holds::List | Holds::SchemaOrList, Value::Array(list)) => {
                out.extend(
                    list.iter()
                        .enumerate()
                        .map(|(i, s)| (key.as_str(), Slot::Index(i), s)),
                );
            }
            (Holds::Map | Holds::Dependencies, Value::Object(map)) => {
                out.extend(
                    map.iter()
                        .filter(|(_, s)| !(holds == Holds::Dependencies && s.is_array()))
                        .map(|(name, s)| (key.as_str(), Slot::Entry(name), s)),
                );
            }
            (Holds::Schema | Holds::SchemaOrList, _) => {
                out.push((key.as_str(), Slot::Whole, value))
            }
            _ => {}
        }
    }
    out
}

/// [`subschemas`], mutable (without their places).
pub fn subschemas_mut(schema: &mut Map<String, Value>) -> Vec<&mut Value> {
    let mut out = Vec::new();
    for (key, value) in schema.iter_mut() {
        let Some(holds) = holds(key) else { continue };
        match (holds, value) {
            (Holds::List | Holds::SchemaOrList, Value::Array(list)) => out.extend(list.iter_mut()),
            (Holds::Map | Holds::Dependencies, Value::Object(map)) => out.extend(
                map.values_mut()
                    .filter(|s| !(holds == Holds::Dependencies && s.is_array())),
            ),
            (Holds::Schema | Holds::SchemaOrList, value) => out.push(value),
            _ => {}
        }
    }
    out
}

/// A vendor extension (`x-...`): an annotation by convention (OpenAPI), never a
/// constraint a validator applies.
pub fn is_extension(name: &str) -> bool {
    name.starts_with("x-")
}

/// A vocabulary other than the embedded one, for the unit tests that show what a row
/// of rules/keywords.toml does: parsed from table text as the embedded one is, and in
/// force on the calling thread until the guard drops.
#[cfg(test)]
pub(crate) mod testing {
    use crate::keywords::Vocabulary;
    use std::cell::Cell;

    thread_local! {
        static INSTALLED: Cell<Option<&'static Vocabulary>> = const { Cell::new(None) };
    }

    pub(crate) fn installed() -> Option<&'static Vocabulary> {
        INSTALLED.with(Cell::get)
    }

    pub(crate) struct Installed(());

    impl Drop for Installed {
        fn drop(&mut self) {
            INSTALLED.with(|c| c.set(None));
        }
    }

    /// Parse `text` as rules/keywords.toml and use it on this thread.
    pub(crate) fn install(text: &str) -> Result<Installed, String> {
        let v: &'static Vocabulary = Box::leak(Box::new(Vocabulary::parse(text)?));
        INSTALLED.with(|c| c.set(Some(v)));
        Ok(Installed(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_vocabulary_parses() {
        let v = Vocabulary::parse(TABLE.1).unwrap();
        assert!(v.keywords.len() > 60);
        assert_eq!(v.get("not").unwrap().polarity, Some(Polarity::None));
        assert_eq!(v.get("exclusiveMinimum").unwrap().bound, Some(Bound::Lower));
    }

    /// The embedded table with one more row.
    fn with_row(row: &str) -> String {
        format!("{}\n[[keyword]]\n{row}\n", TABLE.1)
    }

    #[test]
    fn an_applicator_whose_comparator_the_walker_cannot_dispatch_is_refused() {
        let row = |c: &str| {
            with_row(&format!(
                "name = \"dependentThings\"\nrole = \"applicator\"\nholds = \"map\"\npolarity = \"same\"\ncomparator = \"{c}\""
            ))
        };
        // Known to the walker: loads.
        assert!(Vocabulary::parse(&row("entries")).is_ok());
        assert!(testing::install(&row("entries")).is_ok());
        // A rule comparator the walker does not descend with, and no comparator at all.
        for c in ["values", "bogus"] {
            let err = Vocabulary::parse(&row(c)).err().expect(c);
            assert!(err.contains(c), "{err}");
            assert!(testing::install(&row(c)).is_err());
        }
        // A comparator that does not walk what the keyword holds.
        let err = Vocabulary::parse(&row("subschema")).err().unwrap();
        assert!(err.contains("does not walk"), "{err}");
    }

    #[test]
    fn a_value_compared_applicator_goes_with_the_subschema_comparator() {
        let t = with_row(
            "name = \"thing\"\nrole = \"applicator\"\nholds = \"map\"\npolarity = \"none\"\ncomparator = \"entries\"",
        );
        let err = Vocabulary::parse(&t).err().unwrap();
        assert!(err.contains("polarity"), "{err}");
        let t = with_row(
            "name = \"thing\"\nrole = \"applicator\"\nholds = \"schema\"\npolarity = \"same\"\ncomparator = \"subschema\"\nunordered = true",
        );
        assert!(Vocabulary::parse(&t).err().unwrap().contains("unordered"));
    }

    #[test]
    fn neighbours_are_listed_keywords_of_an_applicator() {
        let row = |role: &str, n: &str| {
            let applicator =
                "holds = \"schema\"\npolarity = \"same\"\ncomparator = \"subschema\"\n";
            let extra = if role == "applicator" { applicator } else { "" };
            with_row(&format!(
                "name = \"thing\"\nrole = \"{role}\"\n{extra}neighbours = [\"{n}\"]"
            ))
        };
        assert!(Vocabulary::parse(&row("applicator", "properties")).is_ok());
        let err = Vocabulary::parse(&row("applicator", "nowhere"))
            .err()
            .unwrap();
        assert!(err.contains("not listed"), "{err}");
        let err = Vocabulary::parse(&row("assertion", "properties"))
            .err()
            .unwrap();
        assert!(err.contains("only an applicator"), "{err}");
        assert_eq!(get("items").unwrap().neighbours, ["prefixItems"]);
    }

    #[test]
    fn the_unions_are_unordered_by_the_table() {
        for k in ["anyOf", "oneOf", "allOf", "enum", "type", "required"] {
            assert!(unordered(k), "{k}");
        }
        for k in ["prefixItems", "properties", "const"] {
            assert!(!unordered(k), "{k}");
        }
    }

    #[test]
    fn every_2020_12_keyword_is_listed() {
        // From the 2020-12 meta-schemas (core, applicator, unevaluated, validation,
        // meta-data, format-annotation, content).
        let all = [
            "$id",
            "$schema",
            "$ref",
            "$anchor",
            "$dynamicRef",
            "$dynamicAnchor",
            "$vocabulary",
            "$comment",
            "$defs",
            "prefixItems",
            "items",
            "contains",
            "additionalProperties",
            "properties",
            "patternProperties",
            "dependentSchemas",
            "propertyNames",
            "if",
            "then",
            "else",
            "allOf",
            "anyOf",
            "oneOf",
            "not",
            "unevaluatedItems",
            "unevaluatedProperties",
            "type",
            "const",
            "enum",
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "maxLength",
            "minLength",
            "pattern",
            "maxItems",
            "minItems",
            "uniqueItems",
            "maxContains",
            "minContains",
            "maxProperties",
            "minProperties",
            "required",
            "dependentRequired",
            "title",
            "description",
            "default",
            "deprecated",
            "readOnly",
            "writeOnly",
            "examples",
            "format",
            "contentEncoding",
            "contentMediaType",
            "contentSchema",
            "definitions",
            "dependencies",
            "additionalItems",
        ];
        for k in all {
            assert!(get(k).is_some(), "{k} is missing from rules/keywords.toml");
        }
    }
}
