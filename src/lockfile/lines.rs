//! Line maps: where each element (and each value inside it) sits in a lockfile, for the
//! formats that point at lines (SARIF, GitHub). From a built lockfile (its canonical
//! text, written: `lint`), or from a file as read ([`Raw`]): each element's lines in
//! the file itself, and the lines inside a changed element from writing it canonically
//! with the writer's own span tracking, when the file holds exactly that text.

use std::collections::HashSet;

use super::envelope::offset;
use super::model::{key_of, Element, Kind, Lockfile, Surface};
use super::read::Raw;
use crate::canon::{self, Ctx, Track};
use crate::path::Path;

impl Lockfile {
    /// Where each element (and each value inside it) sits in the canonical text.
    pub fn line_map(&self) -> LineMap {
        self.line_map_for(None).0
    }

    /// `line_map`, tracking the values inside only the elements in `wanted` (every
    /// element's own lines are always there), and the canonical text it counted.
    pub fn line_map_for(&self, wanted: Option<&HashSet<(Kind, String)>>) -> (LineMap, String) {
        let mut map = LineMap::default();
        let text = self.render(&mut map, wanted);
        (map, text)
    }
}

/// Lines (1-based, inclusive) of the elements of a lockfile's canonical text.
#[derive(Debug, Default)]
pub struct LineMap {
    /// Some changed element is not written as the canonical writer writes it: its own
    /// lines are right, but values inside it point at the element.
    pub approximate: bool,
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
    pub fn find(&self, kind: Kind, key: &str, path: Option<&Path>) -> Option<(usize, usize)> {
        let (start, end, spans) = self.elements.get(&(kind, key.to_string()))?;
        if let Some(path) = path {
            for prefix in prefixes(path).rev() {
                if let Some(span) = spans.get(&prefix) {
                    return Some(*span);
                }
            }
        }
        Some((*start, *end))
    }
}

/// Each prefix of `path`, written (`a.b["c.d"][2]` → `a`, `a.b`, `a.b["c.d"]`,
/// `a.b["c.d"][2]`): the keys of the spans the canonical writer records.
fn prefixes(path: &Path) -> impl DoubleEndedIterator<Item = String> + '_ {
    (1..=path.0.len()).map(|n| Path(path.0[..n].to_vec()).to_string())
}

/// The values whose lines a line map made from a file's bytes records inside each
/// element: every prefix of each path asked for (as [`LineMap::find`] looks for the
/// deepest part of a path that exists). An element asked for with no path gets only
/// its own lines.
#[derive(Default)]
pub struct Wanted(std::collections::HashMap<(Kind, String), HashSet<String>>);

impl Wanted {
    pub fn add(&mut self, kind: Kind, key: &str, path: Option<&Path>) {
        let paths = self.0.entry((kind, key.to_string())).or_default();
        paths.extend(path.into_iter().flat_map(prefixes));
    }
}

impl Raw<'_> {
    /// This file's line map: every list's line, and for each element of `built` (the
    /// ones that changed, built and normalised) its lines in the file and the lines of
    /// the values inside it that `wanted` names.
    pub fn line_map(&self, built: &Surface, wanted: &Wanted) -> LineMap {
        let mut map = LineMap::default();
        // (offset, kind, the changed element there or None for the list's own line),
        // counted in offset order.
        type Place<'e> = (usize, Kind, Option<(&'e str, &'e str, &'e Element)>);
        let mut places: Vec<Place<'_>> = Kind::ALL
            .into_iter()
            .zip(self.list_at)
            .filter_map(|(kind, at)| Some((at?, kind, None)))
            .collect();
        let index = self.index();
        for (k, kind) in Kind::ALL.into_iter().enumerate() {
            for element in built.list(kind) {
                let key = key_of(element, kind.key_field());
                if let Some(text) = index[k].get(key) {
                    places.push((offset(self.bytes, text), kind, Some((key, text, element))));
                }
            }
        }
        places.sort_by_key(|p| p.0);
        let mut counter = LineCounter::default();
        let mut text = String::new();
        for (at, kind, element) in places {
            let start = counter.line_at(self.bytes, at);
            let Some((key, raw, element)) = element else {
                map.lists.insert(kind, start);
                continue;
            };
            text.clear();
            let paths = wanted.0.get(&(kind, key.to_string())).cloned();
            let mut track = Track::only(&text, start, paths.unwrap_or_default());
            canon::write_object_tracked(&mut text, element, Ctx::Element, 3, Some(&mut track));
            let span = if text == *raw {
                (start, track.line_now(&text), track.spans)
            } else {
                map.approximate = true;
                (
                    start,
                    start + count_newlines(raw.as_bytes()),
                    Default::default(),
                )
            };
            map.elements.insert((kind, key.to_string()), span);
        }
        map
    }
}

/// Counts newlines forward through a file: the 1-based line of an offset.
#[derive(Default)]
struct LineCounter {
    at: usize,
    newlines: usize,
}

impl LineCounter {
    /// The line `offset` is on; offsets must not decrease between calls.
    fn line_at(&mut self, bytes: &[u8], offset: usize) -> usize {
        if offset > self.at {
            self.newlines += count_newlines(&bytes[self.at..offset]);
            self.at = offset;
        }
        self.newlines + 1
    }
}

fn count_newlines(bytes: &[u8]) -> usize {
    // memchr's vectorised search (already in the build through globset): a sixth of the
    // instructions of a word-at-a-time count on lockfile text.
    memchr::memchr_iter(b'\n', bytes).count()
}
