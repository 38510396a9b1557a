//! Which covenant.toml applies: the one `--config` names, else the nearest one here or
//! above, no higher than the repository's root. Only files and `.git` directories the
//! current user owns count (unix): a covenant.toml another user put on the way up (a
//! shared `/tmp`, a foreign checkout) is never used without `--config`. (Windows has no
//! such owner check: there, discovery trusts the directories it walks.)

use std::path::{Path, PathBuf};

use super::{Config, DEFAULT_FILE};
use crate::error::Result;
use crate::lint::LintRules;
use crate::notice::Notices;
use crate::rules::Rules;

/// The directory of the covenant.toml that applies here: the current directory or the
/// nearest parent that has one, looking no higher than the repository's root (the
/// directory holding a `.git` the current user owns); outside a repository, only the
/// current directory. `None` when there is none, or when the nearest one is another
/// user's (with a warning to `notices`: it is used only when `--config` names it).
pub fn find(cwd: &Path, notices: &Notices) -> Option<PathBuf> {
    let repository = |d: &Path| {
        let git = d.join(".git");
        git.exists() && ours(&git)
    };
    let inside_repository = cwd.ancestors().any(repository);
    for dir in cwd.ancestors() {
        let file = dir.join(DEFAULT_FILE);
        if file.is_file() {
            if !ours(&file) {
                notices.warn(format!(
                    "{} belongs to another user, so it is not used (name it with --config to use it)",
                    file.display()
                ));
                return None;
            }
            return Some(dir.to_path_buf());
        }
        if !inside_repository || repository(dir) {
            return None;
        }
    }
    None
}

/// Whether `path` belongs to the user running this (unix; elsewhere always).
fn ours(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid(2) takes nothing and cannot fail.
        let me = unsafe { libc::geteuid() };
        std::fs::symlink_metadata(path).is_ok_and(|m| m.uid() == me)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        true
    }
}

impl Config {
    /// `explicit` (from --config), else `./covenant.toml` when present (and the current
    /// user's), else defaults. (The command line looks in the parent directories first:
    /// [`find`], which warns about another user's file.)
    pub fn discover(explicit: Option<&Path>, rules: &Rules, lint: &LintRules) -> Result<Config> {
        let here = Path::new(DEFAULT_FILE);
        match explicit {
            Some(p) => Config::load(p, rules, lint),
            None if here.is_file() && ours(here) => Config::load(here, rules, lint),
            None => Ok(Config::default()),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn find(cwd: &Path) -> Option<PathBuf> {
        super::find(cwd, &Notices::collect().0)
    }

    /// A covenant.toml, or a `.git`, that another user owns is not discovered.
    #[test]
    #[ignore = "needs root: chowns files to another user"]
    fn another_users_covenant_toml_is_not_discovered() {
        let base = std::env::temp_dir().join(format!("mcp-covenant-owner-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let sub = base.join("repo/sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir(base.join("repo/.git")).unwrap();
        let file = base.join("repo").join(DEFAULT_FILE);
        std::fs::write(&file, "fail_on = \"breaking\"\n").unwrap();
        assert_eq!(find(&sub).as_deref(), Some(base.join("repo").as_path()));
        let other = unsafe { libc::geteuid() } + 1;
        std::os::unix::fs::chown(&file, Some(other), None).unwrap();
        let (notices, seen) = Notices::collect();
        assert_eq!(super::find(&sub, &notices), None);
        let seen = format!("{:?}", seen.lock().unwrap());
        assert!(seen.contains("belongs to another user"), "{seen}");
        // A `.git` another user planted is no repository root: above it nothing is
        // looked for, and the one above is not found from here.
        std::os::unix::fs::chown(&file, Some(other - 1), None).unwrap();
        std::fs::create_dir(sub.join(".git")).unwrap();
        std::os::unix::fs::chown(sub.join(".git"), Some(other), None).unwrap();
        assert_eq!(find(&sub).as_deref(), Some(base.join("repo").as_path()));
        let _ = std::fs::remove_dir_all(&base);
    }
}
