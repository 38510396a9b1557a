//! The pre-commit hooks, run by pre-commit itself (`pre-commit try-repo`, from the venv
//! tests/servers/setup.sh makes) on a project whose covenant.toml names the fixture
//! server: the hook repository of pre-commit/ installs the wheel from dist/ with no
//! package index (PIP_NO_INDEX; the build backend from tests/servers/.wheelhouse), and
//! the repository's own hooks use the mcp-covenant on PATH.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use crate::common::*;
use serde_json::json;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn both(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

fn pre_commit() -> PathBuf {
    let p = repo().join("tests/servers/.venv-dist/bin/pre-commit");
    assert!(
        p.is_file(),
        "{} missing: run tests/servers/setup.sh (scripts/test.sh does)",
        p.display()
    );
    p
}

/// A git repository holding `files` (name, content), committed.
fn hook_repo(dir: &Path, files: &[(&str, String)]) -> PathBuf {
    let r = dir.join("hook repo");
    fs::create_dir_all(&r).unwrap();
    for (name, text) in files {
        fs::write(r.join(name), text).unwrap();
    }
    git_init(&r);
    git_commit(&r, "hooks");
    r
}

/// A project: covenant.toml naming the fixture server, its lockfile, all committed.
fn project(dir: &Path) -> (PathBuf, PathBuf) {
    let p = dir.join("my project");
    fs::create_dir_all(&p).unwrap();
    let spec = dir.join("server.json");
    let tool = |n: &str| json!({"name": n, "description": format!("Does {n}."), "inputSchema": {"type": "object"}});
    fs::write(&spec, json!({"tools": [tool("alpha")]}).to_string()).unwrap();
    fs::write(
        p.join("covenant.toml"),
        format!(
            "[[server]]\nname = \"demo\"\ncommand = [{:?}, {:?}]\nlockfile = \"mcp-covenant.lock\"\n",
            fixture().display().to_string(),
            spec.display().to_string()
        ),
    )
    .unwrap();
    let o = bin().current_dir(&p).arg("snapshot").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    git_init(&p);
    git_commit(&p, "server");
    (p, spec)
}

fn try_repo(dir: &Path, project: &Path, hooks: &Path, id: &str, path: &str) -> Output {
    let wheelhouse = repo().join("tests/servers/.wheelhouse");
    git_identity(Command::new(pre_commit()).current_dir(project))
        .args(["try-repo"])
        .arg(hooks)
        .args([id, "--all-files", "--verbose", "--color", "never"])
        .env("PRE_COMMIT_HOME", dir.join("pre-commit home"))
        .env(
            "PIP_FIND_LINKS",
            format!("{} {}", repo().join("dist").display(), wheelhouse.display()),
        )
        .env("PIP_NO_INDEX", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PATH", path)
        .output()
        .unwrap()
}

/// PATH without any directory that holds an mcp-covenant.
fn path_without_mcp_covenant() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .filter(|d| !Path::new(d).join("mcp-covenant").exists())
        .collect::<Vec<_>>()
        .join(":")
}

#[test]
#[ignore = "needs pre-commit (scripts/test.sh installs it) and the wheel in dist/ (scripts/dist.sh)"]
fn the_hook_repository_installs_the_wheel_and_checks_the_lockfile() {
    let dir = tmpdir("pre-commit");
    let files: Vec<(&str, String)> = [
        ".pre-commit-hooks.yaml",
        "pyproject.toml",
        "README.md",
        "LICENSE",
    ]
    .iter()
    .map(|f| {
        (
            *f,
            fs::read_to_string(repo().join("pre-commit").join(f)).unwrap(),
        )
    })
    .collect();
    let hooks = hook_repo(&dir, &files);
    let (project, spec) = project(&dir);
    let path = path_without_mcp_covenant();

    let started = Instant::now();
    let o = try_repo(&dir, &project, &hooks, "mcp-covenant-up-to-date", &path);
    println!(
        "pre-commit try-repo, first run (installs the wheel): {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let out = both(&o);
    assert!(
        out.contains("mcp-covenant lockfile is up to date") && out.contains("Passed"),
        "{out}"
    );
    assert!(out.contains("mcp-covenant.lock is up to date"), "{out}");
    // No mcp-covenant is on PATH (path_without_mcp_covenant): the one that ran is the
    // wheel's, installed into pre-commit's environment with no index.

    // The server changes and the lockfile does not: the hook fails, writing nothing.
    let before = fs::read(project.join("mcp-covenant.lock")).unwrap();
    fs::write(
        &spec,
        json!({"tools": [{"name": "alpha", "description": "Does alpha.", "inputSchema": {"type": "object"}},
                         {"name": "beta", "description": "Does beta.", "inputSchema": {"type": "object"}}]})
        .to_string(),
    )
    .unwrap();
    let o = try_repo(&dir, &project, &hooks, "mcp-covenant-up-to-date", &path);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(both(&o).contains("Failed"), "{}", both(&o));
    assert!(both(&o).contains("tool:beta"), "{}", both(&o));
    assert_eq!(fs::read(project.join("mcp-covenant.lock")).unwrap(), before);

    let o = try_repo(&dir, &project, &hooks, "mcp-covenant-lint", &path);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(both(&o).contains("mcp-covenant lint"), "{}", both(&o));
}

#[test]
#[ignore = "needs pre-commit (scripts/test.sh installs it)"]
fn the_repositorys_own_hooks_use_the_binary_on_path() {
    let dir = tmpdir("pre-commit-root");
    let hooks = hook_repo(
        &dir,
        &[(
            ".pre-commit-hooks.yaml",
            fs::read_to_string(repo().join(".pre-commit-hooks.yaml")).unwrap(),
        )],
    );
    let (project, _) = project(&dir);
    let exe_dir = Path::new(env!("CARGO_BIN_EXE_mcp-covenant"))
        .parent()
        .unwrap();
    let path = format!("{}:{}", exe_dir.display(), path_without_mcp_covenant());
    let o = try_repo(&dir, &project, &hooks, "mcp-covenant-up-to-date", &path);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        both(&o).contains("mcp-covenant.lock is up to date"),
        "{}",
        both(&o)
    );
    // Without one on PATH, pre-commit says so; nothing is built.
    let o = try_repo(
        &dir,
        &project,
        &hooks,
        "mcp-covenant-lint",
        &path_without_mcp_covenant(),
    );
    assert_ne!(o.status.code(), Some(0), "{}", both(&o));
    assert!(both(&o).contains("mcp-covenant"), "{}", both(&o));
}
