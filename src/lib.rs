//! mcp-covenant: semver for an MCP server's interface.
//!
//! The binary is a thin shell over this library: `cli` parses the command line,
//! `lockfile` reads and writes snapshots, `rules` loads the classification tables,
//! `diff` compares two surfaces, and `report` renders the result. docs/architecture.md
//! describes the data flow and which module may use which.
//!
//! The library is not a public API: it exists for the binary, its tests and benches.
//! Modules the tests reach are `pub` but hidden from the docs; the rest are `pub(crate)`.

// Reached by the tests and benches: `pub`, hidden from the docs.
#[doc(hidden)]
pub mod cli;
#[doc(hidden)]
pub mod config;
#[doc(hidden)]
pub mod diff;
#[doc(hidden)]
pub mod io;
#[doc(hidden)]
pub mod lint;
#[doc(hidden)]
pub mod lockfile;
#[doc(hidden)]
pub mod path;
#[doc(hidden)]
pub mod policy;
#[doc(hidden)]
pub mod registry;
#[doc(hidden)]
pub mod report;
#[doc(hidden)]
pub mod rules;

// The rest.
pub(crate) mod canon;
pub(crate) mod elements;
pub(crate) mod error;
pub(crate) mod escape;
pub(crate) mod git;
pub(crate) mod keywords;
pub(crate) mod mcp;
pub(crate) mod notice;
pub(crate) mod process;
pub(crate) mod process_env;
pub(crate) mod redact;
pub(crate) mod reference;
pub(crate) mod schema;
pub(crate) mod stdout;
pub(crate) mod subject;
#[cfg(feature = "http")]
pub(crate) mod tls;
