//! Version discipline: the server's declared version against the changes.
//!
//! Three findings, all on `server → version`:
//! - `server.version.insufficient`: the version went up, by less than the changes need;
//! - `server.version.unchanged`: the interface changed and the version did not (clients
//!   such as VS Code refresh a cached tool list only when the version changes);
//! - `server.version.downgraded`: the version went down.
//!
//! Versions are read as Cargo reads semver (`^0.2.27` accepts 0.2.41, not 0.3.0;
//! `^0.0.60` is 0.0.60 only): in 0.y.z the minor is the major and the patch is the minor
//! (0.1 → 0.2 may break, 0.2.27 → 0.2.41 may add), in 0.0.z every bump may break; a
//! pre-release promises nothing, so a change within one (1.0.0-beta.1 → 1.0.0-beta.2, or
//! to its release) may break too.

use std::cmp::Ordering;

use serde_json::json;

use super::{fingerprint, Change, Classify, Path, Subject};
use crate::rules::{render_message, Comparator, Rules, Severity};

/// What a version change declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declared {
    /// The same version (also `v1.0` against `1.0.0`, or another build suffix).
    Same,
    /// A lower version.
    Down,
    /// A higher one, promising at most this kind of change.
    Up(Severity),
}

/// A semver version: the numeric core and the pre-release identifiers (build
/// metadata dropped: it does not order versions). A missing minor or patch is 0, a
/// leading `v` is allowed.
fn parse(v: &str) -> Option<([u64; 3], Vec<&str>)> {
    let v = v.trim();
    let v = v.strip_prefix('v').unwrap_or(v);
    let v = v.split('+').next()?;
    let (core, pre) = match v.split_once('-') {
        Some((core, pre)) => (core, pre.split('.').collect()),
        None => (v, Vec::new()),
    };
    let mut it = core.split('.');
    let mut n = [0u64; 3];
    for (i, slot) in n.iter_mut().enumerate() {
        match it.next() {
            Some(part) if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) => {
                *slot = part.parse().ok()?
            }
            None if i > 0 => {}
            _ => return None,
        }
    }
    if it.next().is_some() || pre.iter().any(|p: &&str| p.is_empty()) {
        return None;
    }
    Some((n, pre))
}

/// `v` is a semver version whose bumps say what changed: not a calendar version (a
/// first number of 1900 or more reads as a year).
pub fn is_semver_release_line(v: &str) -> bool {
    parse(v).is_some_and(|(n, _)| n[0] < 1900)
}

/// Semver precedence of two pre-release lists (an empty list is a release, the highest).
fn cmp_pre(a: &[&str], b: &[&str]) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    for (x, y) in a.iter().zip(b) {
        let o = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            (Ok(_), Err(_)) => Ordering::Less,
            (Err(_), Ok(_)) => Ordering::Greater,
            (Err(_), Err(_)) => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// What going from `before` to `after` declares; `None` when either is not semver, or is
/// a calendar version (`2025.7.1`: its numbers are a date, and a new month says nothing
/// about compatibility).
pub fn declared_bump(before: &str, after: &str) -> Option<Declared> {
    if !is_semver_release_line(before) || !is_semver_release_line(after) {
        return None;
    }
    let ((b, bpre), (a, apre)) = (parse(before)?, parse(after)?);
    Some(match a.cmp(&b).then_with(|| cmp_pre(&apre, &bpre)) {
        Ordering::Equal => Declared::Same,
        Ordering::Less => Declared::Down,
        // A new major (0.y: a new minor; 0.0.z: any bump), or the same core (within a
        // pre-release, or to its release): anything may change. In 0.y.z (y > 0) a new
        // patch is what a new minor is from 1.0.0 on: it may add.
        Ordering::Greater => Declared::Up(
            if a == b || a[0] != b[0] || a[0] == 0 && (a[1] != b[1] || a[1] == 0) {
                Severity::Breaking
            } else if a[1] != b[1] || a[0] == 0 {
                Severity::Minor
            } else {
                Severity::Patch
            },
        ),
    })
}

/// The bump the interface changes owe: the most severe change, not counting the
/// version findings themselves (the rows of the `semver` comparator).
pub fn required_bump(rules: &Rules, changes: &[Change]) -> Severity {
    changes
        .iter()
        .filter(|c| rules.rows.get(c.rule).map(|r| r.comparator) != Some(Comparator::Semver))
        .map(|c| c.severity)
        .min()
        .unwrap_or(Severity::None)
}

/// The version finding for `changes` (those the policy step keeps) between the two declared
/// versions, or `None` when the version is in order, absent (or blank), or not semver.
pub fn verify<'a>(
    classify: &dyn Classify,
    changes: &[Change],
    before: Option<&'a str>,
    after: Option<&'a str>,
) -> Option<Change> {
    let rules = classify.rules();
    // A blank version is no version: there is nothing to say of it here ("server version
    // did not change" of an empty string read as a double space).
    let present = |v: Option<&'a str>| v.filter(|v| !v.trim().is_empty());
    let (b, a) = (present(before)?, present(after)?);
    let required = required_bump(rules, changes);
    let declared = if a == b {
        Declared::Same
    } else {
        declared_bump(b, a)?
    };
    let breaking = required == Severity::Breaking;
    let event = match declared {
        Declared::Same if required == Severity::None => return None,
        Declared::Same if breaking => "unchanged_major",
        Declared::Same => "unchanged",
        Declared::Down if breaking => "downgraded_major",
        Declared::Down => "downgraded",
        Declared::Up(d) if breaking && d != Severity::Breaking => "insufficient_major",
        Declared::Up(d) if required == Severity::Minor && d > Severity::Minor => {
            "insufficient_minor"
        }
        Declared::Up(_) => return None,
    };
    let rule = rules.server_row(event)?;
    let row = &rules.rows[rule];
    let word = |s: Severity| match s {
        Severity::Breaking => "major",
        Severity::Minor => "minor",
        Severity::Patch => "patch",
        Severity::None => "none",
    };
    let declared_word = match declared {
        Declared::Up(d) => word(d),
        _ => "none",
    };
    let message = render_message(
        &row.message,
        &[
            ("before", b),
            ("after", a),
            ("declared", declared_word),
            ("required", word(required)),
        ],
    );
    let (vb, va) = (Some(json!(b)), Some(json!(a)));
    let severity = classify.severity(rule, None);
    Some(Change {
        rule,
        code: row.id.clone(),
        severity,
        subject: Subject::server(),
        path: Some(Path::name("version")),
        direction: None,
        message,
        fingerprint: fingerprint(row.fingerprint_id(), "server", Some("version"), &vb, &va),
        before: vb,
        after: va,
        certainty: row.certainty,
        witness: None,
        shared_with: None,
        witness_absent: (severity == Severity::Breaking)
            .then_some(super::witness::Absent::NotSchema),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Declared::*;
    use Severity::{Breaking, Minor, Patch};

    #[test]
    fn declared_bumps_read_like_cargo() {
        let d = declared_bump;
        assert_eq!(d("1.2.3", "2.0.0"), Some(Up(Breaking)));
        assert_eq!(d("1.2.3", "1.3.0"), Some(Up(Minor)));
        assert_eq!(d("1.2.3", "1.2.4"), Some(Up(Patch)));
        assert_eq!(d("0.1.0", "0.2.0"), Some(Up(Breaking)));
        assert_eq!(d("0.1.0", "0.1.1"), Some(Up(Minor)));
        assert_eq!(d("0.2.27", "0.2.41"), Some(Up(Minor)));
        assert_eq!(d("0.2.27", "1.0.0"), Some(Up(Breaking)));
        assert_eq!(d("0.2.27-rc.1", "0.2.27"), Some(Up(Breaking)));
        assert_eq!(d("0.0.1", "0.0.2"), Some(Up(Breaking)));
        assert_eq!(d("0.0.60", "0.1.0"), Some(Up(Breaking)));
        assert_eq!(d("0.2.41", "0.2.27"), Some(Down));
        assert_eq!(d("v1.0.0-beta.1", "1.1.0"), Some(Up(Minor)));
        assert_eq!(d("latest", "1.0.0"), None);
        assert_eq!(d("1.0.0", "1.0.0.1"), None);
        assert_eq!(d("1.x", "1.0.0"), None);
    }

    #[test]
    fn calendar_versions_declare_nothing() {
        assert_eq!(declared_bump("2025.7.1", "2025.12.18"), None);
        assert_eq!(declared_bump("2025.7.1", "2026.1.1"), None);
        assert_eq!(declared_bump("1.4.0", "2026.1.1"), None);
        assert_eq!(declared_bump("1899.1.0", "1899.2.0"), Some(Up(Minor)));
    }

    #[test]
    fn a_downgrade_is_a_downgrade() {
        let d = declared_bump;
        assert_eq!(d("2.0.0", "1.9.0"), Some(Down));
        assert_eq!(d("1.0.1", "1.0.0"), Some(Down));
        assert_eq!(d("1.0.0", "1.0.0-rc.1"), Some(Down));
        assert_eq!(d("1.0.0-beta.2", "1.0.0-beta.1"), Some(Down));
        assert_eq!(d("1.0.0-beta.11", "1.0.0-beta.2"), Some(Down));
    }

    #[test]
    fn same_versions_and_pre_releases() {
        let d = declared_bump;
        assert_eq!(d("1.0", "v1.0.0"), Some(Same));
        assert_eq!(d("1.0.0+a", "1.0.0+b"), Some(Same));
        // Within a pre-release, or to its release: anything may change.
        assert_eq!(d("1.0.0-beta.1", "1.0.0-beta.2"), Some(Up(Breaking)));
        assert_eq!(d("1.0.0-rc.1", "1.0.0"), Some(Up(Breaking)));
        assert_eq!(d("1.0.0-alpha", "1.0.0-alpha.1"), Some(Up(Breaking)));
        assert_eq!(d("1.0.0-1", "1.0.0-alpha"), Some(Up(Breaking)));
        // To a higher core, the core decides.
        assert_eq!(d("1.2.0", "1.3.0-beta.1"), Some(Up(Minor)));
    }
}
