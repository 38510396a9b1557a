//! `mcp-covenant init` (a starter covenant.toml and the workflow, never overwriting) and
//! `mcp-covenant help config` (the covenant.toml reference `--help` points to).

mod common;

use std::fs;

use common::*;

#[test]
fn init_writes_a_valid_starter_and_the_workflow_and_never_overwrites() {
    let d = tmpdir("init");
    let o = bin()
        .current_dir(&d)
        .args(["init", "--", "node", "dist/server.js"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let config = fs::read_to_string(d.join("covenant.toml")).unwrap();
    assert!(config.contains("# [[server]]"), "{config}");
    assert!(config.contains("# until = "), "{config}");
    let workflow = fs::read_to_string(d.join(".github/workflows/mcp-covenant.yml")).unwrap();
    assert!(
        workflow.contains("command: 'node dist/server.js'"),
        "{workflow}"
    );
    assert!(
        workflow.contains("uses: mcp-covenant/mcp-covenant@v"),
        "{workflow}"
    );
    assert!(workflow.contains("  pull_request:"), "{workflow}");
    // The starter changes nothing: every rule keeps its default.
    let o = bin().current_dir(&d).arg("rules").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The starter's examples, uncommented, are valid too.
    let uncommented: String = config
        .lines()
        .map(|l| {
            l.strip_prefix("# ")
                .filter(|r| r.starts_with(['[', '"']) || r.contains(" = "))
                .unwrap_or("")
        })
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(d.join("uncommented.toml"), &uncommented).unwrap();
    let o = bin()
        .current_dir(&d)
        .args([
            "--config",
            "uncommented.toml",
            "rules",
            "tool.description.changed",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{uncommented}\n{}", stderr(&o));
    // A second init writes nothing and says which file is in the way.
    fs::write(d.join("covenant.toml"), "fail_on = \"minor\"\n").unwrap();
    fs::remove_file(d.join(".github/workflows/mcp-covenant.yml")).unwrap();
    let o = bin().current_dir(&d).arg("init").output().unwrap();
    assert_fails_cleanly(&o, "covenant.toml already exists; init never overwrites");
    assert_eq!(
        fs::read_to_string(d.join("covenant.toml")).unwrap(),
        "fail_on = \"minor\"\n"
    );
    assert!(!d.join(".github/workflows/mcp-covenant.yml").exists());
    // Without a command the workflow has a placeholder to replace.
    fs::remove_file(d.join("covenant.toml")).unwrap();
    let o = bin().current_dir(&d).arg("init").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let workflow = fs::read_to_string(d.join(".github/workflows/mcp-covenant.yml")).unwrap();
    assert!(workflow.contains("command: REPLACE-ME"), "{workflow}");
}

#[test]
fn help_config_is_the_reference_and_help_points_to_it() {
    let o = bin().arg("--help").output().unwrap();
    assert!(
        stdout(&o).contains("mcp-covenant help config"),
        "{}",
        stdout(&o)
    );
    // It works where covenant.toml is broken: that is when it is needed.
    let d = tmpdir("help-config");
    fs::write(d.join("covenant.toml"), "fial_on = 1\n").unwrap();
    let o = bin()
        .current_dir(&d)
        .args(["help", "config"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for key in [
        "fail_on",
        "lint_fail_on",
        "[severity]",
        "[lint]",
        "[[ignore]]",
        "until",
        "[[server]]",
        "headers_from_env",
        "lockfile",
        "--server NAME",
    ] {
        assert!(text.contains(key), "`{key}` missing from help config");
    }
    let o = bin().args(["help", "check"]).output().unwrap();
    assert!(
        stdout(&o).contains("Usage: mcp-covenant check"),
        "{}",
        stdout(&o)
    );
    assert_fails_cleanly(
        &bin().args(["help", "confg"]).output().unwrap(),
        "did you mean `config`?",
    );
}

/// Every target is checked before anything is written, and a failure part-way leaves
/// nothing behind: a dangling symlink at the workflow's path, or a file where its
/// directory belongs, is exit 2 with no covenant.toml written.
#[test]
fn init_writes_both_files_or_neither() {
    let d = tmpdir("init-dangling");
    fs::create_dir_all(d.join(".github/workflows")).unwrap();
    std::os::unix::fs::symlink(
        "/nonexistent/target",
        d.join(".github/workflows/mcp-covenant.yml"),
    )
    .unwrap();
    let o = bin().current_dir(&d).args(["init"]).output().unwrap();
    assert_fails_cleanly(&o, "already exists");
    assert!(!d.join("covenant.toml").exists(), "{}", stderr(&o));
    let d = tmpdir("init-file-as-dir");
    fs::write(d.join(".github"), "not a directory\n").unwrap();
    let o = bin().current_dir(&d).args(["init"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!d.join("covenant.toml").exists(), "{}", stderr(&o));
}
