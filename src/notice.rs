//! What the lower layers have to tell the user that is neither a report nor an error:
//! progress (`mcp-covenant: installing ...`), warnings, and lines of a server's or a
//! tool's own output. They hand each [`Notice`] to the [`Notices`] they were given; the
//! command line (src/cli) decides how it is printed (stderr, `-q`), and a test can
//! collect them instead. Nothing below `cli` prints.

use std::fmt;
use std::sync::{Arc, Mutex};

/// One thing to tell the user, without its prefix: the command line prints `Status` as
/// `mcp-covenant: {..}` (silenced by `-q`), `Warning` as `warning: {..}`, `Server` as
/// `server: {..}` and `Tool` as `  {..}`, each through `error::log` (secrets masked,
/// server text escaped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Progress: what is being done (installing a package, asking a registry).
    Status(String),
    /// Something that still works but should be looked at; never silenced.
    Warning(String),
    /// A line the server wrote to stderr.
    Server(String),
    /// A line of an installer's (npm, pip, uv) output, before the error it ends in.
    Tool(String),
}

/// Where notices go: shared by every thread of a capture (a server's stderr is read on
/// its own task).
#[derive(Clone)]
pub struct Notices(Arc<dyn Fn(Notice) + Send + Sync>);

impl Notices {
    /// Notices handed to `sink` as they come.
    pub fn new(sink: impl Fn(Notice) + Send + Sync + 'static) -> Notices {
        Notices(Arc::new(sink))
    }

    /// Notices kept in order, for a test to read.
    pub fn collect() -> (Notices, Arc<Mutex<Vec<Notice>>>) {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let into = kept.clone();
        let notices = Notices::new(move |n| {
            if let Ok(mut v) = into.lock() {
                v.push(n);
            }
        });
        (notices, kept)
    }

    pub fn send(&self, notice: Notice) {
        (self.0)(notice)
    }

    pub fn status(&self, line: impl Into<String>) {
        self.send(Notice::Status(line.into()))
    }

    pub fn warn(&self, line: impl Into<String>) {
        self.send(Notice::Warning(line.into()))
    }
}

impl fmt::Debug for Notices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Notices")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_arrive_in_order_from_any_thread() {
        let (notices, kept) = Notices::collect();
        notices.status("installing");
        let other = notices.clone();
        std::thread::spawn(move || other.send(Notice::Server("line".into())))
            .join()
            .unwrap();
        notices.warn("careful");
        assert_eq!(
            *kept.lock().unwrap(),
            [
                Notice::Status("installing".into()),
                Notice::Server("line".into()),
                Notice::Warning("careful".into()),
            ]
        );
    }
}
