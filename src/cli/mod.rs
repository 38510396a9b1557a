//! The command line (docs/usage.md; docs/architecture.md): `args` is what clap parses,
//! `settings` resolves each command's settings (the flag, then covenant.toml, then the
//! default), and each command has its module (`snapshot`, `check`, `lint`, `rules`,
//! `init`, `help`); `source` and `output` are what they share. This file parses,
//! resolves, runs one command and maps the outcome to the exit code.

/// A status line on stderr (`mcp-covenant: wrote ...`, `note: ...`), which `-q` silences;
/// warnings and errors are never silenced.
macro_rules! status {
    ($($t:tt)*) => {
        if !$crate::cli::quiet() {
            eprintln!($($t)*);
        }
    };
}

mod args;
mod check;
mod client;
mod completions;
mod diff_driver;
mod help;
mod ignore;
mod init;
mod lint;
mod output;
mod rules;
mod settings;
mod snapshot;
mod source;
mod upgrade;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;
use termcolor::{StandardStream, WriteColor};

pub use self::args::{
    CheckArgs, Cli, ClientCapability, ColorWhen, Command, CompletionsArgs, HelpArgs, IgnoreArgs,
    InitArgs, LintArgs, LintFormat, LiveSource, RulesArgs, RulesFormat, SnapshotArgs, UpgradeArgs,
};
use self::settings::{InitSettings, LintSettings, RulesSettings, SnapshotSettings};
use crate::config::Config;
pub use crate::config::{FailOn, LintFailOn};
use crate::error::Result;
use crate::lint::LintRules;
use crate::mcp;
use crate::notice::{Notice, Notices};
use crate::rules::Rules;
use crate::stdout::PipeTolerant;

/// `-q/--quiet` was given.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Where the command line was run, when the command moved to covenant.toml's directory
/// (a path shown in a command to paste is then made absolute).
static MOVED_FROM: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
/// `--config`, as an absolute path, for the commands a message suggests.
static EXPLICIT_CONFIG: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// `path` as a word of a command to paste where the user is.
pub(crate) fn pasteable(path: &std::path::Path) -> String {
    let shown = match (MOVED_FROM.get(), path.is_absolute()) {
        (Some(_), false) => std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    shell_word(&shown.display().to_string())
}

/// `--config FILE` as given (absolute), for the commands a message suggests.
pub(crate) fn explicit_config() -> Option<std::path::PathBuf> {
    EXPLICIT_CONFIG.get().cloned()
}

/// Where the lower layers' notices go: stderr, as it comes, each line through
/// `error::log` (secrets masked, server and repository text escaped); status lines are
/// silenced by `-q`, warnings never.
pub(crate) fn notices() -> Notices {
    Notices::new(|n| {
        let log = crate::error::log;
        match n {
            Notice::Status(s) => status!("mcp-covenant: {}", log(&s)),
            Notice::Warning(s) => warn(&s),
            Notice::Server(s) => eprintln!("server: {}", log(&s)),
            Notice::Tool(s) => eprintln!("  {}", log(&s)),
        }
    })
}

/// A `warning:` line on stderr (never silenced): secrets masked, control and bidi
/// characters escaped.
pub(crate) fn warn(line: &str) {
    eprintln!("warning: {}", crate::error::log(line));
}

/// How to run mcp-covenant again, for a command line to paste: `npx mcp-covenant` when the
/// npm launcher started it, `uv run mcp-covenant` under `uv run`, `python -m
/// mcp_covenant` from the Python launcher, else `mcp-covenant` (the launchers set
/// `MCP_COVENANT_LAUNCHER`).
pub(crate) fn invocation() -> Vec<String> {
    let launcher = std::env::var("MCP_COVENANT_LAUNCHER").unwrap_or_default();
    let words: &[&str] = match launcher.as_str() {
        "npm" => &["npx", "mcp-covenant"],
        _ if std::env::var_os("UV").is_some() => &["uv", "run", "mcp-covenant"],
        "python" => &["python", "-m", "mcp_covenant"],
        _ => &["mcp-covenant"],
    };
    words.iter().map(|w| w.to_string()).collect()
}

/// `-o -`: standard output, not a file named `-` (snapshot, check, lint).
pub(crate) fn is_stdout(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}

/// `-q/--quiet`: status lines are not printed.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Run the command line and map the outcome to an exit code.
pub fn main() -> ExitCode {
    main_with(crate::rules::TABLES)
}

/// [`main`] with other rule tables: tests/it/rule_ids.rs runs the command line with
/// tables in which ids were renamed or retired (examples/renamed-rules.rs).
#[doc(hidden)]
pub fn main_with(tables: &[(&'static str, &str)]) -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = usage_error(e, &argv).print();
            return ExitCode::from(code);
        }
    };
    QUIET.store(cli.quiet, Ordering::Relaxed);
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
    if let Command::Snapshot(SnapshotArgs { source, .. })
    | Command::Check(CheckArgs { source, .. })
    | Command::Lint(LintArgs { source, .. })
    | Command::Init(InitArgs { source, .. }) = &cli.command
    {
        crate::process_env::pass(&source.env).map_err(crate::error::Error::new)?;
    }
    // Neither reads covenant.toml: they work before there is one, or while it is broken.
    let command = match cli.command {
        Command::Help(args) => return help::run(args.topic.as_deref(), out),
        Command::Completions(args) => return completions::completions(args.shell, out),
        Command::Init(args) => {
            let rules = Rules::from_tables(tables)?;
            let lint_rules = LintRules::embedded()?;
            return init::run(
                InitSettings::resolve(args, cli.config)?,
                &rules,
                &lint_rules,
            );
        }
        command => command,
    };
    let mut command = command;
    let (found, moved_to) = enter_config_dir(cli.config.as_deref(), &mut command)?;
    let rules = Rules::from_tables(tables)?;
    let lint_rules = LintRules::embedded()?;
    let config = Config::discover(
        cli.config.as_deref().or(found.as_deref()),
        &rules,
        &lint_rules,
    )?;
    // (`--config` names the file already.)
    if cli.verbose && cli.config.is_none() {
        say_which_config(&config, found.as_deref(), moved_to.as_deref());
    }
    // covenant.toml's text is the repository's: escaped as a server's is.
    for w in &config.warnings {
        warn(w);
    }
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
            check::command(&rules, config, args, cli.config.is_some(), cli.verbose, out)
        }
        Command::GitDiffDriver(args) => diff_driver::run(&rules, &config, &args.args, out),
        Command::Lint(args) => lint::run(&lint_rules, LintSettings::resolve(args, &config)?, out),
        Command::Rules(args) => {
            let settings = RulesSettings::resolve(args, &config);
            rules::run(&rules, &lint_rules, settings, out)
        }
        Command::Ignore(args) => ignore::run(args, &config, &rules),
        Command::Upgrade(args) => upgrade::run(&rules, &config, args, cli.config.is_some(), out),
        Command::Help(_) | Command::Init(_) | Command::Completions(_) => {
            unreachable!("handled above")
        }
    }
}

/// The nearest covenant.toml, here or in a parent, when `--config` names none: the
/// command runs in its directory (so its paths and its server command mean what they
/// say there), with the command line's paths made relative to it. A server given on the
/// command line runs where the user is: the command stays here and reads the file by
/// its path (its paths are still relative to it). Returns that path (`found`) or the
/// directory entered (`moved_to`).
fn enter_config_dir(
    explicit: Option<&std::path::Path>,
    command: &mut Command,
) -> Result<(Option<std::path::PathBuf>, Option<std::path::PathBuf>)> {
    let cli_server = match &*command {
        Command::Snapshot(a) => a.source.given(),
        Command::Check(a) => a.source.given(),
        Command::Lint(a) => a.source.given(),
        _ => false,
    };
    let mut moved_to = None;
    let mut found = None;
    if explicit.is_none() {
        let cwd = std::env::current_dir().map_err(|e| {
            crate::error::Error::new(format!("cannot read the current directory: {e}"))
        })?;
        let parent = crate::config::find(&cwd, &notices()).filter(|d| *d != cwd);
        if let (Some(dir), true) = (&parent, cli_server) {
            let up = cwd
                .strip_prefix(dir)
                .map(|p| p.components().count())
                .unwrap_or(0);
            let mut rel = std::path::PathBuf::new();
            for _ in 0..up {
                rel.push("..");
            }
            found = Some(rel.join(crate::config::DEFAULT_FILE));
        } else if let Some(dir) = parent {
            std::env::set_current_dir(&dir).map_err(|e| {
                crate::error::Error::new(format!("cannot enter {}: {e}", dir.display()))
            })?;
            if let Ok(prefix) = cwd.strip_prefix(&dir) {
                settings::rebase(command, prefix);
            }
            let _ = MOVED_FROM.set(cwd);
            moved_to = Some(dir);
        }
    } else if let Some(c) = explicit {
        let _ = EXPLICIT_CONFIG.set(std::path::absolute(c).unwrap_or_else(|_| c.to_path_buf()));
    }
    Ok((found, moved_to))
}

/// `-v`: which covenant.toml applies, and where the command runs.
fn say_which_config(
    config: &Config,
    found: Option<&std::path::Path>,
    moved_to: Option<&std::path::Path>,
) {
    match (&config.file, moved_to) {
        (Some(f), Some(dir)) => eprintln!(
            "mcp-covenant: using {} (found above the current directory; paths are relative to {})",
            dir.join(f).display(),
            dir.display()
        ),
        (Some(f), None) if found.is_some() => eprintln!(
            "mcp-covenant: using {} (found above the current directory; the server given here runs here)",
            f.display()
        ),
        (Some(f), None) => eprintln!("mcp-covenant: using {}", f.display()),
        (None, _) => eprintln!(
            "mcp-covenant: no covenant.toml here or in a parent directory up to the repository's root; using the defaults"
        ),
    }
}

/// The commands that take a server command after `--`.
const TAKES_SERVER: [&str; 4] = ["snapshot", "check", "lint", "init"];

/// clap's error, reworded where a user is likely to be misled: a word where none is
/// expected, in a command that takes a server, is a server command given without `--`
/// (the error says so, with the command line to paste); an unknown flag is not
/// "passed as a value with `-- --flag`", which would hand it to the server.
fn usage_error(e: clap::Error, argv: &[OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use clap::CommandFactory;
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return e;
    };
    let arg = arg.clone();
    let words: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let command = words
        .iter()
        .skip(1)
        .find(|w| !w.starts_with('-'))
        .filter(|w| TAKES_SERVER.contains(&w.as_str()))
        .cloned();
    let mut cmd = Cli::command();
    cmd.build();
    let mut reworded = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(&cmd);
    reworded.insert(ContextKind::InvalidArg, ContextValue::String(arg.clone()));
    for kind in [ContextKind::SuggestedArg, ContextKind::Usage] {
        if let Some(v) = e.get(kind) {
            reworded.insert(kind, v.clone());
        }
    }
    let tip = match &command {
        Some(_) if !arg.starts_with('-') && !words.iter().any(|w| w == "--") => {
            // The command line as given, with `--` before the stray word.
            let at = words
                .iter()
                .skip(1)
                .position(|w| *w == arg)
                .map_or(words.len(), |i| i + 1);
            let mut fixed: Vec<String> = invocation();
            fixed.extend(words[1..at].iter().cloned());
            fixed.push("--".into());
            fixed.extend(words[at..].iter().cloned());
            format!(
                "the server's command goes after `--`, which ends mcp-covenant's own flags: `{}`",
                shell_line(&fixed)
            )
        }
        Some(sub)
            if ["json", "sarif", "markdown", "github", "junit", "human"]
                .contains(&arg.trim_start_matches('-')) =>
        {
            format!(
                "a report format is `--format {}` (`mcp-covenant {sub} --help` lists the flags)",
                arg.trim_start_matches('-')
            )
        }
        Some(sub) => format!("`mcp-covenant {sub} --help` lists its flags; a flag for the server goes after `--` and the server's program"),
        None => "`mcp-covenant --help` lists the commands and their flags".to_string(),
    };
    reworded.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
    reworded
}

/// `word` as a POSIX shell reads it back: unchanged when it has nothing special,
/// otherwise in single quotes.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// A command line as a POSIX shell reads it back.
pub(crate) fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}
