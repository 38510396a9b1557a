//! Every witness is proven by an independent validator (the `jsonschema` crate, a
//! dev-dependency that never enters the binary): in input the baseline schema accepts it
//! and the new one rejects it; in output the other way round. A witness that fails this
//! check fails the build.
//!
//! The differential test mutates the golden and corpus schemas, samples instances of
//! both sides, and asks the same validator: an instance one side accepts and the other
//! rejects in the breaking direction must be matched by a breaking change in that
//! element and direction. It runs on proptest (`common::property`: fixed cases, a
//! shrunk counterexample on failure); `WITNESS_PAIRS=N` runs more.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::property;
use mcp_covenant::diff;
use mcp_covenant::diff::witness::{self, parse_path};
use mcp_covenant::lockfile::Lockfile;
use mcp_covenant::rules::{Direction, Rules, Severity};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use serde_json::{json, Map, Value};

fn validator(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .ok()
}

fn lockfiles() -> Vec<(PathBuf, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pairs = Vec::new();
    for dir in fs::read_dir(root.join("golden")).unwrap() {
        let dir = dir.unwrap().path();
        let (a, b) = (dir.join("before.lock"), dir.join("after.lock"));
        if a.exists() && b.exists() {
            pairs.push((a, b));
        }
    }
    // The real-world corpus, when present: tests/corpus/<package>/<version>.lock.
    if let Ok(list) = fs::read_to_string(root.join("tests/corpus/pairs.txt")) {
        for line in list
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            let w: Vec<&str> = line.split_whitespace().collect();
            if let [pkg, old, new] = w[..] {
                let d = root.join("tests/corpus").join(pkg);
                pairs.push((d.join(format!("{old}.lock")), d.join(format!("{new}.lock"))));
            }
        }
    }
    pairs.sort();
    pairs
}

/// The tools' schemas named by `fields` in the golden and corpus lockfiles (the new
/// side of each pair too when `both`), each under 20,000 bytes.
fn seed_schemas(fields: &[&str], both: bool) -> Vec<Value> {
    let mut seeds = Vec::new();
    for (a, b) in lockfiles() {
        let files = if both { vec![a, b] } else { vec![a] };
        for p in files {
            let Some(lock) = raw(&p) else { continue };
            let tools = lock.pointer("/surface/tools").and_then(Value::as_array);
            for t in tools.into_iter().flatten() {
                for f in fields {
                    if let Some(s) = t.get(*f).filter(|s| s.is_object()) {
                        if s.to_string().len() < 20_000 {
                            seeds.push(s.clone());
                        }
                    }
                }
            }
        }
    }
    // Smallest first: a failing case shrinks toward a smaller schema.
    seeds.sort_by_cached_key(|s| (s.to_string().len(), s.to_string()));
    seeds
}

/// A lockfile holding one tool `t` whose `field` is `schema`.
fn one_tool(field: &str, schema: &Value) -> Option<Lockfile> {
    let doc = json!({"covenant_version": "0.2.0", "captured_at_unix": 0, "server": {"name": "d"},
                     "surface": {"tools": [{"name": "t", field: schema}]}});
    Lockfile::parse(doc.to_string().as_bytes(), "generated").ok()
}

fn raw(p: &Path) -> Option<Value> {
    serde_json::from_slice(&fs::read(p).ok()?).ok()
}

fn load(p: &Path) -> Option<Lockfile> {
    Lockfile::parse(&fs::read(p).ok()?, &p.display().to_string()).ok()
}

/// The element's schema named by the first segment of a change path, as the walker
/// saw it (a prompt's argument list as an object schema).
fn element_schema(lock: &Value, subject: &str, field: &str) -> Option<Value> {
    let doc = lock.get("surface")?;
    let (kind, name) = subject.split_once(':')?;
    let (list, key) = match kind {
        "tool" => ("tools", "name"),
        "prompt" => ("prompts", "name"),
        _ => return None,
    };
    let element = doc
        .get(list)?
        .as_array()?
        .iter()
        .find(|e| e.get(key).and_then(Value::as_str) == Some(name))?;
    if field == "arguments" {
        let mut props = Map::new();
        let mut required = Vec::new();
        for arg in element.get("arguments")?.as_array()? {
            let mut s = arg.as_object()?.clone();
            let n = s.remove("name")?.as_str()?.to_string();
            if s.remove("required") == Some(Value::Bool(true)) {
                required.push(Value::String(n.clone()));
            }
            props.insert(n, Value::Object(s));
        }
        return Some(json!({"properties": props, "required": required}));
    }
    Some(element.get(field).cloned().unwrap_or(json!({})))
}

#[test]
fn every_witness_is_proven_by_an_independent_validator() {
    let rules = Rules::embedded().unwrap();
    let (mut checked, mut breaking, mut failures) = (0, 0, Vec::new());
    for (a_path, b_path) in lockfiles() {
        let (Some(a), Some(b)) = (load(&a_path), load(&b_path)) else {
            continue;
        };
        let (Some(ja), Some(jb)) = (raw(&a_path), raw(&b_path)) else {
            continue;
        };
        for change in diff::diff(&rules, &a.surface, &b.surface) {
            let path_text = change.path.as_ref().map(ToString::to_string);
            let (Some(dir), Some(path)) = (change.direction, path_text.as_deref()) else {
                continue;
            };
            if change.severity == Severity::Breaking {
                breaking += 1;
            }
            let Some(w) = &change.witness else { continue };
            let field = path.split(['.', '[']).next().unwrap_or(path);
            let (Some(sa), Some(sb)) = (
                element_schema(&ja, &change.subject.to_string(), field),
                element_schema(&jb, &change.subject.to_string(), field),
            ) else {
                failures.push(format!(
                    "{}: {} {path}: no schema",
                    a_path.display(),
                    change.subject
                ));
                continue;
            };
            let (Some(va), Some(vb)) = (validator(&sa), validator(&sb)) else {
                continue; // a schema the validator itself refuses proves nothing either way
            };
            let (accepts, rejects) = match dir {
                Direction::Input => (&va, &vb),
                Direction::Output => (&vb, &va),
            };
            checked += 1;
            if !accepts.is_valid(w) || rejects.is_valid(w) {
                failures.push(format!(
                    "{}: {} {path} [{}]: witness {w} does not prove a {} break",
                    a_path.display(),
                    change.subject,
                    change.code,
                    dir.word()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} witnesses fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        checked > 100,
        "only {checked} witnesses checked ({breaking} breaking changes)"
    );
    eprintln!("{checked} witnesses proven, {breaking} breaking changes");
}

/// A witness proves its own change: the new schema with only that change undone
/// (`witness::undo`, the same undo the search uses) judges it as the baseline does, by
/// the independent validator. Another change's instance is allowed only when it says so
/// (`shared_with`, naming a change of the same element). Prints, over the golden suite
/// and the corpus, how many breaking changes have a specific witness, a shared one, and
/// none (by reason).
#[test]
fn every_witness_proves_its_own_change() {
    use std::collections::BTreeMap;
    let rules = Rules::embedded().unwrap();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for (a_path, b_path) in lockfiles() {
        let (Some(a), Some(b)) = (load(&a_path), load(&b_path)) else {
            continue;
        };
        let (Some(ja), Some(jb)) = (raw(&a_path), raw(&b_path)) else {
            continue;
        };
        let changes = diff::diff(&rules, &a.surface, &b.surface);
        let set = if a_path.to_string_lossy().contains("tests/corpus") {
            "corpus"
        } else {
            "golden"
        };
        for change in &changes {
            if change.severity != Severity::Breaking {
                continue;
            }
            let place = format!("{}: {} {:?}", a_path.display(), change.subject, change.path);
            let Some(w) = &change.witness else {
                match change.witness_absent {
                    Some(why) => {
                        *counts
                            .entry(format!("{set} absent: {}", why.word()))
                            .or_default() += 1
                    }
                    None => failures.push(format!("{place}: no witness and no reason")),
                }
                continue;
            };
            if change.witness_absent.is_some() {
                failures.push(format!("{place}: a witness and a reason for none"));
            }
            if let Some(f) = &change.shared_with {
                *counts.entry(format!("{set} shared")).or_default() += 1;
                let known = changes
                    .iter()
                    .any(|c| &c.fingerprint == f && c.subject == change.subject);
                if !known {
                    failures.push(format!("{place}: shared with {f}, no such change"));
                }
                continue;
            }
            let path_text = change.path.as_ref().map(ToString::to_string);
            let (Some(dir), Some(path)) = (change.direction, path_text.as_deref()) else {
                failures.push(format!("{place}: a witness without a schema"));
                continue;
            };
            let field = path.split(['.', '[']).next().unwrap_or(path);
            let (Some(sa), Some(sb)) = (
                element_schema(&ja, &change.subject.to_string(), field),
                element_schema(&jb, &change.subject.to_string(), field),
            ) else {
                continue;
            };
            let as_baseline = |v: &jsonschema::Validator| match dir {
                Direction::Input => v.is_valid(w),
                Direction::Output => !v.is_valid(w),
            };
            let Some((undone, exact)) =
                witness::undo_exact(&rules, change, (field, field == "arguments"), &sa, &sb)
            else {
                *counts
                    .entry(format!("{set} specific, not undoable"))
                    .or_default() += 1;
                continue;
            };
            let Some(v) = validator(&undone) else {
                continue;
            };
            *counts.entry(format!("{set} specific")).or_default() += 1;
            // With the change undone, the instance is judged as the baseline judges it.
            if !as_baseline(&v) {
                failures.push(format!(
                    "{place} [{}]: witness {w} is rejected by another change (not shared_with)",
                    change.code
                ));
            }
            if exact {
                continue;
            }
            // Undone only with the whole union above it (which undoes its siblings too):
            // that proves nothing alone. No other change of this schema, undone on its
            // own node, may be the one that rejects the witness.
            *counts
                .entry(format!("{set} specific, undone with its union"))
                .or_default() += 1;
            for other in &changes {
                let Some(p) = other.path.as_ref().map(ToString::to_string) else {
                    continue;
                };
                let p = p.as_str();
                // Changes above or below this one are part of it (a variant changed
                // because of what changed inside; a property whose undo restores its
                // whole schema; a `oneOf` variant changed, at its own path, because of
                // what changed there): only the same node's other keywords and unrelated
                // nodes.
                let nested = |x: &str, y: &str| {
                    x.strip_prefix(y)
                        .is_some_and(|r| r.starts_with('.') || r.starts_with('['))
                };
                if other.fingerprint == change.fingerprint
                    || other.subject != change.subject
                    || other.direction != change.direction
                    || p.split(['.', '[']).next() != Some(field)
                    || nested(p, path)
                    || nested(path, p)
                    || (p == path && change.code.ends_with(".variant.changed"))
                {
                    continue;
                }
                let undone = match witness::undo_exact(
                    &rules,
                    other,
                    (field, field == "arguments"),
                    &sa,
                    &sb,
                ) {
                    Some((undone, true)) => Some(undone),
                    _ if p == path => keyword_undone(&sb, field, other),
                    _ => None,
                };
                if undone
                    .and_then(|u| validator(&u))
                    .is_some_and(|v| as_baseline(&v))
                {
                    failures.push(format!(
                        "{place} [{}]: witness {w} is rejected only by {} at the same place (not shared_with)",
                        change.code, other.code
                    ));
                }
            }
        }
    }
    eprintln!("breaking changes by witness: {counts:?}");
    assert!(
        failures.is_empty(),
        "{} witnesses do not prove their own change:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let specific = counts.get("golden specific").copied().unwrap_or(0)
        + counts.get("corpus specific").copied().unwrap_or(0);
    assert!(specific > 100, "{counts:?}");
}

/// The new schema `sb` of `field` with the keyword of `change` (a bound, a length, ...:
/// the word after `schema.` in its code) set back to the change's `before` value at the
/// node its path names, written out literally: independent of `witness::undo`, for
/// telling a sibling keyword's witness from this change's own.
fn keyword_undone(sb: &Value, field: &str, change: &diff::Change) -> Option<Value> {
    // `schema.KEYWORD.EVENT` only: `schema.enum.value.added` holds one value, not the
    // keyword's.
    let (keyword, event) = change.code.strip_prefix("schema.")?.split_once('.')?;
    if event.contains('.') {
        return None;
    }
    let full = change.path.as_ref()?.to_string();
    let rest = full.strip_prefix(field)?;
    let mut out = sb.clone();
    let mut cur = &mut out;
    for seg in parse_path(rest) {
        cur = match seg {
            witness::Seg::Name(n) => cur.get_mut(&n)?,
            witness::Seg::Index(i) => cur.get_mut(i)?,
        };
    }
    let node = cur.as_object_mut()?;
    node.get(keyword)?;
    let spellings: &[&str] = match keyword {
        "minimum" => &["minimum", "exclusiveMinimum"],
        "maximum" => &["maximum", "exclusiveMaximum"],
        k => &[k][..],
    };
    for k in spellings {
        node.remove(*k);
    }
    if let Some(v) = &change.before {
        node.insert(keyword.to_string(), v.clone());
    }
    Some(out)
}

/// The shapes of issue 38, each change undone by hand (independently of
/// `witness::undo`) and judged by the independent validator: several values off one
/// `enum` (each removal its own value, seeded over list sizes), a bound beside a `null`
/// variant removed from `anyOf: [integer, null]`, and a closing through a `$ref` beside
/// a newly typed optional property.
#[test]
fn each_witness_proves_its_own_change_with_the_change_undone_by_hand() {
    let rules = Rules::embedded().unwrap();
    // (before, after, [(code, path suffix, the new schema with only that change undone)])
    type Case = (Value, Value, Vec<(&'static str, &'static str, Value)>);
    let obj = |props: Value| json!({"type": "object", "properties": props});
    let mut cases: Vec<Case> = vec![
        (
            obj(json!({"limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]}})),
            obj(json!({"limit": {"type": "integer", "minimum": 1, "maximum": 100}})),
            vec![
                (
                    "schema.maximum.added",
                    ".limit.anyOf[0]",
                    obj(json!({"limit": {"type": "integer", "minimum": 1}})),
                ),
                (
                    "schema.minimum.added",
                    ".limit.anyOf[0]",
                    obj(json!({"limit": {"type": "integer", "maximum": 100}})),
                ),
                (
                    "schema.anyOf.variant.removed",
                    ".limit.anyOf[1]",
                    obj(
                        json!({"limit": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 100}, {"type": "null"}]}}),
                    ),
                ),
            ],
        ),
        (
            json!({"type": "object", "properties": {"order_by": {"type": "array", "items": {"$ref": "#/$defs/O"}}},
                   "$defs": {"O": {"type": "object", "properties": {"field": {"type": "string"}}}}}),
            json!({"type": "object", "properties": {"order_by": {"type": "array", "items": {"$ref": "#/$defs/O"}}},
                   "$defs": {"O": {"type": "object", "properties": {"field": {"type": "string"}, "grain": {"type": "string"}}, "additionalProperties": false}}}),
            vec![(
                "schema.additionalProperties.restricted",
                ".order_by.items",
                json!({"type": "object", "properties": {"order_by": {"type": "array", "items": {"type": "object", "properties": {"field": {"type": "string"}, "grain": {"type": "string"}}}}}}),
            )],
        ),
    ];
    // Enums of 3 to 7 values, a random subset removed (at least two): twelve, the same
    // on every run.
    let enums = (3..=7usize)
        .prop_flat_map(|n| proptest::collection::vec(prop::bool::weighted(1.0 / 3.0), n));
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..12 {
        let keep = enums.new_tree(&mut runner).unwrap().current();
        let all: Vec<Value> = (0..keep.len()).map(|k| json!(format!("v{k}"))).collect();
        let kept: Vec<Value> = all
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(v, _)| v.clone())
            .collect();
        let kept = if kept.is_empty() {
            vec![all[0].clone()]
        } else {
            kept
        };
        if all.len() - kept.len() < 2 {
            continue;
        }
        let before = obj(json!({"f": {"type": "string", "enum": all}}));
        let after = obj(json!({"f": {"type": "string", "enum": kept}}));
        cases.push((before, after, vec![]));
    }
    let mut failures = Vec::new();
    for (before, after, expected) in &cases {
        let (Some(a), Some(b)) = (
            one_tool("inputSchema", before),
            one_tool("inputSchema", after),
        ) else {
            panic!("a case does not parse");
        };
        let changes = diff::diff(&rules, &a.surface, &b.surface);
        let baseline = validator(before).unwrap();
        for c in changes.iter().filter(|c| c.severity == Severity::Breaking) {
            let path = c.path.as_ref().map(ToString::to_string).unwrap_or_default();
            let Some(w) = &c.witness else {
                failures.push(format!(
                    "{path} [{}]: no witness ({:?})",
                    c.code, c.witness_absent
                ));
                continue;
            };
            assert!(baseline.is_valid(w) && !validator(after).unwrap().is_valid(w));
            let undone = if c.code == "schema.enum.value.removed" {
                // The list with this one value put back.
                let mut u = after.clone();
                let list = u["properties"]["f"]["enum"].as_array_mut().unwrap();
                list.push(c.before.clone().unwrap());
                u
            } else {
                let Some((_, _, u)) = expected
                    .iter()
                    .find(|(code, suffix, _)| *code == c.code && path.ends_with(suffix))
                else {
                    failures.push(format!("{path} [{}]: unexpected", c.code));
                    continue;
                };
                u.clone()
            };
            if !validator(&undone).unwrap().is_valid(w) {
                failures.push(format!(
                    "{path} [{}]: witness {w} is rejected with only this change undone",
                    c.code
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// --- differential soundness ---------------------------------------------------------

/// One random change (`mutate`): which (0 to 23) and its parameter.
type Mutation = (usize, Index);

/// A seed schema (by index, smallest first), a subschema of it (by index in `sites`
/// order) and a change to it.
fn mutation() -> impl Strategy<Value = (Index, Index, Mutation)> {
    (any::<Index>(), any::<Index>(), (0..24usize, any::<Index>()))
}

/// Every subschema position of `v` (as JSON pointers), for picking a mutation site.
fn sites(v: &Value, at: String, out: &mut Vec<String>) {
    if out.len() > 2000 {
        return;
    }
    if v.is_object() {
        out.push(at.clone());
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if matches!(
                    k.as_str(),
                    "enum" | "const" | "default" | "examples" | "required"
                ) {
                    continue;
                }
                let esc = k.replace('~', "~0").replace('/', "~1");
                sites(x, format!("{at}/{esc}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                sites(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// One random change to the schema object at a site: tighten or loosen a bound, add
/// or drop a keyword, close or open an object, wrap in anyOf.
fn mutate((choice, param): Mutation, s: &mut Map<String, Value>) {
    let below = |n: usize| param.index(n);
    match choice {
        14 => {
            if let Some(Value::Array(e)) = s.get_mut("enum") {
                e.pop();
            } else {
                s.insert("const".into(), json!("a"));
            }
        }
        15 => {
            if let Some(Value::Array(e)) = s.get_mut("enum") {
                e.push(json!("zz"));
            } else {
                s.insert("pattern".into(), json!("^[a-c]+$"));
            }
        }
        16 => {
            s.insert(
                "format".into(),
                json!(["date", "date-time", "email", "uuid"][below(4)]),
            );
        }
        17 => {
            s.insert("type".into(), json!(["string", "null"]));
        }
        18 => {
            s.insert("prefixItems".into(), json!([{"type": "string"}]));
            s.insert("items".into(), json!(false));
        }
        19 => {
            s.insert("minItems".into(), json!(1 + below(2)));
        }
        20 => {
            s.insert("uniqueItems".into(), json!(true));
        }
        21 => {
            s.insert("not".into(), json!({"const": "a"}));
        }
        22 => {
            s.insert("multipleOf".into(), json!([2.0, 3.0, 0.5][below(3)]));
        }
        23 => {
            if let Some(Value::Object(p)) = s.get_mut("properties") {
                let k = format!("p{}", p.len());
                p.insert(k, json!({"type": "integer"}));
            } else {
                s.insert("minProperties".into(), json!(1));
            }
        }
        0 => {
            s.insert("maxLength".into(), json!(below(4)));
        }
        1 => {
            s.insert("minLength".into(), json!(1 + below(3)));
        }
        2 => {
            s.insert("minimum".into(), json!(below(5) as i64 - 1));
        }
        3 => {
            s.insert("maximum".into(), json!(below(5)));
        }
        4 => {
            s.insert("additionalProperties".into(), json!(false));
        }
        5 => {
            s.remove("additionalProperties");
        }
        6 => {
            if let Some(Value::Object(p)) = s.get_mut("properties") {
                if let Some(k) = p.keys().next().cloned() {
                    p.remove(&k);
                }
            }
        }
        7 => {
            let name = format!("p{}", below(3));
            s.entry("required").or_insert(json!([]));
            if let Some(Value::Array(req)) = s.get_mut("required") {
                req.push(Value::String(name));
            }
        }
        8 => {
            s.remove("required");
        }
        9 => {
            let t = [
                "string", "integer", "number", "boolean", "object", "array", "null",
            ];
            s.insert("type".into(), json!(t[below(t.len())]));
        }
        10 => {
            s.remove("type");
        }
        11 => {
            let all = [json!("a"), json!(1), Value::Null];
            s.insert("enum".into(), Value::Array(all[..1 + below(3)].to_vec()));
        }
        12 => {
            let inner = Value::Object(std::mem::take(s));
            s.insert("anyOf".into(), json!([inner, {"type": "null"}]));
        }
        _ => {
            s.insert("maxItems".into(), json!(below(3)));
        }
    }
}

#[test]
fn no_instance_breaks_without_a_breaking_change() {
    let rules = Rules::embedded().unwrap();
    let pairs: u32 = std::env::var("WITNESS_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(600);
    // Seed schemas: every input and output schema of the golden and corpus lockfiles.
    let seeds = seed_schemas(&["inputSchema", "outputSchema"], true);
    assert!(!seeds.is_empty());
    let (tried, instances) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    property::check(pairs, mutation(), |m| {
        let (old, new, site) = mutated(m, &seeds);
        let (Some(va), Some(vb)) = (validator(&old), validator(&new)) else {
            return Ok(());
        };
        tried.set(tried.get() + 1);
        for dir in [Direction::Input, Direction::Output] {
            let field = if dir == Direction::Input {
                "inputSchema"
            } else {
                "outputSchema"
            };
            let (Some(la), Some(lb)) = (one_tool(field, &old), one_tool(field, &new)) else {
                continue;
            };
            let changes = diff::diff(&rules, &la.surface, &lb.surface);
            // Covered: a breaking change in this direction at the mutated node, above it
            // or below it (a mutation inside a definition shows where it is referenced).
            // Variants are paired by content, not by position, so a break in a mutated
            // variant may be reported at a sibling's index: indexes of `anyOf` / `oneOf`
            // variants are not compared.
            let at = unindexed(&format!("{field}{}", site_path(&site)));
            let in_defs = site.contains("/$defs/") || site.contains("/definitions/");
            let reported = changes.iter().any(|c| {
                c.severity == Severity::Breaking
                    && c.direction == Some(dir)
                    && c.path
                        .as_ref()
                        .map(|p| unindexed(&p.to_string()))
                        .is_some_and(|p| in_defs || at.starts_with(&p) || p.starts_with(&at))
            });
            // Samples: candidates of both schemas around the mutated node.
            let segs = parse_path(&site_path(&site));
            let mut samples = witness::candidates(&old, &new, &segs);
            samples.extend(witness::candidates(&new, &old, &segs));
            samples.truncate(400);
            for x in samples {
                instances.set(instances.get() + 1);
                let broken = match dir {
                    Direction::Input => va.is_valid(&x) && !vb.is_valid(&x),
                    Direction::Output => vb.is_valid(&x) && !va.is_valid(&x),
                };
                // The documented conventions: a new optional property is minor in
                // input even in an open object (undeclared names were never the
                // contract), and in output even in a closed one (clients validate
                // against the current outputSchema).
                let convention = changes
                    .iter()
                    .any(|c| c.code == "schema.property.added" && c.direction == Some(dir));
                prop_assert!(
                    !broken || reported || convention,
                    "{} break missed: {x}\nold: {old}\nnew: {new}",
                    dir.word()
                );
            }
        }
        Ok(())
    });
    eprintln!(
        "differential: {} pairs, {} instances checked, none missed",
        tried.get(),
        instances.get()
    );
}

/// A change path with the index of every `anyOf` / `oneOf` variant dropped
/// (`x.anyOf[1].type` → `x.anyOf[].type`).
fn unindexed(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(i) = rest.find("Of[") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let union = head.ends_with("anyOf[") || head.ends_with("oneOf[");
        match tail.find(']') {
            Some(j) if union && tail[..j].bytes().all(|b| b.is_ascii_digit()) => rest = &tail[j..],
            _ => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// A seed picked at random and a copy with one random mutation at a random subschema,
/// with the JSON pointer of that subschema.
fn mutated(
    (seed, site, change): (Index, Index, Mutation),
    seeds: &[Value],
) -> (Value, Value, String) {
    let old = seeds[seed.index(seeds.len())].clone();
    let mut new = old.clone();
    let mut at = Vec::new();
    sites(&new, String::new(), &mut at);
    let site = at[site.index(at.len())].clone();
    if let Some(Value::Object(m)) = new.pointer_mut(&site) {
        mutate(change, m);
    }
    (old, new, site)
}

/// A JSON pointer (`/properties/a/items`) as a change path (`.properties.a.items`).
fn site_path(pointer: &str) -> String {
    use mcp_covenant::path::{Rest, Segment};
    let segs: Vec<Segment> = pointer
        .split('/')
        .skip(1)
        .map(|seg| {
            let seg = seg.replace("~1", "/").replace("~0", "~");
            match seg.parse::<usize>() {
                Ok(i) => Segment::Index(i),
                Err(_) => Segment::Name(seg),
            }
        })
        .collect();
    Rest(&segs).to_string()
}

/// No change anywhere in a schema produces zero changes: every mutation that leaves the
/// schema different (not merely reordered or respelled equivalently) is reported.
#[test]
fn every_schema_change_is_reported() {
    let rules = Rules::embedded().unwrap();
    let seeds = seed_schemas(&["inputSchema"], false);
    let tried = std::cell::Cell::new(0);
    property::check(2000, mutation(), |m| {
        let (old, new, site) = mutated(m, &seeds);
        if old == new {
            return Ok(());
        }
        tried.set(tried.get() + 1);
        let (Some(la), Some(lb)) = (one_tool("inputSchema", &old), one_tool("inputSchema", &new))
        else {
            return Ok(());
        };
        if diff::diff(&rules, &la.surface, &lb.surface).is_empty() {
            // Equal as sets of values is the one excuse: the independent validator must
            // agree on every sample of both.
            let (Some(va), Some(vb)) = (validator(&old), validator(&new)) else {
                return Ok(());
            };
            let segs = parse_path(&site_path(&site));
            let mut samples = witness::candidates(&old, &new, &segs);
            samples.extend(witness::candidates(&new, &old, &segs));
            if let Some(x) = samples.iter().find(|x| va.is_valid(x) != vb.is_valid(x)) {
                prop_assert!(
                    false,
                    "no change reported, but {x} tells them apart\nold: {old}\nnew: {new}"
                );
            }
        }
        Ok(())
    });
    eprintln!(
        "{} changed schemas, none reported as no change wrongly",
        tried.get()
    );
}

/// The candidates that only a variant's names give (tried for overlapping `oneOf`
/// variants) come in a second round: small as they are, they would sort ahead of the
/// first round's and crowd a witness out of the candidate budget (found by review:
/// 16 names an `if` requires hid this `propertyNames` witness).
#[test]
fn variant_names_never_crowd_out_a_witness() {
    let mut props = Map::new();
    for i in 0..30 {
        props.insert(
            format!("p{i}"),
            json!({"type": "string", "enum": ["a", "b", "c", "d", "e", "f"]}),
        );
    }
    props.insert("l".repeat(40), json!({"type": "string"}));
    let required: Vec<Value> = (0..16).map(|i| json!(format!("q{i}"))).collect();
    let src = json!({"type": "object", "properties": props, "if": {"required": required}});
    let mut tgt = src.clone();
    tgt["propertyNames"] = json!({"maxLength": 30});
    let witness = witness::find(Direction::Input, &src, &tgt, &[]).expect("a witness");
    assert!(witness.get("l".repeat(40)).is_some(), "{witness}");
}
