//! What a covenant.toml says, once read and validated.

use std::collections::HashMap;
use std::path::PathBuf;

use globset::GlobMatcher as Glob;
use serde::Deserialize;

use super::{Override, DEFAULT_FILE};
use crate::lint::Level;
use crate::rules::Severity;

/// One `[[server]]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    pub name: String,
    pub transport: Transport,
    /// Environment variables the server needs (`env`): each must be set when it is
    /// started; the values are never written anywhere.
    pub env: Vec<String>,
    pub lockfile: PathBuf,
    /// `covenant.toml:12:1`, for messages.
    pub origin: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Started over stdio, without a shell.
    Command(Vec<String>),
    /// A Streamable HTTP endpoint, with (header name, environment variable) pairs: the
    /// header's value is read from the variable when the server is captured, so no
    /// secret is ever written in covenant.toml.
    Http {
        url: String,
        headers_from_env: Vec<(String, String)>,
    },
    /// A published package (`package = "npm:NAME@VERSION"`), installed into the cache and
    /// started through its declared entry point with `args` and `env`.
    Package {
        package: crate::registry::Package,
        options: crate::registry::PackageOptions,
    },
}

/// One `[[ignore]]` entry: every pattern it gives must match (`policy::ignores` matches
/// it against a change).
#[derive(Clone, Debug)]
pub struct Ignore {
    pub(crate) subject: Option<Glob>,
    pub(crate) path: Option<Glob>,
    pub(crate) code: Option<Glob>,
    pub(crate) fingerprint: Option<String>,
    /// `fingerprint` is the 48-bit form of mcp-covenant 0.2 and before.
    pub legacy_fingerprint: bool,
    pub reason: String,
    /// `covenant.toml:12` — where the entry is, for --verbose.
    pub origin: String,
    /// Its place among the file's `ignore` entries (0: the first), which
    /// `check --prune-ignores` removes it by.
    pub index: usize,
    /// What the entry says (its patterns, fingerprint and `until`), to tell whether
    /// another covenant.toml has the same entry.
    pub(super) identity: String,
    /// The last day (UTC) the entry applies, as written (`YYYY-MM-DD`).
    pub until: Option<String>,
    /// `until` is past: the entry no longer applies (and `check` warns about it).
    pub expired: bool,
}

impl Ignore {
    /// Whether `other` is this entry as written (its patterns, fingerprint, `until` and
    /// reason): `check --prune-ignores` removes an entry only where it still is.
    pub fn says_the_same(&self, other: &Ignore) -> bool {
        self.identity == other.identity && self.reason == other.reason
    }
}

/// An `[[ignore]]` entry whose `code` is a retired rule id: it configures nothing (a
/// warning says so on every run), and `check --prune-ignores` removes it.
#[derive(Clone, Debug)]
pub struct RetiredIgnore {
    /// The retired id, as written.
    pub code: String,
    pub reason: String,
    pub origin: String,
    /// Its place among the file's `ignore` entries, as [`Ignore::index`].
    pub index: usize,
}

/// `check --fail-on` and `fail_on`: when a change fails the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    /// `major` too: the bump a breaking change owes.
    Breaking,
    Minor,
    Patch,
    /// Breaking changes that come without the bump they need (a major; in 0.y.z the
    /// minor, as Cargo reads it): an intended major release passes, minor and patch
    /// changes never fail (cargo-semver-checks' model).
    Version,
    Never,
}

impl FailOn {
    /// The words for it, in order (`major` is another word for `breaking`).
    pub const NAMES: [&'static str; 5] = ["breaking", "minor", "patch", "version", "never"];

    pub fn parse(word: &str) -> Option<FailOn> {
        Some(match word {
            "breaking" | "major" => FailOn::Breaking,
            "minor" => FailOn::Minor,
            "patch" => FailOn::Patch,
            "version" => FailOn::Version,
            "never" => FailOn::Never,
            _ => return None,
        })
    }

    /// Its word, as `--fail-on` takes it.
    pub fn name(self) -> &'static str {
        match self {
            FailOn::Breaking => "breaking",
            FailOn::Minor => "minor",
            FailOn::Patch => "patch",
            FailOn::Version => "version",
            FailOn::Never => "never",
        }
    }

    /// The least severe change that can fail (`None`: never fail). `version` fails on
    /// breaking changes only, and only on those its versions do not declare.
    pub fn level(self) -> Option<Severity> {
        match self {
            FailOn::Breaking | FailOn::Version => Some(Severity::Breaking),
            FailOn::Minor => Some(Severity::Minor),
            FailOn::Patch => Some(Severity::Patch),
            FailOn::Never => None,
        }
    }

    /// How much fails, for holding a pull request's covenant.toml to its base's: each
    /// level fails on everything the one below it fails on (`version` on a subset of
    /// what `breaking` fails on).
    pub fn strictness(self) -> u8 {
        match self {
            FailOn::Never => 0,
            FailOn::Version => 1,
            FailOn::Breaking => 2,
            FailOn::Minor => 3,
            FailOn::Patch => 4,
        }
    }
}

/// `lint --fail-on` and `lint_fail_on`: the least severe finding that fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LintFailOn {
    Error,
    Warning,
    Info,
    Never,
}

impl LintFailOn {
    /// The words for it, in order.
    pub const NAMES: [&'static str; 4] = ["error", "warning", "info", "never"];

    pub fn parse(word: &str) -> Option<LintFailOn> {
        Some(match word {
            "error" => LintFailOn::Error,
            "warning" => LintFailOn::Warning,
            "info" => LintFailOn::Info,
            "never" => LintFailOn::Never,
            _ => return None,
        })
    }

    /// The least severe failing finding (`None`: never fail).
    pub fn level(self) -> Option<Level> {
        match self {
            LintFailOn::Error => Some(Level::Error),
            LintFailOn::Warning => Some(Level::Warning),
            LintFailOn::Info => Some(Level::Info),
            LintFailOn::Never => None,
        }
    }
}

/// A level in covenant.toml, spelt as on the command line.
fn level<'de, D: serde::Deserializer<'de>, T>(
    d: D,
    parse: fn(&str) -> Option<T>,
    names: &[&str],
) -> std::result::Result<T, D::Error> {
    let word = String::deserialize(d)?;
    parse(&word).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "`{word}` is not a level; expected one of {}",
            names.join(", ")
        ))
    })
}

impl<'de> Deserialize<'de> for FailOn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        level(d, FailOn::parse, &FailOn::NAMES)
    }
}

impl<'de> Deserialize<'de> for LintFailOn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        level(d, LintFailOn::parse, &LintFailOn::NAMES)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file it came from (`None`: no config, the defaults).
    pub file: Option<PathBuf>,
    pub fail_on: Option<FailOn>,
    pub lint_fail_on: Option<LintFailOn>,
    pub severity: HashMap<String, Override>,
    pub lint: HashMap<String, Level>,
    pub ignore: Vec<Ignore>,
    /// The `[[ignore]]` entries on a retired rule id, which `ignore` leaves out.
    pub retired_ignores: Vec<RetiredIgnore>,
    pub servers: Vec<Server>,
    /// What the file says that still works but should change (a former rule id), one
    /// line each, without the `warning: ` the command line prints before it.
    pub warnings: Vec<String>,
}

impl Config {
    /// The `[[ignore]]` entries whose `until` day has passed.
    pub fn expired(&self) -> impl Iterator<Item = &Ignore> {
        self.ignore.iter().filter(|i| i.expired)
    }

    /// One warning line (without the `warning: ` the command line prints before it)
    /// per `[[ignore]]` entry that no longer applies, and per fingerprint in the old
    /// 48-bit form.
    pub fn ignore_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for i in self.expired() {
            out.push(format!(
                "{}: [[ignore]] expired on {} and no longer applies (its reason: {})",
                i.origin,
                i.until.as_deref().unwrap_or(""),
                i.reason.escape_debug()
            ));
        }
        for i in self.ignore.iter().filter(|i| i.legacy_fingerprint) {
            out.push(format!(
                "{}: [[ignore]] fingerprint `{}` is the old 48-bit form, which two different changes can share; replace it with the change's 32-digit fingerprint, which `check -v` shows",
                i.origin,
                i.fingerprint.as_deref().unwrap_or_default()
            ));
        }
        out
    }

    /// The name shown in reports ("covenant.toml").
    pub fn name(&self) -> String {
        self.file
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| DEFAULT_FILE.to_string())
    }
}
