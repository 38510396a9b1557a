//! Reading: strict about shape (exit 2 with path and line/column), lenient about age
//! (0.1.x files without `resourceTemplates` are fine), and bounded (a regular file of at
//! most [`MAX_READ_BYTES`]). The validation of an element is shared with the raw scan
//! (`scan`), so every path refuses the same files with the same message.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::model::{Kind, Lockfile, COVENANT_VERSION};
use crate::error::{Error, Result};

impl Lockfile {
    /// Parse lockfile text; `origin` names the file in error messages.
    pub fn parse(text: &[u8], origin: &str) -> Result<Lockfile> {
        Lockfile::parse_with(text, origin, true)
    }

    /// [`Lockfile::parse`] for `lint`: duplicate names are findings there, not errors.
    pub fn parse_lenient(text: &[u8], origin: &str) -> Result<Lockfile> {
        Lockfile::parse_with(text, origin, false)
    }

    /// Read a lockfile for `lint`: duplicate names are findings there, not errors.
    pub fn read_lenient(path: &Path) -> Result<Lockfile> {
        let text = read_input(path, "lockfile")?;
        Lockfile::parse_with(&text, &path.display().to_string(), false)
    }

    fn parse_with(text: &[u8], origin: &str, unique: bool) -> Result<Lockfile> {
        let mut lock: Lockfile =
            serde_json::from_slice(text).map_err(|e| position_error(origin, &e))?;
        check_version(&lock.covenant_version, origin)?;
        lock.validate(origin, unique)?;
        lock.surface.normalize();
        Ok(lock)
    }

    pub fn read(path: &Path) -> Result<Lockfile> {
        let text = read_input(path, "lockfile")?;
        Lockfile::parse(&text, &path.display().to_string())
    }

    /// Every element is an object with a string key, and keys are unique per kind
    /// (`unique`); see [`check_element`], which the offline fast path shares.
    pub(super) fn validate(&self, origin: &str, unique: bool) -> Result<()> {
        for kind in Kind::ALL {
            let mut seen = HashSet::new();
            for (i, element) in self.surface.list(kind).iter().enumerate() {
                let args = match element.get("arguments") {
                    None | Some(Value::Null) => Arguments::Absent,
                    Some(Value::Array(args)) => Arguments::Names(
                        args.iter()
                            .map(|a| a.get("name").is_some_and(Value::is_string))
                            .collect(),
                    ),
                    Some(_) => Arguments::NotArray,
                };
                let shape = Shape {
                    key: element.get(kind.key_field()),
                    input_schema: element.get("inputSchema").map(json_kind),
                    output_schema: element.get("outputSchema").map(json_kind),
                    arguments: args,
                };
                check_element(origin, kind, i, &shape, &mut seen, unique)?;
            }
        }
        Ok(())
    }
}

/// The deepest nesting serde_json reads (its recursion limit).
pub(crate) const MAX_DEPTH: usize = 127;

/// How deep arrays and objects nest in JSON text (strings skipped), whole: [`Depth`]
/// fed once (the tests' reference).
#[cfg(test)]
pub(crate) fn max_depth(bytes: &[u8]) -> usize {
    let mut depth = Depth::default();
    depth.feed(bytes);
    depth.max
}

/// How deep arrays and objects nest in JSON text (strings skipped), given in pieces (a
/// lockfile streamed as it is written): the state between pieces (depth, inside a
/// string, an escaped byte still to skip) is kept. It skips eight bytes at a time while
/// none of them can matter.
#[derive(Default)]
pub(crate) struct Depth {
    depth: usize,
    pub(crate) max: usize,
    in_string: bool,
    /// Bytes of the next piece to skip (the byte after a backslash that ended a piece).
    skip: usize,
}

impl Depth {
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        let (mut depth, mut max, mut in_string) = (self.depth, self.max, self.in_string);
        let mut i = self.skip;
        while i < bytes.len() {
            i = skip_quiet(bytes, i, in_string);
            let Some(&b) = bytes.get(i) else { break };
            match (in_string, b) {
                (true, b'\\') => i += 1, // the escaped byte is skipped too
                (true, b'"') | (false, b'"') => in_string = !in_string,
                (false, b'[' | b'{') => {
                    depth += 1;
                    max = max.max(depth);
                }
                (false, b']' | b'}') => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        self.skip = i.saturating_sub(bytes.len());
        (self.depth, self.max, self.in_string) = (depth, max, in_string);
    }
}

/// The offset of the first byte at or after `i` that can matter to nesting: a quote or
/// a backslash inside a string (`in_string`), a quote or a bracket outside one. Eight
/// bytes at a time; the last few (fewer than eight) are left to the caller's loop, so
/// the result may be a byte that does not matter, never past one that does.
#[inline]
pub(crate) fn skip_quiet(bytes: &[u8], mut i: usize, in_string: bool) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A high bit in every byte of `w` equal to `b`; exact up to the first match.
    let has = |w: u64, b: u8| {
        let x = w ^ (ONES * u64::from(b));
        x.wrapping_sub(ONES) & !x & HIGH
    };
    while let Some(chunk) = bytes.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let hits = if in_string {
            has(w, b'"') | has(w, b'\\')
        } else {
            has(w, b'"') | has(w, b'[') | has(w, b']') | has(w, b'{') | has(w, b'}')
        };
        if hits == 0 {
            i += 8;
        } else {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
    }
    i
}

/// The first character of a JSON value's text: `{`, `[`, `"`, `t`, `f`, `n` or `0`
/// for a number. What validation needs to know of a field it does not read.
pub(crate) fn json_kind(v: &Value) -> char {
    match v {
        Value::Null => 'n',
        Value::Bool(true) => 't',
        Value::Bool(false) => 'f',
        Value::Number(_) => '0',
        Value::String(_) => '"',
        Value::Array(_) => '[',
        Value::Object(_) => '{',
    }
}

/// An element's `arguments`, as validation sees them.
#[derive(Clone, Debug)]
pub(crate) enum Arguments {
    Absent,
    NotArray,
    /// Per argument: whether it has a string `name`.
    Names(Vec<bool>),
}

/// What validation reads of an element, from a built element or from raw text.
pub(crate) struct Shape<'a> {
    pub key: Option<&'a Value>,
    pub input_schema: Option<char>,
    pub output_schema: Option<char>,
    pub arguments: Arguments,
}

/// The one validation of an element, for every path that reads a lockfile (the full
/// reader and the offline fast path), so they refuse the same files with the same
/// message.
pub(crate) fn check_element<'a>(
    origin: &str,
    kind: Kind,
    i: usize,
    shape: &Shape<'a>,
    seen: &mut HashSet<&'a str>,
    unique: bool,
) -> Result<()> {
    let key = kind.key_field();
    let where_ = || format!("{origin}: surface.{}[{i}]", kind.list_name());
    match shape.key {
        Some(Value::String(k)) => {
            if !seen.insert(k.as_str()) && unique {
                return Err(Error::new(format!(
                    "{}: duplicate {} `{k}`",
                    where_(),
                    kind.word()
                )));
            }
        }
        Some(_) => {
            return Err(Error::new(format!(
                "{}: `{key}` must be a string",
                where_()
            )))
        }
        None => return Err(Error::new(format!("{}: missing `{key}`", where_()))),
    }
    for (field, k) in [
        ("inputSchema", shape.input_schema),
        ("outputSchema", shape.output_schema),
    ] {
        if !matches!(k, None | Some('{' | 't' | 'f')) {
            return Err(Error::new(format!(
                "{}: `{field}` must be a JSON Schema object",
                where_()
            )));
        }
    }
    match &shape.arguments {
        Arguments::Absent => {}
        Arguments::NotArray => {
            return Err(Error::new(format!(
                "{}: `arguments` must be an array",
                where_()
            )))
        }
        Arguments::Names(names) => {
            if let Some(j) = names.iter().position(|ok| !ok) {
                return Err(Error::new(format!(
                    "{}.arguments[{j}]: missing string `name`",
                    where_()
                )));
            }
        }
    }
    Ok(())
}
/// The `captured_at_unix` of lockfile bytes, read without building the surface.
pub(super) fn captured_at_of(bytes: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        captured_at_unix: u64,
        #[allow(dead_code)]
        #[serde(borrow)]
        surface: &'a serde_json::value::RawValue,
    }
    serde_json::from_slice::<Envelope<'_>>(bytes)
        .ok()
        .map(|e| e.captured_at_unix)
}
/// `file:line:column: not a valid lockfile: ...` for a parse error.
pub(crate) fn position_error(origin: &str, e: &serde_json::Error) -> Error {
    Error::new(format!(
        "{origin}:{}:{}: not a valid lockfile: {}",
        e.line(),
        e.column(),
        strip_position(&e.to_string())
    ))
}

/// Refuse files written by a newer mcp-covenant than this one (a newer minor may
/// record things we would silently misread).
pub(crate) fn check_version(version: &str, origin: &str) -> Result<()> {
    let parse = |v: &str| -> Option<(u64, u64)> {
        let mut it = v.split('.');
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    };
    let ours = parse(COVENANT_VERSION).unwrap_or((0, 0));
    match parse(version) {
        Some(theirs) if theirs <= ours => Ok(()),
        Some(_) => Err(Error::new(format!(
            "{origin}: written by mcp-covenant {version}, newer than this {COVENANT_VERSION}; upgrade mcp-covenant to read it"
        ))),
        None => Err(Error::new(format!(
            "{origin}: `covenant_version` is `{version}`, expected a version like {COVENANT_VERSION}"
        ))),
    }
}

/// serde_json appends " at line L column C"; we print the position up front instead.
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

/// The largest file read as a lockfile (or config): a mistaken or hostile path such as
/// `/dev/zero` or a huge file fails at once instead of reading until memory runs out.
pub const MAX_READ_BYTES: u64 = 256 << 20;

/// What kind of file `meta` is, for "not a regular file" messages.
pub(super) fn kind_of(meta: &fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Read an input file (`what` names it in messages: "lockfile", "config"): it must be a
/// regular file (a symlink to one is fine) of at most [`MAX_READ_BYTES`]. A FIFO, a
/// device or a directory is refused before it is opened, so nothing blocks or reads
/// forever.
pub fn read_input(path: &Path, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let fail = |m: String| Error::new(format!("cannot read {what} {}: {m}", path.display()));
    let check = |meta: &fs::Metadata| -> Result<()> {
        if !meta.is_file() {
            return Err(fail(format!("it is {}, not a regular file", kind_of(meta))));
        }
        if meta.len() > MAX_READ_BYTES {
            return Err(fail(format!(
                "it is {} bytes, over the {} MiB mcp-covenant reads",
                meta.len(),
                MAX_READ_BYTES >> 20
            )));
        }
        Ok(())
    };
    check(&fs::metadata(path).map_err(|e| fail(e.to_string()))?)?;
    let file = fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    // Checked again on the open file: the path may have been swapped meanwhile.
    let meta = file.metadata().map_err(|e| fail(e.to_string()))?;
    check(&meta)?;
    INPUTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((path.to_path_buf(), meta));
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(fail(format!(
            "it grew past the {} MiB mcp-covenant reads",
            MAX_READ_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// Every file [`read_input`] read in this process: a report is never written over one.
pub(super) static INPUTS: std::sync::Mutex<Vec<(PathBuf, fs::Metadata)>> =
    std::sync::Mutex::new(Vec::new());

#[cfg(test)]
mod tests {
    #[test]
    fn max_depth_skips_strings_and_escapes_and_never_panics() {
        use super::max_depth;
        // The plain byte loop it replaced, as the reference.
        fn slow(bytes: &[u8]) -> usize {
            let (mut d, mut m, mut s, mut e) = (0usize, 0usize, false, false);
            for &b in bytes {
                if s {
                    if e {
                        e = false;
                    } else if b == b'\\' {
                        e = true;
                    } else if b == b'"' {
                        s = false;
                    }
                    continue;
                }
                match b {
                    b'"' => s = true,
                    b'[' | b'{' => {
                        d += 1;
                        m = m.max(d);
                    }
                    b']' | b'}' => d = d.saturating_sub(1),
                    _ => {}
                }
            }
            m
        }
        let alphabet = [b'"', b'\\', b'[', b']', b'{', b'}', b'a', b' '];
        let mut x: u64 = 0x9e37_79b9;
        for _ in 0..20_000 {
            let n = (x % 64) as usize;
            let mut text = Vec::with_capacity(n);
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            assert_eq!(
                max_depth(&text),
                slow(&text),
                "{:?}",
                String::from_utf8_lossy(&text)
            );
            // In pieces, cut anywhere (inside a string, after a backslash), the same.
            let cut = (x as usize >> 8) % (n + 1);
            let mut pieces = super::Depth::default();
            pieces.feed(&text[..cut]);
            pieces.feed(&text[cut..]);
            assert_eq!(pieces.max, slow(&text), "cut at {cut}");
        }
    }
}
