//! mcp-covenant: semver for an MCP server's interface.
//!
//! The binary is a thin shell over this library: `cli` parses the command line,
//! `lockfile` reads and writes snapshots, `rules` loads the classification tables,
//! `diff` compares two surfaces, and `report` renders the result.

pub mod canon;
pub mod cli;
pub mod config;
pub mod diff;
pub mod error;
pub mod git;
pub mod keywords;
pub mod lint;
pub mod lockfile;
pub mod mcp;
pub mod path;
pub mod redact;
pub mod report;
pub mod rules;
pub mod stdout;
