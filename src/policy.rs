//! The policy step, between `diff` and `report`: the project's covenant.toml applied to
//! what the diff found (docs/architecture.md, "Data flow").
//!
//! `diff` classifies every change with the rule tables (a `[severity]` override is
//! already in the severity the tables give: `Rules::set_overrides`). This step decides
//! what the report shows and what the exit code is:
//! - a change at severity `none` is dropped; when covenant.toml's `[severity]` made it
//!   `none` it is listed as ignored (so nothing is hidden unseen), when the table row is
//!   `none` by default (not interface) it is not;
//! - a change an `[[ignore]]` entry matches is listed as ignored, with the entry's reason;
//! - the server's declared version is checked against the changes kept (`diff::version`
//!   decides the finding), and that finding is itself subject to the ignores;
//! - the bump the kept changes owe, and whether one of them is at or above `fail_on`.
//!
//! `report/` renders the outcome and decides nothing.

use crate::config::Config;
use crate::diff::{self, Change};
use crate::rules::{Rules, Severity};

/// What a comparison comes to once covenant.toml is applied.
#[derive(Debug)]
pub struct Outcome {
    /// The changes kept (breaking, minor or patch), the version finding among them,
    /// sorted as reports show them.
    pub changes: Vec<Change>,
    /// Changes left out by an `[[ignore]]` entry or a `none` severity, with why.
    pub ignored: Vec<(Change, String)>,
    /// The bump the interface changes owe (the version findings do not count).
    pub bump: Severity,
    /// The least severe change that fails (`None`: never fail).
    pub fail_on: Option<Severity>,
    /// A kept change is at or above `fail_on`: exit 1.
    pub fails: bool,
    /// The config file's name, for "ignored by covenant.toml".
    pub config_name: String,
}

/// Apply `config` to `changes` (from `diff`), checking the server's declared versions
/// (`versions`: before, after) against the changes kept, and judge the result against
/// `fail_on`.
pub fn apply(
    rules: &Rules,
    config: &Config,
    changes: Vec<Change>,
    versions: (Option<&str>, Option<&str>),
    fail_on: Option<Severity>,
) -> Outcome {
    let reason = |c: &Change| {
        let i = config.ignore.iter().find(|i| i.matches(c))?;
        Some(format!("{}: {}", i.origin, i.reason))
    };
    let mut kept = Vec::new();
    let mut ignored = Vec::new();
    for c in changes {
        if c.severity == Severity::None {
            // Silenced: by covenant.toml (counted, so nothing hides unseen), or by
            // a table row that is `none` by default (not interface, not counted).
            if config.severity.contains_key(&c.code) {
                ignored.push((c, format!("{} [severity] sets it to none", config.name())));
            }
        } else if let Some(why) = reason(&c) {
            ignored.push((c, why));
        } else {
            kept.push(c);
        }
    }
    diff::sort(&mut kept);
    ignored.sort_by(|a, b| {
        (&a.0.subject, &a.0.path, &a.0.code).cmp(&(&b.0.subject, &b.0.path, &b.0.code))
    });
    // The version finding, judged on the changes kept; itself subject to ignores.
    if let Some(change) = diff::version::verify(rules, &kept, versions.0, versions.1) {
        match reason(&change) {
            Some(why) => ignored.push((change, why)),
            None if change.severity == Severity::None => {}
            None => {
                kept.push(change);
                diff::sort(&mut kept);
            }
        }
    }
    let fails = kept.iter().any(|c| self::fails(c.severity, fail_on));
    Outcome {
        bump: diff::version::required_bump(rules, &kept),
        changes: kept,
        ignored,
        fail_on,
        fails,
        config_name: config.name(),
    }
}

/// A change of `severity` fails the gate at `fail_on` (`None`: never).
pub fn fails(severity: Severity, fail_on: Option<Severity>) -> bool {
    fail_on.is_some_and(|level| severity <= level)
}
