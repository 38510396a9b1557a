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
}

impl<'v> View<'v> {
    fn new(root: &'v Value, node: Option<&'v Value>) -> View<'v> {
        let mut view = View {
            layers: Vec::new(),
            followed: false,
            opaque: None,
            unresolved: None,
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
        self.layers.iter().find_map(|layer| layer.get(key))
    }

    fn keys(&self) -> impl Iterator<Item = &'v String> + '_ {
        self.layers.iter().flat_map(|l| l.keys())
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
        });
    }

    fn step(&mut self, task: Task<'v>) {
        match (task.a, task.b) {
            (Some(a), Some(b)) if same_without_refs(a, b) => return,
            (a, b) if trivial(a) && trivial(b) => return,
            _ => {}
        }
        let va = View::new(self.roots[0], task.a);
        let vb = View::new(self.roots[1], task.b);
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

        let keywords: BTreeSet<&'v String> = va.keys().chain(vb.keys()).collect();
        for keyword in keywords {
            let k = keyword.as_str();
            if HANDLED.contains(&k) {
                continue;
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
                    if a != b {
                        self.unhandled(k, path, a, b);
                    }
                }
            }
        }

        self.fields(&va, &vb, path, task.flat, &chain);
        self.items(&va, &vb, path, &chain);
        self.additional(&va, &vb, path, &chain);
        for keyword in ["anyOf", "oneOf", "allOf", "prefixItems"] {
            self.variants(keyword, va.get(keyword), vb.get(keyword), path, &chain);
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
        for name in names {
            let sa = pa.and_then(|m| m.get(name));
            let sb = pb.and_then(|m| m.get(name));
            let (req_a, req_b) = (ra.contains(name), rb.contains(name));
            let child = if flat {
                join(path, name)
            } else {
                join(&format!("{path}.properties"), name)
            };
            let there_a = sa.is_some() || req_a;
            let there_b = sb.is_some() || req_b;
            let cond = |r: bool| {
                Some(if r {
                    Condition::Required
                } else {
                    Condition::Optional
                })
            };
            if !there_a {
                let mut ev = Event::new("added");
                ev.cond = cond(req_b);
                self.classify("properties", &child, ev);
                continue;
            }
            if !there_b {
                let mut ev = Event::new("removed");
                ev.cond = cond(req_a);
                self.classify("properties", &child, ev);
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
        for (j, y) in ys.iter().enumerate() {
            if let Some(i) = (0..xs.len()).find(|&i| !used_a[i] && xs[i] == *y) {
                used_a[i] = true;
                pair_of_b[j] = Some(i);
            }
        }
        let mut rest_a = (0..xs.len()).filter(|&i| !used_a[i]);
        for (j, y) in ys.iter().enumerate() {
            let i = match pair_of_b[j] {
                Some(i) => Some(i),
                None => rest_a.next(),
            };
            match i {
                Some(i) => self.push(Some(&xs[i]), Some(y), at(j), chain),
                None => self.classify(class, &at(j), Event::new("variant_added")),
            }
        }
        for i in rest_a {
            self.classify(class, &at(i), Event::new("variant_removed"));
        }
    }
}
