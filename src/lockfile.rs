//! The lockfile: what a server exposes, as committed JSON (README.md, "The lockfile").
//!
//! Reading is strict about shape (exit 2 with path and line/column) and lenient about
//! age (0.1.x files without `resourceTemplates` are fine). Writing is canonical and
//! atomic: the same surface always gives the same bytes, and a failed write never
//! leaves a truncated file behind.

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::canon::{self, Ctx};
use crate::error::{Error, Result};

pub const COVENANT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Element fields that are transport detail, not interface: never stored or compared.
const TRANSPORT_FIELDS: &[&str] = &["_meta", "ttlMs", "cacheScope", "resultType"];

/// The four kinds of element a server lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Tool,
    Resource,
    Template,
    Prompt,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Tool, Kind::Resource, Kind::Template, Kind::Prompt];

    /// The word used in subjects (`tool:NAME`) and rule tables (`element = "tool"`).
    pub fn word(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Template => "template",
            Kind::Prompt => "prompt",
        }
    }

    pub fn from_word(word: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.word() == word)
    }

    /// The field that identifies an element of this kind.
    pub fn key_field(self) -> &'static str {
        match self {
            Kind::Tool | Kind::Prompt => "name",
            Kind::Resource => "uri",
            Kind::Template => "uriTemplate",
        }
    }

    /// The key of this kind's list in `surface`.
    pub fn list_name(self) -> &'static str {
        match self {
            Kind::Tool => "tools",
            Kind::Resource => "resources",
            Kind::Template => "resourceTemplates",
            Kind::Prompt => "prompts",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerInfo {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default, rename = "protocolVersion")]
    pub protocol_version: Option<String>,
    /// What the server tells the model about itself (initialize result or
    /// `server/discover`); compared by the `server.instructions.*` rows.
    #[serde(default)]
    pub instructions: Option<String>,
}

pub type Element = Map<String, Value>;

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Surface {
    #[serde(default)]
    pub tools: Vec<Element>,
    #[serde(default)]
    pub resources: Vec<Element>,
    #[serde(default, rename = "resourceTemplates")]
    pub resource_templates: Vec<Element>,
    #[serde(default)]
    pub prompts: Vec<Element>,
}

impl Surface {
    pub fn list(&self, kind: Kind) -> &[Element] {
        match kind {
            Kind::Tool => &self.tools,
            Kind::Resource => &self.resources,
            Kind::Template => &self.resource_templates,
            Kind::Prompt => &self.prompts,
        }
    }

    fn list_mut(&mut self, kind: Kind) -> &mut Vec<Element> {
        match kind {
            Kind::Tool => &mut self.tools,
            Kind::Resource => &mut self.resources,
            Kind::Template => &mut self.resource_templates,
            Kind::Prompt => &mut self.prompts,
        }
    }

    /// Put the surface in canonical form: transport fields dropped, order-free arrays
    /// sorted, elements sorted by key. Two captures of the same interface normalize equal.
    pub fn normalize(&mut self) {
        for kind in Kind::ALL {
            let list = self.list_mut(kind);
            for element in list.iter_mut() {
                normalize_element(element);
            }
            let key = kind.key_field();
            list.sort_by(|a, b| key_of(a, key).cmp(key_of(b, key)));
        }
    }

    pub fn len(&self) -> usize {
        Kind::ALL.iter().map(|k| self.list(*k).len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub fn key_of<'a>(element: &'a Element, key_field: &str) -> &'a str {
    element
        .get(key_field)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub(crate) fn normalize_element(element: &mut Element) {
    for field in TRANSPORT_FIELDS {
        element.remove(*field);
    }
    for field in ["inputSchema", "outputSchema"] {
        if let Some(schema) = element.get_mut(field) {
            normalize_schema(schema);
        }
    }
    if let Some(Value::Array(args)) = element.get_mut("arguments") {
        for arg in args.iter_mut() {
            if let Value::Object(arg) = arg {
                for field in TRANSPORT_FIELDS {
                    arg.remove(*field);
                }
            }
        }
        args.sort_by(|a, b| {
            let name = |v: &Value| {
                v.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            name(a).cmp(&name(b))
        });
    }
}

/// Sort the arrays of a schema whose order carries no meaning (`required`, `type`).
/// Iterative, so a hostile nesting depth cannot overflow the stack.
fn normalize_schema(schema: &mut Value) {
    let mut stack: Vec<&mut Value> = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    match (key.as_str(), &mut *child) {
                        ("required" | "type", Value::Array(items))
                            if items.iter().all(Value::is_string) =>
                        {
                            items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                            items.dedup();
                        }
                        // Data, not schema: leave untouched.
                        ("enum" | "const" | "default" | "examples", _) => {}
                        _ => stack.push(child),
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    pub covenant_version: String,
    pub captured_at_unix: u64,
    #[serde(default)]
    pub server: ServerInfo,
    pub surface: Surface,
}

impl Lockfile {
    pub fn new(server: ServerInfo, mut surface: Surface, captured_at_unix: u64) -> Lockfile {
        surface.normalize();
        Lockfile {
            covenant_version: COVENANT_VERSION.to_string(),
            captured_at_unix,
            server,
            surface,
        }
    }

    /// Parse lockfile text; `origin` names the file in error messages.
    pub fn parse(text: &[u8], origin: &str) -> Result<Lockfile> {
        Lockfile::parse_with(text, origin, true)
    }

    /// [`Lockfile::parse`] for `lint`: duplicate names are findings there, not errors.
    pub fn parse_lenient(text: &[u8], origin: &str) -> Result<Lockfile> {
        Lockfile::parse_with(text, origin, false)
    }

    /// Read a lockfile for `lint`: duplicate names are findings there, not errors.
    pub fn read_lenient(path: &Path) -> Result<Lockfile> {
        let text = read_input(path, "lockfile")?;
        Lockfile::parse_with(&text, &path.display().to_string(), false)
    }

    fn parse_with(text: &[u8], origin: &str, unique: bool) -> Result<Lockfile> {
        let mut lock: Lockfile =
            serde_json::from_slice(text).map_err(|e| position_error(origin, &e))?;
        check_version(&lock.covenant_version, origin)?;
        lock.validate(origin, unique)?;
        lock.surface.normalize();
        Ok(lock)
    }

    pub fn read(path: &Path) -> Result<Lockfile> {
        let text = read_input(path, "lockfile")?;
        Lockfile::parse(&text, &path.display().to_string())
    }

    /// Every element is an object with a string key, and keys are unique per kind
    /// (`unique`); see [`check_element`], which the offline fast path shares.
    fn validate(&self, origin: &str, unique: bool) -> Result<()> {
        for kind in Kind::ALL {
            let mut seen = HashSet::new();
            for (i, element) in self.surface.list(kind).iter().enumerate() {
                let args = match element.get("arguments") {
                    None | Some(Value::Null) => Arguments::Absent,
                    Some(Value::Array(args)) => Arguments::Names(
                        args.iter()
                            .map(|a| a.get("name").is_some_and(Value::is_string))
                            .collect(),
                    ),
                    Some(_) => Arguments::NotArray,
                };
                let shape = Shape {
                    key: element.get(kind.key_field()),
                    input_schema: element.get("inputSchema").map(json_kind),
                    output_schema: element.get("outputSchema").map(json_kind),
                    arguments: args,
                };
                check_element(origin, kind, i, &shape, &mut seen, unique)?;
            }
        }
        Ok(())
    }

    /// The canonical text of this lockfile (written field by field: no copy of the
    /// surface is made).
    pub fn to_text(&self) -> String {
        self.render(None)
    }

    /// Where each element (and each value inside it) sits in the canonical text.
    pub fn line_map(&self) -> LineMap {
        self.line_map_for(None).0
    }

    /// `line_map`, tracking the values inside only the elements in `wanted` (every
    /// element's own lines are always there), and the canonical text it counted.
    pub fn line_map_for(&self, wanted: Option<&HashSet<(Kind, String)>>) -> (LineMap, String) {
        let mut map = LineMap::default();
        let text = self.render(Some((&mut map, wanted)));
        (map, text)
    }

    #[allow(clippy::type_complexity)]
    fn render(
        &self,
        mut lines: Option<(&mut LineMap, Option<&HashSet<(Kind, String)>>)>,
    ) -> String {
        let mut out = String::with_capacity(1 << 16);
        out.push_str("{\n");
        canon::indent(&mut out, 1);
        canon::write_key(&mut out, "covenant_version");
        canon::write_value(
            &mut out,
            &Value::String(self.covenant_version.clone()),
            Ctx::Plain,
            1,
        );
        out.push_str(",\n");
        canon::indent(&mut out, 1);
        canon::write_key(&mut out, "captured_at_unix");
        out.push_str(&self.captured_at_unix.to_string());
        out.push_str(",\n");
        canon::indent(&mut out, 1);
        canon::write_key(&mut out, "server");
        canon::write_object(&mut out, &self.server_map(), Ctx::Plain, 1);
        out.push_str(",\n");
        canon::indent(&mut out, 1);
        canon::write_key(&mut out, "surface");
        out.push_str("{\n");
        let mut line = 0usize;
        let mut counted = 0usize;
        let mut line_now = |out: &str| {
            line += out.as_bytes()[counted..]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            counted = out.len();
            line + 1
        };
        for (k, kind) in Kind::ALL.into_iter().enumerate() {
            canon::indent(&mut out, 2);
            if let Some((m, _)) = lines.as_mut() {
                m.lists.insert(kind, line_now(&out));
            }
            canon::write_key(&mut out, kind.list_name());
            let list = self.surface.list(kind);
            if list.is_empty() {
                out.push_str("[]");
            } else {
                out.push_str("[\n");
                for (i, element) in list.iter().enumerate() {
                    canon::indent(&mut out, 3);
                    match lines.as_mut() {
                        Some((m, wanted)) => {
                            let start = line_now(&out);
                            let key = (kind, key_of(element, kind.key_field()).to_string());
                            let spans = if wanted.is_none_or(|w| w.contains(&key)) {
                                let mut track = canon::Track::at(&out, start);
                                canon::write_object_tracked(
                                    &mut out,
                                    element,
                                    Ctx::Element,
                                    3,
                                    Some(&mut track),
                                );
                                track.spans
                            } else {
                                canon::write_object(&mut out, element, Ctx::Element, 3);
                                Default::default()
                            };
                            let end = line_now(&out);
                            m.elements.insert(key, (start, end, spans));
                        }
                        None => canon::write_object(&mut out, element, Ctx::Element, 3),
                    }
                    out.push_str(if i + 1 == list.len() { "\n" } else { ",\n" });
                }
                canon::indent(&mut out, 2);
                out.push(']');
            }
            out.push_str(if k + 1 == Kind::ALL.len() {
                "\n"
            } else {
                ",\n"
            });
        }
        canon::indent(&mut out, 1);
        out.push_str("}\n}\n");
        out
    }

    fn server_map(&self) -> Map<String, Value> {
        let mut server = Map::new();
        server.insert("name".into(), Value::String(self.server.name.clone()));
        let optional = [
            ("title", &self.server.title),
            ("version", &self.server.version),
            ("protocolVersion", &self.server.protocol_version),
            ("instructions", &self.server.instructions),
        ];
        for (key, value) in optional {
            if let Some(v) = value {
                server.insert(key.into(), Value::String(v.clone()));
            }
        }
        server
    }

    /// Write to `path` atomically. When `path` already holds a lockfile with the same
    /// surface and server, its `captured_at_unix` is kept so the bytes do not change.
    ///
    /// Never writes what `check` would refuse to read: the surface goes through the
    /// same validation as reading (a duplicate or non-string name, a schema that is not
    /// an object or a boolean, arguments without a string name are exit 2 naming the
    /// element), and nothing nests deeper than a reader accepts.
    pub fn write(&mut self, path: &Path) -> Result<()> {
        let origin = format!("not writing {}: the server's surface", path.display());
        self.validate(&origin, true)?;
        let old = read_input(path, "lockfile").ok();
        if let Some(old) = &old {
            // Fast: the old file, if canonical, is exactly our text with its own time.
            if let Some(at) = captured_at_of(old) {
                let fresh = std::mem::replace(&mut self.captured_at_unix, at);
                let text = self.to_text();
                if text.as_bytes() == old.as_slice() {
                    return Ok(()); // byte-identical already: nothing to write
                }
                self.captured_at_unix = fresh;
            }
            // Slow: a hand-edited or older-format file with the same interface.
            if let Ok(previous) = Lockfile::parse(old, "") {
                if previous.surface == self.surface && previous.server == self.server {
                    self.captured_at_unix = previous.captured_at_unix;
                }
            }
        }
        let text = self.to_text();
        let depth = max_depth(text.as_bytes());
        if depth > MAX_DEPTH {
            return Err(Error::new(format!(
                "{origin}: it nests {depth} levels deep, more than the {MAX_DEPTH} a lockfile reader accepts"
            )));
        }
        write_atomic(path, text.as_bytes())
    }
}

/// The deepest nesting serde_json reads (its recursion limit).
pub(crate) const MAX_DEPTH: usize = 127;

/// How deep arrays and objects nest in JSON text (strings skipped). It reads every byte
/// of both lockfiles of an offline check, so it skips eight bytes at a time while none
/// of them can matter (a byte loop here cost a third of the check).
pub(crate) fn max_depth(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A high bit in every byte of `w` equal to `b`; exact up to the first match.
    let has = |w: u64, b: u8| {
        let x = w ^ (ONES * u64::from(b));
        x.wrapping_sub(ONES) & !x & HIGH
    };
    let (mut depth, mut max, mut i, mut in_string) = (0usize, 0usize, 0usize, false);
    while i < bytes.len() {
        while let Some(chunk) = bytes.get(i..i + 8) {
            let w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            let hits = if in_string {
                has(w, b'"') | has(w, b'\\')
            } else {
                has(w, b'"') | has(w, b'[') | has(w, b']') | has(w, b'{') | has(w, b'}')
            };
            if hits == 0 {
                i += 8;
            } else {
                i += (hits.trailing_zeros() / 8) as usize;
                break;
            }
        }
        let Some(&b) = bytes.get(i) else { break };
        match (in_string, b) {
            (true, b'\\') => i += 1, // the escaped byte is skipped too
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                max = max.max(depth);
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// The first character of a JSON value's text: `{`, `[`, `"`, `t`, `f`, `n` or `0`
/// for a number. What validation needs to know of a field it does not read.
pub(crate) fn json_kind(v: &Value) -> char {
    match v {
        Value::Null => 'n',
        Value::Bool(true) => 't',
        Value::Bool(false) => 'f',
        Value::Number(_) => '0',
        Value::String(_) => '"',
        Value::Array(_) => '[',
        Value::Object(_) => '{',
    }
}

/// An element's `arguments`, as validation sees them.
pub(crate) enum Arguments {
    Absent,
    NotArray,
    /// Per argument: whether it has a string `name`.
    Names(Vec<bool>),
}

/// What validation reads of an element, from a built element or from raw text.
pub(crate) struct Shape<'a> {
    pub key: Option<&'a Value>,
    pub input_schema: Option<char>,
    pub output_schema: Option<char>,
    pub arguments: Arguments,
}

/// The one validation of an element, for every path that reads a lockfile (the full
/// reader and the offline fast path), so they refuse the same files with the same
/// message.
pub(crate) fn check_element<'a>(
    origin: &str,
    kind: Kind,
    i: usize,
    shape: &Shape<'a>,
    seen: &mut HashSet<&'a str>,
    unique: bool,
) -> Result<()> {
    let key = kind.key_field();
    let where_ = || format!("{origin}: surface.{}[{i}]", kind.list_name());
    match shape.key {
        Some(Value::String(k)) => {
            if !seen.insert(k.as_str()) && unique {
                return Err(Error::new(format!(
                    "{}: duplicate {} `{k}`",
                    where_(),
                    kind.word()
                )));
            }
        }
        Some(_) => {
            return Err(Error::new(format!(
                "{}: `{key}` must be a string",
                where_()
            )))
        }
        None => return Err(Error::new(format!("{}: missing `{key}`", where_()))),
    }
    for (field, k) in [
        ("inputSchema", shape.input_schema),
        ("outputSchema", shape.output_schema),
    ] {
        if !matches!(k, None | Some('{' | 't' | 'f')) {
            return Err(Error::new(format!(
                "{}: `{field}` must be a JSON Schema object",
                where_()
            )));
        }
    }
    match &shape.arguments {
        Arguments::Absent => {}
        Arguments::NotArray => {
            return Err(Error::new(format!(
                "{}: `arguments` must be an array",
                where_()
            )))
        }
        Arguments::Names(names) => {
            if let Some(j) = names.iter().position(|ok| !ok) {
                return Err(Error::new(format!(
                    "{}.arguments[{j}]: missing string `name`",
                    where_()
                )));
            }
        }
    }
    Ok(())
}

/// Lines (1-based, inclusive) of the elements of a lockfile's canonical text.
#[derive(Debug, Default)]
pub struct LineMap {
    /// The line of each kind's list (`"tools": [`).
    pub lists: std::collections::HashMap<Kind, usize>,
    /// Each element's lines, and the lines of every value inside it by path.
    #[allow(clippy::type_complexity)]
    pub elements: std::collections::HashMap<
        (Kind, String),
        (
            usize,
            usize,
            std::collections::HashMap<String, (usize, usize)>,
        ),
    >,
}

impl LineMap {
    /// The lines of `path` in element `key`, or of its deepest part that exists here,
    /// or of the element itself. `None` when the element is not in this file.
    pub fn find(&self, kind: Kind, key: &str, path: Option<&str>) -> Option<(usize, usize)> {
        let (start, end, spans) = self.elements.get(&(kind, key.to_string()))?;
        if let Some(path) = path {
            for cut in prefixes(path).into_iter().rev() {
                if let Some(span) = spans.get(&path[..cut]) {
                    return Some(*span);
                }
            }
        }
        Some((*start, *end))
    }
}

/// The byte offsets where each segment of a change path ends
/// (`a.b["c.d"][2]` → ends of `a`, `a.b`, `a.b["c.d"]`, `a.b["c.d"][2]`).
fn prefixes(path: &str) -> Vec<usize> {
    let bytes = path.as_bytes();
    let mut ends = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'.' => i += 1,
            b'[' => {
                i += 1;
                if bytes.get(i) == Some(&b'"') {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                while i < bytes.len() && bytes[i] != b']' {
                    i += 1;
                }
                i = (i + 1).min(bytes.len());
                ends.push(i);
            }
            _ => {
                while i < bytes.len() && bytes[i] != b'.' && bytes[i] != b'[' {
                    i += 1;
                }
                ends.push(i);
            }
        }
    }
    ends
}

/// The `captured_at_unix` of lockfile bytes, read without building the surface.
fn captured_at_of(bytes: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        captured_at_unix: u64,
        #[allow(dead_code)]
        #[serde(borrow)]
        surface: &'a serde_json::value::RawValue,
    }
    serde_json::from_slice::<Envelope<'_>>(bytes)
        .ok()
        .map(|e| e.captured_at_unix)
}

/// The capture time: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now.
pub fn capture_time() -> Result<u64> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => v.trim().parse::<u64>().map_err(|_| {
            Error::new(format!(
                "SOURCE_DATE_EPOCH must be a whole number of seconds, not `{v}`"
            ))
        }),
        Err(_) => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)),
    }
}

/// `file:line:column: not a valid lockfile: ...` for a parse error.
pub(crate) fn position_error(origin: &str, e: &serde_json::Error) -> Error {
    Error::new(format!(
        "{origin}:{}:{}: not a valid lockfile: {}",
        e.line(),
        e.column(),
        strip_position(&e.to_string())
    ))
}

/// Refuse files written by a newer mcp-covenant than this one (a newer minor may
/// record things we would silently misread).
pub(crate) fn check_version(version: &str, origin: &str) -> Result<()> {
    let parse = |v: &str| -> Option<(u64, u64)> {
        let mut it = v.split('.');
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    };
    let ours = parse(COVENANT_VERSION).unwrap_or((0, 0));
    match parse(version) {
        Some(theirs) if theirs <= ours => Ok(()),
        Some(_) => Err(Error::new(format!(
            "{origin}: written by mcp-covenant {version}, newer than this {COVENANT_VERSION}; upgrade mcp-covenant to read it"
        ))),
        None => Err(Error::new(format!(
            "{origin}: `covenant_version` is `{version}`, expected a version like {COVENANT_VERSION}"
        ))),
    }
}

/// serde_json appends " at line L column C"; we print the position up front instead.
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

/// The largest file read as a lockfile (or config): a mistaken or hostile path such as
/// `/dev/zero` or a huge file fails at once instead of reading until memory runs out.
pub const MAX_READ_BYTES: u64 = 256 << 20;

/// What kind of file `meta` is, for "not a regular file" messages.
fn kind_of(meta: &fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Read an input file (`what` names it in messages: "lockfile", "config"): it must be a
/// regular file (a symlink to one is fine) of at most [`MAX_READ_BYTES`]. A FIFO, a
/// device or a directory is refused before it is opened, so nothing blocks or reads
/// forever.
pub fn read_input(path: &Path, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let fail = |m: String| Error::new(format!("cannot read {what} {}: {m}", path.display()));
    let check = |meta: &fs::Metadata| -> Result<()> {
        if !meta.is_file() {
            return Err(fail(format!("it is {}, not a regular file", kind_of(meta))));
        }
        if meta.len() > MAX_READ_BYTES {
            return Err(fail(format!(
                "it is {} bytes, over the {} MiB mcp-covenant reads",
                meta.len(),
                MAX_READ_BYTES >> 20
            )));
        }
        Ok(())
    };
    check(&fs::metadata(path).map_err(|e| fail(e.to_string()))?)?;
    let file = fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    // Checked again on the open file: the path may have been swapped meanwhile.
    let meta = file.metadata().map_err(|e| fail(e.to_string()))?;
    check(&meta)?;
    INPUTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((path.to_path_buf(), meta));
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(fail(format!(
            "it grew past the {} MiB mcp-covenant reads",
            MAX_READ_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// Every file [`read_input`] read in this process: a report is never written over one.
static INPUTS: std::sync::Mutex<Vec<(PathBuf, fs::Metadata)>> = std::sync::Mutex::new(Vec::new());

/// Write a report (`--output`): [`write_atomic`], refused when `path` is a file this
/// command read (the baseline, `--against`, `--from`, whatever path or link reached
/// it), which the report would otherwise replace.
pub fn write_report(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Ok(out) = fs::metadata(path) {
        let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((input, _)) = inputs.iter().find(|(_, m)| same_file(&out, m)) {
            return Err(Error::new(format!(
                "--output {} is the lockfile {}, which this command reads; write the report to another file",
                path.display(),
                input.display()
            )));
        }
    }
    write_atomic(path, bytes)
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    false
}

/// The file a write to `path` lands in: symlinks followed to their final target (which
/// may not exist yet). A path that is or passes through `/dev` or `/proc` (`/dev/stdout`,
/// `/proc/self/fd/1`) is refused: an output is always a regular file.
fn write_target(path: &Path) -> Result<PathBuf> {
    let special = |p: &Path| {
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        abs.starts_with("/dev") || abs.starts_with("/proc")
    };
    let refuse = || {
        Error::new(format!(
            "cannot write {}: it is a device or a process file, not a regular file; outputs are always regular files (without -o/--output a report goes to stdout)",
            path.display()
        ))
    };
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if special(&p) {
            return Err(refuse());
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p)
                    .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::new(format!(
        "cannot write {}: too many levels of symbolic links",
        path.display()
    )))
}

/// A name nobody can guess ahead of time (the temporary file's).
fn unpredictable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState's keys come from the operating system's random source.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.finish()
}

/// Write via a temporary file in the same directory and a rename, so readers see the
/// old content or the new, never a torn file.
///
/// The write cannot be turned against the user: the temporary file is created
/// exclusively under an unpredictable name (a planted file or symlink there is never
/// followed or truncated); a symlinked `path` is written to its target; a target that
/// exists and is not a regular file (a device, a FIFO, a directory, `/dev/stdout`) is
/// refused; the old file's permissions are kept.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let fail = |e: std::io::Error| Error::new(format!("cannot write {}: {e}", path.display()));
    let target = write_target(path)?;
    let mode = match fs::symlink_metadata(&target) {
        Ok(m) if m.is_file() => Some(m.permissions()),
        Ok(m) => {
            return Err(Error::new(format!(
                "cannot write {}: it is {}, not a regular file; outputs are always regular files",
                path.display(),
                kind_of(&m)
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(fail(e)),
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let (tmp, mut file) = {
        let mut attempt = 0;
        loop {
            let tmp = dir.join(format!(".{name}.{:016x}.tmp", unpredictable()));
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(f) => break (tmp, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => {
                    attempt += 1;
                }
                Err(e) => return Err(fail(e)),
            }
        }
    };
    let result = (|| -> std::io::Result<()> {
        if let Some(mode) = mode {
            file.set_permissions(mode)?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &target)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(fail(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn max_depth_skips_strings_and_escapes_and_never_panics() {
        use super::max_depth;
        // The plain byte loop it replaced, as the reference.
        fn slow(bytes: &[u8]) -> usize {
            let (mut d, mut m, mut s, mut e) = (0usize, 0usize, false, false);
            for &b in bytes {
                if s {
                    if e {
                        e = false;
                    } else if b == b'\\' {
                        e = true;
                    } else if b == b'"' {
                        s = false;
                    }
                    continue;
                }
                match b {
                    b'"' => s = true,
                    b'[' | b'{' => {
                        d += 1;
                        m = m.max(d);
                    }
                    b']' | b'}' => d = d.saturating_sub(1),
                    _ => {}
                }
            }
            m
        }
        let alphabet = [b'"', b'\\', b'[', b']', b'{', b'}', b'a', b' '];
        let mut x: u64 = 0x9e37_79b9;
        for _ in 0..20_000 {
            let n = (x % 64) as usize;
            let mut text = Vec::with_capacity(n);
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            assert_eq!(
                max_depth(&text),
                slow(&text),
                "{:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    use super::*;

    const MINIMAL: &str = r#"{"covenant_version":"0.1.1","captured_at_unix":5,
        "server":{"name":"s"},"surface":{"tools":[{"name":"b","inputSchema":{}},{"name":"a","inputSchema":{"type":"object","required":["y","x"]}}],
        "resources":[],"prompts":[]}}"#;

    #[test]
    fn reads_0_1_files_without_templates_and_sorts() {
        let lock = Lockfile::parse(MINIMAL.as_bytes(), "t.lock").unwrap();
        assert_eq!(lock.surface.tools[0]["name"], "a");
        assert_eq!(
            lock.surface.tools[0]["inputSchema"]["required"],
            serde_json::json!(["x", "y"])
        );
        assert!(lock.surface.resource_templates.is_empty());
    }

    #[test]
    fn text_round_trips_byte_identically() {
        let lock = Lockfile::parse(MINIMAL.as_bytes(), "t.lock").unwrap();
        let text = lock.to_text();
        let again = Lockfile::parse(text.as_bytes(), "t.lock").unwrap();
        assert_eq!(again.to_text(), text);
        assert!(text.ends_with("}\n"));
        assert!(text.contains("\n  \"captured_at_unix\": 5,\n"));
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let err = Lockfile::parse(b"{\n  \"covenant_version\": \"0.1.1\",\n  oops", "x.lock")
            .unwrap_err();
        assert!(
            err.message()
                .starts_with("x.lock:3:3: not a valid lockfile"),
            "{err}"
        );
    }

    #[test]
    fn shape_errors_name_the_element() {
        let text = r#"{"covenant_version":"0.1.1","captured_at_unix":0,"surface":{"tools":[{"title":"x"}]}}"#;
        let err = Lockfile::parse(text.as_bytes(), "x.lock").unwrap_err();
        assert_eq!(err.message(), "x.lock: surface.tools[0]: missing `name`");
    }

    #[test]
    fn line_map_finds_elements_and_the_deepest_existing_part_of_a_path() {
        let text = r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"tools":[
            {"name":"a","inputSchema":{"type":"object","properties":{"x.y":{"type":"string"},"k":{"anyOf":[{"type":"string"},{"type":"null"}]}}}}],
            "prompts":[{"name":"p","arguments":[{"name":"topic","required":true}]}]}}"#;
        let lock = Lockfile::parse(text.as_bytes(), "t").unwrap();
        let canonical = lock.to_text();
        let lines: Vec<&str> = canonical.lines().collect();
        let map = lock.line_map();
        let at = |kind, key, path| map.find(kind, key, path).unwrap();
        let (s, e) = at(Kind::Tool, "a", None);
        assert!(lines[s - 1].trim() == "{" && lines[s].contains("\"name\": \"a\""));
        assert!(lines[e - 1].trim().starts_with('}'));
        let (s, _) = at(Kind::Tool, "a", Some("inputSchema.properties[\"x.y\"]"));
        assert!(lines[s - 1].contains("\"x.y\""), "{}", lines[s - 1]);
        let (s, _) = at(Kind::Tool, "a", Some("inputSchema.properties.k.anyOf[1]"));
        assert!(lines[s].contains("null"), "{}", lines[s]);
        let (s, _) = at(Kind::Tool, "a", Some("inputSchema.properties.missing"));
        assert!(
            lines[s - 1].contains("\"properties\""),
            "falls back to the deepest part: {}",
            lines[s - 1]
        );
        let (s, _) = at(Kind::Prompt, "p", Some("arguments.topic"));
        assert!(lines[s].contains("topic"), "{}", lines[s]);
        assert!(map.find(Kind::Tool, "nope", None).is_none());
        assert!(lines[map.lists[&Kind::Prompt] - 1].contains("\"prompts\""));
        assert_eq!(lock.to_text(), canonical);
    }

    #[test]
    fn future_versions_are_refused() {
        let text = r#"{"covenant_version":"9.0.0","captured_at_unix":0,"surface":{}}"#;
        let err = Lockfile::parse(text.as_bytes(), "x.lock").unwrap_err();
        assert!(err.message().contains("upgrade mcp-covenant"), "{err}");
    }

    #[test]
    fn transport_fields_are_dropped() {
        let text = r#"{"covenant_version":"0.1.1","captured_at_unix":0,"surface":{"tools":[{"name":"a","_meta":{"x":1},"ttlMs":5}]}}"#;
        let lock = Lockfile::parse(text.as_bytes(), "x.lock").unwrap();
        assert_eq!(lock.surface.tools[0].len(), 1);
    }
}
