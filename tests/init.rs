//! `mcp-covenant init` (covenant.toml with the server, the first lockfile and the
//! workflow, never overwriting without --force), config discovery from a subdirectory,
//! and `mcp-covenant help config` (the covenant.toml reference `--help` points to).

mod common;

use std::fs;
use std::path::Path;
use std::process::Output;

use common::*;

/// `mcp-covenant ARGS` run in `dir`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

/// `mcp-covenant init FLAGS -- FIXTURE SPEC` run in `dir`.
fn init_fixture(dir: &Path, flags: &[&str], fixture: &Path, spec: &Path) -> Output {
    bin()
        .current_dir(dir)
        .arg("init")
        .args(flags)
        .arg("--")
        .arg(fixture)
        .arg(spec)
        .output()
        .unwrap()
}

/// The run's stderr, once it is known to have exited with `code`.
fn exited(o: &Output, code: i32) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    err
}

/// In a fresh repository, `init -- CMD` captures the server and writes covenant.toml
/// (with the command), the lockfile and the workflow; then `check`, `snapshot --check`
/// and `lint` need no arguments, from any subdirectory; a second init writes nothing;
/// `--force` says what it replaced or kept.
#[test]
fn init_finishes_the_job_and_the_config_is_found_from_any_subdirectory() {
    let d = tmpdir("init");
    git_init(&d);
    let spec = write_spec(
        &d,
        &serde_json::json!({"tools": [
            {"name": "search", "description": "Search.", "inputSchema": {"type": "object",
              "properties": {"q": {"type": "string", "description": "Query."}}}},
            {"name": "legacy", "description": "Old.", "inputSchema": {"type": "object"}}
        ]}),
    );
    let fixture = fixture();
    let err = exited(&init_fixture(&d, &[], &fixture, &spec), 0);
    for needle in [
        "wrote covenant.toml",
        "wrote mcp-covenant.lock (2 tool(s)",
        "wrote .github/workflows/mcp-covenant.yml",
        "next: commit these files: `git add covenant.toml mcp-covenant.lock .github/workflows/mcp-covenant.yml",
    ] {
        assert!(err.contains(needle), "`{needle}` missing: {err}");
    }
    let config = fs::read_to_string(d.join("covenant.toml")).unwrap();
    assert!(
        config.contains(&format!("command = [\"{}\", ", fixture.display())),
        "{config}"
    );
    let workflow = fs::read_to_string(d.join(".github/workflows/mcp-covenant.yml")).unwrap();
    assert!(
        workflow.contains(&format!(
            "command: '{} {}'",
            fixture.display(),
            spec.display()
        )),
        "{workflow}"
    );
    assert!(
        workflow.contains("uses: mcp-covenant/mcp-covenant@v"),
        "{workflow}"
    );
    assert!(
        workflow.contains("# Build or install your server here"),
        "{workflow}"
    );
    // From a subdirectory, with no arguments.
    let sub = d.join("src/deep");
    fs::create_dir_all(&sub).unwrap();
    let run = |args: &[&str]| run_in(&sub, args);
    let err = exited(&run(&["snapshot", "--check"]), 0);
    assert!(err.contains("mcp-covenant.lock is up to date"), "{err}");
    exited(&run(&["check"]), 0);
    let o = run(&["lint"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let o = run(&["-v", "check"]);
    assert!(
        stderr(&o).contains(&format!("using {}", d.join("covenant.toml").display())),
        "{}",
        stderr(&o)
    );
    // -q: the report and nothing else.
    let o = run(&["-q", "snapshot", "--check"]);
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
    // The server changes: found from the subdirectory too; the message to paste works.
    fs::write(
        &spec,
        serde_json::json!({"tools": [{"name": "search", "description": "Search.",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "description": "Query."}}}}]})
            .to_string(),
    )
    .unwrap();
    let o = run(&["check"]);
    exited(&o, 1);
    assert!(stdout(&o).contains("tool:legacy"), "{}", stdout(&o));
    let err = exited(&run(&["snapshot", "--check"]), 1);
    assert!(
        err.contains("run `mcp-covenant snapshot` and commit it"),
        "{err}"
    );
    exited(&run(&["snapshot"]), 0);
    exited(&run(&["snapshot", "--check"]), 0);
    // A server given on the command line runs here (its relative paths are from here);
    // the lockfile is still covenant.toml's.
    fs::copy(&spec, sub.join("local.json")).unwrap();
    let o = bin()
        .current_dir(&sub)
        .args(["check", "--"])
        .arg(&fixture)
        .arg("local.json")
        .output()
        .unwrap();
    exited(&o, 0);
    assert!(
        stdout(&o).contains("0 change(s)") || stdout(&o).contains("no change"),
        "{}",
        stdout(&o)
    );
    // A second init writes nothing and says which file is in the way.
    let before = fs::read(d.join("mcp-covenant.lock")).unwrap();
    let o = init_fixture(&d, &[], &fixture, &spec);
    assert_fails_cleanly(&o, "covenant.toml already exists; init never overwrites");
    assert!(stderr(&o).contains("init --force"), "{}", stderr(&o));
    assert_eq!(fs::read(d.join("mcp-covenant.lock")).unwrap(), before);
    // --force says what it replaced and what it kept.
    fs::write(d.join("covenant.toml"), "fail_on = \"minor\"\n").unwrap();
    let err = exited(&init_fixture(&d, &["--force"], &fixture, &spec), 0);
    assert!(err.contains("replaced covenant.toml"), "{err}");
    assert!(
        err.contains("kept (unchanged) .github/workflows/mcp-covenant.yml"),
        "{err}"
    );
    assert!(err.contains("kept (unchanged) mcp-covenant.lock"), "{err}");
}

/// The starter's commented examples are valid when uncommented.
#[test]
fn the_starter_config_is_valid_uncommented() {
    let d = tmpdir("init-starter");
    let err = exited(
        &run_in(
            &d,
            &["init", "--no-capture", "--", "node", "dist/server.js"],
        ),
        0,
    );
    assert!(
        err.contains("next: capture the first lockfile with `mcp-covenant snapshot`"),
        "{err}"
    );
    assert!(!d.join("mcp-covenant.lock").exists());
    let config = fs::read_to_string(d.join("covenant.toml")).unwrap();
    assert!(
        config.contains("command = [\"node\", \"dist/server.js\"]"),
        "{config}"
    );
    assert!(config.contains("# [[server]]"), "{config}");
    assert!(config.contains("# until = "), "{config}");
    // The starter changes nothing else: every rule keeps its default.
    exited(&run_in(&d, &["rules"]), 0);
    let uncommented: String = config
        .lines()
        .filter(|l| !l.starts_with("command = "))
        .map(|l| {
            l.strip_prefix("# ")
                .filter(|r| r.starts_with(['[', '"']) || r.contains(" = "))
                .unwrap_or("")
        })
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(d.join("uncommented.toml"), &uncommented).unwrap();
    let o = run_in(
        &d,
        &[
            "--config",
            "uncommented.toml",
            "rules",
            "tool.description.changed",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{uncommented}\n{}", stderr(&o));
}

/// The ecosystem and the server command come from the project's files; the workflow
/// sets the project up and builds it; with no command anywhere, init stops and says
/// how to give one.
#[test]
fn init_reads_the_ecosystem_and_the_declared_command() {
    let d = tmpdir("init-npm");
    fs::write(
        d.join("package.json"),
        r#"{"name": "srv", "bin": {"srv": "./dist/server.js"}, "scripts": {"build": "tsc"}}"#,
    )
    .unwrap();
    fs::write(d.join("package-lock.json"), "{}").unwrap();
    // Not built yet: init says how to build it, and writes nothing.
    let o = run_in(&d, &["init"]);
    assert_fails_cleanly(
        &o,
        "dist/server.js, which does not exist yet: build it first (`npm run build`)",
    );
    assert!(!d.join("covenant.toml").exists());
    let err = exited(&run_in(&d, &["init", "--no-capture"]), 0);
    assert!(
        err.contains("from package.json `bin`: node dist/server.js"),
        "{err}"
    );
    let workflow = fs::read_to_string(d.join(".github/workflows/mcp-covenant.yml")).unwrap();
    for needle in [
        "- uses: actions/setup-node@v4",
        "cache: npm",
        "- run: npm ci",
        "- run: npm run build",
        "command: 'node dist/server.js'",
    ] {
        assert!(workflow.contains(needle), "`{needle}` missing: {workflow}");
    }
    let d = tmpdir("init-uv");
    fs::write(
        d.join("pyproject.toml"),
        "[project]\nname = \"srv\"\n[project.scripts]\nsrv-mcp = \"srv.server:main\"\n",
    )
    .unwrap();
    fs::write(d.join("uv.lock"), "").unwrap();
    exited(&run_in(&d, &["init", "--no-capture"]), 0);
    let workflow = fs::read_to_string(d.join(".github/workflows/mcp-covenant.yml")).unwrap();
    for needle in [
        "astral-sh/setup-uv@",
        "- run: uv sync --locked",
        "command: 'uv run srv-mcp'",
    ] {
        assert!(workflow.contains(needle), "`{needle}` missing: {workflow}");
    }
    assert!(!workflow.contains("npm"), "{workflow}");
    let config = fs::read_to_string(d.join("covenant.toml")).unwrap();
    assert!(
        config.contains("command = [\"uv\", \"run\", \"srv-mcp\"]"),
        "{config}"
    );
    let d = tmpdir("init-go");
    fs::write(d.join("go.mod"), "module x\n").unwrap();
    let o = run_in(&d, &["init"]);
    assert_fails_cleanly(&o, "no server command");
    assert!(
        stderr(&o).contains("`-- go run ./cmd/server`"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("covenant.toml").exists());
    let d = tmpdir("init-nothing");
    let o = run_in(&d, &["init"]);
    assert_fails_cleanly(
        &o,
        "give it after `--`, e.g. `mcp-covenant init -- node dist/server.js`",
    );
    // A server that does not start: nothing is written.
    let err = exited(&run_in(&d, &["init", "--", "/nonexistent/server"]), 2);
    assert!(err.contains("init --no-capture"), "{err}");
    assert!(!d.join("covenant.toml").exists());
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
    let o = run_in(&d, &["help", "config"]);
    exited(&o, 0);
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
    let o = run_in(&d, &["init", "--no-capture", "--", "node", "x.js"]);
    assert_fails_cleanly(&o, "already exists");
    assert!(!d.join("covenant.toml").exists(), "{}", stderr(&o));
    let d = tmpdir("init-file-as-dir");
    fs::write(d.join(".github"), "not a directory\n").unwrap();
    let err = exited(
        &run_in(&d, &["init", "--no-capture", "--", "node", "x.js"]),
        2,
    );
    assert!(!d.join("covenant.toml").exists(), "{err}");
}
