//! The arguments: what clap parses (commands, flags, help text and headings). Nothing
//! here is resolved against covenant.toml; `settings` does that.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::{FailOn, LintFailOn};
use crate::diff;
use crate::mcp;
use crate::report::Format;

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
  mcp-covenant init -- node dist/server.js          # covenant.toml, lockfile, workflow
  mcp-covenant check                                # the server of covenant.toml
  mcp-covenant snapshot -o mcp-covenant.lock -- node dist/server.js
  mcp-covenant check --baseline old.lock --against new.lock --format json
  mcp-covenant check --baseline-rev origin/main     # a pull request's changes
  mcp-covenant ignore FINGERPRINT --reason '...'    # acknowledge a change (check -v)

Configuration: `mcp-covenant help config` is the covenant.toml reference (the server,
severities, ignores that expire, several servers); covenant.toml is found in the current
directory or a parent up to the repository's root.";

/// The help heading of the flags that shape the report (format, output, gate).
const REPORT: &str = "Report";
/// The help heading of the flags of a live capture (the server and how to talk to it).
const CAPTURE: &str = "Live capture";

/// `--version`: `0.2.0 (abc1234 2026-12-10, x86_64-unknown-linux-gnu, http)`, the commit
/// when built from git, the target, and `http` or `stdio-only` (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("MCP_COVENANT_BUILD_INFO"),
    ")"
);

#[derive(Parser, Debug)]
#[command(
    name = "mcp-covenant",
    version = VERSION,
    about = ABOUT,
    after_help = AFTER_HELP,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// When to colour the output: auto (a terminal, and NO_COLOR unset), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,

    /// The project config [default: the nearest covenant.toml, looking in the current
    /// directory and then each parent up to the repository's root].
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Print only the report, warnings and errors (no `wrote ...`, `up to date`, notes).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Say more: which covenant.toml is used; with `check`, each change's fingerprint
    /// (for an [[ignore]], or `mcp-covenant ignore`) and the changes covenant.toml
    /// ignored, with their reasons.
    #[arg(short, long, global = true)]
    pub verbose: bool,

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
    /// Shows what covenant.toml changed. Give an id to see one rule in full; a former
    /// id (renamed or retired) says what became of it and shows the rules that took
    /// its place.
    Rules(RulesArgs),
    /// Set a project up: covenant.toml with the server command, the first lockfile,
    /// and a GitHub workflow (.github/workflows/mcp-covenant.yml) with the project's
    /// setup and build steps.
    ///
    /// The server command is the one after `--`, or else the one the project declares
    /// (package.json `bin` or `main`, pyproject.toml `[project.scripts]`). The
    /// ecosystem (npm, pnpm, yarn, bun; uv, pip; cargo; go) is read from the project's
    /// files. Never overwrites without --force: when a file exists, nothing is written.
    /// With --from-client FILE, a repository that pins others' servers gets the
    /// workflow that gates moving a pin (`upgrade`) instead.
    Init(InitArgs),
    /// Acknowledge a change: append an [[ignore]] entry to covenant.toml (its comments
    /// and layout kept).
    ///
    /// Give the change's fingerprint (`check -v` shows it; `check --format json` has it
    /// in full), or patterns (--code, --subject, --path) as the [[ignore]] table takes
    /// them, and always --reason. The entry is checked as covenant.toml is read before
    /// anything is written.
    Ignore(IgnoreArgs),
    /// Which pinned servers a team can upgrade, and what moving them would break.
    ///
    /// Reads the exact pins of covenant.toml's `package` servers and of agent client
    /// configs (.mcp.json, .cursor/mcp.json, .vscode/mcp.json, claude_desktop_config.json:
    /// `npx -y NAME@VERSION`, `uvx NAME==VERSION`, `uvx --from NAME==VERSION CMD`), asks
    /// each registry for the releases above the pin, captures them (once: later runs
    /// read the capture cache), and reports `latest` with the bump moving there needs,
    /// and `compatible`: the newest release that breaks nothing from the pin. Exits 1
    /// when moving some server to its latest release fails at --fail-on. `--write`
    /// moves each pin to `compatible` in the file it came from, layout kept.
    Upgrade(UpgradeArgs),
    /// Print a shell's completion script to stdout, e.g.
    /// `mcp-covenant completions bash > ~/.local/share/bash-completion/completions/mcp-covenant`.
    Completions(CompletionsArgs),
    /// Print help: `help COMMAND` for a command, `help config` for the covenant.toml
    /// reference.
    Help(HelpArgs),
    /// A git diff driver: `git diff` shows a lockfile's changes classified. Set up with
    /// `git config diff.mcp-covenant.command "mcp-covenant git-diff-driver"` and
    /// `mcp-covenant.lock diff=mcp-covenant` in .gitattributes (`git log -p --ext-diff`).
    GitDiffDriver(GitDiffDriverArgs),
}

#[derive(Args, Debug)]
pub struct GitDiffDriverArgs {
    /// What git passes: PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE.
    #[arg(value_name = "ARG", allow_hyphen_values = true)]
    pub args: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct UpgradeArgs {
    /// Read the pins of this agent client config (repeatable) [default: the ones found
    /// here: .mcp.json, .cursor/mcp.json, .vscode/mcp.json, claude_desktop_config.json].
    #[arg(long, value_name = "FILE")]
    pub from_client: Vec<PathBuf>,

    /// Move each pin to its `compatible` release (or, with `--to latest`, its latest)
    /// in the file it came from, keeping the file's layout. Nothing is written when a
    /// capture failed.
    #[arg(long, conflicts_with = "baseline_rev")]
    pub write: bool,

    /// Where `--write` moves each pin.
    #[arg(long, value_enum, value_name = "TARGET", default_value_t = UpgradeTo::Compatible, requires = "write")]
    pub to: UpgradeTo,

    /// Report and gate only the pins this change moved: each pin at git revision REV
    /// (e.g. origin/main) against the pin now, as a Renovate or Dependabot pull request
    /// moves them.
    #[arg(long, value_name = "REV")]
    pub baseline_rev: Option<String>,

    /// Releases checked per server for `compatible`, newest first (more than 0).
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_candidates: u32,

    /// Installs run at once [default: the number of CPUs].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: Option<u32>,

    /// Seconds one server's capture may take, start-up included.
    #[arg(long, default_value = "30", value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: Duration,

    /// Exit 1 when moving some server to its latest release has a change at or above
    /// this level; `version`: when that release breaks without a major version bump
    /// [default: breaking, or `fail_on` in covenant.toml].
    #[arg(long, help_heading = REPORT, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOnArg>,

    /// Report format.
    #[arg(long, help_heading = REPORT, value_enum, default_value_t = UpgradeFormat::Human)]
    pub format: UpgradeFormat,

    /// Write the report to FILE (atomically) and print the human report to stdout.
    #[arg(short = 'o', long, help_heading = REPORT, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `upgrade --to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UpgradeTo {
    /// The newest release that breaks nothing from the pin.
    Compatible,
    /// The newest release, whatever it breaks (the report says what).
    Latest,
}

/// `upgrade --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UpgradeFormat {
    /// A table: server, pinned, compatible, latest, verdict; breaking changes below.
    Human,
    /// One JSON object (docs/schemas/upgrade.schema.json).
    Json,
    /// A pull-request comment.
    Markdown,
}

#[derive(Args, Debug)]
pub struct IgnoreArgs {
    /// The change's fingerprint: 32 hex digits, as `check -v` and `check --format json`
    /// show it.
    #[arg(value_name = "FINGERPRINT")]
    pub fingerprint: Option<String>,

    /// Why the change is acceptable (required; shown by `check -v`).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,

    /// The last day (UTC) the entry applies, YYYY-MM-DD.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,

    /// A rule id glob, e.g. `schema.enum.*`.
    #[arg(long, value_name = "GLOB")]
    pub code: Option<String>,

    /// A subject glob, e.g. `tool:internal_*`.
    #[arg(long, value_name = "GLOB")]
    pub subject: Option<String>,

    /// A path glob, e.g. `inputSchema.properties.debug*`.
    #[arg(long, value_name = "GLOB")]
    pub path: Option<String>,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// Replace covenant.toml, the workflow and the lockfile when they exist (and say
    /// what changed).
    #[arg(long)]
    pub force: bool,

    /// Do not start the server: write covenant.toml and the workflow, and leave the
    /// first lockfile to `mcp-covenant snapshot`.
    #[arg(long)]
    pub no_capture: bool,

    /// Set up a repository that consumes servers instead of serving one: from the
    /// packages this agent client config pins (.mcp.json, .cursor/mcp.json,
    /// .vscode/mcp.json, claude_desktop_config.json), write the workflow that gates a
    /// pull request moving a pin and reports weekly what each could move to
    /// (`mcp-covenant upgrade`, the Action's `mode: upgrade`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["no_capture", "http", "command"])]
    pub from_client: Option<PathBuf>,

    #[command(flatten)]
    pub source: LiveSource,
}

#[derive(Args, Debug)]
pub struct HelpArgs {
    /// `config`, or a command: snapshot, check, lint, rules, init.
    pub topic: Option<String>,
}

#[derive(Args, Debug)]
pub struct LintArgs {
    /// Lint this lockfile instead of a live server: a path, git:REF:PATH to read it at a
    /// git revision, or a published package, npm:NAME@VERSION or pypi:NAME==VERSION
    /// (installed, captured, cached).
    #[arg(long, value_name = "LOCKFILE", conflicts_with_all = ["http", "command"])]
    pub from: Option<PathBuf>,

    /// Exit 1 when a finding is at or above this level [default: error, or
    /// `lint_fail_on` in covenant.toml].
    #[arg(long, help_heading = REPORT, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<LintFailOnArg>,

    /// Report format.
    #[arg(long, help_heading = REPORT, value_enum, default_value_t = LintFormat::Human)]
    pub format: LintFormat,

    /// Write the report to FILE (atomically) and print the human report to stdout
    /// (`-o -`: the report itself to stdout).
    #[arg(short = 'o', long, help_heading = REPORT, value_name = "FILE")]
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
    /// Show only this rule id (change or lint rule, or a former id), or the ids a glob
    /// matches (`'schema.enum.*'`).
    pub id: Option<String>,

    /// Output format: a table (human), JSON, or the markdown of docs/rules.md.
    #[arg(long, value_enum, default_value_t = RulesFormat::Human)]
    pub format: RulesFormat,

    /// List each comparator with its events (`comparator: event event ...`), for tools
    /// that write rows (scripts/new-golden-case.sh); with `--format markdown`, the
    /// table CONTRIBUTING.md shows.
    #[arg(long, hide = true, conflicts_with = "id")]
    pub comparators: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    Human,
    Json,
    Markdown,
}

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// Where to write the lockfile, `-` for stdout [default: mcp-covenant.lock, or each
    /// [[server]]'s `lockfile`].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Capture only this [[server]] of covenant.toml (by default: all of them, when
    /// there are entries and no server is given on the command line).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,

    /// Add the servers of an agent client's config (.mcp.json, .vscode/mcp.json,
    /// .cursor/mcp.json, claude_desktop_config.json) to covenant.toml as [[server]]
    /// entries (commands, URLs, and only the names of environment variables and
    /// headers), then capture them.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["server", "check", "output", "http", "command"])]
    pub from_client: Option<PathBuf>,

    /// Write nothing: exit 0 when the lockfile is exactly what the capture would write,
    /// 1 when it is not (or missing), listing how the server differs from it. The CI
    /// check that the committed lockfile is up to date.
    #[arg(long)]
    pub check: bool,

    /// Capture N times and write only when every capture is the same; otherwise exit 2
    /// naming what moved (a server that builds a list from a set, say).
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "check",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,

    #[command(flatten)]
    pub source: LiveSource,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The lockfile to compare against: a path, or git:REF:PATH to read it at a git
    /// revision (e.g. git:origin/main:mcp-covenant.lock, the base branch's); a
    /// published package, npm:NAME@VERSION or pypi:NAME==VERSION (installed, captured,
    /// cached); or `published`: the release below the version package.json or
    /// pyproject.toml declares [default: mcp-covenant.lock, or each [[server]]'s
    /// `lockfile`].
    #[arg(long, value_name = "LOCKFILE")]
    pub baseline: Option<PathBuf>,

    /// Compare against this lockfile instead of a live server (a path, git:REF:PATH, or
    /// a package: npm:NAME@VERSION, pypi:NAME==VERSION).
    #[arg(long, value_name = "LOCKFILE", conflicts_with_all = ["http", "command"])]
    pub against: Option<PathBuf>,

    /// Compare the lockfile (--baseline's, or each [[server]]'s) with itself at git
    /// revision REV, e.g. origin/main: what a pull request changed, whatever it
    /// committed. No server runs. A lockfile REV does not have is new: every element is
    /// reported as added.
    #[arg(long, value_name = "REV", conflicts_with_all = ["against", "http", "command"])]
    pub baseline_rev: Option<String>,

    /// Exit 1 when a change is at or above this level; `version`: when breaking changes
    /// come without a major version bump (0.y.z: a minor one) [default: breaking, or
    /// `fail_on` in covenant.toml].
    #[arg(long, help_heading = REPORT, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOnArg>,

    /// Report format.
    #[arg(long, help_heading = REPORT, value_enum, default_value_t = FormatArg::Human)]
    pub format: FormatArg,

    /// Node pairs one schema comparison may visit; past it the schema is reported as
    /// `schema.walk.truncated` (breaking), never silently passed.
    #[arg(long, default_value_t = diff::DEFAULT_WORK_BUDGET, value_name = "N")]
    pub walk_budget: usize,

    /// Write the report to FILE (atomically) and print the human report to stdout
    /// (`-o -`: the report itself to stdout).
    #[arg(short = 'o', long, help_heading = REPORT, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Check only this [[server]] of covenant.toml (by default: all of them, when there
    /// are entries and no server is given on the command line).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,

    /// Remove from covenant.toml each [[ignore]] that matches no change of this
    /// comparison, and each whose `until` has passed (ruff's `--fix` for an unused
    /// `noqa`), keeping the file's comments and layout; each removal is a warning
    /// naming its line. Needs every server compared (not with --server); nothing is
    /// removed when a comparison cannot be made.
    #[arg(long, conflicts_with = "server")]
    pub prune_ignores: bool,

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

    /// Also read (resources/read) each MCP Apps ui:// resource a tool names that
    /// resources/list leaves out, and record its _meta (CSP, permissions), never its
    /// body. Off by default: a capture only lists. Give it to every capture of the
    /// server, or the resources it records look removed.
    #[arg(long)]
    pub read_ui_resources: bool,

    /// The Python a PyPI package source runs on (`3.12`), over its `[[server]]`'s
    /// `python`.
    #[arg(long, value_name = "VERSION", value_parser = parse_python)]
    pub python: Option<String>,

    /// Pass the environment variable NAME to the server and to package installs
    /// (repeatable). They start with PATH, HOME, the locale and TMPDIR only (plus the
    /// names a [[server]]'s `env` lists), never the rest: no CI token reaches them.
    #[arg(long = "env", value_name = "NAME")]
    pub env: Vec<String>,

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

/// `--python`: a Python version such as 3.12.
fn parse_python(s: &str) -> std::result::Result<String, String> {
    crate::registry::spec::check_python(s).map(|()| s.to_string())
}

/// `--protocol`: auto or a revision this client speaks.
fn parse_protocol(s: &str) -> std::result::Result<mcp::Protocol, String> {
    mcp::Protocol::parse(s).map_err(|e| e.to_string())
}

impl LiveSource {
    /// The capture settings alone (timeout, protocol, capabilities), no server.
    pub(crate) fn settings_only(&self) -> LiveSource {
        LiveSource {
            http: None,
            headers: Vec::new(),
            timeout: self.timeout,
            protocol: self.protocol.clone(),
            client_capabilities: self.client_capabilities.clone(),
            show_server_stderr: self.show_server_stderr,
            read_ui_resources: self.read_ui_resources,
            python: self.python.clone(),
            env: self.env.clone(),
            command: Vec::new(),
        }
    }

    /// A server was given on the command line (`-- CMD` or `--http`).
    pub(crate) fn given(&self) -> bool {
        self.http.is_some() || !self.command.is_empty()
    }
}

/// `check --fail-on`: [`FailOn`] as clap reads it (the words of `FailOn::NAMES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// `major` too: the bump a breaking change owes.
    #[value(alias = "major")]
    Breaking,
    Minor,
    Patch,
    /// Breaking changes without the version bump they need (a major; in 0.y.z the
    /// minor): an intended major release passes.
    Version,
    Never,
}

impl From<FailOnArg> for FailOn {
    fn from(a: FailOnArg) -> FailOn {
        match a {
            FailOnArg::Breaking => FailOn::Breaking,
            FailOnArg::Minor => FailOn::Minor,
            FailOnArg::Patch => FailOn::Patch,
            FailOnArg::Version => FailOn::Version,
            FailOnArg::Never => FailOn::Never,
        }
    }
}

/// `lint --fail-on`: [`LintFailOn`] as clap reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LintFailOnArg {
    Error,
    Warning,
    Info,
    Never,
}

impl From<LintFailOnArg> for LintFailOn {
    fn from(a: LintFailOnArg) -> LintFailOn {
        match a {
            LintFailOnArg::Error => LintFailOn::Error,
            LintFailOnArg::Warning => LintFailOn::Warning,
            LintFailOnArg::Info => LintFailOn::Info,
            LintFailOnArg::Never => LintFailOn::Never,
        }
    }
}

/// `check --format`: a report [`Format`] as clap reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// For people: grouped by severity, coloured on a terminal.
    Human,
    /// One JSON object with counts and every change (stable key order).
    Json,
    /// A pull-request comment: the bump, then a table per severity.
    Markdown,
    /// GitHub Actions workflow commands (`::error file=...,line=...::`).
    Github,
    /// SARIF 2.1.0 for code scanning, anchored to lines of the lockfile.
    Sarif,
    /// JUnit XML: one testcase per element, failures at or above --fail-on.
    Junit,
}

impl From<FormatArg> for Format {
    fn from(a: FormatArg) -> Format {
        match a {
            FormatArg::Human => Format::Human,
            FormatArg::Json => Format::Json,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Github => Format::Github,
            FormatArg::Sarif => Format::Sarif,
            FormatArg::Junit => Format::Junit,
        }
    }
}
