//! `--format markdown` (a pull-request comment) and `--format github` (workflow commands).

use super::{bump_word, Line, Report};
use crate::rules::Severity;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// `#### Title (n)` and a table of (subject, path, text, code), nothing when empty.
pub(crate) fn table(out: &mut String, title: &str, what: &str, rows: &[Line<'_>]) {
    if rows.is_empty() {
        return;
    }
    out.push_str(&format!(
        "\n#### {title} ({})\n\n| Subject | Path | {what} | Code |\n|---|---|---|---|\n",
        rows.len()
    ));
    for (subject, path, text, code) in rows {
        out.push_str(&format!(
            "| `{}` | {} | {} | `{code}` |\n",
            cell(subject),
            path.map(|p| format!("`{}`", cell(p))).unwrap_or_default(),
            cell(text),
        ));
    }
}

/// One GitHub workflow command: `::level file=..,line=..,endLine=..,title=..::message`.
pub(crate) fn workflow_command(
    out: &mut String,
    level: &str,
    location: Option<String>,
    (subject, path, message, code): Line<'_>,
) {
    let location = location.map(|l| format!("{l},")).unwrap_or_default();
    out.push_str(&format!(
        "::{level} {location}title={}::{}: {} [{code}]\n",
        escape_property(&format!("mcp-covenant {code}")),
        escape_data(&super::place(subject, path)),
        escape_data(message),
    ));
}

/// `file=..,line=..,endLine=..` for an anchor.
pub(crate) fn anchor_location(a: &super::anchor::Anchor) -> String {
    format!(
        "file={},line={},endLine={}",
        escape_property(&a.uri),
        a.start,
        a.end.max(a.start)
    )
}

pub fn to_string(report: &Report<'_>) -> String {
    let mut out = String::new();
    let n = report.changes.len();
    let bump = report.bump();
    out.push_str("### mcp-covenant\n\n");
    if n == 0 {
        out.push_str("No interface changes: **no version bump required**.\n");
    } else {
        out.push_str(&format!(
            "**{n} change(s)**: required version bump **{}** ({} breaking, {} minor, {} patch)\n",
            bump_word(bump),
            report.count(Severity::Breaking),
            report.count(Severity::Minor),
            report.count(Severity::Patch)
        ));
    }
    if !report.ignored.is_empty() {
        out.push_str(&format!(
            "\n_{} change(s) ignored by {}._\n",
            report.ignored.len(),
            report.config_name
        ));
    }
    for (severity, title) in [
        (Severity::Breaking, "Breaking"),
        (Severity::Minor, "Minor"),
        (Severity::Patch, "Patch"),
    ] {
        let rows: Vec<Line<'_>> = report
            .changes
            .iter()
            .filter(|c| c.severity == severity)
            .map(|c| {
                (
                    c.subject.as_str(),
                    c.path.as_deref(),
                    c.message.as_str(),
                    c.code.as_str(),
                )
            })
            .collect();
        table(&mut out, title, "Change", &rows);
    }
    witnesses(&mut out, report);
    out
}

/// A collapsed list of the witnesses: for each proven break, the instance that shows it.
fn witnesses(out: &mut String, report: &Report<'_>) {
    let proven: Vec<_> = report
        .changes
        .iter()
        .filter_map(|c| Some((c, super::witness_sentence(c)?)))
        .collect();
    if proven.is_empty() {
        return;
    }
    out.push_str(&format!(
        "\n<details><summary>Witnesses ({}): instances that prove each break</summary>\n\n",
        proven.len()
    ));
    for (c, sentence) in proven {
        let place = super::place(&c.subject, c.path.as_deref());
        out.push_str(&format!("- {} `{}`\n\n", code_span(&place), c.code));
        out.push_str(&fenced(&sentence));
    }
    out.push_str("</details>\n");
}

/// `text` as an inline code span that no backtick inside can close early.
fn code_span(text: &str) -> String {
    let fence = "`".repeat(longest_run(text, '`') + 1);
    let text = text.replace(['\n', '\r'], " ");
    format!("{fence} {text} {fence}")
}

/// `text` as a fenced code block whose fence is longer than any backtick run inside.
fn fenced(text: &str) -> String {
    let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
    format!(
        "  {fence}\n  {}\n  {fence}\n\n",
        text.replace(['\n', '\r'], " ")
    )
}

fn longest_run(text: &str, ch: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == ch { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// GitHub workflow-command escaping of a message (`%`, CR, LF).
pub(crate) fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub workflow-command escaping of a property value (also `:` and `,`).
pub(crate) fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

pub fn github(report: &Report<'_>) -> String {
    let mut out = String::new();
    for (i, c) in report.changes.iter().enumerate() {
        let level = match c.severity {
            Severity::Breaking => "error",
            Severity::Minor => "warning",
            _ => "notice",
        };
        let location = match report.anchors.get(i) {
            Some(a) => anchor_location(a),
            None => format!("file={}", escape_property(&report.baseline)),
        };
        let line = (
            c.subject.as_str(),
            c.path.as_deref(),
            c.message.as_str(),
            c.code.as_str(),
        );
        workflow_command(&mut out, level, Some(location), line);
    }
    out
}
