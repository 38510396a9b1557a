//! The integration tests: one test binary (`cargo test --test it`), one module per area,
//! as ripgrep and cargo lay theirs out. One binary links the crate and its
//! dev-dependencies once instead of once per file, and its tests run in one process, in
//! parallel: everything a test creates is its own (`common::tmpdir` puts the module's
//! name in every directory, and refuses one directory to two tests).
//!
//! Run one area with `cargo test --test it MODULE::` (e.g. `cargo test --test it
//! action::`). The golden suite is a binary of its own (tests/golden.rs, its own harness).

mod common;

mod action;
mod adversarial_four;
mod architecture;
mod capture_determinism;
#[cfg(feature = "http")]
mod capture_http;
mod capture_lifecycle;
mod capture_stdio;
mod cli;
mod corpus;
mod diff_driver;
mod dist;
mod fail_on_version;
mod fingerprints;
#[cfg(feature = "http")]
mod from_client;
mod git_baseline;
mod hostile;
mod ignore_until;
mod init;
mod install_action;
mod jsoncompat;
mod memory;
mod pre_commit;
mod properties;
mod published_schemas;
mod reader_differential;
mod readme;
mod real_servers;
mod registry;
mod release_workflow;
mod rule_examples;
mod rule_ids;
mod sarif;
mod servers;
mod static_build;
mod up_to_date;
mod upgrade;
mod witness;
