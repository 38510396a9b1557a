//! The compact surface: each element as its canonical text without the indentation
//! (what a lockfile holds for it, less the whitespace outside strings), not as a tree of
//! values. A capture keeps this form: each element of a list reply is normalised and
//! written as it is parsed, never built (`stream`; a map of serde_json takes about 630
//! bytes however few keys it holds: 400,000 tiny tools held as maps are 30 times their
//! reply). It is indented only as it is written or compared, a piece at a time: the
//! indented text of an array of scalars is 7.5 times its message, each item on a line of
//! its own. The writer writes it, a live check compares it with the baseline's elements
//! by their bytes indented, and an element is built into values only where something must
//! look inside it.

use super::model::{key_of, Element, Kind, Lockfile, ServerInfo, Surface, COVENANT_VERSION};
use super::normalise::normalize_element;
use super::stream::{
    compact_of, indent_compact, indent_into, indented_len, indents_to, ELEMENT_LEVEL,
};
use crate::canon::{self, Ctx};
use crate::error::{Error, Result};

/// One element: its key and its canonical text in compact form (as a lockfile's list
/// holds it once indented: [`Entry::indents_to`], [`Entry::indent_into`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: Box<str>,
    pub compact: Box<str>,
}

impl Entry {
    /// `element` normalised and written canonically; its values are dropped.
    pub fn new(kind: Kind, mut element: Element) -> Entry {
        normalize_element(kind, &mut element);
        Entry::of(kind, &element)
    }

    /// The element `map` holds (a list item a parse has reached), normalised and
    /// written canonically as it is read, never built ([`super::stream`]): the same
    /// entry as [`Entry::new`] of the element built.
    pub fn read<'de, A: serde::de::MapAccess<'de>>(
        kind: Kind,
        map: A,
    ) -> std::result::Result<Entry, A::Error> {
        let (key, compact) = super::stream::element(kind, map)?;
        Ok(Entry {
            key: key.into(),
            compact: compact.into(),
        })
    }

    /// A normalised element written canonically.
    fn of(kind: Kind, element: &Element) -> Entry {
        let mut text = String::new();
        write_element(&mut text, element);
        Entry {
            key: key_of(element, kind.key_field()).into(),
            compact: compact_of(&text).into(),
        }
    }

    /// The element built (its canonical text parsed: already normalised). An error is
    /// the parse's of the indented text, as a lockfile holds it (its line and column).
    pub fn build(&self, kind: Kind) -> Result<Element> {
        serde_json::from_str(&self.compact).map_err(|_| {
            let e = serde_json::from_str::<Element>(&self.text())
                .err()
                .map_or_else(String::new, |e| e.to_string());
            Error::new(format!(
                "an element of surface.{} does not read back: {e}",
                kind.list_name()
            ))
        })
    }

    /// The canonical text, indented as a lockfile's list holds it (whole: for a small
    /// element, or an error's position).
    pub fn text(&self) -> String {
        let mut text = String::new();
        indent_compact(&self.compact, ELEMENT_LEVEL, &mut text);
        text
    }

    /// The length of the canonical text, counted without writing it.
    pub fn indented_len(&self) -> usize {
        indented_len(&self.compact, ELEMENT_LEVEL)
    }

    /// Whether `indented` (an element's text in a file) is exactly this element's
    /// canonical text, compared a piece at a time as it is indented.
    pub fn indents_to(&self, indented: &str) -> bool {
        indents_to(&self.compact, ELEMENT_LEVEL, indented)
    }

    /// The canonical text appended to `out`, which is handed to `sink` (and cleared)
    /// whenever it holds `piece` bytes or more.
    pub(super) fn indent_into(
        &self,
        out: &mut String,
        piece: usize,
        sink: &mut dyn FnMut(&str) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        indent_into(&self.compact, ELEMENT_LEVEL, out, piece, sink)
    }
}

/// Every element of a surface in compact form, by kind, each list in key order once
/// [`Listing::sort`]ed (as a normalised [`Surface`] is).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    lists: [Vec<Entry>; 4],
}

impl Listing {
    pub fn list(&self, kind: Kind) -> &[Entry] {
        &self.lists[kind as usize]
    }

    pub fn extend(&mut self, kind: Kind, entries: impl IntoIterator<Item = Entry>) {
        self.lists[kind as usize].extend(entries);
    }

    /// Each list in key order (stable: a key given twice keeps the server's order).
    pub fn sort(&mut self) {
        for list in &mut self.lists {
            list.sort_by(|a, b| a.key.cmp(&b.key));
        }
    }

    pub fn len(&self) -> usize {
        self.lists.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A surface (normalised) in compact form.
    pub fn of(surface: &Surface) -> Listing {
        let mut out = Listing::default();
        for kind in Kind::ALL {
            out.extend(kind, surface.list(kind).iter().map(|e| Entry::of(kind, e)));
        }
        out
    }

    /// Every element built.
    pub fn build(&self) -> Result<Surface> {
        let mut surface = Surface::default();
        for kind in Kind::ALL {
            *surface.list_mut(kind) = self
                .list(kind)
                .iter()
                .map(|e| e.build(kind))
                .collect::<Result<_>>()?;
        }
        Ok(surface)
    }
}

/// A lockfile whose elements are in compact form: what a capture makes and `snapshot`
/// writes. [`Snapshot::build`] gives the [`Lockfile`] the engine reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub covenant_version: String,
    pub captured_at_unix: u64,
    pub server: ServerInfo,
    pub listing: Listing,
}

impl Snapshot {
    pub fn new(server: ServerInfo, mut listing: Listing, captured_at_unix: u64) -> Snapshot {
        listing.sort();
        Snapshot {
            covenant_version: COVENANT_VERSION.to_string(),
            captured_at_unix,
            server,
            listing,
        }
    }

    /// A built lockfile in compact form.
    pub fn of(lock: &Lockfile) -> Snapshot {
        Snapshot {
            covenant_version: lock.covenant_version.clone(),
            captured_at_unix: lock.captured_at_unix,
            server: lock.server.clone(),
            listing: Listing::of(&lock.surface),
        }
    }

    /// Every element built: the lockfile.
    pub fn build(&self) -> Result<Lockfile> {
        Ok(Lockfile {
            covenant_version: self.covenant_version.clone(),
            captured_at_unix: self.captured_at_unix,
            server: self.server.clone(),
            surface: self.listing.build()?,
        })
    }

    /// `N tool(s), N resource(s), N template(s), N prompt(s)`.
    pub fn counts(&self) -> String {
        let n = |k| self.listing.list(k).len();
        format!(
            "{} tool(s), {} resource(s), {} template(s), {} prompt(s)",
            n(Kind::Tool),
            n(Kind::Resource),
            n(Kind::Template),
            n(Kind::Prompt)
        )
    }
}

/// One element's canonical text, as a lockfile's list holds it (without the indent of
/// its first line): a canonical file's element has exactly these bytes.
pub(crate) fn write_element(out: &mut String, element: &Element) {
    canon::write_object(out, element, Ctx::Element, 3);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_its_elements_canonical_text_and_builds_back() {
        let text = r#"{"covenant_version":"0.1.1","captured_at_unix":5,"server":{"name":"s"},
            "surface":{"tools":[{"name":"b","_meta":{"progressToken":1},"inputSchema":{"required":["y","x"]}},{"name":"a"}]}}"#;
        let lock = Lockfile::parse(text.as_bytes(), "t").unwrap();
        let snap = Snapshot::of(&lock);
        assert_eq!(snap.to_text(), lock.to_text());
        assert_eq!(snap.build().unwrap(), lock);
        let map = serde_json::json!({"name": "b", "_meta": {"progressToken": 1},
            "inputSchema": {"required": ["y", "x"]}});
        let entry = Entry::new(Kind::Tool, map.as_object().unwrap().clone());
        assert_eq!(&entry, &snap.listing.list(Kind::Tool)[1]);
        assert_eq!(
            snap.counts(),
            "2 tool(s), 0 resource(s), 0 template(s), 0 prompt(s)"
        );
    }
}
