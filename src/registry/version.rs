//! Ordering published versions, to pick a baseline: semver for npm, PEP 440 for PyPI
//! (the common forms: release segments, an epoch, a/b/rc pre-releases, post and dev
//! releases; a local part is refused). Pre-releases are skipped unless the declared
//! version is one.

use std::cmp::Ordering;

/// A package registry, whose versions order by its own grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Registry {
    Npm,
    Pypi,
}

impl Registry {
    pub fn word(self) -> &'static str {
        match self {
            Registry::Npm => "npm",
            Registry::Pypi => "pypi",
        }
    }
}

/// A semver version (`1.2.3`, `1.2.3-beta.1`, `+build` ignored in ordering).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Semver {
    core: [u64; 3],
    pre: Vec<Ident>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ident {
    // Numeric identifiers sort before alphanumeric ones.
    Num(u64),
    Alpha(String),
}

impl Semver {
    pub fn parse(s: &str) -> Option<Semver> {
        if s.len() > 256 {
            return None;
        }
        let (s, build) = match s.split_once('+') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let ident_ok =
            |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if let Some(b) = build {
            if !b.split('.').all(ident_ok) {
                return None;
            }
        }
        let (core, pre) = match s.split_once('-') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let nums: Vec<&str> = core.split('.').collect();
        if nums.len() != 3 {
            return None;
        }
        let mut c = [0u64; 3];
        for (i, n) in nums.iter().enumerate() {
            if n.is_empty()
                || !n.bytes().all(|b| b.is_ascii_digit())
                || (n.len() > 1 && n.starts_with('0'))
            {
                return None;
            }
            c[i] = n.parse().ok()?;
        }
        let mut pre_ids = Vec::new();
        if let Some(p) = pre {
            for id in p.split('.') {
                if !ident_ok(id) {
                    return None;
                }
                pre_ids.push(match id.bytes().all(|b| b.is_ascii_digit()) {
                    true => Ident::Num(id.parse().ok()?),
                    false => Ident::Alpha(id.to_string()),
                });
            }
        }
        Some(Semver {
            core: c,
            pre: pre_ids,
        })
    }

    pub fn is_pre(&self) -> bool {
        !self.pre.is_empty()
    }
}

impl PartialOrd for Semver {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Semver {
    fn cmp(&self, other: &Self) -> Ordering {
        self.core
            .cmp(&other.core)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.pre.cmp(&other.pre),
            })
    }
}

/// Epoch, release, pre-release, post-release, dev-release: compared in this order.
type Key<'a> = (u64, &'a [u64], (u8, u64, u64), (u8, u64), (u8, u64));

/// A PEP 440 version, ordered as the spec orders the common forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pep440 {
    epoch: u64,
    release: Vec<u64>,
    /// (kind, n): a=0, b=1, rc=2; `None` for a final release.
    pre: Option<(u8, u64)>,
    post: Option<u64>,
    dev: Option<u64>,
}

impl Pep440 {
    pub fn parse(s: &str) -> Option<Pep440> {
        let s = s.trim().to_ascii_lowercase();
        let s = s.strip_prefix('v').unwrap_or(&s);
        // A local part (`+ubuntu1`) is no public release: refused, as no index serves one.
        if s.is_empty() || s.len() > 64 || s.contains('+') {
            return None;
        }
        let (epoch, rest) = match s.split_once('!') {
            Some((e, r)) => (e.parse().ok()?, r),
            None => (0, s),
        };
        let b = rest.as_bytes();
        let mut i = 0;
        let mut release = Vec::new();
        loop {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if start == i {
                return None;
            }
            release.push(rest[start..i].parse().ok()?);
            if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
                i += 1;
            } else {
                break;
            }
        }
        let mut tail = &rest[i..];
        let num = |t: &mut &str| -> u64 {
            let t2 = t.trim_start_matches(['.', '-', '_']);
            let end = t2.find(|c: char| !c.is_ascii_digit()).unwrap_or(t2.len());
            let n = t2[..end].parse().unwrap_or(0);
            *t = &t2[end..];
            n
        };
        let mut pre = None;
        let mut post = None;
        let mut dev = None;
        let strip = |t: &str| t.trim_start_matches(['.', '-', '_']).to_string();
        let mut t = strip(tail);
        for (words, kind) in [
            (&["alpha", "a"][..], 0u8),
            (&["beta", "b"][..], 1),
            (&["preview", "pre", "rc", "c"][..], 2),
        ] {
            if let Some(w) = words.iter().find(|w| t.starts_with(**w)) {
                let mut r: &str = &t[w.len()..];
                pre = Some((kind, num(&mut r)));
                t = strip(r);
                break;
            }
        }
        for w in ["post", "rev", "r"] {
            if let Some(r) = t.strip_prefix(w) {
                let mut r = r;
                post = Some(num(&mut r));
                t = strip(r);
                break;
            }
        }
        if let Some(r) = t.strip_prefix("dev") {
            let mut r = r;
            dev = Some(num(&mut r));
            t = strip(r);
        }
        tail = &t;
        if !tail.is_empty() {
            return None;
        }
        while release.len() > 1 && release.last() == Some(&0) {
            release.pop();
        }
        Some(Pep440 {
            epoch,
            release,
            pre,
            post,
            dev,
        })
    }

    pub fn is_pre(&self) -> bool {
        self.pre.is_some() || self.dev.is_some()
    }

    /// The sort key: `1.0.dev0 < 1.0a1 < 1.0 < 1.0.post1`.
    fn key(&self) -> Key<'_> {
        let pre = match (self.pre, self.post, self.dev) {
            // A dev release of a final: before any pre-release.
            (None, None, Some(_)) => (0, 0, 0),
            (Some((k, n)), _, _) => (1, u64::from(k), n),
            (None, _, _) => (2, 0, 0),
        };
        let post = match self.post {
            None => (0, 0),
            Some(n) => (1, n),
        };
        let dev = match self.dev {
            None => (1, 0),
            Some(n) => (0, n),
        };
        (self.epoch, &self.release, pre, post, dev)
    }
}

impl PartialOrd for Pep440 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pep440 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// A version of either registry, for ordering.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Any {
    Npm(Semver),
    Pypi(Pep440),
}

fn parse(registry: Registry, v: &str) -> Option<Any> {
    match registry {
        Registry::Npm => Semver::parse(v).map(Any::Npm),
        Registry::Pypi => Pep440::parse(v).map(Any::Pypi),
    }
}

fn is_pre(v: &Any) -> bool {
    match v {
        Any::Npm(s) => s.is_pre(),
        Any::Pypi(p) => p.is_pre(),
    }
}

/// The newest release that is not a pre-release (or, when every release is one, the
/// newest).
pub fn newest(registry: Registry, releases: &[String]) -> Option<String> {
    let parsed: Vec<(Any, &String)> = releases
        .iter()
        .filter_map(|r| Some((parse(registry, r)?, r)))
        .collect();
    let finals = parsed.iter().filter(|(v, _)| !is_pre(v));
    finals
        .max_by(|a, b| a.0.cmp(&b.0))
        .or_else(|| parsed.iter().max_by(|a, b| a.0.cmp(&b.0)))
        .map(|(_, r)| (*r).clone())
}

/// The baseline for a project that declares `declared`: the highest release below it
/// (skipping pre-releases unless `declared` is one); when `declared` is not published,
/// the newest release (the same rule: nothing above it is, normally). `None` when no
/// release qualifies or `declared` does not parse.
pub fn baseline_for(registry: Registry, declared: &str, releases: &[String]) -> Option<String> {
    let d = parse(registry, declared)?;
    let allow_pre = is_pre(&d);
    let published = releases
        .iter()
        .any(|r| parse(registry, r).as_ref() == Some(&d));
    let candidates = releases.iter().filter_map(|r| {
        let v = parse(registry, r)?;
        (allow_pre || !is_pre(&v)).then_some((v, r))
    });
    if published {
        candidates
            .filter(|(v, _)| *v < d)
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, r)| r.clone())
    } else {
        // Unpublished: the newest release, which is normally below it; one above it
        // (a version declared lower than one already published) still is the contract
        // clients run. Below every release there is nothing to compare with:
        // [`below_every`] says so.
        let candidates: Vec<(Any, &String)> = candidates.collect();
        if !candidates.iter().any(|(v, _)| *v < d) {
            return None;
        }
        candidates
            .into_iter()
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, r)| r.clone())
    }
}

/// The lowest release, when `declared` is below every release (its baseline would be a
/// release above it: the version was never bumped, or it is another package's).
pub fn below_every(registry: Registry, declared: &str, releases: &[String]) -> Option<String> {
    let d = parse(registry, declared)?;
    let parsed: Vec<(Any, &String)> = releases
        .iter()
        .filter_map(|r| Some((parse(registry, r)?, r)))
        .collect();
    if parsed.is_empty() || parsed.iter().any(|(v, _)| *v <= d) {
        return None;
    }
    parsed
        .into_iter()
        .min_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, r)| r.clone())
}

/// The day after `YYYY-MM-DD`.
pub fn next_day(day: &str) -> Option<String> {
    let mut parts = day.splitn(3, '-').map(|p| p.parse::<u32>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d == 0 || d > days {
        return None;
    }
    let (y, m, d) = match (d == days, m == 12) {
        (false, _) => (y, m, d + 1),
        (true, false) => (y, m + 1, 1),
        (true, true) => (y + 1, 1, 1),
    };
    Some(format!("{y:04}-{m:02}-{d:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_next_day() {
        assert_eq!(next_day("2025-06-01").as_deref(), Some("2025-06-02"));
        assert_eq!(next_day("2024-02-28").as_deref(), Some("2024-02-29"));
        assert_eq!(next_day("2025-02-28").as_deref(), Some("2025-03-01"));
        assert_eq!(next_day("2025-12-31").as_deref(), Some("2026-01-01"));
        assert_eq!(next_day("2025-13-01"), None);
        assert_eq!(next_day("x"), None);
    }

    #[test]
    fn semver_orders() {
        let s = |x: &str| Semver::parse(x).unwrap();
        assert!(s("1.0.0-alpha") < s("1.0.0-alpha.1"));
        assert!(s("1.0.0-alpha.1") < s("1.0.0-alpha.beta"));
        assert!(s("1.0.0-beta.2") < s("1.0.0-beta.11"));
        assert!(s("1.0.0-rc.1") < s("1.0.0"));
        assert!(s("1.9.0") < s("1.10.0"));
        assert!(s("2025.9.25") < s("2025.11.25"));
        assert_eq!(s("1.0.0+a").cmp(&s("1.0.0+b")), Ordering::Equal);
        for bad in [
            "1.0",
            "01.0.0",
            "1.0.0-",
            "v1.0.0",
            "1.0.0-a..b",
            "^1.0.0",
            "-1.0.0",
        ] {
            assert!(Semver::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn pep440_orders() {
        let p = |x: &str| Pep440::parse(x).unwrap();
        let order = [
            "1.0.dev0",
            "1.0a1",
            "1.0a2.dev1",
            "1.0a2",
            "1.0b1",
            "1.0rc1",
            "1.0",
            "1.0.post1",
            "1.0.1",
            "1.1",
            "2026.1.26",
            "2026.10.19",
            "1!0.1",
        ];
        for w in order.windows(2) {
            assert!(p(w[0]) < p(w[1]), "{} < {}", w[0], w[1]);
        }
        assert_eq!(p("1.0"), p("1.0.0"));
        assert_eq!(p("1.0RC1"), p("1.0rc1"));
        assert!(p("1.0a1").is_pre() && p("1.0.dev3").is_pre() && !p("1.0.post1").is_pre());
        assert!(Pep440::parse("abc").is_none());
    }

    #[test]
    fn the_baseline_is_the_highest_release_below_the_declared_version() {
        let npm = v(&[
            "1.0.0",
            "1.4.0",
            "1.10.0",
            "2.0.0-beta.1",
            "2.0.0",
            "2.1.0-rc.1",
        ]);
        // Declared and published (just released): the one before, never itself.
        assert_eq!(
            baseline_for(Registry::Npm, "2.0.0", &npm).as_deref(),
            Some("1.10.0")
        );
        assert_eq!(
            baseline_for(Registry::Npm, "1.10.0", &npm).as_deref(),
            Some("1.4.0")
        );
        // Declared, unpublished: the newest release (pre-releases skipped).
        assert_eq!(
            baseline_for(Registry::Npm, "2.1.0", &npm).as_deref(),
            Some("2.0.0")
        );
        // A declared pre-release may compare with pre-releases.
        assert_eq!(
            baseline_for(Registry::Npm, "2.1.0-rc.2", &npm).as_deref(),
            Some("2.1.0-rc.1")
        );
        assert_eq!(baseline_for(Registry::Npm, "1.0.0", &npm), None);
        assert_eq!(baseline_for(Registry::Npm, "1.0", &npm), None);
        let pypi = v(&[
            "0.6.2",
            "2025.9.25",
            "2026.1.26",
            "2026.10.19",
            "2027.1.0a1",
        ]);
        assert_eq!(
            baseline_for(Registry::Pypi, "2026.10.19", &pypi).as_deref(),
            Some("2026.1.26")
        );
        assert_eq!(
            baseline_for(Registry::Pypi, "2026.11.0", &pypi).as_deref(),
            Some("2026.10.19")
        );
        // `1.0.0` declared where `1.0` is published is the same release.
        assert_eq!(
            baseline_for(Registry::Pypi, "2026.1.26.0", &pypi).as_deref(),
            Some("2025.9.25")
        );
        assert_eq!(newest(Registry::Pypi, &pypi).as_deref(), Some("2026.10.19"));
        // Declared below every release: no baseline (the newest is above it), and
        // `below_every` names the lowest.
        assert_eq!(baseline_for(Registry::Pypi, "0.1.0", &pypi), None);
        assert_eq!(
            below_every(Registry::Pypi, "0.1.0", &pypi).as_deref(),
            Some("0.6.2")
        );
        assert_eq!(below_every(Registry::Pypi, "0.6.2", &pypi), None);
        assert_eq!(below_every(Registry::Pypi, "1.0", &pypi), None);
        assert_eq!(
            newest(Registry::Npm, &v(&["1.0.0-a"])).as_deref(),
            Some("1.0.0-a")
        );
    }
}
