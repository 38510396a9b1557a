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

use predicates::{blank, confusable_rule, param_rule, schema_rule, text_rule, tool_rule};
use serde_json::Value;

use crate::elements::Form;
use crate::lockfile::{key_of, Kind, Surface};
use crate::path::Path;
use crate::rules::render_message;

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
    findings: Vec<Finding>,
}

impl<'r> Linter<'r> {
    fn new(levels: &'r dyn Levels) -> Linter<'r> {
        Linter {
            levels,
            rules: levels.rules(),
            findings: Vec::new(),
        }
    }
}

impl Linter<'_> {
    pub(super) fn report(
        &mut self,
        rule: usize,
        subject: &str,
        path: Option<String>,
        vars: &[(&str, &str)],
    ) {
        self.report_at(rule, subject, path, None, vars);
    }

    pub(super) fn report_at(
        &mut self,
        rule: usize,
        subject: &str,
        path: Option<String>,
        at: Option<String>,
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
            subject: subject.to_string(),
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
fn python_sdk_made(server: &crate::lockfile::ServerInfo, surface: &Surface) -> bool {
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
    server.name == "FastMCP"
        || surface.tools.iter().any(|t| {
            t.keys().any(|k| k.starts_with("x-fastmcp"))
                || ["inputSchema", "outputSchema"].iter().any(|f| {
                    t.get(*f).is_some_and(|s| {
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
    let mut l = Linter::new(levels);
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
                        .into_iter()
                        .find(|(f, _)| *f == field)
                        .and_then(|(_, text)| text);
                    if given.is_none_or(|t| t.trim().is_empty()) {
                        l.report(i, "server", Some(field.into()), &[("field", field)]);
                    }
                }
                _ => {}
            },
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
                                Some(Path::names(&["arguments", name]).to_string()),
                                &[("name", name)],
                            );
                        }
                    }
                }
            }
            Target::Resource if rule.predicate == Predicate::UiReach => {
                for e in &surface.resources {
                    let subject = format!("resource:{}", key_of(e, "uri"));
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
                    let subject = format!("{}:{}", kind.word(), key_of(e, kind.key_field()));
                    if blank(e.get(rule.field.as_deref().unwrap_or(""))) {
                        l.report(i, &subject, None, &[]);
                    }
                }
            }
            Target::Schema => {
                // Every schema field of every kind (rules/elements.toml).
                for kind in Kind::ALL {
                    let fields = kind.spec().schema.iter().filter(|f| f.form == Form::Schema);
                    let fields: Vec<&str> = fields.map(|f| f.field.as_str()).collect();
                    for e in surface.list(kind) {
                        let subject = format!("{}:{}", kind.word(), key_of(e, kind.key_field()));
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
    let mut l = Linter::new(levels);
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
    let version = server.version.as_deref().unwrap_or("").trim();
    if version.is_empty() || !python_sdk_made(server, surface) {
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
            "server",
            Some("version".into()),
            &[("value", version), ("name", &names)],
        );
    }
}
