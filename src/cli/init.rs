//! `init`: set a project up. It reads the project's files for its ecosystem (npm, pnpm,
//! yarn, bun; uv, pip; cargo; go) and, unless one is given after `--` or with --http,
//! its server command; captures the server; and writes covenant.toml (with the server),
//! the first lockfile and a GitHub workflow with the ecosystem's setup and build steps,
//! all or none. It never overwrites without --force.

use std::io::Write;
use std::path::{Path, PathBuf};

mod consumer;

use super::settings::InitSettings;
use super::source::{capture, Live};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::lint::LintRules;
use crate::reference::{self, InitServer};
use crate::rules::Rules;

/// How the workflow sets a project up before the server can start: YAML step lines
/// (each list item starting with `- `), from the ecosystem table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Setup {
    /// The ecosystem, as the workflow's comment names it (`npm`, `uv`, ...).
    name: String,
    steps: Vec<String>,
}

/// The project's ecosystem and, where its files declare it, the server command.
struct Project {
    setup: Setup,
    /// The command the project declares, and where it says so.
    declared: Option<(Vec<String>, String)>,
    /// Why no command could be read from the project's files (said when none is given).
    why_not: Option<String>,
    /// A file the declared command needs that does not exist yet, and how to make it.
    unbuilt: Option<(PathBuf, String)>,
    /// The semver version the manifest declares, and where (`package.json \`version\``):
    /// with one, the gate is `fail_on = "version"`.
    version: Option<(String, String)>,
}

pub(super) fn run(settings: InitSettings, rules: &Rules, lint: &LintRules) -> Result<u8> {
    if let Some(client) = &settings.from_client {
        return consumer::run(client, settings.force);
    }
    let root = Path::new("");
    let project = detect(root)?;
    let server = server(&settings, &project)?;
    let config_path = settings.config.clone();
    // What init writes must read back: a command with a string TOML cannot hold fails
    // here, not at the next `check`.
    for version in [None, project.version.as_ref().map(|v| v.1.as_str())] {
        Config::parse(
            &reference::starter_config(&server, version),
            &config_path.display().to_string(),
            rules,
            lint,
        )?;
    }
    let lockfile = config_path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(
            || PathBuf::from(crate::config::DEFAULT_LOCKFILE),
            |d| d.join(crate::config::DEFAULT_LOCKFILE),
        );
    // Below the repository's root (a package of a monorepo), the workflow goes where
    // GitHub reads it, at the root, named for the package, and runs in the package.
    let package = crate::git::prefix().filter(|p| !p.is_empty());
    let workflow_path = workflow_path(root, package.as_deref())?;
    let branch = crate::git::default_branch().unwrap_or_else(|| "main".into());
    // covenant.toml and the workflow, gated by `version` when the manifest declares one.
    let make = |version: Option<&(String, String)>| {
        let where_ = version.map(|v| v.1.as_str());
        vec![
            (
                config_path.clone(),
                reference::starter_config(&server, where_),
            ),
            (
                workflow_path.clone(),
                workflow(&project.setup, &server, where_, &branch, package.as_deref()),
            ),
        ]
    };
    let files = make(project.version.as_ref());
    let targets: Vec<&Path> = files
        .iter()
        .map(|(p, _)| p.as_path())
        .chain((!settings.no_capture).then_some(lockfile.as_path()))
        .collect();
    if !settings.force {
        if let Some(there) = targets
            .iter()
            .find(|p| std::fs::symlink_metadata(p).is_ok())
        {
            return Err(Error::new(format!(
                "{} already exists; init never overwrites a file, so it wrote nothing (`mcp-covenant init --force` replaces what is there and says what changed)",
                there.display()
            )));
        }
    }
    let no_capture = settings.no_capture;
    if no_capture {
        let done = write_all(&files, settings.force)?;
        say(&done, &files);
    } else {
        let ungated = make(None);
        capture_and_write(settings, &project, &server, &lockfile, files, ungated)?;
    }
    next(no_capture, &config_path, &lockfile, &workflow_path);
    Ok(0)
}

/// The server init sets up: --http, the command after `--`, or the one the project
/// declares.
fn server(settings: &InitSettings, project: &Project) -> Result<InitServer> {
    Ok(
        match (&settings.source.http, &settings.command, &project.declared) {
            (Some(url), _, _) => InitServer::Http(url.clone()),
            (None, Some(argv), _) => InitServer::Command(argv.clone()),
            (None, None, Some((argv, from))) => {
                status!(
                    "mcp-covenant: the server command, from {from}: {}",
                    super::shell_line(argv)
                );
                InitServer::Command(argv.clone())
            }
            (None, None, None) => {
                let why = project
                    .why_not
                    .as_deref()
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default();
                return Err(Error::new(format!(
                    "no server command: the project does not declare one{why}; give it after `--`, e.g. `mcp-covenant init -- node dist/server.js`, or give --http URL"
                )));
            }
        },
    )
}

/// Where the workflow goes: `.github/workflows/` of `root`, or, for a `package` of a
/// monorepo, of the repository's root, named for the package.
fn workflow_path(root: &Path, package: Option<&str>) -> Result<PathBuf> {
    match package {
        None => Ok(root.join(reference::WORKFLOW_PATH)),
        Some(p) => package_workflow_path("mcp-covenant", p),
    }
}

/// `.github/workflows/STEM-PACKAGE.yml` at the repository's root, for the `package`
/// directory of a monorepo (its path in the repository).
fn package_workflow_path(stem: &str, p: &str) -> Result<PathBuf> {
    // A line or paragraph separator is a line break to a YAML 1.1 parser: the quoted
    // name would end the document (`a\u{2028}--- b`); a bidi control would hide it.
    if p.contains("${{") || p.chars().any(crate::escape::risky) {
        return Err(Error::new(format!(
            "this directory's path in the repository, {}, cannot be written into a workflow (it holds `${{{{` or a control, separator or invisible character); run init in a directory with a plain name",
            crate::escape::text(p)
        )));
    }
    Ok(crate::git::up_to_root()?.join(format!(
        ".github/workflows/{stem}-{}.yml",
        p.chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
                _ => '-',
            })
            .collect::<String>()
    )))
}
/// The capture, then every file, all or none: when the server does not start, nothing
/// is written; when a file cannot be written, the lockfile goes back to what it was.
/// `ungated`: covenant.toml and the workflow without the version gate, written instead
/// of `files` when the server does not report the version its manifest declares.
fn capture_and_write(
    settings: InitSettings,
    project: &Project,
    server: &InitServer,
    lockfile: &Path,
    mut files: Vec<(PathBuf, String)>,
    ungated: Vec<(PathBuf, String)>,
) -> Result<()> {
    if let (InitServer::Command(_), Some((file, how))) = (server, &project.unbuilt) {
        if settings.command.is_none() && !file.exists() {
            return Err(Error::new(format!(
                "the server is {}, which does not exist yet: build it first (`{how}`), then run init again; nothing was written",
                file.display()
            )));
        }
    }
    let force = settings.force;
    let mut source = settings.source;
    if let InitServer::Command(argv) = server {
        source.command = argv.clone();
    }
    let retry = retry_line(force, server);
    let mut lock = capture(&Live::Cli, &source).map_err(|e| {
        Error::new(format!(
            "{e}\n(init captures the server to write the first lockfile, and wrote nothing; fix the command, or run `{retry}` and capture later with `mcp-covenant snapshot`)"
        ))
    })?;
    // `version` judges the version the server reports: when it is not the manifest's
    // (an SDK default, a constant in the code), bumping the manifest would pass nothing.
    if let Some((declared, from)) = &project.version {
        let served = lock.server.version().unwrap_or("");
        if served != declared {
            status!(
                "note: the server reports version {:?}, not {from} ({declared}), so the gate is fail_on = \"breaking\"; once the server reports its package's version, `fail_on = \"version\"` lets a major release pass",
                crate::escape::text(served),
            );
            files = ungated;
        }
    }
    let old = std::fs::read(lockfile).ok();
    lock.write(lockfile)?;
    let new = std::fs::read(lockfile).ok();
    let written = match &old {
        None => Written::Created,
        Some(o) if Some(o) == new.as_ref() => Written::Unchanged,
        Some(_) => Written::Replaced,
    };
    let report = lock.counts();
    let result = write_all(&files, force);
    if result.is_err() {
        // All or none: the lockfile goes back to what it was.
        let _ = match &old {
            Some(bytes) => std::fs::write(lockfile, bytes),
            None => std::fs::remove_file(lockfile),
        };
    }
    let mut done = result?;
    done.push((lockfile.to_path_buf(), written));
    files.push((lockfile.to_path_buf(), report));
    say(&done, &files);
    Ok(())
}

/// The command that sets the project up without a capture, said when the capture fails.
fn retry_line(force: bool, server: &InitServer) -> String {
    let mut words: Vec<String> = vec!["mcp-covenant".into(), "init".into()];
    if force {
        words.push("--force".into());
    }
    words.push("--no-capture".into());
    match server {
        InitServer::Command(argv) => {
            words.push("--".into());
            words.extend(argv.iter().cloned());
        }
        InitServer::Http(url) => words.extend(["--http".into(), url.clone()]),
    }
    super::shell_line(&words)
}

/// What to do next: capture (with --no-capture) and commit the files.
fn next(no_capture: bool, config_path: &Path, lockfile: &Path, workflow_path: &Path) {
    let mut paths: Vec<String> = vec![config_path.display().to_string()];
    if !no_capture {
        paths.push(lockfile.display().to_string());
    }
    paths.push(workflow_path.display().to_string());
    let paths: Vec<String> = paths.iter().map(|p| super::shell_word(p)).collect();
    if no_capture {
        status!("next: capture the first lockfile with `mcp-covenant snapshot`, then commit the files: `git add {} {} && git commit -m 'Add the mcp-covenant interface gate'`",
            paths.join(" "), super::shell_word(&lockfile.display().to_string()));
    } else {
        status!(
            "next: commit these files: `git add {} && git commit -m 'Add the mcp-covenant interface gate'`; then `mcp-covenant check` compares the server with the lockfile, from anywhere in the repository",
            paths.join(" ")
        );
    }
}

/// One line per file: created, replaced (with --force), or unchanged.
fn say(done: &[(PathBuf, Written)], files: &[(PathBuf, String)]) {
    for (path, written) in done {
        let what = match written {
            Written::Created => "wrote",
            Written::Replaced => "replaced",
            Written::Unchanged => "kept (unchanged)",
        };
        let detail = files
            .iter()
            .find(|(p, _)| p == path)
            .filter(|(p, _)| p.extension().is_some_and(|e| e == "lock"))
            .map(|(_, d)| format!(" ({d})"))
            .unwrap_or_default();
        status!("mcp-covenant: {what} {}{detail}", path.display());
    }
}

/// A small JSON or TOML file of the project, parsed; `None` when it is absent.
fn read(root: &Path, name: &str) -> Result<Option<String>> {
    let path = root.join(name);
    if !path.is_file() {
        return Ok(None);
    }
    let bytes = crate::io::read_input(&path, "project file")?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Error::new(format!("cannot read {name}: it is not UTF-8")))
}

/// One entry of the ecosystem table (init/ecosystems.toml): how a project of this
/// kind is recognised, set up and built.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Ecosystem {
    name: String,
    files: Vec<String>,
    manifest: String,
    #[serde(default)]
    setup: String,
    install: Option<String>,
    build: Option<String>,
    command: Option<String>,
    /// Where the manifest declares the project's version: a key, or `table.key`.
    version: Option<String>,
    /// Why no command is read from a manifest init does not read one from.
    hint: Option<String>,
}

/// The ecosystem table, in order (init/ecosystems.toml).
fn ecosystems() -> Result<Vec<Ecosystem>> {
    #[derive(serde::Deserialize)]
    struct Table {
        ecosystem: Vec<Ecosystem>,
    }
    toml::from_str::<Table>(include_str!("init/ecosystems.toml"))
        .map(|t| t.ecosystem)
        .map_err(|e| Error::new(format!("internal error: the ecosystem table: {e}")))
}

/// The workflow's steps for `eco`: its setup, then the install and build commands.
fn steps(eco: &Ecosystem, build: bool) -> Vec<String> {
    let mut steps: Vec<String> = eco.setup.lines().map(String::from).collect();
    steps.extend(eco.install.iter().map(|c| format!("- run: {c}")));
    if build {
        steps.extend(eco.build.iter().map(|c| format!("- run: {c}")));
    }
    steps
}

/// The project's ecosystem (the first row of the table whose files all exist), the
/// server command its manifest declares.
fn detect(root: &Path) -> Result<Project> {
    let mut project = Project {
        setup: Setup::default(),
        declared: None,
        why_not: None,
        unbuilt: None,
        version: None,
    };
    let Some(eco) = ecosystems()?
        .into_iter()
        .find(|e| e.files.iter().all(|f| root.join(f).exists()))
    else {
        project.why_not =
            Some("no package.json, pyproject.toml, uv.lock, Cargo.toml or go.mod here".into());
        return Ok(project);
    };
    // The manifests a command is read from; another's row says how to give one.
    let build = match eco.manifest.as_str() {
        "package.json" => node(root, &eco, &mut project)?,
        "pyproject.toml" => {
            python(root, &eco, &mut project)?;
            true
        }
        _ => {
            project.why_not.clone_from(&eco.hint);
            true
        }
    };
    project.setup = Setup {
        name: eco.name.clone(),
        steps: steps(&eco, build),
    };
    project.version = declared_version(root, &eco)?;
    Ok(project)
}

/// The version the manifest declares where its row's `version` says (package.json's
/// `version`, pyproject.toml's `[project] version`, Cargo.toml's `[package] version`),
/// when it is a semver release line `fail_on = "version"` can gate by, with where it is
/// (`pyproject.toml \`[project] version\``). Not a dynamic or workspace-inherited one,
/// and not a calendar version (2026.10.19: its first number is a year, and a new year is
/// not a promise of breaking changes).
fn declared_version(root: &Path, eco: &Ecosystem) -> Result<Option<(String, String)>> {
    let Some(key) = &eco.version else {
        return Ok(None);
    };
    let Some(text) = read(root, &eco.manifest)? else {
        return Ok(None);
    };
    let (table, name) = match key.split_once('.') {
        Some((table, name)) => (Some(table), name),
        None => (None, key.as_str()),
    };
    let version = if eco.manifest.ends_with(".json") {
        crate::canon::value_from_str(&text).ok().and_then(|v| {
            let v = table.map_or(Some(&v), |t| v.get(t))?;
            Some(v.get(name)?.as_str()?.to_string())
        })
    } else {
        toml::from_str::<toml::Table>(&text).ok().and_then(|t| {
            let v = match table {
                Some(table) => t.get(table)?.get(name)?,
                None => t.get(name)?,
            };
            Some(v.as_str()?.to_string())
        })
    };
    let from = match table {
        Some(table) => format!("{} `[{table}] {name}`", eco.manifest),
        None => format!("{} `{name}`", eco.manifest),
    };
    Ok(version
        .filter(|v| crate::diff::version::is_semver_release_line(v))
        .map(|v| (v, from)))
}

/// package.json: the command (`bin`, one command name to a path, else `main`) and
/// whether it has a build script.
fn node(root: &Path, eco: &Ecosystem, project: &mut Project) -> Result<bool> {
    let text = read(root, "package.json")?.unwrap_or_default();
    let pkg: serde_json::Value = crate::canon::value_from_str(&text)
        .map_err(|e| Error::new(format!("cannot read package.json: {e}")))?;
    let build = pkg["scripts"]["build"].is_string();
    let bin = match &pkg["bin"] {
        serde_json::Value::String(p) => Some((p.clone(), "package.json `bin`")),
        serde_json::Value::Object(m) if m.len() == 1 => m
            .values()
            .next()
            .and_then(|v| v.as_str())
            .map(|p| (p.to_string(), "package.json `bin`")),
        serde_json::Value::Object(m) if m.len() > 1 => {
            project.why_not = Some(format!(
                "package.json `bin` names {} commands: {}",
                m.len(),
                m.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
            None
        }
        _ => None,
    };
    let entry = bin.or_else(|| {
        pkg["main"]
            .as_str()
            .map(|p| (p.to_string(), "package.json `main`"))
    });
    match entry {
        Some((path, from)) => {
            let path = path.strip_prefix("./").unwrap_or(&path).to_string();
            if let (true, Some(how)) = (build, &eco.build) {
                project.unbuilt = Some((root.join(&path), how.clone()));
            }
            project.declared = Some((vec!["node".into(), path], from.to_string()));
        }
        None if project.why_not.is_none() => {
            project.why_not = Some("package.json has no `bin` or `main`".into())
        }
        None => {}
    }
    Ok(build)
}

/// pyproject.toml: the command (one `[project.scripts]` entry, or the one named like
/// an MCP server).
fn python(root: &Path, eco: &Ecosystem, project: &mut Project) -> Result<()> {
    let table = read(root, "pyproject.toml")?.and_then(|t| toml::from_str::<toml::Table>(&t).ok());
    let section = table.as_ref().and_then(|t| t.get("project"));
    let scripts: Vec<String> = section
        .and_then(|p| Some(p.get("scripts")?.as_table()?.keys().cloned().collect()))
        .unwrap_or_default();
    let chosen = match scripts.as_slice() {
        [one] => Some(one.clone()),
        many => {
            let mcp: Vec<&String> = many
                .iter()
                .filter(|s| s.contains("mcp") || s.contains("server"))
                .collect();
            match mcp.as_slice() {
                [one] => Some((*one).clone()),
                _ => {
                    project.why_not = Some(match many.len() {
                        0 => "pyproject.toml has no [project.scripts]".to_string(),
                        n => format!(
                            "pyproject.toml's [project.scripts] has {n} entries: {}",
                            many.join(", ")
                        ),
                    });
                    None
                }
            }
        }
    };
    if let Some(script) = chosen {
        let mut argv: Vec<String> = eco
            .command
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(String::from)
            .collect();
        argv.push(script);
        project.declared = Some((argv, "pyproject.toml [project.scripts]".into()));
    }
    Ok(())
}

/// The GitHub workflow `init` writes (init/workflow.yml): the `verdict` job, which
/// runs nothing of the pull request, and the `up-to-date` job with the project's
/// setup and build. `branch` is a plain branch name ([`crate::git::default_branch`]);
/// every other word is init's own, so nothing a project or a command holds reaches
/// the file.
/// `version`: where the manifest declares the version that `fail_on = "version"` (in
/// covenant.toml) gates by.
fn workflow(
    setup: &Setup,
    server: &InitServer,
    version: Option<&str>,
    branch: &str,
    package: Option<&str>,
) -> String {
    let mut steps = String::new();
    if setup.steps.is_empty() {
        steps.push_str(match server {
            InitServer::Http(_) => {
                "      # Start your server here: covenant.toml's `http` must answer.\n"
            }
            InitServer::Command(_) => {
                "      # Build or install your server here, so that covenant.toml's command runs.\n"
            }
        });
    } else {
        steps.push_str(&format!(
            "      # Set up and build the server ({}).\n",
            setup.name
        ));
        for line in &setup.steps {
            steps.push_str(&format!("      {line}\n"));
        }
    }
    // YAML single quotes: only ' itself needs escaping (doubled); a plain name has none.
    let branch = format!("'{}'", branch.replace('\'', "''"));
    let ship = match version {
        Some(from) => format!(
            "bump the major version ({from}; in 0.y.z the minor),\n# `mcp-covenant snapshot` and commit (covenant.toml's fail_on = \"version\"); or add the\n# `breaking-change-approved` label; or record it with `mcp-covenant ignore FINGERPRINT`."
        ),
        None => "add the `breaking-change-approved` label, or record it with\n# `mcp-covenant ignore FINGERPRINT`.".to_string(),
    };
    // A package of a monorepo: its name on the workflow, the Action's working
    // directory, and the up-to-date job's `run:` steps in the package.
    let quoted = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let (name, action_dir, run_dir) = match package {
        Some(p) => (
            quoted(&format!("mcp-covenant ({p})")),
            format!("          working-directory: {}\n", quoted(p)),
            format!(
                "    defaults:\n      run:\n        working-directory: {}\n    # A setup step's dependency cache reads the lockfile at the repository's root;\n    # give it `cache-dependency-path: {p}/...` when the package has its own.\n",
                quoted(p)
            ),
        ),
        None => ("mcp-covenant".to_string(), String::new(), String::new()),
    };
    include_str!("init/workflow.yml")
        .replace("%SHIP%", &ship)
        .replace("%NAME%", &name)
        .replace("%BRANCH%", &branch)
        .replace("%VERSION%", env!("CARGO_PKG_VERSION"))
        .replace("%ACTION_DIR%\n", &action_dir)
        .replace("%RUN_DIR%\n", &run_dir)
        .replace("%STEPS%\n", &steps)
}

/// What `init` did to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Written {
    /// It did not exist.
    Created,
    /// It existed (--force) with other content.
    Replaced,
    /// It existed (--force) with this content already.
    Unchanged,
}

/// `path` is written inside the repository (outside git, the current directory): it is
/// not a symbolic link (which --force would write through, to a file of the user's a
/// hostile repository points it at), and no directory on its way links out of it.
fn inside_repository(path: &Path) -> Result<()> {
    let refused = |why: &str| {
        Err(Error::new(format!(
            "{} {why}, so init wrote nothing",
            path.display()
        )))
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return refused(
            "is a symbolic link; init writes only regular files (remove the link first)",
        );
    }
    let root = crate::git::up_to_root()
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    let resolved = |p: &Path| match p.as_os_str().is_empty() {
        true => std::fs::canonicalize("."),
        false => std::fs::canonicalize(p),
    };
    let dir = path.ancestors().skip(1).find_map(|a| resolved(a).ok());
    match (resolved(&root), dir) {
        (Ok(root), Some(dir)) if dir.starts_with(&root) => Ok(()),
        _ => refused(
            "would be outside the repository (a directory on its way is a symbolic link out of it)",
        ),
    }
}

/// Write `files`, all or none: without `force`, when any exists (a dangling symlink
/// counts), nothing is written; a failure part-way restores what was there (removes
/// what was created, puts back what was replaced).
pub fn write_all(files: &[(PathBuf, String)], force: bool) -> Result<Vec<(PathBuf, Written)>> {
    let mut before: Vec<Option<Vec<u8>>> = Vec::new();
    for (path, _) in files {
        let exists = std::fs::symlink_metadata(path).is_ok();
        if exists && !force {
            return Err(Error::new(format!(
                "{} already exists; init never overwrites a file without --force, so it wrote nothing",
                path.display()
            )));
        }
        inside_repository(path)?;
        before.push(match exists {
            true => Some(crate::io::read_input(path, "file")?),
            false => None,
        });
    }
    let mut done: Vec<(PathBuf, Written)> = Vec::new();
    let undo = |done: &[(PathBuf, Written)]| {
        for ((path, _), old) in files.iter().zip(&before).take(done.len()) {
            let _ = match old {
                Some(bytes) => std::fs::write(path, bytes),
                None => std::fs::remove_file(path),
            };
        }
    };
    for ((path, text), old) in files.iter().zip(&before) {
        let fail = |e: String| {
            undo(&done);
            Error::new(format!(
                "cannot write {}: {e}; nothing was written",
                path.display()
            ))
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
        }
        let written = match old {
            Some(bytes) if bytes == text.as_bytes() => Written::Unchanged,
            Some(_) => {
                crate::io::write_atomic(path, text.as_bytes()).map_err(|e| fail(e.to_string()))?;
                Written::Replaced
            }
            None => {
                // create_new: a file that appeared meanwhile is still never overwritten.
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path)
                    .map_err(|e| fail(e.to_string()))?;
                file.write_all(text.as_bytes())
                    .map_err(|e| fail(e.to_string()))?;
                Written::Created
            }
        };
        done.push((path.clone(), written));
    }
    Ok(done)
}
