//! mcp-covenant: semver for an MCP server's interface.
//!
//! The binary is a thin shell over this library: `cli` parses the command line,
//! `lockfile` reads and writes snapshots, `rules` loads the classification tables,
//! `diff` compares two surfaces, and `report` renders the result. docs/architecture.md
//! describes the data flow and which module may use which.
//!
//! The library is not a public API: it exists for the binary, its tests and benches.
//! Modules the tests reach are `pub` but hidden from the docs; the rest are `pub(crate)`.

#[doc(hidden)]
pub mod canon;
#[doc(hidden)]
pub mod cli;
#[doc(hidden)]
pub mod config;
#[doc(hidden)]
pub mod diff;
pub(crate) mod error;
#[doc(hidden)]
pub mod escape;
pub(crate) mod git;
pub(crate) mod keywords;
#[doc(hidden)]
pub mod lint;
#[doc(hidden)]
pub mod lockfile;
#[doc(hidden)]
pub mod mcp;
#[doc(hidden)]
pub mod path;
#[doc(hidden)]
pub mod policy;
#[doc(hidden)]
pub mod redact;
pub(crate) mod reference;
#[doc(hidden)]
pub mod report;
#[doc(hidden)]
pub mod rules;
pub(crate) mod stdout;
