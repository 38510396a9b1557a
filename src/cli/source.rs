//! Where a surface comes from: a live server (the command line's, or a `[[server]]`),
//! or a lockfile (a path, or `git:REF:PATH`).

use std::path::{Path, PathBuf};

use super::args::LiveSource;
use crate::config::{Config, Server, Transport};
use crate::error::{Error, Result};
use crate::git::GitFile;
use crate::lockfile::{self, Lockfile, Snapshot};
use crate::mcp;
use crate::registry::{self, Package, PackageOptions};
use crate::report::anchor;

/// The server to capture: the one the command line gives, or a `[[server]]`.
pub(super) enum Live<'a> {
    Cli,
    Server(&'a Server),
}

/// Capture `live`, with the capture options (timeout, protocol, ...) of `source`.
/// The capture is in compact form ([`Snapshot`]): build it ([`Snapshot::build`]) to
/// look inside its elements.
pub(super) fn capture(live: &Live<'_>, source: &LiveSource) -> Result<Snapshot> {
    if let Live::Server(s) = live {
        if let Some(var) = s.env.iter().find(|v| std::env::var_os(v).is_none()) {
            if !matches!(s.transport, Transport::Package { .. }) {
                return Err(Error::new(format!(
                    "server {}: environment variable {var} (in its `env`) is not set",
                    s.name
                )));
            }
        }
    }
    let endpoint = match live {
        Live::Server(s) => match &s.transport {
            Transport::Command(argv) => mcp::Endpoint::Stdio(argv.clone()),
            Transport::Package { package, options } => {
                let (bytes, exact) = package_lockfile(package, options, source)?;
                return Ok(Snapshot::of(&Lockfile::parse(&bytes, &exact.display())?));
            }
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
                    "no server to capture: give the command after `--` (e.g. `-- node server.js`) or --http URL, or name it in covenant.toml (`command = [\"node\", \"server.js\"]`, `url`, or [[server]] entries)",
                ))
            }
        },
    };
    let env = match live {
        Live::Server(s) => s.env.clone(),
        Live::Cli => Vec::new(),
    };
    capture_endpoint(endpoint, env, source)
}

/// Capture `endpoint`; a stdio server also gets the variables `env` names.
fn capture_endpoint(
    endpoint: mcp::Endpoint,
    env: Vec<String>,
    source: &LiveSource,
) -> Result<Snapshot> {
    let opts = mcp::CaptureOptions {
        endpoint,
        timeout: source.timeout,
        protocol: source.protocol.clone(),
        client_capabilities: capabilities(source),
        show_server_stderr: source.show_server_stderr,
        read_ui_resources: source.read_ui_resources,
        notices: super::notices(),
        env,
    };
    let captured = {
        let _notice = SlowCapture::start(&opts);
        mcp::capture(&opts)?
    };
    Ok(Snapshot::new(
        captured.server,
        captured.surface,
        lockfile::capture_time()?,
    ))
}

/// A status line for a capture that is still running after a second (servers that build
/// or download on start take many): on a terminal only, never with `CI` set, `-q` or the
/// server's own stderr shown. One whole line, not a spinner, so that it cannot tangle
/// with the lines a failing capture prints.
struct SlowCapture {
    stop: Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
}

impl SlowCapture {
    fn start(opts: &mcp::CaptureOptions) -> SlowCapture {
        use std::io::IsTerminal;
        let wanted = !super::quiet()
            && !opts.show_server_stderr
            && std::env::var_os("CI").is_none()
            && std::io::stderr().is_terminal();
        if !wanted {
            return SlowCapture { stop: None };
        }
        let what = match &opts.endpoint {
            mcp::Endpoint::Stdio(argv) => crate::error::log(&crate::redact::argv(argv)),
            mcp::Endpoint::Http { url, .. } => crate::redact::url(url),
        };
        // Whole seconds as `2`, fractions as `1.5` (--timeout takes both).
        let timeout = opts.timeout.as_secs_f64();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            if rx.recv_timeout(std::time::Duration::from_secs(1))
                == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
            {
                eprintln!(
                    "mcp-covenant: capturing `{what}` (waiting up to {timeout} s: --timeout; -q hides this line)"
                );
            }
        });
        SlowCapture {
            stop: Some((tx, thread)),
        }
    }
}

impl Drop for SlowCapture {
    fn drop(&mut self) {
        if let Some((tx, thread)) = self.stop.take() {
            let _ = tx.send(());
            let _ = thread.join();
        }
    }
}

fn capabilities(source: &LiveSource) -> Vec<String> {
    source
        .client_capabilities
        .iter()
        .map(|c| c.word().to_string())
        .collect()
}

/// The lockfile of a package source: cached, or installed and captured with `source`'s
/// capture settings (and then cached). Also the package at its exact version.
pub(super) fn package_lockfile(
    package: &Package,
    options: &PackageOptions,
    source: &LiveSource,
) -> Result<(Vec<u8>, Package)> {
    let mut options = options.clone();
    if let (Some(python), registry::Registry::Pypi) = (&source.python, package.registry) {
        options.python = Some(python.clone());
    }
    let options = &options;
    registry::lockfile(
        package,
        options,
        &capture_key(source),
        &|argv| capture_endpoint(mcp::Endpoint::Stdio(argv), options.env.clone(), source),
        &super::notices(),
    )
}

/// What a package's cached capture depends on besides the package: `source`'s capture
/// settings.
pub(super) fn capture_key(source: &LiveSource) -> registry::cache::CaptureKey {
    registry::cache::CaptureKey {
        protocol: match &source.protocol {
            mcp::Protocol::Auto => "auto".into(),
            mcp::Protocol::Version(v) => v.clone(),
        },
        client_capabilities: capabilities(source),
        read_ui_resources: source.read_ui_resources,
    }
}

/// How a package source named on the command line is installed and started: as the
/// `[[server]]` with the same package at the same version says (its `args`, `env`,
/// `with`), else the first with the same package, else plainly.
fn options_for(package: &Package, config: &Config) -> PackageOptions {
    let same = |exact: bool| {
        config.servers.iter().find_map(|s| match &s.transport {
            Transport::Package {
                package: p,
                options,
            } if p.same_package(package) && (!exact || p.requested == package.requested) => {
                Some(options.clone())
            }
            _ => None,
        })
    };
    same(true).or_else(|| same(false)).unwrap_or_default()
}

/// The `snapshot` command line that captures `live` into `output`, to paste: what
/// configures it comes from covenant.toml; from the command line, the server and
/// `-o` (but never a header's value).
pub(super) fn snapshot_command(live: &Live<'_>, source: &LiveSource, output: &Path) -> String {
    let mut words: Vec<String> = super::invocation();
    words.push("snapshot".into());
    if let Some(config) = super::explicit_config() {
        words.extend(["--config".into(), super::pasteable(&config)]);
    }
    match live {
        Live::Server(s) if s.name == crate::config::TOP_LEVEL_SERVER => {}
        Live::Server(s) => words.extend(["--server".into(), s.name.clone()]),
        Live::Cli => {
            if output != Path::new(crate::config::DEFAULT_LOCKFILE) {
                words.extend(["-o".into(), super::pasteable(output)]);
            }
            if let Some(url) = &source.http {
                // Its password and tokens masked, as every notice shows a URL.
                words.extend(["--http".into(), crate::redact::url(url)]);
                for h in &source.headers {
                    let name = h.split_once(':').map_or(h.as_str(), |(n, _)| n).trim();
                    words.extend(["--header".into(), format!("{name}: ...")]);
                }
            } else if !source.command.is_empty() {
                words.push("--".into());
                words.extend(source.command.iter().cloned());
            } else {
                words.extend(["--".into(), "SERVER-COMMAND".into()]);
            }
        }
    }
    super::shell_line(&words)
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
pub(super) enum LockSource {
    File(PathBuf),
    Git(GitFile),
    /// A file the revision does not have (`--baseline-rev` on a new lockfile): empty.
    Absent(GitFile),
    /// A published package (`npm:NAME@VERSION`, `pypi:NAME==VERSION`), captured (or
    /// its cached capture) with the capture settings of the command line.
    Package(Box<PackageSource>),
}

pub(super) struct PackageSource {
    package: Package,
    options: PackageOptions,
    capture: LiveSource,
    /// The bytes, once captured (the source is read more than once).
    bytes: std::sync::OnceLock<Vec<u8>>,
}

impl PackageSource {
    fn bytes(&self) -> Result<Vec<u8>> {
        if let Some(b) = self.bytes.get() {
            return Ok(b.clone());
        }
        let (bytes, _) = package_lockfile(&self.package, &self.options, &self.capture)?;
        Ok(self.bytes.get_or_init(|| bytes).clone())
    }
}

impl LockSource {
    /// A path, `git:REF:PATH`, or a package source (`npm:...`, `pypi:...`) captured
    /// with `capture`'s settings and installed as covenant.toml's `[[server]]` of the
    /// same package says.
    pub(super) fn from_arg_in(
        arg: &Path,
        capture: &LiveSource,
        config: &Config,
    ) -> Result<LockSource> {
        match arg.to_str().and_then(Package::parse) {
            Some(package) => {
                let package = package?;
                Ok(LockSource::package(
                    package.clone(),
                    options_for(&package, config),
                    capture,
                ))
            }
            None => LockSource::from_arg(arg),
        }
    }

    pub(super) fn package(
        package: Package,
        options: PackageOptions,
        capture: &LiveSource,
    ) -> LockSource {
        LockSource::Package(Box::new(PackageSource {
            package,
            options,
            capture: capture.settings_only(),
            bytes: std::sync::OnceLock::new(),
        }))
    }

    pub(super) fn from_arg(arg: &Path) -> Result<LockSource> {
        match arg.to_str().and_then(GitFile::parse) {
            Some(git) => git.map(LockSource::Git),
            None => Ok(LockSource::File(arg.to_path_buf())),
        }
    }

    /// The baseline `--baseline-rev REV` gives `lockfile`: git:REV:./LOCKFILE, or an
    /// empty one when REV has no such file.
    pub(super) fn at_revision(rev: &str, lockfile: &Path) -> Result<LockSource> {
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
        let file = at_revision(rev, &rel)?;
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
    pub(super) fn name(&self) -> String {
        match self {
            LockSource::File(p) => p.display().to_string(),
            LockSource::Git(g) | LockSource::Absent(g) => g.to_string(),
            LockSource::Package(p) => p.package.display(),
        }
    }

    /// The path reports point at (SARIF `artifactLocation.uri`, annotations): for
    /// `git:REF:PATH`, PATH, which the pull request holds too.
    pub(super) fn uri(&self) -> String {
        match self {
            LockSource::File(p) => anchor::uri_for(p),
            LockSource::Git(g) | LockSource::Absent(g) => anchor::uri_for(Path::new(&g.path)),
            LockSource::Package(p) => p.package.display(),
        }
    }

    pub(super) fn bytes(&self) -> Result<Vec<u8>> {
        match self {
            LockSource::File(p) => crate::io::read_input(p, "lockfile"),
            LockSource::Git(g) => g.read(),
            LockSource::Absent(_) => Ok(empty_lockfile().to_text().into_bytes()),
            LockSource::Package(p) => p.bytes(),
        }
    }

    pub(super) fn read_lenient(&self) -> Result<Lockfile> {
        match self {
            LockSource::File(p) => Lockfile::read_lenient(p),
            LockSource::Git(g) => Lockfile::parse_lenient(&g.read()?, &g.to_string()),
            LockSource::Absent(_) => Ok(empty_lockfile()),
            LockSource::Package(p) => Lockfile::parse_lenient(&p.bytes()?, &p.package.display()),
        }
    }

    /// The baseline's bytes: a missing file says how to create one.
    pub(super) fn baseline_bytes(&self) -> Result<Vec<u8>> {
        match self {
            LockSource::File(p) if !p.exists() => Err(missing_baseline(p)),
            _ => self.bytes(),
        }
    }
}

/// `git:REV:PATH` for `--baseline-rev REV`; an error that says why REV is not one.
pub(super) fn at_revision(rev: &str, rel: &str) -> Result<GitFile> {
    match GitFile::parse(&format!("git:{rev}:{rel}")) {
        Some(Ok(f)) if f.rev == rev => Ok(f),
        Some(Err(e)) => Err(Error::new(format!("--baseline-rev: {e}"))),
        _ => Err(Error::new(format!(
            "--baseline-rev `{}` is not a revision (it cannot contain `:`)",
            rev.escape_debug()
        ))),
    }
}

fn empty_lockfile() -> Lockfile {
    Lockfile::new(Default::default(), Default::default(), 0)
}

fn missing_baseline(path: &Path) -> Error {
    Error::new(format!(
        "baseline lockfile {} not found; capture it from its server with `mcp-covenant snapshot -o {} -- SERVER-COMMAND` and commit it",
        path.display(),
        super::pasteable(path)
    ))
}

/// `--baseline published`: the highest release below the version the project declares
/// (the `[[server]]`'s `package`, else package.json, else pyproject.toml, beside
/// covenant.toml or here), or the newest release when that version is unpublished.
pub(super) fn published(
    server: Option<&Server>,
    capture: &LiveSource,
    config: &Config,
) -> Result<LockSource> {
    let (package, origin) = declared(server, config)?;
    let registry::Requested::Exact(version) = &package.requested else {
        return Err(Error::new(format!(
            "--baseline published: {origin} declares {}, not an exact version to compare below",
            package.display()
        )));
    };
    let baseline = published_below(&package, version, &origin)?;
    eprintln!(
        "mcp-covenant: {origin} declares {}; the baseline is {}",
        package.display(),
        package.display_at(&baseline)
    );
    let options = options_for(&package, config);
    let exact = Package {
        requested: registry::Requested::Exact(baseline),
        ..package
    };
    Ok(LockSource::package(exact, options, capture))
}

#[cfg(feature = "http")]
fn published_below(package: &Package, version: &str, origin: &str) -> Result<String> {
    let releases = registry::published::releases(package, &super::notices())?;
    if let Some(lowest) = registry::published::below_every(package.registry, version, &releases) {
        return Err(Error::new(format!(
            "--baseline published: {origin} declares {}, below every release the registry lists (the lowest is {lowest}): bump the declared version, or name the baseline (--baseline {})",
            package.display(),
            package.display_at(&lowest)
        )));
    }
    registry::published::baseline_for(package.registry, version, &releases).ok_or_else(|| {
        Error::new(format!(
            "--baseline published: {origin} declares {}, and the registry has no release below it to compare with",
            package.display()
        ))
    })
}

#[cfg(not(feature = "http"))]
fn published_below(package: &Package, _version: &str, _origin: &str) -> Result<String> {
    Err(Error::new(format!(
        "--baseline published ({}) asks the registry which versions exist, and this mcp-covenant was built without the `http` feature that registry sources need",
        package.display()
    )))
}

/// The package and version the project declares, and where that was read.
fn declared(server: Option<&Server>, config: &Config) -> Result<(Package, String)> {
    if let Some(Server {
        transport: Transport::Package { package, .. },
        name,
        ..
    }) = server
    {
        return Ok((package.clone(), format!("[[server]] {name}")));
    }
    let dir = config
        .file
        .as_deref()
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    for manifest in [Manifest::PackageJson, Manifest::Pyproject] {
        let path = dir.join(manifest.file());
        if !path.is_file() {
            continue;
        }
        let bytes = crate::io::read_input(&path, manifest.file())?;
        let (name, version) = manifest.read(&bytes).map_err(|why| {
            Error::new(format!("--baseline published: {}: {why}", path.display()))
        })?;
        let spec = manifest.spec(&name, &version);
        let package = Package::parse(&spec)
            .unwrap_or_else(|| Err(Error::new("no package")))
            .map_err(|e| {
                Error::new(format!(
                    "--baseline published: {}: {}",
                    path.display(),
                    e.message()
                ))
            })?;
        warn_if_renamed(manifest, &path, &name);
        return Ok((package, path.display().to_string()));
    }
    Err(Error::new(format!(
        "--baseline published: no package to look up: no [[server]] `package`, and no package.json or pyproject.toml in {}",
        dir.display()
    )))
}

/// A project manifest that declares the package `--baseline published` looks up.
#[derive(Clone, Copy)]
enum Manifest {
    PackageJson,
    Pyproject,
}

impl Manifest {
    fn file(self) -> &'static str {
        match self {
            Manifest::PackageJson => "package.json",
            Manifest::Pyproject => "pyproject.toml",
        }
    }

    fn spec(self, name: &str, version: &str) -> String {
        match self {
            Manifest::PackageJson => format!("npm:{name}@{version}"),
            Manifest::Pyproject => format!("pypi:{name}=={version}"),
        }
    }

    /// The declared name and version, or why there are none.
    fn read(self, bytes: &[u8]) -> std::result::Result<(String, String), String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
        let (name, version) = match self {
            Manifest::PackageJson => {
                let doc = crate::canon::value_from_str(text).map_err(|e| e.to_string())?;
                let field = |k: &str| doc.get(k).and_then(|v| v.as_str()).map(str::to_string);
                (field("name"), field("version"))
            }
            Manifest::Pyproject => {
                let doc: toml::Table =
                    toml::from_str(text).map_err(|e| e.message().trim().to_string())?;
                let project = doc.get("project").and_then(|p| p.as_table());
                let field = |k: &str| {
                    project
                        .and_then(|p| p.get(k))
                        .and_then(|v| v.as_str())
                        .map(str::to_string)
                };
                (field("name"), field("version"))
            }
        };
        match (name, version) {
            (Some(name), Some(version)) => Ok((name, version)),
            _ => Err(match self {
                Manifest::PackageJson => "no `name` and `version` to look up".into(),
                Manifest::Pyproject => "no static [project] `name` and `version` to look up (a dynamic version: give `package = \"pypi:NAME==VERSION\"` in the [[server]])".into(),
            }),
        }
    }
}

/// A pull request controls the manifest `--baseline published` reads, so renaming the
/// package to a look-alike would choose its own baseline. Where the base is known (the
/// pull request's base branch, `GITHUB_BASE_REF`, else `origin/HEAD`), a name that
/// differs there is warned about. The base is read from git's object store
/// ([`GitFile`]); a base without the manifest (a new package) says nothing.
fn warn_if_renamed(manifest: Manifest, path: &Path, name: &str) {
    let Some(relative) = in_work_tree(path) else {
        return;
    };
    let pr_base = std::env::var("GITHUB_BASE_REF")
        .ok()
        .filter(|b| !b.is_empty())
        .map(|b| format!("origin/{b}"));
    for rev in pr_base.into_iter().chain(["origin/HEAD".to_string()]) {
        let Some(Ok(file)) = GitFile::parse(&format!("git:{rev}:{relative}")) else {
            continue;
        };
        let exists = match file.exists() {
            Ok(exists) => exists,
            Err(_) => continue, // no such revision here: the next candidate
        };
        if !exists {
            return;
        }
        let Ok(Ok((base_name, _))) = file.read().map(|bytes| manifest.read(&bytes)) else {
            return;
        };
        if base_name != name {
            super::warn(&format!(
                "--baseline published: {} names the package {name} here but {base_name} at {rev}: the baseline is a release of {name}, the name this change wrote; to compare with what {base_name}'s users install, give --baseline {}",
                path.display(),
                manifest.spec(&base_name, "VERSION"),
            ));
        }
        return;
    }
}

/// `path` as `git:REF:PATH` reads it from the current directory (`./package.json`).
fn in_work_tree(path: &Path) -> Option<String> {
    let relative = if path.is_absolute() {
        path.strip_prefix(std::env::current_dir().ok()?).ok()?
    } else {
        path
    };
    let text = relative.to_str()?;
    Some(if text.starts_with("./") || text.starts_with("../") {
        text.to_string()
    } else {
        format!("./{text}")
    })
}
