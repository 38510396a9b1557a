//! `upgrade`: which pinned servers a team can move, and what moving them breaks.
//!
//! The pins (`pins`) come from covenant.toml's `[[server]]` packages and from agent
//! client configs. For each pinned package server the registry's releases above the pin
//! are listed; the pin and the candidates are captured as package sources are anywhere
//! else (installed into the cache, captured once, and read from the capture cache on
//! every later run) and compared with the project's policy (its `profile` and
//! `[severity]`): `latest` with the bump moving there needs, and `compatible`, the
//! newest release that breaks nothing from the pin (candidates newest first, at most
//! `--max-candidates`). `--baseline-rev REV` compares each pin at REV with the pin now
//! instead, and reports only the pins that moved. `report` renders the rows; `write`
//! moves the pins.
//!
//! Installs run in parallel (`--jobs`); captures run one at a time, because ending a
//! capture ends every child process it does not know (a server's orphans), which an
//! install running beside it would be.

pub(super) mod pins;
mod report;
mod write;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use termcolor::WriteColor;

use self::pins::{Pin, Place, Version, What};
use super::args::{LiveSource, UpgradeArgs, UpgradeFormat, UpgradeTo};
use crate::config::{Config, FailOn};
use crate::diff;
use crate::error::{Error, Result};
use crate::mcp;
use crate::policy::{self, Outcome, Policy};
use crate::registry::{self, Package, PackageOptions, Registry, Requested};
use crate::rules::{Rules, Severity};

/// What became of one server.
pub(super) struct Row {
    pub name: String,
    pub source: String,
    /// `npm:NAME` / `pypi:NAME`.
    pub package: Option<String>,
    /// The exact pin now (`None`: unpinned, or not a package).
    pub pinned: Option<String>,
    pub unpinned: bool,
    /// The release the gated move starts from: the pin, the release an unpinned entry
    /// runs now, or (`--baseline-rev`) the pin at REV.
    pub current: Option<String>,
    pub latest: Option<String>,
    pub compatible: Option<String>,
    /// `--baseline-rev`: the pin at REV.
    pub moved_from: Option<String>,
    /// The gated move: current → latest (or, with `--baseline-rev`, → the pin now).
    pub outcome: Option<Outcome>,
    /// current → latest, when the gated move is another.
    pub latest_bump: Option<Severity>,
    pub status: Status,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Status {
    /// Compared.
    Checked,
    /// The pin is the newest release: nothing to compare.
    UpToDate,
    /// Not a package server (or nothing to compare), with why.
    NotChecked(String),
    /// A registry, install or capture failed.
    Failed(String),
}

impl Row {
    fn new(pin: &Pin) -> Row {
        Row {
            name: pin.name.clone(),
            source: pin.source.display().to_string(),
            package: None,
            pinned: None,
            unpinned: false,
            current: None,
            latest: None,
            compatible: None,
            moved_from: None,
            outcome: None,
            latest_bump: None,
            status: Status::Checked,
            notes: Vec::new(),
        }
    }

    /// Moving as the gate judges fails at --fail-on.
    pub(super) fn fails(&self) -> bool {
        self.outcome.as_ref().is_some_and(|o| o.fails)
    }

    /// The bump the gated move needs.
    pub(super) fn bump(&self) -> Option<Severity> {
        match self.status {
            Status::UpToDate => Some(Severity::None),
            _ => self.outcome.as_ref().map(|o| o.bump),
        }
    }
}

/// The report, as the formats render it.
pub(super) struct Upgrade {
    pub rows: Vec<Row>,
    pub baseline_rev: Option<String>,
    pub fail_on: FailOn,
    /// `--baseline-rev`: package pins that did not move.
    pub unchanged: usize,
}

pub(super) fn run(
    rules: &Rules,
    config: &Config,
    args: UpgradeArgs,
    explicit_config: bool,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let fail_on = args
        .fail_on
        .map(FailOn::from)
        .or(config.fail_on)
        .unwrap_or(FailOn::Breaking);
    let mut texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    let pins = collect(config, &args.from_client, &mut texts)?;
    let source = LiveSource {
        http: None,
        headers: Vec::new(),
        timeout: args.timeout,
        protocol: mcp::Protocol::Auto,
        client_capabilities: Vec::new(),
        show_server_stderr: false,
        read_ui_resources: false,
        python: None,
        env: Vec::new(),
        command: Vec::new(),
    };
    let jobs = args.jobs.map(|j| j as usize).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let mut engine = Engine {
        rules,
        config,
        fail_on,
        source,
        jobs,
        captures: HashMap::new(),
        captured: 0,
    };
    let (rows, unchanged) = match &args.baseline_rev {
        Some(rev) => by_revision(&mut engine, rules, config, &pins, rev, explicit_config)?,
        None => (
            by_registry(&mut engine, &pins, args.max_candidates as usize),
            0,
        ),
    };
    let report = Upgrade {
        rows,
        baseline_rev: args.baseline_rev.clone(),
        fail_on,
        unchanged,
    };
    for row in &report.rows {
        if let Status::Failed(e) = &row.status {
            eprintln!(
                "error: server {}: {}",
                crate::escape::text(&row.name),
                crate::error::log(e)
            );
        }
    }
    let failed = report
        .rows
        .iter()
        .any(|r| matches!(r.status, Status::Failed(_)));
    let format = args.format;
    super::output::emit(
        out,
        args.output.as_deref(),
        &|o| report::render(&report, format, o),
        &|o| report::render(&report, UpgradeFormat::Human, o),
    )?;
    if failed {
        if args.write {
            eprintln!("mcp-covenant: nothing written: a server could not be compared");
        }
        return Ok(2);
    }
    if args.write {
        write_pins(&pins, &report.rows, &texts, args.to)?;
    }
    Ok(u8::from(report.rows.iter().any(Row::fails)))
}

/// The pins of covenant.toml and the client configs (`--from-client`, else the ones
/// found here), with each file's text kept for `--write`.
fn collect(
    config: &Config,
    from_client: &[PathBuf],
    texts: &mut BTreeMap<PathBuf, String>,
) -> Result<Vec<Pin>> {
    let mut pins = pins::from_config(config);
    if let Some(file) = config.file.as_ref().filter(|_| !pins.is_empty()) {
        texts.insert(file.clone(), crate::config::read_text(file)?);
    }
    let clients: Vec<PathBuf> = match from_client.is_empty() {
        false => from_client.to_vec(),
        true => pins::CLIENT_CONFIGS
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .collect(),
    };
    for file in clients {
        let bytes = crate::io::read_input(&file, "client config")?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::new(format!("{}: not UTF-8", file.display())))?;
        pins.extend(pins::from_client(&text, &file)?);
        texts.insert(file, text);
    }
    if pins.is_empty() {
        return Err(Error::new(format!(
            "no servers to upgrade: covenant.toml has no [[server]] entries and no client config was found (looked for {}); name one with --from-client FILE",
            pins::CLIENT_CONFIGS.join(", ")
        )));
    }
    Ok(pins)
}

/// What captures and compares: the capture settings, the captures made in this run.
struct Engine<'a> {
    rules: &'a Rules,
    config: &'a Config,
    fail_on: FailOn,
    source: LiveSource,
    jobs: usize,
    /// By [`key`]: the lockfile's bytes, or why there is none.
    captures: HashMap<String, std::result::Result<Vec<u8>, String>>,
    /// Captures started in this run (for the progress line).
    captured: usize,
}

/// One release to capture: the package at an exact version, and how it is started.
#[derive(Clone, Debug)]
struct Release {
    package: Package,
    options: PackageOptions,
}

impl Release {
    fn new(package: &Package, version: &str, options: &PackageOptions) -> Release {
        Release {
            package: Package {
                requested: Requested::Exact(version.to_string()),
                ..package.clone()
            },
            options: options.clone(),
        }
    }

    fn version(&self) -> &str {
        match &self.package.requested {
            Requested::Exact(v) => v,
            Requested::Latest => "latest",
        }
    }

    fn key(&self) -> String {
        format!("{}\u{0}{:?}", self.package.display(), self.options)
    }
}

impl Engine<'_> {
    /// Capture every release of `needed` not captured yet: the installs the cache lacks
    /// at most `jobs` at a time, then the captures one by one.
    fn capture(&mut self, needed: &[Release]) {
        let mut todo: Vec<&Release> = Vec::new();
        for r in needed {
            if !self.captures.contains_key(&r.key()) && !todo.iter().any(|t| t.key() == r.key()) {
                todo.push(r);
            }
        }
        if todo.is_empty() {
            return;
        }
        let key = super::source::capture_key(&self.source);
        let cached = |r: &Release| {
            registry::cache::capture_path(&r.package, r.version(), &r.options, &key)
                .is_ok_and(|p| p.is_file())
        };
        let installs: Vec<&Release> = todo.iter().copied().filter(|r| !cached(r)).collect();
        let notices = super::notices();
        let installed = parallel(&installs, self.jobs, |r| {
            registry::check_env(&r.package.display(), &r.options)?;
            registry::install(&r.package, r.version(), &r.options, &notices).map(|_| ())
        });
        let mut failed: HashMap<String, String> = HashMap::new();
        for (r, result) in installs.iter().zip(installed) {
            if let Err(e) = result {
                failed.insert(r.key(), e.to_string());
            }
        }
        let total = self.captured + installs.len();
        for r in todo {
            let k = r.key();
            let result = match failed.remove(&k) {
                Some(e) => Err(e),
                None => {
                    if !cached(r) {
                        self.captured += 1;
                        progress(&format!(
                            "capturing {} {} ({}/{total})",
                            r.package.name,
                            r.version(),
                            self.captured
                        ));
                    }
                    super::source::package_lockfile(&r.package, &r.options, &self.source)
                        .map(|(bytes, _)| bytes)
                        .map_err(|e| e.to_string())
                }
            };
            self.captures.insert(k, result);
        }
    }

    /// The changes from `a` to `b` (both captured), with the project's policy.
    fn compare(&self, a: &Release, b: &Release) -> std::result::Result<Outcome, String> {
        let get = |r: &Release| -> std::result::Result<&Vec<u8>, String> {
            match self.captures.get(&r.key()) {
                Some(Ok(bytes)) => Ok(bytes),
                Some(Err(e)) => Err(e.clone()),
                None => Err(format!("{} was not captured", r.package.display())),
            }
        };
        let (x, y) = (get(a)?, get(b)?);
        let (na, nb) = (a.package.display(), b.package.display());
        let policy = Policy::new(self.rules, &self.config.severity);
        let compared =
            diff::lazy::compare_files(&policy, (x, &na), (y, &nb), diff::DEFAULT_WORK_BUDGET)
                .map_err(|e| e.to_string())?;
        // With `version`, the releases' own versions say whether a break was declared
        // (a pinned package's semver promise); otherwise they report nothing of their own.
        let versions = match self.fail_on {
            FailOn::Version => (Some(a.version()), Some(b.version())),
            _ => (None, None),
        };
        Ok(policy::apply(
            self.rules,
            self.config,
            compared.changes,
            versions,
            self.fail_on,
        ))
    }
}

/// A status line on a terminal (never with `CI` set or `-q`).
fn progress(line: &str) {
    use std::io::IsTerminal;
    if !super::quiet() && std::env::var_os("CI").is_none() && std::io::stderr().is_terminal() {
        eprintln!("mcp-covenant: {}", crate::escape::text(line));
    }
}

/// `f` on every item, at most `jobs` at a time; the results in the items' order.
fn parallel<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<R>>> =
        std::sync::Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(feature = "http")]
fn releases(package: &Package) -> Result<Vec<String>> {
    registry::published::releases(package, &super::notices())
}

#[cfg(not(feature = "http"))]
fn releases(package: &Package) -> Result<Vec<String>> {
    Err(Error::new(format!(
        "{}: `upgrade` asks the registry which releases exist, and this mcp-covenant was built without the `http` feature",
        package.display()
    )))
}

/// Versions in the registry's order.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum V {
    Npm(registry::version::Semver),
    Pypi(registry::version::Pep440),
}

impl V {
    fn parse(registry: Registry, s: &str) -> Option<V> {
        match registry {
            Registry::Npm => registry::version::Semver::parse(s).map(V::Npm),
            Registry::Pypi => registry::version::Pep440::parse(s).map(V::Pypi),
        }
    }

    fn is_pre(&self) -> bool {
        match self {
            V::Npm(v) => v.is_pre(),
            V::Pypi(v) => v.is_pre(),
        }
    }
}

/// The releases above `from` up to `latest`, newest first (pre-releases only when
/// `from` is one), each a valid exact version of `package`.
fn above(package: &Package, from: &str, latest: &str, releases: &[String]) -> Vec<String> {
    let reg = package.registry;
    let (Some(f), Some(l)) = (V::parse(reg, from), V::parse(reg, latest)) else {
        return Vec::new();
    };
    let mut list: Vec<(V, &String)> = releases
        .iter()
        .filter(|r| {
            // A version the registry lists reaches npm or pip only once it parses as
            // an exact version of a package source.
            Package::parse(&package.display_at(r)).is_some_and(|p| p.is_ok())
        })
        .filter_map(|r| Some((V::parse(reg, r)?, r)))
        .filter(|(v, _)| *v > f && *v <= l && (f.is_pre() || !v.is_pre()))
        .collect();
    list.sort_by(|a, b| b.0.cmp(&a.0));
    list.dedup_by(|a, b| a.0 == b.0);
    list.into_iter().map(|(_, r)| r.clone()).collect()
}

/// One server's search for `compatible`.
struct Search {
    row: usize,
    package: Package,
    options: PackageOptions,
    from: String,
    /// Newest first; the first is `latest`.
    candidates: Vec<String>,
    next: usize,
    /// Releases left out by `--max-candidates`.
    cut: usize,
}

/// Each pin against the registry's releases above it.
fn by_registry(engine: &mut Engine<'_>, pins: &[Pin], max: usize) -> Vec<Row> {
    let mut rows: Vec<Row> = pins.iter().map(Row::new).collect();
    let listed = listings(engine, pins);
    for (pin, row) in pins.iter().zip(rows.iter_mut()) {
        if let What::NotChecked(why) = &pin.what {
            row.status = Status::NotChecked(why.clone());
        }
    }
    let searches = listed
        .into_iter()
        .filter_map(|(i, list)| start(&pins[i], &mut rows[i], i, list, max))
        .collect();
    search(engine, &mut rows, searches);
    rows
}

/// The releases the registry lists for each package pin (by its index in `pins`), or
/// why it could not say.
fn listings(
    engine: &Engine<'_>,
    pins: &[Pin],
) -> Vec<(usize, std::result::Result<Vec<String>, String>)> {
    let packages: Vec<(usize, &Package)> = pins
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match &p.what {
            What::Package { package, .. } => Some((i, package)),
            What::NotChecked(_) => None,
        })
        .collect();
    // One request per package, however many pins name it.
    let mut distinct: Vec<&Package> = Vec::new();
    for (_, p) in &packages {
        if !distinct.iter().any(|d| d.same_package(p)) {
            distinct.push(p);
        }
    }
    let answers = parallel(&distinct, engine.jobs, |p| {
        releases(p).map_err(|e| e.to_string())
    });
    let listed: Vec<std::result::Result<Vec<String>, String>> = packages
        .iter()
        .map(|(_, p)| {
            let at = distinct.iter().position(|d| d.same_package(p)).unwrap_or(0);
            answers[at].clone()
        })
        .collect();
    packages.iter().map(|(i, _)| *i).zip(listed).collect()
}

/// The search for one package pin (row `i`) over the releases above it, filling in
/// what its listing tells; `None` when nothing is left to compare (the listing failed,
/// the pin is not listed, it is up to date).
fn start(
    pin: &Pin,
    row: &mut Row,
    i: usize,
    list: std::result::Result<Vec<String>, String>,
    max: usize,
) -> Option<Search> {
    let What::Package {
        package,
        version,
        options,
        ..
    } = &pin.what
    else {
        return None;
    };
    row.package = Some(format!("{}:{}", package.registry.word(), package.name));
    let list = match list {
        Ok(list) => list,
        Err(e) => {
            row.status = Status::Failed(e);
            return None;
        }
    };
    let Some(latest) = registry::version::newest(package.registry, &list) else {
        row.status = Status::Failed(format!(
            "{}: the registry lists no release",
            package.display()
        ));
        return None;
    };
    row.latest = Some(latest.clone());
    let from = current(row, package, version, &latest, &list);
    row.current = Some(from.clone());
    // A pin the registry does not list (a typo, a release taken down) has nothing
    // to be compared from: an error, never "up to date".
    let listed = V::parse(package.registry, &from).is_some_and(|f| {
        list.iter()
            .any(|r| V::parse(package.registry, r).as_ref() == Some(&f))
    });
    if !listed {
        row.status = Status::Failed(format!(
            "{}: the registry does not list this release",
            package.display_at(&from)
        ));
        return None;
    }
    if row.unpinned {
        row.notes.push(format!(
            "unpinned: it runs whatever release is newest when it starts, so its interface can change on any start; pin it exactly ({})",
            exact_spec(pin, &from)
        ));
    }
    let all = above(package, &from, &latest, &list);
    if all.is_empty() {
        row.status = Status::UpToDate;
        row.compatible = Some(from.clone());
        row.latest_bump = Some(Severity::None);
        return None;
    }
    let cut = all.len().saturating_sub(max);
    Some(Search {
        row: i,
        package: package.clone(),
        options: (**options).clone(),
        from,
        candidates: all.into_iter().take(max).collect(),
        next: 0,
        cut,
    })
}

/// The release a pin stands at: its exact version, or, unpinned, the newest release
/// (the newest in an npm range mcp-covenant reads), said in the row's notes.
fn current(
    row: &mut Row,
    package: &Package,
    version: &Version,
    latest: &str,
    list: &[String],
) -> String {
    match version {
        Version::Exact(v) => {
            row.pinned = Some(v.clone());
            v.clone()
        }
        Version::Newest => {
            row.unpinned = true;
            latest.to_string()
        }
        Version::Range(r) => {
            row.unpinned = true;
            match package.registry {
                Registry::Npm => match pins::npm_range_newest(r, list) {
                    Some(v) => v,
                    None => {
                        row.notes.push(format!(
                            "the range `{r}` is not one mcp-covenant reads; taken as the newest release"
                        ));
                        latest.to_string()
                    }
                },
                Registry::Pypi => {
                    row.notes.push(format!(
                        "the range `{r}` is not one mcp-covenant reads; taken as the newest release"
                    ));
                    latest.to_string()
                }
            }
        }
    }
}

/// The searches, in rounds: every open search's next candidate (and its pin) captured
/// together, until each finds a compatible release or runs out.
fn search(engine: &mut Engine<'_>, rows: &mut [Row], mut searches: Vec<Search>) {
    while !searches.is_empty() {
        let moves: Vec<(Release, Release)> = searches
            .iter()
            .map(|s| {
                (
                    Release::new(&s.package, &s.from, &s.options),
                    Release::new(&s.package, &s.candidates[s.next], &s.options),
                )
            })
            .collect();
        let outcomes = compare_all(engine, &moves);
        let mut open = Vec::new();
        for (mut s, outcome) in searches.into_iter().zip(outcomes) {
            let row = &mut rows[s.row];
            let candidate = s.candidates[s.next].clone();
            let outcome = match outcome {
                Ok(o) => o,
                Err(e) => {
                    row.status = Status::Failed(e);
                    continue;
                }
            };
            let breaks = outcome
                .changes
                .iter()
                .any(|c| c.severity == Severity::Breaking);
            if s.next == 0 {
                row.latest_bump = Some(outcome.bump);
                row.outcome = Some(outcome);
            }
            if !breaks {
                row.compatible = Some(candidate);
                continue;
            }
            s.next += 1;
            if s.next == s.candidates.len() {
                row.compatible = Some(s.from.clone());
                if s.cut > 0 {
                    row.notes.push(format!(
                        "--max-candidates {} cut the search: {} older release(s) above the pin were not checked",
                        s.candidates.len(),
                        s.cut
                    ));
                }
                continue;
            }
            open.push(s);
        }
        searches = open;
    }
}

/// Each move `(from, to)` compared, after one capture of every release they need (each
/// once): the outcome, or why there is none, in the moves' order.
fn compare_all(
    engine: &mut Engine<'_>,
    moves: &[(Release, Release)],
) -> Vec<std::result::Result<Outcome, String>> {
    let needed: Vec<Release> = moves
        .iter()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    engine.capture(&needed);
    moves
        .iter()
        .map(|(from, to)| engine.compare(from, to))
        .collect()
}

/// The exact pin to write for `pin` at `version`, as its file spells it.
fn exact_spec(pin: &Pin, version: &str) -> String {
    match &pin.what {
        What::Package {
            package,
            at: Place::Toml,
            ..
        } => format!("package = \"{}\"", package.display_at(version)),
        What::Package {
            package,
            at: Place::Json { .. },
            ..
        } => match package.registry {
            Registry::Npm => format!("npx -y {}@{version}", package.name),
            Registry::Pypi => format!("uvx {}=={version}", package.name),
        },
        What::NotChecked(_) => String::new(),
    }
}

/// Each pin at `rev` against the pin now: only the pins that moved.
fn by_revision(
    engine: &mut Engine<'_>,
    rules: &Rules,
    config: &Config,
    now: &[Pin],
    rev: &str,
    explicit_config: bool,
) -> Result<(Vec<Row>, usize)> {
    let then = pins_at(rules, config, now, rev, explicit_config)?;
    let mut rows = Vec::new();
    let mut unchanged = 0;
    // The rows compared, and their moves (from, to).
    let (mut moved, mut moves): (Vec<usize>, Vec<(Release, Release)>) = (Vec::new(), Vec::new());
    for pin in now {
        let What::Package {
            package,
            version,
            options,
            ..
        } = &pin.what
        else {
            continue;
        };
        let old = then
            .iter()
            .find(|t| t.source == pin.source && t.name == pin.name);
        let mut row = Row::new(pin);
        row.package = Some(format!("{}:{}", package.registry.word(), package.name));
        row.pinned = version.exact().map(str::to_string);
        row.unpinned = version.exact().is_none();
        let Some(What::Package {
            package: old_package,
            version: old_version,
            options: old_options,
            ..
        }) = old.map(|o| &o.what)
        else {
            if old.is_none() {
                row.status = Status::NotChecked(format!(
                    "added since {rev}: no earlier pin to compare with"
                ));
            } else {
                row.status = Status::NotChecked(format!(
                    "not a package server at {rev}: no earlier release to compare with"
                ));
            }
            rows.push(row);
            continue;
        };
        let same_package = old_package.same_package(package);
        if same_package && old_version == version && old_options == options {
            unchanged += 1;
            continue;
        }
        let Some(from) = old_version.exact() else {
            row.status = Status::NotChecked(format!(
                "unpinned at {rev}: no earlier release to compare with"
            ));
            rows.push(row);
            continue;
        };
        row.moved_from = Some(match same_package {
            true => from.to_string(),
            false => old_package.display_at(from),
        });
        let to = match version {
            Version::Exact(v) => v.clone(),
            _ => {
                row.notes.push(format!(
                    "unpinned now: it runs whatever release is newest when it starts; pin it exactly ({})",
                    exact_spec(pin, "VERSION")
                ));
                match releases(package).and_then(|l| {
                    registry::version::newest(package.registry, &l).ok_or_else(|| {
                        Error::new(format!(
                            "{}: the registry lists no release",
                            package.display()
                        ))
                    })
                }) {
                    Ok(v) => v,
                    Err(e) => {
                        row.status = Status::Failed(e.to_string());
                        rows.push(row);
                        continue;
                    }
                }
            }
        };
        row.current = Some(to.clone());
        moved.push(rows.len());
        moves.push((
            Release::new(old_package, from, old_options),
            Release::new(package, &to, options),
        ));
        rows.push(row);
    }
    for (i, outcome) in moved.into_iter().zip(compare_all(engine, &moves)) {
        match outcome {
            Ok(o) => rows[i].outcome = Some(o),
            Err(e) => rows[i].status = Status::Failed(e),
        }
    }
    Ok((rows, unchanged))
}

/// The pins of the same files at `rev` (read through git; a file REV lacks has none).
/// covenant.toml at REV is the one `check --baseline-rev` reads (`explicit_config`: it
/// was named by `--config`).
fn pins_at(
    rules: &Rules,
    config: &Config,
    now: &[Pin],
    rev: &str,
    explicit_config: bool,
) -> Result<Vec<Pin>> {
    let mut files: Vec<&Path> = Vec::new();
    for p in now {
        if !files.contains(&p.source.as_path()) {
            files.push(&p.source);
        }
    }
    let mut out = Vec::new();
    for file in files {
        if config.file.as_deref() == Some(file) {
            if let Some(old) = super::check::base_config(rules, config, rev, explicit_config)? {
                out.extend(pins::from_config(&old).into_iter().map(|mut p| {
                    p.source = file.to_path_buf();
                    p
                }));
            }
            continue;
        }
        let Some(rel) = file.to_str().filter(|_| file.is_relative()) else {
            return Err(Error::new(format!(
                "--baseline-rev reads {} at a revision, so it must be a path inside the repository",
                file.display()
            )));
        };
        let rel = if rel.starts_with("./") || rel.starts_with("../") {
            rel.to_string()
        } else {
            format!("./{rel}")
        };
        let at = super::source::at_revision(rev, &rel)?;
        if !at.exists()? {
            continue;
        }
        let text =
            String::from_utf8(at.read()?).map_err(|_| Error::new(format!("{at}: not UTF-8")))?;
        out.extend(pins::from_client(&text, file).map_err(|e| e.context(&at))?);
    }
    Ok(out)
}

/// `--write`: each pin moved to its `compatible` release (or its latest).
fn write_pins(
    pins: &[Pin],
    rows: &[Row],
    texts: &BTreeMap<PathBuf, String>,
    to: UpgradeTo,
) -> Result<()> {
    let mut moves: BTreeMap<PathBuf, Vec<write::Move<'_>>> = BTreeMap::new();
    let mut said = Vec::new();
    for (pin, row) in pins.iter().zip(rows) {
        let What::Package { package, at, .. } = &pin.what else {
            continue;
        };
        let (Some(pinned), false) = (&row.pinned, row.unpinned) else {
            continue;
        };
        let target = match to {
            UpgradeTo::Compatible => row.compatible.as_ref(),
            UpgradeTo::Latest => row.latest.as_ref(),
        };
        let Some(target) = target.filter(|t| *t != pinned) else {
            continue;
        };
        let breaking = match (to, &row.outcome) {
            (UpgradeTo::Latest, Some(o)) => o
                .changes
                .iter()
                .filter(|c| c.severity == Severity::Breaking)
                .count(),
            _ => 0,
        };
        said.push(format!(
            "moved {} from {pinned} to {target} in {}{}",
            pin.name,
            pin.source.display(),
            match breaking {
                0 => String::new(),
                n => format!(" ({n} breaking change(s), listed above)"),
            }
        ));
        moves
            .entry(pin.source.clone())
            .or_default()
            .push(write::Move {
                name: &pin.name,
                package,
                at,
                to: target,
            });
    }
    let edited = write::edit(texts, &moves)?;
    for (file, text) in edited {
        crate::io::write_atomic(&file, text.as_bytes())?;
    }
    for line in &said {
        status!("mcp-covenant: {}", crate::error::log(line));
    }
    if said.is_empty() {
        status!(
            "mcp-covenant: every pin is at its {} release; nothing written",
            match to {
                UpgradeTo::Compatible => "compatible",
                UpgradeTo::Latest => "latest",
            }
        );
    }
    Ok(())
}
