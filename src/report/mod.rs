//! Reports: the same classified changes, rendered for people and for machines.

pub mod anchor;
pub(crate) use crate::escape;
pub mod grouped;
mod human;
mod json;
mod junit;
pub mod lint;
mod markdown;
pub mod sarif;

use std::borrow::Cow;
use std::io::{self, Write};

use termcolor::WriteColor;

use crate::diff::Change;
use crate::policy::Outcome;
use crate::rules::{Rules, Severity};

pub use human::write_human;

/// What a `check` found, ready to render: the policy step's outcome (`policy`), with
/// what the formats need to place it.
pub struct Report<'r> {
    pub rules: &'r Rules,
    /// Sorted changes at severity breaking/minor/patch (silenced ones are not here).
    pub changes: Vec<Change>,
    /// Changes left out by an `[[ignore]]` entry or a `none` severity, with why.
    pub ignored: Vec<(Change, String)>,
    /// The bump the interface changes owe (the version findings do not count).
    pub bump: Severity,
    /// A change fails at `fail_on`: the gate fails (exit 1).
    pub fails: bool,
    /// The versions declare a major bump (`None`: absent or not semver).
    pub major_bump: Option<bool>,
    /// The lockfile the changes are anchored to, as shown to the user.
    pub baseline: String,
    /// The config file's name, for "ignored by covenant.toml".
    pub config_name: String,
    /// List ignored changes and their reasons in the human report.
    pub verbose: bool,
    /// Where each change sits in a lockfile (SARIF, GitHub, filled on demand).
    pub anchors: Vec<anchor::Anchor>,
    /// Every element subject of both surfaces (JUnit's testcases).
    pub elements: Vec<String>,
    /// When a change fails (JUnit failures, the hint after a failing verdict).
    pub fail_on: crate::policy::FailOn,
}

impl<'r> Report<'r> {
    /// How many reported changes covenant.toml re-classified: their severity is not
    /// the one their row gives in their direction. (The version finding's severity
    /// follows the changes, not its row: it is never counted.)
    pub fn reclassified(&self) -> usize {
        self.changes
            .iter()
            .filter(|c| {
                self.rules.rows.get(c.rule).is_some_and(|row| {
                    row.comparator != crate::rules::Comparator::Semver && {
                        let default = row
                            .default_severity(c.direction)
                            .unwrap_or_else(|| row.worst_default());
                        default != c.severity
                    }
                })
            })
            .count()
    }

    /// `3 change(s) ignored and 1 re-classified by covenant.toml`, when any were.
    pub fn policy_note(&self) -> Option<String> {
        let (ignored, re) = (self.ignored.len(), self.reclassified());
        let parts: Vec<String> = [
            (ignored > 0).then(|| format!("{ignored} change(s) ignored")),
            (re > 0).then(|| format!("{re} re-classified")),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| format!("{} by {}", parts.join(" and "), self.config_name))
    }

    /// The report of `outcome`, anchored to the lockfile `baseline` names.
    pub fn new(rules: &'r Rules, outcome: Outcome, baseline: String) -> Report<'r> {
        let Outcome {
            changes,
            ignored,
            bump,
            fail_on,
            fails,
            major_bump,
            config_name,
        } = outcome;
        Report {
            rules,
            changes,
            ignored,
            bump,
            fails,
            major_bump,
            baseline,
            config_name,
            verbose: false,
            anchors: Vec::new(),
            elements: Vec::new(),
            fail_on,
        }
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.changes
            .iter()
            .filter(|c| c.severity == severity)
            .count()
    }
}

/// A report format (`check --format`; `cli::args::FormatArg` says what each is for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Markdown,
    Github,
    Sarif,
    Junit,
}

impl Format {
    /// Formats that point at lockfile lines.
    pub fn needs_anchors(self) -> bool {
        matches!(self, Format::Sarif | Format::Github)
    }
}

/// Render `report` in `format` to `out`.
pub fn render(report: &Report<'_>, format: Format, out: &mut dyn WriteColor) -> io::Result<()> {
    match format {
        Format::Human => write_human(report, out),
        Format::Json => {
            let text = json::to_string(report);
            out.write_all(text.as_bytes())
        }
        Format::Markdown => out.write_all(markdown::to_string(report).as_bytes()),
        Format::Github => out.write_all(markdown::github(report).as_bytes()),
        Format::Sarif => out.write_all(sarif::check(report).as_bytes()),
        Format::Junit => out.write_all(junit::to_string(report).as_bytes()),
    }
}

/// The characters one markdown comment's tables and witnesses may use in all.
pub const MARKDOWN_BUDGET: usize = markdown::BUDGET;

/// The shape of the JSON reports (docs/schemas/report.schema.json), apart from the tool's
/// version: it changes only when a key is removed or its meaning changes, not when one is
/// added.
pub const REPORT_VERSION: u32 = 1;

/// `--format markdown` within `budget` characters: one of several servers' sections of
/// one comment, which together stay under GitHub's limit.
pub fn markdown_within(report: &Report<'_>, budget: usize) -> String {
    markdown::to_string_within(report, budget)
}

/// The headline word for a bump.
pub fn bump_word(s: Severity) -> &'static str {
    match s {
        Severity::Breaking => "MAJOR",
        Severity::Minor => "MINOR",
        Severity::Patch => "PATCH",
        Severity::None => "none",
    }
}

pub(crate) fn write_str(out: &mut dyn Write, s: &str) -> io::Result<()> {
    out.write_all(s.as_bytes())
}

/// `subject → path`, or the subject alone.
/// `subject → path` of a change.
pub(crate) fn place_of(c: &Change) -> String {
    place(
        &c.subject.to_string(),
        c.path.as_ref().map(|p| p.to_string()).as_deref(),
    )
}

pub(crate) fn place(subject: &str, path: Option<&str>) -> String {
    match path {
        Some(p) => format!("{subject} → {p}"),
        None => subject.to_string(),
    }
}

/// Patch changes of one rule under one element collapse into one line of the human
/// (without `-v`) and markdown reports from this many on (a `$defs` repeated under every
/// tool once made 410 `schema.title.removed` lines); JSON, SARIF, JUnit and GitHub
/// annotations keep every change.
pub const GROUP_MIN: usize = 5;

/// The lines `changes` (one severity, in report order) print as: each change's index
/// with how many more it stands for. A patch change stands for the others of its rule
/// under its element when there are [`GROUP_MIN`] or more, at the place of the first.
pub(crate) fn grouped(changes: &[&Change]) -> Vec<(usize, usize)> {
    let key = |c: &Change| (c.subject.to_string(), c.code.clone());
    let mut count: std::collections::HashMap<(String, String), usize> =
        std::collections::HashMap::new();
    for c in changes.iter().filter(|c| c.severity == Severity::Patch) {
        *count.entry(key(c)).or_default() += 1;
    }
    let mut shown = std::collections::HashSet::new();
    let mut lines = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        let n = match c.severity {
            Severity::Patch => count.get(&key(c)).copied().unwrap_or(1),
            _ => 1,
        };
        if n < GROUP_MIN {
            lines.push((i, 0));
        } else if shown.insert(key(c)) {
            lines.push((i, n - 1));
        }
    }
    lines
}

/// A grouped line's message: the first change's, and how many more it stands for.
pub(crate) fn grouped_message(message: &str, more: usize, listed_by: &str) -> String {
    match more {
        0 => message.to_string(),
        n => format!("{message}, and {n} more like it ({listed_by} lists each)"),
    }
}

/// One line of a human report section: (subject, path, message, code).
pub(crate) type Line<'a> = (Cow<'a, str>, Option<Cow<'a, str>>, &'a str, &'a str);

/// A change's line, with `message` for its message.
pub(crate) fn change_line<'a>(c: &'a Change, message: &'a str) -> Line<'a> {
    (
        Cow::Owned(c.subject.to_string()),
        c.path.as_ref().map(|p| Cow::Owned(p.to_string())),
        message,
        c.code.as_str(),
    )
}

/// A witness as one line of JSON that is safe to print anywhere: control, bidi and
/// line-separator characters inside strings are written as `\uXXXX` escapes (still
/// valid JSON, so it can be copied into a request).
pub(crate) fn witness_json(w: &serde_json::Value) -> String {
    escape::json(serde_json::to_string(w).unwrap_or_default())
}

/// What a change's witness shows, as a sentence: `e.g. {..} was accepted, now rejected`.
pub(crate) fn witness_sentence(c: &Change) -> Option<String> {
    Some(witness_instance_sentence(c)? + &shared_note(c))
}

/// ` (shared with change F: …)` for a change whose witness is another's, else nothing.
pub(crate) fn shared_note(c: &Change) -> String {
    match &c.shared_with {
        Some(f) => format!(" (shared with change {f}: no instance proves this change alone)"),
        None => String::new(),
    }
}

/// [`witness_sentence`] without what it shares: the same for every change one instance
/// proves in one direction.
pub(crate) fn witness_instance_sentence(c: &Change) -> Option<String> {
    let w = witness_json(c.witness.as_ref()?);
    Some(match c.direction? {
        crate::rules::Direction::Input => format!("e.g. {w} was accepted, now rejected"),
        crate::rules::Direction::Output => {
            format!("e.g. the server may now return {w}, which the old schema rejects")
        }
    })
}

/// Why a breaking schema change shows no witness (`-v`): `None` for a change that
/// has one, or that is not a schema change.
pub(crate) fn witness_absent_sentence(c: &Change) -> Option<String> {
    use crate::diff::witness::Absent;
    match c.witness_absent? {
        Absent::NotSchema => None,
        why => Some(format!("no witness: {}", why.word())),
    }
}

/// A human report section: `  TITLE (n)` and a line per item,
/// `    x subject → path — message  [code]`, coloured when `out` supports it.
pub(crate) fn write_section<'a>(
    out: &mut dyn WriteColor,
    title: &str,
    mark: &str,
    color: termcolor::Color,
    lines: &[Line<'a>],
) -> io::Result<()> {
    write_section_with(out, title, mark, color, lines.len(), lines, &[])
}

/// `write_section`, with an indented detail line under an item where `details` has
/// one (a witness under `--verbose`); the title counts `total` items (grouped lines
/// stand for several).
pub(crate) fn write_section_with<'a>(
    out: &mut dyn WriteColor,
    title: &str,
    mark: &str,
    color: termcolor::Color,
    total: usize,
    lines: &[Line<'a>],
    details: &[Option<String>],
) -> io::Result<()> {
    use termcolor::ColorSpec;
    if lines.is_empty() {
        return Ok(());
    }
    write_str(out, "  ")?;
    out.set_color(ColorSpec::new().set_bold(true).set_fg(Some(color)))?;
    write_str(out, &format!("{title} ({total})"))?;
    out.reset()?;
    write_str(out, "\n")?;
    for (i, (subject, path, message, code)) in lines.iter().enumerate() {
        write_str(out, "    ")?;
        if !mark.is_empty() {
            out.set_color(ColorSpec::new().set_fg(Some(color)))?;
            write_str(out, mark)?;
            out.reset()?;
            write_str(out, " ")?;
        }
        out.set_color(ColorSpec::new().set_bold(true))?;
        write_str(out, &escape::text(subject))?;
        out.reset()?;
        if let Some(path) = path {
            write_str(out, &format!(" → {}", escape::text(path)))?;
        }
        write_str(out, &format!(" — {}  ", escape::text(message)))?;
        out.set_color(ColorSpec::new().set_dimmed(true))?;
        write_str(out, &format!("[{code}]"))?;
        out.reset()?;
        write_str(out, "\n")?;
        if let Some(Some(detail)) = details.get(i) {
            for line in detail.lines() {
                write_str(out, &format!("        {}\n", escape::text(line)))?;
            }
        }
    }
    Ok(())
}
