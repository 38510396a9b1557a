//! `--format json`: one object, stable key order (docs/ci.md, "Report formats"; docs/schemas/report.schema.json).

use serde::Serialize;
use serde_json::Value;

use super::Report;
use crate::diff::{Path, Subject};
use crate::lockfile::COVENANT_VERSION;
use crate::rules::Severity;

#[derive(Serialize)]
struct Counts {
    breaking: usize,
    minor: usize,
    patch: usize,
}

#[derive(Serialize)]
struct JsonChange<'a> {
    code: &'a str,
    severity: &'a str,
    subject: &'a Subject,
    path: Option<&'a Path>,
    direction: Option<&'a str>,
    message: &'a str,
    before: &'a Option<Value>,
    after: &'a Option<Value>,
    fingerprint: &'a str,
    certainty: &'a str,
    witness: &'a Option<Value>,
    shared_with: Option<&'a str>,
    witness_absent: Option<&'static str>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    covenant_version: &'a str,
    required_bump: &'a str,
    counts: Counts,
    changes: Vec<JsonChange<'a>>,
    #[serde(skip_serializing_if = "is_zero")]
    ignored: usize,
    #[serde(skip_serializing_if = "is_zero")]
    reclassified: usize,
    report_version: u32,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

pub fn to_string(report: &Report<'_>) -> String {
    let doc = JsonReport {
        covenant_version: COVENANT_VERSION,
        required_bump: report.bump.bump(),
        counts: Counts {
            breaking: report.count(Severity::Breaking),
            minor: report.count(Severity::Minor),
            patch: report.count(Severity::Patch),
        },
        changes: report
            .changes
            .iter()
            .map(|c| JsonChange {
                code: &c.code,
                severity: c.severity.word(),
                subject: &c.subject,
                path: c.path.as_ref(),
                direction: c.direction.map(|d| d.word()),
                message: &c.message,
                before: &c.before,
                after: &c.after,
                fingerprint: &c.fingerprint,
                certainty: c.certainty.word(),
                witness: &c.witness,
                shared_with: c.shared_with.as_deref(),
                witness_absent: c.witness_absent.map(|w| w.word()),
            })
            .collect(),
        ignored: report.ignored.len(),
        reclassified: report.reclassified(),
        report_version: super::REPORT_VERSION,
    };
    // Values exact; raw control and bidi characters written as `\uXXXX` escapes.
    let mut text = super::escape::json(serde_json::to_string_pretty(&doc).unwrap_or_default());
    text.push('\n');
    text
}
