//! Writing: canonical (the same surface always gives the same bytes) and atomic (a
//! failed write never leaves a truncated file behind), and never turned against the
//! user (see [`write_atomic`]).

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

use super::lines::LineMap;
use super::model::{key_of, Element, Kind, Lockfile};
use super::read::{captured_at_of, nesting, Raw, MAX_DEPTH};
use crate::canon::{self, Ctx};
use crate::error::{Error, Result};
use crate::io::{read_input, write_atomic_with, MAX_READ_BYTES};

impl Lockfile {
    /// The canonical text of this lockfile (written field by field: no copy of the
    /// surface is made).
    pub fn to_text(&self) -> String {
        self.render(None, None).unwrap_or_default()
    }

    /// Hand the canonical text to `sink` in pieces (the envelope with the first
    /// element, then an element at a time), never holding more than one element's text.
    pub(super) fn stream_text(&self, sink: &mut Sink<'_>) -> std::io::Result<()> {
        self.render(None, Some(sink)).map(drop)
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
        self.stream_text(&mut sink).is_ok() && at == bytes.len()
    }

    /// The canonical text, whole (`sink` is `None`; with line tracking when `lines` is
    /// given) or streamed to `sink` and returned empty.
    #[allow(clippy::type_complexity)]
    pub(super) fn render(
        &self,
        mut lines: Option<(&mut LineMap, Option<&HashSet<(Kind, String)>>)>,
        mut sink: Option<&mut Sink<'_>>,
    ) -> std::io::Result<String> {
        debug_assert!(
            lines.is_none() || sink.is_none(),
            "lines count the whole text"
        );
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
                        None => write_element(&mut out, element),
                    }
                    out.push_str(if i + 1 == list.len() { "\n" } else { ",\n" });
                    if let Some(sink) = sink.as_mut() {
                        sink(&out)?;
                        out.clear();
                    }
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
        if let Some(sink) = sink.as_mut() {
            sink(&out)?;
            out.clear();
        }
        Ok(out)
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
        // Each element sits at depth 3 (inside the file, the surface and a list).
        let deepest = Kind::ALL
            .into_iter()
            .flat_map(|k| self.surface.list(k))
            .map(|e| 1 + e.values().map(nesting).max().unwrap_or(0))
            .max()
            .unwrap_or(0);
        if 3 + deepest > MAX_DEPTH {
            return Err(Error::new(format!(
                "{origin}: it nests {} levels deep, more than the {MAX_DEPTH} a lockfile reader accepts",
                3 + deepest
            )));
        }
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
        let mut size = 0u64;
        let mut count = |piece: &str| {
            size += piece.len() as u64;
            match size > MAX_READ_BYTES {
                true => Err(std::io::ErrorKind::InvalidData.into()),
                false => Ok(()),
            }
        };
        if self.stream_text(&mut count).is_err() {
            return Err(Error::new(format!(
                "{origin} makes a lockfile larger than the {} MiB a lockfile reader accepts; nothing written",
                MAX_READ_BYTES >> 20
            )));
        }
        // Streamed to the temporary file, an element at a time.
        write_atomic_with(path, |file, fail| {
            let mut file = std::io::BufWriter::with_capacity(1 << 16, file);
            let mut sink = |piece: &str| file.write_all(piece.as_bytes());
            self.stream_text(&mut sink).map_err(fail)?;
            file.flush().map_err(fail)
        })
    }
}

impl Lockfile {
    /// The capture time of `old` when it is a lockfile the reader reads as this one's
    /// server and surface: read, then each element built and compared one at a time
    /// (the old file is never built whole: that is many times its size).
    fn same_interface_as(&self, old: &[u8]) -> Option<u64> {
        let raw = Raw::read(old, "", true).ok()?;
        if raw.server != self.server {
            return None;
        }
        for ((kind, theirs), index) in Kind::ALL.into_iter().zip(&raw.lists).zip(raw.index()) {
            // Both in key order: the index, and a normalised surface.
            let ours = self.surface.list(kind);
            if theirs.len() != ours.len() || index.len() != ours.len() {
                return None;
            }
            for (text, element) in index.values().zip(ours) {
                if raw.build_element(text, kind).ok()? != *element {
                    return None;
                }
            }
        }
        Some(raw.captured_at_unix)
    }
}

/// Where streamed canonical text goes, a piece at a time.
/// One element's canonical text, as a lockfile's list holds it (without the indent of
/// its first line): a canonical file's element has exactly these bytes.
pub(crate) fn write_element(out: &mut String, element: &Element) {
    canon::write_object(out, element, Ctx::Element, 3);
}

pub(super) type Sink<'s> = dyn FnMut(&str) -> std::io::Result<()> + 's;
