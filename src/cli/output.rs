//! What every command's output shares: several servers run one after the other, a
//! report written to `--output` with the human one on stdout, SARIF runs merged.

use std::path::Path;

use termcolor::{NoColor, WriteColor};

use crate::config::Server;
use crate::error::{Error, Result};

/// Run `each` on every server, printing a failure as `error: server NAME: ...` and
/// going on; the exit code is the worst.
pub(super) fn for_each_server<T>(
    servers: &[&Server],
    mut each: impl FnMut(&Server) -> Result<T>,
) -> (u8, Vec<(String, Option<T>)>) {
    let mut code = 0;
    let mut results = Vec::new();
    for s in servers {
        match each(s) {
            Ok(t) => results.push((s.name.clone(), Some(t))),
            Err(e) => {
                eprintln!("error: server {}: {e}", s.name);
                code = 2;
                results.push((s.name.clone(), None));
            }
        }
    }
    (code, results)
}

/// Write `render`'s output to --output (atomically, no colour) and the human form to
/// `out`, or `render` to `out` when there is no --output.
pub(super) fn emit(
    out: &mut dyn WriteColor,
    output: Option<&Path>,
    render: &dyn Fn(&mut dyn WriteColor) -> std::io::Result<()>,
    human: &dyn Fn(&mut dyn WriteColor) -> std::io::Result<()>,
) -> Result<()> {
    let io_err = |e: std::io::Error| Error::new(format!("cannot write the report: {e}"));
    match output {
        // `-o -`: the report is standard output.
        Some(path) if super::is_stdout(path) => render(out).map_err(io_err)?,
        Some(path) => {
            let mut buf = NoColor::new(Vec::new());
            render(&mut buf).map_err(io_err)?;
            crate::io::write_report(path, &buf.into_inner())?;
            human(out).map_err(io_err)?;
        }
        None => render(out).map_err(io_err)?,
    }
    out.flush().map_err(io_err)
}
