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

/// `NAME@VERSION` as one path component, a one-to-one function of the package and
/// version: a scope's `/` becomes `+`, which neither an npm name nor a version holds
/// (`__` did, and `@a__x/b` and `@a/x__b` shared a directory); the version is checked
/// as a user-given one is, whatever listed it.
fn leaf(package: &Package, version: &str) -> Result<String> {
    super::spec::check_version(package.registry, version).map_err(|e| {
        Error::new(format!(
            "{}: {e}",
            package.display_at(&crate::escape::truncated(version, 80))
        ))
    })?;
    Ok(format!(
        "{}@{version}",
        package.key_name().replace('/', "+")
    ))
}

/// The directory `package` at `version` is installed in.
pub(super) fn install_dir(
    package: &Package,
    version: &str,
    opts: &PackageOptions,
) -> Result<PathBuf> {
    let root = super::cache_root()?;
    let mut leaf = leaf(package, version)?;
    if !opts.with.is_empty() || opts.allow_scripts || opts.allow_sdist || opts.python.is_some() {
        let mut parts: Vec<&str> = opts.with.iter().map(String::as_str).collect();
        parts.push(if opts.allow_scripts { "scripts" } else { "" });
        parts.push(if opts.allow_sdist { "sdist" } else { "" });
        parts.push(opts.python.as_deref().unwrap_or(""));
        leaf.push('-');
        leaf.push_str(&digest(&parts)[..12]);
    }
    Ok(root.join(package.registry.word()).join(leaf))
}

/// Remove what a failed install left (nothing of it may be taken for an install).
pub(super) fn discard(dir: &Path) {
    if std::fs::symlink_metadata(dir).is_ok() {
        let _ = std::fs::remove_dir_all(dir);
    }
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
/// a server lists. (The values of the variables its `env` names and the interpreter's
/// version are part of the cache key too: [`capture_path`] reads them.)
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
    // What the server sees that is not in the config: the values of the variables its
    // `env` names (hashed with the rest, never stored: DBT_HOST set lists 40 tools,
    // unset 9) and the interpreter it runs on.
    let mut values = Sha256::new();
    for name in &opts.env {
        values.update((name.len() as u64).to_le_bytes());
        values.update(name.as_bytes());
        match std::env::var_os(name) {
            Some(v) => {
                let v = v.as_encoded_bytes();
                values.update([1]);
                values.update((v.len() as u64).to_le_bytes());
                values.update(v);
            }
            None => values.update([0]),
        }
    }
    let values = hex(&values.finalize());
    let interpreter = super::tool::interpreter_version(package.registry, opts);
    let id = digest(&[
        env!("CARGO_PKG_VERSION"),
        &values,
        &interpreter,
        registry,
        &package.key_name(),
        version,
        &joined(&opts.args),
        &joined(&opts.env),
        &joined(&opts.with),
        if opts.allow_scripts { "scripts" } else { "" },
        if opts.allow_sdist { "sdist" } else { "" },
        opts.python.as_deref().unwrap_or(""),
        &key.protocol,
        &joined(&key.client_capabilities),
        if key.read_ui_resources { "ui" } else { "" },
    ]);
    let leaf = leaf(package, version)?;
    Ok(root
        .join("captures")
        .join(registry)
        .join(format!("{leaf}-{id}.lock")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkg(s: &str) -> Package {
        Package::parse(s).unwrap().unwrap()
    }

    #[test]
    fn install_directories_are_one_to_one() {
        let opts = PackageOptions::default();
        let a = install_dir(&pkg("npm:@a__x/b@1.0.0"), "1.0.0", &opts).unwrap();
        let b = install_dir(&pkg("npm:@a/x__b@1.0.0"), "1.0.0", &opts).unwrap();
        assert_ne!(a, b);
        assert!(a.ends_with("npm/@a__x+b@1.0.0"), "{}", a.display());
        let sdist = PackageOptions {
            allow_sdist: true,
            ..PackageOptions::default()
        };
        let p = pkg("pypi:x==1.0");
        assert_ne!(
            install_dir(&p, "1.0", &opts).unwrap(),
            install_dir(&p, "1.0", &sdist).unwrap()
        );
    }

    #[test]
    fn a_version_that_is_no_version_never_becomes_a_path() {
        let opts = PackageOptions::default();
        let key = CaptureKey {
            protocol: "auto".into(),
            client_capabilities: Vec::new(),
            read_ui_resources: false,
        };
        for (p, v) in [
            ("pypi:x==1.0", "9.9+x/../../../victim"),
            ("pypi:x==1.0", "1.0+local"),
            ("npm:x@1.0.0", "1.0.0/../../x"),
            ("npm:x@1.0.0", ".."),
        ] {
            assert!(install_dir(&pkg(p), v, &opts).is_err(), "{v}");
            assert!(capture_path(&pkg(p), v, &opts, &key).is_err(), "{v}");
        }
    }

    #[test]
    fn the_capture_key_holds_the_env_values_and_the_interpreter() {
        let var = "MCP_COVENANT_TEST_CACHE_KEY_VALUE";
        let opts = PackageOptions {
            env: vec![var.into()],
            ..PackageOptions::default()
        };
        let key = CaptureKey {
            protocol: "auto".into(),
            client_capabilities: Vec::new(),
            read_ui_resources: false,
        };
        let p = pkg("npm:x@1.0.0");
        let path = || capture_path(&p, "1.0.0", &opts, &key).unwrap();
        let unset = path();
        std::env::set_var(var, "host-a");
        let a = path();
        std::env::set_var(var, "host-b");
        let b = path();
        std::env::remove_var(var);
        assert_ne!(unset, a);
        assert_ne!(a, b);
        assert_eq!(unset, path());
        // The value is hashed, never written.
        assert!(!a.to_string_lossy().contains("host-a"));
        // Another interpreter, another key.
        let py = |python: Option<&str>| {
            let o = PackageOptions {
                python: python.map(String::from),
                ..PackageOptions::default()
            };
            capture_path(&pkg("pypi:x==1.0"), "1.0", &o, &key).unwrap()
        };
        assert_ne!(py(None), py(Some("3.99")));
    }
}
