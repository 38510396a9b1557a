//! The command line (README.md, "Use"; docs/architecture.md): argument parsing, and each command's flow.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use termcolor::{ColorChoice, NoColor, StandardStream, WriteColor};

use crate::config::{Config, Server, Transport};
pub use crate::config::{FailOn, LintFailOn};
use crate::diff;
use crate::error::{Error, Result};
use crate::git::GitFile;
use crate::lint::{self, Level, LintRules};
use crate::lockfile::{self, Lockfile};
use crate::mcp;
use crate::policy;
use crate::report::{self, anchor, Format, Report};
use crate::rules::{Rules, Severity};
use crate::stdout::PipeTolerant;

const ABOUT: &str = "Semver for an MCP server's interface.

mcp-covenant snapshots what an MCP server exposes (tools, resources, resource \
templates, prompts, with their JSON Schemas) into a committed lockfile, and fails CI \
when a later change would break existing clients. Every change is classified \
breaking / minor / patch, direction-aware: a tool's inputSchema is what a caller sends, \
its outputSchema what a caller receives, and the same change has opposite blast radius \
in the two.";

const AFTER_HELP: &str =
    "Exit status: 0 nothing at or above the --fail-on level; 1 a change at or \
above it; 2 mcp-covenant could not do its job (bad arguments, unreadable lockfile or \
config, server failure, timeout), always with one `error:` line on stderr.

Examples:
  mcp-covenant snapshot -o mcp-covenant.lock -- node dist/server.js
  mcp-covenant check -- node dist/server.js
  mcp-covenant check --baseline old.lock --against new.lock --format json
  mcp-covenant check --baseline-rev origin/main     # a pull request's changes

Configuration: `mcp-covenant help config` is the covenant.toml reference (severities,
ignores that expire, several servers); `mcp-covenant init` writes a starter covenant.toml
and the GitHub workflow.";

/// The help heading of the flags that shape the report (format, output, gate).
const REPORT: &str = "Report";
/// The help heading of the flags of a live capture (the server and how to talk to it).
const CAPTURE: &str = "Live capture";

#[derive(Parser, Debug)]
#[command(
    name = "mcp-covenant",
    version,
    about = ABOUT,
    after_help = AFTER_HELP,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// When to colour the output: auto (a terminal, and NO_COLOR unset), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,

    /// The project config (default: ./covenant.toml when it exists).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Capture a server's interface into a lockfile.
    ///
    /// Re-running it on an unchanged server rewrites the same bytes (the capture time
    /// is kept), so the lockfile only shows up in a diff when the interface changed.
    Snapshot(SnapshotArgs),
    /// Compare a server (or a second lockfile) against the baseline lockfile.
    ///
    /// Prints every change, classified breaking / minor / patch, and the semver bump it
    /// requires; exits 1 when a change is at or above --fail-on.
    Check(CheckArgs),
    /// Check one surface for what makes it hard to use well (missing descriptions,
    /// invalid names, empty enums, unresolved $refs, ...).
    Lint(LintArgs),
    /// List every rule id with its default and effective severity and its source.
    ///
    /// Shows what covenant.toml changed. Give an id to see one rule in full.
    Rules(RulesArgs),
    /// Write a commented starter covenant.toml and the GitHub workflow
    /// (.github/workflows/mcp-covenant.yml). Never overwrites: when either exists,
    /// nothing is written.
    Init(InitArgs),
    /// Print help: `help COMMAND` for a command, `help config` for the covenant.toml
    /// reference.
    Help(HelpArgs),
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The command that starts the server over stdio, written into the workflow
    /// (after `--`; otherwise a placeholder to replace).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct HelpArgs {
    /// `config`, or a command: snapshot, check, lint, rules, init.
    pub topic: Option<String>,
}

#[derive(Args, Debug)]
pub struct LintArgs {
    /// Lint this lockfile instead of a live server (a path, or git:REF:PATH to read it
    /// at a git revision).
    #[arg(long, value_name = "LOCKFILE", conflicts_with_all = ["http", "command"])]
    pub from: Option<PathBuf>,

    /// Exit 1 when a finding is at or above this level [default: error, or
    /// `lint_fail_on` in covenant.toml].
    #[arg(long, help_heading = REPORT, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<LintFailOn>,

    /// Report format.
    #[arg(long, help_heading = REPORT, value_enum, default_value_t = LintFormat::Human)]
    pub format: LintFormat,

    /// Write the report to FILE (atomically) and print the human report to stdout.
    #[arg(long, help_heading = REPORT, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Lint only this [[server]] of covenant.toml (by default: all of them, when there
    /// are entries and no server is given on the command line).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,

    #[command(flatten)]
    pub source: LiveSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    Human,
    Json,
    /// A pull-request comment: counts, then a table per level.
    Markdown,
    /// GitHub Actions workflow commands, anchored to the --from lockfile's lines.
    Github,
    /// SARIF 2.1.0, anchored to the --from lockfile's lines.
    Sarif,
}

#[derive(Args, Debug)]
pub struct RulesArgs {
    /// Show only this rule id (change or lint rule).
    pub id: Option<String>,
}

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// Where to write the lockfile [default: mcp-covenant.lock, or each [[server]]'s
    /// `lockfile`].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Capture only this [[server]] of covenant.toml (by default: all of them, when
    /// there are entries and no server is given on the command line).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,

    /// Write nothing: exit 0 when the lockfile is exactly what the capture would write,
    /// 1 when it is not (or missing), listing how the server differs from it. The CI
    /// check that the committed lockfile is up to date.
    #[arg(long)]
    pub check: bool,

    #[command(flatten)]
    pub source: LiveSource,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The lockfile to compare against: a path, or git:REF:PATH to read it at a git
    /// revision (e.g. git:origin/main:mcp-covenant.lock, the base branch's)
    /// [default: mcp-covenant.lock, or each [[server]]'s `lockfile`].
    #[arg(long, value_name = "LOCKFILE")]
    pub baseline: Option<PathBuf>,

    /// Compare against this lockfile instead of a live server (a path, or git:REF:PATH).
    #[arg(long, value_name = "LOCKFILE", conflicts_with_all = ["http", "command"])]
    pub against: Option<PathBuf>,

    /// Compare the lockfile (--baseline's, or each [[server]]'s) with itself at git
    /// revision REV, e.g. origin/main: what a pull request changed, whatever it
    /// committed. No server runs. A lockfile REV does not have is new: every element is
    /// reported as added.
    #[arg(long, value_name = "REV", conflicts_with_all = ["against", "http", "command"])]
    pub baseline_rev: Option<String>,

    /// Exit 1 when a change is at or above this level [default: breaking, or `fail_on`
    /// in covenant.toml].
    #[arg(long, help_heading = REPORT, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOn>,

    /// Also list the changes covenant.toml ignored, with their reasons.
    #[arg(short, long, help_heading = REPORT)]
    pub verbose: bool,

    /// Report format.
    #[arg(long, help_heading = REPORT, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Node pairs one schema comparison may visit; past it the schema is reported as
    /// `schema.walk.truncated` (breaking), never silently passed.
    #[arg(long, default_value_t = diff::DEFAULT_WORK_BUDGET, value_name = "N")]
    pub walk_budget: usize,

    /// Write the report to FILE (atomically) and print the human report to stdout.
    #[arg(long, help_heading = REPORT, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Check only this [[server]] of covenant.toml (by default: all of them, when there
    /// are entries and no server is given on the command line).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,

    #[command(flatten)]
    pub source: LiveSource,
}

/// Where a live capture comes from: a command over stdio, or a Streamable HTTP URL.
#[derive(Args, Debug)]
#[command(next_help_heading = CAPTURE)]
pub struct LiveSource {
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub http: Option<String>,

    /// An HTTP header for every request, `Name: value` (repeatable). Also read from
    /// MCP_COVENANT_HEADER_<NAME> variables (`_` in NAME becomes `-`). Never logged or
    /// written to the lockfile.
    #[arg(long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Seconds the whole capture may take, server start-up included (more than 0, at
    /// most 86400).
    #[arg(long, default_value = "30", value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: Duration,

    /// Protocol revision: auto (probe server/discover, fall back to the initialize
    /// handshake), or one of 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05.
    #[arg(long, default_value = "auto", value_name = "VERSION", value_parser = parse_protocol)]
    pub protocol: mcp::Protocol,

    /// Client capabilities to offer, comma-separated. None by default, so the lockfile
    /// records what a minimal client sees (some servers list more tools to richer
    /// clients).
    #[arg(long, value_name = "LIST", value_enum, value_delimiter = ',')]
    pub client_capabilities: Vec<ClientCapability>,

    /// Pass the server's stderr through as it runs (by default it is shown only when
    /// the capture fails).
    #[arg(long)]
    pub show_server_stderr: bool,

    /// The command that starts the server on stdio (after `--`; run without a shell).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// A client capability `--client-capabilities` may offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ClientCapability {
    Roots,
    Sampling,
    Elicitation,
}

impl ClientCapability {
    /// The capability's name in the protocol.
    pub fn word(self) -> &'static str {
        match self {
            ClientCapability::Roots => "roots",
            ClientCapability::Sampling => "sampling",
            ClientCapability::Elicitation => "elicitation",
        }
    }
}

/// The longest `--timeout`: a day.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// `--timeout`: seconds, more than 0 and at most a day.
fn parse_timeout(s: &str) -> std::result::Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= MAX_TIMEOUT_SECS) {
        return Err(format!(
            "the timeout must be more than 0 and at most {MAX_TIMEOUT_SECS} seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `--protocol`: auto or a revision this client speaks.
fn parse_protocol(s: &str) -> std::result::Result<mcp::Protocol, String> {
    mcp::Protocol::parse(s).map_err(|e| e.to_string())
}

impl LiveSource {
    /// A server was given on the command line (`-- CMD` or `--http`).
    fn given(&self) -> bool {
        self.http.is_some() || !self.command.is_empty()
    }
}

/// Run the command line and map the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // A reader that closes early (`| head`) does not change the verdict.
    let mut stdout = PipeTolerant::new(StandardStream::stdout(color_choice(cli.color)));
    match run(cli, &mut stdout) {
        Ok(code) => ExitCode::from(code),
        // One `error:` line: the signal handler may have claimed it already.
        Err(_) if mcp::stdio::interrupted() => {
            if mcp::claim_error_line() {
                eprintln!("error: interrupted; the server was stopped");
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

fn color_choice(when: ColorWhen) -> ColorChoice {
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

/// Run a parsed command line, writing reports to `out`. Returns the exit code (0 or 1);
/// errors are exit 2.
pub fn run(cli: Cli, out: &mut dyn WriteColor) -> Result<u8> {
    // Neither reads covenant.toml: they work before there is one, or while it is broken.
    match &cli.command {
        Command::Help(args) => return help(args.topic.as_deref(), out),
        Command::Init(args) => {
            let config = cli
                .config
                .clone()
                .unwrap_or_else(|| PathBuf::from(crate::config::DEFAULT_FILE));
            let command = (!args.command.is_empty()).then(|| args.command.join(" "));
            for path in crate::reference::init(Path::new(""), &config, command.as_deref())? {
                eprintln!("mcp-covenant: wrote {}", path.display());
            }
            return Ok(0);
        }
        _ => {}
    }
    let mut rules = Rules::embedded()?;
    let mut lint_rules = LintRules::embedded()?;
    let config = Config::discover(cli.config.as_deref(), &rules, &lint_rules)?;
    rules.set_overrides(config.severity.clone());
    lint_rules.set_overrides(config.lint.clone());
    match cli.command {
        Command::Snapshot(args) => snapshot(&rules, &config, args, out),
        Command::Check(args) => check(&rules, &config, args, out),
        Command::Lint(args) => run_lint(&lint_rules, &config, args, out),
        Command::Rules(args) => list_rules(&rules, &lint_rules, &config, args, out),
        Command::Help(_) | Command::Init(_) => unreachable!("handled above"),
    }
}

/// `help [TOPIC]`: the main help, a command's, or the covenant.toml reference.
fn help(topic: Option<&str>, out: &mut dyn WriteColor) -> Result<u8> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build();
    let text = match topic {
        None => cmd.render_long_help().to_string(),
        Some("config") => crate::reference::CONFIG_REFERENCE.to_string(),
        Some(name) => match cmd.find_subcommand_mut(name) {
            Some(sub) => sub.render_long_help().to_string(),
            None => {
                let mut topics: Vec<&str> = vec!["config"];
                let names: Vec<String> = cmd
                    .get_subcommands()
                    .map(|c| c.get_name().to_string())
                    .collect();
                topics.extend(names.iter().map(String::as_str));
                let hint = crate::config::suggest(name, &topics)
                    .map(|s| format!("did you mean `{s}`? "))
                    .unwrap_or_default();
                return Err(Error::new(format!(
                    "no help topic `{name}`; {hint}topics: {}",
                    topics.join(", ")
                )));
            }
        },
    };
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::new(format!("cannot write: {e}")))?;
    Ok(0)
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

/// Run `each` on every server, printing a failure as `error: server NAME: ...` and
/// going on; the exit code is the worst.
fn for_each_server<T>(
    servers: &[&Server],
    mut each: impl FnMut(&Server) -> Result<T>,
) -> (u8, Vec<(String, Option<T>)>) {
    let mut code = 0;
    let mut results = Vec::new();
    for s in servers {
        match each(s) {
            Ok(t) => results.push((s.name.clone(), Some(t))),
            Err(e) => {
                eprintln!("error: server {}: {e}", s.name);
                code = 2;
                results.push((s.name.clone(), None));
            }
        }
    }
    (code, results)
}

fn snapshot(
    rules: &Rules,
    config: &Config,
    args: SnapshotArgs,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let servers = configured(config, args.server.as_deref(), args.source.given())?;
    let Some(servers) = servers else {
        let output = args
            .output
            .unwrap_or_else(|| PathBuf::from(DEFAULT_LOCKFILE));
        if args.check {
            return snapshot_check(rules, config, &Live::Cli, &args.source, &output, None, out);
        }
        return snapshot_one(&Live::Cli, &args.source, &output);
    };
    if args.output.is_some() && servers.len() > 1 {
        return Err(Error::new(
            "-o/--output names one lockfile, and covenant.toml has several [[server]] entries (each writes its `lockfile`); pick one with --server NAME",
        ));
    }
    let heading = servers.len() > 1;
    let (mut code, codes) = for_each_server(&servers, |s| {
        let output = args.output.as_deref().unwrap_or(&s.lockfile);
        if args.check {
            let name = heading.then_some(s.name.as_str());
            snapshot_check(
                rules,
                config,
                &Live::Server(s),
                &args.source,
                output,
                name,
                out,
            )
        } else {
            snapshot_one(&Live::Server(s), &args.source, output)
        }
    });
    for (_, c) in codes {
        code = code.max(c.unwrap_or(2));
    }
    Ok(code)
}

/// `snapshot --check`: is `output` exactly what capturing `live` would write? Never
/// writes. The differences are the `check` report of the file against the capture.
fn snapshot_check(
    rules: &Rules,
    config: &Config,
    live: &Live<'_>,
    opts: &LiveSource,
    output: &Path,
    heading: Option<&str>,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let mut lock = capture(live, opts)?;
    let old = match lockfile::read_input(output, "lockfile") {
        Ok(bytes) => bytes,
        Err(_) if std::fs::symlink_metadata(output).is_err() => {
            eprintln!(
                "mcp-covenant: {} does not exist; create it with `mcp-covenant snapshot` and commit it",
                output.display()
            );
            return Ok(1);
        }
        Err(e) => return Err(e),
    };
    let previous = Lockfile::parse(&old, &output.display().to_string())?;
    // Writing keeps the file's capture time when nothing else changed.
    lock.captured_at_unix = previous.captured_at_unix;
    if lock.to_text().as_bytes() == old.as_slice() {
        eprintln!("mcp-covenant: {} is up to date", output.display());
        return Ok(0);
    }
    eprintln!(
        "mcp-covenant: {} is not up to date with the server; run `mcp-covenant snapshot` and commit it",
        output.display()
    );
    let changes = diff::diff(rules, &previous.surface, &lock.surface);
    let versions = (
        previous.server.version.as_deref(),
        lock.server.version.as_deref(),
    );
    let outcome = policy::apply(rules, config, changes, versions, Some(Severity::Breaking));
    let report = Report::new(rules, outcome, output.display().to_string());
    let io_err = |e: std::io::Error| Error::new(format!("cannot write the report: {e}"));
    if let Some(name) = heading {
        writeln!(out, "== server {name} ({})", output.display()).map_err(io_err)?;
    }
    if report.changes.is_empty() && report.ignored.is_empty() {
        writeln!(
            out,
            "no interface change: the file differs in form (server information, or not canonical)"
        )
        .map_err(io_err)?;
    } else {
        report::render(&report, Format::Human, out).map_err(io_err)?;
    }
    out.flush().map_err(io_err)?;
    Ok(1)
}

fn snapshot_one(live: &Live<'_>, opts: &LiveSource, output: &Path) -> Result<u8> {
    let mut lock = capture(live, opts)?;
    lock.write(output)?;
    eprintln!(
        "mcp-covenant: wrote {} ({} tool(s), {} resource(s), {} template(s), {} prompt(s))",
        output.display(),
        lock.surface.tools.len(),
        lock.surface.resources.len(),
        lock.surface.resource_templates.len(),
        lock.surface.prompts.len()
    );
    Ok(0)
}

const DEFAULT_LOCKFILE: &str = "mcp-covenant.lock";

/// The server to capture: the one the command line gives, or a `[[server]]`.
enum Live<'a> {
    Cli,
    Server(&'a Server),
}

/// Capture `live`, with the capture options (timeout, protocol, ...) of `source`.
fn capture(live: &Live<'_>, source: &LiveSource) -> Result<Lockfile> {
    let endpoint = match live {
        Live::Server(s) => match &s.transport {
            Transport::Command(argv) => mcp::Endpoint::Stdio(argv.clone()),
            Transport::Http {
                url,
                headers_from_env,
            } => {
                let mut headers = Vec::new();
                for (name, var) in headers_from_env {
                    let value = std::env::var(var).map_err(|_| {
                        Error::new(format!(
                            "environment variable {var} (for the {name} header) is not set"
                        ))
                    })?;
                    headers.push((name.clone(), value));
                }
                mcp::Endpoint::Http {
                    url: url.clone(),
                    headers,
                }
            }
        },
        Live::Cli => match (&source.http, source.command.is_empty()) {
            (Some(url), _) => mcp::Endpoint::Http {
                url: url.clone(),
                headers: headers(&source.headers)?,
            },
            (None, false) => mcp::Endpoint::Stdio(source.command.clone()),
            (None, true) => {
                return Err(Error::new(
                    "no server to capture: give the command after `--` (e.g. `-- node server.js`) or --http URL, or add [[server]] entries to covenant.toml",
                ))
            }
        },
    };
    let opts = mcp::CaptureOptions {
        endpoint,
        timeout: source.timeout,
        protocol: source.protocol.clone(),
        client_capabilities: source
            .client_capabilities
            .iter()
            .map(|c| c.word().to_string())
            .collect(),
        show_server_stderr: source.show_server_stderr,
    };
    let captured = mcp::capture(&opts)?;
    Ok(Lockfile::new(
        captured.server,
        captured.surface,
        lockfile::capture_time()?,
    ))
}

/// `--header` values plus `MCP_COVENANT_HEADER_*` variables, as (name, value) pairs.
fn headers(flags: &[String]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (key, value) in std::env::vars() {
        if let Some(name) = key.strip_prefix("MCP_COVENANT_HEADER_") {
            if !name.is_empty() {
                out.push((name.replace('_', "-"), value));
            }
        }
    }
    for h in flags {
        match h.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => {
                out.push((name.trim().to_string(), value.trim().to_string()))
            }
            _ => {
                return Err(Error::new(
                    "--header must look like `Name: value` (the value is not shown here)",
                ))
            }
        }
    }
    Ok(out)
}

/// Where a lockfile is read from: a file, or a file at a git revision (`git:REF:PATH`).
/// A file whose name starts with `git:` is reached as `./git:...`.
enum LockSource {
    File(PathBuf),
    Git(GitFile),
    /// A file the revision does not have (`--baseline-rev` on a new lockfile): empty.
    Absent(GitFile),
}

impl LockSource {
    fn from_arg(arg: &Path) -> Result<LockSource> {
        match arg.to_str().and_then(GitFile::parse) {
            Some(git) => git.map(LockSource::Git),
            None => Ok(LockSource::File(arg.to_path_buf())),
        }
    }

    /// The baseline `--baseline-rev REV` gives `lockfile`: git:REV:./LOCKFILE, or an
    /// empty one when REV has no such file.
    fn at_revision(rev: &str, lockfile: &Path) -> Result<LockSource> {
        let path = lockfile
            .to_str()
            .filter(|p| !lockfile.is_absolute() && !p.starts_with("git:"));
        let Some(path) = path else {
            return Err(Error::new(format!(
                "--baseline-rev reads {} at a revision, so it must be a relative path",
                lockfile.display()
            )));
        };
        let rel = if path.starts_with("./") || path.starts_with("../") {
            path.to_string()
        } else {
            format!("./{path}")
        };
        let file = match GitFile::parse(&format!("git:{rev}:{rel}")) {
            Some(Ok(f)) if f.rev == rev => f,
            Some(Err(e)) => return Err(Error::new(format!("--baseline-rev: {e}"))),
            _ => {
                return Err(Error::new(format!(
                    "--baseline-rev `{}` is not a revision (it cannot contain `:`)",
                    rev.escape_debug()
                )))
            }
        };
        if file.exists()? {
            Ok(LockSource::Git(file))
        } else {
            // A warning, not a note: a lockfile that moved looks new, and would hide
            // what its server removed.
            eprintln!(
                "warning: {} is not in revision {rev}: a new lockfile, every element is new (if it moved, compare with --baseline git:{rev}:OLD_PATH --against {})",
                lockfile.display(),
                lockfile.display()
            );
            Ok(LockSource::Absent(file))
        }
    }

    /// As the user wrote it, for messages.
    fn name(&self) -> String {
        match self {
            LockSource::File(p) => p.display().to_string(),
            LockSource::Git(g) | LockSource::Absent(g) => g.to_string(),
        }
    }

    /// The path reports point at (SARIF `artifactLocation.uri`, annotations): for
    /// `git:REF:PATH`, PATH, which the pull request holds too.
    fn uri(&self) -> String {
        match self {
            LockSource::File(p) => anchor::uri_for(p),
            LockSource::Git(g) | LockSource::Absent(g) => anchor::uri_for(Path::new(&g.path)),
        }
    }

    /// The file on disk whose bytes should be the canonical text (anchoring warns when
    /// not). A git revision has none: the name is not a path that exists.
    fn disk_path(&self) -> PathBuf {
        match self {
            LockSource::File(p) => p.clone(),
            LockSource::Git(g) | LockSource::Absent(g) => PathBuf::from(g.to_string()),
        }
    }

    fn bytes(&self) -> Result<Vec<u8>> {
        match self {
            LockSource::File(p) => lockfile::read_input(p, "lockfile"),
            LockSource::Git(g) => g.read(),
            LockSource::Absent(_) => Ok(empty_lockfile().to_text().into_bytes()),
        }
    }

    fn read(&self) -> Result<Lockfile> {
        match self {
            LockSource::File(p) => Lockfile::read(p),
            LockSource::Git(g) => Lockfile::parse(&g.read()?, &g.to_string()),
            LockSource::Absent(_) => Ok(empty_lockfile()),
        }
    }

    fn read_lenient(&self) -> Result<Lockfile> {
        match self {
            LockSource::File(p) => Lockfile::read_lenient(p),
            LockSource::Git(g) => Lockfile::parse_lenient(&g.read()?, &g.to_string()),
            LockSource::Absent(_) => Ok(empty_lockfile()),
        }
    }

    /// Read as the baseline: a missing file says how to create one.
    fn read_baseline(&self) -> Result<Lockfile> {
        match self {
            LockSource::File(p) if !p.exists() => Err(missing_baseline(p)),
            _ => self.read(),
        }
    }

    fn baseline_bytes(&self) -> Result<Vec<u8>> {
        match self {
            LockSource::File(p) if !p.exists() => Err(missing_baseline(p)),
            _ => self.bytes(),
        }
    }
}

fn empty_lockfile() -> Lockfile {
    Lockfile::new(Default::default(), Default::default(), 0)
}

fn missing_baseline(path: &Path) -> Error {
    Error::new(format!(
        "baseline lockfile {} not found; create it with `mcp-covenant snapshot -o {} -- <server command>` and commit it",
        path.display(),
        path.display()
    ))
}

/// The changes, the two servers' declarations, and (for JUnit) every element subject.
struct Compared {
    changes: Vec<diff::Change>,
    versions: (Option<String>, Option<String>),
    subjects: Vec<String>,
    /// Both lockfiles in full, when the format points at their lines and the fast
    /// path could not count them.
    files: Option<(Lockfile, Lockfile)>,
    /// The line maps of both files, counted by the fast path.
    lines: Option<(lockfile::LineMap, lockfile::LineMap)>,
}

fn compare(
    rules: &Rules,
    args: &CheckArgs,
    base: &LockSource,
    against: Option<&LockSource>,
    live: &Live<'_>,
) -> Result<Compared> {
    // Two files: the fast path, which never builds the elements that are
    // byte-identical on both sides. The formats that point at lines count them in the
    // files' bytes; a file that is not canonical takes the full parse below, whose
    // lines are those of the canonical text (and which says so).
    if let Some(against) = against {
        let (a, b) = std::thread::scope(|s| {
            let b = s.spawn(|| against.bytes());
            let a = base.baseline_bytes();
            let b = b
                .join()
                .unwrap_or_else(|_| Err(Error::new("reading the lockfile failed")));
            Ok::<_, Error>((a?, b?))
        })?;
        let (a, b) = ((&a[..], &base.name()[..]), (&b[..], &against.name()[..]));
        let c = if args.format.needs_anchors() {
            diff::fast::compare_files_with_lines(rules, a, b, args.walk_budget)?
        } else {
            diff::fast::compare_files(rules, a, b, args.walk_budget)?
        };
        if !args.format.needs_anchors() || c.lines.is_some() {
            return Ok(Compared {
                changes: c.changes,
                versions: (c.servers.0.version, c.servers.1.version),
                subjects: c.subjects,
                files: None,
                lines: c.lines,
            });
        }
    }
    let (baseline, current) = match against {
        // Both files: read them on two threads.
        Some(against) => std::thread::scope(|s| {
            let b = s.spawn(|| against.read());
            let a = base.read_baseline();
            let b = b
                .join()
                .unwrap_or_else(|_| Err(Error::new("reading the lockfile failed")));
            Ok::<_, Error>((a?, b?))
        })?,
        None => (base.read_baseline()?, capture(live, &args.source)?),
    };
    let mut changes =
        diff::diff_with_budget(rules, &baseline.surface, &current.surface, args.walk_budget);
    changes.extend(diff::diff_server(rules, &baseline.server, &current.server));
    let mut subjects = std::collections::BTreeSet::new();
    for surface in [&baseline.surface, &current.surface] {
        for kind in lockfile::Kind::ALL {
            for e in surface.list(kind) {
                subjects.insert(format!(
                    "{}:{}",
                    kind.word(),
                    lockfile::key_of(e, kind.key_field())
                ));
            }
        }
    }
    Ok(Compared {
        changes,
        versions: (
            baseline.server.version.clone(),
            current.server.version.clone(),
        ),
        subjects: subjects.into_iter().collect(),
        files: Some((baseline, current)),
        lines: None,
    })
}

/// What one comparison of `check` reads: the baseline, and a lockfile or a live server.
struct CheckTarget<'a> {
    base: LockSource,
    against: Option<LockSource>,
    live: Live<'a>,
}

fn check(rules: &Rules, config: &Config, args: CheckArgs, out: &mut dyn WriteColor) -> Result<u8> {
    config.warn_expired();
    let fail_on = match (args.fail_on, &config.fail_on) {
        (Some(f), _) => f,
        (None, Some(f)) => *f,
        (None, None) => FailOn::Breaking,
    };
    let cli_source = args.against.is_some() || args.source.given();
    let servers = configured(config, args.server.as_deref(), cli_source)?;
    // With --baseline-rev: the lockfile at REV against the lockfile, no server.
    fn target<'a>(args: &CheckArgs, lockfile: &Path, live: Live<'a>) -> Result<CheckTarget<'a>> {
        Ok(match &args.baseline_rev {
            Some(rev) => CheckTarget {
                base: LockSource::at_revision(rev, lockfile)?,
                against: Some(LockSource::File(lockfile.to_path_buf())),
                live,
            },
            None => CheckTarget {
                base: LockSource::from_arg(lockfile)?,
                against: args
                    .against
                    .as_deref()
                    .map(LockSource::from_arg)
                    .transpose()?,
                live,
            },
        })
    }
    // Servers REV configured and this covenant.toml no longer does: everything they
    // served is gone for their clients.
    let removed = match (&args.baseline_rev, &servers) {
        (Some(rev), Some(_)) if args.server.is_none() => removed_servers(rules, config, rev)?,
        _ => Vec::new(),
    };
    let single = match servers.as_deref() {
        None => Some((Live::Cli, PathBuf::from(DEFAULT_LOCKFILE))),
        Some([one]) if removed.is_empty() => Some((Live::Server(one), one.lockfile.clone())),
        Some(_) => None,
    };
    if let Some((live, default_baseline)) = single {
        let baseline = args.baseline.clone().unwrap_or(default_baseline);
        let target = target(&args, &baseline, live)?;
        let report = check_one(rules, config, &args, &target, fail_on)?;
        emit(
            out,
            args.output.as_deref(),
            &|o| report::render(&report, args.format, o),
            &|o| report::render(&report, Format::Human, o),
        )?;
        return Ok(u8::from(report.fails));
    }
    let servers = servers.unwrap_or_default();
    if args.baseline.is_some() {
        return Err(Error::new(
            "--baseline names one lockfile, and covenant.toml has several [[server]] entries (each compares with its `lockfile`); pick one with --server NAME",
        ));
    }
    let mut servers = servers;
    servers.extend(removed.iter());
    let (mut code, reports) = for_each_server(&servers, |s| {
        let mut target = target(&args, &s.lockfile, Live::Server(s))?;
        if removed.iter().any(|r| std::ptr::eq(r, s)) {
            // Compared with nothing: every element is removed.
            if let LockSource::Git(g) | LockSource::Absent(g) = &target.base {
                target.against = Some(LockSource::Absent(g.clone()));
            }
        }
        check_one(rules, config, &args, &target, fail_on)
    });
    for (_, r) in &reports {
        if let Some(r) = r {
            code = code.max(u8::from(r.fails));
        }
    }
    let grouped: Vec<(&Server, Option<&Report<'_>>)> = servers
        .iter()
        .zip(&reports)
        .map(|(s, (_, r))| (*s, r.as_ref()))
        .collect();
    emit(
        out,
        args.output.as_deref(),
        &|o| render_grouped(&grouped, args.format, o),
        &|o| render_grouped(&grouped, Format::Human, o),
    )?;
    Ok(code)
}

/// The `[[server]]` entries of covenant.toml at revision `rev` that the current one no
/// longer has (by name), with their lockfiles; a warning names each. A covenant.toml REV
/// lacks, or cannot read, gives none (the latter with a warning).
fn removed_servers(rules: &Rules, config: &Config, rev: &str) -> Result<Vec<Server>> {
    let path = config
        .file
        .clone()
        .unwrap_or_else(|| PathBuf::from(crate::config::DEFAULT_FILE));
    let Some(rel) = path.to_str().filter(|_| path.is_relative()) else {
        return Ok(Vec::new());
    };
    let rel = if rel.starts_with("./") || rel.starts_with("../") {
        rel.to_string()
    } else {
        format!("./{rel}")
    };
    let Some(Ok(file)) = GitFile::parse(&format!("git:{rev}:{rel}")) else {
        return Ok(Vec::new());
    };
    if !file.exists()? {
        return Ok(Vec::new());
    }
    let parsed = file.read().and_then(|bytes| {
        let text = String::from_utf8_lossy(&bytes);
        Config::parse(&text, &file.to_string(), rules, &LintRules::embedded()?)
    });
    let old = match parsed {
        Ok(c) => c,
        Err(e) => {
            eprintln!("warning: cannot read the [[server]] entries of {file} ({e}); servers it has and this covenant.toml lacks are not compared");
            return Ok(Vec::new());
        }
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let mut removed = Vec::new();
    for mut s in old.servers {
        if config.servers.iter().any(|c| c.name == s.name) {
            continue;
        }
        eprintln!(
            "warning: server {} is in {file} and not in {}: everything it served is reported as removed",
            s.name,
            path.display()
        );
        if let Some(dir) = dir.filter(|_| s.lockfile.is_relative()) {
            s.lockfile = dir.join(&s.lockfile);
        }
        removed.push(s);
    }
    Ok(removed)
}

/// Compare one target and build its report (versions verified, anchors when the
/// format points at lines).
fn check_one<'r>(
    rules: &'r Rules,
    config: &Config,
    args: &CheckArgs,
    target: &CheckTarget<'_>,
    fail_on: FailOn,
) -> Result<Report<'r>> {
    let (base, against) = (&target.base, target.against.as_ref());
    let compared = compare(rules, args, base, against, &target.live)?;
    let versions = (
        compared.versions.0.as_deref(),
        compared.versions.1.as_deref(),
    );
    let outcome = policy::apply(rules, config, compared.changes, versions, fail_on.level());
    let mut report = Report::new(rules, outcome, base.name());
    report.verbose = args.verbose;
    if let (true, Some((base_lines, cur_lines))) = (args.format.needs_anchors(), &compared.lines) {
        let uris = (base.uri(), against.map(LockSource::uri));
        report.anchors = anchor::anchors_in(
            &report.changes,
            (base_lines, &uris.0),
            uris.1.as_deref().map(|uri| (cur_lines, uri)),
        );
    } else if let (true, Some((baseline, current))) = (args.format.needs_anchors(), &compared.files)
    {
        let (base_disk, against_disk) = (base.disk_path(), against.map(LockSource::disk_path));
        let files = anchor::Files {
            baseline: (baseline, base.uri(), &base_disk),
            current: against
                .zip(against_disk.as_deref())
                .map(|(a, disk)| (current, a.uri(), disk)),
        };
        report.anchors = anchor::anchors(&report.changes, &files);
    }
    report.elements = compared.subjects;
    Ok(report)
}

/// Several servers' reports as one document: the human and markdown reports under a
/// heading per server, GitHub annotations one after the other (each names its
/// lockfile), JSON as `{"covenant_version", "servers": [{"name", "lockfile", "report"}]}`,
/// SARIF as one run per server (`automationDetails.id` = `mcp-covenant/NAME/`), JUnit as
/// one testsuite per server. A server that failed (its `error:` line is on stderr) is
/// listed with `"error": true` / as failed.
fn render_grouped(
    reports: &[(&Server, Option<&Report<'_>>)],
    format: Format,
    out: &mut dyn WriteColor,
) -> std::io::Result<()> {
    let text = |r: &Report<'_>, f: Format| -> std::io::Result<String> {
        let mut buf = NoColor::new(Vec::new());
        report::render(r, f, &mut buf)?;
        Ok(String::from_utf8_lossy(&buf.into_inner()).into_owned())
    };
    match format {
        Format::Human | Format::Markdown | Format::Github => {
            for (i, (server, report)) in reports.iter().enumerate() {
                let heading = match format {
                    Format::Human => format!(
                        "{}== server {} ({})\n",
                        if i > 0 { "\n" } else { "" },
                        server.name,
                        server.lockfile.display()
                    ),
                    Format::Markdown => format!("## Server `{}`\n\n", server.name),
                    _ => String::new(),
                };
                out.set_color(termcolor::ColorSpec::new().set_bold(true))?;
                out.write_all(heading.as_bytes())?;
                out.reset()?;
                match report {
                    // One comment: the servers share GitHub's size limit.
                    Some(r) if format == Format::Markdown => out.write_all(
                        report::markdown_within(r, report::MARKDOWN_BUDGET / reports.len())
                            .as_bytes(),
                    )?,
                    Some(r) => report::render(r, format, out)?,
                    None if format == Format::Github => {}
                    None => out.write_all(b"could not be checked: see the error above\n\n")?,
                }
            }
        }
        Format::Json => {
            let mut doc = format!(
                "{{\n  \"covenant_version\": {},\n  \"servers\": [",
                serde_json::json!(lockfile::COVENANT_VERSION)
            );
            for (i, (server, report)) in reports.iter().enumerate() {
                doc.push_str(if i > 0 { ",\n    " } else { "\n    " });
                let name = serde_json::json!(server.name);
                let lock = serde_json::json!(server.lockfile.display().to_string());
                match report {
                    Some(r) => doc.push_str(&format!(
                        "{{ \"name\": {name}, \"lockfile\": {lock}, \"report\": {} }}",
                        text(r, format)?.trim_end()
                    )),
                    None => doc.push_str(&format!(
                        "{{ \"name\": {name}, \"lockfile\": {lock}, \"error\": true }}"
                    )),
                }
            }
            doc.push_str("\n  ]\n}\n");
            out.write_all(doc.as_bytes())?;
        }
        Format::Sarif => {
            let mut docs = Vec::new();
            for (server, report) in reports {
                if let Some(r) = report {
                    docs.push((server.name.clone(), text(r, format)?));
                }
            }
            out.write_all(merge_sarif(docs.into_iter())?.as_bytes())?;
        }
        Format::Junit => {
            let (mut tests, mut failures, mut suites) = (0usize, 0usize, String::new());
            for (server, report) in reports {
                let Some(r) = report else {
                    tests += 1;
                    failures += 1;
                    suites.push_str(&format!(
                        "  <testsuite name=\"mcp-covenant check {0}\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">\n    <testcase classname=\"mcp-covenant.server\" name=\"{0}\">\n      <failure type=\"error\" message=\"could not be checked\">could not be checked</failure>\n    </testcase>\n  </testsuite>\n",
                        server.name
                    ));
                    continue;
                };
                let one = text(r, format)?;
                let attr = |s: &str, key: &str| -> usize {
                    s.split_once(&format!(" {key}=\""))
                        .and_then(|(_, rest)| rest.split('"').next()?.parse().ok())
                        .unwrap_or(0)
                };
                let (Some(start), Some(end)) =
                    (one.find("  <testsuite "), one.rfind("</testsuites>"))
                else {
                    continue;
                };
                let suite = &one[start..end];
                tests += attr(suite, "tests");
                failures += attr(suite, "failures");
                suites.push_str(&suite.replacen(
                    "name=\"mcp-covenant check\"",
                    &format!("name=\"mcp-covenant check {}\"", server.name),
                    1,
                ));
            }
            out.write_all(
                format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mcp-covenant\" tests=\"{tests}\" failures=\"{failures}\">\n{suites}</testsuites>\n"
                )
                .as_bytes(),
            )?;
        }
    }
    Ok(())
}

/// Write `render`'s output to --output (atomically, no colour) and the human form to
/// `out`, or `render` to `out` when there is no --output.
fn emit(
    out: &mut dyn WriteColor,
    output: Option<&Path>,
    render: &dyn Fn(&mut dyn WriteColor) -> std::io::Result<()>,
    human: &dyn Fn(&mut dyn WriteColor) -> std::io::Result<()>,
) -> Result<()> {
    let io_err = |e: std::io::Error| Error::new(format!("cannot write the report: {e}"));
    match output {
        Some(path) => {
            let mut buf = NoColor::new(Vec::new());
            render(&mut buf).map_err(io_err)?;
            lockfile::write_report(path, &buf.into_inner())?;
            human(out).map_err(io_err)?;
        }
        None => render(out).map_err(io_err)?,
    }
    out.flush().map_err(io_err)
}

fn run_lint(
    rules: &LintRules,
    config: &Config,
    args: LintArgs,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let fail_on = match (args.fail_on, &config.lint_fail_on) {
        (Some(f), _) => f,
        (None, Some(f)) => *f,
        (None, None) => LintFailOn::Error,
    };
    let fails = |findings: &[lint::Finding]| -> bool {
        let threshold = match fail_on {
            LintFailOn::Error => Level::Error,
            LintFailOn::Warning => Level::Warning,
            LintFailOn::Info => Level::Info,
            LintFailOn::Never => return false,
        };
        findings.iter().any(|f| f.level <= threshold)
    };
    let cli_source = args.from.is_some() || args.source.given();
    let servers = configured(config, args.server.as_deref(), cli_source)?;
    let single = match servers.as_deref() {
        None => Some(Live::Cli),
        Some([one]) => Some(Live::Server(one)),
        Some(_) => None,
    };
    if let Some(live) = single {
        let from = args.from.as_deref().map(LockSource::from_arg).transpose()?;
        let lock = match &from {
            Some(source) => source.read_lenient()?,
            None => capture(&live, &args.source)?,
        };
        let findings = lint::lint_lockfile(rules, &lock);
        let anchors = match (&from, args.format) {
            (Some(source), LintFormat::Github | LintFormat::Sarif) => {
                anchor::lint_anchors(&lock, Path::new(&source.uri()), &findings)
            }
            _ => Vec::new(),
        };
        let text = lint_text(rules, &findings, &anchors, args.format);
        let human = |o: &mut dyn WriteColor| report::lint::write_human(&findings, o);
        match text {
            None => emit(out, args.output.as_deref(), &human, &human)?,
            Some(text) => emit(
                out,
                args.output.as_deref(),
                &|o| o.write_all(text.as_bytes()),
                &human,
            )?,
        }
        return Ok(u8::from(fails(&findings)));
    }
    let servers = servers.unwrap_or_default();
    let (mut code, captured) =
        for_each_server(&servers, |s| capture(&Live::Server(s), &args.source));
    let mut groups: Vec<(String, Option<Vec<lint::Finding>>)> = captured
        .iter()
        .map(|(name, lock)| {
            let findings = lock.as_ref().map(|l| lint::lint_lockfile(rules, l));
            (format!("server {name}"), findings)
        })
        .collect();
    let surfaces: Vec<(&str, &lockfile::Surface)> = captured
        .iter()
        .filter_map(|(name, lock)| Some((name.as_str(), &lock.as_ref()?.surface)))
        .collect();
    groups.push((
        "across servers".to_string(),
        Some(lint::collisions(rules, &surfaces)),
    ));
    for (_, findings) in &groups {
        if let Some(f) = findings {
            code = code.max(u8::from(fails(f)));
        }
    }
    emit(
        out,
        args.output.as_deref(),
        &|o| render_lint_grouped(rules, &groups, args.format, o),
        &|o| render_lint_grouped(rules, &groups, LintFormat::Human, o),
    )?;
    Ok(code)
}

/// A lint report in `format` as text (`None`: human, written with colour instead).
fn lint_text(
    rules: &LintRules,
    findings: &[lint::Finding],
    anchors: &[anchor::Anchor],
    format: LintFormat,
) -> Option<String> {
    match format {
        LintFormat::Human => None,
        LintFormat::Json => Some(report::lint::to_json(findings)),
        LintFormat::Markdown => Some(report::lint::to_markdown(findings)),
        LintFormat::Github => Some(report::lint::to_github(findings, anchors)),
        LintFormat::Sarif => Some(report::sarif::lint(rules, findings, anchors)),
    }
}

/// Several servers' lint reports, plus the findings across them (name collisions): a
/// heading per group (human, markdown), one after the other (github), `{"groups":
/// [{"name", "report"}]}` (json), one SARIF run per group.
fn render_lint_grouped(
    rules: &LintRules,
    groups: &[(String, Option<Vec<lint::Finding>>)],
    format: LintFormat,
    out: &mut dyn WriteColor,
) -> std::io::Result<()> {
    match format {
        LintFormat::Human | LintFormat::Markdown | LintFormat::Github => {
            for (i, (name, findings)) in groups.iter().enumerate() {
                let heading = match format {
                    LintFormat::Human => {
                        format!("{}== {name}\n", if i > 0 { "\n" } else { "" })
                    }
                    LintFormat::Markdown => format!("## {name}\n\n"),
                    _ => String::new(),
                };
                out.set_color(termcolor::ColorSpec::new().set_bold(true))?;
                out.write_all(heading.as_bytes())?;
                out.reset()?;
                match (
                    findings,
                    lint_text(rules, findings.as_deref().unwrap_or(&[]), &[], format),
                ) {
                    (None, _) if format == LintFormat::Github => {}
                    (None, _) => out.write_all(b"could not be linted: see the error above\n")?,
                    (Some(f), None) => report::lint::write_human(f, out)?,
                    // One comment: the groups share GitHub's size limit.
                    (Some(f), Some(_)) if format == LintFormat::Markdown => out.write_all(
                        report::lint::to_markdown_within(f, report::MARKDOWN_BUDGET / groups.len())
                            .as_bytes(),
                    )?,
                    (Some(_), Some(text)) => out.write_all(text.as_bytes())?,
                }
            }
        }
        LintFormat::Json => {
            let mut doc = format!(
                "{{\n  \"covenant_version\": {},\n  \"groups\": [",
                serde_json::json!(lockfile::COVENANT_VERSION)
            );
            for (i, (name, findings)) in groups.iter().enumerate() {
                doc.push_str(if i > 0 { ",\n    " } else { "\n    " });
                let name = serde_json::json!(name);
                match findings {
                    Some(f) => doc.push_str(&format!(
                        "{{ \"name\": {name}, \"report\": {} }}",
                        report::lint::to_json(f).trim_end()
                    )),
                    None => doc.push_str(&format!("{{ \"name\": {name}, \"error\": true }}")),
                }
            }
            doc.push_str("\n  ]\n}\n");
            out.write_all(doc.as_bytes())?;
        }
        LintFormat::Sarif => {
            let docs = groups.iter().filter_map(|(name, findings)| {
                let text = report::sarif::lint(rules, findings.as_ref()?, &[]);
                Some((name.replace(' ', "-"), text))
            });
            out.write_all(merge_sarif(docs)?.as_bytes())?;
        }
    }
    Ok(())
}

/// One SARIF document from several, each run tagged `automationDetails.id =
/// mcp-covenant/NAME/` (GitHub code scanning tells runs of one tool apart by it).
fn merge_sarif(docs: impl Iterator<Item = (String, String)>) -> std::io::Result<String> {
    let mut merged: Option<serde_json::Value> = None;
    let mut runs = Vec::new();
    for (name, text) in docs {
        let mut one: serde_json::Value =
            serde_json::from_str(&text).map_err(std::io::Error::other)?;
        if let Some(serde_json::Value::Array(rs)) = one.get_mut("runs").map(serde_json::Value::take)
        {
            for mut run in rs {
                run["automationDetails"] =
                    serde_json::json!({ "id": format!("mcp-covenant/{name}/") });
                runs.push(run);
            }
        }
        merged.get_or_insert(one);
    }
    let mut doc = merged.unwrap_or_else(|| {
        serde_json::json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0"
        })
    });
    doc["runs"] = serde_json::Value::Array(runs);
    let mut text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    text.push('\n');
    Ok(text)
}

/// `TypeMissing` as `type_missing`, the spelling of rules/lint.toml.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn list_rules(
    rules: &Rules,
    lint_rules: &LintRules,
    config: &Config,
    args: RulesArgs,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let sev = |s: Option<Severity>| s.map(Severity::word).unwrap_or("-");
    let mut text = String::new();
    let config_name = config
        .file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "no covenant.toml".into());
    // (the columns, the help text shown under the row when one id is asked for)
    let mut rows: Vec<([String; 5], Option<&str>)> = vec![(
        [
            "ID",
            "WATCHES",
            "DEFAULT in/out",
            "EFFECTIVE in/out",
            "SOURCE",
        ]
        .map(String::from),
        None,
    )];
    for (i, r) in rules.rows.iter().enumerate() {
        if args.id.as_deref().is_some_and(|id| id != r.id) {
            continue;
        }
        let (default, effective) = if r.severity.is_some() {
            (
                sev(r.severity).to_string(),
                rules.severity(i, None).word().to_string(),
            )
        } else {
            let eff = |d| {
                if r.default_severity(Some(d)).is_some() || r.severity.is_some() {
                    rules.severity(i, Some(d)).word()
                } else {
                    "-"
                }
            };
            (
                format!("{}/{}", sev(r.input), sev(r.output)),
                format!(
                    "{}/{}",
                    eff(crate::rules::Direction::Input),
                    eff(crate::rules::Direction::Output)
                ),
            )
        };
        let watches = format!("{} {}", r.describe_scope(), r.event);
        rows.push((
            [
                r.id.clone(),
                watches,
                default,
                effective,
                r.source.to_string(),
            ],
            args.id.is_some().then_some(r.help.as_str()),
        ));
    }
    for (i, r) in lint_rules.rows.iter().enumerate() {
        if args.id.as_deref().is_some_and(|id| id != r.id) {
            continue;
        }
        rows.push((
            [
                r.id.clone(),
                format!("lint {}", snake_case(&format!("{:?}", r.predicate))),
                r.level.word().to_string(),
                lint_rules.level(i).word().to_string(),
                lint_rules.source.to_string(),
            ],
            None,
        ));
    }
    let shown = rows.len() - 1;
    // Every column as wide as its widest cell, so the listing reads as a table.
    let mut widths = [0usize; 5];
    for (cells, _) in &rows {
        for (w, cell) in widths.iter_mut().zip(cells) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for (cells, help) in &rows {
        let mut line = String::new();
        for (k, cell) in cells.iter().enumerate() {
            if k + 1 < cells.len() {
                line.push_str(&format!("{cell:<width$}  ", width = widths[k]));
            } else {
                line.push_str(cell);
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
        if let Some(help) = help {
            text.push_str(&format!("    {help}\n"));
        }
    }
    if let Some(id) = &args.id {
        if shown == 0 {
            let mut known: Vec<&str> = rules.rows.iter().map(|r| r.id.as_str()).collect();
            known.extend(lint_rules.rows.iter().map(|r| r.id.as_str()));
            let hint = crate::config::suggest(id, &known)
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Err(Error::new(format!("unknown rule id `{id}`{hint}")));
        }
    }
    text.push_str(&format!("\neffective severities include {config_name}\n"));
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::new(format!("cannot write: {e}")))?;
    Ok(0)
}
