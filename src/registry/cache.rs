//! The cache: `npm/` and `pypi/` hold one install per package, exact version and
//! install options (complete once its `.complete` marker is written), `captures/` one
//! lockfile per package, exact version and capture settings, so a rerun installs
//! nothing and starts nothing.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{Package, PackageOptions, Registry};
use crate::error::{Error, Result};

/// The marker an install writes last.
pub(super) const COMPLETE: &str = ".complete";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        // Length-prefixed: no two lists of parts hash alike.
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    hex(&h.finalize()[..16])
}

/// The directory `package` at `version` is installed in.
pub(super) fn install_dir(
    package: &Package,
    version: &str,
    opts: &PackageOptions,
) -> Result<PathBuf> {
    let root = super::cache_root()?;
    let name = package.key_name().replace('/', "__");
    let mut leaf = format!("{name}@{version}");
    if !opts.with.is_empty() || opts.allow_scripts {
        let mut parts: Vec<&str> = opts.with.iter().map(String::as_str).collect();
        parts.push(if opts.allow_scripts { "scripts" } else { "" });
        leaf.push('-');
        leaf.push_str(&digest(&parts)[..12]);
    }
    Ok(root.join(package.registry.word()).join(leaf))
}

/// A fresh, empty install directory (a partial one from an interrupted run is removed).
pub(super) fn fresh_dir(dir: &Path, what: &str) -> Result<()> {
    if std::fs::symlink_metadata(dir).is_ok() {
        std::fs::remove_dir_all(dir).map_err(|e| {
            Error::new(format!(
                "{what}: cannot clear the partial install {}: {e}",
                dir.display()
            ))
        })?;
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::new(format!("{what}: cannot create {}: {e}", dir.display())))
}

pub(super) fn is_complete(dir: &Path) -> bool {
    dir.join(COMPLETE).is_file()
}

pub(super) fn mark_complete(dir: &Path, what: &str) -> Result<()> {
    std::fs::write(dir.join(COMPLETE), b"")
        .map_err(|e| Error::new(format!("{what}: cannot write to {}: {e}", dir.display())))
}

/// What a capture depends on besides the package: the capture settings that change what
/// a server lists.
#[derive(Clone, Debug)]
pub struct CaptureKey {
    pub protocol: String,
    pub client_capabilities: Vec<String>,
    /// `--read-ui-resources`: unlisted MCP Apps resources are read and recorded.
    pub read_ui_resources: bool,
}

/// The cached lockfile of `package` at `version` captured with these settings.
pub fn capture_path(
    package: &Package,
    version: &str,
    opts: &PackageOptions,
    key: &CaptureKey,
) -> Result<PathBuf> {
    let root = super::cache_root()?;
    let joined = |v: &[String]| v.join("\u{0}");
    let registry = match package.registry {
        Registry::Npm => "npm",
        Registry::Pypi => "pypi",
    };
    let id = digest(&[
        env!("CARGO_PKG_VERSION"),
        registry,
        &package.key_name(),
        version,
        &joined(&opts.args),
        &joined(&opts.env),
        &joined(&opts.with),
        if opts.allow_scripts { "scripts" } else { "" },
        &key.protocol,
        &joined(&key.client_capabilities),
        if key.read_ui_resources { "ui" } else { "" },
    ]);
    let name = package.key_name().replace('/', "__");
    Ok(root
        .join("captures")
        .join(registry)
        .join(format!("{name}@{version}-{id}.lock")))
}
