//! The lockfile's shapes as serde reads them, shared by the reader (`read`) and the
//! placement of a pair's second file (`place`): the envelope, and each list's elements
//! as their text or checked as they are parsed (`probe`).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{Kind, ServerInfo};
use super::probe::{self, Fields};

/// The file as serde_json reads it: the envelope, and each element as `T` reads it
/// (its text, or its [`Fields`] checked as it is parsed).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound(deserialize = "T: ReadList<'de>, 'de: 'a"))]
struct Envelope<'a, T> {
    covenant_version: String,
    captured_at_unix: u64,
    #[serde(default)]
    server: ServerInfo,
    surface: Lists<'a, T>,
}

/// `surface`: each list's elements, and where each list's key is.
struct Lists<'a, T> {
    lists: [Vec<T>; 4],
    keys: [Option<&'a str>; 4],
}

/// How one list's elements are read: as their text, or checked as they are parsed.
pub(super) trait ReadList<'de>: Sized {
    fn list<A: MapAccess<'de>>(map: &mut A, kind: Kind) -> Result<Vec<Self>, A::Error>;
}

impl<'de> ReadList<'de> for &'de RawValue {
    fn list<A: MapAccess<'de>>(map: &mut A, _: Kind) -> Result<Vec<Self>, A::Error> {
        map.next_value()
    }
}

impl<'de> ReadList<'de> for Fields<'de> {
    fn list<A: MapAccess<'de>>(map: &mut A, kind: Kind) -> Result<Vec<Self>, A::Error> {
        map.next_value_seed(probe::List(kind.spec()))
    }
}

/// The lists, in [`Kind::ALL`] order.
fn list_names() -> &'static [&'static str; 4] {
    static NAMES: std::sync::OnceLock<[&'static str; 4]> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| Kind::ALL.map(Kind::list_name))
}

impl<'de: 'a, 'a, T: ReadList<'de>> Deserialize<'de> for Lists<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ListsVisitor(std::marker::PhantomData))
    }
}

struct ListsVisitor<'a, T>(std::marker::PhantomData<(&'a (), T)>);

impl<'de: 'a, 'a, T: ReadList<'de>> Visitor<'de> for ListsVisitor<'a, T> {
    type Value = Lists<'a, T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Surface")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Lists {
            lists: Default::default(),
            keys: [None; 4],
        };
        let mut seen = [false; 4];
        let names = list_names();
        while let Some(key) = map.next_key_seed(probe::Probe::TEXT)? {
            let key = key.text.unwrap_or_default();
            let Some(k) = names.iter().position(|n| *n == key) else {
                return Err(de::Error::unknown_field(&key, names));
            };
            if std::mem::replace(&mut seen[k], true) {
                return Err(de::Error::duplicate_field(names[k]));
            }
            if let Cow::Borrowed(text) = key {
                out.keys[k] = Some(text);
            }
            out.lists[k] = T::list(&mut map, Kind::ALL[k])?;
        }
        Ok(out)
    }
}

/// A file read as far as its envelope: its elements' text.
pub(super) struct Unchecked<'a> {
    pub(super) envelope: (String, u64, ServerInfo),
    pub(super) texts: Vec<Vec<&'a str>>,
    pub(super) list_at: [Option<usize>; 4],
}

/// A file parsed: its envelope, its lists as `T` reads them, and its text when UTF-8.
pub(super) type Parsed<'a, T> = (Unchecked<'a>, [Vec<T>; 4], Option<&'a str>);

/// Parse `bytes` as a lockfile whose elements `T` reads (its version not checked: the
/// reader does that). With the text, when it is UTF-8 (else serde_json says where it is
/// not).
pub(super) fn parse<'a, T: ReadList<'a>>(bytes: &'a [u8]) -> serde_json::Result<Parsed<'a, T>> {
    let text = std::str::from_utf8(bytes).ok();
    let e = match text {
        Some(text) => serde_json::from_str::<Envelope<'a, T>>(text),
        None => serde_json::from_slice(bytes),
    }?;
    let Lists { lists, keys } = e.surface;
    let u = Unchecked {
        envelope: (e.covenant_version, e.captured_at_unix, e.server),
        texts: Vec::new(),
        list_at: keys.map(|k| k.map(|k| offset(bytes, k))),
    };
    Ok((u, lists, text))
}

/// Where `part` starts in `bytes` (it borrows from them).
pub(super) fn offset(bytes: &[u8], part: &str) -> usize {
    part.as_ptr() as usize - bytes.as_ptr() as usize
}
