//! The failure the library crates report where they have no enum of their
//! own: what failed (a file, a call, a setting) and what kind of failure it
//! was, so that a caller acts on the kind and a person reads the rest.

use std::fmt;
use std::path::Path;

/// What kind of failure: the one thing a caller branches on. The C
/// library's `QS_ERR_*` codes and the Python module's exceptions are made
/// from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A file or directory that is not there (a root that does not exist,
    /// a history with no day files).
    Absent,
    /// Permission refused: another user's files, BPF without CAP_BPF.
    Denied,
    /// Content that could not be parsed, one over its size limit, a record
    /// stream or a database that does not decode.
    Malformed,
    /// The kernel refused a call: loading or running BPF, taskstats, a
    /// tracefs write.
    Kernel,
    /// A caller's argument or setting outside what is accepted; nothing was
    /// tried.
    Invalid,
    /// Held by another process: a store another agent records to, a
    /// journal or snapshot another agent writes.
    Busy,
    /// Any other failure: I/O, a thread that could not start or panicked.
    Io,
}

impl ErrorKind {
    /// The kind of an I/O error: absent and denied by their own kinds,
    /// `other` for the rest.
    pub fn of_io(e: &std::io::Error, other: ErrorKind) -> ErrorKind {
        match e.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::Absent,
            std::io::ErrorKind::PermissionDenied => ErrorKind::Denied,
            std::io::ErrorKind::AddrInUse => ErrorKind::Busy,
            _ => other,
        }
    }
}

/// A failure: its kind, what failed, the byte offset where malformed
/// content went wrong when known, and what was wrong, for a person. The
/// text is `what: detail`; the offset is for programs (a detail names the
/// line or the byte in the words its readers know).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// The file, call or setting that failed; empty when the detail says it.
    pub what: String,
    /// Where in `what` malformed content went wrong.
    pub offset: Option<u64>,
    pub detail: String,
}

impl Error {
    /// A failure of `kind`, with the whole message in `detail`.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Error {
        Error {
            kind,
            what: String::new(),
            offset: None,
            detail: detail.into(),
        }
    }

    /// A failed I/O call on `path`, its kind taken from the I/O error.
    pub fn file(path: &Path, e: std::io::Error) -> Error {
        Error::io(path.display().to_string(), e)
    }

    /// A failed I/O call `what` says (`cannot create /x`), its kind taken
    /// from the I/O error.
    pub fn io(what: impl Into<String>, e: std::io::Error) -> Error {
        Error {
            kind: ErrorKind::of_io(&e, ErrorKind::Io),
            what: what.into(),
            offset: None,
            detail: e.to_string(),
        }
    }

    /// A failed call to the kernel (`call` names it), its kind Kernel unless
    /// the error says absent or denied.
    pub fn kernel(call: impl Into<String>, e: std::io::Error) -> Error {
        Error {
            kind: ErrorKind::of_io(&e, ErrorKind::Kernel),
            what: call.into(),
            offset: None,
            detail: e.to_string(),
        }
    }

    /// Any other failure ([`ErrorKind::Io`]), `detail` saying what.
    pub fn other(detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::Io, detail)
    }

    /// A caller's argument or setting that is not accepted.
    pub fn invalid(detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::Invalid, detail)
    }

    /// Content of `what` that does not parse, at `offset` when known.
    pub fn malformed(
        what: impl Into<String>,
        offset: Option<u64>,
        detail: impl Into<String>,
    ) -> Error {
        Error {
            kind: ErrorKind::Malformed,
            what: what.into(),
            offset,
            detail: detail.into(),
        }
    }

    /// The same failure, with `what` prefixed by the context it happened in
    /// (`context: what: detail`).
    pub fn context(mut self, context: impl fmt::Display) -> Error {
        self.what = if self.what.is_empty() {
            context.to_string()
        } else {
            format!("{context}: {}", self.what)
        };
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.what.is_empty() {
            write!(f, "{}: ", self.what)?;
        }
        f.write_str(&self.detail)
    }
}

impl std::error::Error for Error {}

/// An I/O failure whose call the caller's message names, its kind from
/// the error.
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::new(ErrorKind::of_io(&e, ErrorKind::Io), e.to_string())
    }
}

/// Where a failure reaches a person (the CLI's messages, the agent's log),
/// its text.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_keeps_its_kind_and_names_its_file() {
        let e = Error::file(
            Path::new("/x/y"),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        assert_eq!(e.kind, ErrorKind::Absent);
        assert!(e.to_string().starts_with("/x/y: "), "{e}");
        let e = Error::kernel(
            "bpf(PROG_LOAD)",
            std::io::Error::from_raw_os_error(libc::EPERM),
        );
        assert_eq!(e.kind, ErrorKind::Denied);
        let e = Error::kernel(
            "bpf(PROG_LOAD)",
            std::io::Error::from_raw_os_error(libc::EINVAL),
        );
        assert_eq!(e.kind, ErrorKind::Kernel);
    }

    #[test]
    fn malformed_content_says_where() {
        let e = Error::malformed("a.prom", Some(17), "no value").context("textfile");
        assert_eq!(e.offset, Some(17));
        assert_eq!(e.to_string(), "textfile: a.prom: no value");
        assert_eq!(Error::invalid("--x: too big").to_string(), "--x: too big");
    }
}
