//! Loading rules/lint.toml: embedded, parsed strictly, validated at start-up.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::model::{Level, LintRule, Predicate, Target};
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
                    | Predicate::DefaultInvalid
            );
            if schema_pred != (r.target == Target::Schema) {
                return Err(bad(
                    "schema predicates go with `target = \"schema\"`, and only they do",
                ));
            }
            let element_only = matches!(
                r.predicate,
                Predicate::DuplicateKey
                    | Predicate::InvalidName
                    | Predicate::NotObject
                    | Predicate::McpHeaderInvalid
            );
            if element_only && r.target != Target::Tool {
                return Err(bad(
                    "duplicate_key, invalid_name, not_object and mcp_header_invalid apply to `target = \"tool\"`",
                ));
            }
            if r.predicate == Predicate::UiReach && r.target != Target::Resource {
                return Err(bad("ui_reach applies to `target = \"resource\"`"));
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
                Predicate::Contains | Predicate::ConfusableNames | Predicate::SdkVersion
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
                        "`list` goes with the contains, confusable_names and sdk_version predicates, and only with them",
                    ))
                }
            }
            // The server's fields: what `missing` may name under `target = "server"`.
            let server_field = r.predicate == Predicate::Missing
                && r.target == Target::Server
                && matches!(
                    r.field.as_deref(),
                    Some("name" | "title" | "version" | "instructions")
                );
            let server_only = r.predicate == Predicate::SdkVersion;
            let on_server = r.target == Target::Server;
            if (on_server && !(text_pred || server_only || server_field))
                || (server_only && !on_server)
            {
                return Err(bad(
                    "`target = \"server\"` goes with the hidden_characters, contains and sdk_version predicates (sdk_version only with it), and with missing on a `field` of name, title, version or instructions",
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
        })
    }

    pub fn has(&self, id: &str) -> bool {
        self.rows.iter().any(|r| r.id == id)
    }
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
