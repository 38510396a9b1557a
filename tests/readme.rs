//! docs/classification.md's table against the rule tables: every code the table names
//! (`schema.{maxLength,minLength}.tightened`, `*.icons.changed`, `schema.items.added` /
//! `.removed`) is a rule id, or a pattern that matches some, and every rule id in
//! rules/surface.toml and rules/schema.toml is named by the table.

use std::fs;
use std::path::Path;

use globset::Glob;
use mcp_covenant::rules::Rules;

/// The codes of the table's first column, as glob patterns.
fn table_codes() -> Vec<(String, String)> {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/classification.md"))
            .unwrap();
    let start = readme
        .find("# How changes are classified")
        .expect("docs/classification.md has the classification section");
    let mut codes = Vec::new();
    for row in readme[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| code |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
    {
        let first = row.split('|').nth(1).unwrap_or("");
        let mut previous = String::new();
        for (i, token) in first.split('`').enumerate() {
            if i % 2 == 0 {
                continue; // outside backticks
            }
            let code_like = token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._*{},".contains(c));
            if !code_like || !token.contains('.') {
                continue;
            }
            let full = if let Some(suffix) = token.strip_prefix('.') {
                // `.removed` after `schema.items.added`: the same stem, a new ending.
                let keep = previous.split('.').count() - suffix.split('.').count();
                let stem: Vec<&str> = previous.split('.').take(keep).collect();
                format!("{}.{suffix}", stem.join("."))
            } else {
                token.to_string()
            };
            let kinds = [
                "tool.",
                "resource.",
                "template.",
                "prompt.",
                "schema.",
                "server.",
                "surface.",
                "*.",
            ];
            if kinds.iter().any(|k| full.starts_with(k)) {
                previous = full.clone();
                codes.push((full, row.to_string()));
            }
        }
    }
    assert!(codes.len() > 40, "the table was not found: {codes:?}");
    codes
}

#[test]
fn the_readme_table_names_exactly_the_rule_ids() {
    let rules = Rules::embedded().unwrap();
    let ids: Vec<&str> = rules.rows.iter().map(|r| r.id.as_str()).collect();
    let codes = table_codes();
    let matchers: Vec<_> = codes
        .iter()
        .map(|(code, _)| Glob::new(code).unwrap().compile_matcher())
        .collect();
    let mut problems = Vec::new();
    for ((code, row), m) in codes.iter().zip(&matchers) {
        if !ids.iter().any(|id| m.is_match(id)) {
            problems.push(format!("`{code}` names no rule id (in: {row})"));
        }
    }
    let mut unnamed: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !matchers.iter().any(|m| m.is_match(id)))
        .collect();
    unnamed.sort_unstable();
    unnamed.dedup();
    for id in unnamed {
        problems.push(format!(
            "`{id}` is not in docs/classification.md's classification table"
        ));
    }
    assert!(
        problems.is_empty(),
        "docs/classification.md, How changes are classified:\n  {}",
        problems.join("\n  ")
    );
}

/// The output of `mcp-covenant ARGS` (no covenant.toml: run where there is none).
fn generated(args: &[&str]) -> String {
    let d = std::env::temp_dir().join(format!("mcp-covenant-{}-docs", std::process::id()));
    fs::create_dir_all(&d).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-covenant"))
        .current_dir(&d)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{args:?}");
    String::from_utf8(o.stdout).unwrap()
}

/// docs/ pages generated from the tables and the reference: equal to what the binary
/// prints, or rewritten with UPDATE_DOCS=1.
fn assert_generated(page: &str, expected: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(page);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        fs::write(&path, expected).unwrap();
    }
    let actual = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "{page} is stale: regenerate it with `UPDATE_DOCS=1 cargo test --test readme`"
    );
}

#[test]
fn docs_rules_md_is_rules_format_markdown() {
    assert_generated(
        "docs/rules.md",
        &generated(&["rules", "--format", "markdown"]),
    );
}

#[test]
fn docs_config_md_is_help_config() {
    let reference = generated(&["help", "config"]);
    assert_generated(
        "docs/config.md",
        &format!(
            "# covenant.toml\n\n<!-- Generated from `mcp-covenant help config`; tests/readme.rs fails when it is stale. -->\n\n```text\n{reference}```\n"
        ),
    );
}
