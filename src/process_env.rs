//! The environment of every process mcp-covenant starts: a server (stdio), `git`, and
//! `npm`/`pip`/`uv`/`python` installing a package. Each starts with an empty
//! environment plus an allow-list, never the whole of ours: a CI job's environment holds
//! `GITHUB_TOKEN`, `ACTIONS_RUNTIME_TOKEN`, `AWS_*` and registry tokens, and a server
//! from a pull request (or a package's install) must not be able to use them.
//!
//! - every process: `PATH`, `HOME`, the locale (`LANG`, `LANGUAGE`, `LC_*`), `TZ`,
//!   `TMPDIR`, `USER`, `LOGNAME`, `LD_LIBRARY_PATH` (a setup-python interpreter needs
//!   it), and on Windows the variables a process needs to start ([`WINDOWS`]);
//! - a server: also `PYTHONHASHSEED` (set to 0 when absent), the names its `env` lists
//!   in covenant.toml, and the names given with `--env NAME`;
//! - an install: also its client's registry, proxy and certificate settings
//!   (`npm_config_*`, `PIP_*`, `UV_*`, `HTTP(S)_PROXY`, `SSL_CERT_FILE`, ...), except any
//!   whose name says it holds a credential (`*TOKEN*`, `*AUTH*`, `*PASSWORD*`, ...),
//!   and the names given with `--env NAME` or in the package's `env`;
//! - git: nothing more, and no `GIT_*` variable at all: `GIT_DIR`, `GIT_INDEX_FILE`,
//!   `GIT_OBJECT_DIRECTORY`, `GIT_ALTERNATE_OBJECT_DIRECTORIES`, `GIT_CONFIG_*`,
//!   `GIT_EXEC_PATH`, `GIT_REPLACE_REF_BASE`, `GIT_NAMESPACE` ... would let whoever set
//!   the environment (an earlier step of the job) choose what a revision's lockfile
//!   reads as, or run a command. mcp-covenant sets the few git needs itself.

use std::ffi::OsString;
use std::process::Command;
use std::sync::Mutex;

/// What is being started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A server under test.
    Server,
    /// `npm`, `pip`, `uv` or `python` installing a package.
    Install,
    /// `git`, reading a revision.
    Git,
}

/// Every process gets these (when they are set).
const BASE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "LD_LIBRARY_PATH",
];

/// A process on Windows does not start (or cannot find its files) without these.
const WINDOWS: &[&str] = &[
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "USERNAME",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "ProgramW6432",
    "CommonProgramFiles",
    "CommonProgramFiles(x86)",
    "CommonProgramW6432",
    "ALLUSERSPROFILE",
    "PUBLIC",
    "OS",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "COMPUTERNAME",
];

/// An install also gets these: where its registry is, the proxy, the roots it trusts.
const INSTALL: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
];

/// ... and the variables of these prefixes (matched ignoring case: npm reads
/// `npm_config_*` in either case), unless the name says it holds a credential.
const INSTALL_PREFIXES: &[&str] = &["npm_config_", "PIP_", "UV_"];

/// Words in a variable's name that mark a credential: never passed unless named.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "AUTH",
    "PASSWORD",
    "PASSWD",
    "SECRET",
    "USERNAME",
    "_PASS",
    "OTP",
    "KEY",
    "CREDENTIAL",
];

/// The names `--env NAME` gave (for servers and installs).
static NAMED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Pass the variables `names` (from `--env NAME`) to every server and install started
/// from now on. A name must be one (letters, digits, `_`): `--env NAME=VALUE` is
/// refused without echoing the value (the message is the error's line).
pub(crate) fn pass(names: &[String]) -> Result<(), &'static str> {
    let name = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if names.iter().any(|n| !name(n)) {
        return Err("--env takes a variable's name (letters, digits, `_`), as in `--env API_KEY`; the value is read from the environment, never from the command line");
    }
    let mut named = NAMED.lock().unwrap_or_else(|e| e.into_inner());
    for n in names {
        if !named.contains(n) {
            named.push(n.clone());
        }
    }
    Ok(())
}

fn same(a: &str, b: &str) -> bool {
    // Windows' names ignore case; elsewhere `Path` and `PATH` are two variables.
    if cfg!(windows) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// Whether a variable's name marks a credential.
fn secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// Whether `name` is passed to a process of `kind`, `named` being what the server's or
/// package's `env` lists.
pub(crate) fn allowed(name: &str, kind: Kind, named: &[String]) -> bool {
    let listed = |list: &[&str]| list.iter().any(|n| same(n, name));
    if listed(BASE) || name.starts_with("LC_") || (cfg!(windows) && listed(WINDOWS)) {
        return true;
    }
    if kind == Kind::Git {
        return false;
    }
    let given = |list: &[String]| list.iter().any(|n| same(n, name));
    if given(named) || given(&NAMED.lock().unwrap_or_else(|e| e.into_inner())) {
        return true;
    }
    match kind {
        Kind::Server => name == "PYTHONHASHSEED",
        Kind::Install => {
            let prefixed = INSTALL_PREFIXES.iter().any(|p| {
                name.len() > p.len()
                    && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
            });
            listed(INSTALL) || (prefixed && !secret(name))
        }
        Kind::Git => false,
    }
}

/// The variables of ours a process of `kind` gets.
pub(crate) fn vars(kind: Kind, named: &[String]) -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(k, _)| k.to_str().is_some_and(|k| allowed(k, kind, named)))
        .collect()
}

/// Start `cmd` with an empty environment plus what a process of `kind` gets (`named`:
/// the server's or package's `env`). Variables `cmd` sets afterwards are its own.
pub(crate) fn apply(cmd: &mut Command, kind: Kind, named: &[String]) {
    cmd.env_clear();
    cmd.envs(vars(kind, named));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_never_passed_unless_named() {
        for kind in [Kind::Server, Kind::Install, Kind::Git] {
            for name in [
                "GITHUB_TOKEN",
                "ACTIONS_RUNTIME_TOKEN",
                "ACTIONS_ID_TOKEN_REQUEST_URL",
                "AWS_SECRET_ACCESS_KEY",
                "AWS_ACCESS_KEY_ID",
                "NPM_TOKEN",
                "NODE_AUTH_TOKEN",
                "npm_config__authToken",
                "npm_config_//registry.npmjs.org/:_authToken",
                "NPM_CONFIG_PASSWORD",
                "UV_PUBLISH_TOKEN",
                "UV_INDEX_PRIVATE_PASSWORD",
                "PIP_PASSWORD",
                "MCP_COVENANT_HEADER_AUTHORIZATION",
                "GIT_DIR",
            ] {
                assert!(!allowed(name, kind, &[]), "{name} passed to {kind:?}");
            }
        }
        assert!(allowed("NPM_TOKEN", Kind::Install, &["NPM_TOKEN".into()]));
        assert!(allowed("API_KEY", Kind::Server, &["API_KEY".into()]));
    }

    #[test]
    fn installs_get_their_registry_proxy_and_roots() {
        for name in [
            "npm_config_registry",
            "NPM_CONFIG_REGISTRY",
            "PIP_INDEX_URL",
            "PIP_EXTRA_INDEX_URL",
            "UV_INDEX_URL",
            "UV_DEFAULT_INDEX",
            "HTTPS_PROXY",
            "no_proxy",
            "SSL_CERT_FILE",
            "NODE_EXTRA_CA_CERTS",
            "REQUESTS_CA_BUNDLE",
        ] {
            assert!(allowed(name, Kind::Install, &[]), "{name}");
            assert!(!allowed(name, Kind::Server, &[]), "{name}");
            assert!(!allowed(name, Kind::Git, &[]), "{name}");
        }
    }

    #[test]
    fn git_gets_no_git_variable_and_no_named_one() {
        for name in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_KEY_0",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_GLOBAL",
            "GIT_EXEC_PATH",
            "GIT_REPLACE_REF_BASE",
            "GIT_NAMESPACE",
        ] {
            assert!(!allowed(name, Kind::Git, &[name.to_string()]), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"] {
            assert!(allowed(name, Kind::Git, &[]), "{name}");
        }
    }
}
