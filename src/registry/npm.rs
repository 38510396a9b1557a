//! npm packages: `npm install --ignore-scripts` into a directory of their own, started
//! through the `bin` the package declares (the only one, or the one named like the
//! package) with `node`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{cache, tool, Package, PackageOptions};
use crate::error::{Error, Result};
use crate::notice::Notices;

pub(super) fn install(
    package: &Package,
    version: &str,
    opts: &PackageOptions,
    dir: &Path,
    notices: &Notices,
) -> Result<Vec<String>> {
    let what = package.display_at(version);
    if !cache::is_complete(dir) {
        notices.status(format!(
            "installing {what} from npm into {}{}",
            dir.display(),
            if opts.allow_scripts {
                " (install scripts allowed)"
            } else {
                " (--ignore-scripts)"
            }
        ));
        cache::fresh_dir(dir, &what)?;
        // A package.json of its own, so npm installs here and never into a project above.
        std::fs::write(dir.join("package.json"), b"{\"private\": true}\n")
            .map_err(|e| Error::new(format!("{what}: cannot write to {}: {e}", dir.display())))?;
        let mut argv: Vec<String> = [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--no-package-lock",
            "--omit=dev",
            "--loglevel=error",
        ]
        .map(String::from)
        .to_vec();
        if !opts.allow_scripts {
            argv.push("--ignore-scripts".into());
        }
        argv.push("--".into());
        argv.push(format!("{}@{version}", package.name));
        argv.extend(opts.with.iter().cloned());
        tool::run(&argv, dir, &format!("{what}: npm install"), notices)?;
        cache::mark_complete(dir, &what)?;
    }
    let root = dir.join("node_modules").join(&package.name);
    let manifest = read_manifest(&root.join("package.json"), &what)?;
    let installed = manifest
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or("");
    if installed != version {
        return Err(Error::new(format!(
            "{what}: npm installed version {} instead",
            installed.escape_debug()
        )));
    }
    let bin = entry_point(package, &manifest).map_err(|e| Error::new(format!("{what}: {e}")))?;
    let path = inside(&root, &bin).map_err(|e| Error::new(format!("{what}: {e}")))?;
    let path = path.to_string_lossy().into_owned();
    Ok(vec!["node".into(), path])
}

fn read_manifest(path: &Path, what: &str) -> Result<Value> {
    let bytes = crate::io::read_input(path, "package.json")
        .map_err(|e| Error::new(format!("{what}: {}", e.message())))?;
    crate::canon::value_from_slice(&bytes)
        .map_err(|e| Error::new(format!("{what}: {} is not JSON: {e}", path.display())))
}

/// The `bin` to start: a string (the package's one command), the only entry of the
/// map, or the entry named like the package (without its scope).
pub(super) fn entry_point(
    package: &Package,
    manifest: &Value,
) -> std::result::Result<String, String> {
    let unscoped = package.name.rsplit('/').next().unwrap_or(&package.name);
    match manifest.get("bin") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Object(map)) => {
            let entries: Vec<(&String, &str)> = map
                .iter()
                .filter_map(|(k, v)| Some((k, v.as_str()?)))
                .collect();
            match entries.as_slice() {
                [(_, one)] => Ok(one.to_string()),
                [] => Err("its package.json `bin` names no command".into()),
                many => many
                    .iter()
                    .find(|(k, _)| k.as_str() == unscoped || k.as_str() == package.name)
                    .map(|(_, v)| v.to_string())
                    .ok_or_else(|| {
                        let names: Vec<&str> = many.iter().map(|(k, _)| k.as_str()).collect();
                        format!(
                            "its package.json `bin` has several commands and none is named `{unscoped}`: {}",
                            names.join(", ")
                        )
                    }),
            }
        }
        _ => Err("its package.json declares no `bin` entry point to start".into()),
    }
}

/// `rel` inside `root`, refusing a path that leaves it (`../`, absolute, a link out).
fn inside(root: &Path, rel: &str) -> std::result::Result<PathBuf, String> {
    let joined = root.join(rel);
    let (Ok(real_root), Ok(real)) = (root.canonicalize(), joined.canonicalize()) else {
        return Err(format!(
            "its entry point `{}` does not exist",
            rel.escape_debug()
        ));
    };
    if !real.starts_with(&real_root) || !real.is_file() {
        return Err(format!(
            "its entry point `{}` is not a file inside the package",
            rel.escape_debug()
        ));
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkg(name: &str) -> Package {
        Package::parse(&format!("npm:{name}@1.0.0"))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn the_entry_point_is_the_only_bin_or_the_one_named_like_the_package() {
        let p = pkg("@scope/server-x");
        let m = |v: Value| entry_point(&p, &serde_json::json!({ "bin": v }));
        assert_eq!(m(serde_json::json!("dist/a.js")).unwrap(), "dist/a.js");
        assert_eq!(m(serde_json::json!({"other": "b.js"})).unwrap(), "b.js");
        assert_eq!(
            m(serde_json::json!({"x": "x.js", "server-x": "s.js"})).unwrap(),
            "s.js"
        );
        assert!(m(serde_json::json!({"x": "x.js", "y": "y.js"}))
            .unwrap_err()
            .contains("x, y"));
        assert!(entry_point(&p, &serde_json::json!({})).is_err());
    }

    #[test]
    fn an_entry_point_outside_the_package_is_refused() {
        let dir = std::env::temp_dir().join(format!("mcpc-npm-{}", std::process::id()));
        let pkg_dir = dir.join("p");
        std::fs::create_dir_all(&pkg_dir).unwrap();
        std::fs::write(pkg_dir.join("a.js"), "").unwrap();
        std::fs::write(dir.join("secret.js"), "").unwrap();
        assert!(inside(&pkg_dir, "a.js").is_ok());
        assert!(inside(&pkg_dir, "./a.js").is_ok());
        assert!(inside(&pkg_dir, "../secret.js").is_err());
        assert!(inside(&pkg_dir, "/etc/passwd").is_err());
        assert!(inside(&pkg_dir, "missing.js").is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
