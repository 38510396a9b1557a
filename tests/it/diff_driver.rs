//! `git-diff-driver`: with the .gitattributes and `git config` lines the README gives,
//! `git diff` and `git log -p --ext-diff` show a lockfile's changes classified.

use crate::common;
use std::fs;
use std::process::Command;

use crate::common::*;
use serde_json::json;

#[test]
fn git_shows_a_lockfiles_changes_classified() {
    let dir = tmpdir("diff-driver");
    git_init(&dir);
    let tool = |n: &str| json!({"name": n, "description": n, "inputSchema": {"type": "object"}});
    let spec = common::write_spec(&dir, &json!({"tools": [tool("a"), tool("b")]}));
    let lock = dir.join("mcp-covenant.lock");
    assert_eq!(snapshot_fixture(&lock, &spec, &[]).status.code(), Some(0));
    fs::write(
        dir.join(".gitattributes"),
        "mcp-covenant.lock diff=mcp-covenant\n",
    )
    .unwrap();
    git_commit(&dir, "a and b");
    fs::write(&spec, json!({"tools": [tool("a")]}).to_string()).unwrap();
    assert_eq!(snapshot_fixture(&lock, &spec, &[]).status.code(), Some(0));
    let driver = format!("{} git-diff-driver", env!("CARGO_BIN_EXE_mcp-covenant"));
    let run = |args: &[&str]| {
        let mut c = Command::new("git");
        git_identity(&mut c);
        let o = c
            .current_dir(&dir)
            .args(["-c", &format!("diff.mcp-covenant.command={driver}")])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let diff = run(&["diff", "--", "mcp-covenant.lock"]);
    assert!(
        diff.contains("mcp-covenant diff a/mcp-covenant.lock b/mcp-covenant.lock"),
        "{diff}"
    );
    assert!(
        diff.contains("x tool:b — tool was removed  [tool.removed]"),
        "{diff}"
    );
    assert!(!diff.contains("\"name\""), "no JSON hunk: {diff}");
    git_commit(&dir, "remove b");
    let log = run(&[
        "log",
        "-p",
        "--ext-diff",
        "--format=commit %s",
        "--",
        "mcp-covenant.lock",
    ]);
    assert!(log.contains("[tool.removed]"), "{log}");
    // The first commit adds the file: every element is new.
    assert!(log.contains("+ tool:a — new tool  [tool.added]"), "{log}");
    // Called wrongly: exit 2, saying how to set it up.
    let o = bin().args(["git-diff-driver", "x"]).output().unwrap();
    assert_fails_cleanly(&o, "seven arguments");
}

/// A lockfile's path is the repository's: the driver's header line shows it inert (no
/// `##[` workflow command, no newline starting another line).
#[test]
fn the_path_in_the_header_is_inert() {
    let d = tmpdir("driver-path");
    let lock = d.join("a.lock");
    fs::write(
        &lock,
        r#"{"covenant_version": "0.2.0", "captured_at_unix": 1, "server": {"name": "x"}, "surface": {"tools": []}}"#,
    )
    .unwrap();
    let l = lock.display().to_string();
    let o = bin()
        .args([
            "git-diff-driver",
            "x##[add-mask]y\n::error::z.lock",
            &l,
            "0",
            "100644",
            &l,
            "0",
            "100644",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for line in stdout(&o).lines() {
        assert!(!line.contains("##["), "{line}");
        assert!(!line.trim_start().starts_with("::"), "{line}");
    }
}
