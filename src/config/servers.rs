//! The servers of covenant.toml: the one server given at the top level (no name; its
//! lockfile defaults to mcp-covenant.lock), or the `[[server]]` entries, each started by
//! a `command`, reached over `http`, or installed from a `package`.

use std::path::PathBuf;

use toml::Spanned;

use super::raw::{At, RawConfig, RawServer};
use super::{Server, Transport, DEFAULT_LOCKFILE};
use crate::error::{Error, Result};

/// The name of the one server given at the top level of covenant.toml.
pub const TOP_LEVEL_SERVER: &str = "default";

/// The `[[server]]` entries, or the one server of the top level (an error beside
/// `[[server]]` entries).
pub(super) fn resolve(raw: &RawConfig, at: At<'_>) -> Result<Vec<Server>> {
    let entries: Vec<(String, &RawServer)> = raw
        .server
        .iter()
        .map(|e| (at(e.span()), e.get_ref()))
        .collect();
    let mut servers = servers(&entries, at)?;
    let top = RawServer {
        name: None,
        command: raw.command.clone(),
        http: raw.http.clone(),
        headers_from_env: raw.headers_from_env.clone(),
        lockfile: raw.lockfile.clone(),
        package: None,
        args: None,
        env: None,
        with: None,
        allow_scripts: None,
        allow_sdist: None,
        python: None,
    };
    let given = [
        top.command.as_ref().map(Spanned::span),
        top.http.as_ref().map(Spanned::span),
        top.lockfile.as_ref().map(Spanned::span),
        top.headers_from_env.values().next().map(Spanned::span),
    ];
    if let Some(span) = given.into_iter().flatten().min_by_key(|s| s.start) {
        let origin = at(span);
        if !servers.is_empty() {
            return Err(Error::new(format!(
                "{origin}: a top-level `command`, `http` or `lockfile` is the one server; with [[server]] entries, give it as one of them"
            )));
        }
        servers = self::servers(&[(origin, &top)], at)?;
    }
    Ok(servers)
}

fn fail<T>(place: &str, msg: String) -> Result<T> {
    Err(Error::new(format!("{place}: {msg}")))
}

/// The `[[server]]` entries (or the one server of the top level, which has no name and
/// whose lockfile defaults to mcp-covenant.lock), each with where it is, validated: a
/// name (letters, digits, `.`, `_`, `-`; unique), exactly one of `command` (a non-empty
/// list) and `http`, and a lockfile (unique).
fn servers(raw: &[(String, &RawServer)], at: At<'_>) -> Result<Vec<Server>> {
    let mut out: Vec<Server> = Vec::new();
    // The top level's one server is the only entry without a name that is not an error.
    let top_level = raw.len() == 1 && raw[0].1.name.is_none();
    for (origin, e) in raw {
        let origin = origin.clone();
        let n = name(e, &origin, top_level, &out, at)?;
        let package_keys = e.args.is_some()
            || e.with.is_some()
            || e.allow_scripts.is_some()
            || e.allow_sdist.is_some()
            || e.python.is_some();
        if package_keys && e.package.is_none() {
            return fail(
                &origin,
                format!(
                    "server `{n}`: `args`, `with`, `allow_scripts`, `allow_sdist` and `python` are for `package` servers"
                ),
            );
        }
        if e.env.is_some() && e.http.is_some() {
            return fail(&origin, format!("server `{n}`: `env` is for `command` and `package` servers (an `http` server takes headers_from_env)"));
        }
        let env = env_names(n, e, at)?;
        let transport = transport(n, e, &origin, &env, at)?;
        let path = match &e.lockfile {
            None if e.name.is_none() => PathBuf::from(DEFAULT_LOCKFILE),
            None => {
                return fail(
                    &origin,
                    format!("server `{n}` has no `lockfile`, e.g. lockfile = \"locks/{n}.lock\""),
                )
            }
            Some(lockfile) if lockfile.get_ref().is_empty() => {
                return fail(
                    &at(lockfile.span()),
                    format!("server `{n}`: `lockfile` is empty"),
                )
            }
            Some(lockfile) => PathBuf::from(lockfile.get_ref()),
        };
        if let Some(other) = out.iter().find(|s| s.lockfile == path) {
            let place = e.lockfile.as_ref().map_or(origin.clone(), |l| at(l.span()));
            return fail(
                &place,
                format!(
                    "servers `{}` and `{n}` share the lockfile {}",
                    other.name,
                    path.display()
                ),
            );
        }
        out.push(Server {
            name: n.to_string(),
            transport,
            env,
            lockfile: path,
            origin,
        });
    }
    Ok(out)
}

/// An entry's name: letters, digits, `.`, `_`, `-`, not taken by an entry before it;
/// the top level's one server is [`TOP_LEVEL_SERVER`].
fn name<'e>(
    e: &'e RawServer,
    origin: &str,
    top_level: bool,
    before: &[Server],
    at: At<'_>,
) -> Result<&'e str> {
    match &e.name {
        Some(name) => {
            let n = name.get_ref();
            let valid = !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
            if !valid {
                return fail(
                    &at(name.span()),
                    format!("server name {n:?} must be letters, digits, `.`, `_` or `-`"),
                );
            }
            if before.iter().any(|s| s.name == *n) {
                return fail(&at(name.span()), format!("a second [[server]] named `{n}`"));
            }
            Ok(n.as_str())
        }
        None if top_level => Ok(TOP_LEVEL_SERVER),
        None => fail(origin, "this [[server]] has no `name`".into()),
    }
}

/// How server `n` is reached: exactly one of `command`, `http` and `package`.
fn transport(
    n: &str,
    e: &RawServer,
    origin: &str,
    env: &[String],
    at: At<'_>,
) -> Result<Transport> {
    Ok(match (&e.command, &e.http, &e.package) {
        (None, None, Some(p)) => package_server(n, p, e, env.to_vec(), at)?,
        (_, _, Some(_)) => {
            return fail(origin, format!("server `{n}` has `package` and `command` or `http`; give one"))
        }
        (Some(c), None, None) if c.get_ref().is_empty() || c.get_ref()[0].is_empty() => {
            return fail(
                &at(c.span()),
                format!("server `{n}`: `command` is empty; give the program and its arguments, e.g. [\"node\", \"server.js\"]"),
            )
        }
        (Some(c), None, None) => {
            if !e.headers_from_env.is_empty() {
                return fail(origin, format!("server `{n}`: `headers_from_env` is for `http` servers"));
            }
            Transport::Command(c.get_ref().clone())
        }
        (None, Some(url), None) => Transport::Http {
            url: url.get_ref().clone(),
            headers_from_env: headers(n, e, at)?,
        },
        (Some(_), Some(_), None) => {
            return fail(origin, format!("server `{n}` has both `command` and `http`; give one"))
        }
        (None, None, None) => {
            return fail(origin, format!("server `{n}` has neither `command`, `http` nor `package`; give one"))
        }
    })
}

/// `headers_from_env`: (header name, environment variable name) pairs.
fn headers(n: &str, e: &RawServer, at: At<'_>) -> Result<Vec<(String, String)>> {
    let mut headers = Vec::new();
    for (header, var) in &e.headers_from_env {
        let ok_header =
            !header.is_empty() && header.bytes().all(|b| b.is_ascii_graphic() && b != b':');
        let ok_var = !var.get_ref().is_empty()
            && var
                .get_ref()
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !ok_header || !ok_var {
            return fail(
                &at(var.span()),
                format!("server `{n}`: headers_from_env maps a header name to an environment variable name, e.g. {{ Authorization = \"ORDERS_TOKEN\" }}"),
            );
        }
        headers.push((header.clone(), var.get_ref().clone()));
    }
    Ok(headers)
}

/// `env`: environment variable names (letters, digits, `_`).
fn env_names(n: &str, e: &RawServer, at: At<'_>) -> Result<Vec<String>> {
    let env = e
        .env
        .as_ref()
        .map(|v| v.get_ref().clone())
        .unwrap_or_default();
    if let Some(bad) = env
        .iter()
        .find(|v| v.is_empty() || !v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    {
        let span = e.env.as_ref().map(|v| v.span()).unwrap_or_default();
        return Err(Error::new(format!(
            "{}: server `{n}`: `env` lists variable names (letters, digits, `_`), not `{}`",
            at(span),
            bad.escape_debug()
        )));
    }
    Ok(env)
}

/// A `package` server: the source parsed strictly.
fn package_server(
    n: &str,
    p: &Spanned<String>,
    e: &RawServer,
    env: Vec<String>,
    at: At<'_>,
) -> Result<Transport> {
    let package = crate::registry::Package::parse(p.get_ref())
        .unwrap_or_else(|| {
            Err(Error::new(format!(
                "`{}` is not a package source; expected npm:NAME@VERSION or pypi:NAME==VERSION",
                p.get_ref().escape_debug()
            )))
        })
        .map_err(|err| Error::new(format!("{}: server `{n}`: {}", at(p.span()), err.message())))?;
    let options = crate::registry::PackageOptions {
        args: e.args.clone().unwrap_or_default(),
        env,
        with: e.with.clone().unwrap_or_default(),
        allow_scripts: e.allow_scripts.unwrap_or(false),
        allow_sdist: e.allow_sdist.unwrap_or(false),
        python: e.python.clone(),
    };
    if package.registry == crate::registry::Registry::Npm
        && (options.python.is_some() || options.allow_sdist)
    {
        return Err(Error::new(format!(
            "{}: server `{n}`: `python` and `allow_sdist` are for PyPI packages",
            at(p.span())
        )));
    }
    if let Some(py) = &options.python {
        crate::registry::spec::check_python(py)
            .map_err(|err| Error::new(format!("{}: server `{n}`: {err}", at(p.span()))))?;
    }
    for w in &options.with {
        crate::registry::spec::check_requirement(package.registry, w)
            .map_err(|err| Error::new(format!("{}: server `{n}`: {err}", at(p.span()))))?;
    }
    Ok(Transport::Package { package, options })
}
