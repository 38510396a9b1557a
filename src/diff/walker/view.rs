//! A schema as the walker sees it: the node and the definitions its `$ref`s lead to,
//! read layer by layer (`View`), and the small questions asked of one (is it closed, is
//! it a tuple, is it only a union). Local `$ref` resolution lives here. Nothing here
//! compares two schemas or reports anything.

use super::*;

/// A schema seen through its `$ref`s: the referencing object first, then each target.
/// A keyword is looked up layer by layer, so siblings of `$ref` take precedence.
pub(super) struct View<'v> {
    pub(super) layers: Vec<&'v Map<String, Value>>,
    /// The `$ref` chain was followed to its end (its last layer is the target).
    pub(super) followed: bool,
    /// `false` or a non-schema value: compared as an opaque value.
    pub(super) opaque: Option<&'v Value>,
    /// A `$ref` that does not resolve locally: compared as a keyword of its own.
    pub(super) unresolved: Option<&'v Value>,
    /// Hide annotation keywords (this side stands in as one variant of the other's).
    pub(super) values_only: bool,
}

impl<'v> View<'v> {
    pub(super) fn new(root: &'v Value, node: Option<&'v Value>) -> View<'v> {
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

    pub(super) fn get(&self, key: &str) -> Option<&'v Value> {
        if key == "$ref" {
            return self.unresolved;
        }
        if self.values_only && keywords::is_annotation(key) {
            return None;
        }
        self.layers.iter().find_map(|layer| layer.get(key))
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = &'v String> + '_ {
        self.layers
            .iter()
            .flat_map(|l| l.keys())
            .filter(|k| !(self.values_only && keywords::is_annotation(k)))
    }

    /// The composition keyword (`anyOf` / `oneOf`) this schema is nothing but, apart
    /// from annotations; `None` when it has value keywords of its own.
    /// `through_ref`: a followed `$ref` beside it does not count as a keyword of its own.
    pub(super) fn bare_composition(&self, through_ref: bool) -> Option<&'static str> {
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
    /// at its neighbours (the table's `neighbours` column): `additionalProperties` sees
    /// only the `properties` and `patternProperties` beside it, `items` only the
    /// `prefixItems` beside it. The
    /// keyword that makes the view inexact, if any.
    pub(super) fn inexact(&self) -> Option<&'v str> {
        for (i, layer) in self.layers.iter().enumerate() {
            for (k, v) in layer.iter() {
                if k == "$ref" || keywords::is_annotation(k) {
                    continue;
                }
                // The neighbours it reads (the `neighbours` column of rules/keywords.toml).
                let seen = keywords::get(k).map_or(&[][..], |kw| &kw.neighbours[..]);
                let others = self.layers.iter().enumerate().filter(|(j, _)| *j != i);
                for (_, other) in others {
                    let clash = other.get(k).is_some_and(|w| w != v);
                    let blind = seen
                        .iter()
                        .any(|n| other.contains_key(n.as_str()) && !layer.contains_key(n.as_str()));
                    if clash || blind {
                        return Some(k);
                    }
                }
            }
        }
        None
    }

    pub(super) fn composed(&self) -> bool {
        ["anyOf", "oneOf", "allOf"]
            .iter()
            .any(|k| self.get(k).is_some())
    }

    /// What the cycle check knows this schema by: the definition its `$ref`s lead to,
    /// and every referencing object with keywords of its own beside the `$ref` (the two
    /// apply together, so `{"$ref": "#/$defs/Node", "const": "a"}` inside Node is not
    /// Node again: taking it for Node once hid the `const`).
    pub(super) fn identity(&self) -> usize {
        let own = |l: &Map<String, Value>| {
            l.keys().any(|k| {
                !matches!(
                    keywords::role(k),
                    Some(Role::Reference | Role::Definitions | Role::Identifier)
                )
            })
        };
        let n = self.layers.len();
        self.layers
            .iter()
            .enumerate()
            .filter(|(i, l)| i + 1 == n || own(l))
            .fold(0usize, |acc, (_, l)| {
                acc.wrapping_mul(0x0100_0000_01b3) ^ (*l as *const Map<String, Value> as usize)
            })
    }
}

pub(super) static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();

pub(crate) use crate::schema::resolve;

pub(super) fn is_list(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Array(_)))
}

/// A map of subschemas (absent: empty); `None` when it is not an object.
pub(super) fn as_map(v: Option<&Value>) -> Option<&Map<String, Value>> {
    match v {
        None => Some(EMPTY.get_or_init(Map::new)),
        Some(Value::Object(m)) => Some(m),
        Some(_) => None,
    }
}

/// An object that accepts no property it does not declare.
pub(super) fn closed_object(v: &View<'_>) -> bool {
    matches!(v.get("additionalProperties"), Some(Value::Bool(false)))
        || matches!(v.get("unevaluatedProperties"), Some(Value::Bool(false)))
}

/// A tuple's keyword, positions and rest schema: 2020-12 `prefixItems` + `items`, or
/// draft-07 list `items` + `additionalItems`.
pub(super) fn tuple_parts<'v>(
    v: &View<'v>,
) -> Option<(&'static str, &'v Vec<Value>, Option<&'v Value>)> {
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
pub(super) fn through_refs<'v>(root: &'v Value, mut v: &'v Value) -> &'v Value {
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
