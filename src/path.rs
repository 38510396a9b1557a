//! Change and finding paths: dotted keys from the element's root, as in the lockfile
//! (`inputSchema.properties.limit`); names that are not plain words are quoted
//! (`inputSchema.properties["a.b"]`).

/// A path segment for a name: plain when it is a simple word, quoted otherwise.
pub fn segment(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| !matches!(c, '.' | '[' | ']' | '"' | ' ') && !c.is_control());
    if plain {
        name.to_string()
    } else {
        format!("[{}]", serde_json::to_string(name).unwrap_or_default())
    }
}

/// `path` followed by the name `name` (`.name` after an empty path: the walker joins
/// from a schema's root and the caller puts the field in front).
pub fn join(path: &str, name: &str) -> String {
    let seg = segment(name);
    if seg.starts_with('[') {
        format!("{path}{seg}")
    } else {
        format!("{path}.{seg}")
    }
}

/// Append the name `name` to `path` in place; to an empty path, `name`'s segment alone.
pub fn push(path: &mut String, name: &str) {
    let seg = segment(name);
    if !path.is_empty() && !seg.starts_with('[') {
        path.push('.');
    }
    path.push_str(&seg);
}
