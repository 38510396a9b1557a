//! The real-world corpus: lockfiles captured from published MCP servers (npm, PyPI,
//! crates.io) at two or more versions each, under `tests/corpus/<package>/<version>.lock`.
//! For every pair in `tests/corpus/pairs.txt` (`package old new` per line) this runs the
//! binary as a user would, `check --baseline OLD --against NEW --format json`, and compares
//! its output and exit status with `tests/corpus/<package>/<old>..<new>.expected.json`.
//! The lockfiles are committed, so no network and no server is needed;
//! `tests/corpus/capture.sh` is how they were captured, `tests/corpus/REVIEW.md` says
//! which reported changes a reviewer agreed with.
//!
//! `UPDATE_GOLDEN=1 cargo test --test it corpus::` rewrites the expectations; review the diff
//! (against REVIEW.md) before committing it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// `(package, old, new)` for each non-empty, non-comment line of pairs.txt.
fn pairs() -> Vec<(String, String, String)> {
    let text = fs::read_to_string(corpus_root().join("pairs.txt")).expect("tests/corpus/pairs.txt");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 3, "pairs.txt: `{l}` is not `package old new`");
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect()
}

/// The expectation file holds the JSON report followed by one line `exit N`, so a change in
/// the exit status shows in the same diff.
fn run_pair(package: &str, old: &str, new: &str) -> String {
    // Run in tests/corpus, which has no covenant.toml: the defaults, whatever the
    // repository root configures.
    let rel = |v: &str| format!("{package}/{v}.lock");
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-covenant"))
        .current_dir(corpus_root())
        .args(["check", "--format", "json", "--color", "never"])
        .args(["--baseline", &rel(old), "--against", &rel(new)])
        .env_remove("NO_COLOR")
        .output()
        .expect("run mcp-covenant");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 report");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().expect("exit status");
    assert!(
        code == 0 || code == 1,
        "{package} {old}..{new}: exit {code}, stderr:\n{stderr}"
    );
    serde_json::from_str::<serde_json::Value>(&stdout)
        .unwrap_or_else(|e| panic!("{package} {old}..{new}: the report is not JSON: {e}"));
    let mut s = stdout;
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(&format!("exit {code}\n"));
    s
}

#[test]
fn every_corpus_pair_matches_its_reviewed_expectation() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let pairs = pairs();
    assert!(!pairs.is_empty(), "tests/corpus/pairs.txt lists no pair");
    let mut failures = Vec::new();
    for (package, old, new) in &pairs {
        let actual = run_pair(package, old, new);
        let path = corpus_root()
            .join(package)
            .join(format!("{old}..{new}.expected.json"));
        let shown = format!("tests/corpus/{package}/{old}..{new}.expected.json");
        if update {
            fs::write(&path, &actual).unwrap();
            continue;
        }
        match fs::read_to_string(&path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{shown} differs (- expected, + actual; UPDATE_GOLDEN=1 rewrites it):\n{}",
                similar::TextDiff::from_lines(expected.as_str(), actual.as_str())
                    .unified_diff()
                    .context_radius(2)
            )),
            Err(_) => failures.push(format!(
                "{shown} is missing (run with UPDATE_GOLDEN=1 to create it)"
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus pair(s) differ:\n\n{}",
        failures.len(),
        pairs.len(),
        failures.join("\n")
    );
}

/// Every lockfile in the corpus is in at least one pair, and every pair's lockfiles exist:
/// a capture that nobody compares is dead weight, a pair without its files a typo.
#[test]
fn every_corpus_lockfile_is_in_a_pair() {
    let pairs = pairs();
    let mut used = std::collections::BTreeSet::new();
    for (package, old, new) in &pairs {
        for v in [old, new] {
            let p = corpus_root().join(package).join(format!("{v}.lock"));
            assert!(
                p.is_file(),
                "pairs.txt names {}, which does not exist",
                p.display()
            );
            used.insert(p);
        }
    }
    for dir in fs::read_dir(corpus_root()).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "lock") {
                assert!(
                    used.contains(&f),
                    "{} is in no pair of pairs.txt",
                    f.display()
                );
            }
        }
    }
}
