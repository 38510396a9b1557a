//! The lockfile reader's pair reading held against reading each file alone, and each
//! alone-reading against serde_json, over seeded mutations of a canonical lockfile
//! (`common/differential.rs` is the check; `fuzz/` runs the same check under
//! `cargo fuzz`). The mutations aim at the reader's hand-written placement
//! (src/lockfile/place.rs): the one pass finding each element from its first key, and
//! the other file of a pair placed beside the baseline's texts and proved by parsing its
//! skeleton.

use crate::common::differential;

use differential::{baseline, check};
use fastrand::Rng;
use mcp_covenant::lockfile::Raw;
use serde_json::value::RawValue;
use serde_json::Value;

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

/// A random element's span, and its list's index.
fn pick(r: &mut Rng, text: &[u8]) -> Option<(usize, (usize, usize))> {
    let lists = elements(text)?;
    let all: Vec<(usize, (usize, usize))> = lists
        .iter()
        .enumerate()
        .flat_map(|(k, l)| l.iter().map(move |s| (k, *s)))
        .collect();
    (!all.is_empty()).then(|| all[r.usize(..all.len())])
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

/// One mutation of `text`, of the class `class`.
fn mutate(r: &mut Rng, text: &[u8], class: usize) -> Vec<u8> {
    let n = text.len();
    let mut out = text.to_vec();
    match class {
        // A byte changed.
        0 => {
            let at = r.usize(..n);
            out[at] = if r.bool() {
                r.u8(..)
            } else {
                BYTES[r.usize(..BYTES.len())]
            };
        }
        // Whitespace, a comma, a brace, a quote, an escape... put in.
        1 => {
            let at = r.usize(..=n);
            let what = INSERTS[r.usize(..INSERTS.len())];
            out.splice(at..at, what.iter().copied());
        }
        // An element given twice.
        2 => {
            if let Some((_, (s, e))) = pick(r, text) {
                let sep: &[u8] = if r.bool() { b",\n      " } else { b"," };
                out = splice(text, (s, s), &[&text[s..e], sep].concat());
            }
        }
        // An element deleted.
        3 => {
            if let Some((_, span)) = pick(r, text) {
                out = splice(text, with_separator(text, span), b"");
            }
        }
        // An element moved into a string, or into another element.
        4 => {
            if let (Some((_, from)), Some((_, to))) = (pick(r, text), pick(r, text)) {
                if from != to {
                    let moved = &text[from.0..from.1];
                    let value = if r.bool() {
                        [b"\"", escaped(moved).as_slice(), b"\""].concat()
                    } else {
                        moved.to_vec()
                    };
                    let put = [b"\"moved\": ", value.as_slice(), b", "].concat();
                    let cut = with_separator(text, from);
                    // The later edit first, so that the earlier one's place holds.
                    let at = to.0 + 1;
                    out = if at > cut.1 {
                        splice(&splice(text, (at, at), &put), cut, b"")
                    } else if at <= cut.0 {
                        let o = splice(text, cut, b"");
                        splice(&o, (at, at), &put)
                    } else {
                        text.to_vec()
                    };
                }
            }
        }
        // A list's first element planted in an earlier value, after a key ending like
        // the list's key (`"xtools": [...`), with the lists reordered so that one
        // comes before it.
        5 => {
            let reordered = mutate(r, text, 6);
            let t = &reordered;
            if let (Some(lists), Some(els)) = (list_spans(t), elements(t)) {
                // A list with elements after another with elements.
                let firsts: Vec<(usize, usize)> =
                    els.iter().filter_map(|l| l.first().copied()).collect();
                if firsts.len() >= 2 {
                    let mut sorted = firsts.clone();
                    sorted.sort_unstable();
                    let victim = sorted[1 + r.usize(..sorted.len() - 1)];
                    let host = sorted[0];
                    // The victim's list key: the list span holding it.
                    if let Some(&(key, _, _)) = lists
                        .iter()
                        .find(|(_, s, e)| *s < victim.0 && victim.1 <= *e)
                    {
                        let context = &t[key + 1..victim.0];
                        let first = &t[victim.0..victim.1];
                        let decoy = [b"\"x", context, first, b"], "].concat();
                        out = splice(t, (host.0 + 1, host.0 + 1), &decoy);
                    }
                }
            }
        }
        // The lists in another order.
        6 => {
            if let Some(lists) = list_spans(text) {
                if let (Some(&(first, _, _)), Some(&(_, _, last))) = (lists.first(), lists.last()) {
                    let mut parts: Vec<&[u8]> =
                        lists.iter().map(|&(k, _, e)| &text[k..e]).collect();
                    r.shuffle(&mut parts);
                    let joined = parts.join(&b",\n  "[..]);
                    out = splice(text, (first, last), &joined);
                }
            }
        }
        // Elements of a list in another order (two swapped).
        7 => {
            if let Some(els) = elements(text) {
                let l = &els[r.usize(..els.len())];
                if l.len() >= 2 {
                    let i = r.usize(..l.len() - 1);
                    let (x, y) = (l[i], l[i + 1]);
                    let mid = &text[x.1..y.0];
                    let swapped = [&text[y.0..y.1], mid, &text[x.0..x.1]].concat();
                    out = splice(text, (x.0, y.1), &swapped);
                }
            }
        }
        // A list key written with an escape.
        8 => {
            if let Some(lists) = list_spans(text) {
                if !lists.is_empty() {
                    let (key, _, _) = lists[r.usize(..lists.len())];
                    out = splice(
                        text,
                        (key + 1, key + 2),
                        format!("\\u{:04x}", text[key + 1]).as_bytes(),
                    );
                }
            }
        }
        // An element's first key written with an escape.
        9 => {
            if let Some((_, (s, _))) = pick(r, text) {
                if let Some(q) = text[s..].iter().position(|c| *c == b'"') {
                    let at = s + q + 1;
                    out = splice(
                        text,
                        (at, at + 1),
                        format!("\\u{:04x}", text[at]).as_bytes(),
                    );
                }
            }
        }
        // Another layout: minified, or pretty with other indents, or CRLF.
        10 => {
            out = match r.usize(..4) {
                0 => minified(text),
                1 => text
                    .iter()
                    .flat_map(|&c| {
                        if c == b'\n' {
                            vec![b'\r', b'\n']
                        } else {
                            vec![c]
                        }
                    })
                    .collect(),
                2 => text
                    .split(|c| *c == b'\n')
                    .map(|l| {
                        let i = l.iter().take_while(|c| **c == b' ').count();
                        [&b"\t"[..].repeat(i / 2)[..], &l[i..]].concat()
                    })
                    .collect::<Vec<_>>()
                    .join(&b'\n'),
                _ => match serde_json::from_slice::<Value>(text) {
                    Ok(v) => {
                        let indent: &[u8] = [&b""[..], b" ", b"\t", b" \r\n"][r.usize(..4)];
                        let mut o = Vec::new();
                        let f = serde_json::ser::PrettyFormatter::with_indent(indent);
                        let mut ser = serde_json::Serializer::with_formatter(&mut o, f);
                        serde::Serialize::serialize(&v, &mut ser).unwrap();
                        o
                    }
                    Err(_) => text.to_vec(),
                },
            };
        }
        // An element changed in a way that keeps it valid: a description, a number.
        _ => {
            if let Some((_, (s, e))) = pick(r, text) {
                let el = &text[s..e];
                let edits: [(&[u8], &[u8]); 4] = [
                    (b"Does ", b"Now does "),
                    (b"\"maxLength\": 1", b"\"maxLength\": 9"),
                    (b"\"required\": [", b"\"required\": [\"n\", "),
                    (b"\"name\": \"", b"\"name\": \"renamed_"),
                ];
                let (from, to) = edits[r.usize(..edits.len())];
                if let Some(i) = memchr_find(el, from) {
                    out = splice(text, (s + i, s + i + from.len()), to);
                }
            }
        }
    }
    out
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

const CLASSES: usize = 12;

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
    let mut count = [[0usize; 2]; CLASSES];
    for seed in 0..1500u64 {
        let mut r = Rng::with_seed(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed);
        // Mostly the canonical baseline; sometimes a baseline mutated itself.
        let a = if r.u8(..4) == 0 {
            let class = r.usize(..CLASSES);
            mutate(&mut r, &canonical, class)
        } else {
            canonical.clone()
        };
        let mut b = a.clone();
        let mut last = 0;
        for _ in 0..1 + r.usize(..3) {
            last = r.usize(..CLASSES);
            b = mutate(&mut r, &b, last);
        }
        if let Some(dir) = &seeds {
            std::fs::write(dir.join(format!("seed-{seed}")), &b).unwrap();
        }
        count[last][usize::from(Raw::read(&b, "b", true).is_ok())] += 1;
        let run = |x: &[u8], y: &[u8]| {
            std::panic::catch_unwind(|| check(x, y)).unwrap_or_else(|_| {
                panic!(
                    "seed {seed}, class {last}:\na = {}\nb = {}",
                    String::from_utf8_lossy(x),
                    String::from_utf8_lossy(y)
                )
            })
        };
        run(&a, &b);
        if seed % 4 == 0 {
            run(&b, &a);
        }
        if seed % 16 == 0 {
            run(&b, &b);
        }
    }
    // Each class made files that read, and the classes that break a file made files
    // that do not (a duplicate name is refused).
    eprintln!("[refused, read] per class: {count:?}");
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
