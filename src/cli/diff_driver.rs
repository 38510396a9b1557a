//! `git-diff-driver`: git's external diff protocol (`diff.<driver>.command`), so
//! `git diff` and `git log -p --ext-diff` show a lockfile's changes classified, not its
//! JSON hunks. git calls it with seven arguments: PATH OLD-FILE OLD-HEX OLD-MODE
//! NEW-FILE NEW-HEX NEW-MODE (`/dev/null` for a side that does not exist).

use std::path::PathBuf;

use termcolor::WriteColor;

use crate::config::Config;
use crate::diff;
use crate::error::{Error, Result};
use crate::lockfile::Lockfile;
use crate::policy::{self, Policy};
use crate::report::{self, Format, Report};
use crate::rules::Rules;

pub(super) fn run(
    rules: &Rules,
    config: &Config,
    args: &[PathBuf],
    out: &mut dyn WriteColor,
) -> Result<u8> {
    let [path, old, _, _, new, _, _] = args else {
        return Err(Error::new(format!(
            "git-diff-driver takes the seven arguments git gives an external diff (PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE), not {}; set it up with `git config diff.mcp-covenant.command \"mcp-covenant git-diff-driver\"` and `*.lock diff=mcp-covenant` in .gitattributes",
            args.len()
        )));
    };
    // The repository's file name: through the one redacting, escaping path.
    let name = crate::error::log(&path.display().to_string());
    let read = |p: &PathBuf, side: &str| -> Result<Vec<u8>> {
        if p.as_os_str() == "/dev/null" {
            return Ok(Lockfile::new(Default::default(), Default::default(), 0)
                .to_text()
                .into_bytes());
        }
        crate::io::read_input(p, "lockfile").map_err(|e| e.context(format!("{name} ({side})")))
    };
    let (a, b) = (read(old, "before")?, read(new, "after")?);
    let (na, nb) = (format!("a/{name}"), format!("b/{name}"));
    let compared = diff::lazy::compare_files(
        &Policy::new(rules, &config.severity),
        (&a[..], &na[..]),
        (&b[..], &nb[..]),
        diff::DEFAULT_WORK_BUDGET,
    )?;
    let versions = (compared.servers.0.version(), compared.servers.1.version());
    let outcome = policy::apply(
        rules,
        config,
        compared.changes,
        versions,
        crate::config::FailOn::Never,
    );
    let report = Report::new(rules, outcome, na);
    let io_err = |e: std::io::Error| Error::new(format!("cannot write the diff: {e}"));
    // The path is the repository's: one inert line, as a server's text is.
    let shown = crate::escape::text(&name);
    writeln!(out, "mcp-covenant diff a/{shown} b/{shown}").map_err(io_err)?;
    report::render(&report, Format::Human, out).map_err(io_err)?;
    out.flush().map_err(io_err)?;
    // git stops at an external diff that exits non-zero.
    Ok(0)
}
