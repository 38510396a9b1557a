//! Change and finding paths: keys and list positions from the element's root, written
//! as in the lockfile (`inputSchema.properties.limit`, `anyOf[1]`); names that are not
//! plain words are quoted as JSON strings (`inputSchema.properties["a.b"]`).
//!
//! [`Path`] is the one typed form: its `Display` is the one encoder and its `FromStr`
//! the one decoder, and every writer of a path (the canonical writer's spans, reports,
//! fingerprints, `[[ignore]]` globs) goes through them, so no two places can spell a
//! path differently. A walk that branches (the schema walker, lint) builds its paths
//! as [`Trail`]s, which become a `Path` (or its text) where one is recorded.

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

    /// A path of names (`Path::names(&["annotations", "title"])`).
    pub fn names(names: &[&str]) -> Path {
        Path(names.iter().map(|n| Segment::Name(n.to_string())).collect())
    }

    /// The path of `steps`.
    pub fn from_steps(steps: &[Step<'_>]) -> Path {
        Path(steps.iter().copied().map(Segment::from).collect())
    }

    /// The first segment alone (the element field a schema path starts from).
    pub fn first(&self) -> Path {
        Path(self.0.iter().take(1).cloned().collect())
    }
}

/// The encoder: write `step` as a path's text has it, a plain name after `.` unless it
/// comes `first`, a quoted name or an index in brackets.
fn write_step<W: fmt::Write>(w: &mut W, step: Step<'_>, first: bool) -> fmt::Result {
    match step {
        Step::Index(n) => write!(w, "[{n}]"),
        Step::Name(name) if plain(name) => {
            if !first {
                w.write_char('.')?;
            }
            w.write_str(name)
        }
        Step::Name(name) => write!(
            w,
            "[{}]",
            serde_json::to_string(name).map_err(|_| fmt::Error)?
        ),
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            write_step(f, s.as_step(), i == 0)?;
        }
        Ok(())
    }
}

/// Append `step` to `text`, a path's written form, in place: what `Display` writes for
/// that path followed by `step` (for a writer that tracks where it is as it goes, and
/// keys what it finds by the written path).
pub fn append(text: &mut String, step: Step<'_>) {
    let first = text.is_empty();
    // Writing to a `String` cannot fail.
    let _ = write_step(text, step, first);
}

/// Segments written as they continue a path (`.properties.x`, `[0]`, `["a.b"]`): what
/// a path's text holds after the text of the path they follow.
pub struct Rest<'p>(pub &'p [Segment]);

impl fmt::Display for Rest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0
            .iter()
            .try_for_each(|s| write_step(f, s.as_step(), false))
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

/// Paths order as their written form does (reports sort by it), compared byte by byte
/// as the encoder writes them, without building either text.
impl Ord for Path {
    fn cmp(&self, other: &Path) -> Ordering {
        // Equal segments in the same places are written alike: compare from the first
        // that differs.
        let same = self.0.iter().zip(&other.0).take_while(|(a, b)| a == b);
        let from = same.count();
        // Two plain names there, neither the start of the other: they differ within
        // their own bytes, whatever follows them.
        if let (Some(Segment::Name(x)), Some(Segment::Name(y))) =
            (self.0.get(from), other.0.get(from))
        {
            if !x.starts_with(y.as_str()) && !y.starts_with(x.as_str()) && plain(x) && plain(y) {
                return x.cmp(y);
            }
        }
        self.written_bytes(from).cmp(other.written_bytes(from))
    }
}

impl Path {
    /// The bytes of the written form from segment `from` on, one at a time.
    fn written_bytes(&self, from: usize) -> impl Iterator<Item = u8> + '_ {
        self.0
            .iter()
            .enumerate()
            .skip(from)
            .flat_map(|(i, s)| SegmentBytes::of(s.as_step(), i == 0))
    }
}

/// The bytes of one segment as the encoder writes it: a plain name borrowed, anything
/// else written by [`write_step`] into a small buffer (a long quoted name into a string).
enum SegmentBytes<'a> {
    Plain(Option<u8>, std::str::Bytes<'a>),
    Short(Short, usize),
    Long(std::vec::IntoIter<u8>),
}

/// A buffer on the stack for a short segment's text (`[12]`, `["a.b"]`).
struct Short([u8; 32], usize);

impl fmt::Write for Short {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.1 + s.len();
        self.0
            .get_mut(self.1..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.1 = end;
        Ok(())
    }
}

impl<'a> SegmentBytes<'a> {
    fn of(step: Step<'a>, first: bool) -> SegmentBytes<'a> {
        match step {
            // What `write_step` writes for a plain name.
            Step::Name(name) if plain(name) => {
                SegmentBytes::Plain((!first).then_some(b'.'), name.bytes())
            }
            _ => {
                let mut short = Short([0; 32], 0);
                if write_step(&mut short, step, first).is_ok() {
                    return SegmentBytes::Short(short, 0);
                }
                let mut long = String::new();
                let _ = write_step(&mut long, step, first);
                SegmentBytes::Long(long.into_bytes().into_iter())
            }
        }
    }
}

impl Iterator for SegmentBytes<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        match self {
            SegmentBytes::Plain(dot, name) => dot.take().or_else(|| name.next()),
            SegmentBytes::Short(short, at) => {
                let b = short.0[..short.1].get(*at).copied();
                *at += 1;
                b
            }
            SegmentBytes::Long(bytes) => bytes.next(),
        }
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

impl Segment {
    /// This segment, borrowed.
    pub fn as_step(&self) -> Step<'_> {
        match self {
            Segment::Name(name) => Step::Name(name),
            Segment::Index(i) => Step::Index(*i),
        }
    }
}

/// One step of a [`Trail`] (or of any path being built): a borrowed name or a list
/// index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    Name(&'a str),
    Index(usize),
}

impl From<Step<'_>> for Segment {
    fn from(step: Step<'_>) -> Segment {
        match step {
            Step::Name(name) => Segment::Name(name.to_string()),
            Step::Index(i) => Segment::Index(i),
        }
    }
}

/// A path being built by a walk that branches: a handle into its [`Trails`]. Copied
/// freely; the default is the empty path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trail(usize);

/// The paths a walk builds one step at a time, each step one entry naming its parent
/// (nothing copied, names borrowed, nothing freed until the walk is over): a step costs
/// one push onto a list, and a path becomes a [`Path`] only where one is recorded.
/// Iterative throughout, so a path as deep as the walk overflows no stack.
#[derive(Default)]
pub struct Trails<'a> {
    /// Entry `i` is trail `i + 1`: its parent and its last step.
    links: Vec<(Trail, Step<'a>)>,
}

impl<'a> Trails<'a> {
    /// `at` followed by `step`.
    pub fn then(&mut self, at: Trail, step: Step<'a>) -> Trail {
        self.links.push((at, step));
        Trail(self.links.len())
    }

    /// `at` followed by the name `name`.
    pub fn name(&mut self, at: Trail, name: &'a str) -> Trail {
        self.then(at, Step::Name(name))
    }

    /// `at` followed by the list index `i`.
    pub fn index(&mut self, at: Trail, i: usize) -> Trail {
        self.then(at, Step::Index(i))
    }

    /// `at` followed by each of `steps`.
    pub fn extend(&mut self, at: Trail, steps: &[Step<'a>]) -> Trail {
        steps.iter().fold(at, |t, s| self.then(t, *s))
    }

    /// The trail of `path`'s segments.
    pub fn of(&mut self, path: &'a Path) -> Trail {
        self.extend_path(Trail::default(), path)
    }

    /// `at` followed by `path`'s segments.
    pub fn extend_path(&mut self, at: Trail, path: &'a Path) -> Trail {
        path.0.iter().fold(at, |t, s| self.then(t, s.as_step()))
    }

    /// The steps of `at` from the root.
    pub fn steps(&self, mut at: Trail) -> Vec<Step<'a>> {
        let mut out = Vec::new();
        while let Some(&(parent, step)) = at.0.checked_sub(1).and_then(|i| self.links.get(i)) {
            out.push(step);
            at = parent;
        }
        out.reverse();
        out
    }

    /// The path `at` spells.
    pub fn path(&self, at: Trail) -> Path {
        Path::from_steps(&self.steps(at))
    }

    /// The written form of the path `at` spells.
    pub fn text(&self, at: Trail) -> String {
        let mut out = String::new();
        for step in self.steps(at) {
            append(&mut out, step);
        }
        out
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
        assert_eq!(p.to_string().parse::<Path>(), Ok(p.clone()));
        // The text after a prefix is what `Rest` writes.
        let written = p.to_string();
        for n in 1..=p.0.len() {
            let head = Path(p.0[..n].to_vec()).to_string();
            assert_eq!(
                Rest(&p.0[n..]).to_string(),
                written[head.len()..],
                "after {head}"
            );
        }
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
            "",
            "/",
            "~",
            "~1",
            "a/b",
            ".",
            "..",
            "a.b",
            "[",
            "]",
            "[0]",
            "\"",
            "'",
            "a\"b",
            "\\",
            " ",
            "a b",
            "\n",
            "\u{7f}",
            "é",
            "名前",
            "🦀",
            "\u{202e}",
            "0",
            "01",
            "-1",
            "x-y",
            "$ref",
            "#/defs",
            "a]b[c",
            "[\"x\"]",
            "a name long enough that its quoted form needs more than thirty-two bytes",
        ];
        // Paths of up to five segments, odd names and indexes mixed, with another path
        // and the names and indexes that vary each of its prefixes: proptest, from a
        // fixed seed (every run checks the same 5,000), so a failure shrinks to a short
        // path of plain names.
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngSeed, TestRunner};
        let seg = prop_oneof![
            1 => (0usize..1000).prop_map(Index),
            3 => (0..odd.len()).prop_map(move |i| name(odd[i])),
        ];
        let path = prop::collection::vec(seg, 0..6).prop_map(Path);
        let varied = prop::collection::vec((0..odd.len(), 0usize..20), 6);
        let mut runner = TestRunner::new(Config {
            cases: 5000,
            rng_seed: RngSeed::Fixed(0x9e37_79b9_7f4a_7c15),
            failure_persistence: None,
            ..Config::default()
        });
        let outcome = runner.run(&(path.clone(), path, varied), |(p, previous, varied)| {
            let written = p.to_string();
            assert_eq!(written.parse::<Path>(), Ok(p.clone()), "{written:?}");
            // A trail of the same steps is the same path, written as the walker wrote
            // its string paths before it carried trails.
            let mut trails = Trails::default();
            let mut trail = Trail::default();
            let mut pushed = String::new();
            for s in &p.0 {
                match s {
                    Name(n) => {
                        trail = trails.name(trail, n);
                        string_push(&mut pushed, n);
                    }
                    Index(i) => {
                        trail = trails.index(trail, *i);
                        pushed.push_str(&format!("[{i}]"));
                    }
                }
            }
            assert_eq!(trails.path(trail), p);
            assert_eq!(trails.text(trail), written);
            assert_eq!(pushed, written);
            let mut appended = String::new();
            for s in &p.0 {
                append(&mut appended, s.as_step());
            }
            assert_eq!(appended, written);

            let again = trails.of(&p);
            assert_eq!(trails.path(again), p);
            // Paths order as their written forms do: against another path, and against
            // each of its prefixes with another last segment.
            let mut others = vec![previous];
            for (n, &(k, i)) in varied.iter().enumerate().take(p.0.len()) {
                let mut q = Path(p.0[..n].to_vec());
                others.push(q.clone());
                q.0.push(name(odd[k]));
                others.push(q.clone());
                q.0.push(Index(i));
                others.push(q);
            }
            for q in &others {
                assert_eq!(p.cmp(q), written.cmp(&q.to_string()), "{written:?}");
                assert_eq!(q.cmp(&p), q.to_string().cmp(&written));
            }
            Ok(())
        });
        if let Err(e) = outcome {
            panic!("{e}");
        }
    }

    /// How the walker appended a name to a string path before it carried typed paths:
    /// the reference that trails are held to above.
    fn string_push(path: &mut String, name: &str) {
        let seg = if plain(name) {
            name.to_string()
        } else {
            format!("[{}]", serde_json::to_string(name).unwrap())
        };
        if !path.is_empty() && !seg.starts_with('[') {
            path.push('.');
        }
        path.push_str(&seg);
    }

    /// Trails share their parents: a branch leaves its siblings and parent as they
    /// were, and a trail deeper than any stack is read back without recursing.
    #[test]
    fn trails_branch() {
        let root = Path::name("inputSchema");
        let mut t = Trails::default();
        let at = t.of(&root);
        let base = t.name(at, "properties");
        let a = t.name(base, "a.b");
        let a = t.index(a, 0);
        let x = t.name(base, "x");
        let b = t.extend(x, &[Step::Name("oneOf"), Step::Index(2)]);
        assert_eq!(t.text(a), r#"inputSchema.properties["a.b"][0]"#);
        assert_eq!(t.text(b), "inputSchema.properties.x.oneOf[2]");
        assert_eq!(t.path(base).to_string(), "inputSchema.properties");
        assert_eq!(t.path(Trail::default()), Path::default());
        let mut deep = Trail::default();
        for i in 0..1_000_000 {
            deep = t.index(deep, i);
        }
        assert_eq!(t.steps(deep).len(), 1_000_000);
    }
}
