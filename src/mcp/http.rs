//! The Streamable HTTP transport, on blocking ureq (the default `http` feature).
//!
//! Every message is a POST. A response is either one JSON body or an SSE stream
//! (`event:` / `id:` / `data:` lines, comments, the empty priming event, progress
//! notifications before the result); streams are read lazily, one message at a time,
//! so a server request in the middle of a stream can be answered before the rest is
//! read. `Mcp-Session-Id` is kept and the session DELETEd at the end. Header values
//! are never printed.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::time::{Duration, Instant};

use super::message::{self, Incoming, Message};
use super::{Outgoing, Transport};
use crate::error::{Error, Result};

/// The largest response body we accept (a hostile server cannot exhaust memory): no
/// more than all list pages together may bring (a lockfile's worth).
fn max_body() -> u64 {
    crate::io::max_read_bytes()
}

type Stream = BufReader<Box<dyn Read + Send>>;

pub struct HttpTransport {
    agent: ureq::Agent,
    url: String,
    headers: Vec<(String, String)>,
    session_id: Option<String>,
    protocol_version: Option<String>,
    stateless: bool,
    queue: VecDeque<Message>,
    stream: Option<Stream>,
    /// Bytes of response bodies and event data received so far.
    received: u64,
    notices: crate::notice::Notices,
}

impl HttpTransport {
    pub fn new(
        url: &str,
        headers: &[(String, String)],
        _timeout: Duration,
        notices: &crate::notice::Notices,
    ) -> Result<Self> {
        crate::redact::register_endpoint(url, headers);
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Error::new(format!(
                "--http needs an http:// or https:// URL, not `{url}`"
            )));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .tls_config(crate::tls::config())
            .build()
            .into();
        Ok(HttpTransport {
            agent,
            url: url.to_string(),
            headers: headers.to_vec(),
            session_id: None,
            protocol_version: None,
            stateless: false,
            queue: VecDeque::new(),
            stream: None,
            received: 0,
            notices: notices.clone(),
        })
    }

    fn post(
        &mut self,
        out: &Outgoing<'_>,
        deadline: Instant,
    ) -> Result<ureq::http::Response<ureq::Body>> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(Error::timeout("timeout"));
        }
        let mut req = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(remaining))
            .build()
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(id) = &self.session_id {
            req = req.header("Mcp-Session-Id", id.as_str());
        }
        if let Some(v) = &self.protocol_version {
            req = req.header("MCP-Protocol-Version", v.as_str());
        }
        if let (true, Some(m)) = (self.stateless, out.method) {
            req = req.header("Mcp-Method", m);
        }
        let body = serde_json::to_vec(out.message).unwrap_or_default();
        req.send(&body[..]).map_err(|e| self.network_error(e))
    }

    fn network_error(&self, e: ureq::Error) -> Error {
        if let Some(roots) = crate::tls::explain(&e) {
            return Error::new(format!("cannot connect ({e}); {roots}"));
        }
        match e {
            ureq::Error::Timeout(_) => Error::timeout("timeout"),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                Error::timeout("timeout")
            }
            ureq::Error::ConnectionFailed | ureq::Error::Io(_) => {
                Error::new(format!("cannot connect ({e})"))
            }
            ureq::Error::HostNotFound => Error::new("host not found"),
            other => Error::new(format!("HTTP request failed: {other}")),
        }
    }

    /// Read the next SSE event's data from `stream`; `None` at the end of the stream.
    fn next_event(stream: &mut Stream) -> Result<Option<String>> {
        let mut data: Option<String> = None;
        let mut line = String::new();
        loop {
            line.clear();
            let n = stream.read_line(&mut line).map_err(|e| {
                if e.kind() == std::io::ErrorKind::TimedOut || e.to_string().contains("timeout") {
                    Error::timeout("timeout")
                } else {
                    Error::new(format!("the event stream broke off ({e})"))
                }
            })?;
            if n == 0 {
                return Ok(data.filter(|d| !d.is_empty()));
            }
            let text = line.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                match data.take() {
                    Some(d) if !d.trim().is_empty() => return Ok(Some(d)),
                    _ => continue, // the priming event, or an event with no data
                }
            }
            if text.starts_with(':') {
                continue; // a comment (keep-alive)
            }
            let (field, value) = match text.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (text, ""),
            };
            if field != "data" {
                continue;
            }
            match &mut data {
                Some(d) => {
                    if !d.is_empty() {
                        d.push('\n');
                    }
                    d.push_str(value);
                }
                None => {
                    // The first data line becomes the data, not a copy of it: one
                    // event's message is held once.
                    let start = value.as_ptr() as usize - line.as_ptr() as usize;
                    let end = start + value.len();
                    line.truncate(end);
                    line.drain(..start);
                    line.shrink_to_fit();
                    data = Some(std::mem::take(&mut line));
                }
            }
        }
    }

    fn push_json(&mut self, text: &str) -> Result<()> {
        self.received += text.len() as u64;
        match message::parse(text.as_bytes()) {
            Ok(Incoming::Batch(batch)) => self.queue.extend(batch),
            Ok(Incoming::One(m)) => self.queue.push_back(m),
            Ok(Incoming::Other) => self.notices.warn(format!(
                "{}: skipped a JSON value that is not a message",
                crate::redact::url(&self.url)
            )),
            Err(e) if e.to_string().contains("recursion limit") => {
                return Err(Error::new(
                    "sent JSON nested deeper than the 128 levels mcp-covenant reads",
                ))
            }
            Err(e) => {
                return Err(Error::new(format!("sent a body that is not JSON ({e})")));
            }
        }
        Ok(())
    }
}

impl Transport for HttpTransport {
    fn send(&mut self, out: Outgoing<'_>, deadline: Instant) -> Result<()> {
        // A new request abandons what is left of the previous stream.
        if out.is_request {
            self.stream = None;
        }
        let resp = self.post(&out, deadline)?;
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        if let Some(id) = header("mcp-session-id") {
            self.session_id = Some(id);
        }
        let content_type = header("content-type")
            .unwrap_or_default()
            .to_ascii_lowercase();
        if (300..400).contains(&status) {
            let to = header("location")
                .map(|l| crate::redact::url(&l))
                .unwrap_or_else(|| "(no Location)".into());
            return Err(Error::new(format!(
                "got HTTP {status} redirecting to {to}; mcp-covenant does not follow redirects, pass the final URL to --http"
            )));
        }
        // A body announced larger than we read is refused before a byte of it is read.
        if let Some(len) = header("content-length").and_then(|v| v.trim().parse::<u64>().ok()) {
            if len > max_body() && status < 400 {
                return Err(Error::new(format!(
                    "announced a {len}-byte response (Content-Length), over the {} MiB mcp-covenant reads",
                    max_body() >> 20
                )));
            }
        }
        let mut body = resp.into_body();
        if status >= 400 {
            let text = body
                .with_config()
                .limit(4096)
                .read_to_string()
                .unwrap_or_default();
            let detail: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            // Masked before it is cut: a secret the cut would split is masked whole.
            let detail = crate::redact::secrets(&detail);
            let detail: String = detail.chars().take(200).collect();
            let hint = match status {
                401 => "; pass credentials with --header 'Authorization: Bearer ...' or MCP_COVENANT_HEADER_AUTHORIZATION",
                // MCP SDKs answer 403 when the Host (or Origin) header is not one they
                // allow (DNS-rebinding protection), before looking at any credentials.
                403 => "; this is most likely the server's Host/Origin check (DNS-rebinding protection): use a host name the server allows in the URL (e.g. localhost rather than 127.0.0.1), or configure the server to allow this host; if it is an authorization refusal, pass credentials with --header",
                404 => "; is the URL the server's MCP endpoint (often /mcp)?",
                _ => "",
            };
            return Err(Error::rejected(format!(
                "answered HTTP {status}{}{hint}",
                if detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({detail})")
                }
            )));
        }
        if !out.is_request || status == 202 || status == 204 {
            return Ok(());
        }
        if content_type.starts_with("text/event-stream") {
            let reader: Box<dyn Read + Send> =
                Box::new(body.into_with_config().limit(max_body()).reader());
            self.stream = Some(BufReader::with_capacity(1 << 16, reader));
            return Ok(());
        }
        let bytes = body
            .with_config()
            .limit(max_body())
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => Error::timeout("timeout"),
                e => Error::new(format!("could not read the response body ({e})")),
            })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::new("sent a response body that is not UTF-8"))?;
        if text.trim().is_empty() {
            return Ok(());
        }
        self.push_json(&text)
    }

    fn recv(&mut self, _deadline: Instant) -> Result<Message> {
        loop {
            if let Some(v) = self.queue.pop_front() {
                return Ok(v);
            }
            let Some(stream) = self.stream.as_mut() else {
                return Err(Error::new("ended its HTTP response without an answer"));
            };
            match Self::next_event(stream)? {
                Some(data) => self.push_json(&data)?,
                None => self.stream = None,
            }
        }
    }

    fn set_protocol_version(&mut self, version: &str) {
        self.protocol_version = Some(version.to_string());
    }

    fn set_stateless(&mut self, stateless: bool) {
        self.stateless = stateless;
        // A session the era probe may have opened is not the one we go on with.
        self.end_session();
    }

    fn close(&mut self) {
        self.stream = None;
        self.end_session();
    }

    fn describe(&self) -> String {
        format!("server {}", crate::redact::url(&self.url))
    }

    fn received(&self) -> u64 {
        self.received
    }
}

impl HttpTransport {
    /// DELETE the session, if the server gave us one.
    fn end_session(&mut self) {
        if let Some(id) = self.session_id.take() {
            let mut req = self
                .agent
                .delete(&self.url)
                .config()
                .timeout_global(Some(Duration::from_secs(2)))
                .build()
                .header("Mcp-Session-Id", id.as_str());
            for (k, v) in &self.headers {
                req = req.header(k.as_str(), v.as_str());
            }
            if let Some(v) = &self.protocol_version {
                req = req.header("MCP-Protocol-Version", v.as_str());
            }
            let _ = req.call();
        }
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        self.close();
    }
}
