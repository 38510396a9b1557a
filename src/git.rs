//! Lockfiles at a git revision: `git:REF:PATH` wherever a lockfile is read, e.g.
//! `--baseline git:origin/main:mcp-covenant.lock`.
//!
//! The file is read through the `git` command, and only through `git cat-file`: it
//! reads objects from the object store, never the index or the work tree, and runs no
//! hook, filter (textconv, smudge), pager or fsmonitor, so nothing the repository
//! contains is executed. The revision never reaches git's command line: `REF:PATH` is
//! written to `cat-file --batch-check`'s stdin, which answers with the object's id,
//! type and size; the blob is then read by that hexadecimal id, at most
//! [`MAX_BYTES`]. A REF that starts with `-` or holds a control character is refused
//! before git runs.

use std::path::Path;

use crate::error::{Error, Result};
use crate::process::{Failure, Keep, Run};
use crate::process_env::Kind;

/// The largest lockfile read from git (a 5,000-tool lockfile is about 10 MiB).
pub const MAX_BYTES: u64 = 256 << 20;

/// A file at a git revision: `git:REF:PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitFile {
    /// A revision as git reads it: a branch, tag, `origin/main`, `HEAD~1`, a commit id.
    pub rev: String,
    /// The path from the repository root (`./x` or `../x`: from the current directory).
    pub path: String,
}

impl std::fmt::Display for GitFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "git:{}:{}", self.rev, self.path)
    }
}

impl GitFile {
    /// `None` when `arg` does not start with `git:` (a plain path); else the parsed
    /// `git:REF:PATH`, or why it is not one. REF is everything up to the next `:`
    /// (a revision cannot contain one), PATH the rest.
    pub fn parse(arg: &str) -> Option<Result<GitFile>> {
        let rest = arg.strip_prefix("git:")?;
        let bad = |why: &str| {
            Some(Err(Error::new(format!(
                "`{}`: {why}; expected git:REF:PATH, e.g. git:origin/main:mcp-covenant.lock",
                arg.escape_debug()
            ))))
        };
        let Some((rev, path)) = rest.split_once(':') else {
            return bad("no `:` between the revision and the path");
        };
        if rev.is_empty() {
            return bad("the revision is empty");
        }
        if path.is_empty() {
            return bad("the path is empty");
        }
        if rev.starts_with('-') {
            return bad("a revision cannot start with `-`");
        }
        if arg.chars().any(char::is_control) {
            return bad("control characters are not allowed");
        }
        Some(Ok(GitFile {
            rev: rev.to_string(),
            path: path.to_string(),
        }))
    }

    /// The file's bytes at the revision. Every error names `git:REF:PATH`.
    pub fn read(&self) -> Result<Vec<u8>> {
        self.read_in(None, MAX_BYTES)
    }

    /// Whether PATH exists at the revision (an unknown revision is an error).
    pub fn exists(&self) -> Result<bool> {
        Ok(self.locate(None)?.is_some())
    }

    /// [`GitFile::read`] in `dir` (default: the current directory), at most `limit` bytes.
    fn read_in(&self, dir: Option<&Path>, limit: u64) -> Result<Vec<u8>> {
        let fail = |why: String| Error::new(format!("{self}: {why}"));
        let Some((oid, kind, size)) = self.locate(dir)? else {
            return Err(fail(format!(
                "no file `{}` at revision `{}`",
                self.path, self.rev
            )));
        };
        if kind != "blob" {
            return Err(fail(format!(
                "`{}` at revision `{}` is a {kind}, not a file",
                self.path, self.rev
            )));
        }
        match size {
            Some(n) if n <= limit => {}
            _ => return Err(fail(too_big(limit))),
        }
        run(dir, &["cat-file", "blob", &oid], None, limit).map_err(fail)
    }

    /// The object at REV:PATH, as (id, type, size), or `None` when the revision has no
    /// such path; an unknown revision is an error.
    #[allow(clippy::type_complexity)]
    fn locate(&self, dir: Option<&Path>) -> Result<Option<(String, String, Option<u64>)>> {
        let run = |args: &[&str], stdin, limit| run(dir, args, stdin, limit);
        let fail = |why: String| Error::new(format!("{self}: {why}"));
        // The revision alone first, so an unknown revision and an unknown path get
        // different messages.
        let query = format!("{}\n{}:{}\n", self.rev, self.rev, self.path);
        let out = run(
            &["cat-file", "--batch-check"],
            Some(query.as_bytes()),
            1 << 16,
        )
        .map_err(&fail)?;
        let text = String::from_utf8_lossy(&out);
        let mut lines = text.lines();
        let (rev_line, file_line) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
        if rev_line.ends_with(" missing") || rev_line.ends_with(" ambiguous") {
            let what = if rev_line.ends_with(" ambiguous") {
                "is ambiguous"
            } else {
                "is not a known revision"
            };
            return Err(fail(format!(
                "`{}` {what} in this repository (a shallow CI checkout may lack it: fetch it first, e.g. `git fetch --depth=1 origin main`)",
                self.rev
            )));
        }
        let fields: Vec<&str> = file_line.split(' ').collect();
        if let [oid, kind, size] = fields[..] {
            if is_hex(oid) {
                return Ok(Some((
                    oid.to_string(),
                    kind.to_string(),
                    size.parse::<u64>().ok(),
                )));
            }
        }
        // `missing` is said of a path the revision lacks, and of an object this clone
        // lacks (a partial clone; git never fetches it here). The tree tells them apart:
        // it names the object even when the object is not here.
        let named = run(
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{}:{}", self.rev, self.path),
            ],
            None,
            1 << 12,
        );
        match named {
            Ok(oid) if is_hex(String::from_utf8_lossy(&oid).trim()) => Err(fail(format!(
                "`{}` at revision `{}` names object {} that is not in this clone (a partial or shallow clone?); fetch it, e.g. `git fetch origin {}`, or clone without --filter",
                self.path,
                self.rev,
                String::from_utf8_lossy(&oid).trim(),
                self.rev
            ))),
            _ => Ok(None),
        }
    }
}

/// The path from the current directory up to the root of its work tree (`../..`, or
/// empty at the root): how far up covenant.toml is looked for at a revision.
pub fn up_to_root() -> Result<std::path::PathBuf> {
    let out = run(None, &["rev-parse", "--show-cdup"], None, 1 << 12).map_err(Error::new)?;
    Ok(std::path::PathBuf::from(
        String::from_utf8_lossy(&out).trim().to_string(),
    ))
}

/// The current directory's path inside its work tree (`packages/orders`, no trailing
/// slash), empty at the root; `None` outside a work tree or without git.
pub fn prefix() -> Option<String> {
    let out = run(None, &["rev-parse", "--show-prefix"], None, 1 << 12).ok()?;
    let text = String::from_utf8(out).ok()?;
    Some(
        text.trim_end_matches(['\n', '\r'])
            .trim_end_matches('/')
            .to_string(),
    )
}

/// How long one git command may take: `MCP_COVENANT_GIT_TIMEOUT` seconds, default 120.
fn deadline() -> std::time::Duration {
    let secs = std::env::var("MCP_COVENANT_GIT_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(120);
    std::time::Duration::from_secs(secs)
}

fn too_big(limit: u64) -> String {
    format!("the file is larger than the {limit} bytes a lockfile may be")
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Run `git ARGS` in `dir` (default: the current directory) with `stdin`, returning
/// at most `limit` bytes of stdout; a failure is one line: git's own first
/// `fatal:`/`error:` line, or what to do about it.
fn run(
    dir: Option<&Path>,
    args: &[&str],
    stdin: Option<&[u8]>,
    limit: u64,
) -> std::result::Result<Vec<u8>, String> {
    // No `GIT_*` of the environment (GIT_DIR, GIT_INDEX_FILE, GIT_CONFIG_*, ...) chooses
    // what a revision reads as, and no token reaches git (process_env's Kind::Git).
    let mut git = Run::new("git", Kind::Git)
        .arg("--no-pager")
        // Never reach for a remote: no lazy fetch of a partial clone's missing object
        // (which would run the remote's upload-pack and could hang), on any git version.
        .args(["-c", "protocol.allow=never"])
        .args(args)
        .env("GIT_NO_LAZY_FETCH", "1")
        // No credential prompt can block.
        .env("GIT_TERMINAL_PROMPT", "0")
        // `refs/replace/*` in the repository cannot swap a revision's lockfile for
        // another blob.
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .stdout(Keep::Head(usize::try_from(limit).unwrap_or(usize::MAX)))
        // Nothing here should take long (the objects are local); a stuck filesystem or
        // a wrapper script could.
        .deadline(deadline());
    if let Some(dir) = dir {
        git = git.cwd(dir);
    }
    if let Some(bytes) = stdin {
        git = git.stdin(bytes);
    }
    let out = git.output().map_err(|e| match e {
        Failure::NotFound(_) => "cannot run `git`: it is not installed or not on PATH".into(),
        Failure::Spawn(_, e) => format!("cannot run `git`: {e}"),
        Failure::TooMuch(..) => too_big(limit),
        e => e.to_string(),
    })?;
    if out.status.success() {
        return Ok(out.stdout);
    }
    Err(failed(out.status, &out.stderr))
}

/// The one line for a git that failed: its first `fatal:`/`error:` line, else its
/// first line, else its status.
fn failed(status: std::process::ExitStatus, stderr: &[u8]) -> String {
    let err = String::from_utf8_lossy(stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| err.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .trim();
    if line.contains("not a git repository") {
        return "not inside a git repository (run mcp-covenant from the repository's work tree)"
            .into();
    }
    match line {
        "" => format!("git failed ({status})"),
        l => format!("git failed: {}", l.escape_debug()),
    }
}

/// The repository's default branch, for the workflow `init` writes: what
/// `origin/HEAD` names, else the checked-out branch; `None` outside a repository, or
/// when neither is a plain branch name (letters, digits, `.`, `_`, `-`, `/`).
pub fn default_branch() -> Option<String> {
    let plain = |name: &str| {
        !name.is_empty()
            && !name.starts_with(['-', '.', '/'])
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b))
    };
    let read = |args: &[&str]| {
        let out = run(None, args, None, 4096).ok()?;
        let name = String::from_utf8(out).ok()?.trim().to_string();
        Some(name)
    };
    read(&[
        "symbolic-ref",
        "--quiet",
        "--short",
        "refs/remotes/origin/HEAD",
    ])
    .and_then(|n| n.strip_prefix("origin/").map(String::from))
    .filter(|n| plain(n))
    .or_else(|| read(&["symbolic-ref", "--quiet", "--short", "HEAD"]).filter(|n| plain(n)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ref_and_path() {
        assert!(GitFile::parse("mcp-covenant.lock").is_none());
        assert!(GitFile::parse("./git:x:y").is_none());
        let g = GitFile::parse("git:origin/main:locks/a.lock")
            .unwrap()
            .unwrap();
        assert_eq!(
            (g.rev.as_str(), g.path.as_str()),
            ("origin/main", "locks/a.lock")
        );
        assert_eq!(g.to_string(), "git:origin/main:locks/a.lock");
        let g = GitFile::parse("git:HEAD~1:dir/with:colon.lock")
            .unwrap()
            .unwrap();
        assert_eq!(g.path, "dir/with:colon.lock");
        for bad in [
            "git:",
            "git:main",
            "git::x.lock",
            "git:main:",
            "git:--output=/tmp/x:a.lock",
            "git:-n:a.lock",
            "git:ma\nin:a.lock",
        ] {
            let e = GitFile::parse(bad).unwrap().unwrap_err().to_string();
            assert!(e.contains("expected git:REF:PATH"), "{bad}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    /// A blob over the limit is refused by its size, before it is read.
    #[test]
    fn the_size_is_bounded() {
        let dir =
            std::env::temp_dir().join(format!("mcp-covenant-git-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let git = |args: &[&str]| {
            let o = std::process::Command::new("git")
                .current_dir(&dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        };
        git(&["init", "-q"]);
        std::fs::write(dir.join("a.lock"), vec![b'x'; 100]).unwrap();
        git(&["add", "a.lock"]);
        git(&["commit", "-q", "-m", "a"]);
        let file = GitFile::parse("git:HEAD:a.lock").unwrap().unwrap();
        assert_eq!(file.read_in(Some(&dir), 100).unwrap().len(), 100);
        let e = file.read_in(Some(&dir), 99).unwrap_err().to_string();
        assert_eq!(
            e,
            "git:HEAD:a.lock: the file is larger than the 99 bytes a lockfile may be"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
