//! `lint`: what makes one surface hard to use well. The rules are data
//! (`rules/lint.toml`): an id, a level, a target, and a predicate from a closed set.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
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
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    rule: Vec<LintRule>,
}

#[derive(Clone, Debug)]
pub struct LintRules {
    pub rows: Vec<LintRule>,
    pub source: &'static str,
    overrides: HashMap<String, Level>,
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
            if r.predicate == Predicate::NameCollision
                && !matches!(r.target, Target::Tool | Target::Prompt)
            {
                return Err(bad(
                    "name_collision applies to `target = \"tool\"` or `\"prompt\"`",
                ));
            }
            if r.level == Level::None {
                return Err(bad("a rule's default level is error, warning or info"));
            }
        }
        Ok(LintRules {
            rows: raw.rule,
            source,
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
        let mut all: Vec<(&str, &str)> = vec![("max", &max), ("field", &field)];
        all.extend_from_slice(vars);
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

/// Every finding on `surface`, sorted by level, subject, path, code.
pub fn lint(rules: &LintRules, surface: &Surface) -> Vec<Finding> {
    let mut l = Linter {
        rules,
        findings: Vec::new(),
    };
    for (i, rule) in rules.rows.iter().enumerate() {
        if rule.predicate == Predicate::NameCollision {
            continue; // across servers: see `collisions`
        }
        match rule.target {
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
        for (key, child) in map {
            match (key.as_str(), child) {
                (
                    "properties" | "patternProperties" | "$defs" | "definitions"
                    | "dependentSchemas",
                    Value::Object(m),
                ) => {
                    let is_prop = key == "properties";
                    for (name, s) in m {
                        stack.push((
                            s,
                            join(&join(&path, key), name),
                            is_prop.then_some(name.as_str()),
                        ));
                    }
                }
                ("items" | "prefixItems" | "anyOf" | "oneOf" | "allOf", Value::Array(list)) => {
                    for (n, s) in list.iter().enumerate() {
                        stack.push((s, format!("{path}.{key}[{n}]"), None));
                    }
                }
                (
                    "items"
                    | "additionalProperties"
                    | "not"
                    | "if"
                    | "then"
                    | "else"
                    | "contains"
                    | "propertyNames",
                    Value::Object(_),
                ) => {
                    stack.push((child, format!("{path}.{key}"), None));
                }
                _ => {}
            }
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
