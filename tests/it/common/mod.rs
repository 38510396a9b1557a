//! Helpers shared by the integration tests (the modules of tests/it/).
#![allow(dead_code)]

pub mod differential;
pub mod property;
pub mod schema;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-covenant"));
    c.env_remove("NO_COLOR").env_remove("SOURCE_DATE_EPOCH");
    c
}

/// The fixture server (examples/fixture-server.rs).
pub fn fixture() -> PathBuf {
    example("fixture-server")
}

/// The example binary `name` (examples/NAME.rs), built and up to date. `cargo test`
/// builds every example, but `cargo test --test it` builds none: without this, such a
/// run failed on a missing example or, worse, ran a stale one. So the first call for
/// each name in a test process asks cargo to build it, in the profile and target
/// directory of the binary under test (a no-op of about a second when it is fresh).
pub fn example(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_mcp-covenant"));
    let profile_dir = exe.parent().unwrap();
    let path = profile_dir.join("examples").join(name);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !built.iter().any(|b| b == name) {
        let profile = profile_dir.file_name().unwrap().to_str().unwrap();
        let profile = if profile == "debug" { "dev" } else { profile };
        let out = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--example", name, "--profile", profile])
            .arg("--target-dir")
            .arg(profile_dir.parent().unwrap())
            .arg("--manifest-path")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .output()
            .expect("run cargo to build an example");
        assert!(
            out.status.success(),
            "cargo build --example {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        built.push(name.to_string());
    }
    assert!(path.exists(), "{} not built", path.display());
    path
}

/// An empty directory for one test: `$TMPDIR/mcp-covenant-PID-MODULE-NAME`, where
/// MODULE is the calling file's name (`action` for tests/it/action.rs). Every module's
/// tests run in this one process, in parallel, so the module keeps two files' names
/// apart; and a directory another test already took panics, naming both tests, rather
/// than letting two tests delete each other's files.
#[track_caller]
pub fn tmpdir(name: &str) -> PathBuf {
    let caller = std::panic::Location::caller().file();
    let module = Path::new(caller).file_stem().unwrap().to_string_lossy();
    let d = std::env::temp_dir().join(format!(
        "mcp-covenant-{}-{module}-{name}",
        std::process::id()
    ));
    claim(&d);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Remember that the running test (libtest names each test's thread after it) uses
/// `dir`; panic if another test already does.
fn claim(dir: &Path) {
    static TAKEN: std::sync::Mutex<BTreeMap<PathBuf, String>> =
        std::sync::Mutex::new(BTreeMap::new());
    let Some(test) = std::thread::current().name().map(String::from) else {
        return; // a thread the test started: its test already claimed what it uses
    };
    let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(other) = taken.insert(dir.to_path_buf(), test.clone()) {
        assert_eq!(
            other,
            test,
            "two tests use {}: give one of them another tmpdir name",
            dir.display()
        );
    }
}

pub fn write_spec(dir: &Path, spec: &serde_json::Value) -> PathBuf {
    let p = dir.join("spec.json");
    fs::write(&p, spec.to_string()).unwrap();
    p
}

/// `snapshot -o OUT [EXTRA...] -- fixture-server SPEC`: a capture of the fixture server.
pub fn snapshot_fixture(out: &Path, spec: &Path, extra: &[&str]) -> Output {
    bin()
        .arg("snapshot")
        .arg("-o")
        .arg(out)
        .args(extra)
        .arg("--")
        .arg(fixture())
        .arg(spec)
        .output()
        .unwrap()
}

/// The names of a lockfile's tools, in lockfile order.
pub fn tool_names(lock: &serde_json::Value) -> Vec<&str> {
    lock["surface"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// stderr without the `hint:` line a failing verdict ends with (how to ship on purpose).
pub fn stderr_unhinted(o: &Output) -> String {
    stderr(o)
        .lines()
        .filter(|l| !l.starts_with("hint: to ship this on purpose"))
        .map(|l| format!("{l}\n"))
        .collect()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Exit 2, and the last stderr line is `error: ...` containing `needle`; no panic.
pub fn assert_fails_cleanly(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: "),
        "last line is not an error: {err}"
    );
    assert!(last.contains(needle), "`{needle}` not in: {last}");
    assert_eq!(err.matches("error: ").count(), 1, "one error line: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A usage error found by the argument parser: exit 2 and exactly one `error:` line,
/// naming `needle` (clap may add a hint such as the possible values, and a pointer to
/// --help, under it).
pub fn assert_usage_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "one error line: {err}");
    assert!(err.contains(needle), "`{needle}` not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Processes whose command line mentions `needle` (to prove children are reaped).
pub fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmd) = fs::read(entry.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(needle) {
                found.push(pid);
            }
        }
    }
    found
}

/// The processes whose command line mentions `needle` once they have had up to 5 s to
/// go: a process killed with its group needs a moment to exit, more on a loaded machine.
pub fn processes_left(needle: &str) -> Vec<u32> {
    let start = std::time::Instant::now();
    loop {
        let left = processes_mentioning(needle);
        if left.is_empty() || start.elapsed().as_secs() >= 5 {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A server process killed (and reaped) when dropped.
pub struct Running {
    pub child: std::process::Child,
    pub port: u16,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Wait until something accepts connections on `port`; false when the server exited
/// first (e.g. the port was taken meanwhile). Panics after 30 s.
pub fn wait_for_port(port: u16, child: &mut std::process::Child) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(30) {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("nothing listens on port {port} after 30 s");
}

/// Start the fixture server over HTTP with `spec`, on a port the kernel picks (the
/// server prints it), so parallel tests never race for one.
pub fn fixture_http(dir: &Path, spec: &serde_json::Value) -> Running {
    use std::io::BufRead;
    let spec_path = write_spec(dir, spec);
    let mut child = Command::new(fixture())
        .arg(&spec_path)
        .args(["--http", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let stdout = child.stdout.take().unwrap();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("fixture did not say its port: {line:?}"));
    Running { child, port }
}

/// The same document with every order that carries no meaning reversed (`all`), or
/// only the orders the lockfile normalizes away (element lists, `required`, `type`).
pub fn reordered(v: &serde_json::Value, key: Option<&str>, all: bool) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => {
            // serde_json's Map sorts keys; the text order is what a server varies, and
            // Lockfile::parse must not care. Reverse arrays whose order is meaningless.
            serde_json::Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), reordered(v, Some(k), all)))
                    .collect(),
            )
        }
        serde_json::Value::Array(a) => {
            let mut items: Vec<serde_json::Value> =
                a.iter().map(|x| reordered(x, None, all)).collect();
            let normalized = matches!(key, Some("tools" | "required" | "type" | "arguments"));
            let unordered = matches!(key, Some("enum" | "anyOf" | "oneOf" | "allOf"));
            if normalized || (all && unordered) {
                items.reverse();
            }
            serde_json::Value::Array(items)
        }
        other => other.clone(),
    }
}

/// Compact JSON with object keys written in reverse order.
pub fn reversed_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .rev()
                .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap(), reversed_text(v)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        serde_json::Value::Array(a) => format!(
            "[{}]",
            a.iter().map(reversed_text).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// A fixed git identity and no user or system git config, for any command that runs git.
pub fn git_identity(cmd: &mut Command) -> &mut Command {
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
}

/// Run git in `dir` with a fixed identity and no user or system config; panics on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = git_identity(Command::new("git").current_dir(dir))
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A new repository in `dir` on branch `main`.
pub fn git_init(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
}

/// Stage everything in `dir` and commit it.
pub fn git_commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

/// An HTTP/1.1 server on 127.0.0.1 answering each request (one per connection) with
/// `answer(path)`: a status line (`200 OK`), headers (`Name: value\r\n` each) and a
/// body. It counts the requests.
pub struct HttpServer {
    pub port: u16,
    requests: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl HttpServer {
    pub fn start(
        answer: impl Fn(&str) -> (&'static str, &'static str, Vec<u8>) + Send + 'static,
    ) -> HttpServer {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let line = String::from_utf8_lossy(&head);
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, headers, body) = answer(&path);
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            }
        });
        HttpServer { port, requests }
    }

    /// The files below `root`, by path; anything else (or a path with `..`) is 404.
    pub fn files(root: PathBuf) -> HttpServer {
        HttpServer::start(move |path| {
            let file = root.join(path.trim_start_matches('/'));
            match fs::read(&file) {
                Ok(b) if !path.contains("..") => ("200 OK", "", b),
                _ => ("404 Not Found", "", b"not found".to_vec()),
            }
        })
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> usize {
        self.requests.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The names of the temporary files (`*.tmp`) in `dir`: an atomic write leaves none.
pub fn temporary_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}
