//! Reads one JSON object a line on stdin, `{"old": SCHEMA, "new": SCHEMA, "role":
//! "serializer" | "deserializer"}`, and answers each with one line: jsoncompat's verdict
//! (`{"status": "compatible"}`, `{"status": "incompatible", "direction": ...,
//! "counterexample": ...}`, `{"status": "unknown", "reason": ...}`), or
//! `{"status": "unsupported", "reason": ...}` for a schema it cannot read.

use std::io::{BufRead, Write};

use jsoncompat::{analyze_compat, Role, SchemaDocument};
use serde_json::{json, Value};

fn verdict(request: &Value) -> Value {
    let role = match request["role"].as_str() {
        Some("serializer") => Role::Serializer,
        Some("deserializer") => Role::Deserializer,
        _ => return json!({"status": "unsupported", "reason": "no role"}),
    };
    let docs = (
        SchemaDocument::from_json(&request["old"]),
        SchemaDocument::from_json(&request["new"]),
    );
    let (old, new) = match docs {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), _) | (_, Err(e)) => {
            return json!({"status": "unsupported", "reason": e.to_string()})
        }
    };
    match analyze_compat(&old, &new, role) {
        Ok(result) => serde_json::to_value(result).unwrap_or(Value::Null),
        Err(e) => json!({"status": "unsupported", "reason": e.to_string()}),
    }
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        let answer = match serde_json::from_str::<Value>(&line) {
            Ok(request) => {
                // A panic inside jsoncompat is its bug, not a verdict: report it as such.
                std::panic::catch_unwind(|| verdict(&request)).unwrap_or_else(
                    |_| json!({"status": "unsupported", "reason": "jsoncompat panicked"}),
                )
            }
            Err(e) => json!({"status": "unsupported", "reason": e.to_string()}),
        };
        writeln!(out, "{answer}").expect("stdout");
        out.flush().expect("stdout");
    }
}
