//! `snapshot`: capture a server into its lockfile, or (`--check`) say whether the
//! lockfile is what a capture would write.

use std::path::Path;

use termcolor::WriteColor;

use super::args::LiveSource;
use super::output::for_each_server;
use super::settings::SnapshotSettings;
use super::source::{capture, Live};
use crate::config::Config;
use crate::diff;
use crate::error::{Error, Result};
use crate::lockfile::Lockfile;
use crate::policy;
use crate::report::{self, Format, Report};
use crate::rules::{Rules, Severity};

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
        return snapshot_one(&Live::Cli, source, &output);
    };
    let heading = servers.len() > 1;
    let (mut code, codes) = for_each_server(servers, |s| {
        let output = settings.output(Some(s));
        if settings.check {
            let name = heading.then_some(s.name.as_str());
            snapshot_check(rules, config, &Live::Server(s), source, &output, name, out)
        } else {
            snapshot_one(&Live::Server(s), source, &output)
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
    let mut lock = capture(live, opts)?;
    let old = match crate::io::read_input(output, "lockfile") {
        Ok(bytes) => bytes,
        Err(_) if std::fs::symlink_metadata(output).is_err() => {
            eprintln!(
                "mcp-covenant: {} does not exist; create it with `mcp-covenant snapshot` and commit it",
                output.display()
            );
            return Ok(1);
        }
        Err(e) => return Err(e),
    };
    let previous = Lockfile::parse(&old, &output.display().to_string())?;
    // Writing keeps the file's capture time when nothing else changed.
    lock.captured_at_unix = previous.captured_at_unix;
    if lock.is_text_of(&old) {
        eprintln!("mcp-covenant: {} is up to date", output.display());
        return Ok(0);
    }
    eprintln!(
        "mcp-covenant: {} is not up to date with the server; run `mcp-covenant snapshot` and commit it",
        output.display()
    );
    let changes = diff::diff(rules, &previous.surface, &lock.surface);
    let versions = (
        previous.server.version.as_deref(),
        lock.server.version.as_deref(),
    );
    let outcome = policy::apply(rules, config, changes, versions, Some(Severity::Breaking));
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

fn snapshot_one(live: &Live<'_>, opts: &LiveSource, output: &Path) -> Result<u8> {
    let mut lock = capture(live, opts)?;
    lock.write(output)?;
    eprintln!(
        "mcp-covenant: wrote {} ({} tool(s), {} resource(s), {} template(s), {} prompt(s))",
        output.display(),
        lock.surface.tools.len(),
        lock.surface.resources.len(),
        lock.surface.resource_templates.len(),
        lock.surface.prompts.len()
    );
    Ok(0)
}
