//! The command line (DESIGN §2): argument parsing, and each command's flow.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use termcolor::{ColorChoice, NoColor, StandardStream, WriteColor};

use crate::diff;
use crate::error::{Error, Result};
use crate::lockfile::{self, Lockfile};
use crate::mcp;
use crate::report::{self, Format, Report};
use crate::rules::{Rules, Severity};

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
  mcp-covenant check --baseline old.lock --against new.lock --format json";

#[derive(Parser, Debug)]
#[command(name = "mcp-covenant", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Cli {
    /// When to colour the output: auto (a terminal, and NO_COLOR unset), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,

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
}

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// Where to write the lockfile.
    #[arg(
        short = 'o',
        long = "output",
        default_value = "mcp-covenant.lock",
        value_name = "FILE"
    )]
    pub output: PathBuf,

    #[command(flatten)]
    pub source: LiveSource,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The committed lockfile to compare against.
    #[arg(long, default_value = "mcp-covenant.lock", value_name = "FILE")]
    pub baseline: PathBuf,

    /// Compare against this lockfile instead of a live server.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["http", "command"])]
    pub against: Option<PathBuf>,

    /// Exit 1 when a change is at or above this level.
    #[arg(long, value_enum, default_value_t = FailOn::Breaking, value_name = "LEVEL")]
    pub fail_on: FailOn,

    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Node pairs one schema comparison may visit; past it the schema is reported as
    /// `schema.walk.truncated` (breaking), never silently passed.
    #[arg(long, default_value_t = diff::DEFAULT_WORK_BUDGET, value_name = "N")]
    pub walk_budget: usize,

    /// Write the report to FILE (atomically) and print the human report to stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub source: LiveSource,
}

/// Where a live capture comes from: a command over stdio, or a Streamable HTTP URL.
#[derive(Args, Debug, Default)]
pub struct LiveSource {
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub http: Option<String>,

    /// An HTTP header for every request, `Name: value` (repeatable). Also read from
    /// MCP_COVENANT_HEADER_<NAME> variables (`_` in NAME becomes `-`). Never logged or
    /// written to the lockfile.
    #[arg(long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Seconds the whole capture may take, server start-up included.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub timeout: f64,

    /// Protocol revision: auto (probe server/discover, fall back to the initialize
    /// handshake), or one of 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05.
    #[arg(long, default_value = "auto", value_name = "VERSION")]
    pub protocol: String,

    /// Client capabilities to offer, comma-separated: roots, sampling, elicitation.
    /// None by default, so the lockfile records what a minimal client sees (some
    /// servers list more tools to richer clients).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub client_capabilities: Vec<String>,

    /// Pass the server's stderr through as it runs (by default it is shown only when
    /// the capture fails).
    #[arg(long)]
    pub show_server_stderr: bool,

    /// The command that starts the server on stdio (after `--`; run without a shell).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Breaking,
    Minor,
    Patch,
    Never,
}

impl FailOn {
    pub fn level(self) -> Option<Severity> {
        match self {
            FailOn::Breaking => Some(Severity::Breaking),
            FailOn::Minor => Some(Severity::Minor),
            FailOn::Patch => Some(Severity::Patch),
            FailOn::Never => None,
        }
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
    let mut stdout = StandardStream::stdout(color_choice(cli.color));
    match run(cli, &mut stdout) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let _ = stdout.flush();
            eprintln!("error: {e}");
            ExitCode::from(2)
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
    let rules = Rules::embedded()?;
    match cli.command {
        Command::Snapshot(args) => snapshot(args),
        Command::Check(args) => check(&rules, args, out),
    }
}

fn snapshot(args: SnapshotArgs) -> Result<u8> {
    let lock = capture(&args.source)?;
    let mut lock = lock;
    lock.write(&args.output)?;
    eprintln!(
        "mcp-covenant: wrote {} ({} tool(s), {} resource(s), {} template(s), {} prompt(s))",
        args.output.display(),
        lock.surface.tools.len(),
        lock.surface.resources.len(),
        lock.surface.resource_templates.len(),
        lock.surface.prompts.len()
    );
    Ok(0)
}

fn capture(source: &LiveSource) -> Result<Lockfile> {
    let endpoint = match (&source.http, source.command.is_empty()) {
        (Some(url), _) => mcp::Endpoint::Http {
            url: url.clone(),
            headers: headers(&source.headers)?,
        },
        (None, false) => mcp::Endpoint::Stdio(source.command.clone()),
        (None, true) => {
            return Err(Error::new(
                "no server to capture: give the command after `--` (e.g. `-- node server.js`) or --http URL",
            ))
        }
    };
    if !(source.timeout.is_finite() && source.timeout > 0.0) {
        return Err(Error::new(format!(
            "--timeout must be a positive number of seconds, not {}",
            source.timeout
        )));
    }
    for c in &source.client_capabilities {
        if !["roots", "sampling", "elicitation"].contains(&c.as_str()) {
            return Err(Error::new(format!(
                "unknown client capability `{c}` in --client-capabilities; expected roots, sampling or elicitation"
            )));
        }
    }
    let opts = mcp::CaptureOptions {
        endpoint,
        timeout: std::time::Duration::from_secs_f64(source.timeout),
        protocol: mcp::Protocol::parse(&source.protocol)?,
        client_capabilities: source.client_capabilities.clone(),
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

fn read_baseline(path: &Path) -> Result<Lockfile> {
    if !path.exists() {
        return Err(Error::new(format!(
            "baseline lockfile {} not found; create it with `mcp-covenant snapshot -o {} -- <server command>` and commit it",
            path.display(),
            path.display()
        )));
    }
    Lockfile::read(path)
}

fn check(rules: &Rules, args: CheckArgs, out: &mut dyn WriteColor) -> Result<u8> {
    let baseline = read_baseline(&args.baseline)?;
    let current = match &args.against {
        Some(path) => Lockfile::read(path)?,
        None => capture(&args.source)?,
    };
    let changes =
        diff::diff_with_budget(rules, &baseline.surface, &current.surface, args.walk_budget);
    let report = Report::new(rules, changes, args.baseline.display().to_string());
    let io_err = |e: std::io::Error| Error::new(format!("cannot write the report: {e}"));
    match &args.output {
        Some(path) => {
            let mut buf = NoColor::new(Vec::new());
            report::render(&report, args.format, &mut buf).map_err(io_err)?;
            lockfile::write_atomic(path, &buf.into_inner())?;
            report::render(&report, Format::Human, out).map_err(io_err)?;
        }
        None => report::render(&report, args.format, out).map_err(io_err)?,
    }
    out.flush().map_err(io_err)?;
    Ok(u8::from(report.fails(args.fail_on.level())))
}
