//! SARIF 2.1.0 output, validated against the official schema (tests/schemas/, checked
//! by the small validator in tests/it/common/schema.rs), and anchored to the right lines:
//! a removed tool in the baseline, an added one in the new lockfile. Also GitHub
//! annotations, JUnit, and markdown on the same pair.

use crate::common::schema;

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::{json, Value};

fn sarif_schema() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/sarif-2.1.0-rtm.5.json");
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

/// Two canonical lockfiles captured from the fixture: v2 drops `legacy`, adds `fresh`,
/// and makes `search.limit` required.
fn pair(dir: &Path) -> (PathBuf, PathBuf) {
    let search = |required: Value| {
        json!({"name": "search", "description": "Search",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "required": required}})
    };
    let v1 = json!({"tools": [{"name": "legacy", "inputSchema": {"type": "object"}}, search(json!(["q"]))]});
    let v2 = json!({"tools": [{"name": "fresh", "inputSchema": {"type": "object"}}, search(json!(["q", "limit"]))]});
    let mut out = Vec::new();
    for (name, spec) in [("v1", v1), ("v2", v2)] {
        let spec_path = dir.join(format!("{name}.json"));
        fs::write(&spec_path, spec.to_string()).unwrap();
        let lock = dir.join(format!("{name}.lock"));
        let o = snapshot_fixture(&lock, &spec_path, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        out.push(lock);
    }
    (out[0].clone(), out[1].clone())
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = bin().current_dir(dir).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), stdout(&o), stderr(&o))
}

/// `check --baseline v1.lock --against v2.lock --format FORMAT EXTRA...` in `dir`.
fn check_pair(dir: &Path, format: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "check",
        "--baseline",
        "v1.lock",
        "--against",
        "v2.lock",
        "--format",
        format,
    ];
    args.extend_from_slice(extra);
    run(dir, &args)
}

/// The `line=N` of a GitHub workflow command.
fn annotated_line(command: &str) -> u64 {
    command
        .split("line=")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn line(path: &Path, n: u64) -> String {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .nth(n as usize - 1)
        .unwrap_or("")
        .to_string()
}

#[test]
fn check_sarif_validates_and_anchors_removed_and_added_tools() {
    let d = tmpdir("sarif-check");
    let (v1, v2) = pair(&d);
    let (code, out, err) = check_pair(&d, "sarif", &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        !err.contains("warning"),
        "canonical files give no warning: {err}"
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    let errors = schema::validate(&sarif_schema(), &doc);
    assert!(
        errors.is_empty(),
        "SARIF does not validate:\n{}",
        errors.join("\n")
    );
    let run0 = &doc["runs"][0];
    assert_eq!(run0["tool"]["driver"]["name"], "mcp-covenant");
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(rules
        .iter()
        .any(|r| r["id"] == "schema.property.required.added"));
    let result = |rule: &str| {
        run0["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["ruleId"] == rule)
            .cloned()
            .unwrap_or_else(|| panic!("no {rule}"))
    };
    let loc = |r: &Value| r["locations"][0]["physicalLocation"].clone();
    let removed = result("tool.removed");
    assert_eq!(removed["level"], "error");
    assert_eq!(loc(&removed)["artifactLocation"]["uri"], "v1.lock");
    let start = loc(&removed)["region"]["startLine"].as_u64().unwrap();
    assert!(
        line(&v1, start + 1).contains("\"name\": \"legacy\""),
        "{}",
        line(&v1, start + 1)
    );
    let added = result("tool.added");
    assert_eq!(added["level"], "warning");
    assert_eq!(loc(&added)["artifactLocation"]["uri"], "v2.lock");
    let start = loc(&added)["region"]["startLine"].as_u64().unwrap();
    assert!(line(&v2, start + 1).contains("\"name\": \"fresh\""));
    let req = result("schema.property.required.added");
    let start = loc(&req)["region"]["startLine"].as_u64().unwrap();
    assert!(
        line(&v1, start).contains("\"limit\""),
        "{}",
        line(&v1, start)
    );
    assert_eq!(
        req["partialFingerprints"]["mcpCovenant/v2"]
            .as_str()
            .unwrap()
            .len(),
        32
    );
    // Rule indexes point at the right rules.
    for r in run0["results"].as_array().unwrap() {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
    }
}

#[test]
fn lint_sarif_validates() {
    let d = tmpdir("sarif-lint");
    let (v1, _) = pair(&d);
    let (code, out, err) = run(&d, &["lint", "--from", "v1.lock", "--format", "sarif"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let errors = schema::validate(&sarif_schema(), &doc);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let results = doc["runs"][0]["results"].as_array().unwrap();
    let missing = results
        .iter()
        .find(|r| r["ruleId"] == "tool.missing_description")
        .unwrap();
    let start = missing["locations"][0]["physicalLocation"]["region"]["startLine"]
        .as_u64()
        .unwrap();
    assert!(line(&v1, start + 1).contains("legacy"));
}

#[test]
fn the_validator_rejects_invalid_sarif() {
    let bad = json!({"version": "2.0.0", "runs": [{"tool": {"driver": {}}, "results": [{"level": "fatal"}]}]});
    let errors = schema::validate(&sarif_schema(), &bad);
    assert!(errors.iter().any(|e| e.contains("version")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("name")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("fatal")), "{errors:?}");
}

#[test]
fn github_junit_and_markdown_formats() {
    let d = tmpdir("other-formats");
    let (v1, _) = pair(&d);
    let (code, out, _) = check_pair(&d, "github", &[]);
    assert_eq!(code, 1);
    let removed = out.lines().find(|l| l.contains("[tool.removed]")).unwrap();
    assert!(
        removed.starts_with("::error file=v1.lock,line="),
        "{removed}"
    );
    let n = annotated_line(removed);
    assert!(line(&v1, n + 1).contains("legacy"));
    assert!(out
        .lines()
        .any(|l| l.starts_with("::warning file=v2.lock,line=") && l.contains("tool.added")));

    let (code, out, _) = check_pair(&d, "junit", &["--fail-on", "breaking"]);
    assert_eq!(code, 1);
    assert!(out.contains("tests=\"4\" failures=\"3\""), "{out}");
    assert!(
        out.contains(
            "<testcase classname=\"mcp-covenant.tool\" name=\"tool:fresh\">\n      <system-out>"
        ),
        "{out}"
    );

    let (_, out, _) = check_pair(&d, "markdown", &[]);
    assert!(out.contains("required version bump **MAJOR**"), "{out}");
    assert!(
        out.contains("| `tool:legacy` |  | tool was removed | `tool.removed` |"),
        "{out}"
    );
}

#[test]
fn lint_github_and_markdown_formats() {
    let d = tmpdir("lint-formats");
    let (v1, _) = pair(&d);
    let (code, out, _) = run(&d, &["lint", "--from", "v1.lock", "--format", "github"]);
    assert_eq!(code, 0);
    let legacy = out.lines().find(|l| l.contains("tool:legacy")).unwrap();
    assert!(
        legacy.starts_with("::warning file=v1.lock,line="),
        "{legacy}"
    );
    let n = annotated_line(legacy);
    assert!(line(&v1, n + 1).contains("legacy"));
    let (_, out, _) = run(&d, &["lint", "--from", "v1.lock", "--format", "markdown"]);
    assert!(out.starts_with("### mcp-covenant lint\n"), "{out}");
    assert!(
        out.contains("| `tool:legacy` |  | tool has no description"),
        "{out}"
    );
}

/// A lockfile path with a space, `%`, `#` or a non-ASCII letter is a valid SARIF `uri`:
/// percent-encoded, so a viewer finds the file (and the GitHub format keeps the path).
#[test]
fn sarif_uris_are_percent_encoded() {
    let d = tmpdir("sarif-uri");
    let (v1, v2) = pair(&d);
    let odd = d.join("my locks #1");
    fs::create_dir(&odd).unwrap();
    fs::copy(&v1, odd.join("ä 100%.lock")).unwrap();
    fs::copy(&v2, d.join("v2 new.lock")).unwrap();
    let (code, out, err) = run(
        &d,
        &[
            "check",
            "--baseline",
            "my locks #1/ä 100%.lock",
            "--against",
            "v2 new.lock",
            "--format",
            "sarif",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let errors = schema::validate(&sarif_schema(), &doc);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let uris: std::collections::BTreeSet<&str> = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        ["my%20locks%20%231/%C3%A4%20100%25.lock", "v2%20new.lock"].into(),
        "{out}"
    );
    let (_, out, _) = run(
        &d,
        &[
            "check",
            "--baseline",
            "my locks #1/ä 100%.lock",
            "--against",
            "v2 new.lock",
            "--format",
            "github",
        ],
    );
    assert!(out.contains("file=my locks #1/ä 100%25.lock"), "{out}");
}

/// What covenant.toml sets aside is not invisible where CI reads: SARIF carries each
/// ignored change as a suppressed result (with the reason), and the GitHub format ends
/// with a notice that counts what was ignored or re-classified.
#[test]
fn ignored_and_reclassified_changes_are_visible_in_sarif_and_github() {
    let d = tmpdir("sarif-suppressed");
    pair(&d);
    fs::write(
        d.join("covenant.toml"),
        "[severity]\n\"schema.property.required.added\" = \"minor\"\n\n[[ignore]]\ncode = \"tool.added\"\nreason = \"fresh is new\"\n",
    )
    .unwrap();
    let (_, out, err) = check_pair(&d, "sarif", &[]);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let errors = schema::validate(&sarif_schema(), &doc);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let results = doc["runs"][0]["results"].as_array().unwrap();
    let added = results
        .iter()
        .find(|r| r["ruleId"] == "tool.added")
        .expect(&out);
    assert_eq!(
        added["suppressions"],
        json!([{"kind": "external", "justification": "covenant.toml:4:1: fresh is new"}]),
        "{added}"
    );
    assert!(results
        .iter()
        .filter(|r| r["ruleId"] != "tool.added")
        .all(|r| r.get("suppressions").is_none()));
    let (_, out, _) = check_pair(&d, "github", &[]);
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("::notice title=mcp-covenant policy::1 change(s) ignored and 1 re-classified by covenant.toml"),
        "{out}"
    );
}
