//! Which versions a registry has published: the npm registry's package document
//! (abbreviated form), PyPI's JSON API (`/pypi/NAME/json`) or a package index's JSON
//! simple API, at the address this machine's npm, pip or uv is configured with
//! ([`super::address`]; `MCP_COVENANT_NPM_REGISTRY` and `MCP_COVENANT_PYPI_URL` say
//! otherwise). A registry that cannot be reached is an error, never an empty list;
//! credentials in an address are never shown.

use std::time::Duration;

use serde_json::Value;

use super::address::{self, Api};
use super::{Package, Registry};
use crate::error::{Error, Result};
use crate::notice::Notices;

/// The largest registry answer read (a popular npm package's abbreviated document is a
/// few MB).
const MAX_BODY: u64 = 64 * 1024 * 1024;

pub use super::version::{baseline_for, below_every, newest};

/// The URL of `package`'s release list.
pub fn url(package: &Package) -> String {
    address::endpoint(package).url
}

/// Every version the registry lists for `package` (PyPI: releases with at least one
/// file that is not yanked).
pub fn releases(package: &Package, notices: &Notices) -> Result<Vec<String>> {
    let (endpoint, doc) = fetch(package, notices)?;
    let shown = crate::escape::text(&crate::redact::url(&endpoint.url)).into_owned();
    let listed = match endpoint.api {
        Api::Simple => parse_simple(&doc),
        _ => parse(package.registry, &doc),
    }
    .ok_or_else(|| {
        Error::new(format!(
            "{}: {shown} answered JSON without a list of versions",
            package.display()
        ))
    })?;
    Ok(checked(package, listed, notices))
}

/// When the newest file of PyPI release `version` was uploaded (`2025-06-01`), if the
/// registry says.
pub fn upload_day(package: &Package, version: &str, notices: &Notices) -> Result<Option<String>> {
    let (endpoint, doc) = fetch(package, notices)?;
    let times: Vec<&str> = match endpoint.api {
        Api::Npm => Vec::new(),
        Api::PypiJson => doc
            .get("releases")
            .and_then(|r| r.get(version))
            .and_then(Value::as_array)
            .map(|files| {
                files
                    .iter()
                    .filter_map(|f| f.get("upload_time_iso_8601").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default(),
        Api::Simple => doc
            .get("files")
            .and_then(Value::as_array)
            .map(|files| {
                files
                    .iter()
                    .filter(|f| {
                        f.get("filename")
                            .and_then(Value::as_str)
                            .and_then(file_version)
                            == Some(version)
                    })
                    .filter_map(|f| f.get("upload-time").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default(),
    };
    Ok(times
        .into_iter()
        .filter_map(|t| t.get(..10))
        .filter(|d| {
            d.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            })
        })
        .max()
        .map(String::from))
}

/// The registry's document for `package`, and where it was read.
fn fetch(package: &Package, notices: &Notices) -> Result<(address::Endpoint, Value)> {
    let endpoint = address::endpoint(package);
    let url = &endpoint.url;
    crate::redact::register_endpoint(url, &[]);
    let shown = crate::escape::text(&crate::redact::url(url)).into_owned();
    let name = package.display();
    let origin = match endpoint.origin.as_str() {
        "the default" => String::new(),
        o => format!(" (from {})", crate::escape::text(o)),
    };
    notices.status(format!(
        "asking {shown}{origin} for the releases of {}",
        package.name
    ));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .tls_config(crate::tls::config())
        .build()
        .into();
    let accept = match endpoint.api {
        Api::Npm => "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8",
        Api::PypiJson => "application/json",
        Api::Simple => "application/vnd.pypi.simple.v1+json",
    };
    let mut response = agent
        .get(url)
        .header("Accept", accept)
        .call()
        .map_err(|e| {
            let roots = crate::tls::explain(&e)
                .map(|r| format!("; {r}"))
                .unwrap_or_default();
            let e = crate::redact::secrets(&e.to_string()).into_owned();
            Error::new(format!(
                "{name}: the registry at {shown}{origin} cannot be reached: {e}{roots}"
            ))
        })?;
    let status = response.status().as_u16();
    if status == 404 {
        return Err(Error::new(format!(
            "{name}: the registry at {shown}{origin} has no such package (404)"
        )));
    }
    if status != 200 {
        return Err(Error::new(format!(
            "{name}: the registry at {shown}{origin} answered HTTP {status}"
        )));
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .read_to_vec()
        .map_err(|e| Error::new(format!("{name}: reading {shown}: {e}")))?;
    let doc: Value = crate::canon::value_from_slice(&body).map_err(|e| {
        let hint = match endpoint.api {
            Api::Simple => " (the index must serve the JSON simple API; or set MCP_COVENANT_PYPI_URL to a server with PyPI's JSON API)",
            _ => "",
        };
        Error::new(format!("{name}: {shown} did not answer JSON: {e}{hint}"))
    })?;
    Ok((endpoint, doc))
}

/// The listed versions that pass the check a version given on the command line passes
/// (one becomes part of a cache path: `9.9+x/../../../victim` must never); the others
/// are dropped with one warning.
fn checked(package: &Package, listed: Vec<String>, notices: &Notices) -> Vec<String> {
    let (ok, bad): (Vec<String>, Vec<String>) = listed
        .into_iter()
        .partition(|v| super::spec::check_version(package.registry, v).is_ok());
    if let Some(first) = bad.first() {
        notices.warn(format!(
            "{}: the registry lists {} version(s) that are not exact versions, ignored (such as `{}`)",
            package.display(),
            bad.len(),
            crate::escape::truncated(first, 80)
        ));
    }
    ok
}

/// The version in a distribution's file name: a wheel's second field, a source
/// archive's last.
fn file_version(name: &str) -> Option<&str> {
    if let Some(stem) = name.strip_suffix(".whl") {
        stem.split('-').nth(1)
    } else {
        [".tar.gz", ".zip", ".tar.bz2"]
            .iter()
            .find_map(|ext| name.strip_suffix(ext))
            .and_then(|stem| stem.rsplit_once('-').map(|(_, v)| v))
    }
}

/// The versions in a JSON simple API page (PEP 691): each file's version (a wheel's
/// second field, a source archive's last), releases with a file that is not yanked.
pub fn parse_simple(doc: &Value) -> Option<Vec<String>> {
    let files = doc.get("files")?.as_array()?;
    let mut out: Vec<String> = Vec::new();
    for f in files {
        let yanked = match f.get("yanked") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(_)) => true,
            _ => false,
        };
        let Some(name) = f.get("filename").and_then(Value::as_str) else {
            continue;
        };
        if yanked {
            continue;
        }
        if let Some(v) = file_version(name) {
            if !out.iter().any(|o| o == v) {
                out.push(v.to_string());
            }
        }
    }
    Some(out)
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
        let simple = json!({"files": [
            {"filename": "mcp_server_time-1.0-py3-none-any.whl"},
            {"filename": "mcp-server-time-1.0.tar.gz"},
            {"filename": "mcp_server_time-1.1.tar.gz", "yanked": "broken"},
            {"filename": "mcp_server_time-2.0-py3-none-any.whl", "yanked": false}
        ]});
        assert_eq!(parse_simple(&simple).unwrap(), ["1.0", "2.0"]);
    }
}
