//! Validating our output (SARIF against the official SARIF 2.1.0 schema in
//! tests/schemas/, and other documents against their schemas) with an independent JSON
//! Schema validator: the `jsonschema` crate, a dev-dependency that never enters the
//! binary. The draft comes from the schema's `$schema` (with that draft's default for
//! `format`: asserted in draft-04, as the SARIF schema is); `pattern` is checked like
//! every other keyword. No `$ref` leaves the document.

use serde_json::Value;

/// Every violation of `root` by `instance`, as `instance path: message` lines.
pub fn validate(root: &Value, instance: &Value) -> Vec<String> {
    let mut root = root.clone();
    escape_lone_brackets(&mut root);
    let validator = match jsonschema::options().build(&root) {
        Ok(v) => v,
        Err(e) => return vec![format!("the schema itself is invalid: {e}")],
    };
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// ECMA-262 (Annex B) reads a `]` outside a character class as a literal; Rust's regex
/// engines refuse it. The official SARIF 2.1.0 schema has one (`...[a-zA-Z]{2}]?$`), so
/// every such `]` in a `pattern` is written escaped, which means the same.
fn escape_lone_brackets(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "pattern" {
                    if let Value::String(p) = x {
                        *p = escape_pattern(p);
                    }
                } else {
                    escape_lone_brackets(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(escape_lone_brackets),
        _ => {}
    }
}

fn escape_pattern(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let (mut in_class, mut escaped) = (false, false);
    for c in p.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '[' {
            in_class = true;
        } else if c == ']' {
            if !in_class {
                out.push('\\');
            }
            in_class = false;
        }
        out.push(c);
    }
    out
}
