//! Rule id lifecycle: a row's `aliases` are its former ids. covenant.toml may still name
//! a former id (with a deprecation warning); it then configures every row that took it
//! over. An alias that is still some row's id is a table error.

use mcp_covenant::config::Config;
use mcp_covenant::lint::LintRules;
use mcp_covenant::rules::{Rules, Severity, TABLES};

/// The embedded tables, with `tool.removed` having once been called `tool.deleted`.
fn renamed_tables(alias: &str) -> Rules {
    let tables: Vec<(&'static str, String)> = TABLES
        .iter()
        .map(|(source, text)| {
            let text = text.replacen(
                "id = \"tool.removed\"\n",
                &format!("id = \"tool.removed\"\naliases = [\"{alias}\"]\n"),
                1,
            );
            (*source, text)
        })
        .collect();
    let borrowed: Vec<(&'static str, &str)> =
        tables.iter().map(|(s, t)| (*s, t.as_str())).collect();
    let rules = Rules::from_tables(&borrowed);
    rules.unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_former_id_still_configures_the_row() {
    let rules = renamed_tables("tool.deleted");
    assert_eq!(rules.renamed("tool.deleted"), ["tool.removed"]);
    let lint = LintRules::embedded().unwrap();
    let config = Config::parse(
        "[severity]\n\"tool.deleted\" = \"minor\"\n",
        "covenant.toml",
        &rules,
        &lint,
    )
    .unwrap();
    let o = config
        .severity
        .get("tool.removed")
        .expect("applies to the new id");
    assert_eq!(o.get(None), Some(Severity::Minor));
    assert!(!config.severity.contains_key("tool.deleted"));
    // Without the alias, the old id is unknown, with a suggestion.
    let plain = Rules::embedded().unwrap();
    let err = Config::parse(
        "[severity]\n\"tool.deleted\" = \"minor\"\n",
        "covenant.toml",
        &plain,
        &lint,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("unknown rule id `tool.deleted`"),
        "{err}"
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
    let borrowed: Vec<(&'static str, &str)> =
        tables.iter().map(|(s, t)| (*s, t.as_str())).collect();
    let err = Rules::from_tables(&borrowed).unwrap_err();
    assert!(err.to_string().contains("former id"), "{err}");
}
