//! `snapshot --check`: is the committed lockfile what the server serves now? Never
//! writes; exit 0 up to date, 1 not (with the differences), 2 could not tell.

use std::fs;
use std::path::Path;
use std::process::Output;

use crate::common::*;
use serde_json::json;

fn snapshot(dir: &Path, spec: &Path, extra: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .arg("snapshot")
        .args(extra)
        .arg("--")
        .arg(fixture())
        .arg(spec)
        .output()
        .unwrap()
}

#[test]
fn snapshot_check_tells_a_stale_lockfile_and_never_writes() {
    let d = tmpdir("up-to-date");
    let tool = |n: &str| json!({"name": n, "description": n, "inputSchema": {"type": "object"}});
    let spec = d.join("server.json");
    fs::write(&spec, json!({"tools": [tool("a"), tool("b")]}).to_string()).unwrap();
    // Missing: not up to date.
    let o = snapshot(&d, &spec, &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("mcp-covenant.lock does not exist"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("mcp-covenant.lock").exists());
    assert_eq!(snapshot(&d, &spec, &[]).status.code(), Some(0));
    let committed = fs::read(d.join("mcp-covenant.lock")).unwrap();
    // Same server, later: up to date (the capture time is not a difference).
    let o = bin()
        .current_dir(&d)
        .env("SOURCE_DATE_EPOCH", "4000000000")
        .args(["snapshot", "--check", "--"])
        .arg(fixture())
        .arg(&spec)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("mcp-covenant.lock is up to date"),
        "{}",
        stderr(&o)
    );
    // The server dropped b: not up to date, the removal listed, the file untouched.
    fs::write(&spec, json!({"tools": [tool("a")]}).to_string()).unwrap();
    let o = snapshot(&d, &spec, &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("mcp-covenant.lock is not up to date with the server"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("x tool:b — tool was removed"),
        "{}",
        stdout(&o)
    );
    assert_eq!(fs::read(d.join("mcp-covenant.lock")).unwrap(), committed);
    // An invalid lockfile is exit 2.
    fs::write(d.join("bad.lock"), "{").unwrap();
    assert_fails_cleanly(
        &snapshot(&d, &spec, &["--check", "-o", "bad.lock"]),
        "bad.lock:1:",
    );
}

/// A property may be named like a keyword (`enum`, `const`, `default`, `examples`): it is
/// a schema like any other, so the order of its `type` or `required` array is not part
/// of the interface. Reordering them left the lockfile "not up to date" when the
/// normaliser skipped such properties as if they were the keyword's data.
#[test]
fn a_property_named_like_a_keyword_is_normalised_as_a_schema() {
    let d = tmpdir("up-to-date-keyword-names");
    let spec = d.join("server.json");
    let server = |types: [&str; 2], required: [&str; 2]| {
        let prop = json!({"type": types, "required": required,
                          "properties": {"x": {}, "y": {}}});
        json!({"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {
            "enum": prop, "const": prop, "default": prop, "examples": prop,
            "items": {"type": types}, "not": {"type": types}}}}]})
        .to_string()
    };
    fs::write(&spec, server(["string", "null"], ["y", "x"])).unwrap();
    assert_eq!(snapshot(&d, &spec, &[]).status.code(), Some(0));
    fs::write(&spec, server(["null", "string"], ["x", "y"])).unwrap();
    let o = snapshot(&d, &spec, &["--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The keyword's own data stays as it is: an enum's values are not sorted.
    let lock: serde_json::Value =
        serde_json::from_slice(&fs::read(d.join("mcp-covenant.lock")).unwrap()).unwrap();
    let e = &lock["surface"]["tools"][0]["inputSchema"]["properties"]["enum"];
    assert_eq!(e["type"], json!(["null", "string"]), "{lock}");
    assert_eq!(e["required"], json!(["x", "y"]), "{lock}");
}
