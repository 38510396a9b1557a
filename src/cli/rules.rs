//! `rules`: every rule id with its default and effective severity and its source, or
//! one rule in full.

use termcolor::WriteColor;

use super::settings::RulesSettings;
use crate::error::{Error, Result};
use crate::lint::LintRules;
use crate::rules::{Comparator, Former, Rules, Severity};

/// `TypeMissing` as `type_missing`, the spelling of rules/lint.toml.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

pub(super) fn run(
    rules: &Rules,
    lint_rules: &LintRules,
    settings: RulesSettings,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let sev = |s: Option<Severity>| s.map(Severity::word).unwrap_or("-");
    let mut text = String::new();
    if settings.comparators {
        for c in Comparator::ALL {
            text.push_str(&format!("{}: {}\n", c.word(), c.events().join(" ")));
        }
        return write(out, &text);
    }
    // The ids to show: the one asked for, or for a former id what became of it (the
    // rows that took a renamed id over, the rows that replaced a retired one).
    let former = settings.id.as_deref().and_then(|id| rules.former(id));
    let wanted: Option<Vec<&str>> = settings.id.as_deref().map(|id| match &former {
        Some(Former::Renamed(new)) => new.clone(),
        Some(Former::Retired(r)) => r.replaced_by.iter().map(String::as_str).collect(),
        None => vec![id],
    });
    let skip = |id: &str| wanted.as_ref().is_some_and(|w| !w.contains(&id));
    if let (Some(f), Some(id)) = (&former, &settings.id) {
        text.push_str(&f.describe(id));
        text.push('\n');
        if wanted.as_ref().is_some_and(Vec::is_empty) {
            return write(out, &text);
        }
        text.push('\n');
    }
    // (the columns, the help text shown under the row when one id is asked for)
    let mut rows: Vec<([String; 5], Option<&str>)> = vec![(
        [
            "ID",
            "WATCHES",
            "DEFAULT in/out",
            "EFFECTIVE in/out",
            "SOURCE",
        ]
        .map(String::from),
        None,
    )];
    for (i, r) in rules.rows.iter().enumerate() {
        if skip(&r.id) {
            continue;
        }
        let (default, effective) = if r.severity.is_some() {
            (
                sev(r.severity).to_string(),
                rules.severity(i, None).word().to_string(),
            )
        } else {
            let eff = |d| {
                if r.default_severity(Some(d)).is_some() || r.severity.is_some() {
                    rules.severity(i, Some(d)).word()
                } else {
                    "-"
                }
            };
            (
                format!("{}/{}", sev(r.input), sev(r.output)),
                format!(
                    "{}/{}",
                    eff(crate::rules::Direction::Input),
                    eff(crate::rules::Direction::Output)
                ),
            )
        };
        let watches = format!("{} {}", r.describe_scope(), r.event);
        rows.push((
            [
                r.id.clone(),
                watches,
                default,
                effective,
                r.source.to_string(),
            ],
            settings.id.is_some().then_some(r.help.as_str()),
        ));
    }
    for (i, r) in lint_rules.rows.iter().enumerate() {
        if skip(&r.id) {
            continue;
        }
        rows.push((
            [
                r.id.clone(),
                format!("lint {}", snake_case(&format!("{:?}", r.predicate))),
                r.level.word().to_string(),
                lint_rules.level(i).word().to_string(),
                lint_rules.source.to_string(),
            ],
            None,
        ));
    }
    let shown = rows.len() - 1;
    // Every column as wide as its widest cell, so the listing reads as a table.
    let mut widths = [0usize; 5];
    for (cells, _) in &rows {
        for (w, cell) in widths.iter_mut().zip(cells) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for (cells, help) in &rows {
        let mut line = String::new();
        for (k, cell) in cells.iter().enumerate() {
            if k + 1 < cells.len() {
                line.push_str(&format!("{cell:<width$}  ", width = widths[k]));
            } else {
                line.push_str(cell);
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
        if let Some(help) = help {
            text.push_str(&format!("    {help}\n"));
        }
    }
    if let Some(id) = &settings.id {
        if shown == 0 {
            let mut known: Vec<&str> = rules.rows.iter().map(|r| r.id.as_str()).collect();
            known.extend(lint_rules.rows.iter().map(|r| r.id.as_str()));
            let hint = crate::config::suggest(id, &known)
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Err(Error::new(format!("unknown rule id `{id}`{hint}")));
        }
    }
    text.push_str(&format!(
        "\neffective severities include {}\n",
        settings.config
    ));
    write(out, &text)
}

fn write(out: &mut dyn WriteColor, text: &str) -> Result<u8> {
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::new(format!("cannot write: {e}")))?;
    Ok(0)
}
