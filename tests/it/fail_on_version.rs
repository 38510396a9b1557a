//! `--fail-on version` / `fail_on = "version"`: an intended major release passes, a
//! breaking change without the bump it needs fails (in 0.y.z the minor is the major, as
//! Cargo reads it), and minor or patch changes never fail. Run as the verdict job runs
//! it: `check --baseline-rev main` on the committed lockfiles of a pull request branch.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;

const BEFORE: &str = include_str!("../../golden/seed-sample/before.lock");
const AFTER: &str = include_str!("../../golden/seed-sample/after.lock");

/// `lock` with the server's version set to `version`.
fn versioned(lock: &str, version: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(lock).unwrap();
    v["server"]["version"] = serde_json::json!(version);
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

/// A repository whose `main` has covenant.toml (`config`) and the lockfile `base` at
/// version `from`; branch `pr` has `head` at version `to`, checked out.
fn repo(name: &str, config: &str, (base, from): (&str, &str), (head, to): (&str, &str)) -> PathBuf {
    let d = tmpdir(name);
    git_init(&d);
    fs::write(d.join("covenant.toml"), config).unwrap();
    fs::write(d.join("mcp-covenant.lock"), versioned(base, from)).unwrap();
    git_commit(&d, "baseline");
    git(&d, &["checkout", "-q", "-b", "pr"]);
    fs::write(d.join("mcp-covenant.lock"), versioned(head, to)).unwrap();
    git_commit(&d, "the pull request");
    d
}

/// The verdict job's command: `check --baseline-rev main`.
fn verdict(dir: &Path, extra: &[&str]) -> std::process::Output {
    git_identity(&mut bin())
        .current_dir(dir)
        .args(["check", "--baseline-rev", "main"])
        .args(extra)
        .output()
        .unwrap()
}

const VERSION: &str = "fail_on = \"version\"\n";

/// A breaking change passes with the major bump it needs and fails without it, also in
/// 0.y.z (where 0.3 → 0.4 is the major bump and 0.3.1 → 0.3.2 is not).
#[test]
fn a_declared_major_release_passes_and_an_undeclared_break_fails() {
    for (from, to, code) in [
        ("1.4.2", "2.0.0", 0),
        ("1.4.2", "1.5.0", 1),
        ("1.4.2", "1.4.2", 1),
        ("1.4.2", "1.0.0", 1),
        ("0.3.1", "0.4.0", 0),
        ("0.3.1", "0.3.2", 1),
        ("0.0.3", "0.0.4", 0),
        ("2.0.0-beta.1", "2.0.0-beta.2", 0),
        ("1.4.2", "not-a-version", 1),
    ] {
        let d = repo(
            &format!("fov-{from}-{to}"),
            VERSION,
            (BEFORE, from),
            (AFTER, to),
        );
        let o = verdict(&d, &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{from} → {to}: {err}");
        // The breaking changes are reported either way: passing is not hiding them.
        assert!(stdout(&o).contains("tool was removed"), "{}", stdout(&o));
        // A failing verdict ends with how to ship it on purpose.
        assert_eq!(
            err.contains("hint: to ship this on purpose, bump the server's major version"),
            code == 1,
            "{from} → {to}: {err}"
        );
    }
}

/// Under `version`, minor and patch changes never fail, whatever the versions say.
#[test]
fn minor_changes_never_fail_under_version() {
    // A minor-only pair: the base is after.lock without `newtool`, the head after.lock.
    let mut base: serde_json::Value = serde_json::from_str(AFTER).unwrap();
    base["surface"]["tools"]
        .as_array_mut()
        .unwrap()
        .retain(|t| t["name"] != "newtool");
    let base = serde_json::to_string_pretty(&base).unwrap();
    let d = repo("fov-minor", VERSION, (&base, "1.0.0"), (AFTER, "1.0.0"));
    let o = verdict(&d, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("new tool"), "{}", stdout(&o));
    // The same with the default gate fails only at minor.
    let o = verdict(&d, &["--fail-on", "minor"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("bump the server's major"),
        "{}",
        stderr(&o)
    );
}

/// `--fail-on version` on the command line does what the key does; without either, the
/// major release fails (`breaking`) and the hint names `--fail-on version`.
#[test]
fn the_flag_is_the_key_and_breaking_names_it() {
    let d = repo("fov-flag", "", (BEFORE, "1.0.0"), (AFTER, "2.0.0"));
    let o = verdict(&d, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("`--fail-on version`"), "{}", stderr(&o));
    let o = verdict(&d, &["--fail-on", "version"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A pull request cannot turn `breaking` into `version` for itself: its covenant.toml is
/// held to the base's until merged (`version` fails on fewer changes).
#[test]
fn a_pull_request_cannot_loosen_breaking_to_version() {
    let d = tmpdir("fov-held");
    git_init(&d);
    fs::write(d.join("covenant.toml"), "fail_on = \"breaking\"\n").unwrap();
    fs::write(d.join("mcp-covenant.lock"), versioned(BEFORE, "1.0.0")).unwrap();
    git_commit(&d, "baseline");
    git(&d, &["checkout", "-q", "-b", "pr"]);
    fs::write(d.join("covenant.toml"), VERSION).unwrap();
    fs::write(d.join("mcp-covenant.lock"), versioned(AFTER, "2.0.0")).unwrap();
    git_commit(&d, "loosen the gate and break");
    let o = verdict(&d, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("loosens `fail_on`"), "{}", stderr(&o));
}

/// `version` is one of the words `--fail-on` takes, and an unknown one says which are.
#[test]
fn fail_on_lists_version() {
    let o = bin()
        .args(["check", "--fail-on", "versions"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("version"), "{}", stderr(&o));
    let d = tmpdir("fov-bad-key");
    fs::write(d.join("covenant.toml"), "fail_on = \"versions\"\n").unwrap();
    let o = bin().current_dir(&d).args(["check"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("version"), "{}", stderr(&o));
}

/// A server that reports a blank version gets no version finding (it read "server version
/// did not change" with a double space), and under `version` its breaks fail: nothing
/// declares a bump.
#[test]
fn a_blank_version_has_no_finding_and_declares_nothing() {
    let d = repo("fov-blank", VERSION, (BEFORE, ""), (AFTER, ""));
    let o = verdict(&d, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains("server.version"), "{out}");
    assert!(out.contains("tool was removed"), "{out}");
}
