//! `npm:NAME@VERSION` and `pypi:NAME==VERSION`, parsed and validated strictly: a name
//! or version that npm, pip or a path could read as something else (a flag, a URL, a
//! file, a range) is refused before anything runs.

use std::fmt;

use super::version::{Pep440, Registry, Semver};
use crate::error::{Error, Result};

/// Which release: one exact version, or the newest.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Requested {
    Exact(String),
    Latest,
}

/// A package source.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Package {
    pub registry: Registry,
    /// As the registry spells it (npm: lower case, maybe scoped; PyPI: as written).
    pub name: String,
    pub requested: Requested,
}

impl Package {
    /// `Some` when `s` starts with `npm:` or `pypi:` (then it is one, or an error).
    pub fn parse(s: &str) -> Option<Result<Package>> {
        let (registry, rest) = if let Some(rest) = s.strip_prefix("npm:") {
            (Registry::Npm, rest)
        } else if let Some(rest) = s.strip_prefix("pypi:") {
            (Registry::Pypi, rest)
        } else {
            return None;
        };
        Some(parse_in(registry, rest).map_err(|e| {
            Error::new(format!(
                "package source `{}`: {e}",
                s.escape_debug()
                    .to_string()
                    .chars()
                    .take(200)
                    .collect::<String>()
            ))
        }))
    }

    /// `npm:NAME@VERSION` for messages.
    pub fn display(&self) -> String {
        match &self.requested {
            Requested::Exact(v) => self.display_at(v),
            Requested::Latest => format!("{}:{}@latest", self.registry.word(), self.name),
        }
    }

    /// The package at an exact version, for messages.
    pub fn display_at(&self, version: &str) -> String {
        match self.registry {
            Registry::Npm => format!("npm:{}@{version}", self.name),
            Registry::Pypi => format!("pypi:{}=={version}", self.name),
        }
    }

    /// The PyPI name normalised (PEP 503), or the npm name.
    pub fn key_name(&self) -> String {
        match self.registry {
            Registry::Npm => self.name.clone(),
            Registry::Pypi => normalise_pypi(&self.name),
        }
    }

    /// The same package (registry and name), whatever the version.
    pub fn same_package(&self, other: &Package) -> bool {
        self.registry == other.registry && self.key_name() == other.key_name()
    }
}

impl fmt::Display for Package {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

fn parse_in(registry: Registry, rest: &str) -> std::result::Result<Package, String> {
    let (name, version) = match registry {
        Registry::Npm => match rest.rfind('@') {
            Some(i) if i > 0 => (&rest[..i], Some(&rest[i + 1..])),
            _ => (rest, None),
        },
        Registry::Pypi => match rest.split_once("==") {
            Some((n, v)) => (n, Some(v)),
            None => match rest.rfind('@') {
                Some(i) if i > 0 && &rest[i + 1..] == "latest" => (&rest[..i], Some("latest")),
                Some(i) if i > 0 && check_pypi_name(&rest[..i]).is_ok() => {
                    return Err(format!(
                        "a PyPI version follows `==`, as pip writes it: pypi:{}=={}",
                        &rest[..i],
                        rest[i + 1..].escape_debug()
                    ))
                }
                _ => (rest, None),
            },
        },
    };
    match registry {
        Registry::Npm => check_npm_name(name)?,
        Registry::Pypi => check_pypi_name(name)?,
    }
    let requested = match version {
        None | Some("latest") => Requested::Latest,
        Some(v) => {
            check_version(registry, v)?;
            Requested::Exact(v.to_string())
        }
    };
    Ok(Package {
        registry,
        name: name.to_string(),
        requested,
    })
}

/// npm's rules for a new package name: at most 214 characters, lower case, URL-safe,
/// not starting with `.`, `_` or `-`; an optional `@scope/`.
fn check_npm_name(name: &str) -> std::result::Result<(), String> {
    let part_ok = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_', '-'])
            && p.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'-' | b'.' | b'_' | b'~')
            })
    };
    let ok = name.len() <= 214
        && match name.strip_prefix('@') {
            Some(scoped) => {
                matches!(scoped.split_once('/'), Some((s, n)) if part_ok(s) && part_ok(n))
            }
            None => part_ok(name),
        };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not an npm package name (lower-case letters, digits, `-`, `.`, `_`, `~`, an optional @scope/; not starting with `-`, `.` or `_`)",
            name.escape_debug()
        ))
    }
}

/// PEP 508 names: letters, digits, `.`, `_`, `-`, starting and ending with a letter or
/// digit.
fn check_pypi_name(name: &str) -> std::result::Result<(), String> {
    let b = name.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 200
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a PyPI package name (letters, digits, `.`, `_`, `-`, starting and ending with a letter or digit)",
            name.escape_debug()
        ))
    }
}

/// An exact version: npm, semver `1.2.3[-pre][+build]`; PyPI, a PEP 440 public version
/// (digits first; letters, digits, `.`, `!`, `-`, `_`; no local part `+…`, which no
/// index serves). Versions a registry lists pass the same check before one becomes part
/// of a path.
pub fn check_version(registry: Registry, v: &str) -> std::result::Result<(), String> {
    let ok = match registry {
        Registry::Npm => Semver::parse(v).is_some(),
        Registry::Pypi => {
            v.len() <= 64
                && v.as_bytes().first().is_some_and(u8::is_ascii_digit)
                && v.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'!' | b'-' | b'_'))
                && v.as_bytes().last().is_some_and(u8::is_ascii_alphanumeric)
                && !v.contains("..")
                && Pep440::parse(v).is_some()
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not an exact version{} (or `latest`)",
            v.escape_debug(),
            match registry {
                Registry::Npm => " such as 1.4.0",
                Registry::Pypi => " such as 2026.10.19",
            }
        ))
    }
}

/// A requirement installed beside a package (`with`): a name, optional extras and
/// version constraints (`mcp<2`, `zod@3`); no URL, path or flag.
pub fn check_requirement(registry: Registry, req: &str) -> std::result::Result<(), String> {
    let bad = || {
        format!(
            "`with` requirement `{}` is not a package name with an optional version ({})",
            req.escape_debug(),
            match registry {
                Registry::Npm => "e.g. zod@3",
                Registry::Pypi => "e.g. mcp<2",
            }
        )
    };
    match registry {
        Registry::Npm => {
            let (name, range) = match req.rfind('@') {
                Some(i) if i > 0 => (&req[..i], Some(&req[i + 1..])),
                _ => (req, None),
            };
            check_npm_name(name).map_err(|_| bad())?;
            if let Some(r) = range {
                let ok = !r.is_empty()
                    && r.len() <= 64
                    && r.bytes().all(|c| {
                        c.is_ascii_alphanumeric()
                            || matches!(
                                c,
                                b'.' | b'^' | b'~' | b'<' | b'>' | b'=' | b'-' | b'*' | b' ' | b'|'
                            )
                    });
                if !ok {
                    return Err(bad());
                }
            }
            Ok(())
        }
        Registry::Pypi => {
            let end = req
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
                .unwrap_or(req.len());
            check_pypi_name(&req[..end]).map_err(|_| bad())?;
            let ok = req.len() <= 128
                && req[end..].bytes().all(|c| {
                    c.is_ascii_alphanumeric()
                        || matches!(
                            c,
                            b'.' | b'<'
                                | b'>'
                                | b'='
                                | b'!'
                                | b'~'
                                | b'*'
                                | b','
                                | b' '
                                | b'['
                                | b']'
                                | b'_'
                                | b'-'
                        )
                });
            if ok {
                Ok(())
            } else {
                Err(bad())
            }
        }
    }
}

/// A Python version to run a PyPI package on: `3`, `3.12` or `3.12.4`.
pub fn check_python(v: &str) -> std::result::Result<(), String> {
    let parts: Vec<&str> = v.split('.').collect();
    let ok = v.len() <= 16
        && (1..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`python = \"{}\"` is not a Python version such as 3.12",
            v.escape_debug()
        ))
    }
}

/// PEP 503: lower case, runs of `-`, `_`, `.` as one `-`.
pub fn normalise_pypi(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Package {
        Package::parse(s).unwrap().unwrap()
    }

    fn err(s: &str) -> String {
        Package::parse(s).unwrap().unwrap_err().to_string()
    }

    #[test]
    fn sources_parse() {
        let p = ok("npm:@modelcontextprotocol/server-memory@2025.9.25");
        assert_eq!(p.name, "@modelcontextprotocol/server-memory");
        assert_eq!(p.requested, Requested::Exact("2025.9.25".into()));
        assert_eq!(ok("npm:@scope/x").requested, Requested::Latest);
        assert_eq!(ok("npm:x@latest").requested, Requested::Latest);
        let p = ok("pypi:mcp-server-time==2026.10.19");
        assert_eq!(
            (p.registry, p.name.as_str()),
            (Registry::Pypi, "mcp-server-time")
        );
        assert_eq!(ok("pypi:Mcp_Server.Time").key_name(), "mcp-server-time");
        assert_eq!(ok("pypi:x@latest").requested, Requested::Latest);
        assert!(err("pypi:mcp-server-time@2026.10.19").contains("pypi:mcp-server-time==2026.10.19"));
        assert!(Package::parse("./npm:x").is_none());
        assert!(Package::parse("mcp-covenant.lock").is_none());
    }

    #[test]
    fn hostile_sources_are_refused() {
        for bad in [
            "npm:-g@1.0.0",
            "npm:--registry=http://evil@1.0.0",
            "npm:x@--foo",
            "npm:x@^1.0.0",
            "npm:x@1.0.0 --global",
            "npm:../x@1.0.0",
            "npm:@scope/../x@1.0.0",
            "npm:X@1.0.0",
            "npm:x@file:../y",
            "npm:@/x@1.0.0",
            "npm:",
            "pypi:-e==1.0",
            "pypi:x==--index-url=http://evil",
            "pypi:x==1.0;rm",
            "pypi:x @ https://evil/x.whl",
            "pypi:x==1.0 y",
            "pypi:x>=1.0",
            "pypi:",
            "pypi:x==v1",
            "pypi:x==1.0+local",
            "pypi:x==9.9+x/../../../victim",
            "pypi:x==1..",
        ] {
            assert!(err(bad).contains("package source"), "{bad}");
        }
    }

    #[test]
    fn requirements_beside_a_package() {
        assert!(check_requirement(Registry::Pypi, "mcp<2").is_ok());
        assert!(check_requirement(Registry::Pypi, "mcp[cli]>=1.2,<2").is_ok());
        assert!(check_requirement(Registry::Npm, "zod@3").is_ok());
        assert!(check_requirement(Registry::Npm, "@scope/x@^1.2.0").is_ok());
        for bad in [
            "-e .",
            "--index-url=x",
            "x @ https://evil",
            "./local",
            "git+https://x",
        ] {
            assert!(check_requirement(Registry::Pypi, bad).is_err(), "{bad}");
            assert!(check_requirement(Registry::Npm, bad).is_err(), "{bad}");
        }
        assert!(check_requirement(Registry::Npm, "x@file:../y").is_err());
        assert!(check_requirement(Registry::Npm, "x@github:a/b").is_err());
    }
}
