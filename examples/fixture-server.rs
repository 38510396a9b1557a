//! A scriptable MCP server for mcp-covenant's tests (and a small demo server).
//!
//!     fixture-server SPEC.json              # stdio
//!     fixture-server SPEC.json --http PORT  # Streamable HTTP on 127.0.0.1 (0 = any port;
//!                                           # prints `listening on PORT` first)
//!     fixture-server --peak-rss FILE CMD... # run CMD, write its peak RSS (KiB, with
//!                                           # what it reaped) to FILE, exit as it did
//!
//! SPEC lists the surface (`tools`, `resources`, `resourceTemplates`, `prompts`) and how
//! to misbehave; every key is optional:
//!   era            "legacy" (initialize handshake, default), "modern" (stateless
//!                  2026-07-28 only), "dual" (both)
//!   protocolVersion  what initialize answers (default: the client's offer)
//!   serverInfo     { name, version }: in `_meta["io.modelcontextprotocol/serverInfo"]`
//!                  of every stateless-era result (the 2026-07-28 schema), in the
//!                  initialize result's `serverInfo`
//!   serverInfoInResult  server/discover also puts it in a `serverInfo` field (drafts)
//!   identityOnListsOnly  server/discover carries no identity; list results do
//!   instructions   what initialize and server/discover say in `instructions`
//!   silentOnUnknown  never answer a method the server does not know (in the legacy
//!                  era that includes server/discover)
//!   missingLists   list methods (`prompts/list`) whose capability is declared but
//!                  that are answered with -32601
//!   pageSize       paginate lists with this many items a page
//!   banner         lines printed on stdout before anything else
//!   stderr         lines printed on stderr at start
//!   garbageOnly    print garbage on stdout and never answer
//!   neverAnswer    read requests, answer nothing
//!   exitAtStart    exit with this code right away (after `stderr` and `startDelayMs`)
//!   startDelayMs   sleep this long at start, before reading anything
//!   crashOnFirstMessage  read the first message, then crash: "abort" (SIGABRT) or
//!                  "traceback" (a Python traceback on stderr, exit 1) or
//!                  "exception-group" (Python 3.11's exception group traceback, exit 1)
//!   exitAfterInitialize  exit with this code after answering initialize
//!   initializeFirst  exit (1) when the first message is not `initialize`, as rmcp 0.6
//!                  servers do
//!   serverRequests before answering tools/list, send ping and roots/list requests and
//!                  wait for the client's answers
//!   notifications  send log and list_changed notifications before each answer
//!   strayResponses send a response to an id nobody asked for before each answer
//!   invalidUtf8    print a line of invalid UTF-8 before each answer
//!   delayMs        sleep before each answer
//!   grandchild     start a copy of itself that sleeps for an hour holding stdout open
//!                  (`fixture-server SPEC --sleep`)
//!   setsidGrandchild  start a copy of itself that calls setsid() (leaving the process
//!                  group) and sleeps for an hour, its stdio on /dev/null
//!   envLog         write the names of the environment variables it got to this file
//!   errorOn        answer this method with a JSON-RPC error
//!   silentOn       never answer this method
//!   toolsNotArray  answer tools/list with `tools: "nope"`
//!   cursorLoop     always answer with the same nextCursor
//!   cursorPadding  pad every nextCursor with this many bytes (`page-N-xxx...`)
//!   endlessPages   answer tools/list with one tool, a `padding` field of this many
//!                  bytes and a nextCursor to the next page, for ever
//!   generateTools  add this many generated tools (~20 properties each)
//!   descriptionBytes  pad each generated tool's description with this many bytes
//!   toolsListFile  answer tools/list with this file's bytes as the result, streamed
//!                  as they are (for memory benchmarks: the server stays small)
//!   rawAnswers     { METHOD: FILE }: answer METHOD with `{"jsonrpc":"2.0","id":ID,`, the
//!                  file's bytes (`"result":{...}` or `"error":{...}`) and `}`, streamed
//!   rawBefore      a file streamed to stdout as it is before each answer to a request
//!                  (its lines: notifications, one huge or many); over HTTP the answer is
//!                  then an event stream, an event for each of the file's lines first
//!   deepSchema     add a tool whose input schema nests this deep
//!   deepDefaultItems  give that schema's innermost level a `default` of this many zeros
//!                  (small on the wire, large once indented in a lockfile)
//!   rotatingDefault  a counter file: add a tool `rotating` whose `fields` default is
//!                  ["a", "b", "c"] rotated by the counter, which each start increments
//!                  (a server that builds a list from a set: another order every run)
//!   envValues      write NAME=VALUE of the environment variables it got to this file
//!   unlistedResources  resources that resources/read serves but resources/list omits
//!                  (MCP Apps lets a server leave its ui:// resources out of the list).
//!                  resources/read answers for these and the listed `resources`: one
//!                  content item with the resource's `uri`, `mimeType`, `text` and
//!                  `_meta` (`readMeta` for its `_meta`, when given); an unknown URI
//!                  is JSON-RPC error -32002
//!   HTTP only:     httpStatus (answer every POST with it; httpBody: its body), announceLength (answer with
//!                  this Content-Length and a short body), redirectLoop, sse (answer
//!                  with an event stream: priming event, progress, result),
//!                  sseNeverData (a stream of comments only), requireSession

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use serde_json::{json, Map, Value};

struct Server {
    spec: std::rc::Rc<Value>,
    initialized: bool,
    pending: Vec<String>,
    stash: Option<Value>,
}

fn flag(spec: &Value, key: &str) -> bool {
    spec.get(key).and_then(Value::as_bool).unwrap_or(false)
}

impl Server {
    fn new(spec: Value) -> Server {
        let mut spec = spec;
        if let Some(n) = spec.get("generateTools").and_then(Value::as_u64) {
            let tools = spec["tools"].as_array().cloned().unwrap_or_default();
            let mut all = tools;
            for i in 0..n {
                let mut props = Map::new();
                for p in 0..20 {
                    props.insert(
                        format!("field_{p}"),
                        json!({"type": "string", "description": format!("Field {p} of generated tool {i}"), "enum": ["a", "b", "c"]}),
                    );
                }
                let pad = spec
                    .get("descriptionBytes")
                    .and_then(Value::as_u64)
                    .unwrap_or(0) as usize;
                let description = format!("generated{}", "x".repeat(pad));
                all.push(json!({"name": format!("gen_{i:05}"), "description": description,
                    "inputSchema": {"type": "object", "properties": props, "required": ["field_0"]}}));
            }
            spec["tools"] = Value::Array(all);
        }
        if let Some(counter) = spec.get("rotatingDefault").and_then(Value::as_str) {
            let n: usize = std::fs::read_to_string(counter)
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0);
            std::fs::write(counter, (n + 1).to_string()).expect("counter");
            let mut fields = vec!["a", "b", "c"];
            fields.rotate_left(n % 3);
            let mut tools = spec["tools"].as_array().cloned().unwrap_or_default();
            tools.push(
                json!({"name": "rotating", "inputSchema": {"type": "object", "properties":
                {"fields": {"type": "array", "items": {"type": "string"}, "default": fields}}}}),
            );
            spec["tools"] = Value::Array(tools);
        }
        if let Some(depth) = spec.get("deepSchema").and_then(Value::as_u64) {
            let mut schema = json!({"type": "string"});
            if let Some(n) = spec.get("deepDefaultItems").and_then(Value::as_u64) {
                schema["default"] = Value::Array(vec![json!(0); n as usize]);
            }
            for _ in 0..depth {
                schema = json!({"type": "object", "properties": {"next": schema}});
            }
            let mut tools = spec["tools"].as_array().cloned().unwrap_or_default();
            tools.push(json!({"name": "deep", "inputSchema": schema}));
            spec["tools"] = Value::Array(tools);
        }
        Server {
            spec: std::rc::Rc::new(spec),
            initialized: false,
            pending: Vec::new(),
            stash: None,
        }
    }

    fn era(&self) -> &str {
        self.spec
            .get("era")
            .and_then(Value::as_str)
            .unwrap_or("legacy")
    }

    fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        for (list, cap) in [
            ("tools", "tools"),
            ("resources", "resources"),
            ("unlistedResources", "resources"),
            ("resourceTemplates", "resources"),
            ("prompts", "prompts"),
        ] {
            if self.spec.get(list).is_some() {
                caps.insert(cap.into(), json!({}));
            }
        }
        for method in self.missing_lists() {
            let cap = if method.starts_with("resources/") {
                "resources"
            } else {
                method.split('/').next().unwrap_or("")
            };
            caps.insert(cap.into(), json!({}));
        }
        caps.insert("logging".into(), json!({}));
        Value::Object(caps)
    }

    fn missing_lists(&self) -> Vec<String> {
        self.spec
            .get("missingLists")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    }

    /// The result `_meta` of the stateless era: the server's identity.
    fn result_meta(&self) -> Value {
        json!({"io.modelcontextprotocol/serverInfo": self.server_info()})
    }

    fn server_info(&self) -> Value {
        self.spec
            .get("serverInfo")
            .cloned()
            .unwrap_or_else(|| json!({"name": "fixture", "version": "1.0.0"}))
    }

    /// Messages to send in reply to `msg`.
    fn handle(&mut self, msg: &Value) -> Vec<Value> {
        let spec = self.spec.clone();
        // Answers to our own requests.
        if msg.get("method").is_none() {
            if let Some(id) = msg.get("id").and_then(Value::as_str) {
                self.pending.retain(|p| p != id);
                if self.pending.is_empty() {
                    return self.stash.take().into_iter().collect();
                }
            }
            return vec![];
        }
        let method = msg["method"].as_str().unwrap_or("").to_string();
        let Some(id) = msg.get("id").cloned() else {
            if method == "notifications/initialized" {
                self.initialized = true;
            }
            return vec![];
        };
        if flag(&spec, "neverAnswer") {
            return vec![];
        }
        if let Some(ms) = spec.get("delayMs").and_then(Value::as_u64) {
            std::thread::sleep(Duration::from_millis(ms));
        }
        let mut out = Vec::new();
        if flag(&spec, "notifications") {
            out.push(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}}));
            out.push(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
        }
        if flag(&spec, "strayResponses") {
            out.push(
                json!({"jsonrpc": "2.0", "id": 999_999, "result": {"tools": [{"name": "stray"}]}}),
            );
        }
        let error = |code: i64, text: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}});
        if spec.get("silentOn").and_then(Value::as_str) == Some(method.as_str()) {
            return out;
        }
        if spec.get("errorOn").and_then(Value::as_str) == Some(method.as_str()) {
            out.push(error(-32603, "internal error (scripted)"));
            return out;
        }
        let modern_meta = msg
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_string);
        let era = self.era().to_string();
        let instructions = spec.get("instructions").cloned();
        if self.missing_lists().contains(&method) {
            out.push(error(-32601, &format!("method not found: {method}")));
            return out;
        }
        let result = match method.as_str() {
            "server/discover" if era != "legacy" => {
                let mut r = json!({
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": self.capabilities(),
                    "resultType": "complete",
                    "ttlMs": 0,
                    "cacheScope": "private"
                });
                if !flag(&spec, "identityOnListsOnly") {
                    r["_meta"] = self.result_meta();
                }
                if flag(&spec, "serverInfoInResult") {
                    r["serverInfo"] = self.server_info();
                }
                if let Some(i) = &instructions {
                    r["instructions"] = i.clone();
                }
                r
            }
            "initialize" if era != "modern" => {
                let offered = msg
                    .pointer("/params/protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("2025-06-18");
                let version = spec
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or(offered);
                let mut r = json!({"protocolVersion": version, "capabilities": self.capabilities(), "serverInfo": self.server_info()});
                if let Some(i) = &instructions {
                    r["instructions"] = i.clone();
                }
                r
            }
            "ping" => json!({}),
            "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
                if era == "modern" && modern_meta.is_none() {
                    out.push(error(-32602, "missing _meta protocolVersion"));
                    return out;
                }
                if era == "legacy" && !self.initialized {
                    out.push(error(-32002, "server not initialized"));
                    return out;
                }
                let field = match method.as_str() {
                    "tools/list" => "tools",
                    "resources/list" => "resources",
                    "resources/templates/list" => "resourceTemplates",
                    _ => "prompts",
                };
                let mut result =
                    self.page(field, msg.pointer("/params/cursor").and_then(Value::as_str));
                if modern_meta.is_some() {
                    result["_meta"] = self.result_meta();
                    result["resultType"] = json!("complete");
                    result["ttlMs"] = json!(60000);
                    result["cacheScope"] = json!("shared");
                }
                if field == "tools" && flag(&spec, "toolsNotArray") {
                    result["tools"] = json!("nope");
                }
                if field == "tools" && flag(&spec, "cursorLoop") {
                    result["nextCursor"] = json!("same");
                }
                result
            }
            "resources/read" => {
                let uri = msg.pointer("/params/uri").and_then(Value::as_str);
                let known = ["resources", "unlistedResources"]
                    .iter()
                    .filter_map(|k| spec.get(*k).and_then(Value::as_array))
                    .flatten()
                    .find(|r| uri.is_some() && r.get("uri").and_then(Value::as_str) == uri);
                let Some(resource) = known else {
                    out.push(error(-32002, "resource not found"));
                    return out;
                };
                let mut item = json!({"uri": resource["uri"], "text": resource.get("text").cloned().unwrap_or(json!(""))});
                if let Some(m) = resource.get("mimeType") {
                    item["mimeType"] = m.clone();
                }
                if let Some(m) = resource.get("readMeta").or_else(|| resource.get("_meta")) {
                    item["_meta"] = m.clone();
                }
                json!({"contents": [item]})
            }
            _ if flag(&spec, "silentOnUnknown") => return out,
            _ => {
                out.push(error(-32601, &format!("method not found: {method}")));
                return out;
            }
        };
        let response = json!({"jsonrpc": "2.0", "id": id, "result": result});
        if method == "tools/list" && flag(&spec, "serverRequests") && self.stash.is_none() {
            self.pending = vec!["srv-ping".into(), "srv-roots".into()];
            out.push(json!({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"}));
            out.push(json!({"jsonrpc": "2.0", "id": "srv-roots", "method": "roots/list"}));
            self.stash = Some(response);
            return out;
        }
        out.push(response);
        out
    }

    fn page(&self, field: &str, cursor: Option<&str>) -> Value {
        let start: usize = cursor
            .and_then(|c| c.strip_prefix("page-"))
            .and_then(|n| n.split('-').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let empty = Vec::new();
        let items = self
            .spec
            .get(field)
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        let size = self
            .spec
            .get("pageSize")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        if size == 0 {
            return json!({ field: items });
        }
        let end = (start + size).min(items.len());
        let mut result = json!({ field: items[start.min(end)..end] });
        if end < items.len() {
            let pad = self
                .spec
                .get("cursorPadding")
                .and_then(Value::as_u64)
                .unwrap_or(0) as usize;
            result["nextCursor"] = match pad {
                0 => json!(format!("page-{end}")),
                _ => json!(format!("page-{end}-{}", "x".repeat(pad))),
            };
        }
        result
    }
}

/// The raw tools/list answer of `toolsListFile`, for a request `msg`.
fn raw_tools_list(spec: &Value, msg: &Value) -> Option<Vec<u8>> {
    if msg.get("method").and_then(Value::as_str) != Some("tools/list") {
        return None;
    }
    if let Some(pad) = spec.get("endlessPages").and_then(Value::as_u64) {
        // Written as bytes: serializing the padding costs more than the test.
        let n: u64 = msg
            .pointer("/params/cursor")
            .and_then(Value::as_str)
            .and_then(|c| c.strip_prefix("page-"))
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let mut out = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[{{"name":"t{n}"}}],"nextCursor":"page-{}","padding":""#,
            msg.get("id")?,
            n + 1
        )
        .into_bytes();
        out.resize(out.len() + pad as usize, b'x');
        out.extend_from_slice(b"\"}}");
        return Some(out);
    }
    let file = spec.get("toolsListFile").and_then(Value::as_str)?;
    let mut out = format!(r#"{{"jsonrpc":"2.0","id":{},"result":"#, msg.get("id")?).into_bytes();
    out.extend(std::fs::read(file).expect("toolsListFile"));
    out.push(b'}');
    Some(out)
}

/// The answer `rawAnswers` gives `msg`: the bytes before the file's, and the file.
fn raw_answer<'s>(spec: &'s Value, msg: &Value) -> Option<(Vec<u8>, &'s str)> {
    let method = msg.get("method").and_then(Value::as_str)?;
    let file = spec.get("rawAnswers")?.get(method)?.as_str()?;
    let prefix = format!(r#"{{"jsonrpc":"2.0","id":{},"#, msg.get("id")?);
    Some((prefix.into_bytes(), file))
}

/// Over HTTP, the whole answer `rawAnswers` gives `msg` (the server's memory is not
/// what the benchmarks measure there).
fn raw_answer_bytes(spec: &Value, msg: &Value) -> Option<Vec<u8>> {
    let (mut out, file) = raw_answer(spec, msg)?;
    out.extend(std::fs::read(file).expect("rawAnswers"));
    out.push(b'}');
    Some(out)
}

fn write_line(out: &mut impl Write, v: &Value) {
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

fn stdio(mut server: Server) {
    let spec = server.spec.clone();
    let mut stdout = std::io::stdout().lock();
    if flag(&spec, "garbageOnly") {
        for i in 0..50 {
            let _ = writeln!(stdout, "garbage line {i} <<<>>>");
        }
        let _ = stdout.flush();
        std::thread::sleep(Duration::from_secs(3600));
    }
    let stdin = std::io::stdin();
    let mut answered_initialize = false;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = msg.get("method").and_then(Value::as_str);
        match spec.get("crashOnFirstMessage").and_then(Value::as_str) {
            Some("abort") => std::process::abort(),
            Some("exception-group") => {
                // Python 3.11+: an ExceptionGroup (anyio's TaskGroup in the MCP SDKs).
                eprintln!("  + Exception Group Traceback (most recent call last):");
                eprintln!("  |   File \"server.py\", line 3, in <module>");
                eprintln!("  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)");
                eprintln!("  +-+---------------- 1 ----------------");
                eprintln!("    | KeyError: 'API_TOKEN'");
                eprintln!("    +------------------------------------");
                std::process::exit(1);
            }
            Some(_) => {
                eprintln!("Traceback (most recent call last):");
                eprintln!("  File \"server.py\", line 3, in <module>");
                eprintln!("KeyError: 'API_TOKEN'");
                std::process::exit(1);
            }
            None => {}
        }
        if flag(&spec, "initializeFirst") && !answered_initialize && method != Some("initialize") {
            // As rmcp 0.6 does: anything before `initialize` ends the connection.
            eprintln!("Error: ConnectionClosed(\"initialized request\")");
            std::process::exit(1);
        }
        if msg.get("id").is_some() && method.is_some() {
            if let Some(file) = spec.get("rawBefore").and_then(Value::as_str) {
                let mut f = std::fs::File::open(file).expect("rawBefore");
                let _ = std::io::copy(&mut f, &mut stdout);
                let _ = stdout.flush();
            }
        }
        if let Some((prefix, file)) = raw_answer(&spec, &msg) {
            let mut f = std::fs::File::open(file).expect("rawAnswers");
            let _ = stdout.write_all(&prefix);
            let _ = std::io::copy(&mut f, &mut stdout);
            let _ = stdout.write_all(b"}\n");
            let _ = stdout.flush();
            if method == Some("initialize") {
                answered_initialize = true;
            }
            continue;
        }
        if let Some(raw) = raw_tools_list(&spec, &msg) {
            let _ = stdout.write_all(&raw);
            let _ = stdout.write_all(b"\n");
            let _ = stdout.flush();
            continue;
        }
        for reply in server.handle(&msg) {
            if flag(&spec, "invalidUtf8") {
                let _ = stdout.write_all(b"\xff\xfe not utf-8\n");
            }
            write_line(&mut stdout, &reply);
        }
        if msg.get("method").and_then(Value::as_str) == Some("initialize") {
            answered_initialize = true;
        }
        if answered_initialize {
            if let Some(code) = spec.get("exitAfterInitialize").and_then(Value::as_i64) {
                std::process::exit(code as i32);
            }
        }
    }
}

fn http(server: Server, port: u16) {
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
    println!("listening on {}", listener.local_addr().unwrap().port());
    let _ = std::io::stdout().flush();
    let mut server = server;
    for stream in listener.incoming().flatten() {
        handle_http(&mut server, stream);
    }
}

fn handle_http(server: &mut Server, stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() || line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let spec = server.spec.clone();
    let respond = |stream: &mut TcpStream, status: &str, extra: &str, ctype: &str, body: &str| {
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
            body.len()
        );
    };
    if let Some(code) = spec.get("httpStatus").and_then(Value::as_u64) {
        return respond(
            &mut stream,
            &format!("{code} Scripted"),
            "",
            "text/plain",
            spec.get("httpBody")
                .and_then(Value::as_str)
                .unwrap_or("scripted failure"),
        );
    }
    if let Some(len) = spec.get("announceLength").and_then(Value::as_u64) {
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n{{}}"
        );
        return;
    }
    if flag(&spec, "redirectLoop") {
        return respond(
            &mut stream,
            "307 Temporary Redirect",
            "Location: /mcp\r\n",
            "text/plain",
            "",
        );
    }
    let method_line: Vec<&str> = request_line.split_whitespace().collect();
    if method_line.first() == Some(&"DELETE") {
        return respond(&mut stream, "200 OK", "", "text/plain", "");
    }
    // Record what the client sent, for tests that check headers.
    if let Some(log) = spec.get("headerLog").and_then(Value::as_str) {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let names: Vec<String> = headers.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(f, "{}", names.join(" | "));
        }
    }
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        return respond(&mut stream, "400 Bad Request", "", "text/plain", "not json");
    };
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if flag(&spec, "requireSession")
        && method != "initialize"
        && method != "server/discover"
        && header("mcp-session-id").as_deref() != Some("fixture-session")
    {
        return respond(&mut stream, "400 Bad Request", "", "application/json",
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}).to_string());
    }
    let before = spec
        .get("rawBefore")
        .and_then(Value::as_str)
        .filter(|_| msg.get("id").is_some() && !method.is_empty());
    let raw = raw_answer_bytes(&spec, &msg);
    if before.is_some() || raw.is_some() {
        // An event for each line of `rawBefore`, then the answer; or the answer alone.
        let answer = match raw {
            Some(raw) => Some(raw),
            None if method == "server/discover" && server.era() == "legacy" => None,
            None => Some(
                server
                    .handle(&msg)
                    .last()
                    .map(|r| r.to_string().into_bytes())
                    .unwrap_or_default(),
            ),
        };
        if let Some(answer) = answer {
            let mut body = Vec::new();
            let ctype = match before {
                Some(file) => {
                    let text = std::fs::read(file).expect("rawBefore");
                    for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                        body.extend_from_slice(b"data: ");
                        body.extend_from_slice(line);
                        body.extend_from_slice(b"\n\n");
                    }
                    body.extend_from_slice(b"data: ");
                    body.extend_from_slice(&answer);
                    body.extend_from_slice(b"\n\n");
                    "text/event-stream"
                }
                None => {
                    body = answer;
                    "application/json"
                }
            };
            let session = match method.as_str() {
                "initialize" => "Mcp-Session-Id: fixture-session\r\n",
                _ => "",
            };
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n{session}\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
            return;
        }
    }
    if method == "server/discover" && server.era() == "legacy" {
        // What the TypeScript SDK's stateful transport does with a request before initialize.
        return respond(&mut stream, "400 Bad Request", "", "application/json",
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: Server not initialized"}}).to_string());
    }
    if let Some(raw) = raw_tools_list(&spec, &msg) {
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            raw.len()
        );
        let _ = stream.write_all(&raw);
        return;
    }
    let replies = server.handle(&msg);
    if msg.get("id").is_none() || msg.get("method").is_none() {
        return respond(&mut stream, "202 Accepted", "", "text/plain", "");
    }
    let session = if method == "initialize" {
        "Mcp-Session-Id: fixture-session\r\n"
    } else {
        ""
    };
    if flag(&spec, "sseNeverData") {
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{session}\r\n"
        );
        for _ in 0..600 {
            if write!(stream, ": keep-alive\n\n").is_err() || stream.flush().is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        return;
    }
    if flag(&spec, "sse") {
        let mut text = String::from("id: 0\ndata:\n\n: a comment\n\n");
        text.push_str(&format!("event: message\ndata: {}\n\n", json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 0.5}})));
        for r in &replies {
            // Multi-line data: the JSON split over two data lines.
            let s = serde_json::to_string_pretty(r).unwrap();
            let (a, b) = s.split_at(s.find('\n').unwrap_or(s.len()));
            text.push_str(&format!(
                "event: message\nid: 1\ndata: {a}\ndata: {}\n\n",
                b.trim_start_matches('\n').replace('\n', " ")
            ));
        }
        return respond(&mut stream, "200 OK", session, "text/event-stream", &text);
    }
    let body = if replies.len() == 1 {
        replies[0].to_string()
    } else {
        Value::Array(replies).to_string()
    };
    respond(&mut stream, "200 OK", session, "application/json", &body);
}

/// Run `cmd`, write its peak RSS in KiB to `file`, exit with its code. From a process
/// of its own: a process forked from a large one (a test binary) starts out with that
/// one's peak, which wait4(2) would report as the child's.
fn peak_rss(file: &str, cmd: &[String]) -> ! {
    let child = std::process::Command::new(&cmd[0])
        .args(&cmd[1..])
        .spawn()
        .expect("spawn");
    let pid = child.id() as i32;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4(2) on our own child, writing an int and a rusage we own; the Child
    // is forgotten, never waited for again.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    std::mem::forget(child);
    std::fs::write(file, usage.ru_maxrss.to_string()).expect("peak RSS file");
    std::process::exit(match libc::WIFEXITED(status) {
        true => libc::WEXITSTATUS(status),
        false => 128,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--peak-rss") && args.len() > 3 {
        peak_rss(&args[2], &args[3..]);
    }
    if args.get(2).map(String::as_str) == Some("--sleep") {
        std::thread::sleep(Duration::from_secs(3600));
        return;
    }
    let spec: Value = match args.get(1) {
        Some(path) => serde_json::from_str(&std::fs::read_to_string(path).expect("read spec"))
            .expect("spec is JSON"),
        None => {
            json!({"tools": [{"name": "hello", "description": "Say hello", "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}]})
        }
    };
    if let Some(log) = spec.get("envLog").and_then(Value::as_str) {
        let names: Vec<String> = std::env::vars_os()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        let _ = std::fs::write(log, names.join("\n"));
    }
    if let Some(log) = spec.get("envValues").and_then(Value::as_str) {
        let pairs: Vec<String> = std::env::vars_os()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        let _ = std::fs::write(log, pairs.join("\n"));
    }
    if flag(&spec, "setsidGrandchild") {
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new(std::env::current_exe().expect("own path"));
        // SAFETY: setsid(2) is async-signal-safe and takes no pointers. Called before
        // exec, so the copy is out of our group once spawn() returns.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let _ = cmd
            .arg(&args[1])
            .arg("--sleep")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
    if flag(&spec, "grandchild") {
        // Inherits stdin, stdout and stderr: the pipes stay open after we exit.
        let _ = std::process::Command::new(std::env::current_exe().expect("own path"))
            .arg(&args[1])
            .arg("--sleep")
            .spawn();
    }
    for line in spec
        .get("stderr")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        eprintln!("{}", line.as_str().unwrap_or(""));
    }
    if let Some(ms) = spec.get("startDelayMs").and_then(Value::as_u64) {
        std::thread::sleep(Duration::from_millis(ms));
    }
    if let Some(code) = spec.get("exitAtStart").and_then(Value::as_i64) {
        std::process::exit(code as i32);
    }
    for line in spec
        .get("banner")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        println!("{}", line.as_str().unwrap_or(""));
    }
    let server = Server::new(spec);
    match (args.get(2).map(String::as_str), args.get(3)) {
        (Some("--http"), Some(port)) => http(server, port.parse().expect("port")),
        _ => stdio(server),
    }
}
