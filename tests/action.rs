//! The GitHub Action's check step (action/run.sh), run locally with the GitHub
//! environment variables pointing at temporary files.

mod common;

use std::fs;
use std::process::Command;

use common::*;
use serde_json::json;

#[test]
fn the_action_writes_a_step_summary_sarif_and_outputs() {
    let d = tmpdir("action");
    let spec = |tools: serde_json::Value| json!({"tools": tools});
    let old = write_spec(
        &d,
        &spec(
            json!([{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b", "inputSchema": {"type": "object"}}]),
        ),
    );
    let o = bin()
        .current_dir(&d)
        .args(["snapshot", "--"])
        .arg(fixture())
        .arg(&old)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let new = d.join("new.json");
    fs::write(
        &new,
        spec(json!([{"name": "a", "inputSchema": {"type": "object"}}])).to_string(),
    )
    .unwrap();
    let (summary, output, sarif) = (
        d.join("summary.md"),
        d.join("output.txt"),
        d.join("out.sarif"),
    );
    fs::write(&summary, "previous step's summary\n").unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("action/run.sh");
    let run = |fail_on: &str| {
        Command::new("bash")
            .arg(&script)
            .current_dir(&d)
            .env("MCP_COVENANT_BIN", env!("CARGO_BIN_EXE_mcp-covenant"))
            .env(
                "INPUT_COMMAND",
                format!("{} {}", fixture().display(), new.display()),
            )
            .env("INPUT_ARGS", "--timeout 20")
            .env("INPUT_FAIL_ON", fail_on)
            .env("INPUT_FORMAT", "github")
            .env("INPUT_SARIF", &sarif)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_OUTPUT", &output)
            .env("RUNNER_TEMP", &d)
            .output()
            .unwrap()
    };
    let o = run("breaking");
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("::error file=mcp-covenant.lock,line="),
        "{}",
        stdout(&o)
    );
    let text = fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("previous step's summary\n### mcp-covenant"),
        "appended, not replaced: {text}"
    );
    assert!(text.contains("`tool:b`"), "{text}");
    let out = fs::read_to_string(&output).unwrap();
    assert!(out.contains(&format!("sarif={}", sarif.display())), "{out}");
    assert!(out.contains("bump=major"), "{out}");
    let doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&sarif).unwrap()).unwrap();
    let rules: Vec<&str> = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["server.version.unchanged", "tool.removed"]);
    assert_eq!(run("never").status.code(), Some(0));
    // A server that fails is exit 2 from the action too.
    let o = Command::new("bash")
        .arg(&script)
        .current_dir(&d)
        .env("MCP_COVENANT_BIN", env!("CARGO_BIN_EXE_mcp-covenant"))
        .env("INPUT_COMMAND", "definitely-not-a-command-xyz")
        .env("RUNNER_TEMP", &d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
