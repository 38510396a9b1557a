//! `check`: the baseline lockfile against a live server or a second lockfile (or, with
//! `--baseline-rev`, against itself at a git revision), for one server or each
//! `[[server]]`.

use std::path::{Path, PathBuf};

use termcolor::WriteColor;

use super::args::CheckArgs;
use super::ignore::Idle;
use super::output::{emit, for_each_server};
use super::settings::CheckSettings;
use super::source::{capture, snapshot_command, Live, LockSource};
use crate::config::{Config, FailOn, Server};
use crate::diff::{self, lazy::Compared};
use crate::error::{Error, Result};
use crate::lint::LintRules;
use crate::policy::{self, Policy};
use crate::report::{self, anchor, Format, Report};
use crate::rules::{Rules, Severity};

/// `--baseline published`: the release before the declared version, from its registry.
const PUBLISHED: &str = "published";

/// One comparison: the changes, both servers' declarations, every element subject (for
/// JUnit), and both files' line maps when the format points at lines.
fn compare(
    policy: &Policy<'_>,
    settings: &CheckSettings<'_>,
    base: &LockSource,
    against: Option<&LockSource>,
    live: &Live<'_>,
) -> Result<Compared> {
    match against {
        Some(against) => compare_files(policy, settings, base, against),
        None => compare_live(policy, settings, base, live),
    }
}

/// Two files, read on two threads (one after the other when either is a package, whose
/// capture ends every child process it does not know, such as the other side's `npm` or
/// `git`); only the elements whose bytes differ are built.
fn compare_files(
    policy: &Policy<'_>,
    settings: &CheckSettings<'_>,
    base: &LockSource,
    against: &LockSource,
) -> Result<Compared> {
    let captures = |s: &LockSource| matches!(s, LockSource::Package(_));
    let (a, b) = if captures(base) || captures(against) {
        (base.baseline_bytes()?, against.bytes()?)
    } else {
        std::thread::scope(|s| {
            let b = s.spawn(|| against.bytes());
            let a = base.baseline_bytes();
            let b = b
                .join()
                .unwrap_or_else(|_| Err(Error::new("reading the lockfile failed")));
            Ok::<_, Error>((a?, b?))
        })?
    };
    let (na, nb) = (base.name(), against.name());
    // Given away: without line maps the bytes are dropped before the diff.
    diff::lazy::compare_owned_files(
        policy,
        (a, &na),
        (b, &nb),
        settings.walk_budget,
        settings.format.needs_anchors(),
    )
}

/// A live server against the baseline, which is read (and so found readable) before
/// the capture; only its elements that differ from the capture are built.
fn compare_live(
    policy: &Policy<'_>,
    settings: &CheckSettings<'_>,
    base: &LockSource,
    live: &Live<'_>,
) -> Result<Compared> {
    let bytes = match base {
        LockSource::File(p) if std::fs::symlink_metadata(p).is_err() => {
            return Err(Error::new(format!(
                "baseline lockfile {} not found; create it with `{}` and commit it",
                p.display(),
                snapshot_command(live, &settings.source, p)
            )))
        }
        _ => base.baseline_bytes()?,
    };
    let baseline = diff::lazy::read_baseline(&bytes, &base.name())?;
    let current = capture(live, &settings.source)?;
    let anchors = settings.format.needs_anchors();
    baseline.compare(policy, &current, settings.walk_budget, anchors)
}

/// What one comparison of `check` reads: the baseline, and a lockfile or a live server.
struct CheckTarget<'a> {
    base: LockSource,
    against: Option<LockSource>,
    live: Live<'a>,
}

/// `check`: this covenant.toml, held (with `--baseline-rev`) to REV's, then each
/// comparison it configures.
pub(super) fn command(
    rules: &Rules,
    config: Config,
    args: CheckArgs,
    explicit: bool,
    verbose: bool,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    for w in config.ignore_warnings() {
        super::warn(&w);
    }
    // Compared with a revision: this covenant.toml is held to that revision's, so a pull
    // request cannot loosen its own gate. (A covenant.toml outside the repository,
    // `--config /abs/path`, is not the pull request's to change: it applies as it is.)
    let in_repository = config.file.as_deref().is_none_or(|f| f.is_relative());
    let (config, base) = match args.baseline_rev.as_deref() {
        Some(rev) if in_repository => held(rules, config, rev, explicit)?,
        _ => (config, None),
    };
    let settings = CheckSettings::resolve(args, &config, verbose)?;
    run(rules, &config, base.as_ref(), settings, out)
}

/// `config` held to REV's covenant.toml, which is read once, here: its policy holds
/// this one, and its [[server]] entries (returned with it) hold the set of servers
/// checked.
fn held(
    rules: &Rules,
    config: Config,
    rev: &str,
    explicit: bool,
) -> Result<(Config, Option<Config>)> {
    let base = base_config(rules, &config, rev, explicit)?;
    let (held, loosened) = config.held_to(base.as_ref().unwrap_or(&Config::default()), rules);
    for l in &loosened {
        super::warn(&format!(
            "{l}; this check applies {rev}'s stricter policy (the looser one applies once merged)"
        ));
    }
    Ok((held, base))
}

/// The servers REV's covenant.toml configures (with --baseline-rev), and its name: each
/// server's lockfile at REV is found by its name there, so a pull request that moves a
/// lockfile is still compared with the one REV had, and one that drops a server (or
/// every [[server]], or covenant.toml) has it reported as removed.
struct AtRev<'b> {
    servers: &'b [Server],
    file: String,
}

impl<'b> AtRev<'b> {
    fn of(settings: &CheckSettings<'_>, base_config: Option<&'b Config>) -> Option<AtRev<'b>> {
        match (&settings.baseline_rev, base_config) {
            (Some(_), Some(b)) if !b.servers.is_empty() => Some(AtRev {
                servers: &b.servers,
                file: b
                    .file
                    .as_ref()
                    .map(|f| f.display().to_string())
                    .unwrap_or_default(),
            }),
            _ => None,
        }
    }
}

/// The lockfile at REV to compare `server`'s (`current`) with: the one REV's
/// covenant.toml names for it when it has moved since, else the same path.
fn base_lockfile(
    settings: &CheckSettings<'_>,
    base: Option<&AtRev<'_>>,
    server: Option<&Server>,
    current: &Path,
) -> PathBuf {
    let moved_from = server.and_then(|server| {
        let old = base?.servers.iter().find(|b| b.name == server.name)?;
        (!same_path(&old.lockfile, current)).then_some(&old.lockfile)
    });
    match moved_from {
        Some(old) => {
            status!(
                "note: server {}: its lockfile was {} at {}; compared with that",
                server.map(|s| s.name.as_str()).unwrap_or_default(),
                old.display(),
                settings.baseline_rev.as_deref().unwrap_or_default()
            );
            old.clone()
        }
        None => current.to_path_buf(),
    }
}

/// What one comparison reads. With --baseline-rev: the lockfile at REV (`base`) against
/// the lockfile, no server.
fn target<'a>(
    settings: &CheckSettings,
    config: &Config,
    lockfile: &Path,
    base: &Path,
    live: Live<'a>,
) -> Result<CheckTarget<'a>> {
    let server = match &live {
        Live::Server(s) => Some(*s),
        Live::Cli => None,
    };
    let read = |arg: &Path| match arg.to_str() {
        Some(PUBLISHED) => super::source::published(server, &settings.source, config),
        _ => LockSource::from_arg_in(arg, &settings.source, config),
    };
    Ok(match &settings.baseline_rev {
        Some(rev) => CheckTarget {
            base: LockSource::at_revision(rev, base)?,
            against: Some(LockSource::File(lockfile.to_path_buf())),
            live,
        },
        None => CheckTarget {
            base: read(lockfile)?,
            against: settings.against.as_deref().map(read).transpose()?,
            live,
        },
    })
}

/// Servers REV configured and this covenant.toml no longer does: everything they
/// served is gone for their clients. With no [[server]] here, the one lockfile checked
/// (`lone`) stands for a REV server only when it is that server's lockfile.
fn removed_servers(
    config: &Config,
    settings: &CheckSettings<'_>,
    base: Option<&AtRev<'_>>,
    lone: Option<&Path>,
) -> Vec<Server> {
    let (Some(AtRev { servers, file }), false) = (base, settings.picked) else {
        return Vec::new();
    };
    servers
        .iter()
        .filter(|b| !config.servers.iter().any(|c| c.name == b.name))
        .filter(|b| !lone.is_some_and(|l| same_path(l, &b.lockfile)))
        .inspect(|b| {
            super::warn(&format!(
                "server {} is in {file} and not in {}: everything it served is reported as removed",
                b.name,
                config
                    .file
                    .as_deref()
                    .unwrap_or(Path::new(crate::config::DEFAULT_FILE))
                    .display()
            ))
        })
        .cloned()
        .collect()
}

/// No [[server]] here and some removed: the lockfile checked (`lone`) is one entry
/// among them (named for the REV server whose lockfile it is), when it is anywhere.
fn lone_server(
    settings: &CheckSettings<'_>,
    base: Option<&AtRev<'_>>,
    lone: Option<&PathBuf>,
    removed: &[Server],
) -> Result<Vec<Server>> {
    let (Some(l), Some(base)) = (lone, base) else {
        return Ok(Vec::new());
    };
    if removed.is_empty() {
        return Ok(Vec::new());
    }
    let named = base.servers.iter().find(|b| same_path(&b.lockfile, l));
    let present = std::fs::symlink_metadata(l).is_ok()
        || named.is_some()
        || exists_at(settings.baseline_rev.as_deref().unwrap_or("HEAD"), l)?;
    Ok(present
        .then(|| Server {
            name: named.map_or_else(|| "(no [[server]])".to_string(), |b| b.name.clone()),
            transport: crate::config::Transport::Command(Vec::new()),
            env: Vec::new(),
            lockfile: l.clone(),
            origin: String::new(),
        })
        .into_iter()
        .collect())
}

/// Each comparison `check` makes (one, or one per server), and its report.
fn run(
    rules: &Rules,
    config: &Config,
    base_config: Option<&Config>,
    settings: CheckSettings<'_>,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let base = AtRev::of(&settings, base_config);
    let lone = settings.servers.is_none().then(|| settings.baseline(None));
    let removed = removed_servers(config, &settings, base.as_ref(), lone.as_deref());
    let lone = lone_server(&settings, base.as_ref(), lone.as_ref(), &removed)?;
    let single = match settings.servers.as_deref() {
        None if removed.is_empty() => Some((Live::Cli, None, settings.baseline(None))),
        None => None,
        Some([one]) if removed.is_empty() => {
            Some((Live::Server(one), Some(one), settings.baseline(Some(one))))
        }
        Some(_) => None,
    };
    if let Some((live, server, baseline)) = single {
        let base = base_lockfile(&settings, base.as_ref(), server.copied(), &baseline);
        let target = target(&settings, config, &baseline, &base, live)?;
        let report = check_one(rules, config, &settings, &target)?;
        idle_ignores(rules, config, &settings, Some(&[&report]))?;
        emit(
            out,
            settings.output.as_deref(),
            &|o| report::render(&report, settings.format, o),
            &|o| report::render(&report, Format::Human, o),
        )?;
        ship_on_purpose(&[&report]);
        return Ok(u8::from(report.fails));
    }
    if settings.baseline.is_some() && settings.servers.is_some() {
        return Err(Error::new(
            "--baseline names one lockfile, and covenant.toml has several [[server]] entries (each compares with its `lockfile`); pick one with --server NAME",
        ));
    }
    let mut servers = settings.servers.clone().unwrap_or_default();
    servers.extend(lone.iter());
    servers.extend(removed.iter());
    check_each(
        rules,
        config,
        &settings,
        base.as_ref(),
        &servers,
        &removed,
        out,
    )
}

/// Each of `servers` compared (the `removed` ones with nothing), and one report of all.
fn check_each(
    rules: &Rules,
    config: &Config,
    settings: &CheckSettings<'_>,
    base: Option<&AtRev<'_>>,
    servers: &[&Server],
    removed: &[Server],
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let (mut code, reports) = for_each_server(servers, |server| {
        let old = base_lockfile(settings, base, Some(server), &server.lockfile);
        let live = Live::Server(server);
        let mut target = target(settings, config, &server.lockfile, &old, live)?;
        if removed.iter().any(|r| std::ptr::eq(r, server)) {
            // Compared with nothing: every element is removed.
            if let LockSource::Git(g) | LockSource::Absent(g) = &target.base {
                target.against = Some(LockSource::Absent(g.clone()));
            }
        }
        check_one(rules, config, settings, &target)
    });
    for (_, r) in &reports {
        if let Some(r) = r {
            code = code.max(u8::from(r.fails));
        }
    }
    let all: Option<Vec<&Report<'_>>> = reports.iter().map(|(_, r)| r.as_ref()).collect();
    idle_ignores(rules, config, settings, all.as_deref())?;
    let grouped: Vec<(&str, &Path, Option<&Report<'_>>)> = servers
        .iter()
        .zip(&reports)
        .map(|(server, (_, r))| (server.name.as_str(), server.lockfile.as_path(), r.as_ref()))
        .collect();
    emit(
        out,
        settings.output.as_deref(),
        &|o| report::grouped::check(&grouped, settings.format, o),
        &|o| report::grouped::check(&grouped, Format::Human, o),
    )?;
    ship_on_purpose(&reports.iter().flat_map(|(_, r)| r).collect::<Vec<_>>());
    Ok(code)
}

/// After a failing verdict, one line on how to ship it on purpose: the major version bump
/// `--fail-on version` accepts (when breaking changes are what fails), a maintainer's
/// approve label in CI, or an `[[ignore]]` per change.
fn ship_on_purpose(reports: &[&Report<'_>]) {
    let failing: Vec<&crate::diff::Change> = reports
        .iter()
        .filter(|r| r.fails)
        .flat_map(|r| {
            r.changes
                .iter()
                .filter(|c| policy::failing(r.fail_on, r.fails, c))
        })
        .collect();
    let Some(first) = failing.first() else {
        return;
    };
    let fail_on = reports[0].fail_on;
    let bump = match fail_on {
        FailOn::Version => "bump the server's major version (in 0.y.z the minor), ",
        FailOn::Breaking if failing.iter().all(|c| c.severity == Severity::Breaking) => {
            "bump the server's major version and gate with `--fail-on version` (fail_on = \"version\"), "
        }
        _ => "",
    };
    let ignore = super::invocation().join(" ");
    let ignore = match failing.len() {
        1 => format!("`{ignore} ignore {} --reason WHY`", first.fingerprint),
        _ => format!("`{ignore} ignore FINGERPRINT --reason WHY` for each (`check -v` shows them)"),
    };
    status!(
        "hint: to ship this on purpose, {bump}have a maintainer add the approve label (the Action's `approve-label`), or acknowledge the change: {ignore}"
    );
}

/// The covenant.toml that applied at revision `rev` (its servers' lockfiles as paths
/// from here), read once: the one `--config` names (`explicit`), else the one discovery
/// finds at REV (the nearest covenant.toml at REV from where the command was run, up to
/// the repository's root), so a change that deletes covenant.toml, or the nearer one, or
/// adds a nearer one that shadows it, is still held to it. `None` when REV has none (the
/// project adopts it in this change).
/// A covenant.toml REV has but that cannot be read is an error: without it, a server's
/// lockfile at REV cannot be found (a moved or dropped one would look new), nor the
/// policy a pull request is held to.
pub(super) fn base_config(
    rules: &Rules,
    config: &Config,
    rev: &str,
    explicit: bool,
) -> Result<Option<Config>> {
    let here = PathBuf::from(crate::config::DEFAULT_FILE);
    let candidates: Vec<PathBuf> = match &config.file {
        // A covenant.toml outside the repository (an absolute --config) has no revision.
        Some(p) if p.is_absolute() => return Ok(None),
        Some(p) if explicit => vec![p.clone()],
        _ => {
            // Where the command was run, from here (the command may have moved up to
            // the covenant.toml it found), then each directory up to the root.
            let cwd = std::env::current_dir().ok();
            let from = super::MOVED_FROM
                .get()
                .zip(cwd.as_deref())
                .and_then(|(from, cwd)| from.strip_prefix(cwd).ok())
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let mut up: Vec<PathBuf> = from.ancestors().map(|d| d.join(&here)).collect();
            let root = crate::git::up_to_root()?;
            let mut dir = PathBuf::new();
            for _ in root.components() {
                dir.push("..");
                up.push(dir.join(&here));
            }
            up
        }
    };
    for path in candidates {
        let Some(rel) = path.to_str() else { continue };
        let rel = if rel.starts_with("./") || rel.starts_with("../") {
            rel.to_string()
        } else {
            format!("./{rel}")
        };
        let file = super::source::at_revision(rev, &rel)?;
        if !file.exists()? {
            continue;
        }
        let mut old = file
            .read()
            .and_then(|bytes| {
                let text = String::from_utf8_lossy(&bytes);
                Config::parse(&text, &file.to_string(), rules, &LintRules::embedded()?)
            })
            .map_err(|e| {
                Error::new(format!(
                    "cannot read the [[server]] entries of {file}, so each server's lockfile at {rev} cannot be found: {e}"
                ))
            })?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        for s in &mut old.servers {
            if let Some(dir) = dir.filter(|_| s.lockfile.is_relative()) {
                s.lockfile = dir.join(&s.lockfile);
            }
        }
        old.file = Some(PathBuf::from(file.to_string()));
        return Ok(Some(old));
    }
    Ok(None)
}

/// The `[[ignore]]` entries that set nothing aside, once every server's comparison is
/// in `reports`: a warning for each that matched no change of any server compared (as
/// ruff's RUF100 reports a `noqa` that suppresses nothing), or, with `--prune-ignores`,
/// those and the expired ones removed from covenant.toml.
fn idle_ignores(
    rules: &Rules,
    config: &Config,
    settings: &CheckSettings<'_>,
    reports: Option<&[&Report<'_>]>,
) -> Result<()> {
    // Every comparison covenant.toml configures was made: not one picked by --server,
    // nor a server or lockfile of the command line beside [[server]] entries.
    let all_made = !settings.picked && (settings.servers.is_some() || config.servers.is_empty());
    let Some(reports) = reports.filter(|_| all_made) else {
        if settings.prune_ignores {
            super::warn("--prune-ignores removed nothing: not every comparison covenant.toml configures was made (a server or lockfile given on the command line, or a comparison that failed), and an [[ignore]] may be for one that was not");
        }
        return Ok(());
    };
    let mut idle = Vec::new();
    for i in &config.ignore {
        let used = reports
            .iter()
            .any(|r| r.ignored.iter().any(|(c, _)| policy::ignores(i, c)));
        let entry = |why| Idle::of(i, why);
        match (&i.until, i.expired, used) {
            (Some(day), true, _) => idle.push(entry(format!("it expired on {day}"))),
            (_, false, false) => {
                idle.push(entry("it matches no change".to_string()));
                if !settings.prune_ignores {
                    super::warn(&format!(
                        "{}: this [[ignore]] ({}) matches no change; remove it",
                        i.origin, i.reason
                    ));
                }
            }
            _ => {}
        }
    }
    // Loading the config already warned about these (the id is retired).
    for r in &config.retired_ignores {
        let why = format!("its code `{}` is a retired rule id", r.code);
        idle.push(Idle::retired(r, why));
    }
    if settings.prune_ignores {
        // A report that cannot be written fails before covenant.toml is touched.
        if let Some(out) = settings.output.as_deref() {
            crate::io::not_an_input(out)?;
        }
        return super::ignore::prune(config, rules, &idle);
    }
    Ok(())
}

/// Whether `path` (relative) is in revision `rev`.
fn exists_at(rev: &str, path: &Path) -> Result<bool> {
    let Some(rel) = path.to_str().filter(|_| path.is_relative()) else {
        return Ok(false);
    };
    let rel = if rel.starts_with("./") || rel.starts_with("../") {
        rel.to_string()
    } else {
        format!("./{rel}")
    };
    super::source::at_revision(rev, &rel)?.exists()
}

/// Two relative paths name the same file (`./a.lock` is `a.lock`).
fn same_path(a: &Path, b: &Path) -> bool {
    let plain = |p: &Path| -> PathBuf {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    };
    plain(a) == plain(b)
}

/// Compare one target and build its report (versions verified, anchors when the
/// format points at lines).
fn check_one<'r>(
    rules: &'r Rules,
    config: &Config,
    settings: &CheckSettings<'_>,
    target: &CheckTarget<'_>,
) -> Result<Report<'r>> {
    let (base, against) = (&target.base, target.against.as_ref());
    let policy = Policy::new(rules, &config.severity);
    let compared = compare(&policy, settings, base, against, &target.live)?;
    let versions = (compared.servers.0.version(), compared.servers.1.version());
    let outcome = policy::apply(rules, config, compared.changes, versions, settings.fail_on);
    let mut report = Report::new(rules, outcome, base.name());
    report.verbose = settings.verbose;
    if let (true, Some((base_lines, cur_lines))) =
        (settings.format.needs_anchors(), &compared.lines)
    {
        for (map, source) in [(base_lines, Some(base)), (cur_lines, against)] {
            if let (true, Some(source)) = (map.approximate, source) {
                // Rewritten by capturing its server again (a lockfile at a revision
                // cannot be rewritten).
                let how = match source {
                    LockSource::File(p) => format!(
                        "; rewrite it by capturing the server again: `{}`",
                        snapshot_command(&target.live, &settings.source, p)
                    ),
                    _ => String::new(),
                };
                super::warn(&format!(
                    "{} is not in canonical form, so some report lines point at an element rather than the value inside it{how}",
                    source.name()
                ));
            }
        }
        let uris = (base.uri(), against.map(LockSource::uri));
        report.anchors = anchor::anchors_in(
            &report.changes,
            (base_lines, &uris.0),
            uris.1.as_deref().map(|uri| (cur_lines, uri)),
        );
    }
    report.elements = compared.subjects;
    Ok(report)
}
