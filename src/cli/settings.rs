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
    CheckArgs, ColorWhen, InitArgs, LintArgs, LintFormat, LiveSource, RulesArgs, SnapshotArgs,
};
use crate::config::{Config, FailOn, LintFailOn, Server};
use crate::error::{Error, Result};
use crate::lint::Level;
use crate::report::Format;

/// The lockfile when neither the command line nor a `[[server]]` names one.
pub(super) const DEFAULT_LOCKFILE: &str = "mcp-covenant.lock";

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
        })
    }

    /// The lockfile `server` (`None`: the command line's) is written to: `-o`, then the
    /// `[[server]]`'s `lockfile`, then mcp-covenant.lock.
    pub fn output(&self, server: Option<&Server>) -> PathBuf {
        lockfile(self.output.as_deref(), server)
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
    pub source: LiveSource,
}

impl<'c> CheckSettings<'c> {
    pub fn resolve(args: CheckArgs, config: &'c Config) -> Result<CheckSettings<'c>> {
        let fail_on = args.fail_on.or(config.fail_on).unwrap_or(FailOn::Breaking);
        let cli_source = args.against.is_some() || args.source.given();
        let servers = configured(config, args.server.as_deref(), cli_source)?;
        Ok(CheckSettings {
            servers,
            picked: args.server.is_some(),
            baseline: args.baseline,
            against: args.against,
            baseline_rev: args.baseline_rev,
            fail_on,
            verbose: args.verbose,
            format: args.format,
            walk_budget: args.walk_budget,
            output: args.output,
            source: args.source,
        })
    }

    /// The baseline lockfile of `server` (`None`: the command line's): `--baseline`, then
    /// the `[[server]]`'s `lockfile`, then mcp-covenant.lock.
    pub fn baseline(&self, server: Option<&Server>) -> PathBuf {
        lockfile(self.baseline.as_deref(), server)
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
}

impl<'c> LintSettings<'c> {
    pub fn resolve(args: LintArgs, config: &'c Config) -> Result<LintSettings<'c>> {
        let fail_on = match args.fail_on.or(config.lint_fail_on) {
            None | Some(LintFailOn::Error) => Some(Level::Error),
            Some(LintFailOn::Warning) => Some(Level::Warning),
            Some(LintFailOn::Info) => Some(Level::Info),
            Some(LintFailOn::Never) => None,
        };
        let cli_source = args.from.is_some() || args.source.given();
        let servers = configured(config, args.server.as_deref(), cli_source)?;
        Ok(LintSettings {
            servers,
            from: args.from,
            fail_on,
            format: args.format,
            output: args.output,
            source: args.source,
        })
    }
}

/// `rules`.
pub(super) struct RulesSettings {
    /// Show only this rule id.
    pub id: Option<String>,
    /// List the comparators and their events instead.
    pub comparators: bool,
    /// The config the effective severities come from, as the listing names it.
    pub config: String,
}

impl RulesSettings {
    pub fn resolve(args: RulesArgs, config: &Config) -> RulesSettings {
        RulesSettings {
            id: args.id,
            comparators: args.comparators,
            config: config
                .file
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "no covenant.toml".into()),
        }
    }
}

/// `init` (it reads no covenant.toml: it writes one).
pub(super) struct InitSettings {
    /// Where covenant.toml goes: `--config`, then ./covenant.toml.
    pub config: PathBuf,
    /// The server command written into the workflow (`None`: a placeholder).
    pub command: Option<String>,
}

impl InitSettings {
    pub fn resolve(args: InitArgs, config: Option<PathBuf>) -> InitSettings {
        InitSettings {
            config: config.unwrap_or_else(|| PathBuf::from(crate::config::DEFAULT_FILE)),
            command: (!args.command.is_empty()).then(|| args.command.join(" ")),
        }
    }
}

/// A lockfile setting: the flag, then the `[[server]]`'s `lockfile`, then
/// mcp-covenant.lock.
fn lockfile(flag: Option<&Path>, server: Option<&Server>) -> PathBuf {
    match (flag, server) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(s)) => s.lockfile.clone(),
        (None, None) => PathBuf::from(DEFAULT_LOCKFILE),
    }
}

/// `--color`: the flag, then NO_COLOR (set and not empty: never), then whether stdout
/// is a terminal.
pub(super) fn color_choice(when: ColorWhen) -> ColorChoice {
    match when {
        ColorWhen::Always => ColorChoice::Always,
        ColorWhen::Never => ColorChoice::Never,
        ColorWhen::Auto => {
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            if no_color || !std::io::stdout().is_terminal() {
                ColorChoice::Never
            } else {
                ColorChoice::Auto
            }
        }
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
