//! The predicates: what each kind of lint rule looks for, on one surface.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::model::{LintRule, Predicate, Target};
use super::Linter;
use crate::elements::{Form, Kind, Role, Table};
use crate::keywords::{self, Slot};
use crate::lockfile::{key_of, Element, Surface};
use crate::path::{Path, Segment, Trail, Trails};
use crate::schema::validate::{validate, Truth};
use crate::subject::Subject;

/// A `tool.param` or `prompt.arg` rule on every parameter of `kind`'s elements, in each
/// of the kind's input fields (rules/elements.toml): a schema's parameters
/// ([`param_rule`]) or an arguments list's ([`argument_rule`]).
pub(super) fn params_rule(
    l: &mut Linter<'_>,
    i: usize,
    rule: &LintRule,
    kind: Kind,
    surface: &Surface,
) {
    let field = rule.field.as_deref().unwrap_or("");
    let spec = l.elements.of(kind);
    for e in surface.list(kind) {
        let subject = Subject::element(kind, key_of(e, &spec.key));
        for input in spec.inputs() {
            let Some(value) = e.get(&input.field) else {
                continue;
            };
            match input.form {
                Form::Schema => param_rule(l, i, field, &subject, (&input.field, value)),
                Form::Arguments => argument_rule(l, i, field, &subject, (&input.field, value)),
            }
        }
    }
}

/// A parameter rule on an input schema's parameters: its properties and, nested, those
/// of the object parameters (through `properties` only). The path shown is the
/// parameter, nested ones dotted (`options.limit`).
fn param_rule(l: &mut Linter, rule: usize, field: &str, subject: &Subject, input: (&str, &Value)) {
    let (input_field, input) = input;
    // (schema, the parameter path so far, its path in the element)
    let mut trails = Trails::default();
    let root = trails.name(Trail::default(), input_field);
    let mut stack = vec![(input, Trail::default(), root)];
    let mut found = Vec::new();
    while let Some((schema, param, at)) = stack.pop() {
        let props = schema.get("properties").and_then(Value::as_object);
        for (name, child) in props.into_iter().flatten() {
            let shown = trails.name(param, name);
            let child_at = trails.name(at, "properties");
            let child_at = trails.name(child_at, name);
            if blank(child.get(field)) {
                found.push((trails.path(shown), trails.path(child_at), name.as_str()));
            }
            stack.push((child, shown, child_at));
        }
    }
    for (shown, at, name) in found {
        l.report_at(rule, subject, Some(shown), Some(at), &[("name", name)]);
    }
}

/// A parameter rule on an arguments list's items (`arguments.NAME`).
fn argument_rule(
    l: &mut Linter,
    rule: usize,
    field: &str,
    subject: &Subject,
    input: (&str, &Value),
) {
    let (input_field, args) = input;
    for arg in args.as_array().into_iter().flatten() {
        let name = arg.get("name").and_then(Value::as_str).unwrap_or("");
        if blank(arg.get(field)) {
            let path = Path::names(&[input_field, name]);
            l.report(rule, subject, Some(path), &[("name", name)]);
        }
    }
}

pub(super) fn blank(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        _ => false,
    }
}

pub(super) fn valid_name(name: &str, max: u64) -> bool {
    !name.is_empty()
        && name.chars().count() as u64 <= max
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

pub(super) fn tool_rule(l: &mut Linter<'_>, i: usize, rule: &LintRule, tools: &[Element]) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    // The tool's input schemas (rules/elements.toml).
    let spec = l.elements.of(Kind::Tool);
    let inputs: Vec<&str> = spec
        .inputs()
        .filter(|f| f.form == Form::Schema)
        .map(|f| f.field.as_str())
        .collect();
    for tool in tools {
        let name = key_of(tool, &spec.key);
        let subject = Subject::element(Kind::Tool, name);
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
                        rule.field.as_deref().map(Path::name),
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
                for input in &inputs {
                    let t = tool.get(*input).and_then(|s| s.get("type"));
                    if t != Some(&Value::String("object".into())) {
                        let shown = t
                            .map(|v| v.to_string())
                            .unwrap_or_else(|| "(absent)".into());
                        l.report(i, &subject, Some(Path::name(input)), &[("value", &shown)]);
                    }
                }
            }
            Predicate::McpHeaderInvalid => {
                for input in &inputs {
                    if let Some(schema) = tool.get(*input) {
                        for (path, why) in mcp_header_problems(input, schema) {
                            l.report(i, &subject, Some(path), &[("value", &why)]);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Visit every schema node under `root` (iteratively) and apply `pred`.
pub(super) fn schema_rule(
    l: &mut Linter<'_>,
    i: usize,
    pred: Predicate,
    subject: &Subject,
    field: &str,
    root: &Value,
) {
    // (node, path, the property name when the node is a property's schema)
    let mut trails = Trails::default();
    let start = trails.name(Trail::default(), field);
    let mut stack = vec![(root, start, None)];
    while let Some((node, path, prop)) = stack.pop() {
        let Some(map) = node.as_object() else {
            continue;
        };
        check_node(l, i, pred, subject, root, map, (&trails, path), prop);
        // Every subschema the vocabulary places (rules/keywords.toml), in reverse so
        // that the stack visits them in the schema's order.
        for (key, slot, child) in keywords::subschemas(map).into_iter().rev() {
            let under = trails.name(path, key);
            let (child_path, prop) = match slot {
                Slot::Whole => (under, None),
                Slot::Index(n) => (trails.index(under, n), None),
                Slot::Entry(name) => (
                    trails.name(under, name),
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
    subject: &Subject,
    root: &Value,
    map: &Map<String, Value>,
    (trails, path): (&Trails<'_>, Trail),
    prop: Option<&str>,
) {
    let here = || Some(trails.path(path));
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
            // A node typed as every JSON type accepts anything: it is no untyped array.
            let every_type = map.get("type").and_then(Value::as_array).is_some_and(|ts| {
                ["null", "boolean", "object", "array", "number", "string"]
                    .iter()
                    .all(|t| ts.iter().any(|x| x == t))
            });
            if is_array
                && !every_type
                && !map.contains_key("items")
                && !map.contains_key("prefixItems")
            {
                l.report(i, subject, here(), &[]);
            }
        }
        Predicate::DefaultInvalid => {
            if let Some(default) = map.get("default") {
                // Only a node without `$ref`s of its own is checked alone (a `$ref`
                // points into the whole schema); `No` is proven, `Unknown` says nothing.
                let node = Value::Object(map.clone());
                if !has_ref(&node) && validate(&node, default) == Truth::No {
                    let shown = crate::escape::truncated(&default.to_string(), 60);
                    l.report(i, subject, here(), &[("value", &shown)]);
                }
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

/// The server's fields lint reads (rules/elements.toml `[[server]]`, all but the
/// session's), by the names `fields` and `field` use.
pub(super) fn server_fields(
    s: &crate::lockfile::ServerInfo,
) -> impl Iterator<Item = (&'static str, Option<&str>)> {
    s.fields()
        .filter(|(f, _)| f.role != Role::Session)
        .map(|(f, v)| (f.field.as_str(), v))
}

/// A text field a rule reads: its subject, its path, the field's name, its text.
type Text<'s> = (Subject, Option<Path>, String, &'s str);

/// The text fields a rule reads, for its target.
fn texts<'s>(
    (target, elements): (Target, &Table),
    fields: &[String],
    surface: &'s Surface,
    server: Option<&'s crate::lockfile::ServerInfo>,
) -> Vec<Text<'s>> {
    let mut out = Vec::new();
    let element = |subject: Subject,
                   base: Option<Path>,
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
                    (Some(b), false) => {
                        let mut p = b.clone();
                        p.0.push(Segment::Name(f.clone()));
                        Some(p)
                    }
                    (None, false) => Some(Path::name(f)),
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
                let subject = Subject::element(kind, key_of(e, kind.key_field()));
                element(subject, None, "", e, &mut out);
            }
        }
        // The parameters in each of the kind's input fields (rules/elements.toml): an
        // input schema's properties, an arguments list's items.
        Target::ToolParam | Target::PromptArg => {
            let kind = match target {
                Target::ToolParam => Kind::Tool,
                _ => Kind::Prompt,
            };
            let spec = elements.of(kind);
            for e in surface.list(kind) {
                let subject = Subject::element(kind, key_of(e, &spec.key));
                for input in spec.inputs() {
                    let (at, value) = (input.field.as_str(), e.get(&input.field));
                    if input.form == Form::Arguments {
                        let args = value.and_then(Value::as_array).into_iter().flatten();
                        for arg in args.filter_map(Value::as_object) {
                            let name = arg.get("name").and_then(Value::as_str).unwrap_or("");
                            let base = Some(Path::names(&[at, name]));
                            element(subject.clone(), base, "", arg, &mut out);
                        }
                        continue;
                    }
                    let props = value.and_then(|s| s.get("properties"));
                    for (name, schema) in props.and_then(Value::as_object).into_iter().flatten() {
                        let base = Path::names(&[at, "properties", name]);
                        if let Some(schema) = schema.as_object() {
                            element(subject.clone(), Some(base), name, schema, &mut out);
                        } else if fields.iter().any(|f| f == "name") {
                            out.push((subject.clone(), Some(base), "name".into(), name));
                        }
                    }
                }
            }
        }
        Target::Server => {
            if let Some(s) = server {
                for (f, text) in server_fields(s) {
                    if let Some(text) = text.filter(|_| fields.iter().any(|x| x == f)) {
                        out.push((Subject::server(), Some(Path::name(f)), f.into(), text));
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

pub(super) fn text_rule(
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
    for (subject, path, field, text) in texts((rule.target, l.elements), &fields, surface, server) {
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

pub(super) fn confusable_rule(l: &mut Linter<'_>, i: usize, rule: &LintRule, surface: &Surface) {
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
                let subject = Subject::element(kind, name);
                l.report(i, &subject, None, &[("name", name), ("value", other)]);
            }
            None => {
                first.insert(skeleton(name, &pairs), name);
            }
        }
    }
}

/// Whether a `$ref` appears anywhere in `v`.
fn has_ref(v: &Value) -> bool {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if m.contains_key("$ref") || m.contains_key("$dynamicRef") {
                    return true;
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    false
}

/// What is wrong with the `x-mcp-header` declarations of an input schema, as (path,
/// reason): a client drops a tool whose declarations are invalid. A declaration must sit
/// on a parameter reached through `properties` alone, name an HTTP token (RFC 9110
/// `tchar`s), be unique in the tool ignoring case, and declare a parameter typed as a
/// string, integer, number or boolean.
pub(super) fn mcp_header_problems(field: &str, schema: &Value) -> Vec<(Path, String)> {
    const KEY: &str = "x-mcp-header";
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let mut problems = Vec::new();
    let mut names: HashMap<String, String> = HashMap::new();
    // (node, path, reached through `properties` alone from the root, is a parameter)
    let mut trails = Trails::default();
    let start = trails.name(Trail::default(), field);
    let mut stack = vec![(schema, start, true, false)];
    while let Some((node, path, reachable, parameter)) = stack.pop() {
        let Some(map) = node.as_object() else {
            continue;
        };
        if let Some(decl) = map.get(KEY) {
            let at = trails.name(path, KEY);
            let at = trails.path(at);
            let primitive = |t: &Value| {
                matches!(
                    t.as_str(),
                    Some("string" | "integer" | "number" | "boolean")
                )
            };
            let typed = match map.get("type") {
                Some(Value::Array(ts)) => {
                    let ts: Vec<&Value> =
                        ts.iter().filter(|t| t.as_str() != Some("null")).collect();
                    ts.len() == 1 && primitive(ts[0])
                }
                Some(t) => primitive(t),
                None => false,
            };
            match decl.as_str() {
                _ if !(reachable && parameter) => problems.push((
                    at,
                    "it is not on a parameter reached through `properties` alone".to_string(),
                )),
                None => problems.push((at, format!("{decl} is not a header name"))),
                Some(n) if n.is_empty() || !n.chars().all(tchar) => problems.push((
                    at,
                    format!("{} is not an HTTP header token", serde_json::Value::from(n)),
                )),
                Some(_) if !typed => problems.push((
                    at,
                    "the parameter is not typed as a string, integer, number or boolean".into(),
                )),
                Some(n) => {
                    if let Some(first) = names.insert(n.to_ascii_lowercase(), trails.text(path)) {
                        problems.push((
                            at,
                            format!(
                                "{} is declared twice (also at {first}), ignoring case",
                                Value::from(n)
                            ),
                        ));
                    }
                }
            }
        }
        for (key, slot, child) in keywords::subschemas(map).into_iter().rev() {
            let under = trails.name(path, key);
            let (child_path, via_properties) = match slot {
                Slot::Whole => (under, false),
                Slot::Index(n) => (trails.index(under, n), false),
                Slot::Entry(name) => (trails.name(under, name), key == "properties"),
            };
            stack.push((
                child,
                child_path,
                reachable && via_properties,
                via_properties,
            ));
        }
    }
    problems
}

/// What a UI resource's `_meta.ui` lets its app do beyond the sandbox's defaults, as
/// (path, what): sandbox permissions asked for, and a csp domain list that admits any
/// origin (`*`, or a scheme alone such as `https:`).
pub(super) fn ui_reach(resource: &Element) -> Vec<(Path, String)> {
    let mut out = Vec::new();
    let Some(ui) = resource.get("_meta").and_then(|m| m.get("ui")) else {
        return out;
    };
    if let Some(Value::Object(p)) = ui.get("permissions") {
        if !p.is_empty() {
            let names: Vec<&str> = p.keys().map(String::as_str).collect();
            out.push((
                Path::names(&["_meta", "ui", "permissions"]),
                format!("asks for sandbox permissions {}", names.join(", ")),
            ));
        }
    }
    if let Some(Value::Object(csp)) = ui.get("csp") {
        for (list, domains) in csp {
            let any = domains
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .find(|d| {
                    let d = d.trim();
                    d == "*" || d.ends_with(':') || d.ends_with("://*")
                });
            if let Some(d) = any {
                out.push((
                    Path::names(&["_meta", "ui", "csp", list]),
                    format!("lets its app reach any origin ({})", Value::from(d)),
                ));
            }
        }
    }
    out
}
