//! Protocol logic shared by every transport: era detection, the handshake, listing
//! with pagination, and answering what the server asks us in the meantime.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::{
    CaptureOptions, Captured, Outgoing, Protocol, Transport, LEGACY_VERSIONS, MODERN_VERSIONS,
};
use crate::error::{Error, ErrorKind, Result};
use crate::lockfile::{Element, ServerInfo, Surface};

/// How long `--protocol auto` waits for an answer to its `server/discover` probe.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Pages one list may have before we call it a loop.
const PAGE_CAP: usize = 10_000;

/// The lists we read: method, capability that gates it, result field.
const LISTS: &[(&str, &str, &str)] = &[
    ("tools/list", "tools", "tools"),
    ("resources/list", "resources", "resources"),
    ("resources/templates/list", "resources", "resourceTemplates"),
    ("prompts/list", "prompts", "prompts"),
];

pub struct Session<'t> {
    transport: &'t mut dyn Transport,
    opts: &'t CaptureOptions,
    deadline: Instant,
    next_id: u64,
    /// Set in the stateless era: the `_meta` every request carries.
    modern_version: Option<String>,
}

/// How the server answered the `server/discover` probe.
enum Probe {
    Modern { version: String, result: Value },
    Legacy,
}

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
        }
    }

    pub fn capture(&mut self) -> Result<Captured> {
        let (server, capabilities) = match self.opts.protocol.clone() {
            Protocol::Auto => match self.probe()? {
                Probe::Modern { version, result } => self.modern(&version, result)?,
                Probe::Legacy => self.handshake(LEGACY_VERSIONS[0])?,
            },
            Protocol::Version(v) if MODERN_VERSIONS.contains(&v.as_str()) => {
                self.enter_modern(&v);
                let result = self.request("server/discover", json!({}))?;
                self.modern(&v, result)?
            }
            Protocol::Version(v) => self.handshake(&v)?,
        };
        let mut surface = Surface::default();
        for &(method, capability, field) in LISTS {
            if capabilities.get(capability).is_none_or(Value::is_null) {
                continue;
            }
            let items = self.list_all(method, field)?;
            match field {
                "tools" => surface.tools = items,
                "resources" => surface.resources = items,
                "resourceTemplates" => surface.resource_templates = items,
                _ => surface.prompts = items,
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

    fn enter_modern(&mut self, version: &str) {
        self.modern_version = Some(version.to_string());
        self.transport.set_stateless(true);
        self.transport.set_protocol_version(version);
    }

    /// Ask `server/discover` in the newest era. A result that shares a version with us
    /// is the stateless era; an error, an HTTP rejection or an unrecognized answer means
    /// a handshake-era server (the conservative reading the spec recommends).
    fn probe(&mut self) -> Result<Probe> {
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
            Ok(result) => {
                let supported: Vec<&str> = result
                    .get("supportedVersions")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                match MODERN_VERSIONS.iter().find(|v| supported.contains(v)) {
                    Some(v) => Ok(Probe::Modern {
                        version: v.to_string(),
                        result,
                    }),
                    None => Ok(Probe::Legacy),
                }
            }
            Err(e) if e.kind() == ErrorKind::Rejected || probe_timed_out => Ok(Probe::Legacy),
            Err(e) => Err(e),
        }
    }

    fn modern(&mut self, version: &str, discover: Value) -> Result<(ServerInfo, Value)> {
        self.enter_modern(version);
        let info = discover.get("serverInfo").cloned().unwrap_or(Value::Null);
        let capabilities = discover
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({}));
        Ok((server_info(&info, version), capabilities))
    }

    fn handshake(&mut self, offer: &str) -> Result<(ServerInfo, Value)> {
        self.transport.set_protocol_version(offer);
        let result = self.request(
            "initialize",
            json!({
                "protocolVersion": offer,
                "capabilities": self.client_capabilities(),
                "clientInfo": Self::client_info(),
            }),
        )?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(offer)
            .to_string();
        if !LEGACY_VERSIONS.contains(&version.as_str()) {
            eprintln!("warning: {} negotiated protocol version {version}, which mcp-covenant does not know; listing anyway", self.transport.describe());
        }
        self.transport.set_protocol_version(&version);
        self.notify("notifications/initialized")?;
        let info = result.get("serverInfo").cloned().unwrap_or(Value::Null);
        let capabilities = result
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({}));
        Ok((server_info(&info, &version), capabilities))
    }

    /// Every item of a paginated list, following `nextCursor` to the end.
    fn list_all(&mut self, method: &str, field: &str) -> Result<Vec<Element>> {
        let mut items = Vec::new();
        let mut cursors = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..PAGE_CAP {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let mut result = self.request(method, params)?;
            let where_ = || format!("{} answered {method} with", self.transport.describe());
            match result.as_object_mut().and_then(|r| r.remove(field)) {
                Some(Value::Array(list)) => {
                    for (i, item) in list.into_iter().enumerate() {
                        match item {
                            Value::Object(map) => items.push(map),
                            _ => {
                                return Err(Error::new(format!(
                                    "{} `{field}[{i}]` that is not an object",
                                    where_()
                                )))
                            }
                        }
                    }
                }
                None | Some(Value::Null) => {}
                Some(_) => {
                    return Err(Error::new(format!(
                        "{} `{field}` that is not an array",
                        where_()
                    )))
                }
            }
            match result.get("nextCursor") {
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

    /// Send a request and wait for its response, answering server requests and
    /// skipping notifications and stray responses meanwhile.
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": self.with_meta(params) });
        let timeout_hint = || {
            format!(
                "timed out after {} s waiting for the answer to {method}",
                self.opts.timeout.as_secs_f64()
            )
        };
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
        loop {
            let mut incoming = self.transport.recv(self.deadline).map_err(|e| {
                if e.kind() == ErrorKind::Timeout {
                    Error::timeout(format!("{}: {}", self.transport.describe(), timeout_hint()))
                } else {
                    self.failed(e, &format!("before answering {method}"))
                }
            })?;
            let has_method = incoming.get("method").and_then(Value::as_str);
            match (incoming.get("id"), has_method) {
                (Some(rid), Some(m)) if !rid.is_null() => {
                    let m = m.to_string();
                    self.answer(rid.clone(), &m)?;
                }
                (_, Some(_)) => {} // a notification: logging, list_changed, progress
                (Some(rid), None)
                    if rid.as_u64() == Some(id) || rid.as_str() == Some(&id.to_string()) =>
                {
                    if let Some(err) = incoming.get("error") {
                        let code = err.get("code").and_then(Value::as_i64).unwrap_or(0);
                        let text = err.get("message").and_then(Value::as_str).unwrap_or("");
                        return Err(Error::rejected(format!(
                            "{} answered {method} with JSON-RPC error {code}: {text}",
                            self.transport.describe()
                        )));
                    }
                    return match incoming.as_object_mut().and_then(|m| m.remove("result")) {
                        Some(result @ Value::Object(_)) => Ok(result),
                        _ => Err(Error::new(format!(
                            "{} answered {method} without a result object",
                            self.transport.describe()
                        ))),
                    };
                }
                _ => {} // a response to something we did not ask (or no longer wait for)
            }
        }
    }

    /// A transport failure, told with the server's name and what we were doing.
    fn failed(&self, e: Error, doing: &str) -> Error {
        let msg = format!("{} {} {doing}", self.transport.describe(), e.message());
        match e.kind() {
            ErrorKind::Timeout => Error::timeout(msg),
            ErrorKind::Rejected => Error::rejected(msg),
            ErrorKind::Fatal => Error::new(msg),
        }
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
    ServerInfo {
        name: text("name").unwrap_or_default(),
        title: text("title"),
        version: text("version"),
        protocol_version: Some(version.to_string()),
    }
}
