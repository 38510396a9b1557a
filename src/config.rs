//! `covenant.toml`: the project's overlay on the embedded rule tables, and its servers.
//! The reference is `CONFIG_REFERENCE` (src/reference.rs): `mcp-covenant help config`
//! prints it and docs/config.md is generated from it; docs/schemas/covenant.schema.json
//! is its JSON Schema.
//!
//! Validation is strict: an unknown key, rule id, severity or glob is exit 2 with
//! `file:line:column` and, for a misspelt id, a suggestion.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};

use globset::GlobMatcher as Glob;
use serde::Deserialize;
use toml::Spanned;

use crate::diff::Change;
use crate::error::{Error, Result};
use crate::lint::{Level, LintRules};
use crate::rules::{Direction, Former, Rules, Severity};

pub const DEFAULT_FILE: &str = "covenant.toml";

/// The lockfile when neither the command line nor covenant.toml names one.
pub const DEFAULT_LOCKFILE: &str = "mcp-covenant.lock";

/// The directory of the covenant.toml that applies here: the current directory or the
/// nearest parent that has one, looking no higher than the repository's root (the
/// directory holding `.git`); outside a repository, only the current directory. `None`
/// when there is none.
pub fn find(cwd: &Path) -> Option<PathBuf> {
    let inside_repository = cwd.ancestors().any(|d| d.join(".git").exists());
    for dir in cwd.ancestors() {
        if dir.join(DEFAULT_FILE).is_file() {
            return Some(dir.to_path_buf());
        }
        if !inside_repository || dir.join(".git").exists() {
            return None;
        }
    }
    None
}

/// A `[severity]` entry: defined with the rule tables it overrides.
pub use crate::rules::Override;

/// One `[[ignore]]` entry: every pattern it gives must match.
#[derive(Clone, Debug)]
pub struct Ignore {
    subject: Option<Glob>,
    path: Option<Glob>,
    code: Option<Glob>,
    fingerprint: Option<String>,
    /// `fingerprint` is the 48-bit form of mcp-covenant 0.2 and before.
    pub legacy_fingerprint: bool,
    pub reason: String,
    /// `covenant.toml:12` — where the entry is, for --verbose.
    pub origin: String,
    /// What the entry says (its patterns, fingerprint and `until`), to tell whether
    /// another covenant.toml has the same entry.
    identity: String,
    /// The last day (UTC) the entry applies, as written (`YYYY-MM-DD`).
    pub until: Option<String>,
    /// `until` is past: the entry no longer applies (and `check` warns about it).
    pub expired: bool,
}

impl Ignore {
    pub fn matches(&self, c: &Change) -> bool {
        if self.expired {
            return false;
        }
        let glob = |g: &Option<Glob>, s: &str| g.as_ref().is_none_or(|g| g.is_match(s));
        glob(&self.subject, &c.subject)
            && glob(&self.path, c.path.as_deref().unwrap_or(""))
            && glob(&self.code, &c.code)
            && self
                .fingerprint
                .as_ref()
                .is_none_or(|f| match self.legacy_fingerprint {
                    false => *f == c.fingerprint,
                    true => *f == crate::diff::legacy_fingerprint(c),
                })
    }
}

impl Config {
    /// This covenant.toml held to `base` (the same file at the revision a pull request
    /// is compared with): wherever this one is looser, base's policy applies, so a pull
    /// request cannot turn its own gate off. A severity lowered for a rule (in any
    /// direction, by `[severity]` or `profile`) keeps base's; an `[[ignore]]` base does
    /// not have is dropped; a looser `fail_on` keeps base's. Also what was loosened, one
    /// line each, for the user (the looser policy applies once it is merged).
    pub fn held_to(mut self, base: &Config, rules: &Rules) -> (Config, Vec<String>) {
        let mut loosened = Vec::new();
        let here = self.name();
        for row in &rules.rows {
            let effective = |c: &Config, d: Option<Direction>| {
                c.severity
                    .get(&row.id)
                    .and_then(|o| o.get(d))
                    .or_else(|| row.default_severity(d))
                    .unwrap_or_else(|| row.worst_default())
            };
            let mut held = self.severity.get(&row.id).cloned().unwrap_or_default();
            let mut changed = false;
            for d in [None, Some(Direction::Input), Some(Direction::Output)] {
                let (mine, theirs) = (effective(&self, d), effective(base, d));
                if mine > theirs {
                    changed = true;
                    let slot = match d {
                        None => &mut held.all,
                        Some(Direction::Input) => &mut held.input,
                        Some(Direction::Output) => &mut held.output,
                    };
                    *slot = Some(theirs);
                    let dir = d.map(|d| format!(" in {}", d.word())).unwrap_or_default();
                    let line = format!(
                        "{here} lowers `{}` from {} to {}{dir}",
                        row.id,
                        theirs.word(),
                        mine.word()
                    );
                    // Rows that differ only in `when` share an id: said once.
                    if !loosened.contains(&line) {
                        loosened.push(line);
                    }
                }
            }
            if changed {
                // The explicit directions win over `all` when read back.
                for d in [Some(Direction::Input), Some(Direction::Output)] {
                    let v = effective(&self, d).min(effective(base, d));
                    match d {
                        Some(Direction::Input) => held.input = Some(v),
                        _ => held.output = Some(v),
                    }
                }
                self.severity.insert(row.id.clone(), held);
            }
        }
        let (kept, dropped): (Vec<Ignore>, Vec<Ignore>) = std::mem::take(&mut self.ignore)
            .into_iter()
            .partition(|i| base.ignore.iter().any(|b| b.identity == i.identity));
        for i in dropped {
            loosened.push(format!(
                "{} adds an [[ignore]] ({})",
                i.origin,
                i.reason.escape_debug()
            ));
        }
        self.ignore = kept;
        let level = |f: Option<FailOn>| f.unwrap_or(FailOn::Breaking).level();
        // A looser gate fails on fewer levels: `never`, or a more severe least level.
        let looser = match (level(self.fail_on), level(base.fail_on)) {
            (None, Some(_)) => true,
            (Some(mine), Some(theirs)) => mine < theirs,
            _ => false,
        };
        if looser {
            loosened.push(format!("{here} loosens `fail_on`"));
            self.fail_on = base.fail_on.or(Some(FailOn::Breaking));
        }
        (self, loosened)
    }
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

/// `check --fail-on` and `fail_on`: the least severe change that fails the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// `major` too: the bump a breaking change owes.
    #[value(alias = "major")]
    Breaking,
    Minor,
    Patch,
    Never,
}

impl FailOn {
    /// The least severe failing change (`None`: never fail).
    pub fn level(self) -> Option<Severity> {
        match self {
            FailOn::Breaking => Some(Severity::Breaking),
            FailOn::Minor => Some(Severity::Minor),
            FailOn::Patch => Some(Severity::Patch),
            FailOn::Never => None,
        }
    }
}

/// `lint --fail-on` and `lint_fail_on`: the least severe finding that fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LintFailOn {
    Error,
    Warning,
    Info,
    Never,
}

/// A level in covenant.toml, spelt as on the command line.
fn level<'de, D: serde::Deserializer<'de>, T: clap::ValueEnum>(
    d: D,
) -> std::result::Result<T, D::Error> {
    let word = String::deserialize(d)?;
    T::from_str(&word, false).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| Some(v.to_possible_value()?.get_name().to_string()))
            .collect();
        serde::de::Error::custom(format!(
            "`{word}` is not a level; expected one of {}",
            names.join(", ")
        ))
    })
}

impl<'de> Deserialize<'de> for FailOn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        level(d)
    }
}

impl<'de> Deserialize<'de> for LintFailOn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        level(d)
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
    pub servers: Vec<Server>,
    /// What the file says that still works but should change (a former rule id), one
    /// line each, without the `warning: ` the command line prints before it.
    pub warnings: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: Option<Spanned<String>>,
    command: Option<Spanned<Vec<String>>>,
    http: Option<Spanned<String>>,
    #[serde(default)]
    headers_from_env: BTreeMap<String, Spanned<String>>,
    lockfile: Option<Spanned<String>>,
    /// `npm:NAME@VERSION` or `pypi:NAME==VERSION`, with its `args`, `env` (variable
    /// names), `with` (requirements installed beside it) and `allow_scripts`.
    package: Option<Spanned<String>>,
    args: Option<Vec<String>>,
    env: Option<Spanned<Vec<String>>>,
    with: Option<Vec<String>>,
    allow_scripts: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    /// `consumer`: what the model is told (descriptions, titles, instructions,
    /// annotations) is part of the contract; `provider` (the default): it is not.
    profile: Option<Spanned<String>>,
    fail_on: Option<FailOn>,
    lint_fail_on: Option<LintFailOn>,
    #[serde(default)]
    severity: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    lint: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    ignore: Vec<Spanned<RawIgnore>>,
    #[serde(default)]
    server: Vec<Spanned<RawServer>>,
    /// One server, as a `[[server]]` entry's keys at the top level (no name; the
    /// lockfile defaults to mcp-covenant.lock).
    command: Option<Spanned<Vec<String>>>,
    http: Option<Spanned<String>>,
    #[serde(default)]
    headers_from_env: BTreeMap<String, Spanned<String>>,
    lockfile: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIgnore {
    subject: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    code: Option<Spanned<String>>,
    fingerprint: Option<Spanned<String>>,
    reason: Option<String>,
    until: Option<Spanned<toml::Value>>,
}

impl Config {
    /// `explicit` (from --config), else `./covenant.toml` when present, else defaults.
    /// (The command line looks in the parent directories first: [`find`].)
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
        let bytes = crate::io::read_input(path, "config")?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::new(format!(
                "cannot read config {}: it is not UTF-8",
                path.display()
            ))
        })?;
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
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let place = e.span().map(&at).unwrap_or_else(|| origin.to_string());
            Error::new(format!("{place}: {}", e.message().trim()))
        })?;
        let mut config = Config {
            fail_on: raw.fail_on,
            lint_fail_on: raw.lint_fail_on,
            ..Config::default()
        };

        let change_ids: Vec<&str> = rules.rows.iter().map(|r| r.id.as_str()).collect();
        for (id, value) in &raw.severity {
            let former = rules.former(id.get_ref());
            if let Some(f) = &former {
                // A renamed id configures the rows that took it over; a retired one
                // configures nothing (its changes are classified anew).
                let tail = match f {
                    Former::Retired(_) => "; this [severity] entry no longer applies",
                    Former::Renamed(_) => "",
                };
                config.warnings.push(format!(
                    "{}: {}{tail}",
                    at(id.span()),
                    f.describe(id.get_ref())
                ));
            } else if !change_ids.contains(&id.get_ref().as_str()) {
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
            match former {
                None => {
                    config.severity.insert(id.get_ref().clone(), o);
                }
                // The current id, written out too, wins over its former one.
                Some(Former::Renamed(new)) => {
                    for new_id in new {
                        config.severity.entry(new_id.to_string()).or_insert(o);
                    }
                }
                Some(Former::Retired(_)) => {}
            }
        }
        if let Some(profile) = &raw.profile {
            match profile.get_ref().as_str() {
                "provider" => {}
                // [severity] entries written out still win over the profile.
                "consumer" => {
                    // The rows that say so (`model_facing` in rules/*.toml).
                    let model_facing = rules.rows.iter().filter(|r| r.model_facing);
                    for id in model_facing.map(|r| r.id.as_str()) {
                        config.severity.entry(id.to_string()).or_insert(Override {
                            all: Some(Severity::Breaking),
                            ..Override::default()
                        });
                    }
                }
                other => {
                    return Err(Error::new(format!(
                        "{}: unknown profile `{other}`; expected consumer or provider",
                        at(profile.span())
                    )))
                }
            }
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
            };
            let reason = match &e.reason {
                Some(r) if !r.trim().is_empty() => r.clone(),
                _ => {
                    return Err(Error::new(format!(
                        "{origin_line}: this [[ignore]] has no `reason`; say why the change is acceptable"
                    )))
                }
            };
            // A pattern that matches whatever it is given (`*`, `**`, `{*,x}`, every
            // rule id) narrows nothing: an entry of only such patterns is refused.
            let narrows = |p: &Option<Spanned<String>>, probes: &[&str]| -> Result<bool> {
                Ok(match glob(p)? {
                    None => false,
                    Some(g) => !probes.iter().all(|x| g.is_match(x)),
                })
            };
            const SUBJECTS: &[&str] = &[
                "",
                "server",
                "tool:a",
                "prompt:Z.9",
                "resource:file:///a b/c?d#e",
                "template:x://{y}/[z]",
                "tool:\\*?",
                "tool:é\u{202e}",
            ];
            const PATHS: &[&str] = &[
                "",
                "inputSchema",
                "outputSchema.properties[\"a.b\"].items[0]",
                "arguments.x",
                "_meta.ui.visibility",
                "a/b\\c*?[",
            ];
            let ids: Vec<&str> = change_ids.to_vec();
            if !narrows(&e.subject, SUBJECTS)?
                && !narrows(&e.path, PATHS)?
                && !narrows(&e.code, &ids)?
                && e.fingerprint.is_none()
            {
                return Err(Error::new(format!(
                    "{origin_line}: this [[ignore]] matches everything (a pattern like `*` narrows nothing); give a subject, path, code or fingerprint that names what is acceptable"
                )));
            }
            // A code glob matches current ids. An exact former id still works: a
            // renamed one matches the ids that took it over, a retired one nothing.
            let mut code = glob(&e.code)?;
            let mut retired = false;
            if let (Some(g), Some(pattern)) = (&code, &e.code) {
                if !change_ids.iter().any(|id| g.is_match(id)) {
                    let at = at(pattern.span());
                    let former = rules.former(pattern.get_ref());
                    match &former {
                        Some(f @ Former::Renamed(new)) => {
                            config
                                .warnings
                                .push(format!("{at}: {}", f.describe(pattern.get_ref())));
                            code = Some(any_of(new)?);
                        }
                        Some(f @ Former::Retired(_)) => {
                            config.warnings.push(format!(
                                "{at}: {}; this [[ignore]] no longer applies",
                                f.describe(pattern.get_ref())
                            ));
                            retired = true;
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
                            return Err(unknown_id(&at, pattern.get_ref(), &change_ids, None));
                        }
                    }
                }
            }
            let until = match &e.until {
                None => None,
                Some(v) => {
                    // A quoted "2026-12-31" or a bare TOML date 2026-12-31.
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
                    Some((text, day))
                }
            };
            if retired {
                continue;
            }
            config.ignore.push(Ignore {
                subject: glob(&e.subject)?,
                path: glob(&e.path)?,
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
                expired: until.as_ref().is_some_and(|(_, day)| today > *day),
                until: until.map(|(text, _)| text),
            });
        }
        let entries: Vec<(String, &RawServer)> = raw
            .server
            .iter()
            .map(|e| (at(e.span()), e.get_ref()))
            .collect();
        config.servers = servers(&entries, &at)?;
        let top = RawServer {
            name: None,
            command: raw.command.clone(),
            http: raw.http.clone(),
            headers_from_env: raw.headers_from_env.clone(),
            lockfile: raw.lockfile.clone(),
            package: None,
            args: None,
            env: None,
            with: None,
            allow_scripts: None,
        };
        let given = [
            top.command.as_ref().map(Spanned::span),
            top.http.as_ref().map(Spanned::span),
            top.lockfile.as_ref().map(Spanned::span),
            top.headers_from_env.values().next().map(Spanned::span),
        ];
        if let Some(span) = given.into_iter().flatten().min_by_key(|s| s.start) {
            let origin = at(span);
            if !config.servers.is_empty() {
                return Err(Error::new(format!(
                    "{origin}: a top-level `command`, `http` or `lockfile` is the one server; with [[server]] entries, give it as one of them"
                )));
            }
            config.servers = servers(&[(origin, &top)], &at)?;
        }
        Ok(config)
    }

    /// The `[[ignore]]` entries whose `until` day has passed.
    pub fn expired(&self) -> impl Iterator<Item = &Ignore> {
        self.ignore.iter().filter(|i| i.expired)
    }

    /// One warning line per expired `[[ignore]]`, to stderr.
    /// Warn about `[[ignore]]` entries that no longer apply, and about fingerprints in
    /// the old 48-bit form.
    pub fn warn_expired(&self) {
        for i in self.expired() {
            eprintln!(
                "warning: {}: [[ignore]] expired on {} and no longer applies (its reason: {})",
                i.origin,
                i.until.as_deref().unwrap_or(""),
                i.reason.escape_debug()
            );
        }
        for i in self.ignore.iter().filter(|i| i.legacy_fingerprint) {
            eprintln!(
                "warning: {}: [[ignore]] fingerprint `{}` is the old 48-bit form, which two different changes can share; replace it with the change's 32-digit fingerprint, which `check -v` shows",
                i.origin,
                i.fingerprint.as_deref().unwrap_or_default()
            );
        }
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

/// The name of the one server given at the top level of covenant.toml.
pub const TOP_LEVEL_SERVER: &str = "default";

/// The `[[server]]` entries (or the one server of the top level, which has no name and
/// whose lockfile defaults to mcp-covenant.lock), each with where it is, validated: a
/// name (letters, digits, `.`, `_`, `-`; unique), exactly one of `command` (a non-empty
/// list) and `http`, and a lockfile (unique).
fn servers(
    raw: &[(String, &RawServer)],
    at: &dyn Fn(Range<usize>) -> String,
) -> Result<Vec<Server>> {
    let mut out: Vec<Server> = Vec::new();
    // The top level's one server is the only entry without a name that is not an error.
    let top_level = raw.len() == 1 && raw[0].1.name.is_none();
    for (origin, e) in raw {
        let origin = origin.clone();
        let fail = |place: &str, msg: String| Err(Error::new(format!("{place}: {msg}")));
        let n = match &e.name {
            Some(name) => {
                let n = name.get_ref();
                let valid = !n.is_empty()
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
                if !valid {
                    return fail(
                        &at(name.span()),
                        format!("server name {n:?} must be letters, digits, `.`, `_` or `-`"),
                    );
                }
                if out.iter().any(|s| s.name == *n) {
                    return fail(&at(name.span()), format!("a second [[server]] named `{n}`"));
                }
                n.as_str()
            }
            None if top_level => TOP_LEVEL_SERVER,
            None => return fail(&origin, "this [[server]] has no `name`".into()),
        };
        let package_keys = e.args.is_some() || e.with.is_some() || e.allow_scripts.is_some();
        if package_keys && e.package.is_none() {
            return fail(
                &origin,
                format!(
                    "server `{n}`: `args`, `with` and `allow_scripts` are for `package` servers"
                ),
            );
        }
        if e.env.is_some() && e.http.is_some() {
            return fail(&origin, format!("server `{n}`: `env` is for `command` and `package` servers (an `http` server takes headers_from_env)"));
        }
        let env = env_names(n, e, at)?;
        let transport = match (&e.command, &e.http, &e.package) {
            (None, None, Some(p)) => package_server(n, p, e, env.clone(), at)?,
            (_, _, Some(_)) => {
                return fail(&origin, format!("server `{n}` has `package` and `command` or `http`; give one"))
            }
            (c, h, None) => match (c, h) {
            (Some(c), None) if c.get_ref().is_empty() || c.get_ref()[0].is_empty() => {
                return fail(
                    &at(c.span()),
                    format!("server `{n}`: `command` is empty; give the program and its arguments, e.g. [\"node\", \"server.js\"]"),
                )
            }
            (Some(c), None) => {
                if !e.headers_from_env.is_empty() {
                    return fail(&origin, format!("server `{n}`: `headers_from_env` is for `http` servers"));
                }
                Transport::Command(c.get_ref().clone())
            }
            (None, Some(url)) => {
                let mut headers = Vec::new();
                for (header, var) in &e.headers_from_env {
                    let ok_header = !header.is_empty()
                        && header.bytes().all(|b| b.is_ascii_graphic() && b != b':');
                    let ok_var = !var.get_ref().is_empty()
                        && var.get_ref().bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                    if !ok_header || !ok_var {
                        return fail(
                            &at(var.span()),
                            format!("server `{n}`: headers_from_env maps a header name to an environment variable name, e.g. {{ Authorization = \"ORDERS_TOKEN\" }}"),
                        );
                    }
                    headers.push((header.clone(), var.get_ref().clone()));
                }
                Transport::Http {
                    url: url.get_ref().clone(),
                    headers_from_env: headers,
                }
            }
            (Some(_), Some(_)) => {
                return fail(&origin, format!("server `{n}` has both `command` and `http`; give one"))
            }
            (None, None) => {
                return fail(&origin, format!("server `{n}` has neither `command`, `http` nor `package`; give one"))
            }
            },
        };
        let path = match &e.lockfile {
            None if e.name.is_none() => PathBuf::from(DEFAULT_LOCKFILE),
            None => {
                return fail(
                    &origin,
                    format!("server `{n}` has no `lockfile`, e.g. lockfile = \"locks/{n}.lock\""),
                )
            }
            Some(lockfile) if lockfile.get_ref().is_empty() => {
                return fail(
                    &at(lockfile.span()),
                    format!("server `{n}`: `lockfile` is empty"),
                )
            }
            Some(lockfile) => PathBuf::from(lockfile.get_ref()),
        };
        if let Some(other) = out.iter().find(|s| s.lockfile == path) {
            let place = e.lockfile.as_ref().map_or(origin.clone(), |l| at(l.span()));
            return fail(
                &place,
                format!(
                    "servers `{}` and `{n}` share the lockfile {}",
                    other.name,
                    path.display()
                ),
            );
        }
        out.push(Server {
            name: n.to_string(),
            transport,
            env,
            lockfile: path,
            origin,
        });
    }
    Ok(out)
}

/// `env`: environment variable names (letters, digits, `_`).
fn env_names(n: &str, e: &RawServer, at: &dyn Fn(Range<usize>) -> String) -> Result<Vec<String>> {
    let env = e
        .env
        .as_ref()
        .map(|v| v.get_ref().clone())
        .unwrap_or_default();
    if let Some(bad) = env
        .iter()
        .find(|v| v.is_empty() || !v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    {
        let span = e.env.as_ref().map(|v| v.span()).unwrap_or_default();
        return Err(Error::new(format!(
            "{}: server `{n}`: `env` lists variable names (letters, digits, `_`), not `{}`",
            at(span),
            bad.escape_debug()
        )));
    }
    Ok(env)
}

/// A `package` server: the source parsed strictly.
fn package_server(
    n: &str,
    p: &Spanned<String>,
    e: &RawServer,
    env: Vec<String>,
    at: &dyn Fn(Range<usize>) -> String,
) -> Result<Transport> {
    let package = crate::registry::Package::parse(p.get_ref())
        .unwrap_or_else(|| {
            Err(Error::new(format!(
                "`{}` is not a package source; expected npm:NAME@VERSION or pypi:NAME==VERSION",
                p.get_ref().escape_debug()
            )))
        })
        .map_err(|err| Error::new(format!("{}: server `{n}`: {}", at(p.span()), err.message())))?;
    let options = crate::registry::PackageOptions {
        args: e.args.clone().unwrap_or_default(),
        env,
        with: e.with.clone().unwrap_or_default(),
        allow_scripts: e.allow_scripts.unwrap_or(false),
    };
    for w in &options.with {
        crate::registry::spec::check_requirement(package.registry, w)
            .map_err(|err| Error::new(format!("{}: server `{n}`: {err}", at(p.span()))))?;
    }
    Ok(Transport::Package { package, options })
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

/// A glob matching exactly the rule ids `ids` (the rows a former id became).
fn any_of(ids: &[&str]) -> Result<Glob> {
    let escaped: Vec<String> = ids.iter().map(|id| globset::escape(id)).collect();
    let pattern = match escaped.as_slice() {
        [one] => one.clone(),
        many => format!("{{{}}}", many.join(",")),
    };
    globset::Glob::new(&pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| Error::new(format!("rule ids {ids:?} make no glob: {}", e.kind())))
}

/// The known id closest to `id`, when it is close enough to be a typo.
pub fn suggest<'a>(id: &str, known: &[&'a str]) -> Option<&'a str> {
    let (best, dist) = known
        .iter()
        .map(|k| (*k, strsim::levenshtein(id, k)))
        .min_by_key(|(_, d)| *d)?;
    (dist <= (id.len() / 4).max(2)).then_some(best)
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
}
