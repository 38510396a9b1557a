//! The binary end to end: exit codes, `error:` lines, colour, output files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::tmpdir;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-covenant"));
    c.env_remove("NO_COLOR");
    c
}

fn golden(case: &str, file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(case)
        .join(file)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2 with exactly one line on stderr, starting `error:` and containing `needle`.
fn assert_fails_cleanly(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one error line, got: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    assert!(lines[0].contains(needle), "`{needle}` not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn check_against(baseline: &Path, against: &Path) -> Output {
    bin()
        .args(["check", "--baseline"])
        .arg(baseline)
        .arg("--against")
        .arg(against)
        .output()
        .unwrap()
}

#[test]
fn check_exits_1_on_breaking_and_0_on_no_change() {
    let o = check_against(
        &golden("seed-sample", "before.lock"),
        &golden("seed-sample", "after.lock"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        fs::read_to_string(golden("seed-sample", "expected.txt")).unwrap()
    );
    let o = check_against(
        &golden("no-change", "before.lock"),
        &golden("no-change", "after.lock"),
    );
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn invalid_json_names_file_line_and_column() {
    let d = tmpdir("invalid");
    let bad = d.join("bad.lock");
    fs::write(
        &bad,
        "{\n  \"covenant_version\": \"0.2.0\",\n  \"surface\": [\n",
    )
    .unwrap();
    let o = check_against(&golden("seed-sample", "before.lock"), &bad);
    // `surface` is an array where an object belongs: said where it starts.
    assert_fails_cleanly(
        &o,
        &format!(
            "{}:3:13: not a valid lockfile: invalid type: sequence",
            bad.display()
        ),
    );
}

#[test]
fn wrong_shape_names_the_element() {
    let d = tmpdir("shape");
    let bad = d.join("shape.lock");
    fs::write(
        &bad,
        r#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"tools":[{"name":"a"},{"name":7}]}}"#,
    )
    .unwrap();
    let o = check_against(&bad, &golden("seed-sample", "after.lock"));
    assert_fails_cleanly(&o, "surface.tools[1]: `name` must be a string");
}

#[test]
fn truncated_and_non_utf8_files_fail_cleanly() {
    let d = tmpdir("trunc");
    let full = fs::read(golden("seed-sample", "after.lock")).unwrap();
    let cut = d.join("cut.lock");
    fs::write(&cut, &full[..full.len() / 2]).unwrap();
    assert_fails_cleanly(&check_against(&cut, &cut), "not a valid lockfile");
    let latin1 = d.join("latin1.lock");
    let mut bytes =
        br#"{"covenant_version":"0.2.0","captured_at_unix":0,"surface":{"tools":[{"name":""#
            .to_vec();
    bytes.extend([0xe9, b'"', b'}', b']', b'}', b'}']);
    fs::write(&latin1, bytes).unwrap();
    assert_fails_cleanly(&check_against(&latin1, &latin1), "latin1.lock:1:");
    let empty = d.join("empty.lock");
    fs::write(&empty, "").unwrap();
    assert_fails_cleanly(&check_against(&empty, &empty), "empty.lock:1:0");
}

#[test]
fn a_missing_baseline_says_how_to_create_it() {
    let d = tmpdir("missing");
    let o = bin()
        .current_dir(&d)
        .args(["check", "--against"])
        .arg(golden("seed-sample", "after.lock"))
        .output()
        .unwrap();
    assert_fails_cleanly(
        &o,
        "baseline lockfile mcp-covenant.lock not found; capture it from its server with `mcp-covenant snapshot -o mcp-covenant.lock -- SERVER-COMMAND`",
    );
}

#[test]
fn a_future_lockfile_asks_for_an_upgrade() {
    let d = tmpdir("future");
    let f = d.join("future.lock");
    fs::write(
        &f,
        r#"{"covenant_version":"7.1.0","captured_at_unix":0,"surface":{}}"#,
    )
    .unwrap();
    assert_fails_cleanly(&check_against(&f, &f), "upgrade mcp-covenant");
}

#[test]
fn usage_errors_exit_2() {
    let o = bin()
        .args(["check", "--fail-on", "sometimes"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("sometimes"));
    let o = bin().args(["--help"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("inputSchema is what a caller sends"));
}

#[test]
fn capture_options_are_checked_when_parsed() {
    for (flag, value, needle) in [
        ("--timeout", "1e19", "at most 86400"),
        ("--timeout", "0", "more than 0"),
        ("--timeout", "NaN", "more than 0"),
        ("--timeout", "soon", "not a number"),
        ("--protocol", "1999-01-01", "expected auto"),
        ("--client-capabilities", "roots,telepathy", "telepathy"),
    ] {
        let o = bin()
            .args(["snapshot", "-o", "/nonexistent/never.lock", flag, value])
            .args(["--", "/nonexistent/server"])
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {err}");
        assert_eq!(err.matches("error: ").count(), 1, "{err}");
        assert!(err.contains(needle), "{flag} {value}: {err}");
    }
}

#[test]
fn a_closed_stdout_keeps_the_verdict() {
    // `check ... | head -1`: the reader is gone before the report is written.
    for (case, verdict) in [("keywords", 1), ("no-change", 0)] {
        let mut child = bin()
            .args(["check", "--baseline"])
            .arg(golden(case, "before.lock"))
            .arg("--against")
            .arg(golden(case, "after.lock"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(verdict), "{case}: {}", stderr(&o));
        // Nothing but a failing verdict's hint: no error about the closed pipe.
        let err = stderr(&o);
        assert!(
            err.lines()
                .all(|l| l.starts_with("hint: to ship this on purpose")),
            "{case}: {err}"
        );
    }
}

#[test]
fn colour_follows_the_flag_and_no_color() {
    let run = |args: &[&str], no_color: bool| {
        let mut c = bin();
        c.args(["check", "--baseline"])
            .arg(golden("seed-sample", "before.lock"))
            .arg("--against")
            .arg(golden("seed-sample", "after.lock"))
            .args(args);
        if no_color {
            c.env("NO_COLOR", "1");
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    assert!(run(&["--color", "always"], false).contains("\u{1b}["));
    assert!(!run(&["--color", "never"], false).contains("\u{1b}["));
    // Not a terminal: no colour under auto.
    assert!(!run(&[], false).contains("\u{1b}["));
    assert!(!run(&[], true).contains("\u{1b}["));
}

#[test]
fn output_file_gets_the_format_and_stdout_the_human_report() {
    let d = tmpdir("output");
    let out = d.join("report.json");
    let o = bin()
        .args(["check", "--format", "json", "--baseline"])
        .arg(golden("seed-sample", "before.lock"))
        .arg("--against")
        .arg(golden("seed-sample", "after.lock"))
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        fs::read_to_string(golden("seed-sample", "expected.json")).unwrap()
    );
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("mcp-covenant: 4 change(s)"));
}

#[test]
fn an_unwritable_output_fails_cleanly() {
    let o = bin()
        .args(["check", "--baseline"])
        .arg(golden("seed-sample", "before.lock"))
        .arg("--against")
        .arg(golden("seed-sample", "after.lock"))
        .args(["--output", "/nonexistent-dir/x/report.txt"])
        .output()
        .unwrap();
    assert_fails_cleanly(&o, "cannot write /nonexistent-dir/x/report.txt");
}

#[test]
fn rules_lists_default_and_effective_severities() {
    let d = tmpdir("rules");
    fs::write(
        d.join("covenant.toml"),
        "[severity]\n\"schema.enum.value.added\" = { output = \"minor\" }\n[lint]\n\"tool.missing_description\" = \"error\"\n",
    )
    .unwrap();
    // ./covenant.toml is found without --config.
    let o = bin().current_dir(&d).arg("rules").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let line = |id: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} not listed:\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        line("schema.enum.value.added").contains("minor/breaking minor/minor covenant.toml"),
        "{}",
        line("schema.enum.value.added")
    );
    assert!(line("tool.missing_description").contains("warning error covenant.toml"));
    // SOURCE names what the user has: the built-in tables or their covenant.toml.
    assert!(line("tool.removed").ends_with("breaking breaking built-in"));
    assert!(!text.contains("rules/"), "{text}");
    assert!(text.contains("covenant.toml"));
    // A table: every column starts where its heading does.
    let table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    let header = table[0];
    for heading in ["WATCHES", "DEFAULT", "EFFECTIVE", "SOURCE"] {
        let at = header.find(heading).unwrap();
        for row in &table[1..] {
            let before: String = row.chars().take(at).collect();
            assert!(
                before.ends_with("  ") && !row.chars().nth(at).unwrap().is_whitespace(),
                "`{heading}` column not aligned in: {row}"
            );
        }
    }
}

#[test]
fn command_line_conventions() {
    let (before, after) = (
        golden("seed-sample", "before.lock"),
        golden("seed-sample", "after.lock"),
    );
    let d = tmpdir("conventions");
    // check -o, --fail-on major (= breaking), -q.
    let o = bin()
        .args([
            "-q",
            "check",
            "--fail-on",
            "major",
            "--format",
            "json",
            "-o",
        ])
        .arg(d.join("r.json"))
        .arg("--baseline")
        .arg(&before)
        .arg("--against")
        .arg(&after)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(report["required_bump"], "major");
    // --output into a missing directory names it.
    let o = bin()
        .args(["check", "-o"])
        .arg(d.join("no/such/r.md"))
        .arg("--baseline")
        .arg(&before)
        .arg("--against")
        .arg(&after)
        .output()
        .unwrap();
    assert_fails_cleanly(
        &o,
        &format!(
            "the directory {} does not exist",
            d.join("no/such").display()
        ),
    );
    // A server command without `--`: the line to paste.
    let o = bin()
        .args(["snapshot", "-o", "x.lock", "node", "dist/server.js"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`mcp-covenant snapshot -o x.lock -- node dist/server.js`"),
        "{}",
        stderr(&o)
    );
    // An unknown flag is never suggested as `-- --flag` (the server would get it).
    let o = bin().args(["check", "--json"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("'-- --json'"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--format json"), "{}", stderr(&o));
    // Completions and the man page come from the same arguments.
    let o = bin().args(["completions", "bash"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("--baseline-rev"));
    let man = PathBuf::from(env!("CARGO_BIN_EXE_mcp-covenant"))
        .parent()
        .unwrap()
        .join("examples/man");
    let o = Command::new(man).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let page = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(page.contains(".TH mcp-covenant 1"), "{page}");
    assert!(page.contains("completions"), "{page}");
}

/// The bash script completes after a subcommand (clap_complete's own script did not:
/// clap-rs/clap#6421): `mcp-covenant check --f<TAB>` offers `--format` and `--fail-on`.
#[test]
fn bash_completes_a_subcommands_flags() {
    let o = bin().args(["completions", "bash"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let script = tmpdir("bash-completion").join("mcp-covenant.bash");
    fs::write(&script, &o.stdout).unwrap();
    let probe = format!(
        "source '{}'\n\
         COMP_WORDS=(mcp-covenant check --f); COMP_CWORD=2; COMP_LINE='mcp-covenant check --f'; COMP_POINT=${{#COMP_LINE}}\n\
         _mcp__covenant mcp-covenant --f check\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display()
    );
    let o = Command::new("bash")
        .args(["--norc", "-c", &probe])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let offered = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(offered.lines().any(|l| l == "--format"), "{offered:?}");
    assert!(offered.lines().any(|l| l == "--fail-on"), "{offered:?}");
}

#[test]
fn force_color_and_clicolor_force_colour_a_pipe_unless_no_color() {
    let run = |env: &[(&str, &str)]| {
        let mut c = bin();
        c.env_remove("FORCE_COLOR").env_remove("CLICOLOR_FORCE");
        c.args(["check", "--baseline"])
            .arg(golden("seed-sample", "before.lock"))
            .arg("--against")
            .arg(golden("seed-sample", "after.lock"));
        for (k, v) in env {
            c.env(k, v);
        }
        String::from_utf8(c.output().unwrap().stdout)
            .unwrap()
            .contains("\u{1b}[")
    };
    assert!(run(&[("FORCE_COLOR", "1")]));
    assert!(run(&[("CLICOLOR_FORCE", "1")]));
    assert!(!run(&[("FORCE_COLOR", "0")]));
    assert!(!run(&[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]));
    assert!(!run(&[]));
}

/// `check -v` shows each change's fingerprint; `ignore` appends an [[ignore]] with it,
/// keeping the file's comments, and the change is then ignored; patterns work as the
/// table's; an entry `check` would refuse is refused and nothing is written.
#[test]
fn ignore_appends_an_entry_keeping_the_file() {
    let d = tmpdir("ignore");
    let original = "# our policy\nfail_on = \"breaking\"   # the default\n\n[severity]\n# keep\n\"tool.description.changed\" = \"patch\"\n";
    fs::write(d.join("covenant.toml"), original).unwrap();
    let check = |extra: &[&str]| {
        bin()
            .current_dir(&d)
            .args(["check", "--color", "never", "--baseline"])
            .arg(golden("seed-sample", "before.lock"))
            .arg("--against")
            .arg(golden("seed-sample", "after.lock"))
            .args(extra)
            .output()
            .unwrap()
    };
    let o = check(&["-v"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let fingerprint = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("fingerprint "))
        .unwrap_or_else(|| panic!("no fingerprint in {out}"))
        .to_string();
    assert_eq!(fingerprint.len(), 32, "{out}");
    let ignored = |o: &Output| String::from_utf8_lossy(&o.stdout).contains("ignored");
    assert!(!ignored(&check(&[])));
    // `mcp-covenant ignore ARGS` in the project, which must succeed.
    let ignore = |args: &[&str]| {
        let o = bin()
            .current_dir(&d)
            .arg("ignore")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    ignore(&[
        &fingerprint,
        "--reason",
        "announced in 2.0",
        "--until",
        "2999-01-01",
    ]);
    let text = fs::read_to_string(d.join("covenant.toml")).unwrap();
    assert!(text.starts_with(original), "{text}");
    assert!(
        text.contains(&format!("[[ignore]]\nfingerprint = \"{fingerprint}\"\nreason = \"announced in 2.0\"\nuntil = \"2999-01-01\"\n")),
        "{text}"
    );
    assert!(ignored(&check(&[])), "{}", stdout_of(&check(&[])));
    // Patterns, as the table takes them.
    ignore(&[
        "--code",
        "tool.*",
        "--subject",
        "tool:legacy",
        "--reason",
        "gone",
    ]);
    // Refused before anything is written: a bad date, an entry matching everything.
    let now = fs::read_to_string(d.join("covenant.toml")).unwrap();
    for args in [
        vec![
            "ignore",
            &fingerprint,
            "--reason",
            "x",
            "--until",
            "2026-02-30",
        ],
        vec!["ignore", "--code", "*", "--reason", "x"],
        vec!["ignore", "abc", "--reason", "x"],
    ] {
        let o = bin().current_dir(&d).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(fs::read_to_string(d.join("covenant.toml")).unwrap(), now);
    }
}

/// An entry `ignore` refuses is told as the entry it would have added, never by a line
/// and column of the text it did not write (the user cannot open it), whether
/// covenant.toml exists or not.
#[test]
fn a_refused_ignore_entry_is_not_placed_in_a_file_never_written() {
    let d = tmpdir("ignore-refused");
    let bad_day = [
        "ignore",
        "--code",
        "tool.*",
        "--reason",
        "x",
        "--until",
        "2026-02-30",
    ];
    let cases: [(&[&str], &str); 4] = [
        (&["ignore", "abc", "--reason", "x"], "fingerprint `abc`"),
        (
            &["ignore", "--code", "*", "--reason", "x"],
            "matches everything",
        ),
        (&bad_day, "invalid `until` date \"2026-02-30\""),
        (
            &["ignore", "--code", "tool.nope", "--reason", "x"],
            "unknown rule id `tool.nope`",
        ),
    ];
    for existing in [Some("fail_on = \"breaking\"\n"), None] {
        let file = d.join("covenant.toml");
        match existing {
            Some(text) => fs::write(&file, text).unwrap(),
            None => {
                let _ = fs::remove_file(&file);
            }
        }
        for (args, needle) in cases {
            let o = bin().current_dir(&d).args(args).output().unwrap();
            assert_fails_cleanly(&o, needle);
            let err = stderr(&o);
            assert!(
                !err.contains("covenant.toml:"),
                "a place in an unwritten file: {err}"
            );
            assert!(
                err.contains("the [[ignore]] entry for covenant.toml"),
                "{err}"
            );
            assert_eq!(fs::read_to_string(&file).ok().as_deref(), existing);
        }
    }
}

fn stdout_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A capture still running after a second says so on a terminal (run under `script`,
/// which gives the binary a pseudo-terminal), and never with `-q` or `CI` set, nor when
/// stderr is not a terminal. The server never answers and exits when its stdin closes,
/// so each run ends at its timeout (a server that ignores end of input, such as
/// `sleep`, costs the 2 s grace after it too); the four runs wait side by side.
#[test]
fn a_slow_capture_says_so_on_a_terminal_only() {
    let d = tmpdir("slow-capture");
    let spec = crate::common::write_spec(&d, &serde_json::json!({"neverAnswer": true}));
    let server = format!("{} {}", crate::common::fixture().display(), spec.display());
    let run = |extra: &str, ci: bool, tty: bool| -> String {
        let cmd = format!(
            "{} snapshot {extra} -o /dev/null --timeout 2 -- {server}",
            env!("CARGO_BIN_EXE_mcp-covenant")
        );
        let mut c = match tty {
            true => {
                let mut c = Command::new("script");
                c.args(["-qec", &cmd, "/dev/null"]);
                c
            }
            false => {
                let mut c = Command::new("sh");
                c.args(["-c", &cmd]);
                c
            }
        };
        c.env_remove("CI");
        if ci {
            c.env("CI", "true");
        }
        let o = c
            .output()
            .expect("`script` (util-linux) runs the binary on a pseudo-terminal");
        format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o))
    };
    let notice = format!("mcp-covenant: capturing `{server}` (waiting up to 2 s");
    let cases = [
        ("", false, true),
        ("-q", false, true),
        ("", true, true),
        ("", false, false),
    ];
    let outputs: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = cases
            .iter()
            .map(|&(extra, ci, tty)| s.spawn(move || run(extra, ci, tty)))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for ((extra, ci, tty), out) in cases.iter().zip(&outputs) {
        let shown = extra.is_empty() && !ci && *tty;
        assert_eq!(
            out.contains(&notice),
            shown,
            "{extra} CI={ci} tty={tty}: {out}"
        );
        assert!(out.contains("timed out after 2 s"), "{out}");
    }
}
