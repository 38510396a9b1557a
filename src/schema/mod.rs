//! A JSON Schema on its own, below both its users (`diff` and `lint`): `validate`, the
//! three-valued instance validator (it reports only what it proves), `pattern`, the
//! small regex engine it and the comparators share, and `resolve`, a local `$ref`.

pub(crate) mod pattern;
pub(crate) mod validate;

use serde_json::Value;

/// Resolve a local JSON pointer reference (`#/$defs/Name`) against `root`.
pub(crate) fn resolve<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}
