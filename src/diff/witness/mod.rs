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
//! makes the candidate values at one node; `validate` is the three-valued validator.

mod candidates;
mod instance;
mod validate;

use candidates::Gen;
use validate::validate_counted;
pub use validate::{validate, Truth};

use serde_json::{Map, Value};

use super::Change;
use crate::elements::Form;
use crate::keywords;
use crate::rules::{Certainty, Comparator, Direction, Rule, Rules, Scope, Severity};

/// Candidates tried per change, and validator steps per candidate: a witness is a
/// convenience, never a reason for a slow or unbounded check.
const MAX_CANDIDATES: usize = 400;
const MAX_STEPS: usize = 20_000;

/// Attach a witness to each breaking change in `changes` (all from one schema field,
/// rooted at `field`, compared `before` → `after`). `flat`: the field is a prompt's
/// argument list, already turned into an object schema.
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
    // Undoing a change copies the new schema: that copy is charged to the same budget,
    // one step per node, so thousands of changes in one huge schema stay bounded.
    let mut copy_cost = None;
    for change in changes.iter_mut() {
        if change.severity != Severity::Breaking || *budget == 0 {
            continue;
        }
        let (Some(direction), Some(path)) = (change.direction, change.path.as_deref()) else {
            continue;
        };
        let Some(rest) = path.strip_prefix(field) else {
            continue;
        };
        let mut segs = parse_path(rest);
        // A list of named arguments is compared as an object schema's properties.
        if form == Form::Arguments && !segs.is_empty() {
            segs.insert(0, Seg::Name("properties".into()));
        }
        let cost = *copy_cost.get_or_insert_with(|| nodes(b));
        if *budget <= cost {
            *budget = 0;
            continue;
        }
        *budget -= cost;
        let reverted = rules
            .rows
            .get(change.rule)
            .and_then(|rule| revert_keyword(rule, a, b, &segs));
        let own = reverted.as_ref().map(|new| Own {
            new,
            expect: match direction {
                Direction::Input => Truth::Yes,
                Direction::Output => Truth::No,
            },
        });
        let checked = own.is_some();
        change.witness = find_checked(direction, a, b, &segs, own, budget);
        // A conservative verdict (breaking because what changed is not modelled) that
        // this change's own witness proves is no longer a guess.
        if checked && change.witness.is_some() {
            change.certainty = Certainty::Exact;
        }
    }
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
        let mut sized: Vec<(String, Value)> =
            candidates.into_iter().map(|v| (v.to_string(), v)).collect();
        sized.sort_by_key(|(text, _)| text.len());
        let found = sized
            .into_iter()
            .take(MAX_CANDIDATES)
            .filter(|(text, _)| tried.insert(text.clone()))
            .map(|(_, v)| v)
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
            });
        if found.is_some() || *budget == 0 {
            return found;
        }
    }
    None
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
}
