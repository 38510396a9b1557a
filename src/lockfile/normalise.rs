//! Canonical form: transport fields dropped, order-free arrays sorted, elements sorted
//! by key. Two captures of the same interface normalise equal.

use serde_json::{Map, Value};

use crate::elements::{self, Form};
use crate::keywords;

use super::model::{key_of, Element, Kind, Surface, META};

impl Surface {
    /// Put the surface in canonical form: transport fields dropped, order-free arrays
    /// sorted, elements sorted by key. Two captures of the same interface normalize equal.
    pub fn normalize(&mut self) {
        for kind in Kind::ALL {
            let list = self.list_mut(kind);
            for element in list.iter_mut() {
                normalize_element(kind, element);
            }
            let key = kind.key_field();
            list.sort_by(|a, b| key_of(a, key).cmp(key_of(b, key)));
        }
    }
}

/// One element in canonical form, as rules/elements.toml describes its kind: transport
/// fields dropped (but the paths `keep` names inside them), schema fields normalised,
/// a list of named arguments without transport fields and sorted by name.
pub(super) fn normalize_element(kind: Kind, element: &mut Element) {
    drop_transport(element);
    for field in &kind.spec().schema {
        let Some(value) = element.get_mut(&field.field) else {
            continue;
        };
        match (field.form, value) {
            (Form::Schema, schema) => normalize_schema(schema),
            (Form::Arguments, Value::Array(args)) => {
                for arg in args.iter_mut() {
                    if let Value::Object(arg) = arg {
                        drop_transport(arg);
                    }
                }
                args.sort_by(|a, b| {
                    let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_owned);
                    name(a).cmp(&name(b))
                });
            }
            (Form::Arguments, _) => {}
        }
    }
}

/// Drop the transport fields of an element or argument, keeping what `keep` names
/// inside them.
pub(super) fn drop_transport(map: &mut Map<String, Value>) {
    let fields = &elements::table().fields;
    for field in &fields.transport {
        let Some(value) = map.remove(field) else {
            continue;
        };
        let mut kept = Map::new();
        for path in &fields.keep {
            let Some(rest) = path
                .strip_prefix(field.as_str())
                .and_then(|r| r.strip_prefix('.'))
            else {
                continue;
            };
            if let Some(v) = pointer(&value, rest) {
                insert_path(&mut kept, rest, v.clone());
            }
        }
        if !kept.is_empty() {
            map.insert(field.clone(), Value::Object(kept));
        }
    }
    drop_per_request_meta(map);
}

/// Drop the keys of `_meta` that vary per request (rules/elements.toml), and `_meta`
/// itself when nothing is left: `{}` and absent are the same.
fn drop_per_request_meta(map: &mut Map<String, Value>) {
    let Some(Value::Object(meta)) = map.get_mut(META) else {
        return;
    };
    for key in &elements::table().fields.per_request_meta {
        meta.remove(key);
    }
    if meta.is_empty() {
        map.remove(META);
    }
}

/// The value at a dotted path inside `value`.
fn pointer<'v>(value: &'v Value, dotted: &str) -> Option<&'v Value> {
    dotted.split('.').try_fold(value, |v, k| v.get(k))
}

/// Put `v` at a dotted path inside `map`, making the objects on the way.
fn insert_path(map: &mut Map<String, Value>, dotted: &str, v: Value) {
    match dotted.split_once('.') {
        None => {
            map.insert(dotted.to_string(), v);
        }
        Some((head, rest)) => {
            let inner = map
                .entry(head.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(inner) = inner {
                insert_path(inner, rest, v);
            }
        }
    }
}

/// Whether the array a schema holds under `key` has an order that carries no meaning
/// (sorted and deduplicated when it holds only strings).
pub(super) fn sortable(key: &str) -> bool {
    keywords::get(key).is_some_and(|k| k.unordered && !k.data && k.holds.is_none())
}

/// Whether any `keep` path lies inside the transport field `field`.
pub(super) fn keeps_inside(field: &str) -> bool {
    elements::table().fields.keep.iter().any(|path| {
        path.strip_prefix(field)
            .is_some_and(|rest| rest.starts_with('.'))
    })
}

/// Sort the arrays of a schema whose order carries no meaning (the vocabulary's
/// `unordered` keywords that hold names or types, not data: `required`, `type`), in
/// every subschema the vocabulary places (`crate::keywords::subschemas`): a property
/// named `enum` is a schema, an `enum`'s values are data and keep their order.
/// Iterative, so a hostile nesting depth cannot overflow the stack.
fn normalize_schema(schema: &mut Value) {
    let mut stack: Vec<&mut Value> = vec![schema];
    while let Some(node) = stack.pop() {
        let Value::Object(map) = node else { continue };
        for (key, child) in map.iter_mut() {
            if let (true, Value::Array(items)) = (sortable(key), child) {
                if items.iter().all(Value::is_string) {
                    items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                    items.dedup();
                }
            }
        }
        stack.extend(keywords::subschemas_mut(map));
    }
}
