//! Running npm, pip, uv or python: never through a shell, stdin closed, stdout and
//! stderr kept (our stdout carries the report) and shown as the last lines on failure,
//! and a time limit (`MCP_COVENANT_INSTALL_TIMEOUT` seconds, 600 by default).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::notice::{Notice, Notices};

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
    let mut cmd = Command::new(&argv[0]);
    // Its registry, proxy and certificate settings, never a token it is not given.
    crate::process_env::apply(&mut cmd, crate::process_env::Kind::Install, &[]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::new(format!(
            "{what}: `{}` not found (is it installed and on PATH?)",
            argv[0]
        )),
        _ => Error::new(format!("{what}: cannot start `{}`: {e}", argv[0])),
    })?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(mut r) = r {
                let mut buf = [0u8; 8192];
                while let Ok(n) = r.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    kept.extend_from_slice(&buf[..n]);
                    if kept.len() > 2 * KEEP {
                        kept.drain(..kept.len() - KEEP);
                    }
                }
            }
            kept
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + limit();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::timeout(format!(
                    "{what}: `{}` took longer than {} s (MCP_COVENANT_INSTALL_TIMEOUT)",
                    argv[0],
                    limit().as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                return Err(Error::new(format!(
                    "{what}: waiting for `{}`: {e}",
                    argv[0]
                )))
            }
        }
    };
    let stdout = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    if status.success() {
        return Ok(stdout);
    }
    // The tool's own words, before our one `error:` line.
    let text = format!("{stdout}\n{stderr}");
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for line in &lines[lines.len().saturating_sub(20)..] {
        notices.send(Notice::Tool(line.to_string()));
    }
    Err(Error::new(format!(
        "{what}: `{}` failed ({status})",
        argv[0]
    )))
}

/// Whether `program` can be found on PATH.
pub(super) fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}
