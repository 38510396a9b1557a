//! rules/examples.tsv, the before/after example `mcp-covenant rules ID` shows for each
//! rule, is generated from the golden cases: for each rule id, its first change in the
//! smallest case that reports it (a breaking one first: it carries a witness), with the schema or element
//! fragment at its path on both sides as the case's lockfiles have them. The golden
//! test proves each case's report, so an example can only show what the engine says.
//! Regenerate with `UPDATE_DOCS=1 cargo test --test it rule_examples::`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

const HEADER: &str = "# Generated from golden/*/expected.json by `UPDATE_DOCS=1 cargo test --test it rule_examples::`\n# (tests/it/rule_examples.rs fails when it is stale); never edited by hand. For each rule id:\n# its first change in the smallest golden case that reports it (a breaking one first), with\n# the fragment at its path before and after. `mcp-covenant rules ID` shows it. A line each,\n# tab-separated (\\t, \\n, \\\\ escaped; empty: absent): id, case, direction, severity, subject,\n# path, around (the fragments' path when not path), before, after, message, witness.\n";

/// Longest fragment shown, in characters (the golden case has the rest).
const MAX: usize = 160;

struct Example {
    id: String,
    case: String,
    direction: Option<String>,
    severity: String,
    subject: String,
    path: String,
    /// The path of the fragment shown, when it is not `path` (a composition's holder).
    around: Option<String>,
    before: Option<String>,
    after: Option<String>,
    message: String,
    witness: Option<String>,
}

impl Example {
    /// Its line: the fields tab-separated, in the order src/cli/rules.rs reads them
    /// (`\t`, `\n`, `\\` escaped; an absent one empty).
    fn line(&self) -> String {
        let fields = [
            Some(&self.id),
            Some(&self.case),
            self.direction.as_ref(),
            Some(&self.severity),
            Some(&self.subject),
            Some(&self.path),
            self.around.as_ref(),
            self.before.as_ref(),
            self.after.as_ref(),
            Some(&self.message),
            self.witness.as_ref(),
        ];
        let escape = |f: &str| {
            f.replace('\\', "\\\\")
                .replace('\t', "\\t")
                .replace('\n', "\\n")
        };
        let cells: Vec<String> = fields
            .iter()
            .map(|f| f.map(|v| escape(v)).unwrap_or_default())
            .collect();
        cells.join("\t") + "\n"
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// `text` cut to `MAX` characters, with `…` when cut.
fn short(text: String) -> String {
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// The path's steps: `a.b["c.d"][2]` → a, b, c.d, 2.
fn steps(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            rest = r;
        } else if let Some(r) = rest.strip_prefix("[\"") {
            // A quoted key: a JSON string up to its closing quote.
            let mut de = serde_json::Deserializer::from_str(&rest[1..]).into_iter::<String>();
            let key = de.next().unwrap().unwrap();
            let used = de.byte_offset();
            out.push(key);
            rest = r[used - 1..].strip_prefix(']').unwrap();
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').unwrap();
            out.push(r[..end].to_string());
            rest = &r[end + 1..];
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// The element `subject` names in a lockfile (`server`: its server object).
fn element<'a>(lock: &'a Value, subject: &str) -> Option<&'a Value> {
    if subject == "server" {
        return lock.get("server");
    }
    let (kind, name) = subject.split_once(':')?;
    let (list, key) = match kind {
        "tool" => ("tools", "name"),
        "prompt" => ("prompts", "name"),
        "resource" => ("resources", "uri"),
        "template" => ("resourceTemplates", "uriTemplate"),
        _ => return None,
    };
    lock.get("surface")?
        .get(list)?
        .as_array()?
        .iter()
        .find(|e| e.get(key).and_then(Value::as_str) == Some(name))
}

/// The fragment at `steps` below `at`: object keys, array indexes, and in an array of
/// named objects (a prompt's arguments) the one of that name.
fn at<'a>(mut at: &'a Value, steps: &[String]) -> Option<&'a Value> {
    for s in steps {
        at = match at {
            Value::Object(o) => o.get(s)?,
            Value::Array(a) => match s.parse::<usize>() {
                Ok(i) => a.get(i)?,
                Err(_) => a
                    .iter()
                    .find(|e| e.get("name").and_then(Value::as_str) == Some(s))?,
            },
            _ => return None,
        };
    }
    Some(at)
}

fn generate() -> String {
    let mut cases: Vec<(u64, String, PathBuf)> = Vec::new();
    for entry in fs::read_dir(root().join("golden")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        // A case with a covenant.toml may report a rule at another severity than its
        // default: it shows what the config does, not the rule.
        if !dir.join("expected.json").is_file() || dir.join("covenant.toml").exists() {
            continue;
        }
        let size = ["before.lock", "after.lock", "lint.lock"]
            .iter()
            .map(|f| fs::metadata(dir.join(f)).map(|m| m.len()).unwrap_or(0))
            .sum();
        cases.push((size, name, dir));
    }
    cases.sort();
    // Per rule id: a breaking change first (it has a witness), then one whose fragment
    // the lockfiles show on more sides (a path through a `$ref` is found on neither),
    // then the smallest case.
    type Rank = (bool, usize, u64);
    let mut chosen: BTreeMap<String, (Rank, Example)> = BTreeMap::new();
    for (size, name, dir) in &cases {
        let read = |f: &str| -> Option<Value> {
            serde_json::from_str(&fs::read_to_string(dir.join(f)).ok()?).ok()
        };
        let Some(report) = read("expected.json") else {
            continue;
        };
        // A check case compares two lockfiles; a lint case's findings are about one,
        // shown as `after`.
        let (before, after, changes) = match (read("lint.lock"), report.get("changes")) {
            (None, Some(Value::Array(c))) => (read("before.lock"), read("after.lock"), c),
            (Some(lint), None) => match report.get("findings") {
                Some(Value::Array(f)) => (None, Some(lint), f),
                _ => continue,
            },
            _ => continue,
        };
        for c in changes {
            let text = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_string);
            let (Some(id), Some(subject)) = (text("code"), text("subject")) else {
                continue;
            };
            let direction = text("direction");
            let severity = text("severity")
                .or_else(|| text("level"))
                .unwrap_or_default();
            let path = text("path").unwrap_or_default();
            // A variant's index may differ between the sides (variants are matched
            // unordered), and one side may have no composition at all: the fragment
            // shown is the schema that holds it.
            let mut shown = steps(&path);
            let around = ["anyOf", "oneOf", "allOf"]
                .iter()
                .filter_map(|k| path.find(&format!(".{k}[")))
                .min()
                .map(|at| path[..at].to_string());
            if let Some(i) = shown
                .iter()
                .position(|s| matches!(s.as_str(), "anyOf" | "oneOf" | "allOf"))
            {
                shown.truncate(i);
            }
            let side = |lock: &Option<Value>| {
                let e = element(lock.as_ref()?, &subject)?;
                // A lint finding names a parameter by its name alone.
                let found = at(e, &shown).or_else(|| {
                    let under = |field: &[&str]| {
                        let p: Vec<String> = field.iter().map(|s| s.to_string()).collect();
                        at(e, &[p, shown.clone()].concat())
                    };
                    under(&["inputSchema", "properties"]).or_else(|| under(&["arguments"]))
                });
                found.map(|v| short(serde_json::to_string(v).unwrap()))
            };
            let (before, after) = (side(&before), side(&after));
            let rank = (
                !matches!(severity.as_str(), "breaking" | "error"),
                usize::from(before.is_none()) + usize::from(after.is_none()),
                *size,
            );
            if chosen.get(&id).is_some_and(|(r, _)| *r <= rank) {
                continue;
            }
            let witness = c
                .get("witness")
                .filter(|w| !w.is_null())
                .map(|w| short(serde_json::to_string(w).unwrap()));
            let example = Example {
                id: id.clone(),
                case: name.clone(),
                direction,
                severity,
                subject: subject.clone(),
                path: path.clone(),
                around,
                before,
                after,
                message: text("message").unwrap_or_default(),
                witness,
            };
            chosen.insert(id, (rank, example));
        }
    }
    let mut out = HEADER.to_string();
    for (_, e) in chosen.values() {
        out.push_str(&e.line());
    }
    out
}

#[test]
fn rules_examples_tsv_is_generated_from_the_golden_cases() {
    let path = root().join("rules/examples.tsv");
    let expected = generate();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        fs::write(&path, &expected).unwrap();
    }
    let actual = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "rules/examples.tsv is stale: regenerate it with `UPDATE_DOCS=1 cargo test --test it rule_examples::`"
    );
}

/// Rule ids no golden case's report shows (so `rules ID` shows no example): severity
/// `none` by default (fired by a case, never reported), or a lint check no case trips.
/// Each must stay true; a new rule comes with its golden case.
const WITHOUT_EXAMPLE: &[&str] = &[
    "prompt.name_collision",
    "resource.last_modified.changed",
    "schema.dialect.added",
    "schema.dialect.removed",
    "tool.name_collision",
];

#[test]
fn every_rule_has_an_example_but_the_listed_ones() {
    let examples = fs::read_to_string(root().join("rules/examples.tsv")).unwrap();
    let mut missing = Vec::new();
    for table in ["schema", "surface", "lint"] {
        let text = fs::read_to_string(root().join(format!("rules/{table}.toml"))).unwrap();
        for line in text.lines().filter(|l| l.starts_with("id = ")) {
            let id = line
                .trim_start_matches("id = ")
                .trim_matches('"')
                .to_string();
            let has = examples
                .lines()
                .any(|l| l.split('\t').next() == Some(id.as_str()));
            if !has && !missing.contains(&id) {
                missing.push(id);
            }
        }
    }
    missing.sort();
    assert_eq!(
        missing, WITHOUT_EXAMPLE,
        "rule ids without a golden case (add one: scripts/new-golden-case.sh), or listed ones that now have one"
    );
}

#[test]
fn a_path_splits_into_its_steps() {
    assert_eq!(
        steps(r#"outputSchema.properties["a.b"].items[0]"#),
        ["outputSchema", "properties", "a.b", "items", "0"]
    );
    assert_eq!(steps(""), Vec::<String>::new());
    assert_eq!(steps(r#"_meta["x\"]"].y"#), ["_meta", "x\"]", "y"]);
}
