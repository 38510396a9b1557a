//! Where a change sits in a lockfile, for SARIF regions and GitHub annotations: the
//! element (or the deepest part of the change's path that exists) in the baseline, or
//! in the new lockfile for an addition found offline. Lines come from the canonical
//! text, never from guessing.

use std::path::Path;

use crate::diff::Change;
use crate::lockfile::{Kind, LineMap, Lockfile};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// Relative to the repository root (the working directory) when possible.
    pub uri: String,
    pub start: usize,
    pub end: usize,
}

/// A lockfile path as a SARIF `artifactLocation.uri`: relative, `/`-separated.
pub fn uri_for(path: &Path) -> String {
    let rel = match (path.is_absolute(), std::env::current_dir()) {
        (true, Ok(cwd)) => path.strip_prefix(&cwd).unwrap_or(path).to_path_buf(),
        _ => path.to_path_buf(),
    };
    let s = rel.to_string_lossy().replace('\\', "/");
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}

pub struct Files<'a> {
    pub baseline: (&'a Lockfile, String),
    /// The new lockfile, when the check compared against a file.
    pub current: Option<(&'a Lockfile, String)>,
}

/// One anchor per change, in order.
pub fn anchors(changes: &[Change], files: &Files<'_>) -> Vec<Anchor> {
    let base = files.baseline.0.line_map();
    let cur: Option<(LineMap, &str)> = files
        .current
        .as_ref()
        .map(|(lock, uri)| (lock.line_map(), uri.as_str()));
    changes
        .iter()
        .map(|c| {
            let (word, key) = c.subject.split_once(':').unwrap_or(("", ""));
            let Some(kind) = Kind::from_word(word) else {
                return Anchor {
                    uri: files.baseline.1.clone(),
                    start: 1,
                    end: 1,
                };
            };
            let path = c.path.as_deref();
            if let Some((start, end)) = base.find(kind, key, path) {
                return Anchor {
                    uri: files.baseline.1.clone(),
                    start,
                    end,
                };
            }
            if let Some((map, uri)) = &cur {
                if let Some((start, end)) = map.find(kind, key, path) {
                    return Anchor {
                        uri: uri.to_string(),
                        start,
                        end,
                    };
                }
            }
            // An addition found live: the list it joins, in the baseline.
            let line = base.lists.get(&kind).copied().unwrap_or(1);
            Anchor {
                uri: files.baseline.1.clone(),
                start: line,
                end: line,
            }
        })
        .collect()
}

/// Lines are computed from the canonical text: say so when the file on disk is not in
/// canonical form (hand-edited, or written by another tool), since lines may be off.
pub fn warn_if_not_canonical(path: &Path, lock: &Lockfile) {
    if let Ok(text) = std::fs::read(path) {
        if text != lock.to_text().as_bytes() {
            eprintln!(
                "warning: {} is not in canonical form, so report line numbers may be off; rewrite it with `mcp-covenant snapshot`",
                path.display()
            );
        }
    }
}
