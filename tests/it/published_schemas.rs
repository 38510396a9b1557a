//! docs/schemas/: the JSON report's schema and covenant.toml's, against what the
//! binary prints and every example config: each golden case's JSON report, a grouped
//! report of two [[server]] entries, a lint report; each golden covenant.toml, the one
//! `init` writes and the examples of `help config`. A config the binary refuses for an
//! unknown key is refused by the schema too.

use std::fs;
use std::path::Path;

use crate::common::*;
use serde_json::Value;

fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/schemas")
        .join(name);
    let schema: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {}", errors.join("\n"));
}

/// covenant.toml as the JSON a schema validates (a TOML date as its text).
fn toml_as_json(text: &str) -> Value {
    let table: toml::Table = toml::from_str(text).unwrap();
    fn conv(v: &toml::Value) -> Value {
        match v {
            toml::Value::Datetime(d) => Value::String(d.to_string()),
            toml::Value::Array(a) => Value::Array(a.iter().map(conv).collect()),
            toml::Value::Table(t) => {
                Value::Object(t.iter().map(|(k, v)| (k.clone(), conv(v))).collect())
            }
            other => serde_json::to_value(other).unwrap(),
        }
    }
    conv(&toml::Value::Table(table))
}

#[test]
fn every_json_report_matches_the_report_schema() {
    let v = schema("report.schema.json");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let mut n = 0;
    for dir in fs::read_dir(&golden).unwrap() {
        let path = dir.unwrap().path().join("expected.json");
        if let Ok(text) = fs::read_to_string(&path) {
            let doc: Value = serde_json::from_str(&text).unwrap();
            assert_valid(&v, &doc, &path.display().to_string());
            n += 1;
        }
    }
    assert!(n > 50, "{n} golden JSON reports");
    // Several servers: the grouped form, with a lint report of the same servers.
    let d = tmpdir("schema-grouped");
    let spec = write_spec(
        &d,
        &serde_json::json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}),
    );
    let fixture = fixture();
    let config = format!(
        "[[server]]\nname = \"one\"\ncommand = [{f:?}, {s:?}]\nlockfile = \"one.lock\"\n\n[[server]]\nname = \"two\"\ncommand = [{f:?}, {s:?}]\nlockfile = \"two.lock\"\n",
        f = fixture.display().to_string(),
        s = spec.display().to_string()
    );
    fs::write(d.join("covenant.toml"), config).unwrap();
    let o = bin().current_dir(&d).arg("snapshot").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for args in [["check", "--format", "json"], ["lint", "--format", "json"]] {
        let o = bin().current_dir(&d).args(args).output().unwrap();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_valid(&v, &doc, &format!("{args:?}"));
    }
    // Not everything passes: a report without its changes does not.
    let bad = serde_json::json!({"covenant_version": "0.2.0", "required_bump": "huge", "counts": {}, "changes": []});
    assert!(!v.is_valid(&bad));
}

#[test]
fn every_example_config_matches_the_config_schema() {
    let v = schema("covenant.schema.json");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let mut n = 0;
    for dir in fs::read_dir(&golden).unwrap() {
        let dir = dir.unwrap().path();
        let Ok(text) = fs::read_to_string(dir.join("covenant.toml")) else {
            continue;
        };
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if toml::from_str::<toml::Table>(&text).is_err() {
            continue;
        }
        let doc = toml_as_json(&text);
        // The cases of configs the binary refuses: a schema catches some of them.
        if name.starts_with("config-error-") {
            if name == "config-error-unknown-key" || name == "config-error-bad-fail-on" {
                assert!(!v.is_valid(&doc), "{name} is refused by the schema too");
            }
            continue;
        }
        assert_valid(&v, &doc, &name);
        n += 1;
    }
    assert!(n >= 5, "{n} golden configs");
    // What init writes, and the examples of `help config` uncommented (their keys).
    let d = tmpdir("schema-init");
    let o = bin()
        .current_dir(&d)
        .args(["init", "--no-capture", "--", "node", "dist/server.js"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = fs::read_to_string(d.join("covenant.toml")).unwrap();
    assert_valid(&v, &toml_as_json(&written), "init's covenant.toml");
    let uncommented: String = written
        .lines()
        .filter(|l| !l.starts_with("command = "))
        .filter_map(|l| {
            l.strip_prefix("# ")
                .filter(|r| r.starts_with(['[', '"']) || r.contains(" = "))
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_valid(&v, &toml_as_json(&uncommented), "the starter's examples");
    let both =
        "command = [\"a\"]\n[[server]]\nname = \"x\"\ncommand = [\"b\"]\nlockfile = \"x.lock\"\n";
    assert!(!v.is_valid(&toml_as_json(both)));
}
