//! Change fingerprints: SHA-256, 128 bits. The 48-bit FNV-1a of 0.2 and before let two
//! different changes share one, and a single `[[ignore]]` then suppressed both. The two
//! property names below were found by a birthday search (about 2^24 names): their
//! `schema.property.required.added` changes on tool `t` share the old fingerprint
//! `7af2238cd6c1`.

use std::fs;

use crate::common::*;
use serde_json::{json, Value};

const A: &str = "p21c3929";
const B: &str = "p3a2ba76";

fn lock(schema: Value) -> String {
    json!({"covenant_version": "0.2.0", "captured_at_unix": 1,
        "server": {"name": "s", "version": "1.0.0"},
        "surface": {"tools": [{"name": "t", "inputSchema": schema}]}})
    .to_string()
}

fn check(dir: &std::path::Path, config: &str) -> std::process::Output {
    fs::write(dir.join("covenant.toml"), config).unwrap();
    bin()
        .current_dir(dir)
        .args([
            "check",
            "--baseline",
            "a.lock",
            "--against",
            "b.lock",
            "--format",
            "json",
        ])
        .output()
        .unwrap()
}

/// The fingerprints of the changes a JSON report lists.
fn fingerprints(o: &std::process::Output) -> Vec<String> {
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["fingerprint"].as_str().map(String::from))
        .collect()
}

#[test]
fn two_changes_never_share_a_fingerprint_and_one_ignore_suppresses_one() {
    let d = tmpdir("fingerprints");
    fs::write(d.join("a.lock"), lock(json!({"type": "object"}))).unwrap();
    let props = json!({A: {"type": "string"}, B: {"type": "string"}});
    fs::write(
        d.join("b.lock"),
        lock(json!({"type": "object", "properties": props, "required": [A, B]})),
    )
    .unwrap();
    let o = check(&d, "");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let added: Vec<&Value> = report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["code"] == "schema.property.required.added")
        .collect();
    assert_eq!(added.len(), 2, "{report}");
    let (fa, fb) = (
        added[0]["fingerprint"].as_str().unwrap(),
        added[1]["fingerprint"].as_str().unwrap(),
    );
    assert!(fa.len() == 32 && fb.len() == 32 && fa != fb, "{fa} {fb}");
    // The old form cannot tell them apart: the reason for the new one.
    let old = |c: &Value| {
        let change = mcp_covenant::diff::Change {
            rule: 0,
            code: c["code"].as_str().unwrap().into(),
            severity: mcp_covenant::rules::Severity::Breaking,
            subject: c["subject"].as_str().unwrap().parse().unwrap(),
            path: c["path"].as_str().map(|p| p.parse().unwrap()),
            direction: None,
            message: String::new(),
            before: None,
            after: None,
            fingerprint: String::new(),
            certainty: mcp_covenant::rules::Certainty::Exact,
            witness: None,
            shared_with: None,
            witness_absent: None,
        };
        mcp_covenant::policy::legacy_fingerprint(&change)
    };
    assert_eq!(old(added[0]), "7af2238cd6c1");
    assert_eq!(old(added[1]), "7af2238cd6c1");
    // An [[ignore]] by the new fingerprint sets aside exactly that change.
    let o = check(
        &d,
        &format!("[[ignore]]\nfingerprint = \"{fa}\"\nreason = \"one of them\"\n"),
    );
    let left = fingerprints(&o);
    assert!(
        left.contains(&fb.to_string()) && !left.contains(&fa.to_string()),
        "{left:?}"
    );
    // The old form still matches (both), with a warning naming the new form.
    let o = check(
        &d,
        "[[ignore]]\nfingerprint = \"7af2238cd6c1\"\nreason = \"old form\"\n",
    );
    assert!(
        stderr(&o).contains("is the old 48-bit form"),
        "{}",
        stderr(&o)
    );
    let left = fingerprints(&o);
    assert!(
        !left.contains(&fa.to_string()) && !left.contains(&fb.to_string()),
        "{left:?}"
    );
    // Anything else is not a fingerprint: exit 2, said where.
    let o = check(
        &d,
        "[[ignore]]\nfingerprint = \"7AF2238CD6C\"\nreason = \"typo\"\n",
    );
    assert_fails_cleanly(&o, "covenant.toml:2:");
    assert!(
        stderr(&o).contains("is not one mcp-covenant reports"),
        "{}",
        stderr(&o)
    );
}
