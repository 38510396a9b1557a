//! The policy step, between `diff` and `report`: the project's covenant.toml applied to
//! what the diff found (docs/architecture.md, "Data flow").
//!
//! covenant.toml's `[severity]` entries (and its `profile`, which config turns into
//! entries) are applied here, by [`Policy`]: the rule tables give the defaults and never
//! hold a project's overrides. `diff` asks a `Policy` for each change's severity (a
//! breaking change gets a witness), through the `diff::Classify` it implements.
//!
//! [`apply`] then decides what the report shows and what the exit code is:
//! - a change at severity `none` is dropped; when covenant.toml's `[severity]` made it
//!   `none` it is listed as ignored (so nothing is hidden unseen), when the table row is
//!   `none` by default (not interface) it is not;
//! - a change an `[[ignore]]` entry matches is listed as ignored, with the entry's reason;
//! - the server's declared version is checked against the changes kept (`diff::version`
//!   decides the finding), and that finding is itself subject to the ignores;
//! - the bump the kept changes owe, and whether the gate fails: a change at or above
//!   `fail_on`'s level, or with `fail_on = "version"` a breaking change the declared
//!   versions do not bump for (a major; in 0.y.z the minor).
//!
//! `report/` renders the outcome and decides nothing.

use std::collections::HashMap;

use globset::GlobMatcher as Glob;

pub use crate::config::FailOn;
use crate::config::{Config, Ignore};
use crate::diff::{self, Change, Classify};
use crate::lint::{Level, Levels, LintRules};
use crate::rules::{Direction, Override, Rules, Severity};

/// The rule tables with covenant.toml's `[severity]` applied: a change's severity is
/// the entry for its rule id in its direction, else the table's default.
pub struct Policy<'a> {
    rules: &'a Rules,
    overrides: &'a HashMap<String, Override>,
}

impl<'a> Policy<'a> {
    /// `rules` with `overrides` (a config's `severity`) applied.
    pub fn new(rules: &'a Rules, overrides: &'a HashMap<String, Override>) -> Self {
        Policy { rules, overrides }
    }
}

/// The lint table with covenant.toml's `[lint]` levels applied: a finding's level is
/// the entry for its rule id, else the table's default.
pub struct LintPolicy<'a> {
    rules: &'a LintRules,
    overrides: &'a HashMap<String, Level>,
}

impl<'a> LintPolicy<'a> {
    /// `rules` with `overrides` (a config's `lint`) applied.
    pub fn new(rules: &'a LintRules, overrides: &'a HashMap<String, Level>) -> Self {
        LintPolicy { rules, overrides }
    }
}

impl Levels for LintPolicy<'_> {
    fn rules(&self) -> &LintRules {
        self.rules
    }

    fn level(&self, rule: usize) -> Level {
        let r = &self.rules.rows[rule];
        self.overrides.get(&r.id).copied().unwrap_or(r.level)
    }
}

impl Classify for Policy<'_> {
    fn rules(&self) -> &Rules {
        self.rules
    }

    fn severity(&self, rule: usize, direction: Option<Direction>) -> Severity {
        let id = &self.rules.rows[rule].id;
        match self.overrides.get(id).and_then(|o| o.get(direction)) {
            Some(s) => s,
            None => self.rules.severity(rule, direction),
        }
    }
}

/// Whether the `[[ignore]]` entry `i` sets `c` aside: it has not expired, and every
/// pattern it gives matches (its fingerprint in the current form, or the 48-bit one).
pub fn ignores(i: &Ignore, c: &Change) -> bool {
    if i.expired {
        return false;
    }
    let glob = |g: &Option<Glob>, s: &str| g.as_ref().is_none_or(|g| g.is_match(s));
    glob(&i.subject, &c.subject.to_string())
        && glob(
            &i.path,
            &c.path.as_ref().map(|p| p.to_string()).unwrap_or_default(),
        )
        && glob(&i.code, &c.code)
        && i.fingerprint
            .as_ref()
            .is_none_or(|f| match i.legacy_fingerprint {
                false => *f == c.fingerprint,
                true => *f == legacy_fingerprint(c),
            })
}

/// The 48-bit FNV-1a fingerprint of mcp-covenant 0.2 and before, still accepted in
/// `[[ignore]]` entries (with a warning naming the new one).
pub fn legacy_fingerprint(c: &Change) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    };
    let (subject, path) = (
        c.subject.to_string(),
        c.path.as_ref().map(diff::Path::to_string),
    );
    for part in diff::fingerprint_parts(&c.code, &subject, path.as_deref(), &c.before, &c.after) {
        feed(part.as_bytes());
    }
    format!("{:012x}", h >> 16)
}

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
    /// When a change fails the gate.
    pub fail_on: FailOn,
    /// A kept change fails at `fail_on`: exit 1.
    pub fails: bool,
    /// The versions declare the major bump breaking changes need (`fail_on = "version"`
    /// passes them); `None` when the versions are absent or not semver.
    pub major_bump: Option<bool>,
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
    fail_on: FailOn,
) -> Outcome {
    let reason = |c: &Change| {
        let i = config.ignore.iter().find(|i| ignores(i, c))?;
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
    let policy = Policy::new(rules, &config.severity);
    if let Some(change) = diff::version::verify(&policy, &kept, versions.0, versions.1) {
        match reason(&change) {
            Some(why) => ignored.push((change, why)),
            None if change.severity == Severity::None => {}
            None => {
                kept.push(change);
                diff::sort(&mut kept);
            }
        }
    }
    let bump = diff::version::required_bump(rules, &kept);
    let major_bump = match versions {
        (Some(b), Some(a)) => diff::version::declared_bump(b, a)
            .map(|d| d == diff::version::Declared::Up(Severity::Breaking)),
        _ => None,
    };
    // `version`: the interface's breaking changes (not the version finding, which says
    // the same again) fail unless the versions declare a major bump; absent or
    // unreadable versions declare none.
    let fails = match fail_on {
        FailOn::Version => bump == Severity::Breaking && major_bump != Some(true),
        _ => kept
            .iter()
            .any(|c| self::fails(c.severity, fail_on.level())),
    };
    Outcome {
        bump,
        changes: kept,
        ignored,
        fail_on,
        fails,
        major_bump,
        config_name: config.name(),
    }
}

/// A change of `severity` reaches the level `fail_on` (`None`: never).
pub fn fails(severity: Severity, fail_on: Option<Severity>) -> bool {
    fail_on.is_some_and(|level| severity <= level)
}

/// `change` is one the gate fails on (`fails`: the outcome's verdict): with `fail_on =
/// "version"`, when the gate fails, its breaking changes (the version finding among
/// them); else a change at the level.
pub fn failing(fail_on: FailOn, fails: bool, change: &Change) -> bool {
    match fail_on {
        FailOn::Version => fails && change.severity == Severity::Breaking,
        _ => self::fails(change.severity, fail_on.level()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::LintRules;
    use crate::lockfile::Lockfile;

    const BEFORE: &str = include_str!("../golden/config-severity-overrides/before.lock");
    const AFTER: &str = include_str!("../golden/config-severity-overrides/after.lock");
    const CONFIG: &str = include_str!("../golden/config-severity-overrides/covenant.toml");

    /// covenant.toml's `[severity]` reaches the changes through the policy, and the
    /// rule tables are the same before and after: they never hold a project's entries.
    #[test]
    fn overrides_apply_without_touching_the_rules() {
        let rules = Rules::embedded().unwrap();
        let pristine = format!("{rules:?}");
        let config = Config::parse(
            CONFIG,
            "covenant.toml",
            &rules,
            &LintRules::embedded().unwrap(),
        )
        .unwrap();
        let (a, b) = (
            Lockfile::parse(BEFORE.as_bytes(), "a").unwrap(),
            Lockfile::parse(AFTER.as_bytes(), "b").unwrap(),
        );
        let policy = Policy::new(&rules, &config.severity);
        let changes = diff::diff(&policy, &a.surface, &b.surface);
        let defaults = diff::diff(&rules, &a.surface, &b.surface);
        let of = |cs: &[Change], code: &str, d: Option<Direction>| {
            cs.iter()
                .find(|c| c.code == code && c.direction == d)
                .map(|c| c.severity)
        };
        let added = "tool.added";
        assert_eq!(of(&changes, added, None), Some(Severity::Breaking));
        assert_eq!(of(&defaults, added, None), Some(Severity::Minor));
        let described = "tool.description.changed";
        assert_eq!(of(&changes, described, None), Some(Severity::None));
        assert_eq!(of(&defaults, described, None), Some(Severity::Patch));
        let outcome = apply(&rules, &config, changes, (None, None), FailOn::Breaking);
        assert!(outcome.fails);
        assert!(outcome.ignored.iter().any(|(c, _)| c.code == described));
        assert_eq!(format!("{rules:?}"), pristine);
    }

    /// covenant.toml's `[lint]` levels reach the findings through `LintPolicy`, and the
    /// lint table is the same before and after.
    #[test]
    fn lint_levels_apply_without_touching_the_lint_table() {
        let rules = Rules::embedded().unwrap();
        let lint_rules = LintRules::embedded().unwrap();
        let pristine = format!("{lint_rules:?}");
        let config = Config::parse(
            include_str!("../golden/lint-config/covenant.toml"),
            "covenant.toml",
            &rules,
            &lint_rules,
        )
        .unwrap();
        let lock = Lockfile::parse_lenient(
            include_bytes!("../golden/lint-config/lint.lock"),
            "lint.lock",
        )
        .unwrap();
        let code = "tool.missing_description";
        let with = crate::lint::lint_lockfile(&LintPolicy::new(&lint_rules, &config.lint), &lock);
        let without = crate::lint::lint_lockfile(&lint_rules, &lock);
        assert!(without.iter().any(|f| f.code == code));
        assert!(!with.iter().any(|f| f.code == code));
        assert!(with.len() < without.len());
        assert_eq!(format!("{lint_rules:?}"), pristine);
    }
}
