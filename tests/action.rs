//! The GitHub Action's check step (action/run.sh), run locally against temporary git
//! repositories: an "origin" with a base branch and a pull-request branch, and a shallow
//! clone of the pull-request branch as actions/checkout leaves it. The GitHub
//! environment variables point at temporary files.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use serde_json::json;

struct Pr {
    dir: PathBuf,
    /// The shallow checkout of the pull request.
    work: PathBuf,
    /// The server as the base branch has it (tools a, b).
    old_spec: PathBuf,
    /// The server as the pull request has it (tool b removed).
    new_spec: PathBuf,
}

/// origin: `main` at "README only" (tagged branch `empty`), then main with the lockfile
/// of tools a and b; `feature` removes tool b and regenerates the lockfile in the same
/// commit. work: `git clone --depth 1 --branch feature`, so it lacks origin/main.
fn pull_request(name: &str) -> Pr {
    let dir = tmpdir(&format!("action-{name}"));
    let spec = |tools: serde_json::Value| json!({"tools": tools}).to_string();
    let tool = |n: &str| json!({"name": n, "description": n, "inputSchema": {"type": "object"}});
    let old_spec = dir.join("old.json");
    let new_spec = dir.join("new.json");
    fs::write(&old_spec, spec(json!([tool("a"), tool("b")]))).unwrap();
    fs::write(&new_spec, spec(json!([tool("a")]))).unwrap();
    let origin = dir.join("origin");
    fs::create_dir(&origin).unwrap();
    git_init(&origin);
    fs::write(origin.join("README"), "server\n").unwrap();
    git_commit(&origin, "start");
    git(&origin, &["branch", "empty"]);
    snapshot(&origin, &old_spec);
    git_commit(&origin, "lockfile");
    git(&origin, &["checkout", "-q", "-b", "feature"]);
    snapshot(&origin, &new_spec);
    git_commit(&origin, "remove tool b, regenerate the lockfile");
    let url = format!("file://{}", origin.display());
    git(
        &dir,
        &[
            "clone", "-q", "--depth", "1", "--branch", "feature", &url, "work",
        ],
    );
    Pr {
        work: dir.join("work"),
        dir,
        old_spec,
        new_spec,
    }
}

fn snapshot(repo: &Path, spec: &Path) {
    let o = bin()
        .current_dir(repo)
        .args(["snapshot", "--"])
        .arg(fixture())
        .arg(spec)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

impl Pr {
    fn summary(&self) -> PathBuf {
        self.dir.join("summary.md")
    }
    fn outputs(&self) -> PathBuf {
        self.dir.join("outputs.txt")
    }
    fn sarif(&self) -> PathBuf {
        self.dir.join("out.sarif")
    }

    /// Run action/run.sh in the checkout with the defaults a pull request gets, and
    /// `inputs` on top (an empty value removes the variable).
    fn run(&self, inputs: &[(&str, String)]) -> Output {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("action/run.sh");
        let mut c = Command::new("bash");
        c.arg(&script)
            .current_dir(&self.work)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("MCP_COVENANT_BIN", env!("CARGO_BIN_EXE_mcp-covenant"))
            .env(
                "INPUT_COMMAND",
                format!("{} {}", fixture().display(), self.new_spec.display()),
            )
            .env("INPUT_ARGS", "--timeout 20")
            .env("INPUT_BASE_REF", "main")
            .env("INPUT_FAIL_ON", "breaking")
            .env("INPUT_FORMAT", "github")
            .env("INPUT_SARIF", self.sarif())
            .env("GITHUB_STEP_SUMMARY", self.summary())
            .env("GITHUB_OUTPUT", self.outputs())
            .env("RUNNER_TEMP", &self.dir);
        for (k, v) in inputs {
            if v.is_empty() {
                c.env_remove(k);
            } else {
                c.env(k, v);
            }
        }
        c.output().unwrap()
    }

    fn lockfile(&self) -> Vec<u8> {
        fs::read(self.work.join("mcp-covenant.lock")).unwrap()
    }
}

fn both(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

#[test]
fn a_break_regenerated_in_the_same_commit_fails_the_verdict() {
    let pr = pull_request("verdict");
    fs::write(pr.summary(), "previous step's summary\n").unwrap();
    let o = pr.run(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let out = stdout(&o);
    // Part 1 passed: the lockfile is what the server serves.
    assert!(
        stderr(&o).contains("mcp-covenant.lock is up to date"),
        "{}",
        stderr(&o)
    );
    // Part 2 failed: against the base branch's lockfile, fetched into the shallow clone.
    let removed = out
        .lines()
        .find(|l| l.contains("[tool.removed]"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        removed.starts_with("::error file=mcp-covenant.lock,line="),
        "{removed}"
    );
    git(
        &pr.work,
        &["rev-parse", "--verify", "refs/remotes/origin/main"],
    );
    let summary = fs::read_to_string(pr.summary()).unwrap();
    assert!(
        summary.starts_with("previous step's summary\n### mcp-covenant"),
        "appended, not replaced: {summary}"
    );
    assert!(summary.contains("`tool:b`"), "{summary}");
    let outputs = fs::read_to_string(pr.outputs()).unwrap();
    assert!(outputs.contains("up-to-date=true\n"), "{outputs}");
    assert!(outputs.contains("bump=major\n"), "{outputs}");
    assert!(
        outputs.contains(&format!("sarif={}\n", pr.sarif().display())),
        "{outputs}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(pr.sarif()).unwrap()).unwrap();
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert!(
        results.iter().any(|r| r["ruleId"] == "tool.removed"
            && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                == "mcp-covenant.lock"),
        "{doc}"
    );
    // Each part turns off; fail-on applies to the verdict.
    fn off(k: &str) -> (&str, String) {
        (k, "false".to_string())
    }
    assert_eq!(pr.run(&[off("INPUT_VERDICT")]).status.code(), Some(0));
    assert_eq!(
        pr.run(&[("INPUT_FAIL_ON", "never".into())]).status.code(),
        Some(0)
    );
    // The verdict alone needs no server.
    let o = pr.run(&[off("INPUT_UP_TO_DATE"), ("INPUT_COMMAND", String::new())]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    // Outside a pull request (no base branch) the verdict is skipped.
    let o = pr.run(&[("INPUT_BASE_REF", String::new())]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        stdout(&o).contains("the verdict is skipped"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_stale_lockfile_fails_the_up_to_date_check() {
    let pr = pull_request("stale");
    let before = pr.lockfile();
    // The server still serves tools a and b; the committed lockfile says only a.
    let old = format!("{} {}", fixture().display(), pr.old_spec.display());
    let o = pr.run(&[("INPUT_COMMAND", old), ("INPUT_VERDICT", "false".into())]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let out = stdout(&o);
    assert!(
        out.contains(
            "::error file=mcp-covenant.lock::mcp-covenant.lock is not up to date with the server"
        ),
        "{out}"
    );
    assert!(
        out.contains("+ tool:b — new tool"),
        "what differs is shown: {out}"
    );
    assert_eq!(
        pr.lockfile(),
        before,
        "the committed lockfile is never written"
    );
    let outputs = fs::read_to_string(pr.outputs()).unwrap();
    assert!(outputs.contains("up-to-date=false\n"), "{outputs}");
    assert!(fs::read_to_string(pr.summary())
        .unwrap()
        .contains("lockfile out of date"));
}

#[test]
fn a_base_branch_without_the_lockfile_reports_everything_as_new() {
    let pr = pull_request("new");
    let o = pr.run(&[("INPUT_BASE_REF", "empty".into())]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        stderr(&o).contains(
            "mcp-covenant.lock is not in revision refs/remotes/origin/empty: a new lockfile"
        ),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("::warning file=mcp-covenant.lock,line="),
        "{}",
        stdout(&o)
    );
}

/// With [[server]] entries and no `command`, both parts run on every server.
#[test]
fn configured_servers_are_all_checked() {
    let pr = pull_request("servers");
    let fx = fixture().display().to_string();
    fs::write(
        pr.work.join("covenant.toml"),
        format!(
            "[[server]]\nname = \"main\"\ncommand = [{fx:?}, {:?}]\nlockfile = \"mcp-covenant.lock\"\n\n[[server]]\nname = \"second\"\ncommand = [{fx:?}, {:?}]\nlockfile = \"second.lock\"\n",
            pr.new_spec.display().to_string(),
            pr.new_spec.display().to_string()
        ),
    )
    .unwrap();
    fs::copy(
        pr.work.join("mcp-covenant.lock"),
        pr.work.join("second.lock"),
    )
    .unwrap();
    let o = pr.run(&[("INPUT_COMMAND", String::new())]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("mcp-covenant.lock is up to date"), "{err}");
    assert!(err.contains("second.lock is up to date"), "{err}");
    assert!(err.contains("second.lock is not in revision"), "{err}");
    let out = stdout(&o);
    assert!(
        out.contains("::error file=mcp-covenant.lock,line="),
        "{out}"
    );
    let outputs = fs::read_to_string(pr.outputs()).unwrap();
    assert!(outputs.contains("bump=major\n"), "{outputs}");
    let summary = fs::read_to_string(pr.summary()).unwrap();
    assert!(summary.contains("## Server `second`"), "{summary}");
    // A stale second lockfile fails the up-to-date part.
    fs::write(
        pr.work.join("second.lock"),
        fs::read_to_string(pr.work.join("second.lock"))
            .unwrap()
            .replace("\"description\": \"a\"", "\"description\": \"old\""),
    )
    .unwrap();
    let o = pr.run(&[
        ("INPUT_COMMAND", String::new()),
        ("INPUT_VERDICT", "false".into()),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stderr(&o).contains("second.lock is not up to date"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn what_cannot_run_is_exit_2() {
    let pr = pull_request("errors");
    let code = |inputs: &[(&str, String)]| {
        let o = pr.run(inputs);
        assert!(stderr(&o).contains("error:"), "{}", both(&o));
        o.status.code()
    };
    // A server that fails.
    assert_eq!(
        code(&[("INPUT_COMMAND", "definitely-not-a-command-xyz".into())]),
        Some(2)
    );
    // The up-to-date check without a server.
    assert_eq!(code(&[("INPUT_COMMAND", String::new())]), Some(2));
    // Both parts off.
    assert_eq!(
        code(&[
            ("INPUT_UP_TO_DATE", "false".into()),
            ("INPUT_VERDICT", "false".into())
        ]),
        Some(2)
    );
    // A base ref that is not a branch name, or not on origin.
    assert_eq!(
        code(&[("INPUT_BASE_REF", "--upload-pack=x".into())]),
        Some(2)
    );
    assert_eq!(
        code(&[("INPUT_BASE_REF", "no-such-branch".into())]),
        Some(2)
    );
}

/// What the fake GitHub API holds and what it was asked.
#[derive(Default)]
struct Api {
    /// (id, body) of the pull request's comments.
    comments: Vec<(u64, String)>,
    labels: Vec<String>,
    /// Answer writes with 403, as a fork's read-only token gets.
    read_only: bool,
    /// Answer the labels request with 500.
    labels_fail: bool,
    /// Someone else's comment (id 2) that starts with our marker: it cannot be edited.
    planted: bool,
    /// (method, path, body, authorization) of every request.
    requests: Vec<(String, String, String, String)>,
}

/// A local server that mimics the endpoints the Action uses (list, create and update
/// issue comments; list and remove issue labels) for repository o/r, pull request 7.
struct FakeGitHub {
    url: String,
    api: std::sync::Arc<std::sync::Mutex<Api>>,
}

impl FakeGitHub {
    fn start(api: Api) -> FakeGitHub {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let api = std::sync::Arc::new(std::sync::Mutex::new(api));
        let shared = api.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let mut parts = line.split_whitespace();
                let method = parts.next().unwrap_or("").to_string();
                let path = parts.next().unwrap_or("").to_string();
                let (mut length, mut auth) = (0usize, String::new());
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    if h.trim().is_empty() {
                        break;
                    }
                    let (k, v) = h.split_once(':').unwrap_or((&h, ""));
                    match k.to_ascii_lowercase().as_str() {
                        "content-length" => length = v.trim().parse().unwrap(),
                        "authorization" => auth = v.trim().to_string(),
                        _ => {}
                    }
                }
                let mut body = vec![0u8; length];
                reader.read_exact(&mut body).unwrap();
                let body = String::from_utf8(body).unwrap();
                let mut api = shared.lock().unwrap();
                api.requests
                    .push((method.clone(), path.clone(), body.clone(), auth));
                let text = |v: &serde_json::Value| v.to_string();
                let posted = || -> String {
                    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                    v["body"].as_str().unwrap().to_string()
                };
                let route = path.split('?').next().unwrap().to_string();
                let (status, reply) = match (method.as_str(), route.as_str()) {
                    ("GET", "/repos/o/r/issues/7/comments") => {
                        let mut list = vec![json!({"id": 1, "body": "a person's comment"})];
                        if api.planted {
                            list.push(json!({"id": 2, "body": "<!-- mcp-covenant:pr-comment -->\nNo changes: all clear"}));
                        }
                        list.extend(
                            api.comments
                                .iter()
                                .map(|(id, b)| json!({"id": id, "body": b})),
                        );
                        ("200 OK", text(&json!(list)))
                    }
                    ("GET", "/repos/o/r/issues/7/labels") if api.labels_fail => {
                        ("500 Internal Server Error", "{}".into())
                    }
                    ("GET", "/repos/o/r/issues/7/labels") => {
                        let list: Vec<_> = api.labels.iter().map(|l| json!({"name": l})).collect();
                        ("200 OK", text(&json!(list)))
                    }
                    ("POST" | "PATCH" | "DELETE", _) if api.read_only => (
                        "403 Forbidden",
                        text(&json!({"message": "Resource not accessible by integration"})),
                    ),
                    ("DELETE", p) if p.starts_with("/repos/o/r/issues/7/labels/") => {
                        let name = p.rsplit('/').next().unwrap().replace("%2F", "/");
                        match api.labels.iter().position(|l| *l == name) {
                            Some(i) => {
                                api.labels.remove(i);
                                ("200 OK", "[]".into())
                            }
                            None => ("404 Not Found", "{}".into()),
                        }
                    }
                    ("POST", "/repos/o/r/issues/7/comments") => {
                        let id = 100 + api.comments.len() as u64;
                        api.comments.push((id, posted()));
                        ("201 Created", text(&json!({"id": id})))
                    }
                    ("PATCH", p) if p.starts_with("/repos/o/r/issues/comments/") => {
                        let id: u64 = p.rsplit('/').next().unwrap().parse().unwrap();
                        let body = posted();
                        match api.comments.iter_mut().find(|(i, _)| *i == id) {
                            Some(c) => {
                                c.1 = body;
                                ("200 OK", text(&json!({"id": id})))
                            }
                            None => ("404 Not Found", "{}".into()),
                        }
                    }
                    _ => ("404 Not Found", "{}".into()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                    reply.len()
                );
            }
        });
        FakeGitHub { url, api }
    }

    fn inputs(&self, more: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("GITHUB_API_URL", self.url.clone()),
            ("GITHUB_REPOSITORY", "o/r".to_string()),
            ("GITHUB_TOKEN", "test-token".to_string()),
            ("INPUT_PR_NUMBER", "7".to_string()),
            ("INPUT_UP_TO_DATE", "false".to_string()),
        ];
        v.extend(more.iter().map(|(k, x)| (*k, x.to_string())));
        v
    }

    fn requests(&self) -> Vec<(String, String)> {
        let api = self.api.lock().unwrap();
        api.requests
            .iter()
            .map(|(m, p, _, _)| (m.clone(), p.split('?').next().unwrap().to_string()))
            .collect()
    }
}

#[test]
fn the_pull_request_comment_is_created_once_and_updated_in_place() {
    let pr = pull_request("comment");
    let gh = FakeGitHub::start(Api::default());
    let o = pr.run(&gh.inputs(&[("INPUT_COMMENT", "true")]));
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stdout(&o).contains("pull request comment created"),
        "{}",
        both(&o)
    );
    // A second push: the same comment, updated.
    let o = pr.run(&gh.inputs(&[("INPUT_COMMENT", "true")]));
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stdout(&o).contains("pull request comment updated"),
        "{}",
        both(&o)
    );
    let api = gh.api.lock().unwrap();
    assert_eq!(api.comments.len(), 1, "one comment");
    let (id, body) = api.comments[0].clone();
    assert!(
        body.starts_with("<!-- mcp-covenant:pr-comment -->\n"),
        "{body}"
    );
    assert!(body.contains("`tool:b`"), "{body}");
    assert!(api
        .requests
        .iter()
        .all(|(_, _, _, auth)| auth == "Bearer test-token"));
    drop(api);
    assert_eq!(
        gh.requests(),
        [
            ("GET".into(), "/repos/o/r/issues/7/comments".into()),
            ("POST".into(), "/repos/o/r/issues/7/comments".into()),
            ("GET".into(), "/repos/o/r/issues/7/comments".into()),
            ("PATCH".into(), format!("/repos/o/r/issues/comments/{id}")),
        ]
    );
    // Off by default: no request at all.
    let before = gh.requests().len();
    pr.run(&gh.inputs(&[]));
    assert_eq!(gh.requests().len(), before);
}

#[test]
fn a_comment_someone_else_wrote_with_the_marker_does_not_take_the_verdicts_place() {
    let pr = pull_request("planted");
    let gh = FakeGitHub::start(Api {
        planted: true,
        ..Api::default()
    });
    for event in ["created", "updated"] {
        let o = pr.run(&gh.inputs(&[("INPUT_COMMENT", "true")]));
        assert_eq!(o.status.code(), Some(1), "{}", both(&o));
        assert!(
            stdout(&o).contains(&format!("pull request comment {event}")),
            "{}",
            both(&o)
        );
    }
    let api = gh.api.lock().unwrap();
    assert_eq!(api.comments.len(), 1, "one comment of ours");
    assert!(api.comments[0].1.contains("`tool:b`"));
}

#[test]
fn a_fork_without_permission_gets_the_summary_and_a_notice() {
    let pr = pull_request("fork");
    let gh = FakeGitHub::start(Api {
        read_only: true,
        ..Api::default()
    });
    let o = pr.run(&gh.inputs(&[("INPUT_COMMENT", "true")]));
    assert_eq!(
        o.status.code(),
        Some(1),
        "the verdict still fails: {}",
        both(&o)
    );
    assert!(
        stdout(&o).contains(
            "::notice::mcp-covenant: no permission to comment on this pull request (HTTP 403"
        ),
        "{}",
        both(&o)
    );
    assert!(fs::read_to_string(pr.summary())
        .unwrap()
        .contains("`tool:b`"));
    // No token at all: a notice, no request.
    let gh2 = FakeGitHub::start(Api::default());
    let o = pr.run(&gh2.inputs(&[("INPUT_COMMENT", "true"), ("GITHUB_TOKEN", "")]));
    assert!(
        stdout(&o).contains("::notice::mcp-covenant: no GITHUB_TOKEN"),
        "{}",
        both(&o)
    );
    assert!(gh2.requests().is_empty());
}

#[test]
fn the_approve_label_turns_a_failing_verdict_into_an_approved_pass() {
    let pr = pull_request("approve");
    let gh = FakeGitHub::start(Api {
        labels: vec!["documentation".into(), "breaking-ok".into()],
        ..Api::default()
    });
    let o = pr.run(&gh.inputs(&[("INPUT_APPROVE_LABEL", "breaking-ok")]));
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let out = stdout(&o);
    assert!(out.contains("approved by the label `breaking-ok`"), "{out}");
    // Reported, as a warning rather than an error.
    assert!(
        out.lines().any(
            |l| l.starts_with("::warning file=mcp-covenant.lock") && l.contains("tool.removed")
        ),
        "{out}"
    );
    assert!(!out.lines().any(|l| l.starts_with("::error")), "{out}");
    let summary = fs::read_to_string(pr.summary()).unwrap();
    assert!(
        summary.contains("**Approved** by the label `breaking-ok`"),
        "{summary}"
    );
    assert!(summary.contains("`tool:b`"), "{summary}");
    // Without the label, or when the labels cannot be read: not approved.
    let gh = FakeGitHub::start(Api {
        labels: vec!["documentation".into()],
        ..Api::default()
    });
    let o = pr.run(&gh.inputs(&[("INPUT_APPROVE_LABEL", "breaking-ok")]));
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let gh = FakeGitHub::start(Api {
        labels: vec!["breaking-ok".into()],
        labels_fail: true,
        ..Api::default()
    });
    let o = pr.run(&gh.inputs(&[("INPUT_APPROVE_LABEL", "breaking-ok")]));
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stdout(&o).contains("cannot read the pull request's labels (HTTP 500)"),
        "{}",
        both(&o)
    );
}

/// The webhook payload of a `pull_request` event: its action, the labels the pull
/// request had when it happened, and the label a `labeled` event added.
fn event(pr: &Pr, name: &str, action: &str, labels: &[&str], label: Option<&str>) -> String {
    let mut payload = json!({
        "action": action,
        "number": 7,
        "pull_request": {"number": 7, "labels": labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>()},
    });
    if let Some(l) = label {
        payload["label"] = json!({"name": l});
    }
    let path = pr.dir.join(format!("event-{name}.json"));
    fs::write(&path, payload.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn an_approve_label_given_before_new_commits_does_not_approve_them() {
    let pr = pull_request("approve-stale");
    // Commits pushed while the label was on: it approved the earlier changes, not these.
    // The job fails, says why, and takes the label off, so that adding it again (a
    // `labeled` run) approves what is there now, and no later run counts the old one.
    let gh = FakeGitHub::start(Api {
        labels: vec!["breaking-ok".into()],
        ..Api::default()
    });
    let pushed = event(&pr, "sync", "synchronize", &["breaking-ok"], None);
    let o = pr.run(&gh.inputs(&[
        ("INPUT_APPROVE_LABEL", "breaking-ok"),
        ("GITHUB_EVENT_PATH", &pushed),
    ]));
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let out = stdout(&o);
    assert!(
        out.contains(
            "the approve label `breaking-ok` was on the pull request before these commits"
        ),
        "{out}"
    );
    assert!(out.contains("the label `breaking-ok` is removed"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("::error")), "{out}");
    assert!(
        gh.requests().contains(&(
            "DELETE".into(),
            "/repos/o/r/issues/7/labels/breaking-ok".into()
        )),
        "{:?}",
        gh.requests()
    );
    assert!(gh.api.lock().unwrap().labels.is_empty());
    let summary = fs::read_to_string(pr.summary()).unwrap();
    assert!(
        summary.contains("was on the pull request before"),
        "{summary}"
    );
    assert!(!summary.contains("**Approved**"), "{summary}");

    // The run with the label on and `payload` as its event; `read_only`: a fork's token.
    let run = |payload: &str, read_only: bool| {
        let gh = FakeGitHub::start(Api {
            labels: vec!["breaking-ok".into()],
            read_only,
            ..Api::default()
        });
        let o = pr.run(&gh.inputs(&[
            ("INPUT_APPROVE_LABEL", "breaking-ok"),
            ("GITHUB_EVENT_PATH", payload),
        ]));
        let removed = gh.requests().iter().any(|(m, _)| m == "DELETE");
        (o, removed)
    };

    // A token that may not remove it (a fork's): still not approved, and said.
    let (o, _) = run(&pushed, true);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stdout(&o).contains("cannot remove the label `breaking-ok` (HTTP 403;"),
        "{}",
        both(&o)
    );

    // A run another event started (another label, ready for review): it cannot tell
    // whether the label came before the latest push, so it approves nothing and leaves
    // the label on.
    let other = ["breaking-ok", "size/L"];
    for (name, payload) in [
        (
            "other-label",
            event(&pr, "other", "labeled", &other, Some("size/L")),
        ),
        (
            "ready",
            event(&pr, "ready", "ready_for_review", &["breaking-ok"], None),
        ),
    ] {
        let (o, removed) = run(&payload, false);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", both(&o));
        assert!(
            stdout(&o).contains("counts on the run that adding it starts"),
            "{name}: {}",
            both(&o)
        );
        assert!(!removed, "{name}");
    }

    // Added after the push (the run re-run, or started by adding it): approved.
    let ours = Some("breaking-ok");
    for (name, payload) in [
        ("rerun", event(&pr, "rerun", "synchronize", &[], None)),
        (
            "labeled",
            event(&pr, "labeled", "labeled", &["breaking-ok"], ours),
        ),
        (
            "opened",
            event(&pr, "opened", "opened", &["breaking-ok"], None),
        ),
    ] {
        let (o, removed) = run(&payload, false);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", both(&o));
        assert!(!removed, "{name}");
    }
}

#[test]
fn annotations_are_capped_at_the_level_asked() {
    let pr = pull_request("annotations");
    let lines = |cap: &str| {
        let o = pr.run(&[
            ("INPUT_ANNOTATIONS", cap.into()),
            ("INPUT_UP_TO_DATE", "false".into()),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", both(&o));
        stdout(&o)
            .lines()
            .filter(|l| l.contains("[tool.removed]"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert!(lines("error")[0].starts_with("::error file=mcp-covenant.lock,line="));
    assert!(lines("warning")[0].starts_with("::warning file=mcp-covenant.lock,line="));
    assert!(lines("notice")[0].starts_with("::notice file=mcp-covenant.lock,line="));
    let none = lines("none");
    assert!(none[0].starts_with("error: "), "{none:?}");
    let o = pr.run(&[("INPUT_ANNOTATIONS", "loud".into())]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
}
