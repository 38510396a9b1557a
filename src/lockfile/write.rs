//! Writing: canonical (the same surface always gives the same bytes) and atomic (a
//! failed write never leaves a truncated file behind), and never turned against the
//! user (see [`write_atomic`]).

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

use super::compact::{write_element, Snapshot};
use super::lines::LineMap;
use super::model::{key_of, Kind, Lockfile, ServerInfo};
use super::probe;
use super::read::{captured_at_of, check_element, Raw};
use crate::canon::{self, Ctx};
use crate::error::{Error, Result};
use crate::io::{max_read_bytes, read_input, write_atomic_with};

impl Lockfile {
    /// The canonical text of this lockfile.
    pub fn to_text(&self) -> String {
        Snapshot::of(self).to_text()
    }

    /// Write to `path` atomically, as [`Snapshot::write`] does.
    pub fn write(&mut self, path: &Path) -> Result<()> {
        let mut snapshot = Snapshot::of(self);
        snapshot.write(path)?;
        self.captured_at_unix = snapshot.captured_at_unix;
        Ok(())
    }

    /// The canonical text, recording in `map` the lines of each list and element, and of
    /// the values inside the elements `wanted` names (all when `None`).
    pub(super) fn render(
        &self,
        map: &mut LineMap,
        wanted: Option<&HashSet<(Kind, String)>>,
    ) -> String {
        let mut out = String::with_capacity(1 << 16);
        write_envelope(
            &mut out,
            &self.covenant_version,
            self.captured_at_unix,
            &self.server,
        );
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
            map.lists.insert(kind, line_now(&out));
            let list = self.surface.list(kind);
            open_list(&mut out, kind, list.is_empty());
            for (i, element) in list.iter().enumerate() {
                canon::indent(&mut out, 3);
                let start = line_now(&out);
                let key = (kind, key_of(element, kind.key_field()).to_string());
                let mut track = canon::Track::at(&out, start);
                let tracked = wanted.is_none_or(|w| w.contains(&key));
                canon::write_object_tracked(
                    &mut out,
                    element,
                    Ctx::Element,
                    3,
                    tracked.then_some(&mut track),
                );
                let end = line_now(&out);
                map.elements.insert(key, (start, end, track.spans));
                out.push_str(if i + 1 == list.len() { "\n" } else { ",\n" });
            }
            close_list(&mut out, k, list.is_empty());
        }
        out.push_str("  }\n}\n");
        out
    }
}

/// The envelope, up to the opening of `surface`.
fn write_envelope(out: &mut String, version: &str, captured_at_unix: u64, server: &ServerInfo) {
    out.push_str("{\n");
    canon::indent(out, 1);
    canon::write_key(out, "covenant_version");
    canon::write_value(out, &Value::String(version.to_string()), Ctx::Plain, 1);
    out.push_str(",\n");
    canon::indent(out, 1);
    canon::write_key(out, "captured_at_unix");
    out.push_str(&captured_at_unix.to_string());
    out.push_str(",\n");
    canon::indent(out, 1);
    canon::write_key(out, "server");
    canon::write_object(out, &server_map(server), Ctx::Plain, 1);
    out.push_str(",\n");
    canon::indent(out, 1);
    canon::write_key(out, "surface");
    out.push_str("{\n");
}

/// `"tools": [` (after its indent), or `"tools": []` for an empty list.
fn open_list(out: &mut String, kind: Kind, empty: bool) {
    canon::write_key(out, kind.list_name());
    out.push_str(if empty { "[]" } else { "[\n" });
}

/// The end of the `k`th list.
fn close_list(out: &mut String, k: usize, empty: bool) {
    if !empty {
        canon::indent(out, 2);
        out.push(']');
    }
    out.push_str(if k + 1 == Kind::ALL.len() {
        "\n"
    } else {
        ",\n"
    });
}

/// The server's fields (rules/elements.toml `[[server]]`): those it gave, and its name
/// always.
fn server_map(server: &ServerInfo) -> Map<String, Value> {
    let mut map = Map::new();
    for (field, value) in server.fields() {
        if let Some(v) = value {
            map.insert(field.field.clone(), Value::String(v.to_string()));
        }
    }
    map
}

impl Snapshot {
    /// The canonical text, whole.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        let _ = self.stream_text(
            &mut |piece: &str| {
                text.push_str(piece);
                Ok(())
            },
            None,
        );
        text
    }

    /// Hand the canonical text to `sink` in pieces (the envelope with the first
    /// element, then an element at a time). With `lengths`, each element's text is not
    /// written but its length added there (all that counting the size needs).
    fn stream_text(
        &self,
        sink: &mut Sink<'_>,
        mut lengths: Option<&mut u64>,
    ) -> std::io::Result<()> {
        let mut out = String::with_capacity(1 << 16);
        write_envelope(
            &mut out,
            &self.covenant_version,
            self.captured_at_unix,
            &self.server,
        );
        for (k, kind) in Kind::ALL.into_iter().enumerate() {
            canon::indent(&mut out, 2);
            let list = self.listing.list(kind);
            open_list(&mut out, kind, list.is_empty());
            for (i, entry) in list.iter().enumerate() {
                canon::indent(&mut out, 3);
                // Indented as it is written, handed on a piece at a time: one element
                // can be most of a file, and its indented text many times its own.
                match lengths.as_deref_mut() {
                    Some(n) => *n += entry.indented_len() as u64,
                    None => entry.indent_into(&mut out, LARGE_PIECE, sink)?,
                }
                out.push_str(if i + 1 == list.len() { "\n" } else { ",\n" });
                sink(&out)?;
                out.clear();
            }
            close_list(&mut out, k, list.is_empty());
        }
        out.push_str("  }\n}\n");
        sink(&out)
    }

    /// Whether `bytes` are exactly this lockfile's canonical text: compared piece by
    /// piece as it is written, stopping at the first difference.
    pub fn is_text_of(&self, bytes: &[u8]) -> bool {
        let mut at = 0usize;
        let mut sink = |piece: &str| {
            let same = bytes.get(at..at + piece.len()) == Some(piece.as_bytes());
            at += piece.len();
            match same {
                true => Ok(()),
                false => Err(std::io::ErrorKind::InvalidData.into()),
            }
        };
        self.stream_text(&mut sink, None).is_ok() && at == bytes.len()
    }

    /// Never write what a reader would refuse: each element is read back by the
    /// reader's own check ([`probe::read`]) and validated as a file's element is
    /// (a duplicate or non-string name, a schema that is not an object or a boolean,
    /// arguments without a string name are exit 2 naming the element; the check reads
    /// the element as deep in the file as it is written, so nothing nests deeper than
    /// a reader accepts).
    pub(crate) fn validate(&self, origin: &str) -> Result<()> {
        for kind in Kind::ALL {
            let mut seen = HashSet::new();
            for (i, entry) in self.listing.list(kind).iter().enumerate() {
                // The compact text reads as the indented one does; an error is read
                // again from the indented text, for its position in the file.
                let fields = probe::read(&entry.compact, kind.spec()).map_err(|_| {
                    let e = probe::read(&entry.text(), kind.spec())
                        .err()
                        .map_or_else(String::new, |e| e.to_string());
                    Error::new(format!(
                        "{origin}: surface.{}[{i}] does not read back: {e}",
                        kind.list_name()
                    ))
                })?;
                check_element(origin, kind, i, &fields, &mut seen, true)?;
            }
        }
        Ok(())
    }

    /// Write to `path` atomically. When `path` already holds a lockfile with the same
    /// surface and server, its `captured_at_unix` is kept so the bytes do not change.
    /// Never writes what `check` would refuse to read ([`Snapshot::validate`]).
    pub fn write(&mut self, path: &Path) -> Result<()> {
        let origin = format!("not writing {}: the server's surface", path.display());
        self.validate(&origin)?;
        let old = read_input(path, "lockfile").ok();
        if let Some(old) = &old {
            // Fast: the old file, if canonical, is exactly our text with its own time.
            if let Some(at) = captured_at_of(old) {
                let fresh = std::mem::replace(&mut self.captured_at_unix, at);
                if self.is_text_of(old) {
                    return Ok(()); // byte-identical already: nothing to write
                }
                self.captured_at_unix = fresh;
            }
            // Slow: a hand-edited or older-format file with the same interface.
            if let Some(at) = self.same_interface_as(old) {
                self.captured_at_unix = at;
            }
        }
        drop(old);
        // A reader refuses a file larger than this; counted before a byte is written,
        // so nothing (not even a temporary file) is left of a lockfile too large.
        let max = max_read_bytes();
        let (mut size, mut elements) = (0u64, 0u64);
        let mut count = |piece: &str| {
            size += piece.len() as u64;
            Ok(())
        };
        let _ = self.stream_text(&mut count, Some(&mut elements));
        if size + elements > max {
            return Err(Error::new(format!(
                "{origin} makes a lockfile larger than the {} MiB a lockfile reader accepts; nothing written",
                max >> 20
            )));
        }
        // Streamed to the temporary file, an element at a time.
        write_atomic_with(path, |file, fail| {
            let mut file = std::io::BufWriter::with_capacity(1 << 16, file);
            let mut sink = |piece: &str| file.write_all(piece.as_bytes());
            self.stream_text(&mut sink, None).map_err(fail)?;
            file.flush().map_err(fail)
        })
    }
}

impl Snapshot {
    /// The capture time of `old` when it is a lockfile the reader reads as this one's
    /// server and surface: read, then each element compared by its bytes, or built,
    /// normalised and written canonically where they differ (the old file is never
    /// built whole: that is many times its size).
    fn same_interface_as(&self, old: &[u8]) -> Option<u64> {
        let raw = Raw::read(old, "", true).ok()?;
        if raw.server != self.server {
            return None;
        }
        let mut text = String::new();
        for ((kind, theirs), index) in Kind::ALL.into_iter().zip(&raw.lists).zip(raw.index()) {
            // Both in key order: the index, and a sorted listing.
            let ours = self.listing.list(kind);
            if theirs.len() != ours.len() || index.len() != ours.len() {
                return None;
            }
            for (raw_text, entry) in index.values().zip(ours) {
                if entry.indents_to(raw_text) {
                    continue;
                }
                text.clear();
                write_element(&mut text, &raw.build_element(raw_text, kind).ok()?);
                if !entry.indents_to(&text) {
                    return None;
                }
            }
        }
        Some(raw.captured_at_unix)
    }
}

/// The size of the pieces an element's text is indented in before they are handed to a
/// [`Sink`].
const LARGE_PIECE: usize = 1 << 16;

/// Where streamed canonical text goes, a piece at a time.
type Sink<'s> = dyn FnMut(&str) -> std::io::Result<()> + 's;
