//! A second opinion on every schema pair the engine compares: jsoncompat, an independent
//! checker of JSON Schema backward compatibility, reads the golden and corpus pairs too.
//! It runs as its own program (tests/oracle, a package of its own: as a dev-dependency it
//! would change how serde_json reads numbers in mcp-covenant's own test build), which
//! scripts/test.sh builds; hence `#[ignore]`. In input (what a caller sends) a change is
//! compatible when every instance the old schema accepts the new one accepts
//! (jsoncompat's deserializer role; like us, it does not count undeclared properties an
//! open object happens to allow); in output (what a caller receives) when the new schema
//! accepts nothing the old one rejects (its serializer role).
//!
//! Where jsoncompat finds a counterexample, the independent `jsonschema` validator must
//! confirm it, and then our verdict for that element and direction must be breaking:
//! otherwise it is a missed break, unless tests/jsoncompat-allow.toml names the pair with
//! the convention that explains it. Where jsoncompat proves compatibility and we call the
//! change breaking, that is a false positive of ours (or a gap in its prover): counted and
//! printed by rule, not failed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use mcp_covenant::diff;
use mcp_covenant::lockfile::Lockfile;
use mcp_covenant::rules::{Rules, Severity};
use serde_json::{json, Map, Value};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every before/after pair: the golden cases, then the corpus (tests/corpus/pairs.txt).
fn pairs() -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    for dir in fs::read_dir(root().join("golden")).unwrap() {
        let dir = dir.unwrap().path();
        let (a, b) = (dir.join("before.lock"), dir.join("after.lock"));
        if a.exists() && b.exists() {
            pairs.push((a, b));
        }
    }
    let list = fs::read_to_string(root().join("tests/corpus/pairs.txt")).unwrap();
    for line in list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        if let [pkg, old, new] = line.split_whitespace().collect::<Vec<_>>()[..] {
            let d = root().join("tests/corpus").join(pkg);
            pairs.push((d.join(format!("{old}.lock")), d.join(format!("{new}.lock"))));
        }
    }
    pairs.sort();
    pairs
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

#[derive(Clone, Copy)]
enum Direction {
    Input,
    Output,
}

#[derive(Clone, Copy, PartialEq)]
enum Form {
    Schema,
    Arguments,
}

/// One kind of element (rules/elements.toml, read here as data: kind, list, key, and its
/// schema-bearing fields with their direction and form).
struct Kind {
    kind: String,
    list: String,
    key: String,
    fields: Vec<(String, Direction, Form)>,
}

fn kinds() -> Vec<Kind> {
    let text = fs::read_to_string(root().join("rules/elements.toml")).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let s = |v: &toml::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let mut kinds = Vec::new();
    for e in doc["element"].as_array().unwrap() {
        let mut fields = Vec::new();
        for f in e
            .get("schema")
            .and_then(|x| x.as_array())
            .into_iter()
            .flatten()
        {
            let direction = match s(f, "direction").as_deref() {
                Some("input") => Direction::Input,
                Some("output") => Direction::Output,
                other => panic!("rules/elements.toml: direction {other:?}"),
            };
            let form = match s(f, "form").as_deref() {
                None | Some("schema") => Form::Schema,
                Some("arguments") => Form::Arguments,
                other => panic!("rules/elements.toml: form {other:?}"),
            };
            fields.push((s(f, "field").unwrap(), direction, form));
        }
        kinds.push(Kind {
            kind: s(e, "kind").unwrap(),
            list: s(e, "list").unwrap(),
            key: s(e, "key").unwrap(),
            fields,
        });
    }
    kinds
}

/// A schema-bearing field as one schema (a prompt's arguments, which are strings, as an
/// object's properties).
fn as_schema(value: &Value, form: Form) -> Option<Value> {
    match form {
        Form::Schema => Some(value.clone()),
        Form::Arguments => {
            let mut props = Map::new();
            let mut required = Vec::new();
            for arg in value.as_array()? {
                let name = arg.get("name")?.as_str()?.to_string();
                if arg.get("required") == Some(&Value::Bool(true)) {
                    required.push(Value::String(name.clone()));
                }
                props.insert(name, json!({"type": "string"}));
            }
            Some(json!({"type": "object", "properties": props, "required": required}))
        }
    }
}

/// Whether `v` uses a keyword that draft-07 and 2020-12 read differently: array-form
/// `items`, `additionalItems`, `dependencies`.
fn draft_sensitive(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| {
            (k == "items" && x.is_array())
                || k == "additionalItems"
                || k == "dependencies"
                || draft_sensitive(x)
        }),
        Value::Array(a) => a.iter().any(draft_sensitive),
        _ => false,
    }
}

/// jsoncompat reads 2020-12 only and refuses a schema that declares another `$schema`.
/// Most servers declare draft-07 (zod-to-json-schema) while using nothing it reads
/// differently: such a schema goes without its `$schema`. One that uses such a keyword
/// stays as it is (and unsupported).
fn as_2020_12(schema: &Value) -> Value {
    let mut s = schema.clone();
    let older = s
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|u| u.contains("draft-0"));
    if older && !draft_sensitive(&s) {
        s.as_object_mut().unwrap().remove("$schema");
    }
    s
}

fn validator(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
        .ok()
}

/// What jsoncompat says about one pair, in the direction that matters to a caller.
enum Verdict {
    Compatible,
    /// A counterexample, confirmed by the `jsonschema` validator.
    Break(Value),
    /// A counterexample the `jsonschema` validator does not confirm.
    Unconfirmed(Value),
    Unknown,
    Unsupported(String),
    TimedOut,
}

/// How long one verdict may take: jsoncompat can search for a long time on a large
/// schema, and a pair it does not answer in time is "unknown".
const ORACLE_TIMEOUT: Duration = Duration::from_secs(5);

/// The oracle program (tests/oracle), one request a line, started again after a pair it
/// did not answer in time.
struct Oracle {
    child: Child,
    answers: Receiver<String>,
}

impl Oracle {
    fn start() -> Oracle {
        let exe = std::env::var_os("COVENANT_ORACLE")
            .map(PathBuf::from)
            .unwrap_or_else(|| root().join("target/oracle/debug/covenant-oracle"));
        let mut child = Command::new(&exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; build it with `cargo build --manifest-path tests/oracle/Cargo.toml --target-dir target/oracle` (scripts/test.sh does)",
                    exe.display()
                )
            });
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, answers) = channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Oracle { child, answers }
    }

    fn verdict(&mut self, old: &Value, new: &Value, direction: Direction) -> Verdict {
        let role = match direction {
            Direction::Input => "deserializer",
            Direction::Output => "serializer",
        };
        let stdin = self.child.stdin.as_mut().unwrap();
        let request = json!({"old": as_2020_12(old), "new": as_2020_12(new), "role": role});
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let line = match self.answers.recv_timeout(ORACLE_TIMEOUT) {
            Ok(line) => line,
            Err(_) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                *self = Oracle::start();
                return Verdict::TimedOut;
            }
        };
        let answer: Value = serde_json::from_str(&line).unwrap();
        match answer["status"].as_str() {
            Some("compatible") => Verdict::Compatible,
            Some("incompatible") => {
                let counterexample = answer["counterexample"].clone();
                let (Some(vo), Some(vn)) = (validator(old), validator(new)) else {
                    return Verdict::Unconfirmed(counterexample);
                };
                let (accepts, rejects) = match direction {
                    Direction::Input => (&vo, &vn),
                    Direction::Output => (&vn, &vo),
                };
                if accepts.is_valid(&counterexample) && !rejects.is_valid(&counterexample) {
                    Verdict::Break(counterexample)
                } else {
                    Verdict::Unconfirmed(counterexample)
                }
            }
            Some("unknown") => Verdict::Unknown,
            _ => {
                let reason = answer["reason"].as_str().unwrap_or("").to_string();
                Verdict::Unsupported(reason.chars().take(70).collect())
            }
        }
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// tests/jsoncompat-allow.toml: `[[allow]]` entries with `pair` (the before lockfile),
/// `subject`, `field` and the `reason` our verdict differs.
fn allowlist() -> BTreeMap<(String, String, String), String> {
    let text = fs::read_to_string(root().join("tests/jsoncompat-allow.toml")).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let mut out = BTreeMap::new();
    for entry in doc
        .get("allow")
        .and_then(|a| a.as_array())
        .into_iter()
        .flatten()
    {
        let s = |k: &str| {
            entry
                .get(k)
                .and_then(|v| v.as_str())
                .unwrap_or_else(|| panic!("allow entry without `{k}`: {entry:?}"))
                .to_string()
        };
        let reason = s("reason");
        assert!(reason.len() > 20, "a reason, not a label: {entry:?}");
        out.insert((s("pair"), s("subject"), s("field")), reason);
    }
    out
}

#[test]
#[ignore = "needs the jsoncompat oracle built (tests/oracle); scripts/test.sh builds it"]
fn jsoncompat_finds_no_break_we_call_compatible() {
    let mut oracle = Oracle::start();
    let rules = Rules::embedded().unwrap();
    let kinds = kinds();
    let allowed = allowlist();
    let mut used = BTreeSet::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut false_positives: BTreeMap<String, usize> = BTreeMap::new();
    let mut missed = Vec::new();
    let mut notes = Vec::new();
    let mut unsupported: BTreeMap<String, usize> = BTreeMap::new();
    for (a_path, b_path) in pairs() {
        let read = |p: &Path| fs::read(p).unwrap();
        let (ta, tb) = (read(&a_path), read(&b_path));
        let (Ok(a), Ok(b)) = (
            Lockfile::parse(&ta, &relative(&a_path)),
            Lockfile::parse(&tb, &relative(&b_path)),
        ) else {
            continue; // a golden case about an unreadable lockfile
        };
        let ja: Value = serde_json::from_slice(&ta).unwrap();
        let jb: Value = serde_json::from_slice(&tb).unwrap();
        let changes = diff::diff(&rules, &a.surface, &b.surface);
        for element in &kinds {
            let list = |j: &Value| {
                j.pointer(&format!("/surface/{}", element.list))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            let after = list(&jb);
            for old in list(&ja) {
                let Some(key) = old.get(&element.key).and_then(Value::as_str) else {
                    continue;
                };
                let Some(new) = after
                    .iter()
                    .find(|e| e.get(&element.key) == old.get(&element.key))
                else {
                    continue;
                };
                let subject = format!("{}:{key}", element.kind);
                for (field, direction, form) in &element.fields {
                    let (Some(so), Some(sn)) = (
                        old.get(field).and_then(|v| as_schema(v, *form)),
                        new.get(field).and_then(|v| as_schema(v, *form)),
                    ) else {
                        continue;
                    };
                    if so == sn {
                        continue;
                    }
                    let ours: Vec<&diff::Change> = changes
                        .iter()
                        .filter(|c| {
                            c.subject.to_string() == subject
                                && c.severity == Severity::Breaking
                                && c.path.as_ref().map(ToString::to_string).is_some_and(|p| {
                                    p == *field
                                        || p.starts_with(&format!("{field}."))
                                        || p.starts_with(&format!("{field}["))
                                })
                        })
                        .collect();
                    let place = (relative(&a_path), subject.clone(), field.clone());
                    match oracle.verdict(&so, &sn, *direction) {
                        Verdict::Break(instance) if ours.is_empty() => {
                            if allowed.contains_key(&place) {
                                used.insert(place);
                                *counts.entry("break, allowed convention").or_default() += 1;
                            } else {
                                missed.push(format!(
                                    "{} {} {}: jsoncompat's counterexample {instance} breaks it, we report no breaking change",
                                    place.0, place.1, place.2
                                ));
                            }
                        }
                        Verdict::Break(_) => *counts.entry("break, both").or_default() += 1,
                        Verdict::Compatible if !ours.is_empty() => {
                            *counts.entry("compatible, we say breaking").or_default() += 1;
                            let codes: BTreeSet<&str> =
                                ours.iter().map(|c| c.code.as_str()).collect();
                            notes.push(format!(
                                "{} {} {}: jsoncompat proves compatible, we report {codes:?}",
                                place.0, place.1, place.2
                            ));
                            for c in ours {
                                *false_positives.entry(c.code.clone()).or_default() += 1;
                            }
                        }
                        Verdict::Compatible => *counts.entry("compatible, both").or_default() += 1,
                        Verdict::Unconfirmed(instance) => {
                            *counts.entry("counterexample not confirmed").or_default() += 1;
                            notes.push(format!(
                                "{} {} {}: counterexample {instance} not confirmed by jsonschema",
                                place.0, place.1, place.2
                            ));
                        }
                        Verdict::Unknown => *counts.entry("jsoncompat unknown").or_default() += 1,
                        Verdict::TimedOut => {
                            *counts.entry("jsoncompat timed out").or_default() += 1
                        }
                        Verdict::Unsupported(why) => {
                            *counts.entry("jsoncompat unsupported").or_default() += 1;
                            *unsupported.entry(why).or_default() += 1;
                        }
                    }
                }
            }
        }
    }
    let mut fp: Vec<_> = false_positives.into_iter().collect();
    fp.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    eprintln!("schema pairs by verdict: {counts:#?}");
    eprintln!("unsupported by jsoncompat, by reason: {unsupported:#?}");
    eprintln!("{}", notes.join("\n"));
    eprintln!("our breaking changes on pairs jsoncompat proves compatible, by rule: {fp:?}");
    let stale: Vec<_> = allowed.keys().filter(|k| !used.contains(*k)).collect();
    assert!(
        missed.is_empty(),
        "{} schema pairs where jsoncompat finds a break we do not report (a missed break, or a convention for tests/jsoncompat-allow.toml):\n{}",
        missed.len(),
        missed.join("\n")
    );
    assert!(
        stale.is_empty(),
        "tests/jsoncompat-allow.toml entries that no longer disagree: {stale:?}"
    );
    assert!(
        counts.values().sum::<usize>() > 200,
        "too few schema pairs compared: {counts:?}"
    );
}
