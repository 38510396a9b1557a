//! Standard output that a closed reader cannot turn into an error: once a write fails
//! with a broken pipe (`mcp-covenant check | head -1`), the rest of the report is
//! discarded and the command still exits with its verdict (0 or 1), not 2. Rust ignores
//! SIGPIPE, so the closed pipe arrives as that error; ripgrep treats it the same way.

use std::io::{self, ErrorKind, Write};

use termcolor::{ColorSpec, WriteColor};

pub struct PipeTolerant<W> {
    inner: W,
    closed: bool,
}

impl<W> PipeTolerant<W> {
    pub fn new(inner: W) -> Self {
        PipeTolerant {
            inner,
            closed: false,
        }
    }

    /// Run `op` unless the reader is gone; a broken pipe marks it gone and succeeds.
    fn guard<T>(&mut self, done: T, op: impl FnOnce(&mut W) -> io::Result<T>) -> io::Result<T> {
        if self.closed {
            return Ok(done);
        }
        match op(&mut self.inner) {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(done)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for PipeTolerant<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.guard(buf.len(), |w| w.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.guard((), |w| w.flush())
    }
}

impl<W: WriteColor> WriteColor for PipeTolerant<W> {
    fn supports_color(&self) -> bool {
        self.inner.supports_color()
    }

    fn set_color(&mut self, spec: &ColorSpec) -> io::Result<()> {
        self.guard((), |w| w.set_color(spec))
    }

    fn reset(&mut self) -> io::Result<()> {
        self.guard((), |w| w.reset())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader has gone away.
    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(ErrorKind::BrokenPipe.into())
        }
    }

    /// A writer that fails for another reason.
    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("disk full"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_broken_pipe_is_swallowed_and_nothing_else_is() {
        let mut w = PipeTolerant::new(Closed);
        assert!(w.write_all(b"report\n").is_ok());
        assert!(w.flush().is_ok());
        assert!(w.closed);
        let mut w = PipeTolerant::new(Full);
        assert!(w.write_all(b"report\n").is_err());
    }
}
