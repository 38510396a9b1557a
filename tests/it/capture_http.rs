//! Live capture over Streamable HTTP against the fixture server: JSON and SSE bodies,
//! sessions, headers, both eras, and every HTTP failure ending in a clean exit 2.

use std::fs;

use crate::common::*;
use serde_json::{json, Value};

fn tools() -> Value {
    json!([{"name": "a", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}},
           {"name": "b", "inputSchema": {"type": "object"}}])
}

fn snapshot_http(dir: &std::path::Path, url: &str, extra: &[&str]) -> std::process::Output {
    bin()
        .args(["snapshot", "-o"])
        .arg(dir.join("mcp-covenant.lock"))
        .args(extra)
        .args(["--http", url])
        .output()
        .unwrap()
}

fn lock(dir: &std::path::Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("mcp-covenant.lock")).unwrap()).unwrap()
}

#[test]
fn json_and_sse_responses_sessions_and_headers() {
    for sse in [false, true] {
        let d = tmpdir(&format!("http-ok-{sse}"));
        let log = d.join("headers.log");
        let server = fixture_http(
            &d,
            &json!({"tools": tools(), "sse": sse, "requireSession": true,
            "headerLog": log.display().to_string(), "pageSize": 1, "notifications": true}),
        );
        let o = bin()
            .env("MCP_COVENANT_HEADER_X_API_KEY", "from-env")
            .args(["snapshot", "-o"])
            .arg(d.join("mcp-covenant.lock"))
            .args([
                "--header",
                "Authorization: Bearer s3cret",
                "--http",
                &server.url(),
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "sse={sse}: {}", stderr(&o));
        let l = lock(&d);
        assert_eq!(l["surface"]["tools"].as_array().unwrap().len(), 2);
        assert_eq!(l["server"]["protocolVersion"], "2025-11-25");
        let text = fs::read_to_string(d.join("mcp-covenant.lock")).unwrap();
        assert!(
            !text.contains("s3cret") && !text.contains("from-env"),
            "header values leaked into the lockfile"
        );
        assert!(!stderr(&o).contains("s3cret"));
        let sent = fs::read_to_string(&log).unwrap();
        assert!(sent.contains("authorization=Bearer s3cret"), "{sent}");
        assert!(sent.contains("x-api-key=from-env"), "{sent}");
        assert!(sent.contains("mcp-session-id=fixture-session"), "{sent}");
        assert!(sent.contains("mcp-protocol-version=2025-11-25"), "{sent}");
    }
}

#[test]
fn the_stateless_era_sends_its_headers() {
    let d = tmpdir("http-modern");
    let log = d.join("headers.log");
    let server = fixture_http(
        &d,
        &json!({"tools": tools(), "era": "modern", "headerLog": log.display().to_string()}),
    );
    let o = snapshot_http(&d, &server.url(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(lock(&d)["server"]["protocolVersion"], "2026-07-28");
    let sent = fs::read_to_string(&log).unwrap();
    assert!(sent.contains("mcp-method=tools/list"), "{sent}");
    assert!(sent.contains("mcp-protocol-version=2026-07-28"), "{sent}");
    assert!(!sent.contains("mcp-session-id"), "{sent}");
}

#[test]
fn the_stateless_era_identity_and_instructions_over_http() {
    for (era, extra) in [
        ("modern", json!({})),
        ("modern", json!({"identityOnListsOnly": true})),
        ("dual", json!({})),
        ("legacy", json!({})),
    ] {
        let d = tmpdir(&format!("http-identity-{era}"));
        let mut spec = json!({"tools": tools(), "era": era, "instructions": "Call a first.",
            "serverInfo": {"name": "remote", "version": "4.1.0"}});
        spec.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let server = fixture_http(&d, &spec);
        let o = snapshot_http(&d, &server.url(), &[]);
        assert_eq!(o.status.code(), Some(0), "{era}: {}", stderr(&o));
        let l = lock(&d);
        assert_eq!(l["server"]["name"], "remote", "{era} {extra}");
        assert_eq!(l["server"]["version"], "4.1.0", "{era} {extra}");
        assert_eq!(
            l["server"]["instructions"], "Call a first.",
            "{era} {extra}"
        );
    }
    // A declared list the server does not know: empty, with a warning.
    let d = tmpdir("http-missing-list");
    let server = fixture_http(
        &d,
        &json!({"tools": tools(), "era": "modern", "missingLists": ["prompts/list"]}),
    );
    let o = snapshot_http(&d, &server.url(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("answers prompts/list with -32601"),
        "{}",
        stderr(&o)
    );
    assert_eq!(lock(&d)["surface"]["prompts"], json!([]));
}

#[test]
fn http_failures_are_clean_exit_2() {
    let cases: Vec<(&str, Value, &str)> = vec![
        ("401", json!({"httpStatus": 401}), "answered HTTP 401"),
        (
            "403",
            json!({"httpStatus": 403}),
            "most likely the server's Host/Origin check",
        ),
        ("404", json!({"httpStatus": 404}), "answered HTTP 404"),
        ("500", json!({"httpStatus": 500}), "answered HTTP 500"),
        (
            "content-length",
            json!({"announceLength": 600_000_000u64}),
            "announced a 600000000-byte response (Content-Length), over the 256 MiB",
        ),
        (
            "redirect",
            json!({"redirectLoop": true}),
            "does not follow redirects",
        ),
        (
            "sse-silent",
            json!({"tools": [], "sseNeverData": true}),
            "timed out after 2 s",
        ),
    ];
    for (name, spec, needle) in cases {
        let d = tmpdir(&format!("http-fail-{name}"));
        fs::write(d.join("mcp-covenant.lock"), "precious\n").unwrap();
        let server = fixture_http(&d, &spec);
        let o = snapshot_http(&d, &server.url(), &["--timeout", "2"]);
        assert_fails_cleanly(&o, needle);
        assert!(
            stderr(&o).contains(&server.url()),
            "{name}: the URL is named: {}",
            stderr(&o)
        );
        assert_eq!(
            fs::read_to_string(d.join("mcp-covenant.lock")).unwrap(),
            "precious\n",
            "{name}"
        );
    }
    let d = tmpdir("http-refused");
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let o = snapshot_http(&d, &url, &["--timeout", "2"]);
    assert_fails_cleanly(&o, "cannot connect");
    let o = snapshot_http(&d, "ftp://example/mcp", &[]);
    assert_fails_cleanly(&o, "needs an http:// or https:// URL");
}

/// A 401 body that echoes the bearer token across the 200-character cut of the message:
/// the token is masked before the cut, so no part of it is printed.
#[test]
fn a_token_echoed_across_the_cut_is_masked_whole() {
    let token = "tok-across-the-cut-0123456789";
    let body = format!("{}{token} rejected", "x".repeat(190));
    let d = tmpdir("http-echo-cut");
    let server = fixture_http(&d, &json!({"httpStatus": 401, "httpBody": body}));
    let header = format!("Authorization: Bearer {token}");
    let o = snapshot_http(&d, &server.url(), &["--timeout", "2", "--header", &header]);
    assert_fails_cleanly(&o, "answered HTTP 401");
    let err = stderr(&o);
    assert!(!err.contains("tok-across"), "{err}");
    assert!(!err.contains("0123456789"), "{err}");
}

#[test]
fn an_unlisted_ui_resource_is_read_over_http_in_both_eras() {
    for era in ["legacy", "modern"] {
        let d = tmpdir(&format!("http-apps-{era}"));
        let log = d.join("headers.log");
        let server = fixture_http(
            &d,
            &json!({"era": era, "headerLog": log.display().to_string(), "sse": era == "legacy",
                "tools": [{"name": "chart", "inputSchema": {"type": "object"},
                           "_meta": {"ui": {"resourceUri": "ui://demo/chart"}}}],
                "unlistedResources": [{"uri": "ui://demo/chart",
                    "mimeType": "text/html;profile=mcp-app", "text": "<html>body</html>",
                    "readMeta": {"ui": {"permissions": {"camera": {}}}}}]}),
        );
        let o = snapshot_http(&d, &server.url(), &["--read-ui-resources"]);
        assert_eq!(o.status.code(), Some(0), "{era}: {}", stderr(&o));
        assert_eq!(
            lock(&d)["surface"]["resources"],
            json!([{"uri": "ui://demo/chart", "mimeType": "text/html;profile=mcp-app",
                    "listed": false, "_meta": {"ui": {"permissions": {"camera": {}}}}}]),
            "{era}"
        );
        if era == "modern" {
            let sent = fs::read_to_string(&log).unwrap();
            assert!(sent.contains("mcp-method=resources/read"), "{sent}");
        }
    }
}
