//! The lockfile: what a server exposes, as committed JSON (docs/lockfile.md).
//!
//! Reading is strict about shape (exit 2 with path and line/column) and lenient about
//! age (0.1.x files without `resourceTemplates` are fine). Writing is canonical and
//! atomic: the same surface always gives the same bytes, and a failed write never
//! leaves a truncated file behind.
//!
//! The parts: `model` (the types), `compact` (elements as their canonical text in
//! compact form, as a capture holds them, indented only as they are written or compared),
//! `normalise` (canonical form), `stream` (a capture's
//! element normalised and written canonically as it is parsed, never built), `read` (the one reader: a file's
//! envelope and its elements' text, each element checked by `probe` and validated, built
//! all at once or only where needed), `envelope` (its serde shapes), `place` (where each
//! element's text is), `write` (canonical text, atomic and safe writes), `lines` (line
//! maps).

mod compact;
mod envelope;
mod lines;
mod model;
mod normalise;
mod place;
mod probe;
mod read;
mod stream;
mod write;

pub use compact::{Entry, Listing, Snapshot};
pub use lines::{LineMap, Wanted};
pub use model::{
    capture_time, key_of, Element, Kind, Lockfile, ServerInfo, Surface, COVENANT_VERSION, META,
};
pub use read::{Raw, RawElement};

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"covenant_version":"0.1.1","captured_at_unix":5,
        "server":{"name":"s"},"surface":{"tools":[{"name":"b","inputSchema":{}},{"name":"a","inputSchema":{"type":"object","required":["y","x"]}}],
        "resources":[],"prompts":[]}}"#;

    #[test]
    fn reads_0_1_files_without_templates_and_sorts() {
        let lock = Lockfile::parse(MINIMAL.as_bytes(), "t.lock").unwrap();
        assert_eq!(lock.surface.tools[0]["name"], "a");
        assert_eq!(
            lock.surface.tools[0]["inputSchema"]["required"],
            serde_json::json!(["x", "y"])
        );
        assert!(lock.surface.resource_templates.is_empty());
    }

    #[test]
    fn text_round_trips_byte_identically() {
        let lock = Lockfile::parse(MINIMAL.as_bytes(), "t.lock").unwrap();
        let text = lock.to_text();
        let again = Lockfile::parse(text.as_bytes(), "t.lock").unwrap();
        assert_eq!(again.to_text(), text);
        assert!(text.ends_with("}\n"));
        assert!(text.contains("\n  \"captured_at_unix\": 5,\n"));
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let err = Lockfile::parse(b"{\n  \"covenant_version\": \"0.1.1\",\n  oops", "x.lock")
            .unwrap_err();
        assert!(
            err.message()
                .starts_with("x.lock:3:3: not a valid lockfile"),
            "{err}"
        );
    }

    #[test]
    fn the_server_is_an_object_of_the_element_tables_server_fields() {
        let with = |server: &str| {
            let text = format!(
                r#"{{"covenant_version":"0.1.1","captured_at_unix":0,"server":{server},"surface":{{"tools":[]}}}}"#
            );
            Lockfile::parse(text.as_bytes(), "x.lock").map(|l| l.server)
        };
        let server = with(r#"{"title":"t","instructions":"i"}"#).unwrap();
        assert_eq!(server.name(), "", "a name is never absent");
        assert_eq!(server.get("instructions"), Some("i"));
        assert_eq!(server.version(), None);
        let unknown = with(r#"{"name":"s","websiteUrl":"u"}"#).unwrap_err();
        assert!(
            unknown.message().contains("unknown field `websiteUrl`, expected one of `name`, `title`, `version`, `protocolVersion`, `instructions`"),
            "{unknown}"
        );
        // serde's derive once took a list of the fields' values in their order.
        let listed = with(r#"["s", null, "1.0.0"]"#).unwrap_err();
        assert!(
            listed.message().contains("expected struct ServerInfo"),
            "{listed}"
        );
    }

    #[test]
    fn shape_errors_name_the_element() {
        let text = r#"{"covenant_version":"0.1.1","captured_at_unix":0,"surface":{"tools":[{"title":"x"}]}}"#;
        let err = Lockfile::parse(text.as_bytes(), "x.lock").unwrap_err();
        assert_eq!(err.message(), "x.lock: surface.tools[0]: missing `name`");
    }

    #[test]
    fn line_map_finds_elements_and_the_deepest_existing_part_of_a_path() {
        let text = r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"tools":[
            {"name":"a","inputSchema":{"type":"object","properties":{"x.y":{"type":"string"},"k":{"anyOf":[{"type":"string"},{"type":"null"}]}}}}],
            "prompts":[{"name":"p","arguments":[{"name":"topic","required":true},{"name":"[0]"}]}]}}"#;
        let lock = Lockfile::parse(text.as_bytes(), "t").unwrap();
        let canonical = lock.to_text();
        let lines: Vec<&str> = canonical.lines().collect();
        let map = lock.line_map();
        let at = |kind, key, path: Option<&str>| {
            let path: Option<crate::path::Path> = path.map(|p| p.parse().unwrap());
            map.find(kind, key, path.as_ref()).unwrap()
        };
        let (s, e) = at(Kind::Tool, "a", None);
        assert!(lines[s - 1].trim() == "{" && lines[s].contains("\"name\": \"a\""));
        assert!(lines[e - 1].trim().starts_with('}'));
        let (s, _) = at(Kind::Tool, "a", Some("inputSchema.properties[\"x.y\"]"));
        assert!(lines[s - 1].contains("\"x.y\""), "{}", lines[s - 1]);
        let (s, _) = at(Kind::Tool, "a", Some("inputSchema.properties.k.anyOf[1]"));
        assert!(lines[s].contains("null"), "{}", lines[s]);
        let (s, _) = at(Kind::Tool, "a", Some("inputSchema.properties.missing"));
        assert!(
            lines[s - 1].contains("\"properties\""),
            "falls back to the deepest part: {}",
            lines[s - 1]
        );
        let (s, _) = at(Kind::Prompt, "p", Some("arguments.topic"));
        assert!(lines[s].contains("topic"), "{}", lines[s]);
        // An argument whose name looks like an index is named as the diff names it.
        let (s, _) = at(Kind::Prompt, "p", Some("arguments[\"[0]\"]"));
        assert!(lines[s].contains("\"[0]\""), "{}", lines[s]);
        assert!(map.find(Kind::Tool, "nope", None).is_none());
        assert!(lines[map.lists[&Kind::Prompt] - 1].contains("\"prompts\""));
        assert_eq!(lock.to_text(), canonical);
    }

    #[test]
    fn future_versions_are_refused() {
        let text = r#"{"covenant_version":"9.0.0","captured_at_unix":0,"surface":{}}"#;
        let err = Lockfile::parse(text.as_bytes(), "x.lock").unwrap_err();
        assert!(err.message().contains("upgrade mcp-covenant"), "{err}");
    }

    #[test]
    fn transport_fields_and_per_request_meta_are_dropped() {
        let text = r#"{"covenant_version":"0.1.1","captured_at_unix":0,"surface":{"tools":[{"name":"a","_meta":{"progressToken":1},"ttlMs":5}]}}"#;
        let lock = Lockfile::parse(text.as_bytes(), "x.lock").unwrap();
        assert_eq!(lock.surface.tools[0].len(), 1);
        // The rest of `_meta` is interface: kept.
        let text = r#"{"covenant_version":"0.1.1","captured_at_unix":0,"surface":{"tools":[{"name":"a","_meta":{"x":1,"traceparent":"00-1"}}]}}"#;
        let lock = Lockfile::parse(text.as_bytes(), "x.lock").unwrap();
        assert_eq!(lock.surface.tools[0]["_meta"], serde_json::json!({"x": 1}));
    }
}
