//! `covenant.toml`: the project's overlay on the embedded rule tables, and its servers.
//! The reference is `CONFIG_REFERENCE` (src/reference.rs): `mcp-covenant help config`
//! prints it and docs/config.md is generated from it; docs/schemas/covenant.schema.json
//! is its JSON Schema.
//!
//! Validation is strict: an unknown key, rule id, severity or glob is exit 2 with
//! `file:line:column` and, for a misspelt id, a suggestion.
//!
//! - `model`: what a covenant.toml says once read (`Config`, `Server`, `FailOn`, ...);
//! - `discovery`: which covenant.toml applies (the nearest, up to the repository's root);
//! - `load`: reading and parsing the file (the raw TOML shapes, `file:line:column`);
//! - `validate`: the `[severity]`, `profile` and `[lint]` tables, rule ids and suggestions;
//! - `ignore`: `[[ignore]]` entries (patterns, fingerprints, `until` days);
//! - `servers`: the one top-level server or the `[[server]]` entries, package servers;
//! - `held`: a pull request's covenant.toml held to its base revision's.

mod discovery;
mod held;
mod ignore;
mod load;
mod model;
mod raw;
mod servers;
mod validate;

pub use self::discovery::find;
pub use self::ignore::{parse_date, today};
pub use self::load::read_text;
pub use self::model::{Config, FailOn, Ignore, LintFailOn, RetiredIgnore, Server, Transport};
pub use self::servers::TOP_LEVEL_SERVER;
pub use self::validate::suggest;

/// A `[severity]` entry: defined with the rule tables it overrides.
pub use crate::rules::Override;

pub const DEFAULT_FILE: &str = "covenant.toml";

/// The lockfile when neither the command line nor covenant.toml names one.
pub const DEFAULT_LOCKFILE: &str = "mcp-covenant.lock";
