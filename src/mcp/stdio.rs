//! The stdio transport: the server is a child process speaking newline-delimited
//! JSON-RPC on stdin/stdout. Built on smol and async-process. The server runs in a
//! process group of its own, and the whole group is ended: on success (after a grace
//! period for the server to exit by itself), on error, on timeout, and on Ctrl-C /
//! SIGTERM. Its exit status is reported as soon as it exits, even when a process it
//! started keeps its stdout open.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_process::{ChildStdin, Command};
use smol::channel::{Receiver, Sender};
use smol::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use smol::Timer;

use super::message::{self, Incoming, Message};
use super::{Outgoing, Transport};
use crate::error::{Error, ErrorKind, Result};
use crate::notice::{Notice, Notices};

/// Lines of the server's stderr kept for error messages.
const STDERR_TAIL: usize = 20;
/// Warnings about non-JSON stdout lines before we go quiet about them.
const NOISE_WARNINGS: usize = 5;
/// The longest stdout line (one JSON-RPC message) we read: no more than all list pages
/// together may bring (a lockfile's worth). A message's parsed form is many times its
/// size (up to about 30x for tiny objects), so this bounds memory too.
fn max_line() -> u64 {
    crate::io::max_read_bytes()
}
/// Messages read ahead of the session: the reader waits when this many are queued, so
/// a server that floods stdout cannot fill memory.
const QUEUE: usize = 16;

/// How long a server may take to exit after its stdin is closed.
const GRACE: Duration = Duration::from_secs(2);
/// After the server failed (exited non-zero), how long what it wrote before may take to
/// come through a stdout that something else (a process it started) keeps open.
const DRAIN: Duration = Duration::from_millis(200);

type Shared<T> = Arc<Mutex<T>>;

pub struct StdioTransport {
    /// The server's process id, which is also its process group's.
    pid: u32,
    /// The server's exit status, once it has exited.
    status: Shared<Option<ExitStatus>>,
    /// Closed once the server has exited and `status` is set.
    exited_rx: Receiver<()>,
    stdin: Option<ChildStdin>,
    /// Bytes written to the server's stdin so far.
    written: u64,
    rx: Receiver<std::result::Result<Message, String>>,
    tail: Shared<VecDeque<String>>,
    /// Closed when the server's stderr reaches its end (every line is in `tail`).
    stderr_done: Receiver<()>,
    /// Set when a stderr line starts a Python traceback (it may be longer than `tail`).
    traceback: Arc<std::sync::atomic::AtomicBool>,
    /// Bytes read from the server's stdout so far.
    received: Arc<std::sync::atomic::AtomicU64>,
    name: String,
    closed: bool,
    _tasks: Vec<smol::Task<()>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl StdioTransport {
    /// Start `argv` with the allow-listed environment plus the variables `env` names
    /// (`crate::process_env`).
    pub fn spawn(
        argv: &[String],
        env: &[String],
        show_stderr: bool,
        notices: &Notices,
    ) -> Result<StdioTransport> {
        let name = format!("server `{}`", crate::redact::argv(argv));
        let program = argv
            .first()
            .ok_or_else(|| Error::new("no server command given after `--`"))?;
        let mut std_cmd = std::process::Command::new(program);
        std_cmd.args(&argv[1..]);
        // No credential of ours reaches the server: an empty environment plus the
        // allow-list and the names the user gave.
        crate::process_env::apply(&mut std_cmd, crate::process_env::Kind::Server, env);
        // Python orders a set of strings by a hash salted per process: a `default` or
        // `enum` built from a set changes order from run to run. A fixed seed makes two
        // captures agree; a seed the environment gives is kept.
        if std::env::var_os("PYTHONHASHSEED").is_none() {
            std_cmd.env("PYTHONHASHSEED", "0");
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Its own group: the server and whatever it starts are ended together, and
            // a Ctrl-C in the terminal reaches us, not it (we stop it ourselves).
            std_cmd.process_group(0);
        }
        // Signal handling is in place before there is a server to leave behind.
        watch_signals();
        become_subreaper();
        let mut child = Command::from(std_cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| match e.kind() {
                // `-- "node dist/server.js"`: one word, which no shell splits here.
                std::io::ErrorKind::NotFound if program.contains(char::is_whitespace) => {
                    Error::new(format!(
                        "cannot start {name}: there is no command named `{program}`, one word with spaces in it; mcp-covenant runs the command without a shell, so give each word separately (`-- {program}`, unquoted) or run a shell yourself (`-- sh -c '...'`)"
                    ))
                }
                std::io::ErrorKind::NotFound => Error::new(format!(
                    "cannot start {name}: command `{program}` not found (is it installed and on PATH?)"
                )),
                _ => Error::new(format!("cannot start {name}: {e}")),
            })?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let status = Arc::new(Mutex::new(None));
        let status_for_task = status.clone();
        let (exited_tx, exited_rx) = smol::channel::bounded::<()>(1);
        lock(&GROUPS).push((pid, exited_rx.clone()));
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail_for_task = tail.clone();
        let traceback = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let traceback_for_task = traceback.clone();
        let (tx, rx) = smol::channel::bounded(QUEUE);
        let received = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (done_tx, stderr_done) = smol::channel::bounded::<()>(1);
        let mut tasks = Vec::new();
        tasks.push(smol::spawn(async move {
            let s = child.status().await.ok();
            *lock(&status_for_task) = s;
            drop(exited_tx);
            // Dropping the task before this point drops `child`: killed and reaped.
        }));
        if let Some(out) = stdout {
            tasks.push(smol::spawn(read_stdout(
                out,
                tx,
                name.clone(),
                received.clone(),
                notices.clone(),
            )));
        }
        if let Some(err) = stderr {
            let notices = show_stderr.then(|| notices.clone());
            tasks.push(smol::spawn(async move {
                read_stderr(err, tail_for_task, traceback_for_task, notices).await;
                drop(done_tx);
            }));
        }
        Ok(StdioTransport {
            pid,
            status,
            exited_rx,
            stdin,
            written: 0,
            rx,
            tail,
            stderr_done,
            traceback,
            received,
            name,
            closed: false,
            _tasks: tasks,
        })
    }

    /// Wait up to `within` for the server to exit; its status if it did.
    fn wait_exit(&self, within: Duration) -> Option<ExitStatus> {
        smol::block_on(smol::future::or(
            async {
                let _ = self.exited_rx.recv().await;
            },
            async {
                Timer::after(within).await;
            },
        ));
        *lock(&self.status)
    }

    /// Why the server stopped talking: its exit status, once it is known. A crash
    /// ([`ErrorKind::Crashed`]) is an exit that what we sent cannot have caused: a
    /// signal, or a failed exit that left our messages unread in its stdin, or that
    /// printed a Python traceback. Any other exit may be the server refusing a message
    /// ([`ErrorKind::Exited`]).
    fn exited(&self) -> Error {
        match self.wait_exit(GRACE) {
            Some(s) => {
                let crashed = killed_by_signal(&s)
                    || (!s.success() && (self.unread_input() || self.printed_traceback()));
                let kind = match crashed {
                    true => ErrorKind::Crashed,
                    false => ErrorKind::Exited,
                };
                Error::new(format!("exited ({s})")).with_kind(kind)
            }
            None => Error::new("closed its stdout"),
        }
    }

    /// Whether everything we wrote is still in the server's stdin pipe: it read none
    /// of it (Linux: FIONREAD on the pipe's write end counts the unread bytes;
    /// elsewhere unknown, so false). A server that read a message and then exited may
    /// have exited because of it.
    fn unread_input(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(stdin) = &self.stdin {
            use std::os::fd::AsRawFd;
            let mut n: libc::c_int = 0;
            // SAFETY: FIONREAD writes one int through the pointer, which is valid.
            let rc = unsafe { libc::ioctl(stdin.as_raw_fd(), libc::FIONREAD, &mut n) };
            return rc == 0
                && self.written > 0
                && u64::try_from(n).is_ok_and(|n| n >= self.written);
        }
        false
    }

    /// Whether the server's stderr held a Python traceback (an uncaught exception).
    fn printed_traceback(&self) -> bool {
        self.wait_stderr();
        self.traceback.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Give the stderr reader a moment to reach the end of the pipe: the server may
    /// have written its last words just before it exited.
    fn wait_stderr(&self) {
        smol::block_on(smol::future::or(
            async {
                let _ = self.stderr_done.recv().await;
            },
            async {
                Timer::after(Duration::from_secs(1)).await;
            },
        ));
    }
}

/// Whether the process was ended by a signal (a crash, or a kill from outside).
fn killed_by_signal(status: &ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal().is_some()
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        false
    }
}

/// Become the child subreaper (Linux, once per process): a process the server starts
/// and then leaves its process group (`setsid()`) becomes our child when its parent
/// exits, instead of init's, so [`end_orphans`] can find it and end it.
fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: prctl(2) with integer arguments only.
            unsafe {
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            }
        });
    }
}

/// End and reap our children that are not servers we run (`keep`): processes a server
/// left behind outside its group, inherited as the subreaper. Their own children come
/// to us as they die, so this goes round until none is left (bounded).
fn end_orphans(keep: &[u32]) {
    #[cfg(target_os = "linux")]
    for _ in 0..16 {
        let orphans: Vec<i32> = children()
            .into_iter()
            .filter(|p| !keep.contains(p))
            .filter_map(|p| i32::try_from(p).ok())
            .filter(|p| *p > 0)
            .collect();
        if orphans.is_empty() {
            return;
        }
        for &pid in &orphans {
            // SAFETY: kill(2) on a process (and the group it leads, if any); no memory.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
                libc::kill(pid, libc::SIGKILL);
            }
        }
        let until = Instant::now() + GRACE;
        for &pid in &orphans {
            loop {
                let mut status = 0;
                // SAFETY: waitpid(2) on our own child, writing one int.
                let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
                if r != 0 || Instant::now() >= until {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = keep;
}

/// Our child processes (Linux: every /proc/PID/stat whose parent is us).
#[cfg(target_os = "linux")]
fn children() -> Vec<u32> {
    let me = std::process::id();
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(me) {
            found.push(pid);
        }
    }
    found
}

/// The servers running now (process group, closed on exit), for the signal handler.
static GROUPS: Mutex<Vec<(u32, Receiver<()>)>> = Mutex::new(Vec::new());

/// SIGKILL a whole process group.
fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(pid) {
        if pid > 0 {
            // SAFETY: kill(2) with a negative pid signals that process group; no memory
            // is involved.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

async fn read_stdout(
    out: async_process::ChildStdout,
    tx: Sender<std::result::Result<Message, String>>,
    name: String,
    received: Arc<std::sync::atomic::AtomicU64>,
    notices: Notices,
) {
    let mut reader = BufReader::with_capacity(1 << 16, out);
    let mut line = Vec::new();
    let mut noise = 0usize;
    let mut number = 0usize;
    loop {
        line.clear();
        // A bounded read: a server that never ends its line cannot exhaust memory.
        match (&mut reader)
            .take(max_line() + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        number += 1;
        received.fetch_add(line.len() as u64, std::sync::atomic::Ordering::SeqCst);
        if line.len() as u64 > max_line() {
            let msg = format!(
                "stdout line {number} is longer than {} MiB; mcp-covenant stops reading there",
                max_line() >> 20
            );
            let _ = tx.send(Err(msg)).await;
            return;
        }
        let text = trim_line(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let warn = |noise: &mut usize, what: &str| {
            *noise += 1;
            if *noise <= NOISE_WARNINGS {
                notices.warn(format!("{name} stdout line {number}: {what}; skipped"));
            } else if *noise == NOISE_WARNINGS + 1 {
                notices.warn(format!(
                    "{name}: further non-JSON stdout lines are skipped silently"
                ));
            }
        };
        // A line that is meant as a JSON-RPC message (an object or batch naming
        // `jsonrpc`) and does not read is an error at once: it may be the answer the
        // capture waits for, which would otherwise be skipped until --timeout.
        let meant_as_message = matches!(
            text.iter().find(|b| !b.is_ascii_whitespace()),
            Some(b'{' | b'[')
        ) && memchr::memmem::find(text, b"\"jsonrpc\"").is_some();
        if std::str::from_utf8(text).is_err() {
            if meant_as_message {
                let msg =
                    format!("stdout line {number} is a JSON-RPC message that is not valid UTF-8");
                let _ = tx.send(Err(msg)).await;
                return;
            }
            warn(&mut noise, "not valid UTF-8");
            continue;
        }
        let parsed = message::parse(text);
        let shown: String = match parsed {
            Err(_) => String::from_utf8_lossy(text).chars().take(60).collect(),
            Ok(_) => String::new(),
        };
        if line.capacity() > 1 << 20 {
            // A big message's buffer is not kept while it waits in the queue, nor for
            // the small ones after it.
            line = Vec::new();
        }
        match parsed {
            Ok(Incoming::Batch(batch)) => {
                for msg in batch {
                    if tx.send(Ok(msg)).await.is_err() {
                        return;
                    }
                }
            }
            Ok(Incoming::One(msg)) => {
                if tx.send(Ok(msg)).await.is_err() {
                    return;
                }
            }
            Ok(Incoming::Other) => warn(&mut noise, "a JSON value that is not a JSON-RPC message"),
            Err(e) if e.to_string().contains("recursion limit") => {
                let msg = format!(
                    "stdout line {number} nests JSON deeper than the 128 levels mcp-covenant reads"
                );
                let _ = tx.send(Err(msg)).await;
            }
            Err(e) if meant_as_message => {
                let msg = format!(
                    "stdout line {number} is a JSON-RPC message mcp-covenant cannot read: {}",
                    e.to_string().split(" at line ").next().unwrap_or_default()
                );
                let _ = tx.send(Err(msg)).await;
                return;
            }
            Err(_) => {
                warn(&mut noise, &format!("not JSON ({shown:?})"));
            }
        }
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    &line[..end]
}

async fn read_stderr(
    err: async_process::ChildStderr,
    tail: Shared<VecDeque<String>>,
    traceback: Arc<std::sync::atomic::AtomicBool>,
    show: Option<Notices>,
) {
    let mut reader = BufReader::new(err);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Long stderr lines arrive in 64 KiB pieces rather than all in memory at once.
        match (&mut reader)
            .take(64 * 1024)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(trim_line(&line)).into_owned();
        // `Traceback …`, or Python 3.11's `  + Exception Group Traceback …` (an
        // exception group: anyio's TaskGroup in the MCP SDKs).
        let start = text.trim_start().trim_start_matches('+').trim_start();
        if start.starts_with("Traceback (most recent call last):")
            || start.starts_with("Exception Group Traceback (most recent call last):")
        {
            traceback.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        if let Some(notices) = &show {
            notices.send(Notice::Server(text.clone()));
        }
        let mut t = lock(&tail);
        if t.len() == STDERR_TAIL {
            t.pop_front();
        }
        t.push_back(text);
    }
}

/// The signal that interrupted us: 0 (none yet), 1 (SIGINT), 2 (SIGTERM).
static INTERRUPTED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// True once Ctrl-C or SIGTERM arrived: whatever failed after it failed because of it.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) != 0
}

/// The signal that interrupted us, as people name it (`SIGINT, Ctrl-C`).
pub fn interruption() -> &'static str {
    match INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        1 => "SIGINT, Ctrl-C",
        _ => "SIGTERM",
    }
}

/// Start watching SIGINT and SIGTERM (once per process). While a server runs, a signal
/// ends its process group and exits 130 with one `error:` line; when none runs (before
/// the first capture, after the last), the signal has its default effect, as if we had
/// never watched it.
fn watch_signals() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        use async_signal::{Signal, Signals};
        let Ok(signals) = Signals::new([Signal::Int, Signal::Term]) else {
            return;
        };
        smol::spawn(on_signals(signals)).detach();
    });
}

async fn on_signals(mut signals: async_signal::Signals) {
    use smol::stream::StreamExt;
    while let Some(Ok(sig)) = signals.next().await {
        let groups: Vec<(u32, Receiver<()>)> = std::mem::take(&mut *lock(&GROUPS));
        if groups.is_empty() {
            default_effect(sig);
            continue;
        }
        // Set before the kill: the main thread may see the server's stdout close first.
        let which = match sig {
            async_signal::Signal::Int => 1,
            _ => 2,
        };
        INTERRUPTED.store(which, std::sync::atomic::Ordering::SeqCst);
        for (pid, _) in &groups {
            kill_group(*pid);
        }
        // Reaped before we go, so nothing of it outlives us.
        for (_, exited) in &groups {
            let _ = smol::future::or(
                async {
                    let _ = exited.recv().await;
                },
                async {
                    Timer::after(GRACE).await;
                },
            )
            .await;
        }
        let servers: Vec<u32> = groups.iter().map(|(p, _)| *p).collect();
        end_orphans(&servers);
        if super::claim_error_line() {
            // One write: the main thread may end the process meanwhile.
            let line = format!(
                "error: interrupted ({}); the server was stopped\n",
                interruption()
            );
            eprint!("{line}");
        }
        std::process::exit(130);
    }
}

/// Do what `sig` does to a process that does not handle it: terminate.
fn default_effect(sig: async_signal::Signal) {
    #[cfg(unix)]
    {
        let n = match sig {
            async_signal::Signal::Int => libc::SIGINT,
            _ => libc::SIGTERM,
        };
        // SAFETY: restoring the default disposition and raising the signal again; the
        // process ends here, as it would have without our handler.
        unsafe {
            libc::signal(n, libc::SIG_DFL);
            libc::raise(n);
        }
    }
    #[cfg(not(unix))]
    let _ = sig;
    std::process::exit(130);
}

impl Transport for StdioTransport {
    fn send(&mut self, out: Outgoing<'_>, deadline: Instant) -> Result<()> {
        let mut line = serde_json::to_vec(out.message).unwrap_or_default();
        line.push(b'\n');
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(Error::new("its stdin is already closed"));
        };
        let written = smol::block_on(smol::future::or(
            async {
                stdin.write_all(&line).await?;
                stdin.flush().await?;
                Ok(true)
            },
            async {
                Timer::at(deadline).await;
                Ok::<bool, std::io::Error>(false)
            },
        ));
        match written {
            Ok(true) => {
                self.written += line.len() as u64;
                Ok(())
            }
            Ok(false) => Err(Error::timeout(
                "timed out writing to its stdin (it does not read it)",
            )),
            Err(_) => Err(self.exited()),
        }
    }

    fn recv(&mut self, deadline: Instant) -> Result<Message> {
        enum Got {
            Message(
                std::result::Result<std::result::Result<Message, String>, smol::channel::RecvError>,
            ),
            Exited,
            Timeout,
        }
        // A server that exited successfully may have left a process of its own to go on
        // talking (a launcher): only a failed exit ends the wait.
        let failed = || lock(&self.status).is_some_and(|s| !s.success());
        let got = smol::block_on(async {
            let message = async { Got::Message(self.rx.recv().await) };
            let exited = async {
                let _ = self.exited_rx.recv().await;
                if failed() {
                    Got::Exited
                } else {
                    std::future::pending().await
                }
            };
            let timeout = async {
                Timer::at(deadline).await;
                Got::Timeout
            };
            smol::future::or(message, smol::future::or(exited, timeout)).await
        });
        let got = match got {
            // What it wrote before it exited may still be on its way: stdout closes
            // (or the last message arrives) at once, unless something else holds it.
            Got::Exited => smol::block_on(smol::future::or(
                async { Got::Message(self.rx.recv().await) },
                async {
                    Timer::after(DRAIN).await;
                    Got::Exited
                },
            )),
            other => other,
        };
        match got {
            Got::Timeout => Err(Error::timeout("timeout")),
            Got::Message(Ok(Ok(v))) => Ok(v),
            Got::Message(Ok(Err(msg))) => Err(Error::new(msg)),
            Got::Message(Err(_)) | Got::Exited => Err(self.exited()),
        }
    }

    fn close(&mut self) {
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        self.stdin = None; // EOF: a well-behaved server exits now
        let _ = self.wait_exit(GRACE);
        // Whatever the server started and left behind goes with it.
        kill_group(self.pid);
        let _ = self.wait_exit(GRACE);
        lock(&GROUPS).retain(|(p, _)| *p != self.pid);
        // And what left the group (setsid) and came to us when its parent exited.
        let mut running: Vec<u32> = lock(&GROUPS).iter().map(|(p, _)| *p).collect();
        running.push(self.pid);
        end_orphans(&running);
    }

    fn concurrent(&self) -> bool {
        true
    }

    fn received(&self) -> u64 {
        self.received.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn stderr_tail(&self) -> Vec<String> {
        self.wait_stderr();
        lock(&self.tail).iter().cloned().collect()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.close();
    }
}
