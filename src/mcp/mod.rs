//! The MCP client: just enough of the protocol to list what a server exposes.
//!
//! `session` holds the protocol logic (both eras, listing, pagination, answering
//! server requests) and talks to a `Transport`: `stdio` (a child process, on smol and
//! async-process) or `http` (Streamable HTTP on blocking ureq, behind the `http`
//! feature). It is read-only: it never calls a tool, and reads no resource but the
//! MCP Apps `ui://` templates tools name and `resources/list` leaves out (`apps`).

pub mod apps;
mod fields;
pub mod message;
pub mod session;
pub mod stdio;

#[cfg(feature = "http")]
pub mod http;

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::lockfile::{Listing, ServerInfo};

/// The protocol revisions we speak. The first is the stateless era.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];
/// Handshake-era revisions, newest first (the first is what we offer).
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Which protocol to speak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Detect the era: over stdio, `server/discover` and `initialize` go out together
    /// and the first era that answers is taken; over HTTP, `server/discover` first and
    /// the `initialize` handshake when it is refused (the spec's dual-era client).
    Auto,
    /// Speak this revision only.
    Version(String),
}

impl Protocol {
    pub fn parse(s: &str) -> Result<Protocol> {
        if s == "auto" {
            return Ok(Protocol::Auto);
        }
        if MODERN_VERSIONS.contains(&s) || LEGACY_VERSIONS.contains(&s) {
            return Ok(Protocol::Version(s.to_string()));
        }
        Err(Error::new(format!(
            "unknown --protocol `{s}`; expected auto, {} or {}",
            MODERN_VERSIONS.join(", "),
            LEGACY_VERSIONS.join(", ")
        )))
    }
}

/// Where the server is.
#[derive(Clone, Debug)]
pub enum Endpoint {
    Stdio(Vec<String>),
    Http {
        url: String,
        // Sent by the HTTP transport alone (a stdio-only build refuses the endpoint).
        #[cfg_attr(not(feature = "http"), allow(dead_code))]
        headers: Vec<(String, String)>,
    },
}

#[derive(Clone, Debug)]
pub struct CaptureOptions {
    pub endpoint: Endpoint,
    pub timeout: Duration,
    pub protocol: Protocol,
    /// Client capabilities to offer (`roots`, `sampling`, `elicitation`); none by default.
    pub client_capabilities: Vec<String>,
    /// Pass the server's stderr through as it comes (otherwise shown on failure only).
    pub show_server_stderr: bool,
    /// MCP Apps: also read the `ui://` resources tools name that `resources/list` leaves
    /// out (off by default: a capture only lists).
    pub read_ui_resources: bool,
    /// Where warnings and the server's stderr lines go (the command line prints them).
    pub notices: crate::notice::Notices,
    /// Variables a stdio server gets besides the allow-list (its `env` in
    /// covenant.toml; `--env NAME` ones are added by `process_env::pass`).
    pub env: Vec<String>,
}

/// What a capture found.
#[derive(Clone, Debug)]
pub struct Captured {
    pub server: ServerInfo,
    /// Each element as its canonical text, in the order the server listed them.
    pub surface: Listing,
}

/// Where a message goes and what it is, for transports that route by method (HTTP's
/// alone: stdio writes the message).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub struct Outgoing<'a> {
    pub message: &'a Value,
    pub method: Option<&'a str>,
    /// A request (expects a response), as opposed to a notification or a response.
    pub is_request: bool,
}

/// A message channel to a server.
pub trait Transport {
    /// Send one JSON-RPC message.
    fn send(&mut self, out: Outgoing<'_>, deadline: Instant) -> Result<()>;
    /// The next message from the server, waiting until `deadline`.
    fn recv(&mut self, deadline: Instant) -> Result<message::Message>;
    /// The protocol version in use from now on (HTTP sends it as a header).
    fn set_protocol_version(&mut self, _version: &str) {}
    /// The era in use from now on (HTTP adds `Mcp-Method` in the stateless era).
    fn set_stateless(&mut self, _stateless: bool) {}
    /// Whether requests can be in flight together and answered in any order (stdio),
    /// so the era probe can send `server/discover` and `initialize` at once.
    fn concurrent(&self) -> bool {
        false
    }
    /// End the conversation: close stdin and reap the child, or DELETE the session.
    fn close(&mut self);
    /// Where the server is, for error messages (`server `node x.js``, `http://...`).
    fn describe(&self) -> String;
    /// Bytes received from the server so far (messages, bodies, event streams).
    fn received(&self) -> u64 {
        0
    }
    /// The last lines the server wrote to stderr, for error messages.
    fn stderr_tail(&self) -> Vec<String> {
        Vec::new()
    }
}

/// True for the first caller only: whoever prints the one `error:` line of this run
/// (the failure, or the signal handler's "interrupted") claims it first.
pub fn claim_error_line() -> bool {
    static CLAIMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    !CLAIMED.swap(true, std::sync::atomic::Ordering::SeqCst)
}

/// Capture a server's surface.
pub fn capture(opts: &CaptureOptions) -> Result<Captured> {
    let (first, tail) = capture_once(opts);
    // Some handshake-era servers (rmcp 0.6, the Rust SDK) exit when their first message
    // is not `initialize`, so the era probe ends them before either answer. Start the
    // server again and speak the handshake era only. A crash (a signal, our messages
    // left unread, a traceback) is never retried: the probe did not cause it.
    let probe_killed = |e: &Error| e.kind() == crate::error::ErrorKind::ExitedOnProbe;
    let (result, tail) = match (&first, &opts.protocol, &opts.endpoint) {
        (Err(e), Protocol::Auto, Endpoint::Stdio(_)) if probe_killed(e) => {
            let fallback = LEGACY_VERSIONS[0];
            opts.notices.warn(format!(
                "the server exited before answering the era probe (some servers accept nothing before `initialize`); starting it again with --protocol {fallback}"
            ));
            let mut again = opts.clone();
            again.protocol = Protocol::Version(fallback.to_string());
            capture_once(&again)
        }
        _ => (first, tail),
    };
    // The server's last words, once: those of the attempt that failed last.
    if result.is_err() && !opts.show_server_stderr {
        for line in &tail {
            opts.notices
                .send(crate::notice::Notice::Server(shorten(line).into_owned()));
        }
    }
    result.map_err(|e| match e.kind() {
        crate::error::ErrorKind::Timeout => match http_hint(&tail) {
            Some(hint) => Error::timeout(format!("{}; {hint}", e.message())),
            None => e,
        },
        _ => e,
    })
}

/// The longest stderr line shown, in characters.
const SHOWN_LINE: usize = 1000;

/// `line`, cut to [`SHOWN_LINE`] characters with a note of how much was left out.
fn shorten(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(SHOWN_LINE) {
        None => line.into(),
        Some((at, _)) => format!("{} ... ({} more bytes)", &line[..at], line.len() - at).into(),
    }
}

/// When the server's stderr says it serves HTTP (`Uvicorn running on http://...`),
/// the advice to capture it with `--http`: a stdio capture of it waits in vain.
fn http_hint(tail: &[String]) -> Option<String> {
    for line in tail.iter().rev() {
        let lower = line.to_ascii_lowercase();
        let announces = [
            "running on",
            "listening on",
            "serving on",
            "available at",
            "started at",
            "started on",
            "listening at",
        ]
        .iter()
        .any(|w| lower.contains(w));
        let Some(at) = lower.find("http://").or_else(|| lower.find("https://")) else {
            continue;
        };
        if !announces {
            continue;
        }
        let url: String = line[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || ":/.-_[]%".contains(*c))
            .collect();
        let url = url.trim_end_matches(['.', ':']);
        let path_start = url.find("://").map(|i| i + 3).unwrap_or(0);
        let endpoint = match url[path_start..].find('/') {
            Some(i) if url.len() > path_start + i + 1 => url.to_string(),
            _ => format!("{}/mcp", url.trim_end_matches('/')),
        };
        return Some(format!(
            "its stderr says it serves HTTP at {url}: an HTTP server does not answer on stdio; start it yourself and capture it with `--http {endpoint}` (the MCP endpoint's path, often /mcp)"
        ));
    }
    None
}

/// One capture, and the server's last stderr lines when it failed.
fn capture_once(opts: &CaptureOptions) -> (Result<Captured>, Vec<String>) {
    let deadline = match Instant::now().checked_add(opts.timeout) {
        Some(d) => d,
        None => return (Err(Error::new("--timeout is too large")), Vec::new()),
    };
    let transport: Result<Box<dyn Transport>> = match &opts.endpoint {
        Endpoint::Stdio(cmd) => stdio::StdioTransport::spawn(cmd, &opts.env, opts.show_server_stderr, &opts.notices)
            .map(|t| Box::new(t) as Box<dyn Transport>),
        #[cfg(feature = "http")]
        Endpoint::Http { url, headers } => http::HttpTransport::new(url, headers, opts.timeout, &opts.notices)
            .map(|t| Box::new(t) as Box<dyn Transport>),
        #[cfg(not(feature = "http"))]
        Endpoint::Http { .. } => Err(Error::new(
            "this build of mcp-covenant has no HTTP support (built with --no-default-features); rebuild with the default `http` feature, or capture over stdio with `-- CMD`",
        )),
    };
    let mut transport = match transport {
        Ok(t) => t,
        Err(e) => return (Err(e), Vec::new()),
    };
    let result = session::Session::new(transport.as_mut(), opts, deadline).capture();
    transport.close();
    let tail = match result.is_err() {
        true => transport.stderr_tail(),
        false => Vec::new(),
    };
    (result, tail)
}
