//! Rule id lifecycle: a row's `aliases` are its former ids, and `[[retired]]` entries
//! are ids no row reports any more. Everywhere a user writes a rule id (covenant.toml's
//! `[severity]`, `[[ignore]] code`, `mcp-covenant rules ID`) a renamed id still works,
//! with one `warning:` line on stderr naming the current id(s); a retired id is named as
//! retired (and configures nothing); an unknown id is still exit 2 with a suggestion.
//!
//! The embedded tables have no former ids yet, so these tests use the tables of
//! examples/renamed-rules.rs (built by `common::example`), in process and as a binary.

#[allow(dead_code)]
#[path = "../../examples/renamed-rules.rs"]
mod renamed;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use mcp_covenant::config::Config;
use mcp_covenant::lint::LintRules;
use mcp_covenant::rules::{Rules, Severity, TABLES};

fn rules_from(tables: &[(&'static str, String)]) -> Result<Rules, String> {
    let borrowed: Vec<(&'static str, &str)> =
        tables.iter().map(|(s, t)| (*s, t.as_str())).collect();
    Rules::from_tables(&borrowed).map_err(|e| e.to_string())
}

fn renamed_rules() -> Rules {
    rules_from(&renamed::tables()).unwrap_or_else(|e| panic!("{e}"))
}

/// The embedded tables with `edit` applied to rules/surface.toml.
fn surface_edited(edit: impl Fn(&str) -> String) -> Result<Rules, String> {
    let tables: Vec<(&'static str, String)> = renamed::tables()
        .into_iter()
        .map(|(s, t)| {
            (
                s,
                if s.ends_with("surface.toml") {
                    edit(&t)
                } else {
                    t
                },
            )
        })
        .collect();
    rules_from(&tables)
}

/// mcp-covenant with the renamed tables.
fn renamed_bin() -> Command {
    let mut c = Command::new(example("renamed-rules"));
    c.env_remove("NO_COLOR").env_remove("SOURCE_DATE_EPOCH");
    c
}

fn config_file(name: &str, text: &str) -> PathBuf {
    let path = tmpdir(name).join("covenant.toml");
    fs::write(&path, text).unwrap();
    path
}

fn rules_cmd(config: Option<&Path>, id: &str) -> Output {
    let mut c = renamed_bin();
    if let Some(config) = config {
        c.arg("--config").arg(config);
    }
    c.args(["rules", id]).output().unwrap()
}

fn golden(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden/seed-sample")
        .join(file)
}

/// `check --verbose` of golden/seed-sample (tool:legacy removed, and other changes).
fn check(config: &Path) -> Output {
    renamed_bin()
        .arg("--config")
        .arg(config)
        .args(["check", "--verbose", "--baseline"])
        .arg(golden("before.lock"))
        .arg("--against")
        .arg(golden("after.lock"))
        .output()
        .unwrap()
}

/// stderr is exactly this one line.
fn assert_one_warning(o: &Output, expected: &str) {
    let err = stderr_unhinted(o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.trim_end(), expected);
}

fn lint() -> LintRules {
    LintRules::embedded().unwrap()
}

// ---- the tables

#[test]
fn former_ids_resolve_to_what_became_of_them() {
    let rules = renamed_rules();
    assert_eq!(rules.renamed("tool.deleted"), ["tool.removed"]);
    let mut split = rules.renamed("tool.title.edited");
    split.sort();
    assert_eq!(split, ["tool.title.added", "tool.title.changed"]);
    assert!(rules.renamed("tool.removed").is_empty());
    assert!(rules.former("tool.removed").is_none());
    assert!(rules.former("tool.never").is_none());
    assert_eq!(
        rules.former("tool.renamed").unwrap().describe("tool.renamed"),
        "rule id `tool.renamed` is retired, replaced by `tool.removed` and `tool.added` (a renamed tool is one removed and one added)"
    );
}

#[test]
fn an_alias_that_is_still_an_id_is_refused() {
    let tables: Vec<(&'static str, String)> = TABLES
        .iter()
        .map(|(source, text)| {
            let text = text.replacen(
                "id = \"tool.removed\"\n",
                "id = \"tool.removed\"\naliases = [\"tool.added\"]\n",
                1,
            );
            (*source, text)
        })
        .collect();
    let err = rules_from(&tables).unwrap_err();
    assert!(err.contains("former id"), "{err}");
}

#[test]
fn a_retired_id_must_be_gone_once_and_replaced_by_rows_that_exist() {
    let retire = |entry: &'static str| move |t: &str| format!("{t}\n[[retired]]\n{entry}");
    let err = surface_edited(retire("id = \"tool.added\"\nreason = \"r\"\n")).unwrap_err();
    assert!(
        err.contains("retired id `tool.added`: a row still has that id"),
        "{err}"
    );
    let err = surface_edited(retire("id = \"tool.deleted\"\nreason = \"r\"\n")).unwrap_err();
    assert!(err.contains("also a former id of `tool.removed`"), "{err}");
    let err = surface_edited(retire(
        "id = \"tool.gone\"\nreplaced_by = [\"tool.nope\"]\nreason = \"r\"\n",
    ))
    .unwrap_err();
    assert!(err.contains("names `tool.nope`, which no row has"), "{err}");
    let err = surface_edited(retire("id = \"tool.renamed\"\nreason = \"r\"\n")).unwrap_err();
    assert!(err.contains("retired twice"), "{err}");
    let err = surface_edited(retire("id = \"tool.gone\"\nreason = \" \"\n")).unwrap_err();
    assert!(err.contains("`reason` is empty"), "{err}");
    let err = surface_edited(retire("id = \"tool.gone\"\n")).unwrap_err();
    assert!(err.contains("reason"), "{err}");
}

#[test]
fn a_rename_moves_no_fingerprint() {
    use mcp_covenant::diff;
    use mcp_covenant::lockfile::Lockfile;
    // The tables as they were before the rename: the row still called `tool.deleted`.
    let before_rename = TABLES
        .iter()
        .map(|(s, t)| {
            (
                *s,
                t.replacen("id = \"tool.removed\"\n", "id = \"tool.deleted\"\n", 1),
            )
        })
        .collect::<Vec<_>>();
    let fingerprints = |rules: &Rules| {
        let a = Lockfile::read(&golden("before.lock")).unwrap();
        let b = Lockfile::read(&golden("after.lock")).unwrap();
        let mut all: Vec<(String, String)> = diff::diff(rules, &a.surface, &b.surface)
            .into_iter()
            .map(|c| (c.subject.to_string(), c.fingerprint))
            .collect();
        all.sort();
        all
    };
    let old = fingerprints(&rules_from(&before_rename).unwrap());
    assert!(old.iter().any(|(s, _)| s == "tool:legacy"), "{old:?}");
    assert_eq!(old, fingerprints(&renamed_rules()));
}

// ---- [severity]

#[test]
fn a_renamed_id_still_sets_the_severity_of_the_rows_that_took_it_over() {
    let rules = renamed_rules();
    let config = Config::parse(
        "[severity]\n\"tool.deleted\" = \"minor\"\n\"tool.title.edited\" = \"breaking\"\n",
        "covenant.toml",
        &rules,
        &lint(),
    )
    .unwrap();
    let get = |id: &str| config.severity.get(id).and_then(|o| o.get(None));
    assert_eq!(get("tool.removed"), Some(Severity::Minor));
    assert_eq!(get("tool.title.added"), Some(Severity::Breaking));
    assert_eq!(get("tool.title.changed"), Some(Severity::Breaking));
    assert!(!config.severity.contains_key("tool.deleted"));
    // The warnings are collected (the command line prints them), not printed here: the
    // covenant.toml of a --baseline-rev is parsed too, and must not warn twice.
    assert_eq!(
        config.warnings,
        [
            "covenant.toml:2:1: rule id `tool.deleted` is deprecated; it is now `tool.removed`",
            "covenant.toml:3:1: rule id `tool.title.edited` is deprecated; it is now `tool.title.changed` and `tool.title.added`",
        ]
    );
    // Without the alias, the old id is unknown.
    let err = Config::parse(
        "[severity]\n\"tool.deleted\" = \"minor\"\n",
        "covenant.toml",
        &Rules::embedded().unwrap(),
        &lint(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("unknown rule id `tool.deleted`"),
        "{err}"
    );
}

#[test]
fn the_current_id_written_out_wins_over_its_former_id() {
    let rules = renamed_rules();
    // In either order: keys are read sorted, and `tool.deleted` sorts first,
    // `tool.title.edited` after `tool.title.added`.
    let config = Config::parse(
        "[severity]\n\"tool.removed\" = \"patch\"\n\"tool.deleted\" = \"minor\"\n\
         \"tool.title.added\" = \"minor\"\n\"tool.title.edited\" = \"breaking\"\n",
        "covenant.toml",
        &rules,
        &lint(),
    )
    .unwrap();
    let get = |id: &str| config.severity.get(id).and_then(|o| o.get(None));
    assert_eq!(get("tool.removed"), Some(Severity::Patch));
    assert_eq!(get("tool.title.added"), Some(Severity::Minor));
    assert_eq!(get("tool.title.changed"), Some(Severity::Breaking));
}

#[test]
fn a_severity_on_a_renamed_id_warns_once_on_stderr_and_applies() {
    let config = config_file("ids-sev", "[severity]\n\"tool.deleted\" = \"minor\"\n");
    let o = rules_cmd(Some(&config), "tool.removed");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_one_warning(
        &o,
        &format!(
            "warning: {}:2:1: rule id `tool.deleted` is deprecated; it is now `tool.removed`",
            config.display()
        ),
    );
    let row = stdout(&o);
    let row = row.lines().find(|l| l.starts_with("tool.removed")).unwrap();
    assert!(row.contains("breaking        minor"), "{row}");
}

#[test]
fn a_severity_on_a_retired_id_warns_and_configures_nothing() {
    let config = config_file(
        "ids-sev-retired",
        "[severity]\n\"tool.renamed\" = \"none\"\n",
    );
    let o = rules_cmd(Some(&config), "tool.removed");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_one_warning(
        &o,
        &format!(
            "warning: {}:2:1: rule id `tool.renamed` is retired, replaced by `tool.removed` and `tool.added` (a renamed tool is one removed and one added); this [severity] entry no longer applies",
            config.display()
        ),
    );
    let out = stdout(&o);
    let row = out.lines().find(|l| l.starts_with("tool.removed")).unwrap();
    assert!(row.contains("breaking        breaking"), "{row}");
    // An invalid severity on it is still an error.
    let config = config_file(
        "ids-sev-retired-bad",
        "[severity]\n\"tool.renamed\" = \"nil\"\n",
    );
    let o = rules_cmd(Some(&config), "tool.removed");
    assert_fails_cleanly(&o, "invalid severity \"nil\" for `tool.renamed`");
}

#[test]
fn a_misspelt_severity_id_still_gets_a_suggestion() {
    let config = config_file("ids-sev-typo", "[severity]\n\"tool.remvoed\" = \"minor\"\n");
    let o = rules_cmd(Some(&config), "tool.removed");
    assert_fails_cleanly(
        &o,
        "2:1: unknown rule id `tool.remvoed`; did you mean `tool.removed`?",
    );
}

// ---- [[ignore]] code

#[test]
fn an_ignore_on_a_renamed_code_warns_once_and_matches_the_new_id() {
    let config = config_file(
        "ids-ignore",
        "[[ignore]]\ncode = \"tool.deleted\"\nreason = \"agreed\"\n",
    );
    let o = check(&config);
    assert_one_warning(
        &o,
        &format!(
            "warning: {}:2:8: rule id `tool.deleted` is deprecated; it is now `tool.removed`",
            config.display()
        ),
    );
    let out = stdout(&o);
    assert!(!out.contains("x tool:legacy"), "{out}");
    assert!(out.contains("agreed"), "--verbose lists it: {out}");
    // A split id matches both rows it became.
    let rules = renamed_rules();
    let c = Config::parse(
        "[[ignore]]\ncode = \"tool.title.edited\"\nreason = \"r\"\n",
        "covenant.toml",
        &rules,
        &lint(),
    )
    .unwrap();
    let change = |code: &str| mcp_covenant::diff::Change {
        code: code.to_string(),
        ..example_change()
    };
    assert!(mcp_covenant::policy::ignores(
        &c.ignore[0],
        &change("tool.title.added")
    ));
    assert!(mcp_covenant::policy::ignores(
        &c.ignore[0],
        &change("tool.title.changed")
    ));
    assert!(!mcp_covenant::policy::ignores(
        &c.ignore[0],
        &change("tool.title.removed")
    ));
}

#[test]
fn an_ignore_on_a_retired_code_warns_and_matches_nothing() {
    let config = config_file(
        "ids-ignore-retired",
        "[[ignore]]\ncode = \"tool.renamed\"\nreason = \"agreed\"\n",
    );
    let o = check(&config);
    assert_eq!(o.status.code(), Some(1));
    assert_one_warning(
        &o,
        &format!(
            "warning: {}:2:8: rule id `tool.renamed` is retired, replaced by `tool.removed` and `tool.added` (a renamed tool is one removed and one added); this [[ignore]] no longer applies",
            config.display()
        ),
    );
    assert!(stdout(&o).contains("x tool:legacy"), "{}", stdout(&o));
}

/// `check --prune-ignores` removes an `[[ignore]]` on a retired code (it configures
/// nothing), naming why, and keeps the others.
#[test]
fn prune_ignores_removes_an_ignore_on_a_retired_code() {
    let text = "[[ignore]]\ncode = \"tool.renamed\"\nreason = \"agreed\"\n\n[[ignore]]\nsubject = \"tool:legacy\"\nreason = \"kept\"\n";
    let config = config_file("ids-ignore-retired-prune", text);
    let o = renamed_bin()
        .arg("--config")
        .arg(&config)
        .args(["check", "--prune-ignores", "--baseline"])
        .arg(golden("before.lock"))
        .arg("--against")
        .arg(golden("after.lock"))
        .output()
        .unwrap();
    // The pair has other breaking changes.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr_unhinted(&o);
    assert!(
        err.contains(&format!(
            "warning: {}:1:1: removed this [[ignore]] (agreed): its code `tool.renamed` is a retired rule id",
            config.display()
        )),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "[[ignore]]\nsubject = \"tool:legacy\"\nreason = \"kept\"\n"
    );
}

#[test]
fn a_code_glob_matches_current_ids_only() {
    // It matches a current id: no warning, whatever former ids it matches too.
    let config = config_file(
        "ids-glob",
        "[[ignore]]\ncode = \"tool.*\"\nsubject = \"tool:legacy\"\nreason = \"agreed\"\n",
    );
    let o = check(&config);
    assert!(stderr_unhinted(&o).is_empty(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("x tool:legacy"), "{}", stdout(&o));
    // It matches former ids only: an error that says so.
    let config = config_file(
        "ids-glob-former",
        "[[ignore]]\ncode = \"tool.delete*\"\nreason = \"agreed\"\n",
    );
    assert_fails_cleanly(
        &check(&config),
        "2:8: code `tool.delete*` matches no current rule id, only former ones (rule id `tool.deleted` is deprecated; it is now `tool.removed`); a code glob matches current ids",
    );
    // It matches nothing: unknown, with a suggestion.
    let config = config_file(
        "ids-glob-typo",
        "[[ignore]]\ncode = \"tool.remvoed\"\nreason = \"agreed\"\n",
    );
    assert_fails_cleanly(
        &check(&config),
        "2:8: unknown rule id `tool.remvoed`; did you mean `tool.removed`?",
    );
}

// ---- mcp-covenant rules ID

#[test]
fn rules_shows_what_a_former_id_became() {
    let o = rules_cmd(None, "tool.deleted");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).is_empty(),
        "said once, on stdout: {}",
        stderr(&o)
    );
    let out = stdout(&o);
    assert!(
        out.starts_with("rule id `tool.deleted` is deprecated; it is now `tool.removed`\n\nID "),
        "{out}"
    );
    assert!(out.contains("\ntool.removed  "), "{out}");
    let o = rules_cmd(None, "tool.title.edited");
    let out = stdout(&o);
    assert!(out.contains("\ntool.title.added "), "{out}");
    assert!(out.contains("\ntool.title.changed "), "{out}");
    let o = rules_cmd(None, "tool.renamed");
    let out = stdout(&o);
    assert!(out.starts_with("rule id `tool.renamed` is retired, replaced by `tool.removed` and `tool.added` (a renamed tool is one removed and one added)\n\nID "), "{out}");
    assert!(out.contains("\ntool.added "), "{out}");
    let o = rules_cmd(None, "tool.icon.changed");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "rule id `tool.icon.changed` is retired (icons are not part of the contract)\n"
    );
    assert_fails_cleanly(
        &rules_cmd(None, "tool.remvoed"),
        "unknown rule id `tool.remvoed`; did you mean `tool.removed`?",
    );
}

fn example_change() -> mcp_covenant::diff::Change {
    mcp_covenant::diff::Change {
        rule: 0,
        code: String::new(),
        severity: Severity::Patch,
        subject: "tool:search".parse().unwrap(),
        path: None,
        direction: None,
        message: String::new(),
        before: None,
        after: None,
        fingerprint: String::new(),
        certainty: Default::default(),
        witness: None,
        shared_with: None,
        witness_absent: None,
    }
}

#[test]
fn sarif_names_a_rules_former_ids() {
    let o = renamed_bin()
        .args(["check", "--format", "sarif", "--baseline"])
        .arg(golden("before.lock"))
        .arg("--against")
        .arg(golden("after.lock"))
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rules = doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let rule = |id: &str| rules.iter().find(|r| r["id"] == id).unwrap();
    assert_eq!(
        rule("tool.removed")["deprecatedIds"],
        serde_json::json!(["tool.deleted"])
    );
    assert!(rule("tool.added").get("deprecatedIds").is_none());
}
