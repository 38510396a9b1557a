//! Lint reports: human (`mcp-covenant lint: 2 finding(s) (0 error, 1 warning, 1 info)`)
//! and JSON.

use std::io;

use serde::Serialize;
use termcolor::{Color, WriteColor};

use super::{write_section, write_str, Line};
use crate::lint::{Finding, Level};
use crate::lockfile::COVENANT_VERSION;
use crate::path::Path;
use crate::subject::Subject;

pub fn count(findings: &[Finding], level: Level) -> usize {
    findings.iter().filter(|f| f.level == level).count()
}

/// A level's heading and colour. Lint lines carry no marker glyph: the heading says the
/// level, as in the published sample.
fn style(level: Level) -> (&'static str, Color) {
    match level {
        Level::Error => ("ERROR", Color::Red),
        Level::Warning => ("WARNING", Color::Yellow),
        _ => ("INFO", Color::Cyan),
    }
}

pub fn write_human(findings: &[Finding], out: &mut dyn WriteColor) -> io::Result<()> {
    write_str(
        out,
        &format!(
            "mcp-covenant lint: {} finding(s) ({} error, {} warning, {} info)\n",
            findings.len(),
            count(findings, Level::Error),
            count(findings, Level::Warning),
            count(findings, Level::Info)
        ),
    )?;
    if !findings.is_empty() {
        write_str(out, "\n")?;
    }
    for level in [Level::Error, Level::Warning, Level::Info] {
        let (title, color) = style(level);
        let lines: Vec<Line<'_>> = findings
            .iter()
            .filter(|f| f.level == level)
            .map(line_of)
            .collect();
        write_section(out, title, "", color, &lines)?;
    }
    Ok(())
}

#[derive(Serialize)]
struct Counts {
    error: usize,
    warning: usize,
    info: usize,
}

#[derive(Serialize)]
struct JsonFinding<'a> {
    code: &'a str,
    level: &'a str,
    subject: &'a Subject,
    path: Option<&'a Path>,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonLint<'a> {
    covenant_version: &'a str,
    counts: Counts,
    findings: Vec<JsonFinding<'a>>,
    report_version: u32,
}

pub fn to_json(findings: &[Finding]) -> String {
    let doc = JsonLint {
        covenant_version: COVENANT_VERSION,
        counts: Counts {
            error: count(findings, Level::Error),
            warning: count(findings, Level::Warning),
            info: count(findings, Level::Info),
        },
        findings: findings
            .iter()
            .map(|f| JsonFinding {
                code: &f.code,
                level: f.level.word(),
                subject: &f.subject,
                path: f.path.as_ref(),
                message: &f.message,
            })
            .collect(),
        report_version: super::REPORT_VERSION,
    };
    let mut text = super::escape::json(serde_json::to_string_pretty(&doc).unwrap_or_default());
    text.push('\n');
    text
}

/// `lint --format markdown`: the counts, then a table per level.
pub fn to_markdown(findings: &[Finding]) -> String {
    to_markdown_within(findings, super::MARKDOWN_BUDGET)
}

/// `lint --format markdown` within `budget` characters (several servers share one).
pub fn to_markdown_within(findings: &[Finding], budget: usize) -> String {
    let mut doc = super::markdown::Doc::new(
        format!(
            "### mcp-covenant lint\n\n**{} finding(s)**: {} error, {} warning, {} info\n",
            findings.len(),
            count(findings, Level::Error),
            count(findings, Level::Warning),
            count(findings, Level::Info)
        ),
        budget,
    );
    for (level, title) in [
        (Level::Error, "Errors"),
        (Level::Warning, "Warnings"),
        (Level::Info, "Info"),
    ] {
        let rows: Vec<Line<'_>> = findings
            .iter()
            .filter(|f| f.level == level)
            .map(line_of)
            .collect();
        super::markdown::table(&mut doc, title, "Finding", &vec![1; rows.len()], &rows);
    }
    doc.finish("finding(s)")
}

/// `lint --format github`: one workflow command per finding.
pub fn to_github(findings: &[Finding], anchors: &[super::anchor::Anchor]) -> String {
    let mut out = String::new();
    for (i, f) in findings.iter().enumerate() {
        let level = match f.level {
            Level::Error => "error",
            Level::Warning => "warning",
            _ => "notice",
        };
        let location = anchors.get(i).map(super::markdown::anchor_location);
        super::markdown::workflow_command(&mut out, level, location, line_of(f));
    }
    out
}

fn line_of(f: &Finding) -> Line<'_> {
    (
        f.subject.to_string().into(),
        f.path.as_ref().map(|p| p.to_string().into()),
        f.message.as_str(),
        f.code.as_str(),
    )
}
