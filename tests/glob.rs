//! `src/glob.rs` against globset, whose syntax it implements: on generated patterns
//! the two must agree on whether a pattern parses, on the error, and on every match.

mod common;

use common::Rng;
use mcp_covenant::glob::Glob;

/// Pieces of patterns: every metacharacter, the recursive forms, classes and groups.
const PATTERN_PIECES: &[&str] = &[
    "a",
    "b",
    "a",
    "b",
    "/",
    "/",
    "*",
    "**",
    "?",
    "[",
    "]",
    "!",
    "^",
    "-",
    ":",
    "{",
    "}",
    ",",
    "\\",
    "\\*",
    "[ab]",
    "[!a]",
    "[^/]",
    "[a-c]",
    "[]a]",
    "[-a]",
    "[a-]",
    "[[:alpha:]]",
    "[[:digit:]]",
    "[[:foo:]]",
    "[[:alnum:]]",
    "[[:blank:]]",
    "[[:cntrl:]]",
    "[[:graph:]]",
    "[[:lower:]]",
    "[[:print:]]",
    "[[:punct:]]",
    "[[:space:]]",
    "[[:upper:]]",
    "[[:xdigit:]]",
    "[[:al",
    "{a,b}",
    "{a,}",
    "{,b}",
    "{a,{b,/}}",
    "/**/",
    "**/",
    "/**",
    "{**,a}",
    "{a/**,b}",
    ".",
    "_",
];

/// Pieces of subjects: the characters patterns name, so that matches happen.
const SUBJECT_PIECES: &[&str] = &[
    "a", "b", "a", "b", "c", "/", "/", "-", ",", "*", "[", "]", "{", "}", ":", "!", "^", "1", ".",
    " ", "\t", "A", "F", "G", "~", "\u{7f}", "\u{1}", "@", "`",
];

fn build(r: &mut Rng, pieces: &[&str], max: usize) -> String {
    let n = r.below((max + 1) as u64) as usize;
    (0..n)
        .map(|_| pieces[r.below(pieces.len() as u64) as usize])
        .collect()
}

/// The pattern with its metacharacters dropped: a subject likely to match it.
fn literal_of(pattern: &str) -> String {
    pattern
        .chars()
        .filter(|c| !"*?[]{},!^\\:".contains(*c))
        .collect()
}

#[test]
fn the_glob_matcher_agrees_with_globset() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut patterns, mut errors, mut matched, mut compared) = (0, 0, 0, 0);
    for _ in 0..20_000 {
        let pattern = build(&mut r, PATTERN_PIECES, 7);
        let theirs = globset::Glob::new(&pattern);
        let ours = Glob::new(&pattern);
        match (&theirs, &ours) {
            (Err(t), Err(o)) => {
                assert_eq!(
                    t.kind().to_string(),
                    o.to_string(),
                    "pattern {pattern:?}: different errors"
                );
                errors += 1;
                continue;
            }
            (Ok(_), Ok(_)) => {}
            _ => panic!(
                "pattern {pattern:?}: globset says {:?}, we say {:?}",
                theirs.as_ref().map(|_| "ok").map_err(|e| e.to_string()),
                ours.as_ref().map(|_| "ok").map_err(|e| e.to_string())
            ),
        }
        patterns += 1;
        let theirs = theirs.unwrap().compile_matcher();
        let ours = ours.unwrap();
        let mut subjects: Vec<String> = (0..12).map(|_| build(&mut r, SUBJECT_PIECES, 8)).collect();
        subjects.push(literal_of(&pattern));
        subjects.push(String::new());
        for s in subjects {
            let expected = theirs.is_match(&s);
            assert_eq!(
                ours.is_match(&s),
                expected,
                "pattern {pattern:?} on {s:?}: globset says {expected}"
            );
            compared += 1;
            matched += usize::from(expected);
        }
    }
    // The generator must exercise both outcomes, or the comparison proves little.
    assert!(patterns > 5_000, "only {patterns} patterns parsed");
    assert!(errors > 1_000, "only {errors} patterns were errors");
    assert!(
        matched > 10_000,
        "only {matched} of {compared} subjects matched"
    );
}

#[test]
fn non_ascii_is_matched_per_character() {
    // globset matches bytes, so its `?` takes one byte of `é`; ours takes the character.
    let g = Glob::new("caf?").unwrap();
    assert!(g.is_match("café"));
    assert!(Glob::new("[é]").unwrap().is_match("é"));
    assert!(Glob::new("tool:*").unwrap().is_match("tool:日本"));
}
