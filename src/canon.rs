//! Canonical JSON text: 2-space indent, a fixed key order, trailing newline.
//!
//! serde_json's own pretty printer emits keys in map order, which is alphabetical
//! (BTreeMap) and puts `additionalProperties` before `type`. A lockfile is read by
//! people in code review, so we order keys the way a person writes a schema (`name`,
//! `description`, `inputSchema`; `type`, `properties`, `required`) and sort the rest.
//! Maps whose keys are names (`properties`, `$defs`) are sorted by name.

use serde_json::{Map, Value};

use crate::elements::{self, Form};
use crate::keywords::{self, Holds, Role};
use crate::path::Step;

/// Where in the document a JSON object sits: it decides the order of its keys.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ctx {
    /// The lockfile envelope and other plain objects: alphabetical, unless listed.
    Plain,
    /// A surface element (tool, resource, template, prompt, prompt argument).
    Element,
    /// A JSON Schema.
    Schema,
    /// A map from names to schemas (`properties`, `$defs`, ...).
    NameMap,
    /// A JSON value inside a schema (`enum`, `const`, `default`): sorted keys.
    Data,
}

/// The order of the envelope's keys, then the server's fields and the lists
/// (rules/elements.toml).
fn envelope_order() -> &'static [&'static str] {
    static ORDER: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ORDER.get_or_init(|| {
        let table = elements::table();
        let envelope = ["covenant_version", "captured_at_unix", "server", "surface"];
        let server = table.server.iter().map(|f| f.field.as_str());
        let lists = table.elements.iter().map(|e| e.list.as_str());
        envelope.into_iter().chain(server).chain(lists).collect()
    })
}

const SCHEMA_ORDER: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "title",
    "description",
    "type",
    "enum",
    "const",
    "default",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
];

/// The order of an element's keys (rules/elements.toml).
fn element_order() -> &'static [&'static str] {
    static ORDER: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ORDER.get_or_init(|| {
        elements::table()
            .fields
            .order
            .iter()
            .map(String::as_str)
            .collect()
    })
}

/// How an element field holds a schema, for any kind that has it as one.
fn schema_form(field: &str) -> Option<Form> {
    elements::table()
        .elements
        .iter()
        .flat_map(|e| &e.schema)
        .find(|s| s.field == field)
        .map(|s| s.form)
}

pub(crate) fn order_for(ctx: Ctx) -> &'static [&'static str] {
    match ctx {
        Ctx::Plain => envelope_order(),
        Ctx::Element => element_order(),
        Ctx::Schema => SCHEMA_ORDER,
        Ctx::NameMap | Ctx::Data => &[],
    }
}

/// The context of the value stored under `key` in an object of context `parent`.
pub(crate) fn child_ctx(parent: Ctx, key: &str) -> Ctx {
    match parent {
        // What an element's field holds comes from rules/elements.toml.
        Ctx::Plain if elements::table().elements.iter().any(|e| e.list == key) => Ctx::Element,
        Ctx::Plain => Ctx::Plain,
        Ctx::Element => match schema_form(key) {
            Some(Form::Schema) => Ctx::Schema,
            Some(Form::Arguments) => Ctx::Element,
            None => Ctx::Data,
        },
        // What a schema keyword holds comes from the vocabulary (rules/keywords.toml):
        // maps of named subschemas, instance data or names, or schemas.
        Ctx::Schema => match keywords::get(key) {
            Some(k) if k.role == Role::Definitions || k.holds == Some(Holds::Map) => Ctx::NameMap,
            Some(k) if k.data || k.names => Ctx::Data,
            _ => Ctx::Schema,
        },
        Ctx::NameMap => Ctx::Schema,
        Ctx::Data => Ctx::Data,
    }
}

fn sorted_keys(map: &Map<String, Value>, ctx: Ctx) -> Vec<&String> {
    let order = order_for(ctx);
    let mut keys: Vec<(usize, &String)> = map
        .keys()
        .map(|k| (order.iter().position(|o| o == k).unwrap_or(usize::MAX), k))
        .collect();
    keys.sort_unstable();
    keys.into_iter().map(|(_, k)| k).collect()
}

pub(crate) fn write_scalar(out: &mut String, value: &Value) {
    match value {
        Value::String(text) => write_json_string(out, text),
        Value::Number(n) => {
            use std::fmt::Write as _;
            let _ = write!(out, "{n}");
        }
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        _ => out.push_str("null"),
    }
}

/// A JSON string literal, as serde_json escapes it (its own writer).
pub(crate) fn write_json_string(out: &mut String, text: &str) {
    // Writing to a String cannot fail: the escaper writes whole UTF-8 pieces.
    let _ = serde_json::to_writer(Sink(out), text);
}

/// `io::Write` onto a `String`: serde_json's escaper writes the unescaped runs of the
/// text (split only before ASCII bytes) and ASCII escapes, each valid UTF-8.
struct Sink<'a>(&'a mut String);

impl std::io::Write for Sink<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        self.0.push_str(text);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Records the lines each value spans while a document is written, keyed by its path
/// from where tracking started (`inputSchema.properties.limit`, `anyOf[1]`,
/// `arguments.NAME` for prompt arguments), for SARIF and GitHub annotations: every
/// value's, or only those of the paths asked for ([`Track::only`]).
#[derive(Default)]
pub struct Track {
    counted: usize,
    line: usize,
    /// The path of the value being written (one buffer, cut back on leaving).
    path: String,
    /// The paths to record, when not all: a value elsewhere is written untracked, with
    /// everything inside it.
    only: Option<std::collections::HashSet<String>>,
    pub spans: std::collections::HashMap<String, (usize, usize)>,
}

impl Track {
    /// Start tracking in `out`, whose current line is `line` (1-based).
    pub fn at(out: &str, line: usize) -> Track {
        Track {
            counted: out.len(),
            line,
            ..Track::default()
        }
    }

    /// [`Track::at`], recording only the values at `paths` (each path's every prefix
    /// must be there too: a value is looked into only when its own path is).
    pub fn only(out: &str, line: usize, paths: std::collections::HashSet<String>) -> Track {
        Track {
            only: Some(paths),
            ..Track::at(out, line)
        }
    }

    /// The 1-based line the end of `out` is on.
    pub fn line_now(&mut self, out: &str) -> usize {
        self.line += memchr::memchr_iter(b'\n', &out.as_bytes()[self.counted..]).count();
        self.counted = out.len();
        self.line
    }

    /// Step into a value: its path's length before the step and its first line, or
    /// `None` when it is not recorded (the path is as it was).
    fn enter(&mut self, step: Step<'_>, out: &str) -> Option<(usize, usize)> {
        let saved = self.path.len();
        crate::path::append(&mut self.path, step);
        if self.only.as_ref().is_some_and(|o| !o.contains(&self.path)) {
            self.path.truncate(saved);
            return None;
        }
        Some((saved, self.line_now(out)))
    }

    fn leave(&mut self, (saved, start): (usize, usize), out: &str) {
        let end = self.line_now(out);
        self.spans.insert(self.path.clone(), (start, end));
        self.path.truncate(saved);
    }
}

/// Write `map` as a canonical object whose opening brace is at nesting `level`.
pub fn write_object(out: &mut String, map: &Map<String, Value>, ctx: Ctx, level: usize) {
    write_object_tracked(out, map, ctx, level, None);
}

/// `write_object`, recording the lines of every value inside in `track`.
pub fn write_object_tracked(
    out: &mut String,
    map: &Map<String, Value>,
    ctx: Ctx,
    level: usize,
    mut track: Option<&mut Track>,
) {
    if map.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    let keys = sorted_keys(map, ctx);
    let last = keys.len() - 1;
    for (i, key) in keys.into_iter().enumerate() {
        indent(out, level + 1);
        write_key(out, key);
        let value = &map[key];
        let child = child_ctx(ctx, key);
        match track.as_deref_mut() {
            Some(t) => match t.enter(Step::Name(key), out) {
                Some(at) => {
                    let named = ctx == Ctx::Element && schema_form(key) == Some(Form::Arguments);
                    write_tracked(out, value, child, level + 1, Some(&mut *t), named);
                    t.leave(at, out);
                }
                None => write_tracked(out, value, child, level + 1, None, false),
            },
            None => write_tracked(out, value, child, level + 1, None, false),
        }
        if i != last {
            out.push(',');
        }
        out.push('\n');
    }
    indent(out, level);
    out.push('}');
}

/// `"key": `
pub fn write_key(out: &mut String, key: &str) {
    write_json_string(out, key);
    out.push_str(": ");
}

pub fn indent(out: &mut String, level: usize) {
    const SPACES: &str = "                                ";
    let mut n = 2 * level;
    while n > SPACES.len() {
        out.push_str(SPACES);
        n -= SPACES.len();
    }
    out.push_str(&SPACES[..n]);
}

/// Write `value` canonically, its first line at nesting `level`.
pub fn write_value(out: &mut String, value: &Value, ctx: Ctx, level: usize) {
    write_tracked(out, value, ctx, level, None, false);
}

/// `named`: an array of objects identified by `name` (prompt arguments), tracked as
/// `arguments.NAME` rather than `arguments[0]`.
fn write_tracked(
    out: &mut String,
    value: &Value,
    ctx: Ctx,
    level: usize,
    mut track: Option<&mut Track>,
    named: bool,
) {
    match value {
        Value::Object(map) => write_object_tracked(out, map, ctx, level, track),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push_str("[\n");
            let last = items.len() - 1;
            for (i, item) in items.iter().enumerate() {
                indent(out, level + 1);
                match track.as_deref_mut() {
                    Some(t) => {
                        let step = match item.get("name").and_then(Value::as_str) {
                            Some(name) if named => Step::Name(name),
                            _ => Step::Index(i),
                        };
                        match t.enter(step, out) {
                            Some(at) => {
                                write_tracked(out, item, ctx, level + 1, Some(&mut *t), false);
                                t.leave(at, out);
                            }
                            None => write_tracked(out, item, ctx, level + 1, None, false),
                        }
                    }
                    None => write_tracked(out, item, ctx, level + 1, None, false),
                }
                if i != last {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, level);
            out.push(']');
        }
        scalar => write_scalar(out, scalar),
    }
}

/// How deep a value [`Bounded`] reads may nest, the texts of raw-value tokens included:
/// serde_json's own limit for one parse.
const MAX_DEPTH: usize = 128;

/// The key by which serde_json's `Value` (feature `raw_value`) reads an object as the
/// JSON text it holds, when it is the object's first key.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A `Value` read as serde_json's own `Value` reads one (an object whose first key is
/// the raw-value token is the JSON text it holds, parsed), with one nesting limit
/// through every token's text. serde_json parses that text with a parser of its own and
/// a fresh recursion limit, so a chain of tokens, each holding a few arrays and the
/// next token, nested past any limit: a hostile server's 135 KB reply overflowed the
/// capture thread's stack and aborted mcp-covenant. The number is the depth of the
/// value read.
pub(crate) struct Bounded(pub usize);

/// `text` read whole as a `Value`, as `serde_json::from_str` reads it, under
/// [`Bounded`]'s one nesting limit.
pub(crate) fn value_from_str(text: &str) -> serde_json::Result<Value> {
    read_at(text, 0)
}

/// `bytes` read whole as a `Value`, as `serde_json::from_slice` reads them, under
/// [`Bounded`]'s one nesting limit: for JSON from outside (a server, a registry, a
/// package's or a project's manifest, a client config).
pub(crate) fn value_from_slice(bytes: &[u8]) -> serde_json::Result<Value> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Bounded(0).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

fn read_at(text: &str, depth: usize) -> serde_json::Result<Value> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Bounded(depth).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

impl Bounded {
    /// One level down, or past the limit: serde_json's own words for it.
    fn deeper<E: serde::de::Error>(&self) -> Result<usize, E> {
        match self.0 < MAX_DEPTH {
            true => Ok(self.0 + 1),
            false => Err(E::custom("recursion limit exceeded")),
        }
    }

    /// An object's fields, each a value read as [`Bounded`] reads one, the last of a
    /// key given twice kept (a `Map`'s own reading: no raw-value token).
    pub(crate) fn fields<'de, A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Map<String, Value>, A::Error> {
        let depth = self.deeper()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            out.insert(key, map.next_value_seed(Bounded(depth))?);
        }
        Ok(out)
    }
}

/// A raw-value token's text, read as serde_json reads it (a string, else refused in
/// serde_json's words).
struct TokenText;

impl<'de> serde::de::DeserializeSeed<'de> for TokenText {
    type Value = String;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for TokenText {
    type Value = String;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("raw value")
    }
    fn visit_str<E>(self, v: &str) -> Result<String, E> {
        Ok(v.to_string())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Bounded {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Bounded {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let depth = self.deeper()?;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Bounded(depth))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        use serde::de::Error as _;
        let depth = self.deeper()?;
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Value::Object(Map::new()));
        };
        if first == RAW_VALUE_TOKEN {
            // The text it holds, read at this object's depth.
            let text = map.next_value_seed(TokenText)?;
            return read_at(&text, self.0).map_err(A::Error::custom);
        }
        let mut out = Map::new();
        out.insert(first, map.next_value_seed(Bounded(depth))?);
        while let Some(key) = map.next_key::<String>()? {
            out.insert(key, map.next_value_seed(Bounded(depth))?);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `value` as canonical pretty JSON with a trailing newline (the lockfile writes
    /// its parts with the same functions).
    fn to_string(value: &Value, ctx: Ctx) -> String {
        let mut out = String::with_capacity(4096);
        write_value(&mut out, value, ctx, 0);
        out.push('\n');
        out
    }

    #[test]
    fn schema_keys_follow_reading_order() {
        let v = json!({"required": ["a"], "type": "object", "additionalProperties": false,
                       "properties": {"zeta": {"type": "string"}, "alpha": {"type": "integer"}}});
        let text = to_string(&v, Ctx::Schema);
        let pos = |s: &str| text.find(s).unwrap();
        assert!(pos("\"type\"") < pos("\"properties\""));
        assert!(pos("\"properties\"") < pos("\"required\""));
        assert!(pos("\"required\"") < pos("\"additionalProperties\""));
        assert!(pos("\"alpha\"") < pos("\"zeta\""));
        assert!(text.ends_with("}\n"));
    }

    #[test]
    fn strings_and_numbers_are_written_as_serde_json_writes_them() {
        let v = json!([
            "plain",
            "q\"uote",
            "back\\slash",
            "nl\ncr\rtab\t",
            "\u{1}\u{1f}\u{8}\u{c}",
            "é ✓ 𝄞",
            1,
            -2.5,
            1e300,
            0.1,
            u64::MAX,
            null,
            true
        ]);
        let ours = to_string(&v, Ctx::Data);
        assert_eq!(ours, serde_json::to_string_pretty(&v).unwrap() + "\n");
    }

    #[test]
    fn matches_serde_json_pretty_for_plain_data() {
        let v = json!({"a": [1, {"b": null}], "c": {}, "d": [], "e": "x\"y"});
        assert_eq!(
            to_string(&v, Ctx::Data),
            serde_json::to_string_pretty(&v).unwrap() + "\n"
        );
    }

    /// `Bounded` reads what serde_json's `Value` reads, raw-value tokens and keys given
    /// twice included, and refuses what it refuses in its words; a chain of tokens is
    /// held to one limit (serde_json reads it whole, each level afresh).
    #[test]
    fn a_bounded_read_is_a_value_parse_under_one_nesting_limit() {
        let token = RAW_VALUE_TOKEN;
        for text in [
            r#"{"a":1,"a":[2,{"b":null}],"c":-0,"d":1e5,"e":18446744073709551615,"f":"\u00e9"}"#,
            &format!(r#"{{"{token}":"{{\"b\":[1,2],\"b\":true}}"}}"#),
            &format!(r#"[{{"x":1,"{token}":"7"}},{{"{token}":"[1,{{\"{token}\":\"2\"}}]"}}]"#),
            &format!(r#"{{"{token}":5}}"#),
            &format!(r#"{{"{token}":"[1,"}}"#),
            &format!(r#"{{"{token}":"1 2"}}"#),
            r#"{"a":"\ud800"}"#,
            "[1e400]",
            "[1] x",
        ] {
            let ours = value_from_str(text).map_err(|e| e.to_string());
            let theirs = serde_json::from_str::<Value>(text).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(value_from_str(&deep(127)).is_ok());
        assert!(value_from_str(&deep(128)).is_err());
        let mut chain = deep(60);
        for _ in 0..2 {
            let t = json!({ RAW_VALUE_TOKEN: chain }).to_string();
            chain = format!("{}{t}{}", "[".repeat(60), "]".repeat(60));
        }
        assert!(serde_json::from_str::<Value>(&chain).is_ok(), "180 deep");
        let err = value_from_str(&chain).unwrap_err().to_string();
        assert!(err.contains("recursion limit exceeded"), "{err}");
    }
}
