//! The model of a rule row: severities, directions, the comparators and the events each
//! reports, where a row applies (`Scope`), the row itself (`Rule`), a covenant.toml
//! severity override, and message templates. No parsing and no lookup here: `load`
//! builds rows from rules/*.toml, `index` finds them.

use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use crate::elements::Kind;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Breaking,
    Minor,
    Patch,
    None,
}

impl Severity {
    pub fn word(self) -> &'static str {
        match self {
            Severity::Breaking => "breaking",
            Severity::Minor => "minor",
            Severity::Patch => "patch",
            Severity::None => "none",
        }
    }

    pub fn parse(word: &str) -> Option<Severity> {
        [
            Severity::Breaking,
            Severity::Minor,
            Severity::Patch,
            Severity::None,
        ]
        .into_iter()
        .find(|s| s.word() == word)
    }

    /// The semver bump a change of this severity requires.
    pub fn bump(self) -> &'static str {
        match self {
            Severity::Breaking => "major",
            Severity::Minor => "minor",
            Severity::Patch => "patch",
            Severity::None => "none",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// What a caller sends (a tool's inputSchema, a prompt's arguments).
    Input,
    /// What a caller receives (a tool's outputSchema, a resource's content type).
    Output,
}

impl Direction {
    pub fn word(self) -> &'static str {
        match self {
            Direction::Input => "input",
            Direction::Output => "output",
        }
    }
}

/// The closed set of comparators the walker implements, each with its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Comparator {
    /// The keyword or element is there on one side only.
    Presence,
    /// A set of JSON values (`enum`): the constraint appears/disappears, values come and go.
    Values,
    /// The JSON Schema `type` set, with `integer` inside `number`.
    Typeset,
    /// A string compared as text.
    Text,
    /// A number: increased or decreased.
    Number,
    /// Any JSON value, compared for equality.
    Value,
    /// A boolean flag.
    Bool,
    /// Object fields: `properties` together with `required`.
    Fields,
    /// A list of alternative or combined subschemas (`anyOf`, `oneOf`, `allOf`).
    Variants,
    /// `additionalProperties`: open (absent/true/schema) or closed (false).
    Openness,
    /// The fallback for keywords and fields no row models.
    Unhandled,
    /// The walker's work budget ran out.
    Limit,
    /// `multipleOf`: the new divisor is a multiple of the old (tightened), a divisor of
    /// it (loosened), or neither (changed).
    Divisor,
    /// The server's declared version bump against the bump its changes require.
    Semver,
    /// An applicator holding one subschema (`contains`, `not`, `then`, ...): it appears,
    /// disappears, or (for one whose changes have no fixed direction) changes.
    Subschema,
    /// An applicator holding named subschemas (`patternProperties`, `dependentSchemas`):
    /// an entry appears or disappears; entries on both sides are walked.
    Entries,
    /// `format`: a format that accepts a superset (`email` → `idn-email`) widens it.
    Format,
    /// `pattern`: the strings the old and the new regular expression match, compared.
    Pattern,
}

impl Comparator {
    pub const ALL: [Comparator; 18] = [
        Comparator::Presence,
        Comparator::Values,
        Comparator::Typeset,
        Comparator::Text,
        Comparator::Number,
        Comparator::Value,
        Comparator::Bool,
        Comparator::Fields,
        Comparator::Variants,
        Comparator::Openness,
        Comparator::Unhandled,
        Comparator::Limit,
        Comparator::Divisor,
        Comparator::Semver,
        Comparator::Subschema,
        Comparator::Entries,
        Comparator::Format,
        Comparator::Pattern,
    ];

    /// The comparator a table names (`fields`, `variants`, ...).
    pub fn parse(word: &str) -> Option<Comparator> {
        Comparator::ALL.into_iter().find(|c| c.word() == word)
    }

    /// What it compares, for the comparator listing (`rules --comparators`).
    pub fn compares(self) -> &'static str {
        match self {
            Comparator::Presence => "there or not (also the boolean schema `false`, rows on the pseudo-keyword `false`)",
            Comparator::Values => "a set of JSON values (`enum`); `added` / `removed` are the constraint itself",
            Comparator::Typeset => "the `type` set (`integer` ⊂ `number`, absent = any)",
            Comparator::Text => "a string",
            Comparator::Number => "a number",
            Comparator::Value => "any JSON value",
            Comparator::Bool => "a flag (absent = false, or the row's `absent`)",
            Comparator::Fields => "`properties` + `required` (`when = \"required\"/\"optional\"/\"closed\"`)",
            Comparator::Variants => "`anyOf` / `oneOf` / `allOf` / `prefixItems` (`when = \"open\"/\"closed\"` for tuples, `\"overlapping\"` for `oneOf`; `variant_changed`: inside overlapping `oneOf` variants; `overlap`: a value the baseline accepted matches two `oneOf` variants, found and proven)",
            Comparator::Openness => "`additionalProperties`",
            Comparator::Unhandled => "the fallback for anything no row models",
            Comparator::Limit => "the walker's work budget",
            Comparator::Divisor => "`multipleOf`: is the new value a multiple of the old, or a divisor",
            Comparator::Semver => "the server's declared version bump against the required one (`element = \"server\"`)",
            Comparator::Subschema => "an applicator holding one subschema (`contains`, `not`, `then`, ...); `changed` only for those compared as values (`not`, `if`, `dependencies`)",
            Comparator::Entries => "a map of subschemas (`patternProperties`, `dependentSchemas`; `when = \"open\"/\"closed\"`)",
            Comparator::Format => "`format`, with the known subset relations (`email` ⊂ `idn-email`, `uri` ⊂ `iri`, ...)",
            Comparator::Pattern => "`pattern`, by the strings each regex matches (automata in step, within a step budget): `changed` when each matches what the other rejects, `rewritten` for the same strings, `undecided` outside the engine or past the budget",
        }
    }

    pub fn events(self) -> &'static [&'static str] {
        match self {
            Comparator::Presence => &["added", "removed"],
            Comparator::Values => &["added", "removed", "value_added", "value_removed"],
            Comparator::Typeset => &["narrowed", "widened", "changed"],
            Comparator::Text | Comparator::Value => &["added", "removed", "changed"],
            Comparator::Number => &["added", "removed", "increased", "decreased"],
            Comparator::Bool => &["to_true", "to_false"],
            Comparator::Fields => &["added", "removed", "required", "optional"],
            Comparator::Variants => &[
                "added",
                "removed",
                "variant_added",
                "variant_removed",
                "variant_changed",
                "variant_covered",
                "overlap",
            ],
            Comparator::Openness => &["restricted", "relaxed"],
            Comparator::Unhandled => &["changed"],
            Comparator::Limit => &["exceeded"],
            Comparator::Divisor => &["added", "removed", "tightened", "loosened", "changed"],
            Comparator::Semver => &[
                "insufficient_major",
                "insufficient_minor",
                "unchanged_major",
                "unchanged",
                "downgraded_major",
                "downgraded",
            ],
            Comparator::Subschema => &["added", "removed", "changed"],
            Comparator::Entries => &["entry_added", "entry_removed"],
            Comparator::Format => &["added", "removed", "widened", "narrowed", "changed"],
            Comparator::Pattern => &[
                "added",
                "removed",
                "widened",
                "narrowed",
                "changed",
                "rewritten",
                "undecided",
            ],
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Comparator::Presence => "presence",
            Comparator::Values => "values",
            Comparator::Typeset => "typeset",
            Comparator::Text => "text",
            Comparator::Number => "number",
            Comparator::Value => "value",
            Comparator::Bool => "bool",
            Comparator::Fields => "fields",
            Comparator::Variants => "variants",
            Comparator::Openness => "openness",
            Comparator::Unhandled => "unhandled",
            Comparator::Limit => "limit",
            Comparator::Divisor => "divisor",
            Comparator::Semver => "semver",
            Comparator::Subschema => "subschema",
            Comparator::Entries => "entries",
            Comparator::Format => "format",
            Comparator::Pattern => "pattern",
        }
    }
}

/// Pseudo-keyword for rows on vendor extensions (`x-...`).
pub const EXTENSION_KEYWORD: &str = "x-*";

/// Pseudo-keywords for rows the walker raises itself.
pub const ANY_KEYWORD: &str = "*";
pub const WALK_KEYWORD: &str = "$walk";

/// How sure a verdict is. `Exact`: the row models the change, so the severity follows
/// from what the two schemas accept. `Conservative`: nothing proves the change harmless
/// (a keyword no row models, a pattern rewritten), so it is reported as breaking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Certainty {
    #[default]
    Exact,
    Conservative,
}

impl Certainty {
    pub fn word(self) -> &'static str {
        match self {
            Certainty::Exact => "exact",
            Certainty::Conservative => "conservative",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Condition {
    /// The field involved is (or was, for a removal) required.
    Required,
    /// The field involved is (or was) optional.
    Optional,
    /// The object or tuple that lost (or never had) the member is closed: a removed
    /// optional property is no longer accepted; a new tuple position was not allowed.
    Closed,
    /// The object or tuple is open: what is not declared is accepted.
    Open,
    /// The `oneOf` list holding the variant that came or went may overlap (no
    /// distinct types, no required discriminator): a value can match two variants.
    Overlapping,
    /// The tool is read-only in the new listing (`readOnlyHint: true`): the spec gives
    /// `destructiveHint` and `idempotentHint` meaning only when it is false.
    #[serde(rename = "read_only")]
    ReadOnly,
}

/// Where a row applies.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// A JSON Schema keyword, anywhere in an input or output schema.
    Schema { keyword: String },
    /// A field of a surface element (`None`: the element itself).
    Element {
        kind: Option<Kind>,
        field: Option<String>,
    },
    /// The server's own declarations (its version).
    Server { field: String },
}

/// A severity override for one rule id (covenant.toml's `[severity]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Override {
    /// For every direction (and for direction-less surface changes).
    pub all: Option<Severity>,
    pub input: Option<Severity>,
    pub output: Option<Severity>,
}

impl Override {
    pub fn get(&self, direction: Option<Direction>) -> Option<Severity> {
        let specific = match direction {
            Some(Direction::Input) => self.input,
            Some(Direction::Output) => self.output,
            None => None,
        };
        specific.or(self.all)
    }
}

#[derive(Clone, Debug)]
pub struct Rule {
    pub id: String,
    pub scope: Scope,
    pub comparator: Comparator,
    pub event: String,
    pub when: Option<Condition>,
    /// Severity for a change in what a caller sends / receives.
    pub input: Option<Severity>,
    pub output: Option<Severity>,
    /// Severity of a surface change that has no direction (a tool removed).
    pub severity: Option<Severity>,
    /// What an absent keyword or field compares as (`""` for descriptions).
    pub absent: Option<Value>,
    /// For a `values` row: the one value whose coming or going it classifies (a row
    /// without one classifies the rest).
    pub value: Option<Value>,
    pub message: String,
    pub help: String,
    /// Whether the row's verdict is proven by what the schemas accept, or a safe guess.
    pub certainty: Certainty,
    /// Why a schema row states only one direction.
    pub reason: Option<String>,
    /// Former ids of this row, oldest first: still accepted wherever a user writes a
    /// rule id, with a deprecation warning naming the current id. An id split in two is
    /// an alias on both rows.
    pub aliases: Vec<String>,
    /// The change is to what the model reads (a description, a title, the server's
    /// instructions, a tool annotation): the `consumer` profile makes it breaking.
    pub model_facing: bool,
    pub source: &'static str,
}

impl Rule {
    /// The default severity in `direction` (`None`: the row's direction-less severity).
    pub fn default_severity(&self, direction: Option<Direction>) -> Option<Severity> {
        match direction {
            Some(Direction::Input) => self.input,
            Some(Direction::Output) => self.output,
            None => self.severity,
        }
    }

    /// The id its changes are fingerprinted under: its first (oldest) former id, else
    /// its id, so renaming a row moves no fingerprint (`[[ignore]] fingerprint = ...`
    /// and SARIF alerts keep matching). Ids are never reused, so no two rows that are
    /// not one row renamed or split share it.
    pub fn fingerprint_id(&self) -> &str {
        self.aliases.first().unwrap_or(&self.id)
    }

    /// The most severe default of this row, for listings and SARIF levels.
    pub fn worst_default(&self) -> Severity {
        [self.input, self.output, self.severity]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(Severity::None)
    }

    /// Which direction a surface-level change of this row is reported in.
    pub fn surface_direction(&self) -> Option<Direction> {
        match (self.severity, self.input, self.output) {
            (Some(_), _, _) => None,
            (None, Some(_), None) => Some(Direction::Input),
            (None, None, Some(_)) => Some(Direction::Output),
            _ => None,
        }
    }

    pub fn describe_scope(&self) -> String {
        match &self.scope {
            Scope::Schema { keyword } => format!("keyword `{keyword}`"),
            Scope::Element { kind, field } => {
                let kind = kind.map(Kind::word).unwrap_or("*");
                match field {
                    Some(f) => format!("{kind} field `{f}`"),
                    None => kind.to_string(),
                }
            }
            Scope::Server { field } => format!("server field `{field}`"),
        }
    }
}

/// A rule id no longer reported (`[[retired]]` in rules/*.toml), kept so that a
/// covenant.toml naming it gets a warning saying what became of it, not "unknown rule
/// id". Unlike an alias, a retired id's settings do not carry over: its changes are now
/// classified anew by the `replaced_by` rows (or not reported at all), and a `none` on
/// the old id applied to a row that reports more could hide a break.
#[derive(Clone, Debug)]
pub struct Retired {
    pub id: String,
    /// The rows that now report what the retired id reported (possibly none).
    pub replaced_by: Vec<String>,
    /// Why it was retired, and why its settings do not simply move over.
    pub reason: String,
    pub source: &'static str,
}

/// Fill a message template: `{before}`, `{after}`, `{value}` (the value that came or
/// went), `{keyword}`, `{field}`.
pub fn render_message(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) => {
                let name = &after[..end];
                match vars.iter().find(|(k, _)| *k == name) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_known_names_only() {
        assert_eq!(
            render_message(
                "{keyword} from {before} to {after} {x}",
                &[("keyword", "maxLength"), ("before", "5"), ("after", "3")]
            ),
            "maxLength from 5 to 3 {x}"
        );
    }
}
