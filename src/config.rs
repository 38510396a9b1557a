//! `covenant.toml`: the project's overlay on the embedded rule tables (DESIGN §5).
//!
//! ```toml
//! fail_on = "breaking"
//! [severity]
//! "tool.description.changed" = "none"               # silence
//! "schema.enum.value.added" = { output = "minor" }  # per direction
//! [lint]
//! "tool.description.too_long" = "info"
//! [[ignore]]
//! subject = "tool:internal_*"
//! path = "inputSchema.properties.debug*"
//! code = "schema.*"
//! reason = "internal tools are not part of the contract"
//! ```
//!
//! Validation is strict: an unknown key, rule id, severity or glob is exit 2 with
//! `file:line:column` and, for a misspelt id, a suggestion.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::glob::Glob;
use serde::Deserialize;
use toml::Spanned;

use crate::diff::Change;
use crate::error::{Error, Result};
use crate::lint::{Level, LintRules};
use crate::rules::{Direction, Rules, Severity};

pub const DEFAULT_FILE: &str = "covenant.toml";

/// A severity override for one rule id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Override {
    /// For every direction (and for direction-less surface changes).
    pub all: Option<Severity>,
    pub input: Option<Severity>,
    pub output: Option<Severity>,
}

impl Override {
    pub fn get(&self, direction: Option<Direction>) -> Option<Severity> {
        let specific = match direction {
            Some(Direction::Input) => self.input,
            Some(Direction::Output) => self.output,
            None => None,
        };
        specific.or(self.all)
    }
}

/// One `[[ignore]]` entry: every pattern it gives must match.
#[derive(Clone, Debug)]
pub struct Ignore {
    subject: Option<Glob>,
    path: Option<Glob>,
    code: Option<Glob>,
    fingerprint: Option<String>,
    pub reason: String,
    /// `covenant.toml:12` — where the entry is, for --verbose.
    pub origin: String,
}

impl Ignore {
    pub fn matches(&self, c: &Change) -> bool {
        let glob = |g: &Option<Glob>, s: &str| g.as_ref().is_none_or(|g| g.is_match(s));
        glob(&self.subject, &c.subject)
            && glob(&self.path, c.path.as_deref().unwrap_or(""))
            && glob(&self.code, &c.code)
            && self
                .fingerprint
                .as_ref()
                .is_none_or(|f| *f == c.fingerprint)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file it came from (`None`: no config, the defaults).
    pub file: Option<PathBuf>,
    pub fail_on: Option<String>,
    pub lint_fail_on: Option<String>,
    pub severity: HashMap<String, Override>,
    pub lint: HashMap<String, Level>,
    pub ignore: Vec<Ignore>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    fail_on: Option<Spanned<String>>,
    lint_fail_on: Option<Spanned<String>>,
    #[serde(default)]
    severity: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    lint: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    ignore: Vec<Spanned<RawIgnore>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIgnore {
    subject: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    code: Option<Spanned<String>>,
    fingerprint: Option<Spanned<String>>,
    reason: Option<String>,
}

impl Config {
    /// `explicit` (from --config), else `./covenant.toml` when present, else defaults.
    pub fn discover(explicit: Option<&Path>, rules: &Rules, lint: &LintRules) -> Result<Config> {
        match explicit {
            Some(p) => Config::load(p, rules, lint),
            None if Path::new(DEFAULT_FILE).is_file() => {
                Config::load(Path::new(DEFAULT_FILE), rules, lint)
            }
            None => Ok(Config::default()),
        }
    }

    pub fn load(path: &Path, rules: &Rules, lint: &LintRules) -> Result<Config> {
        let text = fs::read_to_string(path)
            .map_err(|e| Error::new(format!("cannot read config {}: {e}", path.display())))?;
        Config::parse(&text, &path.display().to_string(), rules, lint).map(|mut c| {
            c.file = Some(path.to_path_buf());
            c
        })
    }

    pub fn parse(text: &str, origin: &str, rules: &Rules, lint: &LintRules) -> Result<Config> {
        let at = |span: Range<usize>| position(text, origin, span.start);
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let place = e.span().map(&at).unwrap_or_else(|| origin.to_string());
            Error::new(format!("{place}: {}", e.message().trim()))
        })?;
        let mut config = Config::default();
        for (key, value, levels) in [
            (
                &raw.fail_on,
                &mut config.fail_on,
                &["breaking", "minor", "patch", "never"][..],
            ),
            (
                &raw.lint_fail_on,
                &mut config.lint_fail_on,
                &["error", "warning", "info", "never"][..],
            ),
        ] {
            if let Some(v) = key {
                if !levels.contains(&v.get_ref().as_str()) {
                    return Err(Error::new(format!(
                        "{}: `{}` is not a level; expected one of {}",
                        at(v.span()),
                        v.get_ref(),
                        levels.join(", ")
                    )));
                }
                *value = Some(v.get_ref().clone());
            }
        }

        let change_ids: Vec<&str> = rules.rows.iter().map(|r| r.id.as_str()).collect();
        for (id, value) in &raw.severity {
            if !change_ids.contains(&id.get_ref().as_str()) {
                return Err(unknown_id(
                    &at(id.span()),
                    id.get_ref(),
                    &change_ids,
                    lint.has(id.get_ref()).then_some("[lint]"),
                ));
            }
            let sev = |v: &toml::Value, span: Range<usize>| -> Result<Severity> {
                v.as_str().and_then(Severity::parse).ok_or_else(|| {
                    let shown = match v {
                        toml::Value::String(s) => format!("{s:?}"),
                        other => format!("(a {})", other.type_str()),
                    };
                    Error::new(format!(
                        "{}: invalid severity {shown} for `{}`; expected breaking, minor, patch or none",
                        at(span),
                        id.get_ref()
                    ))
                })
            };
            let o = match value.get_ref() {
                toml::Value::Table(t) => {
                    let mut o = Override::default();
                    for (k, v) in t {
                        match k.as_str() {
                            "input" => o.input = Some(sev(v, value.span())?),
                            "output" => o.output = Some(sev(v, value.span())?),
                            other => {
                                return Err(Error::new(format!(
                                    "{}: unknown key `{other}` in the severity of `{}`; expected input or output",
                                    at(value.span()),
                                    id.get_ref()
                                )))
                            }
                        }
                    }
                    o
                }
                v => Override {
                    all: Some(sev(v, value.span())?),
                    ..Override::default()
                },
            };
            config.severity.insert(id.get_ref().clone(), o);
        }

        let lint_ids: Vec<&str> = lint.rows.iter().map(|r| r.id.as_str()).collect();
        for (id, level) in &raw.lint {
            if !lint_ids.contains(&id.get_ref().as_str()) {
                let elsewhere = change_ids
                    .contains(&id.get_ref().as_str())
                    .then_some("[severity]");
                return Err(unknown_id(
                    &at(id.span()),
                    id.get_ref(),
                    &lint_ids,
                    elsewhere,
                ));
            }
            let l = Level::parse(level.get_ref()).ok_or_else(|| {
                Error::new(format!(
                    "{}: invalid lint level `{}` for `{}`; expected error, warning, info or none",
                    at(level.span()),
                    level.get_ref(),
                    id.get_ref()
                ))
            })?;
            config.lint.insert(id.get_ref().clone(), l);
        }

        for entry in &raw.ignore {
            let origin_line = at(entry.span());
            let e = entry.get_ref();
            let glob = |p: &Option<Spanned<String>>| -> Result<Option<Glob>> {
                match p {
                    None => Ok(None),
                    Some(s) => Glob::new(s.get_ref()).map(Some).map_err(|err| {
                        Error::new(format!(
                            "{}: invalid glob `{}`: {}",
                            at(s.span()),
                            s.get_ref(),
                            err
                        ))
                    }),
                }
            };
            let reason = match &e.reason {
                Some(r) if !r.trim().is_empty() => r.clone(),
                _ => {
                    return Err(Error::new(format!(
                        "{origin_line}: this [[ignore]] has no `reason`; say why the change is acceptable"
                    )))
                }
            };
            if e.subject.is_none()
                && e.path.is_none()
                && e.code.is_none()
                && e.fingerprint.is_none()
            {
                return Err(Error::new(format!(
                    "{origin_line}: this [[ignore]] matches everything; give a subject, path, code or fingerprint"
                )));
            }
            let code = glob(&e.code)?;
            if let (Some(g), Some(pattern)) = (&code, &e.code) {
                if !change_ids.iter().any(|id| g.is_match(id)) {
                    let at = at(pattern.span());
                    return Err(unknown_id(&at, pattern.get_ref(), &change_ids, None));
                }
            }
            config.ignore.push(Ignore {
                subject: glob(&e.subject)?,
                path: glob(&e.path)?,
                code,
                fingerprint: e.fingerprint.as_ref().map(|f| f.get_ref().clone()),
                reason,
                origin: origin_line,
            });
        }
        Ok(config)
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

fn unknown_id(place: &str, id: &str, known: &[&str], elsewhere: Option<&str>) -> Error {
    let mut msg = format!("{place}: unknown rule id `{id}`");
    if let Some(table) = elsewhere {
        msg.push_str(&format!(" here; it belongs in {table}"));
    } else if let Some(best) = suggest(id, known) {
        msg.push_str(&format!("; did you mean `{best}`?"));
    } else {
        msg.push_str("; `mcp-covenant rules` lists them all");
    }
    Error::new(msg)
}

/// The known id closest to `id`, when it is close enough to be a typo.
pub fn suggest<'a>(id: &str, known: &[&'a str]) -> Option<&'a str> {
    let (best, dist) = known
        .iter()
        .map(|k| (*k, edit_distance(id, k)))
        .min_by_key(|(_, d)| *d)?;
    (dist <= (id.len() / 4).max(2)).then_some(best)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
