//! `--format markdown` (a pull-request comment) and `--format github` (workflow commands).

use super::{bump_word, escape, Line, Report};
use crate::rules::Severity;

/// GitHub refuses a comment longer than this many characters.
pub const COMMENT_LIMIT: usize = 65_536;
/// What the tables and witnesses of one comment may use, leaving room for the headline
/// and the note (several servers in one comment share it).
pub const BUDGET: usize = 60_000;
/// The longest server string shown in a table cell.
const CELL_MAX: usize = 200;
/// The longest witness shown.
const WITNESS_MAX: usize = 1_000;

/// A markdown document that stays under [`COMMENT_LIMIT`]: pieces that would pass the
/// budget are left out and counted, and [`Doc::finish`] says what was cut.
pub(crate) struct Doc {
    out: String,
    chars: usize,
    budget: usize,
    rows_cut: usize,
    witnesses_cut: usize,
}

impl Doc {
    /// A document whose text may use `budget` characters.
    pub(crate) fn new(head: String, budget: usize) -> Doc {
        Doc {
            budget,
            chars: head.chars().count(),
            out: head,
            rows_cut: 0,
            witnesses_cut: 0,
        }
    }

    /// Append `piece` when it fits the budget (`force`: always, for our own short text).
    fn push(&mut self, piece: &str, force: bool) -> bool {
        let n = piece.chars().count();
        if !force && self.chars + n > self.budget {
            return false;
        }
        self.out.push_str(piece);
        self.chars += n;
        true
    }

    pub(crate) fn finish(mut self, what: &str) -> String {
        if self.rows_cut + self.witnesses_cut > 0 {
            let mut parts = Vec::new();
            if self.rows_cut > 0 {
                parts.push(format!("{} {what}", self.rows_cut));
            }
            if self.witnesses_cut > 0 {
                parts.push(format!("{} witness(es)", self.witnesses_cut));
            }
            let note = format!(
                "\n_Not shown: {}, to keep this comment under GitHub's {COMMENT_LIMIT}-character limit; `--format json` lists everything._\n",
                parts.join(" and ")
            );
            self.push(&note, true);
        }
        self.out
    }
}

/// A table cell for a server string: a code span (escaped, cut, one line).
fn code_cell(s: &str) -> String {
    escape::code_span(s, CELL_MAX, true)
}

/// `#### Title (n)` and a table of (subject, path, text, code), nothing when empty.
/// Rows past the budget are counted in `doc`, not shown.
/// `items[i]` is how many items row `i` stands for (a grouped row, several); the title
/// counts them all.
pub(crate) fn table(doc: &mut Doc, title: &str, what: &str, items: &[usize], rows: &[Line<'_>]) {
    if rows.is_empty() {
        return;
    }
    let total: usize = items.iter().sum();
    let head = format!(
        "\n#### {title} ({total})\n\n| Subject | Path | {what} | Code |\n|---|---|---|---|\n"
    );
    let mut shown = false;
    for (i, (subject, path, text, code)) in rows.iter().enumerate() {
        let row = format!(
            "| {} | {} | {} | {} |\n",
            code_cell(subject),
            path.as_deref().map(code_cell).unwrap_or_default(),
            escape::md_text(text, CELL_MAX, true),
            code_cell(code),
        );
        let piece = if shown { row } else { format!("{head}{row}") };
        if !doc.push(&piece, false) {
            doc.rows_cut += items[i..].iter().sum::<usize>();
            return;
        }
        shown = true;
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
        escape::workflow_property(&format!("mcp-covenant {code}")),
        escape::workflow_data(&super::place(&subject, path.as_deref())),
        escape::workflow_data(message),
    ));
}

/// `file=..,line=..,endLine=..` for an anchor.
pub(crate) fn anchor_location(a: &super::anchor::Anchor) -> String {
    format!(
        "file={},line={},endLine={}",
        escape::workflow_property(&a.uri),
        a.start,
        a.end.max(a.start)
    )
}

pub fn to_string(report: &Report<'_>) -> String {
    to_string_within(report, BUDGET)
}

/// The comment, its tables and witnesses within `budget` characters.
pub fn to_string_within(report: &Report<'_>, budget: usize) -> String {
    let mut head = String::new();
    let n = report.changes.len();
    let bump = report.bump;
    head.push_str("### mcp-covenant\n\n");
    if n == 0 {
        head.push_str("No interface changes: **no version bump required**.\n");
    } else {
        head.push_str(&format!(
            "**{n} change(s)**: required version bump **{}** ({} breaking, {} minor, {} patch)\n",
            bump_word(bump),
            report.count(Severity::Breaking),
            report.count(Severity::Minor),
            report.count(Severity::Patch)
        ));
    }
    if let Some(note) = report.policy_note() {
        head.push_str(&format!(
            "\n_{}._\n",
            escape::md_text(&note, CELL_MAX, false)
        ));
    }
    let mut doc = Doc::new(head, budget);
    for (severity, title) in [
        (Severity::Breaking, "Breaking"),
        (Severity::Minor, "Minor"),
        (Severity::Patch, "Patch"),
    ] {
        let chosen: Vec<_> = report
            .changes
            .iter()
            .filter(|c| c.severity == severity)
            .collect();
        let shown = super::grouped(&chosen);
        let messages: Vec<String> = shown
            .iter()
            .map(|&(i, more)| super::grouped_message(&chosen[i].message, more, "--format json"))
            .collect();
        let rows: Vec<Line<'_>> = shown
            .iter()
            .zip(&messages)
            .map(|(&(i, _), m)| super::change_line(chosen[i], m))
            .collect();
        let items: Vec<usize> = shown.iter().map(|&(_, more)| 1 + more).collect();
        table(&mut doc, title, "Change", &items, &rows);
    }
    witnesses(&mut doc, report);
    doc.finish("change(s)")
}

/// A collapsed list of the witnesses: for each proven break, the instance that shows it.
/// One instance that proves several changes (one call breaking several of them, or a
/// shared witness) is shown once, under all the changes it proves.
fn witnesses(doc: &mut Doc, report: &Report<'_>) {
    let mut proven: Vec<(String, Vec<&crate::diff::Change>)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for c in &report.changes {
        let Some(sentence) = super::witness_instance_sentence(c) else {
            continue;
        };
        match at.get(&sentence) {
            Some(&i) => proven[i].1.push(c),
            None => {
                at.insert(sentence.clone(), proven.len());
                proven.push((sentence, vec![c]));
            }
        }
    }
    if proven.is_empty() {
        return;
    }
    let open = format!(
        "\n<details><summary>Witnesses ({}): instances that prove each break</summary>\n\n",
        proven.len()
    );
    let close = "</details>\n";
    // Room for the closing tag is always kept, so the block is always closed.
    if doc.chars + open.chars().count() + close.len() > doc.budget {
        doc.witnesses_cut += proven.len();
        return;
    }
    doc.push(&open, true);
    let mut left = proven.len();
    for (sentence, changes) in proven {
        let places: Vec<String> = changes
            .iter()
            .map(|c| {
                format!(
                    "{} {}{}",
                    escape::code_span(&super::place_of(c), CELL_MAX, false),
                    escape::code_span(&c.code, CELL_MAX, false),
                    match c.shared_with {
                        Some(_) => " (shared: no instance proves this change alone)",
                        None => "",
                    }
                )
            })
            .collect();
        let item = format!("- {}\n\n{}", places.join(", "), fenced(&sentence));
        if doc.chars + item.chars().count() + close.len() > doc.budget {
            doc.witnesses_cut += left;
            break;
        }
        doc.push(&item, true);
        left -= 1;
    }
    doc.push(close, true);
}

/// `text` as a fenced code block whose fence is longer than any backtick run inside,
/// on one line, cut to [`WITNESS_MAX`] characters.
fn fenced(text: &str) -> String {
    let text = escape::truncated(text, WITNESS_MAX);
    let fence = "`".repeat(escape::longest_run(&text, '`').max(2) + 1);
    format!("  {fence}\n  {text}\n  {fence}\n\n")
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
            None => format!("file={}", escape::workflow_property(&report.baseline)),
        };
        let line = super::change_line(c, &c.message);
        workflow_command(&mut out, level, Some(location), line);
    }
    // What covenant.toml set aside or re-classified is said in the log too.
    if let Some(note) = report.policy_note() {
        out.push_str(&format!(
            "::notice title={}::{}; `mcp-covenant check --verbose` lists them\n",
            escape::workflow_property("mcp-covenant policy"),
            escape::workflow_data(&note)
        ));
    }
    out
}
