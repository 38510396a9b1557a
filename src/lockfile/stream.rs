//! One element normalised and written canonically while it is parsed, never built as a
//! tree of values (issue 36: a `serde_json::Value` takes 32 bytes per array item and
//! about 630 per map, so one tool of 2.35 million tiny properties held as values peaked
//! at 37 times its text).
//!
//! A serde visitor driven by the reply's own parse: each value is written at once as
//! compact canonical text (no whitespace) into one buffer; when an
//! object closes, its fields (their decoded keys and where their text is) are put in
//! canonical order, a key given twice keeping its last value, and the object's text is
//! rewritten in that order only when it was not in it already. Arrays whose order the
//! normaliser changes (a schema's `unordered` name lists, an element's arguments) are
//! reordered when they close in the same way; other arrays keep nothing per item. The
//! element is kept in that compact form; [`indent_into`] indents it as the canonical
//! writer does, a piece at a time, only as it is written or compared (indented, an array
//! of scalars is 7.5 times its message: an item a line). What is normalised, and
//! how, is what [`super::normalise`] does to a tree ([`Norm`] is where a value sits):
//! transport fields dropped (those with `keep` paths read as values and given to the
//! normaliser's own function), per-request `_meta` keys dropped and an empty `_meta`
//! with them, a schema's `unordered` string lists sorted and deduplicated in every
//! subschema the vocabulary places, arguments sorted by name; key order is the canonical
//! writer's ([`canon::order_for`], [`canon::child_ctx`]).
//!
//! What is accepted or refused is what a `Value` parse accepts: the same parser reads
//! every byte, and inside the element an object whose first key is serde_json's
//! raw-value token is read as the JSON text it holds, as a `Value` with the `raw_value`
//! feature reads it (that value, built, is then written by this same visitor).
//! `Entry::new` (normalising a built element) is the reference this is tested against.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::model::{Kind, META};
use super::normalise::{drop_transport, keeps_inside, sortable};
use crate::canon::{self, Ctx};
use crate::elements::{self, Form};
use crate::keywords::{self, Holds};

/// The key serde_json's `Value` reads an object by when it is the object's first key.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The nesting level of an element's opening brace in a lockfile.
pub(super) const ELEMENT_LEVEL: usize = 3;

/// Read one element (an object the parse has reached), normalised: its key (the key
/// field's value when it is a string, else empty) and its canonical text in compact form
/// (what [`super::compact::write_element`] writes of the normalised element, without
/// the whitespace [`indent_compact`] puts back).
pub(super) fn element<'de, A: MapAccess<'de>>(
    kind: Kind,
    map: A,
) -> Result<(String, String), A::Error> {
    let mut out = String::new();
    let got = Seed {
        out: &mut out,
        ctx: Ctx::Element,
        norm: Norm::Element(kind),
        want: false,
        replay: false,
    }
    .object(map, true)?;
    let key = match got {
        Got::Object { named, .. } => named.map(String::from).unwrap_or_default(),
        _ => String::new(),
    };
    Ok((key, out))
}

/// Where a value sits, for the normaliser.
#[derive(Clone, Copy)]
enum Norm {
    /// Nothing is normalised in it.
    None,
    /// An element: transport fields dropped, `_meta` filtered, its kind's schema
    /// fields normalised.
    Element(Kind),
    /// An element's field of form `arguments`: when an array, each object in it an
    /// [`Norm::Argument`], the items sorted by `name`.
    Arguments,
    /// A named argument: transport fields dropped, `_meta` filtered.
    Argument,
    /// The `_meta` of an element or argument: its per-request keys dropped.
    Meta,
    /// A schema.
    Schema,
    /// The value of a keyword of a schema: what it holds (the vocabulary), and whether
    /// it is a list whose order carries no meaning.
    Keyword {
        holds: Option<Holds>,
        sortable: bool,
    },
    /// A map of subschemas: each value a schema.
    Schemas,
}

impl Norm {
    /// How the fields of an object that sits here are read.
    fn object(self) -> Norm {
        match self {
            Norm::Keyword {
                holds: Some(Holds::Schema | Holds::SchemaOrList),
                ..
            } => Norm::Schema,
            Norm::Keyword {
                holds: Some(Holds::Map | Holds::Dependencies),
                ..
            } => Norm::Schemas,
            Norm::Keyword { .. } | Norm::Arguments => Norm::None,
            other => other,
        }
    }

    /// The field `key` of an object read as `self` (see [`Norm::object`]).
    fn field(self, key: &str) -> Field {
        let fields = &elements::table().fields;
        match self {
            Norm::Element(_) | Norm::Argument if fields.transport.iter().any(|t| t == key) => {
                Field::Transport
            }
            Norm::Element(_) | Norm::Argument if key == META => Field::Meta,
            Norm::Element(kind) => match kind.spec().schema.iter().find(|s| s.field == key) {
                Some(s) if s.form == Form::Schema => Field::Keep(Norm::Schema),
                Some(_) => Field::Keep(Norm::Arguments),
                None => Field::Keep(Norm::None),
            },
            Norm::Meta if fields.per_request_meta.iter().any(|k| k == key) => Field::Dropped,
            Norm::Schema => Field::Keep(Norm::Keyword {
                holds: keywords::holds(key),
                sortable: sortable(key),
            }),
            Norm::Schemas => Field::Keep(Norm::Schema),
            _ => Field::Keep(Norm::None),
        }
    }

    /// The items of an array that sits here.
    fn items(self) -> Norm {
        match self {
            Norm::Arguments => Norm::Argument,
            Norm::Keyword {
                holds: Some(Holds::List | Holds::SchemaOrList),
                ..
            } => Norm::Schema,
            _ => Norm::None,
        }
    }

    /// The field whose string value an object that sits here reports ([`Got::Object`]):
    /// an element's key, an argument's name.
    fn named(self) -> Option<&'static str> {
        match self {
            Norm::Element(kind) => Some(kind.key_field()),
            Norm::Argument => Some("name"),
            _ => None,
        }
    }
}

/// How one field of an object is kept.
enum Field {
    /// Written, its value read as the [`Norm`].
    Keep(Norm),
    /// A transport field: dropped (but for what `keep` names inside it).
    Transport,
    /// `_meta`: its per-request keys dropped, and itself when nothing is left.
    Meta,
    /// Dropped (a per-request key of `_meta`).
    Dropped,
}

/// What a value was, as far as its parent needs to know.
enum Got {
    /// A string: decoded when asked for (`want`).
    Str(Option<Box<str>>),
    /// An object: whether nothing was left in it, and its [`Norm::named`] field's
    /// string value.
    Object {
        empty: bool,
        named: Option<Box<str>>,
    },
    Other,
}

/// One value, written at the end of `out`.
struct Seed<'o> {
    out: &'o mut String,
    /// The canonical writer's context (the order of an object's keys).
    ctx: Ctx,
    norm: Norm,
    /// Give a string's decoded text back.
    want: bool,
    /// Reading a value built from a raw-value token's text: its objects are read as
    /// they are (a `Value` has no tokens left in it).
    replay: bool,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Got;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Got, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Got;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Got, E> {
        self.out.push_str(if v { "true" } else { "false" });
        Ok(Got::Other)
    }
    fn visit_i64<E>(self, v: i64) -> Result<Got, E> {
        canon::write_scalar(self.out, &Value::from(v));
        Ok(Got::Other)
    }
    fn visit_u64<E>(self, v: u64) -> Result<Got, E> {
        canon::write_scalar(self.out, &Value::from(v));
        Ok(Got::Other)
    }
    fn visit_f64<E>(self, v: f64) -> Result<Got, E> {
        canon::write_scalar(self.out, &Value::from(v));
        Ok(Got::Other)
    }
    fn visit_str<E>(self, v: &str) -> Result<Got, E> {
        canon::write_json_string(self.out, v);
        Ok(Got::Str(self.want.then(|| v.into())))
    }
    fn visit_unit<E>(self) -> Result<Got, E> {
        self.out.push_str("null");
        Ok(Got::Other)
    }
    fn visit_none<E>(self) -> Result<Got, E> {
        self.out.push_str("null");
        Ok(Got::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Got, A::Error> {
        self.object(map, false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Got, A::Error> {
        self.array(seq)
    }
}

/// A key, decoded, appended to the keys of its object.
struct KeyInto<'k>(&'k mut String);

impl<'de> DeserializeSeed<'de> for KeyInto<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyInto<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.0.push_str(v);
        Ok(())
    }
}

/// A raw-value token's text, read as serde_json reads it (a string, else refused).
struct RawText;

impl<'de> DeserializeSeed<'de> for RawText {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for RawText {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("raw value")
    }
    fn visit_str<E>(self, v: &str) -> Result<String, E> {
        Ok(v.to_string())
    }
}

/// The fields of an object, or the items of an array that is reordered, as read: where
/// each one's text begins in `out` (at the comma before it, if any: a dropped one's text
/// is empty) and where its decoded key ends in `keys`.
#[derive(Default)]
struct Parts {
    starts: Vec<(usize, usize)>,
    keys: String,
}

impl Parts {
    fn len(&self) -> usize {
        self.starts.len()
    }

    fn key(&self, i: usize) -> &str {
        let from = if i == 0 { 0 } else { self.starts[i - 1].1 };
        &self.keys[from..self.starts[i].1]
    }

    /// Part `i`'s text in `out` (empty when dropped), without the comma before it.
    fn text<'t>(&self, out: &'t str, i: usize) -> &'t str {
        let end = self.starts.get(i + 1).map_or(out.len(), |s| s.0);
        let text = &out[self.starts[i].0..end];
        text.strip_prefix(',').unwrap_or(text)
    }
}

impl Seed<'_> {
    fn with(&mut self, ctx: Ctx, norm: Norm, want: bool) -> Seed<'_> {
        Seed {
            out: self.out,
            ctx,
            norm,
            want,
            replay: self.replay,
        }
    }

    /// Before a part: a comma unless it is the first in the container begun at `start`.
    fn comma(&mut self, start: usize) {
        if self.out.len() > start + 1 {
            self.out.push(',');
        }
    }

    /// An object: each field written as it is read, then put in canonical order.
    /// `top`: the element itself, which is read as a map, never as a raw-value token.
    fn object<'de, A: MapAccess<'de>>(mut self, mut map: A, top: bool) -> Result<Got, A::Error> {
        let norm = self.norm.object();
        let named_field = norm.named();
        let start = self.out.len();
        self.out.push('{');
        let mut parts = Parts::default();
        let mut named = None;
        while let Some(()) = map.next_key_seed(KeyInto(&mut parts.keys))? {
            let key_at = parts.starts.last().map_or(0, |s| s.1);
            let key = &parts.keys[key_at..];
            if parts.len() == 0 && !top && !self.replay && key == RAW_VALUE_TOKEN {
                self.out.truncate(start);
                return self.raw::<A>(map.next_value_seed(RawText)?);
            }
            let at = self.out.len();
            self.comma(start);
            canon::write_json_string(self.out, key);
            self.out.push(':');
            let ctx = canon::child_ctx(self.ctx, key);
            let want = named_field == Some(key);
            let keep = match norm.field(key) {
                Field::Keep(child) => {
                    let got = map.next_value_seed(self.with(ctx, child, want))?;
                    if want {
                        named = match got {
                            Got::Str(s) => s,
                            _ => None,
                        };
                    }
                    true
                }
                Field::Meta => !matches!(
                    map.next_value_seed(self.with(ctx, Norm::Meta, false))?,
                    Got::Object { empty: true, .. }
                ),
                Field::Dropped => {
                    map.next_value_seed(self.with(ctx, Norm::None, false))?;
                    false
                }
                Field::Transport if keeps_inside(key) => {
                    let value = map.next_value::<Value>()?;
                    self.transport(key.to_string(), value, ctx)
                }
                Field::Transport => {
                    map.next_value_seed(self.with(ctx, Norm::None, false))?;
                    false
                }
            };
            if !keep {
                self.out.truncate(at);
            }
            parts.starts.push((at, parts.keys.len()));
        }
        let empty = self.close_object(start, &parts);
        Ok(Got::Object { empty, named })
    }

    /// A transport field with `keep` paths inside it: what the normaliser keeps of it,
    /// written; whether anything was.
    fn transport(&mut self, key: String, value: Value, ctx: Ctx) -> bool {
        let mut alone = Map::new();
        alone.insert(key.clone(), value);
        drop_transport(&mut alone);
        match alone.remove(&key) {
            Some(kept) => {
                let mut seed = self.with(ctx, Norm::None, false);
                seed.replay = true;
                // A value's own deserializer fails only where its visitor does, and
                // this one fails only on a raw-value token, never read in a replay.
                let _ = seed.deserialize(kept);
                true
            }
            None => false,
        }
    }

    /// An object serde_json reads as the JSON text its raw-value token holds: that
    /// text parsed as a `Value` parse does (under one nesting limit through the tokens
    /// inside it: `canon::Bounded`), and the value written as if it were here.
    fn raw<'de, A: MapAccess<'de>>(self, text: String) -> Result<Got, A::Error> {
        let value = canon::value_from_str(&text).map_err(A::Error::custom)?;
        drop(text);
        let seed = Seed {
            replay: true,
            ..self
        };
        seed.deserialize(value).map_err(A::Error::custom)
    }

    /// Put the fields written since `start` (`{` and each field's text) in canonical
    /// order, a key given twice keeping its last value and a dropped field (empty text)
    /// left out, and close the object. Whether it is empty.
    fn close_object(&mut self, start: usize, parts: &Parts) -> bool {
        let n = parts.len();
        let order = canon::order_for(self.ctx);
        let rank = |key: &str| {
            order
                .iter()
                .position(|o| *o == key)
                .map_or(u32::MAX, |p| p as u32)
        };
        // Object sizes are bounded by the message (at most 256 MiB): indices fit.
        let mut sorted: Vec<(u32, u32)> = (0..n).map(|i| (rank(parts.key(i)), i as u32)).collect();
        sorted.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| parts.key(a.1 as usize).cmp(parts.key(b.1 as usize)))
        });
        // The last of each run of one key, unless dropped.
        let same = |a: (u32, u32), b: (u32, u32)| {
            a.0 == b.0 && parts.key(a.1 as usize) == parts.key(b.1 as usize)
        };
        let kept = |j: usize| {
            let i = sorted[j].1 as usize;
            let last = sorted.get(j + 1).is_none_or(|&next| !same(sorted[j], next));
            last && !parts.text(self.out.as_str(), i).is_empty()
        };
        let in_order = (0..n).all(|j| sorted[j].1 as usize == j && kept(j));
        if in_order {
            self.out.push('}');
            return n == 0;
        }
        let mut text = String::with_capacity(self.out.len() - start + 1);
        text.push('{');
        for j in (0..n).filter(|&j| kept(j)) {
            if text.len() > 1 {
                text.push(',');
            }
            text.push_str(parts.text(self.out.as_str(), sorted[j].1 as usize));
        }
        text.push('}');
        let empty = text.len() == 2;
        self.out.truncate(start);
        self.out.push_str(&text);
        empty
    }

    /// An array: each item written as it is read; reordered when it closes if the
    /// normaliser reorders it (arguments by name; a list of names or types sorted and
    /// deduplicated when it holds only strings).
    fn array<'de, A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Got, A::Error> {
        let items = self.norm.items();
        let sorts = matches!(self.norm, Norm::Keyword { sortable: true, .. });
        let by_name = matches!(self.norm, Norm::Arguments);
        let start = self.out.len();
        self.out.push('[');
        let ctx = self.ctx;
        let mut starts = Vec::new();
        let mut names: Vec<Option<Box<str>>> = Vec::new();
        let mut strings = true;
        loop {
            let at = self.out.len();
            self.comma(start);
            let Some(got) = seq.next_element_seed(self.with(ctx, items, false))? else {
                self.out.truncate(at);
                break;
            };
            if sorts || by_name {
                starts.push((at, 0));
            }
            strings &= matches!(got, Got::Str(_));
            if by_name {
                names.push(match got {
                    Got::Object { named, .. } => named,
                    _ => None,
                });
            }
        }
        let parts = Parts {
            starts,
            keys: String::new(),
        };
        if sorts && strings && parts.len() > 1 {
            self.sort_strings(start, &parts);
        } else if by_name && parts.len() > 1 {
            self.sort_by_name(start, &parts, &names);
        }
        self.out.push(']');
        Ok(Got::Other)
    }

    /// The strings written since `start` (`[` and each item) sorted by their decoded
    /// text, each once.
    fn sort_strings(&mut self, start: usize, parts: &Parts) {
        let decoded: Vec<Cow<str>> = (0..parts.len())
            .map(|i| {
                let text = parts.text(self.out.as_str(), i);
                match text.contains('\\') {
                    // serde_json's escaping is canonical: without an escape, the text
                    // between the quotes is the string.
                    false => Cow::Borrowed(&text[1..text.len() - 1]),
                    true => Cow::Owned(serde_json::from_str::<String>(text).unwrap_or_default()),
                }
            })
            .collect();
        let mut order: Vec<u32> = (0..parts.len() as u32).collect();
        order.sort_by(|&a, &b| decoded[a as usize].cmp(&decoded[b as usize]));
        order.dedup_by(|a, b| decoded[*a as usize] == decoded[*b as usize]);
        if order.iter().enumerate().all(|(j, &i)| j == i as usize) && order.len() == parts.len() {
            return;
        }
        drop(decoded);
        self.rewrite(start, parts, &order);
    }

    /// The items written since `start` (`[` and each item) sorted by their `name`
    /// (stable; an item without a string name first).
    fn sort_by_name(&mut self, start: usize, parts: &Parts, names: &[Option<Box<str>>]) {
        let mut order: Vec<u32> = (0..parts.len() as u32).collect();
        order.sort_by(|&a, &b| names[a as usize].cmp(&names[b as usize]));
        if order.iter().enumerate().all(|(j, &i)| j == i as usize) {
            return;
        }
        self.rewrite(start, parts, &order);
    }

    /// The array begun at `start` holding the items `order` names, in that order.
    fn rewrite(&mut self, start: usize, parts: &Parts, order: &[u32]) {
        let mut text = String::with_capacity(self.out.len() - start);
        text.push('[');
        for (j, &i) in order.iter().enumerate() {
            if j > 0 {
                text.push(',');
            }
            text.push_str(parts.text(self.out.as_str(), i as usize));
        }
        self.out.truncate(start);
        self.out.push_str(&text);
    }
}

/// Compact canonical JSON (what [`element`] writes: no whitespace, keys in order)
/// indented as the canonical writer indents, its first line at nesting `level`: two
/// spaces a level, one value a line, `{}` and `[]` when empty, `": "` after a key.
pub(super) fn indent_compact(compact: &str, level: usize, out: &mut String) {
    out.reserve(compact.len() * 2);
    let mut never = |_: &str| -> std::io::Result<()> { Ok(()) };
    let _ = indent_into(compact, level, out, usize::MAX, &mut never);
}

/// [`indent_compact`] in pieces: whenever `out` holds `piece` bytes or more it is handed
/// to `sink` and cleared, and a run of text longer than `piece` (a long string) is
/// handed on where it is, so a large element is never indented whole in memory. What
/// is left in `out` at the end is the rest of the text.
pub(super) fn indent_into(
    compact: &str,
    mut level: usize,
    out: &mut String,
    piece: usize,
    sink: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let bytes = compact.as_bytes();
    let mut i = 0;
    let mut run = 0; // the start of the bytes copied as they are
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' => {
                i = closing_quote(bytes, i) + 1;
                continue;
            }
            b'{' | b'[' | b'}' | b']' | b',' | b':' => {}
            _ => {
                i += 1;
                continue;
            }
        }
        if out.len() >= piece || i - run >= piece {
            sink(out)?;
            out.clear();
            if i - run >= piece {
                sink(&compact[run..i])?;
                run = i;
            }
        }
        out.push_str(&compact[run..i]);
        match b {
            b'{' | b'[' if matches!(bytes.get(i + 1), Some(b'}' | b']')) => {
                out.push_str(&compact[i..i + 2]);
                i += 1;
            }
            b'{' | b'[' => {
                out.push(b as char);
                out.push('\n');
                level += 1;
                canon::indent(out, level);
            }
            b'}' | b']' => {
                out.push('\n');
                level -= 1;
                canon::indent(out, level);
                out.push(b as char);
            }
            b',' => {
                out.push_str(",\n");
                canon::indent(out, level);
            }
            _ => out.push_str(": "),
        }
        i += 1;
        run = i;
    }
    out.push_str(&compact[run..]);
    Ok(())
}

/// The length of `compact` indented at `level` ([`indent_compact`]), counted without
/// writing it (what a writer counts before it writes).
pub(super) fn indented_len(compact: &str, mut level: usize) -> usize {
    let bytes = compact.as_bytes();
    let mut n = compact.len();
    let mut i = 0;
    while let Some(at) = bytes[i..]
        .iter()
        .position(|b| matches!(b, b'"' | b'{' | b'[' | b'}' | b']' | b',' | b':'))
    {
        i += at;
        match bytes[i] {
            b'"' => i = closing_quote(bytes, i),
            b'{' | b'[' if matches!(bytes.get(i + 1), Some(b'}' | b']')) => i += 1,
            b'{' | b'[' => {
                level += 1;
                n += 1 + 2 * level;
            }
            b'}' | b']' => {
                level = level.saturating_sub(1);
                n += 1 + 2 * level;
            }
            b',' => n += 1 + 2 * level,
            _ => n += 1,
        }
        i += 1;
        if i >= bytes.len() {
            break;
        }
    }
    n
}

/// Whether `indented` is exactly `compact` indented at `level` ([`indent_compact`]):
/// compared a piece at a time as it is indented, stopping at the first difference.
pub(super) fn indents_to(compact: &str, level: usize, indented: &str) -> bool {
    // Indenting only adds bytes: a shorter text cannot be it.
    if indented.len() < compact.len() {
        return false;
    }
    let theirs = indented.as_bytes();
    let mut at = 0usize;
    let mut same = |piece: &str| {
        let ok = theirs.get(at..at + piece.len()) == Some(piece.as_bytes());
        at += piece.len();
        match ok {
            true => Ok(()),
            false => Err(std::io::ErrorKind::InvalidData.into()),
        }
    };
    let mut out = String::with_capacity(indented.len().min(PIECE));
    indent_into(compact, level, &mut out, PIECE, &mut same).is_ok()
        && same(&out).is_ok()
        && at == theirs.len()
}

/// The size of the pieces [`indents_to`] compares.
const PIECE: usize = 1 << 16;

/// Where the string whose opening quote is at `open` closes, in canonical text (a
/// backslash escapes the byte after it).
fn closing_quote(bytes: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while let Some(at) = memchr::memchr2(b'"', b'\\', &bytes[i..]) {
        i += at;
        if bytes[i] != b'\\' {
            break;
        }
        i += 2;
    }
    i
}

/// Canonical text (as [`super::compact::write_element`] writes it) in compact form:
/// its whitespace outside strings removed, which is all [`indent_compact`] adds.
pub(super) fn compact_of(indented: &str) -> String {
    let bytes = indented.as_bytes();
    let mut out = String::with_capacity(indented.len());
    let (mut i, mut run) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = closing_quote(bytes, i) + 1;
            }
            b' ' | b'\n' => {
                out.push_str(&indented[run..i]);
                i += 1;
                run = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&indented[run.min(indented.len())..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::Entry;

    /// An element's entry as the capture reads it, and as normalising the built
    /// element gives it.
    fn both(kind: Kind, text: &str) -> ((String, String), Entry) {
        struct One(Kind);
        impl<'de> Visitor<'de> for One {
            type Value = (String, String);
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an element")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(String, String), A::Error> {
                element(self.0, map)
            }
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let streamed = de.deserialize_map(One(kind)).unwrap();
        let built: Map<String, Value> = serde_json::from_str(text).unwrap();
        (streamed, Entry::new(kind, built))
    }

    /// `built` normalised and written canonically, indented as a lockfile holds it.
    fn written(kind: Kind, mut built: Map<String, Value>) -> String {
        crate::lockfile::normalise::normalize_element(kind, &mut built);
        let mut out = String::new();
        crate::lockfile::compact::write_element(&mut out, &built);
        out
    }

    fn same(kind: Kind, text: &str) {
        let ((key, streamed), entry) = both(kind, text);
        assert_eq!(streamed, &*entry.compact, "{text}");
        assert_eq!(key, &*entry.key, "{text}");
        // Indented, it is the canonical writer's text, piece by piece as well.
        let indented = written(kind, serde_json::from_str(text).unwrap());
        assert_eq!(entry.text(), indented, "{text}");
        assert_eq!(entry.indented_len(), indented.len(), "{text}");
        assert!(entry.indents_to(&indented), "{text}");
        assert!(!entry.indents_to(&format!("{indented} ")), "{text}");
        for piece in [1, 2, 7] {
            let (mut out, mut pieces) = (String::new(), String::new());
            let mut sink = |p: &str| -> std::io::Result<()> {
                pieces.push_str(p);
                Ok(())
            };
            entry.indent_into(&mut out, piece, &mut sink).unwrap();
            pieces.push_str(&out);
            assert_eq!(pieces, indented, "{text}, pieces of {piece}");
        }
    }

    #[test]
    fn an_element_streamed_is_the_element_normalised_and_written() {
        for text in [
            r#"{}"#,
            r#"{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"b":{"type":["string","null","string"]},"a":{"enum":["z","a"],"required":["y","x","y"]}},"required":["b","a","a"]}}"#,
            r#"{"name":"dup","name":"last","inputSchema":{"type":"a","type":"b"},"ttlMs":5,"cacheScope":{"x":[1]},"_meta":{"progressToken":1}}"#,
            r#"{"name":"m","_meta":{"a":1},"_meta":{"traceparent":"x"}}"#,
            r#"{"name":"m","_meta":{"traceparent":"x"},"_meta":{"a":[]}}"#,
            r#"{"name":"m","_meta":[],"x":{},"y":[],"z":[{},[]]}"#,
            r#"{"name":5,"inputSchema":{"anyOf":[{"required":["b","a"]},[{"required":["b","a"]}],true],"items":{"required":["d","c"]},"prefixItems":[{"type":["b","a"]}],"$defs":{"z":{"required":["q","p"]},"a":true},"dependencies":{"a":["z","y"],"b":{"required":["n","m"]}},"enum":[["b","a"]],"default":{"required":["b","a"]},"x-y":{"required":["b","a"]}}}"#,
            r#"{"name":"esc\"\\\u0001é","inputSchema":{"required":["\u00e9","e","\"","\\","\u0007","é"],"properties":{"\"":{},"\\":{},"a":{},"\u0000":{}}}}"#,
            r#"{"name":"n","inputSchema":{"required":["a",1,"b"],"type":["x"],"properties":{"type":{"type":["b","a"]}}}}"#,
            r#"{"name":"num","inputSchema":{"minimum":1e5,"maximum":-0,"multipleOf":0.1,"const":18446744073709551615,"default":-9223372036854775808,"x":1.5e-300}}"#,
            r#"{"name":"raw","inputSchema":{"properties":{"a":{"$serde_json::private::RawValue":"{\"required\":[\"b\",\"a\"],\"z\":1}"}}}}"#,
            r#"{"name":"raw2","inputSchema":{"$serde_json::private::RawValue":"[3,1]"},"outputSchema":{"z":{"$serde_json::private::RawValue":"{\"b\":{\"$serde_json::private::RawValue\":\"true\"},\"a\":1}"}}}"#,
            r#"{"name":"raw3","inputSchema":{"a":1,"$serde_json::private::RawValue":"7"}}"#,
            // Built, its first key in order is the token: read as it is.
            r#"{"name":"raw4","x":{"$serde_json::private::RawValue":"{\"z\":1,\"$serde_json::private::RawValue\":\"5\"}"}}"#,
            r#"{"$serde_json::private::RawValue":"7","name":"top"}"#,
            r#"{"name":"t","arguments":[{"name":"b"},{"name":"a"}],"inputSchema":true,"outputSchema":false}"#,
            r#"{"zeta":1,"annotations":{"b":1,"a":2},"icons":[{"src":"s","sizes":["b","a"]}],"execution":null,"title":"T","name":"n"}"#,
        ] {
            same(Kind::Tool, text);
        }
        for text in [
            r#"{"name":"p","arguments":[{"name":"b","required":true,"ttlMs":1,"_meta":{"progressToken":1}},{"name":"a","_meta":{"k":{"b":1,"a":2}}},{"description":"unnamed"},{"name":5},{"name":"a","description":"second a"},7,"s",["x"]]}"#,
            r#"{"name":"p","arguments":{"b":1,"a":2}}"#,
            r#"{"name":"p","arguments":[{"name":"z"},{"name":"y","name":"x"},{"$serde_json::private::RawValue":"{\"name\":\"a\"}"}]}"#,
            r#"{"name":"p","inputSchema":{"required":["b","a"]},"arguments":["b","a"]}"#,
        ] {
            same(Kind::Prompt, text);
        }
        same(
            Kind::Resource,
            r#"{"uri":"u","name":"n","size":3,"mimeType":"m","_meta":{"b":1,"a":2,"baggage":3}}"#,
        );
        same(Kind::Template, r#"{"uriTemplate":"u/{x}","name":"n"}"#);
    }

    /// Random elements (keys from the places the normaliser and the writer treat
    /// apart, given twice, escaped, raw-value tokens) read both ways: proptest, from a
    /// fixed seed (every run checks the same 3,000), so a failure shrinks toward an
    /// element of few, shallow fields.
    #[test]
    fn random_elements_stream_as_they_normalise() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngSeed, TestRunner};
        const WORDS: &[&str] = &[
            "name",
            "type",
            "required",
            "properties",
            "items",
            "anyOf",
            "allOf",
            "oneOf",
            "enum",
            "const",
            "default",
            "$defs",
            "definitions",
            "additionalProperties",
            "prefixItems",
            "dependencies",
            "dependentRequired",
            "patternProperties",
            "not",
            "if",
            "then",
            "title",
            "description",
            "_meta",
            "ttlMs",
            "cacheScope",
            "resultType",
            "progressToken",
            "traceparent",
            "inputSchema",
            "outputSchema",
            "arguments",
            "uri",
            "a",
            "b",
            "z",
            "é",
            "\\\"q",
            "\\u0001",
            "\\ud83d\\ude00",
            "x-ext",
            "$serde_json::private::RawValue",
        ];
        let object = |fields: Vec<(String, String)>| {
            let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", fields.join(","))
        };
        let word = (0..WORDS.len()).prop_map(|i| format!("\"{}\"", WORDS[i]));
        let number = prop::sample::select(vec!["1", "-0", "1e5", "0.5", "true", "null"]);
        let raw = r#"{"$serde_json::private::RawValue":"[\"b\",\"a\"]"}"#;
        let leaf = prop_oneof![
            2 => word.clone(),
            1 => number.prop_map(String::from),
            1 => Just(raw.to_string()),
        ];
        let fields = word.clone();
        let value = leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                3 => prop::collection::vec((fields.clone(), inner.clone()), 0..6)
                    .prop_map(object),
                2 => prop::collection::vec(inner, 0..5)
                    .prop_map(|items| format!("[{}]", items.join(","))),
            ]
        });
        let elements = prop::collection::vec((word, value), 0..6).prop_map(object);
        let mut runner = TestRunner::new(Config {
            cases: 3000,
            rng_seed: RngSeed::Fixed(0x9e37_79b9_7f4a_7c15),
            failure_persistence: None,
            ..Config::default()
        });
        let outcome = runner.run(&(elements, 0..Kind::ALL.len()), |(text, k)| {
            let kind = Kind::ALL[k];
            let ours = {
                struct One(Kind);
                impl<'de> Visitor<'de> for One {
                    type Value = (String, String);
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("an element")
                    }
                    fn visit_map<A: MapAccess<'de>>(
                        self,
                        map: A,
                    ) -> Result<(String, String), A::Error> {
                        element(self.0, map)
                    }
                }
                let mut de = serde_json::Deserializer::from_str(&text);
                de.deserialize_map(One(kind)).map_err(|e| e.to_string())
            };
            match serde_json::from_str::<Map<String, Value>>(&text) {
                Ok(built) => {
                    let indented = written(kind, built.clone());
                    let entry = Entry::new(kind, built);
                    let (key, streamed) = ours.expect(&text);
                    assert_eq!(streamed, &*entry.compact, "{text}");
                    assert_eq!(entry.text(), indented, "{text}");
                    assert_eq!(entry.indented_len(), indented.len(), "{text}");
                    assert_eq!(key, &*entry.key, "{text}");
                }
                Err(e) => assert_eq!(ours.err(), Some(e.to_string()), "{text}"),
            }
            Ok(())
        });
        if let Err(e) = outcome {
            panic!("{e}");
        }
    }

    #[test]
    fn what_a_value_parse_refuses_is_refused() {
        struct One;
        impl<'de> Visitor<'de> for One {
            type Value = (String, String);
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an element")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(String, String), A::Error> {
                element(Kind::Tool, map)
            }
        }
        for text in [
            r#"{"name":"\ud800"}"#,
            r#"{"name":1e400}"#,
            r#"{"a":{"$serde_json::private::RawValue":5}}"#,
            r#"{"a":{"$serde_json::private::RawValue":"[1,"}}"#,
            r#"{"a":{"$serde_json::private::RawValue":"1","b":2}}"#,
            r#"{"ttlMs":{"\ud800":1}}"#,
            r#"{"_meta":{"progressToken":"\udc00"}}"#,
        ] {
            let mut de = serde_json::Deserializer::from_str(text);
            let ours = de
                .deserialize_map(One)
                .map(|_| ())
                .map_err(|e| e.to_string());
            let theirs = serde_json::from_str::<Map<String, Value>>(text)
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert!(ours.is_err(), "{text}");
            assert_eq!(ours, theirs, "{text}");
        }
    }
}
