//! The command line (README.md, "Use"; docs/architecture.md): `args` is what clap parses,
//! `settings` resolves each command's settings (the flag, then covenant.toml, then the
//! default), and each command has its module (`snapshot`, `check`, `lint`, `rules`,
//! `init`, `help`); `source` and `output` are what they share. This file parses,
//! resolves, runs one command and maps the outcome to the exit code.

mod args;
mod check;
mod client;
mod diff_driver;
mod help;
mod init;
mod lint;
mod output;
mod rules;
mod settings;
mod snapshot;
mod source;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use termcolor::{StandardStream, WriteColor};

pub use self::args::{
    CheckArgs, Cli, ClientCapability, ColorWhen, Command, HelpArgs, InitArgs, LintArgs, LintFormat,
    LiveSource, RulesArgs, SnapshotArgs,
};
use self::settings::{CheckSettings, InitSettings, LintSettings, RulesSettings, SnapshotSettings};
use crate::config::Config;
pub use crate::config::{FailOn, LintFailOn};
use crate::error::Result;
use crate::lint::LintRules;
use crate::mcp;
use crate::rules::Rules;
use crate::stdout::PipeTolerant;

/// Run the command line and map the outcome to an exit code.
pub fn main() -> ExitCode {
    main_with(crate::rules::TABLES)
}

/// [`main`] with other rule tables: tests/rule_ids.rs runs the command line with
/// tables in which ids were renamed or retired (examples/renamed-rules.rs).
#[doc(hidden)]
pub fn main_with(tables: &[(&'static str, &str)]) -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // A reader that closes early (`| head`) does not change the verdict.
    let color = settings::color_choice(cli.color);
    let mut stdout = PipeTolerant::new(StandardStream::stdout(color));
    match run_with(cli, tables, &mut stdout) {
        Ok(code) => ExitCode::from(code),
        // One `error:` line: the signal handler may have claimed it already.
        Err(_) if mcp::stdio::interrupted() => {
            if mcp::claim_error_line() {
                // One write: the signal handler ends the process meanwhile.
                let line = format!(
                    "error: interrupted ({}); the server was stopped\n",
                    mcp::stdio::interruption()
                );
                eprint!("{line}");
            }
            ExitCode::from(130)
        }
        Err(e) => {
            let _ = stdout.flush();
            if mcp::claim_error_line() {
                eprintln!("error: {e}");
            }
            ExitCode::from(if mcp::stdio::interrupted() { 130 } else { 2 })
        }
    }
}

/// Run a parsed command line, writing reports to `out`. Returns the exit code (0 or 1);
/// errors are exit 2.
pub fn run(cli: Cli, out: &mut dyn WriteColor) -> Result<u8> {
    run_with(cli, crate::rules::TABLES, out)
}

fn run_with(cli: Cli, tables: &[(&'static str, &str)], out: &mut dyn WriteColor) -> Result<u8> {
    // Neither reads covenant.toml: they work before there is one, or while it is broken.
    let command = match cli.command {
        Command::Help(args) => return help::run(args.topic.as_deref(), out),
        Command::Init(args) => return init::run(InitSettings::resolve(args, cli.config)),
        command => command,
    };
    let mut rules = Rules::from_tables(tables)?;
    let mut lint_rules = LintRules::embedded()?;
    let config = Config::discover(cli.config.as_deref(), &rules, &lint_rules)?;
    for w in &config.warnings {
        eprintln!("warning: {w}");
    }
    rules.set_overrides(config.severity.clone());
    lint_rules.set_overrides(config.lint.clone());
    match command {
        Command::Snapshot(mut args) => {
            if let Some(client) = args.from_client.take() {
                // The entries are written, then captured (only they).
                let file = client::target(config.file.as_deref(), cli.config.as_deref());
                let added = client::import(&client, &file)?;
                let mut config = Config::load(&file, &rules, &lint_rules)?;
                config.servers.retain(|s| added.contains(&s.name));
                let settings = SnapshotSettings::resolve(args, &config)?;
                return snapshot::run(&rules, &config, settings, out);
            }
            let settings = SnapshotSettings::resolve(args, &config)?;
            snapshot::run(&rules, &config, settings, out)
        }
        Command::Check(args) => {
            config.warn_expired();
            // Compared with a revision: this covenant.toml is held to that revision's, so
            // a pull request cannot loosen its own gate.
            // (A covenant.toml outside the repository, `--config /abs/path`, is not the
            // pull request's to change: it applies as it is.)
            let in_repository = config.file.as_deref().is_none_or(|f| f.is_relative());
            let config = match args.baseline_rev.as_deref() {
                Some(rev) if in_repository => {
                    let base = check::base_config(&rules, &config, rev)?.unwrap_or_default();
                    let (held, loosened) = config.held_to(&base, &rules);
                    for l in &loosened {
                        eprintln!(
                            "warning: {l}; this check applies {rev}'s stricter policy (the looser one applies once merged)"
                        );
                    }
                    rules.set_overrides(held.severity.clone());
                    held
                }
                _ => config,
            };
            let settings = CheckSettings::resolve(args, &config)?;
            check::run(&rules, &config, settings, out)
        }
        Command::GitDiffDriver(args) => diff_driver::run(&rules, &config, &args.args, out),
        Command::Lint(args) => lint::run(&lint_rules, LintSettings::resolve(args, &config)?, out),
        Command::Rules(args) => {
            let settings = RulesSettings::resolve(args, &config);
            rules::run(&rules, &lint_rules, settings, out)
        }
        Command::Help(_) | Command::Init(_) => unreachable!("handled above"),
    }
}
