//! `snapshot`: capture a server into its lockfile, or (`--check`) say whether the
//! lockfile is what a capture would write.

use std::path::Path;

use serde_json::Value;
use termcolor::WriteColor;

use super::args::LiveSource;
use super::output::for_each_server;
use super::settings::SnapshotSettings;
use super::source::{capture, snapshot_command, Live};
use crate::config::{Config, FailOn};
use crate::diff;
use crate::error::{Error, Result};
use crate::lockfile::{key_of, Element, Kind, Lockfile, Raw, Snapshot};
use crate::policy::{self, Policy};
use crate::report::{self, Format, Report};
use crate::rules::Rules;

pub(super) fn run(
    rules: &Rules,
    config: &Config,
    settings: SnapshotSettings<'_>,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let source = &settings.source;
    let Some(servers) = &settings.servers else {
        let output = settings.output(None);
        if settings.check {
            return snapshot_check(rules, config, &Live::Cli, source, &output, None, out);
        }
        return snapshot_one(&Live::Cli, source, &output, settings.repeat, out);
    };
    let heading = servers.len() > 1;
    let (mut code, codes) = for_each_server(servers, |s| {
        let output = settings.output(Some(s));
        if settings.check {
            let name = heading.then_some(s.name.as_str());
            snapshot_check(rules, config, &Live::Server(s), source, &output, name, out)
        } else {
            snapshot_one(&Live::Server(s), source, &output, settings.repeat, out)
        }
    });
    for (_, c) in codes {
        code = code.max(c.unwrap_or(2));
    }
    Ok(code)
}

/// `snapshot --check`: is `output` exactly what capturing `live` would write? Never
/// writes. The differences are the `check` report of the file against the capture.
fn snapshot_check(
    rules: &Rules,
    config: &Config,
    live: &Live<'_>,
    opts: &LiveSource,
    output: &Path,
    heading: Option<&str>,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    if super::is_stdout(output) {
        return Err(Error::new(
            "snapshot --check compares the server with a lockfile; `-o -` (standard output) names none: give the lockfile's path",
        ));
    }
    let mut lock = capture(live, opts)?;
    let old = match crate::io::read_input(output, "lockfile") {
        Ok(bytes) => bytes,
        Err(_) if std::fs::symlink_metadata(output).is_err() => {
            eprintln!(
                "mcp-covenant: {} does not exist; create it with `{}` and commit it",
                output.display(),
                snapshot_command(live, opts, output)
            );
            return Ok(1);
        }
        Err(e) => return Err(e),
    };
    // Read (every element checked) but not built: an up-to-date file is compared by its
    // bytes, and only a file that is not is built for the report.
    let previous = Raw::read(&old, &output.display().to_string(), true)?;
    // Writing keeps the file's capture time when nothing else changed.
    lock.captured_at_unix = previous.captured_at_unix;
    if lock.is_text_of(&old) {
        status!("mcp-covenant: {} is up to date", output.display());
        return Ok(0);
    }
    // A server that answers differently each time is not out of date but unstable: a
    // second capture tells the two apart.
    let mut second = capture(live, opts)?;
    second.captured_at_unix = lock.captured_at_unix;
    if second.server != lock.server || second.listing != lock.listing {
        let matches = match second.is_text_of(&old) {
            true => format!("; the second matches {}", output.display()),
            false => String::new(),
        };
        return Err(unstable(
            &[&lock, &second],
            &format!("two captures differ{matches}"),
            "cannot tell whether the lockfile is up to date",
        ));
    }
    eprintln!(
        "mcp-covenant: {} is not up to date with the server; run `{}` and commit it",
        output.display(),
        snapshot_command(live, opts, output)
    );
    let previous = previous.build()?;
    let policy = Policy::new(rules, &config.severity);
    let changes = diff::diff(&policy, &previous.surface, &lock.listing.build()?);
    let versions = (previous.server.version(), lock.server.version());
    let outcome = policy::apply(rules, config, changes, versions, FailOn::Breaking);
    let report = Report::new(rules, outcome, output.display().to_string());
    let io_err = |e: std::io::Error| Error::new(format!("cannot write the report: {e}"));
    if let Some(name) = heading {
        writeln!(out, "== server {name} ({})", output.display()).map_err(io_err)?;
    }
    if report.changes.is_empty() && report.ignored.is_empty() {
        writeln!(
            out,
            "no interface change: the file differs in form (server information, or not canonical)"
        )
        .map_err(io_err)?;
    } else {
        report::render(&report, Format::Human, out).map_err(io_err)?;
    }
    out.flush().map_err(io_err)?;
    Ok(1)
}

fn snapshot_one(
    live: &Live<'_>,
    opts: &LiveSource,
    output: &Path,
    repeat: u32,
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let mut lock = capture(live, opts)?;
    let mut others = Vec::new();
    for _ in 1..repeat {
        let again = capture(live, opts)?;
        if again.server != lock.server || again.listing != lock.listing {
            others.push(again);
        }
    }
    if !others.is_empty() {
        let all: Vec<&Snapshot> = std::iter::once(&lock).chain(&others).collect();
        return Err(unstable(
            &all,
            &format!(
                "{} of {repeat} captures differ from the first",
                others.len()
            ),
            &format!("nothing written to {}", output.display()),
        ));
    }
    if super::is_stdout(output) {
        // `-o -`: the lockfile's text on standard output, checked as a file's is.
        lock.validate("not writing the lockfile: the server's surface")?;
        let io_err = |e: std::io::Error| Error::new(format!("cannot write the lockfile: {e}"));
        out.write_all(lock.to_text().as_bytes()).map_err(io_err)?;
        out.flush().map_err(io_err)?;
        return Ok(0);
    }
    lock.write(output)?;
    status!(
        "mcp-covenant: wrote {} ({})",
        output.display(),
        lock.counts()
    );
    Ok(0)
}

/// The error for a server whose captures disagree: what moved between the first capture
/// and each other one, and what to do.
fn unstable(captures: &[&Snapshot], what: &str, consequence: &str) -> Error {
    let mut moved = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let built: Vec<Lockfile> = captures.iter().filter_map(|c| c.build().ok()).collect();
    if let Some((first, rest)) = built.split_first() {
        for other in rest {
            for path in moved_paths(first, other) {
                if seen.insert(path.clone()) {
                    moved.push(path);
                }
            }
        }
    }
    const SHOWN: usize = 8;
    let mut listed = moved
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if moved.len() > SHOWN {
        listed.push_str(&format!(" and {} more", moved.len() - SHOWN));
    }
    Error::new(format!(
        "the server is not deterministic: {what}, at {listed}; {consequence}. Make the server list things in a fixed order (a Python set's order changes with PYTHONHASHSEED, which mcp-covenant sets to 0 unless the environment sets it)"
    ))
}

/// Where two captures differ, as paths (`tools[search].inputSchema.properties.f.default`);
/// an array whose elements are the same in another order is marked `(order)`.
fn moved_paths(a: &Lockfile, b: &Lockfile) -> Vec<String> {
    let mut out = Vec::new();
    if a.server != b.server {
        out.push("server".to_string());
    }
    for kind in Kind::ALL {
        let key = kind.key_field();
        let theirs: std::collections::HashMap<&str, &Element> = b
            .surface
            .list(kind)
            .iter()
            .map(|e| (key_of(e, key), e))
            .collect();
        let ours: std::collections::HashSet<&str> = a
            .surface
            .list(kind)
            .iter()
            .map(|e| key_of(e, key))
            .collect();
        for element in a.surface.list(kind) {
            if out.len() >= MOVED_CAP {
                return out;
            }
            let name = key_of(element, key);
            let at = format!("{}[{name}]", kind.list_name());
            match theirs.get(name) {
                Some(other) => map_paths(element, other, &at, &mut out),
                None => out.push(format!("{at} (in one capture only)")),
            }
        }
        for name in theirs.keys().filter(|n| !ours.contains(*n)).take(MOVED_CAP) {
            out.push(format!(
                "{}[{name}] (in one capture only)",
                kind.list_name()
            ));
        }
    }
    out
}

/// The most paths one comparison of two captures collects.
const MOVED_CAP: usize = 100;

/// The paths under `at` where `a` and `b` differ, into `out` (at most [`MOVED_CAP`]).
fn value_paths(a: &Value, b: &Value, at: String, out: &mut Vec<String>) {
    if a == b || out.len() >= MOVED_CAP {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => map_paths(x, y, &at, out),
        // The order test is quadratic: only on arrays of a size people write.
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() && x.len() <= 1000 => {
            let mut rest: Vec<&Value> = y.iter().collect();
            let permutation = x.iter().all(|v| match rest.iter().position(|w| *w == v) {
                Some(i) => {
                    rest.swap_remove(i);
                    true
                }
                None => false,
            });
            match permutation {
                true => out.push(format!("{at} (order)")),
                false => {
                    for (i, (v, w)) in x.iter().zip(y).enumerate() {
                        value_paths(v, w, format!("{at}[{i}]"), out);
                    }
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                value_paths(v, w, format!("{at}[{i}]"), out);
            }
        }
        _ => out.push(at),
    }
}

fn map_paths(x: &Element, y: &Element, at: &str, out: &mut Vec<String>) {
    for (k, v) in x {
        match y.get(k) {
            Some(w) => value_paths(v, w, format!("{at}.{k}"), out),
            None => out.push(format!("{at}.{k}")),
        }
    }
    for k in y.keys().filter(|k| !x.contains_key(*k)) {
        out.push(format!("{at}.{k}"));
    }
}
