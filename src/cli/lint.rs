//! `lint`: one surface (a live server, a lockfile) checked for what makes it hard to use
//! well; with `[[server]]` entries, each server and the collisions across them.

use std::path::Path;

use termcolor::WriteColor;

use super::args::LintFormat;
use super::output::{emit, for_each_server};
use super::settings::LintSettings;
use super::source::{capture, Live, LockSource};
use crate::error::Result;
use crate::lint::{self, LintRules};
use crate::lockfile;
use crate::policy::LintPolicy;
use crate::report::{self, anchor};

pub(super) fn run(
    rules: &LintRules,
    settings: LintSettings<'_>,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    // covenant.toml's `[lint]` levels over the table's.
    let levels = LintPolicy::new(rules, &settings.config.lint);
    let fails = |findings: &[lint::Finding]| -> bool {
        settings
            .fail_on
            .is_some_and(|threshold| findings.iter().any(|f| f.level <= threshold))
    };
    let single = match settings.servers.as_deref() {
        None => Some(Live::Cli),
        Some([one]) => Some(Live::Server(one)),
        Some(_) => None,
    };
    if let Some(live) = single {
        let from = settings
            .from
            .as_deref()
            .map(|p| LockSource::from_arg_in(p, &settings.source, settings.config))
            .transpose()?;
        let lock = match &from {
            Some(source) => source.read_lenient()?,
            None => capture(&live, &settings.source)?.build()?,
        };
        let findings = lint::lint_lockfile(&levels, &lock);
        let anchors = match (&from, settings.format) {
            (Some(source), LintFormat::Github | LintFormat::Sarif) => {
                anchor::lint_anchors(&lock, Path::new(&source.uri()), &findings)
            }
            _ => Vec::new(),
        };
        let text = lint_text(rules, &findings, &anchors, settings.format);
        let human = |o: &mut dyn WriteColor| report::lint::write_human(&findings, o);
        match text {
            None => emit(out, settings.output.as_deref(), &human, &human)?,
            Some(text) => emit(
                out,
                settings.output.as_deref(),
                &|o| o.write_all(text.as_bytes()),
                &human,
            )?,
        }
        return Ok(u8::from(fails(&findings)));
    }
    let servers = settings.servers.as_deref().unwrap_or_default();
    let (mut code, captured) = for_each_server(servers, |s| {
        capture(&Live::Server(s), &settings.source)?.build()
    });
    let mut groups: Vec<(String, Option<Vec<lint::Finding>>)> = captured
        .iter()
        .map(|(name, lock)| {
            let findings = lock.as_ref().map(|l| lint::lint_lockfile(&levels, l));
            (format!("server {name}"), findings)
        })
        .collect();
    let surfaces: Vec<(&str, &lockfile::Surface)> = captured
        .iter()
        .filter_map(|(name, lock)| Some((name.as_str(), &lock.as_ref()?.surface)))
        .collect();
    groups.push((
        "across servers".to_string(),
        Some(lint::collisions(&levels, &surfaces)),
    ));
    for (_, findings) in &groups {
        if let Some(f) = findings {
            code = code.max(u8::from(fails(f)));
        }
    }
    emit(
        out,
        settings.output.as_deref(),
        &|o| render_lint_grouped(rules, &groups, settings.format, o),
        &|o| render_lint_grouped(rules, &groups, LintFormat::Human, o),
    )?;
    Ok(code)
}

/// A lint report in `format` as text (`None`: human, written with colour instead).
fn lint_text(
    rules: &LintRules,
    findings: &[lint::Finding],
    anchors: &[anchor::Anchor],
    format: LintFormat,
) -> Option<String> {
    match format {
        LintFormat::Human => None,
        LintFormat::Json => Some(report::lint::to_json(findings)),
        LintFormat::Markdown => Some(report::lint::to_markdown(findings)),
        LintFormat::Github => Some(report::lint::to_github(findings, anchors)),
        LintFormat::Sarif => Some(report::sarif::lint(rules, findings, anchors)),
    }
}

/// Several servers' lint reports, plus the findings across them (name collisions): a
/// heading per group (human, markdown), one after the other (github), `{"groups":
/// [{"name", "report"}]}` (json), one SARIF run per group.
fn render_lint_grouped(
    rules: &LintRules,
    groups: &[(String, Option<Vec<lint::Finding>>)],
    format: LintFormat,
    out: &mut dyn WriteColor,
) -> std::io::Result<()> {
    match format {
        LintFormat::Human | LintFormat::Markdown | LintFormat::Github => {
            for (i, (name, findings)) in groups.iter().enumerate() {
                let heading = match format {
                    LintFormat::Human => {
                        format!("{}== {name}\n", if i > 0 { "\n" } else { "" })
                    }
                    LintFormat::Markdown => format!("## {name}\n\n"),
                    _ => String::new(),
                };
                out.set_color(termcolor::ColorSpec::new().set_bold(true))?;
                out.write_all(heading.as_bytes())?;
                out.reset()?;
                match (
                    findings,
                    lint_text(rules, findings.as_deref().unwrap_or(&[]), &[], format),
                ) {
                    (None, _) if format == LintFormat::Github => {}
                    (None, _) => out.write_all(b"could not be linted: see the error above\n")?,
                    (Some(f), None) => report::lint::write_human(f, out)?,
                    // One comment: the groups share GitHub's size limit.
                    (Some(f), Some(_)) if format == LintFormat::Markdown => out.write_all(
                        report::lint::to_markdown_within(f, report::MARKDOWN_BUDGET / groups.len())
                            .as_bytes(),
                    )?,
                    (Some(_), Some(text)) => out.write_all(text.as_bytes())?,
                }
            }
        }
        LintFormat::Json => {
            let mut doc = format!(
                "{{\n  \"covenant_version\": {},\n  \"groups\": [",
                serde_json::json!(lockfile::COVENANT_VERSION)
            );
            for (i, (name, findings)) in groups.iter().enumerate() {
                doc.push_str(if i > 0 { ",\n    " } else { "\n    " });
                let name = serde_json::json!(name);
                match findings {
                    Some(f) => doc.push_str(&format!(
                        "{{ \"name\": {name}, \"report\": {} }}",
                        report::lint::to_json(f).trim_end()
                    )),
                    None => doc.push_str(&format!("{{ \"name\": {name}, \"error\": true }}")),
                }
            }
            doc.push_str(&format!(
                "\n  ],\n  \"report_version\": {}\n}}\n",
                report::REPORT_VERSION
            ));
            out.write_all(doc.as_bytes())?;
        }
        LintFormat::Sarif => {
            let docs = groups.iter().filter_map(|(name, findings)| {
                let text = report::sarif::lint(rules, findings.as_ref()?, &[]);
                Some((name.replace(' ', "-"), text))
            });
            out.write_all(report::grouped::merge_sarif(docs)?.as_bytes())?;
        }
    }
    Ok(())
}
