//! Which covenant.toml applies: the one `--config` names, else the nearest one here or
//! above, no higher than the repository's root.

use std::path::{Path, PathBuf};

use super::{Config, DEFAULT_FILE};
use crate::error::Result;
use crate::lint::LintRules;
use crate::rules::Rules;

/// The directory of the covenant.toml that applies here: the current directory or the
/// nearest parent that has one, looking no higher than the repository's root (the
/// directory holding `.git`); outside a repository, only the current directory. `None`
/// when there is none.
pub fn find(cwd: &Path) -> Option<PathBuf> {
    let inside_repository = cwd.ancestors().any(|d| d.join(".git").exists());
    for dir in cwd.ancestors() {
        if dir.join(DEFAULT_FILE).is_file() {
            return Some(dir.to_path_buf());
        }
        if !inside_repository || dir.join(".git").exists() {
            return None;
        }
    }
    None
}

impl Config {
    /// `explicit` (from --config), else `./covenant.toml` when present, else defaults.
    /// (The command line looks in the parent directories first: [`find`].)
    pub fn discover(explicit: Option<&Path>, rules: &Rules, lint: &LintRules) -> Result<Config> {
        match explicit {
            Some(p) => Config::load(p, rules, lint),
            None if Path::new(DEFAULT_FILE).is_file() => {
                Config::load(Path::new(DEFAULT_FILE), rules, lint)
            }
            None => Ok(Config::default()),
        }
    }
}
