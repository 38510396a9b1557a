//! Where a change sits in a lockfile, for SARIF regions and GitHub annotations: the
//! element (or the deepest part of the change's path that exists) in the baseline, or
//! in the new lockfile for an addition found offline. Lines come from the reader's line
//! maps (`lockfile::Raw::line_map`: the lines of the file itself), never from guessing.

use std::path::Path;

use crate::diff::Change;
use crate::lockfile::{LineMap, Lockfile};

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

/// One anchor per change, in order, from line maps already made: the baseline's, and
/// the new lockfile's when the check compared against a file.
pub fn anchors_in(
    changes: &[Change],
    base: (&LineMap, &str),
    cur: Option<(&LineMap, &str)>,
) -> Vec<Anchor> {
    let at = |uri: &str, (start, end): (usize, usize)| Anchor {
        uri: uri.to_string(),
        start,
        end,
    };
    changes
        .iter()
        .map(|c| {
            let Some((kind, key)) = c.subject.element_key() else {
                return at(base.1, (1, 1));
            };
            let path = c.path.as_ref();
            if let Some(span) = base.0.find(kind, key, path) {
                return at(base.1, span);
            }
            if let Some(span) = cur.and_then(|(map, _)| map.find(kind, key, path)) {
                return at(cur.map_or(base.1, |c| c.1), span);
            }
            // An addition found live: the list it joins, in the baseline.
            let line = base.0.lists.get(&kind).copied().unwrap_or(1);
            at(base.1, (line, line))
        })
        .collect()
}

/// Anchors for lint findings in the lockfile they came from (`--from`).
pub fn lint_anchors(
    lock: &Lockfile,
    path: &Path,
    findings: &[crate::lint::Finding],
) -> Vec<Anchor> {
    let map = lock.line_map();
    let uri = uri_for(path);
    findings
        .iter()
        .map(|f| {
            let (start, end) = f
                .subject
                .element_key()
                .and_then(|(kind, key)| map.find(kind, key, f.at.as_ref().or(f.path.as_ref())))
                .unwrap_or((1, 1));
            Anchor {
                uri: uri.clone(),
                start,
                end,
            }
        })
        .collect()
}
