//! The golden suite: every `golden/<case>/` holds `before.lock`, `after.lock`, and the
//! reports `check` must print for them (`expected.txt`, `expected.json`). An optional
//! `args` file adds flags (e.g. `--fail-on minor`). `UPDATE_GOLDEN=1` rewrites the
//! expectations; review the diff before committing it.
//!
//! The same walk proves the rule tables: every row must be fired by some case, in both
//! directions for a schema row, so a row without a case fails CI.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser;
use mcp_covenant::cli::{self, Cli};
use mcp_covenant::config::Config;
use mcp_covenant::diff;
use mcp_covenant::lint::{self, LintRules};
use mcp_covenant::lockfile::Lockfile;
use mcp_covenant::report::Report;
use mcp_covenant::rules::{Direction, Rules, Scope};
use termcolor::NoColor;

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .expect("golden/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no golden cases found");
    dirs
}

/// The command line a case stands for: `lint --from lint.lock` when the case has a
/// `lint.lock`, else `check --baseline before.lock --against after.lock`; plus
/// `--config covenant.toml` when present and the flags in `args`. Paths are relative to
/// the repository, so error messages in expectations do not depend on the machine.
fn argv(dir: &Path, format: &str) -> Vec<String> {
    let rel = dir.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(dir);
    let file = |f: &str| rel.join(f).display().to_string();
    let mut argv: Vec<String> = vec!["mcp-covenant".into()];
    if dir.join("lint.lock").exists() {
        argv.extend(["lint".into(), "--from".into(), file("lint.lock")]);
    } else {
        argv.extend(["check".into(), "--baseline".into(), file("before.lock")]);
        argv.extend(["--against".into(), file("after.lock")]);
    }
    argv.extend(["--format".into(), format.into()]);
    if dir.join("covenant.toml").exists() {
        argv.extend(["--config".into(), file("covenant.toml")]);
    }
    if let Ok(extra) = fs::read_to_string(dir.join("args")) {
        argv.extend(extra.split_whitespace().map(str::to_string));
    }
    argv
}

/// Run a case in-process: (stdout, or the `error:` line for exit 2; exit code).
fn run_check(dir: &Path, format: &str) -> (String, u8) {
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let argv = argv(dir, format);
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut out = NoColor::new(Vec::new());
    match cli::run(cli, &mut out) {
        Ok(code) => (String::from_utf8(out.into_inner()).unwrap(), code),
        Err(e) => (format!("error: {e}\n"), 2),
    }
}

fn compare_or_update(path: &Path, actual: &str, failures: &mut Vec<String>) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(path, actual).unwrap();
        return;
    }
    match fs::read_to_string(path) {
        Ok(expected) if expected == actual => {}
        Ok(expected) => failures.push(format!(
            "{} differs:\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        )),
        Err(_) => failures.push(format!(
            "{} is missing (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )),
    }
}

#[test]
fn golden_cases_match_their_expected_reports() {
    let mut failures = Vec::new();
    for dir in cases() {
        let (human, code_h) = run_check(&dir, "human");
        compare_or_update(&dir.join("expected.txt"), &human, &mut failures);
        compare_or_update(
            &dir.join("expected.exit"),
            &format!("{code_h}\n"),
            &mut failures,
        );
        if code_h == 2 {
            continue; // an error case: the error line is the expectation
        }
        let (json, code_j) = run_check(&dir, "json");
        assert_eq!(
            code_h,
            code_j,
            "{}: exit code depends on format",
            dir.display()
        );
        compare_or_update(&dir.join("expected.json"), &json, &mut failures);
        if dir.join("lint.lock").exists() || dir.join("covenant.toml").exists() {
            continue;
        }
        // Without a config, the exit code follows from the report and --fail-on.
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        let counts = &doc["counts"];
        let args = fs::read_to_string(dir.join("args")).unwrap_or_default();
        let at_or_above = |levels: &[&str]| levels.iter().any(|l| counts[*l].as_u64() > Some(0));
        let expect_fail = if args.contains("--fail-on never") {
            false
        } else if args.contains("--fail-on patch") {
            at_or_above(&["breaking", "minor", "patch"])
        } else if args.contains("--fail-on minor") {
            at_or_above(&["breaking", "minor"])
        } else {
            at_or_above(&["breaking"])
        };
        assert_eq!(
            code_h,
            u8::from(expect_fail),
            "{}: exit code",
            dir.display()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_seed_sample_is_reproduced_byte_for_byte() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/seed-sample");
    let (human, code) = run_check(&dir, "human");
    assert_eq!(
        human,
        "mcp-covenant: 3 change(s) — required version bump: MAJOR

  BREAKING (2)
    x tool:legacy — tool was removed  [tool.removed]
    x tool:search → inputSchema.properties.limit — new required property  [schema.property.required.added]
  MINOR (1)
    + tool:newtool — new tool  [tool.added]
"
    );
    assert_eq!(code, 1);
}

#[test]
fn every_rule_row_is_fired_by_a_golden_case() {
    let rules = Rules::embedded().unwrap();
    let mut fired: BTreeSet<(usize, Option<Direction>)> = BTreeSet::new();
    for dir in cases() {
        if !dir.join("before.lock").exists() || dir.join("covenant.toml").exists() {
            continue; // lint cases, and cases whose config changes what fires
        }
        let a = Lockfile::read(&dir.join("before.lock")).unwrap();
        let b = Lockfile::read(&dir.join("after.lock")).unwrap();
        // The same budget the case's `args` gives `check`.
        let args = fs::read_to_string(dir.join("args")).unwrap_or_default();
        let words: Vec<&str> = args.split_whitespace().collect();
        let budget = words
            .iter()
            .position(|w| *w == "--walk-budget")
            .and_then(|i| words.get(i + 1)?.parse().ok())
            .unwrap_or(diff::DEFAULT_WORK_BUDGET);
        let changes = diff::diff_with_budget(&rules, &a.surface, &b.surface, budget);
        let mut report = Report::new(&rules, changes.clone(), String::new(), &Config::default());
        report.verify_version(
            a.server.version.as_deref(),
            b.server.version.as_deref(),
            &Config::default(),
        );
        for c in changes.iter().chain(report.changes.iter()) {
            fired.insert((c.rule, c.direction));
        }
    }
    let mut missing = Vec::new();
    for (i, rule) in rules.rows.iter().enumerate() {
        let needs: Vec<Option<Direction>> = match rule.scope {
            Scope::Schema { .. } => [
                (Direction::Input, rule.input),
                (Direction::Output, rule.output),
            ]
            .into_iter()
            .filter(|(_, s)| s.is_some())
            .map(|(d, _)| Some(d))
            .collect(),
            Scope::Element { .. } | Scope::Server { .. } => vec![rule.surface_direction()],
        };
        for d in needs {
            if !fired.contains(&(i, d)) {
                missing.push(format!(
                    "{} ({} {}, {:?}) in {}",
                    rule.id,
                    rule.describe_scope(),
                    rule.event,
                    d,
                    rule.source
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "rule rows no golden case fires (add a case under golden/):\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn every_lint_rule_is_fired_by_a_golden_case() {
    let rules = LintRules::embedded().unwrap();
    let mut fired = BTreeSet::new();
    for dir in cases() {
        if let Ok(lock) = Lockfile::read_lenient(&dir.join("lint.lock")) {
            for f in lint::lint(&rules, &lock.surface) {
                fired.insert(f.code);
            }
        }
    }
    let missing: Vec<&str> = rules
        .rows
        .iter()
        .map(|r| r.id.as_str())
        .filter(|id| !fired.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "lint rules no golden case fires: {missing:?}"
    );
}

#[test]
fn the_seed_lint_sample_header_is_reproduced() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/lint-sample");
    let (human, code) = run_check(&dir, "human");
    assert!(
        human.starts_with(
            "mcp-covenant lint: 2 finding(s) (0 error, 1 warning, 1 info)\n\n  WARNING (1)\n"
        ),
        "{human}"
    );
    assert_eq!(code, 0, "warnings do not fail the default --fail-on error");
}
