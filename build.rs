//! Build facts for `--version`: `MCP_COVENANT_BUILD_INFO`, the part between the
//! parentheses of `mcp-covenant 0.2.0 (abc1234 2026-12-10, x86_64-unknown-linux-gnu, http)`.
//!
//! The commit (short hash and commit date) comes from git when the crate is built from its
//! own checkout; from `.cargo_vcs_info.json` (hash only) when built from a published
//! package; otherwise it is left out. git is asked defensively: no git, no repository, or
//! a repository that is not this crate's (a package unpacked inside another project) all
//! leave the commit out and never fail the build.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    println!("cargo:rerun-if-changed=build.rs");

    let commit = git_commit(&manifest).or_else(|| vcs_info_commit(&manifest));
    let target = env::var("TARGET").unwrap_or_else(|_| "unknown-target".into());
    let transport = if env::var_os("CARGO_FEATURE_HTTP").is_some() {
        "http"
    } else {
        "stdio-only"
    };
    let mut parts = Vec::new();
    if let Some(c) = commit {
        parts.push(c);
    }
    parts.push(target);
    parts.push(transport.to_string());
    println!(
        "cargo:rustc-env=MCP_COVENANT_BUILD_INFO={}",
        parts.join(", ")
    );
}

/// git's answer, trimmed, or None for any failure (no git, not a repository, ...).
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        // The repository's own settings only: no pager, no prompts.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// `abc1234 2026-12-10` from the checkout this crate is the root of, and the
/// rerun-if-changed lines that make a new commit or a branch switch rebuild it.
fn git_commit(manifest: &Path) -> Option<String> {
    let top = git(manifest, &["rev-parse", "--show-toplevel"])?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(Path::new(&top), manifest) {
        return None; // a package unpacked inside some other repository
    }
    let absolute = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() {
            p
        } else {
            manifest.join(p)
        }
    };
    // HEAD moves on a checkout; the branch it names moves on a commit. (A worktree has
    // its own HEAD and shares refs with the main checkout.)
    if let Some(dir) = git(manifest, &["rev-parse", "--git-dir"]).map(absolute) {
        rerun_if_changed(&dir.join("HEAD"));
    }
    if let Some(common) = git(manifest, &["rev-parse", "--git-common-dir"]).map(absolute) {
        if let Some(branch) = git(manifest, &["symbolic-ref", "-q", "HEAD"]) {
            rerun_if_changed(&common.join(branch));
        }
        rerun_if_changed(&common.join("packed-refs"));
    }
    let line = git(
        manifest,
        &[
            "log",
            "-1",
            "--no-show-signature",
            "--format=%h %cs",
            "--abbrev=7",
        ],
    )?;
    // `%h %cs`: a hex hash and a YYYY-MM-DD date, nothing else.
    let ok = line.split_once(' ').is_some_and(|(h, d)| {
        h.len() >= 7
            && h.chars().all(|c| c.is_ascii_hexdigit())
            && d.len() == 10
            && d.chars().all(|c| c.is_ascii_digit() || c == '-')
    });
    ok.then_some(line)
}

fn rerun_if_changed(path: &Path) {
    // A path that does not exist (no packed-refs yet) would make cargo rerun every build.
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// The hash `cargo package` records, for a build from a published package (no date).
fn vcs_info_commit(manifest: &Path) -> Option<String> {
    let path = manifest.join(".cargo_vcs_info.json");
    let text = std::fs::read_to_string(&path).ok()?;
    rerun_if_changed(&path);
    let rest = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let start = rest.find('"')? + 1;
    let hash: String = rest[start..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    (hash.len() >= 7).then(|| hash[..7].to_string())
}
