//! The GitHub Action's check step (action/run.sh), run locally against temporary git
//! repositories: an "origin" with a base branch and a pull-request branch, and a shallow
//! clone of the pull-request branch as actions/checkout leaves it. The GitHub
//! environment variables point at temporary files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
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

/// A passing test's files go (each runner's tool cache holds a copy of the binary); a
/// failing test's stay for a look.
impl Drop for Pr {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
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
    // Fetched into a ref of the Action's own.
    git(
        &pr.work,
        &["rev-parse", "--verify", "refs/mcp-covenant/base"],
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
            "mcp-covenant.lock is not in revision refs/mcp-covenant/base: a new lockfile"
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
    // A binary that is not an absolute path is never looked up on PATH.
    for bin in ["mcp-covenant", "", "./mcp-covenant"] {
        let o = pr.run(&[("MCP_COVENANT_BIN", bin.into())]);
        assert_eq!(o.status.code(), Some(2), "{}", both(&o));
        assert!(
            stderr(&o).starts_with("error: MCP_COVENANT_BIN must be the absolute path"),
            "{}",
            both(&o)
        );
    }
    // A working directory that is not there; a part that does not exist.
    assert_eq!(
        code(&[("INPUT_WORKING_DIRECTORY", "no/such/dir".into())]),
        Some(2)
    );
}

/// What the fake GitHub API holds and what it was asked.
#[derive(Default)]
struct Api {
    /// (id, body, author's login) of the pull request's comments.
    comments: Vec<(u64, String, String)>,
    /// The login `GET /user` answers for the token; `None`: 403, as for the job's own
    /// installation token, whose comments are by `github-actions[bot]`.
    identity: Option<String>,
    labels: Vec<String>,
    /// Answer writes with 403, as a fork's read-only token gets.
    read_only: bool,
    /// Answer the labels request with 500.
    labels_fail: bool,
    /// The pull request author's comment (id 2) that starts with our marker: the token
    /// may edit it (a write token can edit anyone's comment), and must not.
    planted: bool,
    /// (method, path, body, authorization) of every request.
    requests: Vec<(String, String, String, String)>,
}

/// A local server that mimics the endpoints the Action uses (the token's user; list,
/// create and update issue comments; list, add and remove issue labels) for repository
/// o/r, pull request 7. Only `Bearer test-token` is let in.
struct FakeGitHub {
    url: String,
    api: std::sync::Arc<std::sync::Mutex<Api>>,
}

impl FakeGitHub {
    fn start(mut api: Api) -> FakeGitHub {
        use std::io::{BufRead, BufReader, Read, Write};
        if api.planted {
            api.comments.push((
                2,
                "<!-- mcp-covenant:pr-comment -->\nNo changes: all clear".into(),
                "mallory".into(),
            ));
        }
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
                    .push((method.clone(), path.clone(), body.clone(), auth.clone()));
                let ours = api
                    .identity
                    .clone()
                    .unwrap_or_else(|| "github-actions[bot]".into());
                let text = |v: &serde_json::Value| v.to_string();
                let posted = || -> String {
                    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                    v["body"].as_str().unwrap().to_string()
                };
                let route = path.split('?').next().unwrap().to_string();
                let (status, reply) = match (method.as_str(), route.as_str()) {
                    _ if auth != "Bearer test-token" => (
                        "401 Unauthorized",
                        text(&json!({"message": "Bad credentials"})),
                    ),
                    ("GET", "/user") => match &api.identity {
                        Some(login) => ("200 OK", text(&json!({"login": login}))),
                        None => (
                            "403 Forbidden",
                            text(&json!({"message": "Resource not accessible by integration"})),
                        ),
                    },
                    ("GET", "/repos/o/r/issues/7/comments") => {
                        let mut list = vec![
                            json!({"id": 1, "body": "a person's comment", "user": {"login": "alice"}}),
                        ];
                        list.extend(api.comments.iter().map(
                            |(id, b, who)| json!({"id": id, "body": b, "user": {"login": who}}),
                        ));
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
                    ("POST", "/repos/o/r/issues/7/labels") => {
                        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                        for l in v["labels"].as_array().into_iter().flatten() {
                            api.labels.push(l.as_str().unwrap_or_default().to_string());
                        }
                        ("200 OK", "[]".into())
                    }
                    ("POST", "/repos/o/r/issues/7/comments") => {
                        let id = 100 + api.comments.len() as u64;
                        api.comments.push((id, posted(), ours));
                        ("201 Created", text(&json!({"id": id})))
                    }
                    ("PATCH", p) if p.starts_with("/repos/o/r/issues/comments/") => {
                        let id: u64 = p.rsplit('/').next().unwrap().parse().unwrap();
                        let body = posted();
                        match api.comments.iter_mut().find(|(i, _, _)| *i == id) {
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
    let (id, body, _) = api.comments[0].clone();
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
            ("GET".into(), "/user".into()),
            ("GET".into(), "/repos/o/r/issues/7/comments".into()),
            ("POST".into(), "/repos/o/r/issues/7/comments".into()),
            ("GET".into(), "/user".into()),
            ("GET".into(), "/repos/o/r/issues/7/comments".into()),
            ("PATCH".into(), format!("/repos/o/r/issues/comments/{id}")),
        ]
    );
    // Off by default: no request at all.
    let before = gh.requests().len();
    pr.run(&gh.inputs(&[]));
    assert_eq!(gh.requests().len(), before);
}

/// The sticky comment is looked up among the token's own comments only: a comment the
/// pull request's author wrote with the marker is never edited, though the token could.
#[test]
fn a_comment_someone_else_wrote_with_the_marker_does_not_take_the_verdicts_place() {
    let pr = pull_request("planted");
    // The job's own token (GET /user is 403: its comments are github-actions[bot]'s),
    // and a personal token that says who it is.
    for identity in [None, Some("maintainer")] {
        let gh = FakeGitHub::start(Api {
            planted: true,
            identity: identity.map(str::to_string),
            ..Api::default()
        });
        for event in ["created", "updated"] {
            let o = pr.run(&gh.inputs(&[("INPUT_COMMENT", "true")]));
            assert_eq!(o.status.code(), Some(1), "{}", both(&o));
            assert!(
                stdout(&o).contains(&format!("pull request comment {event}")),
                "{identity:?}: {}",
                both(&o)
            );
        }
        let api = gh.api.lock().unwrap();
        let planted = api.comments.iter().find(|c| c.0 == 2).unwrap();
        assert_eq!(
            planted.1, "<!-- mcp-covenant:pr-comment -->\nNo changes: all clear",
            "{identity:?}: the author's comment was edited"
        );
        let ours: Vec<_> = api.comments.iter().filter(|c| c.0 != 2).collect();
        assert_eq!(ours.len(), 1, "{identity:?}: one comment of ours");
        assert!(ours[0].1.contains("`tool:b`"));
        assert_eq!(
            ours[0].2,
            identity.unwrap_or("github-actions[bot]"),
            "{identity:?}"
        );
    }
    // A token whose user cannot be read otherwise (401): no comment, and said.
    let gh = FakeGitHub::start(Api {
        planted: true,
        ..Api::default()
    });
    let o = pr.run(&gh.inputs(&[("INPUT_COMMENT", "true"), ("GITHUB_TOKEN", "other")]));
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stdout(&o).contains(
            "::notice::mcp-covenant: cannot tell whose token this is (HTTP 401 from GET /user)"
        ),
        "{}",
        both(&o)
    );
    assert!(!gh
        .requests()
        .iter()
        .any(|(m, _)| m == "PATCH" || m == "POST"));
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

// --- The Action as action.yml wires it, against pull requests that attack it -------------
//
// A job on a runner: action.yml's composite steps, run in order as the runner runs them
// (each `run:` in `bash --noprofile --norc -eo pipefail`, with the step's `env:` after
// its `${{ … }}` expressions are evaluated; GITHUB_PATH and step outputs carried
// forward), installing this build's binary from a release served over local HTTP
// (MCP_COVENANT_RELEASE_URL). The tool cache is the runner's, kept between jobs as on a
// self-hosted runner. Each attack must leave the verdict at exit 1 (tool b removed, and
// a type changed) and never let the job's token reach the server.

const VERSION: &str = env!("CARGO_PKG_VERSION");
const TOKEN: &str = "test-token";

fn runner_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "X64",
        "aarch64" => "ARM64",
        other => panic!("no release for {other}"),
    }
}

/// This build's binary as a release: its archive and SHA256SUMS, served over HTTP
/// (built once per test process).
struct Release {
    url: String,
    _server: HttpServer,
}

fn release() -> &'static Release {
    static RELEASE: std::sync::OnceLock<Release> = std::sync::OnceLock::new();
    RELEASE.get_or_init(|| {
        let dir = tmpdir("action-release");
        let name = format!(
            "mcp-covenant-{VERSION}-{}-unknown-linux-gnu",
            std::env::consts::ARCH
        );
        fs::create_dir_all(dir.join("build").join(&name)).unwrap();
        fs::copy(
            env!("CARGO_BIN_EXE_mcp-covenant"),
            dir.join("build").join(&name).join("mcp-covenant"),
        )
        .unwrap();
        let served = dir.join("served/download");
        fs::create_dir_all(&served).unwrap();
        let archive = served.join(format!("{name}.tar.gz"));
        let o = Command::new("tar")
            .arg("-czf")
            .arg(&archive)
            .arg("-C")
            .arg(dir.join("build"))
            .arg(&name)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", both(&o));
        let o = Command::new("sha256sum").arg(&archive).output().unwrap();
        let digest = stdout(&o).split_whitespace().next().unwrap().to_string();
        fs::write(
            served.join("SHA256SUMS"),
            format!("{digest}  {name}.tar.gz\n"),
        )
        .unwrap();
        let server = HttpServer::files(dir.join("served"));
        Release {
            url: format!("{}/download", server.url()),
            _server: server,
        }
    })
}

/// One composite step of action.yml.
#[derive(Debug, Default)]
struct Step {
    id: String,
    cond: String,
    env: Vec<(String, String)>,
    run: String,
}

/// action.yml's input defaults and composite steps. A reader for this file's own shape
/// (two-space indents, one `key: value` a line), not for YAML at large: it fails loudly
/// on what it does not know.
fn action_yml() -> (Vec<(String, String)>, Vec<Step>) {
    let text =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    let unquote = |v: &str| -> String {
        let v = v.trim();
        if let Some(inner) = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            return inner.replace("\\\"", "\"").replace("\\\\", "\\");
        }
        if let Some(inner) = v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
            return inner.replace("''", "'");
        }
        // A plain scalar: YAML ends it at `: ` or ` #` (GitHub refuses the file).
        assert!(
            !v.contains(": ") && !v.contains(" #"),
            "action.yml: quote this value, YAML cannot read it plain: {v}"
        );
        v.to_string()
    };
    let (mut defaults, mut steps) = (Vec::new(), Vec::<Step>::new());
    let (mut section, mut input, mut in_env) = ("", String::new(), false);
    for line in text.lines() {
        if !line.starts_with(' ') {
            section = if line.starts_with("inputs:") {
                "inputs"
            } else if line.starts_with("outputs:") {
                "outputs"
            } else if line.starts_with("runs:") {
                "runs"
            } else {
                ""
            };
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let (key, value) = line.trim().split_once(':').unwrap_or((line.trim(), ""));
        let value = value.trim();
        match (section, indent) {
            ("inputs", 2) => input = key.to_string(),
            ("inputs", 4) if key == "default" => defaults.push((input.clone(), unquote(value))),
            ("inputs" | "outputs", _) => {
                unquote(value);
            }
            ("runs", 4) if key.starts_with("- ") => {
                steps.push(Step::default());
                in_env = false;
            }
            ("runs", 6) => {
                let step = steps.last_mut().expect("a step");
                in_env = key == "env";
                match key {
                    "id" => step.id = value.to_string(),
                    "if" => step.cond = value.to_string(),
                    "run" => step.run = unquote(value),
                    "shell" => assert_eq!(value, "bash"),
                    "env" | "name" | "working-directory" => {}
                    other => panic!("action.yml: step key `{other}` unknown to this test"),
                }
            }
            ("runs", 8) if in_env => {
                let step = steps.last_mut().unwrap();
                step.env.push((key.to_string(), unquote(value)));
            }
            ("runs", _) => {}
            _ => {}
        }
    }
    assert!(!steps.is_empty(), "no steps read from action.yml");
    (defaults, steps)
}

/// What a job did: each step's id and exit status (`None`: skipped), and all it printed.
struct Job {
    steps: Vec<(String, Option<i32>)>,
    out: String,
}

impl Job {
    /// The job's outcome as the runner has it: 0 when every step that ran passed, else
    /// the highest status.
    fn worst(&self) -> i32 {
        self.steps.iter().filter_map(|s| s.1).max().unwrap_or(0)
    }
}

/// A runner: its tool cache (kept between jobs), temp directory and workspace files.
struct Runner {
    dir: PathBuf,
}

impl Runner {
    fn new(pr: &Pr) -> Runner {
        let dir = pr.dir.join("runner");
        for d in ["tool cache", "temp"] {
            fs::create_dir_all(dir.join(d)).unwrap();
        }
        Runner { dir }
    }

    fn cached_binary(&self) -> PathBuf {
        self.dir
            .join("tool cache/mcp-covenant")
            .join(VERSION)
            .join(runner_arch().to_lowercase())
            .join("mcp-covenant")
    }

    /// Run the Action in `pr`'s checkout with `inputs` (the rest: action.yml's
    /// defaults), after the job's earlier steps put `path` in front of PATH.
    fn job(
        &self,
        pr: &Pr,
        inputs: &[(&str, &str)],
        path: &[PathBuf],
        api: Option<&FakeGitHub>,
    ) -> Job {
        let (defaults, steps) = action_yml();
        // Each job its own directory: a counter, not a random name that could repeat.
        static JOBS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let job = self.dir.join(format!("job-{n}"));
        fs::create_dir_all(&job).unwrap();
        let github_path = job.join("github path");
        fs::write(&github_path, "").unwrap();
        let mut outputs: Vec<(String, String)> = Vec::new();
        let mut outcomes: Vec<(String, Option<i32>)> = Vec::new();
        let mut out = String::new();
        let github = |name: &str| -> String {
            match name {
                "github.action_path" => env!("CARGO_MANIFEST_DIR").to_string(),
                "github.base_ref" => "main".into(),
                "github.token" => TOKEN.into(),
                "github.event.pull_request.number" => "7".into(),
                other => panic!("action.yml: `{other}` unknown to this test"),
            }
        };
        let input = |name: &str| -> String {
            if let Some((_, v)) = inputs.iter().find(|(k, _)| *k == name) {
                return v.to_string();
            }
            let (_, d) = defaults
                .iter()
                .find(|(k, _)| k == name)
                .unwrap_or_else(|| panic!("action.yml has no input `{name}`"));
            expand(d, &|e| github(e))
        };
        for step in &steps {
            let failed = outcomes.iter().any(|(_, c)| c.is_some_and(|c| c != 0));
            let runs = if step.cond.is_empty() {
                !failed
            } else {
                // `${{ !cancelled() && steps.ID.outcome == 'success' }}`
                let id = step
                    .cond
                    .split("steps.")
                    .nth(1)
                    .and_then(|s| s.split(".outcome == 'success'").next())
                    .unwrap_or_else(|| panic!("if: `{}` unknown to this test", step.cond));
                assert!(step.cond.contains("!cancelled()"), "{}", step.cond);
                outcomes.iter().any(|(i, c)| i == id && *c == Some(0))
            };
            if !runs {
                outcomes.push((step.id.clone(), None));
                continue;
            }
            let value = |e: &str| -> String {
                if let Some(name) = e.strip_prefix("inputs.") {
                    input(name)
                } else if let Some(rest) = e.strip_prefix("steps.") {
                    let (id, name) = rest.split_once(".outputs.").expect("steps.ID.outputs.NAME");
                    outputs
                        .iter()
                        .find(|(k, _)| *k == format!("{id}.{name}"))
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                } else {
                    github(e)
                }
            };
            let output_file = job.join(format!("output-{}", outcomes.len()));
            fs::write(&output_file, "").unwrap();
            let script = job.join(format!("step-{}.sh", outcomes.len()));
            fs::write(&script, &step.run).unwrap();
            let added: Vec<String> = fs::read_to_string(&github_path)
                .unwrap()
                .lines()
                .rev()
                .map(str::to_string)
                .collect();
            let mut path_var: Vec<String> = path.iter().map(|p| p.display().to_string()).collect();
            path_var.extend(added);
            path_var.push(std::env::var("PATH").unwrap_or_default());
            let mut c = Command::new("bash");
            c.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script)
                .current_dir(&pr.work)
                .env_clear()
                .env("PATH", path_var.join(":"))
                .env("HOME", &pr.dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GITHUB_WORKSPACE", &pr.work)
                .env("GITHUB_REPOSITORY", "o/r")
                .env("GITHUB_STEP_SUMMARY", pr.summary())
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_PATH", &github_path)
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", runner_arch())
                .env("RUNNER_TOOL_CACHE", self.dir.join("tool cache"))
                .env("RUNNER_TEMP", self.dir.join("temp"))
                .env("MCP_COVENANT_RELEASE_URL", &release().url);
            if let Some(api) = api {
                c.env("GITHUB_API_URL", &api.url);
            }
            for (k, v) in &step.env {
                c.env(k, expand(v, &value));
            }
            let o = c.output().unwrap();
            out.push_str(&both(&o));
            for line in fs::read_to_string(&output_file).unwrap().lines() {
                if let Some((k, v)) = line.split_once('=') {
                    outputs.push((format!("{}.{k}", step.id), v.to_string()));
                }
            }
            outcomes.push((step.id.clone(), Some(o.status.code().unwrap_or(-1))));
        }
        Job {
            steps: outcomes,
            out,
        }
    }
}

/// `text` with each `${{ NAME }}` replaced by `value(NAME)`.
fn expand(text: &str, value: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("}}").expect("closed ${{") + i;
        out.push_str(&value(rest[i + 3..end].trim()));
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

impl Pr {
    /// The pull request's server: `script` (sh, in the checkout, with $WORK, $DIR and
    /// $BIN, the tool cache's binary, set), then the fixture serving the pull request's
    /// tools. The base branch's lockfile says a and b with object inputs; this one also
    /// changes a's input type, so that a removed tool and a changed type are both there.
    fn server(&self, runner: &Runner, script: &str) -> String {
        let path = self.dir.join("server.sh");
        fs::write(
            &path,
            format!(
                "#!/bin/sh\nWORK='{}'\nDIR='{}'\nBIN='{}'\n{script}\nexec '{}' '{}'\n",
                self.work.display(),
                self.dir.display(),
                runner.cached_binary().display(),
                fixture().display(),
                self.new_spec.display()
            ),
        )
        .unwrap();
        Command::new("chmod")
            .arg("755")
            .arg(&path)
            .status()
            .unwrap();
        path.display().to_string()
    }

    /// The pull request's lockfile for the server `server` serves, committed.
    fn snapshot_with(&self, server: &str) {
        let o = bin()
            .current_dir(&self.work)
            .args(["snapshot", "--", server])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", both(&o));
        git(&self.work, &["add", "mcp-covenant.lock"]);
        git(&self.work, &["commit", "-q", "-m", "change tool a's type"]);
    }
}

/// A stand-in `mcp-covenant` that says it is this version, passes everything, and leaves
/// `mark` when it runs.
fn stub(path: &Path, mark: &Path) {
    fs::write(
        path,
        format!(
            "#!/bin/sh\necho ran >> '{}'\ncase \"$1\" in --version) echo 'mcp-covenant {VERSION} (stub)';; esac\nexit 0\n",
            mark.display()
        ),
    )
    .unwrap();
    Command::new("chmod").arg("755").arg(path).status().unwrap();
}

/// The pull request of `pull_request`, with tool a's input made a string (a changed type).
fn hostile_pull_request(name: &str) -> Pr {
    let pr = pull_request(name);
    fs::write(
        &pr.new_spec,
        json!({"tools": [{"name": "a", "description": "a", "inputSchema": {"type": "string"}}]})
            .to_string(),
    )
    .unwrap();
    pr
}

fn assert_verdict_fails(job: &Job) {
    assert_eq!(job.worst(), 1, "{:?}\n{}", job.steps, job.out);
    assert!(job.out.contains("[tool.removed]"), "{}", job.out);
}

/// A server that points `origin/main` (and any ref of ours) at the pull request while it
/// starts: the verdict ran before it, on a base fetched into a ref of the Action's own.
#[test]
fn a_server_that_moves_the_base_ref_does_not_change_the_verdict() {
    let pr = hostile_pull_request("moves-ref");
    let runner = Runner::new(&pr);
    let server = pr.server(
        &runner,
        "git -C \"$WORK\" update-ref refs/remotes/origin/main HEAD\n\
         git -C \"$WORK\" update-ref refs/mcp-covenant/base HEAD",
    );
    pr.snapshot_with(&server);
    let job = runner.job(&pr, &[("command", &server)], &[], None);
    assert_verdict_fails(&job);
    // The next job on this runner, with the refs still moved: fetched again, by force.
    let job = runner.job(&pr, &[("command", &server)], &[], None);
    assert_verdict_fails(&job);
}

/// A server that renames a stand-in over the tool cache's binary: the verdict ran before
/// it, and the next job on this runner installs the verified binary again without
/// running what it finds.
#[test]
fn a_server_that_replaces_the_cached_binary_does_not_change_the_verdict() {
    let pr = hostile_pull_request("replaces-binary");
    let runner = Runner::new(&pr);
    let mark = pr.dir.join("stub ran");
    let server = pr.server(
        &runner,
        &format!(
            "printf '#!/bin/sh\\necho ran >> \"{mark}\"\\ncase \"$1\" in --version) echo \"mcp-covenant {VERSION} (stub)\";; esac\\nexit 0\\n' > \"$DIR/stub\"\n\
             chmod 755 \"$DIR/stub\"\nmv -f \"$DIR/stub\" \"$BIN\"",
            mark = mark.display()
        ),
    );
    pr.snapshot_with(&server);
    let job = runner.job(&pr, &[("command", &server)], &[], None);
    assert_verdict_fails(&job);
    assert!(!mark.exists(), "the stand-in ran: {}", job.out);
    let job = runner.job(&pr, &[("up-to-date", "false")], &[], None);
    assert_verdict_fails(&job);
    assert!(!mark.exists(), "the stand-in ran: {}", job.out);
    assert_eq!(
        fs::read(runner.cached_binary()).unwrap(),
        fs::read(env!("CARGO_BIN_EXE_mcp-covenant")).unwrap(),
        "the verified binary is installed again"
    );
}

/// An earlier step of the job that ran the pull request's code (an npm `preinstall`)
/// planted a stand-in on PATH and in the tool cache, and moved `origin/main`: the Action
/// runs the binary it verified, by its path, on a base it fetched itself.
#[test]
fn a_binary_planted_by_an_earlier_step_is_never_trusted() {
    let pr = hostile_pull_request("planted-binary");
    let runner = Runner::new(&pr);
    let mark = pr.dir.join("stub ran");
    let on_path = pr.dir.join("planted bin");
    fs::create_dir_all(&on_path).unwrap();
    stub(&on_path.join("mcp-covenant"), &mark);
    fs::create_dir_all(runner.cached_binary().parent().unwrap()).unwrap();
    stub(&runner.cached_binary(), &mark);
    let server = pr.server(&runner, "");
    pr.snapshot_with(&server);
    git(
        &pr.work,
        &["update-ref", "refs/remotes/origin/main", "HEAD"],
    );
    let job = runner.job(
        &pr,
        &[("command", &server)],
        std::slice::from_ref(&on_path),
        None,
    );
    assert_verdict_fails(&job);
    assert!(!mark.exists(), "the stand-in ran: {}", job.out);
    // The verdict alone (the two-job workflow's verdict job) needs no server.
    let job = runner.job(&pr, &[("up-to-date", "false")], &[on_path], None);
    assert_verdict_fails(&job);
    assert!(!mark.exists(), "the stand-in ran: {}", job.out);
}

/// A server that reads the job's token (its environment, and its ancestors') and uses
/// it to add the approve label to its own pull request: it never has the token, and the
/// label was read before it ran.
#[test]
fn a_server_never_gets_the_jobs_token() {
    let pr = hostile_pull_request("token");
    let runner = Runner::new(&pr);
    let gh = FakeGitHub::start(Api::default());
    let seen = pr.dir.join("seen by the server");
    let server = pr.server(
        &runner,
        &format!(
            "seen='{seen}'\nenv >> \"$seen\"\n\
             p=$PPID\nwhile [ \"${{p:-1}}\" -gt 1 ] && [ -r /proc/$p/environ ]; do\n\
               tr '\\0' '\\n' < /proc/$p/environ >> \"$seen\"\n\
               p=$(awk '/^PPid:/ {{ print $2 }}' /proc/$p/status)\n\
             done\n\
             curl -s -o /dev/null -X POST -H \"Authorization: Bearer ${{GITHUB_TOKEN:-$INPUT_TOKEN}}\" \
               --data '{{\"labels\": [\"breaking-ok\"]}}' \"$GITHUB_API_URL/repos/o/r/issues/7/labels\" || true",
            seen = seen.display()
        ),
    );
    pr.snapshot_with(&server);
    // Not the server's first run: the lockfile was made with it. Start afresh.
    let _ = fs::remove_file(&seen);
    let job = runner.job(
        &pr,
        &[
            ("command", &server),
            ("approve-label", "breaking-ok"),
            ("comment", "true"),
        ],
        &[],
        Some(&gh),
    );
    assert_verdict_fails(&job);
    let seen = fs::read_to_string(&seen).expect("the server ran");
    assert!(seen.contains("PATH="), "{seen}");
    assert!(!seen.contains(TOKEN), "the server saw the token:\n{seen}");
    assert!(gh.api.lock().unwrap().labels.is_empty());
    // The token went to the API calls, and only with them.
    assert!(gh
        .api
        .lock()
        .unwrap()
        .requests
        .iter()
        .any(|(m, _, _, auth)| m == "POST" && auth == &format!("Bearer {TOKEN}")));
}

/// `working-directory`: covenant.toml and the lockfile of a monorepo's package. The base
/// branch has no lockfile in the package (only at the root), so the package's is new:
/// reading the root's in its place would report tool b removed (exit 1).
#[test]
fn the_working_directory_is_where_the_lockfile_lives() {
    let pr = pull_request("workdir");
    fs::create_dir_all(pr.work.join("packages/orders")).unwrap();
    fs::copy(
        pr.work.join("mcp-covenant.lock"),
        pr.work.join("packages/orders/mcp-covenant.lock"),
    )
    .unwrap();
    let o = pr.run(&[
        ("INPUT_WORKING_DIRECTORY", "packages/orders".into()),
        ("INPUT_UP_TO_DATE", "false".into()),
        ("INPUT_COMMAND", String::new()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(stderr(&o).contains("a new lockfile"), "{}", both(&o));
}

/// The first pull request of a new user: a repository with nothing but a README on
/// `main`, and a branch holding what `init` wrote (covenant.toml, the lockfile, the
/// workflow) as `init` says to commit it. Both jobs of that workflow run as the runner
/// runs them: each `uses:` of this Action with the workflow's own `with:` inputs, every
/// other `uses:` stood in for by the checkout, and any `run:` step as bash. Both are
/// green (the base has no lockfile: every element is new, a minor change). The time from
/// the empty repository to both jobs passing is printed (`--nocapture`), not asserted.
#[test]
fn the_first_pull_request_after_init_is_green_in_both_jobs() {
    let started = std::time::Instant::now();
    let dir = tmpdir("action-first-run");
    let origin = dir.join("origin");
    fs::create_dir(&origin).unwrap();
    git_init(&origin);
    fs::write(origin.join("README"), "server\n").unwrap();
    git_commit(&origin, "start");
    git(&origin, &["checkout", "-q", "-b", "add-the-gate"]);
    let spec = dir.join("server.json");
    let tool = |n: &str| json!({"name": n, "description": n, "inputSchema": {"type": "object"}});
    fs::write(&spec, json!({"tools": [tool("a"), tool("b")]}).to_string()).unwrap();
    let o = bin()
        .current_dir(&origin)
        .arg("init")
        .arg("--")
        .arg(fixture())
        .arg(&spec)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let add = stderr(&o)
        .lines()
        .find_map(|l| l.split("`git add ").nth(1))
        .and_then(|l| l.split(" && ").next())
        .map(|files| files.split(' ').map(String::from).collect::<Vec<_>>())
        .unwrap_or_else(|| panic!("init names no `git add`: {}", both(&o)));
    let mut args = vec!["add".to_string()];
    args.extend(add);
    git(
        &origin,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    git(
        &origin,
        &["commit", "-q", "-m", "Add the mcp-covenant interface gate"],
    );
    let after_init = started.elapsed();
    let workflow: serde_json::Value = serde_yaml_ng::from_str(
        &fs::read_to_string(origin.join(".github/workflows/mcp-covenant.yml")).unwrap(),
    )
    .unwrap();
    let url = format!("file://{}", origin.display());
    let gh = FakeGitHub::start(Api::default());
    let mut times = Vec::new();
    for (name, job) in workflow["jobs"].as_object().unwrap() {
        let job_started = std::time::Instant::now();
        let steps = job["steps"].as_array().unwrap();
        // actions/checkout: a clone of the pull request's branch, as deep as it asks.
        let checkout = &steps[0];
        assert!(checkout["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/checkout@"));
        let pr = Pr {
            dir: dir.join(name),
            work: dir.join(name).join("work"),
            old_spec: spec.clone(),
            new_spec: spec.clone(),
        };
        fs::create_dir(&pr.dir).unwrap();
        let mut clone = vec!["clone", "-q", "--branch", "add-the-gate"];
        if checkout["with"]["fetch-depth"] != 0 {
            clone.extend(["--depth", "1"]);
        }
        git(&pr.dir, &[clone, vec![url.as_str(), "work"]].concat());
        let runner = Runner::new(&pr);
        let mut outcome = None;
        for step in &steps[1..] {
            if let Some(script) = step["run"].as_str() {
                let o = Command::new("bash")
                    .args(["-eo", "pipefail", "-c", script])
                    .current_dir(&pr.work)
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{name}: `{script}`: {}", both(&o));
                continue;
            }
            let uses = step["uses"].as_str().unwrap();
            if !uses.starts_with("mcp-covenant/mcp-covenant@") {
                continue; // setup-node and the like: this machine has what they install
            }
            let with: Vec<(String, String)> = step["with"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().map_or(v.to_string(), String::from)))
                .collect();
            let inputs: Vec<(&str, &str)> =
                with.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            outcome = Some(runner.job(&pr, &inputs, &[], Some(&gh)));
        }
        let job_run = outcome.unwrap_or_else(|| panic!("{name}: no step uses the Action"));
        assert_eq!(
            job_run.worst(),
            0,
            "{name}: {:?}\n{}",
            job_run.steps,
            job_run.out
        );
        times.push(format!(
            "{name} {:.1} s",
            job_started.elapsed().as_secs_f64()
        ));
    }
    eprintln!(
        "first pull request: init and commit {:.1} s, {}; from the empty repository {:.1} s",
        after_init.as_secs_f64(),
        times.join(", "),
        started.elapsed().as_secs_f64()
    );
}
