//! The GitHub Action's install step (action/install.sh) against a release served from a
//! local HTTP server (MCP_COVENANT_RELEASE_URL), with the variables the runner sets
//! (RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, RUNNER_TEMP, GITHUB_PATH), all in
//! directories whose names have spaces: a verified install, the cache reused with no
//! download, a checksum mismatch that installs and runs nothing, a missing release, and a
//! build from source only when asked.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use crate::common::{stderr, stdout, tmpdir, HttpServer};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn target() -> String {
    format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
}

fn runner_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "X64",
        "aarch64" => "ARM64",
        other => panic!("no release for {other}"),
    }
}

fn archive_name() -> String {
    format!("mcp-covenant-{VERSION}-{}.tar.gz", target())
}

/// The release directory's URL on `server`.
fn release_url(server: &HttpServer) -> String {
    format!("{}/download/v{VERSION}", server.url())
}

/// A runner's directories (names with spaces) and a release directory served over HTTP.
struct Runner {
    dir: PathBuf,
    release: PathBuf,
    server: HttpServer,
}

impl Runner {
    fn new(name: &str) -> Runner {
        let dist = repo().join("dist");
        assert!(
            dist.join(archive_name()).is_file(),
            "dist/{} missing: run scripts/dist.sh (scripts/test.sh does)",
            archive_name()
        );
        let dir = tmpdir(&format!("install-{name}"));
        let served = dir.join("served files");
        let release = served.join(format!("download/v{VERSION}"));
        fs::create_dir_all(&release).unwrap();
        for f in [archive_name().as_str(), "SHA256SUMS"] {
            fs::copy(dist.join(f), release.join(f)).unwrap();
        }
        for d in ["tool cache", "runner temp"] {
            fs::create_dir_all(dir.join(d)).unwrap();
        }
        let server = HttpServer::files(served);
        Runner {
            dir,
            release,
            server,
        }
    }

    fn install_dir(&self) -> PathBuf {
        self.dir
            .join("tool cache/mcp-covenant")
            .join(VERSION)
            .join(runner_arch().to_lowercase())
    }

    fn github_path(&self) -> PathBuf {
        self.dir.join("github path")
    }

    fn run(&self, env: &[(&str, &str)]) -> Output {
        let mut c = Command::new("bash");
        c.arg(repo().join("action/install.sh"))
            .current_dir(&self.dir)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", runner_arch())
            .env("RUNNER_TOOL_CACHE", self.dir.join("tool cache"))
            .env("RUNNER_TEMP", self.dir.join("runner temp"))
            .env("GITHUB_PATH", self.github_path())
            .env("INPUT_VERSION", VERSION)
            .env("MCP_COVENANT_RELEASE_URL", release_url(&self.server))
            .env("ACTION_PATH", repo())
            .env_remove("MCP_COVENANT_INSTALL_DIR")
            .env_remove("INPUT_BUILD_FROM_SOURCE");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// Nothing installed, and nothing left in the runner's temp directory.
    fn assert_nothing_installed(&self) {
        let bin = self.install_dir().join("mcp-covenant");
        assert!(!bin.exists(), "{} exists", bin.display());
        assert!(!self.github_path().exists(), "GITHUB_PATH written");
        let left: Vec<_> = fs::read_dir(self.dir.join("runner temp"))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "temp files left: {left:?}");
    }
}

fn both(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

fn sha256(path: &Path) -> String {
    let o = Command::new("sha256sum").arg(path).output().unwrap();
    stdout(&o).split_whitespace().next().unwrap().to_string()
}

#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh) and curl"]
fn installs_a_verified_release_and_reuses_the_cache() {
    let r = Runner::new("ok");
    let started = Instant::now();
    let o = r.run(&[]);
    let cold = started.elapsed();
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert_eq!(r.server.requests(), 2, "SHA256SUMS and the archive");
    let bin = r.install_dir().join("mcp-covenant");
    let v = Command::new(&bin).arg("--version").output().unwrap();
    assert!(
        stdout(&v).starts_with(&format!("mcp-covenant {VERSION} (")),
        "{}",
        stdout(&v)
    );
    let path_line = format!("{}\n", r.install_dir().display());
    assert_eq!(fs::read_to_string(r.github_path()).unwrap(), path_line);

    // The second job on this runner: no download, the same directory on PATH.
    let started = Instant::now();
    let o = r.run(&[]);
    let cached = started.elapsed();
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        stdout(&o).contains("the archive in")
            && stdout(&o).contains("matches SHA256SUMS; no download"),
        "{}",
        both(&o)
    );
    assert_eq!(
        r.server.requests(),
        3,
        "a cached install downloads SHA256SUMS only, to verify the cached archive"
    );
    assert_eq!(
        fs::read_to_string(r.github_path()).unwrap(),
        path_line.repeat(2)
    );
    println!(
        "action install: cold {:.3} s, cached {:.3} s",
        cold.as_secs_f64(),
        cached.as_secs_f64()
    );

    // MCP_COVENANT_INSTALL_DIR, relative to the working directory, with a space.
    let o = r.run(&[("MCP_COVENANT_INSTALL_DIR", "my tools/bin")]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(r.dir.join("my tools/bin/mcp-covenant").is_file());
    assert!(fs::read_to_string(r.github_path())
        .unwrap()
        .ends_with(&format!("{}\n", r.dir.join("my tools/bin").display())));
    // A "v" in front of the version is accepted.
    let o = r.run(&[("INPUT_VERSION", &format!("v{VERSION}"))]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
}

#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh) and curl"]
fn a_checksum_mismatch_installs_and_runs_nothing() {
    let r = Runner::new("mismatch");
    // The archive is replaced by one whose binary would leave a mark if it ever ran;
    // SHA256SUMS still names the real archive.
    let evil = r.dir.join("evil");
    let inner = evil.join(format!("mcp-covenant-{VERSION}-{}", target()));
    fs::create_dir_all(&inner).unwrap();
    let mark = r.dir.join("it ran");
    fs::write(
        inner.join("mcp-covenant"),
        format!("#!/bin/sh\ntouch '{}'\n", mark.display()),
    )
    .unwrap();
    let o = Command::new("chmod")
        .arg("755")
        .arg(inner.join("mcp-covenant"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let archive = r.release.join(archive_name());
    let expected = sha256(&archive);
    let o = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(&evil)
        .arg(inner.file_name().unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", both(&o));
    let actual = sha256(&archive);
    let o = r.run(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("checksum mismatch"), "{err}");
    assert!(err.contains(&expected) && err.contains(&actual), "{err}");
    r.assert_nothing_installed();
    assert!(!mark.exists(), "the unverified binary ran");

    // A corrupted SHA256SUMS line: the same.
    fs::copy(repo().join("dist").join(archive_name()), &archive).unwrap();
    let zeros = "0".repeat(64);
    fs::write(
        r.release.join("SHA256SUMS"),
        format!("{zeros}  {}\n", archive_name()),
    )
    .unwrap();
    let o = r.run(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(stderr(&o).contains(&zeros), "{}", stderr(&o));
    r.assert_nothing_installed();
}

/// A verified archive whose binary is a symlink (to anything) installs nothing.
#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh) and curl"]
fn an_archive_without_a_regular_binary_installs_nothing() {
    let r = Runner::new("symlink");
    let work = r.dir.join("work");
    let inner = work.join(format!("mcp-covenant-{VERSION}-{}", target()));
    fs::create_dir_all(&inner).unwrap();
    std::os::unix::fs::symlink("/bin/sh", inner.join("mcp-covenant")).unwrap();
    let archive = r.release.join(archive_name());
    let o = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(&work)
        .arg(inner.file_name().unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", both(&o));
    fs::write(
        r.release.join("SHA256SUMS"),
        format!("{}  {}\n", sha256(&archive), archive_name()),
    )
    .unwrap();
    let o = r.run(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(stderr(&o).contains("no regular file"), "{}", stderr(&o));
    r.assert_nothing_installed();
}

#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh) and curl"]
fn a_missing_release_is_an_error_unless_building_is_asked_for() {
    let r = Runner::new("missing");
    // No such release: HTTP 404.
    let url = release_url(&r.server).replace(VERSION, "9.9.9");
    let o = r.run(&[
        ("INPUT_VERSION", "9.9.9"),
        ("MCP_COVENANT_RELEASE_URL", &url),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("HTTP 404"), "{err}");
    assert!(err.contains("build-from-source: true"), "{err}");
    r.assert_nothing_installed();
    // The release exists but has no archive for this runner.
    let o = r.run(&[("RUNNER_OS", "macOS")]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stderr(&o).contains("aarch64-apple-darwin") || stderr(&o).contains("x86_64-apple-darwin"),
        "{}",
        stderr(&o)
    );
    // Inputs that are not versions never reach a URL or a path.
    for bad in ["", "latest", "1.0.0/../../x", "1.0.0; touch x"] {
        let o = r.run(&[("INPUT_VERSION", bad)]);
        assert_eq!(o.status.code(), Some(1), "{bad}: {}", both(&o));
        assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    }
    r.assert_nothing_installed();
    let before = r.server.requests();

    // build-from-source: true falls back to cargo (a stand-in here, which records how it
    // was called and installs the real binary where `cargo install --root` would).
    let fake = r.dir.join("fake cargo");
    fs::create_dir_all(&fake).unwrap();
    let log = r.dir.join("cargo args");
    let real = repo().join("dist").join(archive_name());
    fs::write(
        fake.join("cargo"),
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{log}'\nroot=$4\nmkdir -p \"$root/bin\"\n\
             tar -xzf '{real}' -C \"$root/bin\" --strip-components=1 mcp-covenant-{VERSION}-{target}/mcp-covenant\n",
            log = log.display(),
            real = real.display(),
            target = target()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(fake.join("cargo"))
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    fs::remove_file(r.release.join("SHA256SUMS")).unwrap();
    let o = r.run(&[("INPUT_BUILD_FROM_SOURCE", "true"), ("PATH", &path)]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let args = fs::read_to_string(&log).unwrap();
    assert!(
        args.starts_with("install\n--locked\n--root\n"),
        "cargo install --locked --root ...: {args}"
    );
    assert!(
        args.ends_with(&format!("--path\n{}\n", repo().display())),
        "the action's own source for its own version: {args}"
    );
    assert!(r.install_dir().join("mcp-covenant").is_file());
    assert!(r.server.requests() > before);
}
