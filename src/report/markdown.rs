//! `--format markdown` (a pull-request comment) and `--format github` (workflow commands).

use super::{bump_word, Report};
use crate::rules::Severity;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
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
        let rows: Vec<_> = report
            .changes
            .iter()
            .filter(|c| c.severity == severity)
            .collect();
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n#### {title} ({})\n\n| Subject | Path | Change | Code |\n|---|---|---|---|\n",
            rows.len()
        ));
        for c in rows {
            out.push_str(&format!(
                "| `{}` | {} | {} | `{}` |\n",
                cell(&c.subject),
                c.path
                    .as_deref()
                    .map(|p| format!("`{}`", cell(p)))
                    .unwrap_or_default(),
                cell(&c.message),
                c.code
            ));
        }
    }
    out
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
        let place = super::place(&c.subject, c.path.as_deref());
        let location = match report.anchors.get(i) {
            Some(a) => format!(
                "file={},line={},endLine={}",
                escape_property(&a.uri),
                a.start,
                a.end.max(a.start)
            ),
            None => format!("file={}", escape_property(&report.baseline)),
        };
        out.push_str(&format!(
            "::{level} {location},title={}::{}: {} [{}]\n",
            escape_property(&format!("mcp-covenant {}", c.code)),
            escape_data(&place),
            escape_data(&c.message),
            c.code
        ));
    }
    out
}
