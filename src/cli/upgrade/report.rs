//! `upgrade`'s report: a table for people (server, pinned, compatible, latest, verdict;
//! the breaking changes under a breaking row), one JSON object
//! (docs/schemas/upgrade.schema.json), or a pull-request comment. Every string a file,
//! a registry or a server wrote goes through `escape` for its channel.

use std::io;

use serde::Serialize;
use serde_json::Value;
use termcolor::{Color, ColorSpec, WriteColor};

use super::{Row, Status, Upgrade};
use crate::cli::args::UpgradeFormat;
use crate::diff::Change;
use crate::escape;
use crate::rules::{Certainty, Severity};

/// The shape of the JSON report: it changes only when a key is removed or its meaning
/// changes, not when one is added.
pub(super) const REPORT_VERSION: u32 = 1;

/// The longest server string shown in a table cell.
const CELL_MAX: usize = 60;
/// The breaking changes listed under one row (JSON lists them all).
const LISTED_MAX: usize = 50;

pub(super) fn render(
    r: &Upgrade,
    format: UpgradeFormat,
    out: &mut dyn WriteColor,
) -> io::Result<()> {
    match format {
        UpgradeFormat::Human => human(r, out),
        UpgradeFormat::Json => out.write_all(json(r).as_bytes()),
        UpgradeFormat::Markdown => out.write_all(markdown(r).as_bytes()),
    }
}

fn bump_word(s: Severity) -> &'static str {
    crate::report::bump_word(s)
}

/// What a row comes to, in a word or two.
fn verdict(row: &Row) -> String {
    match &row.status {
        Status::UpToDate => "up to date".into(),
        Status::NotChecked(_) => "not checked".into(),
        Status::Failed(_) => "error".into(),
        Status::Checked => match row.bump() {
            Some(b) => {
                let mut w = bump_word(b).to_string();
                if row.fails() {
                    w.push_str(" (fails)");
                }
                w
            }
            None => "error".into(),
        },
    }
}

fn headline(r: &Upgrade) -> String {
    let packages = r
        .rows
        .iter()
        .filter(|x| !matches!(x.status, Status::NotChecked(_)) || x.package.is_some())
        .count();
    let failing: Vec<&str> = r
        .rows
        .iter()
        .filter(|x| x.fails())
        .map(|x| x.name.as_str())
        .collect();
    let level = r.fail_on.name();
    let what = match &r.baseline_rev {
        Some(rev) => format!(
            "{} pin(s) moved since {} ({} unchanged)",
            packages,
            escape::text(rev),
            r.unchanged
        ),
        None => format!("{packages} package server(s)"),
    };
    let gate = match (failing.is_empty(), &r.baseline_rev) {
        (true, _) => format!("nothing fails at --fail-on {level}"),
        (false, Some(_)) => format!(
            "moving {} fails at --fail-on {level}",
            escape::truncated(&failing.join(", "), 200)
        ),
        (false, None) => format!(
            "moving {} to latest fails at --fail-on {level}",
            escape::truncated(&failing.join(", "), 200)
        ),
    };
    format!("mcp-covenant upgrade: {what} — {gate}")
}

fn cell(s: Option<&str>) -> String {
    match s {
        Some(s) => escape::truncated(s, CELL_MAX),
        None => "-".into(),
    }
}

/// The table's cells for a row.
fn cells(r: &Upgrade, row: &Row) -> Vec<String> {
    let pinned = match (&row.pinned, row.unpinned, &row.current) {
        (Some(p), _, _) => cell(Some(p)),
        (None, true, Some(c)) => format!("unpinned ({})", cell(Some(c))),
        (None, true, None) => "unpinned".into(),
        _ => "-".into(),
    };
    let mut v = vec![
        cell(Some(&row.name)),
        cell(Some(&row.source)),
        cell(row.package.as_deref()),
    ];
    match &r.baseline_rev {
        Some(_) => {
            v.push(cell(row.moved_from.as_deref()));
            v.push(match (&row.pinned, &row.current) {
                (Some(p), _) => cell(Some(p)),
                (None, Some(c)) => format!("unpinned ({})", cell(Some(c))),
                _ => "-".into(),
            });
        }
        None => {
            v.push(pinned);
            v.push(cell(row.compatible.as_deref()));
            v.push(cell(row.latest.as_deref()));
        }
    }
    v.push(verdict(row));
    v
}

fn human(r: &Upgrade, out: &mut dyn WriteColor) -> io::Result<()> {
    writeln!(out, "{}", headline(r))?;
    if r.rows.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let head: Vec<&str> = match r.baseline_rev {
        Some(_) => vec!["SERVER", "SOURCE", "PACKAGE", "FROM", "TO", "VERDICT"],
        None => vec![
            "SERVER",
            "SOURCE",
            "PACKAGE",
            "PINNED",
            "COMPATIBLE",
            "LATEST",
            "VERDICT",
        ],
    };
    let rows: Vec<Vec<String>> = r.rows.iter().map(|row| cells(r, row)).collect();
    let mut widths: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let last = cells.len() - 1;
        let mut s = String::from("  ");
        for (i, c) in cells.iter().enumerate() {
            s.push_str(c);
            if i < last {
                s.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        s
    };
    out.set_color(ColorSpec::new().set_bold(true))?;
    write!(
        out,
        "{}",
        line(&head.iter().map(|h| h.to_string()).collect::<Vec<_>>())
    )?;
    out.reset()?;
    writeln!(out)?;
    for (row, cells) in r.rows.iter().zip(&rows) {
        let color = match (&row.status, row.bump()) {
            (Status::Failed(_), _) => Some(Color::Red),
            (_, Some(Severity::Breaking)) => Some(Color::Red),
            (_, Some(Severity::Minor)) => Some(Color::Yellow),
            _ => None,
        };
        out.set_color(ColorSpec::new().set_fg(color))?;
        write!(out, "{}", line(cells))?;
        out.reset()?;
        writeln!(out)?;
        let mut details: Vec<String> = Vec::new();
        match &row.status {
            Status::NotChecked(why) => details.push(format!("- {}", escape::text(why))),
            Status::Failed(why) => details.push(format!("- {}", escape::truncated(why, 500))),
            _ => {}
        }
        if let Some(o) = &row.outcome {
            let breaking: Vec<&Change> = o
                .changes
                .iter()
                .filter(|c| c.severity == Severity::Breaking)
                .collect();
            for c in breaking.iter().take(LISTED_MAX) {
                details.push(format!("x {}", change_text(c)));
            }
            if breaking.len() > LISTED_MAX {
                details.push(format!(
                    "… and {} more breaking change(s) (--format json lists them)",
                    breaking.len() - LISTED_MAX
                ));
            }
        }
        for n in &row.notes {
            details.push(format!("! {}", escape::text(n)));
        }
        for d in details {
            writeln!(out, "      {d}")?;
        }
    }
    Ok(())
}

/// `subject → path — message  [code]`, escaped.
fn change_text(c: &Change) -> String {
    let message = match c.certainty {
        Certainty::Exact => c.message.clone(),
        Certainty::Conservative => format!("{} (conservative)", c.message),
    };
    format!(
        "{} — {}  [{}]",
        escape::text(&crate::report::place_of(c)),
        escape::text(&message),
        c.code
    )
}

#[derive(Serialize)]
struct JsonReport<'a> {
    report_version: u32,
    covenant_version: &'a str,
    baseline_rev: Option<&'a str>,
    fail_on: &'a str,
    fails: bool,
    servers: Vec<JsonServer<'a>>,
}

#[derive(Serialize)]
struct JsonServer<'a> {
    name: &'a str,
    source: &'a str,
    package: Option<&'a str>,
    pinned: Option<&'a str>,
    latest: Option<&'a str>,
    latest_required_bump: Option<&'a str>,
    compatible: Option<&'a str>,
    unpinned: bool,
    changes: Vec<JsonChange<'a>>,
    status: &'a str,
    reason: Option<&'a str>,
    current: Option<&'a str>,
    moved_from: Option<&'a str>,
    required_bump: Option<&'a str>,
    fails: bool,
    notes: &'a [String],
}

#[derive(Serialize)]
struct JsonChange<'a> {
    code: &'a str,
    severity: &'a str,
    subject: String,
    path: Option<String>,
    direction: Option<&'a str>,
    message: &'a str,
    before: &'a Option<Value>,
    after: &'a Option<Value>,
    fingerprint: &'a str,
    certainty: &'a str,
}

fn json(r: &Upgrade) -> String {
    let level = r.fail_on.name();
    let doc = JsonReport {
        report_version: REPORT_VERSION,
        covenant_version: crate::lockfile::COVENANT_VERSION,
        baseline_rev: r.baseline_rev.as_deref(),
        fail_on: level,
        fails: r.rows.iter().any(Row::fails),
        servers: r
            .rows
            .iter()
            .map(|row| JsonServer {
                name: &row.name,
                source: &row.source,
                package: row.package.as_deref(),
                pinned: row.pinned.as_deref(),
                latest: row.latest.as_deref(),
                latest_required_bump: match &r.baseline_rev {
                    Some(_) => None,
                    None => row.latest_bump.map(|b| b.bump()),
                },
                compatible: row.compatible.as_deref(),
                unpinned: row.unpinned,
                changes: row
                    .outcome
                    .iter()
                    .flat_map(|o| o.changes.iter())
                    .map(|c| JsonChange {
                        code: &c.code,
                        severity: c.severity.word(),
                        subject: c.subject.to_string(),
                        path: c.path.as_ref().map(|p| p.to_string()),
                        direction: c.direction.map(|d| d.word()),
                        message: &c.message,
                        before: &c.before,
                        after: &c.after,
                        fingerprint: &c.fingerprint,
                        certainty: c.certainty.word(),
                    })
                    .collect(),
                status: match row.status {
                    Status::Checked => "checked",
                    Status::UpToDate => "up_to_date",
                    Status::NotChecked(_) => "not_checked",
                    Status::Failed(_) => "error",
                },
                reason: match &row.status {
                    Status::NotChecked(w) | Status::Failed(w) => Some(w),
                    _ => None,
                },
                current: row.current.as_deref(),
                moved_from: row.moved_from.as_deref(),
                required_bump: row.bump().map(|b| b.bump()),
                fails: row.fails(),
                notes: &row.notes,
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    escape::json(text)
}

/// A pull-request comment: the headline, a table, the breaking changes per server.
fn markdown(r: &Upgrade) -> String {
    let code = |s: Option<&str>| match s {
        Some(s) => escape::code_span(s, CELL_MAX, true),
        None => "–".into(),
    };
    let mut s = format!("### {}\n\n", escape::md_text(&headline(r), 400, false));
    match r.baseline_rev {
        Some(_) => s.push_str("| Server | Source | Package | From | To | Verdict |\n|---|---|---|---|---|---|\n"),
        None => s.push_str("| Server | Source | Package | Pinned | Compatible | Latest | Verdict |\n|---|---|---|---|---|---|---|\n"),
    }
    for row in &r.rows {
        let pinned = match (&row.pinned, row.unpinned) {
            (Some(p), _) => code(Some(p)),
            (None, true) => format!("unpinned ({})", code(row.current.as_deref())),
            _ => "–".into(),
        };
        let mut cells = vec![
            code(Some(&row.name)),
            code(Some(&row.source)),
            code(row.package.as_deref()),
        ];
        match r.baseline_rev {
            Some(_) => {
                cells.push(code(row.moved_from.as_deref()));
                cells.push(match &row.pinned {
                    Some(p) => code(Some(p)),
                    None => format!("unpinned ({})", code(row.current.as_deref())),
                });
            }
            None => {
                cells.push(pinned);
                cells.push(code(row.compatible.as_deref()));
                cells.push(code(row.latest.as_deref()));
            }
        }
        cells.push(escape::md_text(&verdict(row), 40, true));
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    let mut budget = 50_000usize;
    for row in &r.rows {
        let mut lines = Vec::new();
        if let Some(o) = &row.outcome {
            for c in o
                .changes
                .iter()
                .filter(|c| c.severity == Severity::Breaking)
            {
                lines.push(format!(
                    "- {} {} {}",
                    code(Some(&crate::report::place_of(c))),
                    escape::md_text(&c.message, 200, false),
                    code(Some(&c.code))
                ));
            }
        }
        match &row.status {
            Status::NotChecked(w) | Status::Failed(w) => {
                lines.push(format!("- {}", escape::md_text(w, 300, false)))
            }
            _ => {}
        }
        for n in &row.notes {
            lines.push(format!("- {}", escape::md_text(n, 300, false)));
        }
        if lines.is_empty() {
            continue;
        }
        let mut piece = format!("\n**{}**\n\n", code(Some(&row.name)));
        let mut cut = 0;
        for l in lines {
            if piece.len() + l.len() + 1 > budget {
                cut += 1;
                continue;
            }
            piece.push_str(&l);
            piece.push('\n');
        }
        if cut > 0 {
            piece.push_str(&format!(
                "- _{cut} more line(s) not shown; `--format json` lists everything._\n"
            ));
        }
        budget = budget.saturating_sub(piece.len());
        s.push_str(&piece);
    }
    s
}
