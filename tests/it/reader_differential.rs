//! The lockfile reader's pair reading held against reading each file alone, and each
//! alone-reading against serde_json, over mutations of a canonical lockfile
//! (`common/differential.rs` is the check; `fuzz/` runs the same check under
//! `cargo fuzz`). It runs on proptest (`common::property`: fixed cases, a failure
//! shrinks to the fewest and simplest mutations). The mutations aim at the reader's hand-written placement
//! (src/lockfile/place.rs): the one pass finding each element from its first key, and
//! the other file of a pair placed beside the baseline's texts and proved by parsing its
//! skeleton.

use crate::common::{differential, property};

use differential::{baseline, check};
use mcp_covenant::lockfile::Raw;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::TestCaseError;
use serde_json::value::RawValue;
use serde_json::Value;
use std::cell::{Cell, RefCell};

/// Each element's `(start, end)` in `text`, per list, when the file reads.
fn elements(text: &[u8]) -> Option<Vec<Vec<(usize, usize)>>> {
    let raw = Raw::read(text, "m", false).ok()?;
    Some(
        raw.lists
            .iter()
            .map(|l| {
                l.iter()
                    .map(|e| {
                        let s = e.text.as_ptr() as usize - text.as_ptr() as usize;
                        (s, s + e.text.len())
                    })
                    .collect()
            })
            .collect(),
    )
}

/// The `i`-th element's span, of all elements in file order, when the file reads and
/// has one.
fn pick(i: Index, text: &[u8]) -> Option<(usize, usize)> {
    let all: Vec<(usize, usize)> = elements(text)?.into_iter().flatten().collect();
    (!all.is_empty()).then(|| all[i.index(all.len())])
}

fn splice(text: &[u8], at: (usize, usize), with: &[u8]) -> Vec<u8> {
    [&text[..at.0], with, &text[at.1..]].concat()
}

/// The span of an element with the comma and whitespace that separate it from the next
/// (or from the one before, when it is the last).
fn with_separator(text: &[u8], (s, e): (usize, usize)) -> (usize, usize) {
    let ws = |c: &u8| c.is_ascii_whitespace();
    let after = e + text[e..].iter().take_while(|c| ws(c)).count();
    if text.get(after) == Some(&b',') {
        let next = after + 1 + text[after + 1..].iter().take_while(|c| ws(c)).count();
        return (s, next);
    }
    let before = s - text[..s].iter().rev().take_while(|c| ws(c)).count();
    if before > 0 && text[before - 1] == b',' {
        return (before - 1, e);
    }
    (s, e)
}

/// Where each list of `surface` is: its key's opening quote and its value's span, in
/// file order.
fn list_spans(text: &[u8]) -> Option<Vec<(usize, usize, usize)>> {
    let s = std::str::from_utf8(text).ok()?;
    let top: std::collections::BTreeMap<String, &RawValue> = serde_json::from_str(s).ok()?;
    let surface = top.get("surface")?.get();
    let lists: std::collections::BTreeMap<String, &RawValue> =
        serde_json::from_str(surface).ok()?;
    let base = text.as_ptr() as usize;
    let mut out: Vec<(usize, usize, usize)> = lists
        .values()
        .map(|v| {
            let vs = v.get().as_ptr() as usize - base;
            let colon = text[..vs].iter().rposition(|c| *c == b':').unwrap_or(vs);
            let close = text[..colon].iter().rposition(|c| *c == b'"').unwrap_or(0);
            let open = text[..close].iter().rposition(|c| *c == b'"').unwrap_or(0);
            (open, vs, vs + v.get().len())
        })
        .collect();
    out.sort_unstable();
    Some(out)
}

/// `s` as a JSON string's contents.
fn escaped(s: &[u8]) -> Vec<u8> {
    let t = String::from_utf8_lossy(s);
    let q = serde_json::to_string(&t.as_ref()).unwrap();
    q.as_bytes()[1..q.len() - 1].to_vec()
}

/// The whitespace outside strings removed.
fn minified(text: &[u8]) -> Vec<u8> {
    let (mut out, mut in_str, mut esc) = (Vec::new(), false, false);
    for &c in text {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
        } else if !c.is_ascii_whitespace() {
            in_str = c == b'"';
            out.push(c);
        }
    }
    out
}

const INSERTS: &[&[u8]] = &[
    b" ",
    b"\n",
    b"\r\n",
    b"\t",
    b",",
    b"{",
    b"}",
    b"[",
    b"]",
    b"{}",
    b"\"",
    b"\\",
    b":",
    b"\\u0061",
    b"\\ud800",
    b"\\udc00\\ud800",
    b"\\u0000",
    b"1e999",
    b"-0",
    b"null",
    b"\"x\": 1, ",
    b", \"x\": 1",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
];

const BYTES: &[u8] = b"{}[],:\"\\ \n\t0123456789-.eEtrufalsn\xff\x00";

/// The valid edits of an element: the text found, and what replaces it.
const EDITS: &[(&str, &str)] = &[
    ("Does ", "Now does "),
    ("\"maxLength\": 1", "\"maxLength\": 9"),
    ("\"required\": [", "\"required\": [\"n\", "),
    ("\"name\": \"", "\"name\": \"renamed_"),
];

/// Bytes put into a file (shown as a byte string).
#[derive(Clone, Copy)]
struct Piece(&'static [u8]);

impl std::fmt::Debug for Piece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

/// Another layout of the whole file.
#[derive(Clone, Copy, Debug)]
enum Layout {
    Minified,
    Crlf,
    /// Two-space indents as tabs.
    Tabs,
    /// serde_json's pretty printer with this indent.
    Pretty(&'static str),
}

/// One change to a lockfile's text: the mutation classes, simplest first (a failure
/// shrinks toward the earlier ones). An `Index` picks a place, an element or a list
/// among those the text has; a mutation with nothing to act on (no element, no second
/// list) leaves the text as it is.
#[derive(Clone, Debug)]
enum Mutation {
    /// A byte changed.
    Byte { at: Index, to: u8 },
    /// Whitespace, a comma, a brace, a quote, an escape... put in.
    Insert { at: Index, piece: Piece },
    /// An element given twice (`newline`: the copy and the element on two lines).
    Duplicate { element: Index, newline: bool },
    /// An element deleted.
    Delete { element: Index },
    /// An element moved into another element, as itself or (`quoted`) as a string.
    Move {
        from: Index,
        into: Index,
        quoted: bool,
    },
    /// The lists reordered as `Reorder(order)` does, then a list's first element
    /// planted in an earlier value, after a key ending like the list's key
    /// (`"xtools": [...`).
    Decoy { order: Vec<u8>, victim: Index },
    /// The lists in another order: `order` is a permutation of 0..8, the lists below
    /// their count taken in its order.
    Reorder(Vec<u8>),
    /// Two neighbouring elements of a list swapped.
    Swap { list: Index, at: Index },
    /// A list key written with an escape.
    EscapeListKey { list: Index },
    /// An element's first key written with an escape.
    EscapeFirstKey { element: Index },
    /// Another layout: minified, CRLF, tabs, pretty with other indents.
    Relayout(Layout),
    /// An element changed in a way that keeps it valid: a description, a number.
    Edit {
        element: Index,
        edit: (&'static str, &'static str),
    },
}

const CLASSES: usize = 12;

/// The lists' new order, shrinking toward the order they had.
fn order() -> impl Strategy<Value = Vec<u8>> {
    Just((0..8).collect::<Vec<u8>>()).prop_shuffle()
}

impl Arbitrary for Mutation {
    type Parameters = ();
    type Strategy = BoxedStrategy<Mutation>;

    /// Every class equally often.
    fn arbitrary_with((): ()) -> Self::Strategy {
        use Mutation::*;
        let layout = prop_oneof![
            Just(Layout::Minified),
            Just(Layout::Crlf),
            Just(Layout::Tabs),
            select(&["", " ", "\t", " \r\n"][..]).prop_map(Layout::Pretty),
        ];
        prop_oneof![
            (any::<Index>(), prop_oneof![any::<u8>(), select(BYTES)])
                .prop_map(|(at, to)| Byte { at, to }),
            (any::<Index>(), select(INSERTS)).prop_map(|(at, piece)| Insert {
                at,
                piece: Piece(piece)
            }),
            (any::<Index>(), any::<bool>())
                .prop_map(|(element, newline)| Duplicate { element, newline }),
            any::<Index>().prop_map(|element| Delete { element }),
            (any::<Index>(), any::<Index>(), any::<bool>()).prop_map(|(from, into, quoted)| Move {
                from,
                into,
                quoted
            }),
            (order(), any::<Index>()).prop_map(|(order, victim)| Decoy { order, victim }),
            order().prop_map(Reorder),
            (any::<Index>(), any::<Index>()).prop_map(|(list, at)| Swap { list, at }),
            any::<Index>().prop_map(|list| EscapeListKey { list }),
            any::<Index>().prop_map(|element| EscapeFirstKey { element }),
            layout.prop_map(Relayout),
            (any::<Index>(), select(EDITS)).prop_map(|(element, edit)| Edit { element, edit }),
        ]
        .boxed()
    }
}

impl Mutation {
    /// Its class, 0 to 11 (the order above).
    fn class(&self) -> usize {
        use Mutation::*;
        match self {
            Byte { .. } => 0,
            Insert { .. } => 1,
            Duplicate { .. } => 2,
            Delete { .. } => 3,
            Move { .. } => 4,
            Decoy { .. } => 5,
            Reorder(_) => 6,
            Swap { .. } => 7,
            EscapeListKey { .. } => 8,
            EscapeFirstKey { .. } => 9,
            Relayout(_) => 10,
            Edit { .. } => 11,
        }
    }

    /// `text` with this change.
    fn apply(&self, text: &[u8]) -> Vec<u8> {
        use Mutation::*;
        let n = text.len();
        let mut out = text.to_vec();
        match self {
            Byte { at, to } if n > 0 => out[at.index(n)] = *to,
            Insert { at, piece } => {
                let at = at.index(n + 1);
                out.splice(at..at, piece.0.iter().copied());
            }
            Duplicate { element, newline } => {
                if let Some((s, e)) = pick(*element, text) {
                    let sep: &[u8] = if *newline { b",\n      " } else { b"," };
                    out = splice(text, (s, s), &[&text[s..e], sep].concat());
                }
            }
            Delete { element } => {
                if let Some(span) = pick(*element, text) {
                    out = splice(text, with_separator(text, span), b"");
                }
            }
            Move { from, into, quoted } => return moved(text, (*from, *into), *quoted),
            Decoy { order, victim } => return decoy(&reordered(text, order), *victim),
            Reorder(order) => return reordered(text, order),
            Swap { list, at } => return swapped(text, *list, *at),
            EscapeListKey { list } => {
                if let Some(lists) = list_spans(text).filter(|l| !l.is_empty()) {
                    let (key, _, _) = lists[list.index(lists.len())];
                    out = escape_at(text, key + 1);
                }
            }
            EscapeFirstKey { element } => {
                if let Some((s, _)) = pick(*element, text) {
                    if let Some(q) = text[s..].iter().position(|c| *c == b'"') {
                        out = escape_at(text, s + q + 1);
                    }
                }
            }
            Relayout(layout) => return laid_out(text, *layout),
            Edit {
                element,
                edit: (from, to),
            } => {
                if let Some((s, e)) = pick(*element, text) {
                    if let Some(i) = find(&text[s..e], from.as_bytes()) {
                        out = splice(text, (s + i, s + i + from.len()), to.as_bytes());
                    }
                }
            }
            Byte { .. } => {}
        }
        out
    }
}

/// The byte at `at` written as a `\u` escape.
fn escape_at(text: &[u8], at: usize) -> Vec<u8> {
    splice(
        text,
        (at, at + 1),
        format!("\\u{:04x}", text[at]).as_bytes(),
    )
}

/// The element `from` moved to the start of the element `into`'s members, under the
/// key `moved` (`quoted`: as a string). Unchanged when they are one element, or the
/// second is inside the first.
fn moved(text: &[u8], (from, into): (Index, Index), quoted: bool) -> Vec<u8> {
    let (Some(from), Some(to)) = (pick(from, text), pick(into, text)) else {
        return text.to_vec();
    };
    if from == to {
        return text.to_vec();
    }
    let moved = &text[from.0..from.1];
    let value = if quoted {
        [b"\"", escaped(moved).as_slice(), b"\""].concat()
    } else {
        moved.to_vec()
    };
    let put = [b"\"moved\": ", value.as_slice(), b", "].concat();
    let cut = with_separator(text, from);
    // The later edit first, so that the earlier one's place holds.
    let at = to.0 + 1;
    if at > cut.1 {
        splice(&splice(text, (at, at), &put), cut, b"")
    } else if at <= cut.0 {
        let o = splice(text, cut, b"");
        splice(&o, (at, at), &put)
    } else {
        text.to_vec()
    }
}

/// A list's first element (the `victim`-th of those after the first list's first
/// element) planted at the start of the first list's first element, after a key ending
/// like the victim's list key: `{"x<context>tools": [<first>], ...`.
fn decoy(t: &[u8], victim: Index) -> Vec<u8> {
    let (Some(lists), Some(els)) = (list_spans(t), elements(t)) else {
        return t.to_vec();
    };
    // A list with elements after another with elements.
    let mut firsts: Vec<(usize, usize)> = els.iter().filter_map(|l| l.first().copied()).collect();
    if firsts.len() < 2 {
        return t.to_vec();
    }
    firsts.sort_unstable();
    let victim = firsts[1 + victim.index(firsts.len() - 1)];
    let host = firsts[0];
    // The victim's list key: the list span holding it.
    let Some(&(key, _, _)) = lists
        .iter()
        .find(|(_, s, e)| *s < victim.0 && victim.1 <= *e)
    else {
        return t.to_vec();
    };
    let context = &t[key + 1..victim.0];
    let first = &t[victim.0..victim.1];
    let decoy = [b"\"x", context, first, b"], "].concat();
    splice(t, (host.0 + 1, host.0 + 1), &decoy)
}

/// The lists of `surface` in the order `order` gives (a list it does not name, of
/// which there are none below eight lists, after the others).
fn reordered(text: &[u8], order: &[u8]) -> Vec<u8> {
    let Some(lists) = list_spans(text) else {
        return text.to_vec();
    };
    let (Some(&(first, _, _)), Some(&(_, _, last))) = (lists.first(), lists.last()) else {
        return text.to_vec();
    };
    let mut parts: Vec<(usize, &[u8])> = lists
        .iter()
        .enumerate()
        .map(|(i, &(k, _, e))| (i, &text[k..e]))
        .collect();
    parts.sort_by_key(|(i, _)| {
        let at = order.iter().position(|o| usize::from(*o) == *i);
        at.unwrap_or(order.len() + i)
    });
    let parts: Vec<&[u8]> = parts.into_iter().map(|(_, p)| p).collect();
    splice(text, (first, last), &parts.join(&b",\n  "[..]))
}

/// Two neighbouring elements of a list (`at` and the next) swapped.
fn swapped(text: &[u8], list: Index, at: Index) -> Vec<u8> {
    let Some(els) = elements(text).filter(|l| !l.is_empty()) else {
        return text.to_vec();
    };
    let l = &els[list.index(els.len())];
    if l.len() < 2 {
        return text.to_vec();
    }
    let i = at.index(l.len() - 1);
    let (x, y) = (l[i], l[i + 1]);
    let mid = &text[x.1..y.0];
    let swapped = [&text[y.0..y.1], mid, &text[x.0..x.1]].concat();
    splice(text, (x.0, y.1), &swapped)
}

/// `text` in another layout.
fn laid_out(text: &[u8], layout: Layout) -> Vec<u8> {
    match layout {
        Layout::Minified => minified(text),
        Layout::Crlf => text
            .iter()
            .flat_map(|&c| {
                if c == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![c]
                }
            })
            .collect(),
        Layout::Tabs => text
            .split(|c| *c == b'\n')
            .map(|l| {
                let i = l.iter().take_while(|c| **c == b' ').count();
                [&b"\t"[..].repeat(i / 2)[..], &l[i..]].concat()
            })
            .collect::<Vec<_>>()
            .join(&b'\n'),
        Layout::Pretty(indent) => match serde_json::from_slice::<Value>(text) {
            Ok(v) => {
                let mut o = Vec::new();
                let f = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
                let mut ser = serde_json::Serializer::with_formatter(&mut o, f);
                serde::Serialize::serialize(&v, &mut ser).unwrap();
                o
            }
            Err(_) => text.to_vec(),
        },
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Which pairs a case reads: `a` then `b`; in a quarter of the cases also `b` then `a`,
/// and in a sixteenth also `b` beside itself (the seeded loop's proportions).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
enum Pairs {
    AB,
    AlsoBA,
    AlsoBB,
}

/// The check on `x` then `y`, failing with both files.
fn run(x: &[u8], y: &[u8]) -> Result<(), TestCaseError> {
    std::panic::catch_unwind(|| check(x, y)).map_err(|e| {
        let why = e
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| e.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        TestCaseError::fail(format!(
            "{why}\na = {}\nb = {}",
            String::from_utf8_lossy(x),
            String::from_utf8_lossy(y)
        ))
    })
}

#[test]
fn reading_a_pair_agrees_with_reading_each_file_alone() {
    let canonical = baseline().into_bytes();
    // `WRITE_FUZZ_SEEDS=DIR`: the files made here are also written to DIR, a seed corpus
    // for the fuzz target (CONTRIBUTING.md).
    let seeds = std::env::var_os("WRITE_FUZZ_SEEDS").map(std::path::PathBuf::from);
    if let Some(dir) = &seeds {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("canonical"), &canonical).unwrap();
    }
    // Mostly the canonical baseline, a quarter of the time a baseline mutated itself;
    // the other file: the baseline with one to three mutations.
    let cases = (
        prop::option::weighted(0.25, any::<Mutation>()),
        prop::collection::vec(any::<Mutation>(), 1..=3),
        prop_oneof![12 => Just(Pairs::AB), 3 => Just(Pairs::AlsoBA), 1 => Just(Pairs::AlsoBB)],
    );
    let count = RefCell::new([[0usize; 2]; CLASSES]);
    let changed = RefCell::new([0usize; CLASSES]);
    let case = Cell::new(0usize);
    property::check(1500, cases, |(to_a, to_b, pairs)| {
        let a = to_a.map_or_else(|| canonical.clone(), |m| m.apply(&canonical));
        let mut b = a.clone();
        for m in &to_b {
            let next = m.apply(&b);
            changed.borrow_mut()[m.class()] += usize::from(next != b);
            b = next;
        }
        if let Some(dir) = &seeds {
            std::fs::write(dir.join(format!("seed-{}", case.get())), &b).unwrap();
            case.set(case.get() + 1);
        }
        let last = to_b.last().map_or(0, Mutation::class);
        count.borrow_mut()[last][usize::from(Raw::read(&b, "b", true).is_ok())] += 1;
        run(&a, &b)?;
        if pairs >= Pairs::AlsoBA {
            run(&b, &a)?;
        }
        if pairs == Pairs::AlsoBB {
            run(&b, &b)?;
        }
        Ok(())
    });
    // Each class changed the file it was given (it found what it acts on), made files
    // that read, and the classes that break a file made files that do not (a duplicate
    // name is refused).
    let (count, changed) = (count.into_inner(), changed.into_inner());
    eprintln!("[refused, read] per class: {count:?}\nfiles changed per class: {changed:?}");
    for (class, n) in changed.iter().enumerate() {
        assert!(*n >= 50, "class {class} changed {n} files");
    }
    for (class, [refused, read]) in count.iter().enumerate() {
        let (want_read, want_refused) = match class {
            0 | 1 => (true, true),
            2 => (false, true),
            _ => (true, false),
        };
        assert!(
            (!want_read || *read >= 10) && (!want_refused || *refused >= 10),
            "class {class}: {read} files read, {refused} refused"
        );
    }
}

/// Found by this test: a baseline refused only by validation (a duplicate name) and an
/// other file refused by the parse gave the other file's error for the pair, while the
/// baseline read alone names its duplicate. The baseline's error comes first.
#[test]
fn a_pair_names_the_baseline_s_validation_error_before_the_other_file_s() {
    let a = br#"{"covenant_version": "0.2.0", "captured_at_unix": 0, "surface": {"tools": [{"name": "t"}, {"name": "t"}]}}"#;
    let b = br#"{"covenant_version": "0.2.0", "captured_at_unix": 0, "surface": {"tools": [{"name": "\x"}]}}"#;
    check(a, b);
    let err = Raw::read_pair((a, "a"), (b, "b"))
        .err()
        .unwrap()
        .to_string();
    assert_eq!(err, "a: surface.tools[1]: duplicate tool `t`");
}
