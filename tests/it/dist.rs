//! Distribution: `--version`, one version in every manifest, and the artifacts that
//! scripts/dist.sh writes into dist/ (scripts/test.sh runs it before the tests): the
//! release archive against SHA256SUMS, the npm tarballs installed offline and the Node
//! shim's pass-through, the wheel installed with no index, and the Dockerfile's inputs.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use crate::common::*;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn json(path: &str) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run(c: &mut Command) -> Output {
    c.output()
        .unwrap_or_else(|e| panic!("cannot run {c:?}: {e}"))
}

fn both(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

/// dist/, as scripts/dist.sh leaves it.
fn dist() -> PathBuf {
    let d = repo().join("dist");
    assert!(
        d.join("SHA256SUMS").is_file(),
        "{}/SHA256SUMS missing: run scripts/dist.sh (scripts/test.sh does)",
        d.display()
    );
    d
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`.
fn one(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(prefix) && n.ends_with(suffix)
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{prefix}*{suffix} in {}: {found:?}",
        dir.display()
    );
    found.into_iter().next().unwrap()
}

/// The line `--version` prints, checked against what a bug report needs.
fn assert_version_line(line: &str, what: &str) {
    let prefix = format!("mcp-covenant {VERSION} (");
    let inner = line
        .trim_end()
        .strip_prefix(&prefix)
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{what}: `{line}` is not `{prefix}...)`"));
    let parts: Vec<&str> = inner.split(", ").collect();
    let (commit, target, transport) = match parts[..] {
        [c, t, x] => (Some(c), t, x),
        [t, x] => (None, t, x),
        _ => panic!("{what}: `{inner}`"),
    };
    assert!(
        target.split('-').count() >= 3 && target.starts_with(std::env::consts::ARCH),
        "{what}: target `{target}`"
    );
    assert!(
        transport == "http" || transport == "stdio-only",
        "{what}: `{transport}`"
    );
    // Built from this checkout (a git repository): the commit is HEAD's.
    let head = Command::new("git")
        .current_dir(repo())
        .args(["log", "-1", "--format=%h %cs", "--abbrev=7"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| stdout(&o).trim().to_string());
    if let Some(head) = head {
        assert_eq!(commit, Some(head.as_str()), "{what}: {line}");
    }
}

#[test]
fn version_names_the_commit_the_target_and_the_transport() {
    let o = run(bin().arg("--version"));
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let line = stdout(&o);
    assert_version_line(&line, "--version");
    let transport = if cfg!(feature = "http") {
        ", http)"
    } else {
        ", stdio-only)"
    };
    assert!(line.trim_end().ends_with(transport), "{line}");
    assert_eq!(stdout(&run(bin().arg("-V"))), line);
}

/// Every manifest that states a version states Cargo.toml's.
#[test]
fn every_manifest_has_cargos_version() {
    let main = json("npm/mcp-covenant/package.json");
    assert_eq!(main["version"], VERSION, "npm/mcp-covenant/package.json");
    let optional = main["optionalDependencies"].as_object().unwrap();
    assert_eq!(optional.len(), 5, "{optional:?}");
    for (name, v) in optional {
        assert_eq!(v, VERSION, "npm/mcp-covenant/package.json: {name}");
    }
    assert_eq!(
        json("npm/platform/package.json")["version"],
        "@VERSION@",
        "the platform template takes the version from scripts/dist.sh"
    );

    // pyproject.toml takes Cargo's version through maturin and states none.
    let py: toml::Table = toml::from_str(&read("pyproject.toml")).unwrap();
    let project = py["project"].as_table().unwrap();
    assert!(
        !project.contains_key("version"),
        "pyproject.toml states a version"
    );
    assert_eq!(
        project["dynamic"].as_array().unwrap()[0].as_str(),
        Some("version")
    );
    assert_eq!(py["tool"]["maturin"]["bindings"].as_str(), Some("bin"));

    // The pre-commit hook repository: its own version and the wheel it pins.
    let hooks: toml::Table = toml::from_str(&read("pre-commit/pyproject.toml")).unwrap();
    assert_eq!(hooks["project"]["version"].as_str(), Some(VERSION));
    let deps: Vec<&str> = hooks["project"]["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(deps, [format!("mcp-covenant=={VERSION}")]);

    // The Action installs its own version by default.
    let action = read("action.yml");
    let default = action
        .split("\n  version:\n")
        .nth(1)
        .and_then(|rest| {
            rest.lines()
                .find(|l| l.trim_start().starts_with("default:"))
        })
        .expect("action.yml has a version input with a default");
    assert_eq!(
        default.trim(),
        format!("default: \"{VERSION}\""),
        "action.yml"
    );

    // What README shows people to pin.
    for doc in ["README.md", "pre-commit/README.md"] {
        let text = read(doc);
        let revs: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("rev: "))
            .collect();
        assert!(!revs.is_empty(), "{doc} shows no pre-commit rev");
        for rev in revs {
            assert_eq!(rev, format!("v{VERSION}"), "{doc}");
        }
    }
    let lock = read("Cargo.lock");
    assert!(
        lock.contains(&format!(
            "name = \"mcp-covenant\"\nversion = \"{VERSION}\"\n"
        )),
        "Cargo.lock"
    );
}

/// The platforms agree: the shim's optional dependencies, the targets dist.sh knows,
/// and the release workflow's matrix.
#[test]
fn npm_platforms_match_the_release_targets() {
    let main = json("npm/mcp-covenant/package.json");
    let mut packages: Vec<String> = main["optionalDependencies"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    packages.sort();
    let workflow = read(".github/workflows/release.yml");
    let mut from_targets: Vec<String> = workflow
        .lines()
        .filter_map(|l| l.split("target: ").nth(1))
        .filter_map(|r| r.split([',', ' ', '}']).next())
        .filter(|t| t.contains('-'))
        .map(|t| {
            let o = run(Command::new(repo().join("scripts/dist.sh")).args([
                "--platform",
                "--target",
                t,
            ]));
            assert_eq!(o.status.code(), Some(0), "{t}: {}", both(&o));
            format!("@mcp-covenant/cli-{}", stdout(&o).trim())
        })
        .collect();
    from_targets.sort();
    assert_eq!(
        from_targets.len(),
        5,
        "the release matrix: {from_targets:?}"
    );
    assert_eq!(packages, from_targets);
}

/// The repository's pre-commit hooks and the hook repository's (pre-commit/) are the
/// same hooks; only how the binary gets there differs (`system` / `python`).
#[test]
fn both_pre_commit_hook_files_define_the_same_hooks() {
    fn hooks(path: &str) -> Vec<(String, String, String)> {
        let text = read(path);
        let mut out = Vec::new();
        for block in text.split("\n- id: ").skip(1) {
            let id = block.lines().next().unwrap().trim().to_string();
            let field = |k: &str| {
                block
                    .lines()
                    .find_map(|l| l.trim().strip_prefix(k))
                    .unwrap_or_else(|| panic!("{path}: {id} has no {k}"))
                    .trim()
                    .to_string()
            };
            let (entry, language) = (field("entry:"), field("language:"));
            out.push((id, entry, language));
        }
        out
    }
    let root = hooks(".pre-commit-hooks.yaml");
    let published = hooks("pre-commit/.pre-commit-hooks.yaml");
    let ids: Vec<&str> = root.iter().map(|h| h.0.as_str()).collect();
    assert_eq!(ids, ["mcp-covenant-up-to-date", "mcp-covenant-lint"]);
    assert_eq!(root[0].1, "mcp-covenant snapshot --check");
    for (r, p) in root.iter().zip(&published) {
        assert_eq!((&r.0, &r.1), (&p.0, &p.1));
        assert_eq!(r.2, "system", "the root hooks never build this repository");
        assert_eq!(p.2, "python", "the hook repository installs the wheel");
    }
    assert_eq!(root.len(), published.len());
    assert_eq!(read("pre-commit/LICENSE"), read("LICENSE"));
}

/// The size budget of the release binary (fully static, x86_64 Linux) and its archive:
/// about 100 KB (binary) and 43 KB (archive, which compresses to about half) above the
/// measurement in docs/performance.md, so that growth is caught while it is small. A
/// change that passes it has to say why, and move the budget and the page together.
const BINARY_BUDGET: u64 = 6_330_000;
const ARCHIVE_BUDGET: u64 = 3_050_000;

#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh)"]
fn the_release_binary_stays_within_its_size_budget() {
    let dist = dist();
    let archive = one(
        &dist,
        &format!("mcp-covenant-{VERSION}-x86_64-unknown-linux"),
        ".tar.gz",
    );
    let size = fs::metadata(&archive).unwrap().len();
    assert!(
        size <= ARCHIVE_BUDGET,
        "{}: {size} bytes, over the budget of {ARCHIVE_BUDGET} (docs/performance.md)",
        archive.display()
    );
    let out = tmpdir("dist-budget");
    let o = run(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&out));
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let stem = archive
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace(".tar.gz", "");
    let binary = out.join(stem).join("mcp-covenant");
    let size = fs::metadata(&binary).unwrap().len();
    assert!(
        size <= BINARY_BUDGET,
        "the release binary is {size} bytes, over the budget of {BINARY_BUDGET}: measure each crate's share (cargo bloat --crates), cut, or raise the budget in tests/it/dist.rs and docs/performance.md together, saying why"
    );
    let _ = fs::remove_dir_all(&out);
}

/// The archive verifies against SHA256SUMS and holds a static binary that prints the
/// version, LICENSE and README.md.
#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh)"]
fn the_release_archive_verifies_and_runs() {
    let dist = dist();
    let archive = one(&dist, &format!("mcp-covenant-{VERSION}-"), ".tar.gz");
    let name = archive.file_name().unwrap().to_string_lossy().to_string();
    let sums = fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    assert!(
        sums.lines().any(|l| l.ends_with(&format!("  {name}"))),
        "{sums}"
    );
    let o = run(Command::new("sha256sum").current_dir(&dist).args([
        "--check",
        "--strict",
        "SHA256SUMS",
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    println!(
        "archive: {name}: {} bytes",
        fs::metadata(&archive).unwrap().len()
    );

    let out = tmpdir("dist-archive");
    let o = run(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&out));
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let stem = name.strip_suffix(".tar.gz").unwrap();
    let mut files: Vec<String> = fs::read_dir(out.join(stem))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["LICENSE", "README.md", "completions", "man", "mcp-covenant"]
    );
    let man = fs::read_to_string(out.join(stem).join("man/mcp-covenant.1")).unwrap();
    assert!(man.contains(".TH mcp-covenant 1"), "{man}");
    // The top page's SUBCOMMANDS section names mcp-covenant-check(1): that page is there.
    assert!(man.contains("mcp\\-covenant\\-check(1)"), "{man}");
    let check = fs::read_to_string(out.join(stem).join("man/mcp-covenant-check.1")).unwrap();
    assert!(check.contains("\\-\\-baseline\\-rev"), "{check}");
    let bash = fs::read_to_string(out.join(stem).join("completions/mcp-covenant.bash")).unwrap();
    assert!(bash.contains("--baseline-rev"), "{bash}");
    let exe = out.join(stem).join("mcp-covenant");
    let bytes = fs::read(&exe).unwrap();
    assert!(!has_interpreter(&bytes), "the Linux binary is static");
    let o = run(Command::new(&exe).arg("--version"));
    assert_version_line(&stdout(&o), "the archive's binary");
    assert!(stdout(&o).contains(&format!(
        ", {}, ",
        stem.split_once(&format!("{VERSION}-")).unwrap().1
    )));

    // The container copies what dist.sh lays out for it.
    let dockerfile = read("Dockerfile");
    assert!(dockerfile.contains("\nFROM scratch\n"), "{dockerfile}");
    let copy = dockerfile
        .lines()
        .find(|l| l.starts_with("COPY "))
        .expect("the Dockerfile copies the binary");
    let source = copy.split_whitespace().nth(1).unwrap();
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    let source = source.replace("${TARGETARCH}", arch);
    assert_eq!(fs::read(repo().join(&source)).unwrap(), bytes, "{source}");
    assert!(read(".dockerignore").contains("!dist/docker/"));
}

/// Whether an ELF executable asks for a program interpreter (the dynamic loader).
fn has_interpreter(bytes: &[u8]) -> bool {
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap()) as usize;
    assert_eq!(&bytes[..5], b"\x7fELF\x02", "a 64-bit ELF file");
    let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    (0..phnum).any(|i| {
        let at = phoff + i * phentsize;
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) == 3 // PT_INTERP
    })
}

/// The README's main job through an installed command: 4 changes, exit 1.
fn assert_example_check(cmd: &mut Command, what: &str) {
    let o = run(cmd
        .current_dir(repo())
        .args(["check", "--baseline", "examples/mcp-covenant.lock", "--"])
        .arg(fixture())
        .arg("examples/demo-server.json"));
    assert_eq!(o.status.code(), Some(1), "{what}: {}", both(&o));
    assert!(stdout(&o).contains("4 change(s)"), "{what}: {}", stdout(&o));
}

/// A project with both npm tarballs installed offline, with an empty npm cache.
fn npm_project(name: &str) -> PathBuf {
    let dist = dist().join("npm");
    let main = dist.join(format!("mcp-covenant-{VERSION}.tgz"));
    let platform = one(&dist, "mcp-covenant-cli-", &format!("-{VERSION}.tgz"));
    let dir = tmpdir(name);
    let project = dir.join("my project");
    fs::create_dir(&project).unwrap();
    fs::write(
        project.join("package.json"),
        r#"{"name":"p","version":"1.0.0","private":true}"#,
    )
    .unwrap();
    let started = Instant::now();
    let o = run(Command::new("npm")
        .current_dir(&project)
        .env("npm_config_cache", dir.join("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .args(["install", "--offline", "--no-audit", "--no-fund"])
        .arg(&main)
        .arg(&platform));
    assert_eq!(o.status.code(), Some(0), "npm install: {}", both(&o));
    println!(
        "npm install --offline of {} ({} bytes) and {} ({} bytes): {:.2} s",
        main.display(),
        fs::metadata(&main).unwrap().len(),
        platform.display(),
        fs::metadata(&platform).unwrap().len(),
        started.elapsed().as_secs_f64()
    );
    project
}

fn npx(project: &Path) -> Command {
    let mut c = Command::new("npx");
    c.current_dir(project)
        .env("npm_config_offline", "true")
        .env("npm_config_update_notifier", "false")
        .env_remove("MCP_COVENANT_BINARY")
        .args(["--no-install", "mcp-covenant"]);
    c
}

#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh) and npm"]
fn the_npm_packages_install_offline_and_run() {
    let project = npm_project("npm");
    let o = run(npx(&project).arg("--version"));
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert_version_line(&stdout(&o), "npx mcp-covenant --version");
    // The shim runs from anywhere; the example check keeps its exit status.
    let shim = project.join("node_modules/.bin/mcp-covenant");
    assert_example_check(&mut Command::new(&shim), "the npm shim");

    // Without the platform package (optional dependencies omitted), it says so.
    fs::remove_dir_all(project.join("node_modules/@mcp-covenant")).unwrap();
    let o = run(npx(&project).arg("--version"));
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("is not installed"), "{err}");
    assert!(err.contains("pipx run mcp-covenant"), "{err}");
}

/// The shim, with MCP_COVENANT_BINARY pointing at sh: arguments, stdin, stdout, the
/// exit code and signals pass through unchanged, and no shell sees the arguments.
#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh) and npm"]
fn the_npm_shim_passes_everything_through() {
    let project = npm_project("shim");
    let shim = project.join("node_modules/mcp-covenant/bin/mcp-covenant.js");
    let sh = |script: &str, args: &[&str]| {
        let mut c = Command::new("node");
        c.arg(&shim)
            .env("MCP_COVENANT_BINARY", "/bin/sh")
            .args(["-c", script, "sh"])
            .args(args);
        c
    };
    // Arguments, byte for byte; nothing expanded.
    let odd = ["a b", "$(touch pwned)", "*", "", "ü\"'\\", "--version"];
    let o = run(sh(r#"printf '[%s]' "$@""#, &odd).current_dir(&project));
    assert_eq!(stdout(&o), "[a b][$(touch pwned)][*][][ü\"'\\][--version]");
    assert!(!project.join("pwned").exists());
    // Exit codes.
    assert_eq!(run(&mut sh("exit 42", &[])).status.code(), Some(42));
    // stdin to stdout, stderr apart.
    let mut child = sh("cat; echo err >&2", &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"line 1\nline 2\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        (stdout(&o).as_str(), stderr(&o).as_str()),
        ("line 1\nline 2\n", "err\n")
    );
    // The child's death by a signal is the shim's.
    let o = run(&mut sh("kill -TERM $$", &[]));
    assert_eq!(o.status.signal(), Some(libc::SIGTERM), "{o:?}");
    // SIGINT sent to the shim reaches the child, whose exit status comes back.
    let mut child = sh(
        // At most 10 s: a signal that never arrives fails the test instead of hanging it.
        "trap 'echo got INT; exit 7' INT; echo ready; i=0; \
         while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; echo no INT; exit 3",
        &[],
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "got INT\n");
    assert_eq!(status.code(), Some(7), "{status:?}");

    // A platform with no package: named, with the other ways to install.
    let fake = project.join("fake-platform.js");
    fs::write(
        &fake,
        "Object.defineProperty(process, 'platform', { value: 'aix' });\n",
    )
    .unwrap();
    let o = run(Command::new("node")
        .arg("--require")
        .arg(&fake)
        .arg(&shim)
        .arg("--version")
        .env_remove("MCP_COVENANT_BINARY"));
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("no prebuilt binary for aix-{}", node_arch())),
        "{err}"
    );
    for way in [
        "uvx mcp-covenant",
        "cargo install mcp-covenant",
        "MCP_COVENANT_BINARY",
    ] {
        assert!(err.contains(way), "{way}: {err}");
    }
}

fn node_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    }
}

#[test]
#[ignore = "needs dist/ (scripts/test.sh builds it with scripts/dist.sh) and python3"]
fn the_wheel_installs_with_no_index_and_runs() {
    let wheel = one(&dist(), &format!("mcp_covenant-{VERSION}-"), ".whl");
    println!(
        "wheel: {}: {} bytes",
        wheel.display(),
        fs::metadata(&wheel).unwrap().len()
    );
    let dir = tmpdir("wheel");
    let venv = dir.join("a venv");
    let o = run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let started = Instant::now();
    let o = run(Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--no-index",
            "--disable-pip-version-check",
            "--quiet",
        ])
        .arg(&wheel));
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    println!(
        "pip install --no-index: {:.2} s",
        started.elapsed().as_secs_f64()
    );

    let script = venv.join("bin/mcp-covenant");
    let o = run(Command::new(&script).arg("--version"));
    assert_version_line(&stdout(&o), "the wheel's mcp-covenant");
    let python = || {
        let mut c = Command::new(venv.join("bin/python"));
        c.args(["-m", "mcp_covenant"]);
        c
    };
    let o = run(python().arg("--version"));
    assert_version_line(&stdout(&o), "python -m mcp_covenant");
    assert_example_check(&mut Command::new(&script), "the wheel's script");
    assert_example_check(&mut python(), "python -m mcp_covenant");
}

/// The npm shim runs only its own version's platform package, from its own
/// node_modules or the one it is installed in, never one an ancestor directory's
/// node_modules holds; and it tells the binary it started it (`MCP_COVENANT_LAUNCHER`).
#[test]
#[ignore = "needs node"]
fn the_npm_shim_runs_only_its_own_platform_package() {
    let d = std::env::temp_dir().join(format!("mcp-covenant-shim-own-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    let pkg = format!("@mcp-covenant/cli-{}-{}", std::env::consts::OS, node_arch());
    let version = json("npm/mcp-covenant/package.json")["version"]
        .as_str()
        .unwrap()
        .to_string();
    let plant = |dir: &Path, version: &str, says: &str| {
        fs::create_dir_all(dir.join("bin")).unwrap();
        fs::write(
            dir.join("package.json"),
            format!(r#"{{"name": "{pkg}", "version": "{version}"}}"#),
        )
        .unwrap();
        let bin = dir.join("bin/mcp-covenant");
        fs::write(
            &bin,
            format!("#!/bin/sh\necho {says} \"$MCP_COVENANT_LAUNCHER\"\n"),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    };
    // An ancestor's node_modules holds a planted platform package.
    plant(&d.join("node_modules").join(&pkg), &version, "ancestor");
    let modules = d.join("project/node_modules");
    let own = modules.join("mcp-covenant");
    fs::create_dir_all(own.join("bin")).unwrap();
    fs::copy(
        repo().join("npm/mcp-covenant/package.json"),
        own.join("package.json"),
    )
    .unwrap();
    fs::copy(
        repo().join("npm/mcp-covenant/bin/mcp-covenant.js"),
        own.join("bin/mcp-covenant.js"),
    )
    .unwrap();
    let shim = || {
        let mut c = Command::new("node");
        c.arg(own.join("bin/mcp-covenant.js"))
            .env_remove("MCP_COVENANT_BINARY")
            .current_dir(&d);
        run(&mut c)
    };
    let o = shim();
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(!stdout(&o).contains("ancestor"), "{}", both(&o));
    // Beside it, at another version: refused too.
    plant(&modules.join(&pkg), "0.0.1", "stale");
    let o = shim();
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    // Beside it, at its version: run, and told how it was started.
    plant(&modules.join(&pkg), &version, "own");
    let o = shim();
    assert_eq!(stdout(&o).trim(), "own npm", "{}", both(&o));
    let _ = fs::remove_dir_all(&d);
}

/// `python -m mcp_covenant` runs the binary its own installation wrote (its RECORD),
/// not one in the interpreter's `scripts/`, and tells it how it was started.
#[test]
#[ignore = "needs python3"]
fn python_m_runs_the_binary_installed_with_the_package() {
    let d = std::env::temp_dir().join(format!("mcp-covenant-py-own-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    let site = d.join("site");
    fs::create_dir_all(site.join("mcp_covenant")).unwrap();
    fs::create_dir_all(site.join("mcp_covenant-0.0.0.dist-info")).unwrap();
    fs::create_dir_all(d.join("bin")).unwrap();
    for f in ["__init__.py", "__main__.py"] {
        fs::copy(
            repo().join("python/mcp_covenant").join(f),
            site.join("mcp_covenant").join(f),
        )
        .unwrap();
    }
    let bin = d.join("bin/mcp-covenant");
    fs::write(&bin, "#!/bin/sh\necho own \"$MCP_COVENANT_LAUNCHER\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(
        site.join("mcp_covenant-0.0.0.dist-info/RECORD"),
        "../bin/mcp-covenant,sha256=x,1\nmcp_covenant/__init__.py,,\n",
    )
    .unwrap();
    let o = run(Command::new("python3")
        .args(["-m", "mcp_covenant"])
        .env("PYTHONPATH", &site)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(&d));
    assert_eq!(stdout(&o).trim(), "own python", "{}", both(&o));
    let _ = fs::remove_dir_all(&d);
}
