//! Writing: canonical (the same surface always gives the same bytes) and atomic (a
//! failed write never leaves a truncated file behind), and never turned against the
//! user (see [`write_atomic`]).

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::lines::LineMap;
use super::model::{key_of, Element, Kind, Lockfile};
use super::read::{captured_at_of, nesting, Raw, MAX_DEPTH};
use crate::canon::{self, Ctx};
use crate::error::{Error, Result};
use crate::io::{kind_of, read_input, INPUTS};

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

/// How an I/O error on the written file reads (`cannot write PATH: ...`).
type Fail<'p> = dyn Fn(std::io::Error) -> Error + 'p;

/// Write a report (`--output`): [`write_atomic`], refused when `path` is a file this
/// command read (the baseline, `--against`, `--from`, whatever path or link reached
/// it), which the report would otherwise replace.
pub fn write_report(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Ok(out) = fs::metadata(path) {
        let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((input, _)) = inputs.iter().find(|(_, m)| same_file(&out, m)) {
            return Err(Error::new(format!(
                "--output {} is the lockfile {}, which this command reads; write the report to another file",
                path.display(),
                input.display()
            )));
        }
    }
    write_atomic(path, bytes)
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    false
}

/// The file a write to `path` lands in: symlinks followed to their final target (which
/// may not exist yet). A path that is or passes through `/dev` or `/proc` (`/dev/stdout`,
/// `/proc/self/fd/1`) is refused: an output is always a regular file.
fn write_target(path: &Path) -> Result<PathBuf> {
    let special = |p: &Path| {
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        abs.starts_with("/dev") || abs.starts_with("/proc")
    };
    let refuse = || {
        Error::new(format!(
            "cannot write {}: it is a device or a process file, not a regular file; outputs are always regular files (without -o/--output a report goes to stdout)",
            path.display()
        ))
    };
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if special(&p) {
            return Err(refuse());
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p)
                    .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::new(format!(
        "cannot write {}: too many levels of symbolic links",
        path.display()
    )))
}

/// A name nobody can guess ahead of time (the temporary file's).
fn unpredictable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState's keys come from the operating system's random source.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.finish()
}

/// Write via a temporary file in the same directory and a rename, so readers see the
/// old content or the new, never a torn file.
///
/// The write cannot be turned against the user: the temporary file is created
/// exclusively under an unpredictable name (a planted file or symlink there is never
/// followed or truncated); a symlinked `path` is written to its target; a target that
/// exists and is not a regular file (a device, a FIFO, a directory, `/dev/stdout`) is
/// refused; the old file's permissions are kept.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |file, fail| file.write_all(bytes).map_err(fail))
}

/// [`write_atomic`], the content written by `fill` to the temporary file; an error from
/// `fill` removes the temporary file and leaves `path` as it was.
fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut fs::File, &Fail<'_>) -> Result<()>,
) -> Result<()> {
    let fail = |e: std::io::Error| Error::new(format!("cannot write {}: {e}", path.display()));
    let target = write_target(path)?;
    let mode = match fs::symlink_metadata(&target) {
        Ok(m) if m.is_file() => Some(m.permissions()),
        Ok(m) => {
            return Err(Error::new(format!(
                "cannot write {}: it is {}, not a regular file; outputs are always regular files",
                path.display(),
                kind_of(&m)
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(fail(e)),
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let (tmp, mut file) = {
        let mut attempt = 0;
        loop {
            let tmp = dir.join(format!(".{name}.{:016x}.tmp", unpredictable()));
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(f) => break (tmp, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => {
                    attempt += 1;
                }
                Err(e) => return Err(fail(e)),
            }
        }
    };
    let result = (|| -> Result<()> {
        if let Some(mode) = mode {
            file.set_permissions(mode).map_err(fail)?;
        }
        fill(&mut file, &fail)?;
        file.sync_all().map_err(fail)?;
        drop(file);
        fs::rename(&tmp, &target).map_err(fail)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}
