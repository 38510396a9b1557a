//! `rules`: every rule id with its default and effective severity and where the
//! effective one comes from, or the rules an id or a glob names; as a table, JSON, or
//! the markdown of docs/rules.md.

use serde::Serialize;
use termcolor::WriteColor;

use super::args::RulesFormat;
use super::settings::RulesSettings;
use crate::diff::Classify;
use crate::error::{Error, Result};
use crate::lint::{Levels, LintRules};
use crate::policy::{LintPolicy, Policy};
use crate::rules::{Comparator, Direction, Former, Rules, Severity};

/// `TypeMissing` as `type missing`, the words of rules/lint.toml's `confusable_names`.
fn words(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// One rule as every format shows it.
#[derive(Serialize)]
struct Row {
    id: String,
    /// `change` or `lint`.
    kind: &'static str,
    /// What the rule looks at (a change: the keyword or field and the event; a lint
    /// rule: what it checks).
    watches: String,
    /// Change rules: `in/out` (or one severity for a rule without direction); lint:
    /// the level.
    default: String,
    effective: String,
    /// Where the effective severity comes from: `built-in`, or the config file.
    source: String,
    /// What the rule means (a change rule's help, a lint rule's message).
    help: String,
}

pub(super) fn run(
    rules: &Rules,
    lint_rules: &LintRules,
    settings: RulesSettings,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let mut text = String::new();
    if settings.comparators {
        if matches!(settings.format, RulesFormat::Markdown) {
            return write(out, &comparators_markdown());
        }
        for c in Comparator::ALL {
            text.push_str(&format!("{}: {}\n", c.word(), c.events().join(" ")));
        }
        return write(out, &text);
    }
    // The ids to show: the one asked for, those a glob matches, or for a former id what
    // became of it (the rows that took a renamed id over, the rows that replaced a
    // retired one).
    let former = settings.id.as_deref().and_then(|id| rules.former(id));
    let glob = match settings.id.as_deref() {
        Some(id) if former.is_none() && id.contains(['*', '?', '[', '{']) => Some(
            globset::Glob::new(id)
                .map_err(|e| Error::new(format!("invalid glob `{id}`: {}", e.kind())))?
                .compile_matcher(),
        ),
        _ => None,
    };
    let wanted: Option<Vec<&str>> = settings.id.as_deref().map(|id| match &former {
        Some(Former::Renamed(new)) => new.clone(),
        Some(Former::Retired(r)) => r.replaced_by.iter().map(String::as_str).collect(),
        None => vec![id],
    });
    let skip = |id: &str| match (&glob, &wanted) {
        (Some(g), _) => !g.is_match(id),
        (None, Some(w)) => !w.contains(&id),
        (None, None) => false,
    };
    if let (Some(f), Some(id)) = (&former, &settings.id) {
        text.push_str(&f.describe(id));
        text.push('\n');
        if wanted.as_ref().is_some_and(Vec::is_empty) {
            return write(out, &text);
        }
        text.push('\n');
    }
    let source = |id: &str| match settings.overridden.contains(id) {
        true => settings.config.clone(),
        false => "built-in".to_string(),
    };
    let policy = Policy::new(rules, &settings.severity);
    let lint_policy = LintPolicy::new(lint_rules, &settings.lint);
    let mut rows = change_rows(rules, &policy, &skip, &source);
    rows.extend(lint_rows(lint_rules, &lint_policy, &skip, &source));
    if let (Some(id), true) = (&settings.id, rows.is_empty()) {
        let mut known: Vec<&str> = rules.rows.iter().map(|r| r.id.as_str()).collect();
        known.extend(lint_rules.rows.iter().map(|r| r.id.as_str()));
        let hint = crate::config::suggest(id, &known)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        let what = if glob.is_some() {
            "no rule id matches"
        } else {
            "unknown rule id"
        };
        return Err(Error::new(format!("{what} `{id}`{hint}")));
    }
    match settings.format {
        RulesFormat::Human => {
            // One rule asked for: the table's line, then what it means, as `ruff rule`
            // explains one (a former id may stand for several).
            let one = settings.id.is_some() && glob.is_none();
            human(&mut text, &rows, false);
            if one {
                let mut ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
                ids.dedup();
                for id in ids {
                    text.push('\n');
                    text.push_str(&explain(rules, lint_rules, id, &settings.config));
                }
            }
        }
        RulesFormat::Json => {
            text = serde_json::to_string_pretty(&rows)
                .map_err(|e| Error::new(format!("cannot write JSON: {e}")))?;
            text.push('\n');
            return write(out, &text);
        }
        RulesFormat::Markdown => return write(out, &markdown(&rows)),
    }
    text.push_str(&format!(
        "\neffective severities include {}\n",
        settings.config
    ));
    write(out, &text)
}

/// What a severity means in a direction, for `rules ID`.
fn meaning(direction: Option<Direction>, severity: Severity) -> &'static str {
    use Direction::{Input, Output};
    match (direction, severity) {
        (Some(Input), Severity::Breaking) => "a call the old schema accepted may now be refused, so existing callers break",
        (Some(Input), Severity::Minor) => "every call the old schema accepted is still accepted; callers gain something they may use",
        (Some(Output), Severity::Breaking) => "the server may now return what the old schema refused, which clients were not written to handle",
        (Some(Output), Severity::Minor) => "every result the new schema allows, the old one allowed too; what clients receive stays within what they handle",
        (Some(_), Severity::Patch) => "no call or result changes validity; what people or models read may",
        (None, Severity::Breaking) => "clients that use what changed break",
        (None, Severity::Minor) => "clients keep working, and gain something they may use",
        (None, Severity::Patch) => "no client's calls or results change; what people or models read may",
        (_, Severity::None) => "not reported",
    }
}

/// `rules ID`: what the rule reports, what its severity means in each direction, and
/// how to change it or accept one change of it. Never its message template.
fn explain(rules: &Rules, lint_rules: &LintRules, id: &str, config: &str) -> String {
    let mut t = String::new();
    let same: Vec<&crate::rules::Rule> = rules.rows.iter().filter(|r| r.id == id).collect();
    if let Some(first) = same.first() {
        t.push_str(&format!("{id}: a change rule\n"));
        for r in &same {
            let when = r
                .when
                .map(|c| format!(" (when the field is {})", words(&format!("{c:?}"))))
                .unwrap_or_default();
            t.push_str(&format!(
                "  Reports: {} {}{when}.\n",
                r.describe_scope(),
                r.event.replace('_', " ")
            ));
            // (A row without help has its message template there: never shown.)
            if !r.help.is_empty() && r.help != r.message {
                t.push_str(&format!("  Why: {}\n", r.help));
            }
            match r.severity {
                Some(s) => t.push_str(&format!("  Default {}: {}.\n", s.word(), meaning(None, s))),
                None => {
                    for (d, name, sev) in [
                        (
                            Direction::Input,
                            "in what a caller sends (inputSchema, prompt arguments)",
                            r.input,
                        ),
                        (
                            Direction::Output,
                            "in what a caller receives (outputSchema)",
                            r.output,
                        ),
                    ] {
                        match sev {
                            Some(s) => t.push_str(&format!(
                                "  Default {} {name}: {}.\n",
                                s.word(),
                                meaning(Some(d), s)
                            )),
                            None => t.push_str(&format!(
                                "  Not reported {name}{}.\n",
                                r.reason
                                    .as_deref()
                                    .map(|w| format!(": {w}"))
                                    .unwrap_or_default()
                            )),
                        }
                    }
                }
            }
            if r.certainty == crate::rules::Certainty::Conservative {
                t.push_str("  Conservative: breaking because nothing proves the change harmless, not because a witness proves it harmful.\n");
            }
            if r.model_facing {
                t.push_str("  Model-facing: profile = \"consumer\" makes it breaking.\n");
            }
        }
        let example = match (first.severity, first.input) {
            (None, Some(_)) => format!(
                "\"{id}\" = {{ input = \"minor\" }}   # or output = ..., or one severity for both"
            ),
            _ => format!("\"{id}\" = \"minor\"   # breaking, minor, patch or none"),
        };
        t.push_str(&self::example(id, false));
        t.push_str(&format!(
            "  Change it in covenant.toml ({config} now):\n      [severity]\n      {example}\n  Accept one change of it instead: `mcp-covenant ignore FINGERPRINT --reason WHY` (`check -v` shows each fingerprint).\n"
        ));
    } else if let Some(r) = lint_rules.rows.iter().find(|r| r.id == id) {
        let checks = words(&format!("{:?}", r.predicate));
        let target = words(&format!("{:?}", r.target));
        let field = r
            .field
            .as_deref()
            .map(|f| format!(" `{f}`"))
            .unwrap_or_default();
        t.push_str(&format!(
            "{id}: a lint rule\n  Checks: {target}{field}: {checks}.\n"
        ));
        // The message as a sentence, its blanks left open.
        let said = crate::rules::render_message(
            &r.message,
            &[("value", "…"), ("name", "…"), ("field", "…"), ("max", "…")],
        );
        t.push_str(&format!(
            "  Says: {said}\n  Default level {}.\n",
            r.level.word()
        ));
        t.push_str(&example(id, true));
        t.push_str(&format!(
            "  Change it in covenant.toml ({config} now):\n      [lint]\n      \"{id}\" = \"info\"   # error, warning, info or none\n"
        ));
    }
    t
}

/// rules/examples.tsv: one example per rule id, generated from the golden cases
/// (tests/it/rule_examples.rs), read only when `rules ID` explains a rule. A line per
/// example, its fields tab-separated in the order of [`Example`]'s (`\t`, `\n` and `\\`
/// escaped; an empty field is absent); `#` starts a comment line. Plain text, not TOML:
/// parsing TOML into a struct cost the binary more than the text itself.
const EXAMPLES: &str = include_str!("../../rules/examples.tsv");

/// A change (or lint finding) of one rule as a golden case reports it, with the
/// fragment at its path on both sides.
struct Example {
    id: String,
    case: String,
    direction: Option<String>,
    severity: String,
    subject: String,
    path: String,
    /// Where the fragments are from when not `path` (the schema holding a composition).
    around: Option<String>,
    before: Option<String>,
    after: Option<String>,
    message: String,
    witness: Option<String>,
}

impl Example {
    /// One line of rules/examples.tsv; `None` for a comment or a malformed line.
    fn parse(line: &str) -> Option<Example> {
        if line.starts_with('#') {
            return None;
        }
        let unescape = |f: &str| {
            let mut out = String::with_capacity(f.len());
            let mut chars = f.chars();
            while let Some(c) = chars.next() {
                match (c, c == '\\') {
                    (_, true) => match chars.next() {
                        Some('t') => out.push('\t'),
                        Some('n') => out.push('\n'),
                        Some(other) => out.push(other),
                        None => {}
                    },
                    (c, false) => out.push(c),
                }
            }
            out
        };
        let f: Vec<String> = line.split('\t').map(unescape).collect();
        let [id, case, direction, severity, subject, path, around, before, after, message, witness] =
            <[String; 11]>::try_from(f).ok()?;
        let some = |s: String| (!s.is_empty()).then_some(s);
        Some(Example {
            id,
            case,
            direction: some(direction),
            severity,
            subject,
            path,
            around: some(around),
            before: some(before),
            after: some(after),
            message,
            witness: some(witness),
        })
    }

    /// Every example of rules/examples.tsv.
    fn all() -> impl Iterator<Item = Example> {
        EXAMPLES.lines().filter_map(Example::parse)
    }
}

/// `id`'s example, as the lines `rules ID` ends its explanation with.
fn example(id: &str, lint: bool) -> String {
    let Some(e) = Example::all().find(|e| e.id == id) else {
        return "  Example: no golden case reports it yet.\n".to_string();
    };
    let t = |s: &str| crate::escape::text(s).into_owned();
    let at = match e.path.as_str() {
        "" => t(&e.subject),
        p => format!("{} → {}", t(&e.subject), t(p)),
    };
    let mut out = format!("  Example (test case golden/{}), at {at}:\n", t(&e.case));
    if let Some(around) = &e.around {
        out.push_str(&format!(
            "      (the schema around it, at {}:)\n",
            t(around)
        ));
    }
    let absent = if lint { "" } else { "absent" };
    for (side, value) in [("before:", &e.before), ("after: ", &e.after)] {
        let side = if lint { "lockfile:" } else { side };
        match value.as_deref() {
            Some(v) => out.push_str(&format!("      {side} {}\n", t(v))),
            None if !lint => out.push_str(&format!("      {side} ({absent})\n")),
            None => {}
        }
    }
    let output = e.direction.as_deref() == Some("output");
    let place = match e.direction.as_deref() {
        Some("input") => " in what a caller sends",
        Some("output") => " in what a caller receives",
        _ => "",
    };
    out.push_str(&format!(
        "      reported {}{place}: {}\n",
        t(&e.severity),
        t(&e.message)
    ));
    if let Some(w) = &e.witness {
        out.push_str(&match output {
            true => format!(
                "      e.g. the server may now return {}, which the old schema rejects\n",
                t(w)
            ),
            _ => format!("      e.g. {} was accepted, now rejected\n", t(w)),
        });
    }
    out
}

/// The comparators as a markdown table (CONTRIBUTING.md's is generated from it).
fn comparators_markdown() -> String {
    let mut text = String::from("| comparator | compares | events |\n|---|---|---|\n");
    for c in Comparator::ALL {
        let events: Vec<String> = c.events().iter().map(|e| format!("`{e}`")).collect();
        text.push_str(&format!(
            "| `{}` | {} | {} |\n",
            c.word(),
            c.compares(),
            events.join(", ")
        ));
    }
    text
}

/// The change rules' rows, with their severities under `policy`.
fn change_rows(
    rules: &Rules,
    policy: &Policy<'_>,
    skip: &dyn Fn(&str) -> bool,
    source: &dyn Fn(&str) -> String,
) -> Vec<Row> {
    let sev = |s: Option<Severity>| s.map(Severity::word).unwrap_or("-");
    let mut rows = Vec::new();
    for (i, r) in rules.rows.iter().enumerate() {
        if skip(&r.id) {
            continue;
        }
        let (default, effective) = if r.severity.is_some() {
            (
                sev(r.severity).to_string(),
                policy.severity(i, None).word().to_string(),
            )
        } else {
            let eff = |d| {
                if r.default_severity(Some(d)).is_some() || r.severity.is_some() {
                    policy.severity(i, Some(d)).word()
                } else {
                    "-"
                }
            };
            (
                format!("{}/{}", sev(r.input), sev(r.output)),
                format!("{}/{}", eff(Direction::Input), eff(Direction::Output)),
            )
        };
        rows.push(Row {
            id: r.id.clone(),
            kind: "change",
            watches: format!("{} {}", r.describe_scope(), r.event),
            default,
            effective,
            source: source(&r.id),
            help: r.help.clone(),
        });
    }
    rows
}

/// The lint rules' rows, with their levels under `policy`.
fn lint_rows(
    lint_rules: &LintRules,
    policy: &LintPolicy<'_>,
    skip: &dyn Fn(&str) -> bool,
    source: &dyn Fn(&str) -> String,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (i, r) in lint_rules.rows.iter().enumerate() {
        if skip(&r.id) {
            continue;
        }
        let target = words(&format!("{:?}", r.target));
        rows.push(Row {
            id: r.id.clone(),
            kind: "lint",
            watches: format!("lint: {target} {}", words(&format!("{:?}", r.predicate))),
            default: r.level.word().to_string(),
            effective: policy.level(i).word().to_string(),
            source: source(&r.id),
            help: r.message.clone(),
        });
    }
    rows
}

/// The table: every column as wide as its widest cell; with one id, its help under it.
fn human(text: &mut String, rows: &[Row], with_help: bool) {
    let head = [
        "ID",
        "WATCHES",
        "DEFAULT in/out",
        "EFFECTIVE in/out",
        "SOURCE",
    ]
    .map(String::from);
    let cells: Vec<([String; 5], Option<&str>)> = std::iter::once((head, None))
        .chain(rows.iter().map(|r| {
            (
                [
                    r.id.clone(),
                    r.watches.clone(),
                    r.default.clone(),
                    r.effective.clone(),
                    r.source.clone(),
                ],
                with_help.then_some(r.help.as_str()),
            )
        }))
        .collect();
    let mut widths = [0usize; 5];
    for (row, _) in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for (row, help) in &cells {
        let mut line = String::new();
        for (k, cell) in row.iter().enumerate() {
            if k + 1 < row.len() {
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
}

/// docs/rules.md: the change rules and the lint rules, one table each, with the
/// defaults (never a covenant.toml's effective severities: the page is the same for
/// everyone).
fn markdown(rows: &[Row]) -> String {
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut md = String::from(
        "# Rules\n\n\
         <!-- Generated by `mcp-covenant rules --format markdown`; tests/it/readme.rs fails when it is stale. -->\n\n\
         Every change mcp-covenant reports and every lint finding has a rule id. A change\n\
         rule's severity is per direction: *in* is a schema a caller sends (inputSchema,\n\
         prompt arguments), *out* one a caller receives (outputSchema); `-` means the rule\n\
         does not apply in that direction. covenant.toml's `[severity]` and `[lint]` change\n\
         them (`mcp-covenant help config`); `mcp-covenant rules` shows the effective ones, and\n\
         `mcp-covenant rules ID` (or a glob, `'schema.enum.*'`) explains a rule.\n\n\
         ## Change rules\n\n\
         | id | watches | default in/out | meaning |\n|---|---|---|---|\n",
    );
    for r in rows.iter().filter(|r| r.kind == "change") {
        md.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.id,
            cell(&r.watches),
            r.default,
            cell(&r.help)
        ));
    }
    md.push_str(
        "\n## Lint rules\n\n| id | checks | default level | finding |\n|---|---|---|---|\n",
    );
    for r in rows.iter().filter(|r| r.kind == "lint") {
        md.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.id,
            cell(r.watches.trim_start_matches("lint: ")),
            r.default,
            cell(&r.help)
        ));
    }
    md
}

fn write(out: &mut dyn WriteColor, text: &str) -> Result<u8> {
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::new(format!("cannot write: {e}")))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::explain;
    use crate::lint::LintRules;
    use crate::rules::Rules;

    #[test]
    fn one_rule_is_explained_per_direction_and_never_by_its_template() {
        let (rules, lint) = (Rules::embedded().unwrap(), LintRules::embedded().unwrap());
        let t = explain(&rules, &lint, "schema.enum.value.removed", "covenant.toml");
        assert!(t.contains("Default breaking in what a caller sends"), "{t}");
        assert!(t.contains("Default minor in what a caller receives"), "{t}");
        assert!(
            t.contains("\"schema.enum.value.removed\" = { input = \"minor\" }"),
            "{t}"
        );
        assert!(t.contains("  Example (test case golden/"), "{t}");
        assert!(t.contains("was accepted, now rejected"), "{t}");
        // Every rule, change or lint: something is said, and no `{value}` blank.
        for id in rules
            .rows
            .iter()
            .map(|r| r.id.as_str())
            .chain(lint.rows.iter().map(|r| r.id.as_str()))
        {
            let t = explain(&rules, &lint, id, "covenant.toml");
            assert!(t.starts_with(&format!("{id}: a ")), "{t}");
            assert!(t.contains("  Example"), "{t}");
            for blank in [
                "{value}", "{before}", "{after}", "{name}", "{field}", "{max}",
            ] {
                assert!(!t.contains(blank), "{id}: {t}");
            }
        }
    }

    /// rules/examples.tsv reads, every line, and names only rules that exist.
    #[test]
    fn every_example_is_of_a_rule() {
        let (rules, lint) = (Rules::embedded().unwrap(), LintRules::embedded().unwrap());
        let lines = super::EXAMPLES.lines().filter(|l| !l.starts_with('#'));
        assert_eq!(
            lines.count(),
            super::Example::all().count(),
            "a malformed line"
        );
        let all: Vec<super::Example> = super::Example::all().collect();
        assert!(all.len() > 250, "{}", all.len());
        for e in &all {
            assert!(
                rules.rows.iter().any(|r| r.id == e.id) || lint.rows.iter().any(|r| r.id == e.id),
                "{}",
                e.id
            );
        }
    }
}
