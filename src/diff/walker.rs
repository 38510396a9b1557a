//! The generic JSON Schema walker: compares two schemas keyword by keyword, following
//! `$ref`, and reports what it finds through the rule tables.
//!
//! It is iterative (an explicit work list, so nesting depth cannot overflow the stack),
//! cycle-safe (a `$ref` pair already being compared on the way down is not entered
//! again) and bounded (a work budget; running out is itself reported as a change, so a
//! break cannot hide behind it).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::{compare, Emitter, Event};
use crate::keywords::{self, Role};
use crate::path::join;
use crate::rules::{Condition, Direction, ANY_KEYWORD, EXTENSION_KEYWORD};

/// Node pairs one schema comparison may visit before it gives up (and says so).
pub const DEFAULT_WORK_BUDGET: usize = 1_000_000;

/// How many times one pair of `$ref` targets is expanded in one schema. A definition
/// shared by a handful of properties is reported under each of them; a hostile DAG of
/// definitions (each referencing the next twice) stays linear instead of exponential.
const REF_EXPANSIONS: u8 = 8;

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
            after_variant: None,
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
    /// Not a comparison but a bracket around a `oneOf` variant's subtree: the opening
    /// one (`true`, popped just before it) notes how many changes there were; the
    /// closing one (popped just after) reports the variant as changed if any came.
    after_variant: Option<(Rc<std::cell::Cell<usize>>, bool)>,
}

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
                    let un = keywords::unordered(k);
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
        if self.values_only && keywords::is_annotation(key) {
            return None;
        }
        self.layers.iter().find_map(|layer| layer.get(key))
    }

    fn keys(&self) -> impl Iterator<Item = &'v String> + '_ {
        self.layers
            .iter()
            .flat_map(|l| l.keys())
            .filter(|k| !(self.values_only && keywords::is_annotation(k)))
    }

    /// The composition keyword (`anyOf` / `oneOf`) this schema is nothing but, apart
    /// from annotations; `None` when it has value keywords of its own.
    /// `through_ref`: a followed `$ref` beside it does not count as a keyword of its own.
    fn bare_composition(&self, through_ref: bool) -> Option<&'static str> {
        let kw = ["anyOf", "oneOf"]
            .into_iter()
            .find(|k| self.get(k).is_some())?;
        self.keys()
            .all(|k| {
                k == kw
                    || keywords::is_annotation(k)
                    || (through_ref && k == "$ref" && self.followed)
            })
            .then_some(kw)
    }

    /// Keywords beside a `$ref` apply on their own (in 2020-12 the two act as an
    /// `allOf`), but the view reads them layer by layer, first found wins. That is exact
    /// unless a sibling holds what the target also constrains: the same keyword with
    /// another value (a sibling `maxLength` hides the target's), or a keyword that looks
    /// at its neighbours: `additionalProperties` sees only the `properties` and
    /// `patternProperties` beside it, `items` only the `prefixItems` beside it. The
    /// keyword that makes the view inexact, if any.
    fn inexact(&self) -> Option<&'v str> {
        const NEIGHBOURS: [(&str, &[&str]); 3] = [
            ("additionalProperties", &["properties", "patternProperties"]),
            ("items", &["prefixItems"]),
            ("additionalItems", &["items"]),
        ];
        for (i, layer) in self.layers.iter().enumerate() {
            for (k, v) in layer.iter() {
                if k == "$ref" || keywords::is_annotation(k) {
                    continue;
                }
                let others = self.layers.iter().enumerate().filter(|(j, _)| *j != i);
                for (_, other) in others {
                    let clash = other.get(k).is_some_and(|w| w != v);
                    let blind = NEIGHBOURS.iter().any(|(kw, seen)| {
                        k == kw
                            && seen
                                .iter()
                                .any(|n| other.contains_key(*n) && !layer.contains_key(*n))
                    });
                    if clash || blind {
                        return Some(k);
                    }
                }
            }
        }
        None
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
pub(crate) fn resolve<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
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

/// A schema every string satisfies: a `type` that admits strings and nothing else but
/// annotations.
fn any_string(v: Option<&Value>) -> bool {
    let Some(Value::Object(m)) = v else {
        return false;
    };
    let admits_string = match m.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    admits_string
        && m.keys().all(|k| {
            k == "type" || matches!(keywords::role(k), Some(Role::Annotation | Role::Identifier))
        })
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
                self.exhausted(&task.path);
                return;
            }
            if let Some((since, opening)) = task.after_variant {
                if opening {
                    since.set(self.em.changes.len());
                } else if self.em.changes.len() > since.get() {
                    let mut ev = Event::new("variant_changed");
                    ev.hint = Some(
                        "with oneOf, a variant that accepts more can make values match two variants, and one that accepts less can make them match one".into(),
                    );
                    self.classify("oneOf", &task.path, ev);
                }
                continue;
            }
            self.step(task);
        }
    }

    /// Report that the work budget ran out (breaking: what was not compared may hide a
    /// break) and stop the walk.
    fn exhausted(&mut self, path: &str) {
        let rule = self.em.rules.walk_limit();
        let mut ev = Event::new("exceeded");
        ev.after = Some(Value::from(self.budget as u64));
        let root = self.root_path(path);
        self.em.emit(
            rule,
            self.subject,
            Some(&root),
            Some(self.direction),
            "$walk",
            ev,
        );
        self.work.clear();
        self.visited = self.budget.saturating_add(1);
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
        let rule = self
            .binding(keyword)
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
            after_variant: None,
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

        // A `$ref` that resolves on one side only (or to another text): what the
        // unresolved side accepts is unknown, so nothing else here can be judged.
        if (va.unresolved.is_some() || vb.unresolved.is_some()) && va.unresolved != vb.unresolved {
            let mut ev = Event::new("changed").values(
                va.unresolved.or(task.a.and_then(|v| v.get("$ref"))),
                vb.unresolved.or(task.b.and_then(|v| v.get("$ref"))),
            );
            ev.hint = Some(
                "the $ref does not resolve on one side, so what that side accepts is unknown"
                    .into(),
            );
            self.emit(self.em.rules.schema_unhandled(), path, "$ref", ev);
            return;
        }

        // Keywords beside a `$ref` that the layered view cannot read exactly (see
        // `View::inexact`): what that side accepts is not modelled, so a difference here
        // is reported as such, conservatively, and not walked into exact-looking verdicts.
        if let Some(kw) = va.inexact().or(vb.inexact()) {
            if va.layers != vb.layers {
                // Each side as the schemas that apply together: the referencing object,
                // then each target.
                let layers = |v: &View<'_>| {
                    Value::Array(
                        v.layers
                            .iter()
                            .map(|l| Value::Object((*l).clone()))
                            .collect(),
                    )
                };
                let (before, after) = (layers(&va), layers(&vb));
                let mut ev = Event::new("changed").values(Some(&before), Some(&after));
                ev.hint = Some(format!(
                    "`{kw}` beside a $ref applies on its own, next to what the $ref points at; that combination is not modelled"
                ));
                self.emit(self.em.rules.schema_unhandled(), path, kw, ev);
                return;
            }
        }

        // `X` on one side, `anyOf: [X, {type: null}]` on the other (how pydantic writes
        // Optional[X]): compare X as one of the variants instead of reporting an anyOf
        // that appeared and every keyword of X that moved into it.
        // The same when X is itself a union (`X` → `anyOf: [X, {type: string}]`, X a
        // `oneOf`): the side that holds the other whole as a variant is the list.
        let holds_whole = |list: Option<&'v Value>, whole: Option<&'v Value>, side: usize| {
            let (Some(Value::Array(variants)), Some(whole)) = (list, whole) else {
                return false;
            };
            variants.iter().any(|v| {
                let mut roots = self.roots;
                if side == 0 {
                    roots.swap(0, 1);
                }
                same_resolved(roots, whole, v)
            })
        };
        let lift = match (va.bare_composition(false), vb.bare_composition(false)) {
            (None, Some(kw)) if !va.composed() && !va.layers.is_empty() => Some((kw, 1)),
            (Some(kw), None) if !vb.composed() && !vb.layers.is_empty() => Some((kw, 0)),
            _ => match (va.bare_composition(true), vb.bare_composition(true)) {
                (Some(ka), Some(kb)) if ka != kb => {
                    if holds_whole(vb.get(kb), task.a, 1) {
                        Some((kb, 1))
                    } else if holds_whole(va.get(ka), task.b, 0) {
                        Some((ka, 0))
                    } else {
                        None
                    }
                }
                _ => None,
            },
        };

        // The value keywords of each side, normalised so that equivalent spellings
        // compare equal (integer bounds, a one-value enum against const).
        let mut kv = [value_keywords(&va), value_keywords(&vb)];
        normalise_bounds(&mut kv[0]);
        normalise_bounds(&mut kv[1]);
        align_const(&mut kv);

        // A type changed to a disjoint one: one change, and nothing under it is listed
        // (every other difference there follows from it).
        if lift.is_none() && self.type_replaced(&kv, path) {
            return;
        }

        let keywords: BTreeSet<&'v str> = kv[0].keys().chain(kv[1].keys()).copied().collect();
        for k in keywords {
            if lift.is_some() && !keywords::is_annotation(k) {
                continue; // compared inside the variant
            }
            let (a, b) = (
                kv[0].get(k).map(|v| v.as_ref()),
                kv[1].get(k).map(|v| v.as_ref()),
            );
            if a.is_none() && b.is_none() {
                continue;
            }
            let rules = self.em.rules;
            match self.binding(k) {
                Some(binding) if k != ANY_KEYWORD => {
                    let (a, b) = if k == "dependentRequired" {
                        (a.map(name_pairs), b.map(name_pairs))
                    } else {
                        (a.cloned(), b.cloned())
                    };
                    match compare::events(
                        binding.comparator,
                        binding.absent.as_ref(),
                        a.as_ref(),
                        b.as_ref(),
                    ) {
                        Some(evs) => {
                            for ev in evs {
                                self.classify(k, path, ev);
                            }
                        }
                        None => self.unhandled(k, path, a.as_ref(), b.as_ref()),
                    }
                }
                _ => {
                    // Compared as values, but a `$ref` inside must not hide a change in
                    // what it points at.
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
                        self.emit(rules.schema_unhandled(), path, k, ev);
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
        self.tuple(&va, &vb, path, &chain);
        self.additional(&va, &vb, path, &chain);
        for keyword in ["anyOf", "oneOf", "allOf"] {
            self.variants(keyword, va.get(keyword), vb.get(keyword), path, &chain);
        }
        self.subschemas(&va, &vb, path, &chain);
        self.entries(&va, &vb, path, &chain);
    }

    /// For an input property that is (now) required but has a `default`: zod's
    /// output-mode schemas, among others, list defaulted fields as required, so the
    /// schema rejects an omission the server itself may still accept. Said, not excused.
    fn default_hint(&self, schema: Option<&Value>) -> Option<String> {
        (self.direction == Direction::Input && schema.and_then(|s| s.get("default")).is_some())
            .then(|| {
                "it has a default, so the server itself may still accept calls that omit it".into()
            })
    }

    /// The row binding for keyword `k` (a vendor extension falls back to `x-*`).
    fn binding(&self, k: &str) -> Option<&'r crate::rules::Binding> {
        let rules = self.em.rules;
        rules.schema_binding(k).or_else(|| {
            keywords::is_extension(k)
                .then(|| rules.schema_binding(EXTENSION_KEYWORD))
                .flatten()
        })
    }

    /// Report a `type` that changed to a disjoint set; `true` when it did (the caller
    /// then compares nothing else at this node).
    fn type_replaced(&mut self, kv: &[Keywords<'v>; 2], path: &str) -> bool {
        let (a, b) = (kv[0].get("type"), kv[1].get("type"));
        let (a, b) = (a.map(|v| v.as_ref()), b.map(|v| v.as_ref()));
        let Some(evs) = compare::events(crate::rules::Comparator::Typeset, None, a, b) else {
            return false;
        };
        if !evs.iter().any(|e| e.event == "changed") {
            return false;
        }
        for ev in evs {
            self.classify("type", path, ev);
        }
        true
    }

    /// Applicators holding one subschema. Those whose changes have a direction
    /// (`contains`, `propertyNames`, `then`, ...) are walked; `not`, `if` and draft-07
    /// `dependencies` are compared as values (a change inside has no fixed direction).
    fn subschemas(&mut self, va: &View<'v>, vb: &View<'v>, path: &str, chain: &Option<Rc<Chain>>) {
        for kw in [
            "contains",
            "propertyNames",
            "unevaluatedProperties",
            "unevaluatedItems",
            "additionalItems",
            "then",
            "else",
        ] {
            // draft-07 `additionalItems` beside a list `items` is the tuple's rest.
            if kw == "additionalItems" && (is_list(va.get("items")) || is_list(vb.get("items"))) {
                continue;
            }
            let (a, b) = (va.get(kw), vb.get(kw));
            // `contains: {}` still asks for one element; elsewhere `{}` means nothing, and
            // so does `propertyNames: {type: string}` (zod 4 writes it on every record):
            // a property name is always a string.
            let present = |v: Option<&Value>| match kw {
                "contains" => v.is_some(),
                "propertyNames" => !trivial(v) && !any_string(v),
                _ => !trivial(v),
            };
            let child = format!("{path}.{kw}");
            match (present(a), present(b)) {
                (false, false) => {}
                (false, true) => self.classify(kw, &child, Event::new("added").values(a, b)),
                (true, false) => self.classify(kw, &child, Event::new("removed").values(a, b)),
                (true, true) => self.push(a, b, child, chain),
            }
        }
        for kw in ["not", "if", "dependencies"] {
            let (a, b) = (va.get(kw), vb.get(kw));
            let child = format!("{path}.{kw}");
            match (a, b) {
                (None, None) => {}
                (None, Some(_)) => self.classify(kw, &child, Event::new("added").values(a, b)),
                (Some(_), None) => self.classify(kw, &child, Event::new("removed").values(a, b)),
                (Some(x), Some(y)) => {
                    if !same_resolved(self.roots, x, y) {
                        let mut ev = Event::new("changed").values(a, b);
                        if x == y {
                            ev.hint =
                                Some("a $ref inside points at a definition that changed".into());
                        }
                        self.classify(kw, &child, ev);
                    }
                }
            }
        }
    }

    /// `patternProperties` and `dependentSchemas`: maps of subschemas, compared entry by
    /// entry. A pattern entry means the opposite in a closed object (it admits names)
    /// and in an open one (it constrains them).
    fn entries(&mut self, va: &View<'v>, vb: &View<'v>, path: &str, chain: &Option<Rc<Chain>>) {
        for kw in ["patternProperties", "dependentSchemas"] {
            let (a, b) = (va.get(kw), vb.get(kw));
            if a.is_none() && b.is_none() {
                continue;
            }
            let (Some(ma), Some(mb)) = (as_map(a), as_map(b)) else {
                self.unhandled(kw, path, a, b);
                continue;
            };
            let base = format!("{path}.{kw}");
            let keys: BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
            for key in keys {
                let child = join(&base, key);
                let closed = |v: &View<'v>| {
                    Some(if kw == "patternProperties" && closed_object(v) {
                        Condition::Closed
                    } else {
                        Condition::Open
                    })
                };
                match (ma.get(key), mb.get(key)) {
                    (Some(x), Some(y)) => self.push(Some(x), Some(y), child, chain),
                    (None, Some(_)) => {
                        let mut ev = Event::new("entry_added");
                        ev.cond = closed(va);
                        ev.value = Some(Value::String(key.clone()));
                        self.classify(kw, &child, ev);
                    }
                    (Some(_), None) => {
                        let mut ev = Event::new("entry_removed");
                        ev.cond = closed(vb);
                        ev.value = Some(Value::String(key.clone()));
                        self.classify(kw, &child, ev);
                    }
                    (None, None) => {}
                }
            }
        }
    }

    /// Tuples: 2020-12 `prefixItems` with `items` as the rest, or draft-07 list `items`
    /// with `additionalItems`. Each position compares against what the other side
    /// applies there: its own position, else its rest (`false` for a closed tuple).
    fn tuple(&mut self, va: &View<'v>, vb: &View<'v>, path: &str, chain: &Option<Rc<Chain>>) {
        let (ta, tb) = (tuple_parts(va), tuple_parts(vb));
        let ((_, xs, rest_a), (kw_b, ys, rest_b)) = match (ta, tb) {
            (None, None) => return,
            (None, Some((kw, _, _))) => {
                return self.classify(
                    "prefixItems",
                    path,
                    Event::new("added").values(None, vb.get(kw)),
                )
            }
            (Some((kw, _, _)), None) => {
                return self.classify(
                    "prefixItems",
                    path,
                    Event::new("removed").values(va.get(kw), None),
                )
            }
            (Some(x), Some(y)) => (x, y),
        };
        let at = |i: usize| format!("{path}.{kw_b}[{i}]");
        let cond = |rest: Option<&Value>| {
            Some(if matches!(rest, Some(Value::Bool(false))) {
                Condition::Closed
            } else {
                Condition::Open
            })
        };
        for i in 0..xs.len().max(ys.len()) {
            match (xs.get(i), ys.get(i)) {
                (Some(x), Some(y)) => self.push(Some(x), Some(y), at(i), chain),
                (None, Some(y)) => {
                    if trivial(rest_a) || matches!(rest_a, Some(Value::Bool(false))) {
                        let mut ev = Event::new("variant_added");
                        ev.cond = cond(rest_a);
                        self.classify("prefixItems", &at(i), ev);
                    } else {
                        self.push(rest_a, Some(y), at(i), chain);
                    }
                }
                (Some(x), None) => {
                    if trivial(rest_b) || matches!(rest_b, Some(Value::Bool(false))) {
                        let mut ev = Event::new("variant_removed");
                        ev.cond = cond(rest_b);
                        self.classify("prefixItems", &at(i), ev);
                    } else {
                        self.push(Some(x), rest_b, at(i), chain);
                    }
                }
                (None, None) => {}
            }
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
        let plain_side = 1 - composed_side;
        let mut roots = self.roots;
        if composed_side == 0 {
            roots.swap(0, 1); // plain first
        }
        // A variant equal to the plain schema pairs with it; otherwise the most similar.
        let best = (0..variants.len())
            .find(|&j| same_resolved(roots, plain_value, &variants[j]))
            .or_else(|| {
                (0..variants.len())
                    .max_by_key(|&j| (similarity(plain_value, &variants[j]), std::cmp::Reverse(j)))
            });
        let resolved: Vec<&Value> = variants
            .iter()
            .map(|v| through_refs(self.roots[composed_side], v))
            .collect();
        let plain_seen = through_refs(self.roots[plain_side], plain_value);
        // The plain schema is the union, split by value or by type: nothing changed.
        if split_into(plain_seen, &resolved) {
            return;
        }
        // oneOf: a variant beside the plain schema's own may share values with it.
        let cond = (kw == "oneOf" && resolved.len() > 1 && !disjoint(&resolved))
            .then_some(Condition::Overlapping);
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
                    after_variant: None,
                });
            } else if cond.is_none() && covers(plain_seen, resolved[j]) {
                // Every value of this variant is a value of the plain schema on the other
                // side: `enum [a, b]` against `anyOf [enum [a], enum [b]]`.
            } else {
                let mut ev = Event::new(if composed_side == 1 {
                    "variant_added"
                } else {
                    "variant_removed"
                });
                ev.cond = cond;
                self.classify(kw, &at(j), ev);
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
                if req_b {
                    ev.hint = self.default_hint(sb);
                }
                self.classify("properties", &child, ev);
            }
            // Declared on one side only (the other only lists it in `required`): compare
            // with what that side applies to an undeclared name: nothing in a closed
            // object, its `additionalProperties` schema, or else anything.
            match (sa, sb) {
                (Some(_), None) if closed_object(vb) => {
                    let mut ev = Event::new("removed");
                    ev.cond = Some(Condition::Closed);
                    self.classify("properties", &child, ev);
                }
                (Some(_), None) => {
                    let extra = vb.get("additionalProperties").filter(|v| !trivial(Some(v)));
                    self.push(sa, extra, child, chain);
                }
                (None, Some(_)) if !closed_object(va) => {
                    let extra = va.get("additionalProperties").filter(|v| !trivial(Some(v)));
                    self.push(extra, sb, child, chain);
                }
                _ => self.push(sa, sb, child, chain),
            }
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
            if req {
                ev.hint = self.default_hint(schema);
            }
            if let Some(old) = only(&went, schema).filter(|old| {
                only(&came, went.iter().find(|w| w.0 == *old).and_then(|w| w.1)) == Some(name)
            }) {
                ev.hint = Some(format!("looks renamed from `{old}`"));
            }
            self.classify("properties", &child_of(name), ev);
        }
        let closed_b = closed_object(vb);
        let extra_b = vb
            .get("additionalProperties")
            .filter(|v| !trivial(Some(v)) && !matches!(v, Value::Bool(false)));
        for &(name, schema, req) in &went {
            let mut ev = Event::new("removed");
            ev.cond = cond(req);
            if !req && closed_b {
                // Callers that still send it are now rejected.
                ev.cond = Some(Condition::Closed);
            } else if !req && extra_b.is_some() {
                // Still accepted, now as an additional property: its values must pass
                // the `additionalProperties` schema instead.
                self.push(schema, extra_b, child_of(name), chain);
            }
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
        // Draft 4-7 tuple form: `items` as a list is compared by `tuple`; here it
        // stands for no constraint on the items beyond the tuple.
        if is_list(a) && is_list(b) {
            return;
        }
        let (a, b) = (
            a.filter(|v| !is_list(Some(v))),
            b.filter(|v| !is_list(Some(v))),
        );
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

    /// `anyOf` / `oneOf` / `allOf`: lists of subschemas. Variants are seen through
    /// their `$ref`s, and a variant that is itself nothing but an `anyOf` / `oneOf` is
    /// opened up into its variants, so the same alternatives written another way pair
    /// up. Equal variants pair first (reordering is no change), then the most alike.
    fn variants(
        &mut self,
        keyword: &str,
        a: Option<&'v Value>,
        b: Option<&'v Value>,
        path: &str,
        chain: &Option<Rc<Chain>>,
    ) {
        let class = keyword;
        let (xs, ys) = match (a, b) {
            (None, None) => return,
            (None, Some(_)) => return self.classify(class, path, Event::new("added")),
            (Some(_), None) => return self.classify(class, path, Event::new("removed")),
            (Some(Value::Array(xs)), Some(Value::Array(ys))) => (xs, ys),
            _ => return self.unhandled(keyword, path, a, b),
        };
        let (fx, fy) = (
            flatten(self.roots[0], keyword, xs),
            flatten(self.roots[1], keyword, ys),
        );
        let (xs, ys): (Vec<&'v Value>, Vec<&'v Value>) = (
            fx.iter().map(|f| f.1).collect(),
            fy.iter().map(|f| f.1).collect(),
        );
        let at = |f: &(String, &Value)| format!("{path}.{keyword}{}", f.0);
        let mut used_a = vec![false; xs.len()];
        let mut pair_of_b: Vec<Option<usize>> = vec![None; ys.len()];
        let (rx, ry): (Vec<&Value>, Vec<&Value>) = (
            xs.iter().map(|v| through_refs(self.roots[0], v)).collect(),
            ys.iter().map(|v| through_refs(self.roots[1], v)).collect(),
        );
        // Equal as written first, then equal through their `$ref`s: by text, through a
        // map, so thousands of variants cost no more than their text.
        for seen in [[&xs, &ys], [&rx, &ry]] {
            let mut by_text: HashMap<String, Vec<usize>> = HashMap::new();
            for (i, v) in seen[0].iter().enumerate().rev() {
                if !used_a[i] {
                    by_text.entry(canonical(v)).or_default().push(i);
                }
            }
            for j in 0..ys.len() {
                if pair_of_b[j].is_some() {
                    continue;
                }
                if let Some(i) = by_text.get_mut(&canonical(seen[1][j])).and_then(Vec::pop) {
                    used_a[i] = true;
                    pair_of_b[j] = Some(i);
                }
            }
        }
        // The rest pair by structure (same type, shared keywords), not by position: every
        // left-over pair is scored, and that work counts against the walk budget.
        let left_a = used_a.iter().filter(|u| !**u).count();
        let left_b = pair_of_b.iter().filter(|p| p.is_none()).count();
        let cost = left_a.saturating_mul(left_b);
        if self.visited.saturating_add(cost) > self.budget {
            return self.exhausted(path);
        }
        self.visited += cost;
        for (j, y) in ry.iter().enumerate() {
            if pair_of_b[j].is_some() {
                continue;
            }
            let best = (0..xs.len())
                .filter(|&i| !used_a[i])
                .max_by_key(|&i| (similarity(rx[i], y), std::cmp::Reverse(i)))
                .filter(|&i| similarity(rx[i], y) > 0);
            if let Some(i) = best {
                used_a[i] = true;
                pair_of_b[j] = Some(i);
            }
        }
        // oneOf accepts a value matching exactly one variant, so a change inside a
        // variant has no fixed direction, unless the variants cannot overlap (distinct
        // types or discriminator values).
        // A variant opened out of a nested `oneOf` (an `anyOf` variant that is only a
        // `oneOf`) keeps its exclusivity: it is judged as a oneOf variant. Whether the
        // variants may overlap is asked of the whole opened list, which can only say
        // "may" more often than the nested list alone.
        let one_of = |f: &(String, &Value)| keyword == "oneOf" || f.0.contains(".oneOf[");
        let may_overlap = !(disjoint(&rx) && disjoint(&ry));
        let bracket = |i: usize, j: usize| {
            (one_of(&fx[i]) || one_of(&fy[j])) && xs.len().max(ys.len()) > 1 && may_overlap
        };
        // A variant that comes into (goes out of) a oneOf list whose variants may overlap
        // changes which values match exactly one: a value the new variant shares with an
        // old one is rejected now; one two old variants shared may be accepted now.
        let membership = |f: &(String, &Value), list: &[&Value], event: &'static str| {
            let mut ev = Event::new(event);
            if !one_of(f) {
                return (keyword, ev);
            }
            if list.len() > 1 && !disjoint(list) {
                ev.cond = Some(Condition::Overlapping);
            }
            ("oneOf", ev)
        };
        for (j, y) in ys.iter().enumerate() {
            match pair_of_b[j] {
                Some(i) => {
                    let since = Rc::new(std::cell::Cell::new(0));
                    let marker = |opening: bool| Task {
                        a: None,
                        b: None,
                        path: at(&fy[j]),
                        flat: false,
                        chain: None,
                        values_only: [false, false],
                        after_variant: Some((since.clone(), opening)),
                    };
                    let bracketed = bracket(i, j);
                    if bracketed {
                        self.work.push(marker(false));
                    }
                    self.push(Some(xs[i]), Some(y), at(&fy[j]), chain);
                    if bracketed {
                        self.work.push(marker(true));
                    }
                }
                None => {
                    let (class, ev) = membership(&fy[j], &ry, "variant_added");
                    self.classify(class, &at(&fy[j]), ev);
                }
            }
        }
        for i in (0..xs.len()).filter(|&i| !used_a[i]) {
            let (class, ev) = membership(&fx[i], &rx, "variant_removed");
            self.classify(class, &at(&fx[i]), ev);
        }
    }
}

/// A schema's value keywords (everything but applicators, definitions and a followed
/// `$ref`), as compared by the rows.
type Keywords<'v> = std::collections::BTreeMap<&'v str, Cow<'v, Value>>;

fn value_keywords<'v>(view: &View<'v>) -> Keywords<'v> {
    let mut out = Keywords::new();
    for k in view.keys() {
        // `required` is compared with `properties`, as one set of fields.
        let structural = k == "required"
            || matches!(
                keywords::role(k),
                Some(Role::Applicator | Role::Definitions | Role::Reference)
            );
        if structural || out.contains_key(k.as_str()) {
            continue;
        }
        if let Some(v) = view.get(k) {
            out.insert(k.as_str(), Cow::Borrowed(v));
        }
    }
    if let Some(r) = view.get("$ref") {
        out.insert("$ref", Cow::Borrowed(r));
    }
    out
}

/// The largest integer a JSON number holds exactly (zod's `.int()` bounds).
const SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// On an integer-only schema, every bound is rewritten as the inclusive bound on
/// integers it amounts to (`exclusiveMinimum: 0` is `minimum: 1`), and a bound at or
/// beyond ±(2^53 − 1) is dropped: no integer a JSON number can hold lies past it.
fn normalise_bounds(kv: &mut Keywords<'_>) {
    let integer = match kv.get("type").map(|v| v.as_ref()) {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => {
            ts.iter().any(|t| t == "integer") && ts.iter().all(|t| t == "integer" || t == "null")
        }
        _ => false,
    };
    if !integer {
        return;
    }
    let num = |kv: &Keywords<'_>, k: &str| kv.get(k).and_then(|v| v.as_f64());
    let lower = [
        num(kv, "minimum").map(f64::ceil),
        num(kv, "exclusiveMinimum").map(|x| x.floor() + 1.0),
    ];
    let upper = [
        num(kv, "maximum").map(f64::floor),
        num(kv, "exclusiveMaximum").map(|x| x.ceil() - 1.0),
    ];
    let lo = lower.into_iter().flatten().reduce(f64::max);
    let hi = upper.into_iter().flatten().reduce(f64::min);
    for (k, parsed) in [
        ("minimum", lower[0]),
        ("exclusiveMinimum", lower[1]),
        ("maximum", upper[0]),
        ("exclusiveMaximum", upper[1]),
    ] {
        if parsed.is_some() {
            kv.remove(k);
        }
    }
    let as_value = |x: f64| {
        if x.abs() <= SAFE_INTEGER {
            Value::from(x as i64)
        } else {
            serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
        }
    };
    if let Some(lo) = lo.filter(|&x| x > -SAFE_INTEGER) {
        kv.insert("minimum", Cow::Owned(as_value(lo)));
    }
    if let Some(hi) = hi.filter(|&x| x < SAFE_INTEGER) {
        kv.insert("maximum", Cow::Owned(as_value(hi)));
    }
}

/// `const: x` on one side and `enum` on the other: compare `const` as `enum: [x]`,
/// so `enum: ["x"]` against `const: "x"` is no change.
fn align_const(kv: &mut [Keywords<'_>; 2]) {
    for (i, j) in [(0, 1), (1, 0)] {
        let lone_const = kv[i].contains_key("const") && !kv[i].contains_key("enum");
        let lone_enum = kv[j].contains_key("enum") && !kv[j].contains_key("const");
        if lone_const && lone_enum {
            if let Some(c) = kv[i].remove("const") {
                kv[i].insert("enum", Cow::Owned(Value::Array(vec![c.into_owned()])));
            }
        }
    }
}

/// `dependentRequired` as a set of `"name → dependent"` pairs.
fn name_pairs(v: &Value) -> Value {
    let Some(map) = v.as_object() else {
        return v.clone();
    };
    let mut out = Vec::new();
    for (k, names) in map {
        for n in names.as_array().into_iter().flatten() {
            out.push(Value::String(format!(
                "{k} → {}",
                n.as_str().unwrap_or_default()
            )));
        }
    }
    Value::Array(out)
}

fn is_list(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Array(_)))
}

/// A map of subschemas (absent: empty); `None` when it is not an object.
fn as_map(v: Option<&Value>) -> Option<&Map<String, Value>> {
    match v {
        None => Some(EMPTY.get_or_init(Map::new)),
        Some(Value::Object(m)) => Some(m),
        Some(_) => None,
    }
}

/// An object that accepts no property it does not declare.
fn closed_object(v: &View<'_>) -> bool {
    matches!(v.get("additionalProperties"), Some(Value::Bool(false)))
        || matches!(v.get("unevaluatedProperties"), Some(Value::Bool(false)))
}

/// A tuple's keyword, positions and rest schema: 2020-12 `prefixItems` + `items`, or
/// draft-07 list `items` + `additionalItems`.
fn tuple_parts<'v>(v: &View<'v>) -> Option<(&'static str, &'v Vec<Value>, Option<&'v Value>)> {
    if let Some(Value::Array(xs)) = v.get("prefixItems") {
        return Some(("prefixItems", xs, v.get("items")));
    }
    if let Some(Value::Array(xs)) = v.get("items") {
        return Some(("items", xs, v.get("additionalItems")));
    }
    None
}

/// A variant seen through its `$ref`s: a schema that is only a `$ref` (and
/// annotations) stands for its target.
fn through_refs<'v>(root: &'v Value, mut v: &'v Value) -> &'v Value {
    for _ in 0..16 {
        let Some(m) = v.as_object() else { return v };
        let Some(Value::String(r)) = m.get("$ref") else {
            return v;
        };
        if !m.keys().all(|k| k == "$ref" || keywords::is_annotation(k)) {
            return v;
        }
        match resolve(root, r) {
            Some(t) => v = t,
            None => return v,
        }
    }
    v
}

/// The variants of an `anyOf` / `oneOf`, with each variant that is (through its
/// `$ref`s) nothing but an `anyOf` or `oneOf` opened up into its own variants; each
/// with its path below the keyword (`[0]`, `[0].oneOf[1]`).
fn flatten<'v>(root: &'v Value, keyword: &str, list: &'v [Value]) -> Vec<(String, &'v Value)> {
    // Each variant with its position (indexes down the nesting), to keep the written order.
    let mut out: Vec<(Vec<usize>, String, &'v Value)> = Vec::new();
    let mut stack: Vec<(Vec<usize>, String, &'v [Value], usize)> =
        vec![(Vec::new(), String::new(), list, 0)];
    while let Some((at, prefix, items, depth)) = stack.pop() {
        for (i, v) in items.iter().enumerate() {
            let here = format!("{prefix}[{i}]");
            let mut position = at.clone();
            position.push(i);
            let seen = through_refs(root, v);
            let inner = if keyword == "allOf" || depth >= 8 {
                None
            } else {
                seen.as_object().and_then(|m| {
                    ["anyOf", "oneOf"].into_iter().find_map(|k| {
                        let only = m.keys().all(|x| x == k || keywords::is_annotation(x));
                        match m.get(k) {
                            Some(Value::Array(xs)) if only && (k == keyword || k == "oneOf") => {
                                Some((k, xs))
                            }
                            _ => None,
                        }
                    })
                })
            };
            match inner {
                Some((k, xs)) => stack.push((position, format!("{here}.{k}"), xs, depth + 1)),
                None => out.push((position, here, v)),
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, path, v)| (path, v)).collect()
}

/// A schema taken apart for the simple containment cases: its `enum` (or `const`), its
/// `type` set, and the rest apart from annotations. `None` when it is not a plain object
/// or holds a `$ref` anywhere (what that means depends on the root it is read in).
struct Parts {
    values: Option<Vec<Value>>,
    types: Option<Vec<String>>,
    rest: std::collections::BTreeMap<String, Value>,
}

fn parts(s: &Value) -> Option<Parts> {
    let m = s.as_object()?;
    if s.to_string().contains("\"$ref\"") {
        return None;
    }
    let mut rest: std::collections::BTreeMap<String, Value> = m
        .iter()
        .filter(|(k, _)| !keywords::is_annotation(k))
        .map(|(k, x)| (k.clone(), x.clone()))
        .collect();
    let values = match (rest.remove("const"), rest.remove("enum")) {
        (Some(c), None) => Some(vec![c]),
        (None, Some(Value::Array(e))) => Some(e),
        (None, None) => None,
        _ => return None,
    };
    let types = match rest.remove("type") {
        None => None,
        Some(Value::String(t)) => Some(vec![t]),
        Some(Value::Array(ts)) => Some(
            ts.iter()
                .map(|t| t.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()?,
        ),
        Some(_) => return None,
    };
    Some(Parts {
        values,
        types,
        rest,
    })
}

/// Type `t` is within the type set `ts` (an integer is a number).
fn type_within(t: &str, ts: &[String]) -> bool {
    ts.iter()
        .any(|x| x == t || (t == "integer" && x == "number"))
}

/// Every value `v` accepts, `s` accepts, by the simple cases: the two are equal apart
/// from annotations, but `v`'s `enum` (or `const`) may be within `s`'s and `v`'s `type`
/// within `s`'s. Anything else: `false` (not known).
fn covers(s: &Value, v: &Value) -> bool {
    let (Some(s), Some(v)) = (parts(s), parts(v)) else {
        return false;
    };
    let values_ok = match (&s.values, &v.values) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(sv), Some(vv)) => vv.iter().all(|x| sv.contains(x)),
    };
    let types_ok = match (&s.types, &v.types) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(st), Some(vt)) => vt.iter().all(|t| type_within(t, st)),
    };
    values_ok && types_ok && s.rest == v.rest
}

/// `s` accepts exactly what the variants accept together: each variant is within `s`
/// (`covers`), and each of `s`'s values and types is some variant's (`type: [string,
/// number]` against `anyOf: [{type: string}, {type: number}]`).
fn split_into(s: &Value, variants: &[&Value]) -> bool {
    if variants.is_empty() || !variants.iter().all(|v| covers(s, v)) {
        return false;
    }
    let (Some(sp), Some(vps)) = (
        parts(s),
        variants
            .iter()
            .map(|v| parts(v))
            .collect::<Option<Vec<_>>>(),
    ) else {
        return false;
    };
    // Each value of `s` (each of its listed values, or else each of its types whole) is
    // some one variant's: value and type together.
    let json_type_within = |x: &Value, ts: &[String]| {
        let t = match x {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        type_within(t, ts)
    };
    match (&sp.values, &sp.types) {
        (Some(values), _) => values.iter().all(|x| {
            vps.iter().any(|p| {
                p.values.as_ref().is_none_or(|vs| vs.contains(x))
                    && p.types.as_ref().is_none_or(|ts| json_type_within(x, ts))
            })
        }),
        (None, Some(types)) => types.iter().all(|t| {
            vps.iter()
                .any(|p| p.values.is_none() && p.types.as_ref().is_none_or(|ts| type_within(t, ts)))
        }),
        (None, None) => vps.iter().any(|p| p.values.is_none() && p.types.is_none()),
    }
}

/// Variants no value can match twice: each allows one JSON type no other allows
/// (integer counts as number), or each requires a property, the same one in all, whose
/// `const` (or one-value `enum`) differs between them.
fn disjoint(variants: &[&Value]) -> bool {
    let single_type = |v: &Value| -> Option<String> {
        let t = v.get("type")?.as_str()?;
        Some(if t == "integer" {
            "number".into()
        } else {
            t.to_string()
        })
    };
    // Each variant lists its values (`enum` or `const`), and no value is listed twice.
    let listed: Option<Vec<Vec<Value>>> = variants
        .iter()
        .map(|v| match (v.get("const"), v.get("enum")) {
            (Some(c), None) => Some(vec![c.clone()]),
            (None, Some(Value::Array(e))) => Some(e.clone()),
            _ => None,
        })
        .collect();
    if let Some(listed) = listed {
        let all: Vec<&Value> = listed.iter().flatten().collect();
        if (0..all.len()).all(|i| all[..i].iter().all(|x| *x != all[i])) {
            return true;
        }
    }
    let types: Option<Vec<String>> = variants.iter().map(|v| single_type(v)).collect();
    if let Some(types) = types {
        let distinct: BTreeSet<&String> = types.iter().collect();
        if distinct.len() == types.len() {
            return true;
        }
    }
    let tag = |v: &Value, name: &str| -> Option<String> {
        let required = v.get("required")?.as_array()?.iter().any(|r| r == name);
        let p = v.get("properties")?.get(name)?;
        let value = p
            .get("const")
            .or_else(|| match p.get("enum")?.as_array()?.as_slice() {
                [one] => Some(one),
                _ => None,
            })?;
        required.then(|| value.to_string())
    };
    let Some(first) = variants.first() else {
        return true;
    };
    let names = first
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    names.iter().any(|name| {
        let tags: Option<Vec<String>> = variants.iter().map(|v| tag(v, name)).collect();
        tags.is_some_and(|t| t.iter().collect::<BTreeSet<_>>().len() == t.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn split(s: Value, vs: &[Value]) -> bool {
        split_into(&s, &vs.iter().collect::<Vec<_>>())
    }

    #[test]
    fn a_union_splits_a_plain_schema_only_when_value_and_type_meet_in_one_variant() {
        let ab = json!({"type": "string", "enum": ["a", "b"]});
        assert!(split(
            ab.clone(),
            &[
                json!({"type": "string", "enum": ["a"]}),
                json!({"type": "string", "const": "b"})
            ]
        ));
        assert!(!split(ab, &[json!({"type": "string", "enum": ["a"]})]));
        assert!(split(
            json!({"type": ["string", "number"]}),
            &[json!({"type": "string"}), json!({"type": "number"})]
        ));
        // Integers are numbers, not the other way round.
        assert!(!split(
            json!({"type": ["string", "number"]}),
            &[json!({"type": "string"}), json!({"type": "integer"})]
        ));
        // 1 is listed by one variant and typed by another: no variant accepts it.
        assert!(!split(
            json!({"type": ["string", "integer"], "enum": ["a", 1]}),
            &[
                json!({"type": "string", "enum": ["a", 1]}),
                json!({"type": "integer", "enum": ["a"]})
            ]
        ));
        // A variant that constrains anything else is not within the plain schema.
        assert!(!split(
            json!({"type": "string"}),
            &[
                json!({"type": "string", "maxLength": 3}),
                json!({"type": "string"})
            ]
        ));
        assert!(!split(
            json!({"type": "string", "enum": ["a"]}),
            &[json!({"type": "string"})]
        ));
    }
}
