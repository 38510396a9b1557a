//! `--format junit`: one testcase per element of either surface; a failure for each
//! element with changes at or above --fail-on, for CI systems that only read JUnit.

use std::collections::BTreeMap;

use super::Report;
use crate::policy;

/// XML 1.0 text: server strings on one line, markup as entities, no character XML
/// forbids.
fn esc(s: &str) -> String {
    super::escape::xml(s)
}

/// One report as a JUnit document (`report.elements`: every subject of both surfaces, so
/// unchanged elements pass visibly).
pub fn to_string(report: &Report<'_>) -> String {
    let (tests, failures, suite) = suite(report, "mcp-covenant check");
    document(tests, failures, &suite)
}

/// Several servers' reports (`None`: a server that could not be checked) as one
/// document, a testsuite per server.
pub fn grouped(reports: &[(&str, Option<&Report<'_>>)]) -> String {
    let (mut tests, mut failures, mut suites) = (0, 0, String::new());
    for (server, report) in reports {
        let name = format!("mcp-covenant check {server}");
        match report {
            Some(r) => {
                let (t, f, text) = suite(r, &name);
                tests += t;
                failures += f;
                suites.push_str(&text);
            }
            None => {
                tests += 1;
                failures += 1;
                suites.push_str(&format!(
                    "  <testsuite name=\"{}\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">\n    <testcase classname=\"mcp-covenant.server\" name=\"{}\">\n      <failure type=\"error\" message=\"could not be checked\">could not be checked</failure>\n    </testcase>\n  </testsuite>\n",
                    esc(&name),
                    esc(server)
                ));
            }
        }
    }
    document(tests, failures, &suites)
}

fn document(tests: usize, failures: usize, suites: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mcp-covenant\" tests=\"{tests}\" failures=\"{failures}\">\n{suites}</testsuites>\n"
    )
}

/// One report's testsuite named `name`: its test and failure counts, and its XML.
fn suite(report: &Report<'_>, name: &str) -> (usize, usize, String) {
    let elements = &report.elements;
    let mut by_subject: BTreeMap<String, Vec<&crate::diff::Change>> = BTreeMap::new();
    for s in elements {
        by_subject.entry(s.clone()).or_default();
    }
    for c in &report.changes {
        by_subject.entry(c.subject.to_string()).or_default().push(c);
    }
    let failing = |c: &&crate::diff::Change| policy::failing(report.fail_on, report.fails, c);
    let failures = by_subject
        .values()
        .filter(|cs| cs.iter().any(failing))
        .count();
    let mut out = format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">\n",
        esc(name),
        by_subject.len()
    );
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
    out.push_str("  </testsuite>\n");
    (by_subject.len(), failures, out)
}
