//! Package sources: a published server named by its registry, name and version
//! (`npm:@scope/server@1.4.0`, `pypi:mcp-server-time==2026.10.19`, `npm:NAME@latest`),
//! installed into a cache directory and started through the entry point it declares.
//!
//! `spec` parses and validates a source strictly (it may come from a pull request: a
//! name never reaches npm or pip where it could be read as a flag); `npm` and `pypi`
//! install a package and find its entry point; `cache` is the cache directory, and the
//! lockfile of each capture kept by package, exact version and capture settings, so a
//! rerun installs nothing; `tool` runs npm, pip or uv (never a shell), bounded in time,
//! their output kept for the error; `published` (feature `http`) asks a registry which
//! versions exist.
//!
//! Every step that touches the network says so on stderr first.

#[cfg(feature = "http")]
pub mod address;
pub mod cache;
mod npm;
#[cfg(feature = "http")]
pub mod published;
mod pypi;
pub mod spec;
mod tool;
pub mod version;

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::notice::Notices;

pub use self::spec::{Package, Requested};
pub use self::version::Registry;

/// How a package server is installed and started (the `[[server]]` keys beside
/// `package`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackageOptions {
    /// Arguments after the entry point.
    pub args: Vec<String>,
    /// Environment variables the server needs: each must be set (it is passed on; its
    /// value is never written anywhere).
    pub env: Vec<String>,
    /// Requirements installed beside the package (`mcp<2`, `zod@3`): an old release
    /// whose open ranges resolve to today's incompatible dependencies.
    pub with: Vec<String>,
    /// Let npm run the package's install scripts (off by default).
    pub allow_scripts: bool,
    /// Let pip build a source distribution (off by default: wheels only, so no
    /// package's build backend runs at install).
    pub allow_sdist: bool,
    /// The Python a PyPI package runs on (`3.12`): `[[server]] python`, `--python`.
    pub python: Option<String>,
}

/// A package installed in the cache: its exact version and the command that starts it.
#[derive(Clone, Debug)]
pub struct Installed {
    pub version: String,
    pub argv: Vec<String>,
}

/// Install `package` at `version` (exact) unless the cache has it, and find its entry
/// point.
pub fn install(
    package: &Package,
    version: &str,
    opts: &PackageOptions,
    notices: &Notices,
) -> Result<Installed> {
    for w in &opts.with {
        spec::check_requirement(package.registry, w)
            .map_err(|e| Error::new(format!("{}: {e}", package.display_at(version))))?;
    }
    if let Some(py) = &opts.python {
        spec::check_python(py)
            .map_err(|e| Error::new(format!("{}: {e}", package.display_at(version))))?;
    }
    let dir = cache::install_dir(package, version, opts)?;
    let was_complete = cache::is_complete(&dir);
    let argv = match package.registry {
        Registry::Npm => npm::install(package, version, opts, &dir, notices),
        Registry::Pypi => pypi::install(package, version, opts, &dir, notices, &|| {
            dependencies_as_of(package, version, notices)
        }),
    };
    let mut argv = match argv {
        Ok(argv) => argv,
        Err(e) => {
            // A failed install (or one that installed something else) leaves nothing
            // that a later run could take for an install.
            if !was_complete {
                cache::discard(&dir);
            }
            return Err(e);
        }
    };
    argv.extend(opts.args.iter().cloned());
    Ok(Installed {
        version: version.to_string(),
        argv,
    })
}

/// Each variable `opts.env` names must be set: a server that needs a token gets it from
/// the environment, never from a file.
pub fn check_env(package: &str, opts: &PackageOptions) -> Result<()> {
    for name in &opts.env {
        if std::env::var_os(name).is_none() {
            return Err(Error::new(format!(
                "{package}: environment variable {name} (in its `env`) is not set"
            )));
        }
    }
    Ok(())
}

/// The exact version `requested` names: itself, or the registry's newest release.
pub fn resolve(package: &Package, notices: &Notices) -> Result<String> {
    match &package.requested {
        Requested::Exact(v) => Ok(v.clone()),
        Requested::Latest => latest(package, notices),
    }
}

#[cfg(feature = "http")]
fn latest(package: &Package, notices: &Notices) -> Result<String> {
    let releases = published::releases(package, notices)?;
    published::newest(package.registry, &releases).ok_or_else(|| {
        Error::new(format!(
            "{}: the registry lists no release",
            package.display()
        ))
    })
}

#[cfg(not(feature = "http"))]
fn latest(package: &Package, _notices: &Notices) -> Result<String> {
    Err(Error::new(format!(
        "{}: finding the newest release needs the registry, and this mcp-covenant was built without the `http` feature; name an exact version",
        package.display()
    )))
}

/// The moment a PyPI release's dependencies are taken as of: the end of the day its
/// newest file was uploaded (RFC 3339, UTC), if the registry says.
#[cfg(feature = "http")]
fn dependencies_as_of(package: &Package, version: &str, notices: &Notices) -> Option<String> {
    match published::upload_day(package, version, notices) {
        Ok(day) => day
            .as_deref()
            .and_then(version::next_day)
            .map(|d| format!("{d}T00:00:00Z")),
        Err(e) => {
            notices.warn(format!(
                "{}: its release date is unknown ({}); installing with today's dependencies",
                package.display_at(version),
                e.message()
            ));
            None
        }
    }
}

#[cfg(not(feature = "http"))]
fn dependencies_as_of(_: &Package, _: &str, _: &Notices) -> Option<String> {
    None
}

/// A PyPI release that crashes at start (often at import: its open ranges resolved to
/// today's incompatible dependencies) gets the hint that `with` pins them.
fn crash_hint(package: &Package, opts: &PackageOptions, e: Error) -> Error {
    if package.registry != Registry::Pypi
        || !opts.with.is_empty()
        || e.kind() != crate::error::ErrorKind::Crashed
    {
        return e;
    }
    let kind = e.kind();
    // Without uv, the install took today's dependencies: uv takes the release date's.
    let uv = if tool::on_path("uv") {
        ""
    } else {
        "; or put uv on PATH: it installs the dependencies as of the release's upload date (pip cannot)"
    };
    Error::new(format!(
        "{}; if this release imports newer dependencies than it was written for, pin them beside it in its [[server]]: with = [\"mcp<2\"] (the dependency and the first version it breaks on){uv}",
        e.message()
    ))
    .with_kind(kind)
}

/// The directory everything is cached in: `MCP_COVENANT_CACHE`, else
/// `$XDG_CACHE_HOME/mcp-covenant`, else `~/.cache/mcp-covenant`.
pub fn cache_root() -> Result<PathBuf> {
    let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("MCP_COVENANT_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = non_empty("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(dir).join("mcp-covenant"));
    }
    if let Some(home) = non_empty("HOME") {
        return Ok(PathBuf::from(home).join(".cache").join("mcp-covenant"));
    }
    Err(Error::new(
        "no cache directory for package sources: set MCP_COVENANT_CACHE (or XDG_CACHE_HOME or HOME)",
    ))
}

/// The lockfile of `package` (its version resolved) captured with `key`'s settings: the
/// cached one, or a fresh capture of the installed package (`capture` starts the
/// command it is given), which is then cached. The bytes and where they are cached.
pub fn lockfile(
    package: &Package,
    opts: &PackageOptions,
    key: &cache::CaptureKey,
    capture: &dyn Fn(Vec<String>) -> Result<crate::lockfile::Snapshot>,
    notices: &Notices,
) -> Result<(Vec<u8>, Package)> {
    let version = resolve(package, notices)?;
    let exact = Package {
        requested: Requested::Exact(version.clone()),
        ..package.clone()
    };
    let what = exact.display();
    let path = cache::capture_path(package, &version, opts, key)?;
    if path.is_file() {
        if let Ok(bytes) = crate::io::read_input(&path, "lockfile") {
            if crate::lockfile::Lockfile::parse(&bytes, &what).is_ok() {
                notices.status(format!("{what}: cached capture {}", path.display()));
                return Ok((bytes, exact));
            }
        }
        notices.warn(format!(
            "{what}: the cached capture {} does not read; capturing again",
            path.display()
        ));
    }
    check_env(&what, opts)?;
    let installed = install(package, &version, opts, notices)?;
    notices.status(format!("{what}: capturing `{}`", installed.argv.join(" ")));
    let mut lock =
        capture(installed.argv).map_err(|e| crash_hint(package, opts, e.context(&what)))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::new(format!("{what}: cannot create {}: {e}", dir.display())))?;
    }
    lock.write(&path).map_err(|e| e.context(&what))?;
    Ok((lock.to_text().into_bytes(), exact))
}
