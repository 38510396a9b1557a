//! Undoing one change where the keyword it is about holds several: one value of an
//! `enum` (three values removed are three changes, each with its own witness), one
//! variant of a union (a `null` variant removed beside a bound added to its sibling),
//! the path of a change under a union the new schema no longer has, and a `oneOf` whose
//! variants overlap (read as `anyOf`).

use serde_json::{Map, Value};

use super::{lookup, lookup_mut, refs_agree, Seg, Values};
use crate::rules::{Comparator, Rule, Scope};

/// The keyword of a schema row, or `None`.
fn keyword(rule: &Rule) -> Option<&str> {
    match &rule.scope {
        Scope::Schema { keyword } => Some(keyword.as_str()),
        _ => None,
    }
}

fn is_union(kw: &str) -> bool {
    matches!(kw, "anyOf" | "oneOf")
}

/// `segs` read in the new schema `after`: a union step (`anyOf[0]`) where the node
/// there no longer has that union is dropped, since the walker paired the plain schema
/// that replaced the union with one of its variants. `None` when a step is missing.
pub(super) fn collapsed(after: &Value, segs: &[Seg]) -> Option<Vec<Seg>> {
    let mut out = Vec::with_capacity(segs.len());
    let mut i = 0;
    while i < segs.len() {
        if let (Seg::Name(kw), Some(Seg::Index(_))) = (&segs[i], segs.get(i + 1)) {
            if is_union(kw) {
                let here = lookup(after, &out)?;
                if here.get("anyOf").is_none() && here.get("oneOf").is_none() {
                    i += 2;
                    continue;
                }
            }
        }
        out.push(segs[i].clone());
        i += 1;
    }
    Some(out)
}

/// `after` with one value of an `enum` set back: a value removed is put back into the
/// list (or beside a `const` that stands for a one-value list), a value added taken
/// out. The others stay as they are, so a witness of this removal must be this value.
pub(super) fn one_value(
    rule: &Rule,
    after: &Value,
    segs: &[Seg],
    (was, is): Values<'_>,
) -> Option<Value> {
    if rule.comparator != Comparator::Values || keyword(rule)? != "enum" {
        return None;
    }
    let node_path = match segs.split_last() {
        Some((Seg::Name(last), parent)) if last == "enum" => parent,
        _ => segs,
    };
    let node_path = collapsed(after, node_path)?;
    let mut out = after.clone();
    let node = lookup_mut(&mut out, after, &node_path)?.as_object_mut()?;
    match (rule.event.as_str(), was, is) {
        ("value_removed", Some(v), None) => {
            if let Some(list) = node.get_mut("enum").and_then(Value::as_array_mut) {
                list.push(v.clone());
            } else if let Some(c) = node.remove("const") {
                node.insert("enum".into(), Value::Array(vec![c, v.clone()]));
            } else {
                return None;
            }
        }
        ("value_added", None, Some(v)) => {
            let list = node.get_mut("enum").and_then(Value::as_array_mut)?;
            let at = list.iter().position(|x| x == v)?;
            list.remove(at);
        }
        _ => return None,
    }
    Some(out)
}

/// `after` with one removed union variant put back (`anyOf[1]` removed: the old
/// variant 1 joins the new union, or, where the union became a plain schema, a union
/// of that schema and the old variant). Other variants stay as they are.
pub(super) fn one_variant(
    rule: &Rule,
    before: &Value,
    after: &Value,
    segs: &[Seg],
) -> Option<Value> {
    if rule.comparator != Comparator::Variants || rule.event != "variant_removed" {
        return None;
    }
    let kw = keyword(rule)?;
    let [parent @ .., Seg::Name(step), Seg::Index(_)] = segs else {
        return None;
    };
    if !is_union(kw) || step != kw {
        return None;
    }
    let old = lookup(before, segs)?;
    if !refs_agree(old, before, after) {
        return None;
    }
    let parent = collapsed(after, parent)?;
    let mut out = after.clone();
    let slot = lookup_mut(&mut out, after, &parent)?;
    let node = slot.as_object_mut()?;
    if let Some(list) = ["anyOf", "oneOf"]
        .iter()
        .find_map(|u| node.get(*u).is_some().then_some(*u))
        .and_then(|u| node.get_mut(u))
    {
        list.as_array_mut()?.push(old.clone());
        return Some(out);
    }
    // A plain schema that was a union: wrapped, unless it holds what must stay at its
    // place (definitions, an identifier a `$ref` may name).
    let anchored = [
        "$defs",
        "definitions",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$ref",
    ];
    if kw != "anyOf" || anchored.iter().any(|k| node.contains_key(*k)) {
        return None;
    }
    let plain = std::mem::take(node);
    let mut wrapped = Map::new();
    wrapped.insert(
        "anyOf".into(),
        Value::Array(vec![Value::Object(plain), old.clone()]),
    );
    *slot = Value::Object(wrapped);
    Some(out)
}

/// `after` with the `oneOf` at the node a `oneOf` overlap names (the `variants`
/// comparator's `overlap` event) read as `anyOf`: the same variants, a value that
/// matches two of them accepted. `None` when the node also holds an `anyOf`.
pub(super) fn overlap(rule: &Rule, after: &Value, segs: &[Seg]) -> Option<Value> {
    if rule.comparator != Comparator::Variants || rule.event != "overlap" {
        return None;
    }
    let kw = keyword(rule)?;
    let mut out = after.clone();
    let node = lookup_mut(&mut out, after, segs)?.as_object_mut()?;
    if node.contains_key("anyOf") {
        return None;
    }
    let list = node.remove(kw)?;
    node.insert("anyOf".into(), list);
    Some(out)
}
