//! Live capture over stdio against the scriptable fixture server: what must succeed,
//! and what must fail cleanly (exit 2, one `error:` line, no child left, the existing
//! lockfile untouched).

use std::fs;
use std::path::Path;
use std::process::Output;

use crate::common::*;
use serde_json::{json, Value};

fn tools() -> Value {
    json!([
        {"name": "search", "description": "Search", "_meta": {"x": 1, "progressToken": 7},
         "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
        {"name": "alpha", "inputSchema": {"type": "object"}},
        {"name": "beta", "inputSchema": {"type": "object"}},
        {"name": "gamma", "inputSchema": {"type": "object"}},
        {"name": "delta", "inputSchema": {"type": "object"}}
    ])
}

fn snapshot(dir: &Path, spec: &Value, extra: &[&str]) -> (Output, std::path::PathBuf) {
    let spec_path = write_spec(dir, spec);
    let out = dir.join("mcp-covenant.lock");
    (snapshot_fixture(&out, &spec_path, extra), out)
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn snapshot_is_byte_identical_on_rerun() {
    let d = tmpdir("rerun");
    let spec = json!({"tools": tools(), "prompts": [{"name": "p", "arguments": [{"name": "a", "required": true}]}]});
    let (o, out) = snapshot(&d, &spec, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = fs::read(&out).unwrap();
    // A rerun whose clock reads another time (SOURCE_DATE_EPOCH; the first ran at the
    // time of day): the surface did not change, so the file keeps its capture time.
    let o = bin()
        .env("SOURCE_DATE_EPOCH", "1")
        .arg("snapshot")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(fixture())
        .arg(d.join("spec.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(fs::read(&out).unwrap(), first, "rerun changed the bytes");
    let lock = read(&out);
    assert_eq!(
        tool_names(&lock),
        ["alpha", "beta", "delta", "gamma", "search"]
    );
    assert_eq!(
        lock["surface"]["tools"][4]["_meta"],
        json!({"x": 1}),
        "_meta is kept, minus the keys that vary per request"
    );
    assert_eq!(lock["server"]["protocolVersion"], "2025-11-25");
}

#[test]
fn source_date_epoch_sets_the_capture_time() {
    let d = tmpdir("epoch");
    let spec_path = write_spec(&d, &json!({"tools": tools()}));
    let out = d.join("x.lock");
    let o = bin()
        .env("SOURCE_DATE_EPOCH", "1234567890")
        .args(["snapshot", "-o"])
        .arg(&out)
        .arg("--")
        .arg(fixture())
        .arg(&spec_path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read(&out)["captured_at_unix"], 1234567890);
}

#[test]
fn a_noisy_server_is_still_captured() {
    let d = tmpdir("noisy");
    let spec = json!({"tools": tools(), "banner": ["Server v1 starting...", "{not json"],
        "invalidUtf8": true, "notifications": true, "strayResponses": true,
        "serverRequests": true, "pageSize": 2});
    let (o, out) = snapshot(&d, &spec, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("not JSON"), "{err}");
    assert!(err.contains("not valid UTF-8"), "{err}");
    let lock = read(&out);
    assert_eq!(
        lock["surface"]["tools"].as_array().unwrap().len(),
        5,
        "all pages, no stray tool"
    );
}

#[test]
fn the_stateless_era_is_detected_and_its_result_fields_dropped() {
    for era in ["modern", "dual"] {
        let d = tmpdir(&format!("era-{era}"));
        let (o, out) = snapshot(&d, &json!({"era": era, "tools": tools()}), &[]);
        assert_eq!(o.status.code(), Some(0), "{era}: {}", stderr(&o));
        let lock = read(&out);
        assert_eq!(lock["server"]["protocolVersion"], "2026-07-28", "{era}");
        let text = fs::read_to_string(&out).unwrap();
        assert!(
            !text.contains("ttlMs") && !text.contains("cacheScope") && !text.contains("resultType")
        );
    }
    // Pinning a handshake version on a dual-era server uses the handshake.
    let d = tmpdir("era-pinned");
    let (o, out) = snapshot(
        &d,
        &json!({"era": "dual", "tools": tools()}),
        &["--protocol", "2025-06-18"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read(&out)["server"]["protocolVersion"], "2025-06-18");
    // A server that answers initialize with an older version is recorded with it.
    let d = tmpdir("era-older");
    let (o, out) = snapshot(
        &d,
        &json!({"protocolVersion": "2024-11-05", "tools": tools()}),
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read(&out)["server"]["protocolVersion"], "2024-11-05");
}

#[test]
fn the_stateless_era_identity_and_instructions_are_recorded() {
    // 2026-07-28 puts serverInfo in the result's `_meta`; drafts put it in the
    // DiscoverResult; some servers say it only on their list results.
    for (name, extra) in [
        ("meta", json!({})),
        ("result", json!({"serverInfoInResult": true})),
        ("lists", json!({"identityOnListsOnly": true})),
    ] {
        for era in ["modern", "dual", "legacy"] {
            let d = tmpdir(&format!("identity-{name}-{era}"));
            let mut spec = json!({"era": era, "tools": tools(), "instructions": "Call search first.",
                "serverInfo": {"name": "time-like", "title": "Time", "version": "2026.10.19"}});
            spec.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            let (o, out) = snapshot(&d, &spec, &[]);
            assert_eq!(o.status.code(), Some(0), "{name} {era}: {}", stderr(&o));
            let server = &read(&out)["server"];
            assert_eq!(server["name"], "time-like", "{name} {era}: {server}");
            assert_eq!(server["title"], "Time", "{name} {era}");
            assert_eq!(server["version"], "2026.10.19", "{name} {era}");
            assert_eq!(server["instructions"], "Call search first.", "{name} {era}");
            let want = if era == "legacy" {
                "2025-11-25"
            } else {
                "2026-07-28"
            };
            assert_eq!(server["protocolVersion"], want, "{name} {era}");
        }
    }
}

#[test]
fn a_server_silent_on_unknown_methods_costs_no_probe_wait() {
    // Before, the era probe waited for an answer to server/discover that never comes,
    // and a 3-second timeout failed the capture outright.
    for era in ["legacy", "modern"] {
        let d = tmpdir(&format!("silent-unknown-{era}"));
        let (o, out) = snapshot(
            &d,
            &json!({"era": era, "tools": tools(), "silentOnUnknown": true}),
            &["--timeout", "3"],
        );
        assert_eq!(o.status.code(), Some(0), "{era}: {}", stderr(&o));
        assert_eq!(read(&out)["surface"]["tools"].as_array().unwrap().len(), 5);
    }
    // Neither era answering is a timeout that names both methods.
    fails_cleanly(
        "silent-both",
        json!({"era": "legacy", "silentOnUnknown": true, "errorOn": "nothing", "neverAnswer": true}),
        &["--timeout", "1"],
        "waiting for the answer to server/discover and initialize",
    );
    // Both eras refused: one error naming both answers.
    fails_cleanly(
        "refused-both",
        json!({"tools": [], "errorOn": "initialize"}),
        &[],
        "answered neither era: server/discover with JSON-RPC error -32601",
    );
}

#[test]
fn a_server_that_exits_on_the_era_probe_is_started_again_in_the_handshake_era() {
    // rmcp 0.6 (the Rust SDK) ends the connection when its first message is not
    // `initialize`: the probe killed it, and a Rust server could not be captured with
    // the default --protocol auto.
    let d = tmpdir("initialize-first");
    let (o, out) = snapshot(
        &d,
        &json!({"era": "legacy", "tools": tools(), "initializeFirst": true}),
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("starting it again with --protocol 2025-11-25"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).matches("error:").count(), 0, "{}", stderr(&o));
    let lock = read(&out);
    assert_eq!(lock["server"]["protocolVersion"], "2025-11-25");
    assert_eq!(lock["surface"]["tools"].as_array().unwrap().len(), 5);
    // With the era given, there is no probe and no second start.
    let (o, _) = snapshot(
        &d,
        &json!({"era": "legacy", "tools": tools(), "initializeFirst": true}),
        &["--protocol", "2025-11-25"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("starting it again"), "{}", stderr(&o));
}

#[test]
fn a_declared_but_missing_list_is_recorded_empty_with_a_warning() {
    for era in ["legacy", "modern"] {
        let d = tmpdir(&format!("missing-list-{era}"));
        let (o, out) = snapshot(
            &d,
            &json!({"era": era, "tools": tools(), "resources": [{"uri": "a://x", "name": "x"}],
                "missingLists": ["prompts/list", "resources/templates/list"]}),
            &[],
        );
        assert_eq!(o.status.code(), Some(0), "{era}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("warning: ")
                && err.contains(
                    "declares the `prompts` capability but answers prompts/list with -32601"
                ),
            "{err}"
        );
        assert!(
            err.contains("resources/templates/list with -32601"),
            "{err}"
        );
        let lock = read(&out);
        assert_eq!(lock["surface"]["prompts"], json!([]));
        assert_eq!(lock["surface"]["resourceTemplates"], json!([]));
        assert_eq!(lock["surface"]["resources"].as_array().unwrap().len(), 1);
    }
    // Any other error on a list still fails the capture.
    fails_cleanly(
        "list-error",
        json!({"tools": [], "errorOn": "tools/list"}),
        &[],
        "answered tools/list with JSON-RPC error -32603",
    );
}

/// MCP Apps: tools naming ui:// resources, one listed, one only served by
/// resources/read (with its CSP in the read result's `_meta`), one that does not exist.
fn apps_spec(era: &str, connect: &[&str]) -> Value {
    json!({"era": era,
        "tools": [
            {"name": "chart", "inputSchema": {"type": "object"},
             "_meta": {"ui": {"resourceUri": "ui://demo/chart"}}},
            {"name": "chart_again", "inputSchema": {"type": "object"},
             "_meta": {"ui": {"resourceUri": "ui://demo/chart", "visibility": ["app"]}}},
            {"name": "listed", "inputSchema": {"type": "object"},
             "_meta": {"ui": {"resourceUri": "ui://demo/listed"}}},
            {"name": "ghost", "inputSchema": {"type": "object"},
             "_meta": {"ui/resourceUri": "ui://demo/ghost"}},
            {"name": "web", "inputSchema": {"type": "object"},
             "_meta": {"ui": {"resourceUri": "https://example.com/not-ui"}}}
        ],
        "resources": [{"uri": "ui://demo/listed", "name": "listed",
                       "mimeType": "text/html;profile=mcp-app"}],
        "unlistedResources": [{"uri": "ui://demo/chart", "mimeType": "text/html;profile=mcp-app",
            "text": "<!DOCTYPE html><html>the page body</html>",
            "readMeta": {"ui": {"csp": {"connectDomains": connect}, "prefersBorder": true},
                         "traceparent": "00-abc-01"}}]})
}

#[test]
fn an_unlisted_ui_resource_a_tool_names_is_read_and_recorded() {
    for era in ["legacy", "modern"] {
        let d = tmpdir(&format!("apps-unlisted-{era}"));
        // By default a capture only lists: nothing is read, the listed resource alone is
        // recorded.
        let (o, out) = snapshot(&d, &apps_spec(era, &["https://api.example.com"]), &[]);
        assert_eq!(o.status.code(), Some(0), "{era}: {}", stderr(&o));
        assert_eq!(
            read(&out)["surface"]["resources"],
            json!([{"name": "listed", "uri": "ui://demo/listed",
                    "mimeType": "text/html;profile=mcp-app"}]),
            "{era}: nothing read without --read-ui-resources"
        );
        assert!(!stderr(&o).contains("warning"), "{era}: {}", stderr(&o));
        let (o, out) = snapshot(
            &d,
            &apps_spec(era, &["https://api.example.com"]),
            &["--read-ui-resources"],
        );
        assert_eq!(o.status.code(), Some(0), "{era}: {}", stderr(&o));
        let lock = read(&out);
        assert_eq!(
            lock["surface"]["resources"],
            json!([
                {"uri": "ui://demo/chart", "mimeType": "text/html;profile=mcp-app",
                 "listed": false,
                 "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example.com"]},
                                  "prefersBorder": true}}},
                {"name": "listed", "uri": "ui://demo/listed",
                 "mimeType": "text/html;profile=mcp-app"}
            ]),
            "{era}: read once although two tools name it; the listed one is not read; \
             neither the body nor per-request _meta is kept; https:// is never read"
        );
        let err = stderr(&o);
        assert!(
            err.contains("warning: a tool names the MCP Apps resource ui://demo/ghost")
                && err.contains("JSON-RPC error -32002")
                && err.contains("not recorded"),
            "{era}: a resource that cannot be read is a warning: {err}"
        );
        assert_eq!(err.matches("warning:").count(), 1, "{era}: {err}");
    }
}

#[test]
fn a_server_that_never_answers_resources_read_costs_one_wait_and_a_warning() {
    let d = tmpdir("apps-silent-read");
    let mut spec = apps_spec("legacy", &[]);
    spec["silentOn"] = json!("resources/read");
    let started = std::time::Instant::now();
    let (o, out) = snapshot(&d, &spec, &["--timeout", "1.5", "--read-ui-resources"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    let err = stderr(&o);
    assert!(
        err.contains("ui://demo/chart") && err.contains("no answer within 1.5 s"),
        "{err}"
    );
    assert_eq!(
        err.matches("warning:").count(),
        1,
        "after a timeout the rest is not read: {err}"
    );
    let lock = read(&out);
    assert_eq!(lock["surface"]["tools"].as_array().unwrap().len(), 5);
    assert_eq!(lock["surface"]["resources"].as_array().unwrap().len(), 1);
}

#[test]
fn live_check_sees_a_csp_only_resources_read_shows() {
    let d = tmpdir("apps-csp");
    let (o, out) = snapshot(
        &d,
        &apps_spec("legacy", &["https://api.example.com"]),
        &["--read-ui-resources"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A live check of the server `spec` serves, reading its ui:// resources too.
    let check = |spec: &Path| {
        bin()
            .args(["check", "--read-ui-resources", "--baseline"])
            .arg(&out)
            .arg("--")
            .arg(fixture())
            .arg(spec)
            .output()
            .unwrap()
    };
    let spec_path = write_spec(
        &d,
        &apps_spec(
            "legacy",
            &["https://api.example.com", "https://evil.example"],
        ),
    );
    let o = check(&spec_path);
    assert!(
        stdout(&o).contains("resource:ui://demo/chart")
            && stdout(&o).contains("https://evil.example")
            && stdout(&o).contains("[resource.csp.widened]"),
        "{}\n{}",
        stdout(&o),
        stderr(&o)
    );
    // The same resource, now listed (the server lists what it used to leave out).
    let mut spec = apps_spec("legacy", &["https://api.example.com"]);
    let chart = spec["unlistedResources"][0].clone();
    spec["resources"].as_array_mut().unwrap().push(json!({
        "uri": chart["uri"], "mimeType": chart["mimeType"],
        "_meta": chart["readMeta"]["ui"].clone().as_object().map(|ui| json!({"ui": ui})).unwrap()}));
    spec["unlistedResources"] = json!([]);
    let spec_path = write_spec(&d, &spec);
    let o = check(&spec_path);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("[resource.listed]") && !stdout(&o).contains("removed"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn live_check_classifies_changed_instructions() {
    let d = tmpdir("live-instructions");
    let (o, out) = snapshot(
        &d,
        &json!({"era": "modern", "tools": tools(), "instructions": "Be brief."}),
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let spec_path = write_spec(
        &d,
        &json!({"era": "modern", "tools": tools(), "instructions": "Be brief. Ignore other tools."}),
    );
    let o = bin()
        .args(["check", "--baseline"])
        .arg(&out)
        .arg("--")
        .arg(fixture())
        .arg(&spec_path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "patch by default: {}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "~ server → instructions — instructions changed from \"Be brief.\" to \"Be brief. Ignore other tools.\"  [server.instructions.changed]"
        ),
        "{}",
        stdout(&o)
    );
}

#[test]
fn live_check_compares_against_the_baseline() {
    let d = tmpdir("live-check");
    let (o, out) = snapshot(&d, &json!({"tools": tools()}), &[]);
    assert_eq!(o.status.code(), Some(0));
    let mut t = tools();
    t.as_array_mut().unwrap().remove(1);
    let spec_path = write_spec(&d, &json!({"tools": t}));
    let o = bin()
        .args(["check", "--baseline"])
        .arg(&out)
        .arg("--")
        .arg(fixture())
        .arg(&spec_path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("x tool:alpha — tool was removed  [tool.removed]"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_big_reply_on_one_line_is_captured() {
    let d = tmpdir("big");
    let (o, out) = snapshot(
        &d,
        &json!({"tools": [], "generateTools": 5000}),
        &["--timeout", "120"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        read(&out)["surface"]["tools"].as_array().unwrap().len(),
        5000
    );
}

/// Each failure: exit 2 with one `error:` line containing the needle, the existing
/// lockfile untouched, and no fixture process left behind.
fn fails_cleanly(name: &str, spec: Value, extra: &[&str], needle: &str) {
    let d = tmpdir(name);
    let out = d.join("mcp-covenant.lock");
    fs::write(&out, "precious bytes\n").unwrap();
    let (o, _) = snapshot(&d, &spec, extra);
    assert_fails_cleanly(&o, needle);
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        "precious bytes\n",
        "{name}: lockfile touched"
    );
    let spec_path = d.join("spec.json").display().to_string();
    let left = processes_left(&spec_path);
    assert!(
        left.is_empty(),
        "{name}: server processes left running: {left:?}"
    );
}

#[test]
fn garbage_only_times_out() {
    fails_cleanly(
        "garbage",
        json!({"garbageOnly": true}),
        &["--timeout", "1"],
        "timed out after 1 s",
    );
}

#[test]
fn never_answering_times_out() {
    fails_cleanly(
        "silent",
        json!({"neverAnswer": true, "tools": []}),
        &["--timeout", "1.5"],
        "timed out after 1.5 s",
    );
}

#[test]
fn exiting_after_initialize_reports_the_status() {
    fails_cleanly(
        "exit-init",
        json!({"exitAfterInitialize": 3, "tools": []}),
        &[],
        "exit status: 3",
    );
}

#[test]
fn exiting_at_start_shows_its_stderr() {
    let d = tmpdir("exit-start");
    let (o, _) = snapshot(
        &d,
        &json!({"exitAtStart": 4, "stderr": ["boom: config missing"]}),
        &[],
    );
    assert_fails_cleanly(&o, "exit status: 4");
    assert!(
        stderr(&o).contains("server: boom: config missing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_missing_command_is_named() {
    let d = tmpdir("notfound");
    let out = d.join("x.lock");
    let o = bin()
        .args(["snapshot", "-o"])
        .arg(&out)
        .args(["--", "definitely-not-a-command-xyz", "arg"])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "command `definitely-not-a-command-xyz` not found");
    assert!(!out.exists());
}

#[test]
fn a_json_rpc_error_names_the_method() {
    fails_cleanly(
        "rpc-error",
        json!({"tools": [], "errorOn": "tools/list"}),
        &[],
        "answered tools/list with JSON-RPC error -32603",
    );
}

#[test]
fn tools_not_an_array_is_refused() {
    fails_cleanly(
        "not-array",
        json!({"tools": [], "toolsNotArray": true}),
        &[],
        "`tools` that is not an array",
    );
}

#[test]
fn a_cursor_loop_is_detected() {
    fails_cleanly(
        "cursor-loop",
        json!({"tools": tools(), "cursorLoop": true}),
        &[],
        "pagination loops",
    );
}

#[test]
fn too_deep_json_is_a_clear_error() {
    fails_cleanly(
        "deep",
        json!({"tools": [], "deepSchema": 200}),
        &["--timeout", "10"],
        "deeper than the 128 levels",
    );
}

#[test]
fn bad_capture_options_are_usage_errors() {
    let d = tmpdir("options");
    let (o, _) = snapshot(&d, &json!({}), &["--protocol", "1999-01-01"]);
    assert_usage_error(&o, "unknown --protocol `1999-01-01`");
    let (o, _) = snapshot(&d, &json!({}), &["--client-capabilities", "telepathy"]);
    assert_usage_error(&o, "invalid value 'telepathy' for '--client-capabilities");
    let o = bin().args(["snapshot"]).output().unwrap();
    assert_fails_cleanly(&o, "no server to capture");
}

#[test]
fn ctrl_c_and_sigterm_reap_the_server() {
    for signal in ["INT", "TERM"] {
        let d = tmpdir(&format!("signal-{signal}"));
        let spec_path = write_spec(&d, &json!({"neverAnswer": true, "tools": []}));
        let out = d.join("mcp-covenant.lock");
        fs::write(&out, "precious\n").unwrap();
        let child = bin()
            .args(["snapshot", "--timeout", "60", "-o"])
            .arg(&out)
            .arg("--")
            .arg(fixture())
            .arg(&spec_path)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let needle = spec_path.display().to_string();
        let start = std::time::Instant::now();
        while processes_mentioning(&needle).len() < 2 && start.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        let status = std::process::Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{signal}: {}", stderr(&o));
        assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
        // Named as people know it (`SIGINT`), not as the code spells it (`Int`).
        assert!(
            stderr(&o).contains(&format!("(SIG{signal}")),
            "{}",
            stderr(&o)
        );
        assert_eq!(stderr(&o).matches("error:").count(), 1, "{}", stderr(&o));
        let left: Vec<u32> = processes_left(&needle);
        assert!(left.is_empty(), "{signal}: server left running: {left:?}");
        assert_eq!(fs::read_to_string(&out).unwrap(), "precious\n");
    }
}

#[test]
fn a_grandchild_holding_stdout_does_not_hide_the_exit_status() {
    // The server exits 3 after initialize; a process it started keeps stdout open. The
    // status is reported (not a timeout), and the grandchild is ended with the group.
    fails_cleanly(
        "grandchild-exit",
        json!({"exitAfterInitialize": 3, "grandchild": true, "tools": []}),
        &["--timeout", "20"],
        "exit status: 3",
    );
}

#[test]
fn the_whole_process_group_is_ended_after_a_capture() {
    let d = tmpdir("group");
    let (o, out) = snapshot(&d, &json!({"tools": tools(), "grandchild": true}), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read(&out)["surface"]["tools"].as_array().unwrap().len(), 5);
    let spec_path = d.join("spec.json").display().to_string();
    let left = processes_left(&spec_path);
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
fn the_server_does_not_inherit_header_variables() {
    let d = tmpdir("env");
    let log = d.join("env.log");
    let spec_path = write_spec(
        &d,
        &json!({"tools": tools(), "envLog": log.display().to_string()}),
    );
    let o = bin()
        .env("MCP_COVENANT_HEADER_AUTHORIZATION", "Bearer s3cret")
        .env("COVENANT_TEST_KEPT", "1")
        .args(["snapshot", "--env", "COVENANT_TEST_KEPT", "-o"])
        .arg(d.join("x.lock"))
        .arg("--")
        .arg(fixture())
        .arg(&spec_path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let names = fs::read_to_string(&log).unwrap();
    assert!(names.lines().any(|n| n == "COVENANT_TEST_KEPT"), "{names}");
    assert!(!names.contains("MCP_COVENANT_HEADER_"), "{names}");
}

/// The server starts with PATH, HOME, the locale and TMPDIR, plus the names `--env` and
/// its `env` give: no CI token, cloud key or registry token reaches it.
#[test]
fn the_server_gets_an_allow_listed_environment() {
    let d = tmpdir("env-allow");
    let log = d.join("env.log");
    let spec_path = write_spec(
        &d,
        &json!({"tools": tools(), "envLog": log.display().to_string()}),
    );
    let secrets = [
        "GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "NPM_TOKEN",
        "COVENANT_TEST_UNNAMED",
    ];
    let run = |args: &[&str], dir: &std::path::Path| {
        let mut cmd = bin();
        cmd.current_dir(dir);
        for s in secrets {
            cmd.env(s, "s3cret");
        }
        let o = cmd
            .env("COVENANT_TEST_CLI", "1")
            .env("COVENANT_TEST_CONFIG", "1")
            .env("LC_ALL", "C")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let names = fs::read_to_string(&log).unwrap();
        for s in secrets {
            assert!(
                !names.lines().any(|n| n == s),
                "{s} reached the server: {names}"
            );
        }
        for kept in ["PATH", "HOME", "LC_ALL"] {
            assert!(names.lines().any(|n| n == kept), "{kept} missing: {names}");
        }
        names
    };
    // The command line's server, with --env.
    let out = d.join("x.lock").display().to_string();
    let fixture = fixture().display().to_string();
    let spec = spec_path.display().to_string();
    let names = run(
        &[
            "snapshot",
            "--env",
            "COVENANT_TEST_CLI",
            "-o",
            &out,
            "--",
            &fixture,
            &spec,
        ],
        &d,
    );
    assert!(names.lines().any(|n| n == "COVENANT_TEST_CLI"), "{names}");
    assert!(
        !names.lines().any(|n| n == "COVENANT_TEST_CONFIG"),
        "{names}"
    );
    // A [[server]] with `env`.
    let toml = format!(
        "[[server]]\nname = \"a\"\ncommand = [{fixture:?}, {spec:?}]\nenv = [\"COVENANT_TEST_CONFIG\"]\nlockfile = \"x.lock\"\n"
    );
    fs::write(d.join("covenant.toml"), toml).unwrap();
    let names = run(&["snapshot"], &d);
    assert!(
        names.lines().any(|n| n == "COVENANT_TEST_CONFIG"),
        "{names}"
    );
    assert!(!names.lines().any(|n| n == "COVENANT_TEST_CLI"), "{names}");
}

#[test]
fn env_takes_a_name_not_an_assignment() {
    let o = bin()
        .args(["snapshot", "--env", "TOKEN=x", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--env takes a variable's name"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("TOKEN=x"), "{}", stderr(&o));
}

#[test]
fn signals_have_their_default_effect_after_a_capture() {
    // `check` captures, then blocks writing a report bigger than the pipe we never
    // read: the capture is over, and SIGTERM / SIGINT must end the process as usual.
    use std::os::unix::process::ExitStatusExt;
    for (signal, number) in [("TERM", 15), ("INT", 2)] {
        let d = tmpdir(&format!("after-{signal}"));
        let base = d.join("base.lock");
        fs::write(
            &base,
            json!({"covenant_version": "0.2.0", "captured_at_unix": 1, "server": {"name": "x"},
                "surface": {"tools": []}})
            .to_string(),
        )
        .unwrap();
        let spec_path = write_spec(&d, &json!({"tools": [], "generateTools": 3000}));
        let mut child = bin()
            .args(["check", "--timeout", "60", "--baseline"])
            .arg(&base)
            .arg("--")
            .arg(fixture())
            .arg(&spec_path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let needle = spec_path.display().to_string();
        let start = std::time::Instant::now();
        // The server starts, is captured, and is gone.
        while processes_mentioning(&needle).len() < 2 && start.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        while processes_mentioning(&needle).len() > 1 && start.elapsed().as_secs() < 30 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The capture is over once the report blocks on the full stdout pipe (the
        // kernel says so in wchan); a fixed pause is too short on a loaded machine.
        let wchan = format!("/proc/{}/wchan", child.id());
        while !fs::read_to_string(&wchan)
            .unwrap_or_default()
            .contains("pipe_write")
            && start.elapsed().as_secs() < 40
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(
            child.try_wait().unwrap(),
            None,
            "{signal}: blocked on stdout"
        );
        let status = std::process::Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if start.elapsed().as_secs() >= 10 {
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        if status.is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let status = status.unwrap_or_else(|| panic!("SIG{signal} was ignored after the capture"));
        assert_eq!(status.signal(), Some(number), "{signal}: {status:?}");
    }
}

/// Tests that need root: `scripts/test.sh` runs them as root and skips the module
/// (`--skip as_root::`) otherwise, saying so.
mod as_root {
    use super::*;

    #[test]
    #[ignore = "needs root to mount a tmpfs; scripts/test.sh runs it as root"]
    fn a_full_disk_leaves_the_lockfile_untouched() {
        let d = tmpdir("disk-full");
        let mnt = d.join("tiny");
        fs::create_dir_all(&mnt).unwrap();
        // A 64 KiB tmpfs.
        let mount = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&mnt)
            .output()
            .expect("mount runs");
        assert!(
            mount.status.success(),
            "cannot mount a tmpfs (this test needs root): {}",
            stderr(&mount)
        );
        let out = mnt.join("mcp-covenant.lock");
        fs::write(&out, "precious\n").unwrap();
        let spec_path = write_spec(&d, &json!({"tools": [], "generateTools": 200}));
        let o = bin()
            .args(["snapshot", "-o"])
            .arg(&out)
            .arg("--")
            .arg(fixture())
            .arg(&spec_path)
            .output()
            .unwrap();
        let leftovers: Vec<_> = fs::read_dir(&mnt)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        let contents = fs::read_to_string(&out).unwrap();
        let _ = std::process::Command::new("umount").arg(&mnt).status();
        assert_fails_cleanly(&o, "No space left on device");
        assert_eq!(contents, "precious\n");
        assert_eq!(
            leftovers.len(),
            1,
            "the temporary file is cleaned up: {leftovers:?}"
        );
    }
}

#[test]
fn a_hand_edited_lockfile_with_the_same_interface_keeps_its_capture_time() {
    let d = tmpdir("same-interface");
    let spec_path = write_spec(&d, &json!({"tools": tools()}));
    let out = d.join("x.lock");
    let snapshot = |epoch: &str| {
        let o = bin()
            .env("SOURCE_DATE_EPOCH", epoch)
            .args(["snapshot", "-o"])
            .arg(&out)
            .arg("--")
            .arg(fixture())
            .arg(&spec_path)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    snapshot("100");
    let canonical = std::fs::read(&out).unwrap();
    // Compact, tools reversed: not canonical, the same interface.
    let mut lock = read(&out);
    lock["surface"]["tools"].as_array_mut().unwrap().reverse();
    std::fs::write(&out, lock.to_string()).unwrap();
    snapshot("200");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        canonical,
        "time kept, text canonical again"
    );
    // A different interface takes the new time.
    lock["surface"]["tools"][0]["description"] = json!("changed by hand");
    std::fs::write(&out, lock.to_string()).unwrap();
    snapshot("300");
    assert_eq!(read(&out)["captured_at_unix"], 300);
}

/// A line meant as a JSON-RPC message that does not read (a number past f64, invalid
/// UTF-8) is an error at once, not noise skipped until --timeout: it may be the very
/// answer the capture waits for.
#[test]
fn an_unreadable_json_rpc_line_fails_at_once() {
    for (name, line) in [
        (
            "number",
            r#"{"jsonrpc": "2.0", "id": 1, "result": {"n": 1e400}}"#,
        ),
        ("syntax", r#"{"jsonrpc": "2.0", "id": 1, "result": {"#),
    ] {
        let started = std::time::Instant::now();
        fails_cleanly(
            &format!("unreadable-{name}"),
            json!({"banner": [line], "tools": []}),
            &["--timeout", "20"],
            "is a JSON-RPC message mcp-covenant cannot read",
        );
        assert!(
            started.elapsed().as_secs() < 10,
            "{name}: {:?}",
            started.elapsed()
        );
    }
}

/// `-o -` is standard output for `snapshot`, `check` and `lint`, never a file named `-`.
#[test]
fn output_dash_is_standard_output() {
    let d = tmpdir("output-dash");
    let spec = write_spec(
        &d,
        &serde_json::json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}),
    );
    let run = |args: &[&str]| {
        bin()
            .current_dir(&d)
            .args(args)
            .arg("--")
            .arg(fixture())
            .arg(&spec)
            .output()
            .unwrap()
    };
    let o = run(&["snapshot", "-o", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lock: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(lock["surface"]["tools"][0]["name"], "a");
    assert!(!d.join("-").exists());
    fs::write(d.join("base.lock"), stdout(&o)).unwrap();
    let o = run(&[
        "check",
        "--baseline",
        "base.lock",
        "--format",
        "json",
        "-o",
        "-",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap();
    let o = run(&["lint", "--format", "json", "-o", "-"]);
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap();
    assert!(!d.join("-").exists());
    let o = run(&["snapshot", "--check", "-o", "-"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// A suggested command works when pasted: started by the npm launcher it says `npx
/// mcp-covenant`, under `uv run` it says `uv run mcp-covenant`.
#[test]
fn hints_name_the_way_the_tool_was_started() {
    for (launcher, uv, want) in [
        (
            Some("npm"),
            false,
            "`npx mcp-covenant snapshot -o nope.lock -- true`",
        ),
        (
            None,
            true,
            "`uv run mcp-covenant snapshot -o nope.lock -- true`",
        ),
        (None, false, "`mcp-covenant snapshot -o nope.lock -- true`"),
    ] {
        let mut cmd = bin();
        cmd.env_remove("MCP_COVENANT_LAUNCHER").env_remove("UV");
        if let Some(l) = launcher {
            cmd.env("MCP_COVENANT_LAUNCHER", l);
        }
        if uv {
            cmd.env("UV", "/usr/bin/uv");
        }
        let o = cmd
            .current_dir(tmpdir("hint-launcher"))
            .args(["check", "--baseline", "nope.lock", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(want), "{want}: {}", stderr(&o));
    }
}
