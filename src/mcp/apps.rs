//! MCP Apps: the `ui://` resources tools name in `_meta.ui.resourceUri` and that
//! `resources/list` leaves out. The extension lets a server omit such UI-only resources
//! from its list, and an app host fetches each with `resources/read`; the sandbox it
//! grants (`_meta.ui.csp`, `_meta.ui.permissions`) may be visible in the read result's
//! content item only. These are the pure parts; `Session::read_unlisted_ui` does the
//! reading.

use serde_json::{Map, Value};

use crate::lockfile::{Element, META};

/// The scheme of an MCP Apps UI resource. Nothing else is ever read.
pub const UI_SCHEME: &str = "ui://";

/// The field that marks a resource recorded from its `resources/read` result because
/// `resources/list` did not return it (`"listed": false`). A listed resource has no
/// such field.
pub const LISTED: &str = "listed";

/// The longest URI we read: a `ui://` URI names a template, a few dozen bytes.
const MAX_URI: usize = 2048;

/// The `ui://` URIs the tools name (`_meta.ui.resourceUri`, or the deprecated flat
/// `_meta["ui/resourceUri"]`) that `resources` does not hold, each once, in tool order.
/// At most one per tool, so at most `tools.len()`.
pub fn unlisted_ui_uris(tools: &[Element], resources: &[Element]) -> Vec<String> {
    let listed = |uri: &str| {
        resources
            .iter()
            .any(|r| r.get("uri").and_then(Value::as_str) == Some(uri))
    };
    let mut uris: Vec<String> = Vec::new();
    for tool in tools {
        let Some(meta) = tool.get(META) else { continue };
        let uri = meta
            .pointer("/ui/resourceUri")
            .or_else(|| meta.get("ui/resourceUri"))
            .and_then(Value::as_str);
        let Some(uri) = uri else { continue };
        if uri.starts_with(UI_SCHEME)
            && uri.len() <= MAX_URI
            && !listed(uri)
            && !uris.iter().any(|u| u == uri)
        {
            uris.push(uri.to_string());
        }
    }
    uris
}

/// The resource element a `resources/read` result describes: `uri`, `mimeType`, and
/// `name`/`title`/`description` when the content item gives them (the spec's content
/// item has none, some servers add them), its `_meta`, and `"listed": false`. The
/// content itself (`text`, `blob`) is never stored: the lockfile records the interface,
/// not the page. Err: why the result describes no resource.
pub fn element_from_read(uri: &str, result: &Value) -> Result<Element, String> {
    let contents = match result.get("contents") {
        Some(Value::Array(c)) => c,
        _ => return Err("a result without a `contents` array".into()),
    };
    let same = |c: &&Value| c.get("uri").and_then(Value::as_str) == Some(uri);
    // The item for this URI; a lone item with another URI (a server that adds a query
    // or a version) is still this resource's content.
    let item = match (contents.iter().find(same), contents.as_slice()) {
        (Some(item), _) | (None, [item]) => item,
        (None, _) => return Err(format!("no content item for {uri}")),
    };
    let Value::Object(item) = item else {
        return Err("a content item that is not an object".into());
    };
    let mut element = Map::new();
    element.insert("uri".into(), Value::String(uri.to_string()));
    for field in ["name", "title", "description", "mimeType"] {
        if let Some(v @ Value::String(_)) = item.get(field) {
            element.insert(field.into(), v.clone());
        }
    }
    if let Some(meta @ Value::Object(_)) = item.get(META) {
        element.insert(META.into(), meta.clone());
    }
    element.insert(LISTED.into(), Value::Bool(false));
    Ok(element)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn el(v: Value) -> Element {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn only_unlisted_ui_uris_once_each() {
        let tools = [
            el(json!({"name": "a", "_meta": {"ui": {"resourceUri": "ui://x/a"}}})),
            el(json!({"name": "b", "_meta": {"ui": {"resourceUri": "ui://x/a"}}})),
            el(json!({"name": "c", "_meta": {"ui/resourceUri": "ui://x/c"}})),
            el(json!({"name": "d", "_meta": {"ui": {"resourceUri": "https://x/d"}}})),
            el(json!({"name": "e", "_meta": {"ui": {"resourceUri": "ui://x/listed"}}})),
            el(json!({"name": "f", "_meta": {"ui": {"resourceUri": 7}}})),
            el(json!({"name": "g"})),
        ];
        let resources = [el(json!({"uri": "ui://x/listed", "name": "l"}))];
        assert_eq!(
            unlisted_ui_uris(&tools, &resources),
            ["ui://x/a", "ui://x/c"]
        );
    }

    #[test]
    fn a_read_result_becomes_an_unlisted_element_without_its_body() {
        let result = json!({"contents": [
            {"uri": "ui://other", "text": "x"},
            {"uri": "ui://x/a", "mimeType": "text/html;profile=mcp-app", "text": "<html>",
             "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}}}
        ], "_meta": {"traceparent": "00-1"}});
        let e = element_from_read("ui://x/a", &result).unwrap();
        assert_eq!(
            Value::Object(e),
            json!({"uri": "ui://x/a", "mimeType": "text/html;profile=mcp-app",
                   "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}}},
                   "listed": false})
        );
        assert!(element_from_read("ui://x/a", &json!({"contents": []})).is_err());
        assert!(element_from_read("ui://x/a", &json!({})).is_err());
        assert!(element_from_read("ui://x/a", &json!({"contents": ["ui://x/a"]})).is_err());
    }
}
