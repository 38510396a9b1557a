//! `[[server]]` entries in covenant.toml: snapshot, check and lint run every server (or
//! the one --server names), reports are grouped by server, the exit code is the worst,
//! and lint reports tool and prompt names that two servers share.

use crate::common::schema;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;
use serde_json::{json, Value};

fn tool(name: &str) -> Value {
    json!({"name": name, "description": name, "inputSchema": {"type": "object"}})
}

/// A directory with covenant.toml naming `orders` (tools ping, place) and `billing`
/// (tools ping, charge, refund), both over stdio from the fixture, plus `extra`
/// config lines.
fn project(name: &str, extra: &str) -> PathBuf {
    let d = tmpdir(&format!("servers-{name}"));
    let d2 = d.clone();
    let spec = move |file: &str, tools: Vec<Value>| {
        let prompts = json!([{"name": "summary", "description": "a summary"}]);
        fs::write(
            d2.join(file),
            json!({"tools": tools, "prompts": prompts}).to_string(),
        )
        .unwrap();
    };
    spec("orders.json", vec![tool("ping"), tool("place")]);
    spec(
        "billing.json",
        vec![tool("ping"), tool("charge"), tool("refund")],
    );
    let fx = fixture().display().to_string();
    fs::write(
        d.join("covenant.toml"),
        format!(
            r#"[[server]]
name = "orders"
command = [{fx:?}, "orders.json"]
lockfile = "locks/orders.lock"

[[server]]
name = "billing"
command = [{fx:?}, "billing.json"]
lockfile = "locks/billing.lock"
{extra}"#
        ),
    )
    .unwrap();
    fs::create_dir(d.join("locks")).unwrap();
    d
}

fn run(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

/// Snapshot both, then break billing (refund removed).
fn snapshotted_then_broken(name: &str, extra: &str) -> PathBuf {
    let d = project(name, extra);
    let o = run(&d, &["snapshot"]);
    let code = if extra.is_empty() { 0 } else { 2 };
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    assert!(d.join("locks/orders.lock").exists() && d.join("locks/billing.lock").exists());
    fs::write(
        d.join("billing.json"),
        json!({"tools": [tool("ping"), tool("charge")], "prompts": [{"name": "summary", "description": "a summary"}]}).to_string(),
    )
    .unwrap();
    d
}

#[test]
fn check_runs_every_server_groups_the_reports_and_exits_with_the_worst() {
    let d = snapshotted_then_broken("check", "");
    let o = run(&d, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let orders = out
        .find("== server orders (locks/orders.lock)\n")
        .expect(&out);
    let billing = out
        .find("\n== server billing (locks/billing.lock)\n")
        .expect(&out);
    assert!(orders < billing, "{out}");
    assert!(out[orders..billing].contains("0 change(s)"), "{out}");
    assert!(
        out[billing..].contains("x tool:refund — tool was removed"),
        "{out}"
    );
    // --server picks one: its report alone, no heading.
    let o = run(&d, &["check", "--server", "orders"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("mcp-covenant: 0 change(s)"),
        "{}",
        stdout(&o)
    );
    let o = run(&d, &["check", "--server", "billing"]);
    assert_eq!(o.status.code(), Some(1));
    assert_fails_cleanly(
        &run(&d, &["check", "--server", "ordres"]),
        "no [[server]] named `ordres` in covenant.toml; did you mean `orders`? configured: orders, billing",
    );
    // A server given on the command line wins over the entries.
    let o = run(
        &d,
        &[
            "check",
            "--baseline",
            "locks/orders.lock",
            "--against",
            "locks/orders.lock",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_fails_cleanly(
        &run(&d, &["check", "--baseline", "locks/orders.lock"]),
        "pick one with --server NAME",
    );
}

#[test]
fn machine_formats_hold_every_server() {
    let d = snapshotted_then_broken("formats", "");
    let o = run(&d, &["check", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(doc["servers"][0]["name"], "orders");
    assert_eq!(doc["servers"][0]["report"]["required_bump"], "none");
    assert_eq!(doc["servers"][1]["lockfile"], "locks/billing.lock");
    assert_eq!(doc["servers"][1]["report"]["required_bump"], "major");

    let o = run(&d, &["check", "--format", "sarif"]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one SARIF document");
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/sarif-2.1.0-rtm.5.json");
    let schema: Value = serde_json::from_str(&fs::read_to_string(schema_path).unwrap()).unwrap();
    assert_eq!(schema::validate(&schema, &doc), Vec::<String>::new());
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["automationDetails"]["id"], "mcp-covenant/billing/");
    assert!(runs[1]["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["ruleId"] == "tool.removed"
            && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                == "locks/billing.lock"));

    let o = run(&d, &["check", "--format", "junit"]);
    let xml = stdout(&o);
    assert!(
        xml.contains("<testsuite name=\"mcp-covenant check orders\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testsuite name=\"mcp-covenant check billing\""),
        "{xml}"
    );
    assert_eq!(xml.matches("<testsuites ").count(), 1, "{xml}");
    // The totals are the suites' sums, and every suite is closed.
    let attr = |tag: &str, key: &str| -> Vec<usize> {
        xml.split(&format!("<{tag} "))
            .skip(1)
            .map(|t| {
                let v = t.split(&format!(" {key}=\"")).nth(1).unwrap();
                v[..v.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    };
    for key in ["tests", "failures"] {
        let suites: usize = attr("testsuite", key).iter().sum();
        assert_eq!(attr("testsuites", key), vec![suites], "{key}: {xml}");
    }
    assert_eq!(xml.matches("<testsuite ").count(), 2, "{xml}");
    assert_eq!(xml.matches("</testsuite>").count(), 2, "{xml}");
    assert!(attr("testsuites", "failures")[0] > 0, "{xml}");

    let o = run(&d, &["check", "--format", "markdown"]);
    let md = stdout(&o);
    assert!(
        md.starts_with("## Server `orders`\n\n### mcp-covenant"),
        "{md}"
    );
    assert!(md.contains("## Server `billing`"), "{md}");
}

#[test]
fn a_server_that_fails_is_exit_2_and_the_others_still_report() {
    let d = snapshotted_then_broken(
        "failing",
        "\n[[server]]\nname = \"gone\"\ncommand = [\"definitely-not-a-command-xyz\"]\nlockfile = \"locks/gone.lock\"\n",
    );
    let o = run(&d, &["check"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("error: ").count(), 1, "{err}");
    assert!(err.contains("error: server gone: "), "{err}");
    let out = stdout(&o);
    assert!(out.contains("x tool:refund — tool was removed"), "{out}");
    assert!(
        out.contains("== server gone (locks/gone.lock)\ncould not be checked"),
        "{out}"
    );
}

#[test]
fn lint_reports_names_two_servers_share() {
    let d = project("lint", "");
    let o = run(&d, &["lint"]);
    // The collision is a warning: lint fails on errors by default.
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let across = out.find("== across servers\n").expect(&out);
    assert!(
        out[across..].contains("tool:ping — tool `ping` is served by orders, billing"),
        "{out}"
    );
    assert!(out[across..].contains("[tool.name_collision]"), "{out}");
    assert!(
        out[across..].contains("prompt:summary — prompt `summary` is served by orders, billing"),
        "{out}"
    );
    assert!(
        !out.contains("tool:place — tool `place` is served"),
        "{out}"
    );
    assert_eq!(
        run(&d, &["lint", "--fail-on", "warning"]).status.code(),
        Some(1)
    );
    let o = run(&d, &["lint", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["groups"][2]["name"], "across servers");
    let codes: Vec<&str> = doc["groups"][2]["report"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["prompt.name_collision", "tool.name_collision"]);
    // One server alone has nothing to collide with.
    let o = run(&d, &["lint", "--server", "billing"]);
    assert!(!stdout(&o).contains("name_collision"), "{}", stdout(&o));
}

#[test]
fn server_entries_are_validated_with_their_place() {
    let d = tmpdir("servers-invalid");
    let config = d.join("covenant.toml");
    for (text, needle) in [
        (
            "[[server]]\nname = \"a\"\ncommand = [\"x\"]\nhttp = \"http://h/mcp\"\nlockfile = \"a.lock\"\n",
            "covenant.toml:1:1: server `a` has both `command` and `http`; give one",
        ),
        (
            "[[server]]\nname = \"a\"\ncommand = [\"x\"]\n",
            "covenant.toml:1:1: server `a` has no `lockfile`",
        ),
        (
            "[[server]]\nname = \"a b\"\ncommand = [\"x\"]\nlockfile = \"a.lock\"\n",
            "covenant.toml:2:8: server name \"a b\" must be letters, digits",
        ),
        (
            "[[server]]\nname = \"a\"\ncommand = []\nlockfile = \"a.lock\"\n",
            "covenant.toml:3:11: server `a`: `command` is empty",
        ),
        (
            "[[server]]\nname = \"a\"\ncommand = [\"x\"]\nlockfile = \"a.lock\"\n[[server]]\nname = \"a\"\ncommand = [\"y\"]\nlockfile = \"b.lock\"\n",
            "covenant.toml:6:8: a second [[server]] named `a`",
        ),
        (
            "[[server]]\nname = \"a\"\ncommand = [\"x\"]\nlockfile = \"a.lock\"\n[[server]]\nname = \"b\"\ncommand = [\"y\"]\nlockfile = \"a.lock\"\n",
            "covenant.toml:8:12: servers `a` and `b` share the lockfile a.lock",
        ),
        (
            "[[server]]\nname = \"a\"\ncommand = [\"x\"]\nlockfile = \"a.lock\"\nport = 3\n",
            "unknown field `port`",
        ),
    ] {
        fs::write(&config, text).unwrap();
        assert_fails_cleanly(&run(&d, &["check"]), needle);
    }
    // -o names one file; several servers each have theirs.
    let d = project("snapshot-o", "");
    assert_fails_cleanly(
        &run(&d, &["snapshot", "-o", "x.lock"]),
        "pick one with --server NAME",
    );
    // An HTTP server's header comes from the environment, and must be there.
    let d = tmpdir("servers-http-env");
    fs::write(
        d.join("covenant.toml"),
        "[[server]]\nname = \"api\"\nhttp = \"http://127.0.0.1:9/mcp\"\nheaders_from_env = { Authorization = \"MCP_COVENANT_TEST_UNSET_TOKEN\" }\nlockfile = \"api.lock\"\n",
    )
    .unwrap();
    let o = bin()
        .current_dir(&d)
        .env_remove("MCP_COVENANT_TEST_UNSET_TOKEN")
        .args(["snapshot"])
        .output()
        .unwrap();
    assert_fails_cleanly(
        &o,
        "server api: environment variable MCP_COVENANT_TEST_UNSET_TOKEN (for the Authorization header) is not set",
    );
}

/// `check --baseline-rev REV` over [[server]] entries: each lockfile against itself at
/// REV, and a server REV had and this change dropped is reported as everything removed.
#[test]
fn baseline_rev_covers_every_server_and_a_dropped_one() {
    let d = project("rev", "");
    let o = run(&d, &["snapshot"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    git_init(&d);
    git_commit(&d, "two servers");
    git(&d, &["checkout", "-q", "-b", "pr"]);
    let o = run(&d, &["check", "--baseline-rev", "main"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The pull request drops billing from covenant.toml, and its lockfile with it.
    let config = fs::read_to_string(d.join("covenant.toml")).unwrap();
    let kept = &config[..config.find("\n[[server]]\nname = \"billing\"").unwrap()];
    fs::write(d.join("covenant.toml"), format!("{kept}\n")).unwrap();
    fs::remove_file(d.join("locks/billing.lock")).unwrap();
    git_commit(&d, "drop billing");
    let o = run(&d, &["check", "--baseline-rev", "main"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "warning: server billing is in git:main:./covenant.toml and not in covenant.toml"
        ),
        "{}",
        stderr(&o)
    );
    let out = stdout(&o);
    let billing = out
        .find("== server billing (locks/billing.lock)")
        .expect(&out);
    assert!(
        out[billing..].contains("x tool:charge — tool was removed"),
        "{out}"
    );
    assert!(
        out[billing..].contains("x tool:refund — tool was removed"),
        "{out}"
    );
}

/// A pull request that moves a server's lockfile (same server name) and breaks the server
/// in the same change: `--baseline-rev` finds the server's lockfile at REV by its name in
/// REV's covenant.toml, so the break is reported, not hidden as "a new lockfile".
#[test]
fn baseline_rev_follows_a_moved_lockfile_by_server_name() {
    let d = project("moved", "");
    let o = run(&d, &["snapshot"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    git_init(&d);
    git_commit(&d, "two servers");
    git(&d, &["checkout", "-q", "-b", "pr"]);
    let config = fs::read_to_string(d.join("covenant.toml")).unwrap();
    fs::write(
        d.join("covenant.toml"),
        config.replace("locks/billing.lock", "locks/payments.lock"),
    )
    .unwrap();
    fs::remove_file(d.join("locks/billing.lock")).unwrap();
    fs::write(
        d.join("billing.json"),
        json!({"tools": [tool("ping"), tool("charge")], "prompts": [{"name": "summary", "description": "a summary"}]}).to_string(),
    )
    .unwrap();
    let o = run(&d, &["snapshot"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    git_commit(&d, "move billing's lockfile and drop refund");
    let o = run(&d, &["check", "--baseline-rev", "main"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("server billing: its lockfile was locks/billing.lock at main"),
        "{err}"
    );
    assert!(!err.contains("every element is new"), "{err}");
    assert!(
        stdout(&o).contains("x tool:refund — tool was removed"),
        "{}",
        stdout(&o)
    );
    // A covenant.toml at REV that cannot be read: exit 2, never a silent pass.
    git(&d, &["checkout", "-q", "main"]);
    fs::write(d.join("covenant.toml"), "[[server]\nname = 1\n").unwrap();
    git_commit(&d, "a broken covenant.toml");
    git(&d, &["checkout", "-q", "pr"]);
    let o = run(&d, &["check", "--baseline-rev", "main"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot read the [[server]] entries of git:main:"),
        "{}",
        stderr(&o)
    );
}
