//! Loading the rule tables: rules/*.toml, embedded with `include_str!`, parsed strictly
//! (unknown fields rejected) and checked row by row at start-up: ids, scope, the
//! comparator's events, both directions (or a reason), structural keywords, `when`.
//! A failure is one `error:` line naming the table and the row, never a panic. The
//! checks across rows (duplicates, aliases, bindings) are made as `index` builds.

use serde::Deserialize;
use serde_json::Value;

use super::model::{Certainty, Comparator, Condition, Retired, Rule, Scope, Severity};
use super::Rules;
use crate::elements::Kind;
use crate::error::{Error, Result};

/// The embedded tables, in the order their rows are listed.
pub const TABLES: &[(&str, &str)] = &[
    (
        "rules/surface.toml",
        include_str!("../../rules/surface.toml"),
    ),
    ("rules/schema.toml", include_str!("../../rules/schema.toml")),
];

/// The comparator of a keyword whose comparison is structural (the walker recurses
/// through it): an applicator's `comparator` in rules/keywords.toml. Rows on it must use
/// that comparator, so no row can compare a subschema by its mere presence and hide a
/// change inside it. `Some(None)`: an applicator whose comparator names none (a test
/// keeps the table from having one).
pub fn structural(keyword: &str) -> Option<Option<Comparator>> {
    let k = crate::keywords::get(keyword)?;
    k.comparator.map(|d| Comparator::parse(d.word()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    rule: Vec<RawRule>,
    #[serde(default)]
    retired: Vec<RawRetired>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRetired {
    id: String,
    #[serde(default)]
    replaced_by: Vec<String>,
    reason: String,
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
    absent: Option<Value>,
    value: Option<Value>,
    message: String,
    help: Option<String>,
    reason: Option<String>,
    #[serde(default)]
    certainty: Certainty,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    model_facing: bool,
}

impl Rules {
    /// The embedded tables. They are validated by the test suite, so a failure here
    /// is a build defect; it is still reported as an error, never a panic.
    pub fn embedded() -> Result<Rules> {
        crate::keywords::check()
            .map_err(|e| Error::new(format!("{}: {}", crate::keywords::TABLE.0, one_line(&e))))?;
        Rules::from_tables(TABLES)
    }

    pub fn from_tables(tables: &[(&'static str, &str)]) -> Result<Rules> {
        let mut rows = Vec::new();
        let mut retired = Vec::new();
        for (source, text) in tables {
            let raw: RawTable = toml::from_str(text)
                .map_err(|e| Error::new(format!("{source}: {}", one_line(&e.to_string()))))?;
            for r in raw.rule {
                rows.push(convert(r, source)?);
            }
            for r in raw.retired {
                if !valid_id(&r.id) {
                    return Err(Error::new(format!(
                        "{source}: retired id `{}`: ids are dotted words (letters, digits, `_`)",
                        r.id
                    )));
                }
                if r.reason.trim().is_empty() {
                    return Err(Error::new(format!(
                        "{source}: retired id `{}`: `reason` is empty",
                        r.id
                    )));
                }
                retired.push(Retired {
                    id: r.id,
                    replaced_by: r.replaced_by,
                    reason: r.reason,
                    source,
                });
            }
        }
        Rules::index(rows, retired)
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '$'))
}

/// A row's scope: a schema keyword, an element's field, or the server's.
fn scope_of(r: &RawRule) -> std::result::Result<Scope, String> {
    let scope = match (&r.keyword, &r.element) {
        (Some(k), None) => {
            if r.field.is_some() {
                return Err("`field` goes with `element`, not `keyword`".into());
            }
            Scope::Schema { keyword: k.clone() }
        }
        (None, Some(e)) if e == "server" => {
            let field = r.field.clone().ok_or("a server row names its `field`")?;
            if !crate::elements::server_fields()
                .iter()
                .any(|f| f.field == field)
            {
                return Err(format!(
                    "`{field}` is no server field of rules/elements.toml"
                ));
            }
            Scope::Server { field }
        }
        (None, Some(e)) => {
            let kind = if e == "*" {
                None
            } else {
                Some(Kind::from_word(e).ok_or_else(|| {
                    format!(
                        "unknown element `{e}` (expected tool, resource, template, prompt or *)"
                    )
                })?)
            };
            Scope::Element {
                kind,
                field: r.field.clone(),
            }
        }
        _ => return Err("exactly one of `keyword` or `element` is required".into()),
    };
    Ok(scope)
}

/// The checks on a row that classifies a schema keyword's events.
fn check_schema_row(r: &RawRule, keyword: &str) -> std::result::Result<(), String> {
    match structural(keyword) {
        Some(Some(c)) if c != r.comparator => {
            return Err(format!(
                "keyword `{keyword}` is structural and compares with `{}`",
                c.word()
            ));
        }
        Some(None) => {
            return Err(format!(
                "keyword `{keyword}`: rules/keywords.toml names no known comparator for it"
            ));
        }
        _ => {}
    }
    if r.severity.is_some() {
        return Err("schema rows state `input` and `output`, not `severity`".into());
    }
    // An annotation constrains nothing, so no witness can show a value it now
    // rejects: a breaking row on one is at best conservative.
    let breaking = [r.input, r.output].contains(&Some(Severity::Breaking));
    if breaking
        && r.certainty == Certainty::Exact
        && crate::keywords::role(keyword) == Some(crate::keywords::Role::Annotation)
    {
        return Err(format!(
            "keyword `{keyword}` is an annotation: a breaking row on it states `certainty = \"conservative\"` (its witness can only be annotation-only)"
        ));
    }
    if (r.input.is_none() || r.output.is_none()) && r.reason.is_none() {
        return Err("a schema row states both `input` and `output`, or a `reason` why one direction does not apply".into());
    }
    Ok(())
}

fn convert(r: RawRule, source: &'static str) -> Result<Rule> {
    let bad = |msg: String| Error::new(format!("{source}: rule `{}`: {msg}", r.id));
    if !valid_id(&r.id) {
        return Err(bad("ids are dotted words (letters, digits, `_`)".into()));
    }
    let scope = scope_of(&r).map_err(&bad)?;
    if !r.comparator.events().contains(&r.event.as_str()) {
        return Err(bad(format!(
            "comparator `{}` has no event `{}` (it has: {})",
            r.comparator.word(),
            r.event,
            r.comparator.events().join(", ")
        )));
    }
    if let Scope::Schema { keyword } = &scope {
        check_schema_row(&r, keyword).map_err(&bad)?;
    } else if r.severity.is_some() && (r.input.is_some() || r.output.is_some()) {
        return Err(bad(
            "a surface row has either `severity` or `input`/`output`".into(),
        ));
    } else if r.severity.is_none() && r.input.is_some() == r.output.is_some() {
        return Err(bad(
            "a surface row has `severity`, or exactly one of `input` and `output`".into(),
        ));
    }
    let surface_row = !matches!(scope, Scope::Schema { .. });
    let allowed = match r.when {
        None => true,
        Some(Condition::ReadOnly) => surface_row && r.comparator == Comparator::Bool,
        Some(_) => matches!(
            r.comparator,
            Comparator::Fields | Comparator::Variants | Comparator::Entries
        ),
    };
    if !allowed {
        return Err(bad(
            "`when` applies to the `fields`, `variants` and `entries` comparators only (`read_only`: to a tool's `bool` fields)".into(),
        ));
    }
    if r.value.is_some() && (r.comparator != Comparator::Values || !surface_row) {
        return Err(bad(
            "`value` applies to an element field's `values` rows only".into(),
        ));
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
        absent: r.absent,
        value: r.value,
        message: r.message,
        reason: r.reason,
        certainty: r.certainty,
        aliases: r.aliases,
        model_facing: r.model_facing,
        source,
    })
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
    fn every_applicator_of_the_vocabulary_names_a_structural_comparator() {
        use crate::keywords::{vocabulary, Role};
        let walked = [
            Comparator::Fields,
            Comparator::Variants,
            Comparator::Openness,
            Comparator::Entries,
            Comparator::Subschema,
            Comparator::Presence,
        ];
        for k in &vocabulary().keywords {
            let c = structural(&k.name);
            if k.role == Role::Applicator {
                let c = c.flatten();
                assert!(
                    c.is_some_and(|c| walked.contains(&c)),
                    "{}: {:?} is not a comparator the walker descends with",
                    k.name,
                    k.comparator
                );
            } else {
                assert!(c.is_none(), "{} is no applicator", k.name);
            }
        }
    }

    #[test]
    fn an_exact_breaking_row_on_an_annotation_is_refused() {
        let row = |certainty: &str| {
            format!("[[rule]]\nid='x.y'\nkeyword='description'\ncomparator='text'\nevent='changed'\ninput='breaking'\noutput='patch'\nmessage='m'\n{certainty}")
        };
        let err = Rules::from_tables(&[("t.toml", &row(""))]).unwrap_err();
        assert!(err.message().contains("is an annotation"), "{err}");
        // Conservative, the row passes (the table lacks the rows an index needs).
        let err = Rules::from_tables(&[("t.toml", &row("certainty='conservative'"))]).unwrap_err();
        assert!(!err.message().contains("is an annotation"), "{err}");
    }

    #[test]
    fn a_row_that_could_hide_a_change_in_a_subschema_is_rejected() {
        // `contains` is walked with the `subschema` comparator; `presence` would see
        // nothing when both sides have one and they differ.
        let t = "[[rule]]\nid='x.y'\nkeyword='contains'\ncomparator='presence'\nevent='added'\ninput='breaking'\noutput='minor'\nmessage='m'\n";
        let err = Rules::from_tables(&[("t.toml", t)]).unwrap_err();
        assert!(err.message().contains("is structural"), "{err}");
    }
}
