//! The classification tables (`rules/*.toml`), embedded in the binary and parsed once.
//!
//! A row says: when comparator C reports event E on keyword K (or on field F of a
//! surface element), the change has code ID, this severity for input and for output,
//! and this message. The walker in `diff/` knows how to compare; these tables alone
//! decide what a difference means. Adding a row for an existing comparator needs no Rust.

use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::lockfile::Kind;

/// The embedded tables, in the order their rows are listed.
pub const TABLES: &[(&str, &str)] = &[
    ("rules/surface.toml", include_str!("../rules/surface.toml")),
    ("rules/schema.toml", include_str!("../rules/schema.toml")),
];

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
}

impl Comparator {
    fn events(self) -> &'static [&'static str] {
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
        }
    }

    fn word(self) -> &'static str {
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
        }
    }
}

/// Schema keywords whose comparison is structural (the walker recurses through them);
/// rows on them must use the comparator given here. Every applicator of
/// rules/keywords.toml is listed, so no row can compare a subschema by its mere presence
/// and hide a change inside it (a test checks the two tables agree).
pub const STRUCTURAL: &[(&str, Comparator)] = &[
    ("properties", Comparator::Fields),
    ("items", Comparator::Presence),
    ("additionalProperties", Comparator::Openness),
    ("anyOf", Comparator::Variants),
    ("oneOf", Comparator::Variants),
    ("allOf", Comparator::Variants),
    ("prefixItems", Comparator::Variants),
    ("patternProperties", Comparator::Entries),
    ("dependentSchemas", Comparator::Entries),
    ("propertyNames", Comparator::Subschema),
    ("unevaluatedProperties", Comparator::Subschema),
    ("unevaluatedItems", Comparator::Subschema),
    ("additionalItems", Comparator::Subschema),
    ("contains", Comparator::Subschema),
    ("not", Comparator::Subschema),
    ("if", Comparator::Subschema),
    ("then", Comparator::Subschema),
    ("else", Comparator::Subschema),
    ("dependencies", Comparator::Subschema),
];

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
    pub message: String,
    pub help: String,
    /// Whether the row's verdict is proven by what the schemas accept, or a safe guess.
    pub certainty: Certainty,
    /// Why a schema row states only one direction.
    pub reason: Option<String>,
    /// Former ids of this row: still accepted in covenant.toml, with a deprecation
    /// warning naming the current id. An id split in two is an alias on both rows.
    pub aliases: Vec<String>,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    rule: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    keyword: Option<String>,
    element: Option<String>,
    field: Option<String>,
    comparator: Comparator,
    event: String,
    when: Option<Condition>,
    input: Option<Severity>,
    output: Option<Severity>,
    severity: Option<Severity>,
    absent: Option<toml::Value>,
    message: String,
    help: Option<String>,
    reason: Option<String>,
    #[serde(default)]
    certainty: Certainty,
    #[serde(default)]
    aliases: Vec<String>,
}

/// How a keyword (or element field) is compared, and the rows that classify it.
#[derive(Clone, Debug)]
pub struct Binding {
    pub comparator: Comparator,
    pub absent: Option<Value>,
    pub rows: Vec<usize>,
}

#[derive(Clone, Debug)]
pub struct Rules {
    pub rows: Vec<Rule>,
    schema: HashMap<String, Binding>,
    surface: HashMap<(Kind, Option<String>), Binding>,
    schema_unhandled: usize,
    surface_unhandled: usize,
    walk_limit: usize,
    /// Rows about the server's own declarations.
    server: Vec<usize>,
    /// Severities from covenant.toml, by rule id.
    overrides: HashMap<String, Override>,
}

impl Rules {
    /// The embedded tables. They are validated by the test suite, so a failure here
    /// is a build defect; it is still reported as an error, never a panic.
    pub fn embedded() -> Result<Rules> {
        Rules::from_tables(TABLES)
    }

    pub fn from_tables(tables: &[(&'static str, &str)]) -> Result<Rules> {
        let mut rows = Vec::new();
        for (source, text) in tables {
            let raw: RawTable = toml::from_str(text)
                .map_err(|e| Error::new(format!("{source}: {}", one_line(&e.to_string()))))?;
            for r in raw.rule {
                rows.push(convert(r, source)?);
            }
        }
        Rules::index(rows)
    }

    fn index(rows: Vec<Rule>) -> Result<Rules> {
        for r in &rows {
            if let Some(a) = r.aliases.iter().find(|a| rows.iter().any(|o| &o.id == *a)) {
                return Err(Error::new(format!(
                    "{}: `{}` lists `{a}` as a former id, but a row still has that id",
                    r.source, r.id
                )));
            }
        }
        let mut schema: HashMap<String, Binding> = HashMap::new();
        let mut surface: HashMap<(Kind, Option<String>), Binding> = HashMap::new();
        let (mut schema_unhandled, mut surface_unhandled, mut walk_limit) = (None, None, None);
        let mut server = Vec::new();
        let mut seen = HashMap::new();
        for (i, rule) in rows.iter().enumerate() {
            let dup_key = (rule.scope.clone(), rule.event.clone(), rule.when);
            if let Some(j) = seen.insert(dup_key, i) {
                let other: &Rule = &rows[j];
                return Err(Error::new(format!(
                    "{}: rules `{}` and `{}` both classify event `{}` on {}",
                    rule.source,
                    other.id,
                    rule.id,
                    rule.event,
                    rule.describe_scope()
                )));
            }
            let fresh = || Binding {
                comparator: rule.comparator,
                absent: rule.absent.clone(),
                rows: Vec::new(),
            };
            match &rule.scope {
                Scope::Schema { keyword } if keyword == ANY_KEYWORD => schema_unhandled = Some(i),
                Scope::Schema { keyword } if keyword == WALK_KEYWORD => walk_limit = Some(i),
                Scope::Element { kind: None, .. } => surface_unhandled = Some(i),
                Scope::Server { .. } => server.push(i),
                Scope::Schema { keyword } => {
                    merge(schema.entry(keyword.clone()).or_insert_with(fresh), rule, i)?
                }
                Scope::Element {
                    kind: Some(kind),
                    field,
                } => merge(
                    surface.entry((*kind, field.clone())).or_insert_with(fresh),
                    rule,
                    i,
                )?,
            }
        }
        let missing = |what: &str| Error::new(format!("rule tables: no row for {what}"));
        Ok(Rules {
            schema_unhandled: schema_unhandled
                .ok_or_else(|| missing("unmodelled schema keywords (keyword = \"*\")"))?,
            surface_unhandled: surface_unhandled
                .ok_or_else(|| missing("unmodelled element fields (element = \"*\")"))?,
            walk_limit: walk_limit
                .ok_or_else(|| missing("the walk limit (keyword = \"$walk\")"))?,
            rows,
            schema,
            surface,
            server,
            overrides: HashMap::new(),
        })
    }

    /// The current ids of the rows that list `old` among their `aliases` (empty: `old`
    /// is no former id).
    pub fn renamed(&self, old: &str) -> Vec<&str> {
        let mut ids: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| r.aliases.iter().any(|a| a == old))
            .map(|r| r.id.as_str())
            .collect();
        ids.dedup();
        ids
    }

    pub fn set_overrides(&mut self, overrides: HashMap<String, Override>) {
        self.overrides = overrides;
    }

    /// The severity of a change classified by row `rule` in `direction`: the
    /// covenant.toml override, else the row's default. A row that states no severity
    /// for this direction never drops the change: its most severe default applies.
    pub fn severity(&self, rule: usize, direction: Option<Direction>) -> Severity {
        let row = &self.rows[rule];
        if let Some(s) = self.overrides.get(&row.id).and_then(|o| o.get(direction)) {
            return s;
        }
        row.default_severity(direction)
            .unwrap_or_else(|| row.worst_default())
    }

    pub fn schema_binding(&self, keyword: &str) -> Option<&Binding> {
        self.schema.get(keyword)
    }

    pub fn element_binding(&self, kind: Kind, field: Option<&str>) -> Option<&Binding> {
        self.surface.get(&(kind, field.map(str::to_string)))
    }

    /// Dotted element fields that rows name for `kind` (compared even when absent on
    /// both sides, since an absent field may stand for a default).
    pub fn element_fields(&self, kind: Kind) -> impl Iterator<Item = &str> {
        self.surface
            .keys()
            .filter(move |(k, _)| *k == kind)
            .filter_map(|(_, f)| f.as_deref())
    }

    /// The row for `event` in `binding` under `cond`, if any: a row whose `when` names
    /// the condition wins over one that states none.
    pub fn pick(&self, binding: &Binding, event: &str, cond: Option<Condition>) -> Option<usize> {
        let of_event = || {
            binding
                .rows
                .iter()
                .copied()
                .filter(move |&i| self.rows[i].event == event)
        };
        of_event()
            .find(|&i| cond.is_some() && self.rows[i].when == cond)
            .or_else(|| of_event().find(|&i| self.rows[i].when.is_none()))
    }

    /// The server row for `event`.
    pub fn server_row(&self, event: &str) -> Option<usize> {
        self.server
            .iter()
            .copied()
            .find(|&i| self.rows[i].event == event)
    }

    pub fn schema_unhandled(&self) -> usize {
        self.schema_unhandled
    }

    pub fn surface_unhandled(&self) -> usize {
        self.surface_unhandled
    }

    pub fn walk_limit(&self) -> usize {
        self.walk_limit
    }

    pub fn find<'a>(&'a self, id: &'a str) -> impl Iterator<Item = (usize, &'a Rule)> + 'a {
        self.rows
            .iter()
            .enumerate()
            .filter(move |(_, r)| r.id == id)
    }
}

fn merge(binding: &mut Binding, rule: &Rule, i: usize) -> Result<()> {
    if binding.comparator != rule.comparator {
        return Err(Error::new(format!(
            "{}: rule `{}` compares {} with `{}`, but an earlier row uses `{}`",
            rule.source,
            rule.id,
            rule.describe_scope(),
            rule.comparator.word(),
            binding.comparator.word()
        )));
    }
    if rule.absent.is_some() && binding.absent.is_some() && rule.absent != binding.absent {
        return Err(Error::new(format!(
            "{}: rule `{}` gives {} a different `absent` value than an earlier row",
            rule.source,
            rule.id,
            rule.describe_scope()
        )));
    }
    if binding.absent.is_none() {
        binding.absent = rule.absent.clone();
    }
    binding.rows.push(i);
    Ok(())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn toml_to_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect())
        }
    }
}

fn convert(r: RawRule, source: &'static str) -> Result<Rule> {
    let bad = |msg: String| Error::new(format!("{source}: rule `{}`: {msg}", r.id));
    if !r
        .id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '$'))
        || r.id.is_empty()
    {
        return Err(bad("ids are dotted words (letters, digits, `_`)".into()));
    }
    let scope = match (&r.keyword, &r.element) {
        (Some(k), None) => {
            if r.field.is_some() {
                return Err(bad("`field` goes with `element`, not `keyword`".into()));
            }
            Scope::Schema { keyword: k.clone() }
        }
        (None, Some(e)) if e == "server" => Scope::Server {
            field: r
                .field
                .clone()
                .ok_or_else(|| bad("a server row names its `field`".into()))?,
        },
        (None, Some(e)) => {
            let kind = if e == "*" {
                None
            } else {
                Some(Kind::from_word(e).ok_or_else(|| {
                    bad(format!(
                        "unknown element `{e}` (expected tool, resource, template, prompt or *)"
                    ))
                })?)
            };
            Scope::Element {
                kind,
                field: r.field.clone(),
            }
        }
        _ => {
            return Err(bad(
                "exactly one of `keyword` or `element` is required".into()
            ))
        }
    };
    if !r.comparator.events().contains(&r.event.as_str()) {
        return Err(bad(format!(
            "comparator `{}` has no event `{}` (it has: {})",
            r.comparator.word(),
            r.event,
            r.comparator.events().join(", ")
        )));
    }
    if let Scope::Schema { keyword } = &scope {
        if let Some((_, c)) = STRUCTURAL.iter().find(|(k, _)| k == keyword) {
            if *c != r.comparator {
                return Err(bad(format!(
                    "keyword `{keyword}` is structural and compares with `{}`",
                    c.word()
                )));
            }
        }
        if r.severity.is_some() {
            return Err(bad(
                "schema rows state `input` and `output`, not `severity`".into(),
            ));
        }
        if (r.input.is_none() || r.output.is_none()) && r.reason.is_none() {
            return Err(bad(
                "a schema row states both `input` and `output`, or a `reason` why one direction does not apply".into(),
            ));
        }
    } else if r.severity.is_some() && (r.input.is_some() || r.output.is_some()) {
        return Err(bad(
            "a surface row has either `severity` or `input`/`output`".into(),
        ));
    } else if r.severity.is_none() && r.input.is_some() == r.output.is_some() {
        return Err(bad(
            "a surface row has `severity`, or exactly one of `input` and `output`".into(),
        ));
    }
    if r.when.is_some()
        && !matches!(
            r.comparator,
            Comparator::Fields | Comparator::Variants | Comparator::Entries
        )
    {
        return Err(bad(
            "`when` applies to the `fields`, `variants` and `entries` comparators only".into(),
        ));
    }
    if let Scope::Schema { keyword } = &scope {
        // A keyword that holds subschemas is compared by the walker, never by a value
        // comparator: a `presence` row there would let a change inside it go unseen.
        let applicator = crate::keywords::role(keyword) == Some(crate::keywords::Role::Applicator);
        if applicator && !STRUCTURAL.iter().any(|(k, _)| k == keyword) {
            return Err(bad(format!(
                "keyword `{keyword}` holds subschemas, and the walker does not descend into it yet; a row on it could hide a change inside (see CONTRIBUTING.md)"
            )));
        }
    }
    if r.message.trim().is_empty() {
        return Err(bad("`message` is empty".into()));
    }
    Ok(Rule {
        help: r.help.clone().unwrap_or_else(|| r.message.clone()),
        id: r.id,
        scope,
        comparator: r.comparator,
        event: r.event,
        when: r.when,
        input: r.input,
        output: r.output,
        severity: r.severity,
        absent: r.absent.map(toml_to_json),
        message: r.message,
        reason: r.reason,
        certainty: r.certainty,
        aliases: r.aliases,
        source,
    })
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
    fn embedded_tables_parse_and_validate() {
        let rules = Rules::embedded().unwrap();
        assert!(rules.rows.len() > 30);
    }

    #[test]
    fn every_schema_row_states_both_directions_or_a_reason() {
        for r in &Rules::embedded().unwrap().rows {
            if let Scope::Schema { .. } = r.scope {
                assert!(
                    (r.input.is_some() && r.output.is_some()) || r.reason.is_some(),
                    "{}",
                    r.id
                );
            }
        }
    }

    #[test]
    fn a_wrong_event_is_rejected() {
        let t = "[[rule]]\nid='x.y'\nkeyword='maxLength'\ncomparator='number'\nevent='grew'\ninput='minor'\noutput='minor'\nmessage='m'\n";
        let err = Rules::from_tables(&[("t.toml", t)]).unwrap_err();
        assert!(err.message().contains("has no event `grew`"), "{err}");
    }

    #[test]
    fn conflicting_comparators_are_rejected() {
        let row = |c: &str, e: &str| {
            format!("[[rule]]\nid='x.{e}'\nkeyword='k'\ncomparator='{c}'\nevent='{e}'\ninput='minor'\noutput='minor'\nmessage='m'\n")
        };
        let t = row("number", "increased") + &row("text", "changed");
        let err = Rules::from_tables(&[("t.toml", &t)]).unwrap_err();
        assert!(
            err.message().contains("an earlier row uses `number`"),
            "{err}"
        );
    }

    #[test]
    fn every_applicator_of_the_vocabulary_is_structural() {
        use crate::keywords::{vocabulary, Role};
        let applicators: Vec<&str> = vocabulary()
            .keywords
            .iter()
            .filter(|k| k.role == Role::Applicator)
            .map(|k| k.name.as_str())
            .collect();
        let structural: Vec<&str> = STRUCTURAL.iter().map(|(k, _)| *k).collect();
        for k in &applicators {
            assert!(
                structural.contains(k),
                "{k} holds subschemas but is not STRUCTURAL"
            );
        }
        for k in &structural {
            assert!(
                applicators.contains(k),
                "{k} is STRUCTURAL but no applicator"
            );
        }
    }

    #[test]
    fn a_row_that_could_hide_a_change_in_a_subschema_is_rejected() {
        // `contains` is walked with the `subschema` comparator; `presence` would see
        // nothing when both sides have one and they differ.
        let t = "[[rule]]\nid='x.y'\nkeyword='contains'\ncomparator='presence'\nevent='added'\ninput='breaking'\noutput='minor'\nmessage='m'\n";
        let err = Rules::from_tables(&[("t.toml", t)]).unwrap_err();
        assert!(err.message().contains("is structural"), "{err}");
    }

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
