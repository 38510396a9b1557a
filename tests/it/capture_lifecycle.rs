//! How a stdio server's life ends: a crash is reported once with its stderr and never
//! retried, a timeout or a mistyped command says what to do, and nothing the server
//! started outlives the capture.

use std::path::Path;
use std::process::Output;

use crate::common::*;
use serde_json::{json, Value};

fn tools() -> Value {
    json!([{"name": "search", "inputSchema": {"type": "object"}}])
}

/// `snapshot` of the fixture server with `spec`, into DIR/mcp-covenant.lock.
fn snapshot(dir: &Path, spec: &Value, extra: &[&str]) -> Output {
    let spec_path = write_spec(dir, spec);
    snapshot_fixture(&dir.join("mcp-covenant.lock"), &spec_path, extra)
}

#[test]
fn a_crash_is_reported_once_with_its_stderr_and_never_retried() {
    // A Python server that dies at import (a traceback, exit 1) before reading a byte,
    // one that reads the probe and dies with a traceback, and one killed by a signal:
    // none is started again (the era-probe retry is for servers that refuse a first
    // message other than `initialize`), and the traceback is shown once.
    let cases = [
        (
            "import",
            json!({"startDelayMs": 300, "exitAtStart": 1, "stderr": [
                "Traceback (most recent call last):",
                "  File \"server.py\", line 1, in <module>",
                "ModuleNotFoundError: No module named 'fastmcp'"]}),
            "exit status: 1",
        ),
        (
            "read-then-traceback",
            json!({"tools": tools(), "crashOnFirstMessage": "traceback"}),
            "exit status: 1",
        ),
        (
            "signal",
            json!({"tools": tools(), "crashOnFirstMessage": "abort"}),
            "SIGABRT",
        ),
        (
            "exception-group",
            json!({"tools": tools(), "crashOnFirstMessage": "exception-group"}),
            "exit status: 1",
        ),
    ];
    for (name, spec, needle) in cases {
        let d = tmpdir(&format!("crash-{name}"));
        let o = snapshot(&d, &spec, &[]);
        assert_fails_cleanly(&o, needle);
        let err = stderr(&o);
        assert!(!err.contains("starting it again"), "{name}: retried: {err}");
        if name == "exception-group" {
            assert_eq!(
                err.matches("Exception Group Traceback (most recent call last):")
                    .count(),
                1,
                "{name}: the traceback once: {err}"
            );
        } else if name != "signal" {
            assert_eq!(
                err.matches("server: Traceback (most recent call last):")
                    .count(),
                1,
                "{name}: the traceback once: {err}"
            );
        }
        assert!(!d.join("mcp-covenant.lock").exists());
    }
}

#[test]
fn a_server_that_exits_on_the_probe_without_crashing_is_still_retried_once() {
    // rmcp 0.6 reads the probe, says `ConnectionClosed` and exits 1: not a crash (it
    // read what we sent, no traceback, no signal). Its stderr from the first start is
    // not shown: the capture succeeded the second time.
    let d = tmpdir("probe-refused");
    let o = snapshot(
        &d,
        &json!({"era": "legacy", "tools": tools(), "initializeFirst": true}),
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("starting it again").count(), 1);
    assert!(!stderr(&o).contains("ConnectionClosed"), "{}", stderr(&o));
}

#[test]
fn a_long_stderr_line_is_shown_cut() {
    let d = tmpdir("crash-long-line");
    let long = format!("boom {}", "x".repeat(50_000));
    let o = snapshot(&d, &json!({"exitAtStart": 3, "stderr": [long]}), &[]);
    assert_fails_cleanly(&o, "exit status: 3");
    let err = stderr(&o);
    let line = err.lines().find(|l| l.starts_with("server: boom")).unwrap();
    assert!(line.len() < 1100, "{} bytes", line.len());
    assert!(line.ends_with("(49005 more bytes)"), "{line}");
}

#[test]
fn a_timeout_on_a_server_that_says_it_serves_http_suggests_http() {
    let d = tmpdir("timeout-uvicorn");
    let o = snapshot(
        &d,
        &json!({"neverAnswer": true, "tools": [], "stderr": [
            "INFO:     Started server process [4242]",
            "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)"]}),
        &["--timeout", "1"],
    );
    assert_fails_cleanly(&o, "--http http://127.0.0.1:8000/mcp");
    // Without such a line, no hint.
    let d = tmpdir("timeout-plain");
    let o = snapshot(
        &d,
        &json!({"neverAnswer": true, "tools": [], "stderr": ["ready"]}),
        &["--timeout", "1"],
    );
    assert_fails_cleanly(&o, "timed out");
    assert!(!stderr(&o).contains("--http"), "{}", stderr(&o));
}

#[test]
fn a_command_given_as_one_word_with_spaces_says_there_is_no_shell() {
    let d = tmpdir("one-word");
    let o = bin()
        .args(["snapshot", "-o"])
        .arg(d.join("x.lock"))
        .args(["--", "node dist/server.js"])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "without a shell");
    assert!(
        stderr(&o).contains("`-- node dist/server.js`"),
        "{}",
        stderr(&o)
    );
}
