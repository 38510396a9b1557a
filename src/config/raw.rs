//! covenant.toml's raw TOML shapes, as serde reads them (no key unknown): what the
//! other parts of `config` validate. It imports nothing of theirs but the model's
//! `fail_on` words.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::model::{FailOn, LintFailOn};

/// Where a span of the file is, as `file:line:column`.
pub(super) type At<'a> = &'a dyn Fn(Range<usize>) -> String;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServer {
    pub(super) name: Option<Spanned<String>>,
    pub(super) command: Option<Spanned<Vec<String>>>,
    pub(super) http: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) headers_from_env: BTreeMap<String, Spanned<String>>,
    pub(super) lockfile: Option<Spanned<String>>,
    /// `npm:NAME@VERSION` or `pypi:NAME==VERSION`, with its `args`, `env` (variable
    /// names), `with` (requirements installed beside it) and `allow_scripts`.
    pub(super) package: Option<Spanned<String>>,
    pub(super) args: Option<Vec<String>>,
    pub(super) env: Option<Spanned<Vec<String>>>,
    pub(super) with: Option<Vec<String>>,
    pub(super) allow_scripts: Option<bool>,
    /// pip may build a source distribution (off: wheels only).
    pub(super) allow_sdist: Option<bool>,
    /// The Python a PyPI package runs on (`3.12`).
    pub(super) python: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    /// `consumer`: what the model is told (descriptions, titles, instructions,
    /// annotations) is part of the contract; `provider` (the default): it is not.
    pub(super) profile: Option<Spanned<String>>,
    pub(super) fail_on: Option<FailOn>,
    pub(super) lint_fail_on: Option<LintFailOn>,
    #[serde(default)]
    pub(super) severity: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    pub(super) lint: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    pub(super) ignore: Vec<Spanned<RawIgnore>>,
    #[serde(default)]
    pub(super) server: Vec<Spanned<RawServer>>,
    /// One server, as a `[[server]]` entry's keys at the top level (no name; the
    /// lockfile defaults to mcp-covenant.lock).
    pub(super) command: Option<Spanned<Vec<String>>>,
    pub(super) http: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) headers_from_env: BTreeMap<String, Spanned<String>>,
    pub(super) lockfile: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIgnore {
    pub(super) subject: Option<Spanned<String>>,
    pub(super) path: Option<Spanned<String>>,
    pub(super) code: Option<Spanned<String>>,
    pub(super) fingerprint: Option<Spanned<String>>,
    pub(super) reason: Option<String>,
    pub(super) until: Option<Spanned<toml::Value>>,
}
