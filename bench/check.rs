//! `cargo bench --bench check [-- TOOLS...]`: offline `check` on synthetic lockfiles.
//!
//! Generates a pair of lockfiles with N tools (about 20 properties each, nested two
//! levels, enums, arrays of objects, `$defs`) where about 5 % of the tools change, and
//! reports, as the median of several runs:
//!   parse   reading both files into `serde_json::Value`, one after the other
//!   check   what `check --against` does in-process: read both lockfiles (the baseline
//!           in one pass, the other placed beside it), build and diff the elements
//!           whose bytes differ, sort and render the JSON report
//!   full    the same with every element of both lockfiles built (`Lockfile::parse`)
//! The files are left in bench/out/ so the binary can be timed on them too
//! (bench/run.sh does that, with peak RSS).

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use mcp_covenant::diff;
use mcp_covenant::lockfile::Lockfile;
use mcp_covenant::policy;
use mcp_covenant::report::{self, Format, Report};
use mcp_covenant::rules::Rules;
use serde_json::{json, Value};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn property(rng: &mut Rng, depth: u32, i: usize) -> Value {
    match rng.below(if depth < 2 { 6 } else { 4 }) {
        0 => {
            json!({"type": "string", "description": format!("field {i}"), "maxLength": 64 + rng.below(64)})
        }
        1 => json!({"type": "integer", "minimum": 0, "maximum": 1000 + rng.below(1000)}),
        2 => {
            json!({"type": "string", "enum": ["alpha", "beta", "gamma", format!("v{}", rng.below(9))]})
        }
        3 => json!({"type": ["number", "null"], "default": null}),
        4 => object(rng, depth + 1, 4),
        _ => json!({"type": "array", "items": object(rng, depth + 1, 3)}),
    }
}

fn object(rng: &mut Rng, depth: u32, n: usize) -> Value {
    let mut props = serde_json::Map::new();
    let mut required = Vec::new();
    for i in 0..n {
        let name = format!("p{i}_{}", rng.below(1000));
        if rng.below(3) == 0 {
            required.push(Value::String(name.clone()));
        }
        props.insert(name, property(rng, depth, i));
    }
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

fn tool(rng: &mut Rng, i: usize) -> Value {
    let mut input = object(rng, 0, 20);
    input["$defs"] = json!({"Mode": {"type": "string", "enum": ["fast", "safe"]}});
    input["properties"]["mode"] = json!({"$ref": "#/$defs/Mode"});
    json!({
        "name": format!("tool_{i:05}"),
        "description": format!("Synthetic tool number {i}, for benchmarking."),
        "inputSchema": input,
        "outputSchema": object(rng, 1, 6),
    })
}

/// Change about 1 tool in 20: a new required field, a removed enum value, a removed tool.
fn mutate(rng: &mut Rng, tools: &mut Vec<Value>) {
    let mut i = 0;
    while i < tools.len() {
        if rng.below(20) == 0 {
            match rng.below(4) {
                0 => {
                    tools[i]["inputSchema"]["properties"]["added"] = json!({"type": "string"});
                    tools[i]["inputSchema"]["required"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!("added"));
                }
                1 => tools[i]["inputSchema"]["$defs"]["Mode"]["enum"] = json!(["fast"]),
                2 => tools[i]["description"] = json!("Reworded."),
                _ => {
                    tools.remove(i);
                    continue;
                }
            }
        }
        i += 1;
    }
}

fn lockfile(tools: Vec<Value>) -> String {
    let text = json!({"covenant_version": "0.2.0", "captured_at_unix": 0,
        "server": {"name": "bench", "version": "1.0.0"},
        "surface": {"tools": tools}})
    .to_string();
    Lockfile::parse(text.as_bytes(), "bench").unwrap().to_text()
}

fn median(mut f: impl FnMut(), runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn main() {
    // `--parse-only A B`: the reference for peak RSS: parse both into `Value`, hold both.
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--parse-only") {
        let held: Vec<Value> = args[i + 1..]
            .iter()
            .map(|p| serde_json::from_slice(&fs::read(p).unwrap()).unwrap())
            .collect();
        std::hint::black_box(&held);
        return;
    }
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counts = if counts.is_empty() {
        vec![100, 1000, 5000, 10000]
    } else {
        counts
    };
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/out");
    fs::create_dir_all(&out).unwrap();
    let rules = Rules::embedded().unwrap();
    println!(
        "{:>7} {:>9} {:>10} {:>10} {:>7} {:>8} {:>9}",
        "tools", "MB/file", "parse ms", "check ms", "ratio", "changes", "full ms"
    );
    for n in counts {
        let mut rng = Rng(42);
        let before: Vec<Value> = (0..n).map(|i| tool(&mut rng, i)).collect();
        let mut after = before.clone();
        mutate(&mut rng, &mut after);
        let (a, b) = (
            out.join(format!("before-{n}.lock")),
            out.join(format!("after-{n}.lock")),
        );
        fs::write(&a, lockfile(before)).unwrap();
        fs::write(&b, lockfile(after)).unwrap();
        let size = fs::metadata(&a).unwrap().len() as f64 / 1e6;
        let runs = if n > 5000 { 3 } else { 5 };
        let parse = median(
            || {
                for p in [&a, &b] {
                    let v: Value = serde_json::from_slice(&fs::read(p).unwrap()).unwrap();
                    std::hint::black_box(v);
                }
            },
            runs,
        );
        let mut changes = 0;
        let check = median(
            || {
                let (x, y) = (fs::read(&a).unwrap(), fs::read(&b).unwrap());
                let found = diff::lazy::compare_files(
                    &rules,
                    (&x, "a"),
                    (&y, "b"),
                    diff::DEFAULT_WORK_BUDGET,
                )
                .unwrap()
                .changes;
                let outcome = policy::apply(
                    &rules,
                    &Default::default(),
                    found,
                    (None, None),
                    mcp_covenant::config::FailOn::Breaking,
                );
                let report = Report::new(&rules, outcome, "before.lock".into());
                changes = report.changes.len();
                let mut sink = termcolor::NoColor::new(Vec::new());
                report::render(&report, Format::Json, &mut sink).unwrap();
                std::hint::black_box(sink);
            },
            runs,
        );
        let full = median(
            || {
                let x = Lockfile::read(&a).unwrap();
                let y = Lockfile::read(&b).unwrap();
                std::hint::black_box(diff::diff(&rules, &x.surface, &y.surface));
            },
            runs,
        );
        println!(
            "{n:>7} {size:>9.1} {:>10.1} {:>10.1} {:>7.2} {changes:>8} {:>9.1}",
            parse.as_secs_f64() * 1e3,
            check.as_secs_f64() * 1e3,
            check.as_secs_f64() / parse.as_secs_f64(),
            full.as_secs_f64() * 1e3
        );
    }
}
