//! Where a surface comes from: a live server (the command line's, or a `[[server]]`),
//! or a lockfile (a path, or `git:REF:PATH`).

use std::path::{Path, PathBuf};

use super::args::LiveSource;
use crate::config::Server;
use crate::config::Transport;
use crate::error::{Error, Result};
use crate::git::GitFile;
use crate::lockfile::{self, Lockfile};
use crate::mcp;
use crate::report::anchor;

/// The server to capture: the one the command line gives, or a `[[server]]`.
pub(super) enum Live<'a> {
    Cli,
    Server(&'a Server),
}

/// Capture `live`, with the capture options (timeout, protocol, ...) of `source`.
pub(super) fn capture(live: &Live<'_>, source: &LiveSource) -> Result<Lockfile> {
    let endpoint = match live {
        Live::Server(s) => match &s.transport {
            Transport::Command(argv) => mcp::Endpoint::Stdio(argv.clone()),
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
                    "no server to capture: give the command after `--` (e.g. `-- node server.js`) or --http URL, or add [[server]] entries to covenant.toml",
                ))
            }
        },
    };
    let opts = mcp::CaptureOptions {
        endpoint,
        timeout: source.timeout,
        protocol: source.protocol.clone(),
        client_capabilities: source
            .client_capabilities
            .iter()
            .map(|c| c.word().to_string())
            .collect(),
        show_server_stderr: source.show_server_stderr,
    };
    let captured = mcp::capture(&opts)?;
    Ok(Lockfile::new(
        captured.server,
        captured.surface,
        lockfile::capture_time()?,
    ))
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
}

impl LockSource {
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
        }
    }

    /// The path reports point at (SARIF `artifactLocation.uri`, annotations): for
    /// `git:REF:PATH`, PATH, which the pull request holds too.
    pub(super) fn uri(&self) -> String {
        match self {
            LockSource::File(p) => anchor::uri_for(p),
            LockSource::Git(g) | LockSource::Absent(g) => anchor::uri_for(Path::new(&g.path)),
        }
    }

    pub(super) fn bytes(&self) -> Result<Vec<u8>> {
        match self {
            LockSource::File(p) => crate::io::read_input(p, "lockfile"),
            LockSource::Git(g) => g.read(),
            LockSource::Absent(_) => Ok(empty_lockfile().to_text().into_bytes()),
        }
    }

    pub(super) fn read_lenient(&self) -> Result<Lockfile> {
        match self {
            LockSource::File(p) => Lockfile::read_lenient(p),
            LockSource::Git(g) => Lockfile::parse_lenient(&g.read()?, &g.to_string()),
            LockSource::Absent(_) => Ok(empty_lockfile()),
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
        "baseline lockfile {} not found; create it with `mcp-covenant snapshot -o {} -- <server command>` and commit it",
        path.display(),
        path.display()
    ))
}
