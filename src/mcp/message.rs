//! Reading what a server sends, keeping only what a capture uses. The lists of a
//! result (`result.tools` and the other element lists): each of their elements is read
//! on its own, normalised and written as its canonical text ([`Entry`]) as it is parsed,
//! never built as values (`lockfile/stream.rs`). A reply of many small
//! elements is so never held as a tree of values (a serde_json map takes about 630
//! bytes however few keys it holds), only as its text and the elements' canonical text.
//! Of everything else only what the session reads is kept ([`Part`]): a message's `id`
//! and `method`, an error's `code` and `message` (cut to [`ERROR_MESSAGE`] bytes), a
//! result's identity, instructions, version, cursor and the capabilities that gate a
//! list, a `resources/read` result's content items without their content. The rest
//! (`params`, an error's `data`, `capabilities.experimental`, unknown fields) is read
//! and checked but never built, so a notification or an `initialize` result of any size
//! costs no memory beyond its text; an `id` or `method` that is an object or an array
//! (JSON-RPC allows neither) is kept empty. What is accepted or refused is what a `Value`
//! parse accepts or refuses: the same parser reads every byte, every skipped string
//! decoded and number read, with the same recursion limit. One known difference: with
//! serde_json's `raw_value` feature, a `Value` parse reads an object whose key is
//! `$serde_json::private::RawValue` as the JSON text it holds; here the message, its
//! result and its elements read that key as any other (only a hostile server writes
//! it, and either reading is bounded).

use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::lockfile::{Entry, Kind};

/// One message: its value, without the element lists of its `result`, which are in
/// `lists`.
#[derive(Debug, Default)]
pub struct Message {
    pub value: Value,
    pub lists: Vec<(Kind, Listed)>,
}

/// One element list of a result.
#[derive(Debug)]
pub enum Listed {
    Entries(Vec<Entry>),
    /// The index of its first item that is not an object.
    NotObject(usize),
}

/// What one line or body holds.
pub enum Incoming {
    One(Message),
    Batch(Vec<Message>),
    /// A JSON value that is neither a message nor a batch.
    Other,
}

/// Read a message or a batch of them.
pub fn parse(text: &[u8]) -> serde_json::Result<Incoming> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let incoming = Any(Top).deserialize(&mut de)?;
    de.end()?;
    Ok(incoming)
}

/// How one kind of place reads a value: an object (`map`) and an array (`seq`) as it
/// needs, anything else (and by default objects and arrays too) as a `Value`.
trait Shape<'de>: Sized {
    type Out;
    fn value(self, v: Value) -> Self::Out;
    fn str(self, s: &str) -> Self::Out {
        self.value(Value::String(s.to_string()))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        Ok(self.value(Value::deserialize(MapAccessDeserializer::new(map))?))
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error> {
        Ok(self.value(Value::deserialize(SeqAccessDeserializer::new(seq))?))
    }
}

/// Any value, read by its [`Shape`].
struct Any<S>(S);

impl<'de, S: Shape<'de>> DeserializeSeed<'de> for Any<S> {
    type Value = S::Out;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Out, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S: Shape<'de>> Visitor<'de> for Any<S> {
    type Value = S::Out;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<S::Out, E> {
        Ok(self.0.value(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<S::Out, E> {
        Ok(self.0.value(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<S::Out, E> {
        Ok(self.0.value(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<S::Out, E> {
        Ok(self.0.value(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<S::Out, E> {
        Ok(self.0.str(v))
    }
    fn visit_string<E>(self, v: String) -> Result<S::Out, E> {
        Ok(self.0.value(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<S::Out, E> {
        Ok(self.0.value(Value::Null))
    }
    fn visit_none<E>(self) -> Result<S::Out, E> {
        Ok(self.0.value(Value::Null))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<S::Out, A::Error> {
        self.0.map(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<S::Out, A::Error> {
        self.0.seq(seq)
    }
}

/// A value read and checked as a `Value` parse reads it (every string decoded, every
/// number read, the same recursion limit), and nothing of it kept.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Skip)?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }
}

/// A line or body: a message, a batch, or something else.
struct Top;

impl<'de> Shape<'de> for Top {
    type Out = Incoming;
    fn value(self, _: Value) -> Incoming {
        Incoming::Other
    }
    fn str(self, _: &str) -> Incoming {
        Incoming::Other
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Incoming, A::Error> {
        Ok(Incoming::One(One.map(map)?))
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Incoming, A::Error> {
        let mut batch = Vec::new();
        while let Some(m) = seq.next_element_seed(Any(One))? {
            batch.push(m);
        }
        Ok(Incoming::Batch(batch))
    }
}

/// One message: its `id` and `method`, its `result` read by [`Result_`] and its
/// `error` as [`Part::Error`]; every other field (`params`, `jsonrpc`) is skipped.
struct One;

impl<'de> Shape<'de> for One {
    type Out = Message;
    fn value(self, value: Value) -> Message {
        Message {
            value,
            lists: Vec::new(),
        }
    }
    fn str(self, s: &str) -> Message {
        self.value(Part::Kept.str(s))
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Message, A::Error> {
        Ok(self.value(Part::Kept.seq(seq)?))
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let (mut out, mut lists) = (Map::new(), Vec::new());
        while let Some(key) = map.next_key::<String>()? {
            let part = match key.as_str() {
                "result" => {
                    let (value, listed) = map.next_value_seed(Any(Result_))?;
                    lists = listed;
                    out.insert(key, value);
                    continue;
                }
                "id" | "method" => Part::Kept,
                "error" => Part::Error,
                _ => {
                    map.next_value_seed(Skip)?;
                    continue;
                }
            };
            out.insert(key, map.next_value_seed(Any(part))?);
        }
        Ok(Message {
            value: Value::Object(out),
            lists,
        })
    }
}

/// The longest JSON-RPC error `message` kept, in bytes; the rest is counted, not kept.
const ERROR_MESSAGE: usize = 4096;

/// How a part of a message other than an element list is read: what the session uses
/// of it is kept, the rest skipped (read and checked, never built).
#[derive(Clone, Copy)]
enum Part {
    /// A number, string, boolean or null as it is; an object or array as an empty one.
    Kept,
    /// A `Value`, whole (an element's data: a content item's `_meta`).
    Whole,
    /// A string cut to [`ERROR_MESSAGE`] bytes; anything else as [`Part::Kept`].
    Text,
    /// A JSON-RPC error: `code` and `message` (`data` is skipped).
    Error,
    /// A result's fields that are not element lists (see [`Part::field`]).
    Result,
    /// `capabilities`: those that gate a list (`tools`, `resources`, `prompts`), kept.
    Capabilities,
    /// `serverInfo`: `name`, `title`, `version`.
    Identity,
    /// A result's `_meta`: the server's identity.
    Meta,
    /// `supportedVersions`: the revisions we speak, of those it names.
    Versions,
    /// `contents` of a `resources/read` result: each item as [`Part::Content`].
    Contents,
    /// A content item: what `apps::element_from_read` records (never `text`, `blob`).
    Content,
}

impl Part {
    /// How the field `key` of an object read as `self` is read; `None`: skipped.
    fn field(self, key: &str) -> Option<Part> {
        let gates_a_list = || super::fields::LISTS.iter().any(|(_, c, _)| *c == key);
        match (self, key) {
            (Part::Error, "code") => Some(Part::Kept),
            (Part::Error, "message") => Some(Part::Text),
            (Part::Result, "capabilities") => Some(Part::Capabilities),
            (Part::Result, "serverInfo") => Some(Part::Identity),
            (Part::Result, "_meta") => Some(Part::Meta),
            (Part::Result, "protocolVersion" | "instructions" | "nextCursor") => Some(Part::Kept),
            (Part::Result, "supportedVersions") => Some(Part::Versions),
            (Part::Result, "contents") => Some(Part::Contents),
            (Part::Capabilities, _) if gates_a_list() => Some(Part::Kept),
            (Part::Identity, "name" | "title" | "version") => Some(Part::Kept),
            (Part::Meta, super::fields::SERVER_INFO_META) => Some(Part::Identity),
            (Part::Content, "uri" | "name" | "title" | "description" | "mimeType") => {
                Some(Part::Kept)
            }
            (Part::Content, crate::lockfile::META) => Some(Part::Whole),
            _ => None,
        }
    }
}

impl<'de> Shape<'de> for Part {
    type Out = Value;
    fn value(self, v: Value) -> Value {
        v
    }
    fn str(self, s: &str) -> Value {
        match self {
            Part::Text if s.len() > ERROR_MESSAGE => {
                let mut at = ERROR_MESSAGE;
                while !s.is_char_boundary(at) {
                    at -= 1;
                }
                Value::String(format!("{} ... ({} more bytes)", &s[..at], s.len() - at))
            }
            _ => Value::String(s.to_string()),
        }
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if let Part::Whole = self {
            // Not serde_json's `Value`: a chain of raw-value tokens nests past its limit.
            return Ok(Value::Object(crate::canon::Bounded(0).fields(map)?));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match self.field(&key) {
                Some(part) => drop(out.insert(key, map.next_value_seed(Any(part))?)),
                None => map.next_value_seed(Skip)?,
            }
        }
        Ok(Value::Object(out))
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        match self {
            Part::Whole => {
                return serde::de::Visitor::visit_seq(crate::canon::Bounded(0), seq);
            }
            Part::Versions => {
                while let Some(v) = seq.next_element_seed(Any(Part::Kept))? {
                    if v.as_str()
                        .is_some_and(|v| super::MODERN_VERSIONS.contains(&v))
                    {
                        out.push(v);
                    }
                }
            }
            Part::Contents => {
                while let Some(v) = seq.next_element_seed(Any(Part::Content))? {
                    out.push(v);
                }
            }
            _ => while seq.next_element_seed(Skip)?.is_some() {},
        }
        Ok(Value::Array(out))
    }
}

/// A result: its element lists compacted, the rest read as [`Part::Result`].
struct Result_;

impl<'de> Shape<'de> for Result_ {
    type Out = (Value, Vec<(Kind, Listed)>);
    fn value(self, v: Value) -> Self::Out {
        (v, Vec::new())
    }
    fn str(self, s: &str) -> Self::Out {
        (Part::Kept.str(s), Vec::new())
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error> {
        Ok((Part::Kept.seq(seq)?, Vec::new()))
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Out, A::Error> {
        let (mut out, mut lists) = (Map::new(), Vec::<(Kind, Listed)>::new());
        while let Some(key) = map.next_key::<String>()? {
            let kind = Kind::ALL.into_iter().find(|k| k.list_name() == key);
            // A field given twice: the last one counts, as in a `Value`.
            lists.retain(|(k, _)| Some(*k) != kind);
            out.remove(&key);
            match (kind, Part::Result.field(&key)) {
                (Some(kind), _) => match map.next_value_seed(Any(List(kind)))? {
                    Ok(listed) => lists.push((kind, listed)),
                    Err(value) => drop(out.insert(key, value)),
                },
                (None, Some(part)) => drop(out.insert(key, map.next_value_seed(Any(part))?)),
                (None, None) => map.next_value_seed(Skip)?,
            }
        }
        Ok((Value::Object(out), lists))
    }
}

/// An element list: each object compacted as it is read; anything but an array is
/// read as [`Part::Kept`], for the session to refuse.
struct List(Kind);

impl<'de> Shape<'de> for List {
    type Out = Result<Listed, Value>;
    fn value(self, v: Value) -> Self::Out {
        Err(v)
    }
    fn str(self, s: &str) -> Self::Out {
        Err(Part::Kept.str(s))
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error> {
        Ok(Err(Part::Kept.map(map)?))
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let (mut entries, mut bad) = (Vec::new(), None);
        let mut i = 0;
        while let Some(item) = seq.next_element_seed(Any(Item(self.0)))? {
            match item {
                Some(entry) if bad.is_none() => entries.push(entry),
                Some(_) => {}
                None => {
                    bad.get_or_insert(i);
                    entries = Vec::new();
                }
            }
            i += 1;
        }
        Ok(Ok(match bad {
            Some(i) => Listed::NotObject(i),
            None => Listed::Entries(entries),
        }))
    }
}

/// One element: an object, normalised and written canonically as it is read
/// ([`Entry::read`]); `None` for anything
/// else (skipped).
struct Item(Kind);

impl<'de> Shape<'de> for Item {
    type Out = Option<Entry>;
    fn value(self, _: Value) -> Option<Entry> {
        None
    }
    fn str(self, _: &str) -> Option<Entry> {
        None
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Entry>, A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(None)
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Option<Entry>, A::Error> {
        Entry::read(self.0, map).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Message {
        match parse(text.as_bytes()).unwrap() {
            Incoming::One(m) => m,
            _ => panic!("not one message: {text}"),
        }
    }

    #[test]
    fn a_list_reply_is_read_as_a_value_would_be_with_its_elements_compacted() {
        let text = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b","inputSchema":{"required":["y","x"]}},{"name":"a"}],"nextCursor":"c","_meta":{"k":1}}}"#;
        let m = one(text);
        let mut whole: Value = serde_json::from_str(text).unwrap();
        let tools = whole["result"].as_object_mut().unwrap().remove("tools");
        // What the session does not read is not kept.
        whole.as_object_mut().unwrap().remove("jsonrpc");
        whole["result"]["_meta"] = serde_json::json!({});
        assert_eq!(m.value, whole);
        let [(Kind::Tool, Listed::Entries(entries))] = &m.lists[..] else {
            panic!("{:?}", m.lists)
        };
        let built: Vec<Entry> = tools
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|t| Entry::new(Kind::Tool, t.as_object().unwrap().clone()))
            .collect();
        assert_eq!(entries, &built);
        assert!(
            entries[0].text().contains("\"x\",\n"),
            "{}",
            entries[0].text()
        );
        // Not an array: left in the value (emptied); an item that is not an object: its
        // index.
        let m = one(r#"{"id":1,"result":{"prompts":{"a":1},"resources":[{"uri":"u"},5,{}]}}"#);
        assert_eq!(m.value["result"]["prompts"], serde_json::json!({}));
        assert!(matches!(
            m.lists[..],
            [(Kind::Resource, Listed::NotObject(1))]
        ));
        // A batch, and what a `Value` parse refuses.
        assert!(
            matches!(parse(br#"[{"id":1},{"id":2}]"#).unwrap(), Incoming::Batch(b) if b.len() == 2)
        );
        assert!(matches!(parse(b"5").unwrap(), Incoming::Other));
        for refused in [
            r#"{"id":1,"result":{"tools":[{"name":"\ud800"}]}}"#,
            r#"{"id":1,"result":{"tools":[{"name":1e400}]}}"#,
            r#"{"id":1,"result":{"tools":[]}} x"#,
            // Skipped parts are checked as a `Value` parse checks them.
            r#"{"method":"m","params":{"a":"\ud800"}}"#,
            r#"{"method":"m","params":[1e400]}"#,
            r#"{"id":1,"error":{"code":1,"data":{"\ud800":0}}}"#,
            r#"{"id":1,"result":{"capabilities":{"experimental":{"x":[1,]}}}}"#,
        ] {
            assert!(parse(refused.as_bytes()).is_err(), "{refused}");
        }
        let deep = format!(
            "{{\"result\":{{\"tools\":[{}{}]}}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        let e = parse(deep.as_bytes()).err().unwrap().to_string();
        assert!(e.contains("recursion limit"), "{e}");
    }

    #[test]
    fn only_what_the_session_reads_is_kept() {
        let m = one(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","instructions":"i",
            "capabilities":{"tools":{"listChanged":true},"prompts":null,"experimental":{"x":[1,2]}},
            "serverInfo":{"name":"n","version":"1","icons":[{"src":"x"}]},
            "supportedVersions":["2026-07-28","x"],"nextCursor":"c",
            "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","title":"t","extra":1},"k":2},
            "contents":[{"uri":"ui://a","text":"body","mimeType":"text/html","_meta":{"ui":{"csp":1}}},5],
            "padding":"x"}}"#,
        );
        assert_eq!(
            m.value,
            serde_json::json!({"id": 1, "result": {"protocolVersion": "2025-06-18", "instructions": "i",
                "capabilities": {"tools": {}, "prompts": null},
                "serverInfo": {"name": "n", "version": "1"},
                "supportedVersions": ["2026-07-28"], "nextCursor": "c",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "title": "t"}},
                "contents": [{"uri": "ui://a", "mimeType": "text/html", "_meta": {"ui": {"csp": 1}}}, 5]}})
        );
        // A notification keeps its method; a request its id; an error its code and a
        // cut message, never its data.
        let m = one(r#"{"method":"notifications/message","params":{"data":[1,2,3]}}"#);
        assert_eq!(
            m.value,
            serde_json::json!({"method": "notifications/message"})
        );
        let m = one(r#"{"id":{"a":[1]},"method":"ping","params":{}}"#);
        assert_eq!(m.value, serde_json::json!({"id": {}, "method": "ping"}));
        let long = "é".repeat(3000);
        let m = one(&format!(
            r#"{{"id":2,"error":{{"code":-1,"message":"{long}","data":{{"a":[1]}}}}}}"#
        ));
        let message = m.value["error"]["message"].as_str().unwrap();
        assert!(message.ends_with(" ... (1904 more bytes)"), "{message}");
        assert_eq!(m.value["error"]["code"], -1);
        assert!(m.value["error"].get("data").is_none());
        // A batch of anything keeps nothing of what is not a message.
        assert!(
            matches!(parse(br#"[[1,2],"s",{"id":1}]"#).unwrap(), Incoming::Batch(b) if b[0].value == serde_json::json!([]) && b.len() == 3)
        );
    }
}
