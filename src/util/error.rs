//! The crate's error type: one human-readable line, printed by the CLI as `notabene: <line>`.
//! Part of layer 0 (shared helpers); may call the standard library only.

use std::fmt;
use std::path::Path;

/// A user-facing failure. The message is one line saying what went wrong and, in
/// parentheses, where (a file, a field or a flag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with the given one-line message.
    pub fn new(message: impl Into<String>) -> Self {
        let message: String = message.into();
        // Keep the one-line promise even when an underlying error spans lines.
        let message = message.replace(['\n', '\r'], " ");
        Error { message }
    }

    /// An I/O failure on `path`: `<what>: <io error> (<path>)`.
    pub fn io(what: &str, path: &Path, err: std::io::Error) -> Self {
        Error::new(format!("{what}: {err} ({})", path.display()))
    }

    /// The message without the `notabene: ` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Shorthand for `Err(Error::new(format!(...)))`.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::new(format!($($arg)*)))
    };
}
