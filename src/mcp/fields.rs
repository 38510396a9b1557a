//! Where the protocol puts what a capture reads, for the session that asks and the
//! reader that keeps only what the session will read (`message`).

/// The lists we read: method, capability that gates it, result field.
pub(super) const LISTS: &[(&str, &str, &str)] = &[
    ("tools/list", "tools", "tools"),
    ("resources/list", "resources", "resources"),
    ("resources/templates/list", "resources", "resourceTemplates"),
    ("prompts/list", "prompts", "prompts"),
];

/// Where the 2026-07-28 schema puts the server's `Implementation`.
pub(super) const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";
