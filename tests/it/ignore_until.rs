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
