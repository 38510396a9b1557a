//! Protocol logic shared by every transport: era detection, the handshake, listing
//! with pagination, and answering what the server asks us in the meantime.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::fields::{LISTS, SERVER_INFO_META};
use super::message::Listed;
use super::{
    CaptureOptions, Captured, Outgoing, Protocol, Transport, LEGACY_VERSIONS, MODERN_VERSIONS,
};
use crate::error::{Error, ErrorKind, Result};
use crate::lockfile::{Entry, Kind, Listing, ServerInfo};

/// How long `--protocol auto` waits for an answer to its `server/discover` probe.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long one `resources/read` of an unlisted `ui://` resource may take.
const READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Pages one list may have before we call it a loop.
const PAGE_CAP: usize = 10_000;

/// The longest `nextCursor` we follow. A cursor is a position: the SDKs' are base64 of
/// an offset or a key, a few dozen bytes. 4 KiB is a hundred times that, and bounds what
/// the loop check remembers (every cursor of a list) to 40 MiB over [`PAGE_CAP`] pages;
/// a distinct 8 MiB cursor a page once reached 3.8 GB in a minute.
const MAX_CURSOR: usize = 4096;

/// The most a capture may receive, all list pages together: what is larger cannot make
/// a lockfile a reader accepts (a lockfile is indented, so larger than what it holds).
fn max_pages_bytes() -> u64 {
    crate::io::max_read_bytes()
}

pub struct Session<'t> {
    transport: &'t mut dyn Transport,
    opts: &'t CaptureOptions,
    deadline: Instant,
    next_id: u64,
    /// Set in the stateless era: the `_meta` every request carries.
    modern_version: Option<String>,
    /// The identity a list result carried in its `_meta`, for a server whose
    /// `server/discover` did not say who it is.
    listed_identity: Option<Value>,
    /// The element lists of the last reply awaited, in compact form.
    lists: Vec<(Kind, Listed)>,
}

/// A server's answer to one of our requests.
enum Reply {
    Result(Value),
    Error { code: i64, message: String },
}

impl Reply {
    fn describe(&self) -> String {
        match self {
            Reply::Result(_) => "a result that is not a DiscoverResult".to_string(),
            Reply::Error { code, message } => format!("JSON-RPC error {code}: {message}"),
        }
    }
}

/// The stateless-era revision we share with a `server/discover` result, if any.
fn modern_version_of(result: &Value) -> Option<&'static str> {
    let supported: Vec<&str> = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    MODERN_VERSIONS
        .iter()
        .find(|v| supported.contains(v))
        .copied()
}

/// The server's identity in a result: `_meta["io.modelcontextprotocol/serverInfo"]`
/// (2026-07-28: on every result), else the `serverInfo` field (the initialize result).
fn identity_of(result: &Value) -> Option<&Value> {
    result
        .get("_meta")
        .and_then(|m| m.get(SERVER_INFO_META))
        .filter(|v| v.is_object())
        .or_else(|| result.get("serverInfo").filter(|v| v.is_object()))
}

/// JSON-RPC "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

impl<'t> Session<'t> {
    pub fn new(
        transport: &'t mut dyn Transport,
        opts: &'t CaptureOptions,
        deadline: Instant,
    ) -> Self {
        Session {
            transport,
            opts,
            deadline,
            next_id: 1,
            modern_version: None,
            listed_identity: None,
            lists: Vec::new(),
        }
    }

    pub fn capture(&mut self) -> Result<Captured> {
        let (mut server, capabilities) = match self.opts.protocol.clone() {
            Protocol::Auto if self.transport.concurrent() => self.probe_both()?,
            Protocol::Auto => match self.probe()? {
                Some((version, result)) => self.modern(version, result),
                None => self.handshake(LEGACY_VERSIONS[0])?,
            },
            Protocol::Version(v) if MODERN_VERSIONS.contains(&v.as_str()) => {
                self.enter_modern(&v);
                let result = self.request("server/discover", json!({}))?;
                self.modern(&v, result)
            }
            Protocol::Version(v) => self.handshake(&v)?,
        };
        let mut surface = Listing::default();
        for &(method, capability, field) in LISTS {
            if capabilities.get(capability).is_none_or(Value::is_null) {
                continue;
            }
            let Some(kind) = Kind::ALL.into_iter().find(|k| k.list_name() == field) else {
                continue;
            };
            let items = self.list_all(method, capability, kind)?;
            surface.extend(kind, items);
        }
        if self.opts.read_ui_resources {
            self.read_unlisted_ui(&mut surface);
        }
        if server.name().is_empty() {
            if let Some(info) = self.listed_identity.take() {
                let found = server_info(&info, "");
                for field in ["name", "title", "version"] {
                    if field == "name" || server.get(field).is_none() {
                        server.set(field, found.get(field).map(str::to_string));
                    }
                }
            }
        }
        Ok(Captured { server, surface })
    }

    fn client_capabilities(&self) -> Value {
        let mut caps = Map::new();
        for c in &self.opts.client_capabilities {
            let v = match c.as_str() {
                "roots" => json!({ "listChanged": false }),
                _ => json!({}),
            };
            caps.insert(c.clone(), v);
        }
        Value::Object(caps)
    }

    fn client_info() -> Value {
        json!({ "name": "mcp-covenant", "version": env!("CARGO_PKG_VERSION") })
    }

    fn initialize_params(&self, offer: &str) -> Value {
        json!({
            "protocolVersion": offer,
            "capabilities": self.client_capabilities(),
            "clientInfo": Self::client_info(),
        })
    }

    fn enter_modern(&mut self, version: &str) {
        self.modern_version = Some(version.to_string());
        self.transport.set_stateless(true);
        self.transport.set_protocol_version(version);
    }

    /// Both eras at once (stdio): `server/discover` and `initialize` go out together,
    /// and whichever era answers first is taken, so a server that never answers a
    /// method it does not know costs nothing. A DiscoverResult naming our revision is
    /// the stateless era (the spec's probe); an initialize result is the handshake era
    /// as soon as it arrives. A server serves the two requests in order on one pipe,
    /// so a dual-era server's DiscoverResult comes first and wins.
    fn probe_both(&mut self) -> Result<(ServerInfo, Value)> {
        let modern = MODERN_VERSIONS[0];
        let offer = LEGACY_VERSIONS[0];
        self.modern_version = Some(modern.to_string());
        let sent = self.send_request("server/discover", json!({}));
        self.modern_version = None;
        let discover = sent?;
        let params = self.initialize_params(offer);
        let init = self.send_request("initialize", params)?;
        let mut discover_reply: Option<Reply> = None;
        let mut init_reply: Option<Reply> = None;
        loop {
            let mut pending = Vec::new();
            if discover_reply.is_none() {
                pending.push(discover);
            }
            if init_reply.is_none() {
                pending.push(init);
            }
            if pending.is_empty() {
                break;
            }
            let waiting_for = if pending.len() == 2 {
                "server/discover and initialize"
            } else if pending[0] == discover {
                "server/discover (initialize was refused)"
            } else {
                "initialize"
            };
            let (id, reply) = self.await_reply(&pending, waiting_for).map_err(|e| {
                match (e.kind(), pending.len()) {
                    (ErrorKind::Exited, 2) => e.with_kind(ErrorKind::ExitedOnProbe),
                    _ => e,
                }
            })?;
            if id == discover {
                if let Reply::Result(result) = &reply {
                    if let Some(version) = modern_version_of(result) {
                        let Reply::Result(result) = reply else {
                            unreachable!()
                        };
                        self.enter_modern(version);
                        return Ok(self.modern(version, result));
                    }
                }
                discover_reply = Some(reply);
            } else {
                let done = matches!(reply, Reply::Result(_));
                init_reply = Some(reply);
                if done {
                    break;
                }
            }
        }
        match init_reply {
            Some(Reply::Result(result)) => self.finish_handshake(offer, result),
            Some(Reply::Error { code, message }) => Err(Error::rejected(format!(
                "{} answered neither era: server/discover with {}, initialize with JSON-RPC error {code}: {message}",
                self.transport.describe(),
                discover_reply.map(|r| r.describe()).unwrap_or_default(),
            ))),
            None => Err(Error::new(format!(
                "{} did not answer initialize",
                self.transport.describe()
            ))),
        }
    }

    /// Ask `server/discover` in the newest era (HTTP, one request at a time). A result
    /// that shares a version with us is the stateless era; an error, an HTTP rejection
    /// or an unrecognized answer means a handshake-era server (the conservative reading
    /// the spec recommends).
    fn probe(&mut self) -> Result<Option<(&'static str, Value)>> {
        let version = MODERN_VERSIONS[0];
        self.enter_modern(version);
        // A handshake-era server may ignore a request before `initialize`: do not let
        // the probe eat the whole timeout.
        let full = self.deadline;
        self.deadline = full.min(Instant::now() + PROBE_TIMEOUT);
        let outcome = self.request("server/discover", json!({}));
        let probe_timed_out =
            self.deadline < full && Instant::now() >= self.deadline && outcome.is_err();
        self.deadline = full;
        self.modern_version = None;
        self.transport.set_stateless(false);
        match outcome {
            Ok(result) => match modern_version_of(&result) {
                Some(v) => {
                    self.enter_modern(v);
                    Ok(Some((v, result)))
                }
                None => Ok(None),
            },
            Err(e) if e.kind() == ErrorKind::Rejected || probe_timed_out => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The server's identity, capabilities and instructions from its DiscoverResult.
    fn modern(&mut self, version: &str, discover: Value) -> (ServerInfo, Value) {
        let mut info = server_info(identity_of(&discover).unwrap_or(&Value::Null), version);
        info.set("instructions", instructions_of(&discover));
        let capabilities = discover
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({}));
        (info, capabilities)
    }

    fn handshake(&mut self, offer: &str) -> Result<(ServerInfo, Value)> {
        self.transport.set_protocol_version(offer);
        let params = self.initialize_params(offer);
        let result = self.request("initialize", params)?;
        self.finish_handshake(offer, result)
    }

    fn finish_handshake(&mut self, offer: &str, result: Value) -> Result<(ServerInfo, Value)> {
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(offer)
            .to_string();
        if !LEGACY_VERSIONS.contains(&version.as_str()) {
            self.opts.notices.warn(format!("{} negotiated protocol version {version}, which mcp-covenant does not know; listing anyway", self.transport.describe()));
        }
        self.transport.set_protocol_version(&version);
        self.notify("notifications/initialized")?;
        let mut info = server_info(identity_of(&result).unwrap_or(&Value::Null), &version);
        info.set("instructions", instructions_of(&result));
        let capabilities = result
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({}));
        Ok((info, capabilities))
    }

    /// Every item of a paginated list, following `nextCursor` to the end. A server
    /// that declares the capability but does not know the method (-32601 on the first
    /// page) has an empty list, with a warning.
    fn list_all(&mut self, method: &str, capability: &str, kind: Kind) -> Result<Vec<Entry>> {
        let field = kind.list_name();
        let mut items = Vec::new();
        let mut cursors = HashSet::new();
        let mut cursor: Option<String> = None;
        for page in 0..PAGE_CAP {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let id = self.send_request(method, params)?;
            let (_, reply) = self.await_reply(&[id], method)?;
            let mut result = match reply {
                Reply::Error { code, .. } if code == METHOD_NOT_FOUND && page == 0 => {
                    self.opts.notices.warn(format!(
                        "{} declares the `{capability}` capability but answers {method} with -32601 (method not found); recorded as no {field}",
                        self.transport.describe()
                    ));
                    return Ok(items);
                }
                reply => self.result_of(method, reply)?,
            };
            if self.listed_identity.is_none() {
                if let Some(Value::Object(meta)) = result.get_mut("_meta") {
                    self.listed_identity = meta.remove(SERVER_INFO_META).filter(Value::is_object);
                }
            }
            let where_ = || format!("{} answered {method} with", self.transport.describe());
            // The reply's lists were compacted as it was read (`super::message`).
            let listed = std::mem::take(&mut self.lists)
                .into_iter()
                .find(|(k, _)| *k == kind);
            match (listed, result.get(field)) {
                (Some((_, Listed::Entries(list))), _) => items.extend(list),
                (Some((_, Listed::NotObject(i))), _) => {
                    return Err(Error::new(format!(
                        "{} `{field}[{i}]` that is not an object",
                        where_()
                    )))
                }
                (None, None | Some(Value::Null)) => {}
                (None, Some(_)) => {
                    return Err(Error::new(format!(
                        "{} `{field}` that is not an array",
                        where_()
                    )))
                }
            }
            if self.transport.received() > max_pages_bytes() {
                return Err(Error::new(format!(
                    "{} sent more than {} MiB by page {} of {method}: more than a lockfile a reader accepts can hold; giving up",
                    self.transport.describe(),
                    max_pages_bytes() >> 20,
                    page + 1
                )));
            }
            match result.get("nextCursor") {
                Some(Value::String(next)) if next.len() > MAX_CURSOR => {
                    return Err(Error::new(format!(
                        "{} a {}-byte nextCursor, longer than the {MAX_CURSOR} bytes mcp-covenant follows (a cursor is a position, not data)",
                        where_(),
                        next.len()
                    )));
                }
                Some(Value::String(next)) if !next.is_empty() => {
                    if !cursors.insert(next.clone()) {
                        return Err(Error::new(format!(
                            "{} cursor `{next}` a second time: the server's pagination loops",
                            where_()
                        )));
                    }
                    cursor = Some(next.clone());
                }
                _ => return Ok(items),
            }
        }
        Err(Error::new(format!(
            "{}: {method} had more than {PAGE_CAP} pages; giving up",
            self.transport.describe()
        )))
    }

    /// MCP Apps: read each `ui://` resource a tool names that `resources/list` did not
    /// return, and record it from the read result (`"listed": false`, never its body).
    /// At most one read per tool, each within [`READ_TIMEOUT`]. A failure is a warning:
    /// the listed surface stands. A timeout, a broken transport or a capture past
    /// [`max_pages_bytes`] ends the reading.
    fn read_unlisted_ui(&mut self, surface: &mut Listing) {
        use super::apps;
        // Only the tools that name a UI and the ui:// resources are built (one at a time
        // from their canonical text, whose keys are written plainly).
        let built = |kind: Kind, keep: &dyn Fn(&Entry) -> bool| -> Vec<crate::lockfile::Element> {
            surface
                .list(kind)
                .iter()
                .filter(|e| keep(e))
                .filter_map(|e| e.build(kind).ok())
                .collect()
        };
        let tools = built(Kind::Tool, &|e| e.compact.contains("resourceUri"));
        let resources = built(Kind::Resource, &|e| e.key.starts_with("ui:"));
        let uris = apps::unlisted_ui_uris(&tools, &resources);
        drop((tools, resources));
        let notices = self.opts.notices.clone();
        let warn = |what: String| notices.warn(what);
        for uri in uris {
            let full = self.deadline;
            let asked = Instant::now();
            self.deadline = full.min(asked + READ_TIMEOUT);
            // What this read may wait: the capture's own deadline may come sooner.
            let limit = self.deadline.saturating_duration_since(asked);
            let outcome = self.request("resources/read", json!({ "uri": uri }));
            self.deadline = full;
            let server = self.transport.describe();
            let not_recorded = |why: &str| {
                format!("a tool names the MCP Apps resource {uri}, which resources/list does not return and resources/read could not read: {why}; not recorded")
            };
            match outcome.map(|result| apps::element_from_read(&uri, &result)) {
                Ok(Ok(element)) => {
                    surface.extend(Kind::Resource, [Entry::new(Kind::Resource, element)])
                }
                Ok(Err(why)) => warn(not_recorded(&format!("{server} answered with {why}"))),
                // A JSON-RPC error: this resource only.
                Err(e) if e.kind() == ErrorKind::Rejected => warn(not_recorded(e.message())),
                // A timeout, a transport failure: the server will not answer the rest.
                Err(e) if e.kind() == ErrorKind::Timeout => {
                    let waited = (limit.as_secs_f64() * 10.0).round() / 10.0;
                    warn(not_recorded(&format!("no answer within {waited} s")));
                    return;
                }
                Err(e) => {
                    warn(not_recorded(e.message()));
                    return;
                }
            }
            if self.transport.received() > max_pages_bytes() {
                warn(format!(
                    "{server} sent more than {} MiB; no more ui:// resources are read",
                    max_pages_bytes() >> 20
                ));
                return;
            }
        }
    }

    fn with_meta(&self, mut params: Value) -> Value {
        if let Some(version) = &self.modern_version {
            if let Value::Object(map) = &mut params {
                map.insert(
                    "_meta".into(),
                    json!({
                        "io.modelcontextprotocol/protocolVersion": version,
                        "io.modelcontextprotocol/clientCapabilities": self.client_capabilities(),
                        "io.modelcontextprotocol/clientInfo": Self::client_info(),
                    }),
                );
            }
        }
        params
    }

    fn notify(&mut self, method: &str) -> Result<()> {
        let msg = json!({ "jsonrpc": "2.0", "method": method });
        self.transport.send(
            Outgoing {
                message: &msg,
                method: Some(method),
                is_request: false,
            },
            self.deadline,
        )
    }

    /// Send a request and wait for its result.
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.send_request(method, params)?;
        let (_, reply) = self.await_reply(&[id], method)?;
        self.result_of(method, reply)
    }

    /// The result of `reply`, or its JSON-RPC error as a rejection.
    fn result_of(&self, method: &str, reply: Reply) -> Result<Value> {
        match reply {
            Reply::Result(result @ Value::Object(_)) => Ok(result),
            Reply::Result(_) => Err(Error::new(format!(
                "{} answered {method} without a result object",
                self.transport.describe()
            ))),
            Reply::Error { code, message } => Err(Error::rejected(format!(
                "{} answered {method} with JSON-RPC error {code}: {message}",
                self.transport.describe()
            ))),
        }
    }

    /// Send a request; its id, to wait for.
    fn send_request(&mut self, method: &str, params: Value) -> Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": self.with_meta(params) });
        self.transport
            .send(
                Outgoing {
                    message: &msg,
                    method: Some(method),
                    is_request: true,
                },
                self.deadline,
            )
            .map_err(|e| self.failed(e, &format!("while sending {method}")))?;
        Ok(id)
    }

    /// Wait for the response to one of `ids`, answering server requests and skipping
    /// notifications and stray responses meanwhile. `waiting_for` names the methods.
    fn await_reply(&mut self, ids: &[u64], waiting_for: &str) -> Result<(u64, Reply)> {
        loop {
            let mut incoming = self.transport.recv(self.deadline).map_err(|e| {
                if e.kind() == ErrorKind::Timeout {
                    Error::timeout(format!(
                        "{}: timed out after {} s waiting for the answer to {waiting_for}",
                        self.transport.describe(),
                        self.opts.timeout.as_secs_f64()
                    ))
                } else {
                    self.failed(e, &format!("before answering {waiting_for}"))
                }
            })?;
            let has_method = incoming.value.get("method").and_then(Value::as_str);
            let matched = |rid: &Value| {
                ids.iter()
                    .copied()
                    .find(|&id| rid.as_u64() == Some(id) || rid.as_str() == Some(&id.to_string()))
            };
            match (incoming.value.get("id"), has_method) {
                (Some(rid), Some(m)) if !rid.is_null() => {
                    let m = m.to_string();
                    self.answer(rid.clone(), &m)?;
                }
                (_, Some(_)) => {} // a notification: logging, list_changed, progress
                (Some(rid), None) if matched(rid).is_some() => {
                    let id = matched(rid).unwrap_or_default();
                    // The lists of this reply, and none left from an earlier one.
                    self.lists = std::mem::take(&mut incoming.lists);
                    if let Some(err) = incoming.value.get("error") {
                        let code = err.get("code").and_then(Value::as_i64).unwrap_or(0);
                        let text = err.get("message").and_then(Value::as_str).unwrap_or("");
                        return Ok((
                            id,
                            Reply::Error {
                                code,
                                message: text.to_string(),
                            },
                        ));
                    }
                    let result = incoming
                        .value
                        .as_object_mut()
                        .and_then(|m| m.remove("result"))
                        .unwrap_or(Value::Null);
                    return Ok((id, Reply::Result(result)));
                }
                _ => {} // a response to something we did not ask (or no longer wait for)
            }
        }
    }

    /// A transport failure, told with the server's name and what we were doing.
    fn failed(&self, e: Error, doing: &str) -> Error {
        let msg = format!("{} {} {doing}", self.transport.describe(), e.message());
        Error::new(msg).with_kind(e.kind())
    }

    /// Answer a server-initiated request so the server is not left waiting.
    fn answer(&mut self, id: Value, method: &str) -> Result<()> {
        let offered = |c: &str| self.opts.client_capabilities.iter().any(|x| x == c);
        let reply = match method {
            "ping" => json!({ "jsonrpc": "2.0", "id": id, "result": {} }),
            "roots/list" if offered("roots") => {
                json!({ "jsonrpc": "2.0", "id": id, "result": { "roots": [] } })
            }
            "elicitation/create" if offered("elicitation") => {
                json!({ "jsonrpc": "2.0", "id": id, "result": { "action": "decline" } })
            }
            _ => json!({ "jsonrpc": "2.0", "id": id, "error": {
                "code": -32601,
                "message": format!("mcp-covenant only lists the server's interface; it does not handle {method}")
            }}),
        };
        self.transport.send(
            Outgoing {
                message: &reply,
                method: None,
                is_request: false,
            },
            self.deadline,
        )
    }
}

fn server_info(info: &Value, version: &str) -> ServerInfo {
    let text = |k: &str| info.get(k).and_then(Value::as_str).map(str::to_string);
    let mut server = ServerInfo::default();
    for field in ["name", "title", "version"] {
        server.set(field, text(field));
    }
    server.set(
        "protocolVersion",
        (!version.is_empty()).then(|| version.to_string()),
    );
    server
}

/// The server's `instructions` (initialize result or DiscoverResult), if it gives any.
fn instructions_of(result: &Value) -> Option<String> {
    result
        .get("instructions")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}
