//! `--format sarif`: SARIF 2.1.0, one run, rules from the rule tables, results
//! anchored to the lockfile with `partialFingerprints` so code scanning tracks a change
//! across runs. Validated against the official schema by tests/it/sarif.rs.

use serde_json::{json, Map, Value};

use super::anchor::Anchor;
use super::Report;
use crate::lint::{Finding, Level, LintRules};
use crate::lockfile::COVENANT_VERSION;
use crate::rules::Severity;

const INFORMATION_URI: &str = "https://github.com/mcp-covenant/mcp-covenant";
const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level_of(s: Severity) -> &'static str {
    match s {
        Severity::Breaking => "error",
        Severity::Minor => "warning",
        _ => "note",
    }
}

fn lint_level(l: Level) -> &'static str {
    match l {
        Level::Error => "error",
        Level::Warning => "warning",
        _ => "note",
    }
}

struct RuleDesc {
    id: String,
    /// Former ids of the rule (SARIF `deprecatedIds`), so results under an old id
    /// correlate with this rule.
    deprecated: Vec<String>,
    short: String,
    help: String,
    level: &'static str,
}

struct ResultDesc<'a> {
    rule: &'a str,
    level: &'static str,
    message: String,
    anchor: Option<&'a Anchor>,
    fingerprint: Option<&'a str>,
    properties: Map<String, Value>,
    /// Why covenant.toml set the result aside (an `[[ignore]]` or a `none` severity).
    suppressed: Option<&'a str>,
}

fn document(rules: Vec<RuleDesc>, results: Vec<ResultDesc<'_>>) -> String {
    let index = |id: &str| rules.iter().position(|r| r.id == id);
    let results: Vec<Value> = results
        .into_iter()
        .map(|r| {
            let mut v = json!({
                "ruleId": r.rule,
                "level": r.level,
                "message": { "text": super::escape::text(&r.message) },
            });
            if let Some(i) = index(r.rule) {
                v["ruleIndex"] = json!(i);
            }
            if let Some(a) = r.anchor {
                v["locations"] = json!([{
                    "physicalLocation": {
                        "artifactLocation": { "uri": percent_encoded(&a.uri) },
                        "region": { "startLine": a.start, "endLine": a.end.max(a.start) }
                    }
                }]);
            }
            if let Some(fp) = r.fingerprint {
                v["partialFingerprints"] = json!({ "mcpCovenant/v2": fp });
            }
            if !r.properties.is_empty() {
                v["properties"] = Value::Object(r.properties);
            }
            if let Some(why) = r.suppressed {
                v["suppressions"] = json!([{ "kind": "external", "justification": why }]);
            }
            v
        })
        .collect();
    let rules: Vec<Value> = rules
        .iter()
        .map(|r| {
            let mut v = json!({
                "id": r.id,
                "shortDescription": { "text": r.short },
                "fullDescription": { "text": r.help },
                "help": { "text": r.help },
                "defaultConfiguration": { "level": r.level },
            });
            if !r.deprecated.is_empty() {
                v["deprecatedIds"] = json!(r.deprecated);
            }
            v
        })
        .collect();
    let doc = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "mcp-covenant",
                "version": COVENANT_VERSION,
                "semanticVersion": COVENANT_VERSION,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }},
            "results": results,
        }]
    });
    let mut text = super::escape::json(serde_json::to_string_pretty(&doc).unwrap_or_default());
    text.push('\n');
    text
}

/// The SARIF document for a check.
pub fn check(report: &Report<'_>) -> String {
    let mut rules: Vec<RuleDesc> = Vec::new();
    for row in &report.rules.rows {
        if rules.iter().any(|r| r.id == row.id) {
            continue; // rows differing only in `when` share an id
        }
        let worst = row.worst_default();
        rules.push(RuleDesc {
            id: row.id.clone(),
            deprecated: row.aliases.clone(),
            short: row.message.replace(['{', '}'], ""),
            help: row.help.clone(),
            level: level_of(worst),
        });
    }
    // The reported changes, then those covenant.toml set aside, as suppressed results.
    let shown = report
        .changes
        .iter()
        .enumerate()
        .map(|(i, c)| (c, report.anchors.get(i), None));
    let set_aside = report
        .ignored
        .iter()
        .map(|(c, why)| (c, None, Some(why.as_str())));
    let results = shown
        .chain(set_aside)
        .map(|(c, anchor, suppressed)| {
            let mut props = Map::new();
            props.insert("severity".into(), json!(c.severity.word()));
            props.insert("subject".into(), json!(c.subject));
            props.insert("path".into(), json!(c.path));
            props.insert("direction".into(), json!(c.direction.map(|d| d.word())));
            props.insert("certainty".into(), json!(c.certainty.word()));
            let place = super::place_of(c);
            let mut message = format!("{place}: {} ({} change)", c.message, c.severity.word());
            if let Some(w) = super::witness_sentence(c) {
                props.insert("witness".into(), c.witness.clone().unwrap_or_default());
                if let Some(f) = &c.shared_with {
                    props.insert("shared_with".into(), json!(f));
                }
                message.push_str("; ");
                message.push_str(&w);
            }
            if let Some(why) = c.witness_absent {
                props.insert("witness_absent".into(), json!(why.word()));
            }
            ResultDesc {
                rule: &c.code,
                level: level_of(c.severity),
                message,
                anchor,
                fingerprint: Some(&c.fingerprint),
                properties: props,
                suppressed,
            }
        })
        .collect();
    document(rules, results)
}

/// The SARIF document for a lint run; `anchors` line up with `findings` (or are empty
/// for a live capture, which has no file to point at).
pub fn lint(rules: &LintRules, findings: &[Finding], anchors: &[Anchor]) -> String {
    let descs = rules
        .rows
        .iter()
        .map(|r| RuleDesc {
            id: r.id.clone(),
            deprecated: Vec::new(),
            short: r.message.replace(['{', '}'], ""),
            help: r.message.replace(['{', '}'], ""),
            level: lint_level(r.level),
        })
        .collect();
    let results = findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let path = f.path.as_ref().map(ToString::to_string);
            let place = super::place(&f.subject.to_string(), path.as_deref());
            let mut props = Map::new();
            props.insert("subject".into(), json!(f.subject));
            props.insert("path".into(), json!(f.path));
            ResultDesc {
                rule: &f.code,
                level: lint_level(f.level),
                message: format!("{place}: {}", f.message),
                anchor: anchors.get(i),
                fingerprint: None,
                properties: props,
                suppressed: None,
            }
        })
        .collect();
    document(descs, results)
}

/// A relative path as a URI reference: every byte but the unreserved ones and `/`
/// percent-encoded (a space, `%`, `#`, `?`, `:`, non-ASCII), so the path reads back.
fn percent_encoded(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(b))
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
