//! A small JSON Schema (draft-07 subset) checker for validating our SARIF output
//! against the official SARIF 2.1.0 schema in tests/schemas/. It implements the
//! keywords that schema uses: $ref (local), type, enum, properties, required,
//! additionalProperties, items, minItems, uniqueItems, minimum, maximum, anyOf, oneOf.
//! `pattern` and `format` are not checked (no regex engine here); everything else is.

use serde_json::Value;

pub fn validate(root: &Value, instance: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(root, root, instance, "$", &mut errors);
    errors
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => true,
    }
}

fn check(root: &Value, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(s) = schema.as_object() else { return };
    if let Some(Value::String(r)) = s.get("$ref") {
        match r.strip_prefix('#').and_then(|p| root.pointer(p)) {
            Some(target) => check(root, target, v, at, errors),
            None => errors.push(format!("{at}: unresolvable $ref {r}")),
        }
    }
    match s.get("type") {
        Some(Value::String(t)) if !type_ok(t, v) => {
            errors.push(format!("{at}: expected {t}, got {v}"));
            return;
        }
        Some(Value::Array(ts)) if !ts.iter().any(|t| type_ok(t.as_str().unwrap_or(""), v)) => {
            errors.push(format!("{at}: expected one of {ts:?}"));
            return;
        }
        _ => {}
    }
    if let Some(Value::Array(allowed)) = s.get("enum") {
        if !allowed.contains(v) {
            errors.push(format!("{at}: {v} is not one of {allowed:?}"));
        }
    }
    if let (Some(min), Some(n)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if n < min {
            errors.push(format!("{at}: {n} < minimum {min}"));
        }
    }
    if let (Some(max), Some(n)) = (s.get("maximum").and_then(Value::as_f64), v.as_f64()) {
        if n > max {
            errors.push(format!("{at}: {n} > maximum {max}"));
        }
    }
    if let Some(obj) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for req in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = req.as_str() {
                if !obj.contains_key(name) {
                    errors.push(format!("{at}: missing required property `{name}`"));
                }
            }
        }
        for (k, child) in obj {
            let path = format!("{at}.{k}");
            match props.and_then(|p| p.get(k)) {
                Some(ps) => check(root, ps, child, &path, errors),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        errors.push(format!("{at}: property `{k}` is not allowed"))
                    }
                    Some(ap @ Value::Object(_)) => check(root, ap, child, &path, errors),
                    _ => {}
                },
            }
        }
    }
    if let Some(items) = v.as_array() {
        if let Some(min) = s.get("minItems").and_then(Value::as_u64) {
            if (items.len() as u64) < min {
                errors.push(format!("{at}: fewer than {min} items"));
            }
        }
        if s.get("uniqueItems") == Some(&Value::Bool(true)) {
            for (i, a) in items.iter().enumerate() {
                if items[..i].contains(a) {
                    errors.push(format!("{at}[{i}]: duplicate item"));
                }
            }
        }
        if let Some(item_schema) = s.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(root, item_schema, item, &format!("{at}[{i}]"), errors);
            }
        }
    }
    for (kw, exactly_one) in [("anyOf", false), ("oneOf", true)] {
        if let Some(Value::Array(options)) = s.get(kw) {
            let passing = options
                .iter()
                .filter(|o| {
                    let mut e = Vec::new();
                    check(root, o, v, at, &mut e);
                    e.is_empty()
                })
                .count();
            if passing == 0 || (exactly_one && passing != 1) {
                errors.push(format!("{at}: {passing} of the {kw} options match"));
            }
        }
    }
}
