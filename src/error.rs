//! The one error type: everything that stops the tool from doing its job (exit 2).
//!
//! Each error is a single line that says what went wrong and where (file, line, method),
//! and, where we can, what the user should do about it.

use std::fmt;

#[derive(Debug)]
pub struct Error {
    msg: String,
    kind: ErrorKind,
}

/// Whether the other side answered and said no, or something failed outright.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The tool could not do its job (I/O, timeout, a server that went away).
    Fatal,
    /// The server answered, with a JSON-RPC error or an HTTP error status. During
    /// protocol-era detection this is a signal, not a failure.
    Rejected,
    /// Nothing arrived before the deadline.
    Timeout,
    /// The server exited (its exit status is in the message), in a way a message we
    /// sent may have caused.
    Exited,
    /// The server crashed: a signal ended it, or it failed without reading what we
    /// sent, or with a Python traceback. Starting it again cannot help.
    Crashed,
    /// The server exited while the era probe waited for `server/discover` and
    /// `initialize` (some servers accept nothing before `initialize`).
    ExitedOnProbe,
}

impl Error {
    pub fn new(msg: impl Into<String>) -> Self {
        Error {
            msg: msg.into(),
            kind: ErrorKind::Fatal,
        }
    }

    pub fn rejected(msg: impl Into<String>) -> Self {
        Error {
            msg: msg.into(),
            kind: ErrorKind::Rejected,
        }
    }

    pub fn timeout(msg: impl Into<String>) -> Self {
        Error {
            msg: msg.into(),
            kind: ErrorKind::Timeout,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The same error, of another kind.
    pub fn with_kind(self, kind: ErrorKind) -> Self {
        Error { kind, ..self }
    }

    /// Prefix the message with more context ("reading a.lock: ...").
    pub fn context(self, ctx: impl fmt::Display) -> Self {
        Error {
            msg: format!("{ctx}: {}", self.msg),
            kind: self.kind,
        }
    }

    pub fn message(&self) -> &str {
        &self.msg
    }
}

/// A line for stderr (an error, a warning, the server's own stderr): registered
/// secrets masked ([`crate::redact`]), then every control, bidi and line-separator
/// character escaped ([`crate::escape::text`]).
pub fn log(s: &str) -> String {
    crate::escape::text(&crate::redact::secrets(s)).into_owned()
}

/// Shown as one line whatever went into it: secrets masked, control, bidi and line
/// separator characters escaped (a server's error text is part of many messages).
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&log(&self.msg))
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand: `bail!("...")` returns an `Error` from the current function.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::new(format!($($arg)*)))
    };
}
