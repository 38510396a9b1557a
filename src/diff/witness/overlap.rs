//! The candidates of the walker's `oneOf` overlap search (`schema.oneOf.overlap`), made
//! by the witness generator. A module of its own below the walker and the witness search
//! (which compares schemas through the walker), so the two do not import each other.

use serde_json::Value;

use super::candidates::Gen;

/// Candidate instances for a `oneOf` whose variants may overlap (`schema.oneOf.overlap`):
/// `a`, the baseline's node (in `roots[0]`), against `b`, the new one (in `roots[1]`),
/// whose `oneOf` lists `variants`. What `a` allows there, pushed towards `b`'s edges
/// (with the names only a variant declares or requires), and, for each two of the first
/// eight variants, their minimal instances merged over `a`'s own: a value both accept.
/// Unvalidated, smallest first, at most `MAX_OVERLAP_CANDIDATES`.
pub(crate) fn overlap_candidates(
    roots: [&Value; 2],
    a: &Value,
    b: &Value,
    variants: &[Value],
) -> Vec<Value> {
    let mut gen = Gen {
        roots,
        made: 0,
        variant_names: true,
    };
    let base = gen.minimal(a, 0);
    let minimal: Vec<Value> = variants
        .iter()
        .take(8)
        .map(|v| gen.minimal_in(1, v, 0))
        .collect();
    let mut out = Vec::new();
    for (i, x) in minimal.iter().enumerate() {
        for y in &minimal[i + 1..] {
            match (x, y) {
                (Value::Object(x), Value::Object(y)) => {
                    let mut both = base.as_object().cloned().unwrap_or_default();
                    for (k, v) in x.iter().chain(y) {
                        both.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                    out.push(Value::Object(both));
                    let mut alone = x.clone();
                    for (k, v) in y {
                        alone.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                    out.push(Value::Object(alone));
                }
                _ if x == y => out.push(x.clone()),
                _ => {}
            }
        }
    }
    gen.made = 0;
    out.extend(gen.values(a, Some(b), 0));
    let mut seen = std::collections::HashSet::new();
    let mut sized: Vec<(String, Value)> = out
        .into_iter()
        .map(|v| (v.to_string(), v))
        .filter(|(text, _)| seen.insert(text.clone()))
        .collect();
    sized.sort_by_key(|(text, _)| text.len());
    sized
        .into_iter()
        .take(MAX_OVERLAP_CANDIDATES)
        .map(|(_, v)| v)
        .collect()
}

/// Candidates tried for one `oneOf` overlap (`overlap_candidates`).
pub(crate) const MAX_OVERLAP_CANDIDATES: usize = 48;
