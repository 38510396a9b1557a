//! Witnesses: for a breaking schema change, a concrete instance of the whole element
//! schema that proves it. In input (what a caller sends) the baseline accepts it and the
//! new schema rejects it: a call that worked and now fails. In output (what a caller
//! receives) the new schema accepts it and the baseline rejects it: a result old clients
//! turn away.
//!
//! Candidates are built around the change's path from the features of both schemas
//! there (their bounds, enum values, properties, formats, tuple positions), placed in a
//! minimal instance of the whole schema, and kept only when a small three-valued
//! validator proves the claim: `Unknown` (a `pattern`, which needs a regex engine, an
//! external `$ref`, ...) proves nothing, and then no witness is given. The test suite
//! checks every witness again with an independent validator.

use serde_json::{Map, Value};

use super::pattern::Pattern;
use super::walker::resolve;
use super::Change;
use crate::keywords;
use crate::rules::{Direction, Severity};

/// Candidates tried per change, and validator steps per candidate: a witness is a
/// convenience, never a reason for a slow or unbounded check.
const MAX_CANDIDATES: usize = 400;
const MAX_STEPS: usize = 20_000;

/// Attach a witness to each breaking change in `changes` (all from one schema field,
/// rooted at `field`, compared `before` → `after`). `flat`: the field is a prompt's
/// argument list, already turned into an object schema.
pub(crate) fn attach(
    changes: &mut [Change],
    budget: &mut usize,
    field: &str,
    before: Option<&Value>,
    after: Option<&Value>,
) {
    let empty = Value::Object(Map::new());
    let (a, b) = (before.unwrap_or(&empty), after.unwrap_or(&empty));
    for change in changes.iter_mut() {
        if change.severity != Severity::Breaking {
            continue;
        }
        let (Some(direction), Some(path)) = (change.direction, change.path.as_deref()) else {
            continue;
        };
        let Some(rest) = path.strip_prefix(field) else {
            continue;
        };
        let mut segs = parse_path(rest);
        if field == "arguments" && !segs.is_empty() {
            segs.insert(0, Seg::Name("properties".into()));
        }
        let reverted = revert_keyword(&change.code, a, b, &segs);
        let own = reverted.as_ref().map(|new| Own {
            new,
            expect: match direction {
                Direction::Input => Truth::Yes,
                Direction::Output => Truth::No,
            },
        });
        change.witness = find_checked(direction, a, b, &segs, own, budget);
    }
}

/// The new schema with one change undone, and what it must say of a witness of that
/// change (what the old schema says): then the witness proves this change, not another
/// one beside it (a closing next to a type change, a format next to a minLength).
struct Own<'s> {
    new: &'s Value,
    expect: Truth,
}

/// `after` with the keyword a change is about set back to its value in `before` (or
/// removed), at the node the change's path names, when both schemas hold that node
/// literally (no `$ref` or variant on the way, where paths and positions may not
/// match). `None` when the change is not about one keyword of one node.
fn revert_keyword(code: &str, before: &Value, after: &Value, segs: &[Seg]) -> Option<Value> {
    let keyword = code.strip_prefix("schema.")?.split('.').next()?;
    keywords::role(keyword)?;
    let mut node_path = segs;
    if let Some((Seg::Name(last), parent)) = segs.split_last() {
        if last == keyword {
            node_path = parent;
        }
    }
    if matches!(node_path.last(), Some(Seg::Index(_))) && keyword != "items" {
        return None;
    }
    let literal = |root: &Value| -> Option<Value> {
        let mut cur = root;
        for seg in node_path {
            if cur.get("$ref").is_some() {
                return None;
            }
            cur = match seg {
                Seg::Name(n) => cur.get(n)?,
                Seg::Index(i) => cur.get(*i)?,
            };
        }
        (cur.get("$ref").is_none()).then(|| cur.clone())
    };
    let old_node = literal(before)?;
    literal(after)?;
    let mut out = after.clone();
    let mut cur = &mut out;
    for seg in node_path {
        cur = match seg {
            Seg::Name(n) => cur.get_mut(n)?,
            Seg::Index(i) => cur.get_mut(*i)?,
        };
    }
    // A type changed to a disjoint one stands for everything under it (the walker
    // folds the rest into it): the whole node is undone.
    if code == "schema.type.changed" {
        *cur = old_node;
        return Some(out);
    }
    // Keywords that act together are undone together: the walker compares them as one
    // (`const` against a one-value `enum`, a bound in either spelling, a conditional).
    let group: &[&str] = match keyword {
        "const" | "enum" => &["const", "enum"],
        "minimum" | "exclusiveMinimum" => &["minimum", "exclusiveMinimum"],
        "maximum" | "exclusiveMaximum" => &["maximum", "exclusiveMaximum"],
        "if" | "then" | "else" => &["if", "then", "else"],
        _ => std::slice::from_ref(&keyword),
    };
    let node = cur.as_object_mut()?;
    for k in group {
        // A `$ref` inside would resolve against the new root: not an undo.
        let holds_ref = |v: Option<&Value>| v.is_some_and(|v| v.to_string().contains("\"$ref\""));
        if holds_ref(old_node.get(*k)) || holds_ref(node.get(*k)) {
            return None;
        }
        match old_node.get(*k) {
            Some(v) => node.insert(k.to_string(), v.clone()),
            None => node.remove(*k),
        };
    }
    Some(out)
}

/// Validator steps one comparison of two surfaces may spend on witnesses in all: past
/// it, further breaking changes get no witness (reported as unproven), so a hostile pair
/// of lockfiles with thousands of breaking changes cannot make a check slow.
pub(crate) const TOTAL_STEPS: usize = 50_000_000;

/// An instance that `a` accepts and `b` rejects (input), or `b` accepts and `a`
/// rejects (output), found near `segs`.
pub fn find(direction: Direction, a: &Value, b: &Value, segs: &[Seg]) -> Option<Value> {
    let mut budget = TOTAL_STEPS;
    find_within(direction, a, b, segs, &mut budget)
}

/// `find`, spending at most `budget` validator steps (deducted).
fn find_within(
    direction: Direction,
    a: &Value,
    b: &Value,
    segs: &[Seg],
    budget: &mut usize,
) -> Option<Value> {
    find_checked(direction, a, b, segs, None, budget)
}

/// `find_within`, keeping only a witness that the new schema with this change undone
/// (`own`) judges as the old one does.
fn find_checked(
    direction: Direction,
    a: &Value,
    b: &Value,
    segs: &[Seg],
    own: Option<Own<'_>>,
    budget: &mut usize,
) -> Option<Value> {
    if *budget == 0 {
        return None;
    }
    let (src, tgt) = match direction {
        Direction::Input => (a, b),
        Direction::Output => (b, a),
    };
    let mut gen = Gen {
        roots: [src, tgt],
        made: 0,
    };
    // Only instances that differ at the change's own path: a witness proves this
    // change, not some other one elsewhere in the schema. Smallest first.
    let mut candidates = gen.embed(src, Some(tgt), segs, 0);
    candidates.truncate(4 * MAX_CANDIDATES);
    let mut sized: Vec<(usize, Value)> = candidates
        .into_iter()
        .map(|v| (v.to_string().len(), v))
        .collect();
    sized.sort_by_key(|(n, _)| *n);
    sized
        .into_iter()
        .map(|(_, v)| v)
        .take(MAX_CANDIDATES)
        .find(|x| {
            let mut proves = || {
                let yes = validate_counted(src, x, budget)? == Truth::Yes;
                let proves = yes && validate_counted(tgt, x, budget)? == Truth::No;
                Some(match &own {
                    Some(own) if proves => validate_counted(own.new, x, budget)? == own.expect,
                    _ => proves,
                })
            };
            proves().unwrap_or(false)
        })
}

/// `validate`, deducting its steps from `budget`; `None` once the budget is spent.
fn validate_counted(schema: &Value, x: &Value, budget: &mut usize) -> Option<Truth> {
    if *budget == 0 {
        return None;
    }
    let mut v = Validator {
        root: schema,
        steps: 0,
    };
    let t = v.check(schema, x, 0);
    *budget = budget.saturating_sub(v.steps);
    Some(t)
}

/// Candidate instances of schema `src` near `segs`, pushed towards `other`'s edges,
/// unvalidated (for tests that sample instances).
pub fn candidates(src: &Value, other: &Value, segs: &[Seg]) -> Vec<Value> {
    let mut gen = Gen {
        roots: [src, other],
        made: 0,
    };
    let mut out = gen.embed(src, Some(other), segs, 0);
    gen.made = 0;
    out.extend(gen.values(src, Some(other), 0));
    out
}

/// One step of a change path: a key or a list index.
#[derive(Clone, Debug, PartialEq)]
pub enum Seg {
    Name(String),
    Index(usize),
}

/// `.properties.a["b.c"].anyOf[1]` → `properties`, `a`, `b.c`, `anyOf`, `1`.
pub fn parse_path(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    let chars: Vec<char> = path.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => i += 1,
            '[' if chars.get(i + 1) == Some(&'"') => {
                // A quoted name: a JSON string, then `]`.
                let mut j = i + 2;
                while j < chars.len() && chars[j] != '"' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
                let text: String = chars[i + 1..(j + 1).min(chars.len())].iter().collect();
                match serde_json::from_str::<String>(&text) {
                    Ok(name) => out.push(Seg::Name(name)),
                    Err(_) => return out,
                }
                i = j + 2;
            }
            '[' => {
                let end = chars[i..].iter().position(|&c| c == ']').map(|p| p + i);
                let Some(end) = end else { return out };
                let n: String = chars[i + 1..end].iter().collect();
                match n.parse() {
                    Ok(n) => out.push(Seg::Index(n)),
                    Err(_) => return out,
                }
                i = end + 1;
            }
            _ => {
                let start = i;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                out.push(Seg::Name(chars[start..i].iter().collect()));
            }
        }
    }
    out
}

// --- three-valued validation ---------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    Yes,
    No,
    Unknown,
}

impl Truth {
    fn and(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::No, _) | (_, Truth::No) => Truth::No,
            (Truth::Unknown, _) | (_, Truth::Unknown) => Truth::Unknown,
            _ => Truth::Yes,
        }
    }
    fn or(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::Yes, _) | (_, Truth::Yes) => Truth::Yes,
            (Truth::Unknown, _) | (_, Truth::Unknown) => Truth::Unknown,
            _ => Truth::No,
        }
    }
    fn not(self) -> Truth {
        match self {
            Truth::Yes => Truth::No,
            Truth::No => Truth::Yes,
            Truth::Unknown => Truth::Unknown,
        }
    }
    fn of(b: bool) -> Truth {
        if b {
            Truth::Yes
        } else {
            Truth::No
        }
    }
}

/// Whether `schema` (its own root for `$ref`s) accepts `x`.
pub fn validate(schema: &Value, x: &Value) -> Truth {
    let mut v = Validator {
        root: schema,
        steps: 0,
    };
    v.check(schema, x, 0)
}

struct Validator<'a> {
    root: &'a Value,
    steps: usize,
}

fn type_matches(t: &str, x: &Value) -> bool {
    match t {
        "null" => x.is_null(),
        "boolean" => x.is_boolean(),
        "object" => x.is_object(),
        "array" => x.is_array(),
        "string" => x.is_string(),
        "number" => x.is_number(),
        "integer" => x.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

/// JSON equality with numbers compared by value (1 == 1.0).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

impl Validator<'_> {
    fn check(&mut self, s: &Value, x: &Value, depth: usize) -> Truth {
        self.steps += 1;
        if self.steps > MAX_STEPS || depth > 64 {
            return Truth::Unknown;
        }
        let m = match s {
            Value::Bool(b) => return Truth::of(*b),
            Value::Object(m) => m,
            _ => return Truth::Unknown,
        };
        let mut t = Truth::Yes;
        for (k, v) in m {
            let r = self.keyword(m, k, v, x, depth);
            t = t.and(r);
            if t == Truth::No {
                return t;
            }
        }
        t
    }

    fn keyword(
        &mut self,
        m: &Map<String, Value>,
        k: &str,
        v: &Value,
        x: &Value,
        depth: usize,
    ) -> Truth {
        let num = |v: &Value| v.as_f64();
        match k {
            "$ref" => match v.as_str().and_then(|r| resolve(self.root, r)) {
                Some(target) => self.check(target, x, depth + 1),
                None => Truth::Unknown,
            },
            "$dynamicRef" => Truth::Unknown,
            // OpenAPI's `nullable` is not JSON Schema: whether null passes is undecided.
            "type" if x.is_null() && m.get("nullable") == Some(&Value::Bool(true)) => {
                Truth::Unknown
            }
            "type" => match v {
                Value::String(t) => Truth::of(type_matches(t, x)),
                Value::Array(ts) => Truth::of(
                    ts.iter()
                        .any(|t| t.as_str().is_some_and(|t| type_matches(t, x))),
                ),
                _ => Truth::Unknown,
            },
            "enum" => match v {
                Value::Array(vs) => Truth::of(vs.iter().any(|e| same(e, x))),
                _ => Truth::Unknown,
            },
            "const" => Truth::of(same(v, x)),
            "nullable" => Truth::Yes, // widens `type`; handled there as OpenAPI does not
            "multipleOf" => match (num(v), x.as_f64()) {
                (Some(d), Some(n)) if d > 0.0 => {
                    let q = n / d;
                    Truth::of((q - q.round()).abs() < 1e-9)
                }
                (_, None) => Truth::Yes,
                _ => Truth::Unknown,
            },
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                let Some(n) = x.as_f64() else {
                    return Truth::Yes;
                };
                let Some(b) = num(v) else {
                    return Truth::Unknown; // draft-04 boolean form
                };
                Truth::of(match k {
                    "minimum" => n >= b,
                    "maximum" => n <= b,
                    "exclusiveMinimum" => n > b,
                    _ => n < b,
                })
            }
            "minLength" | "maxLength" => {
                let Some(s) = x.as_str() else {
                    return Truth::Yes;
                };
                let Some(b) = v.as_u64() else {
                    return Truth::Unknown;
                };
                let n = s.chars().count() as u64;
                Truth::of(if k == "minLength" { n >= b } else { n <= b })
            }
            "pattern" => match (x.as_str(), v.as_str().and_then(Pattern::parse)) {
                (None, _) => Truth::Yes,
                (Some(s), Some(p)) => match p.matches(s) {
                    Some(m) => Truth::of(m),
                    None => Truth::Unknown,
                },
                // A feature outside the small engine's subset: undecided.
                (Some(_), None) => Truth::Unknown,
            },
            "format" => match (v.as_str(), x.as_str()) {
                (_, None) => Truth::Yes,
                (Some(f), Some(s)) => format_check(f, s),
                _ => Truth::Unknown,
            },
            "minItems" | "maxItems" => {
                let (Some(a), Some(b)) = (x.as_array(), v.as_u64()) else {
                    return if x.is_array() {
                        Truth::Unknown
                    } else {
                        Truth::Yes
                    };
                };
                let n = a.len() as u64;
                Truth::of(if k == "minItems" { n >= b } else { n <= b })
            }
            "uniqueItems" => match (x.as_array(), v.as_bool()) {
                (Some(a), Some(true)) => {
                    Truth::of((0..a.len()).all(|i| (i + 1..a.len()).all(|j| !same(&a[i], &a[j]))))
                }
                _ => Truth::Yes,
            },
            "items" | "prefixItems" | "additionalItems" => self.items(m, k, x, depth),
            "contains" | "minContains" | "maxContains" => {
                if k != "contains" && m.contains_key("contains") {
                    return Truth::Yes; // checked with `contains`
                }
                let Some(a) = x.as_array() else {
                    return Truth::Yes;
                };
                let Some(c) = m.get("contains") else {
                    return Truth::Yes;
                };
                let mut yes = 0u64;
                let mut unknown = 0u64;
                for item in a {
                    match self.check(c, item, depth + 1) {
                        Truth::Yes => yes += 1,
                        Truth::Unknown => unknown += 1,
                        Truth::No => {}
                    }
                }
                let min = m.get("minContains").and_then(Value::as_u64).unwrap_or(1);
                let max = m.get("maxContains").and_then(Value::as_u64);
                let ok = |n: u64| n >= min && max.is_none_or(|mx| n <= mx);
                if unknown == 0 {
                    Truth::of(ok(yes))
                } else if (yes..=yes + unknown).all(ok) {
                    Truth::Yes
                } else if (yes..=yes + unknown).any(ok) {
                    Truth::Unknown
                } else {
                    Truth::No
                }
            }
            "minProperties" | "maxProperties" => {
                let (Some(o), Some(b)) = (x.as_object(), v.as_u64()) else {
                    return if x.is_object() {
                        Truth::Unknown
                    } else {
                        Truth::Yes
                    };
                };
                let n = o.len() as u64;
                Truth::of(if k == "minProperties" { n >= b } else { n <= b })
            }
            "required" => match (x.as_object(), v.as_array()) {
                (Some(o), Some(names)) => Truth::of(
                    names
                        .iter()
                        .all(|n| n.as_str().is_some_and(|n| o.contains_key(n))),
                ),
                (None, _) => Truth::Yes,
                _ => Truth::Unknown,
            },
            "dependentRequired" => match (x.as_object(), v.as_object()) {
                (Some(o), Some(deps)) => {
                    let mut t = Truth::Yes;
                    for (name, needs) in deps {
                        if o.contains_key(name) {
                            let ok = needs.as_array().is_some_and(|ns| {
                                ns.iter()
                                    .all(|n| n.as_str().is_some_and(|n| o.contains_key(n)))
                            });
                            t = t.and(Truth::of(ok));
                        }
                    }
                    t
                }
                (None, _) => Truth::Yes,
                _ => Truth::Unknown,
            },
            "dependentSchemas" | "dependencies" => match (x.as_object(), v.as_object()) {
                (Some(o), Some(deps)) => {
                    let mut t = Truth::Yes;
                    for (name, dep) in deps {
                        if !o.contains_key(name) {
                            continue;
                        }
                        let r = match dep {
                            Value::Array(ns) => Truth::of(
                                ns.iter()
                                    .all(|n| n.as_str().is_some_and(|n| o.contains_key(n))),
                            ),
                            schema => self.check(schema, x, depth + 1),
                        };
                        t = t.and(r);
                    }
                    t
                }
                (None, _) => Truth::Yes,
                _ => Truth::Unknown,
            },
            "properties" | "patternProperties" | "additionalProperties" => {
                if k != "properties" && m.contains_key("properties") {
                    return Truth::Yes; // checked with `properties`
                }
                if k == "additionalProperties" && m.contains_key("patternProperties") {
                    return Truth::Yes; // checked with `patternProperties`
                }
                self.properties(m, x, depth)
            }
            "propertyNames" => match x.as_object() {
                Some(o) => {
                    let mut t = Truth::Yes;
                    for key in o.keys() {
                        t = t.and(self.check(v, &Value::String(key.clone()), depth + 1));
                    }
                    t
                }
                None => Truth::Yes,
            },
            "unevaluatedProperties" | "unevaluatedItems" => {
                // Exact only where nothing but the plain keywords evaluates.
                let composed = ["allOf", "anyOf", "oneOf", "if", "$ref", "dependentSchemas"]
                    .iter()
                    .any(|c| m.contains_key(*c));
                let trivial =
                    matches!(v, Value::Bool(true)) || v.as_object().is_some_and(|o| o.is_empty());
                if trivial {
                    Truth::Yes
                } else if composed {
                    Truth::Unknown
                } else if k == "unevaluatedProperties" {
                    let mut mm = m.clone();
                    mm.remove("unevaluatedProperties");
                    if !mm.contains_key("additionalProperties") {
                        mm.insert("additionalProperties".into(), v.clone());
                    }
                    self.properties(&mm, x, depth)
                } else {
                    let mut mm = m.clone();
                    mm.remove("unevaluatedItems");
                    let rest = if mm.contains_key("prefixItems") {
                        "items"
                    } else {
                        "additionalItems"
                    };
                    if !mm.contains_key("items") || rest == "additionalItems" {
                        if mm.contains_key("prefixItems")
                            || mm.get("items").is_some_and(Value::is_array)
                        {
                            mm.entry(rest.to_string()).or_insert_with(|| v.clone());
                        } else if !mm.contains_key("items") {
                            mm.insert("items".into(), v.clone());
                        }
                    }
                    self.items(&mm, "items", x, depth)
                }
            }
            "allOf" => match v.as_array() {
                Some(vs) => {
                    let mut t = Truth::Yes;
                    for s in vs {
                        t = t.and(self.check(s, x, depth + 1));
                        if t == Truth::No {
                            break;
                        }
                    }
                    t
                }
                None => Truth::Unknown,
            },
            "anyOf" => match v.as_array() {
                Some(vs) => {
                    let mut t = Truth::No;
                    for s in vs {
                        t = t.or(self.check(s, x, depth + 1));
                        if t == Truth::Yes {
                            break;
                        }
                    }
                    t
                }
                None => Truth::Unknown,
            },
            "oneOf" => match v.as_array() {
                Some(vs) => {
                    let (mut yes, mut unknown) = (0, 0);
                    for s in vs {
                        match self.check(s, x, depth + 1) {
                            Truth::Yes => yes += 1,
                            Truth::Unknown => unknown += 1,
                            Truth::No => {}
                        }
                    }
                    if yes > 1 {
                        Truth::No
                    } else if unknown > 0 {
                        Truth::Unknown
                    } else {
                        Truth::of(yes == 1)
                    }
                }
                None => Truth::Unknown,
            },
            "not" => self.check(v, x, depth + 1).not(),
            "if" => {
                let cond = self.check(v, x, depth + 1);
                let then = m
                    .get("then")
                    .map_or(Truth::Yes, |s| self.check(s, x, depth + 1));
                let els = m
                    .get("else")
                    .map_or(Truth::Yes, |s| self.check(s, x, depth + 1));
                match cond {
                    Truth::Yes => then,
                    Truth::No => els,
                    Truth::Unknown => {
                        if then == els {
                            then
                        } else {
                            Truth::Unknown
                        }
                    }
                }
            }
            // Annotations, identifiers, definitions, `then`/`else` (with `if`), and
            // vendor extensions constrain nothing.
            _ => {
                if crate::keywords::get(k).is_some() || k.starts_with("x-") {
                    Truth::Yes
                } else {
                    Truth::Unknown
                }
            }
        }
    }

    fn items(&mut self, m: &Map<String, Value>, k: &str, x: &Value, depth: usize) -> Truth {
        // Checked once, under whichever of the three keywords comes first.
        let first = ["additionalItems", "items", "prefixItems"]
            .into_iter()
            .find(|c| m.contains_key(*c));
        if first != Some(k) {
            return Truth::Yes;
        }
        let Some(a) = x.as_array() else {
            return Truth::Yes;
        };
        let (tuple, rest): (&[Value], Option<&Value>) = match (m.get("prefixItems"), m.get("items"))
        {
            (Some(Value::Array(p)), items) => (p, items),
            (None, Some(Value::Array(p))) => (p, m.get("additionalItems")),
            (_, items) => (&[], items),
        };
        let mut t = Truth::Yes;
        for (i, item) in a.iter().enumerate() {
            let s = match tuple.get(i) {
                Some(s) => Some(s),
                None => rest,
            };
            if let Some(s) = s {
                t = t.and(self.check(s, item, depth + 1));
                if t == Truth::No {
                    break;
                }
            }
        }
        t
    }

    fn properties(&mut self, m: &Map<String, Value>, x: &Value, depth: usize) -> Truth {
        let Some(o) = x.as_object() else {
            return Truth::Yes;
        };
        let props = m.get("properties").and_then(Value::as_object);
        let patterns = m.get("patternProperties").and_then(Value::as_object);
        let extra = m.get("additionalProperties");
        let compiled: Vec<(Option<Pattern>, &Value)> = patterns
            .into_iter()
            .flatten()
            .map(|(p, s)| (Pattern::parse(p), s))
            .collect();
        let mut t = Truth::Yes;
        for (key, value) in o {
            let declared = props.and_then(|p| p.get(key));
            if let Some(s) = declared {
                t = t.and(self.check(s, value, depth + 1));
            }
            let mut matched = false;
            for (pattern, s) in &compiled {
                match pattern.as_ref().map(|p| p.matches(key)) {
                    Some(Some(true)) => {
                        matched = true;
                        t = t.and(self.check(s, value, depth + 1));
                    }
                    Some(Some(false)) => {}
                    _ => t = t.and(Truth::Unknown), // undecided whether it applies
                }
            }
            if declared.is_none() && !matched {
                if let Some(s) = extra {
                    t = t.and(self.check(s, value, depth + 1));
                }
            }
            if t == Truth::No {
                break;
            }
        }
        t
    }
}

/// The formats whose syntax is simple enough to decide here (RFC 3339 dates and times,
/// a plain email, an absolute URI, a UUID, an IPv4 address); any other is unknown.
fn format_check(format: &str, s: &str) -> Truth {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let date = |s: &str| {
        let p: Vec<&str> = s.split('-').collect();
        p.len() == 3
            && digits(p[0], 4)
            && digits(p[1], 2)
            && digits(p[2], 2)
            && (1..=12).contains(&p[1].parse::<u32>().unwrap_or(0))
            && (1..=28).contains(&p[2].parse::<u32>().unwrap_or(0))
    };
    let time = |s: &str| {
        let Some(t) = s.strip_suffix('Z').or_else(|| s.strip_suffix('z')) else {
            return None; // offsets other than Z: not decided here
        };
        let p: Vec<&str> = t.split(':').collect();
        Some(
            p.len() == 3
                && digits(p[0], 2)
                && digits(p[1], 2)
                && digits(p[2], 2)
                && p[0] < "24"
                && p[1] < "60"
                && p[2] < "60",
        )
    };
    match format {
        "date" => {
            if date(s) {
                Truth::Yes
            } else if s.len() != 10 {
                Truth::No
            } else {
                Truth::Unknown
            }
        }
        "date-time" => match s.split_once(['T', 't']) {
            Some((d, t)) if date(d) => match time(t) {
                Some(ok) => Truth::of(ok),
                None => Truth::Unknown,
            },
            Some(_) => Truth::Unknown,
            None => {
                if s.len() < 11 {
                    Truth::No
                } else {
                    Truth::Unknown
                }
            }
        },
        "email" => {
            let plain = |s: &str| {
                !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.')
            };
            match s.split_once('@') {
                Some((l, d)) if plain(l) && plain(d) && d.contains('.') && !l.starts_with('.') => {
                    Truth::Yes
                }
                None => Truth::No,
                _ => Truth::Unknown,
            }
        }
        "uuid" => {
            let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
            let p: Vec<&str> = s.split('-').collect();
            Truth::of(
                p.len() == 5
                    && hex(p[0], 8)
                    && hex(p[1], 4)
                    && hex(p[2], 4)
                    && hex(p[3], 4)
                    && hex(p[4], 12),
            )
        }
        "ipv4" => {
            let p: Vec<&str> = s.split('.').collect();
            Truth::of(
                p.len() == 4
                    && p.iter().all(|o| {
                        !o.is_empty()
                            && o.len() <= 3
                            && o.bytes().all(|b| b.is_ascii_digit())
                            && !(o.len() > 1 && o.starts_with('0'))
                            && o.parse::<u32>().is_ok_and(|n| n <= 255)
                    }),
            )
        }
        "uri-reference" | "iri-reference" => {
            if s.starts_with('/') && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'/') {
                Truth::Yes
            } else {
                Truth::Unknown
            }
        }
        "uri" => {
            let simple = s.starts_with("https://example.com");
            if simple {
                Truth::Yes
            } else if !s.contains(':') {
                Truth::No
            } else {
                Truth::Unknown
            }
        }
        _ => Truth::Unknown,
    }
}

// --- candidates --------------------------------------------------------------------------

struct Gen<'a> {
    roots: [&'a Value; 2],
    made: usize,
}

/// A sample string for a format, valid in it.
fn format_sample(f: &str) -> Option<&'static str> {
    Some(match f {
        "date-time" => "2024-01-01T00:00:00Z",
        "date" => "2024-01-01",
        "time" => "00:00:00Z",
        "email" | "idn-email" => "a@example.com",
        "uri" | "iri" => "https://example.com/",
        "uri-reference" | "iri-reference" => "/a",
        "uuid" => "00000000-0000-0000-0000-000000000000",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "hostname" | "idn-hostname" => "example.com",
        _ => return None,
    })
}

impl<'a> Gen<'a> {
    /// `s` seen through its local `$ref`s (in the side's own root).
    fn deref(&self, side: usize, mut s: &'a Value) -> &'a Value {
        for _ in 0..32 {
            match s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| resolve(self.roots[side], r))
            {
                Some(t) if s.as_object().is_some_and(|m| m.len() == 1) => s = t,
                _ => break,
            }
        }
        s
    }

    /// Candidates for the whole instance, with the value at `segs` drawn from `local`
    /// candidates of the source subschema there (guided by the target's subschema).
    fn embed(
        &mut self,
        src: &'a Value,
        tgt: Option<&'a Value>,
        segs: &[Seg],
        depth: usize,
    ) -> Vec<Value> {
        let src = self.deref(0, src);
        let tgt = tgt.map(|t| self.deref(1, t));
        let Some((first, rest)) = segs.split_first() else {
            return self.values(src, tgt, 0);
        };
        if depth > 256 {
            return Vec::new();
        }
        let name = |s: &Seg| match s {
            Seg::Name(n) => Some(n.clone()),
            Seg::Index(_) => None,
        };
        let index = |s: Option<&Seg>| match s {
            Some(Seg::Index(i)) => Some(*i),
            _ => None,
        };
        let key = name(first).unwrap_or_default();
        let sub = |s: Option<&'a Value>, path: &[&str]| -> Option<&'a Value> {
            let mut cur = s?;
            for p in path {
                cur = cur.get(*p)?;
            }
            Some(cur)
        };
        let at = |s: Option<&'a Value>, kw: &str, i: usize| -> Option<&'a Value> {
            s?.get(kw)?.as_array()?.get(i)
        };
        let base = self.minimal(src, depth);
        match key.as_str() {
            "properties" | "patternProperties" | "dependentSchemas" => {
                let Some(prop) = rest.first().and_then(name) else {
                    return Vec::new();
                };
                let s_sub = sub(Some(src), &[&key, &prop])
                    .or_else(|| src.get("additionalProperties"))
                    .unwrap_or(&Value::Bool(true));
                let t_sub = sub(tgt, &[&key, &prop])
                    .or_else(|| tgt.and_then(|t| t.get("additionalProperties")));
                let inner = self.embed(s_sub, t_sub, &rest[1..], depth + 1);
                let name = match key.as_str() {
                    "properties" | "dependentSchemas" => prop,
                    // A name the pattern matches.
                    _ => Pattern::parse(&prop)
                        .and_then(|p| p.samples().into_iter().next())
                        .unwrap_or_else(|| "x_witness".to_string()),
                };
                let mut out = Vec::new();
                for base in self.bases(base, tgt, depth) {
                    // The property left out, too (for one the target newly requires).
                    let without = base.as_object().is_some_and(|o| !o.contains_key(&name));
                    out.extend(without.then(|| base.clone()));
                    out.extend(inner.iter().map(|v| {
                        let mut o = base.as_object().cloned().unwrap_or_default();
                        o.insert(name.clone(), v.clone());
                        Value::Object(o)
                    }));
                }
                out
            }
            "additionalProperties" | "unevaluatedProperties" => {
                let inner = self.embed(
                    src.get(&key).unwrap_or(&Value::Bool(true)),
                    tgt.and_then(|t| t.get(&key)),
                    rest,
                    depth + 1,
                );
                let mut out = Vec::new();
                for base in self.bases(base, tgt, depth) {
                    out.extend(inner.iter().map(|v| {
                        let mut o = base.as_object().cloned().unwrap_or_default();
                        o.insert("x_witness".into(), v.clone());
                        Value::Object(o)
                    }));
                }
                out
            }
            "items" | "prefixItems" if index(rest.first()).is_some() => {
                let i = index(rest.first()).unwrap_or(0);
                let s_sub = at(Some(src), &key, i)
                    .or_else(|| {
                        src.get(if key == "items" {
                            "additionalItems"
                        } else {
                            "items"
                        })
                    })
                    .unwrap_or(&Value::Bool(true));
                let t_sub = at(tgt, &key, i);
                let prefix: Vec<Value> = (0..i)
                    .map(|j| {
                        at(Some(src), &key, j)
                            .map(|s| self.minimal(s, depth + 1))
                            .unwrap_or(Value::Null)
                    })
                    .collect();
                self.embed(s_sub, t_sub, &rest[1..], depth + 1)
                    .into_iter()
                    .map(|v| {
                        let mut a = prefix.clone();
                        a.push(v);
                        Value::Array(a)
                    })
                    .collect()
            }
            "items" | "contains" | "unevaluatedItems" | "additionalItems" => {
                let inner = self.embed(
                    src.get(&key).unwrap_or(&Value::Bool(true)),
                    tgt.and_then(|t| t.get(&key)),
                    rest,
                    depth + 1,
                );
                let min = src
                    .get("minItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    .min(8) as usize;
                inner
                    .into_iter()
                    .flat_map(|v| {
                        let n = min.max(1);
                        [Value::Array(vec![v.clone(); n]), Value::Array(vec![v])]
                    })
                    .collect()
            }
            "anyOf" | "oneOf" | "allOf" => {
                let Some(i) = index(rest.first()) else {
                    return Vec::new();
                };
                // A side with no such list at all is a plain schema the walker paired
                // with this variant: it stands for the variant itself.
                let variant = match src.get(&key) {
                    None => src,
                    Some(_) => at(Some(src), &key, i).unwrap_or(&Value::Bool(true)),
                };
                let t_variant = match tgt {
                    Some(t) if t.get(&key).is_none() => Some(t),
                    _ => at(tgt, &key, i),
                };
                self.embed(variant, t_variant, &rest[1..], depth + 1)
            }
            "then" | "else" => self.embed(
                src.get(&key).unwrap_or(&Value::Bool(true)),
                tgt.and_then(|t| t.get(&key)),
                rest,
                depth + 1,
            ),
            // `not`, `if`, `propertyNames`, ...: the node itself is the best guess.
            _ => self.values(src, tgt, depth),
        }
    }

    /// `s` and the subschemas in it that constrain the same value, through `$ref`s.
    fn nested(&self, side: usize, s: &'a Value) -> Vec<&'a Value> {
        let mut out = vec![s];
        let mut i = 0;
        while i < out.len() && out.len() < 32 {
            let cur = out[i];
            i += 1;
            for kw in ["allOf", "anyOf", "oneOf"] {
                if let Some(Value::Array(vs)) = cur.get(kw) {
                    out.extend(vs.iter().take(8).map(|v| self.deref(side, v)));
                }
            }
            for kw in ["not", "if", "then", "else"] {
                if let Some(v) = cur.get(kw) {
                    out.push(self.deref(side, v));
                }
            }
        }
        out.truncate(32);
        out
    }

    /// A small instance `s` accepts, when one is found among its candidates.
    fn minimal(&mut self, s: &'a Value, depth: usize) -> Value {
        self.minimal_in(0, s, depth)
    }

    /// The object around a change: the source's minimal instance, and, when the target
    /// requires names it lacks, that instance with them too (the target's minimal
    /// values), so that a witness of this change is not rejected for a missing name
    /// the target newly requires (another change).
    fn bases(&mut self, base: Value, tgt: Option<&'a Value>, depth: usize) -> Vec<Value> {
        let (Value::Object(o), Some(t)) = (&base, tgt) else {
            return vec![base];
        };
        let mut more = o.clone();
        // Values the target would reject away from the change (a new `format`,
        // `minLength`): the target's own minimal value instead.
        for (name, v) in more.iter_mut() {
            if let Some(p) = t.get("properties").and_then(|p| p.get(name)) {
                *v = self.minimal_in(1, p, depth + 1);
            }
        }
        for name in t
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = name.as_str() else { continue };
            if more.contains_key(name) {
                continue;
            }
            let p = t
                .get("properties")
                .and_then(|p| p.get(name))
                .unwrap_or(&Value::Bool(true));
            let v = self.minimal_in(1, p, depth + 1);
            more.insert(name.to_string(), v);
        }
        if &more == o {
            return vec![base];
        }
        vec![base, Value::Object(more)]
    }

    /// `minimal` for a schema of side `side` (0: the source, 1: the target).
    fn minimal_in(&mut self, side: usize, s: &'a Value, depth: usize) -> Value {
        let s = self.deref(side, s);
        if depth > 16 {
            return Value::Null;
        }
        if let Some(c) = s.get("const") {
            return c.clone();
        }
        if let Some(e) = s
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return e.clone();
        }
        if let Some(d) = s.get("default") {
            if validate_in(self.roots[side], s, d) == Truth::Yes {
                return d.clone();
            }
        }
        let types = types_of(s);
        let wanted = types.first().map(String::as_str).unwrap_or("null");
        match wanted {
            "object" => {
                let mut o = Map::new();
                for name in s
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(name) = name.as_str() else { continue };
                    let p = s
                        .get("properties")
                        .and_then(|p| p.get(name))
                        .unwrap_or(&Value::Bool(true));
                    let v = self.minimal_in(side, p, depth + 1);
                    o.insert(name.to_string(), v);
                }
                Value::Object(o)
            }
            "array" => {
                let n = s
                    .get("minItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    .min(8) as usize;
                let mut a = Vec::new();
                let tuple = s
                    .get("prefixItems")
                    .or_else(|| s.get("items").filter(|i| i.is_array()));
                for i in 0..n {
                    let item = tuple
                        .and_then(|t| t.get(i))
                        .or_else(|| s.get("items").filter(|i| i.is_object()))
                        .unwrap_or(&Value::Bool(true));
                    a.push(self.minimal_in(side, item, depth + 1));
                }
                Value::Array(a)
            }
            "string" => {
                if let Some(f) = s
                    .get("format")
                    .and_then(Value::as_str)
                    .and_then(format_sample)
                {
                    return Value::String(f.into());
                }
                let n = s
                    .get("minLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    .min(64) as usize;
                Value::String("a".repeat(n))
            }
            "integer" | "number" => {
                let lo = s.get("minimum").and_then(Value::as_f64).or_else(|| {
                    s.get("exclusiveMinimum")
                        .and_then(Value::as_f64)
                        .map(|x| x.floor() + 1.0)
                });
                let v = lo.map(f64::ceil).unwrap_or(0.0);
                number(v)
            }
            "boolean" => Value::Bool(false),
            _ => Value::Null,
        }
    }

    /// Candidate values at one node: what the source schema allows there, pushed
    /// towards the target's edges (its bounds, the values it lacks, the properties
    /// it does not know, the positions it no longer has).
    fn values(&mut self, src: &'a Value, tgt: Option<&'a Value>, depth: usize) -> Vec<Value> {
        self.made += 1;
        if depth > 12 || self.made > MAX_CANDIDATES {
            return Vec::new();
        }
        let src = self.deref(0, src);
        let tgt = tgt.map(|t| self.deref(1, t));
        // The node's schemas and the ones nested in it that constrain the same value
        // (`allOf`, `not`, `if`/`then`/`else`, ...): their edges are the candidates.
        let mut both: Vec<Option<&'a Value>> = self.nested(0, src).into_iter().map(Some).collect();
        if let Some(t) = tgt {
            both.extend(self.nested(1, t).into_iter().map(Some));
        }
        let mut out: Vec<Value> = Vec::new();
        for s in both.iter().flatten() {
            for k in ["const", "default"] {
                if let Some(v) = s.get(k) {
                    out.push(v.clone());
                }
            }
            for k in ["enum", "examples"] {
                if let Some(Value::Array(vs)) = s.get(k) {
                    out.extend(vs.iter().take(32).cloned());
                }
            }
        }
        // Variants of the source (and their merge with the node's own keywords).
        for kw in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(vs)) = src.get(kw) {
                for v in vs.iter().take(8) {
                    out.extend(self.values(v, None, depth + 1));
                }
            }
        }
        let mut types: Vec<String> = types_of(src);
        for t in tgt.map(types_of).unwrap_or_default() {
            if !types.contains(&t) {
                types.push(t);
            }
        }
        let num = |s: Option<&Value>, k: &str| s.and_then(|s| s.get(k)).and_then(Value::as_f64);
        for t in &types {
            match t.as_str() {
                "null" => out.push(Value::Null),
                "boolean" => out.extend([Value::Bool(true), Value::Bool(false)]),
                "integer" | "number" => {
                    let mut ns = vec![0.0, 1.0, -1.0, 1e9, -1e9];
                    for s in both.iter() {
                        for k in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
                            if let Some(b) = num(*s, k) {
                                ns.extend([b, b - 1.0, b + 1.0, b.floor(), b.ceil()]);
                            }
                        }
                        if let Some(d) = num(*s, "multipleOf") {
                            ns.extend([d, 2.0 * d, 3.0 * d, 5.0 * d]);
                        }
                    }
                    if t == "number" {
                        ns.extend([0.5, 1.5]);
                    }
                    out.extend(ns.into_iter().map(number));
                }
                "string" => {
                    let mut lens = vec![0usize, 1, 3];
                    for s in both.iter() {
                        for k in ["minLength", "maxLength"] {
                            if let Some(n) = num(*s, k) {
                                let n = n.clamp(0.0, 4096.0) as usize;
                                lens.extend([n, n + 1, n.saturating_sub(1)]);
                            }
                        }
                    }
                    out.extend(lens.into_iter().map(|n| Value::String("a".repeat(n))));
                    for s in both.iter().flatten() {
                        if let Some(f) = s
                            .get("format")
                            .and_then(Value::as_str)
                            .and_then(format_sample)
                        {
                            out.push(Value::String(f.into()));
                        }
                        let pattern = s
                            .get("pattern")
                            .and_then(Value::as_str)
                            .and_then(Pattern::parse);
                        for sample in pattern.map(|p| p.samples()).unwrap_or_default() {
                            out.push(Value::String(sample));
                        }
                    }
                    out.extend(
                        [
                            "2024-01-01",
                            "2024-01-01T00:00:00Z",
                            "a@example.com",
                            "https://example.com/",
                        ]
                        .map(|s| Value::String(s.into())),
                    );
                }
                "array" => out.extend(self.arrays(src, tgt, depth)),
                "object" => out.extend(self.objects(src, tgt, depth)),
                _ => {}
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|v| seen.insert(v.to_string()));
        out
    }

    fn arrays(&mut self, src: &'a Value, tgt: Option<&'a Value>, depth: usize) -> Vec<Value> {
        let base = self.minimal(src, depth);
        let base = base.as_array().cloned().unwrap_or_default();
        let mut out = vec![Value::Array(base.clone()), Value::Array(Vec::new())];
        let item_schema = src
            .get("items")
            .filter(|i| !i.is_array())
            .or_else(|| src.get("contains"));
        let t_item = tgt.and_then(|t| {
            t.get("items")
                .filter(|i| !i.is_array())
                .or_else(|| t.get("contains"))
        });
        let items: Vec<Value> = match item_schema {
            Some(s) => self.values(s, t_item, depth + 1),
            None => vec![Value::String("a".into()), Value::from(1), Value::Null],
        };
        let (min, max) = (
            src.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize,
            tgt.and_then(|t| t.get("maxItems"))
                .and_then(Value::as_u64)
                .map(|n| n as usize + 1),
        );
        for item in items.iter().take(24) {
            let n = min.clamp(1, 8);
            out.push(Value::Array(vec![item.clone(); n]));
            let mut longer = base.clone();
            longer.push(item.clone());
            out.push(Value::Array(longer));
        }
        if let (Some(m), Some(first)) = (max, items.first()) {
            if m <= 64 {
                out.push(Value::Array(vec![first.clone(); m]));
            }
        }
        // Lengths at the edges of either side's counts.
        let mut counts = Vec::new();
        for s in [Some(src), tgt].into_iter().flatten() {
            for k in ["minItems", "maxItems", "minContains", "maxContains"] {
                if let Some(n) = s.get(k).and_then(Value::as_u64).filter(|&n| n <= 64) {
                    counts.extend([n as usize, n as usize + 1, (n as usize).saturating_sub(1)]);
                }
            }
        }
        for item in items.iter().take(4) {
            for &n in &counts {
                out.push(Value::Array(vec![item.clone(); n]));
            }
        }
        // Distinct items, for a new `uniqueItems`.
        if items.len() >= 2 {
            out.push(Value::Array(vec![items[0].clone(), items[0].clone()]));
        }
        // Tuples: every position minimal, then one more position.
        for s in [Some(src), tgt].into_iter().flatten() {
            let tuple = s
                .get("prefixItems")
                .or_else(|| s.get("items").filter(|i| i.is_array()));
            if let Some(Value::Array(ps)) = tuple {
                let mut a: Vec<Value> = ps
                    .iter()
                    .take(16)
                    .map(|p| self.minimal(p, depth + 1))
                    .collect();
                out.push(Value::Array(a.clone()));
                for extra in [Value::from(1), Value::String("a".into()), Value::Null] {
                    a.push(extra);
                    out.push(Value::Array(a.clone()));
                    a.pop();
                }
            }
        }
        out
    }

    fn objects(&mut self, src: &'a Value, tgt: Option<&'a Value>, depth: usize) -> Vec<Value> {
        let base = self.minimal(src, depth);
        let base = base.as_object().cloned().unwrap_or_default();
        let mut out = vec![Value::Object(base.clone())];
        let props = |s: Option<&'a Value>| {
            s.and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
        };
        let mut names: Vec<String> = Vec::new();
        for p in [props(Some(src)), props(tgt)].into_iter().flatten() {
            for k in p.keys() {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
        for s in [Some(src), tgt].into_iter().flatten() {
            for k in s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(k) = k.as_str() {
                    if !names.iter().any(|n| n == k) {
                        names.push(k.to_string());
                    }
                }
            }
        }
        // Names that dependencies speak of.
        for s in [Some(src), tgt].into_iter().flatten() {
            for kw in ["dependentRequired", "dependentSchemas", "dependencies"] {
                for (k, v) in s.get(kw).and_then(Value::as_object).into_iter().flatten() {
                    let listed = v.as_array().into_iter().flatten().filter_map(Value::as_str);
                    for n in std::iter::once(k.as_str()).chain(listed) {
                        if !names.iter().any(|x| x == n) {
                            names.push(n.to_string());
                        }
                    }
                }
            }
        }
        // Each dependency's trigger with only the source's dependents.
        for (k, v) in src
            .get("dependentRequired")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let mut o = base.clone();
            o.insert(k.clone(), Value::String("a".into()));
            for n in v.as_array().into_iter().flatten().filter_map(Value::as_str) {
                o.insert(n.to_string(), Value::String("a".into()));
            }
            out.push(Value::Object(o));
        }
        // Sizes at the edges of either side's property counts.
        for s in [Some(src), tgt].into_iter().flatten() {
            for k in ["minProperties", "maxProperties"] {
                if let Some(n) = s.get(k).and_then(Value::as_u64).filter(|&n| n <= 64) {
                    for size in [n, n + 1, n.saturating_sub(1)] {
                        let mut o = base.clone();
                        let mut i = 0;
                        while (o.len() as u64) < size {
                            o.insert(format!("x_witness{i}"), Value::String("a".into()));
                            i += 1;
                        }
                        out.push(Value::Object(o));
                    }
                }
            }
        }
        // Leave each required property out (for one the target newly requires).
        for k in base.keys() {
            let mut o = base.clone();
            o.remove(k);
            out.push(Value::Object(o));
        }
        // Each known property with each of its candidates; an unknown one too.
        for name in names.iter().take(32) {
            let s_sub = props(Some(src)).and_then(|p| p.get(name));
            let t_sub = props(tgt).and_then(|p| p.get(name));
            let vals = match s_sub {
                Some(s) => self.values(s, t_sub, depth + 1),
                None => match t_sub {
                    Some(t) => {
                        let mut v = self.values(&Value::Bool(true), Some(t), depth + 1);
                        v.push(Value::String("a".into()));
                        v
                    }
                    None => vec![Value::String("a".into())],
                },
            };
            for v in vals.into_iter().take(24) {
                let mut o = base.clone();
                o.insert(name.clone(), v);
                out.push(Value::Object(o));
            }
        }
        // An unknown name, beside what the source needs (and what the target needs).
        for b in self.bases(Value::Object(base.clone()), tgt, depth) {
            let mut o = b.as_object().cloned().unwrap_or_default();
            o.insert("x_witness".into(), Value::String("a".into()));
            out.push(Value::Object(o));
        }
        // A name each pattern of either side matches, with values its schema allows.
        for s in [Some(src), tgt].into_iter().flatten() {
            let patterns = s.get("patternProperties").and_then(Value::as_object);
            for (p, ps) in patterns.into_iter().flatten().take(8) {
                let sample = Pattern::parse(p).and_then(|p| p.samples().into_iter().next());
                let Some(name) = sample else { continue };
                for v in self.values(ps, None, depth + 1).into_iter().take(12) {
                    let mut o = base.clone();
                    o.insert(name.clone(), v);
                    out.push(Value::Object(o));
                }
            }
        }
        // Every optional property at once (for min/maxProperties, dependencies).
        let mut all = base;
        for name in names.iter().take(32) {
            if !all.contains_key(name) {
                let s = props(Some(src))
                    .and_then(|p| p.get(name))
                    .unwrap_or(&Value::Bool(true));
                let v = self.minimal(s, depth + 1);
                all.insert(name.clone(), v);
            }
        }
        out.push(Value::Object(all));
        out
    }
}

fn validate_in(root: &Value, s: &Value, x: &Value) -> Truth {
    let mut v = Validator { root, steps: 0 };
    v.check(s, x, 0)
}

/// The types a schema allows, most specific first; inferred from its keywords when it
/// has no `type`.
fn types_of(s: &Value) -> Vec<String> {
    match s.get("type") {
        Some(Value::String(t)) => return vec![t.clone()],
        Some(Value::Array(ts)) => {
            return ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        }
        _ => {}
    }
    let has = |ks: &[&str]| ks.iter().any(|k| s.get(*k).is_some());
    let mut out = Vec::new();
    if has(&[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    ]) {
        out.push("object".to_string());
    }
    if has(&[
        "items",
        "prefixItems",
        "contains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "unevaluatedItems",
    ]) {
        out.push("array".to_string());
    }
    if has(&["minLength", "maxLength", "pattern", "format"]) {
        out.push("string".to_string());
    }
    if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        out.push("number".to_string());
    }
    if out.is_empty() {
        out = [
            "string", "integer", "object", "array", "boolean", "null", "number",
        ]
        .map(str::to_string)
        .to_vec();
    }
    out
}

fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_parse_names_quotes_and_indexes() {
        assert_eq!(
            parse_path(r#".properties["a.b"].anyOf[1].items"#),
            vec![
                Seg::Name("properties".into()),
                Seg::Name("a.b".into()),
                Seg::Name("anyOf".into()),
                Seg::Index(1),
                Seg::Name("items".into()),
            ]
        );
    }

    #[test]
    fn a_new_required_property_is_proven_by_leaving_it_out() {
        let a =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let b = json!({"type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["q", "limit"]});
        let w = find(Direction::Input, &a, &b, &parse_path(".properties.limit")).unwrap();
        assert_eq!(validate(&a, &w), Truth::Yes);
        assert_eq!(validate(&b, &w), Truth::No);
    }

    #[test]
    fn a_spent_witness_budget_builds_no_witness() {
        let a = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let b =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let segs = parse_path(".properties.q");
        assert!(find_within(Direction::Input, &a, &b, &segs, &mut 0).is_none());
        let mut budget = 1_000;
        assert!(find_within(Direction::Input, &a, &b, &segs, &mut budget).is_some());
        assert!(budget < 1_000, "the steps are deducted");
    }

    #[test]
    fn three_valued_logic_never_guesses_a_pattern() {
        let s = json!({"type": "string", "pattern": "^a"});
        assert_eq!(validate(&s, &json!("abc")), Truth::Yes);
        assert_eq!(validate(&s, &json!("bc")), Truth::No);
        assert_eq!(validate(&s, &json!(1)), Truth::No);
        // A lookahead is outside the small engine: undecided, so no witness.
        let s = json!({"type": "string", "pattern": "^(?=a)"});
        assert_eq!(validate(&s, &json!("abc")), Truth::Unknown);
    }
}
