//! Peak memory per kind of message (issue 36.8): whatever a hostile server sends, a
//! capture's peak RSS stays within a small multiple of its largest message. Each test
//! captures the fixture server while it sends one 64 MiB message of a kind (streamed
//! from a file, so the server stays small), and reads the peak RSS of the spawned
//! `mcp-covenant` (and the server it reaps) from wait4(2) (the fixture server's
//! `--peak-rss`): a count, not a timing. The
//! bound, 10x, is generous (bench/memory.sh measures the release build at 1.1-2.1x for
//! these kinds); holding such a message as a `serde_json::Value` takes 17x and more. One
//! huge element is held to 6x (4.2x measured; it was 37x while elements were built), and
//! so is a huge array of scalars (2.2x; 9.7x while elements were held indented).
#![cfg(target_os = "linux")]

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::*;

/// The message size: large enough that start-up memory is noise beside it.
const SIZE: usize = 64 << 20;

/// `[{"a":0},{"a":1},...]` of about `size` bytes: many small objects, the worst shape
/// per byte for a `Value`.
fn objects(size: usize) -> String {
    let mut out = String::with_capacity(size + 32);
    out.push('[');
    let mut i = 0u64;
    while out.len() < size {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("{{\"a\":{i}}}"));
        i += 1;
    }
    out.push(']');
    out
}

/// Run `cmd` to its end; its exit code and the peak RSS in bytes of it and of the
/// processes it reaped, measured by the fixture server's `--peak-rss` (wait4's rusage
/// from a small process: one forked from this test binary would start out with the
/// binary's own peak).
fn peak_rss(args: &[&std::ffi::OsStr], dir: &Path) -> (Option<i32>, u64, String) {
    let err = fs::File::create(dir.join("stderr")).unwrap();
    let rss = dir.join("rss");
    let o = Command::new(fixture())
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .arg("--peak-rss")
        .arg(&rss)
        .arg(env!("CARGO_BIN_EXE_mcp-covenant"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .status()
        .unwrap();
    let kib: u64 = fs::read_to_string(&rss).unwrap().trim().parse().unwrap();
    let stderr = fs::read_to_string(dir.join("stderr")).unwrap();
    (o.code(), kib * 1024, stderr)
}

/// The bound on a capture's peak RSS, in times its largest message.
const BOUND: f64 = 10.0;

/// A capture of the fixture server over stdio, in a directory of its own named `name`,
/// where the server sends `message` (written to a file there) as `place` puts it into
/// the [`plain`] answers: its peak RSS must stay under `bound` times the message.
fn capture(name: &str, message: String, bound: f64, place: impl FnOnce(&mut Value, &Path)) {
    let dir = &tmpdir(name);
    let file = dir.join(format!("{name}.json"));
    fs::write(&file, message).unwrap();
    let mut spec = plain(dir);
    place(&mut spec, &file);
    let size = fs::metadata(&file).unwrap().len();
    let spec = write_spec(dir, &spec);
    let fixture = fixture();
    let args: Vec<&std::ffi::OsStr> = ["snapshot", "--timeout", "600", "-o", "out.lock", "--"]
        .iter()
        .map(std::ffi::OsStr::new)
        .chain([fixture.as_os_str(), spec.as_os_str()])
        .collect();
    let (code, rss, stderr) = peak_rss(&args, dir);
    assert_eq!(code, Some(0), "{name}: {stderr}");
    let ratio = rss as f64 / size as f64;
    eprintln!("{name}: {size} bytes, peak RSS {rss} bytes ({ratio:.1}x)");
    assert!(
        ratio < bound,
        "{name}: peak RSS {rss} bytes is {ratio:.1}x the {size}-byte message (bound {bound}x)"
    );
    let lock = fs::read_to_string(dir.join("out.lock")).unwrap();
    assert!(lock.contains("\"name\": \"t\""), "{name}: {lock}");
}

/// The answers every case but one gives as they are: a handshake with the `tools`
/// capability and one tool.
fn plain(dir: &Path) -> Value {
    let init = dir.join("init.json");
    fs::write(&init, r#""result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"m","version":"1"}}"#).unwrap();
    let tools = dir.join("tools.json");
    fs::write(
        &tools,
        r#""result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}"#,
    )
    .unwrap();
    json!({"tools": [], "rawAnswers": {"initialize": init, "tools/list": tools}})
}

#[test]
fn a_huge_notification_is_not_kept() {
    let message = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":{}}}}}\n",
        objects(SIZE)
    );
    capture("notification", message, BOUND, |spec, file| {
        spec["rawBefore"] = json!(file);
    });
}

#[test]
fn a_huge_initialize_result_keeps_only_what_is_read() {
    let message = format!(
        r#""result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}},"experimental":{{"x":{}}}}},"serverInfo":{{"name":"m","version":"1"}}}}"#,
        objects(SIZE)
    );
    capture("initialize", message, BOUND, |spec, file| {
        spec["rawAnswers"]["initialize"] = json!(file);
    });
}

#[test]
fn huge_error_data_is_not_kept() {
    let message = "m".repeat(1 << 20);
    let message = format!(
        r#""error":{{"code":-32601,"message":"{message}","data":{}}}"#,
        objects(SIZE)
    );
    capture("error", message, BOUND, |spec, file| {
        // The era probe: refused with the error, then the handshake era.
        spec["rawAnswers"]["server/discover"] = json!(file);
    });
}

/// One tool whose `inputSchema` has millions of tiny properties: normalised and written
/// canonically as it is read (`lockfile/stream.rs`), never built as values (that took
/// 37x). Its canonical text is about 2.6x the message; the bound holds the message, that
/// text and the compact form it is indented from.
#[test]
fn one_huge_element_is_written_as_it_is_read() {
    let mut props = String::with_capacity(SIZE + 64);
    let mut i = 0u64;
    while props.len() < SIZE {
        if i > 0 {
            props.push(',');
        }
        props.push_str(&format!("\"p{i}\":{{\"type\":\"string\"}}"));
        i += 1;
    }
    let message = format!(
        r#"{{"tools":[{{"name":"t","inputSchema":{{"type":"object","properties":{{{props}}}}}}}]}}"#
    );
    drop(props);
    capture("element", message, 6.0, |spec, file| {
        let answers = spec["rawAnswers"].as_object_mut().unwrap();
        answers.remove("tools/list");
        spec["toolsListFile"] = json!(file);
    });
}

/// One tool whose `default` is an array of 16.8 million zeros (a 32 MiB message): its
/// canonical text puts each item on a line of its own, about 7.5x the message, so a
/// capture holds each element compact and indents it only as it is written, a piece at
/// a time (9.7x while elements were held indented).
#[test]
fn a_huge_array_of_scalars_is_held_compact() {
    let zeros = vec!["0"; SIZE / 4].join(",");
    let message = format!(
        r#"{{"tools":[{{"name":"t","inputSchema":{{"type":"array","default":[{zeros}]}}}}]}}"#
    );
    drop(zeros);
    capture("array", message, 6.0, |spec, file| {
        let answers = spec["rawAnswers"].as_object_mut().unwrap();
        answers.remove("tools/list");
        spec["toolsListFile"] = json!(file);
    });
}

/// `check` of two lockfiles whose one tool's `default` is an array of 4.2 million
/// zeros, differing in one item: the changed element is built as values on each side
/// (32 bytes an item, about 2x a file's 15 bytes an item), and its value copied only into
/// the change that reports it (the walker copied both sides before comparing them, and
/// a message and a fingerprint wrote each whole as JSON text); the files' bytes are
/// dropped before the diff. 8.5x a file measured (release), 14.8x before.
#[test]
fn a_changed_huge_default_is_copied_once() {
    let d = tmpdir("check-array");
    let n = 1 << 22;
    let head = "{\n  \"covenant_version\": \"0.2.0\",\n  \"captured_at_unix\": 1,\n  \"server\": {\n    \"name\": \"m\",\n    \"version\": \"1\"\n  },\n  \"surface\": {\n    \"tools\": [\n      {\n        \"name\": \"t\",\n        \"inputSchema\": {\n          \"type\": \"array\",\n          \"default\": [\n";
    let tail = "\n          ]\n        }\n      }\n    ]\n  }\n}\n";
    let item = "            0,\n";
    for (name, changed) in [
        ("a.lock", "            0,\n"),
        ("b.lock", "            1,\n"),
    ] {
        let mut text = String::with_capacity(head.len() + n * item.len() + tail.len());
        text.push_str(head);
        for i in 0..n - 1 {
            text.push_str(if i == n / 2 { changed } else { item });
        }
        text.push_str("            0");
        text.push_str(tail);
        fs::write(d.join(name), text).unwrap();
    }
    let size = fs::metadata(d.join("a.lock")).unwrap().len();
    let args: Vec<&std::ffi::OsStr> = [
        "check",
        "--baseline",
        "a.lock",
        "--against",
        "b.lock",
        "--format",
        "json",
        "--output",
        "report.json",
    ]
    .iter()
    .map(std::ffi::OsStr::new)
    .collect();
    let (code, rss, stderr) = peak_rss(&args, &d);
    assert_eq!(code, Some(1), "{stderr}");
    let ratio = rss as f64 / size as f64;
    eprintln!("check: {size}-byte lockfiles, peak RSS {rss} bytes ({ratio:.1}x)");
    assert!(
        ratio < 10.0,
        "peak RSS {rss} bytes is {ratio:.1}x the {size}-byte lockfile (bound 10x)"
    );
    let report = fs::read_to_string(d.join("report.json")).unwrap();
    assert!(
        report.contains("\"schema.default.changed\""),
        "{}",
        &report[..2000.min(report.len())]
    );
}
