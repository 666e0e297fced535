//! The error type every notabene crate shares: one human-readable line, printed by the CLI as `notabene: <line>`.

use std::fmt;
use std::path::Path;

/// What kind of failure an [`Error`] is: adaptors map it (the API to an HTTP status, the CLI
/// to its exit code) without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorKind {
    /// The input is wrong (a flag, a field, a request body).
    Invalid,
    /// What the input names does not exist (a comment id, a page).
    NotFound,
    /// The input is right but the state refuses it (a held comment, a changed file, a store
    /// of a newer contract).
    Conflict,
    /// The input is over a size limit.
    TooLarge,
    /// Reading or writing a file failed.
    Io,
    /// Anything else.
    #[default]
    Other,
}

/// A user-facing failure. The message is one line saying what went wrong and, in
/// parentheses, where (a file, a field or a flag). Typed errors keep the "where" apart
/// ([`Error::field`]) so that each adaptor names it its own way (`--page`, `page`).
#[derive(Debug, Clone)]
pub struct Error {
    message: String,
    what_len: usize,
    kind: ErrorKind,
    field: Option<&'static str>,
    source: Option<std::sync::Arc<std::io::Error>>,
}

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        (&self.message, self.kind, self.field) == (&other.message, other.kind, other.field)
    }
}

impl Eq for Error {}

/// Result alias used throughout the notabene crates.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with the given one-line message (kind [`ErrorKind::Other`]).
    pub fn new(message: impl Into<String>) -> Self {
        let message: String = message.into();
        // Keep the one-line promise even when an underlying error spans lines.
        let message = message.replace(['\n', '\r'], " ");
        Error {
            what_len: message.len(),
            message,
            kind: ErrorKind::Other,
            field: None,
            source: None,
        }
    }

    /// A typed error: `what` went wrong with input `field` (rendered `what (field)`).
    pub fn of(kind: ErrorKind, what: impl Into<String>, field: &'static str) -> Self {
        let what = what.into().replace(['\n', '\r'], " ");
        Error {
            what_len: what.len(),
            message: format!("{what} ({field})"),
            kind,
            field: Some(field),
            source: None,
        }
    }

    /// The same error with another kind.
    pub fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// An I/O failure on `path`: `<what>: <io error> (<path>)`.
    pub fn io(what: &str, path: &Path, err: std::io::Error) -> Self {
        let mut e = Error::new(format!("{what}: {err} ({})", path.display()));
        e.kind = ErrorKind::Io;
        e.source = Some(std::sync::Arc::new(err));
        e
    }

    /// The message without the `notabene: ` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What went wrong, without the input it names (the whole message when untyped).
    pub fn what(&self) -> &str {
        &self.message[..self.what_len]
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The input a typed error names (a field of the operation's request).
    pub fn field(&self) -> Option<&'static str> {
        self.field
    }

    /// The message with the field named as `name` names it (`page` → `--page`).
    pub fn naming(&self, name: impl Fn(&str) -> String) -> String {
        match self.field {
            Some(f) => format!("{} ({})", self.what(), name(f)),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Shorthand for `Err(Error::new(format!(...)))`.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::new(format!($($arg)*)))
    };
}
