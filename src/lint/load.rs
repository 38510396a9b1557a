//! Loading rules/lint.toml: embedded, parsed strictly, validated at start-up.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::model::{Level, LintRule, Predicate, Target};
use crate::elements::{self, Role};
use crate::error::{Error, Result};

pub const TABLE: (&str, &str) = ("rules/lint.toml", include_str!("../../rules/lint.toml"));

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    rule: Vec<LintRule>,
    /// Named word lists (phrases; for confusables, two-character strings: a character
    /// and the one it imitates).
    #[serde(default)]
    pub(super) lists: HashMap<String, Vec<String>>,
}

#[derive(Clone, Debug)]
pub struct LintRules {
    pub rows: Vec<LintRule>,
    pub source: &'static str,
    pub(super) lists: HashMap<String, Vec<String>>,
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
            check(r, &raw.lists).map_err(|m| bad(&m))?;
        }
        Ok(LintRules {
            rows: raw.rule,
            source,
            lists: raw.lists,
        })
    }

    pub fn has(&self, id: &str) -> bool {
        self.rows.iter().any(|r| r.id == id)
    }
}

/// Whether one row holds together: its predicate's arguments, its target, the lists it
/// names and its level; the first thing wrong, said.
fn check(r: &LintRule, lists: &HashMap<String, Vec<String>>) -> std::result::Result<(), String> {
    arguments(r)?;
    target(r)?;
    inputs(r, lists)?;
    server(r)?;
    if r.level == Level::None {
        return Err("a rule's default level is error, warning or info".into());
    }
    Ok(())
}

/// The predicates that read the text fields a row names in `fields`.
fn reads_text(p: &Predicate) -> bool {
    matches!(p, Predicate::HiddenCharacters | Predicate::Contains)
}

/// `field` and `max`, with the predicates that take them.
fn arguments(r: &LintRule) -> std::result::Result<(), String> {
    let needs_field = matches!(r.predicate, Predicate::Missing | Predicate::TooLong);
    if needs_field != r.field.is_some() {
        return Err(
            "`field` goes with the missing and too_long predicates, and only with them".into(),
        );
    }
    let needs_max = matches!(r.predicate, Predicate::TooLong | Predicate::InvalidName);
    if needs_max != r.max.is_some() {
        return Err(
            "`max` goes with the too_long and invalid_name predicates, and only with them".into(),
        );
    }
    Ok(())
}

/// The targets a predicate applies to: schema predicates to schemas, element-only ones
/// to tools, `ui_reach` to resources, name comparisons to tools or prompts.
fn target(r: &LintRule) -> std::result::Result<(), String> {
    let schema_pred = matches!(
        r.predicate,
        Predicate::RequiredNotInProperties
            | Predicate::EnumEmpty
            | Predicate::EnumDuplicate
            | Predicate::RefUnresolved
            | Predicate::ArrayMissingItems
            | Predicate::TypeMissing
            | Predicate::DefaultInvalid
    );
    if schema_pred != (r.target == Target::Schema) {
        return Err("schema predicates go with `target = \"schema\"`, and only they do".into());
    }
    let element_only = matches!(
        r.predicate,
        Predicate::DuplicateKey
            | Predicate::InvalidName
            | Predicate::NotObject
            | Predicate::McpHeaderInvalid
    );
    if element_only && r.target != Target::Tool {
        return Err(
            "duplicate_key, invalid_name, not_object and mcp_header_invalid apply to `target = \"tool\"`".into(),
        );
    }
    if r.predicate == Predicate::UiReach && r.target != Target::Resource {
        return Err("ui_reach applies to `target = \"resource\"`".into());
    }
    // Predicates that compare names across the server: tools', or prompts'.
    let across_names = match r.predicate {
        Predicate::NameCollision => Some("name_collision"),
        Predicate::ConfusableNames => Some("confusable_names"),
        _ => None,
    };
    if let Some(name) = across_names.filter(|_| !matches!(r.target, Target::Tool | Target::Prompt))
    {
        return Err(format!(
            "{name} applies to `target = \"tool\"` or `\"prompt\"`"
        ));
    }
    Ok(())
}

/// `fields` and `list` (a list of [lists] that exists; a confusable is two
/// characters), with the predicates that take them.
fn inputs(r: &LintRule, lists: &HashMap<String, Vec<String>>) -> std::result::Result<(), String> {
    let text_pred = reads_text(&r.predicate);
    if text_pred != r.fields.is_some() || (text_pred && r.target == Target::Schema) {
        return Err(
            "`fields` goes with the hidden_characters and contains predicates (on any target but schema), and only with them".into(),
        );
    }
    let list_pred = matches!(
        r.predicate,
        Predicate::Contains | Predicate::ConfusableNames | Predicate::SdkVersion
    );
    match &r.list {
        Some(name) if list_pred => match lists.get(name) {
            None => Err(format!("no list `{name}` in [lists]")),
            Some(words)
                if r.predicate == Predicate::ConfusableNames
                    && words.iter().any(|w| w.chars().count() != 2) =>
            {
                Err(format!(
                    "list `{name}`: each confusable is two characters, the look-alike and what it imitates"
                ))
            }
            Some(_) => Ok(()),
        },
        None if !list_pred => Ok(()),
        _ => Err(
            "`list` goes with the contains, confusable_names and sdk_version predicates, and only with them".into(),
        ),
    }
}

/// `target = "server"`: the text predicates, `sdk_version` (only there), and `missing`
/// on one of the server's fields.
fn server(r: &LintRule) -> std::result::Result<(), String> {
    // The server's fields lint reads (rules/elements.toml): what `missing` may name
    // under `target = "server"`.
    let linted: Vec<&str> = elements::server_fields()
        .iter()
        .filter(|f| f.role != Role::Session)
        .map(|f| f.field.as_str())
        .collect();
    let server_field = r.predicate == Predicate::Missing
        && r.target == Target::Server
        && r.field.as_deref().is_some_and(|f| linted.contains(&f));
    let server_only = r.predicate == Predicate::SdkVersion;
    let on_server = r.target == Target::Server;
    if (on_server && !(reads_text(&r.predicate) || server_only || server_field))
        || (server_only && !on_server)
    {
        let (last, rest) = linted.split_last().unwrap_or((&"", &[]));
        let names = match rest {
            [] => last.to_string(),
            _ => format!("{} or {last}", rest.join(", ")),
        };
        return Err(format!(
            "`target = \"server\"` goes with the hidden_characters, contains and sdk_version predicates (sdk_version only with it), and with missing on a `field` of {names}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::LintRules;

    fn row(target: &str, predicate: &str, field: &str) -> String {
        format!(
            "[[rule]]\nid = \"x.y\"\nlevel = \"warning\"\ntarget = \"{target}\"\npredicate = \"{predicate}\"\nfield = \"{field}\"\nmessage = \"m\"\n"
        )
    }

    #[test]
    fn missing_on_the_server_names_one_of_its_fields() {
        assert!(LintRules::from_table("t", &row("server", "missing", "version")).is_ok());
        assert!(LintRules::from_table("t", &row("server", "missing", "instructions")).is_ok());
        let Err(e) = LintRules::from_table("t", &row("server", "missing", "description")) else {
            panic!("the server has no description field");
        };
        assert!(
            e.to_string()
                .contains("name, title, version or instructions"),
            "{e}"
        );
        // Elsewhere, missing keeps its meaning.
        assert!(LintRules::from_table("t", &row("tool", "missing", "description")).is_ok());
    }
}
