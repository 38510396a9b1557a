//! Where a registry is asked which versions exist: the address the package manager on
//! this machine is configured with, so a mirror or a private registry that npm, pip and
//! uv use is used here too.
//!
//! - npm: `MCP_COVENANT_NPM_REGISTRY`, else `npm_config_registry` (npm's own variable),
//!   else the user's npmrc (`NPM_CONFIG_USERCONFIG`, else `~/.npmrc`: the package's
//!   `@scope:registry`, else `registry`), else https://registry.npmjs.org. A project's
//!   own .npmrc is not read: a pull request could point its baseline anywhere.
//! - PyPI: `MCP_COVENANT_PYPI_URL` (a server with PyPI's JSON API,
//!   `URL/pypi/NAME/json`), else the index `UV_DEFAULT_INDEX`, `UV_INDEX_URL`,
//!   `PIP_INDEX_URL` or pip.conf's `index-url` names (asked through the JSON simple API,
//!   `INDEX/NAME/`), else https://pypi.org.
//!
//! Credentials in an address (`https://user:token@host/`) are used, never shown.

use std::path::PathBuf;

use super::{Package, Registry};

/// How the release list is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// The npm registry's package document.
    Npm,
    /// PyPI's JSON API (`/pypi/NAME/json`).
    PypiJson,
    /// The JSON simple API of a package index (PEP 691).
    Simple,
}

/// The address asked for `package`'s releases, how, and where it was configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub api: Api,
    pub origin: String,
}

fn var(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.trim().is_empty())
}

fn home() -> Option<PathBuf> {
    var("HOME")
        .or_else(|| var("USERPROFILE"))
        .map(PathBuf::from)
}

/// `package`'s release list, from this machine's configuration.
pub fn endpoint(package: &Package) -> Endpoint {
    match package.registry {
        Registry::Npm => {
            let (base, origin) = npm_registry(package);
            Endpoint {
                url: format!(
                    "{}/{}",
                    base.trim_end_matches('/'),
                    package.name.replace('/', "%2f")
                ),
                api: Api::Npm,
                origin,
            }
        }
        Registry::Pypi => {
            if let Some(base) = var("MCP_COVENANT_PYPI_URL") {
                return Endpoint {
                    url: format!(
                        "{}/pypi/{}/json",
                        base.trim().trim_end_matches('/'),
                        package.key_name()
                    ),
                    api: Api::PypiJson,
                    origin: "MCP_COVENANT_PYPI_URL".into(),
                };
            }
            match pypi_index() {
                Some((index, origin)) => Endpoint {
                    url: format!("{}/{}/", index.trim_end_matches('/'), package.key_name()),
                    api: Api::Simple,
                    origin,
                },
                None => Endpoint {
                    url: format!("https://pypi.org/pypi/{}/json", package.key_name()),
                    api: Api::PypiJson,
                    origin: "the default".into(),
                },
            }
        }
    }
}

fn npm_registry(package: &Package) -> (String, String) {
    if let Some(v) = var("MCP_COVENANT_NPM_REGISTRY") {
        return (v.trim().to_string(), "MCP_COVENANT_NPM_REGISTRY".into());
    }
    for k in ["npm_config_registry", "NPM_CONFIG_REGISTRY"] {
        if let Some(v) = var(k) {
            return (v.trim().to_string(), k.into());
        }
    }
    let rc = var("NPM_CONFIG_USERCONFIG")
        .or_else(|| var("npm_config_userconfig"))
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".npmrc")));
    if let Some(rc) = rc {
        if let Some(text) = read_small(&rc) {
            let scope = package
                .name
                .strip_prefix('@')
                .and_then(|s| s.split_once('/'))
                .map(|(scope, _)| format!("@{scope}:registry"));
            if let Some(v) = scope.and_then(|k| ini_value(&text, None, &[k.as_str()])) {
                return (v, rc.display().to_string());
            }
            if let Some(v) = ini_value(&text, None, &["registry"]) {
                return (v, rc.display().to_string());
            }
        }
    }
    (
        "https://registry.npmjs.org".into(),
        "the default".to_string(),
    )
}

/// The index pip or uv is configured with.
fn pypi_index() -> Option<(String, String)> {
    for k in ["UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"] {
        if let Some(v) = var(k) {
            return Some((v.trim().to_string(), k.into()));
        }
    }
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(f) = var("PIP_CONFIG_FILE") {
        files.push(f.into());
    }
    let config_home = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".config")));
    if let Some(c) = config_home {
        files.push(c.join("pip").join("pip.conf"));
    }
    if let Some(h) = home() {
        files.push(h.join(".pip").join("pip.conf"));
    }
    if let Some(a) = var("APPDATA") {
        files.push(PathBuf::from(a).join("pip").join("pip.ini"));
    }
    files.push("/etc/pip.conf".into());
    files.into_iter().find_map(|f| {
        let text = read_small(&f)?;
        let v = ini_value(&text, Some("install"), &["index-url", "index_url"])
            .or_else(|| ini_value(&text, Some("global"), &["index-url", "index_url"]))?;
        Some((v, f.display().to_string()))
    })
}

/// A configuration file of at most 1 MiB, as text.
fn read_small(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    f.take(1 << 20).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The value of the first of `keys` in an INI-like file (`key = value`; `#` and `;`
/// start comments), in `[section]` when one is given, else before any section. npmrc's
/// `${NAME}` is expanded from the environment.
fn ini_value(text: &str, section: Option<&str>, keys: &[&str]) -> Option<String> {
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.trim().to_string());
            continue;
        }
        if current.as_deref() != section {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if keys.contains(&k.trim()) {
            let v = expand(v.trim().trim_matches('"'));
            if !v.is_empty() {
                return Some(v);
            }
        }
    }
    None
}

/// `${NAME}` replaced by the variable's value (empty when unset).
fn expand(v: &str) -> String {
    let mut out = String::new();
    let mut rest = v;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        match rest[at + 2..].find('}') {
            Some(end) => {
                out.push_str(&var(&rest[at + 2..at + 2 + end]).unwrap_or_default());
                rest = &rest[at + 2 + end + 1..];
            }
            None => {
                out.push_str(&rest[at..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_values_by_section() {
        let npmrc = "; comment\n@acme:registry=https://npm.acme.test/\nregistry = https://mirror.test/npm/\n//mirror.test/:_authToken=x\n";
        assert_eq!(
            ini_value(npmrc, None, &["@acme:registry"]).as_deref(),
            Some("https://npm.acme.test/")
        );
        assert_eq!(
            ini_value(npmrc, None, &["registry"]).as_deref(),
            Some("https://mirror.test/npm/")
        );
        let pip =
            "[global]\ntimeout = 60\nindex-url = https://u:p@pypi.acme.test/simple\n[install]\n";
        assert_eq!(
            ini_value(pip, Some("global"), &["index-url"]).as_deref(),
            Some("https://u:p@pypi.acme.test/simple")
        );
        assert_eq!(ini_value(pip, Some("install"), &["index-url"]), None);
        assert_eq!(ini_value(pip, None, &["index-url"]), None);
        assert_eq!(expand("a${MCP_COVENANT_TEST_SURELY_UNSET}b${"), "ab${");
    }
}
