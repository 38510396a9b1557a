//! Running npm, pip, uv or python: never through a shell, stdin closed, stdout and
//! stderr kept (our stdout carries the report) and shown as the last lines on failure,
//! and a time limit (`MCP_COVENANT_INSTALL_TIMEOUT` seconds, 600 by default).

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::notice::{Notice, Notices};
use crate::process::{Failure, Keep, Run};
use crate::process_env::Kind;

const KEEP: usize = 64 * 1024;

fn limit() -> Duration {
    let secs = std::env::var("MCP_COVENANT_INSTALL_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(600);
    Duration::from_secs(secs)
}

/// Run `argv` in `cwd`; `what` names the step in the error (`npm:x@1.0.0: npm install`).
pub(super) fn run(argv: &[String], cwd: &Path, what: &str, notices: &Notices) -> Result<String> {
    run_within(argv, cwd, what, notices, limit())
}

/// [`run`] with its time limit ([`crate::process`]: on Unix the whole process group is
/// killed at the limit, so npm's and pip's children, a build backend or node-gyp, do not
/// outlive it).
pub(super) fn run_within(
    argv: &[String],
    cwd: &Path,
    what: &str,
    notices: &Notices,
    limit: Duration,
) -> Result<String> {
    let Some((program, args)) = argv.split_first() else {
        return Err(Error::new(format!("{what}: no command")));
    };
    // Its registry, proxy and certificate settings, never a token it is not given.
    let out = Run::new(program, Kind::Install)
        .args(args)
        .cwd(cwd)
        .stdout(Keep::Tail(KEEP))
        .deadline(limit)
        .output()
        .map_err(|e| match e {
            Failure::Deadline(..) => Error::timeout(format!(
                "{what}: `{program}` took longer than {} s (MCP_COVENANT_INSTALL_TIMEOUT)",
                limit.as_secs()
            )),
            e => Error::new(format!("{what}: {e}")),
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        return Ok(stdout);
    }
    // The tool's own words, before our one `error:` line.
    let text = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for line in &lines[lines.len().saturating_sub(20)..] {
        notices.send(Notice::Tool(line.to_string()));
    }
    Err(Error::new(format!(
        "{what}: `{program}` failed ({})",
        out.status
    )))
}

/// The version of the interpreter a package runs on (`v22.11.0`, `Python 3.12.4`), as
/// `node --version` / `python3 --version` print it; empty when it does not run (the
/// install then says so).
pub(super) fn interpreter_version(
    registry: super::Registry,
    opts: &super::PackageOptions,
) -> String {
    let program = match registry {
        super::Registry::Npm => "node".to_string(),
        super::Registry::Pypi => interpreter(opts),
    };
    let argv = [program, "--version".to_string()];
    let quiet = Notices::new(|_| {});
    let cwd = std::env::temp_dir();
    run_within(&argv, &cwd, "interpreter", &quiet, Duration::from_secs(30))
        .map(|out| out.trim().chars().take(200).collect())
        .unwrap_or_default()
}

/// The interpreter a PyPI package's environment is made with: `python3.12` for
/// `python = "3.12"`, else `python3` (or `python` where there is no `python3`).
pub(super) fn interpreter(opts: &super::PackageOptions) -> String {
    match &opts.python {
        Some(v) => format!("python{v}"),
        None if !on_path("python3") && on_path("python") => "python".into(),
        None => "python3".into(),
    }
}

/// Whether `program` can be found on PATH.
pub(super) fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A grandchild (here `sleep`, for npm a build script) dies with the timed-out tool.
    #[test]
    fn a_timed_out_tool_ends_with_its_whole_process_tree() {
        let dir = std::env::temp_dir().join(format!("mcpc-tool-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let argv: Vec<String> = ["sh", "-c", "sleep 60 & echo $! > pid; wait"]
            .map(String::from)
            .to_vec();
        let (notices, _) = Notices::collect();
        let e = run_within(&argv, &dir, "t", &notices, Duration::from_secs(1)).unwrap_err();
        assert!(e.to_string().contains("took longer"), "{e}");
        let pid: libc::pid_t = std::fs::read_to_string(dir.join("pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            // SAFETY: signal 0 only asks whether the process exists.
            let exists = unsafe { libc::kill(pid, 0) == 0 };
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "));
            !exists || zombie
        });
        assert!(gone, "the grandchild {pid} outlived the timeout");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
