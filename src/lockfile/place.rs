//! Where a file's elements are, found without a parser of our own: from where the
//! reader's one pass left each element's first key ([`texts`]), or, for the second file
//! of a pair, placed by the baseline's element texts and proved by serde_json's parse of
//! the file with them replaced by `{}` ([`beside`]). The reader (`read`) uses it; the
//! differential test (tests/it/reader_differential.rs) and the fuzz target
//! (fuzz/fuzz_targets/read_pair.rs) aim their mutations at it.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::envelope::{self, offset, Unchecked};
use super::probe::Fields;

/// Each element's text in `text`, from where the one pass found its first key: an
/// element starts at the `{` before its first key's quote, and ends at the `}` before
/// the comma before the next element's start; the last one, or one before an element
/// whose first key has escapes, ends where serde_json's grammar pass over it ends, and
/// an element after it starts past the comma. Only whitespace is skipped, and only
/// between tokens of a parse that has succeeded. `None` when a list's first element
/// cannot be placed (its first key has escapes, or it is `{}`).
pub(super) fn texts<'a>(text: &'a str, list: &[Fields<'a>]) -> Option<Vec<&'a str>> {
    let b = text.as_bytes();
    let ws = |c: &u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t');
    // The index of `want` just before `i`, past whitespace.
    let back = |i: usize, want: u8| -> Option<usize> {
        let j = b[..i].iter().rposition(|c| !ws(c))?;
        (b[j] == want).then_some(j)
    };
    // The index of `want` at or after `i`, past whitespace.
    let ahead = |i: usize, want: u8| -> Option<usize> {
        let j = i + b.get(i..)?.iter().position(|c| !ws(c))?;
        (b[j] == want).then_some(j)
    };
    let start = |f: &Fields<'a>| back(offset(b, f.anchor?).checked_sub(1)?, b'{');
    let mut out = Vec::with_capacity(list.len());
    let mut next = match list.first() {
        Some(f) => Some(start(f)?),
        None => return Some(out),
    };
    for (i, _) in list.iter().enumerate() {
        let s = match next {
            Some(s) => s,
            None => {
                let last: &str = out.last()?;
                ahead(ahead(offset(b, last) + last.len(), b',')? + 1, b'{')?
            }
        };
        next = list.get(i + 1).and_then(start);
        let end = match next {
            Some(n) => back(back(n, b',')?, b'}')? + 1,
            None => {
                let mut de = serde_json::Deserializer::from_str(&text[s..]);
                s + <&RawValue>::deserialize(&mut de).ok()?.get().len()
            }
        };
        out.push(&text[s..end]);
    }
    Some(out)
}

/// The other file of a pair, its elements placed by the baseline's texts rather than
/// by a grammar pass over all of it. Each list is looked for where the baseline's is
/// (the bytes from the baseline's list key to its first element) and walked element by
/// element ([`walk`]). That is a guess, and it is proved, not trusted: the file with
/// each placed element replaced by `{}` (its skeleton) is parsed whole by serde_json,
/// and the places are taken only when every `{}` put in is read there as an element of
/// a list. A JSON value replaced by another complete value leaves the rest of the text
/// parsed as before, so the file's elements are then exactly the placed texts and the
/// skeleton's other elements. Anything else: `None` (the reader then reads the file as
/// text). Its version is not checked here: the reader checks it.
pub(super) fn beside<'b>(
    bytes: &'b [u8],
    (base, a): (&Unchecked<'_>, &[u8]),
) -> Option<Unchecked<'b>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut spans = Vec::new();
    for (at, texts) in base.list_at.iter().zip(&base.texts) {
        if let (Some(at), Some(first)) = (at, texts.first()) {
            walk(text, &a[*at..offset(a, first)], texts, &mut spans);
        }
    }
    spans.sort_unstable();
    placed(text, &spans)
}

/// The file `text` read with the elements at `spans` replaced by `{}`, when each `{}`
/// put in is read as an element of a list: the file's envelope and each element's text.
fn placed<'b>(text: &'b str, spans: &[(usize, usize)]) -> Option<Unchecked<'b>> {
    // The skeleton, each `{}` put in, and how far the file is ahead of the skeleton
    // after each.
    let (mut skeleton, mut marks, mut from) = (String::new(), Vec::new(), 0);
    for &(s, e) in spans {
        skeleton.push_str(text.get(from..s)?);
        let ahead = marks.last().map_or(0, |m: &(usize, usize)| m.1) + (e - s - 2);
        marks.push((skeleton.len(), ahead));
        skeleton.push_str("{}");
        from = e;
    }
    skeleton.push_str(&text[from..]);
    let (u, lists, _) = envelope::parse::<&RawValue>(skeleton.as_bytes()).ok()?;
    // A place in the file, of one in the skeleton outside the `{}` put in.
    let in_file = |o: usize| {
        o + marks[..marks.partition_point(|m| m.0 < o)]
            .last()
            .map_or(0, |m| m.1)
    };
    let mut put = 0;
    let texts = lists
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|raw| {
                    match marks
                        .binary_search_by_key(&offset(skeleton.as_bytes(), raw.get()), |m| m.0)
                    {
                        Ok(i) => {
                            put += 1;
                            &text[spans[i].0..spans[i].1]
                        }
                        Err(_) => {
                            let s = in_file(offset(skeleton.as_bytes(), raw.get()));
                            &text[s..s + raw.get().len()]
                        }
                    }
                })
                .collect()
        })
        .collect();
    (put == spans.len()).then(|| Unchecked {
        envelope: u.envelope,
        texts,
        list_at: u.list_at.map(|o| o.map(in_file)),
    })
}

/// Place one list's elements in `text`, from the baseline list's `context` (its key to
/// its first element) and `texts`: an element that begins with the bytes of a baseline
/// element expected near there is those bytes (a JSON object ends where its own text
/// ends); another is read by serde_json's grammar pass. Stops at anything else.
fn walk(text: &str, context: &[u8], texts: &[&str], spans: &mut Vec<(usize, usize)>) {
    let b = text.as_bytes();
    let Some(q) = memchr::memmem::find(b, context) else {
        return;
    };
    let ws = |i: usize| {
        i + b[i..]
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
            .count()
    };
    let (mut s, mut j) = (q + context.len(), 0);
    while b.get(s) == Some(&b'{') {
        let near = j..texts.len().min(j + 8);
        let end = match near
            .into_iter()
            .find(|&m| b[s..].starts_with(texts[m].as_bytes()))
        {
            Some(m) => {
                j = m + 1;
                s + texts[m].len()
            }
            None => {
                match <&RawValue>::deserialize(&mut serde_json::Deserializer::from_str(&text[s..]))
                {
                    Ok(raw) => s + raw.get().len(),
                    Err(_) => return,
                }
            }
        };
        spans.push((s, end));
        let n = ws(end);
        if b.get(n) != Some(&b',') {
            return;
        }
        s = ws(n + 1);
    }
}
