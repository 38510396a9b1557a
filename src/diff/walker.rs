//! The generic JSON Schema walker: compares two schemas keyword by keyword, following
//! `$ref`, and reports what it finds through the rule tables.
//!
//! It is iterative (an explicit work list, so nesting depth cannot overflow the stack),
//! cycle-safe (a `$ref` pair already being compared on the way down is not entered
//! again) and bounded (a work budget; running out is itself reported as a change, so a
//! break cannot hide behind it).

use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::{compare, Emitter, Event};
use crate::path::join;
use crate::rules::{Condition, Direction, ANY_KEYWORD};

/// Node pairs one schema comparison may visit before it gives up (and says so).
pub const DEFAULT_WORK_BUDGET: usize = 1_000_000;

/// How many times one pair of `$ref` targets is expanded in one schema. A definition
/// shared by a handful of properties is reported under each of them; a hostile DAG of
/// definitions (each referencing the next twice) stays linear instead of exponential.
const REF_EXPANSIONS: u8 = 8;

/// Keywords the walker handles itself, or that are not compared directly.
const HANDLED: &[&str] = &[
    "properties",
    "required",
    "items",
    "prefixItems",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "allOf",
    // Definitions are compared where they are referenced, not where they are declared.
    "$defs",
    "definitions",
];

/// Compare schema `a` with schema `b` (either may be absent) for `subject`, rooted at
/// `path`. `flat`: the root is a list of named arguments, so a field's path is
/// `arguments.NAME` rather than `arguments.properties.NAME`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compare_schemas(
    em: &mut Emitter<'_>,
    budget: usize,
    subject: &str,
    direction: Direction,
    path: &str,
    flat: bool,
    a: Option<&Value>,
    b: Option<&Value>,
) {
    let empty = Value::Object(Map::new());
    let roots = [a.unwrap_or(&empty), b.unwrap_or(&empty)];
    let mut walk = Walk {
        em,
        subject,
        direction,
        roots,
        work: vec![Task {
            a,
            b,
            path: path.to_string(),
            flat,
            chain: None,
            values_only: [false, false],
        }],
        visited: 0,
        budget,
        expansions: HashMap::new(),
    };
    walk.run();
}

/// The `$ref` targets being compared on the way down to a node (for cycle detection).
struct Chain {
    pair: (usize, usize),
    parent: Option<Rc<Chain>>,
}

fn on_chain(mut chain: &Option<Rc<Chain>>, pair: (usize, usize)) -> bool {
    while let Some(link) = chain {
        if link.pair == pair {
            return true;
        }
        chain = &link.parent;
    }
    false
}

struct Task<'v> {
    a: Option<&'v Value>,
    b: Option<&'v Value>,
    path: String,
    flat: bool,
    chain: Option<Rc<Chain>>,
    /// Compare only the value keywords of this side (it was lifted into a variant).
    values_only: [bool; 2],
}

/// Keywords that describe a value rather than constrain it. When a schema is compared
/// as one variant of the other side's `anyOf` (the `Optional[X]` shape), these stay at
/// the node and everything else moves into the variant.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "$comment",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
    "$defs",
    "definitions",
];

/// A schema's text with every order that carries no meaning sorted away (`enum`,
/// `required`, `type`, and the variants of `anyOf` / `oneOf` / `allOf`): two schemas
/// with the same text are the same schema.
fn canonical(v: &Value) -> String {
    fn write(v: &Value, unordered: bool, out: &mut String) {
        match v {
            Value::Object(m) => {
                out.push('{');
                for (k, x) in m {
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push(':');
                    let un = matches!(
                        k.as_str(),
                        "enum" | "required" | "type" | "anyOf" | "oneOf" | "allOf"
                    );
                    write(x, un, out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::Array(a) => {
                let mut parts: Vec<String> = a
                    .iter()
                    .map(|x| {
                        let mut s = String::new();
                        write(x, false, &mut s);
                        s
                    })
                    .collect();
                if unordered {
                    parts.sort();
                }
                out.push('[');
                out.push_str(&parts.join(","));
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, false, &mut out);
    out
}

/// How alike two subschemas are, for pairing variants that are not the same.
fn similarity(x: &Value, y: &Value) -> usize {
    let (Some(a), Some(b)) = (x.as_object(), y.as_object()) else {
        return usize::from(x == y);
    };
    let mut score = 0;
    for key in ["type", "$ref", "const"] {
        if a.get(key).is_some() && a.get(key).map(canonical) == b.get(key).map(canonical) {
            score += 8;
        }
    }
    for (k, v) in a {
        if let Some(w) = b.get(k) {
            score += if canonical(v) == canonical(w) { 4 } else { 1 };
        }
    }
    score
}

/// A schema seen through its `$ref`s: the referencing object first, then each target.
/// A keyword is looked up layer by layer, so siblings of `$ref` take precedence.
struct View<'v> {
    layers: Vec<&'v Map<String, Value>>,
    /// The `$ref` chain was followed to its end (its last layer is the target).
    followed: bool,
    /// `false` or a non-schema value: compared as an opaque value.
    opaque: Option<&'v Value>,
    /// A `$ref` that does not resolve locally: compared as a keyword of its own.
    unresolved: Option<&'v Value>,
    /// Hide annotation keywords (this side stands in as one variant of the other's).
    values_only: bool,
}

impl<'v> View<'v> {
    fn new(root: &'v Value, node: Option<&'v Value>) -> View<'v> {
        let mut view = View {
            layers: Vec::new(),
            followed: false,
            opaque: None,
            unresolved: None,
            values_only: false,
        };
        let mut current = match node {
            None | Some(Value::Bool(true)) => return view,
            Some(Value::Object(map)) => map,
            Some(other) => {
                view.opaque = Some(other);
                return view;
            }
        };
        loop {
            view.layers.push(current);
            let Some(Value::String(reference)) = current.get("$ref") else {
                view.unresolved = current.get("$ref");
                return view;
            };
            match resolve(root, reference) {
                Some(Value::Object(target))
                    if view.layers.len() < 64
                        && !view.layers.iter().any(|l| std::ptr::eq(*l, target)) =>
                {
                    view.followed = true;
                    current = target;
                }
                Some(Value::Bool(true)) => {
                    view.followed = true;
                    view.layers.push(EMPTY.get_or_init(Map::new));
                    return view;
                }
                // Unresolvable, external, or a loop of pure references: `$ref` stays
                // visible as a keyword and is compared as text.
                _ => {
                    view.unresolved = current.get("$ref");
                    return view;
                }
            }
        }
    }

    fn get(&self, key: &str) -> Option<&'v Value> {
        if key == "$ref" {
            return self.unresolved;
        }
        if self.values_only && ANNOTATIONS.contains(&key) {
            return None;
        }
        self.layers.iter().find_map(|layer| layer.get(key))
    }

    fn keys(&self) -> impl Iterator<Item = &'v String> + '_ {
        self.layers
            .iter()
            .flat_map(|l| l.keys())
            .filter(|k| !(self.values_only && ANNOTATIONS.contains(&k.as_str())))
    }

    /// The composition keyword (`anyOf` / `oneOf`) this schema is nothing but, apart
    /// from annotations; `None` when it has value keywords of its own.
    fn bare_composition(&self) -> Option<&'static str> {
        let kw = ["anyOf", "oneOf"]
            .into_iter()
            .find(|k| self.get(k).is_some())?;
        self.keys()
            .all(|k| k == kw || ANNOTATIONS.contains(&k.as_str()))
            .then_some(kw)
    }

    fn composed(&self) -> bool {
        ["anyOf", "oneOf", "allOf"]
            .iter()
            .any(|k| self.get(k).is_some())
    }

    fn identity(&self) -> usize {
        self.layers
            .last()
            .map(|l| *l as *const Map<String, Value> as usize)
            .unwrap_or(0)
    }
}

static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();

/// Resolve a local JSON pointer reference (`#/$defs/Name`) against `root`.
fn resolve<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

/// True when `a` and `b` are equal and hold no `$ref` (whose target might still differ).
/// Iterative: depth is bounded by the parser, but we do not rely on it.
fn same_without_refs(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((x, y)) = stack.pop() {
        match (x, y) {
            (Value::Object(m), Value::Object(n)) => {
                if m.len() != n.len() || m.contains_key("$ref") {
                    return false;
                }
                for (k, v) in m {
                    match n.get(k) {
                        Some(w) => stack.push((v, w)),
                        None => return false,
                    }
                }
            }
            (Value::Array(m), Value::Array(n)) => {
                if m.len() != n.len() {
                    return false;
                }
                stack.extend(m.iter().zip(n.iter()));
            }
            _ => {
                if x != y {
                    return false;
                }
            }
        }
    }
    true
}

/// Equal values, where every local `$ref` inside is compared by what it points at
/// (each side in its own root). Pairs of references already being compared are taken as
/// equal (a recursive definition); nesting is bounded.
fn same_resolved(roots: [&Value; 2], a: &Value, b: &Value) -> bool {
    fn go(
        roots: [&Value; 2],
        a: &Value,
        b: &Value,
        seen: &mut Vec<(usize, usize)>,
        depth: usize,
    ) -> bool {
        if depth > 256 {
            return false; // too deep to prove equal: report it
        }
        if let (Some(ra), Some(rb)) = (resolve_ptr(roots[0], a), resolve_ptr(roots[1], b)) {
            let pair = (ra as *const Value as usize, rb as *const Value as usize);
            if seen.contains(&pair) {
                return true;
            }
            seen.push(pair);
            // The targets, and the keywords beside `$ref`, must both agree.
            let siblings = |v: &Value| {
                let mut m = v.as_object().cloned().unwrap_or_default();
                m.remove("$ref");
                Value::Object(m)
            };
            return go(roots, ra, rb, seen, depth + 1)
                && go(roots, &siblings(a), &siblings(b), seen, depth + 1);
        }
        match (a, b) {
            (Value::Object(m), Value::Object(n)) => {
                m.len() == n.len()
                    && m.iter()
                        .all(|(k, v)| n.get(k).is_some_and(|w| go(roots, v, w, seen, depth + 1)))
            }
            (Value::Array(m), Value::Array(n)) => {
                m.len() == n.len()
                    && m.iter()
                        .zip(n)
                        .all(|(v, w)| go(roots, v, w, seen, depth + 1))
            }
            _ => a == b,
        }
    }
    fn resolve_ptr<'v>(root: &'v Value, v: &Value) -> Option<&'v Value> {
        resolve(root, v.get("$ref")?.as_str()?)
    }
    same_without_refs(a, b) || go(roots, a, b, &mut Vec::new(), 0)
}

/// `true`, `{}` and absent all mean "no constraint".
fn trivial(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Bool(true)) => true,
        Some(Value::Object(m)) => m.is_empty(),
        _ => false,
    }
}

struct Walk<'w, 'r, 'v> {
    em: &'w mut Emitter<'r>,
    subject: &'w str,
    direction: Direction,
    roots: [&'v Value; 2],
    work: Vec<Task<'v>>,
    visited: usize,
    budget: usize,
    expansions: HashMap<(usize, usize), u8>,
}

impl<'w, 'r, 'v> Walk<'w, 'r, 'v> {
    fn run(&mut self) {
        while let Some(task) = self.work.pop() {
            self.visited += 1;
            if self.visited > self.budget {
                let rule = self.em.rules.walk_limit();
                let mut ev = Event::new("exceeded");
                ev.after = Some(Value::from(self.budget as u64));
                let root = self.root_path(&task.path);
                self.em.emit(
                    rule,
                    self.subject,
                    Some(&root),
                    Some(self.direction),
                    "$walk",
                    ev,
                );
                return;
            }
            self.step(task);
        }
    }

    /// The path of the schema the walk started from (for the budget report).
    fn root_path(&self, path: &str) -> String {
        path.split(['.', '[']).next().unwrap_or(path).to_string()
    }

    fn emit(&mut self, rule: usize, path: &str, name: &str, ev: Event<'_>) {
        self.em.emit(
            rule,
            self.subject,
            Some(path),
            Some(self.direction),
            name,
            ev,
        );
    }

    /// Classify `ev` on `keyword` by the rows bound to it, or as unhandled.
    fn classify(&mut self, keyword: &str, path: &str, ev: Event<'_>) {
        let rules = self.em.rules;
        let rule = rules
            .schema_binding(keyword)
            .and_then(|b| rules.pick(b, ev.event, ev.cond))
            .unwrap_or_else(|| rules.schema_unhandled());
        self.emit(rule, path, keyword, ev);
    }

    fn unhandled(&mut self, keyword: &str, path: &str, a: Option<&Value>, b: Option<&Value>) {
        let rule = self.em.rules.schema_unhandled();
        self.emit(rule, path, keyword, Event::new("changed").values(a, b));
    }

    fn push(
        &mut self,
        a: Option<&'v Value>,
        b: Option<&'v Value>,
        path: String,
        chain: &Option<Rc<Chain>>,
    ) {
        self.work.push(Task {
            a,
            b,
            path,
            flat: false,
            chain: chain.clone(),
            values_only: [false, false],
        });
    }

    fn step(&mut self, task: Task<'v>) {
        match (task.a, task.b) {
            (Some(a), Some(b)) if same_without_refs(a, b) => return,
            (a, b) if trivial(a) && trivial(b) => return,
            _ => {}
        }
        let mut va = View::new(self.roots[0], task.a);
        let mut vb = View::new(self.roots[1], task.b);
        va.values_only = task.values_only[0];
        vb.values_only = task.values_only[1];
        if va.opaque.is_some() || vb.opaque.is_some() {
            if task.a != task.b {
                self.unhandled("(schema)", &task.path, task.a, task.b);
            }
            return;
        }
        let mut chain = task.chain.clone();
        if va.followed || vb.followed {
            let pair = (va.identity(), vb.identity());
            if on_chain(&chain, pair) {
                return; // the same two definitions are already being compared above
            }
            let seen = self.expansions.entry(pair).or_insert(0);
            if *seen >= REF_EXPANSIONS {
                return; // already reported under REF_EXPANSIONS other paths
            }
            *seen += 1;
            chain = Some(Rc::new(Chain {
                pair,
                parent: chain,
            }));
        }
        let path = task.path.as_str();

        // `X` on one side, `anyOf: [X, {type: null}]` on the other (how pydantic writes
        // Optional[X]): compare X as one of the variants instead of reporting an anyOf
        // that appeared and every keyword of X that moved into it.
        let lift = match (va.bare_composition(), vb.bare_composition()) {
            (None, Some(kw)) if !va.composed() && !va.layers.is_empty() => Some((kw, 1)),
            (Some(kw), None) if !vb.composed() && !vb.layers.is_empty() => Some((kw, 0)),
            _ => None,
        };

        let keywords: BTreeSet<&'v String> = va.keys().chain(vb.keys()).collect();
        for keyword in keywords {
            let k = keyword.as_str();
            if HANDLED.contains(&k) {
                continue;
            }
            if lift.is_some() && !ANNOTATIONS.contains(&k) {
                continue; // compared inside the variant
            }
            let (a, b) = (va.get(k), vb.get(k));
            if a.is_none() && b.is_none() {
                continue; // a followed `$ref`
            }
            let rules = self.em.rules;
            match rules.schema_binding(k) {
                Some(binding) if k != ANY_KEYWORD => {
                    match compare::events(binding.comparator, binding.absent.as_ref(), a, b) {
                        Some(evs) => {
                            for ev in evs {
                                self.classify(k, path, ev);
                            }
                        }
                        None => self.unhandled(k, path, a, b),
                    }
                }
                _ => {
                    // Compared as values, but a `$ref` inside (under `not`, `if`, ...)
                    // must not hide a change in what it points at.
                    let same = match (a, b) {
                        (Some(x), Some(y)) => same_resolved(self.roots, x, y),
                        _ => a == b,
                    };
                    if !same {
                        let mut ev = Event::new("changed").values(a, b);
                        if a == b {
                            ev.hint =
                                Some("a $ref inside points at a definition that changed".into());
                        }
                        self.emit(self.em.rules.schema_unhandled(), path, k, ev);
                    }
                }
            }
        }

        if let Some((kw, composed_side)) = lift {
            self.lifted(&task, kw, composed_side, path, &chain);
            return;
        }
        self.fields(&va, &vb, path, task.flat, &chain);
        self.items(&va, &vb, path, &chain);
        self.additional(&va, &vb, path, &chain);
        for keyword in ["anyOf", "oneOf", "allOf", "prefixItems"] {
            self.variants(keyword, va.get(keyword), vb.get(keyword), path, &chain);
        }
    }

    /// One side is a plain schema, the other a list of variants: pair the plain schema
    /// with its most similar variant, and report the other variants as added (or removed).
    fn lifted(
        &mut self,
        task: &Task<'v>,
        kw: &str,
        composed_side: usize,
        path: &str,
        chain: &Option<Rc<Chain>>,
    ) {
        let (plain, list) = if composed_side == 1 {
            (task.a, View::new(self.roots[1], task.b).get(kw))
        } else {
            (task.b, View::new(self.roots[0], task.a).get(kw))
        };
        let Some(Value::Array(variants)) = list else {
            return self.unhandled(kw, path, task.a, task.b);
        };
        let plain_value = plain.unwrap_or(&Value::Null);
        let best = (0..variants.len())
            .max_by_key(|&j| (similarity(plain_value, &variants[j]), std::cmp::Reverse(j)));
        let at = |j: usize| format!("{path}.{kw}[{j}]");
        for (j, variant) in variants.iter().enumerate() {
            if Some(j) == best {
                let (a, b, values_only) = if composed_side == 1 {
                    (plain, Some(variant), [true, false])
                } else {
                    (Some(variant), plain, [false, true])
                };
                self.work.push(Task {
                    a,
                    b,
                    path: at(j),
                    flat: false,
                    chain: chain.clone(),
                    values_only,
                });
            } else {
                let event = if composed_side == 1 {
                    "variant_added"
                } else {
                    "variant_removed"
                };
                self.classify(kw, &at(j), Event::new(event));
            }
        }
    }

    /// `properties` and `required`, compared together as a set of fields, each absent,
    /// optional or required.
    fn fields(
        &mut self,
        va: &View<'v>,
        vb: &View<'v>,
        path: &str,
        flat: bool,
        chain: &Option<Rc<Chain>>,
    ) {
        let (pa, pb) = (va.get("properties"), vb.get("properties"));
        let (ra, rb) = (va.get("required"), vb.get("required"));
        let props = |v: Option<&'v Value>| match v {
            None => Some(None),
            Some(Value::Object(m)) => Some(Some(m)),
            Some(_) => None,
        };
        let reqs = |v: Option<&'v Value>| -> Option<BTreeSet<&'v str>> {
            match v {
                None => Some(BTreeSet::new()),
                Some(Value::Array(items)) => items.iter().map(Value::as_str).collect(),
                Some(_) => None,
            }
        };
        let (Some(pa), Some(pb)) = (props(pa), props(pb)) else {
            if pa != pb {
                self.unhandled("properties", path, pa, pb);
            }
            return;
        };
        let (Some(ra), Some(rb)) = (reqs(ra), reqs(rb)) else {
            if ra != rb {
                self.unhandled("required", path, ra, rb);
            }
            return;
        };
        let mut names: BTreeSet<&str> = BTreeSet::new();
        names.extend(pa.iter().flat_map(|m| m.keys().map(String::as_str)));
        names.extend(pb.iter().flat_map(|m| m.keys().map(String::as_str)));
        names.extend(ra.iter().copied());
        names.extend(rb.iter().copied());
        let mut came: Vec<(&str, Option<&Value>, bool)> = Vec::new();
        let mut went: Vec<(&str, Option<&Value>, bool)> = Vec::new();
        let child_of = |name: &str| {
            if flat {
                join(path, name)
            } else {
                join(&format!("{path}.properties"), name)
            }
        };
        let cond = |r: bool| {
            Some(if r {
                Condition::Required
            } else {
                Condition::Optional
            })
        };
        for name in names {
            let sa = pa.and_then(|m| m.get(name));
            let sb = pb.and_then(|m| m.get(name));
            let (req_a, req_b) = (ra.contains(name), rb.contains(name));
            let child = child_of(name);
            let there_a = sa.is_some() || req_a;
            let there_b = sb.is_some() || req_b;
            if !there_a {
                came.push((name, sb, req_b));
                continue;
            }
            if !there_b {
                went.push((name, sa, req_a));
                continue;
            }
            if req_a != req_b {
                let mut ev = Event::new(if req_b { "required" } else { "optional" });
                ev.cond = cond(req_b);
                self.classify("properties", &child, ev);
            }
            // Declared on one side only: compare against the empty schema.
            self.push(sa, sb, child, chain);
        }
        // A field that went and one that came with the same schema: still a removal and
        // an addition, but say that it looks like a rename.
        let renamed = |x: Option<&Value>, y: Option<&Value>| matches!((x, y), (Some(x), Some(y)) if x == y && !trivial(Some(x)));
        // Only a one-to-one match is a hint: among several alike fields, none is.
        let only = |list: &[(&'v str, Option<&'v Value>, bool)], schema: Option<&Value>| {
            let mut hits = list.iter().filter(|(_, s, _)| renamed(*s, schema));
            match (hits.next(), hits.next()) {
                (Some((name, _, _)), None) => Some(*name),
                _ => None,
            }
        };
        for &(name, schema, req) in &came {
            let mut ev = Event::new("added");
            ev.cond = cond(req);
            if let Some(old) = only(&went, schema).filter(|old| {
                only(&came, went.iter().find(|w| w.0 == *old).and_then(|w| w.1)) == Some(name)
            }) {
                ev.hint = Some(format!("looks renamed from `{old}`"));
            }
            self.classify("properties", &child_of(name), ev);
        }
        for &(name, schema, req) in &went {
            let mut ev = Event::new("removed");
            ev.cond = cond(req);
            if let Some(new) = only(&came, schema).filter(|new| {
                only(&went, came.iter().find(|c| c.0 == *new).and_then(|c| c.1)) == Some(name)
            }) {
                ev.hint = Some(format!("looks renamed to `{new}`"));
            }
            self.classify("properties", &child_of(name), ev);
        }
    }

    fn items(&mut self, va: &View<'v>, vb: &View<'v>, path: &str, chain: &Option<Rc<Chain>>) {
        let (a, b) = (va.get("items"), vb.get("items"));
        // Draft 4-7 tuple form: `items` as an array works like `prefixItems`.
        if matches!(a, Some(Value::Array(_))) || matches!(b, Some(Value::Array(_))) {
            self.variants("items", a, b, path, chain);
            return;
        }
        let child = format!("{path}.items");
        match (trivial(a), trivial(b)) {
            (true, true) => {}
            (true, false) => self.classify("items", &child, Event::new("added")),
            (false, true) => self.classify("items", &child, Event::new("removed")),
            (false, false) => self.push(a, b, child, chain),
        }
    }

    /// `additionalProperties`: `false` closes the object; anything else leaves it open
    /// (a schema constrains the extra values, which we compare as a schema).
    fn additional(&mut self, va: &View<'v>, vb: &View<'v>, path: &str, chain: &Option<Rc<Chain>>) {
        let (a, b) = (
            va.get("additionalProperties"),
            vb.get("additionalProperties"),
        );
        let closed = |v: Option<&Value>| matches!(v, Some(Value::Bool(false)));
        match (closed(a), closed(b)) {
            (false, true) => self.classify("additionalProperties", path, Event::new("restricted")),
            (true, false) => self.classify("additionalProperties", path, Event::new("relaxed")),
            (true, true) => {}
            (false, false) => {
                self.push(a, b, format!("{path}.additionalProperties"), chain);
            }
        }
    }

    /// Lists of subschemas. `prefixItems` (and tuple `items`) pair by position; the
    /// composition keywords pair equal variants first, so reordering is not a change,
    /// then the rest in order.
    fn variants(
        &mut self,
        keyword: &str,
        a: Option<&'v Value>,
        b: Option<&'v Value>,
        path: &str,
        chain: &Option<Rc<Chain>>,
    ) {
        // Tuple `items` is classified by the `prefixItems` rows.
        let class = if keyword == "items" {
            "prefixItems"
        } else {
            keyword
        };
        let (xs, ys) = match (a, b) {
            (None, None) => return,
            (None, Some(_)) => return self.classify(class, path, Event::new("added")),
            (Some(_), None) => return self.classify(class, path, Event::new("removed")),
            (Some(Value::Array(xs)), Some(Value::Array(ys))) => (xs, ys),
            _ => return self.unhandled(keyword, path, a, b),
        };
        let at = |i: usize| format!("{path}.{keyword}[{i}]");
        if class == "prefixItems" {
            for i in 0..xs.len().max(ys.len()) {
                match (xs.get(i), ys.get(i)) {
                    (Some(x), Some(y)) => self.push(Some(x), Some(y), at(i), chain),
                    (None, Some(_)) => self.classify(class, &at(i), Event::new("variant_added")),
                    (Some(_), None) => self.classify(class, &at(i), Event::new("variant_removed")),
                    (None, None) => {}
                }
            }
            return;
        }
        let mut used_a = vec![false; xs.len()];
        let mut pair_of_b: Vec<Option<usize>> = vec![None; ys.len()];
        let (cx, cy): (Vec<String>, Vec<String>) = (
            xs.iter().map(canonical).collect(),
            ys.iter().map(canonical).collect(),
        );
        for (j, _) in ys.iter().enumerate() {
            if let Some(i) = (0..xs.len()).find(|&i| !used_a[i] && cx[i] == cy[j]) {
                used_a[i] = true;
                pair_of_b[j] = Some(i);
            }
        }
        // The rest pair by structure (same type, shared keywords), not by position.
        for (j, y) in ys.iter().enumerate() {
            if pair_of_b[j].is_some() {
                continue;
            }
            let best = (0..xs.len())
                .filter(|&i| !used_a[i])
                .max_by_key(|&i| (similarity(&xs[i], y), std::cmp::Reverse(i)))
                .filter(|&i| similarity(&xs[i], y) > 0);
            if let Some(i) = best {
                used_a[i] = true;
                pair_of_b[j] = Some(i);
            }
        }
        for (j, y) in ys.iter().enumerate() {
            match pair_of_b[j] {
                Some(i) => self.push(Some(&xs[i]), Some(y), at(j), chain),
                None => self.classify(class, &at(j), Event::new("variant_added")),
            }
        }
        for i in (0..xs.len()).filter(|&i| !used_a[i]) {
            self.classify(class, &at(i), Event::new("variant_removed"));
        }
    }
}
