//! `upgrade`: pins read from .mcp.json and covenant.toml, releases listed by a fake npm
//! registry on 127.0.0.1 (its packages built here: a `bin` that starts the fixture
//! server with the release's tools), captured once and then read from the capture
//! cache, `compatible` and `latest` with the changes behind them, `--write` moving the
//! pins and nothing else, and `--baseline-rev` gating the pins a commit moved.
//!
//! They need node and npm on PATH (npm installs the packages, node starts them).

use crate::common;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::common::{bin, fixture, stderr, stdout, tmpdir};
use serde_json::{json, Value};

/// A release: package, version, the tools its server lists.
type Release = (&'static str, &'static str, Value);

fn tool(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description,
           "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}})
}

fn releases() -> Vec<Release> {
    vec![
        (
            "srv-up",
            "1.0.0",
            json!([tool("alpha", "A"), tool("beta", "B")]),
        ),
        (
            "srv-up",
            "1.1.0",
            json!([tool("alpha", "A"), tool("beta", "B"), tool("gamma", "G")]),
        ),
        (
            "srv-up",
            "2.0.0",
            json!([tool("alpha", "A"), tool("gamma", "G")]),
        ),
        ("srv-desc", "1.0.0", json!([tool("echo", "Echo")])),
        (
            "srv-desc",
            "1.0.1",
            json!([tool("echo", "Echo the text back")]),
        ),
        ("srv-bad", "1.0.0", json!([tool("echo", "Echo")])),
    ]
}

/// A fake npm registry: each package's document (`GET /NAME`) and tarballs
/// (`GET /-/NAME-VERSION.tgz`), counting the tarballs fetched.
struct Registry {
    server: common::HttpServer,
    tarballs: Arc<AtomicUsize>,
}

impl Registry {
    fn start(dir: &Path) -> Registry {
        let tgz = dir.join("tarballs");
        fs::create_dir_all(&tgz).unwrap();
        let mut docs: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for (name, version, tools) in releases() {
            let root = dir.join("build").join(format!("{name}-{version}"));
            let pkg = root.join("package");
            fs::create_dir_all(&pkg).unwrap();
            fs::write(
                pkg.join("package.json"),
                json!({"name": name, "version": version, "bin": {name: "server.js"}}).to_string(),
            )
            .unwrap();
            fs::write(
                pkg.join("spec.json"),
                json!({"serverInfo": {"name": name, "version": version}, "tools": tools})
                    .to_string(),
            )
            .unwrap();
            let js = format!(
                "#!/usr/bin/env node\nconst {{ spawn }} = require('child_process');\nconst c = spawn({}, [__dirname + '/spec.json'], {{ stdio: 'inherit' }});\nc.on('exit', (code) => process.exit(code === null ? 1 : code));\n",
                serde_json::to_string(&fixture().display().to_string()).unwrap()
            );
            fs::write(pkg.join("server.js"), js).unwrap();
            let ok = Command::new("tar")
                .arg("-czf")
                .arg(tgz.join(format!("{name}-{version}.tgz")))
                .arg("-C")
                .arg(&root)
                .arg("package")
                .status()
                .unwrap();
            assert!(ok.success());
            docs.entry(name.to_string())
                .or_default()
                .push(version.to_string());
        }
        // Listed, and its tarball is missing: npm fails to install it.
        docs.get_mut("srv-bad").unwrap().push("1.1.0".into());
        let base: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
        let tarballs = Arc::new(AtomicUsize::new(0));
        let (b, t) = (base.clone(), tarballs.clone());
        let server = common::HttpServer::start(move |path| {
            let url = b.get().cloned().unwrap_or_default();
            if let Some(file) = path.strip_prefix("/-/") {
                t.fetch_add(1, Ordering::SeqCst);
                return match fs::read(tgz.join(file)) {
                    Ok(bytes) if !file.contains("..") && !file.contains('/') => (
                        "200 OK",
                        "Content-Type: application/octet-stream\r\n",
                        bytes,
                    ),
                    _ => ("404 Not Found", "", b"{}".to_vec()),
                };
            }
            let name = path.trim_start_matches('/');
            let Some(versions) = docs.get(name) else {
                return (
                    "404 Not Found",
                    "Content-Type: application/json\r\n",
                    b"{}".to_vec(),
                );
            };
            let mut v = serde_json::Map::new();
            for version in versions {
                v.insert(
                    version.clone(),
                    json!({"name": name, "version": version, "bin": {name: "server.js"},
                           "dist": {"tarball": format!("{url}/-/{name}-{version}.tgz")}}),
                );
            }
            let doc = json!({"name": name, "dist-tags": {"latest": versions.last()},
                             "versions": v});
            (
                "200 OK",
                "Content-Type: application/json\r\n",
                doc.to_string().into_bytes(),
            )
        });
        base.set(server.url()).unwrap();
        Registry { server, tarballs }
    }

    fn tarballs(&self) -> usize {
        self.tarballs.load(Ordering::SeqCst)
    }
}

/// `mcp-covenant upgrade ARGS` in `dir`, with the registry, a cache and a home of its own.
fn upgrade(dir: &Path, registry: &Registry, args: &[&str]) -> Output {
    let url = registry.server.url();
    bin()
        .current_dir(dir)
        .env("MCP_COVENANT_CACHE", dir.join("cache"))
        .env("MCP_COVENANT_NPM_REGISTRY", &url)
        .env("npm_config_registry", &url)
        .env("npm_config_cache", dir.join("npm-cache"))
        .env("HOME", dir.join("home"))
        .env("CI", "true")
        .env_remove("XDG_CACHE_HOME")
        .args(["upgrade", "--color", "never"])
        .args(args)
        .output()
        .unwrap()
}

/// The client config of the tests: odd layout on purpose (tabs, CRLF, keys unsorted).
const MCP_JSON: &str = "{\r\n\t\"mcpServers\": {\r\n\t\t\"up\": { \"args\": [\"-y\", \"srv-up@1.0.0\"], \"command\": \"npx\" },\r\n\t\t\"desc\": {\"command\": \"npx\",\r\n\t\t         \"args\": [\"--yes\", \"srv-desc@1.0.0\"]},\r\n\t\t\"any\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv-desc\"]},\r\n\t\t\"local\": {\"command\": \"node\", \"args\": [\"server.js\"]},\r\n\t\t\"remote\": {\"type\": \"http\", \"url\": \"https://example.com/mcp\"}\r\n\t}\r\n}\r\n";

const COVENANT_TOML: &str = "# the servers we consume\n[[server]]\nname = \"desc-toml\"   # pinned on purpose\npackage = \"npm:srv-desc@1.0.0\"\nlockfile = \"locks/desc.lock\"\n";

fn server<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no server {name} in {report:#}"))
}

fn project(name: &str) -> PathBuf {
    let dir = tmpdir(name);
    fs::write(dir.join(".mcp.json"), MCP_JSON).unwrap();
    fs::write(dir.join("covenant.toml"), COVENANT_TOML).unwrap();
    // The config is found here, not in a parent of the temporary directory.
    fs::create_dir_all(dir.join(".git")).unwrap();
    dir
}

#[test]
#[ignore = "needs node and npm on PATH"]
fn pins_get_their_compatible_and_latest_releases_captured_once() {
    let dir = project("upgrade-main");
    let registry = Registry::start(&dir);
    let start = std::time::Instant::now();
    let o = upgrade(&dir, &registry, &["--format", "json"]);
    let cold = start.elapsed();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}\n{}", stdout(&o));
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["report_version"], 1);
    let up = server(&report, "up");
    assert_eq!(up["source"], ".mcp.json");
    assert_eq!(up["package"], "npm:srv-up");
    assert_eq!(up["pinned"], "1.0.0");
    assert_eq!(up["latest"], "2.0.0");
    assert_eq!(up["latest_required_bump"], "major");
    assert_eq!(up["compatible"], "1.1.0");
    assert_eq!(up["unpinned"], false);
    assert!(
        up["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["code"] == "tool.removed" && c["subject"] == "tool:beta"),
        "{up:#}"
    );
    let desc = server(&report, "desc");
    assert_eq!(
        (&desc["pinned"], &desc["compatible"], &desc["latest"]),
        (&json!("1.0.0"), &json!("1.0.1"), &json!("1.0.1"))
    );
    assert_eq!(desc["latest_required_bump"], "patch");
    let toml = server(&report, "desc-toml");
    assert_eq!(toml["source"], "covenant.toml");
    assert_eq!(toml["compatible"], "1.0.1");
    let any = server(&report, "any");
    assert_eq!(any["unpinned"], true);
    assert_eq!(any["pinned"], Value::Null);
    assert!(
        any["notes"][0].as_str().unwrap().contains("srv-desc@1.0.1"),
        "{any:#}"
    );
    for name in ["local", "remote"] {
        let s = server(&report, name);
        assert_eq!(s["status"], "not_checked", "{s:#}");
        assert!(s["reason"].as_str().is_some_and(|r| !r.is_empty()));
    }
    let fetched = registry.tarballs();
    assert!(fetched >= 5, "five releases installed: {fetched}\n{err}");

    // Again: the capture cache answers, nothing is fetched, installed or started.
    let start = std::time::Instant::now();
    let o = upgrade(&dir, &registry, &[]);
    let cached = start.elapsed();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        registry.tarballs(),
        fetched,
        "no tarball fetched again: {err}"
    );
    assert!(!err.contains("installing"), "{err}");
    assert!(!err.contains("capturing"), "{err}");
    let out = stdout(&o);
    assert!(
        out.contains("moving up to latest fails at --fail-on breaking"),
        "{out}"
    );
    assert!(out.contains("x tool:beta — "), "{out}");
    eprintln!("upgrade: cold {cold:?}, cached {cached:?}");

    // The consumer profile: a rewritten description breaks, so compatible stays below it.
    let consumer = dir.join("consumer.toml");
    fs::write(
        &consumer,
        format!("profile = \"consumer\"\n{COVENANT_TOML}"),
    )
    .unwrap();
    let o = upgrade(
        &dir,
        &registry,
        &["--config", "consumer.toml", "--format", "json"],
    );
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let desc = server(&report, "desc");
    assert_eq!(desc["compatible"], "1.0.0", "{desc:#}");
    assert_eq!(desc["latest_required_bump"], "major", "{desc:#}");
    assert_eq!(registry.tarballs(), fetched);

    // --write: the pins move to their compatible releases, and nothing else changes.
    let o = upgrade(&dir, &registry, &["--write", "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        fs::read_to_string(dir.join(".mcp.json")).unwrap(),
        MCP_JSON
            .replace("srv-up@1.0.0", "srv-up@1.1.0")
            .replace("srv-desc@1.0.0", "srv-desc@1.0.1")
    );
    assert_eq!(
        fs::read_to_string(dir.join("covenant.toml")).unwrap(),
        COVENANT_TOML.replace("srv-desc@1.0.0", "srv-desc@1.0.1")
    );
}

#[test]
#[ignore = "needs node and npm on PATH"]
fn the_formats_and_to_latest() {
    let dir = project("upgrade-formats");
    let registry = Registry::start(&dir);
    let o = upgrade(
        &dir,
        &registry,
        &["--format", "markdown", "--fail-on", "never"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(md.starts_with("### "), "{md}");
    assert!(
        md.contains("| `up` | `.mcp.json` | `npm:srv-up` | `1.0.0` | `1.1.0` | `2.0.0` | MAJOR |"),
        "{md}"
    );
    // The JSON report matches its schema.
    let o = upgrade(&dir, &registry, &["--format", "json"]);
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let schema: Value = serde_json::from_str(
        &fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schemas/upgrade.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let v = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .unwrap();
    let errors: Vec<String> = v.iter_errors(&report).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{report:#}");
    // --to latest moves to latest and says what that breaks.
    let o = upgrade(&dir, &registry, &["--write", "--to", "latest"]);
    let err = stderr(&o);
    assert!(
        err.contains("moved up from 1.0.0 to 2.0.0 in .mcp.json (1 breaking change(s)"),
        "{err}"
    );
    assert!(fs::read_to_string(dir.join(".mcp.json"))
        .unwrap()
        .contains("\"srv-up@2.0.0\""));
}

#[test]
#[ignore = "needs node and npm on PATH"]
fn nothing_is_written_when_a_release_cannot_be_captured() {
    let dir = tmpdir("upgrade-fail");
    fs::create_dir_all(dir.join(".git")).unwrap();
    let registry = Registry::start(&dir);
    let mcp = "{\"mcpServers\": {\"up\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv-up@1.0.0\"]},\n  \"bad\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv-bad@1.0.0\"]}}}\n";
    fs::write(dir.join(".mcp.json"), mcp).unwrap();
    let o = upgrade(&dir, &registry, &["--write"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("error: server bad: "), "{err}");
    assert!(err.contains("nothing written"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(fs::read_to_string(dir.join(".mcp.json")).unwrap(), mcp);
    // A pin the registry does not list is an error, not "up to date".
    fs::write(
        dir.join(".mcp.json"),
        mcp.replace("srv-up@1.0.0", "srv-up@9.9.9"),
    )
    .unwrap();
    let o = upgrade(&dir, &registry, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("npm:srv-up@9.9.9: the registry does not list this release"),
        "{}",
        stderr(&o)
    );
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
}

#[test]
#[ignore = "needs node and npm on PATH"]
fn baseline_rev_gates_the_pins_a_commit_moved() {
    let dir = tmpdir("upgrade-rev");
    let registry = Registry::start(&dir);
    let mcp = "{\"mcpServers\": {\n  \"up\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv-up@1.0.0\"]},\n  \"desc\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv-desc@1.0.0\"]}\n}}\n";
    fs::write(dir.join(".mcp.json"), mcp).unwrap();
    fs::write(
        dir.join(".gitignore"),
        "cache/\nnpm-cache/\nhome/\ntarballs/\nbuild/\n",
    )
    .unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "pins"]);
    fs::write(
        dir.join(".mcp.json"),
        mcp.replace("srv-up@1.0.0", "srv-up@2.0.0"),
    )
    .unwrap();
    git(&dir, &["commit", "-q", "-am", "bump srv-up"]);
    let o = upgrade(&dir, &registry, &["--baseline-rev", "HEAD~1"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{}\n{out}", stderr(&o));
    assert!(out.contains("x tool:beta — "), "{out}");
    assert!(
        out.contains("1 pin(s) moved since HEAD~1 (1 unchanged)"),
        "{out}"
    );
    assert!(!out.contains("desc"), "only the moves: {out}");
    // Nothing moved: nothing to gate.
    let o = upgrade(&dir, &registry, &["--baseline-rev", "HEAD"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// The Action's upgrade step (`action/run.sh upgrade`, as action.yml runs it, with the
/// runner's variables): `inputs` on top of mode upgrade, in `work`.
fn action_upgrade(work: &Path, dir: &Path, registry: &Registry, inputs: &[(&str, &str)]) -> Output {
    let url = registry.server.url();
    let mut c = Command::new("bash");
    c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("action/run.sh"))
        .arg("upgrade")
        .current_dir(work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("RUNNER_TEMP", dir.join("temp"))
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("GITHUB_TOKEN", "ghs_not_for_servers")
        .env("MCP_COVENANT_BIN", env!("CARGO_BIN_EXE_mcp-covenant"))
        .env("MCP_COVENANT_CACHE", dir.join("cache"))
        .env("MCP_COVENANT_NPM_REGISTRY", &url)
        .env("npm_config_registry", &url)
        .env("npm_config_cache", dir.join("npm-cache"))
        .env("CI", "true")
        .env("INPUT_MODE", "upgrade");
    for (k, v) in inputs {
        c.env(k, v);
    }
    fs::create_dir_all(dir.join("temp")).unwrap();
    c.output().unwrap()
}

#[test]
#[ignore = "needs node and npm on PATH"]
fn the_actions_upgrade_mode_gates_the_pins_a_pull_request_moves() {
    let dir = tmpdir("upgrade-action");
    let registry = Registry::start(&dir);
    let origin = dir.join("origin");
    fs::create_dir_all(&origin).unwrap();
    let mcp = "{\"mcpServers\": {\n  \"up\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv-up@1.0.0\"]},\n  \"desc\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv-desc@1.0.0\"]}\n}}\n";
    fs::write(origin.join(".mcp.json"), mcp).unwrap();
    git(&origin, &["init", "-q", "-b", "main"]);
    git(&origin, &["add", "-A"]);
    git(&origin, &["commit", "-q", "-m", "pins"]);
    let o = Command::new("git")
        .args(["clone", "-q"])
        .arg(&origin)
        .arg(dir.join("work"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let work = dir.join("work");
    git(&work, &["checkout", "-q", "-b", "bump"]);
    fs::write(
        work.join(".mcp.json"),
        mcp.replace("srv-up@1.0.0", "srv-up@2.0.0"),
    )
    .unwrap();
    git(&work, &["commit", "-q", "-am", "bump srv-up"]);
    // An earlier step cannot move the base: the Action fetches its own ref.
    git(&work, &["update-ref", "refs/remotes/origin/main", "HEAD"]);

    let o = action_upgrade(&work, &dir, &registry, &[("INPUT_BASE_REF", "main")]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{}\n{out}", stderr(&o));
    assert!(out.contains("x tool:beta — "), "{out}");
    assert!(
        out.contains("1 pin(s) moved since refs/mcp-covenant/base"),
        "{out}"
    );
    let summary = fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("tool:beta"), "{summary}");
    assert!(!out.contains("ghs_not_for_servers") && !stderr(&o).contains("ghs_"));
    // fail-on never: reported, not failed.
    let o = action_upgrade(
        &work,
        &dir,
        &registry,
        &[("INPUT_BASE_REF", "main"), ("INPUT_FAIL_ON", "never")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The token's features are refused: this step starts third-party packages.
    for (k, v) in [("INPUT_COMMENT", "true"), ("INPUT_APPROVE_LABEL", "ok")] {
        let o = action_upgrade(
            &work,
            &dir,
            &registry,
            &[("INPUT_BASE_REF", "main"), (k, v)],
        );
        common::assert_fails_cleanly(&o, "no step with the token may start");
    }
    // In check mode the upgrade step does nothing, and upgrade mode's other steps too.
    let o = action_upgrade(&work, &dir, &registry, &[("INPUT_MODE", "check")]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), String::new()));
    // Not a pull request: the report, for reading.
    let o = action_upgrade(&work, &dir, &registry, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("for reading"), "{}", stdout(&o));
}

#[test]
fn without_pins_or_with_a_broken_client_config_it_says_what_to_do() {
    let dir = tmpdir("upgrade-none");
    fs::create_dir_all(dir.join(".git")).unwrap();
    let o = bin().current_dir(&dir).args(["upgrade"]).output().unwrap();
    common::assert_fails_cleanly(&o, "--from-client");
    fs::write(dir.join("c.json"), "{\"mcpServers\": [1]}").unwrap();
    let o = bin()
        .current_dir(&dir)
        .args(["upgrade", "--from-client", "c.json"])
        .output()
        .unwrap();
    common::assert_fails_cleanly(&o, "c.json");
    // Servers that are not packages are listed, with why; no registry is asked.
    fs::write(
        dir.join("c.json"),
        "{\"mcpServers\": {\"l\": {\"command\": \"node\", \"args\": [\"s.js\"]}, \"d\": {\"command\": \"docker\", \"args\": [\"run\", \"-i\", \"img\"]}, \"evil\\u001b[2J\": {\"command\": \"x\\u202e\"}}}",
    )
    .unwrap();
    let o = bin()
        .current_dir(&dir)
        .args(["upgrade", "--from-client", "c.json", "--color", "never"])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.contains("a local command (`node`)"), "{out}");
    assert!(out.contains("a container image"), "{out}");
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{202e}'),
        "{out:?}"
    );
}

/// A wheel of `srv-py` at `version` whose console script starts the fixture server
/// with `tools` (built with python's zipfile: a wheel is a zip).
fn wheel(dir: &Path, version: &str, tools: Value) -> String {
    let name = format!("srv_py-{version}-py3-none-any.whl");
    let src = dir.join("wheels-src").join(version);
    let pkg = src.join("srv_py");
    let info = src.join(format!("srv_py-{version}.dist-info"));
    fs::create_dir_all(&pkg).unwrap();
    fs::create_dir_all(&info).unwrap();
    fs::write(
        pkg.join("__init__.py"),
        format!(
            "import os\n\ndef main():\n    exe = {}\n    os.execv(exe, [exe, os.path.join(os.path.dirname(__file__), 'spec.json')])\n",
            serde_json::to_string(&fixture().display().to_string()).unwrap()
        ),
    )
    .unwrap();
    fs::write(
        pkg.join("spec.json"),
        json!({"serverInfo": {"name": "srv-py", "version": version}, "tools": tools}).to_string(),
    )
    .unwrap();
    fs::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: srv-py\nVersion: {version}\n"),
    )
    .unwrap();
    fs::write(
        info.join("WHEEL"),
        "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    )
    .unwrap();
    fs::write(
        info.join("entry_points.txt"),
        "[console_scripts]\nsrv-py = srv_py:main\n",
    )
    .unwrap();
    let record = format!(
        "srv_py/__init__.py,,\nsrv_py/spec.json,,\nsrv_py-{version}.dist-info/METADATA,,\nsrv_py-{version}.dist-info/WHEEL,,\nsrv_py-{version}.dist-info/entry_points.txt,,\nsrv_py-{version}.dist-info/RECORD,,\n"
    );
    fs::write(info.join("RECORD"), record).unwrap();
    let out = dir.join("wheels");
    fs::create_dir_all(&out).unwrap();
    let script = "import os, sys, zipfile\nsrc, dst = sys.argv[1], sys.argv[2]\nwith zipfile.ZipFile(dst, 'w') as z:\n    for root, _, files in os.walk(src):\n        for f in files:\n            p = os.path.join(root, f)\n            z.write(p, os.path.relpath(p, src))\n";
    let ok = Command::new("python3")
        .args(["-c", script])
        .arg(&src)
        .arg(out.join(&name))
        .status()
        .unwrap();
    assert!(ok.success());
    name
}

#[test]
#[ignore = "needs python3 with venv and pip on PATH"]
fn a_pypi_pin_from_a_local_index() {
    let dir = tmpdir("upgrade-pypi");
    fs::create_dir_all(dir.join(".git")).unwrap();
    let files: Vec<(String, String)> = [
        ("1.0.0", json!([tool("alpha", "A")])),
        ("1.1.0", json!([tool("alpha", "A"), tool("beta", "B")])),
    ]
    .into_iter()
    .map(|(v, t)| (v.to_string(), wheel(&dir, v, t)))
    .collect();
    let wheels = dir.join("wheels");
    let listing = files.clone();
    let index = common::HttpServer::start(move |path| {
        let html = "Content-Type: text/html\r\n";
        let json_type = "Content-Type: application/json\r\n";
        match path {
            "/pypi/srv-py/json" => {
                let releases: serde_json::Map<String, Value> = listing
                    .iter()
                    .map(|(v, _)| (v.clone(), json!([{"yanked": false}])))
                    .collect();
                let doc = json!({"releases": releases});
                ("200 OK", json_type, doc.to_string().into_bytes())
            }
            "/simple/srv-py/" | "/simple/srv-py" => {
                let links: String = listing
                    .iter()
                    .map(|(_, f)| format!("<a href=\"/files/{f}\">{f}</a><br>\n"))
                    .collect();
                let page = format!("<!DOCTYPE html><html><body>\n{links}</body></html>\n");
                ("200 OK", html, page.into_bytes())
            }
            p => match p.strip_prefix("/files/") {
                Some(f) if !f.contains("..") && !f.contains('/') => {
                    match fs::read(wheels.join(f)) {
                        Ok(b) => ("200 OK", "Content-Type: application/octet-stream\r\n", b),
                        Err(_) => ("404 Not Found", "", Vec::new()),
                    }
                }
                _ => ("404 Not Found", "", Vec::new()),
            },
        }
    });
    let mcp = "{\"mcpServers\": {\"py\": {\"command\": \"uvx\", \"args\": [\"srv-py==1.0.0\"]}}}\n";
    fs::write(dir.join(".mcp.json"), mcp).unwrap();
    let run = |args: &[&str]| {
        bin()
            .current_dir(&dir)
            .env("MCP_COVENANT_CACHE", dir.join("cache"))
            .env("MCP_COVENANT_PYPI_URL", index.url())
            .env("PIP_INDEX_URL", format!("{}/simple/", index.url()))
            .env("PIP_NO_CACHE_DIR", "1")
            .env("HOME", dir.join("home"))
            .env("CI", "true")
            .env_remove("XDG_CACHE_HOME")
            .args(["upgrade", "--color", "never"])
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let py = server(&report, "py");
    assert_eq!(py["package"], "pypi:srv-py");
    assert_eq!(
        (&py["pinned"], &py["compatible"], &py["latest"]),
        (&json!("1.0.0"), &json!("1.1.0"), &json!("1.1.0"))
    );
    assert_eq!(py["latest_required_bump"], "minor");
    let o = run(&["--write", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        fs::read_to_string(dir.join(".mcp.json")).unwrap(),
        mcp.replace("srv-py==1.0.0", "srv-py==1.1.0")
    );
}
