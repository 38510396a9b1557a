//! mcp-covenant with rule tables in which ids were renamed and retired, for the rule id
//! lifecycle tests (tests/it/rule_ids.rs). The embedded tables, plus:
//!
//! - `tool.deleted`: renamed `tool.removed`;
//! - `tool.title.edited`: split into `tool.title.added` and `tool.title.changed`;
//! - `tool.renamed`: retired, replaced by `tool.removed` and `tool.added`;
//! - `tool.icon.changed`: retired, replaced by nothing.

use std::process::ExitCode;

use mcp_covenant::rules::TABLES;

/// The embedded tables with the former ids above.
pub fn tables() -> Vec<(&'static str, String)> {
    TABLES
        .iter()
        .map(|(source, text)| {
            let mut text = text
                .replacen(
                    "id = \"tool.removed\"\n",
                    "id = \"tool.removed\"\naliases = [\"tool.deleted\"]\n",
                    1,
                )
                .replacen(
                    "id = \"tool.title.added\"\n",
                    "id = \"tool.title.added\"\naliases = [\"tool.title.edited\"]\n",
                    1,
                )
                .replacen(
                    "id = \"tool.title.changed\"\n",
                    "id = \"tool.title.changed\"\naliases = [\"tool.title.edited\"]\n",
                    1,
                );
            if source.ends_with("surface.toml") {
                text.push_str(concat!(
                    "\n[[retired]]\nid = \"tool.renamed\"\n",
                    "replaced_by = [\"tool.removed\", \"tool.added\"]\n",
                    "reason = \"a renamed tool is one removed and one added\"\n",
                    "\n[[retired]]\nid = \"tool.icon.changed\"\n",
                    "reason = \"icons are not part of the contract\"\n",
                ));
            }
            (*source, text)
        })
        .collect()
}

#[allow(dead_code)] // tests/it/rule_ids.rs includes this file for `tables`
fn main() -> ExitCode {
    let tables = tables();
    let borrowed: Vec<(&'static str, &str)> =
        tables.iter().map(|(s, t)| (*s, t.as_str())).collect();
    mcp_covenant::cli::main_with(&borrowed)
}
