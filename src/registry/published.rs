//! Which versions a registry has published: the npm registry's package document
//! (`https://registry.npmjs.org/NAME`, abbreviated form) and PyPI's JSON API
//! (`https://pypi.org/pypi/NAME/json`). `MCP_COVENANT_NPM_REGISTRY` and
//! `MCP_COVENANT_PYPI_URL` point them elsewhere (a mirror, a test server). A registry
//! that cannot be reached is an error, never an empty list.

use std::time::Duration;

use serde_json::Value;

use super::{Package, Registry};
use crate::error::{Error, Result};
use crate::notice::Notices;

/// The largest registry answer read (a popular npm package's abbreviated document is a
/// few MB).
const MAX_BODY: u64 = 64 * 1024 * 1024;

pub use super::version::{baseline_for, newest};

fn base(var: &str, default: &str) -> String {
    std::env::var(var)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_string())
        .trim_end_matches('/')
        .to_string()
}

/// The URL of `package`'s release list.
pub fn url(package: &Package) -> String {
    match package.registry {
        Registry::Npm => format!(
            "{}/{}",
            base("MCP_COVENANT_NPM_REGISTRY", "https://registry.npmjs.org"),
            package.name.replace('/', "%2f")
        ),
        Registry::Pypi => format!(
            "{}/pypi/{}/json",
            base("MCP_COVENANT_PYPI_URL", "https://pypi.org"),
            package.key_name()
        ),
    }
}

/// Every version the registry lists for `package` (PyPI: releases with at least one
/// file that is not yanked).
pub fn releases(package: &Package, notices: &Notices) -> Result<Vec<String>> {
    let url = url(package);
    // Its userinfo and tokens are never shown (every notice and error masks them).
    crate::redact::register_endpoint(&url, &[]);
    let name = package.display();
    notices.status(format!("asking {url} for the releases of {}", package.name));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let mut response = agent
        .get(&url)
        .header(
            "Accept",
            "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8",
        )
        .call()
        .map_err(|e| {
            Error::new(format!(
                "{name}: the registry at {url} cannot be reached: {e}"
            ))
        })?;
    let status = response.status().as_u16();
    if status == 404 {
        return Err(Error::new(format!(
            "{name}: the registry at {url} has no such package (404)"
        )));
    }
    if status != 200 {
        return Err(Error::new(format!(
            "{name}: the registry at {url} answered HTTP {status}"
        )));
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .read_to_vec()
        .map_err(|e| Error::new(format!("{name}: reading {url}: {e}")))?;
    let doc: Value = serde_json::from_slice(&body)
        .map_err(|e| Error::new(format!("{name}: {url} did not answer JSON: {e}")))?;
    parse(package.registry, &doc).ok_or_else(|| {
        Error::new(format!(
            "{name}: {url} answered JSON without a list of versions"
        ))
    })
}

/// The versions in a registry document.
pub fn parse(registry: Registry, doc: &Value) -> Option<Vec<String>> {
    match registry {
        Registry::Npm => Some(doc.get("versions")?.as_object()?.keys().cloned().collect()),
        Registry::Pypi => Some(
            doc.get("releases")?
                .as_object()?
                .iter()
                .filter(|(_, files)| {
                    files.as_array().is_some_and(|f| {
                        f.iter()
                            .any(|file| file.get("yanked").and_then(Value::as_bool) != Some(true))
                    })
                })
                .map(|(v, _)| v.clone())
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn registry_documents_list_versions() {
        let npm = json!({"name": "x", "versions": {"1.0.0": {}, "1.1.0": {}}});
        assert_eq!(parse(Registry::Npm, &npm).unwrap(), ["1.0.0", "1.1.0"]);
        let pypi = json!({"releases": {
            "1.0": [{"yanked": false}], "1.1": [{"yanked": true}], "1.2": []
        }});
        assert_eq!(parse(Registry::Pypi, &pypi).unwrap(), ["1.0"]);
        assert!(parse(Registry::Npm, &json!({"error": "x"})).is_none());
    }
}
