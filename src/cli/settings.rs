//! Settings: each command's settings, resolved in one place. A setting is the
//! command-line flag, then covenant.toml, then the default; a command's flow reads its
//! one resolved struct and never asks where a value came from (ripgrep's `HiArgs` and
//! uv's `settings.rs` work the same way). Resolving checks what the flags and
//! covenant.toml say together (`--server` against the `[[server]]` entries, one
//! `--output` for several servers), so a command starts only on settings that make sense.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use termcolor::ColorChoice;

use super::args::{
    CheckArgs, ColorWhen, Command, InitArgs, LintArgs, LintFormat, LiveSource, RulesArgs,
    RulesFormat, SnapshotArgs,
};
use crate::config::{Config, FailOn, LintFailOn, Server};
use crate::error::{Error, Result};
use crate::lint::Level;
use crate::report::Format;

use crate::config::DEFAULT_LOCKFILE;

/// `snapshot`.
pub(super) struct SnapshotSettings<'c> {
    /// The `[[server]]` entries to capture (`None`: the server the command line gives).
    pub servers: Option<Vec<&'c Server>>,
    /// `-o/--output` (one lockfile: never with several servers).
    output: Option<PathBuf>,
    /// `--check`: compare, write nothing.
    pub check: bool,
    /// `--repeat`: captures that must agree before anything is written.
    pub repeat: u32,
    pub source: LiveSource,
    config: &'c Config,
}

impl<'c> SnapshotSettings<'c> {
    pub fn resolve(args: SnapshotArgs, config: &'c Config) -> Result<SnapshotSettings<'c>> {
        let servers = configured(config, args.server.as_deref(), args.source.given())?;
        if args.output.is_some() && servers.as_ref().is_some_and(|s| s.len() > 1) {
            return Err(Error::new(
                "-o/--output names one lockfile, and covenant.toml has several [[server]] entries (each writes its `lockfile`); pick one with --server NAME",
            ));
        }
        Ok(SnapshotSettings {
            servers,
            output: args.output,
            check: args.check,
            repeat: args.repeat,
            source: args.source,
            config,
        })
    }

    /// The lockfile `server` (`None`: the command line's) is written to: `-o`, then the
    /// `[[server]]`'s `lockfile`, then mcp-covenant.lock.
    pub fn output(&self, server: Option<&Server>) -> PathBuf {
        lockfile(self.output.as_deref(), server, self.config)
    }
}

/// `check`.
pub(super) struct CheckSettings<'c> {
    /// The `[[server]]` entries to check (`None`: what the command line gives).
    pub servers: Option<Vec<&'c Server>>,
    /// `--server` picked one entry.
    pub picked: bool,
    /// `--baseline`.
    pub baseline: Option<PathBuf>,
    /// `--against`.
    pub against: Option<PathBuf>,
    /// `--baseline-rev`.
    pub baseline_rev: Option<String>,
    /// `--fail-on`, then `fail_on`, then breaking.
    pub fail_on: FailOn,
    pub verbose: bool,
    pub format: Format,
    pub walk_budget: usize,
    /// `--output`.
    pub output: Option<PathBuf>,
    /// `--prune-ignores`.
    pub prune_ignores: bool,
    pub source: LiveSource,
    config: &'c Config,
}

impl<'c> CheckSettings<'c> {
    pub fn resolve(
        args: CheckArgs,
        config: &'c Config,
        verbose: bool,
    ) -> Result<CheckSettings<'c>> {
        let fail_on = (args.fail_on.map(FailOn::from))
            .or(config.fail_on)
            .unwrap_or(FailOn::Breaking);
        let cli_source = args.against.is_some() || args.source.given();
        let servers = configured(config, args.server.as_deref(), cli_source)?;
        Ok(CheckSettings {
            servers,
            picked: args.server.is_some(),
            baseline: args.baseline,
            against: args.against,
            baseline_rev: args.baseline_rev,
            fail_on,
            verbose,
            format: args.format.into(),
            walk_budget: args.walk_budget,
            output: args.output,
            prune_ignores: args.prune_ignores,
            source: args.source,
            config,
        })
    }

    /// The baseline lockfile of `server` (`None`: the command line's): `--baseline`, then
    /// the `[[server]]`'s `lockfile`, then mcp-covenant.lock.
    pub fn baseline(&self, server: Option<&Server>) -> PathBuf {
        lockfile(self.baseline.as_deref(), server, self.config)
    }
}

/// `lint`.
pub(super) struct LintSettings<'c> {
    /// The `[[server]]` entries to lint (`None`: what the command line gives).
    pub servers: Option<Vec<&'c Server>>,
    /// `--from`.
    pub from: Option<PathBuf>,
    /// The least severe finding that fails (`None`: never): `--fail-on`, then
    /// `lint_fail_on`, then error.
    pub fail_on: Option<Level>,
    pub format: LintFormat,
    /// `--output`.
    pub output: Option<PathBuf>,
    pub source: LiveSource,
    /// covenant.toml: a package `--from` is installed with its `[[server]]` options.
    pub config: &'c Config,
}

impl<'c> LintSettings<'c> {
    pub fn resolve(args: LintArgs, config: &'c Config) -> Result<LintSettings<'c>> {
        let fail_on = (args.fail_on.map(LintFailOn::from))
            .or(config.lint_fail_on)
            .map_or(Some(Level::Error), LintFailOn::level);
        let cli_source = args.from.is_some() || args.source.given();
        let servers = configured(config, args.server.as_deref(), cli_source)?;
        Ok(LintSettings {
            servers,
            from: args.from,
            fail_on,
            format: args.format,
            output: args.output,
            source: args.source,
            config,
        })
    }
}

/// `rules`.
pub(super) struct RulesSettings {
    /// Show only this rule id, or the ids this glob matches.
    pub id: Option<String>,
    pub format: RulesFormat,
    /// The ids covenant.toml sets a severity or level for.
    pub overridden: std::collections::HashSet<String>,
    /// List the comparators and their events instead.
    pub comparators: bool,
    /// The config the effective severities come from, as the listing names it.
    pub config: String,
    /// Its `[severity]` entries (with its `profile`'s), applied by `policy::Policy`.
    pub severity: std::collections::HashMap<String, crate::rules::Override>,
    /// Its `[lint]` levels, applied by `policy::LintPolicy`.
    pub lint: std::collections::HashMap<String, crate::lint::Level>,
}

impl RulesSettings {
    pub fn resolve(args: RulesArgs, config: &Config) -> RulesSettings {
        RulesSettings {
            id: args.id,
            format: args.format,
            overridden: config
                .severity
                .keys()
                .chain(config.lint.keys())
                .cloned()
                .collect(),
            comparators: args.comparators,
            config: config
                .file
                .as_ref()
                // A path as shown on a terminal: a directory's name may hold anything.
                .map(|p| crate::escape::text(&p.display().to_string()).into_owned())
                .unwrap_or_else(|| "no covenant.toml".into()),
            severity: config.severity.clone(),
            lint: config.lint.clone(),
        }
    }
}

/// `init` (it reads no covenant.toml: it writes one).
pub(super) struct InitSettings {
    /// Where covenant.toml goes: `--config`, then ./covenant.toml.
    pub config: PathBuf,
    /// The server command given after `--` (`None`: inferred from the project).
    pub command: Option<Vec<String>>,
    /// Replace the files that exist.
    pub force: bool,
    /// Write covenant.toml and the workflow only, without capturing the server.
    pub no_capture: bool,
    /// `--from-client`: the upgrade workflow of a repository that consumes servers.
    pub from_client: Option<PathBuf>,
    pub source: LiveSource,
}

impl InitSettings {
    pub fn resolve(args: InitArgs, config: Option<PathBuf>) -> Result<InitSettings> {
        Ok(InitSettings {
            config: config.unwrap_or_else(|| PathBuf::from(crate::config::DEFAULT_FILE)),
            command: (!args.source.command.is_empty()).then(|| args.source.command.clone()),
            force: args.force,
            no_capture: args.no_capture,
            from_client: args.from_client,
            source: args.source,
        })
    }
}

/// A lockfile setting: the flag, then the `[[server]]`'s `lockfile`, then
/// mcp-covenant.lock.
fn lockfile(flag: Option<&Path>, server: Option<&Server>, config: &Config) -> PathBuf {
    match (flag, server) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(s)) => s.lockfile.clone(),
        (None, None) => default_lockfile(config),
    }
}

/// mcp-covenant.lock next to covenant.toml (here when there is none).
fn default_lockfile(config: &Config) -> PathBuf {
    match config.file.as_deref().and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(DEFAULT_LOCKFILE),
        _ => PathBuf::from(DEFAULT_LOCKFILE),
    }
}

/// `--color`: the flag, then NO_COLOR (set and not empty: never), then FORCE_COLOR or
/// CLICOLOR_FORCE (set, not empty and not `0`: always, on a pipe too, as in CI logs),
/// then whether stdout is a terminal.
pub(super) fn color_choice(when: ColorWhen) -> ColorChoice {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    match when {
        ColorWhen::Always => ColorChoice::Always,
        ColorWhen::Never => ColorChoice::Never,
        ColorWhen::Auto if set("NO_COLOR").is_some() => ColorChoice::Never,
        ColorWhen::Auto
            if ["FORCE_COLOR", "CLICOLOR_FORCE"]
                .iter()
                .any(|n| set(n).is_some_and(|v| v != "0")) =>
        {
            ColorChoice::Always
        }
        ColorWhen::Auto if std::io::stdout().is_terminal() => ColorChoice::Auto,
        ColorWhen::Auto => ColorChoice::Never,
    }
}

/// The paths of `command` given relative to `from` made relative to the directory
/// above it that `from` is `prefix` inside: the command line's paths keep meaning what
/// the user typed after the command moves to covenant.toml's directory. `git:REV:PATH`
/// is relative to the repository's root unless PATH starts with `./` or `../`.
pub(super) fn rebase(command: &mut Command, prefix: &Path) {
    let fix = |p: &mut Option<PathBuf>| {
        if let Some(path) = p.as_mut().filter(|p| !super::is_stdout(p)) {
            *path = rebased(path, prefix);
        }
    };
    match command {
        Command::Snapshot(a) => fix(&mut a.output),
        Command::Check(a) => {
            fix(&mut a.baseline);
            fix(&mut a.against);
            fix(&mut a.output);
        }
        Command::Lint(a) => {
            fix(&mut a.from);
            fix(&mut a.output);
        }
        Command::Upgrade(a) => {
            a.from_client
                .iter_mut()
                .for_each(|p| *p = rebased(p, prefix));
            fix(&mut a.output);
        }
        _ => {}
    }
}

fn rebased(path: &Path, prefix: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    match path.to_str().and_then(|p| p.strip_prefix("git:")) {
        Some(rest) => match rest.split_once(':') {
            Some((rev, rel)) if rel.starts_with("./") || rel.starts_with("../") => {
                let joined = prefix.join(rel);
                PathBuf::from(format!("git:{rev}:./{}", joined.display()))
            }
            _ => path.to_path_buf(),
        },
        None => prefix.join(path),
    }
}

/// The `[[server]]` entries a command runs on, or `None` when it runs on what the
/// command line gives (a server, or a lockfile) or there are no entries.
fn configured<'c>(
    config: &'c Config,
    pick: Option<&str>,
    cli_source: bool,
) -> Result<Option<Vec<&'c Server>>> {
    let Some(name) = pick else {
        return Ok(
            (!cli_source && !config.servers.is_empty()).then(|| config.servers.iter().collect())
        );
    };
    if cli_source {
        return Err(Error::new(
            "--server picks a [[server]] of covenant.toml; it does not go with a server or lockfile given on the command line",
        ));
    }
    if config.servers.is_empty() {
        return Err(Error::new(format!(
            "--server {name}: {} has no [[server]] entries (`mcp-covenant help config` shows how to add them)",
            config.name()
        )));
    }
    match config.servers.iter().find(|s| s.name == name) {
        Some(s) => Ok(Some(vec![s])),
        None => {
            let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
            let hint = crate::config::suggest(name, &names)
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            Err(Error::new(format!(
                "no [[server]] named `{name}` in {}; {hint}configured: {}",
                config.name(),
                names.join(", ")
            )))
        }
    }
}
