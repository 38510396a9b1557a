//! `git:REF:PATH` wherever a lockfile is read: the base branch's lockfile against a
//! pull request's, in a temporary repository; and every way it can go wrong is exit 2
//! with one `error:` line naming `git:REF:PATH`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::*;

fn golden(case: &str, file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(case)
        .join(file)
}

/// `main` holds seed-sample's before.lock as mcp-covenant.lock; branch `pr` replaces
/// it with after.lock (a break regenerated in the same commit) and is checked out.
fn repo(name: &str) -> PathBuf {
    let d = tmpdir(name);
    git_init(&d);
    fs::copy(
        golden("seed-sample", "before.lock"),
        d.join("mcp-covenant.lock"),
    )
    .unwrap();
    fs::create_dir(d.join("locks")).unwrap();
    fs::write(d.join("locks/README"), "lockfiles\n").unwrap();
    git_commit(&d, "baseline");
    git(&d, &["checkout", "-q", "-b", "pr"]);
    fs::copy(
        golden("seed-sample", "after.lock"),
        d.join("mcp-covenant.lock"),
    )
    .unwrap();
    git_commit(&d, "break the interface and regenerate the lockfile");
    d
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_base_branch_lockfile_catches_a_break_the_pr_regenerated() {
    let d = repo("pr");
    // The PR's own lockfile agrees with itself: the hole.
    let o = run(
        &d,
        &[
            "check",
            "--baseline",
            "mcp-covenant.lock",
            "--against",
            "mcp-covenant.lock",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Against the base branch's lockfile, the break is found, as with the files.
    let o = run(
        &d,
        &[
            "check",
            "--baseline",
            "git:main:mcp-covenant.lock",
            "--against",
            "mcp-covenant.lock",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        fs::read_to_string(golden("seed-sample", "expected.txt")).unwrap()
    );
    // Both sides from git, with lines (SARIF anchors at PATH, not git:...).
    let o = run(
        &d,
        &[
            "check",
            "--baseline",
            "git:main:mcp-covenant.lock",
            "--against",
            "git:HEAD:mcp-covenant.lock",
            "--format",
            "sarif",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The golden after.lock is hand-written (its `required` unsorted): the warning names
    // the revision it was read from.
    assert_eq!(
        stderr_unhinted(&o),
        "warning: git:HEAD:mcp-covenant.lock is not in canonical form, so some report lines point at an element rather than the value inside it\n",
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "mcp-covenant.lock",
            "{r}"
        );
    }
    // A revision expression and a path relative to the current directory.
    let o = run(
        &d.join("locks"),
        &[
            "check",
            "--baseline",
            "git:HEAD~1:./../mcp-covenant.lock",
            "--against",
            "../mcp-covenant.lock",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // lint --from reads at a revision too.
    let o = run(
        &d,
        &[
            "lint",
            "--from",
            "git:main:mcp-covenant.lock",
            "--format",
            "github",
        ],
    );
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("file=mcp-covenant.lock"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn every_failure_is_one_error_line_naming_the_source() {
    let d = repo("errors");
    let check = |dir: &Path, baseline: &str| {
        run(
            dir,
            &[
                "check",
                "--baseline",
                baseline,
                "--against",
                "mcp-covenant.lock",
            ],
        )
    };
    assert_fails_cleanly(
        &check(&d, "git:nope:mcp-covenant.lock"),
        "git:nope:mcp-covenant.lock: `nope` is not a known revision",
    );
    assert_fails_cleanly(
        &check(&d, "git:main:missing.lock"),
        "git:main:missing.lock: no file `missing.lock` at revision `main`",
    );
    assert_fails_cleanly(
        &check(&d, "git:main:locks"),
        "git:main:locks: `locks` at revision `main` is a tree, not a file",
    );
    assert_fails_cleanly(
        &check(&d, "git:main:locks/README"),
        "git:main:locks/README:1:1:",
    );
    assert_fails_cleanly(&check(&d, "git:main"), "expected git:REF:PATH");
    // A ref that looks like an option never reaches git as one.
    assert_fails_cleanly(
        &check(&d, "git:--output=/tmp/x:mcp-covenant.lock"),
        "a revision cannot start with `-`",
    );
    // Outside any repository.
    let outside = tmpdir("not-a-repo");
    fs::copy(
        d.join("mcp-covenant.lock"),
        outside.join("mcp-covenant.lock"),
    )
    .unwrap();
    let o = bin()
        .current_dir(&outside)
        .env("GIT_CEILING_DIRECTORIES", outside.parent().unwrap())
        .args([
            "check",
            "--baseline",
            "git:main:mcp-covenant.lock",
            "--against",
            "mcp-covenant.lock",
        ])
        .output()
        .unwrap();
    assert_fails_cleanly(
        &o,
        "git:main:mcp-covenant.lock: not inside a git repository",
    );
    // No git at all.
    let o = bin()
        .current_dir(&d)
        .env("PATH", outside.join("no-bin"))
        .args(["lint", "--from", "git:main:mcp-covenant.lock"])
        .output()
        .unwrap();
    assert_fails_cleanly(
        &o,
        "git:main:mcp-covenant.lock: cannot run `git`: it is not installed",
    );
    // A file whose name starts with git: is reached as ./git:...
    fs::copy(d.join("mcp-covenant.lock"), d.join("git:odd")).unwrap();
    let o = check(&d, "./git:odd");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Reading at a revision runs nothing the repository configures: no fsmonitor hook, no
/// textconv filter, no pager, no hook.
#[test]
fn reading_at_a_revision_executes_nothing_from_the_repository() {
    let d = repo("no-exec");
    let marker = d.join("executed");
    let evil = d.join("evil.sh");
    fs::write(
        &evil,
        format!(
            "#!/bin/sh\ntouch '{}'\ncat \"$@\" 2>/dev/null\n",
            marker.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&evil, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let evil = evil.display().to_string();
    for (key, value) in [
        ("core.fsmonitor", evil.as_str()),
        ("core.pager", evil.as_str()),
        ("core.hooksPath", d.to_str().unwrap()),
        ("diff.evil.textconv", evil.as_str()),
        ("filter.evil.smudge", evil.as_str()),
    ] {
        git(&d, &["config", key, value]);
    }
    fs::write(d.join(".gitattributes"), "*.lock diff=evil filter=evil\n").unwrap();
    fs::copy(d.join("evil.sh"), d.join("post-checkout")).unwrap();
    git_commit(&d, "attributes");
    // The trap is armed: plain git commands do run it.
    let _ = std::process::Command::new("git")
        .current_dir(&d)
        .args(["status"])
        .output();
    assert!(marker.exists(), "fsmonitor should have run for git status");
    fs::remove_file(&marker).unwrap();
    let o = run(
        &d,
        &[
            "check",
            "--baseline",
            "git:main:mcp-covenant.lock",
            "--against",
            "git:HEAD:mcp-covenant.lock",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        !marker.exists(),
        "mcp-covenant made git run repository-configured code"
    );
}

/// `--baseline-rev REV`: the lockfile against itself at REV, no server.
#[test]
fn baseline_rev_compares_the_lockfile_with_itself_at_a_revision() {
    let d = repo("baseline-rev");
    let o = run(&d, &["check", "--baseline-rev", "main"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        fs::read_to_string(golden("seed-sample", "expected.txt")).unwrap()
    );
    // With --baseline naming the lockfile, from a subdirectory.
    let o = run(
        &d.join("locks"),
        &[
            "check",
            "--baseline-rev",
            "main",
            "--baseline",
            "../mcp-covenant.lock",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // A lockfile the revision does not have is new: everything in it is added.
    fs::copy(d.join("mcp-covenant.lock"), d.join("locks/new.lock")).unwrap();
    let o = run(
        &d,
        &[
            "check",
            "--baseline-rev",
            "main",
            "--baseline",
            "locks/new.lock",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("locks/new.lock is not in revision main: a new lockfile"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("+ tool:newtool — new tool"),
        "{}",
        stdout(&o)
    );
    for (rev, needle) in [
        ("nope", "`nope` is not a known revision"),
        ("-x", "a revision cannot start with `-`"),
        ("a:b", "is not a revision"),
    ] {
        let flag = format!("--baseline-rev={rev}");
        assert_fails_cleanly(&run(&d, &["check", &flag]), needle);
    }
    let abs = d.join("mcp-covenant.lock");
    assert_fails_cleanly(
        &run(
            &d,
            &[
                "check",
                "--baseline-rev",
                "main",
                "--baseline",
                abs.to_str().unwrap(),
            ],
        ),
        "must be a relative path",
    );
}

/// A partial clone (`--filter=blob:none`) whose remote is gone: the base revision's
/// lockfile is in the tree but its object is not in the clone. That is exit 2, never
/// "no lockfile at the base, every element is new" (exit 0), and git never reaches for
/// the remote (no lazy fetch: nothing runs, nothing hangs).
#[test]
fn a_partial_clone_missing_the_baseline_object_fails_closed() {
    let origin = repo("partial-origin");
    git(&origin, &["config", "uploadpack.allowFilter", "true"]);
    let d = tmpdir("partial");
    let url = format!("file://{}", origin.display());
    git(
        &d,
        &[
            "clone",
            "-q",
            "--filter=blob:none",
            "--branch",
            "pr",
            &url,
            "work",
        ],
    );
    let work = d.join("work");
    // The base branch's commit and trees, but not its blobs.
    git(
        &work,
        &["fetch", "-q", "--filter=blob:none", "origin", "main:main"],
    );
    // The remote that would serve the missing blob is gone.
    let gone = d.join("gone");
    fs::rename(&origin, &gone).unwrap();
    for args in [
        &["check", "--baseline-rev", "main", "--format", "json"][..],
        &[
            "check",
            "--baseline",
            "git:main:mcp-covenant.lock",
            "--against",
            "mcp-covenant.lock",
        ][..],
    ] {
        let o = run(&work, args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("git:main:")
                && err.contains("mcp-covenant.lock")
                && err.contains("not in this clone"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("every element is new"), "{err}");
        assert!(
            !err.contains("Could not read from remote"),
            "no lazy fetch: {err}"
        );
    }
    fs::rename(&gone, &origin).unwrap();
}

/// A git that never finishes (here a stand-in that sleeps) is stopped at the deadline:
/// exit 2 with one line, not a hung check.
#[test]
fn a_git_that_hangs_is_stopped_at_the_deadline() {
    let d = repo("hang");
    let fake = tmpdir("hang-bin");
    let git_path = fake.join("git");
    fs::write(&git_path, "#!/bin/sh\nexec sleep 60\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&git_path, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let started = std::time::Instant::now();
    let o = bin()
        .current_dir(&d)
        .env("PATH", path)
        .env("MCP_COVENANT_GIT_TIMEOUT", "1")
        .args([
            "check",
            "--baseline",
            "git:main:mcp-covenant.lock",
            "--against",
            "mcp-covenant.lock",
        ])
        .output()
        .unwrap();
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    assert_fails_cleanly(&o, "did not finish within 1 s");
}

/// A pull request cannot loosen its own gate: with `--baseline-rev`, its covenant.toml
/// is held to the one at the base revision. An `[[ignore]]` or a lowered severity the
/// base does not have is named in a warning and not applied (exit 1, the break
/// reported); once the base has the same entry, it applies.
#[test]
fn a_pull_request_cannot_loosen_its_own_gate() {
    let d = repo("loosen");
    let check = |d: &Path| run(d, &["check", "--baseline-rev", "main"]);
    assert_eq!(check(&d).status.code(), Some(1));
    let loose = "[severity]\n\"tool.removed\" = \"minor\"\n\n[[ignore]]\ncode = \"schema.*\"\nreason = \"we know\"\n";
    fs::write(d.join("covenant.toml"), loose).unwrap();
    git_commit(&d, "loosen the gate in the same pull request");
    let o = check(&d);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("lowers `tool.removed` from breaking to minor"),
        "{err}"
    );
    assert!(err.contains("adds an [[ignore]] (we know)"), "{err}");
    assert!(err.contains("main's stricter policy"), "{err}");
    let out = stdout(&o);
    assert!(out.contains("x tool:legacy — tool was removed"), "{out}");
    assert!(out.contains("[schema.property.required.added]"), "{out}");
    // The same policy on the base branch: now it applies.
    git(&d, &["checkout", "-q", "main"]);
    fs::write(d.join("covenant.toml"), loose).unwrap();
    git_commit(&d, "the policy, merged");
    git(&d, &["checkout", "-q", "pr"]);
    let o = check(&d);
    let err = stderr(&o);
    assert!(!err.contains("stricter policy"), "{err}");
    assert!(
        !stdout(&o).contains("[schema.property.required.added]"),
        "{}",
        stdout(&o)
    );
}

/// Whoever sets the environment (an earlier step of the job, a server that wrote to
/// `$GITHUB_ENV`) cannot choose what a revision's lockfile reads as: git gets no `GIT_*`
/// variable (`GIT_DIR`, `GIT_OBJECT_DIRECTORY`, `GIT_CONFIG_*`), and `refs/replace/*`
/// swaps no blob.
#[test]
fn the_environment_and_replace_refs_cannot_redirect_git() {
    let d = repo("redirect");
    // A decoy repository whose `main` holds the pull request's lockfile: read there,
    // the break would pass.
    let decoy = tmpdir("redirect-decoy");
    git_init(&decoy);
    fs::copy(
        golden("seed-sample", "after.lock"),
        decoy.join("mcp-covenant.lock"),
    )
    .unwrap();
    git_commit(&decoy, "decoy");
    let args = [
        "check",
        "--baseline",
        "git:main:mcp-covenant.lock",
        "--against",
        "mcp-covenant.lock",
    ];
    let decoy_git = decoy.join(".git").display().to_string();
    for (name, value) in [("GIT_DIR", decoy_git.as_str()), ("GIT_CONFIG_COUNT", "1")] {
        let o = bin()
            .current_dir(&d)
            .env(name, value)
            .env("GIT_CONFIG_KEY_0", "core.bare")
            .env("GIT_CONFIG_VALUE_0", "nonsense")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
    }
    // A replace ref that swaps the base's blob for the pull request's.
    let base = git(&d, &["rev-parse", "main:mcp-covenant.lock"]);
    let pr = git(&d, &["rev-parse", "HEAD:mcp-covenant.lock"]);
    git(&d, &["replace", base.trim(), pr.trim()]);
    assert_eq!(
        git(&d, &["cat-file", "blob", "main:mcp-covenant.lock"]),
        fs::read_to_string(d.join("mcp-covenant.lock")).unwrap(),
        "the replace ref is in effect for plain git"
    );
    let o = run(&d, &args);
    assert_eq!(o.status.code(), Some(1), "replace ref: {}", stderr(&o));
}

/// The base revision's [[server]] entries hold, whatever this change does to
/// covenant.toml: a server the base configures and this change drops (its entry
/// deleted, or covenant.toml deleted) is reported whole as removed, and a stand-in
/// mcp-covenant.lock does not replace it.
#[test]
fn the_base_servers_hold_when_covenant_toml_drops_them() {
    let config = "[[server]]\nname = \"orders\"\ncommand = [\"orders-server\"]\nlockfile = \"locks/orders.lock\"\n";
    for (case, current) in [
        ("no-servers", Some("fail_on = \"breaking\"\n")),
        ("gone", None),
    ] {
        let d = tmpdir(&format!("base-servers-{case}"));
        git_init(&d);
        fs::create_dir(d.join("locks")).unwrap();
        fs::copy(
            golden("seed-sample", "before.lock"),
            d.join("locks/orders.lock"),
        )
        .unwrap();
        fs::write(d.join("covenant.toml"), config).unwrap();
        git_commit(&d, "one configured server");
        git(&d, &["checkout", "-q", "-b", "pr"]);
        match current {
            Some(text) => fs::write(d.join("covenant.toml"), text).unwrap(),
            None => fs::remove_file(d.join("covenant.toml")).unwrap(),
        }
        fs::remove_file(d.join("locks/orders.lock")).unwrap();
        // A stand-in: any lockfile at the default path.
        fs::copy(
            golden("seed-sample", "after.lock"),
            d.join("mcp-covenant.lock"),
        )
        .unwrap();
        git_commit(&d, "drop the server, commit a stand-in");
        let o = run(&d, &["check", "--baseline-rev", "main"]);
        let (out, err) = (stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(1), "{case}: {out}{err}");
        assert!(
            err.contains("server orders is in git:main:./covenant.toml and not in"),
            "{case}: {err}"
        );
        let at = out
            .find("== server orders (locks/orders.lock)")
            .unwrap_or_else(|| panic!("{case}: {out}"));
        assert!(
            out[at..].contains("x tool:legacy — tool was removed"),
            "{case}: {out}"
        );
        // The stand-in is checked too, as a new lockfile.
        assert!(out.contains("(mcp-covenant.lock)"), "{case}: {out}");
        // JSON says the same.
        let o = run(&d, &["check", "--baseline-rev", "main", "--format", "json"]);
        assert_eq!(o.status.code(), Some(1), "{case}: {}", stderr(&o));
    }
}

/// A server whose lockfile moved, in a covenant.toml with one entry, is compared with
/// the lockfile the base configured for that server.
#[test]
fn a_single_server_whose_lockfile_moved_is_compared_with_its_base_lockfile() {
    let d = tmpdir("base-moved-single");
    git_init(&d);
    fs::create_dir(d.join("locks")).unwrap();
    fs::copy(
        golden("seed-sample", "before.lock"),
        d.join("locks/orders.lock"),
    )
    .unwrap();
    let config = "[[server]]\nname = \"orders\"\ncommand = [\"orders-server\"]\nlockfile = \"locks/orders.lock\"\n";
    fs::write(d.join("covenant.toml"), config).unwrap();
    git_commit(&d, "one configured server");
    git(&d, &["checkout", "-q", "-b", "pr"]);
    fs::write(
        d.join("covenant.toml"),
        config.replace("locks/orders.lock", "elsewhere.lock"),
    )
    .unwrap();
    fs::remove_file(d.join("locks/orders.lock")).unwrap();
    fs::copy(
        golden("seed-sample", "after.lock"),
        d.join("elsewhere.lock"),
    )
    .unwrap();
    git_commit(&d, "move the lockfile and break the server");
    let o = run(&d, &["check", "--baseline-rev", "main"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("its lockfile was locks/orders.lock at main"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("x tool:legacy — tool was removed"));
}

/// A covenant.toml in a subdirectory, deleted by this change: the check run there
/// (which now finds none, or a parent's) is held to the one the base had there.
#[test]
fn a_deleted_nearer_covenant_toml_is_still_the_base() {
    let d = tmpdir("base-nearer");
    git_init(&d);
    let pkg = d.join("packages/orders");
    fs::create_dir_all(&pkg).unwrap();
    fs::copy(
        golden("seed-sample", "before.lock"),
        pkg.join("orders.lock"),
    )
    .unwrap();
    fs::write(
        pkg.join("covenant.toml"),
        "[[server]]\nname = \"orders\"\ncommand = [\"x\"]\nlockfile = \"orders.lock\"\n",
    )
    .unwrap();
    fs::write(d.join("covenant.toml"), "fail_on = \"breaking\"\n").unwrap();
    git_commit(&d, "a package with its covenant.toml");
    git(&d, &["checkout", "-q", "-b", "pr"]);
    fs::remove_file(pkg.join("covenant.toml")).unwrap();
    fs::remove_file(pkg.join("orders.lock")).unwrap();
    fs::copy(
        golden("seed-sample", "after.lock"),
        d.join("mcp-covenant.lock"),
    )
    .unwrap();
    git_commit(&d, "drop the package's covenant.toml");
    let o = run(&pkg, &["check", "--baseline-rev", "main"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("x tool:legacy — tool was removed"),
        "{}",
        stdout(&o)
    );
}

/// An `[[ignore]]` that matches no change is reported (as ruff's RUF100 does for a
/// `noqa` that suppresses nothing): a warning naming the entry and its line.
#[test]
fn an_ignore_that_matches_no_change_is_reported() {
    let d = repo("unused-ignore");
    let config = "[[ignore]]\ncode = \"tool.removed\"\nsubject = \"tool:legacy\"\nreason = \"retired\"\n\n[[ignore]]\ncode = \"prompt.removed\"\nreason = \"stale\"\n";
    fs::write(d.join("covenant.toml"), config).unwrap();
    let o = run(
        &d,
        &[
            "check",
            "--baseline",
            "git:main:mcp-covenant.lock",
            "--against",
            "mcp-covenant.lock",
        ],
    );
    let err = stderr(&o);
    assert!(
        err.contains("warning: covenant.toml:6:1: this [[ignore]] (stale) matches no change"),
        "{err}"
    );
    assert!(!err.contains("(retired) matches no change"), "{err}");
}
