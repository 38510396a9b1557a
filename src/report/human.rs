//! The human report (docs/usage.md; its shape is fixed: scripts and users read it), byte for byte:
//!
//! ```text
//! mcp-covenant: 3 change(s) — required version bump: MAJOR
//!
//!   BREAKING (2)
//!     x tool:legacy — tool was removed  [tool.removed]
//! ```

use std::io;

use termcolor::{Color, ColorSpec, WriteColor};

use super::{
    bump_word, change_line, escape, place_of, write_section_with, write_str, Line, Report,
};
use crate::rules::{Certainty, Severity};

fn style(severity: Severity) -> (&'static str, &'static str, Color) {
    match severity {
        Severity::Breaking => ("BREAKING", "x", Color::Red),
        Severity::Minor => ("MINOR", "+", Color::Yellow),
        Severity::Patch => ("PATCH", "~", Color::Cyan),
        Severity::None => ("NONE", " ", Color::White),
    }
}

pub fn write_human(report: &Report<'_>, out: &mut dyn WriteColor) -> io::Result<()> {
    let n = report.changes.len();
    write_str(out, "mcp-covenant: ")?;
    write_str(out, &format!("{n} change(s) — required version bump: "))?;
    let bump = report.bump;
    out.set_color(ColorSpec::new().set_bold(true).set_fg(match bump {
        Severity::None => None,
        s => Some(style(s).2),
    }))?;
    write_str(out, bump_word(bump))?;
    out.reset()?;
    write_str(out, "\n")?;
    if let Some(note) = report.policy_note() {
        write_str(out, &format!("  ({})\n", escape::text(&note)))?;
    }
    if n > 0 {
        write_str(out, "\n")?;
    }
    for severity in [Severity::Breaking, Severity::Minor, Severity::Patch] {
        let (title, mark, color) = style(severity);
        let chosen: Vec<_> = report
            .changes
            .iter()
            .filter(|c| c.severity == severity)
            .collect();
        // `-v` lists every change (each has its fingerprint); without it, many patch
        // lines of one rule under one element are one line.
        let shown: Vec<(usize, usize)> = if report.verbose {
            (0..chosen.len()).map(|i| (i, 0)).collect()
        } else {
            super::grouped(&chosen)
        };
        let total = chosen.len();
        let chosen: Vec<_> = shown.iter().map(|&(i, _)| chosen[i]).collect();
        // A conservative verdict says so: nothing proves it, nothing proves it harmless.
        let messages: Vec<String> = chosen
            .iter()
            .zip(&shown)
            .map(|(c, &(_, more))| {
                let m = super::grouped_message(&c.message, more, "-v");
                match c.certainty {
                    Certainty::Exact => m,
                    Certainty::Conservative => format!("{m} (conservative)"),
                }
            })
            .collect();
        let lines: Vec<Line<'_>> = chosen
            .iter()
            .zip(&messages)
            .map(|(c, m)| change_line(c, m))
            .collect();
        let mut previous: Option<String> = None;
        let details: Vec<Option<String>> = chosen
            .iter()
            .map(|c| {
                // The fingerprint to acknowledge it with (`mcp-covenant ignore`), and
                // the witness (or why there is none); one instance is printed once for
                // the changes in a row that it proves.
                report.verbose.then(|| {
                    let mut d = format!("fingerprint {}", c.fingerprint);
                    let instance = super::witness_instance_sentence(c);
                    let text = if instance.is_some() && instance == previous {
                        Some(format!(
                            "the witness above shows this change too{}",
                            super::shared_note(c)
                        ))
                    } else {
                        super::witness_sentence(c).or_else(|| super::witness_absent_sentence(c))
                    };
                    if let Some(text) = text {
                        d.push('\n');
                        d.push_str(&text);
                    }
                    previous = instance;
                    d
                })
            })
            .collect();
        write_section_with(out, title, mark, color, total, &lines, &details)?;
    }
    if report.verbose && !report.ignored.is_empty() {
        write_str(out, &format!("  IGNORED ({})\n", report.ignored.len()))?;
        for (c, why) in &report.ignored {
            let at = place_of(c);
            write_str(
                out,
                &format!(
                    "    - {} — {}  [{}] ({})\n",
                    escape::text(&at),
                    escape::text(&c.message),
                    c.code,
                    escape::text(why)
                ),
            )?;
        }
    }
    Ok(())
}
