//! The applicators, walked pairwise: `properties` with `required` (fields), `items`,
//! tuples, `additionalProperties`, the variants of `anyOf` / `oneOf` / `allOf` (pairing,
//! flattening nested unions, a plain schema against a union), the one-subschema
//! applicators and the subschema maps. Each pushes child pairs onto the walk's work
//! list or classifies an event; the loop itself is in `mod.rs`.

use super::*;
use crate::diff::Change;
use crate::keywords::{Descent, Polarity};
use crate::path::Rest;
use crate::rules::Scope;
use crate::schema::validate::{validate_in, Truth};

/// The most variants a plain schema is tested against for containment (`within`,
/// `split_into`).
pub(super) const SMALL_UNION: usize = 64;

impl<'w, 'r, 'v> Walk<'w, 'r, 'v> {
    /// Every applicator of the vocabulary (`rules/keywords.toml`), walked by its
    /// comparator column in the order the table lists them. The match is exhaustive over
    /// the comparators the table accepts (`keywords::Descent`), so no applicator row can
    /// be passed by: a new one is walked as its comparator walks, and a change inside it
    /// is classified by the rows of the keywords there (or reported as unhandled).
    pub(super) fn applicators(
        &mut self,
        va: &View<'v>,
        vb: &View<'v>,
        path: Trail,
        flat: bool,
        chain: &Option<Rc<Chain>>,
    ) {
        let mut unions = None;
        for k in &keywords::vocabulary().keywords {
            let (Some(descent), Some(polarity)) = (k.comparator, k.polarity) else {
                continue;
            };
            let kw: &'static str = k.name.as_str();
            match descent {
                Descent::Fields => self.fields(kw, va, vb, path, flat, chain),
                Descent::Presence => self.items(kw, va, vb, path, chain),
                Descent::Variants if !k.unordered => self.tuple(kw, va, vb, path, chain),
                Descent::Variants => {
                    let swapped = *unions.get_or_insert_with(|| self.swapped(va, vb, path));
                    match swapped {
                        Some(spelled) if kw == "anyOf" => {
                            let (a, b) = (va.get(spelled[0]), vb.get(spelled[1]));
                            self.variants("anyOf", spelled, a, b, path, chain);
                        }
                        Some(_) if kw == "oneOf" => {}
                        _ => {
                            let (a, b) = (va.get(kw), vb.get(kw));
                            self.variants(kw, [kw; 2], a, b, path, chain);
                        }
                    }
                }
                Descent::Openness => self.additional(kw, va, vb, path, chain),
                Descent::Subschema if polarity == Polarity::None => self.as_value(kw, va, vb, path),
                Descent::Subschema => self.subschema(kw, va, vb, path, chain),
                Descent::Entries => self.entries(kw, va, vb, path, chain),
            }
        }
    }

    /// `anyOf` on one side, `oneOf` on the other (zod 4 writes a discriminated union as
    /// `oneOf` where zod 3 wrote `anyOf`): when the `oneOf` variants cannot overlap,
    /// both accept a value that matches any variant, and the lists compare as `anyOf`
    /// (the keyword each side spells, returned). When they may overlap, that is reported.
    fn swapped(&mut self, va: &View<'v>, vb: &View<'v>, path: Trail) -> Option<[&'static str; 2]> {
        let swapped = self.same_union(va, vb);
        if let Some(([_, after], true)) = swapped {
            // What the `oneOf` adds beyond `anyOf` over the same variants: a value two of
            // them accept fails. Coming, that narrows; going, it widens.
            let mut ev = Event::new(if after == "oneOf" { "added" } else { "removed" });
            ev.hint = Some(if after == "oneOf" {
                "it replaces an anyOf, and its variants may overlap: a value two of them accept no longer passes".into()
            } else {
                "an anyOf replaces it, and its variants may overlap: a value two of them accept passes now".into()
            });
            self.classify("oneOf", path, ev);
        }
        swapped.map(|s| s.0)
    }

    /// An applicator holding one subschema whose changes have a direction (`contains`,
    /// `propertyNames`, `then`, ...): walked.
    pub(super) fn subschema(
        &mut self,
        kw: &'static str,
        va: &View<'v>,
        vb: &View<'v>,
        path: Trail,
        chain: &Option<Rc<Chain>>,
    ) {
        // draft-07 `additionalItems` beside a list `items` is the tuple's rest.
        if kw == "additionalItems" && (is_list(va.get("items")) || is_list(vb.get("items"))) {
            return;
        }
        // `then` / `else` that come (or go) with their `if`: the `if` change stands
        // for the whole conditional.
        if matches!(kw, "then" | "else") && va.get("if").is_some() != vb.get("if").is_some() {
            return;
        }
        let (a, b) = (va.get(kw), vb.get(kw));
        // `contains: {}` still asks for one element; elsewhere `{}` means nothing, and
        // so does `propertyNames: {type: string}` (zod 4 writes it on every record):
        // a property name is always a string. Nor do annotations alone.
        let present = |v: Option<&Value>| match kw {
            "contains" => v.is_some(),
            "propertyNames" => !trivial(v) && !any_string(v) && !annotations_only(v),
            _ => !trivial(v),
        };
        let (pa, pb) = (present(a), present(b));
        if !pa && !pb && (kw != "propertyNames" || a == b) {
            return;
        }
        let child = self.trails.name(path, kw);
        match (pa, pb) {
            // Neither constrains anything, but their annotations may differ (a
            // description added): compared as schemas, the side that is absent
            // standing for `{type: string}` when the other says so (what it means
            // for a name), so only the annotations show.
            (false, false) if kw == "propertyNames" && a != b => {
                static ANY_STRING: std::sync::LazyLock<Value> =
                    std::sync::LazyLock::new(|| serde_json::json!({"type": "string"}));
                let stand_in = |x: Option<&'v Value>, y: Option<&'v Value>| {
                    // Only against `type: "string"` itself: against a list that
                    // holds it (`[string, null]`) the stand-in would read as a
                    // narrowed type.
                    let plain = y.and_then(|y| y.get("type")).and_then(Value::as_str);
                    if trivial(x) && any_string(y) && plain == Some("string") {
                        Some(&*ANY_STRING)
                    } else {
                        x
                    }
                };
                let (x, y) = (stand_in(a, b), stand_in(b, a));
                // Typed on one side only, with annotations on the other: a `type`
                // that means nothing here would show as a change; left out.
                if any_string(x) == any_string(y) {
                    self.push(x, y, child, chain);
                }
            }
            (false, false) => {}
            (false, true) => self.classify(kw, child, Event::new("added").values(a, b)),
            (true, false) => self.classify(kw, child, Event::new("removed").values(a, b)),
            (true, true) => self.push(a, b, child, chain),
        }
    }

    /// An applicator whose changes have no fixed direction (`polarity = "none"`: `not`,
    /// `if`, draft-07 `dependencies`): compared as a value.
    pub(super) fn as_value(&mut self, kw: &'static str, va: &View<'v>, vb: &View<'v>, path: Trail) {
        // An `if` with neither `then` nor `else` constrains nothing: its coming, going or
        // changing is no change to what passes.
        let inert = |v: &View<'v>| trivial(v.get("then")) && trivial(v.get("else"));
        let (a, b) = (va.get(kw), vb.get(kw));
        if kw == "if" && (a.is_none() || inert(va)) && (b.is_none() || inert(vb)) {
            return;
        }
        if a.is_none() && b.is_none() {
            return;
        }
        let child = self.trails.name(path, kw);
        match (a, b) {
            (None, None) => {}
            (None, Some(_)) => self.classify(kw, child, Event::new("added").values(a, b)),
            (Some(_), None) => self.classify(kw, child, Event::new("removed").values(a, b)),
            (Some(x), Some(y)) => {
                if !same_resolved(self.roots, x, y) {
                    let mut ev = Event::new("changed").values(a, b);
                    if x == y {
                        ev.hint = Some("a $ref inside points at a definition that changed".into());
                    }
                    self.classify(kw, child, ev);
                }
            }
        }
    }

    /// A map of subschemas (`patternProperties`, `dependentSchemas`), compared entry by
    /// entry. A pattern entry means the opposite in a closed object (it admits names)
    /// and in an open one (it constrains them).
    pub(super) fn entries(
        &mut self,
        kw: &'static str,
        va: &View<'v>,
        vb: &View<'v>,
        path: Trail,
        chain: &Option<Rc<Chain>>,
    ) {
        let (a, b) = (va.get(kw), vb.get(kw));
        if a.is_none() && b.is_none() {
            return;
        }
        let (Some(ma), Some(mb)) = (as_map(a), as_map(b)) else {
            return self.unhandled(kw, path, a, b);
        };
        let base = self.trails.name(path, kw);
        let keys: BTreeSet<&'v String> = ma.keys().chain(mb.keys()).collect();
        for key in keys {
            let child = self.trails.name(base, key);
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
                    self.classify(kw, child, ev);
                }
                (Some(_), None) => {
                    let mut ev = Event::new("entry_removed");
                    ev.cond = closed(vb);
                    ev.value = Some(Value::String(key.clone()));
                    self.classify(kw, child, ev);
                }
                (None, None) => {}
            }
        }
    }
    /// Tuples: 2020-12 `prefixItems` with `items` as the rest, or draft-07 list `items`
    /// with `additionalItems`. Each position compares against what the other side
    /// applies there: its own position, else its rest (`false` for a closed tuple).
    pub(super) fn tuple(
        &mut self,
        kw: &'static str,
        va: &View<'v>,
        vb: &View<'v>,
        path: Trail,
        chain: &Option<Rc<Chain>>,
    ) {
        // Positions that are no list on a side, and differ: not modelled.
        let (a, b) = (va.get(kw), vb.get(kw));
        if a != b && [a, b].iter().any(|v| v.is_some_and(|v| !v.is_array())) {
            return self.unhandled(kw, path, a, b);
        }
        // `prefixItems` has `items` for its rest (and draft-07's list `items` is a tuple
        // too); another list of positions has none.
        let parts = |v: &View<'v>| match (kw, v.get(kw)) {
            ("prefixItems", _) => tuple_parts(v),
            (_, Some(Value::Array(xs))) => Some((kw, xs, None)),
            _ => None,
        };
        // A side that is no tuple but constrains its items is a tuple of no positions
        // with that rest: each position of the other side's tuple is compared with it
        // (`items: {type: object}` against `prefixItems: [{type: string}], items: false`
        // accepts a string first item now).
        static NO_POSITIONS: Vec<Value> = Vec::new();
        let rest_only = |v: &View<'v>| {
            let items = v.get("items");
            (kw == "prefixItems" && !trivial(items) && !is_list(items)).then_some((
                kw,
                &NO_POSITIONS,
                items,
            ))
        };
        let (mut ta, mut tb) = (parts(va), parts(vb));
        match (ta.is_some(), tb.is_some()) {
            (false, true) => ta = rest_only(va),
            (true, false) => tb = rest_only(vb),
            _ => {}
        }
        let ((_, xs, rest_a), (kw_b, ys, rest_b)) = match (ta, tb) {
            (None, None) => return,
            (None, Some((spelled, _, _))) => {
                return self.classify(kw, path, Event::new("added").values(None, vb.get(spelled)))
            }
            (Some((spelled, _, _)), None) => {
                return self.classify(
                    kw,
                    path,
                    Event::new("removed").values(va.get(spelled), None),
                )
            }
            (Some(x), Some(y)) => (x, y),
        };
        let base = self.trails.name(path, kw_b);
        let cond = |rest: Option<&Value>| {
            Some(if matches!(rest, Some(Value::Bool(false))) {
                Condition::Closed
            } else {
                Condition::Open
            })
        };
        for i in 0..xs.len().max(ys.len()) {
            let at = self.trails.index(base, i);
            match (xs.get(i), ys.get(i)) {
                (Some(x), Some(y)) => self.push(Some(x), Some(y), at, chain),
                (None, Some(y)) => {
                    if trivial(rest_a) || matches!(rest_a, Some(Value::Bool(false))) {
                        let mut ev = Event::new("variant_added");
                        ev.cond = cond(rest_a);
                        self.classify(kw, at, ev);
                    } else {
                        self.push(rest_a, Some(y), at, chain);
                    }
                }
                (Some(x), None) => {
                    if trivial(rest_b) || matches!(rest_b, Some(Value::Bool(false))) {
                        let mut ev = Event::new("variant_removed");
                        ev.cond = cond(rest_b);
                        self.classify(kw, at, ev);
                    } else {
                        self.push(Some(x), rest_b, at, chain);
                    }
                }
                (None, None) => {}
            }
        }
    }

    /// A `oneOf` the old node does not have, whose variants may overlap: when a value
    /// the old node accepts is found that two of the new variants both accept (and the
    /// new node with `anyOf` in place of its `oneOf` accepts too, so only the count of
    /// matching variants refuses it), the overlap is reported at the node as a change of
    /// its own (`overlap`). The witness module finds that instance again in the whole
    /// schema. Bounded: at most `SMALL_UNION` variants, `MAX_OVERLAP_CANDIDATES`
    /// candidates, and what the validations read counts against `overlap_budget`.
    pub(super) fn overlap(&mut self, va: &View<'v>, vb: &View<'v>, task: &Task<'v>) {
        if vb.values_only || va.get("oneOf").is_some() {
            return;
        }
        let (Some(a), Some(b)) = (task.a, task.b) else {
            return;
        };
        let node = through_refs(self.roots[1], b);
        let Some(Value::Array(list)) = node.get("oneOf") else {
            return;
        };
        if list.len() < 2 || list.len() > SMALL_UNION || node.get("anyOf").is_some() {
            return;
        }
        let resolved: Vec<&Value> = list
            .iter()
            .map(|v| through_refs(self.roots[1], v))
            .collect();
        if disjoint(self.roots[1], &resolved) {
            return;
        }
        let mut any = node.clone();
        if let Some(m) = any.as_object_mut() {
            if let Some(l) = m.remove("oneOf") {
                m.insert("anyOf".into(), l);
            }
        }
        let cost = size_up_to(a, self.overlap_budget) + 2 * size_up_to(node, self.overlap_budget);
        // Building the candidates reads both nodes too: charged once before.
        let Some(left) = self.overlap_budget.checked_sub(cost) else {
            return;
        };
        self.overlap_budget = left;
        let roots = self.roots;
        for x in crate::diff::witness::overlap::overlap_candidates(roots, a, b, list) {
            let Some(left) = self.overlap_budget.checked_sub(cost) else {
                return;
            };
            self.overlap_budget = left;
            if validate_in(roots[0], a, &x) != Truth::Yes
                || validate_in(roots[1], &any, &x) != Truth::Yes
            {
                continue;
            }
            let matched: Vec<usize> = (0..list.len())
                .filter(|&i| validate_in(roots[1], &list[i], &x) == Truth::Yes)
                .take(2)
                .collect();
            if let [i, j] = matched[..] {
                let mut ev = Event::new("overlap");
                ev.hint = Some(format!(
                    "`oneOf[{i}]` and `oneOf[{j}]` both accept a value the old schema accepted"
                ));
                return self.classify("oneOf", task.path, ev);
            }
        }
    }

    /// One side is a plain schema, the other a list of variants: pair the plain schema
    /// with its most similar variant, and report the other variants as added (or removed).
    pub(super) fn lifted(
        &mut self,
        task: &Task<'v>,
        kw: &'v str,
        composed_side: usize,
        path: Trail,
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
        let resolved: Vec<&Value> = variants
            .iter()
            .map(|v| through_refs(self.roots[composed_side], v))
            .collect();
        let plain_seen = through_refs(self.roots[plain_side], plain_value);
        // A variant equal to the plain schema (through `$ref`s on either side) pairs with
        // it; otherwise the most similar, each seen through its `$ref`s.
        let best = (0..variants.len())
            .find(|&j| same_resolved(roots, plain_value, &variants[j]))
            .or_else(|| (0..variants.len()).find(|&j| holds(roots, plain_value, &variants[j])))
            .or_else(|| {
                (0..variants.len())
                    .max_by_key(|&j| (similarity(plain_seen, resolved[j]), std::cmp::Reverse(j)))
            });
        // The plain schema is the union, split by value or by type: nothing changed.
        // Each containment test serialises the plain schema once per variant: only for
        // unions of a size people write, so a hostile one costs nothing extra (past it,
        // the variants are reported one by one, as before).
        let small = resolved.len() <= SMALL_UNION;
        // oneOf: a variant beside the plain schema's own may share values with it (and a
        // value two variants share is rejected, so no split covers it).
        let overlapping =
            kw == "oneOf" && resolved.len() > 1 && !disjoint(self.roots[composed_side], &resolved);
        if small && !overlapping && split_into(plain_seen, &resolved) {
            return;
        }
        // Every variant is within the plain schema (`{}` against `anyOf: [string,
        // number, null]`): the union only narrows it, whether `anyOf` or `oneOf` (which
        // accepts no more than `anyOf`). One change, the union itself coming (or going),
        // not one variant paired as if the others did not pass.
        // (When one variant also holds all of it, an `anyOf` is the plain schema: paired
        // below, the others skipped. A `oneOf` whose variants overlap still rejects a
        // value two of them accept.)
        if small
            && resolved.len() > 1
            && resolved.iter().all(|v| within(plain_seen, v))
            && (overlapping || !resolved.iter().any(|v| within(v, plain_seen)))
        {
            let (event, hint) = if composed_side == 1 {
                (
                    "added",
                    if kw == "oneOf" {
                        "every value its variants accept passed before, and only a value exactly one of them accepts passes now"
                    } else {
                        "every value its variants accept passed before, and only those pass now"
                    },
                )
            } else {
                (
                    "removed",
                    "every value its variants accepted passes now, and so do others",
                )
            };
            let mut ev = Event::new(event);
            ev.hint = Some(hint.into());
            return self.classify(kw, path, ev);
        }
        let cond = overlapping.then_some(Condition::Overlapping);
        let base = self.trails.name(path, kw);
        for (j, variant) in variants.iter().enumerate() {
            let at = self.trails.index(base, j);
            if Some(j) == best {
                let (a, b, values_only) = if composed_side == 1 {
                    (plain, Some(variant), [true, false])
                } else {
                    (Some(variant), plain, [false, true])
                };
                self.work.push(Task {
                    a,
                    b,
                    path: at,
                    flat: false,
                    chain: chain.clone(),
                    values_only,
                    after_variant: None,
                });
            } else if small && cond.is_none() && within(plain_seen, resolved[j]) {
                // Every value of this variant is a value of the plain schema on the other
                // side: `enum [a, b]` against `anyOf [enum [a], enum [b]]`.
            } else {
                let mut ev = Event::new(if composed_side == 1 {
                    "variant_added"
                } else {
                    "variant_removed"
                });
                ev.cond = cond;
                self.classify(kw, at, ev);
            }
        }
    }

    /// `properties` and `required`, compared together as a set of fields, each absent,
    /// optional or required.
    pub(super) fn fields(
        &mut self,
        kw: &'static str,
        va: &View<'v>,
        vb: &View<'v>,
        path: Trail,
        flat: bool,
        chain: &Option<Rc<Chain>>,
    ) {
        let (pa, pb) = (va.get(kw), vb.get(kw));
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
                self.unhandled(kw, path, pa, pb);
            }
            return;
        };
        let (Some(ra), Some(rb)) = (reqs(ra), reqs(rb)) else {
            if ra != rb {
                self.unhandled("required", path, ra, rb);
            }
            return;
        };
        let mut names: BTreeSet<&'v str> = BTreeSet::new();
        names.extend(pa.iter().flat_map(|m| m.keys().map(String::as_str)));
        names.extend(pb.iter().flat_map(|m| m.keys().map(String::as_str)));
        names.extend(ra.iter().copied());
        names.extend(rb.iter().copied());
        let mut came: Vec<Field<'v>> = Vec::new();
        let mut went: Vec<Field<'v>> = Vec::new();
        // Where each field's path starts (the root itself for a flat argument list).
        let declared = if flat || names.is_empty() {
            path
        } else {
            self.trails.name(path, kw)
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
            let child = self.trails.name(declared, name);
            if req_a != req_b {
                let mut ev = Event::new(if req_b { "required" } else { "optional" });
                ev.cond = cond(req_b);
                if req_b {
                    ev.hint = self.default_hint(sb);
                }
                self.classify(kw, child, ev);
            }
            // Declared on one side only (the other only lists it in `required`): compare
            // with what that side applies to an undeclared name: nothing in a closed
            // object, its `additionalProperties` schema, or else anything.
            match (sa, sb) {
                (Some(_), None) if closed_object(vb) => {
                    let mut ev = Event::new("removed");
                    ev.cond = Some(Condition::Closed);
                    self.classify(kw, child, ev);
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
        self.came_and_went(kw, &came, &went, vb, declared, chain);
    }

    /// The fields that came (`came`) and went (`went`): each `(name, schema, required)`,
    /// under `declared`. A field that went and one that came with the same schema may be
    /// a rename, and is said to look like one.
    #[allow(clippy::too_many_arguments)]
    fn came_and_went(
        &mut self,
        kw: &'static str,
        came: &[Field<'v>],
        went: &[Field<'v>],
        vb: &View<'v>,
        declared: Trail,
        chain: &Option<Rc<Chain>>,
    ) {
        let cond = |r: bool| {
            Some(if r {
                Condition::Required
            } else {
                Condition::Optional
            })
        };
        // A field that went and one that came with the same schema: still a removal and
        // an addition, but say that it looks like a rename.
        let renamed = |x: Option<&Value>, y: Option<&Value>| matches!((x, y), (Some(x), Some(y)) if alike_but_words(x, y));
        // Only a one-to-one match is a hint: among several alike fields, none is.
        let only = |list: &[Field<'v>], schema: Option<&Value>| {
            let mut hits = list.iter().filter(|(_, s, _)| renamed(*s, schema));
            match (hits.next(), hits.next()) {
                (Some((name, _, _)), None) => Some(*name),
                _ => None,
            }
        };
        for &(name, schema, req) in came {
            let mut ev = Event::new("added");
            ev.cond = cond(req);
            if req {
                ev.hint = self.default_hint(schema);
            }
            if let Some(old) = only(went, schema).filter(|old| {
                only(came, went.iter().find(|w| w.0 == *old).and_then(|w| w.1)) == Some(name)
            }) {
                ev.hint = Some(format!("looks renamed from `{old}`"));
            }
            let child = self.trails.name(declared, name);
            self.classify(kw, child, ev);
        }
        let closed_b = closed_object(vb);
        let extra_b = vb
            .get("additionalProperties")
            .filter(|v| !trivial(Some(v)) && !matches!(v, Value::Bool(false)));
        for &(name, schema, req) in went {
            let child = self.trails.name(declared, name);
            let mut ev = Event::new("removed");
            ev.cond = cond(req);
            if !req && closed_b {
                // Callers that still send it are now rejected.
                ev.cond = Some(Condition::Closed);
            } else if !req && extra_b.is_some() {
                // Still accepted, now as an additional property: its values must pass
                // the `additionalProperties` schema instead.
                self.push(schema, extra_b, child, chain);
            }
            if let Some(new) = only(came, schema).filter(|new| {
                only(went, came.iter().find(|c| c.0 == *new).and_then(|c| c.1)) == Some(name)
            }) {
                // An optional parameter gone from an open object still validates: a
                // caller's value is now silently dropped.
                let ignored =
                    self.direction == Direction::Input && !req && !closed_b && extra_b.is_none();
                ev.hint = Some(if ignored {
                    format!("looks renamed to `{new}`; a call that still sends `{name}` passes, and the server ignores it")
                } else {
                    format!("looks renamed to `{new}`")
                });
            }
            self.classify(kw, child, ev);
        }
    }

    pub(super) fn items(
        &mut self,
        kw: &'static str,
        va: &View<'v>,
        vb: &View<'v>,
        path: Trail,
        chain: &Option<Rc<Chain>>,
    ) {
        let (a, b) = (va.get(kw), vb.get(kw));
        // Draft 4-7 tuple form: `items` as a list is compared by `tuple`; here it
        // stands for no constraint on the items beyond the tuple.
        if is_list(a) && is_list(b) {
            return;
        }
        let (a, b) = (
            a.filter(|v| !is_list(Some(v))),
            b.filter(|v| !is_list(Some(v))),
        );
        let (ta, tb) = (trivial(a), trivial(b));
        if ta && tb {
            return;
        }
        let child = self.trails.name(path, kw);
        match (ta, tb) {
            (true, true) => {}
            (true, false) => self.classify(kw, child, Event::new("added")),
            (false, true) => self.classify(kw, child, Event::new("removed")),
            (false, false) => self.push(a, b, child, chain),
        }
    }

    /// `additionalProperties`: `false` closes the object; anything else leaves it open
    /// (a schema constrains the extra values, which we compare as a schema).
    pub(super) fn additional(
        &mut self,
        kw: &'static str,
        va: &View<'v>,
        vb: &View<'v>,
        path: Trail,
        chain: &Option<Rc<Chain>>,
    ) {
        let (a, b) = (va.get(kw), vb.get(kw));
        let closed = |v: Option<&Value>| matches!(v, Some(Value::Bool(false)));
        match (closed(a), closed(b)) {
            (false, true) => self.classify(kw, path, Event::new("restricted")),
            (true, false) => self.classify(kw, path, Event::new("relaxed")),
            (true, true) => {}
            (false, false) => {
                let child = self.trails.name(path, kw);
                self.push(a, b, child, chain);
            }
        }
    }

    /// `anyOf` / `oneOf` / `allOf`: lists of subschemas. Variants are seen through
    /// their `$ref`s, and a variant that is itself nothing but an `anyOf` / `oneOf` is
    /// opened up into its variants, so the same alternatives written another way pair
    /// up. Equal variants pair first (reordering is no change), then the most alike.
    /// `spelled`: the keyword each side writes, for the paths (`anyOf` on one side and
    /// `oneOf` on the other when they mean the same, compared as `keyword`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn variants(
        &mut self,
        keyword: &str,
        spelled: [&'v str; 2],
        a: Option<&'v Value>,
        b: Option<&'v Value>,
        path: Trail,
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
        let lists = [xs, ys];
        let (fx, fy) = (
            flatten(self.roots[0], keyword, xs),
            flatten(self.roots[1], keyword, ys),
        );
        let (xs, ys): (Vec<&'v Value>, Vec<&'v Value>) = (
            fx.iter().map(|f| f.1).collect(),
            fy.iter().map(|f| f.1).collect(),
        );
        let (under_a, under_b) = (
            self.trails.name(path, spelled[0]),
            self.trails.name(path, spelled[1]),
        );
        let (rx, ry): (Vec<&Value>, Vec<&Value>) = (
            xs.iter().map(|v| through_refs(self.roots[0], v)).collect(),
            ys.iter().map(|v| through_refs(self.roots[1], v)).collect(),
        );
        let Some((used_a, pair_of_b)) = self.pair_variants([&xs, &ys], [&rx, &ry]) else {
            return;
        };
        // oneOf accepts a value matching exactly one variant, so a change inside a
        // variant has no fixed direction, unless the variants cannot overlap (distinct
        // types or discriminator values).
        // A variant opened out of a nested `oneOf` (an `anyOf` variant that is only a
        // `oneOf`) keeps its exclusivity: it is judged as a oneOf variant. Whether the
        // variants may overlap is asked of the whole opened list, which can only say
        // "may" more often than the nested list alone.
        let one_of = |f: &Variant<'v>| keyword == "oneOf" || f.0.contains(&Step::Name("oneOf"));
        let may_overlap = !(disjoint(self.roots[0], &rx) && disjoint(self.roots[1], &ry));
        let bracket = |i: usize, j: usize| {
            (one_of(&fx[i]) || one_of(&fy[j])) && xs.len().max(ys.len()) > 1 && may_overlap
        };
        // A variant that comes into (goes out of) a oneOf list whose variants may overlap
        // changes which values match exactly one: a value the new variant shares with an
        // old one is rejected now; one two old variants shared may be accepted now.
        let membership = |f: &Variant<'v>, root: &Value, list: &[&Value], event: &'static str| {
            let mut ev = Event::new(event);
            if !one_of(f) {
                return (keyword, ev);
            }
            if list.len() > 1 && !disjoint(root, list) {
                ev.cond = Some(Condition::Overlapping);
            }
            ("oneOf", ev)
        };
        let (side, covering) = self.cover_list(keyword, spelled, [&fx, &fy], [&rx, &ry]);
        let both_any = self.both_any(keyword, spelled, [&fx, &fy], [&rx, &ry]);
        for (j, y) in ys.iter().enumerate() {
            match pair_of_b[j] {
                Some(i) => {
                    let bracketed = bracket(i, j);
                    let mark = match &covering {
                        _ if bracketed => Some(Mark::OneOf),
                        Some(list) => Some(Mark::Cover(Rc::new(Cover {
                            variant: if side == 1 { rx[i] } else { ry[j] },
                            list: list.clone(),
                        }))),
                        None => None,
                    };
                    let opened = [(&lists[0][..], &fx[i]), (&lists[1][..], &fy[j])];
                    let Some(chain) = self.variant_chain(opened, chain) else {
                        continue; // the same two definitions are compared above
                    };
                    let here = self.trails.extend(under_b, &fy[j].0);
                    self.push_variant(xs[i], y, here, &chain, mark);
                }
                None => {
                    // Accepted before by an old variant: the union gains no value.
                    if let Some(k) = both_any.then(|| self.held_by(ry[j], &rx)).flatten() {
                        let by = Path::from_steps(&spelled_steps(spelled[0], &fx[k].0));
                        let mut ev = Event::new("variant_covered");
                        ev.hint = Some(format!("it was added, but `{by}` accepted every value it accepts before, so the anyOf accepts no value it did not"));
                        let here = self.trails.extend(under_b, &fy[j].0);
                        self.classify("anyOf", here, ev);
                        continue;
                    }
                    let (class, ev) = membership(&fy[j], self.roots[1], &ry, "variant_added");
                    let here = self.trails.extend(under_b, &fy[j].0);
                    self.classify(class, here, ev);
                }
            }
        }
        for i in (0..xs.len()).filter(|&i| !used_a[i]) {
            // Held whole by a new variant: the union loses no value.
            if let Some(k) = both_any.then(|| self.held_by(rx[i], &ry)).flatten() {
                let by = Path::from_steps(&spelled_steps(spelled[1], &fy[k].0));
                let mut ev = Event::new("variant_covered");
                ev.hint = Some(format!("it was removed, but `{by}` accepts every value it accepted, so every value the anyOf accepted still passes"));
                let here = self.trails.extend(under_a, &fx[i].0);
                self.classify("anyOf", here, ev);
                continue;
            }
            let (class, ev) = membership(&fx[i], self.roots[0], &rx, "variant_removed");
            let here = self.trails.extend(under_a, &fx[i].0);
            self.classify(class, here, ev);
        }
    }

    /// The chain a paired variant is compared under: a variant opened out of a union a
    /// `$ref` leads to is that definition again, which the cycle check knows as it knows
    /// a `$ref` the walk follows (else `anyOf: [C, {$ref: "#"}]` under a union at the
    /// root opens the root again and again, to the work budget). `None`: the two are
    /// already being compared above.
    fn variant_chain(
        &self,
        opened: [(&'v [Value], &Variant<'v>); 2],
        chain: &Option<Rc<Chain>>,
    ) -> Option<Option<Rc<Chain>>> {
        let via = [0, 1].map(|s| opened_through_ref(self.roots[s], opened[s].0, &opened[s].1 .0));
        if via == [None, None] {
            return Some(chain.clone());
        }
        let id = |s: usize| via[s].unwrap_or(opened[s].1 .1 as *const Value as usize);
        let pair = (id(0), id(1));
        if on_chain(chain, pair) {
            return None;
        }
        Some(Some(Rc::new(Chain {
            pair,
            parent: chain.clone(),
        })))
    }

    /// Compares the paired variants `a` and `b` at `here`, bracketed by `mark` when there
    /// is one: an opening marker popped just before the variant's subtree and a closing
    /// one popped just after it (`Task::after_variant`).
    fn push_variant(
        &mut self,
        a: &'v Value,
        b: &'v Value,
        here: Trail,
        chain: &Option<Rc<Chain>>,
        mark: Option<Mark<'v>>,
    ) {
        let since = Rc::new(std::cell::Cell::new(0));
        let marker = |opening: bool, mark: Mark<'v>| Task {
            a: None,
            b: None,
            path: here,
            flat: false,
            chain: None,
            values_only: [false, false],
            after_variant: Some((since.clone(), opening, mark)),
        };
        if let Some(mark) = &mark {
            self.work.push(marker(false, mark.clone()));
        }
        self.push(Some(a), Some(b), here, chain);
        if let Some(mark) = mark {
            self.work.push(marker(true, mark));
        }
    }

    /// In an `anyOf`, what a change inside a variant takes away (input) or adds
    /// (output) may be held whole by another variant: in input the new list must hold
    /// the old variant, in output the old list the new one. That side, and its list
    /// when it may cover: read as `anyOf` (a `oneOf` spelling only when its variants
    /// cannot overlap), and not where `unevaluated*` sees what the variants evaluate.
    fn cover_list(
        &self,
        keyword: &str,
        spelled: [&'v str; 2],
        [fx, fy]: [&[Variant<'v>]; 2],
        [rx, ry]: [&[&'v Value]; 2],
    ) -> (usize, Option<Rc<CoverList<'v>>>) {
        let side = match self.direction {
            Direction::Input => 1,
            Direction::Output => 0,
        };
        let (fz, rz) = if side == 1 { (fy, ry) } else { (fx, rx) };
        let covering = (keyword == "anyOf"
            && !self.unevaluated
            && rz.len() <= SMALL_UNION
            && (spelled[side] == "anyOf" || disjoint(self.roots[side], rz)))
        .then(|| {
            Rc::new(CoverList {
                variants: fz
                    .iter()
                    .zip(rz.iter())
                    .map(|(f, v)| (spelled_steps(spelled[side], &f.0), *v))
                    .collect(),
                by_size: std::cell::OnceCell::new(),
            })
        });
        (side, covering)
    }

    /// Both lists read as `anyOf` (no `oneOf` spelling whose variants may overlap, no
    /// variant opened out of a nested `oneOf`, no `unevaluated*`): a variant added
    /// (removed) that an old (new) variant holds whole changes no value the union
    /// accepts.
    fn both_any(
        &self,
        keyword: &str,
        spelled: [&'v str; 2],
        [fx, fy]: [&[Variant<'v>]; 2],
        [rx, ry]: [&[&'v Value]; 2],
    ) -> bool {
        keyword == "anyOf"
            && !self.unevaluated
            && rx.len().max(ry.len()) <= SMALL_UNION
            && !fx
                .iter()
                .chain(fy.iter())
                .any(|f| f.0.contains(&Step::Name("oneOf")))
            && (spelled[0] == "anyOf" || disjoint(self.roots[0], rx))
            && (spelled[1] == "anyOf" || disjoint(self.roots[1], ry))
    }

    /// Pair the old variants `xs` with the new `ys` (`rx`, `ry`: each seen through its
    /// `$ref`s): equal ones first, then the most alike. Which old variants are paired,
    /// and each new variant's pair; `None` when scoring what is left would pass the walk
    /// budget (reported as such).
    fn pair_variants(
        &mut self,
        [xs, ys]: [&[&'v Value]; 2],
        [rx, ry]: [&[&'v Value]; 2],
    ) -> Option<(Vec<bool>, Vec<Option<usize>>)> {
        let mut used_a = vec![false; xs.len()];
        let mut pair_of_b: Vec<Option<usize>> = vec![None; ys.len()];
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
        // Then a variant that is only a union holding the other (`X` against `oneOf: [X,
        // Y]`, which the lists do not open when its variants may overlap): the same
        // alternative, wrapped.
        let roots = self.roots;
        let swapped = [roots[1], roots[0]];
        for j in 0..ys.len() {
            if pair_of_b[j].is_some() {
                continue;
            }
            let wrapped = (0..xs.len()).find(|&i| {
                !used_a[i] && (holds(roots, xs[i], ys[j]) || holds(swapped, ys[j], xs[i]))
            });
            if let Some(i) = wrapped {
                used_a[i] = true;
                pair_of_b[j] = Some(i);
            }
        }
        // The rest pair by structure (same type, shared keywords), not by position: every
        // left-over pair is scored, and that work counts against the walk budget.
        let left_a = used_a.iter().filter(|u| !**u).count();
        let left_b = pair_of_b.iter().filter(|p| p.is_none()).count();
        let cost = left_a.saturating_mul(left_b);
        if self.visited.saturating_add(cost) > self.budget {
            self.exhausted();
            return None;
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
        Some((used_a, pair_of_b))
    }

    /// The index of the first of `list` that holds `variant` whole (a sound subset test,
    /// `within`), each test counted against the cover budget; `None` past it.
    fn held_by(&mut self, variant: &Value, list: &[&'v Value]) -> Option<usize> {
        let size = size_up_to(variant, self.cover_budget);
        for (k, v) in list.iter().enumerate() {
            let cost = size + size_up_to(v, self.cover_budget);
            self.cover_budget = self.cover_budget.checked_sub(cost)?;
            if within(v, variant) {
                return Some(k);
            }
        }
        None
    }
}

impl<'w, 'r, 'v> Walk<'w, 'r, 'v> {
    /// The closing bracket of an `anyOf` variant pair: when breaking changes came from
    /// inside it and another variant of the covering list holds the whole variant (see
    /// [`Cover`]), no value the union accepts changed. They become one patch line at the
    /// variant, naming the variant that covers it and what changed inside.
    pub(super) fn covered(&mut self, cover: &Cover<'v>, since: usize, path: Trail) {
        // Only changes to which values pass are folded: a row breaking for another
        // reason (a default, readOnly, a header name: an annotation, or a keyword the
        // vocabulary does not know) is breaking whatever another variant accepts.
        let rules = self.em.rules;
        let about_values = |c: &Change| match &rules.rows[c.rule].scope {
            Scope::Schema { keyword } => matches!(
                keywords::role(keyword),
                Some(
                    keywords::Role::Applicator
                        | keywords::Role::Assertion
                        | keywords::Role::Reference
                )
            ),
            _ => false,
        };
        let foldable = |c: &Change| c.severity == Severity::Breaking && about_values(c);
        let inside = &self.em.changes[since.min(self.em.changes.len())..];
        if !inside.iter().any(foldable) {
            return;
        }
        // Each containment test reads both schemas whole: that work has a budget of its
        // own, and past it the changes stay as they are (conservative), so a hostile
        // union of huge variants costs no more than the walk itself may.
        // The list is sized once, when first needed, and tried smallest first (a
        // `{type: object}` beside big variants).
        let list = &cover.list;
        let by_size = list.by_size.get_or_init(|| {
            let mut sized = Vec::with_capacity(list.variants.len());
            for (k, (_, v)) in list.variants.iter().enumerate() {
                let size = size_up_to(v, self.cover_budget);
                self.cover_budget = self.cover_budget.checked_sub(size)?;
                sized.push((k, size));
            }
            sized.sort_by_key(|s| s.1);
            Some(sized)
        });
        let Some(by_size) = by_size else {
            return;
        };
        let mut by = None;
        let size = size_up_to(cover.variant, self.cover_budget);
        for &(k, v_size) in by_size {
            let Some(left) = self.cover_budget.checked_sub(size + v_size) else {
                return;
            };
            self.cover_budget = left;
            let (at, v) = &list.variants[k];
            if within(v, cover.variant) {
                by = Some(Path::from_steps(at));
                break;
            }
        }
        let Some(by) = by else {
            return;
        };
        let (mut taken, kept): (Vec<_>, Vec<_>) = self
            .em
            .changes
            .split_off(since.min(self.em.changes.len()))
            .into_iter()
            .partition(|c| foldable(c));
        self.em.changes.extend(kept);
        taken.sort_by(|x, y| x.path.cmp(&y.path));
        const SHOWN: usize = 8;
        let here = self.trails.path(path);
        let mut said: Vec<String> = taken
            .iter()
            .take(SHOWN)
            .map(|c| {
                let at = c.path.as_ref().and_then(|p| p.strip_prefix(&here));
                match at {
                    Some(at) if !at.is_empty() => format!("{} at `{}`", c.message, Rest(at)),
                    _ => c.message.clone(),
                }
            })
            .collect();
        if taken.len() > SHOWN {
            said.push(format!("{} more", taken.len() - SHOWN));
        }
        let whole = match self.direction {
            Direction::Input => format!(
                "`{by}` accepts every value this variant accepted before, so every value the anyOf accepted still passes"
            ),
            Direction::Output => format!(
                "`{by}` allowed every value this variant allows now, so the anyOf produces no value it could not before"
            ),
        };
        let mut ev = Event::new("variant_covered");
        ev.hint = Some(format!("{whole} (inside: {})", said.join("; ")));
        self.classify("anyOf", path, ev);
    }
}

/// `union` is (through its `$ref`s) nothing but an `anyOf` / `oneOf` one of whose
/// variants is `plain` (through `$ref`s on either side; `roots`: `plain`'s, then
/// `union`'s).
fn holds(roots: [&Value; 2], plain: &Value, union: &Value) -> bool {
    let Some(m) = through_refs(roots[1], union).as_object() else {
        return false;
    };
    ["anyOf", "oneOf"].into_iter().any(|k| {
        let only = m.keys().all(|x| x == k || keywords::is_annotation(x));
        match m.get(k) {
            Some(Value::Array(vs)) if only => vs.iter().any(|v| same_resolved(roots, plain, v)),
            _ => false,
        }
    })
}

/// How many values `v` holds, itself included, counted up to `limit`.
fn size_up_to(v: &Value, limit: usize) -> usize {
    let mut stack = vec![v];
    let mut n = 0;
    while let Some(v) = stack.pop() {
        n += 1;
        if n >= limit {
            break;
        }
        match v {
            Value::Array(xs) => stack.extend(xs),
            Value::Object(m) => stack.extend(m.values()),
            _ => {}
        }
    }
    n
}

/// A field that came or went: its name, its schema, and whether it is required.
type Field<'v> = (&'v str, Option<&'v Value>, bool);

/// A variant of a union with its path below the keyword (`[0]`, `[0].oneOf[1]`).
pub(super) type Variant<'v> = (Vec<Step<'v>>, &'v Value);

/// The steps of a variant's path below the union's parent: the keyword as `spelled`,
/// then the variant's own (`anyOf[0].oneOf[1]`).
fn spelled_steps<'v>(spelled: &'v str, steps: &[Step<'v>]) -> Vec<Step<'v>> {
    std::iter::once(Step::Name(spelled))
        .chain(steps.iter().copied())
        .collect()
}

/// The variants of an `anyOf` / `oneOf`, with each variant that is (through its
/// `$ref`s) nothing but an `anyOf` or `oneOf` opened up into its own variants; each
/// with its path below the keyword (`[0]`, `[0].oneOf[1]`).
/// Where `flatten` opened the variant at `steps` of `list` out of a union a `$ref` led
/// to: that definition as the cycle check knows a followed `$ref` (`View::identity`: the
/// address of its object); `None` when no `$ref` was on the way.
fn opened_through_ref(root: &Value, list: &[Value], steps: &[Step<'_>]) -> Option<usize> {
    let mut items = list;
    let mut it = steps.iter();
    while let Some(Step::Index(i)) = it.next() {
        let v = items.get(*i)?;
        // The variant itself (its last index) was not opened.
        let Some(Step::Name(k)) = it.next() else {
            return None;
        };
        let seen = through_refs(root, v);
        let m = seen.as_object()?;
        if !std::ptr::eq(seen, v) {
            return Some(m as *const Map<String, Value> as usize);
        }
        items = m.get(*k)?.as_array()?;
    }
    None
}

pub(super) fn flatten<'v>(root: &'v Value, keyword: &str, list: &'v [Value]) -> Vec<Variant<'v>> {
    let mut out: Vec<Variant<'v>> = Vec::new();
    // (the path so far, the list there, how many unions deep)
    let mut stack: Vec<(Vec<Step<'v>>, &'v [Value], usize)> = vec![(Vec::new(), list, 0)];
    while let Some((prefix, items, depth)) = stack.pop() {
        for (i, v) in items.iter().enumerate() {
            let mut here = prefix.clone();
            here.push(Step::Index(i));
            let seen = through_refs(root, v);
            let inner = if keyword == "allOf" || depth >= 8 {
                None
            } else {
                seen.as_object().and_then(|m| {
                    ["anyOf", "oneOf"].into_iter().find_map(|k| {
                        let only = m.keys().all(|x| x == k || keywords::is_annotation(x));
                        // A nested `oneOf` is its variants only when no value can
                        // match two of them: `anyOf: [{oneOf: [A, B]}]` rejects what A
                        // and B share, `anyOf: [A, B]` accepts it; and a value in A, B
                        // and C passes `oneOf: [{oneOf: [A, B]}, C]` (once) but not
                        // `oneOf: [A, B, C]`.
                        match m.get(k) {
                            Some(Value::Array(xs))
                                if only
                                    && (k == keyword || k == "oneOf")
                                    && (k == "anyOf"
                                        || disjoint(root, &xs.iter().collect::<Vec<_>>())) =>
                            {
                                Some((k, xs))
                            }
                            _ => None,
                        }
                    })
                })
            };
            match inner {
                Some((k, xs)) => {
                    here.push(Step::Name(k));
                    stack.push((here, xs, depth + 1))
                }
                None => out.push((here, v)),
            }
        }
    }
    // In the written order: by the indexes down the nesting.
    let indexes = |steps: &[Step<'v>]| {
        steps
            .iter()
            .filter_map(|s| match s {
                Step::Index(i) => Some(*i),
                Step::Name(_) => None,
            })
            .collect::<Vec<_>>()
    };
    out.sort_by_cached_key(|(steps, _)| indexes(steps));
    out
}
