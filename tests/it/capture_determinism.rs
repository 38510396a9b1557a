//! A server whose answer changes from run to run (a `default` built from a Python set)
//! cannot flip a verdict unseen: PYTHONHASHSEED is fixed for the server, `snapshot
//! --repeat N` writes only what N captures agree on, and `snapshot --check` tells an
//! unstable server from an out-of-date lockfile.

use std::fs;

use crate::common::*;
use serde_json::json;

#[test]
fn the_server_gets_pythonhashseed_0_unless_the_environment_sets_it() {
    let d = tmpdir("hashseed");
    let log = d.join("env.log");
    let spec = write_spec(
        &d,
        &json!({"tools": [], "envValues": log.display().to_string()}),
    );
    let run = |seed: Option<&str>| {
        let mut cmd = bin();
        match seed {
            Some(s) => cmd.env("PYTHONHASHSEED", s),
            None => cmd.env_remove("PYTHONHASHSEED"),
        };
        let o = cmd
            .args(["snapshot", "-o"])
            .arg(d.join("x.lock"))
            .arg("--")
            .arg(fixture())
            .arg(&spec)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let env = fs::read_to_string(&log).unwrap();
        env.lines()
            .find_map(|l| l.strip_prefix("PYTHONHASHSEED="))
            .map(str::to_string)
    };
    assert_eq!(run(None).as_deref(), Some("0"));
    assert_eq!(run(Some("123")).as_deref(), Some("123"));
    assert_eq!(run(Some("random")).as_deref(), Some("random"));
}

#[test]
fn repeat_refuses_to_write_when_captures_differ_and_names_what_moved() {
    let d = tmpdir("repeat-unstable");
    let counter = d.join("counter");
    let spec = write_spec(
        &d,
        &json!({"tools": [{"name": "steady"}], "rotatingDefault": counter.display().to_string()}),
    );
    let out = d.join("mcp-covenant.lock");
    let o = snapshot_fixture(&out, &spec, &["--repeat", "3"]);
    assert_fails_cleanly(&o, "not deterministic");
    let err = stderr(&o);
    assert!(err.contains("2 of 3 captures differ"), "{err}");
    assert!(
        err.contains("tools[rotating].inputSchema.properties.fields.default (order)"),
        "{err}"
    );
    assert!(!err.contains("steady"), "{err}");
    assert!(!out.exists(), "written anyway");
    assert_eq!(fs::read_to_string(&counter).unwrap(), "3", "three captures");
}

#[test]
fn repeat_writes_when_every_capture_agrees() {
    let d = tmpdir("repeat-stable");
    let spec = write_spec(&d, &json!({"tools": [{"name": "steady"}]}));
    let out = d.join("mcp-covenant.lock");
    let o = snapshot_fixture(&out, &spec, &["--repeat", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.exists());
    let o = snapshot_fixture(&out, &spec, &["--repeat", "0"]);
    assert_usage_error(&o, "--repeat");
    let o = snapshot_fixture(&out, &spec, &["--repeat", "2", "--check"]);
    assert_usage_error(&o, "--check");
}

#[test]
fn check_tells_an_unstable_server_from_an_out_of_date_lockfile() {
    let d = tmpdir("check-unstable");
    let counter = d.join("counter");
    let spec = write_spec(
        &d,
        &json!({"tools": [{"name": "steady"}], "rotatingDefault": counter.display().to_string()}),
    );
    let out = d.join("mcp-covenant.lock");
    let o = snapshot_fixture(&out, &spec, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The lockfile holds rotation 0; the next captures are 1 and 2: out of date twice,
    // and differently, so the server is unstable rather than the lockfile stale.
    let o = snapshot_fixture(&out, &spec, &["--check"]);
    assert_fails_cleanly(&o, "not deterministic: two captures differ");
    assert!(
        stderr(&o).contains("fields.default (order)"),
        "{}",
        stderr(&o)
    );
    // Rotation 3 is the lockfile's 0: up to date after one capture.
    let o = snapshot_fixture(&out, &spec, &["--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&counter).unwrap(), "4", "one capture");
    // Rotations 5 and 6: the first differs from the lockfile, the second matches it.
    fs::write(&counter, "5").unwrap();
    let o = snapshot_fixture(&out, &spec, &["--check"]);
    assert_fails_cleanly(&o, "the second matches");
}

#[test]
fn check_still_reports_a_real_change_once_two_captures_agree() {
    let d = tmpdir("check-real-change");
    let out = d.join("mcp-covenant.lock");
    let spec = write_spec(&d, &json!({"tools": [{"name": "a"}, {"name": "b"}]}));
    let o = snapshot_fixture(&out, &spec, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let spec = write_spec(&d, &json!({"tools": [{"name": "a"}]}));
    let o = snapshot_fixture(&out, &spec, &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("not up to date"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("deterministic"), "{}", stderr(&o));
}
