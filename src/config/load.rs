//! Reading covenant.toml: the file (UTF-8, bounded), parsed into its raw TOML shapes
//! (`raw`), and every place in it as `file:line:column`.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use super::raw::{RawConfig, RawIgnore};
use super::{ignore, servers, today, validate, Config};
use crate::error::{Error, Result};
use crate::lint::LintRules;
use crate::rules::Rules;

/// The most a covenant.toml may hold (a real one is a few KiB): a 16 MB file of glob
/// alternations took half a minute and nearly a GiB to compile.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;
/// The longest `[[ignore]]` pattern (`subject`, `path`, `code`), and all of them together.
const MAX_GLOB: usize = 1024;
const MAX_GLOBS_TOTAL: usize = 64 * 1024;

/// Every `[[ignore]]` pattern is short, and all together are too, before any is compiled.
fn globs_bounded(
    entries: &[Spanned<RawIgnore>],
    at: &dyn Fn(Range<usize>) -> String,
) -> Result<()> {
    let mut total = 0;
    for e in entries {
        let e = e.get_ref();
        for p in [&e.subject, &e.path, &e.code].into_iter().flatten() {
            let len = p.get_ref().len();
            if len > MAX_GLOB {
                return Err(Error::new(format!(
                    "{}: this pattern is {len} bytes, more than the {MAX_GLOB} an [[ignore]] pattern may have; name the changes with shorter patterns or by fingerprint",
                    at(p.span())
                )));
            }
            total += len;
            if total > MAX_GLOBS_TOTAL {
                return Err(Error::new(format!(
                    "{}: the [[ignore]] patterns together are more than {MAX_GLOBS_TOTAL} bytes; use fewer entries, or fingerprints",
                    at(p.span())
                )));
            }
        }
    }
    Ok(())
}

/// The text of the covenant.toml at `path`: a regular file, bounded, UTF-8.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = crate::io::read_input(path, "config")?;
    String::from_utf8(bytes).map_err(|_| {
        Error::new(format!(
            "cannot read config {}: it is not UTF-8",
            path.display()
        ))
    })
}

impl Config {
    pub fn load(path: &Path, rules: &Rules, lint: &LintRules) -> Result<Config> {
        let text = read_text(path)?;
        Config::parse(&text, &path.display().to_string(), rules, lint).map(|mut c| {
            // A [[server]]'s lockfile is relative to the config file.
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                for s in &mut c.servers {
                    if s.lockfile.is_relative() {
                        s.lockfile = dir.join(&s.lockfile);
                    }
                }
            }
            c.file = Some(path.to_path_buf());
            c
        })
    }

    pub fn parse(text: &str, origin: &str, rules: &Rules, lint: &LintRules) -> Result<Config> {
        Config::parse_on(text, origin, rules, lint, today())
    }

    /// [`Config::parse`] as if today were `today` (days since 1970-01-01, UTC).
    pub fn parse_on(
        text: &str,
        origin: &str,
        rules: &Rules,
        lint: &LintRules,
        today: i64,
    ) -> Result<Config> {
        let at = |span: Range<usize>| position(text, origin, span.start);
        if text.len() > MAX_CONFIG_BYTES {
            return Err(Error::new(format!(
                "{origin}: the config is {} bytes, more than the {MAX_CONFIG_BYTES} a covenant.toml may have; keep [[ignore]] entries few and their patterns short",
                text.len()
            )));
        }
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let place = e.span().map(&at).unwrap_or_else(|| origin.to_string());
            let hint = e
                .span()
                .and_then(|span| fell_into_a_table(text, span.start, e.message()))
                .unwrap_or_default();
            Error::new(format!("{place}: {}{hint}", e.message().trim()))
        })?;
        let mut config = Config {
            fail_on: raw.fail_on,
            lint_fail_on: raw.lint_fail_on,
            ..Config::default()
        };
        let change_ids: Vec<&str> = rules.rows.iter().map(|r| r.id.as_str()).collect();
        config.severity =
            validate::severity(&raw.severity, rules, lint, &at, &mut config.warnings)?;
        if let Some(profile) = &raw.profile {
            validate::profile(profile, rules, &at, &mut config.severity)?;
        }
        config.lint = validate::lint_levels(&raw.lint, lint, &change_ids, &at)?;
        globs_bounded(&raw.ignore, &at)?;
        for (index, entry) in raw.ignore.iter().enumerate() {
            let warnings = &mut config.warnings;
            match ignore::entry(entry, rules, &change_ids, &at, today, index, warnings)? {
                ignore::Entry::Live(i) => config.ignore.push(*i),
                ignore::Entry::Retired(r) => config.retired_ignores.push(r),
            }
        }
        config.servers = servers::resolve(&raw, &at)?;
        Ok(config)
    }
}

/// `file:line:column` of byte `offset` in `text`.
fn position(text: &str, origin: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    format!("{origin}:{line}:{column}")
}

/// For "unknown field `K`" where K is a top-level key written below a table header
/// (e.g. an uncommented `fail_on` under the last [[ignore]]): which table it fell into,
/// and that it belongs above the file's first table.
fn fell_into_a_table(text: &str, at: usize, message: &str) -> Option<String> {
    const TOP_LEVEL: [&str; 8] = [
        "profile",
        "fail_on",
        "lint_fail_on",
        "command",
        "http",
        "headers_from_env",
        "lockfile",
        "env",
    ];
    let key = message
        .trim()
        .strip_prefix("unknown field `")?
        .split('`')
        .next()?;
    if !TOP_LEVEL.contains(&key) {
        return None;
    }
    let header = text
        .get(..at)?
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))?;
    let header = header.split('#').next().unwrap_or(header).trim();
    Some(format!(
        " (`{key}` is a top-level key, but here it is inside the `{}` table above it: move it above the file's first table)",
        crate::escape::truncated(header, 60)
    ))
}
