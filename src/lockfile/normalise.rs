//! Canonical form: transport fields dropped, order-free arrays sorted, elements sorted
//! by key. Two captures of the same interface normalise equal.

use serde_json::Value;

use crate::keywords;

use super::model::{key_of, Element, Kind, Surface};

/// Element fields that are transport detail, not interface: never stored or compared.
const TRANSPORT_FIELDS: &[&str] = &["_meta", "ttlMs", "cacheScope", "resultType"];
impl Surface {
    /// Put the surface in canonical form: transport fields dropped, order-free arrays
    /// sorted, elements sorted by key. Two captures of the same interface normalize equal.
    pub fn normalize(&mut self) {
        for kind in Kind::ALL {
            let list = self.list_mut(kind);
            for element in list.iter_mut() {
                normalize_element(element);
            }
            let key = kind.key_field();
            list.sort_by(|a, b| key_of(a, key).cmp(key_of(b, key)));
        }
    }
}

pub(super) fn normalize_element(element: &mut Element) {
    for field in TRANSPORT_FIELDS {
        element.remove(*field);
    }
    for field in ["inputSchema", "outputSchema"] {
        if let Some(schema) = element.get_mut(field) {
            normalize_schema(schema);
        }
    }
    if let Some(Value::Array(args)) = element.get_mut("arguments") {
        for arg in args.iter_mut() {
            if let Value::Object(arg) = arg {
                for field in TRANSPORT_FIELDS {
                    arg.remove(*field);
                }
            }
        }
        args.sort_by(|a, b| {
            let name = |v: &Value| {
                v.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            name(a).cmp(&name(b))
        });
    }
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
            let sortable = keywords::get(key).is_some_and(|k| k.unordered && !k.data);
            if let (true, Value::Array(items)) = (sortable, child) {
                if items.iter().all(Value::is_string) {
                    items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                    items.dedup();
                }
            }
        }
        stack.extend(keywords::subschemas_mut(map));
    }
}
