//! `--format junit`: one testcase per element of either surface; a failure for each
//! element with changes at or above --fail-on, for CI systems that only read JUnit.

use std::collections::BTreeMap;

use super::Report;
use crate::rules::Severity;

/// XML 1.0 text: server strings on one line, markup as entities, no character XML
/// forbids.
fn esc(s: &str) -> String {
    super::escape::xml(s)
}

/// `elements`: every subject of both surfaces, so unchanged elements pass visibly.
pub fn to_string(report: &Report<'_>, elements: &[String], fail_on: Option<Severity>) -> String {
    let mut by_subject: BTreeMap<&str, Vec<&crate::diff::Change>> = BTreeMap::new();
    for s in elements {
        by_subject.entry(s.as_str()).or_default();
    }
    for c in &report.changes {
        by_subject.entry(c.subject.as_str()).or_default().push(c);
    }
    let failing = |c: &&crate::diff::Change| fail_on.is_some_and(|l| c.severity <= l);
    let failures = by_subject
        .values()
        .filter(|cs| cs.iter().any(failing))
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"mcp-covenant\" tests=\"{}\" failures=\"{failures}\">\n",
        by_subject.len()
    ));
    out.push_str(&format!(
        "  <testsuite name=\"mcp-covenant check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">\n",
        by_subject.len()
    ));
    for (subject, changes) in &by_subject {
        let class = subject.split(':').next().unwrap_or("element");
        out.push_str(&format!(
            "    <testcase classname=\"mcp-covenant.{}\" name=\"{}\"",
            esc(class),
            esc(subject)
        ));
        if changes.is_empty() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        let line = |c: &crate::diff::Change| match &c.path {
            Some(p) => format!("{} {p}: {} [{}]", c.severity.word(), c.message, c.code),
            None => format!("{}: {} [{}]", c.severity.word(), c.message, c.code),
        };
        let (bad, rest): (Vec<&crate::diff::Change>, Vec<_>) =
            changes.iter().copied().partition(|c| failing(c));
        if !bad.is_empty() {
            let first = bad[0];
            out.push_str(&format!(
                "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                esc(&first.code),
                esc(&line(first)),
                bad.iter()
                    .map(|c| esc(&line(c)))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
        if !rest.is_empty() {
            out.push_str(&format!(
                "      <system-out>{}</system-out>\n",
                rest.iter()
                    .map(|c| esc(&line(c)))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
