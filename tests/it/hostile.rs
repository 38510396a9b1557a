//! A hostile server cannot reach the terminal, the CI log, the pull request or an XML
//! parser through mcp-covenant's reports (docs/security.md lists every attack and the
//! test that covers it).
//!
//! The property test (proptest, `common::property`: fixed cases, a failure shrinks
//! toward fewer tools and harmless pieces) pushes random strings (controls, ESC
//! sequences, bidi overrides, line separators, markup, backtick runs, workflow
//! commands, noncharacters, huge strings) through every element field a report shows,
//! then checks every format of `check` and `lint` for the invariants: no raw control or
//! bidi character, valid JSON, SARIF that the official schema accepts, well-formed XML
//! 1.0, no workflow command that data started, no live markdown, a comment under
//! GitHub's limit.

use crate::common;
use crate::common::schema;

use std::fs;
use std::path::Path;

use crate::common::property;
use crate::common::*;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{json, Value};

/// What no report may hold raw: C0 controls (but the newlines between lines), DEL, C1
/// controls, the bidi embeddings, overrides and isolates, the line and paragraph
/// separators, and the noncharacters XML 1.0 forbids.
pub(crate) fn forbidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(
            c,
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' | '\u{FFFE}' | '\u{FFFF}'
        )
}

/// The pieces of a hostile string; "ok" first, the harmless one a failure shrinks
/// toward.
const PIECES: &[&str] = &[
    "ok",
    "\u{1b}[2J\u{1b}[31mred",
    "\r",
    "\n::error::injected",
    "\n::add-mask::secret",
    "\r\n::set-output name=x::y",
    "%0A::warning::x",
    "\u{202E}gnp.exe",
    "\u{2066}iso\u{2069}",
    "\u{2028}",
    "\u{2029}",
    "\u{85}",
    "\u{9b}31m",
    "\u{0}",
    "\u{7f}",
    "\t",
    "`",
    "```",
    "````\n<script>",
    "<img src=x onerror=alert(1)>",
    "<details><summary>x</summary>",
    "</details>",
    "</summary>",
    "@octocat",
    "[link](https://evil.example)",
    "![img](https://evil.example/x.png)",
    "https://evil.example",
    "www.evil.example",
    "#1",
    "|",
    "\\|",
    "*bold* _em_",
    "\u{FFFE}",
    "\u{FFFF}",
    "\u{E0041}\u{E0042}",
    "\u{200B}",
    "]]>",
    "&amp;",
    "<!--",
    "\"'",
    "é漢字🦀",
];

/// A hostile string: one to four pieces, and (one in 32) a huge tail of this many
/// `` `<x>| `` (2,000 to 15,000: a comment limit, a cell limit, a line that never
/// ends). The run time follows the huge strings: the seeded loop this replaced drew one
/// in twelve, but its eight cases held 13 huge strings, half what one in twelve gives
/// on average; one in twelve here took twice its time, one in 32 about the same.
#[derive(Clone)]
struct Hostile(Vec<&'static str>, Option<usize>);

/// The pieces joined by `+` (a failure's message shows them so).
impl std::fmt::Debug for Hostile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pieces: Vec<String> = self.0.iter().map(|p| format!("{p:?}")).collect();
        write!(f, "{}", pieces.join(" + "))?;
        match self.1 {
            Some(n) => write!(f, " + \"`<x>|\" x {n}"),
            None => Ok(()),
        }
    }
}

/// How many huge strings the reports have had.
static HUGE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Hostile {
    /// The string (counted in `HUGE` when it is huge).
    fn text(&self) -> String {
        if self.1.is_some() {
            HUGE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.0.concat() + &"`<x>|".repeat(self.1.unwrap_or(0))
    }
}

fn hostile() -> impl Strategy<Value = Hostile> {
    (
        prop::collection::vec(select(PIECES), 1..5),
        prop::option::weighted(1.0 / 32.0, 2_000..15_000usize),
    )
        .prop_map(|(pieces, huge)| Hostile(pieces, huge))
}

/// A tool's hostile texts: its name (after its index), its property, the two values
/// of the property's enum (the second, removed after, is the first one followed by
/// `values.1`), its title, and what its title is followed by after when it is
/// retitled (the fourth and seventh tools). Followed, so that the two differ whatever
/// the strings are: two values or titles alike made one change fewer than the test
/// counts on (shrinking found it: every string "ok").
#[derive(Clone, Debug)]
struct Tool {
    name: Hostile,
    property: Hostile,
    values: (Hostile, Hostile),
    title: Hostile,
    retitled: Hostile,
}

/// A before/after pair whose every change carries hostile text: removed, added and
/// retitled tools, a removed enum value (a witness), a new required property, a new
/// server version. `server`: the name and instructions before, the version's suffix,
/// the name and instructions after; `added`: the new tool's name and description;
/// `extra`: the new required properties' name.
#[derive(Clone, Debug)]
struct Pair {
    tools: Vec<Tool>,
    server: [Hostile; 5],
    added: (Hostile, Hostile),
    extra: Hostile,
}

/// Four to seven tools; a failure shrinks toward fewer, and toward "ok" for each piece.
fn pair() -> impl Strategy<Value = Pair> {
    let tool = (
        hostile(),
        hostile(),
        (hostile(), hostile()),
        hostile(),
        hostile(),
    )
        .prop_map(|(name, property, values, title, retitled)| Tool {
            name,
            property,
            values,
            title,
            retitled,
        });
    (
        prop::collection::vec(tool, 4..8),
        [hostile(), hostile(), hostile(), hostile(), hostile()],
        (hostile(), hostile()),
        hostile(),
    )
        .prop_map(|(tools, server, added, extra)| Pair {
            tools,
            server,
            added,
            extra,
        })
}

/// `p` written to `before.lock` and `after.lock` in `dir`.
fn write_pair(p: &Pair, dir: &Path) {
    let tool = |i: usize, title: String, both: bool, required_new: Option<&str>| {
        let t = &p.tools[i];
        let (property, v0) = (t.property.text(), t.values.0.text());
        let values = if both {
            json!([v0, v0.clone() + &t.values.1.text()])
        } else {
            json!([v0])
        };
        let mut properties = serde_json::Map::new();
        properties.insert(property.clone(), json!({"type": "string", "enum": values}));
        let mut required = vec![json!(property)];
        if let Some(p) = required_new {
            properties.insert(p.to_string(), json!({"type": "string"}));
            required.push(json!(p));
        }
        json!({
            "name": format!("{i}{}", t.name.text()),
            "title": title,
            "description": title,
            "inputSchema": {"type": "object", "properties": properties, "required": required},
        })
    };
    let before: Vec<Value> = (0..p.tools.len())
        .map(|i| tool(i, p.tools[i].title.text(), true, None))
        .collect();
    let mut after: Vec<Value> = Vec::new();
    let extra = p.extra.text();
    for (i, t) in p.tools.iter().enumerate().skip(1) {
        match i % 3 {
            0 => {
                let title = t.title.text() + &t.retitled.text();
                after.push(tool(i, title, true, None));
            }
            1 => after.push(tool(i, t.title.text(), false, None)),
            _ => after.push(tool(i, t.title.text(), true, Some(&format!("{extra}{i}")))),
        }
    }
    after.push(json!({
        "name": format!("new{}", p.added.0.text()),
        "description": p.added.1.text(),
    }));
    let lock = |tools: Vec<Value>, version: String, name: &Hostile, instructions: &Hostile| {
        json!({
            "covenant_version": "0.2.0",
            "captured_at_unix": 0,
            "server": {"name": name.text(), "version": version, "instructions": instructions.text()},
            "surface": {"tools": tools, "resources": [], "resourceTemplates": [], "prompts": []}
        })
    };
    let [name_a, instructions_a, version, name_b, instructions_b] = &p.server;
    let a = lock(before, "1.0.0".into(), name_a, instructions_a);
    let b = lock(
        after,
        format!("2.0.0{}", version.text()),
        name_b,
        instructions_b,
    );
    for (file, lock) in [("before.lock", a), ("after.lock", b)] {
        fs::write(dir.join(file), serde_json::to_string_pretty(&lock).unwrap()).unwrap();
    }
}

pub(crate) fn no_raw(what: &str, text: &str) {
    if let Some((i, c)) = text.char_indices().find(|(_, c)| forbidden(*c)) {
        let from = text[..i].char_indices().rev().nth(40).map_or(0, |(j, _)| j);
        panic!(
            "{what}: raw U+{:04X} at byte {i}: {:?}",
            c as u32,
            &text[from..(i + 8).min(text.len())]
        );
    }
}

/// Only the github format writes workflow commands, and then one per result.
pub(crate) fn no_commands(what: &str, text: &str) {
    for line in text.lines() {
        assert!(
            !line.trim_start().starts_with("::"),
            "{what}: a line starts a workflow command: {line:?}"
        );
    }
}

/// Remove code spans and fenced code blocks the way CommonMark reads them; what is
/// left is what renders as markdown.
pub(crate) fn outside_code(md: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut fence: Option<usize> = None;
    for line in md.lines() {
        let t = line.trim_start();
        let ticks = t.chars().take_while(|c| *c == '`').count();
        if let Some(n) = fence {
            if ticks >= n && t[ticks..].trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if ticks >= 3 {
            fence = Some(ticks);
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == '`' {
                let n = chars[i..].iter().take_while(|c| **c == '`').count();
                // The closing run: exactly n backticks.
                let mut j = i + n;
                let mut closed = None;
                while j < chars.len() {
                    if chars[j] == '`' {
                        let m = chars[j..].iter().take_while(|c| **c == '`').count();
                        if m == n {
                            closed = Some(j + m);
                            break;
                        }
                        j += m;
                    } else {
                        j += 1;
                    }
                }
                match closed {
                    Some(end) => {
                        out.push_str("<code/>");
                        i = end;
                    }
                    None => {
                        out.extend(&chars[i..i + n]);
                        i += n;
                    }
                }
            } else {
                out.push(chars[i]);
                i += 1;
            }
        }
        lines.push(out);
    }
    assert!(fence.is_none(), "an unclosed code fence");
    lines
}

pub(crate) fn no_live_markdown(what: &str, md: &str) {
    assert!(
        md.chars().count() < 65_536,
        "{what}: {} characters",
        md.chars().count()
    );
    for line in md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Subject"))
    {
        let bars = line
            .char_indices()
            .filter(|(i, c)| *c == '|' && !line[..*i].ends_with('\\'))
            .count();
        assert_eq!(bars, 5, "{what}: a table row with extra cells: {line}");
    }
    for line in outside_code(md) {
        let mut rest = line.clone();
        for ours in ["<details><summary>", "</summary>", "</details>", "<code/>"] {
            rest = rest.replace(ours, " ");
        }
        // Our headline's bold (it holds counts and words, no data).
        if rest.starts_with("**") || rest.starts_with("No interface changes") {
            rest = rest.replace("**", " ");
        }
        for live in [
            "<", ">", "[", "]", "!", "@", "http", "www.", "&", "*", "\\", "`",
        ] {
            assert!(
                !rest.contains(live),
                "{what}: `{live}` outside a code span: {line}"
            );
        }
        // Our own emphasis lines (`_..._`) only; no underscore from data.
        if !(rest.starts_with('_') && rest.ends_with("._")) {
            assert!(
                !rest.contains('_'),
                "{what}: `_` outside a code span: {line}"
            );
        }
    }
}

fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = bin().current_dir(dir).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), stdout(&o), stderr(&o))
}

#[test]
fn hostile_strings_keep_every_format_safe() {
    let sarif_schema: Value = serde_json::from_str(
        &fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/sarif-2.1.0-rtm.5.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let d = tmpdir("hostile-strings");
    // Eight pairs, as the seeded loop this replaced ran: each runs the binary eleven
    // times.
    let huge = || HUGE.load(std::sync::atomic::Ordering::Relaxed);
    let with_huge = std::cell::Cell::new(0);
    property::check(8, pair(), |p| {
        let before = huge();
        write_pair(&p, &d);
        with_huge.set(with_huge.get() + usize::from(huge() > before));
        check_reports_are_safe(&d, &sarif_schema);
        lint_reports_are_safe(&d, &sarif_schema);
        Ok(())
    });
    // The huge strings were among what the reports showed.
    eprintln!("{} of the cases with a huge string", with_huge.get());
    assert!(
        with_huge.get() >= 4,
        "{} cases with a huge string",
        with_huge.get()
    );
}

/// `check` of the pair in `d`, in every format: the invariants.
fn check_reports_are_safe(d: &Path, sarif_schema: &Value) {
    let base = ["--baseline", "before.lock", "--against", "after.lock"];
    let (code, json_out, err) = run_in(d, &[&["check", "--format", "json"][..], &base].concat());
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    let doc: Value =
        serde_json::from_str(&json_out).unwrap_or_else(|e| panic!("json: {e}\n{json_out}"));
    let n = doc["changes"].as_array().unwrap().len();
    assert!(n >= 4, "{n} changes");
    no_raw("json", &json_out);
    for format in ["human", "markdown", "github", "sarif", "junit"] {
        let what = format!("check --format {format}");
        let mut args = vec!["check", "--verbose", "--format", format];
        args.extend(base);
        let (c, out, err) = run_in(d, &args);
        assert_eq!(c, code, "{what}: {err}");
        no_raw(&what, &out);
        no_raw(&format!("{what} (stderr)"), &err);
        no_commands(&format!("{what} (stderr)"), &err);
        match format {
            "human" => {
                no_commands(&what, &out);
                let items = out
                    .lines()
                    .filter(|l| {
                        ["    x ", "    + ", "    ~ "]
                            .iter()
                            .any(|m| l.starts_with(m))
                    })
                    .count();
                assert_eq!(items, n, "{what}: one line per change\n{out}");
            }
            "markdown" => {
                no_commands(&what, &out);
                no_live_markdown(&what, &out);
            }
            "github" => {
                assert_eq!(
                    out.lines().count(),
                    n,
                    "{what}: one command per change\n{out}"
                );
                for line in out.lines() {
                    assert!(
                        ["::error file=", "::warning file=", "::notice file="]
                            .iter()
                            .any(|p| line.starts_with(p)),
                        "{what}: {line}"
                    );
                }
            }
            "sarif" => {
                no_commands(&what, &out);
                let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{what}: {e}"));
                let errors = schema::validate(sarif_schema, &v);
                assert!(errors.is_empty(), "{what}: {errors:?}");
                assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), n);
            }
            "junit" => {
                no_commands(&what, &out);
                roxmltree::Document::parse(&out)
                    .unwrap_or_else(|e| panic!("{what}: not XML 1.0: {e}"));
            }
            _ => unreachable!(),
        }
    }
}

/// `lint` of the pair's `after.lock` in `d`, in every format: the invariants.
fn lint_reports_are_safe(d: &Path, sarif_schema: &Value) {
    let (code, json_out, err) = run_in(
        d,
        &[
            "lint",
            "--from",
            "after.lock",
            "--format",
            "json",
            "--fail-on",
            "never",
        ],
    );
    assert_eq!(code, 0, "lint: {err}");
    let lint: Value = serde_json::from_str(&json_out).unwrap();
    no_raw("lint json", &json_out);
    let n = lint["findings"].as_array().unwrap().len();
    for format in ["human", "markdown", "github", "sarif"] {
        let what = format!("lint --format {format}");
        let (_, out, err) = run_in(
            d,
            &[
                "lint",
                "--from",
                "after.lock",
                "--format",
                format,
                "--fail-on",
                "never",
            ],
        );
        no_raw(&what, &out);
        no_raw(&format!("{what} (stderr)"), &err);
        match format {
            "human" => no_commands(&what, &out),
            "markdown" => {
                no_commands(&what, &out);
                no_live_markdown(&what, &out);
            }
            "github" => assert_eq!(out.lines().count(), n, "{what}\n{out}"),
            "sarif" => {
                no_commands(&what, &out);
                let v: Value = serde_json::from_str(&out).unwrap();
                let errors = schema::validate(sarif_schema, &v);
                assert!(errors.is_empty(), "{what}: {errors:?}");
            }
            _ => unreachable!(),
        }
    }
}

/// The checker itself: it must see what it is there to catch.
#[test]
fn the_invariant_checks_catch_live_output() {
    let caught = |f: fn()| std::panic::catch_unwind(f).is_err();
    assert!(caught(|| no_raw("t", "a\u{1b}[31m")));
    assert!(caught(|| no_raw("t", "a\u{202E}")));
    assert!(caught(|| no_commands("t", "x\n  ::error::y")));
    assert!(caught(|| no_live_markdown(
        "t",
        "| `a` | b | <img src=x> | `c` |\n"
    )));
    assert!(caught(|| no_live_markdown(
        "t",
        "| `a` | b | c | `d|e` |\n"
    )));
    assert!(caught(|| no_live_markdown("t", "- `a`` @octocat\n")));
    no_live_markdown(
        "t",
        "| `a` |  | tool was removed | `tool.removed` |\n- `` a`b `` `c`\n",
    );
}

// --- the disk: writes that cannot be turned against the user, reads that end ---------

const LOCK_A: &str = r#"{"covenant_version":"0.2.0","captured_at_unix":0,"server":{"name":"s"},"surface":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}"#;
const LOCK_B: &str = r#"{"covenant_version":"0.2.0","captured_at_unix":0,"server":{"name":"s"},"surface":{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}}"#;

fn two_locks(name: &str) -> std::path::PathBuf {
    let d = tmpdir(name);
    fs::write(d.join("a.lock"), LOCK_A).unwrap();
    fs::write(d.join("b.lock"), LOCK_B).unwrap();
    d
}

fn check_to(d: &Path, output: &str) -> std::process::Output {
    bin()
        .current_dir(d)
        .args([
            "check",
            "--baseline",
            "a.lock",
            "--against",
            "b.lock",
            "--format",
            "json",
        ])
        .args(["--output", output])
        .output()
        .unwrap()
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

/// Run with a deadline: a read that blocks (a FIFO) must not hang the test.
fn output_within(mut cmd: std::process::Command, secs: u64) -> std::process::Output {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .args(["-9", &id.to_string()])
                .status();
            panic!("still running after {secs} s");
        }
    }
}

#[test]
fn a_planted_temp_symlink_is_never_followed() {
    // The old temporary name was `.NAME.PID.tmp`: plant it (this process writes) and a
    // few other guesses; the victim must stay as it was.
    let d = tmpdir("planted-tmp");
    let victim = d.join("victim.txt");
    fs::write(&victim, "precious").unwrap();
    let out = d.join("report.json");
    for pid in [std::process::id(), 1, 2] {
        std::os::unix::fs::symlink(&victim, d.join(format!(".report.json.{pid}.tmp"))).unwrap();
    }
    mcp_covenant::io::write_atomic(&out, b"new\n").unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(fs::read_to_string(&out).unwrap(), "new\n");
    let tmp = common::temporary_files(&d);
    let left: Vec<_> = tmp
        .iter()
        .filter(|n| {
            !fs::symlink_metadata(d.join(n))
                .unwrap()
                .file_type()
                .is_symlink()
        })
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn output_onto_a_fifo_a_directory_or_dev_stdout_is_exit_2() {
    let d = two_locks("output-special");
    mkfifo(&d.join("fifo"));
    fs::create_dir(d.join("dir")).unwrap();
    // `..` through an existing directory reaches /proc and /dev too: from dir/, one `..`
    // per component of the test's directory, wherever TMPDIR puts it.
    let up = "../".repeat(d.canonicalize().unwrap().components().count());
    let (proc_fd, dev_null) = (
        format!("dir/{up}proc/self/fd/1"),
        format!("dir/{up}dev/null"),
    );
    for (target, needle) in [
        ("fifo", "a FIFO, not a regular file"),
        ("dir", "a directory, not a regular file"),
        ("/dev/stdout", "not a regular file"),
        ("/dev/null", "not a regular file"),
        ("/proc/self/fd/1", "not a regular file"),
        (&proc_fd, "a device or a process file"),
        (&dev_null, "a device or a process file"),
    ] {
        let mut cmd = bin();
        cmd.current_dir(&d).args([
            "check",
            "--baseline",
            "a.lock",
            "--against",
            "b.lock",
            "--format",
            "json",
            "--output",
            target,
        ]);
        let o = output_within(cmd, 20);
        assert_fails_cleanly(&o, needle);
    }
    // Nothing was replaced.
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::metadata(d.join("fifo")).unwrap().file_type().is_fifo());
    assert!(fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn output_onto_an_input_lockfile_is_refused() {
    let d = two_locks("output-input");
    std::os::unix::fs::symlink("a.lock", d.join("link.lock")).unwrap();
    for target in ["a.lock", "b.lock", "./a.lock", "link.lock"] {
        let o = check_to(&d, target);
        assert_fails_cleanly(&o, "which this command reads");
    }
    assert_eq!(fs::read_to_string(d.join("a.lock")).unwrap(), LOCK_A);
    assert_eq!(fs::read_to_string(d.join("b.lock")).unwrap(), LOCK_B);
    let o = bin()
        .current_dir(&d)
        .args([
            "lint", "--from", "a.lock", "--format", "json", "--output", "a.lock",
        ])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "which this command reads");
    assert_eq!(fs::read_to_string(d.join("a.lock")).unwrap(), LOCK_A);
}

#[test]
fn writes_keep_the_mode_and_go_through_a_symlink_to_its_target() {
    use std::os::unix::fs::PermissionsExt;
    let d = two_locks("output-mode");
    fs::write(d.join("report.json"), "old").unwrap();
    fs::set_permissions(d.join("report.json"), fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("report.json", d.join("link.json")).unwrap();
    let o = check_to(&d, "link.json");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(fs::symlink_metadata(d.join("link.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    let written = fs::read_to_string(d.join("report.json")).unwrap();
    assert!(written.contains("tool.removed"), "{written}");
    let mode = fs::metadata(d.join("report.json"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn a_symlinked_lockfile_is_snapshotted_into_its_target() {
    let d = tmpdir("snapshot-symlink");
    let spec = write_spec(
        &d,
        &json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
    );
    fs::create_dir(d.join("real")).unwrap();
    fs::write(d.join("real/mcp-covenant.lock"), LOCK_A).unwrap();
    std::os::unix::fs::symlink("real/mcp-covenant.lock", d.join("mcp-covenant.lock")).unwrap();
    let o = bin()
        .current_dir(&d)
        .args(["snapshot", "-o", "mcp-covenant.lock", "--"])
        .arg(fixture())
        .arg(&spec)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(fs::symlink_metadata(d.join("mcp-covenant.lock"))
        .unwrap()
        .file_type()
        .is_symlink());
    let text = fs::read_to_string(d.join("real/mcp-covenant.lock")).unwrap();
    assert!(text.contains("\"name\": \"t\""), "{text}");
}

#[test]
fn inputs_that_are_not_regular_files_fail_at_once() {
    let d = two_locks("input-special");
    mkfifo(&d.join("fifo.lock"));
    fs::create_dir(d.join("dir.lock")).unwrap();
    let big = fs::File::create(d.join("big.lock")).unwrap();
    big.set_len((256 << 20) + 1).unwrap(); // sparse: no disk used
    for (input, needle) in [
        ("fifo.lock", "it is a FIFO, not a regular file"),
        ("/dev/zero", "it is a device, not a regular file"),
        ("dir.lock", "it is a directory, not a regular file"),
        ("big.lock", "over the 256 MiB mcp-covenant reads"),
    ] {
        for args in [
            vec!["check", "--baseline", input, "--against", "b.lock"],
            vec!["check", "--baseline", "a.lock", "--against", input],
            vec![
                "check",
                "--baseline",
                "a.lock",
                "--against",
                input,
                "--format",
                "sarif",
            ],
            vec!["lint", "--from", input],
            vec!["--config", input, "rules"],
        ] {
            let mut cmd = bin();
            cmd.current_dir(&d).args(&args);
            let o = output_within(cmd, 20);
            assert_fails_cleanly(&o, needle);
        }
    }
}

// --- one validation: snapshot, the full reader and the fast path agree ----------------

/// A lockfile with `tools` as given (and one good prompt), as text.
fn lock_with(tools: &str) -> String {
    format!(
        r#"{{"covenant_version":"0.2.0","captured_at_unix":0,"server":{{"name":"s"}},"surface":{{"tools":{tools},"prompts":[{{"name":"p","arguments":[{{"name":"x"}}]}}]}}}}"#
    )
}

#[test]
fn the_fast_and_the_full_path_agree_on_malformed_lockfiles() {
    let deep = format!(
        r#"[{{"name":"d","inputSchema":{}{}}}]"#,
        r#"{"items":"#.repeat(200),
        "}".repeat(200)
    );
    let cases: Vec<String> = vec![
        lock_with(r#"[{"name":"a"},{"name":"a"}]"#),
        lock_with(r#"[{"name":5}]"#),
        lock_with(r#"[{"name":null}]"#),
        lock_with(r#"[{"title":"no name"}]"#),
        lock_with(r#"[{"name":"a","inputSchema":5}]"#),
        lock_with(r#"[{"name":"a","inputSchema":null}]"#),
        lock_with(r#"[{"name":"a","inputSchema":[]}]"#),
        lock_with(r#"[{"name":"a","outputSchema":"x"}]"#),
        lock_with(r#"[{"name":"a","name":"b"}]"#),
        lock_with(r#"[5]"#),
        lock_with(r#"[null]"#),
        lock_with(r#"null"#),
        lock_with(r#"{}"#),
        deep,
        r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"prompts":[{"name":"p","arguments":5}]}}"#.into(),
        r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"prompts":[{"name":"p","arguments":[{"x":1}]}]}}"#.into(),
        r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"prompts":[{"name":"p","arguments":[5]}]}}"#.into(),
        r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"resources":[{"uri":5}]}}"#.into(),
        r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"resourceTemplates":[{"name":"t"}]}}"#.into(),
        r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{},"extra":1}"#.into(),
        r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"widgets":[]}}"#.into(),
        r#"{"covenant_version":"0.2.0","captured_at_unix":-1,"surface":{}}"#.into(),
        r#"{"covenant_version":"9.0.0","captured_at_unix":0,"surface":{}}"#.into(),
        r#"{"covenant_version":"0.2.0","captured_at_unix":0}"#.into(),
        "not json".into(),
        String::new(),
    ];
    let d = tmpdir("fast-full");
    fs::write(d.join("good.lock"), LOCK_A).unwrap();
    let rules = mcp_covenant::rules::Rules::embedded().unwrap();
    for (n, text) in cases.iter().enumerate() {
        fs::write(d.join("bad.lock"), text).unwrap();
        // The fast path against the full reader itself, in both positions and in
        // the canonical layout too when the full reader reads the file.
        let full = mcp_covenant::lockfile::Lockfile::parse(text.as_bytes(), "bad.lock");
        let mut layouts = vec![text.clone()];
        layouts.extend(full.as_ref().ok().map(|l| l.to_text()));
        for text in &layouts {
            let bad = (text.as_bytes(), "bad.lock");
            let good = (LOCK_A.as_bytes(), "good.lock");
            for (x, y) in [(bad, good), (good, bad)] {
                let fast = mcp_covenant::diff::lazy::compare_files(&rules, x, y, 1 << 20);
                assert_eq!(
                    fast.err().map(|e| e.to_string()),
                    full.as_ref().err().map(|e| e.to_string()),
                    "case {n}: {text:.200}"
                );
            }
        }
        for (base, against) in [("bad.lock", "good.lock"), ("good.lock", "bad.lock")] {
            // Both formats take the fast path (sarif with its line map), which leaves
            // a file it does not read to the full reader: the same exit code and
            // error line.
            let run = |format: &str| {
                bin()
                    .current_dir(&d)
                    .args([
                        "check",
                        "--baseline",
                        base,
                        "--against",
                        against,
                        "--format",
                        format,
                    ])
                    .output()
                    .unwrap()
            };
            let (fast, full) = (run("json"), run("sarif"));
            let what = format!("case {n} ({base} against {against}): {text:.200}");
            assert_eq!(fast.status.code(), full.status.code(), "{what}");
            // The sarif run may add anchoring warnings; the error line is the same.
            let error = |o: &std::process::Output| {
                stderr(o)
                    .lines()
                    .filter(|l| l.starts_with("error:"))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            assert_eq!(error(&fast), error(&full), "{what}");
            if full.status.code() == Some(2) {
                assert_fails_cleanly(&fast, "bad.lock");
            }
        }
    }
}

/// What serde_json's skipping accepts and its parse refuses (a lone surrogate escape, a
/// number past `f64`), in an element both canonical files share, byte for byte: the
/// fast path reads that element once for both files, and must refuse it as the full
/// reader does (exit 2 with the same message), never report "no change".
#[test]
fn an_element_both_files_share_is_read_as_the_full_reader_reads_it() {
    let d = tmpdir("shared-element");
    let good = mcp_covenant::lockfile::Lockfile::parse(LOCK_A.as_bytes(), "a")
        .unwrap()
        .to_text();
    let anchor = "        \"name\": \"a\"";
    assert!(good.contains(anchor), "{good}");
    for (n, bad) in [r#""x": "\ud800""#, r#""x": 1e400"#, r#""x": [-2e308]"#]
        .into_iter()
        .enumerate()
    {
        let text = good.replacen(anchor, &format!("{anchor},\n        {bad}"), 1);
        fs::write(d.join("bad.lock"), &text).unwrap();
        let full = mcp_covenant::lockfile::Lockfile::parse(text.as_bytes(), "bad.lock")
            .err()
            .unwrap_or_else(|| panic!("case {n}: the full reader refuses {bad}"));
        for format in ["json", "sarif", "github"] {
            let o = bin()
                .current_dir(&d)
                .args(["check", "--baseline", "bad.lock", "--against", "bad.lock"])
                .args(["--format", format])
                .output()
                .unwrap();
            assert_fails_cleanly(&o, "bad.lock");
            assert!(
                stderr(&o).contains(&full.to_string()),
                "case {n} ({format}): {}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn snapshot_never_writes_what_check_refuses() {
    let d = tmpdir("snapshot-refuses");
    for (n, (tools, needle)) in [
        (
            json!([{"name": "a"}, {"name": "a"}]),
            "surface.tools[1]: duplicate tool `a`",
        ),
        (
            json!([{"name": 5}]),
            "surface.tools[0]: `name` must be a string",
        ),
        (
            json!([{"name": "a", "inputSchema": 5}]),
            "surface.tools[0]: `inputSchema` must be a JSON Schema object",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let spec = write_spec(&d, &json!({ "tools": tools }));
        let out = d.join(format!("out{n}.lock"));
        let o = bin()
            .current_dir(&d)
            .arg("snapshot")
            .arg("-o")
            .arg(&out)
            .arg("--")
            .arg(fixture())
            .arg(&spec)
            .output()
            .unwrap();
        assert_fails_cleanly(&o, needle);
        assert!(stderr(&o).contains("not writing"), "{}", stderr(&o));
        assert!(
            !out.exists(),
            "case {n}: a lockfile check refuses was written"
        );
    }
}

// --- messages: one error line, no secret, no control character -----------------------

#[test]
fn server_stderr_and_errors_are_one_escaped_line_each() {
    let d = tmpdir("stderr-escaped");
    let spec = write_spec(
        &d,
        &json!({
            "stderr": ["\u{1b}[2J\u{1b}[31mred\r::add-mask::x\n::error::injected", "\u{202E}evil\u{2028}::warning::y"],
            "exitAtStart": 3
        }),
    );
    let o = bin()
        .current_dir(&d)
        .args(["snapshot", "-o", "out.lock", "--"])
        .arg(fixture())
        .arg(&spec)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    no_raw("stderr", &err);
    no_commands("stderr", &err);
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "{err}"
    );
    assert!(err.contains("\\u{1b}[2J"), "{err}");

    // A hostile name inside an error message.
    let spec = write_spec(
        &d,
        &json!({"tools": [{"name": "x\n::error::pwned\u{1b}[2J"}, {"name": "x\n::error::pwned\u{1b}[2J"}]}),
    );
    let o = bin()
        .current_dir(&d)
        .args(["snapshot", "-o", "out.lock", "--"])
        .arg(fixture())
        .arg(&spec)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_fails_cleanly(&o, "duplicate tool `x\\u{a}::error::pwned\\u{1b}[2J`");
    no_raw("stderr", &err);
    no_commands("stderr", &err);
}

/// A server that answers every request with 401 and a body echoing the request's
/// headers (as some do), so the credentials come back in the error.
#[cfg(feature = "http")]
fn echoing_401_server() -> (u16, std::thread::JoinHandle<()>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            // The credentials first: the error shows the start of a body.
            let mut lines: Vec<&str> = head.lines().collect();
            lines.sort_by_key(|l| {
                let l = l.to_ascii_lowercase();
                !(l.starts_with("authorization") || l.starts_with("x-api-key"))
            });
            let echo = format!("unauthorized; you sent:\n{}\u{1b}[2J", lines.join("\n"));
            let _ = write!(
                stream,
                "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{echo}",
                echo.len()
            );
        }
    });
    (port, handle)
}

#[cfg(feature = "http")]
#[test]
fn errors_never_echo_header_values_or_url_secrets() {
    let (port, _server) = echoing_401_server();
    let d = tmpdir("no-secret-echo");
    let o = bin()
        .current_dir(&d)
        .env("MCP_COVENANT_HEADER_X_API_KEY", "env-secret-value-42")
        .args(["snapshot", "-o", "out.lock", "--timeout", "10"])
        .arg("--http")
        .arg(format!(
            "http://user:url-password-7@127.0.0.1:{port}/mcp?access_token=query-token-9"
        ))
        .args(["--header", "Authorization: Bearer flag-secret-token-1"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for secret in [
        "flag-secret-token-1",
        "env-secret-value-42",
        "url-password-7",
        "query-token-9",
    ] {
        assert!(!err.contains(secret), "`{secret}` in: {err}");
    }
    no_raw("stderr", &err);
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("401") && err.contains("authorization: ***") && err.contains("x-api-key: ***"),
        "the echo is there, masked: {err}"
    );
}

/// A key given twice in a lockfile (at any depth: an element, a schema, an argument, the
/// envelope) is refused with its line and column: a reviewer reads the first value, a
/// JSON parser keeps the last, so a duplicate could show one contract and gate another.
#[test]
fn a_key_given_twice_in_a_lockfile_is_refused_with_its_place() {
    let d = tmpdir("duplicate-keys");
    let good = mcp_covenant::lockfile::Lockfile::parse(LOCK_A.as_bytes(), "a")
        .unwrap()
        .to_text();
    let anchor = "        \"name\": \"a\"";
    assert!(good.contains(anchor), "{good}");
    let line = good[..good.find(anchor).unwrap()].matches('\n').count() + 2;
    for (n, (dup, key)) in [
        (r#""name": "b""#, "name"),
        (
            r#""inputSchema": {"type": "object", "type": "string"}"#,
            "type",
        ),
        (r#""x": {"deep": [{"k": 1, "k": 2}]}"#, "k"),
        (r#""n\u0061me": "b""#, "name"),
    ]
    .into_iter()
    .enumerate()
    {
        let text = good.replacen(anchor, &format!("{anchor},\n        {dup}"), 1);
        fs::write(d.join("dup.lock"), &text).unwrap();
        let o = bin()
            .current_dir(&d)
            .args(["check", "--baseline", "dup.lock", "--against", "dup.lock"])
            .output()
            .unwrap();
        assert_fails_cleanly(&o, &format!("dup.lock:{line}:"));
        assert!(
            stderr(&o).contains(&format!("duplicate key `{key}`")),
            "case {n}: {}",
            stderr(&o)
        );
    }
    // In the envelope too (serde's own check).
    let text = good.replacen(
        "  \"captured_at_unix\"",
        "  \"captured_at_unix\": 1,\n  \"captured_at_unix\"",
        1,
    );
    fs::write(d.join("dup.lock"), &text).unwrap();
    let o = bin()
        .current_dir(&d)
        .args(["lint", "--from", "dup.lock"])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "duplicate field `captured_at_unix`");
}

// --- capture bounds: what a server's answer may cost (issue 28 items 6, 8, 17) ---------

/// The limit a lockfile reader accepts, lowered for one command: 4 MiB instead of 256
/// (`MCP_COVENANT_MAX_READ_MIB`, which can only lower it). The tests past the limit
/// then move a few MiB, not 256; the reader, the writer and the capture all take the
/// limit from the one place that holds the default (`io::max_read_bytes`; its unit test
/// holds the default and that nothing raises it), and `inputs_that_are_not_regular_files_fail_at_once`
/// still reads past the default 256 MiB (a sparse file).
fn with_a_4_mib_limit(mut cmd: std::process::Command) -> std::process::Command {
    cmd.env("MCP_COVENANT_MAX_READ_MIB", "4");
    cmd
}

#[test]
fn snapshot_refuses_a_lockfile_larger_than_a_reader_accepts_before_writing() {
    // A 60 KB answer whose lockfile, indented 55 schemas deep, is about 6 MB (at the
    // default limit, a 2.5 MiB answer makes about 290 MB): check refuses to read it, so
    // snapshot refuses to write it, and leaves neither the file nor a temporary one.
    let d = tmpdir("lockfile-too-large");
    let spec = write_spec(
        &d,
        &json!({"tools": [], "deepSchema": 55, "deepDefaultItems": 25_000}),
    );
    let snapshot = |mut cmd: std::process::Command, out: &Path| {
        cmd.args(["snapshot", "--timeout", "120", "-o"])
            .arg(out)
            .arg("--")
            .arg(fixture())
            .arg(&spec)
            .output()
            .unwrap()
    };
    // Written where the limit is not lowered, the lockfile is one a reader with the
    // lowered limit refuses.
    let written = d.join("written.lock");
    let o = snapshot(bin(), &written);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let size = fs::metadata(&written).unwrap().len();
    assert!(size > 4 << 20, "{size} bytes");
    let o = with_a_4_mib_limit(bin())
        .args(["check", "--baseline"])
        .arg(&written)
        .arg("--against")
        .arg(&written)
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "over the 4 MiB mcp-covenant reads");
    // With the lowered limit, snapshot refuses to write it.
    let out = d.join("big.lock");
    fs::write(&out, "precious\n").unwrap();
    let o = snapshot(with_a_4_mib_limit(bin()), &out);
    assert_fails_cleanly(&o, "larger than the 4 MiB a lockfile reader accepts");
    assert_eq!(fs::read_to_string(&out).unwrap(), "precious\n");
    let left = common::temporary_files(&d);
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn a_cursor_longer_than_4_kib_is_refused_naming_the_limit() {
    let d = tmpdir("long-cursor");
    let tools: Vec<Value> = (0..3).map(|i| json!({"name": format!("t{i}")})).collect();
    // A cursor of ~4,000 bytes is followed; one of ~5,000 is not.
    for (pad, ok) in [(4000, true), (5000, false)] {
        let spec = write_spec(
            &d,
            &json!({"tools": tools, "pageSize": 1, "cursorPadding": pad}),
        );
        let out = d.join(format!("{pad}.lock"));
        let o = snapshot_fixture(&out, &spec, &[]);
        if ok {
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        } else {
            assert_fails_cleanly(&o, "longer than the 4096 bytes mcp-covenant follows");
            assert!(!out.exists());
        }
    }
}

#[test]
fn endless_pages_stop_at_the_size_a_lockfile_may_have() {
    // A distinct page for ever, each 1 MiB: the capture stops once all pages together
    // pass the size a lockfile may have (lowered to 4 MiB: `with_a_4_mib_limit`), over
    // stdio and over HTTP, with one error naming the limit (PAGE_CAP alone would let
    // 10,000 of them through).
    let d = tmpdir("endless-pages");
    let spec = json!({"tools": [], "endlessPages": 1 << 20});
    let out = d.join("x.lock");
    let o = with_a_4_mib_limit(bin())
        .args(["snapshot", "--timeout", "120", "-o"])
        .arg(&out)
        .arg("--")
        .arg(fixture())
        .arg(write_spec(&d, &spec))
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "sent more than 4 MiB by page");
    assert!(!out.exists());
    #[cfg(feature = "http")]
    {
        let server = fixture_http(&d, &spec);
        let o = with_a_4_mib_limit(bin())
            .args(["snapshot", "--timeout", "120", "-o"])
            .arg(&out)
            .args(["--http", &server.url()])
            .output()
            .unwrap();
        assert_fails_cleanly(&o, "sent more than 4 MiB by page");
        assert!(!out.exists());
    }
}

#[test]
fn a_grandchild_that_leaves_the_process_group_is_ended_with_the_capture() {
    // setsid() takes a process out of the server's group, which the capture ends; as the
    // child subreaper (Linux), mcp-covenant inherits it when the server exits, and ends
    // it. After a capture that succeeds and one that fails.
    for (name, extra) in [
        ("ok", json!({})),
        ("fails", json!({"errorOn": "tools/list"})),
    ] {
        let d = tmpdir(&format!("setsid-{name}"));
        let mut spec = json!({"tools": [{"name": "a"}], "setsidGrandchild": true});
        spec.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let spec_path = write_spec(&d, &spec);
        let o = snapshot_fixture(&d.join("x.lock"), &spec_path, &[]);
        assert_eq!(
            o.status.code(),
            Some(if name == "ok" { 0 } else { 2 }),
            "{}",
            stderr(&o)
        );
        let needle = spec_path.display().to_string();
        let left = processes_left(&needle);
        for pid in &left {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        assert!(left.is_empty(), "{name}: left running: {left:?}");
    }
}

// --- a hostile pattern: memory and time stay bounded -------------------------------------

/// A 50 KB pattern, a 50,000-character class repeated 19,000 times, once copied the
/// class per repetition (1.5 GiB in a second, 7.6 GB unbounded). Classes are stored
/// once and their ranges count against the program budget, so `check` finishes well
/// inside a 1 GiB address-space cap and a generous deadline, with a verdict, not an
/// abort. The pattern is compared, sampled for witnesses, matched against property
/// names (`patternProperties`) and tested for inclusion against a neighbour.
#[test]
fn a_huge_repeated_character_class_stays_within_memory() {
    let class = "a".repeat(50_000);
    let hostile = format!("(?:[{class}]{{1000}}){{19}}");
    let other = format!("(?:[{class}b]{{1000}}){{19}}");
    let lock = |x: &str, y: &str, t: &str| {
        let schema = json!({
            "type": "object",
            "properties": {
                "x": {"type": "string", "pattern": x},
                "y": {"type": "string", "pattern": y},
                "z": {"type": "object", "patternProperties": {y: {"type": t}}},
            },
        });
        json!({
            "covenant_version": "0.2.0",
            "captured_at_unix": 0,
            "server": {"name": "s"},
            "surface": {"tools": [{"name": "t", "inputSchema": schema, "outputSchema": schema}]},
        })
        .to_string()
    };
    let d = tmpdir("huge-class");
    fs::write(d.join("a.lock"), lock("^a", &hostile, "string")).unwrap();
    fs::write(d.join("b.lock"), lock(&hostile, &other, "integer")).unwrap();
    let mut cmd = std::process::Command::new("sh");
    cmd.current_dir(&d).env_remove("NO_COLOR").args([
        "-c",
        // Address space, not RSS: the cap holds whatever the allocator does.
        "ulimit -v 1048576 && exec \"$0\" \"$@\"",
        env!("CARGO_BIN_EXE_mcp-covenant"),
        "check",
        "--baseline",
        "a.lock",
        "--against",
        "b.lock",
        "--format",
        "json",
    ]);
    let o = output_within(cmd, 120);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let codes: Vec<&str> = report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["code"].as_str())
        .collect();
    assert!(
        codes.iter().any(|c| c.starts_with("schema.pattern.")),
        "{codes:?}"
    );
}

/// Thousands of changed properties in one schema: the witness search is bounded per
/// check, not per change (issue: 800 properties took 6 s, 2,000 took 40 s and more).
/// Every breaking schema change past the budget says so; none is dropped silently.
#[test]
fn thousands_of_changed_properties_keep_the_witness_search_bounded() {
    use mcp_covenant::diff;
    use mcp_covenant::lockfile::Lockfile;
    use mcp_covenant::rules::{Rules, Severity};
    let lock = |ty: &str| {
        let props: serde_json::Map<String, Value> = (0..2000)
            .map(|i| (format!("p{i}"), json!({"type": ty})))
            .collect();
        let names: Vec<&String> = props.keys().collect();
        let schema = json!({"type": "object", "properties": props, "required": names});
        let doc = json!({"covenant_version": "0.2.0", "captured_at_unix": 0,
            "server": {"name": "h"},
            "surface": {"tools": [{"name": "t", "inputSchema": schema, "outputSchema": schema}]}});
        Lockfile::parse(doc.to_string().as_bytes(), "generated").unwrap()
    };
    let rules = Rules::embedded().unwrap();
    // Required strings become integers (no instance proves one alone), and integers
    // become numbers (each output widening has its own witness).
    for (before, after) in [("string", "integer"), ("integer", "number")] {
        let (a, b) = (lock(before), lock(after));
        let start = std::time::Instant::now();
        let changes = diff::diff(&rules, &a.surface, &b.surface);
        let took = start.elapsed();
        let breaking: Vec<_> = changes
            .iter()
            .filter(|c| c.severity == Severity::Breaking)
            .collect();
        assert!(
            breaking.len() >= 2000,
            "{before} → {after}: {}",
            breaking.len()
        );
        let exhausted = breaking
            .iter()
            .filter(|c| c.witness_absent.map(|w| w.word()) == Some("budget-exhausted"))
            .count();
        assert!(
            exhausted > 0,
            "{before} → {after}: the budget was never reached"
        );
        for c in &breaking {
            assert!(
                c.witness.is_some() != c.witness_absent.is_some(),
                "{before} → {after}: {:?} has a witness and a reason, or neither",
                c.path
            );
        }
        // Unoptimised and on a shared machine; a release build takes about a second.
        assert!(
            took.as_secs() < 120,
            "{before} → {after}: {took:?} for 2,000 changed properties"
        );
        eprintln!("{before} → {after}: {took:?}, {exhausted} past the witness budget");
    }
}

/// Many tiny tools in one reply: each element is kept as its canonical text as the
/// reply is read, never as a tree of maps (a serde_json map takes about 630 bytes
/// however few keys it holds: 200,000 tiny tools held as maps peaked at about 30 times
/// their 10 MB reply). Under an address-space cap that a capture holding them as maps
/// exceeds, the capture succeeds and writes every tool.
#[test]
fn many_tiny_tools_are_captured_within_a_few_times_their_reply() {
    let d = tmpdir("tiny-tools");
    let n = 200_000;
    let tools: Vec<Value> = (0..n)
        .map(|i| json!({"name": format!("t{i:06}"), "inputSchema": {"type": "object"}}))
        .collect();
    fs::write(d.join("tools.json"), json!({ "tools": tools }).to_string()).unwrap();
    let spec = write_spec(
        &d,
        &json!({"tools": [], "toolsListFile": d.join("tools.json").to_str().unwrap()}),
    );
    let mut cmd = std::process::Command::new("sh");
    cmd.current_dir(&d).env_remove("NO_COLOR").args([
        "-c",
        // Address space, not RSS: the cap holds whatever the allocator does.
        "ulimit -v 393216 && exec \"$0\" \"$@\"",
        env!("CARGO_BIN_EXE_mcp-covenant"),
        "snapshot",
        "--timeout",
        "300",
        "-o",
        "out.lock",
        "--",
        fixture().to_str().unwrap(),
        spec.to_str().unwrap(),
    ]);
    let o = output_within(cmd, 400);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = fs::read_to_string(d.join("out.lock")).unwrap();
    assert_eq!(text.matches("\"name\": \"t").count(), n);
}

/// GitHub's runner acts on `##[error ...]`, `##[add-mask]...` anywhere in a line and
/// on `::command::` after leading blanks: a server's tool name, description, stderr
/// and an `[[ignore]]` reason never make one, in any channel a person or the runner
/// reads (the human report, `snapshot --check`, lint, stderr relays, warnings).
#[test]
fn workflow_commands_in_server_text_are_inert_in_every_channel() {
    let d = tmpdir("workflow-commands");
    let name = "y##[error file=src/app.js,line=1]Security review passed";
    let description = "x##[add-mask]removed";
    let spec = |tools: Value| {
        json!({
            "tools": tools,
            "stderr": [description, "  ::error::planted", name],
        })
    };
    let tool =
        |n: &str| json!({"name": n, "description": description, "inputSchema": {"type": "object"}});
    let before = write_spec(&d, &spec(json!([tool(name), tool("keep")])));
    let lock = d.join("a.lock");
    let run = |args: &[&str], spec: &Path| {
        let o = bin()
            .current_dir(&d)
            .args(args)
            .arg("--show-server-stderr")
            .arg("--")
            .arg(fixture())
            .arg(spec)
            .output()
            .unwrap();
        let all = format!("{}{}", stdout(&o), stderr(&o));
        for line in all.lines() {
            assert!(!line.contains("##["), "{args:?}: {line}");
            assert!(!line.trim_start().starts_with("::"), "{args:?}: {line}");
        }
        (o, all)
    };
    let (o, _) = run(&["snapshot", "-o", lock.to_str().unwrap()], &before);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The tool is removed and the description changed: both are reported.
    let after_dir = d.join("after");
    fs::create_dir_all(&after_dir).unwrap();
    let after = write_spec(
        &after_dir,
        &spec(json!([{"name": "keep", "description": name, "inputSchema": {"type": "object"}}])),
    );
    let (o, all) = run(&["check", "--baseline", lock.to_str().unwrap()], &after);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(all.contains("Security review passed"), "{all}");
    let (o, all) = run(
        &["snapshot", "--check", "-o", lock.to_str().unwrap()],
        &after,
    );
    assert_ne!(o.status.code(), Some(0), "{all}");
    let (_, all) = run(&["lint"], &before);
    assert!(all.contains("add-mask"), "{all}");
    // An [[ignore]] reason in covenant.toml, warned about.
    fs::write(
        d.join("covenant.toml"),
        format!(
            "[[ignore]]\ncode = \"tool.removed\"\nsubject = \"nope\"\nreason = {:?}\nuntil = \"2000-01-01\"\n",
            name
        ),
    )
    .unwrap();
    let (_, all) = run(&["check", "--baseline", lock.to_str().unwrap()], &after);
    assert!(all.contains("Security review passed"), "{all}");
}

/// A huge covenant.toml of glob alternations took 23–34 s and 943 MiB to compile: the
/// file's size and the `[[ignore]]` patterns' are bounded before any is compiled.
#[test]
fn a_huge_config_or_huge_globs_are_refused_before_compiling() {
    let d = tmpdir("huge-config");
    let alternation = |n: usize| {
        let words: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
        format!("{{{}}}", words.join(","))
    };
    let entry = |subject: &str| {
        format!("[[ignore]]\ncode = \"tool.removed\"\nsubject = \"{subject}\"\nreason = \"r\"\n")
    };
    let cases = [
        // Over 1 MiB.
        (
            entry(&alternation(200_000)),
            "more than the 1048576 a covenant.toml may have",
        ),
        // One pattern over 1 KiB.
        (entry(&alternation(1_000)), "an [[ignore]] pattern may have"),
        // Many short patterns, over 64 KiB together.
        (
            (0..200)
                .map(|_| entry(&alternation(100)))
                .collect::<String>(),
            "the [[ignore]] patterns together are more than 65536 bytes",
        ),
    ];
    for (text, want) in cases {
        fs::write(d.join("covenant.toml"), &text).unwrap();
        let started = std::time::Instant::now();
        let o = bin().current_dir(&d).args(["rules"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{want}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }
}
