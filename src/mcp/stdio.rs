//! The stdio transport: the server is a child process speaking newline-delimited
//! JSON-RPC on stdin/stdout. Built on smol and async-process; the child is always
//! reaped, on success, error, timeout, and on Ctrl-C / SIGTERM.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_process::{Child, ChildStdin, Command};
use serde_json::Value;
use smol::channel::{Receiver, Sender};
use smol::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use smol::Timer;

use super::{Outgoing, Transport};
use crate::error::{Error, Result};

/// Lines of the server's stderr kept for error messages.
const STDERR_TAIL: usize = 20;
/// Warnings about non-JSON stdout lines before we go quiet about them.
const NOISE_WARNINGS: usize = 5;
/// The longest stdout line (one JSON-RPC message) we read.
const MAX_LINE: u64 = 512 * 1024 * 1024;

/// How long a server may take to exit after its stdin is closed.
const GRACE: Duration = Duration::from_secs(2);

type Shared<T> = Arc<Mutex<T>>;

pub struct StdioTransport {
    child: Shared<Option<Child>>,
    stdin: Option<ChildStdin>,
    rx: Receiver<std::result::Result<Value, String>>,
    tail: Shared<VecDeque<String>>,
    /// Closed when the server's stderr reaches its end (every line is in `tail`).
    stderr_done: Receiver<()>,
    name: String,
    _tasks: Vec<smol::Task<()>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl StdioTransport {
    pub fn spawn(argv: &[String], show_stderr: bool) -> Result<StdioTransport> {
        let name = format!("server `{}`", argv.join(" "));
        let program = argv
            .first()
            .ok_or_else(|| Error::new("no server command given after `--`"))?;
        let mut child = Command::new(program)
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Error::new(format!(
                    "cannot start {name}: command `{program}` not found (is it installed and on PATH?)"
                )),
                _ => Error::new(format!("cannot start {name}: {e}")),
            })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let child = Arc::new(Mutex::new(Some(child)));
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail_for_task = tail.clone();
        let (tx, rx) = smol::channel::unbounded();
        let (done_tx, stderr_done) = smol::channel::bounded::<()>(1);
        let mut tasks = Vec::new();
        if let Some(out) = stdout {
            tasks.push(smol::spawn(read_stdout(out, tx, name.clone())));
        }
        if let Some(err) = stderr {
            tasks.push(smol::spawn(async move {
                read_stderr(err, tail_for_task, show_stderr).await;
                drop(done_tx);
            }));
        }
        tasks.push(smol::spawn(reap_on_signal(child.clone())));
        Ok(StdioTransport {
            child,
            stdin,
            rx,
            tail,
            stderr_done,
            name,
            _tasks: tasks,
        })
    }

    /// Why the server's stdout closed: its exit status, once it is known.
    fn exited(&self) -> Error {
        let status = smol::block_on(async {
            let taken = lock(&self.child).take();
            let mut child = taken?;
            let status = smol::future::or(async { child.status().await.ok() }, async {
                Timer::after(GRACE).await;
                None
            })
            .await;
            *lock(&self.child) = Some(child);
            status
        });
        match status {
            Some(s) => Error::new(format!("exited ({s})")),
            None => Error::new("closed its stdout"),
        }
    }
}

async fn read_stdout(
    out: async_process::ChildStdout,
    tx: Sender<std::result::Result<Value, String>>,
    name: String,
) {
    let mut reader = BufReader::with_capacity(1 << 16, out);
    let mut line = Vec::new();
    let mut noise = 0usize;
    let mut number = 0usize;
    loop {
        line.clear();
        // A bounded read: a server that never ends its line cannot exhaust memory.
        match (&mut reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        number += 1;
        if line.len() as u64 > MAX_LINE {
            let msg = format!(
                "stdout line {number} is longer than {} MiB; mcp-covenant stops reading there",
                MAX_LINE >> 20
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
                eprintln!(
                    "warning: {name} stdout line {number}: {}; skipped",
                    crate::report::escape::log(what)
                );
            } else if *noise == NOISE_WARNINGS + 1 {
                eprintln!("warning: {name}: further non-JSON stdout lines are skipped silently");
            }
        };
        if std::str::from_utf8(text).is_err() {
            warn(&mut noise, "not valid UTF-8");
            continue;
        }
        match serde_json::from_slice::<Value>(text) {
            Ok(Value::Array(batch)) => {
                for msg in batch {
                    if tx.send(Ok(msg)).await.is_err() {
                        return;
                    }
                }
            }
            Ok(msg @ Value::Object(_)) => {
                if tx.send(Ok(msg)).await.is_err() {
                    return;
                }
            }
            Ok(_) => warn(&mut noise, "a JSON value that is not a JSON-RPC message"),
            Err(e) if e.to_string().contains("recursion limit") => {
                let msg = format!(
                    "stdout line {number} nests JSON deeper than the 128 levels mcp-covenant reads"
                );
                let _ = tx.send(Err(msg)).await;
            }
            Err(_) => {
                let shown: String = String::from_utf8_lossy(text).chars().take(60).collect();
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

async fn read_stderr(err: async_process::ChildStderr, tail: Shared<VecDeque<String>>, show: bool) {
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
        if show {
            eprintln!("server: {}", crate::report::escape::log(&text));
        }
        let mut t = lock(&tail);
        if t.len() == STDERR_TAIL {
            t.pop_front();
        }
        t.push_back(text);
    }
}

static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True once Ctrl-C or SIGTERM arrived: whatever failed after it failed because of it.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// On Ctrl-C or SIGTERM, kill and reap the server before we go.
async fn reap_on_signal(child: Shared<Option<Child>>) {
    use async_signal::{Signal, Signals};
    use smol::stream::StreamExt;
    let Ok(mut signals) = Signals::new([Signal::Int, Signal::Term]) else {
        return;
    };
    if let Some(Ok(sig)) = signals.next().await {
        // Set before the kill: the main thread may see the server's stdout close first.
        INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
        let taken = lock(&child).take();
        if let Some(mut c) = taken {
            let _ = c.kill();
            let _ = c.status().await;
        }
        eprintln!("error: interrupted ({sig:?}); the server was stopped");
        std::process::exit(130);
    }
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
            Ok(true) => Ok(()),
            Ok(false) => Err(Error::timeout(
                "timed out writing to its stdin (it does not read it)",
            )),
            Err(_) => Err(self.exited()),
        }
    }

    fn recv(&mut self, deadline: Instant) -> Result<Value> {
        let got = smol::block_on(smol::future::or(
            async { Some(self.rx.recv().await) },
            async {
                Timer::at(deadline).await;
                None
            },
        ));
        match got {
            None => Err(Error::timeout("timeout")),
            Some(Ok(Ok(v))) => Ok(v),
            Some(Ok(Err(msg))) => Err(Error::new(msg)),
            Some(Err(_closed)) => Err(self.exited()),
        }
    }

    fn close(&mut self) {
        self.stdin = None; // EOF: a well-behaved server exits now
        let taken = lock(&self.child).take();
        if let Some(mut child) = taken {
            smol::block_on(async {
                let exited = smol::future::or(async { child.status().await.is_ok() }, async {
                    Timer::after(GRACE).await;
                    false
                })
                .await;
                if !exited {
                    let _ = child.kill();
                    let _ = child.status().await;
                }
            });
        }
    }

    fn concurrent(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn stderr_tail(&self) -> Vec<String> {
        // The server may have written its last words just before it exited: give the
        // reader a moment to reach the end of the pipe.
        smol::block_on(smol::future::or(
            async {
                let _ = self.stderr_done.recv().await;
            },
            async {
                Timer::after(Duration::from_secs(1)).await;
            },
        ));
        lock(&self.tail).iter().cloned().collect()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.close();
    }
}
