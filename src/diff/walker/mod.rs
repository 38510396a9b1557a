//! The generic JSON Schema walker: compares two schemas keyword by keyword, following
//! `$ref`, and reports what it finds through the rule tables.
//!
//! It is iterative (an explicit work list, so nesting depth cannot overflow the stack),
//! cycle-safe (a `$ref` pair already being compared on the way down is not entered
//! again) and bounded (a work budget; running out is itself reported as a change, so a
//! break cannot hide behind it).
//!
//! `mod.rs` holds the loop (the work list, the budget, the emitter glue and one node's
//! value keywords); `view` reads a schema through its `$ref`s, `equal` decides what
//! counts as the same, `structural` walks the applicators.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::{compare, Emitter, Event, Subject};
use crate::keywords::{self, Role};
use crate::path::{Path, Step, Trail, Trails};
use crate::rules::{Condition, Direction, Severity, ANY_KEYWORD, EXTENSION_KEYWORD};

mod equal;
mod structural;
mod view;

use equal::*;
use view::*;

pub(crate) use equal::compared_keywords;
pub(crate) use view::resolve;

/// The keyword rows on the boolean schema `false` (which accepts no value) are bound to.
const FALSE_SCHEMA: &str = "false";

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
pub(crate) fn compare_schemas<'v>(
    em: &mut Emitter<'_>,
    budget: usize,
    subject: &Subject,
    direction: Direction,
    path: &'v Path,
    flat: bool,
    a: Option<&'v Value>,
    b: Option<&'v Value>,
) {
    let empty = Value::Object(Map::new());
    let roots = [a.unwrap_or(&empty), b.unwrap_or(&empty)];
    let mut trails = Trails::default();
    let start = trails.of(path);
    let mut walk = Walk {
        em,
        subject,
        direction,
        roots,
        root: path.first(),
        trails,
        work: vec![Task {
            a,
            b,
            path: start,
            flat,
            chain: None,
            values_only: [false, false],
            after_variant: None,
        }],
        visited: 0,
        budget,
        expansions: HashMap::new(),
        unevaluated: [a, b].into_iter().flatten().any(mentions_unevaluated),
        cover_budget: budget,
        cover_depth: 0,
        overlap_budget: budget,
    };
    walk.run();
}

/// Whether a key or a string anywhere in `v` begins with `unevaluated` (a keyword
/// `unevaluatedProperties`/`unevaluatedItems`, or something that may read as one):
/// cautious, as a search of the schema's text would be. Iterative: no stack to
/// overflow, no text built.
fn mentions_unevaluated(v: &Value) -> bool {
    let mut work = vec![v];
    while let Some(v) = work.pop() {
        match v {
            Value::String(s) if s.starts_with("unevaluated") => return true,
            Value::Array(items) => work.extend(items),
            Value::Object(map) => {
                if map.keys().any(|k| k.starts_with("unevaluated")) {
                    return true;
                }
                work.extend(map.values());
            }
            _ => {}
        }
    }
    false
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
    path: Trail,
    flat: bool,
    chain: Option<Rc<Chain>>,
    /// Compare only the value keywords of this side (it was lifted into a variant).
    values_only: [bool; 2],
    /// Not a comparison but a bracket around a variant's subtree: the opening one
    /// (`true`, popped just before it) notes how many changes there were; the closing
    /// one (popped just after) judges the changes that came (see [`Mark`]).
    after_variant: Option<(Rc<std::cell::Cell<usize>>, bool, Mark<'v>)>,
}

/// What the closing bracket around a variant's subtree does with the changes inside.
#[derive(Clone)]
enum Mark<'v> {
    /// A `oneOf` variant whose siblings it may overlap: any change inside is reported
    /// as the variant changed (it has no fixed direction).
    OneOf,
    /// An `anyOf` variant: breaking changes inside are no change to the union when
    /// another variant covers it (see [`Cover`]).
    Cover(Rc<Cover<'v>>),
}

/// For a pair of `anyOf` variants: in input, the old variant and the new list (every
/// value the old variant accepted still passes when some new variant holds it whole);
/// in output, the new variant and the old list (every value it may produce now was
/// allowed before).
struct Cover<'v> {
    variant: &'v Value,
    list: Rc<CoverList<'v>>,
}

/// The variants a [`Cover`] may find its variant in, each with its path below the
/// union's parent (`anyOf[1]`); their sizes, smallest first, once a test needs them
/// (`None`: past the budget).
struct CoverList<'v> {
    variants: Vec<(Vec<Step<'v>>, &'v Value)>,
    by_size: std::cell::OnceCell<Option<Vec<(usize, usize)>>>,
}

struct Walk<'w, 'r, 'v> {
    em: &'w mut Emitter<'r>,
    subject: &'w Subject,
    direction: Direction,
    roots: [&'v Value; 2],
    /// The element field the walk started from (where a budget report goes).
    root: Path,
    /// The paths of the node pairs, the work list's and those reported.
    trails: Trails<'v>,
    work: Vec<Task<'v>>,
    visited: usize,
    budget: usize,
    expansions: HashMap<(usize, usize), u8>,
    /// Either schema holds `unevaluatedProperties` / `unevaluatedItems`, which see
    /// what the variants of a union evaluate: a change inside a variant can then change
    /// what passes even when another variant holds the old one whole.
    unevaluated: bool,
    /// Schema values the containment tests for covered `anyOf` variants may still read
    /// (as many as the walk may visit node pairs).
    cover_budget: usize,
    /// How many `anyOf` variant brackets that may fold their changes into a patch line
    /// ([`Mark::Cover`]) the walk is inside.
    cover_depth: usize,
    /// Schema values the search for a value two new `oneOf` variants both accept
    /// (`overlap`) may still read.
    overlap_budget: usize,
}

impl<'w, 'r, 'v> Walk<'w, 'r, 'v> {
    fn run(&mut self) {
        while let Some(task) = self.work.pop() {
            self.visited += 1;
            if self.visited > self.budget {
                self.exhausted();
                return;
            }
            if let Some((since, opening, mark)) = task.after_variant {
                if opening {
                    since.set(self.em.changes.len());
                    if matches!(mark, Mark::Cover(_)) {
                        self.cover_depth += 1;
                    }
                    continue;
                }
                if matches!(mark, Mark::Cover(_)) {
                    self.cover_depth = self.cover_depth.saturating_sub(1);
                }
                match mark {
                    Mark::OneOf if self.em.changes.len() > since.get() => {
                        let mut ev = Event::new("variant_changed");
                        ev.hint = Some(
                            "with oneOf, a variant that accepts more can make values match two variants, and one that accepts less can make them match one".into(),
                        );
                        self.classify("oneOf", task.path, ev);
                    }
                    Mark::OneOf => {}
                    Mark::Cover(cover) => self.covered(&cover, since.get(), task.path),
                }
                continue;
            }
            self.step(task);
        }
    }

    /// Report that the work budget ran out (breaking: what was not compared may hide a
    /// break) and stop the walk.
    fn exhausted(&mut self) {
        let rule = self.em.rules.walk_limit();
        let mut ev = Event::new("exceeded");
        ev.after = Some(Value::from(self.budget as u64));
        self.em.emit(
            rule,
            self.subject,
            Some(self.root.clone()),
            Some(self.direction),
            "$walk",
            ev,
        );
        self.work.clear();
        self.visited = self.budget.saturating_add(1);
    }

    fn emit(&mut self, rule: usize, path: Trail, name: &str, ev: Event<'_>) {
        self.em.emit(
            rule,
            self.subject,
            Some(self.trails.path(path)),
            Some(self.direction),
            name,
            ev,
        );
    }

    /// Classify `ev` on `keyword` by the rows bound to it, or as unhandled.
    fn classify(&mut self, keyword: &str, path: Trail, ev: Event<'_>) {
        let rules = self.em.rules;
        let rule = self
            .binding(keyword)
            .and_then(|b| rules.pick(b, ev.event, ev.cond))
            .unwrap_or_else(|| rules.schema_unhandled());
        self.emit(rule, path, keyword, ev);
    }

    fn unhandled(&mut self, keyword: &str, path: Trail, a: Option<&Value>, b: Option<&Value>) {
        let rule = self.em.rules.schema_unhandled();
        self.emit(rule, path, keyword, Event::new("changed").values(a, b));
    }

    fn push(
        &mut self,
        a: Option<&'v Value>,
        b: Option<&'v Value>,
        path: Trail,
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
            // The boolean schema `false` accepts nothing: against a schema that accepts
            // something it is a narrowing (or, the other way, a widening). Any other
            // non-schema value is compared as a value.
            let nothing = |v: Option<&Value>| matches!(v, Some(Value::Bool(false)));
            let event = match (nothing(task.a), nothing(task.b)) {
                (false, true) if va.opaque.is_none() => Some("added"),
                (true, false) if vb.opaque.is_none() => Some("removed"),
                _ => None,
            };
            match event {
                Some(event) => {
                    let ev = Event::new(event).values(task.a, task.b);
                    self.classify(FALSE_SCHEMA, task.path, ev);
                }
                None if task.a != task.b => self.unhandled("(schema)", task.path, task.a, task.b),
                None => {}
            }
            return;
        }
        let mut chain = task.chain.clone();
        if va.followed || vb.followed {
            let pair = (va.identity(), vb.identity());
            if on_chain(&chain, pair) {
                return; // the same two definitions are already being compared above
            }
            // Only uses whose reports stand count: inside a variant whose changes a
            // covering variant may fold into a patch line, a use is expanded (within the
            // walk budget) but does not count, so a later use elsewhere is still reported.
            let seen = self.expansions.entry(pair).or_insert(0);
            if *seen >= REF_EXPANSIONS {
                return; // already reported under REF_EXPANSIONS other paths
            }
            if self.cover_depth == 0 {
                *seen += 1;
            }
            chain = Some(Rc::new(Chain {
                pair,
                parent: chain,
            }));
        }
        let path = task.path;

        if self.unmodelled_ref(&va, &vb, &task) {
            return;
        }

        self.overlap(&va, &vb, &task);

        let lift = self.lift(&va, &vb, &task);

        // The value keywords of each side, normalised so that equivalent spellings
        // compare equal (integer bounds, a one-value enum against const).
        let mut kv = [value_keywords(&va), value_keywords(&vb)];
        normalise_bounds(&mut kv[0]);
        normalise_bounds(&mut kv[1]);
        align_safe_bounds(&mut kv);
        align_const(&mut kv);

        // A type changed to a disjoint one: one change, and nothing under it is listed
        // (every other difference there follows from it).
        if lift.is_none() && self.type_replaced(&kv, path) {
            return;
        }

        self.compare_values(&kv, lift.is_some(), path);

        if let Some((kw, composed_side)) = lift {
            self.lifted(&task, kw, composed_side, path, &chain);
            return;
        }
        self.applicators(&va, &vb, path, task.flat, &chain);
    }

    /// What a `$ref` leaves unmodelled here, reported (`true`: nothing else here can be
    /// judged).
    fn unmodelled_ref(&mut self, va: &View<'v>, vb: &View<'v>, task: &Task<'v>) -> bool {
        let path = task.path;
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
            return true;
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
                let (before, after) = (layers(va), layers(vb));
                let mut ev = Event::new("changed").values(Some(&before), Some(&after));
                ev.hint = Some(format!(
                    "`{kw}` beside a $ref applies on its own, next to what the $ref points at; that combination is not modelled"
                ));
                self.emit(self.em.rules.schema_unhandled(), path, kw, ev);
                return true;
            }
        }
        false
    }

    /// One side a plain schema, the other a union of it and more: the union's keyword
    /// and side (the plain schema is then compared as one of the variants).
    fn lift(&self, va: &View<'v>, vb: &View<'v>, task: &Task<'v>) -> Option<(&'static str, usize)> {
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
        match (va.bare_composition(false), vb.bare_composition(false)) {
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
        }
    }

    /// Compare the value keywords `kv` of each side, by their rows, or as values (only
    /// the annotations when the node was `lifted` into a variant, which compares the rest).
    fn compare_values(&mut self, kv: &[Keywords<'v>; 2], lifted: bool, path: Trail) {
        let keywords: BTreeSet<&'v str> = kv[0].keys().chain(kv[1].keys()).copied().collect();
        for k in keywords {
            if lifted && !keywords::is_annotation(k) {
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
                    // Borrowed: an event copies only what it reports (a `default` can
                    // be most of a file, and a copy of it as values many times that).
                    let pairs;
                    let (a, b) = if k == "dependentRequired" {
                        pairs = (a.map(name_pairs), b.map(name_pairs));
                        (pairs.0.as_ref(), pairs.1.as_ref())
                    } else {
                        (a, b)
                    };
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

    /// The keywords (`[before, after]`) when one side is an `anyOf` and the other a
    /// `oneOf` (each alone), and whether the `oneOf`'s variants may overlap. Its
    /// variants are compared with the `anyOf`'s as one `anyOf` list: a `oneOf` whose
    /// variants no value can match twice accepts what `anyOf` over them accepts, and
    /// one whose variants may overlap accepts less (a value two of them accept fails).
    fn same_union(&self, va: &View<'v>, vb: &View<'v>) -> Option<([&'static str; 2], bool)> {
        let only = |v: &View<'v>| match (v.get("anyOf"), v.get("oneOf")) {
            (Some(Value::Array(_)), None) => Some(("anyOf", None)),
            (None, Some(Value::Array(xs))) => Some(("oneOf", Some(xs))),
            _ => None,
        };
        let ((sa, xa), (sb, xb)) = (only(va)?, only(vb)?);
        if sa == sb {
            return None;
        }
        let (root, xs) = match (xa, xb) {
            (Some(xs), None) => (self.roots[0], xs),
            (None, Some(xs)) => (self.roots[1], xs),
            _ => return None,
        };
        let seen: Vec<&Value> = xs.iter().collect();
        Some(([sa, sb], !disjoint(root, &seen)))
    }

    /// Report a `type` that changed to a disjoint set; `true` when it did (the caller
    /// then compares nothing else at this node).
    fn type_replaced(&mut self, kv: &[Keywords<'v>; 2], path: Trail) -> bool {
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
}

#[cfg(test)]
mod tests {
    use crate::diff::surface::diff;
    use crate::keywords::{testing, TABLE};
    use crate::lockfile::Surface;
    use crate::rules::{Rules, Severity};
    use serde_json::{json, Value};

    /// Changes between two tools whose input schemas are `a` and `b`, with the keyword
    /// table plus `row`.
    fn changes(row: &str, a: Value, b: Value) -> Vec<crate::diff::Change> {
        let _table = testing::install(&format!("{}\n[[keyword]]\n{row}\n", TABLE.1)).unwrap();
        let rules = Rules::from_tables(crate::rules::TABLES).unwrap();
        let tool = |schema: Value| {
            let mut m = serde_json::Map::new();
            m.insert("name".into(), Value::from("t"));
            m.insert("inputSchema".into(), schema);
            m
        };
        let (mut sa, mut sb) = (Surface::default(), Surface::default());
        sa.tools.push(tool(a));
        sb.tools.push(tool(b));
        diff(&rules, &sa, &sb)
    }

    /// A new applicator row is walked by its comparator: a change inside it is
    /// reported (it once gave "0 change(s)", where without the row the keyword was
    /// compared as a value and reported as unhandled).
    #[test]
    fn a_new_applicator_row_is_walked_by_its_comparator() {
        let row = "name = \"dependentThings\"\nrole = \"applicator\"\nholds = \"map\"\npolarity = \"same\"\ncomparator = \"entries\"";
        let (a, b) = (
            json!({"type": "object", "dependentThings": {"x": {"type": "number"}}}),
            json!({"type": "object", "dependentThings": {"x": {"type": "integer"}}}),
        );
        let found = changes(row, a, b);
        assert_eq!(found.len(), 1, "{found:?}");
        let c = &found[0];
        assert_eq!(
            c.path.as_ref().map(ToString::to_string).as_deref(),
            Some("inputSchema.dependentThings.x")
        );
        assert_eq!(c.severity, Severity::Breaking);
        // An entry that comes: no row models it on this keyword, so it is unhandled.
        let found = changes(
            row,
            json!({"type": "object"}),
            json!({"type": "object", "dependentThings": {"x": {"type": "integer"}}}),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].severity, Severity::Breaking);
    }

    #[test]
    fn a_new_subschema_row_is_walked_in_the_direction_of_its_polarity() {
        let row = |polarity: &str| {
            format!("name = \"thing\"\nrole = \"applicator\"\nholds = \"schema\"\npolarity = \"{polarity}\"\ncomparator = \"subschema\"")
        };
        let (a, b) = (
            json!({"thing": {"type": "integer"}}),
            json!({"thing": {"type": "number"}}),
        );
        // Same polarity: a widened type inside, in input, is minor.
        let found = changes(&row("same"), a.clone(), b.clone());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].severity, Severity::Minor);
        // No fixed direction: compared as a value (no row: unhandled, breaking).
        let found = changes(&row("none"), a, b);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].severity, Severity::Breaking);
    }
}
