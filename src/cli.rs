//! The command line (DESIGN §2): argument parsing, and each command's flow.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use termcolor::{ColorChoice, NoColor, StandardStream, WriteColor};

use crate::config::Config;
use crate::diff;
use crate::error::{Error, Result};
use crate::git::GitFile;
use crate::lint::{self, Level, LintRules};
use crate::lockfile::{self, Lockfile};
use crate::mcp;
use crate::report::{self, anchor, Format, Report};
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
}

#[derive(Args, Debug)]
pub struct LintArgs {
    /// Lint this lockfile instead of a live server (a path, or git:REF:PATH to read it
    /// at a git revision).
    #[arg(long, value_name = "LOCKFILE", conflicts_with_all = ["http", "command"])]
    pub from: Option<PathBuf>,

    /// Exit 1 when a finding is at or above this level [default: error, or
    /// `lint_fail_on` in covenant.toml].
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<LintFailOn>,

    /// Report format.
    #[arg(long, value_enum, default_value_t = LintFormat::Human)]
    pub format: LintFormat,

    /// Write the report to FILE (atomically) and print the human report to stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LintFailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Args, Debug)]
pub struct RulesArgs {
    /// Show only this rule id (change or lint rule).
    pub id: Option<String>,
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
    /// The lockfile to compare against: a path, or git:REF:PATH to read it at a git
    /// revision (e.g. git:origin/main:mcp-covenant.lock, the base branch's).
    #[arg(long, default_value = "mcp-covenant.lock", value_name = "LOCKFILE")]
    pub baseline: PathBuf,

    /// Compare against this lockfile instead of a live server (a path, or git:REF:PATH).
    #[arg(long, value_name = "LOCKFILE", conflicts_with_all = ["http", "command"])]
    pub against: Option<PathBuf>,

    /// Exit 1 when a change is at or above this level [default: breaking, or `fail_on`
    /// in covenant.toml].
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOn>,

    /// Also list the changes covenant.toml ignored, with their reasons.
    #[arg(short, long)]
    pub verbose: bool,

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
        Err(_) if mcp::stdio::interrupted() => {
            eprintln!("error: interrupted; the server was stopped");
            ExitCode::from(130)
        }
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
    let mut rules = Rules::embedded()?;
    let mut lint_rules = LintRules::embedded()?;
    let config = Config::discover(cli.config.as_deref(), &rules, &lint_rules)?;
    rules.set_overrides(config.severity.clone());
    lint_rules.set_overrides(config.lint.clone());
    match cli.command {
        Command::Snapshot(args) => snapshot(args),
        Command::Check(args) => check(&rules, &config, args, out),
        Command::Lint(args) => run_lint(&lint_rules, &config, args, out),
        Command::Rules(args) => list_rules(&rules, &lint_rules, &config, args, out),
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

/// Where a lockfile is read from: a file, or a file at a git revision (`git:REF:PATH`).
/// A file whose name starts with `git:` is reached as `./git:...`.
enum LockSource {
    File(PathBuf),
    Git(GitFile),
}

impl LockSource {
    fn from_arg(arg: &Path) -> Result<LockSource> {
        match arg.to_str().and_then(GitFile::parse) {
            Some(git) => git.map(LockSource::Git),
            None => Ok(LockSource::File(arg.to_path_buf())),
        }
    }

    /// As the user wrote it, for messages.
    fn name(&self) -> String {
        match self {
            LockSource::File(p) => p.display().to_string(),
            LockSource::Git(g) => g.to_string(),
        }
    }

    /// The path reports point at (SARIF `artifactLocation.uri`, annotations): for
    /// `git:REF:PATH`, PATH, which the pull request holds too.
    fn uri(&self) -> String {
        match self {
            LockSource::File(p) => anchor::uri_for(p),
            LockSource::Git(g) => anchor::uri_for(Path::new(&g.path)),
        }
    }

    /// The file on disk whose bytes should be the canonical text (anchoring warns when
    /// not). A git revision has none: the name is not a path that exists.
    fn disk_path(&self) -> PathBuf {
        match self {
            LockSource::File(p) => p.clone(),
            LockSource::Git(g) => PathBuf::from(g.to_string()),
        }
    }

    fn bytes(&self) -> Result<Vec<u8>> {
        match self {
            LockSource::File(p) => std::fs::read(p)
                .map_err(|e| Error::new(format!("cannot read lockfile {}: {e}", p.display()))),
            LockSource::Git(g) => g.read(),
        }
    }

    fn read(&self) -> Result<Lockfile> {
        match self {
            LockSource::File(p) => Lockfile::read(p),
            LockSource::Git(g) => Lockfile::parse(&g.read()?, &g.to_string()),
        }
    }

    fn read_lenient(&self) -> Result<Lockfile> {
        match self {
            LockSource::File(p) => Lockfile::read_lenient(p),
            LockSource::Git(g) => Lockfile::parse_lenient(&g.read()?, &g.to_string()),
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
    /// Both lockfiles in full, when the format points at their lines.
    files: Option<(Lockfile, Lockfile)>,
}

fn compare(
    rules: &Rules,
    args: &CheckArgs,
    base: &LockSource,
    against: Option<&LockSource>,
) -> Result<Compared> {
    // Two files and no line anchors needed: the fast path, which never builds the
    // elements that are byte-identical on both sides.
    if let (Some(against), false) = (against, args.format.needs_anchors()) {
        let (a, b) = std::thread::scope(|s| {
            let b = s.spawn(|| against.bytes());
            let a = base.baseline_bytes();
            let b = b
                .join()
                .unwrap_or_else(|_| Err(Error::new("reading the lockfile failed")));
            Ok::<_, Error>((a?, b?))
        })?;
        let c = diff::fast::compare_files(
            rules,
            (&a, &base.name()),
            (&b, &against.name()),
            args.walk_budget,
        )?;
        return Ok(Compared {
            changes: c.changes,
            versions: (c.servers.0.version, c.servers.1.version),
            subjects: c.subjects,
            files: None,
        });
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
        None => (base.read_baseline()?, capture(&args.source)?),
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
    })
}

fn check(rules: &Rules, config: &Config, args: CheckArgs, out: &mut dyn WriteColor) -> Result<u8> {
    config.warn_expired();
    let base = LockSource::from_arg(&args.baseline)?;
    let against = args
        .against
        .as_deref()
        .map(LockSource::from_arg)
        .transpose()?;
    let compared = compare(rules, &args, &base, against.as_ref())?;
    let mut report = Report::new(rules, compared.changes, base.name(), config);
    report.verify_version(
        compared.versions.0.as_deref(),
        compared.versions.1.as_deref(),
        config,
    );
    report.verbose = args.verbose;
    let fail_on = match (args.fail_on, &config.fail_on) {
        (Some(f), _) => f,
        (None, Some(word)) => FailOn::from_str(word, true).map_err(Error::new)?,
        (None, None) => FailOn::Breaking,
    };
    report.fail_on = fail_on.level();
    if let (true, Some((baseline, current))) = (args.format.needs_anchors(), &compared.files) {
        let (base_disk, against_disk) = (
            base.disk_path(),
            against.as_ref().map(LockSource::disk_path),
        );
        let files = anchor::Files {
            baseline: (baseline, base.uri(), &base_disk),
            current: against
                .as_ref()
                .zip(against_disk.as_deref())
                .map(|(a, disk)| (current, a.uri(), disk)),
        };
        report.anchors = anchor::anchors(&report.changes, &files);
    }
    report.elements = compared.subjects;
    emit(
        out,
        args.output.as_deref(),
        &|o| report::render(&report, args.format, o),
        &|o| report::render(&report, Format::Human, o),
    )?;
    Ok(u8::from(report.fails(fail_on.level())))
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
            lockfile::write_atomic(path, &buf.into_inner())?;
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
    let from = args.from.as_deref().map(LockSource::from_arg).transpose()?;
    let lock = match &from {
        Some(source) => source.read_lenient()?,
        None => capture(&args.source)?,
    };
    let findings = lint::lint(rules, &lock.surface);
    let json = |o: &mut dyn WriteColor| o.write_all(report::lint::to_json(&findings).as_bytes());
    let human = |o: &mut dyn WriteColor| report::lint::write_human(&findings, o);
    match args.format {
        LintFormat::Human => emit(out, args.output.as_deref(), &human, &human)?,
        LintFormat::Json => emit(out, args.output.as_deref(), &json, &human)?,
        LintFormat::Markdown => {
            let text = report::lint::to_markdown(&findings);
            emit(
                out,
                args.output.as_deref(),
                &|o| o.write_all(text.as_bytes()),
                &human,
            )?
        }
        LintFormat::Github | LintFormat::Sarif => {
            let anchors = match &from {
                Some(source) => anchor::lint_anchors(&lock, Path::new(&source.uri()), &findings),
                None => Vec::new(),
            };
            let text = if args.format == LintFormat::Sarif {
                report::sarif::lint(rules, &findings, &anchors)
            } else {
                report::lint::to_github(&findings, &anchors)
            };
            emit(
                out,
                args.output.as_deref(),
                &|o| o.write_all(text.as_bytes()),
                &human,
            )?
        }
    }
    let fail_on = match (args.fail_on, &config.lint_fail_on) {
        (Some(f), _) => f,
        (None, Some(word)) => LintFailOn::from_str(word, true).map_err(Error::new)?,
        (None, None) => LintFailOn::Error,
    };
    let threshold = match fail_on {
        LintFailOn::Error => Level::Error,
        LintFailOn::Warning => Level::Warning,
        LintFailOn::Info => Level::Info,
        LintFailOn::Never => return Ok(0),
    };
    Ok(u8::from(findings.iter().any(|f| f.level <= threshold)))
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
    let mut shown = 0;
    text.push_str(&format!(
        "{:<42} {:<26} {:<19} {:<19} {}\n",
        "ID", "WATCHES", "DEFAULT in/out", "EFFECTIVE in/out", "SOURCE"
    ));
    for (i, r) in rules.rows.iter().enumerate() {
        if args.id.as_deref().is_some_and(|id| id != r.id) {
            continue;
        }
        shown += 1;
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
        text.push_str(&format!(
            "{:<42} {:<26} {:<19} {:<19} {}\n",
            r.id, watches, default, effective, r.source
        ));
        if args.id.is_some() {
            text.push_str(&format!("    {}\n", r.help));
        }
    }
    for (i, r) in lint_rules.rows.iter().enumerate() {
        if args.id.as_deref().is_some_and(|id| id != r.id) {
            continue;
        }
        shown += 1;
        text.push_str(&format!(
            "{:<42} {:<26} {:<19} {:<19} {}\n",
            r.id,
            format!("lint {:?}", r.predicate).to_lowercase(),
            r.level.word(),
            lint_rules.level(i).word(),
            lint_rules.source
        ));
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
