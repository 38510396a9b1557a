//! The differential check of the lockfile reader, shared by `tests/it/reader_differential.rs`
//! (a proptest run over mutations; this is its `common::differential`) and the `cargo fuzz`
//! target `fuzz/fuzz_targets/read_pair.rs` (which includes this file with `#[path]`).
//! Public API only.
//!
//! For a baseline `a` and another file `b`: reading them as a pair (`Raw::read_pair`,
//! the baseline in one pass and `b` placed beside it by src/lockfile/place.rs) agrees
//! with reading each alone (`Raw::read`, `Lockfile::parse`): the same accept or refuse,
//! the same error, and the same elements (key, text, order). Each alone-reading is itself
//! held against serde_json: every element's text is exactly the slice of the file that
//! serde_json's `RawValue` finds for `surface.<list>[i]`, and its key is that element's
//! key field. When both are valid, the offline check (`diff::lazy::compare_files`)
//! finds exactly the changes of the full diff of both files parsed.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use mcp_covenant::diff;
use mcp_covenant::lockfile::{Kind, Lockfile, Raw, RawElement};
use mcp_covenant::rules::Rules;
use serde_json::value::RawValue;
use serde_json::Value;

/// The check, panicking with what disagrees.
pub fn check(a: &[u8], b: &[u8]) {
    let alone_a = Raw::read(a, "a", true);
    let alone_b = Raw::read(b, "b", true);
    if let Ok(r) = &alone_a {
        against_serde_json(a, r);
    }
    if let Ok(r) = &alone_b {
        against_serde_json(b, r);
    }
    let parsed_a = Lockfile::parse(a, "a");
    let parsed_b = Lockfile::parse(b, "b");
    for (alone, parsed) in [(&alone_a, &parsed_a), (&alone_b, &parsed_b)] {
        assert_eq!(
            alone.as_ref().err().map(ToString::to_string),
            parsed.as_ref().err().map(ToString::to_string),
            "Raw::read and Lockfile::parse disagree"
        );
    }
    // The error of the pair: the baseline's, else the other file's.
    let want = match (&alone_a, &alone_b) {
        (Err(e), _) | (Ok(_), Err(e)) => Some(e.to_string()),
        _ => None,
    };
    let pair = Raw::read_pair((a, "a"), (b, "b"));
    assert_eq!(
        pair.as_ref().err().map(ToString::to_string),
        want,
        "read_pair's error is not the alone-reading's"
    );
    let (Ok((pa, pb)), Ok(ra), Ok(rb)) = (&pair, &alone_a, &alone_b) else {
        let fast = fast_changes(a, b);
        assert_eq!(
            fast.err(),
            want,
            "compare_files' error is not the alone-reading's"
        );
        return;
    };
    same_elements(a, pa, ra, "the baseline of a pair");
    same_elements(b, pb, rb, "the other file of a pair");
    // An element the pair marks `shared` has the bytes of a baseline element with its
    // key: the offline check skips comparing it.
    for (k, list) in pb.lists.iter().enumerate() {
        for e in list.iter().filter(|e| e.shared) {
            assert!(
                pa.lists[k]
                    .iter()
                    .any(|x| x.key == e.key && x.text == e.text),
                "{}: `{}` is marked shared but the baseline has no element with its bytes",
                Kind::ALL[k].list_name(),
                e.key
            );
        }
    }
    let (Ok(la), Ok(lb)) = (parsed_a, parsed_b) else {
        unreachable!("compared above")
    };
    let mut full = diff::diff(rules(), &la.surface, &lb.surface);
    let mut fast = fast_changes(a, b).expect("both files are valid");
    diff::sort(&mut full);
    diff::sort(&mut fast);
    assert_eq!(fast, full, "the offline check and the full diff disagree");
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| Rules::embedded().expect("the embedded rules load"))
}

fn fast_changes(a: &[u8], b: &[u8]) -> Result<Vec<diff::Change>, String> {
    diff::lazy::compare_files(rules(), (a, "a"), (b, "b"), diff::DEFAULT_WORK_BUDGET)
        .map(|c| c.changes)
        .map_err(|e| e.to_string())
}

/// The pair's reading of a file is its alone-reading: every element's key and text
/// (the same slice of the file), in the same order.
fn same_elements(bytes: &[u8], pair: &Raw<'_>, alone: &Raw<'_>, what: &str) {
    let view = |r: &Raw<'_>| -> Vec<Vec<(String, usize, usize)>> {
        r.lists
            .iter()
            .map(|l| l.iter().map(|e| place(bytes, e)).collect())
            .collect()
    };
    assert_eq!(view(pair), view(alone), "{what}: elements differ");
    assert_eq!(
        (&pair.covenant_version, pair.captured_at_unix),
        (&alone.covenant_version, alone.captured_at_unix),
        "{what}: envelope differs"
    );
    for (x, y) in pair
        .lists
        .iter()
        .flatten()
        .zip(alone.lists.iter().flatten())
    {
        let parse = |t: &str| serde_json::from_str::<Value>(t).expect("an element parses");
        assert_eq!(
            parse(x.text),
            parse(y.text),
            "{what}: element values differ"
        );
    }
}

/// An element's key, and where its text is in `bytes` (it must be a slice of them).
fn place(bytes: &[u8], e: &RawElement<'_>) -> (String, usize, usize) {
    let start = (e.text.as_ptr() as usize).wrapping_sub(bytes.as_ptr() as usize);
    assert!(
        start <= bytes.len() && e.text.len() <= bytes.len() - start,
        "the text of `{}` is not a slice of its file",
        e.key
    );
    (e.key.to_string(), start, e.text.len())
}

/// A file `Raw::read` accepted, held against serde_json's own reading of it: each
/// list's elements are the `RawValue`s serde_json finds (the same slices), their keys
/// are the key fields of the `Value`s, and the file parses as a `Value` (no element
/// the reader accepts is one serde_json refuses).
fn against_serde_json(bytes: &[u8], read: &Raw<'_>) {
    let text = std::str::from_utf8(bytes).expect("an accepted file is UTF-8");
    serde_json::from_str::<Value>(text).expect("an accepted file parses as a serde_json Value");
    let top: BTreeMap<String, &RawValue> =
        serde_json::from_str(text).expect("an accepted file is an object");
    let lists: BTreeMap<String, Vec<&RawValue>> = match top.get("surface") {
        Some(s) => serde_json::from_str(s.get()).expect("an accepted surface is lists"),
        None => BTreeMap::new(),
    };
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        let want: Vec<(String, usize, usize)> = lists
            .get(kind.list_name())
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|raw| {
                let v: Value = serde_json::from_str(raw.get()).expect("an element parses");
                let key = v[kind.key_field()].as_str().unwrap_or_default().to_string();
                let start = raw.get().as_ptr() as usize - bytes.as_ptr() as usize;
                (key, start, raw.get().len())
            })
            .collect();
        let got: Vec<_> = read.lists[k].iter().map(|e| place(bytes, e)).collect();
        assert_eq!(
            got,
            want,
            "surface.{}: the reader's elements are not serde_json's",
            kind.list_name()
        );
    }
}

/// A canonical baseline: several tools (input and output schemas, annotations),
/// resources, a template, prompts with arguments.
pub fn baseline() -> String {
    let tool = |i: usize| {
        format!(
            r#"{{"name": "tool_{i}", "title": "Tool {i}", "description": "Does {i} things }}, {{ \"q\" \\ é", "inputSchema": {{"type": "object", "properties": {{"q": {{"type": "string", "maxLength": {}}}, "tags": {{"type": "array", "items": {{"enum": ["a", "b"]}}}}}}, "required": ["q"]}}, "outputSchema": {{"type": "object", "properties": {{"ok": {{"type": "boolean"}}}}}}, "annotations": {{"readOnlyHint": {}}}}}"#,
            10 + i,
            [true, false][i % 2]
        )
    };
    let tools: Vec<String> = (0..5).map(tool).collect();
    let resources = [
        r#"{"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"}"#,
        r#"{"uri": "file:///b.json", "name": "b", "description": "B [1, 2]"}"#,
    ];
    let templates = [r#"{"uriTemplate": "file:///{path}", "name": "files"}"#];
    let prompts = [
        r#"{"name": "review", "description": "Review code", "arguments": [{"name": "code", "required": true}, {"name": "style"}]}"#,
        r#"{"name": "summarise", "arguments": [{"name": "text", "description": "what {to} summarise"}]}"#,
        r#"{"name": "zero"}"#,
    ];
    let text = format!(
        r#"{{"covenant_version": "0.2.0", "captured_at_unix": 1700000000, "server": {{"name": "s", "version": "1.0.0"}}, "surface": {{"tools": [{}], "resources": [{}], "resourceTemplates": [{}], "prompts": [{}]}}}}"#,
        tools.join(", "),
        resources.join(", "),
        templates.join(", "),
        prompts.join(", ")
    );
    Lockfile::parse(text.as_bytes(), "baseline")
        .expect("the baseline is valid")
        .to_text()
}
