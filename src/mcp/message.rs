//! Reading what a server sends. A message is read as a `serde_json::Value`, but for the
//! lists of a result (`result.tools` and the other element lists): each of their
//! elements is read on its own, normalised, written as its canonical text
//! ([`Entry`]) and its values dropped while the rest of the reply is still being read.
//! A reply of many small elements is so never held as a tree of values (a serde_json map
//! takes about 630 bytes however few keys it holds), only as its text and the elements'
//! canonical text. What is accepted or refused is what a `Value` parse accepts or
//! refuses: the same parser reads every byte, with the same recursion limit. One known
//! difference: with serde_json's `raw_value` feature, a `Value` parse reads an object
//! whose key is `$serde_json::private::RawValue` as the JSON text it holds; here the
//! message, its result and its elements read that key as any other (only a hostile
//! server writes it, and either reading is bounded).

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
        Ok(self.0.value(Value::String(v.to_string())))
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

/// A line or body: a message, a batch, or something else.
struct Top;

impl<'de> Shape<'de> for Top {
    type Out = Incoming;
    fn value(self, _: Value) -> Incoming {
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

/// One message: its `result` read by [`Result_`], every other field as a `Value`.
struct One;

impl<'de> Shape<'de> for One {
    type Out = Message;
    fn value(self, value: Value) -> Message {
        Message {
            value,
            lists: Vec::new(),
        }
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let (mut out, mut lists) = (Map::new(), Vec::new());
        while let Some(key) = map.next_key::<String>()? {
            if key == "result" {
                let (value, listed) = map.next_value_seed(Any(Result_))?;
                lists = listed;
                out.insert(key, value);
            } else {
                out.insert(key, map.next_value()?);
            }
        }
        Ok(Message {
            value: Value::Object(out),
            lists,
        })
    }
}

/// A result: its element lists compacted, the rest a `Value`.
struct Result_;

impl<'de> Shape<'de> for Result_ {
    type Out = (Value, Vec<(Kind, Listed)>);
    fn value(self, v: Value) -> Self::Out {
        (v, Vec::new())
    }
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Out, A::Error> {
        let (mut out, mut lists) = (Map::new(), Vec::<(Kind, Listed)>::new());
        while let Some(key) = map.next_key::<String>()? {
            let kind = Kind::ALL.into_iter().find(|k| k.list_name() == key);
            // A field given twice: the last one counts, as in a `Value`.
            lists.retain(|(k, _)| Some(*k) != kind);
            out.remove(&key);
            match kind {
                Some(kind) => match map.next_value_seed(Any(List(kind)))? {
                    Ok(listed) => lists.push((kind, listed)),
                    Err(value) => drop(out.insert(key, value)),
                },
                None => drop(out.insert(key, map.next_value()?)),
            }
        }
        Ok((Value::Object(out), lists))
    }
}

/// An element list: each object compacted as it is read; anything but an array is a
/// `Value`, for the session to refuse.
struct List(Kind);

impl<'de> Shape<'de> for List {
    type Out = Result<Listed, Value>;
    fn value(self, v: Value) -> Self::Out {
        Err(v)
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

/// One element: an object, read as a map and compacted at once; `None` for anything
/// else.
struct Item(Kind);

impl<'de> Shape<'de> for Item {
    type Out = Option<Entry>;
    fn value(self, _: Value) -> Option<Entry> {
        None
    }
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Option<Entry>, A::Error> {
        let element = Map::deserialize(MapAccessDeserializer::new(map))?;
        Ok(Some(Entry::new(self.0, element)))
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
        assert!(entries[0].text.contains("\"x\",\n"), "{}", entries[0].text);
        // Not an array: left in the value; an item that is not an object: its index.
        let m = one(r#"{"id":1,"result":{"prompts":{"a":1},"resources":[{"uri":"u"},5,{}]}}"#);
        assert_eq!(m.value["result"]["prompts"], serde_json::json!({"a": 1}));
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
}
