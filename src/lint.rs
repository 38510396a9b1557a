//! `lint`: what makes one surface hard to use well. The rules are data
//! (`rules/lint.toml`): an id, a level, a target, and a predicate from a closed set.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::keywords::{self, Slot};
use crate::lockfile::{key_of, Element, Kind, Surface};
use crate::path::join;
use crate::rules::render_message;

pub const TABLE: (&str, &str) = ("rules/lint.toml", include_str!("../rules/lint.toml"));

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Info,
    None,
}

impl Level {
    pub fn word(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => "info",
            Level::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<Level> {
        [Level::Error, Level::Warning, Level::Info, Level::None]
            .into_iter()
            .find(|l| l.word() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Target {
    #[serde(rename = "tool")]
    Tool,
    #[serde(rename = "tool.param")]
    ToolParam,
    #[serde(rename = "prompt")]
    Prompt,
    #[serde(rename = "prompt.arg")]
    PromptArg,
    #[serde(rename = "resource")]
    Resource,
    #[serde(rename = "template")]
    Template,
    #[serde(rename = "schema")]
    Schema,
    /// The server's own fields (name, title, version, instructions).
    #[serde(rename = "server")]
    Server,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Predicate {
    Missing,
    TooLong,
    DuplicateKey,
    InvalidName,
    NotObject,
    RequiredNotInProperties,
    EnumEmpty,
    EnumDuplicate,
    RefUnresolved,
    ArrayMissingItems,
    TypeMissing,
    /// Across the configured servers: one tool (or prompt) name served by two or more.
    NameCollision,
    /// A text field (`fields`) holds a control, bidi, zero-width or tag character.
    HiddenCharacters,
    /// A text field (`fields`) contains a phrase of the word list `list` (case and
    /// whitespace ignored, invisible characters removed).
    Contains,
    /// Two names that differ only by confusable characters (the `list` of pairs) or
    /// case, or by invisible characters.
    ConfusableNames,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LintRule {
    pub id: String,
    pub level: Level,
    pub target: Target,
    pub predicate: Predicate,
    pub field: Option<String>,
    pub max: Option<u64>,
    /// The text fields a hidden_characters or contains predicate reads.
    pub fields: Option<Vec<String>>,
    /// The `[lists]` entry a contains or confusable_names predicate uses.
    pub list: Option<String>,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    rule: Vec<LintRule>,
    /// Named word lists (phrases; for confusables, two-character strings: a character
    /// and the one it imitates).
    #[serde(default)]
    lists: HashMap<String, Vec<String>>,
}

#[derive(Clone, Debug)]
pub struct LintRules {
    pub rows: Vec<LintRule>,
    pub source: &'static str,
    overrides: HashMap<String, Level>,
    lists: HashMap<String, Vec<String>>,
}

impl LintRules {
    pub fn embedded() -> Result<LintRules> {
        LintRules::from_table(TABLE.0, TABLE.1)
    }

    pub fn from_table(source: &'static str, text: &str) -> Result<LintRules> {
        let raw: RawTable = toml::from_str(text)
            .map_err(|e| Error::new(format!("{source}: {}", e.message().trim())))?;
        let mut seen = HashSet::new();
        for r in &raw.rule {
            let bad = |m: &str| Error::new(format!("{source}: lint rule `{}`: {m}", r.id));
            if !seen.insert(r.id.clone()) {
                return Err(bad("duplicate id"));
            }
            let needs_field = matches!(r.predicate, Predicate::Missing | Predicate::TooLong);
            if needs_field != r.field.is_some() {
                return Err(bad(
                    "`field` goes with the missing and too_long predicates, and only with them",
                ));
            }
            let needs_max = matches!(r.predicate, Predicate::TooLong | Predicate::InvalidName);
            if needs_max != r.max.is_some() {
                return Err(bad(
                    "`max` goes with the too_long and invalid_name predicates, and only with them",
                ));
            }
            let schema_pred = matches!(
                r.predicate,
                Predicate::RequiredNotInProperties
                    | Predicate::EnumEmpty
                    | Predicate::EnumDuplicate
                    | Predicate::RefUnresolved
                    | Predicate::ArrayMissingItems
                    | Predicate::TypeMissing
            );
            if schema_pred != (r.target == Target::Schema) {
                return Err(bad(
                    "schema predicates go with `target = \"schema\"`, and only they do",
                ));
            }
            let element_only = matches!(
                r.predicate,
                Predicate::DuplicateKey | Predicate::InvalidName | Predicate::NotObject
            );
            if element_only && r.target != Target::Tool {
                return Err(bad(
                    "duplicate_key, invalid_name and not_object apply to `target = \"tool\"`",
                ));
            }
            // Predicates that compare names across the server: tools', or prompts'.
            let across_names = match r.predicate {
                Predicate::NameCollision => Some("name_collision"),
                Predicate::ConfusableNames => Some("confusable_names"),
                _ => None,
            };
            if let Some(name) =
                across_names.filter(|_| !matches!(r.target, Target::Tool | Target::Prompt))
            {
                return Err(bad(&format!(
                    "{name} applies to `target = \"tool\"` or `\"prompt\"`"
                )));
            }
            let text_pred = matches!(
                r.predicate,
                Predicate::HiddenCharacters | Predicate::Contains
            );
            if text_pred != r.fields.is_some() || (text_pred && r.target == Target::Schema) {
                return Err(bad(
                    "`fields` goes with the hidden_characters and contains predicates (on any target but schema), and only with them",
                ));
            }
            let list_pred = matches!(
                r.predicate,
                Predicate::Contains | Predicate::ConfusableNames
            );
            match &r.list {
                Some(name) if list_pred => match raw.lists.get(name) {
                    None => return Err(bad(&format!("no list `{name}` in [lists]"))),
                    Some(words) if r.predicate == Predicate::ConfusableNames
                        && words.iter().any(|w| w.chars().count() != 2) =>
                    {
                        return Err(bad(&format!(
                            "list `{name}`: each confusable is two characters, the look-alike and what it imitates"
                        )))
                    }
                    Some(_) => {}
                },
                None if !list_pred => {}
                _ => {
                    return Err(bad(
                        "`list` goes with the contains and confusable_names predicates, and only with them",
                    ))
                }
            }
            if r.target == Target::Server && !text_pred {
                return Err(bad(
                    "`target = \"server\"` goes with the hidden_characters and contains predicates",
                ));
            }
            if r.level == Level::None {
                return Err(bad("a rule's default level is error, warning or info"));
            }
        }
        Ok(LintRules {
            rows: raw.rule,
            source,
            lists: raw.lists,
            overrides: HashMap::new(),
        })
    }

    pub fn has(&self, id: &str) -> bool {
        self.rows.iter().any(|r| r.id == id)
    }

    pub fn set_overrides(&mut self, overrides: HashMap<String, Level>) {
        self.overrides = overrides;
    }

    pub fn level(&self, i: usize) -> Level {
        let r = &self.rows[i];
        self.overrides.get(&r.id).copied().unwrap_or(r.level)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub code: String,
    pub level: Level,
    pub subject: String,
    /// What the reports show: a schema path (`inputSchema.properties.e`), or for a
    /// parameter the parameter itself, nested ones dotted (`limit`, `options.limit`).
    pub path: Option<String>,
    /// Where the finding is in the element, when that differs from `path`
    /// (`inputSchema.properties.limit`): lockfile lines are anchored there.
    pub at: Option<String>,
    pub message: String,
}

struct Linter<'r> {
    rules: &'r LintRules,
    findings: Vec<Finding>,
}

impl Linter<'_> {
    fn report(&mut self, rule: usize, subject: &str, path: Option<String>, vars: &[(&str, &str)]) {
        self.report_at(rule, subject, path, None, vars);
    }

    fn report_at(
        &mut self,
        rule: usize,
        subject: &str,
        path: Option<String>,
        at: Option<String>,
        vars: &[(&str, &str)],
    ) {
        let level = self.rules.level(rule);
        if level == Level::None {
            return;
        }
        let r = &self.rules.rows[rule];
        let max = r.max.map(|m| m.to_string()).unwrap_or_default();
        let field = r.field.clone().unwrap_or_default();
        // The finding's own values first: they win over the row's.
        let mut all: Vec<(&str, &str)> = vars.to_vec();
        all.extend([("max", max.as_str()), ("field", field.as_str())]);
        self.findings.push(Finding {
            code: r.id.clone(),
            level,
            subject: subject.to_string(),
            path,
            at,
            message: render_message(&r.message, &all),
        });
    }
}

/// A `tool.param` rule on every parameter: the properties of the input schema and,
/// nested, of the object parameters (through `properties` only). The path shown is the
/// parameter, nested ones dotted (`options.limit`).
fn param_rule(l: &mut Linter, rule: usize, field: &str, subject: &str, input: &Value) {
    // (schema, the parameter path so far, its path in the element)
    let mut stack: Vec<(&Value, Option<String>, String)> =
        vec![(input, None, "inputSchema".to_string())];
    let mut found = Vec::new();
    while let Some((schema, param, at)) = stack.pop() {
        let props = schema.get("properties").and_then(Value::as_object);
        for (name, child) in props.into_iter().flatten() {
            let shown = match &param {
                None => crate::path::segment(name),
                Some(p) => join(p, name),
            };
            let child_at = join(&join(&at, "properties"), name);
            if blank(child.get(field)) {
                found.push((shown.clone(), child_at.clone(), name.as_str()));
            }
            stack.push((child, Some(shown), child_at));
        }
    }
    for (shown, at, name) in found {
        l.report_at(rule, subject, Some(shown), Some(at), &[("name", name)]);
    }
}

fn blank(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        _ => false,
    }
}

fn valid_name(name: &str, max: u64) -> bool {
    !name.is_empty()
        && name.chars().count() as u64 <= max
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Every finding on `surface`, sorted by level, subject, path, code. The server's own
/// fields are not looked at: see [`lint_lockfile`].
pub fn lint(rules: &LintRules, surface: &Surface) -> Vec<Finding> {
    lint_with(rules, surface, None)
}

/// Every finding on a lockfile: its surface and its server's fields (instructions).
pub fn lint_lockfile(rules: &LintRules, lock: &crate::lockfile::Lockfile) -> Vec<Finding> {
    lint_with(rules, &lock.surface, Some(&lock.server))
}

fn lint_with(
    rules: &LintRules,
    surface: &Surface,
    server: Option<&crate::lockfile::ServerInfo>,
) -> Vec<Finding> {
    let mut l = Linter {
        rules,
        findings: Vec::new(),
    };
    for (i, rule) in rules.rows.iter().enumerate() {
        if rule.predicate == Predicate::NameCollision {
            continue; // across servers: see `collisions`
        }
        if matches!(
            rule.predicate,
            Predicate::HiddenCharacters | Predicate::Contains
        ) {
            text_rule(&mut l, i, rule, surface, server);
            continue;
        }
        if rule.predicate == Predicate::ConfusableNames {
            confusable_rule(&mut l, i, rule, surface);
            continue;
        }
        match rule.target {
            Target::Server => {}
            Target::Tool => tool_rule(&mut l, i, rule, &surface.tools),
            Target::ToolParam => {
                let field = rule.field.as_deref().unwrap_or("");
                for tool in &surface.tools {
                    let subject = format!("tool:{}", key_of(tool, "name"));
                    if let Some(schema) = tool.get("inputSchema") {
                        param_rule(&mut l, i, field, &subject, schema);
                    }
                }
            }
            Target::PromptArg => {
                for prompt in &surface.prompts {
                    let subject = format!("prompt:{}", key_of(prompt, "name"));
                    for arg in prompt
                        .get("arguments")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let name = arg.get("name").and_then(Value::as_str).unwrap_or("");
                        if blank(arg.get(rule.field.as_deref().unwrap_or(""))) {
                            l.report(
                                i,
                                &subject,
                                Some(join("arguments", name)),
                                &[("name", name)],
                            );
                        }
                    }
                }
            }
            Target::Prompt | Target::Resource | Target::Template => {
                let kind = match rule.target {
                    Target::Prompt => Kind::Prompt,
                    Target::Resource => Kind::Resource,
                    _ => Kind::Template,
                };
                for e in surface.list(kind) {
                    let subject = format!("{}:{}", kind.word(), key_of(e, kind.key_field()));
                    if blank(e.get(rule.field.as_deref().unwrap_or(""))) {
                        l.report(i, &subject, None, &[]);
                    }
                }
            }
            Target::Schema => {
                for tool in &surface.tools {
                    let subject = format!("tool:{}", key_of(tool, "name"));
                    for field in ["inputSchema", "outputSchema"] {
                        if let Some(schema) = tool.get(field) {
                            schema_rule(&mut l, i, rule.predicate, &subject, field, schema);
                        }
                    }
                }
            }
        }
    }
    let mut findings = l.findings;
    findings.sort_by(|a, b| {
        (a.level, &a.subject, &a.path, &a.code).cmp(&(b.level, &b.subject, &b.path, &b.code))
    });
    findings
}

/// The `name_collision` findings across several servers' surfaces: a tool or prompt name
/// that two or more of them serve, so an agent that loads them all sees two tools of one
/// name. One finding per name, listing the servers.
pub fn collisions(rules: &LintRules, servers: &[(&str, &Surface)]) -> Vec<Finding> {
    let mut l = Linter {
        rules,
        findings: Vec::new(),
    };
    for (i, rule) in rules.rows.iter().enumerate() {
        if rule.predicate != Predicate::NameCollision {
            continue;
        }
        let kind = if rule.target == Target::Prompt {
            Kind::Prompt
        } else {
            Kind::Tool
        };
        let mut by_name: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (server, surface) in servers {
            for e in surface.list(kind) {
                let names = by_name.entry(key_of(e, "name")).or_default();
                if !names.contains(server) {
                    names.push(server);
                }
            }
        }
        for (name, names) in by_name {
            if names.len() > 1 {
                let subject = format!("{}:{name}", kind.word());
                l.report(
                    i,
                    &subject,
                    None,
                    &[("name", name), ("servers", &names.join(", "))],
                );
            }
        }
    }
    let mut findings = l.findings;
    findings.sort_by(|a, b| {
        (a.level, &a.subject, &a.path, &a.code).cmp(&(b.level, &b.subject, &b.path, &b.code))
    });
    findings
}

fn tool_rule(l: &mut Linter<'_>, i: usize, rule: &LintRule, tools: &[Element]) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for tool in tools {
        let name = key_of(tool, "name");
        let subject = format!("tool:{name}");
        match rule.predicate {
            Predicate::Missing if blank(tool.get(rule.field.as_deref().unwrap_or(""))) => {
                l.report(i, &subject, None, &[("name", name)]);
            }
            Predicate::TooLong => {
                let text = tool
                    .get(rule.field.as_deref().unwrap_or(""))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                // ~4 characters a token: the usual heuristic for English text.
                let tokens = (text.chars().count() as u64).div_ceil(4);
                if tokens > rule.max.unwrap_or(u64::MAX) {
                    l.report(
                        i,
                        &subject,
                        rule.field.clone(),
                        &[("value", &tokens.to_string())],
                    );
                }
            }
            Predicate::DuplicateKey => {
                let n = seen.entry(name).or_insert(0);
                *n += 1;
                if *n == 2 {
                    l.report(i, &subject, None, &[("name", name)]);
                }
            }
            Predicate::InvalidName if !valid_name(name, rule.max.unwrap_or(128)) => {
                l.report(i, &subject, None, &[("name", name)]);
            }
            Predicate::NotObject => {
                let t = tool.get("inputSchema").and_then(|s| s.get("type"));
                if t != Some(&Value::String("object".into())) {
                    let shown = t
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "(absent)".into());
                    l.report(
                        i,
                        &subject,
                        Some("inputSchema".into()),
                        &[("value", &shown)],
                    );
                }
            }
            _ => {}
        }
    }
}

/// Visit every schema node under `root` (iteratively) and apply `pred`.
fn schema_rule(
    l: &mut Linter<'_>,
    i: usize,
    pred: Predicate,
    subject: &str,
    root_path: &str,
    root: &Value,
) {
    // (node, path, the property name when the node is a property's schema)
    let mut stack: Vec<(&Value, String, Option<&str>)> = vec![(root, root_path.to_string(), None)];
    while let Some((node, path, prop)) = stack.pop() {
        let Some(map) = node.as_object() else {
            continue;
        };
        check_node(l, i, pred, subject, root, map, &path, prop);
        // Every subschema the vocabulary places (rules/keywords.toml), in reverse so
        // that the stack visits them in the schema's order.
        for (key, slot, child) in keywords::subschemas(map).into_iter().rev() {
            let (child_path, prop) = match slot {
                Slot::Whole => (format!("{path}.{key}"), None),
                Slot::Index(n) => (format!("{path}.{key}[{n}]"), None),
                Slot::Entry(name) => (
                    join(&join(&path, key), name),
                    (key == "properties").then_some(name),
                ),
            };
            stack.push((child, child_path, prop));
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn check_node(
    l: &mut Linter<'_>,
    i: usize,
    pred: Predicate,
    subject: &str,
    root: &Value,
    map: &Map<String, Value>,
    path: &str,
    prop: Option<&str>,
) {
    let here = || Some(path.to_string());
    match pred {
        Predicate::RequiredNotInProperties => {
            let props = map.get("properties").and_then(Value::as_object);
            for name in map
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(name) = name.as_str() else { continue };
                if !props.is_some_and(|p| p.contains_key(name)) {
                    l.report(i, subject, here(), &[("name", name)]);
                }
            }
        }
        Predicate::EnumEmpty
            if map
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty) =>
        {
            l.report(i, subject, here(), &[]);
        }
        Predicate::EnumDuplicate => {
            let mut seen = HashSet::new();
            let mut reported = HashSet::new();
            for v in map
                .get("enum")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let key = serde_json::to_string(v).unwrap_or_default();
                if !seen.insert(key.clone()) && reported.insert(key.clone()) {
                    l.report(i, subject, here(), &[("value", &key)]);
                }
            }
        }
        Predicate::RefUnresolved => {
            if let Some(Value::String(r)) = map.get("$ref") {
                let ok = r
                    .strip_prefix('#')
                    .is_some_and(|p| p.is_empty() || root.pointer(p).is_some());
                if !ok {
                    l.report(i, subject, here(), &[("value", &format!("{r:?}"))]);
                }
            }
        }
        Predicate::ArrayMissingItems => {
            let is_array = match map.get("type") {
                Some(Value::String(t)) => t == "array",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
                _ => false,
            };
            if is_array && !map.contains_key("items") && !map.contains_key("prefixItems") {
                l.report(i, subject, here(), &[]);
            }
        }
        Predicate::TypeMissing => {
            const TYPED: &[&str] = &[
                "type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf", "not",
            ];
            if let Some(name) = prop {
                if !TYPED.iter().any(|k| map.contains_key(*k)) {
                    l.report(i, subject, here(), &[("name", name)]);
                }
            }
        }
        _ => {}
    }
}

/// The text fields a rule reads: (subject, path, field, text), for its target.
fn texts<'s>(
    target: Target,
    fields: &[String],
    surface: &'s Surface,
    server: Option<&'s crate::lockfile::ServerInfo>,
) -> Vec<(String, Option<String>, String, &'s str)> {
    let mut out = Vec::new();
    let element = |subject: String,
                   base: Option<String>,
                   key: &'s str,
                   e: &'s Map<String, Value>,
                   out: &mut Vec<_>| {
        for f in fields {
            let text = if f == "name" && !key.is_empty() {
                Some(key)
            } else {
                e.get(f.as_str()).and_then(Value::as_str)
            };
            if let Some(text) = text {
                // A name is the element or parameter itself; other fields are in it.
                let path = match (&base, f == "name") {
                    (Some(b), true) => Some(b.clone()),
                    (None, true) => None,
                    (Some(b), false) => Some(join(b, f)),
                    (None, false) => Some(f.clone()),
                };
                out.push((subject.clone(), path, f.clone(), text));
            }
        }
    };
    match target {
        Target::Tool | Target::Prompt | Target::Resource | Target::Template => {
            let kind = match target {
                Target::Tool => Kind::Tool,
                Target::Prompt => Kind::Prompt,
                Target::Resource => Kind::Resource,
                _ => Kind::Template,
            };
            for e in surface.list(kind) {
                let subject = format!("{}:{}", kind.word(), key_of(e, kind.key_field()));
                element(subject, None, "", e, &mut out);
            }
        }
        Target::ToolParam => {
            for tool in &surface.tools {
                let subject = format!("tool:{}", key_of(tool, "name"));
                let props = tool
                    .get("inputSchema")
                    .and_then(|s| s.get("properties"))
                    .and_then(Value::as_object);
                for (name, schema) in props.into_iter().flatten() {
                    let base = join("inputSchema.properties", name);
                    if let Some(schema) = schema.as_object() {
                        element(subject.clone(), Some(base), name, schema, &mut out);
                    } else if fields.iter().any(|f| f == "name") {
                        out.push((subject.clone(), Some(base), "name".into(), name));
                    }
                }
            }
        }
        Target::PromptArg => {
            for prompt in &surface.prompts {
                let subject = format!("prompt:{}", key_of(prompt, "name"));
                for arg in prompt
                    .get("arguments")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_object)
                {
                    let name = arg.get("name").and_then(Value::as_str).unwrap_or("");
                    element(
                        subject.clone(),
                        Some(join("arguments", name)),
                        "",
                        arg,
                        &mut out,
                    );
                }
            }
        }
        Target::Server => {
            if let Some(s) = server {
                let all = [
                    ("name", Some(s.name.as_str())),
                    ("title", s.title.as_deref()),
                    ("version", s.version.as_deref()),
                    ("instructions", s.instructions.as_deref()),
                ];
                for (f, text) in all {
                    if let Some(text) = text.filter(|_| fields.iter().any(|x| x == f)) {
                        out.push(("server".into(), Some(f.into()), f.into(), text));
                    }
                }
            }
        }
        Target::Schema => {}
    }
    out
}

/// Lower case, invisible characters dropped, runs of whitespace as one space: what a
/// phrase list is matched against, so `IGNORE  previous\ninstructions` and a phrase
/// broken by a zero-width space still match.
fn folded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if crate::escape::risky(c) {
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    out
}

fn text_rule(
    l: &mut Linter<'_>,
    i: usize,
    rule: &LintRule,
    surface: &Surface,
    server: Option<&crate::lockfile::ServerInfo>,
) {
    let fields = rule.fields.clone().unwrap_or_default();
    let words: Vec<String> = rule
        .list
        .as_ref()
        .and_then(|n| l.rules.lists.get(n))
        .map(|w| w.iter().map(|w| folded(w)).collect())
        .unwrap_or_default();
    for (subject, path, field, text) in texts(rule.target, &fields, surface, server) {
        let found = match rule.predicate {
            Predicate::HiddenCharacters => text
                .chars()
                .find(|c| {
                    // Line breaks and tabs are ordinary text; the zero-width joiner and
                    // variation selectors build emoji.
                    crate::escape::risky(*c)
                        && !matches!(c, '\n' | '\t' | '\r' | '\u{200D}' | '\u{FE00}'..='\u{FE0F}')
                })
                .map(|c| format!("U+{:04X}", c as u32)),
            _ => {
                let t = folded(text);
                words.iter().find(|w| t.contains(w.as_str())).cloned()
            }
        };
        if let Some(value) = found {
            l.report(i, &subject, path, &[("field", &field), ("value", &value)]);
        }
    }
}

/// A name as it looks: look-alike characters mapped to what they imitate, lower case,
/// invisible characters dropped.
fn skeleton(name: &str, pairs: &HashMap<char, char>) -> String {
    name.chars()
        .filter(|c| !crate::escape::risky(*c))
        .map(|c| *pairs.get(&c).unwrap_or(&c))
        .flat_map(char::to_lowercase)
        .map(|c| *pairs.get(&c).unwrap_or(&c))
        .collect()
}

fn confusable_rule(l: &mut Linter<'_>, i: usize, rule: &LintRule, surface: &Surface) {
    let pairs: HashMap<char, char> = rule
        .list
        .as_ref()
        .and_then(|n| l.rules.lists.get(n))
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let mut cs = p.chars();
            Some((cs.next()?, cs.next()?))
        })
        .collect();
    let kind = if rule.target == Target::Prompt {
        Kind::Prompt
    } else {
        Kind::Tool
    };
    let mut names: Vec<&str> = surface
        .list(kind)
        .iter()
        .map(|e| key_of(e, "name"))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut first: HashMap<String, &str> = HashMap::new();
    for name in names {
        match first.get(&skeleton(name, &pairs)) {
            Some(other) => {
                let subject = format!("{}:{name}", kind.word());
                l.report(i, &subject, None, &[("name", name), ("value", other)]);
            }
            None => {
                first.insert(skeleton(name, &pairs), name);
            }
        }
    }
}
