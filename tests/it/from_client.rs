//! `snapshot --from-client PATH`: an agent client's config with four servers, two over
//! stdio and two over Streamable HTTP, with secrets in `env` and `headers`, becomes four
//! `[[server]]` entries holding no secret value, each captured into its lockfile.

use crate::common;
use std::fs;

use crate::common::{assert_fails_cleanly, bin, fixture, fixture_http, stderr, tmpdir};

#[test]
fn a_client_config_with_four_servers_becomes_four_entries_without_secrets() {
    let dir = tmpdir("from-client");
    let spec = serde_json::json!({
        "serverInfo": {"name": "demo", "version": "1.0.0"},
        "tools": [{"name": "search", "inputSchema": {"type": "object"}}]
    });
    let (a, b) = (dir.join("a"), dir.join("b"));
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    let http_a = fixture_http(&a, &spec);
    let http_b = fixture_http(&b, &spec);
    let spec_path = common::write_spec(&dir, &spec);
    let client = serde_json::json!({"mcpServers": {
        "stdio-one": {"command": fixture(), "args": [spec_path],
                      "env": {"DEMO_TOKEN": "tok-SECRET-1"}},
        "stdio two": {"type": "stdio", "command": fixture(), "args": [spec_path]},
        "remote": {"type": "http", "url": http_a.url(),
                   "headers": {"Authorization": "Bearer SECRET-2"}},
        "remote-env": {"url": http_b.url(), "headers": {"X-Api-Key": "${env:REMOTE_KEY}"}},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse"}
    }});
    fs::write(dir.join(".mcp.json"), client.to_string()).unwrap();
    fs::write(dir.join("covenant.toml"), "fail_on = \"breaking\"\n").unwrap();
    let o = bin()
        .current_dir(&dir)
        .env("DEMO_TOKEN", "tok-SECRET-1")
        .env("REMOTE_AUTHORIZATION", "Bearer SECRET-2")
        .env("REMOTE_KEY", "k")
        .args(["snapshot", "--from-client", ".mcp.json"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("`legacy`") && err.contains("SSE"), "{err}");
    let toml = fs::read_to_string(dir.join("covenant.toml")).unwrap();
    assert!(!toml.contains("SECRET"), "{toml}");
    assert!(toml.starts_with("fail_on = \"breaking\"\n"), "{toml}");
    assert_eq!(toml.matches("[[server]]").count(), 4, "{toml}");
    assert!(toml.contains("env = [\"DEMO_TOKEN\"]"), "{toml}");
    assert!(toml.contains("name = \"stdio-two\""), "{toml}");
    assert!(
        toml.contains("headers_from_env = { \"Authorization\" = \"REMOTE_AUTHORIZATION\" }"),
        "{toml}"
    );
    assert!(
        toml.contains("headers_from_env = { \"X-Api-Key\" = \"REMOTE_KEY\" }"),
        "{toml}"
    );
    for name in ["stdio-one", "stdio-two", "remote", "remote-env"] {
        let lock = fs::read_to_string(dir.join("locks").join(format!("{name}.lock"))).unwrap();
        assert!(lock.contains("\"search\""), "{name}: {lock}");
    }
    // Again: every name is taken, so nothing is added (and nothing written).
    let o = bin()
        .current_dir(&dir)
        .args(["snapshot", "--from-client", ".mcp.json"])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "no server to add");
    assert!(stderr(&o).contains("already in"), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(dir.join("covenant.toml")).unwrap(), toml);
    // The entries check like any other (an env name unset is an error naming it).
    let o = bin()
        .current_dir(&dir)
        .env_remove("DEMO_TOKEN")
        .args(["check", "--server", "stdio-one"])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "DEMO_TOKEN");
}

/// The hint that says how to (re)write a lockfile of an `--http` server never prints
/// the URL's password or token: it goes through the one redacting, escaping path.
#[test]
fn the_snapshot_hint_masks_the_http_url() {
    let dir = tmpdir("http-hint-masked");
    let spec = serde_json::json!({
        "serverInfo": {"name": "demo", "version": "1.0.0"},
        "tools": [{"name": "search", "inputSchema": {"type": "object"}}]
    });
    let http = fixture_http(&dir, &spec);
    let url = http
        .url()
        .replace("http://", "http://user:hunter2pw@")
        .replace("/mcp", "/mcp?code=c0desecret");
    let o = bin()
        .current_dir(&dir)
        .args(["snapshot", "--check", "--http", &url, "-o", "nope.lock"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(err.contains("snapshot"), "{err}");
    assert!(!err.contains("hunter2pw"), "{err}");
    assert!(!err.contains("c0desecret"), "{err}");
}

/// A registry address with a password: the status line and the error never show it.
#[test]
fn a_registry_url_is_masked_in_notices_and_errors() {
    let dir = tmpdir("registry-url-masked");
    fs::write(
        dir.join("package.json"),
        r#"{"name": "@acme/server", "version": "2.0.0"}"#,
    )
    .unwrap();
    let o = bin()
        .current_dir(&dir)
        .env("MCP_COVENANT_CACHE", dir.join("cache"))
        .env(
            "MCP_COVENANT_NPM_REGISTRY",
            "http://user:hunter2pw@127.0.0.1:1/",
        )
        .args(["check", "--baseline", "published", "--against", "x.lock"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("127.0.0.1:1"), "{err}");
    assert!(!err.contains("hunter2pw"), "{err}");
}

/// A server that cannot start: the error names its command with the credentials masked.
#[test]
fn a_start_error_masks_the_command_line() {
    let dir = tmpdir("start-error-masked");
    let o = bin()
        .current_dir(&dir)
        .args([
            "snapshot",
            "-o",
            "x.lock",
            "--",
            "no-such-mcp-server-program",
            "--token",
            "s3cr-A",
            "--header",
            "Authorization: Bearer s3cr-B",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no-such-mcp-server-program"), "{err}");
    assert!(!err.contains("s3cr"), "{err}");
}

/// A covenant.toml whose `server` is an inline array cannot take [[server]] tables after
/// it: `--from-client` says so and writes nothing (it wrote a file `check` then refused).
#[test]
fn an_inline_server_array_is_refused_and_nothing_is_written() {
    let dir = tmpdir("from-client-inline");
    let client = serde_json::json!({"mcpServers": {
        "one": {"command": "node", "args": ["server.js"]}
    }});
    fs::write(dir.join(".mcp.json"), client.to_string()).unwrap();
    let config = "server = [{ name = \"old\", command = [\"node\", \"old.js\"], lockfile = \"old.lock\" }]\n";
    fs::write(dir.join("covenant.toml"), config).unwrap();
    let o = bin()
        .current_dir(&dir)
        .args(["snapshot", "--from-client", ".mcp.json"])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "inline array");
    assert_eq!(
        fs::read_to_string(dir.join("covenant.toml")).unwrap(),
        config
    );
}
