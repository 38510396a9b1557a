//! `[[ignore]]` entries: a change set aside with a reason. Every pattern an entry gives
//! must match; an entry that narrows nothing is refused; a former rule id still works
//! (a renamed one matches the ids that took it over, a retired one nothing); `until` is
//! the last day it applies.

use std::ops::Range;

use globset::GlobMatcher as Glob;
use toml::Spanned;

use super::model::{Ignore, RetiredIgnore};
use super::raw::{At, RawIgnore};
use super::validate::{any_of, unknown_id};
use crate::error::{Error, Result};
use crate::rules::{Former, Rules};

/// Subjects no narrowing `subject` pattern matches all of: real ones (never empty; the
/// shortest are the server's and an element's with an empty name), so `?*` is refused
/// like `*`.
const SUBJECTS: &[&str] = &[
    "server",
    "tool:",
    "prompt:",
    "tool:a",
    "prompt:Z.9",
    "resource:file:///a b/c?d#e",
    "template:x://{y}/[z]",
    "tool:\\*?",
    "tool:é\u{202e}",
];

/// Paths no narrowing `path` pattern matches all of.
const PATHS: &[&str] = &[
    "",
    "inputSchema",
    "outputSchema.properties[\"a.b\"].items[0]",
    "arguments.x",
    "_meta.ui.visibility",
    "a/b\\c*?[",
];

/// What an `[[ignore]]` entry configures.
pub(super) enum Entry {
    Live(Box<Ignore>),
    /// Its code is a retired rule id: nothing.
    Retired(RetiredIgnore),
}

/// One `[[ignore]]` entry, validated. Warnings about former ids go to `warnings`.
pub(super) fn entry(
    entry: &Spanned<RawIgnore>,
    rules: &Rules,
    change_ids: &[&str],
    at: At<'_>,
    today: i64,
    index: usize,
    warnings: &mut Vec<String>,
) -> Result<Entry> {
    let origin_line = at(entry.span());
    let e = entry.get_ref();
    let reason = match &e.reason {
        Some(r) if !r.trim().is_empty() => r.clone(),
        _ => {
            return Err(Error::new(format!(
                "{origin_line}: this [[ignore]] has no `reason`; say why the change is acceptable"
            )))
        }
    };
    // A pattern that matches whatever it is given (`*`, `**`, `{*,x}`, every rule id)
    // narrows nothing: an entry of only such patterns is refused.
    let narrows = |p: &Option<Spanned<String>>, probes: &[&str]| -> Result<bool> {
        Ok(match glob(p, at)? {
            None => false,
            Some(g) => !probes.iter().all(|x| g.is_match(x)),
        })
    };
    if !narrows(&e.subject, SUBJECTS)?
        && !narrows(&e.path, PATHS)?
        && !narrows(&e.code, change_ids)?
        && e.fingerprint.is_none()
    {
        return Err(Error::new(format!(
            "{origin_line}: this [[ignore]] matches everything (a pattern like `*` narrows nothing); give a subject, path, code or fingerprint that names what is acceptable"
        )));
    }
    let Some(code) = code(e, rules, change_ids, at, warnings)? else {
        // Its `until` is still checked.
        until(e, at)?;
        return Ok(Entry::Retired(RetiredIgnore {
            code: e
                .code
                .as_ref()
                .map(|c| c.get_ref().clone())
                .unwrap_or_default(),
            reason,
            origin: origin_line,
            index,
        }));
    };
    let until = until(e, at)?;
    Ok(Entry::Live(Box::new(Ignore {
        subject: glob(&e.subject, at)?,
        path: glob(&e.path, at)?,
        code,
        legacy_fingerprint: match &e.fingerprint {
            Some(f) => fingerprint_form(f.get_ref(), &at(f.span()))?,
            None => false,
        },
        fingerprint: e.fingerprint.as_ref().map(|f| f.get_ref().clone()),
        identity: format!(
            "{:?}",
            (
                e.subject.as_ref().map(|x| x.get_ref()),
                e.path.as_ref().map(|x| x.get_ref()),
                e.code.as_ref().map(|x| x.get_ref()),
                e.fingerprint.as_ref().map(|x| x.get_ref()),
                e.until.as_ref().map(|x| format!("{:?}", x.get_ref())),
            )
        ),
        reason,
        origin: origin_line,
        index,
        expired: until.as_ref().is_some_and(|(_, day)| today > *day),
        until: until.map(|(text, _)| text),
    })))
}

/// A pattern compiled, or where it is and why it is not a glob.
fn glob(p: &Option<Spanned<String>>, at: At<'_>) -> Result<Option<Glob>> {
    match p {
        None => Ok(None),
        Some(s) => globset::Glob::new(s.get_ref())
            .map(|g| Some(g.compile_matcher()))
            .map_err(|err| {
                Error::new(format!(
                    "{}: invalid glob `{}`: {}",
                    at(s.span()),
                    s.get_ref(),
                    err.kind()
                ))
            }),
    }
}

/// The entry's `code` glob, matching current ids. An exact former id still works: a
/// renamed one matches the ids that took it over (`Some(Some(..))`), a retired one
/// nothing (`None`: the entry is dropped), each with a warning.
fn code(
    e: &RawIgnore,
    rules: &Rules,
    change_ids: &[&str],
    at: At<'_>,
    warnings: &mut Vec<String>,
) -> Result<Option<Option<Glob>>> {
    let code = glob(&e.code, at)?;
    let (Some(g), Some(pattern)) = (&code, &e.code) else {
        return Ok(Some(code));
    };
    if change_ids.iter().any(|id| g.is_match(id)) {
        return Ok(Some(code));
    }
    let at = at(pattern.span());
    match &rules.former(pattern.get_ref()) {
        Some(f @ Former::Renamed(new)) => {
            warnings.push(format!("{at}: {}", f.describe(pattern.get_ref())));
            Ok(Some(Some(any_of(new)?)))
        }
        Some(f @ Former::Retired(_)) => {
            warnings.push(format!(
                "{at}: {}; this [[ignore]] no longer applies",
                f.describe(pattern.get_ref())
            ));
            Ok(None)
        }
        None => {
            let aliases = rules.rows.iter().flat_map(|r| &r.aliases);
            let retired_ids = rules.retired.iter().map(|r| &r.id);
            if let Some((old, f)) = aliases
                .chain(retired_ids)
                .filter(|old| g.is_match(old))
                .find_map(|old| Some((old, rules.former(old)?)))
            {
                return Err(Error::new(format!(
                    "{at}: code `{}` matches no current rule id, only former ones ({}); a code glob matches current ids",
                    pattern.get_ref(),
                    f.describe(old)
                )));
            }
            Err(unknown_id(&at, pattern.get_ref(), change_ids, None))
        }
    }
}

/// `until`: a quoted "2026-12-31" or a bare TOML date 2026-12-31, as written and as a
/// day.
fn until(e: &RawIgnore, at: At<'_>) -> Result<Option<(String, i64)>> {
    let Some(v) = &e.until else {
        return Ok(None);
    };
    let text = match v.get_ref() {
        toml::Value::String(s) => s.clone(),
        toml::Value::Datetime(d) => d.to_string(),
        other => format!("(a {})", other.type_str()),
    };
    let day = parse_date(&text).ok_or_else(|| {
        Error::new(format!(
            "{}: invalid `until` date {:?}; expected a day as \"YYYY-MM-DD\"",
            at(v.span()),
            text
        ))
    })?;
    Ok(Some((text, day)))
}

/// Whether an `[[ignore]]` fingerprint is the old 48-bit form (12 hex digits); an
/// error unless it is that or the current 32 hex digits.
fn fingerprint_form(f: &str, at: &str) -> Result<bool> {
    let hex = !f.is_empty()
        && f.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    match (hex, f.len()) {
        (true, 32) => Ok(false),
        (true, 12) => Ok(true),
        _ => Err(Error::new(format!(
            "{at}: fingerprint `{}` is not one mcp-covenant reports: 32 lower-case hex digits, as `check -v` and `check --format json` show it",
            f.escape_debug()
        ))),
    }
}

/// Today as days since 1970-01-01, UTC.
pub fn today() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    (secs / 86_400) as i64
}

/// `YYYY-MM-DD` (a real day of the Gregorian calendar) as days since 1970-01-01.
///
/// Twenty lines instead of a date crate: a day is all `until` needs, no time zone (the
/// day ends at midnight UTC) and no formatting.
pub fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: Range<usize>| -> Option<i64> {
        let part = &s[r];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || d < 1 || d > month_days[(m - 1) as usize] {
        return None;
    }
    // Days from civil (Howard Hinnant): years counted from March, so the leap day is
    // the last day of the year.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_days_since_the_epoch() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("1970-01-02"), Some(1));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        assert_eq!(parse_date("2000-03-01"), Some(11_017));
        assert_eq!(parse_date("2024-02-29"), Some(19_782));
        assert_eq!(parse_date("2024-03-01"), Some(19_783));
        assert_eq!(
            parse_date("2000-02-29").map(|d| d + 1),
            parse_date("2000-03-01")
        );
        // Every day of 400 years (a whole Gregorian cycle) follows the one before.
        let mut prev = parse_date("1999-12-31").unwrap();
        for y in 2000..2400 {
            for m in 1..=12 {
                for d in 1..=31 {
                    if let Some(day) = parse_date(&format!("{y:04}-{m:02}-{d:02}")) {
                        assert_eq!(day, prev + 1, "{y}-{m}-{d}");
                        prev = day;
                    }
                }
            }
        }
        assert_eq!(prev - parse_date("1999-12-31").unwrap(), 146_097);
        for bad in [
            "2023-02-29",
            "2100-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-04-31",
            "2026-1-01",
            "26-01-01",
            "2026/01/01",
            "2026-01-01T00:00:00",
            "+026-01-01",
            "２０２６-01-01",
            "",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert!(today() > parse_date("2024-01-01").unwrap());
    }

    /// "Matches everything" is judged against subjects a change can have: none is
    /// empty, so `?*` (and `{?*,x}`) narrows nothing and is refused like `*`.
    #[test]
    fn a_subject_pattern_that_matches_every_real_subject_is_refused() {
        let rules = crate::rules::Rules::embedded().unwrap();
        let lint = crate::lint::LintRules::embedded().unwrap();
        for subject in ["*", "?*", "{?*,x}", "*?"] {
            let text = format!("[[ignore]]\nsubject = \"{subject}\"\nreason = \"x\"\n");
            let e = crate::config::Config::parse(&text, "covenant.toml", &rules, &lint)
                .err()
                .unwrap_or_else(|| panic!("{subject}: accepted"))
                .to_string();
            assert!(e.contains("matches everything"), "{subject}: {e}");
        }
        // An empty-named tool is a real subject: `??????*` narrows.
        let text = "[[ignore]]\nsubject = \"??????*\"\nreason = \"x\"\n";
        assert!(crate::config::Config::parse(text, "covenant.toml", &rules, &lint).is_ok());
    }
}
