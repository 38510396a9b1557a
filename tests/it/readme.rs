//! The generated pages are what their generator prints now: docs/rules.md (every rule
//! id, from the rule tables) and docs/config.md (`help config`).

use std::fs;
use std::path::Path;

/// The output of `mcp-covenant ARGS` (no covenant.toml: run where there is none).
fn generated(args: &[&str]) -> String {
    let d = std::env::temp_dir().join(format!("mcp-covenant-{}-readme-docs", std::process::id()));
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
        "{page} is stale: regenerate it with `UPDATE_DOCS=1 cargo test --test it readme::`"
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
            "# covenant.toml\n\n<!-- Generated from `mcp-covenant help config`; tests/it/readme.rs fails when it is stale. -->\n\n```text\n{reference}```\n"
        ),
    );
}

/// CONTRIBUTING.md's comparator table is `rules --comparators --format markdown`,
/// between its markers.
#[test]
fn contributing_comparator_table_is_rules_comparators() {
    let (start, end) = (
        "<!-- generated: mcp-covenant rules --comparators --format markdown -->\n",
        "<!-- end generated -->",
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("CONTRIBUTING.md");
    let text = fs::read_to_string(&path).unwrap();
    let a = text
        .find(start)
        .expect("CONTRIBUTING.md has the comparator markers")
        + start.len();
    let b = a + text[a..].find(end).expect("the end marker");
    let expected = generated(&["rules", "--comparators", "--format", "markdown"]);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        fs::write(&path, format!("{}{expected}{}", &text[..a], &text[b..])).unwrap();
    } else {
        assert!(
            text[a..b] == expected,
            "CONTRIBUTING.md's comparator table is stale: regenerate it with `UPDATE_DOCS=1 cargo test --test it readme::`"
        );
    }
}
