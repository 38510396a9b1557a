//! The `[severity]`, `profile` and `[lint]` tables, held to the rule tables: an unknown
//! rule id is an error with a suggestion, a former one a warning.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use globset::GlobMatcher as Glob;
use toml::Spanned;

use super::raw::At;
use super::Override;
use crate::error::{Error, Result};
use crate::lint::{Level, LintRules};
use crate::rules::{Former, Rules, Severity};

/// `[severity]`: each entry's rule id (a former one configures the rows that took it
/// over, with a warning) and its severity, for all directions or `{ input, output }`.
pub(super) fn severity(
    table: &BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    rules: &Rules,
    lint: &LintRules,
    at: At<'_>,
    warnings: &mut Vec<String>,
) -> Result<HashMap<String, Override>> {
    let mut out = HashMap::new();
    let change_ids: Vec<&str> = rules.rows.iter().map(|r| r.id.as_str()).collect();
    for (id, value) in table {
        let former = rules.former(id.get_ref());
        if let Some(f) = &former {
            // A renamed id configures the rows that took it over; a retired one
            // configures nothing (its changes are classified anew).
            let tail = match f {
                Former::Retired(_) => "; this [severity] entry no longer applies",
                Former::Renamed(_) => "",
            };
            warnings.push(format!(
                "{}: {}{tail}",
                at(id.span()),
                f.describe(id.get_ref())
            ));
        } else if !change_ids.contains(&id.get_ref().as_str()) {
            return Err(unknown_id(
                &at(id.span()),
                id.get_ref(),
                &change_ids,
                lint.has(id.get_ref()).then_some("[lint]"),
            ));
        }
        let o = severity_value(id.get_ref(), value, at)?;
        match former {
            None => {
                out.insert(id.get_ref().clone(), o);
            }
            // The current id, written out too, wins over its former one.
            Some(Former::Renamed(new)) => {
                for new_id in new {
                    out.entry(new_id.to_string()).or_insert(o);
                }
            }
            Some(Former::Retired(_)) => {}
        }
    }
    Ok(out)
}

/// One `[severity]` value: a severity, or a table of `input` and `output` severities.
fn severity_value(id: &str, value: &Spanned<toml::Value>, at: At<'_>) -> Result<Override> {
    let sev = |v: &toml::Value, span: Range<usize>| -> Result<Severity> {
        v.as_str().and_then(Severity::parse).ok_or_else(|| {
            let shown = match v {
                toml::Value::String(s) => format!("{s:?}"),
                other => format!("(a {})", other.type_str()),
            };
            Error::new(format!(
                "{}: invalid severity {shown} for `{id}`; expected breaking, minor, patch or none",
                at(span),
            ))
        })
    };
    Ok(match value.get_ref() {
        toml::Value::Table(t) => {
            let mut o = Override::default();
            for (k, v) in t {
                match k.as_str() {
                    "input" => o.input = Some(sev(v, value.span())?),
                    "output" => o.output = Some(sev(v, value.span())?),
                    other => {
                        return Err(Error::new(format!(
                            "{}: unknown key `{other}` in the severity of `{id}`; expected input or output",
                            at(value.span()),
                        )))
                    }
                }
            }
            o
        }
        v => Override {
            all: Some(sev(v, value.span())?),
            ..Override::default()
        },
    })
}

/// `profile`: `consumer` makes what the model is told breaking, below the `[severity]`
/// entries written out; `provider` (the default) changes nothing.
pub(super) fn profile(
    profile: &Spanned<String>,
    rules: &Rules,
    at: At<'_>,
    severity: &mut HashMap<String, Override>,
) -> Result<()> {
    match profile.get_ref().as_str() {
        "provider" => {}
        // [severity] entries written out still win over the profile.
        "consumer" => {
            // The rows that say so (`model_facing` in rules/*.toml).
            let model_facing = rules.rows.iter().filter(|r| r.model_facing);
            for id in model_facing.map(|r| r.id.as_str()) {
                severity.entry(id.to_string()).or_insert(Override {
                    all: Some(Severity::Breaking),
                    ..Override::default()
                });
            }
        }
        other => {
            return Err(Error::new(format!(
                "{}: unknown profile `{other}`; expected consumer or provider",
                at(profile.span())
            )))
        }
    }
    Ok(())
}

/// `[lint]`: lint rule ids and their levels.
pub(super) fn lint_levels(
    table: &BTreeMap<Spanned<String>, Spanned<String>>,
    lint: &LintRules,
    change_ids: &[&str],
    at: At<'_>,
) -> Result<HashMap<String, Level>> {
    let mut out = HashMap::new();
    let lint_ids: Vec<&str> = lint.rows.iter().map(|r| r.id.as_str()).collect();
    for (id, level) in table {
        if !lint_ids.contains(&id.get_ref().as_str()) {
            let elsewhere = change_ids
                .contains(&id.get_ref().as_str())
                .then_some("[severity]");
            return Err(unknown_id(
                &at(id.span()),
                id.get_ref(),
                &lint_ids,
                elsewhere,
            ));
        }
        let l = Level::parse(level.get_ref()).ok_or_else(|| {
            Error::new(format!(
                "{}: invalid lint level `{}` for `{}`; expected error, warning, info or none",
                at(level.span()),
                level.get_ref(),
                id.get_ref()
            ))
        })?;
        out.insert(id.get_ref().clone(), l);
    }
    Ok(out)
}

pub(super) fn unknown_id(place: &str, id: &str, known: &[&str], elsewhere: Option<&str>) -> Error {
    let mut msg = format!("{place}: unknown rule id `{id}`");
    if let Some(table) = elsewhere {
        msg.push_str(&format!(" here; it belongs in {table}"));
    } else if let Some(best) = suggest(id, known) {
        msg.push_str(&format!("; did you mean `{best}`?"));
    } else {
        msg.push_str("; `mcp-covenant rules` lists them all");
    }
    Error::new(msg)
}

/// A glob matching exactly the rule ids `ids` (the rows a former id became).
pub(super) fn any_of(ids: &[&str]) -> Result<Glob> {
    let escaped: Vec<String> = ids.iter().map(|id| globset::escape(id)).collect();
    let pattern = match escaped.as_slice() {
        [one] => one.clone(),
        many => format!("{{{}}}", many.join(",")),
    };
    globset::Glob::new(&pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| Error::new(format!("rule ids {ids:?} make no glob: {}", e.kind())))
}

/// The known id closest to `id`, when it is close enough to be a typo.
pub fn suggest<'a>(id: &str, known: &[&'a str]) -> Option<&'a str> {
    let (best, dist) = known
        .iter()
        .map(|k| (*k, strsim::levenshtein(id, k)))
        .min_by_key(|(_, d)| *d)?;
    (dist <= (id.len() / 4).max(2)).then_some(best)
}
