//! Captures of real, published MCP servers, installed by tests/servers/setup.sh:
//! @modelcontextprotocol/server-everything, -filesystem, -memory, a FastMCP server
//! under PyPI `mcp` 1.x and 2.3, and PyPI `mcp-server-time` (2026, stateless era).
//! Every test here is `#[ignore]`d, so a plain `cargo test` shows them as ignored;
//! `scripts/test.sh` (the README's test command, which CI runs)
//! installs the servers and runs them with `--include-ignored`. Run so, a missing server
//! is a failure, never a silent pass.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;
use crate::common::{reordered, reversed_text};
use serde_json::Value;

fn servers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers")
}

/// The path, which must exist: these tests run only when asked for (`--include-ignored`).
fn require(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{what} is not installed ({}); run tests/servers/setup.sh (scripts/test.sh does)",
        path.display()
    );
    path
}

fn node_server(bin: &str) -> Vec<String> {
    let script = require(servers().join("node_modules/.bin").join(bin), bin);
    vec!["node".into(), script.display().to_string()]
}

fn python(venv: &str) -> String {
    require(servers().join(venv).join("bin/python"), venv)
        .display()
        .to_string()
}

fn snapshot(out: &Path, cmd: &[String], extra: &[&str]) -> Value {
    let o = bin()
        .args(["snapshot", "-o"])
        .arg(out)
        .args(extra)
        .arg("--")
        .args(cmd)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{cmd:?}: {}", stderr(&o));
    serde_json::from_str(&fs::read_to_string(out).unwrap()).unwrap()
}

fn check(baseline: &Path, against: &Path) -> (i32, Value) {
    let o = bin()
        .args(["check", "--format", "json", "--baseline"])
        .arg(baseline)
        .arg("--against")
        .arg(against)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code().unwrap_or(-1), report)
}

fn codes(report: &Value) -> Vec<String> {
    report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {} {}",
                c["severity"].as_str().unwrap(),
                c["code"].as_str().unwrap(),
                c["subject"].as_str().unwrap()
            )
        })
        .collect()
}

fn tool_count(lock: &Value) -> usize {
    lock["surface"]["tools"].as_array().unwrap().len()
}

#[test]
#[ignore = "needs tests/servers/setup.sh"]
fn server_everything_over_stdio() {
    let cmd = node_server("mcp-server-everything");
    let d = tmpdir("everything-stdio");
    let (a, b, rich) = (d.join("a.lock"), d.join("b.lock"), d.join("rich.lock"));
    let lock = snapshot(&a, &cmd, &[]);
    assert_eq!(tool_count(&lock), 13, "a bare client sees 13 tools");
    assert!(
        !lock["surface"]["resources"].as_array().unwrap().is_empty(),
        "paginated resources"
    );
    snapshot(&b, &cmd, &[]);
    let (code, report) = check(&a, &b);
    assert_eq!(
        (code, report["changes"].as_array().unwrap().len()),
        (0, 0),
        "{report}"
    );
    // Byte-identical on re-run into the same file.
    let first = fs::read(&a).unwrap();
    snapshot(&a, &cmd, &[]);
    assert_eq!(fs::read(&a).unwrap(), first);
    let lock = snapshot(
        &rich,
        &cmd,
        &["--client-capabilities", "roots,sampling,elicitation"],
    );
    assert_eq!(
        tool_count(&lock),
        16,
        "roots, sampling and elicitation unlock 3 more tools"
    );
    let (code, report) = check(&a, &rich);
    assert_eq!(code, 0, "tools added are minor");
    // Three new tools, and the same server version 2.0.0 (server.version.unchanged).
    assert_eq!(report["counts"]["minor"], 4, "{report}");
    assert_eq!(report["changes"][0]["code"], "server.version.unchanged");
}

#[test]
#[ignore = "needs tests/servers/setup.sh"]
fn server_filesystem_and_memory_over_stdio() {
    let mut fs_cmd = node_server("mcp-server-filesystem");
    let mem_cmd = node_server("mcp-server-memory");
    let d = tmpdir("fs-mem");
    let root = d.join("root");
    fs::create_dir_all(&root).unwrap();
    fs_cmd.push(root.display().to_string());
    let lock = snapshot(&d.join("fs.lock"), &fs_cmd, &[]);
    assert!(tool_count(&lock) >= 10, "{}", tool_count(&lock));
    assert!(lock["surface"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "read_text_file"));
    let lock = snapshot(&d.join("mem.lock"), &mem_cmd, &[]);
    assert!(lock["surface"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "create_entities"));
    // A capture checks clean against itself, live.
    let o = bin()
        .args(["check", "--baseline"])
        .arg(d.join("mem.lock"))
        .arg("--")
        .args(&mem_cmd)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

/// PyPI `mcp-server-time`, a 2026 release on the current Python SDK: it speaks only the
/// stateless era over stdio, refuses `initialize`, and says who it is only in the
/// result `_meta`.
#[test]
#[ignore = "needs tests/servers/setup.sh"]
fn mcp_server_time_on_the_current_sdk_is_captured_with_its_identity() {
    let exe = require(
        servers().join(".venv-time/bin/mcp-server-time"),
        "mcp-server-time",
    );
    let cmd = vec![exe.display().to_string()];
    let d = tmpdir("server-time");
    let (a, b) = (d.join("a.lock"), d.join("b.lock"));
    let lock = snapshot(&a, &cmd, &[]);
    assert_eq!(lock["server"]["name"], "mcp-time", "{}", lock["server"]);
    assert_eq!(
        lock["server"]["version"], "2026.10.19",
        "{}",
        lock["server"]
    );
    assert_eq!(lock["server"]["protocolVersion"], "2026-07-28");
    assert_eq!(tool_names(&lock), ["convert_time", "get_current_time"]);
    // The same capture pinned to the revision, and again in auto: no change.
    snapshot(&b, &cmd, &["--protocol", "2026-07-28"]);
    let (code, report) = check(&a, &b);
    assert_eq!(
        (code, report["changes"].as_array().unwrap().len()),
        (0, 0),
        "{report}"
    );
}

fn fastmcp(venv: &str, version: &str) -> Vec<String> {
    vec![
        python(venv),
        servers().join("fastmcp_server.py").display().to_string(),
        version.into(),
    ]
}

#[test]
#[ignore = "needs tests/servers/setup.sh"]
fn fastmcp_v1_to_v2_reports_the_breaks_and_mcp_1_and_2_agree() {
    let v1_old = fastmcp(".venv-mcp1", "v1");
    let v1_new = fastmcp(".venv-mcp2", "v1");
    let v2 = fastmcp(".venv-mcp1", "v2");
    let d = tmpdir("fastmcp");
    let (a, b, c) = (
        d.join("v1-mcp1.lock"),
        d.join("v1-mcp2.lock"),
        d.join("v2.lock"),
    );
    let lock = snapshot(&a, &v1_old, &[]);
    assert!(
        fs::read_to_string(&a).unwrap().contains("$defs"),
        "pydantic models give $defs"
    );
    assert_eq!(tool_count(&lock), 3);
    snapshot(&b, &v1_new, &[]);
    let (code, report) = check(&a, &b);
    assert_eq!(
        code, 0,
        "mcp 1.x and 2.3 describe the same server the same way: {report}"
    );
    assert_eq!(report["changes"].as_array().unwrap().len(), 0, "{report}");
    snapshot(&c, &v2, &[]);
    let (code, report) = check(&a, &c);
    assert_eq!(code, 1);
    let got = codes(&report);
    for want in [
        "breaking tool.removed tool:legacy_ping",
        "breaking schema.enum.value.removed tool:create_ticket",
        "breaking schema.enum.value.added tool:create_ticket",
        "breaking schema.property.required.added tool:search",
        "breaking schema.property.required.added prompt:summarize",
        "minor tool.added tool:close_ticket",
        "minor schema.property.added tool:search",
        "minor schema.enum.value.removed tool:create_ticket",
    ] {
        assert!(
            got.iter().any(|g| g == want),
            "missing `{want}` in {got:#?}"
        );
    }
}

/// Start `cmd` with PORT in its environment and as `{port}` in its arguments; a few
/// tries, since another process may take the free port before the server binds it.
#[cfg(feature = "http")]
fn serve(cmd: &[String]) -> Running {
    for _ in 0..5 {
        let port = free_port();
        let args: Vec<String> = cmd[1..]
            .iter()
            .map(|a| a.replace("{port}", &port.to_string()))
            .collect();
        let mut child = std::process::Command::new(&cmd[0])
            .args(&args)
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        if wait_for_port(port, &mut child) {
            return Running { child, port };
        }
    }
    panic!("{cmd:?} did not start listening in 5 tries");
}

#[cfg(feature = "http")]
fn snapshot_url(out: &Path, url: &str) -> Value {
    let o = bin()
        .args(["snapshot", "-o"])
        .arg(out)
        .args(["--http", url])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{url}: {}", stderr(&o));
    serde_json::from_str(&fs::read_to_string(out).unwrap()).unwrap()
}

#[cfg(feature = "http")]
#[test]
#[ignore = "needs tests/servers/setup.sh"]
fn server_everything_over_streamable_http_matches_stdio() {
    let mut cmd = node_server("mcp-server-everything");
    let d = tmpdir("everything-http");
    let stdio_lock = d.join("stdio.lock");
    snapshot(&stdio_lock, &cmd, &[]);
    cmd.push("streamableHttp".into());
    let server = serve(&cmd);
    let http_lock = d.join("http.lock");
    let lock = snapshot_url(&http_lock, &server.url());
    assert_eq!(tool_count(&lock), 13);
    let (code, report) = check(&stdio_lock, &http_lock);
    assert_eq!(
        (code, report["changes"].as_array().unwrap().len()),
        (0, 0),
        "{report}"
    );
    let first = fs::read(&http_lock).unwrap();
    snapshot_url(&http_lock, &server.url());
    assert_eq!(
        fs::read(&http_lock).unwrap(),
        first,
        "byte-identical over HTTP too"
    );
}

#[cfg(feature = "http")]
#[test]
#[ignore = "needs tests/servers/setup.sh"]
fn fastmcp_over_http_in_both_eras_matches_stdio() {
    let stdio = fastmcp(".venv-mcp1", "v1");
    let d = tmpdir("fastmcp-http");
    let base = d.join("stdio.lock");
    snapshot(&base, &stdio, &[]);
    for (venv, mode, era) in [
        (".venv-mcp1", "http", "2025-11-25"),
        (".venv-mcp2", "http", "2026-07-28"),
        (".venv-mcp2", "stateless", "2026-07-28"),
    ] {
        let mut cmd = fastmcp(venv, "v1");
        cmd.extend([mode.to_string(), "{port}".to_string()]);
        let server = serve(&cmd);
        let out = d.join(format!("{venv}-{mode}.lock"));
        let lock = snapshot_url(&out, &server.url());
        assert_eq!(lock["server"]["protocolVersion"], era, "{venv} {mode}");
        let (code, report) = check(&base, &out);
        assert_eq!(code, 0, "{venv} {mode}: {report}");
        assert_eq!(
            report["changes"].as_array().unwrap().len(),
            0,
            "{venv} {mode}: {report}"
        );
    }
}

/// A captured lockfile, rewritten with keys, element lists, `required`, `type`, `enum`
/// and composition variants in reverse order, checks as unchanged.
fn assert_reorder_is_no_change(lock: &Path) {
    let doc: Value = serde_json::from_str(&fs::read_to_string(lock).unwrap()).unwrap();
    let shuffled = lock.with_extension("reordered.lock");
    fs::write(&shuffled, reversed_text(&reordered(&doc, None, true))).unwrap();
    let (code, report) = check(lock, &shuffled);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        report["changes"].as_array().unwrap().len(),
        0,
        "{}: {report}",
        lock.display()
    );
    let (code, report) = check(lock, lock);
    assert_eq!((code, report["changes"].as_array().unwrap().len()), (0, 0));
}

#[test]
#[ignore = "needs tests/servers/setup.sh"]
fn real_captures_check_clean_against_themselves_reordered() {
    let d = tmpdir("reorder");
    let lock = d.join("everything.lock");
    snapshot(
        &lock,
        &node_server("mcp-server-everything"),
        &["--client-capabilities", "roots,sampling,elicitation"],
    );
    assert_reorder_is_no_change(&lock);
    for (venv, version) in [(".venv-mcp1", "v1"), (".venv-mcp2", "v2")] {
        let lock = d.join(format!("fastmcp-{version}.lock"));
        snapshot(&lock, &fastmcp(venv, version), &[]);
        assert_reorder_is_no_change(&lock);
    }
}
