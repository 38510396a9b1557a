//! The golden suite: every directory `golden/<case>/` is one test named after it, so
//! `cargo test --test golden -- bounds` runs one case (libtest's filters, `--exact`,
//! `--list` all work). Adding a case is creating its directory; nothing here lists them.
//!
//! A case holds:
//! - `proves`: one line saying what the case proves (required);
//! - `before.lock` and `after.lock` (a `check` case), or `lint.lock` (a `lint` case);
//! - optionally `covenant.toml` (passed as `--config`) and `args` (extra flags, e.g.
//!   `--fail-on minor`);
//! - the expectations: `expected.txt` (the human report, or the `error:` line of an exit-2
//!   case), `expected.exit`, and `expected.json` unless the case exits 2; `expected.md`
//!   (the markdown report) where the case has one (create it empty to start one).
//!
//! Other files in a case directory are left alone (other test files may read them).
//! `UPDATE_GOLDEN=1` rewrites the expectations; review the diff before committing it.
//! `scripts/new-golden-case.sh` scaffolds a case from a keyword and two schemas,
//! `scripts/new-element-field.sh` one (and the rows) from an element field and two values.
//!
//! The same cases prove the rule tables: every row must be fired by some case, in both
//! directions for a schema row, so a row without a case fails CI.
//!
//! Uses libtest-mimic (`harness = false`) so that cases are discovered at run time, yet
//! each is reported, filtered and run as its own test.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser;
use libtest_mimic::{Arguments, Failed, Trial};
use mcp_covenant::cli::{self, Cli};
use mcp_covenant::config::Config;
use mcp_covenant::diff;
use mcp_covenant::lint::{self, LintRules};
use mcp_covenant::lockfile::Lockfile;
use mcp_covenant::policy;
use mcp_covenant::rules::{Direction, Rules, Scope};
use termcolor::NoColor;

fn main() {
    // Cases name their files relative to the repository, so error messages in
    // expectations do not depend on the machine.
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = cases()
        .into_iter()
        .map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            Trial::test(name, move || run_case(&dir))
        })
        .collect();
    let suite: [(&str, fn()); 4] = [
        (
            "the_seed_sample_is_reproduced_byte_for_byte",
            the_seed_sample_is_reproduced_byte_for_byte,
        ),
        (
            "every_rule_row_is_fired_by_a_golden_case",
            every_rule_row_is_fired_by_a_golden_case,
        ),
        (
            "every_lint_rule_is_fired_by_a_golden_case",
            every_lint_rule_is_fired_by_a_golden_case,
        ),
        (
            "the_seed_lint_sample_is_reproduced_byte_for_byte",
            the_seed_lint_sample_is_reproduced_byte_for_byte,
        ),
    ];
    for (name, test) in suite {
        // A panic fails the trial (libtest-mimic catches it).
        trials.push(Trial::test(name, move || {
            test();
            Ok(())
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}

fn golden_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(golden_root())
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
    let argv = argv(dir, format);
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut out = NoColor::new(Vec::new());
    match cli::run(cli, &mut out) {
        Ok(code) => (String::from_utf8(out.into_inner()).unwrap(), code),
        Err(e) => (format!("error: {e}\n"), 2),
    }
}

/// Compare `actual` with the expectation file (a line diff on a mismatch), or rewrite the
/// file under `UPDATE_GOLDEN=1`.
fn compare_or_update(path: &Path, actual: &str, failures: &mut Vec<String>) {
    let shown = path
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(path, actual).unwrap();
        return;
    }
    match fs::read_to_string(path) {
        Ok(expected) if expected == actual => {}
        Ok(expected) => failures.push(format!(
            "{} differs (- expected, + actual; UPDATE_GOLDEN=1 rewrites it):\n{}",
            shown.display(),
            similar::TextDiff::from_lines(expected.as_str(), actual)
                .unified_diff()
                .context_radius(2)
        )),
        Err(_) => failures.push(format!(
            "{} is missing (run with UPDATE_GOLDEN=1 to create it)",
            shown.display()
        )),
    }
}

/// The case's `proves` file: exactly one non-empty line.
fn check_proves(dir: &Path, failures: &mut Vec<String>) {
    let path = dir.join("proves");
    let shown = path
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(&path);
    match fs::read_to_string(&path) {
        Ok(text) if text.trim().starts_with("TODO") => failures.push(format!(
            "{} still holds the scaffold's placeholder: say what the case proves",
            shown.display()
        )),
        Ok(text) if text.trim().lines().count() == 1 => {}
        Ok(_) => failures.push(format!(
            "{} must be exactly one line saying what the case proves",
            shown.display()
        )),
        Err(_) => failures.push(format!(
            "{} is missing: write one line saying what the case proves",
            shown.display()
        )),
    }
}

/// One golden case: its statement, its inputs, and every expectation.
fn run_case(dir: &Path) -> Result<(), Failed> {
    let mut failures = Vec::new();
    check_proves(dir, &mut failures);
    let has = |f: &str| dir.join(f).exists();
    let inputs = has("lint.lock") || (has("before.lock") && has("after.lock"));
    if !inputs {
        failures.push("a case needs before.lock and after.lock, or lint.lock".into());
        return Err(failures.join("\n\n").into());
    }
    let (human, code_h) = run_check(dir, "human");
    compare_or_update(&dir.join("expected.txt"), &human, &mut failures);
    compare_or_update(
        &dir.join("expected.exit"),
        &format!("{code_h}\n"),
        &mut failures,
    );
    if code_h != 2 {
        let (json, code_j) = run_check(dir, "json");
        if code_h != code_j {
            failures.push(format!(
                "the exit code depends on the format: {code_h} human, {code_j} json"
            ));
        }
        compare_or_update(&dir.join("expected.json"), &json, &mut failures);
        if let Some(why) = exit_code_mismatch(dir, &json, code_h) {
            failures.push(why);
        }
        // The pull-request comment, for the cases that prove something about it.
        if has("expected.md") {
            let (md, _) = run_check(dir, "markdown");
            compare_or_update(&dir.join("expected.md"), &md, &mut failures);
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n\n").into())
    }
}

/// Without a config, the exit code follows from the report's counts and `--fail-on`.
fn exit_code_mismatch(dir: &Path, json: &str, code: u8) -> Option<String> {
    if dir.join("lint.lock").exists() || dir.join("covenant.toml").exists() {
        return None;
    }
    let doc: serde_json::Value = serde_json::from_str(json).ok()?;
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
    (code != u8::from(expect_fail)).then(|| {
        format!(
            "exit code {code}, but the counts {counts} and --fail-on give {}",
            u8::from(expect_fail)
        )
    })
}

fn the_seed_sample_is_reproduced_byte_for_byte() {
    let dir = golden_root().join("seed-sample");
    let (human, code) = run_check(&dir, "human");
    assert_eq!(
        human,
        "mcp-covenant: 4 change(s) — required version bump: MAJOR

  BREAKING (3)
    x server → version — server version 1.0.0 did not change, but the changes are breaking (a major bump is owed)  [server.version.unchanged]
    x tool:legacy — tool was removed  [tool.removed]
    x tool:search → inputSchema.properties.limit — new required property  [schema.property.required.added]
  MINOR (1)
    + tool:newtool — new tool  [tool.added]
"
    );
    assert_eq!(code, 1);
}

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
        let mut changes = diff::diff_with_budget(&rules, &a.surface, &b.surface, budget);
        changes.extend(diff::diff_server(&rules, &a.server, &b.server));
        let versions = (a.server.version(), b.server.version());
        let outcome = policy::apply(
            &rules,
            &Config::default(),
            changes.clone(),
            versions,
            mcp_covenant::config::FailOn::Breaking,
        );
        for c in changes.iter().chain(outcome.changes.iter()) {
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

fn every_lint_rule_is_fired_by_a_golden_case() {
    let rules = LintRules::embedded().unwrap();
    let mut fired = BTreeSet::new();
    for dir in cases() {
        if let Ok(lock) = Lockfile::read_lenient(&dir.join("lint.lock")) {
            for f in lint::lint_lockfile(&rules, &lock) {
                fired.insert(f.code);
            }
        }
    }
    let missing: Vec<&str> = rules
        .rows
        .iter()
        // Name collisions are across servers, which one lint.lock cannot hold:
        // tests/it/servers.rs fires them.
        .filter(|r| r.predicate != lint::Predicate::NameCollision)
        .map(|r| r.id.as_str())
        .filter(|id| !fired.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "lint rules no golden case fires: {missing:?}"
    );
}

fn the_seed_lint_sample_is_reproduced_byte_for_byte() {
    let dir = golden_root().join("lint-sample");
    let (human, code) = run_check(&dir, "human");
    assert_eq!(
        human,
        "mcp-covenant lint: 2 finding(s) (0 error, 1 warning, 1 info)

  WARNING (1)
    tool:newtool — tool has no description; the model cannot tell when to call it  [tool.missing_description]
  INFO (1)
    tool:search → limit — parameter has no description  [tool.param.missing_description]
"
    );
    assert_eq!(code, 0, "warnings do not fail the default --fail-on error");
}
