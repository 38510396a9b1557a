//! Comparing with a lockfile without building what did not change. The reader
//! (`lockfile::Raw`) reads a file as its envelope and each element's text, every element
//! checked as it is read; two canonical lockfiles write an unchanged element as the
//! same bytes, so an element whose text is identical on both sides cannot hold a change
//! and is never built. Only the rest (a few percent in a typical pull request) is built
//! into values, normalised, and handed to the ordinary diff. An element that is not
//! written canonically only costs a build: its bytes differ, and the diff finds what
//! really changed.
//!
//! Two paths: two files ([`compare_files`]: the baseline read in one pass, the other
//! placed beside it, see `lockfile::Raw::read_pair`), and a live check
//! ([`Baseline`]): the baseline is read before the capture, and each captured element is
//! written canonically and compared with the baseline element's bytes.
//!
//! The formats that point at lines (SARIF, GitHub) get each file's line map from the
//! same reading (`Raw::line_map`): an element's lines in the file, and the lines inside
//! a changed element from the writer's own span tracking.

use super::surface::diff_recorded;
use super::{diff_server, Change, Classify, Subject};
use crate::error::{Error, Result};
use std::collections::BTreeMap;

use crate::lockfile::{
    Element, Kind, LineMap, Raw, RawElement, ServerInfo, Snapshot, Surface, Wanted,
};

/// What an offline check needs from the two files.
pub struct Compared {
    pub servers: (ServerInfo, ServerInfo),
    pub changes: Vec<Change>,
    /// Every element subject of either side (for JUnit).
    pub subjects: Vec<String>,
    /// Where the changed elements sit in each file (baseline, new), when lines were
    /// asked for (a live check's capture has no file: its map is empty).
    pub lines: Option<(LineMap, LineMap)>,
}

/// Compare two lockfiles given as bytes.
pub fn compare_files(
    rules: &dyn Classify,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
) -> Result<Compared> {
    compare(rules, a, b, budget, false)
}

/// [`compare_files`], with the line map of each file.
pub fn compare_files_with_lines(
    rules: &dyn Classify,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
) -> Result<Compared> {
    compare(rules, a, b, budget, true)
}

/// Two lockfiles given as bytes of their own, compared as [`compare_files`] does
/// (with `with_lines`, as [`compare_files_with_lines`]). Without line maps, the bytes
/// are dropped once the elements that differ are built: a file can be many times the
/// elements that differ in it, and nothing after reads it.
pub fn compare_owned_files(
    rules: &dyn Classify,
    a: (Vec<u8>, &str),
    b: (Vec<u8>, &str),
    budget: usize,
    with_lines: bool,
) -> Result<Compared> {
    if with_lines {
        return compare(rules, (&a.0, a.1), (&b.0, b.1), budget, true);
    }
    let (servers, pa, pb, subjects) = {
        let built = build_pair((&a.0, a.1), (&b.0, b.1))?;
        let servers = (built.ra.server, built.rb.server);
        (servers, built.pa, built.pb, built.subjects)
    };
    drop((a, b));
    let changes = diff_pair(rules, &pa, &pb, &servers, budget);
    Ok(Compared {
        servers,
        changes,
        subjects,
        lines: None,
    })
}

fn compare(
    rules: &dyn Classify,
    a: (&[u8], &str),
    b: (&[u8], &str),
    budget: usize,
    with_lines: bool,
) -> Result<Compared> {
    let Built {
        ra,
        rb,
        pa,
        pb,
        subjects,
    } = build_pair(a, b)?;
    let servers = (ra.server.clone(), rb.server.clone());
    let changes = diff_pair(rules, &pa, &pb, &servers, budget);
    let lines = with_lines.then(|| {
        let wanted = wanted(&changes);
        std::thread::scope(|s| {
            let la = s.spawn(|| ra.line_map(&pa, &wanted));
            let lb = rb.line_map(&pb, &wanted);
            (la.join().unwrap_or_default(), lb)
        })
    });
    Ok(Compared {
        servers,
        changes,
        subjects,
        lines,
    })
}

/// Two files read, and the elements whose bytes differ built.
struct Built<'a> {
    ra: Raw<'a>,
    rb: Raw<'a>,
    pa: Surface,
    pb: Surface,
    /// Every element subject of either side, sorted.
    subjects: Vec<String>,
}

fn build_pair<'a>(a: (&'a [u8], &str), b: (&'a [u8], &str)) -> Result<Built<'a>> {
    let (ra, rb) = Raw::read_pair(a, b)?;
    let ia = ra.index();
    // The elements whose bytes differ (or that one side lacks), per kind and side. An
    // element the reader found `shared` has the baseline element's bytes: no change,
    // and no second comparison of the bytes.
    let mut differ: [Vec<Vec<&str>>; 2] = Default::default();
    let mut subjects = Vec::new();
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        let ia = &ia[k];
        let ib: BTreeMap<&str, &RawElement> =
            rb.lists[k].iter().map(|e| (e.key.as_ref(), e)).collect();
        let same =
            |name: &str, text: &str| ib.get(name).is_some_and(|e| e.shared || e.text == text);
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        for (name, text) in ia {
            subjects.push(Subject::element(kind, name).to_string());
            if !same(name, text) {
                la.push(*text);
            }
        }
        for (name, e) in &ib {
            match ia.get(name) {
                Some(text) if same(name, text) => {}
                Some(_) => lb.push(e.text),
                None => {
                    subjects.push(Subject::element(kind, name).to_string());
                    lb.push(e.text);
                }
            }
        }
        differ[0].push(la);
        differ[1].push(lb);
    }
    // Built and normalised, each side on its own thread.
    let (pa, pb) = std::thread::scope(|s| {
        let ta = s.spawn(|| build_surface(&ra, &differ[0]));
        let pb = build_surface(&rb, &differ[1]);
        let pa = ta
            .join()
            .unwrap_or_else(|_| Err(Error::new("building elements failed")));
        (pa, pb)
    });
    let (pa, pb) = (pa?, pb?);
    subjects.sort();
    Ok(Built {
        ra,
        rb,
        pa,
        pb,
        subjects,
    })
}

/// The changes between the elements built of two files, and between their servers.
fn diff_pair(
    rules: &dyn Classify,
    pa: &Surface,
    pb: &Surface,
    servers: &(ServerInfo, ServerInfo),
    budget: usize,
) -> Vec<Change> {
    // Whether the baseline stores `_meta` is a property of the whole file, not of the
    // elements built.
    let mut changes = diff_recorded(rules, pa, pb, budget);
    changes.extend(diff_server(rules, &servers.0, &servers.1));
    changes
}

/// A live check's baseline, read (and so found readable) before the capture.
pub struct Baseline<'a> {
    raw: Raw<'a>,
}

/// Read a live check's baseline.
pub fn read_baseline<'a>(bytes: &'a [u8], origin: &str) -> Result<Baseline<'a>> {
    Ok(Baseline {
        raw: Raw::read(bytes, origin, true)?,
    })
}

impl Baseline<'_> {
    /// Compare the baseline with a captured surface. Each captured element is written
    /// canonically and compared with the baseline element of the same key: equal bytes
    /// are the same element (the baseline is normalised text; the capture is normalised
    /// before it is written), so only elements whose bytes differ, or that one side
    /// lacks, are built and diffed. A capture that gives a key twice is compared whole
    /// (every element of both sides built): the diff decides what that means.
    ///
    /// With `with_lines`, the baseline's line map (the capture has no file: its map is
    /// empty).
    pub fn compare(
        &self,
        rules: &dyn Classify,
        current: &Snapshot,
        budget: usize,
        with_lines: bool,
    ) -> Result<Compared> {
        let repeated = Kind::ALL.into_iter().any(|kind| {
            let mut seen = std::collections::HashSet::new();
            !current
                .listing
                .list(kind)
                .iter()
                .all(|e| seen.insert(&e.key))
        });
        let index = self.raw.index();
        let mut pa = Surface::default();
        let mut pb = Surface::default();
        let mut subjects = std::collections::BTreeSet::new();
        for (k, kind) in Kind::ALL.into_iter().enumerate() {
            let index = &index[k];
            let (mut la, mut lb) = (Vec::new(), Vec::new());
            // The keys whose element is the same bytes on both sides.
            let mut same = std::collections::HashSet::new();
            for entry in current.listing.list(kind) {
                let key = &*entry.key;
                subjects.insert(Subject::element(kind, key).to_string());
                let unchanged = !repeated && index.get(key).is_some_and(|t| entry.indents_to(t));
                match unchanged {
                    true => drop(same.insert(key)),
                    false => lb.push(entry.build(kind)?),
                }
            }
            for (name, raw) in index {
                subjects.insert(Subject::element(kind, name).to_string());
                if !same.contains(name) {
                    la.push(self.raw.build_element(raw, kind)?);
                }
            }
            set_list(&mut pa, kind, la);
            set_list(&mut pb, kind, lb);
        }
        let mut changes = diff_recorded(rules, &pa, &pb, budget);
        changes.extend(diff_server(rules, &self.raw.server, &current.server));
        let lines = with_lines.then(|| {
            (
                self.raw.line_map(&pa, &wanted(&changes)),
                LineMap::default(),
            )
        });
        Ok(Compared {
            servers: (self.raw.server.clone(), current.server.clone()),
            changes,
            subjects: subjects.into_iter().collect(),
            lines,
        })
    }
}

/// The places the changes point at, for a line map: only their values' lines are
/// counted inside the changed elements.
fn wanted(changes: &[Change]) -> Wanted {
    let mut wanted = Wanted::default();
    for c in changes {
        if let Some((kind, key)) = c.subject.element_key() {
            wanted.add(kind, key, c.path.as_ref());
        }
    }
    wanted
}

/// The elements of `lists` (per kind, as text of `raw`) built into a surface.
fn build_surface(raw: &Raw<'_>, lists: &[Vec<&str>]) -> Result<Surface> {
    let mut surface = Surface::default();
    for (kind, list) in Kind::ALL.into_iter().zip(lists) {
        let built = list
            .iter()
            .map(|text| raw.build_element(text, kind))
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
