//! `lint`: what makes one surface hard to use well. The rules are data
//! (`rules/lint.toml`): an id, a level, a target, and a predicate from a closed set.
//!
//! The parts: `model` (a rule, a finding), `load` (the table), `predicates` (what each
//! predicate looks for); this module runs them.

mod load;
mod model;
mod predicates;

pub use load::{LintRules, TABLE};
pub use model::{Finding, Level, LintRule, Predicate, Target};

use predicates::{blank, confusable_rule, params_rule, schema_rule, text_rule, tool_rule};
use serde_json::Value;

use crate::elements::{self, Form, Kind, Table};
use crate::lockfile::{key_of, Surface};
use crate::path::Path;
use crate::rules::render_message;
use crate::subject::Subject;

/// What decides a finding's level: the table's defaults ([`LintRules`]), or
/// covenant.toml's `[lint]` levels over them (`policy::LintPolicy`). The table itself is
/// never changed.
pub trait Levels {
    /// The lint table.
    fn rules(&self) -> &LintRules;
    /// The level of a finding of row `rule` (`None`: not reported).
    fn level(&self, rule: usize) -> Level;
}

impl Levels for LintRules {
    fn rules(&self) -> &LintRules {
        self
    }

    fn level(&self, rule: usize) -> Level {
        self.rows[rule].level
    }
}

pub(super) struct Linter<'r> {
    levels: &'r dyn Levels,
    rules: &'r LintRules,
    /// The element table: where each kind's parameters and schemas are.
    elements: &'r Table,
    findings: Vec<Finding>,
}

impl<'r> Linter<'r> {
    fn new(levels: &'r dyn Levels, elements: &'r Table) -> Linter<'r> {
        Linter {
            levels,
            rules: levels.rules(),
            elements,
            findings: Vec::new(),
        }
    }
}

impl Linter<'_> {
    pub(super) fn report(
        &mut self,
        rule: usize,
        subject: &Subject,
        path: Option<Path>,
        vars: &[(&str, &str)],
    ) {
        self.report_at(rule, subject, path, None, vars);
    }

    pub(super) fn report_at(
        &mut self,
        rule: usize,
        subject: &Subject,
        path: Option<Path>,
        at: Option<Path>,
        vars: &[(&str, &str)],
    ) {
        let level = self.levels.level(rule);
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
            subject: subject.clone(),
            path,
            at,
            message: render_message(&r.message, &all),
        });
    }
}

/// Every finding on `surface`, sorted by level, subject, path, code. The server's own
/// fields are not looked at: see [`lint_lockfile`].
pub fn lint(levels: &dyn Levels, surface: &Surface) -> Vec<Finding> {
    lint_with(levels, surface, None)
}

/// What only the Python SDKs write: FastMCP's default server name, an input schema titled
/// `NAMEArguments` (`mcp.server.fastmcp`), pydantic's default property titles (`repo_path`
/// titled "Repo Path"), or FastMCP's `x-fastmcp-*` keys. A server without any (no
/// pydantic schemas, or no tools) is not told that its version is the SDK's: nothing
/// shows which SDK it is built with.
fn python_sdk_made(
    server: &crate::lockfile::ServerInfo,
    surface: &Surface,
    elements: &Table,
) -> bool {
    let pydantic_title = |name: &str| -> String {
        name.split('_')
            .filter(|w| !w.is_empty())
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| {
                        f.to_uppercase()
                            .chain(c.flat_map(char::to_lowercase))
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect::<Vec<String>>()
            .join(" ")
    };
    let titled = |schema: &Value| {
        let own = schema
            .get("title")
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with("Arguments"));
        let props = schema.get("properties").and_then(Value::as_object);
        own || props.into_iter().flatten().any(|(name, p)| {
            p.get("title").and_then(Value::as_str) == Some(pydantic_title(name).as_str())
        })
    };
    let schemas = &elements.of(Kind::Tool).schema;
    server.name() == "FastMCP"
        || surface.tools.iter().any(|t| {
            t.keys().any(|k| k.starts_with("x-fastmcp"))
                || schemas.iter().filter(|f| f.form == Form::Schema).any(|f| {
                    t.get(&f.field).is_some_and(|s| {
                        titled(s)
                            || s.as_object()
                                .is_some_and(|m| m.keys().any(|k| k.starts_with("x-fastmcp")))
                    })
                })
        })
}

/// Every finding on a lockfile: its surface and its server's fields (instructions).
pub fn lint_lockfile(levels: &dyn Levels, lock: &crate::lockfile::Lockfile) -> Vec<Finding> {
    lint_with(levels, &lock.surface, Some(&lock.server))
}

fn lint_with(
    levels: &dyn Levels,
    surface: &Surface,
    server: Option<&crate::lockfile::ServerInfo>,
) -> Vec<Finding> {
    lint_with_table(levels, elements::table(), surface, server)
}

/// Every finding on `surface` (and `server`'s fields, when given), with `elements` for
/// the element table: the embedded one, or a test's copy with a row added.
pub fn lint_with_table(
    levels: &dyn Levels,
    elements: &Table,
    surface: &Surface,
    server: Option<&crate::lockfile::ServerInfo>,
) -> Vec<Finding> {
    let mut l = Linter::new(levels, elements);
    let rules = levels.rules();
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
            Target::Server => match (rule.predicate, server) {
                (Predicate::SdkVersion, Some(server)) => {
                    sdk_version_rule(&mut l, i, rule, server, surface)
                }
                // A field the server left out or blank (`field`, checked on load).
                (Predicate::Missing, Some(server)) => {
                    let field = rule.field.as_deref().unwrap_or("");
                    let given = predicates::server_fields(server)
                        .find(|(f, _)| *f == field)
                        .and_then(|(_, text)| text);
                    if given.is_none_or(|t| t.trim().is_empty()) {
                        let path = Some(Path::name(field));
                        l.report(i, &Subject::server(), path, &[("field", field)]);
                    }
                }
                _ => {}
            },
            Target::Tool => tool_rule(&mut l, i, rule, &surface.tools),
            Target::ToolParam => params_rule(&mut l, i, rule, Kind::Tool, surface),
            Target::PromptArg => params_rule(&mut l, i, rule, Kind::Prompt, surface),
            Target::Resource if rule.predicate == Predicate::UiReach => {
                for e in &surface.resources {
                    let subject = Subject::element(Kind::Resource, key_of(e, "uri"));
                    for (path, what) in predicates::ui_reach(e) {
                        l.report(i, &subject, Some(path), &[("value", &what)]);
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
                    let subject = Subject::element(kind, key_of(e, kind.key_field()));
                    if blank(e.get(rule.field.as_deref().unwrap_or(""))) {
                        l.report(i, &subject, None, &[]);
                    }
                }
            }
            Target::Schema => {
                // Every schema field of every kind (rules/elements.toml).
                for kind in Kind::ALL {
                    let fields = elements.of(kind).schema.iter();
                    let fields = fields.filter(|f| f.form == Form::Schema);
                    let fields: Vec<&str> = fields.map(|f| f.field.as_str()).collect();
                    for e in surface.list(kind) {
                        let subject = Subject::element(kind, key_of(e, kind.key_field()));
                        for field in &fields {
                            if let Some(schema) = e.get(*field) {
                                schema_rule(&mut l, i, rule.predicate, &subject, field, schema);
                            }
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
pub fn collisions(levels: &dyn Levels, servers: &[(&str, &Surface)]) -> Vec<Finding> {
    let mut l = Linter::new(levels, elements::table());
    let rules = levels.rules();
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
                let subject = Subject::element(kind, name);
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

/// The server's version is one an SDK reports when the server sets none (the rule's
/// `list`: `name version` lines), and the server shows that it is built with a Python
/// SDK (`python_sdk_made`): a Node server whose own version happens to equal a release
/// of `mcp` or `fastmcp` (Context7 4.1.1, mongodb-mcp-server 2.1.1) is not flagged.
fn sdk_version_rule(
    l: &mut Linter<'_>,
    i: usize,
    rule: &model::LintRule,
    server: &crate::lockfile::ServerInfo,
    surface: &Surface,
) {
    let version = server.version().unwrap_or("").trim();
    if version.is_empty() || !python_sdk_made(server, surface, l.elements) {
        return;
    }
    let list = rule.list.as_deref().and_then(|n| l.rules.lists.get(n));
    let sdks: Vec<&str> = list
        .into_iter()
        .flatten()
        .filter_map(|e| e.split_once(' '))
        .filter(|(_, v)| *v == version)
        .map(|(sdk, _)| sdk)
        .collect();
    if !sdks.is_empty() {
        let names = sdks.join(" or ");
        l.report(
            i,
            &Subject::server(),
            Some(Path::name("version")),
            &[("value", version), ("name", &names)],
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(value: Value) -> crate::lockfile::Element {
        value.as_object().cloned().unwrap_or_default()
    }

    /// The embedded element table with `row` added after the tool's last schema field.
    fn with_tool_schema_row(row: &str) -> Table {
        let anchor = "[[element.schema]]\nfield = \"outputSchema\"\ndirection = \"output\"\n";
        let text = elements::TABLE
            .1
            .replacen(anchor, &format!("{anchor}\n{row}"), 1);
        assert_ne!(
            text,
            elements::TABLE.1,
            "the tool's rows moved: update the anchor"
        );
        Table::parse(&text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_new_input_schema_row_reaches_the_parameter_rules() {
        let rules = LintRules::embedded().unwrap();
        let surface = Surface {
            tools: vec![tool(json!({
                "name": "t",
                "description": "d",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "string", "description": "a"}}},
                "draftInput": {"type": "object", "properties": {"b": {"type": "string", "x-mcp-header": "B b"}}},
                "draftArguments": [{"name": "c"}]
            }))],
            ..Surface::default()
        };
        let seen = |table: &Table| -> Vec<(String, Option<String>)> {
            lint_with_table(&rules, table, &surface, None)
                .into_iter()
                .filter(|f| {
                    f.code.starts_with("tool.param.") || f.code == "tool.mcp_header.invalid"
                })
                .map(|f| (f.code, f.at.or(f.path).map(|p| p.to_string())))
                .collect()
        };
        // The embedded table has no such fields: nothing to see.
        assert_eq!(seen(elements::table()), []);
        let table = with_tool_schema_row(
            "[[element.schema]]\nfield = \"draftInput\"\ndirection = \"input\"\n",
        );
        let found = seen(&table);
        assert!(
            found.contains(&(
                "tool.param.missing_description".into(),
                Some("draftInput.properties.b".into())
            )),
            "{found:?}"
        );
        assert!(
            found.contains(&(
                "tool.mcp_header.invalid".into(),
                Some("draftInput.properties.b.x-mcp-header".into())
            )),
            "{found:?}"
        );
        // An output field is no parameter.
        let table = with_tool_schema_row(
            "[[element.schema]]\nfield = \"draftInput\"\ndirection = \"output\"\n",
        );
        assert_eq!(seen(&table), []);
        // Nor is the form of the field Rust's: an arguments list is read as its items.
        let table = with_tool_schema_row(
            "[[element.schema]]\nfield = \"draftArguments\"\ndirection = \"input\"\nform = \"arguments\"\n",
        );
        assert_eq!(
            seen(&table),
            [(
                "tool.param.missing_description".to_string(),
                Some("draftArguments.c".to_string())
            )]
        );
    }
}
