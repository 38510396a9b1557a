//! The offline fast path of `check --against`: both lockfiles are scanned, not built.
//!
//! Elements are kept as borrowed raw JSON text (`&str`, no allocation). Two
//! canonical lockfiles write an unchanged element as the same bytes, so an element
//! whose text is identical on both sides cannot hold a change and is never parsed;
//! only the rest (a few percent in a typical PR) is built into values, normalized,
//! and handed to the ordinary diff. Files that are not canonical simply take the slow
//! road for the elements whose bytes differ: the result is the same either way. The
//! two files are scanned on two threads.
//!
//! The formats that point at lockfile lines (SARIF, GitHub) take this road too: when a
//! file is canonical (its envelope and list layout, its element order, and the text of
//! every element that changed, checked here), the lines of an element are counted in
//! the file's own bytes, and the lines inside a changed element come from writing it
//! canonically. A file that is not canonical gives no line map, and the caller takes the
//! full parse, which warns that line numbers may be off.

//!
//! A live `check` takes a third road ([`Baseline`]): the baseline is scanned before
//! the capture, and each captured element is written canonically and compared with the
//! baseline element's bytes, so only the elements that differ are built from the
//! baseline (its whole `Value` tree is never made).
//!
//! The scan itself (raw elements, indexed and validated) and the line map counted in a
//! canonical file's bytes are the lockfile's (`lockfile::scan`, `lockfile::lines`); this
//! module decides which elements to build and diffs them.

use super::{diff_server, diff_with_budget, Change};
use crate::error::Result;
use crate::lockfile::scan::{build_element, scan, scan_pair, Scanned};
use crate::lockfile::{
    key_of, line_map_of_canonical, write_element, Element, Kind, LineMap, Lockfile, ServerInfo,
    Surface, Wanted,
};
use crate::rules::Rules;

/// What an offline check needs from the two files.
pub struct Compared {
    pub servers: (ServerInfo, ServerInfo),
    pub changes: Vec<Change>,
    /// Every element subject of either side (for JUnit).
    pub subjects: Vec<String>,
    /// Where the changed elements sit in each file (baseline, new), when lines were
    /// asked for and both files are canonical.
    pub lines: Option<(LineMap, LineMap)>,
}

/// Compare two lockfiles given as bytes.
pub fn compare_files(
    rules: &Rules,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
) -> Result<Compared> {
    compare(rules, a, b, budget, false)
}

/// [`compare_files`], with the line map of each file (`None` when either file is not
/// canonical: then only a full parse can count lines as the canonical text has them).
pub fn compare_files_with_lines(
    rules: &Rules,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
) -> Result<Compared> {
    compare(rules, a, b, budget, true)
}

fn compare(
    rules: &Rules,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
    with_lines: bool,
) -> Result<Compared> {
    let (sa, sb) = match scan_pair(a, b) {
        Ok(pair) => pair,
        // The full reader decides: its error, or (for what only the scan minds) the
        // full comparison.
        // (No line map: the caller's full parse counts lines, and warns.)
        Err(_) => return compare_full(rules, a, b, budget),
    };
    // The elements whose bytes differ (or that one side lacks), per kind and side.
    let mut differ: [Vec<Vec<&str>>; 2] = Default::default();
    let mut subjects = Vec::new();
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        let (ia, ib) = (&sa.index[k], &sb.index[k]);
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        for (name, raw) in ia {
            subjects.push(format!("{}:{name}", kind.word()));
            match ib.get(name) {
                Some(other) if other == raw => {} // the same bytes: no change
                _ => la.push(*raw),
            }
        }
        for (name, raw) in ib {
            match ia.get(name) {
                Some(other) if other == raw => {}
                Some(_) => lb.push(*raw),
                None => {
                    subjects.push(format!("{}:{name}", kind.word()));
                    lb.push(*raw);
                }
            }
        }
        differ[0].push(la);
        differ[1].push(lb);
    }
    // Built and normalised, each side on its own thread.
    let (pa, pb) = std::thread::scope(|s| {
        let ta = s.spawn(|| build_surface(&differ[0], a.1));
        let pb = build_surface(&differ[1], b.1);
        let pa = ta
            .join()
            .unwrap_or_else(|_| Err(crate::error::Error::new("building elements failed")));
        (pa, pb)
    });
    let (pa, pb) = (pa?, pb?);
    subjects.sort();
    let mut changes = diff_with_budget(rules, &pa, &pb, budget);
    changes.extend(diff_server(rules, &sa.server, &sb.server));
    let lines = match with_lines {
        // Each file's lines on its own thread, as the scans.
        true => {
            let wanted = wanted(&changes);
            std::thread::scope(|s| {
                let la = s.spawn(|| line_map_of_canonical(a.0, &sa, &pa, &wanted));
                let lb = line_map_of_canonical(b.0, &sb, &pb, &wanted);
                la.join().ok().flatten().zip(lb)
            })
        }
        false => None,
    };
    Ok(Compared {
        servers: (sa.server, sb.server),
        changes,
        subjects,
        lines,
    })
}

/// A live check's baseline, scanned: its bytes, and the elements as raw text.
pub struct Baseline<'a> {
    bytes: &'a [u8],
    origin: &'a str,
    side: Scanned<'a>,
}

/// Scan a live check's baseline. `None` when the scan does not read it (anything
/// unusual: a shape problem, a duplicate key, deep nesting), or when the file is not in
/// the canonical layout: the caller then reads it with the full reader, which gives the
/// error, or the full comparison. (Every element of a file laid out otherwise differs
/// in bytes from the capture's canonical text: built one by one beside a copy of the
/// capture, they would cost more memory than the full parse.)
pub fn scan_baseline<'a>(bytes: &'a [u8], origin: &'a str) -> Option<Baseline<'a>> {
    let side = scan(bytes, origin).ok().filter(|s| s.layout.is_some())?;
    Some(Baseline {
        bytes,
        origin,
        side,
    })
}

impl Baseline<'_> {
    /// Compare the baseline with a captured surface. Each captured element is written
    /// canonically and compared with the baseline element of the same key: equal bytes
    /// are the same element (the baseline is normalised text; the capture is normalised
    /// before it is written), so only elements whose bytes differ, or that one side
    /// lacks, are built and diffed. An element whose text is not canonical only costs
    /// a build: its bytes differ and the diff finds what really changed.
    ///
    /// With `with_lines`, the baseline's line map when it is canonical (the capture has
    /// no file, so its map is empty); `lines` is `None` when it is not. `Ok(None)` when
    /// the capture gives a key twice: the full comparison decides what that means.
    pub fn compare(
        &self,
        rules: &Rules,
        current: &Lockfile,
        budget: usize,
        with_lines: bool,
    ) -> Result<Option<Compared>> {
        let mut pa = Surface::default();
        let mut pb = Surface::default();
        let mut subjects = Vec::new();
        let mut text = String::new();
        for (k, kind) in Kind::ALL.into_iter().enumerate() {
            let index = &self.side.index[k];
            let mut la = Vec::new();
            let mut lb = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for element in current.surface.list(kind) {
                let key = key_of(element, kind.key_field());
                if !seen.insert(key) {
                    return Ok(None);
                }
                match index.get(key) {
                    Some(raw) => {
                        text.clear();
                        write_element(&mut text, element);
                        if text != *raw {
                            la.push(build_element(raw, self.origin, kind)?);
                            lb.push(element.clone());
                        }
                    }
                    None => {
                        subjects.push(format!("{}:{key}", kind.word()));
                        lb.push(element.clone());
                    }
                }
            }
            for (name, raw) in index {
                subjects.push(format!("{}:{name}", kind.word()));
                if !seen.contains(name.as_str()) {
                    la.push(build_element(raw, self.origin, kind)?);
                }
            }
            set_list(&mut pa, kind, la);
            set_list(&mut pb, kind, lb);
        }
        subjects.sort();
        let mut changes = diff_with_budget(rules, &pa, &pb, budget);
        changes.extend(diff_server(rules, &self.side.server, &current.server));
        let lines = match with_lines {
            true => line_map_of_canonical(self.bytes, &self.side, &pa, &wanted(&changes))
                .map(|base| (base, LineMap::default())),
            false => None,
        };
        Ok(Some(Compared {
            servers: (self.side.server.clone(), current.server.clone()),
            changes,
            subjects,
            lines,
        }))
    }
}

/// [`compare_files`] the slow way: both files read whole, as `check` does without
/// `--against`.
fn compare_full(
    rules: &Rules,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
) -> Result<Compared> {
    let la = Lockfile::parse(a.0, a.1)?;
    let lb = Lockfile::parse(b.0, b.1)?;
    let mut changes = diff_with_budget(rules, &la.surface, &lb.surface, budget);
    changes.extend(diff_server(rules, &la.server, &lb.server));
    let mut subjects = std::collections::BTreeSet::new();
    for surface in [&la.surface, &lb.surface] {
        for kind in Kind::ALL {
            for e in surface.list(kind) {
                subjects.insert(format!("{}:{}", kind.word(), key_of(e, kind.key_field())));
            }
        }
    }
    Ok(Compared {
        servers: (la.server, lb.server),
        changes,
        subjects: subjects.into_iter().collect(),
        lines: None,
    })
}

/// The places the changes point at, for a line map: only their values' lines are
/// counted inside the changed elements.
fn wanted(changes: &[Change]) -> Wanted {
    let mut wanted = Wanted::default();
    for c in changes {
        if let Some((kind, key)) = c
            .subject
            .split_once(':')
            .and_then(|(word, key)| Some((Kind::from_word(word)?, key)))
        {
            wanted.add(kind, key, c.path.as_deref());
        }
    }
    wanted
}

/// The elements of `lists` (per kind, as raw text) built into a surface.
fn build_surface(lists: &[Vec<&str>], origin: &str) -> Result<Surface> {
    let mut surface = Surface::default();
    for (kind, list) in Kind::ALL.into_iter().zip(lists) {
        let built = list
            .iter()
            .map(|raw| build_element(raw, origin, kind))
            .collect::<Result<Vec<_>>>()?;
        set_list(&mut surface, kind, built);
    }
    Ok(surface)
}

fn set_list(s: &mut Surface, kind: Kind, list: Vec<Element>) {
    match kind {
        Kind::Tool => s.tools = list,
        Kind::Resource => s.resources = list,
        Kind::Template => s.resource_templates = list,
        Kind::Prompt => s.prompts = list,
    }
}
