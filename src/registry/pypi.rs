//! PyPI packages: a virtual environment of their own (uv when it is on PATH, else
//! `python3 -m venv` and pip), started through the console script the package declares
//! (`[project.scripts]`: the only one, or the one named like the package).

use std::path::{Path, PathBuf};

use super::spec::normalise_pypi;
use super::{cache, tool, Package, PackageOptions};
use crate::error::{Error, Result};
use crate::notice::Notices;

/// `as_of` is asked, when uv installs, for the moment the release's dependencies are
/// taken as of (`--exclude-newer`): an old release gets the dependencies it was
/// released with, not today's incompatible ones.
pub(super) fn install(
    package: &Package,
    version: &str,
    opts: &PackageOptions,
    dir: &Path,
    notices: &Notices,
    as_of: &dyn Fn() -> Option<String>,
) -> Result<Vec<String>> {
    let what = package.display_at(version);
    let requirement = format!("{}=={version}", package.name);
    if !cache::is_complete(dir) {
        let uv = tool::on_path("uv");
        notices.status(format!(
            "installing {what} from PyPI into {} ({}{})",
            dir.display(),
            if uv { "uv" } else { "venv + pip" },
            if opts.allow_sdist {
                ", source distributions allowed"
            } else {
                ", wheels only"
            }
        ));
        let step = if uv { "uv venv" } else { "python -m venv" };
        let as_of = if uv { as_of() } else { None };
        let mut done = false;
        if let Some(when) = &as_of {
            cache::fresh_dir(dir, &what)?;
            let (venv, mut install) = argv(uv, dir, &requirement, opts);
            let at = install
                .iter()
                .position(|a| a == "--")
                .unwrap_or(install.len());
            install.splice(at..at, ["--exclude-newer".to_string(), when.clone()]);
            notices.status(format!("{what}: dependencies as of its release ({when})"));
            let quiet = Notices::new(|_| {});
            done = tool::run(&venv, dir, &format!("{what}: {step}"), notices).is_ok()
                && tool::run(&install, dir, &format!("{what}: pip install"), &quiet).is_ok();
            if !done {
                notices.warn(format!(
                    "{what}: installing with the dependencies of its release date failed; installing with today's"
                ));
            }
        }
        if !done {
            cache::fresh_dir(dir, &what)?;
            let (venv, install) = argv(uv, dir, &requirement, opts);
            tool::run(&venv, dir, &format!("{what}: {step}"), notices)?;
            tool::run(&install, dir, &format!("{what}: pip install"), notices)?;
        }
        cache::mark_complete(dir, &what)?;
    }
    let dist = dist_info(dir, &package.name)
        .ok_or_else(|| Error::new(format!("{what}: installed, but its metadata was not found")))?;
    let metadata = std::fs::read_to_string(dist.join("METADATA")).unwrap_or_default();
    let installed = metadata
        .lines()
        .find_map(|l| l.strip_prefix("Version:"))
        .map(str::trim)
        .unwrap_or("");
    let same = super::version::Pep440::parse(installed)
        .is_some_and(|i| super::version::Pep440::parse(version) == Some(i));
    if !same {
        return Err(Error::new(format!(
            "{what}: pip installed version {} instead",
            installed.escape_debug()
        )));
    }
    let scripts = console_scripts(
        &std::fs::read_to_string(dist.join("entry_points.txt")).unwrap_or_default(),
    );
    let script = choose(&package.name, &scripts).map_err(|e| Error::new(format!("{what}: {e}")))?;
    let path = bin(dir, &script);
    if !path.is_file() {
        return Err(Error::new(format!(
            "{what}: its console script `{}` was not installed",
            script.escape_debug()
        )));
    }
    Ok(vec![path.to_string_lossy().into_owned()])
}

/// The commands that make the environment and install `requirement` into it: wheels
/// only (`--only-binary :all:`) unless the server allows source distributions, since
/// building one runs the package's own build backend.
fn argv(
    uv: bool,
    dir: &Path,
    requirement: &str,
    opts: &PackageOptions,
) -> (Vec<String>, Vec<String>) {
    let d = dir.to_string_lossy().into_owned();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let python = bin(dir, "python").to_string_lossy().into_owned();
    let (venv, mut install) = if uv {
        let mut venv = s(&["uv", "venv", "--quiet"]);
        if let Some(v) = &opts.python {
            venv.extend(s(&["--python", v]));
        }
        venv.extend(s(&["--", &d]));
        (
            venv,
            s(&["uv", "pip", "install", "--quiet", "--python", &python]),
        )
    } else {
        (
            s(&[&tool::interpreter(opts), "-m", "venv", "--", &d]),
            s(&[
                &python,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
            ]),
        )
    };
    if !opts.allow_sdist {
        install.extend(s(&["--only-binary", ":all:"]));
    }
    install.push("--".into());
    install.push(requirement.to_string());
    install.extend(opts.with.iter().cloned());
    (venv, install)
}

fn bin(dir: &Path, name: &str) -> PathBuf {
    if cfg!(windows) {
        dir.join("Scripts").join(format!("{name}.exe"))
    } else {
        dir.join("bin").join(name)
    }
}

/// The `*.dist-info` directory of `name` in the environment's site-packages.
fn dist_info(dir: &Path, name: &str) -> Option<PathBuf> {
    let want = normalise_pypi(name);
    let mut site = Vec::new();
    if let Ok(libs) = std::fs::read_dir(dir.join("lib")) {
        for lib in libs.flatten() {
            site.push(lib.path().join("site-packages"));
        }
    }
    site.push(dir.join("Lib").join("site-packages"));
    for s in site {
        let Ok(entries) = std::fs::read_dir(&s) else {
            continue;
        };
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if let Some(stem) = file.strip_suffix(".dist-info") {
                let dist = stem.split('-').next().unwrap_or("");
                if normalise_pypi(dist) == want {
                    return Some(e.path());
                }
            }
        }
    }
    None
}

/// The names under `[console_scripts]` in an `entry_points.txt`.
fn console_scripts(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[console_scripts]";
        } else if inside {
            if let Some((name, _)) = line.split_once('=') {
                out.push(name.trim().to_string());
            }
        }
    }
    out
}

/// The only console script, or the one named like the package.
fn choose(package: &str, scripts: &[String]) -> std::result::Result<String, String> {
    let safe = |s: &str| {
        !s.is_empty()
            && !s.starts_with(['-', '.'])
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let scripts: Vec<&String> = scripts.iter().filter(|s| safe(s)).collect();
    match scripts.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err("it declares no console script ([project.scripts]) to start".into()),
        many => many
            .iter()
            .find(|s| normalise_pypi(s) == normalise_pypi(package))
            .map(|s| s.to_string())
            .ok_or_else(|| {
                let names: Vec<&str> = many.iter().map(|s| s.as_str()).collect();
                format!(
                    "it declares several console scripts and none is named `{package}`: {}",
                    names.join(", ")
                )
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_takes_wheels_only_unless_the_server_allows_source_distributions() {
        let dir = Path::new("/c/x");
        let mut opts = PackageOptions {
            with: vec!["mcp<2".into()],
            ..PackageOptions::default()
        };
        for uv in [true, false] {
            let (_, install) = argv(uv, dir, "x==1.0", &opts);
            let at = install.iter().position(|a| a == "--only-binary").unwrap();
            assert_eq!(install[at + 1], ":all:");
            let dashes = install.iter().position(|a| a == "--").unwrap();
            assert!(at < dashes, "{install:?}");
            assert_eq!(&install[dashes + 1..], ["x==1.0", "mcp<2"]);
        }
        opts.allow_sdist = true;
        opts.python = Some("3.12".into());
        let (venv, install) = argv(true, dir, "x==1.0", &opts);
        assert!(
            !install.contains(&"--only-binary".to_string()),
            "{install:?}"
        );
        assert!(
            venv.windows(2).any(|w| w == ["--python", "3.12"]),
            "{venv:?}"
        );
        let (venv, _) = argv(false, dir, "x==1.0", &opts);
        assert_eq!(venv[0], "python3.12");
    }

    #[test]
    fn the_console_script_is_the_only_one_or_the_one_named_like_the_package() {
        let text = "[console_scripts]\nmcp-server-time = mcp_server_time:main\n\n[other]\nx = y\n";
        assert_eq!(console_scripts(text), ["mcp-server-time"]);
        let two = vec!["helper".to_string(), "mcp_server_time".to_string()];
        assert_eq!(choose("mcp-server-time", &two).unwrap(), "mcp_server_time");
        assert!(choose("other", &two)
            .unwrap_err()
            .contains("helper, mcp_server_time"));
        assert!(choose("x", &[]).is_err());
        assert!(choose("x", &["../../bin/sh".to_string()]).is_err());
    }
}
