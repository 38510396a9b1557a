//! `[[ignore]] until = "YYYY-MM-DD"`: a live entry applies, an expired one does not,
//! and `check` names the expired one in a warning.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;

fn golden(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden/seed-sample")
        .join(file)
}

fn check(config: &Path) -> std::process::Output {
    bin()
        .arg("--config")
        .arg(config)
        .args(["check", "--verbose", "--baseline"])
        .arg(golden("before.lock"))
        .arg("--against")
        .arg(golden("after.lock"))
        .output()
        .unwrap()
}

/// `check --prune-ignores` with `config`, `baseline` against the sample's after.lock.
fn prune(config: &Path, baseline: &Path) -> std::process::Output {
    bin()
        .arg("--config")
        .arg(config)
        .args(["check", "--prune-ignores", "--baseline"])
        .arg(baseline)
        .arg("--against")
        .arg(golden("after.lock"))
        .output()
        .unwrap()
}

#[test]
fn an_expired_ignore_stops_applying_and_is_named() {
    let d = tmpdir("until");
    let config = d.join("covenant.toml");
    fs::write(
        &config,
        r#"[[ignore]]
subject = "tool:legacy"
reason = "removal agreed with the two clients"
until = "2000-01-31"

[[ignore]]
subject = "tool:search"
reason = "limit is filled in by the SDK"
until = 2999-12-31
"#,
    )
    .unwrap();
    let o = check(&config);
    // tool:legacy's removal is back (breaking: exit 1); tool:search's stays ignored.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("x tool:legacy — tool was removed"), "{out}");
    assert!(!out.contains("x tool:search"), "{out}");
    assert!(
        out.contains("limit is filled in by the SDK"),
        "--verbose lists it: {out}"
    );
    let err = stderr_unhinted(&o);
    assert_eq!(
        err.trim_end(),
        format!(
            "warning: {}:1:1: [[ignore]] expired on 2000-01-31 and no longer applies (its reason: removal agreed with the two clients)",
            config.display()
        )
    );
    // The same entries without the expiry: nothing breaking is left.
    fs::write(
        &config,
        fs::read_to_string(&config)
            .unwrap()
            .replace("until = \"2000-01-31\"\n", ""),
    )
    .unwrap();
    let o = check(&config);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn an_invalid_until_is_exit_2_with_its_place() {
    let d = tmpdir("until-bad");
    let config = d.join("covenant.toml");
    for (value, col) in [
        ("\"2026-02-30\"", 9),
        ("\"next year\"", 9),
        ("20260101", 9),
        ("2026-01-01T10:00:00Z", 9),
    ] {
        fs::write(
            &config,
            format!("[[ignore]]\nsubject = \"tool:x\"\nreason = \"r\"\nuntil = {value}\n"),
        )
        .unwrap();
        assert_fails_cleanly(
            &check(&config),
            &format!("{}:4:{col}: invalid `until` date", config.display()),
        );
    }
}

/// `check --prune-ignores` removes the `[[ignore]]` entries that set nothing aside: one
/// that matches no change (stale) and one whose `until` has passed (the removal was
/// agreed), each named with its line; the used entry and the file's comments stay, a
/// second run changes nothing, and a comparison that could not be made prunes nothing.
#[test]
fn prune_ignores_removes_the_entries_that_match_nothing_and_keeps_the_rest() {
    let d = tmpdir("until-prune");
    let config = d.join("covenant.toml");
    let text = r#"# Our gate.
fail_on = "breaking"

# The SDK fills limit in.
[[ignore]]
subject = "tool:search"
reason = "limit is filled in by the SDK"

[[ignore]]
subject = "tool:gone"
reason = "stale"

[[ignore]]
subject = "tool:legacy"
reason = "removal agreed"
until = "2000-01-31"

# The end.
"#;
    fs::write(&config, text).unwrap();
    let prune = |baseline: &Path| prune(&config, baseline);
    // A comparison that cannot be made (exit 2) prunes nothing.
    let o = prune(&d.join("missing.lock"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&config).unwrap(), text);

    let o = prune(&golden("before.lock"));
    // tool:legacy's removal is reported again (its entry expired): exit 1.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr_unhinted(&o);
    let name = config.display();
    assert!(
        err.contains(&format!(
            "warning: {name}:9:1: removed this [[ignore]] (stale): it matches no change"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "warning: {name}:13:1: removed this [[ignore]] (removal agreed): it expired on 2000-01-31"
        )),
        "{err}"
    );
    assert!(!err.contains("matches no change; remove it"), "{err}");
    let pruned = fs::read_to_string(&config).unwrap();
    assert_eq!(
        pruned,
        r#"# Our gate.
fail_on = "breaking"

# The SDK fills limit in.
[[ignore]]
subject = "tool:search"
reason = "limit is filled in by the SDK"

# The end.
"#
    );
    // Nothing is left to prune.
    let o = prune(&golden("before.lock"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("removed this"), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&config).unwrap(), pruned);
}

/// `--prune-ignores` needs every server's comparison: with `--server` it is refused.
#[test]
fn prune_ignores_is_refused_with_server() {
    let d = tmpdir("until-prune-server");
    let config = d.join("covenant.toml");
    fs::write(
        &config,
        "[[server]]\nname = \"a\"\ncommand = [\"x\"]\nlockfile = \"a.lock\"\n\n[[server]]\nname = \"b\"\ncommand = [\"x\"]\nlockfile = \"b.lock\"\n",
    )
    .unwrap();
    let o = bin()
        .arg("--config")
        .arg(&config)
        .args(["check", "--prune-ignores", "--server", "a"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr_unhinted(&o);
    // The command line's own refusal (clap's, as for every conflicting pair): one
    // `error:` line naming both, then the usage.
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: "), "{err}");
    assert!(
        first.contains("--prune-ignores") && first.contains("--server"),
        "{err}"
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");
}

/// An inline `ignore = [...]` array: the removed entries' comments go with them, the
/// kept one's stays (toml_edit keeps a comment after a comma as the next element's).
#[test]
fn prune_ignores_in_an_inline_array_keeps_the_kept_entrys_comment() {
    let d = tmpdir("until-prune-inline");
    let config = d.join("covenant.toml");
    fs::write(
        &config,
        "ignore = [\n  { subject = \"tool:gone\", reason = \"stale\" }, # stale one\n  { subject = \"tool:search\", reason = \"sdk\" }, # used\n  { subject = \"tool:legacy\", reason = \"old\", until = \"2000-01-01\" }, # expired\n]\n",
    )
    .unwrap();
    let o = prune(&config, &golden("before.lock"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "ignore = [\n  { subject = \"tool:search\", reason = \"sdk\" }, # used\n]\n"
    );
}

/// With [[server]] entries, a comparison of the command line's lockfiles is not all of
/// them: an [[ignore]] may be for a server it did not compare, so nothing is removed
/// (or called unused).
#[test]
fn prune_ignores_removes_nothing_when_a_configured_server_was_not_compared() {
    let d = tmpdir("until-prune-servers");
    let config = d.join("covenant.toml");
    let text = "[[server]]\nname = \"a\"\ncommand = [\"x\"]\nlockfile = \"a.lock\"\n\n[[server]]\nname = \"b\"\ncommand = [\"x\"]\nlockfile = \"b.lock\"\n\n[[ignore]]\nsubject = \"tool:gone\"\nreason = \"b's\"\n";
    fs::write(&config, text).unwrap();
    let o = prune(&config, &golden("before.lock"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("--prune-ignores removed nothing"), "{err}");
    assert!(!err.contains("matches no change"), "{err}");
    assert_eq!(fs::read_to_string(&config).unwrap(), text);
}
