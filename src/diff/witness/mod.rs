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
//!
//! The parts: this file finds and checks a witness (the budgets, the change undone to
//! prove a witness proves its own change) and parses change paths; `instance` places
//! candidates in a minimal instance of the whole schema around the change; `candidates`
//! makes the candidate values at one node; `overlap` makes the candidates the walker's
//! `oneOf` overlap search validates; `validate` is the three-valued validator.

mod candidates;
mod instance;
pub(crate) mod overlap;
mod undo;

use crate::schema::validate::validate_counted;
pub use crate::schema::validate::{validate, Truth};
use candidates::{Gen, MAX_CANDIDATES};

use serde_json::{Map, Value};

use super::Change;
use crate::diff::walker::resolve;
use crate::elements::Form;
use crate::keywords;
use crate::rules::{Certainty, Comparator, Direction, Rule, Rules, Scope, Severity};

/// Other changes tried, for one whose undoing explains a shared witness.
const MAX_SIBLINGS: usize = 32;

/// Why a breaking change carries no witness (`witness_absent` in the reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Absent {
    /// Not a change of a schema (a removed tool, the server's version): there is no
    /// instance to show.
    NotSchema,
    /// A keyword that constrains no instance (`default`, `readOnly`, a description).
    Annotation,
    /// The comparison's witness budget was spent before this change.
    Budget,
    /// The validator could not decide the candidates (a pattern outside the small
    /// regex engine, an unknown format, a `$ref` it cannot follow).
    Undecided,
    /// No candidate is accepted on one side and rejected on the other (for many
    /// conservative verdicts none exists).
    NotFound,
    /// Only instances that another change rejects were found, and no single other
    /// change explains them.
    NoSpecific,
}

impl Absent {
    /// The stable word the reports show.
    pub fn word(self) -> &'static str {
        match self {
            Absent::NotSchema => "not-a-schema-change",
            Absent::Annotation => "annotation-only",
            Absent::Budget => "budget-exhausted",
            Absent::Undecided => "undecided",
            Absent::NotFound => "not-found",
            Absent::NoSpecific => "no-specific-instance",
        }
    }
}

/// Attach a witness to each breaking change in `changes` (all from one schema field,
/// rooted at `field`, compared `before` → `after`). `flat`: the field is a prompt's
/// argument list, already turned into an object schema.
///
/// A witness proves its own change: the new schema with that change undone (see
/// `undo`) judges it as the old one does. Only when no candidate passes that test is
/// an instance kept that another change rejects, with `shared_with` naming the change
/// whose undoing accepts it.
pub(crate) fn attach(
    rules: &Rules,
    changes: &mut [Change],
    budget: &mut usize,
    (field, form): (&str, Form),
    before: Option<&Value>,
    after: Option<&Value>,
) {
    let empty = Value::Object(Map::new());
    let (a, b) = (before.unwrap_or(&empty), after.unwrap_or(&empty));
    let field = Field {
        rules,
        name: field,
        form,
        a,
        b,
    };
    // Undoing a change copies the new schema: that copy is charged to the same budget,
    // one step per node, so thousands of changes in one huge schema stay bounded.
    let mut copy_cost = None;
    for i in 0..changes.len() {
        let change = &changes[i];
        if change.severity != Severity::Breaking {
            continue;
        }
        let (Some(direction), Some(segs)) = (change.direction, field.segs_of(change)) else {
            continue;
        };
        let Some(rule) = rules.rows.get(change.rule) else {
            continue;
        };
        if let Scope::Schema { keyword } = &rule.scope {
            if keywords::is_annotation(keyword) {
                changes[i].witness_absent = Some(Absent::Annotation);
                continue;
            }
        }
        let cost = *copy_cost.get_or_insert_with(|| nodes(b));
        if *budget <= cost {
            *budget = 0;
            changes[i].witness_absent = Some(Absent::Budget);
            continue;
        }
        *budget -= cost;
        let expect = match direction {
            Direction::Input => Truth::Yes,
            Direction::Output => Truth::No,
        };
        let values = (&change.before, &change.after);
        let (reverted, exact) = match revert_exact(rule, a, b, &segs, values) {
            Some((v, exact)) => (Some(v), exact),
            None => (None, false),
        };
        // The old schema with only this change made: a shared instance it refuses (as
        // the new one does) at least shows this change too, not only another one.
        let applied = match &reverted {
            Some(_) if *budget > nodes(a) => {
                *budget -= nodes(a);
                revert(rule, b, a, &segs, (values.1, values.0))
            }
            _ => None,
        };
        let own = reverted.as_ref().map(|new| Own {
            new,
            expect,
            applied: applied.as_ref(),
        });
        // Only an undo of this change's own node makes its witness a proof of it.
        let checked = own.is_some() && exact;
        let (witness, shared_with, absent) = match find_checked(direction, a, b, &segs, own, budget)
        {
            // Checked only against an undo wider than this change (a whole union), or
            // none: a witness that another change of this field, undone alone on its
            // own node, explains is that change's, and says so.
            Search::Found(w) if !checked => {
                let by = field.explained_by(changes, i, &segs, &w, (expect, cost), budget);
                (Some(w), by, None)
            }
            Search::Found(w) => (Some(w), None, None),
            Search::Borrowed(w) => {
                // The other change that rejects it: undone too (on top of this one),
                // the new schema judges it as the old one does.
                let undone_here = reverted.as_ref().unwrap_or(b);
                let by = field.rejected_by(changes, i, undone_here, &w, (expect, cost), budget);
                match by {
                    Some(by) => (Some(w), Some(by), None),
                    None if *budget == 0 => (None, None, Some(Absent::Budget)),
                    None => (None, None, Some(Absent::NoSpecific)),
                }
            }
            Search::None(why) => (None, None, Some(why)),
        };
        let change = &mut changes[i];
        // A conservative verdict (breaking because what changed is not modelled) that
        // this change's own witness proves is no longer a guess.
        if checked && witness.is_some() && shared_with.is_none() {
            change.certainty = Certainty::Exact;
        }
        change.witness = witness;
        change.shared_with = shared_with;
        change.witness_absent = absent;
    }
}

/// One schema field's changes as `attach` reads them: the rules that name them, the
/// field (`inputSchema`) and its form, and its two schemas compared, `a` → `b`.
struct Field<'f> {
    rules: &'f Rules,
    name: &'f str,
    form: Form,
    a: &'f Value,
    b: &'f Value,
}

impl Field<'_> {
    /// The segments of `change`'s path inside the field's schema.
    fn segs_of(&self, change: &Change) -> Option<Vec<Seg>> {
        let mut segs = after_field(change, self.name)?.to_vec();
        // A list of named arguments is compared as an object schema's properties.
        if self.form == Form::Arguments && !segs.is_empty() {
            segs.insert(0, Seg::Name("properties".into()));
        }
        Some(segs)
    }

    /// For a witness `w` of change `i` (at `segs`) checked only against an undo wider
    /// than this change (a whole union), or none: the fingerprint of another change of
    /// this field that, undone alone on its own node, explains it (the new schema with
    /// it undone says `expect` of `w`). At most `MAX_SIBLINGS` tried, each charged `cost`.
    fn explained_by(
        &self,
        changes: &[Change],
        i: usize,
        segs: &[Seg],
        w: &Value,
        (expect, cost): (Truth, usize),
        budget: &mut usize,
    ) -> Option<String> {
        let direction = changes[i].direction;
        let mut tried = 0;
        for (j, other) in changes.iter().enumerate() {
            if j == i || tried >= MAX_SIBLINGS || *budget <= cost {
                continue;
            }
            let Some(other_segs) = self.segs_of(other) else {
                continue;
            };
            // A change above or below this one is part of it.
            if other.direction != direction
                || other_segs.starts_with(segs)
                || segs.starts_with(&other_segs)
            {
                continue;
            }
            let undone = self.rules.rows.get(other.rule).and_then(|row| {
                revert_exact(
                    row,
                    self.a,
                    self.b,
                    &other_segs,
                    (&other.before, &other.after),
                )
            });
            let Some((undone, true)) = undone else {
                continue;
            };
            tried += 1;
            *budget -= cost;
            if validate_counted(&undone, w, budget) == Some(expect) {
                return Some(other.fingerprint.clone());
            }
        }
        None
    }

    /// For a witness `w` of change `i` borrowed from another change (one that rejects
    /// it too): the fingerprint of the change that, undone on top of this one
    /// (`undone_here`), makes the new schema say `expect` of `w`. At most
    /// `MAX_SIBLINGS` tried, each charged `cost`.
    fn rejected_by(
        &self,
        changes: &[Change],
        i: usize,
        undone_here: &Value,
        w: &Value,
        (expect, cost): (Truth, usize),
        budget: &mut usize,
    ) -> Option<String> {
        let mut tried = 0;
        for (j, other) in changes.iter().enumerate() {
            if j == i || tried >= MAX_SIBLINGS || *budget <= cost {
                continue;
            }
            let undone = self.segs_of(other).and_then(|segs| {
                let row = self.rules.rows.get(other.rule)?;
                revert(
                    row,
                    self.a,
                    undone_here,
                    &segs,
                    (&other.before, &other.after),
                )
            });
            let Some(undone) = undone else { continue };
            tried += 1;
            *budget -= cost;
            if validate_counted(&undone, w, budget) == Some(expect) {
                return Some(other.fingerprint.clone());
            }
        }
        None
    }
}

/// The schema `after` of `field` with `change` undone, as `attach` uses it to decide
/// whether a witness proves its own change (`arguments`: the field is a prompt's
/// argument list, compared as an object schema). `None` when it cannot be undone alone.
pub fn undo(
    rules: &Rules,
    change: &Change,
    field: (&str, bool),
    before: &Value,
    after: &Value,
) -> Option<Value> {
    undo_exact(rules, change, field, before, after).map(|(v, _)| v)
}

/// `undo`, and whether only the change's own node was undone (`false`: a whole union
/// above a variant, which undoes its sibling variants' changes too, so a witness that
/// passes it may still be another change's).
pub fn undo_exact(
    rules: &Rules,
    change: &Change,
    (field, arguments): (&str, bool),
    before: &Value,
    after: &Value,
) -> Option<(Value, bool)> {
    let mut segs = after_field(change, field)?.to_vec();
    if arguments && !segs.is_empty() {
        segs.insert(0, Seg::Name("properties".into()));
    }
    let values = (&change.before, &change.after);
    revert_exact(rules.rows.get(change.rule)?, before, after, &segs, values)
}

/// How many values `v` holds, itself included (what copying it costs).
fn nodes(v: &Value) -> usize {
    let mut stack = vec![v];
    let mut n = 0;
    while let Some(v) = stack.pop() {
        n += 1;
        match v {
            Value::Array(xs) => stack.extend(xs),
            Value::Object(m) => stack.extend(m.values()),
            _ => {}
        }
    }
    n
}

/// The new schema with one change undone, and what it must say of a witness of that
/// change (what the old schema says): then the witness proves this change, not another
/// one beside it (a closing next to a type change, a format next to a minLength).
struct Own<'s> {
    new: &'s Value,
    expect: Truth,
    /// The old schema with only this change made, when it can be.
    applied: Option<&'s Value>,
}

/// `after` with one change undone: the keyword it is about set back (`revert_keyword`),
/// else the property it is about with its `required` entry (the `fields` comparator),
/// else the whole node it names (above any variant index, where the walker pairs
/// variants by content, not position). `None` when none of these can be done.
fn revert(
    rule: &Rule,
    before: &Value,
    after: &Value,
    segs: &[Seg],
    values: Values<'_>,
) -> Option<Value> {
    revert_exact(rule, before, after, segs, values).map(|(v, _)| v)
}

/// A change's own values, `before` and `after` (as the walker compared them).
type Values<'c> = (&'c Option<Value>, &'c Option<Value>);

/// `revert`, and whether it undid the change's own node (not a whole union above a
/// variant, which undoes its sibling variants' changes too).
fn revert_exact(
    rule: &Rule,
    before: &Value,
    after: &Value,
    segs: &[Seg],
    values: Values<'_>,
) -> Option<(Value, bool)> {
    // A `oneOf` whose variants overlap: the same node with `anyOf` in its place.
    if let Some(v) = undo::overlap(rule, after, segs) {
        return Some((v, true));
    }
    // One value of a list, one variant of a union: undone alone, not the whole keyword.
    if let Some(v) = undo::one_value(rule, after, segs, values) {
        return Some((v, true));
    }
    if let Some(v) = undo::one_variant(rule, before, after, segs) {
        return Some((v, true));
    }
    if let Some(v) = revert_keyword(rule, before, after, segs) {
        return Some((v, true));
    }
    if let Some(v) = revert_by_values(rule, after, segs, values) {
        return Some((v, true));
    }
    if !matches!(rule.scope, Scope::Schema { .. }) {
        return None;
    }
    if rule.comparator == Comparator::Fields {
        if let Some(v) = revert_field(before, after, segs) {
            return Some((v, true));
        }
    }
    let variant = |w: &[Seg]| {
        matches!(&w[0], Seg::Name(n) if matches!(n.as_str(), "anyOf" | "oneOf" | "allOf"))
            && matches!(w[1], Seg::Index(_))
    };
    let cut = segs.windows(2).position(variant).unwrap_or(segs.len());
    revert_node(before, after, &segs[..cut]).map(|v| (v, cut == segs.len()))
}

/// The node at `path` in `root`, through `$ref`s that stand alone on the way (and at
/// the end); `None` when a step is missing.
fn lookup<'v>(root: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    let through = |mut v: &'v Value| {
        for _ in 0..32 {
            match v.get("$ref").and_then(Value::as_str) {
                Some(r) if v.as_object().is_some_and(|m| m.len() == 1) => v = resolve(root, r)?,
                Some(_) => return None,
                None => break,
            }
        }
        Some(v)
    };
    let mut cur = through(root)?;
    for seg in path {
        cur = match seg {
            Seg::Name(n) => cur.get(n)?,
            Seg::Index(i) => cur.get(*i)?,
        };
        cur = through(cur)?;
    }
    Some(cur)
}

/// The node at `path` in `out` (a copy of `root`), for writing: a `$ref` standing alone
/// on the way is replaced by a copy of its target (the same set of instances), so the
/// change is undone at this place only.
fn lookup_mut<'v>(out: &'v mut Value, root: &Value, path: &[Seg]) -> Option<&'v mut Value> {
    let inline = |v: &mut Value| -> Option<()> {
        for _ in 0..32 {
            let target = match v.get("$ref").and_then(Value::as_str) {
                Some(r) if v.as_object().is_some_and(|m| m.len() == 1) => resolve(root, r)?,
                Some(_) => return None,
                None => return Some(()),
            };
            *v = target.clone();
        }
        None
    };
    let mut cur = out;
    inline(cur)?;
    for seg in path {
        cur = match seg {
            Seg::Name(n) => cur.get_mut(n)?,
            Seg::Index(i) => cur.get_mut(*i)?,
        };
        inline(cur)?;
    }
    Some(cur)
}

/// Whether the `$ref`s inside `v` (taken from `before`) mean the same in `after`, so
/// that `v` can be put into `after`.
fn refs_agree(v: &Value, before: &Value, after: &Value) -> bool {
    let mut stack = vec![v];
    let mut seen = 0usize;
    while let Some(v) = stack.pop() {
        seen += 1;
        if seen > 100_000 {
            return false;
        }
        match v {
            Value::Object(m) => {
                if let Some(r) = m.get("$ref") {
                    let Some(r) = r.as_str() else { return false };
                    match (resolve(before, r), resolve(after, r)) {
                        (Some(x), Some(y)) if x == y => {}
                        _ => return false,
                    }
                }
                stack.extend(m.values());
            }
            Value::Array(xs) => stack.extend(xs),
            _ => {}
        }
    }
    true
}

/// A keyword whose value maps names to subschemas.
fn named(kw: &str) -> bool {
    matches!(
        kw,
        "properties" | "patternProperties" | "dependentSchemas" | "$defs" | "definitions"
    )
}

/// A keyword whose value lists subschemas by position (a tuple).
fn positional(kw: &str) -> bool {
    matches!(kw, "prefixItems" | "items")
}

/// `after` with the node at `path` as it is in `before` (added, removed or replaced;
/// a missing node only as a named entry or the last tuple position).
fn revert_node(before: &Value, after: &Value, path: &[Seg]) -> Option<Value> {
    let old = lookup(before, path);
    if old.is_some_and(|o| !refs_agree(o, before, after)) {
        return None;
    }
    let mut out = after.clone();
    match lookup_mut(&mut out, after, path) {
        Some(slot) => match old {
            Some(o) => *slot = o.clone(),
            None => {
                let (_, up) = path.split_last()?;
                let parent = lookup_mut(&mut out, after, up)?;
                match (path.last(), path) {
                    (Some(Seg::Name(name)), [.., Seg::Name(kw), _]) if named(kw) => {
                        parent.as_object_mut()?.remove(name);
                    }
                    // A tuple position the old schema does not have: the last one.
                    (Some(Seg::Index(i)), [.., Seg::Name(kw), _]) if positional(kw) => {
                        let list = parent.as_array_mut()?;
                        if *i + 1 != list.len() {
                            return None;
                        }
                        list.pop();
                    }
                    _ => return None,
                }
            }
        },
        None => {
            let o = old?;
            let [.., Seg::Name(kw), last] = path else {
                return None;
            };
            let node = lookup_mut(&mut out, after, &path[..path.len() - 2])?.as_object_mut()?;
            match last {
                Seg::Name(name) if named(kw) => {
                    let map = node
                        .entry(kw.clone())
                        .or_insert_with(|| Value::Object(Map::new()));
                    map.as_object_mut()?.insert(name.clone(), o.clone());
                }
                // A tuple position the new schema lost: it was the next one.
                Seg::Index(i) if positional(kw) => {
                    let list = node
                        .entry(kw.clone())
                        .or_insert_with(|| Value::Array(Vec::new()))
                        .as_array_mut()?;
                    if *i != list.len() {
                        return None;
                    }
                    list.push(o.clone());
                }
                _ => return None,
            }
        }
    }
    Some(out)
}

/// `after` with the property `path` names (`…properties.NAME`) and its `required`
/// entry as they are in `before`.
fn revert_field(before: &Value, after: &Value, path: &[Seg]) -> Option<Value> {
    let ([parent @ .., Seg::Name(kw), Seg::Name(name)], true) = (path, true) else {
        return None;
    };
    if kw != "properties" {
        return None;
    }
    let old = lookup(before, parent)?;
    let old_prop = old.get("properties").and_then(|p| p.get(name));
    if old_prop.is_some_and(|o| !refs_agree(o, before, after)) {
        return None;
    }
    let was_required = old
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)));
    let mut out = after.clone();
    let node = lookup_mut(&mut out, after, parent)?.as_object_mut()?;
    match old_prop {
        Some(o) => {
            let props = node
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            props.as_object_mut()?.insert(name.clone(), o.clone());
        }
        None => {
            if let Some(p) = node.get_mut("properties").and_then(Value::as_object_mut) {
                p.remove(name);
            }
        }
    }
    let required = node.get_mut("required").and_then(Value::as_array_mut);
    match (required, was_required) {
        (Some(r), false) => r.retain(|n| n.as_str() != Some(name)),
        (Some(r), true) => {
            if !r.iter().any(|n| n.as_str() == Some(name)) {
                r.push(Value::String(name.clone()));
            }
        }
        (None, true) => {
            node.insert(
                "required".into(),
                Value::Array(vec![Value::String(name.clone())]),
            );
        }
        (None, false) => {}
    }
    Some(out)
}

/// `after` with the keyword a change is about (its row's scope) set back to its value in
/// `before` (or removed), at the node the change's path names, when both schemas hold
/// that node literally (no `$ref` or variant on the way, where paths and positions may
/// not match). `None` when the change is not about one keyword of one node.
fn revert_keyword(rule: &Rule, before: &Value, after: &Value, segs: &[Seg]) -> Option<Value> {
    // `properties` with `required` (the `fields` comparator) are not one keyword.
    let (Scope::Schema { keyword }, false) = (&rule.scope, rule.comparator == Comparator::Fields)
    else {
        return None;
    };
    let keyword = keyword.as_str();
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
    // Through `$ref`s that stand alone (the walker follows them, and the path stays at
    // the referencing place): the new side's is replaced by a copy of its target, so
    // the keyword is undone at this place only.
    let literal = |root: &Value| -> Option<Value> {
        lookup(root, node_path)
            .filter(|v| v.get("$ref").is_none())
            .cloned()
    };
    let old_node = literal(before)?;
    literal(after)?;
    let mut out = after.clone();
    let cur = lookup_mut(&mut out, after, node_path)?;
    // A type changed to a disjoint one stands for everything under it (the walker
    // folds the rest into it): the whole node is undone.
    if rule.comparator == Comparator::Typeset && rule.event == "changed" {
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
        // A `$ref` inside resolves against the new root: an undo only where it means
        // the same there.
        if old_node
            .get(*k)
            .is_some_and(|v| !refs_agree(v, before, after))
        {
            return None;
        }
        match old_node.get(*k) {
            Some(v) => node.insert(k.to_string(), v.clone()),
            None => node.remove(*k),
        };
    }
    Some(out)
}

/// `after` with the keyword a change is about set back to the change's own `before`
/// value at the node its path names in `after`, when the old node cannot be found by
/// that path (a union respelled, `anyOf` → `oneOf`, or variants paired out of order):
/// the change's values say what the keyword was. Kept only when the walker would see
/// exactly this: the node's compared keywords held the change's `after` there, and with
/// the undo hold its `before`, every other keyword as it was. `None` otherwise.
fn revert_by_values(rule: &Rule, after: &Value, segs: &[Seg], values: Values<'_>) -> Option<Value> {
    let Scope::Schema { keyword } = &rule.scope else {
        return None;
    };
    let keyword = keyword.as_str();
    // Only a keyword that constrains the value itself (a type changed to a disjoint
    // one folds the whole node, and is undone as a node).
    let typeset_changed = rule.comparator == Comparator::Typeset && rule.event == "changed";
    if keywords::role(keyword) != Some(keywords::Role::Assertion) || typeset_changed {
        return None;
    }
    let mut node_path = segs;
    if let Some((Seg::Name(last), parent)) = segs.split_last() {
        if last == keyword {
            node_path = parent;
        }
    }
    let (was, is) = values;
    // A union the new schema lost (`anyOf: [integer, null]` → `integer`): the walker
    // paired the plain schema with a variant, whose path the change names.
    let node_path = undo::collapsed(after, node_path)?;
    let mut out = after.clone();
    let cur = lookup_mut(&mut out, after, &node_path)?;
    if cur.get("$ref").is_some() {
        return None;
    }
    let seen = crate::diff::walker::compared_keywords(cur)?;
    if seen.get(keyword) != is.as_ref() {
        return None;
    }
    let group: &[&str] = match keyword {
        "minimum" | "exclusiveMinimum" => &["minimum", "exclusiveMinimum"],
        "maximum" | "exclusiveMaximum" => &["maximum", "exclusiveMaximum"],
        _ => &[],
    };
    let others = |m: &std::collections::BTreeMap<String, Value>| {
        let mut m = m.clone();
        m.remove(keyword);
        m
    };
    // The keyword alone first; then with its other spelling (a bound normalised from
    // `exclusiveMinimum` is undone by removing that too).
    for together in [&[][..], group] {
        let mut node = cur.as_object()?.clone();
        node.remove(keyword);
        for k in together {
            node.remove(*k);
        }
        if let Some(v) = was {
            node.insert(keyword.to_string(), v.clone());
        }
        let node = Value::Object(node);
        let undone = crate::diff::walker::compared_keywords(&node)?;
        if undone.get(keyword) == was.as_ref() && others(&undone) == others(&seen) {
            *cur = node;
            return Some(out);
        }
    }
    None
}

/// Steps one comparison of two surfaces may spend on witnesses in all: validator
/// steps, schema nodes copied to undo a change, and candidate bytes built (one step per
/// 8). Past it, further breaking changes get no witness (`witness_absent:
/// "budget-exhausted"`), so a hostile pair of lockfiles with thousands of changed
/// properties in one schema cannot make a check slow (about a second in a release
/// build, where 2,000 took 90 s unbounded). The corpus needs less than 1,000,000.
pub(crate) const TOTAL_STEPS: usize = 2_500_000;

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
    match find_checked(direction, a, b, segs, None, budget) {
        Search::Found(x) => Some(x),
        _ => None,
    }
}

/// What the search for one change's witness found.
enum Search {
    /// An instance that proves this change (and, where it could be undone, this change
    /// alone).
    Found(Value),
    /// Only an instance that proves the break but that the new schema still judges
    /// the same with this change undone: another change's.
    Borrowed(Value),
    None(Absent),
}

/// `find_within`, preferring a witness that the new schema with this change undone
/// (`own`) judges as the old one does.
fn find_checked(
    direction: Direction,
    a: &Value,
    b: &Value,
    segs: &[Seg],
    own: Option<Own<'_>>,
    budget: &mut usize,
) -> Search {
    if *budget == 0 {
        return Search::None(Absent::Budget);
    }
    let (src, tgt) = match direction {
        Direction::Input => (a, b),
        Direction::Output => (b, a),
    };
    let mut borrowed = None;
    let mut shows_own = None;
    let mut undecided = false;
    // Two rounds: the candidates of the first again in the second are not tried twice.
    let mut tried = std::collections::HashSet::new();
    for variant_names in [false, true] {
        let mut gen = Gen {
            roots: [src, tgt],
            made: 0,
            variant_names,
        };
        // Only instances that differ at the change's own path: a witness proves this
        // change, not some other one elsewhere in the schema. Smallest first.
        let mut candidates = gen.embed(src, Some(tgt), segs, 0);
        candidates.truncate(4 * MAX_CANDIDATES);
        let mut sized: Vec<(String, Value)> = Vec::with_capacity(candidates.len());
        for v in candidates {
            let text = v.to_string();
            // Building and sizing candidates is work too: one step per 8 bytes.
            *budget = budget.saturating_sub(1 + text.len() / 8);
            sized.push((text, v));
        }
        sized.sort_by_key(|(text, _)| text.len());
        for (text, x) in sized.into_iter().take(MAX_CANDIDATES) {
            if *budget == 0 {
                break;
            }
            if !tried.insert(text) {
                continue;
            }
            let Some(s) = validate_counted(src, &x, budget) else {
                break;
            };
            if s != Truth::Yes {
                undecided |= s == Truth::Unknown;
                continue;
            }
            let Some(t) = validate_counted(tgt, &x, budget) else {
                break;
            };
            if t != Truth::No {
                undecided |= t == Truth::Unknown;
                continue;
            }
            match &own {
                None => return Search::Found(x),
                Some(own) => match validate_counted(own.new, &x, budget) {
                    Some(t) if t == own.expect => return Search::Found(x),
                    Some(_) if shows_own.is_some() => {}
                    Some(_) => {
                        // Preferred among shared instances: one this change refuses
                        // too (the old schema with only this change made judges it as
                        // the new one does).
                        let made = own.applied.and_then(|ap| validate_counted(ap, &x, budget));
                        let shows = made.is_some_and(|t| t != own.expect && t != Truth::Unknown);
                        if shows {
                            shows_own = Some(x);
                        } else if borrowed.is_none() {
                            borrowed = Some(x);
                        }
                    }
                    None => break,
                },
            }
        }
        if *budget == 0 {
            break;
        }
    }
    match shows_own.or(borrowed) {
        Some(x) => Search::Borrowed(x),
        None if *budget == 0 => Search::None(Absent::Budget),
        None if undecided => Search::None(Absent::Undecided),
        None => Search::None(Absent::NotFound),
    }
}

/// Candidate instances of schema `src` near `segs`, pushed towards `other`'s edges,
/// unvalidated (for tests that sample instances).
pub fn candidates(src: &Value, other: &Value, segs: &[Seg]) -> Vec<Value> {
    let mut gen = Gen {
        roots: [src, other],
        made: 0,
        variant_names: true,
    };
    let mut out = gen.embed(src, Some(other), segs, 0);
    gen.made = 0;
    out.extend(gen.values(src, Some(other), 0));
    out
}

/// One step of a change path: a key or a list index.
pub use crate::path::Segment as Seg;

/// The segments of a change's path after `field` (an element field, `inputSchema`).
fn after_field<'p>(change: &'p Change, field: &str) -> Option<&'p [Seg]> {
    change
        .path
        .as_ref()?
        .strip_prefix(&crate::path::Path::name(field))
}

/// `.properties.a["b.c"].anyOf[1]` → `properties`, `a`, `b.c`, `anyOf`, `1`: a path
/// after its field, read by `Path`'s decoder (empty when it is no path).
pub fn parse_path(path: &str) -> Vec<Seg> {
    let path = path.strip_prefix('.').unwrap_or(path);
    path.parse::<crate::path::Path>()
        .map(|p| p.0)
        .unwrap_or_default()
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
    fn a_keyword_under_a_respelled_union_is_undone_by_its_own_values() {
        let rules = Rules::embedded().unwrap();
        let row = |id: &str, event: &str| {
            rules
                .rows
                .iter()
                .find(|r| r.id == id && r.event == event)
                .unwrap()
        };
        let after = json!({"oneOf": [{"type": "string"}, {"type": "integer", "exclusiveMinimum": 0, "maximum": 8192}]});
        let segs = parse_path(".oneOf[1]");
        let (none, one, max) = (None, Some(json!(1)), Some(json!(8192)));
        // The maximum alone goes; the minimum (written as exclusiveMinimum) stays.
        let undone = revert_by_values(
            row("schema.maximum.added", "added"),
            &after,
            &segs,
            (&none, &max),
        );
        assert_eq!(
            undone.unwrap()["oneOf"][1],
            json!({"type": "integer", "exclusiveMinimum": 0})
        );
        let undone = revert_by_values(
            row("schema.minimum.added", "added"),
            &after,
            &segs,
            (&none, &one),
        );
        assert_eq!(
            undone.unwrap()["oneOf"][1],
            json!({"type": "integer", "maximum": 8192})
        );
        // A node that does not hold the change's `after` is not this change's node.
        let two = Some(json!(2));
        assert!(revert_by_values(
            row("schema.minimum.added", "added"),
            &after,
            &segs,
            (&none, &two)
        )
        .is_none());
        assert!(revert_by_values(
            row("schema.minimum.added", "added"),
            &after,
            &parse_path(".oneOf[0]"),
            (&none, &one)
        )
        .is_none());
    }

    #[test]
    fn undoing_a_root_the_old_side_cannot_resolve_is_no_undo() {
        // (A root `$ref` that resolves nowhere: no old node, and no parent to edit.)
        let a = json!({"$ref": "#/nowhere"});
        let b = json!({"type": "object"});
        assert_eq!(revert_node(&a, &b, &[]), None);
        assert_eq!(revert_node(&b, &a, &[]), None);
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
}
