//! One pass over an element, for the one reader (`read`): the element checked as a
//! `serde_json::Value` parse would check it, and what validation reads of it (its key,
//! the kinds of its schemas, its arguments' names).
//!
//! The check is serde_json's own parse without the values: a serde visitor that reads
//! every value as `serde_json::Value` would (strings decoded, so a lone surrogate escape
//! is refused; numbers read, so one out of `f64`'s range is refused; serde_json's own
//! recursion limit) and keeps nothing but the fields validation needs. serde_json's own
//! skipping (`IgnoredAny`, `RawValue`) checks only the grammar and lets both through. A
//! key given twice in any object is refused (a reviewer reads the first value, a parser
//! keeps the last). An object serde_json itself reads specially (its raw-value token as
//! first key) is refused.
//!
//! The reader runs it inside its parse of a whole file ([`List`]), and on one element's
//! text alone ([`read`]): there the text is read inside three arrays, so serde_json's
//! recursion limit falls at the same depth as in a file (an element sits inside the
//! file, its surface and its list).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::elements::{self, Form, MAX_SCHEMA_FIELDS};

/// An element's `arguments`, as validation sees them.
#[derive(Clone, Debug)]
pub(crate) enum Arguments {
    Absent,
    NotArray,
    /// Per argument: whether it has a string `name`.
    Names(Vec<bool>),
}

/// What validation reads of one element.
#[derive(Clone)]
pub(crate) struct Fields<'a> {
    /// The key field (`name`, `uri` or `uriTemplate`, by kind): its text when it is a
    /// string (borrowed unless it has escapes), `None` when it is something else.
    /// `None` outside when the element has no key field.
    pub key: Option<Option<Cow<'a, str>>>,
    /// The kind of each schema field of the element's kind (rules/elements.toml, in
    /// its order; see `read::json_kind`), when present.
    pub schemas: [Option<char>; MAX_SCHEMA_FIELDS],
    /// The kind's list of named arguments (the field of form `arguments`).
    pub arguments: Arguments,
    /// The element's first key, borrowed from the text it was read from (none when it
    /// has escapes or the element is `{}`): where the element is in a file.
    pub anchor: Option<&'a str>,
    /// Taken from the other file of a pair, whose element at this place has the same
    /// bytes ([`Fields::shared`]).
    pub shared: bool,
}

/// The keys of one object as it is read, to refuse a key given twice (a reviewer reads
/// the first value, a JSON parser keeps the last). The first keys are kept in place,
/// borrowed from the text (no allocation for the objects a lockfile is made of); a key
/// after the last one kept in order needs no search (a canonical file sorts its keys),
/// and past the first ones such keys are only listed (a map of many names, in order,
/// takes 16 bytes a key); a key out of order in a larger object, or a key with
/// escapes, moves them to a set.
struct Keys<'de> {
    inline: [&'de str; INLINE_KEYS],
    n: usize,
    sorted: bool,
    /// The keys after the first [`INLINE_KEYS`], while all are in order.
    more: Vec<&'de str>,
    set: Option<HashSet<Cow<'de, str>>>,
}

const INLINE_KEYS: usize = 16;

impl<'de> Keys<'de> {
    fn new() -> Keys<'de> {
        Keys {
            inline: [""; INLINE_KEYS],
            n: 0,
            sorted: true,
            more: Vec::new(),
            set: None,
        }
    }

    /// Record `key`; an error when the object already has it. (A `Cow`, not a `&str`:
    /// a borrowed key lives as long as the text and can be kept in place.)
    #[allow(clippy::ptr_arg)]
    fn insert<E: serde::de::Error>(&mut self, key: &Cow<'de, str>) -> Result<(), E> {
        let fresh = match (&mut self.set, key) {
            (None, Cow::Borrowed(k)) if self.n < INLINE_KEYS => {
                let after = self.n == 0 || *k > self.inline[self.n - 1];
                self.sorted &= after;
                let fresh = (self.sorted && after) || !self.inline[..self.n].contains(k);
                if fresh {
                    self.inline[self.n] = k;
                    self.n += 1;
                }
                fresh
            }
            (None, Cow::Borrowed(k))
                if self.sorted
                    && *k > self.more.last().copied().unwrap_or(self.inline[self.n - 1]) =>
            {
                self.more.push(k);
                true
            }
            (Some(set), _) => set.insert(key.clone()),
            (None, _) => {
                let mut set: HashSet<Cow<'de, str>> = self.inline[..self.n]
                    .iter()
                    .chain(&std::mem::take(&mut self.more))
                    .map(|k| Cow::Borrowed(*k))
                    .collect();
                let fresh = set.insert(key.clone());
                self.set = Some(set);
                fresh
            }
        };
        match fresh {
            true => Ok(()),
            false => Err(E::custom(format!("duplicate key `{key}`"))),
        }
    }
}

impl Fields<'_> {
    /// The same fields, owning their key (for another text).
    pub(super) fn detached<'x>(&self) -> Fields<'x> {
        Fields {
            key: self
                .key
                .as_ref()
                .map(|k| k.as_ref().map(|k| Cow::Owned(k.to_string()))),
            schemas: self.schemas,
            arguments: self.arguments.clone(),
            anchor: None,
            shared: false,
        }
    }

    /// The same fields, for the other file's element with the same bytes.
    pub(super) fn shared<'x>(&self) -> Fields<'x> {
        Fields {
            shared: true,
            ..self.detached()
        }
    }

    /// The key as validation sees it.
    pub(super) fn key_text(&self) -> Option<Option<&str>> {
        self.key.as_ref().map(|k| k.as_deref())
    }
}

/// Read one element's text (see the module). An error for anything the reader of a
/// whole file refuses in it, and for an element that is not an object; its position
/// counts the three brackets put before the text.
///
/// A large element nested well within the limit is read where it is, not copied: what
/// the read gives is the same, and only an error is read again inside the brackets, for
/// its message and position (one element can be most of a file; a small one is copied,
/// which costs less than looking for its depth).
pub(super) fn read(text: &str, spec: &elements::Element) -> serde_json::Result<Fields<'static>> {
    if text.len() > IN_PLACE && nests_within(text, SHALLOW) {
        let mut de = serde_json::Deserializer::from_str(text);
        if let Ok(fields) = Nest(0, spec).deserialize(&mut de) {
            if de.end().is_ok() {
                return Ok(fields.detached());
            }
        }
    }
    let mut wrapped = String::with_capacity(text.len() + 6);
    wrapped.push_str("[[[");
    wrapped.push_str(text);
    wrapped.push_str("]]]");
    let mut de = serde_json::Deserializer::from_str(&wrapped);
    let fields = Nest(3, spec).deserialize(&mut de)?;
    de.end()?;
    Ok(fields.detached())
}

/// The size from which [`read`] reads an element where it is.
const IN_PLACE: usize = 1 << 16;

/// A nesting depth that serde_json's recursion limit (128 arrays or objects, counted
/// from the outside) allows inside the three brackets [`read`] puts around an element.
const SHALLOW: usize = 120;

/// Whether no array or object in `text` is nested deeper than `depth` (strings
/// skipped; the text need not be valid JSON: a parse reads it after).
fn nests_within(text: &str, depth: usize) -> bool {
    let bytes = text.as_bytes();
    // No deeper than there are brackets that open (most elements: counted at once).
    if memchr::memchr2_iter(b'[', b'{', bytes).count() <= depth {
        return true;
    }
    let (mut at, mut level) = (0, 0usize);
    while let Some(i) = bytes[at..]
        .iter()
        .position(|b| matches!(b, b'"' | b'[' | b'{' | b']' | b'}'))
    {
        at += i;
        match bytes[at] {
            b'"' => loop {
                at += 1;
                let rest = bytes.get(at..).unwrap_or_default();
                match memchr::memchr2(b'"', b'\\', rest) {
                    // An escape: the byte after the backslash is skipped too.
                    Some(j) if rest[j] == b'\\' => at += j + 1,
                    Some(j) => {
                        at += j;
                        break;
                    }
                    // Not closed: the parse refuses it.
                    None => return true,
                }
            },
            b'[' | b'{' => {
                level += 1;
                if level > depth {
                    return false;
                }
            }
            _ => level = level.saturating_sub(1),
        }
        at += 1;
    }
    true
}

/// The brackets [`read`] puts around an element's text, then the element.
struct Nest<'k>(usize, &'k elements::Element);

impl<'de> DeserializeSeed<'de> for Nest<'_> {
    type Value = Fields<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fields<'de>, D::Error> {
        match self.0 {
            0 => d.deserialize_map(Element { spec: self.1 }),
            _ => d.deserialize_seq(self),
        }
    }
}

impl<'de> Visitor<'de> for Nest<'_> {
    type Value = Fields<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("one element")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Fields<'de>, A::Error> {
        let inner = Nest(self.0 - 1, self.1);
        let fields = seq
            .next_element_seed(inner)?
            .ok_or_else(|| serde::de::Error::custom("no element"))?;
        match seq.next_element::<serde::de::IgnoredAny>()? {
            None => Ok(fields),
            Some(_) => Err(serde::de::Error::custom("more than one element")),
        }
    }
}

/// A list of elements of one kind, each read (see the module) as the file is parsed.
pub(super) struct List<'k>(pub &'k elements::Element);

impl<'de> DeserializeSeed<'de> for List<'_> {
    type Value = Vec<Fields<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for List<'_> {
    type Value = Vec<Fields<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(f) = seq.next_element_seed(Element { spec: self.0 })? {
            out.push(f);
        }
        Ok(out)
    }
}

/// The element itself: an object.
struct Element<'k> {
    spec: &'k elements::Element,
}

impl<'de> DeserializeSeed<'de> for Element<'_> {
    type Value = Fields<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fields<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Element<'_> {
    type Value = Fields<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
        let mut f = Fields {
            key: None,
            schemas: [None; MAX_SCHEMA_FIELDS],
            arguments: Arguments::Absent,
            anchor: None,
            shared: false,
        };
        let mut keys = Keys::new();
        let mut first = true;
        while let Some(name) = map.next_key_seed(Probe::TEXT)? {
            let name = name.text.unwrap_or_default();
            if std::mem::take(&mut first) {
                if let Cow::Borrowed(k) = name {
                    f.anchor = Some(k);
                }
            }
            keys.insert(&name)?;
            let schema = self.spec.schema.iter().position(|s| s.field == name);
            if name == self.spec.key {
                f.key = Some(map.next_value_seed(Probe::TEXT)?.text);
            } else if let Some(i) = schema {
                match self.spec.schema[i].form {
                    Form::Schema => f.schemas[i] = Some(map.next_value_seed(Probe::VALUE)?.kind),
                    Form::Arguments => f.arguments = map.next_value_seed(Args)?,
                }
            } else {
                map.next_value_seed(Probe::VALUE)?;
            }
        }
        Ok(f)
    }
}

/// Any value, checked and dropped as it is read: its kind, and its text when it is a
/// string and `keep_text` (borrowed unless it has escapes).
#[derive(Clone, Copy)]
pub(super) struct Probe {
    keep_text: bool,
}

impl Probe {
    /// A string's text kept (borrowed unless it has escapes): a key.
    pub(super) const TEXT: Probe = Probe { keep_text: true };
    const VALUE: Probe = Probe { keep_text: false };
}

pub(super) struct Seen<'a> {
    kind: char,
    /// The text of a string, when kept.
    pub text: Option<Cow<'a, str>>,
    /// An object whose `name` (the last one given) is a string.
    named: bool,
}

fn seen<'a, E>(kind: char) -> Result<Seen<'a>, E> {
    Ok(Seen {
        kind,
        text: None,
        named: false,
    })
}

impl<'de> DeserializeSeed<'de> for Probe {
    type Value = Seen<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Seen<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Probe {
    type Value = Seen<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Seen<'de>, E> {
        seen(if v { 't' } else { 'f' })
    }
    fn visit_i64<E>(self, _: i64) -> Result<Seen<'de>, E> {
        seen('0')
    }
    fn visit_u64<E>(self, _: u64) -> Result<Seen<'de>, E> {
        seen('0')
    }
    fn visit_f64<E>(self, _: f64) -> Result<Seen<'de>, E> {
        seen('0')
    }
    fn visit_unit<E>(self) -> Result<Seen<'de>, E> {
        seen('n')
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Seen<'de>, E> {
        Ok(Seen {
            text: self.keep_text.then_some(Cow::Borrowed(v)),
            ..seen('"')?
        })
    }
    fn visit_str<E>(self, v: &str) -> Result<Seen<'de>, E> {
        Ok(Seen {
            text: self.keep_text.then(|| Cow::Owned(v.to_string())),
            ..seen('"')?
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Seen<'de>, A::Error> {
        while seq.next_element_seed(Probe::VALUE)?.is_some() {}
        seen('[')
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Seen<'de>, A::Error> {
        let (mut first, mut keys, mut named) = (true, Keys::new(), false);
        while let Some(key) = map.next_key_seed(Probe::TEXT)? {
            refuse_raw_value_token(first, &key)?;
            first = false;
            keys.insert(key.text.as_ref().unwrap_or(&Cow::Borrowed("")))?;
            let value = map.next_value_seed(Probe::VALUE)?;
            if key.text.as_deref() == Some("name") {
                named = value.kind == '"';
            }
        }
        Ok(Seen {
            named,
            ..seen('{')?
        })
    }
}

/// serde_json (with its `raw_value` feature, which the reader needs) reads an object
/// inside a `Value` whose first key is this one as text to parse again, not as an
/// object: a `Value` parse may then accept it as some other value or refuse it. The
/// probe does not guess: such an object is an error. (An element's own top level is a
/// map, not a `Value`, and is read plainly.)
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

fn refuse_raw_value_token<E: serde::de::Error>(first: bool, key: &Seen<'_>) -> Result<(), E> {
    match first && key.text.as_deref() == Some(RAW_VALUE_TOKEN) {
        true => Err(E::custom("an object serde_json reads as raw JSON text")),
        false => Ok(()),
    }
}

/// A visitor's scalar visits (but `null`'s), each giving `$value`: a scalar has nothing
/// inside to check further.
macro_rules! scalars {
    ($t:ty, $value:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<$t, E> {
            Ok($value)
        }
        fn visit_i64<E>(self, _: i64) -> Result<$t, E> {
            Ok($value)
        }
        fn visit_u64<E>(self, _: u64) -> Result<$t, E> {
            Ok($value)
        }
        fn visit_f64<E>(self, _: f64) -> Result<$t, E> {
            Ok($value)
        }
        fn visit_str<E>(self, _: &str) -> Result<$t, E> {
            Ok($value)
        }
    };
}

/// An element's `arguments`: absent when `null`, else an array whose items are objects
/// with a string `name` (the last one given).
struct Args;

impl<'de> DeserializeSeed<'de> for Args {
    type Value = Arguments;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Arguments, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Args {
    type Value = Arguments;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    scalars!(Arguments, Arguments::NotArray);
    fn visit_unit<E>(self) -> Result<Arguments, E> {
        Ok(Arguments::Absent)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Arguments, A::Error> {
        Probe::VALUE.visit_map(map)?;
        Ok(Arguments::NotArray)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Arguments, A::Error> {
        let mut names = Vec::new();
        while let Some(item) = seq.next_element_seed(Probe::VALUE)? {
            names.push(item.named);
        }
        Ok(Arguments::Names(names))
    }
}

#[cfg(test)]
mod tests {
    use super::Arguments;

    /// Read as a tool's element, or (`name` only) a prompt's.
    fn read(text: &str, key: &str) -> serde_json::Result<super::Fields<'static>> {
        let kind = match key {
            "uri" => "resource",
            _ if text.contains("arguments") => "prompt",
            _ => "tool",
        };
        super::read(text, crate::elements::element(kind))
    }

    /// Read where it is or inside the brackets, an element reads the same, errors
    /// (their positions, the recursion limit) included.
    #[test]
    fn an_element_read_in_place_reads_as_inside_the_brackets() {
        let spec = crate::elements::element("tool");
        let wrapped = |text: &str| {
            let wrapped = format!("[[[{text}]]]");
            let mut de = serde_json::Deserializer::from_str(&wrapped);
            let fields = serde::de::DeserializeSeed::deserialize(super::Nest(3, spec), &mut de)
                .and_then(|f| de.end().map(|()| f.detached()));
            fields
                .map(|f| format!("{:?}", f.key))
                .map_err(|e| e.to_string())
        };
        let mut texts: Vec<String> = (115..130)
            .flat_map(|d| {
                [
                    format!(
                        "{{\"name\":\"n\",\"x\":{}{}}}",
                        "[".repeat(d),
                        "]".repeat(d)
                    ),
                    format!("{{\"a\":{}1}}", "{\"b\":".repeat(d) + &"}".repeat(d)),
                ]
            })
            .collect();
        texts.extend(
            [
                r#"{"name":"a\"[[[\\","x":1}"#,
                r#"{"name":"a","name":"b"}"#,
                r#"{"name":"\ud800"}"#,
                r#"{"name":"a"} x"#,
                r#"{"name":"a"#,
                r#"{"name":"a\"#,
                r#"[1]"#,
                r#"{"x":{"a":1,"a":2}}"#,
            ]
            .map(String::from),
        );
        let many: Vec<String> = (0..100).map(|i| format!("\"k{i:03}\":1")).collect();
        texts.push(format!("{{\"x\":{{{}}}}}", many.join(",")));
        texts.push(format!("{{\"x\":{{{},\"k050\":2}}}}", many.join(",")));
        texts.push(format!("{{\"x\":{{{},\"a\":2}}}}", many.join(",")));
        texts.push(format!("{{\"x\":{{{},\"k099\":2}}}}", many.join(",")));
        // Large enough to be read where they are.
        let pad =
            |text: &str| text.replacen('{', &format!("{{\"pad\":\"{}\",", "x".repeat(70_000)), 1);
        for text in texts.iter().map(|t| pad(t)) {
            let ours = super::read(&text, spec)
                .map(|f| format!("{:?}", f.key))
                .map_err(|e| e.to_string());
            assert_eq!(ours, wrapped(&text), "{text}");
        }
        // A key given twice in a large object in order, the second just after the first.
        let twice = pad(&format!("{{\"x\":{{{},\"k099\":2}}}}", many.join(",")));
        let e = super::read(&twice, spec).err().unwrap().to_string();
        assert!(e.starts_with("duplicate key `k099`"), "{e}");
    }

    #[test]
    fn one_pass_reads_fields_as_the_full_reader_would() {
        let f = read(
            r#" {"name" : "a\"b", "x": [1, {"y": "]}{["}], "inputSchema": {"a": [[]]}, "n": -1e5}"#,
            "name",
        )
        .unwrap();
        assert_eq!(f.key, Some(Some("a\"b".into())));
        assert_eq!(&f.schemas[..2], &[Some('{'), None]);
        assert_eq!(read("{}", "name").unwrap().key, None);
        assert_eq!(read("{}", "name").unwrap().key, None);
        // An escaped key is decoded; a key given twice is refused, at any depth (also
        // spelt differently, and in an object past the 32 keys kept in a list).
        let f = read(r#"{"n\u0061me": 5, "uri": "u"}"#, "name").unwrap();
        assert_eq!(f.key, Some(None));
        for dup in [
            r#"{"name": "a", "name": "b", "uri": 1}"#,
            r#"{"name": "a", "n\u0061me": "b"}"#,
            r#"{"x": {"a": [{"k": 1, "k": 2}]}}"#,
            r#"{"arguments": [{"name": 1, "name": "b"}]}"#,
        ] {
            let e = read(dup, "name").err().map(|e| e.to_string());
            assert!(
                e.as_deref().is_some_and(|e| e.contains("duplicate key")),
                "{dup}: {e:?}"
            );
        }
        let many: Vec<String> = (0..100)
            .map(|i| format!("\"k{i}\": {{\"k{i}\": 1}}"))
            .collect();
        assert!(read(&format!("{{{}}}", many.join(", ")), "name").is_ok());
        let again = format!("{{{}, \"k7\": 2}}", many.join(", "));
        assert!(read(&again, "name").is_err());
        // The same key in sibling and nested objects is no duplicate.
        assert!(read(
            r#"{"a": {"k": 1}, "b": {"k": 2}, "k": {"k": {"k": 3}}}"#,
            "name"
        )
        .is_ok());
        let f = read(r#"{"name": "a", "uri": "x\ny"}"#, "uri").unwrap();
        assert_eq!(f.key, Some(Some("x\ny".into())));
        // Arguments: null is absent; each item named by its last string `name`.
        let f = read(
            r#"{"arguments": [{"name": "a"}, {"name": 1}, 5, {"name": "b"}, {"x": [[{}]]}]}"#,
            "name",
        )
        .unwrap();
        assert!(
            matches!(f.arguments, Arguments::Names(ref v) if v == &[true, false, false, true, false])
        );
        assert!(matches!(
            read(r#"{"arguments": null}"#, "name").unwrap().arguments,
            Arguments::Absent
        ));
        assert!(matches!(
            read(r#"{"arguments": {}}"#, "name").unwrap().arguments,
            Arguments::NotArray
        ));
        // Not an object, not one value, or what only the full parse refuses.
        for refused in [
            "[]",
            "5",
            r#"{"a": 1} {}"#,
            r#"{"a": 1,}"#,
            r#"{"a": "\ud800"}"#,
            r#"{"\udc00": 1}"#,
            r#"{"a": 1e400}"#,
            r#"{"a": [1e999]}"#,
            r#"{"arguments": [{"name": "\ud800x"}]}"#,
        ] {
            assert!(read(refused, "name").is_err(), "{refused}");
        }
    }

    #[test]
    fn an_element_read_alone_nests_as_deep_as_in_a_file() {
        // In a file an element sits at level 4 (file, surface, list); serde_json reads
        // 127 levels. So the element itself may nest 124 levels, no more.
        let nested =
            |levels: usize| format!("{{\"a\": {}1{}}}", "[".repeat(levels), "]".repeat(levels));
        assert!(read(&nested(123), "name").is_ok());
        let e = read(&nested(124), "name").err().map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("recursion limit")),
            "{e:?}"
        );
        let file = |levels: usize| format!("{{\"surface\": {{\"tools\": [{}]}}}}", nested(levels));
        assert!(serde_json::from_str::<serde_json::Value>(&file(123)).is_ok());
        assert!(serde_json::from_str::<serde_json::Value>(&file(124)).is_err());
    }
}
