//! Errors. Parsers return [`ParseError`] (no I/O, no path); the [`crate::Reader`]
//! wraps it into [`Error`] with the path it read.

use std::fmt;
use std::path::PathBuf;

/// What was wrong with a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// The field is absent (line too short, or a required line is missing).
    Missing,
    /// The field holds bytes that are not what the format allows.
    Invalid,
    /// The number does not fit the field's type.
    Overflow,
    /// The file does not end with a newline: it was cut short.
    Truncated,
    /// More entries than the parser accepts (see [`crate::limits`]).
    TooMany,
    /// A name longer than the kernel allows.
    TooLong,
}

impl ParseErrorKind {
    fn describe(self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Invalid => "not in the accepted format",
            Self::Overflow => "out of range for a 64-bit counter",
            Self::Truncated => "cut short (no newline at end of file)",
            Self::TooMany => "has more entries than the parser accepts",
            Self::TooLong => "longer than the kernel allows",
        }
    }
}

/// A parse failure: which line (1-based) and which field, and what was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub field: &'static str,
    pub kind: ParseErrorKind,
    /// What the field accepts, for the message.
    pub expected: &'static str,
}

impl ParseError {
    pub(crate) fn new(
        line: u32,
        field: &'static str,
        kind: ParseErrorKind,
        expected: &'static str,
    ) -> Self {
        Self {
            line,
            field,
            kind,
            expected,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: field `{}` is {}; expected {}",
            self.line,
            self.field,
            self.kind.describe(),
            self.expected
        )
    }
}

impl std::error::Error for ParseError {}

/// A reader failure. Variants tell the caller what to do: a `NotFound` source is
/// absent on this kernel (treat as "not available"), `PermissionDenied` needs
/// privileges, `Parse` and `TooLarge` mean the content is not what we accept.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: not found (this kernel or root does not provide it)")]
    NotFound { path: PathBuf },
    #[error("{path}: permission denied")]
    PermissionDenied { path: PathBuf },
    #[error("{path}: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: ParseError,
    },
    #[error("{path}: larger than the {limit} byte limit for one file")]
    TooLarge { path: PathBuf, limit: usize },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn from_io(path: &std::path::Path, e: std::io::Error) -> Self {
        let path = path.to_path_buf();
        match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound { path },
            std::io::ErrorKind::PermissionDenied => Error::PermissionDenied { path },
            _ => Error::Io { path, source: e },
        }
    }

    /// What kind of failure this is, for a caller that acts on it.
    pub fn kind(&self) -> sys::ErrorKind {
        use sys::ErrorKind as K;
        match self {
            Error::NotFound { .. } => K::Absent,
            Error::PermissionDenied { .. } => K::Denied,
            Error::Parse { .. } | Error::TooLarge { .. } => K::Malformed,
            Error::Io { source, .. } => K::of_io(source, K::Io),
        }
    }

    /// True when the source does not exist on this kernel or root.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }
}

impl From<Error> for sys::Error {
    fn from(e: Error) -> sys::Error {
        sys::Error::new(e.kind(), e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;
