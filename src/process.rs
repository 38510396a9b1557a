//! The one bounded runner of a child process that is not a server (`git`, `npm`, `pip`,
//! `uv`, `python`): never through a shell, its environment the allow-list of
//! [`crate::process_env`] (never a token it is not given), stdin the bytes given (or
//! closed), stdout kept up to a cap (bounded memory), the tail of stderr kept for the
//! error, and a deadline. On Unix the child leads a process group of its own, and the
//! whole group is killed at the deadline, when stdout passes its cap, and when the child
//! exits (what it started does not outlive it). A failure is one line ([`Failure`]).
//!
//! A server (the stdio transport) is not run here: it is a conversation, on smol.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::process_env::Kind;

/// How much of the child's stdout is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Everything, up to this many bytes; one more and the child is stopped
    /// ([`Failure::TooMuch`]).
    Head(usize),
    /// The last bytes, at least this many (a tool's progress output, shown on failure).
    Tail(usize),
}

/// A child to run: [`Run::new`], then the builder methods, then [`Run::output`].
pub(crate) struct Run {
    program: OsString,
    args: Vec<OsString>,
    kind: Kind,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    stdout: Keep,
    stderr_tail: usize,
    deadline: Duration,
}

/// What a child that ran to its end left.
#[derive(Debug)]
pub(crate) struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    /// The last bytes of stderr (at least the tail asked for).
    pub stderr: Vec<u8>,
}

/// Why a child gave no [`Output`]; its `Display` is one line naming the program.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The program is not on PATH.
    NotFound(String),
    /// It could not be started otherwise.
    Spawn(String, std::io::Error),
    /// It did not finish within the deadline, and was stopped.
    Deadline(String, Duration),
    /// Its stdout passed the cap, and it was stopped.
    TooMuch(String, usize),
    /// Waiting for it failed.
    Wait(String, std::io::Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotFound(p) => write!(f, "`{p}` not found (is it installed and on PATH?)"),
            Failure::Spawn(p, e) => write!(f, "cannot start `{p}`: {e}"),
            Failure::Deadline(p, d) => {
                write!(
                    f,
                    "`{p}` did not finish within {} s, and was stopped",
                    secs(*d)
                )
            }
            Failure::TooMuch(p, n) => {
                write!(f, "`{p}` wrote more than {n} bytes, and was stopped")
            }
            Failure::Wait(p, e) => write!(f, "waiting for `{p}`: {e}"),
        }
    }
}

/// A duration in whole seconds as a person reads it (`1.5`, `120`).
fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        d.as_secs().to_string()
    } else {
        format!("{}", d.as_secs_f64())
    }
}

/// What the threads around a child report.
enum Event {
    /// The child exited (on Unix: not yet reaped, so its process group is still ours).
    Exited,
    /// Stdout passed its cap (this many bytes).
    Over(usize),
    /// A stream reached its end (0: stdout, 1: stderr).
    Eof,
}

/// How long the streams may stay open after the child and its group are gone (a
/// process that left the group, e.g. with `setsid`, may hold them).
const GRACE: Duration = Duration::from_secs(2);

impl Run {
    /// `program` with `kind`'s environment ([`crate::process_env`]); stdin closed,
    /// stdout kept up to 1 MiB, the last 64 KiB of stderr, a deadline of 120 s.
    pub(crate) fn new(program: impl Into<OsString>, kind: Kind) -> Run {
        Run {
            program: program.into(),
            args: Vec::new(),
            kind,
            env: Vec::new(),
            cwd: None,
            stdin: None,
            stdout: Keep::Head(1 << 20),
            stderr_tail: 64 * 1024,
            deadline: Duration::from_secs(120),
        }
    }

    pub(crate) fn arg(mut self, arg: impl Into<OsString>) -> Run {
        self.args.push(arg.into());
        self
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Set a variable beyond the allow-list (mcp-covenant's own settings for the child).
    pub(crate) fn env(mut self, name: &str, value: &str) -> Run {
        self.env.push((name.into(), value.into()));
        self
    }

    pub(crate) fn cwd(mut self, dir: impl Into<PathBuf>) -> Run {
        self.cwd = Some(dir.into());
        self
    }

    /// Write `bytes` to the child's stdin, then close it.
    pub(crate) fn stdin(mut self, bytes: &[u8]) -> Run {
        self.stdin = Some(bytes.to_vec());
        self
    }

    pub(crate) fn stdout(mut self, keep: Keep) -> Run {
        self.stdout = keep;
        self
    }

    pub(crate) fn deadline(mut self, deadline: Duration) -> Run {
        self.deadline = deadline;
        self
    }

    fn name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        crate::process_env::apply(&mut cmd, self.kind, &[]);
        cmd.args(&self.args).envs(self.env.iter().cloned());
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        cmd.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    }

    /// Run the child to its end (or its deadline, or its stdout's cap).
    pub(crate) fn output(self) -> Result<Output, Failure> {
        let name = self.name();
        let mut child = self.command().spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Failure::NotFound(name.clone()),
            _ => Failure::Spawn(name.clone(), e),
        })?;
        let (tx, events) = mpsc::channel();
        if let (Some(bytes), Some(mut pipe)) = (self.stdin, child.stdin.take()) {
            // A child that does not read its stdin gets EPIPE once it is gone.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let out = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::new(Mutex::new(Vec::new()));
        read(child.stdout.take(), self.stdout, &out, &tx);
        read(child.stderr.take(), Keep::Tail(self.stderr_tail), &err, &tx);
        watch(&child, &tx);
        let mut open = 2; // stdout and stderr, until each says Eof
        let end = supervise(&mut child, &events, self.deadline, &mut open);
        // Whatever the child started dies with it (its group: the child is not reaped
        // yet, so the group's id cannot have been reused).
        kill_group(&mut child);
        let status = child.wait();
        // The streams end once every holder is gone; bounded for one that left the group.
        let grace = Instant::now() + GRACE;
        while open > 0 {
            let left = grace.saturating_duration_since(Instant::now());
            match events.recv_timeout(left) {
                Ok(Event::Eof) => open = open.saturating_sub(1),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        match end {
            End::Exited => {}
            End::Expired => return Err(Failure::Deadline(name, self.deadline)),
            End::Over(cap) => return Err(Failure::TooMuch(name, cap)),
        }
        let status = status.map_err(|e| Failure::Wait(name, e))?;
        let take = |buf: &Arc<Mutex<Vec<u8>>>| {
            std::mem::take(&mut *buf.lock().unwrap_or_else(|e| e.into_inner()))
        };
        Ok(Output {
            status,
            stdout: take(&out),
            stderr: take(&err),
        })
    }
}

/// How the child's run ended.
enum End {
    Exited,
    Expired,
    Over(usize),
}

/// Wait for the child's exit, killing its group at the deadline or when stdout passes
/// its cap (the exit is then still waited for: SIGKILL is not refused).
/// `open` counts the streams not yet at their end: an [`Event::Eof`] seen here is not
/// waited for again (it was: every run waited out the grace period).
fn supervise(
    child: &mut Child,
    events: &Receiver<Event>,
    deadline: Duration,
    open: &mut usize,
) -> End {
    let until = Instant::now() + deadline;
    let mut end = End::Exited;
    // On Unix a thread reports the exit; elsewhere it is polled.
    let poll = if cfg!(unix) {
        deadline
    } else {
        Duration::from_millis(20)
    };
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let slice = if matches!(end, End::Exited) {
            left.min(poll)
        } else {
            poll
        };
        match events.recv_timeout(slice) {
            Ok(Event::Exited) => return end,
            Ok(Event::Over(cap)) => {
                kill_group(child);
                end = End::Over(cap);
            }
            Ok(Event::Eof) => *open = open.saturating_sub(1),
            Err(RecvTimeoutError::Timeout) => {
                if !cfg!(unix) && matches!(child.try_wait(), Ok(Some(_))) {
                    return end;
                }
                if matches!(end, End::Exited) && Instant::now() >= until {
                    kill_group(child);
                    end = End::Expired;
                }
            }
            // Every sender is gone: nothing more can be learnt.
            Err(RecvTimeoutError::Disconnected) => return end,
        }
    }
}

/// Read `pipe` into `buf` on a thread, as `keep` says; [`Event::Eof`] at its end.
fn read<R: Read + Send + 'static>(
    pipe: Option<R>,
    keep: Keep,
    buf: &Arc<Mutex<Vec<u8>>>,
    tx: &Sender<Event>,
) {
    let (buf, tx) = (Arc::clone(buf), tx.clone());
    std::thread::spawn(move || {
        if let Some(mut pipe) = pipe {
            let mut chunk = [0u8; 8192];
            let mut over = false;
            loop {
                let n = match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                if over {
                    continue; // drained, so the child never blocks on a full pipe
                }
                let mut kept = buf.lock().unwrap_or_else(|e| e.into_inner());
                kept.extend_from_slice(&chunk[..n]);
                match keep {
                    Keep::Head(cap) if kept.len() > cap => {
                        kept.truncate(cap);
                        over = true;
                        let _ = tx.send(Event::Over(cap));
                    }
                    Keep::Tail(n) if kept.len() > 2 * n => {
                        let cut = kept.len() - n;
                        kept.drain(..cut);
                    }
                    _ => {}
                }
            }
        }
        let _ = tx.send(Event::Eof);
    });
}

/// Report the child's exit on `tx`, without reaping it (Unix); elsewhere nothing (the
/// exit is polled).
fn watch(child: &Child, tx: &Sender<Event>) {
    #[cfg(unix)]
    {
        let pid = child.id();
        let tx = tx.clone();
        std::thread::spawn(move || {
            loop {
                // SAFETY: waitid(2) with WNOWAIT on our own child: it waits for the exit
                // and leaves the child to be reaped by `Child::wait`.
                let r = unsafe {
                    let mut info: libc::siginfo_t = std::mem::zeroed();
                    libc::waitid(
                        libc::P_PID,
                        pid as libc::id_t,
                        &mut info,
                        libc::WEXITED | libc::WNOWAIT,
                    )
                };
                if r == 0
                    || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    break;
                }
            }
            let _ = tx.send(Event::Exited);
        });
    }
    #[cfg(not(unix))]
    let _ = (child, tx);
}

/// Kill `child` and every process of its group (Unix; elsewhere the child alone).
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) on the group the child leads (process_group(0)); the child is
        // not reaped before this, so the group id is still its.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = child.kill();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Run {
        Run::new("sh", Kind::Git).args(["-c", script])
    }

    fn gone(pid: libc::pid_t) -> bool {
        (0..100).any(|_| {
            // SAFETY: signal 0 only asks whether the process exists.
            let exists = unsafe { libc::kill(pid, 0) == 0 };
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "));
            if exists && !zombie {
                std::thread::sleep(Duration::from_millis(50));
            }
            !exists || zombie
        })
    }

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcpc-process-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Streams that ended while the child ran are not waited for again (every run of
    /// git waited out the 2 s grace: a test run took 25 minutes, not 8).
    #[test]
    fn a_quick_child_returns_at_once() {
        let started = Instant::now();
        for _ in 0..3 {
            assert!(sh("echo x").output().unwrap().status.success());
        }
        assert!(started.elapsed() < GRACE, "{:?}", started.elapsed());
    }

    #[test]
    fn stdin_in_stdout_out() {
        let o = Run::new("cat", Kind::Git).stdin(b"hello").output().unwrap();
        assert!(o.status.success());
        assert_eq!(o.stdout, b"hello");
    }

    /// A grandchild (for npm a build script) dies with the timed-out child, and the
    /// runner returns at the deadline although the grandchild holds stdout open.
    #[test]
    fn the_deadline_kills_the_whole_tree() {
        let dir = tmp("deadline");
        let started = Instant::now();
        let e = sh("sleep 60 & echo $! > pid; wait")
            .cwd(&dir)
            .deadline(Duration::from_millis(1500))
            .output()
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            e.to_string(),
            "`sh` did not finish within 1.5 s, and was stopped"
        );
        let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
        let pid: libc::pid_t = pid.trim().parse().unwrap();
        assert!(gone(pid), "the grandchild {pid} outlived the deadline");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// What the child leaves running when it exits is killed too.
    #[test]
    fn nothing_outlives_the_child() {
        let dir = tmp("exit");
        let o = sh("sleep 60 >/dev/null 2>&1 & echo $! > pid")
            .cwd(&dir)
            .output()
            .unwrap();
        assert!(o.status.success());
        let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
        let pid: libc::pid_t = pid.trim().parse().unwrap();
        assert!(gone(pid), "the grandchild {pid} outlived the child");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Stdout is bounded: past the cap the child is stopped (it would write forever).
    #[test]
    fn stdout_is_capped() {
        let started = Instant::now();
        let e = Run::new("yes", Kind::Git)
            .stdout(Keep::Head(1000))
            .output()
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(
            e.to_string(),
            "`yes` wrote more than 1000 bytes, and was stopped"
        );
        let o = sh("printf 0123456789")
            .stdout(Keep::Head(10))
            .output()
            .unwrap();
        assert_eq!(o.stdout, b"0123456789");
        let o = sh("seq 1 100000").stdout(Keep::Tail(100)).output().unwrap();
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.ends_with("99999\n100000\n"), "{text}");
        assert!((100..=200).contains(&text.len()), "{}", text.len());
    }

    /// The tail of stderr is kept, however much was written.
    #[test]
    fn stderr_keeps_its_tail() {
        let o = sh("seq 1 200000 >&2; echo last >&2; exit 3")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3));
        let text = String::from_utf8(o.stderr).unwrap();
        assert!(
            text.ends_with("200000\nlast\n"),
            "{}",
            &text[text.len() - 20..]
        );
        assert!(text.len() <= 2 * 64 * 1024, "{}", text.len());
        assert!(!text.starts_with("1\n"));
    }

    #[test]
    fn a_missing_program_is_one_line() {
        let e = Run::new("mcpc-no-such-program", Kind::Git)
            .output()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`mcpc-no-such-program` not found (is it installed and on PATH?)"
        );
    }

    /// The child gets the allow-listed environment, never a token of ours.
    #[test]
    fn the_environment_is_the_allow_list() {
        let o = sh("env").env("GIT_NO_LAZY_FETCH", "1").output().unwrap();
        let env = String::from_utf8(o.stdout).unwrap();
        for line in env.lines() {
            let name = line.split('=').next().unwrap();
            assert!(
                name == "GIT_NO_LAZY_FETCH"
                    || name == "PWD"
                    || name == "SHLVL"
                    || name == "_"
                    || crate::process_env::allowed(name, Kind::Git, &[]),
                "{name} reached the child"
            );
        }
        assert!(env.contains("GIT_NO_LAZY_FETCH=1"));
    }
}
