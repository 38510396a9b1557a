//! Change and finding paths: keys and list positions from the element's root, written
//! as in the lockfile (`inputSchema.properties.limit`, `anyOf[1]`); names that are not
//! plain words are quoted as JSON strings (`inputSchema.properties["a.b"]`).
//!
//! [`Path`] is the one typed form: its `Display` is the one encoder and its `FromStr`
//! the one decoder, and every writer of a path (the walker through [`join`] and
//! [`push`], the canonical writer's spans, reports, fingerprints, `[[ignore]]` globs)
//! goes through them, so no two places can spell a path differently.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// One step of a path: a key (a property name, a keyword, a field) or a list index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    Name(String),
    Index(usize),
}

/// A path from an element's root: `Path(vec![Name("inputSchema"), Name("properties"),
/// Name("a.b")])` is written `inputSchema.properties["a.b"]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Path(pub Vec<Segment>);

/// A name is written plain when it is a simple word, quoted otherwise.
fn plain(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| !matches!(c, '.' | '[' | ']' | '"' | ' ') && !c.is_control())
}

/// A path segment for a name: plain when it is a simple word, quoted otherwise.
pub fn segment(name: &str) -> String {
    if plain(name) {
        name.to_string()
    } else {
        format!("[{}]", serde_json::to_string(name).unwrap_or_default())
    }
}

/// `path` followed by the name `name` (`.name` after an empty path: the walker joins
/// from a schema's root and the caller puts the field in front).
pub fn join(path: &str, name: &str) -> String {
    let seg = segment(name);
    if seg.starts_with('[') {
        format!("{path}{seg}")
    } else {
        format!("{path}.{seg}")
    }
}

/// Append the name `name` to `path` in place; to an empty path, `name`'s segment alone.
pub fn push(path: &mut String, name: &str) {
    let seg = segment(name);
    if !path.is_empty() && !seg.starts_with('[') {
        path.push('.');
    }
    path.push_str(&seg);
}

impl Path {
    /// A path of one name.
    pub fn name(name: &str) -> Path {
        Path(vec![Segment::Name(name.to_string())])
    }

    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// The segments after `prefix`, when this path starts with it.
    pub fn strip_prefix(&self, prefix: &Path) -> Option<&[Segment]> {
        self.0.strip_prefix(&prefix.0[..])
    }

    /// The first segment alone (the element field a schema path starts from).
    pub fn first(&self) -> Path {
        Path(self.0.iter().take(1).cloned().collect())
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Index(n) => write!(f, "[{n}]")?,
                Segment::Name(name) if plain(name) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?
                }
                Segment::Name(name) => write!(
                    f,
                    "[{}]",
                    serde_json::to_string(name).map_err(|_| fmt::Error)?
                )?,
            }
        }
        Ok(())
    }
}

/// A string that is no path (`FromStr`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadPath;

impl fmt::Display for BadPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a path")
    }
}

impl FromStr for Path {
    type Err = BadPath;

    /// The inverse of `Display`: `a.b["c.d"][2]`. A `.` only separates two segments
    /// (none leads, none ends), a quoted name is a JSON string, an index is digits.
    fn from_str(s: &str) -> Result<Path, BadPath> {
        let mut out = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix("[\"") {
                // A quoted name: a JSON string, then `]`.
                let bytes = r.as_bytes();
                let mut j = 0;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                let text = rest.get(1..j + 3).ok_or(BadPath)?;
                let name: String = serde_json::from_str(text).map_err(|_| BadPath)?;
                if plain(&name) {
                    return Err(BadPath); // written plain, never quoted
                }
                out.push(Segment::Name(name));
                rest = rest
                    .get(j + 3..)
                    .and_then(|r| r.strip_prefix(']'))
                    .ok_or(BadPath)?;
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = r.find(']').ok_or(BadPath)?;
                let digits = &r[..end];
                let canonical = !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && (digits == "0" || !digits.starts_with('0'));
                if !canonical {
                    return Err(BadPath);
                }
                out.push(Segment::Index(digits.parse().map_err(|_| BadPath)?));
                rest = &r[end + 1..];
            } else {
                let r = match rest.strip_prefix('.') {
                    Some(r) if !out.is_empty() => r,
                    Some(_) => return Err(BadPath),
                    None if out.is_empty() => rest,
                    None => return Err(BadPath),
                };
                let end = r.find(['.', '[']).unwrap_or(r.len());
                let name = &r[..end];
                if !plain(name) {
                    return Err(BadPath);
                }
                out.push(Segment::Name(name.to_string()));
                rest = &r[end..];
            }
        }
        Ok(Path(out))
    }
}

/// Paths order as their written form does (reports sort by it).
impl Ord for Path {
    fn cmp(&self, other: &Path) -> Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for Path {
    fn partial_cmp(&self, other: &Path) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Serialised as its written form.
impl serde::Serialize for Path {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Segment::{Index, Name};

    fn name(s: &str) -> Segment {
        Name(s.into())
    }

    #[test]
    fn paths_are_written_as_in_the_lockfile() {
        let p = Path(vec![
            name("inputSchema"),
            name("properties"),
            name("a.b"),
            name("anyOf"),
            Index(1),
            name("items"),
        ]);
        assert_eq!(
            p.to_string(),
            r#"inputSchema.properties["a.b"].anyOf[1].items"#
        );
        assert_eq!(p.to_string().parse::<Path>(), Ok(p));
        // What the walker's `join` writes is what Display writes.
        assert_eq!(
            join(&join("inputSchema.properties", "a.b"), "x"),
            Path(vec![
                name("inputSchema"),
                name("properties"),
                name("a.b"),
                name("x")
            ])
            .to_string()
        );
        for bad in [
            ".a", "a.", "a..b", "a[01]", "a[x]", "a[\"b\"]", "[\"a", "a]", "a\"b",
        ] {
            assert_eq!(bad.parse::<Path>(), Err(BadPath), "{bad}");
        }
    }

    /// Every path is read back as written, whatever its names hold.
    #[test]
    fn odd_names_round_trip() {
        let odd = [
            "", "/", "~", "~1", "a/b", ".", "..", "a.b", "[", "]", "[0]", "\"", "'", "a\"b", "\\",
            " ", "a b", "\n", "\u{7f}", "é", "名前", "🦀", "\u{202e}", "0", "01", "-1", "x-y",
            "$ref", "#/defs", "a]b[c", "[\"x\"]",
        ];
        // Seeded: every ordered pair and triple of odd names, with indexes between.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..5000 {
            let len = (next() % 6) as usize;
            let segs: Vec<Segment> = (0..len)
                .map(|_| match next() % 4 {
                    0 => Index((next() % 1000) as usize),
                    _ => name(odd[(next() % odd.len() as u64) as usize]),
                })
                .collect();
            let p = Path(segs);
            let written = p.to_string();
            assert_eq!(written.parse::<Path>(), Ok(p.clone()), "{written:?}");
            // And the walker's string-building helpers agree with the encoder.
            let mut pushed = String::new();
            for s in &p.0 {
                match s {
                    Name(n) => push(&mut pushed, n),
                    Index(i) => pushed.push_str(&format!("[{i}]")),
                }
            }
            assert_eq!(pushed, written);
        }
    }
}
