use std::path::PathBuf;

/// A process-table failure. A process that exits during a scan is not an
/// error: it is left out.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: procfs::ParseError,
    },
    #[error("{path}: larger than the {limit} byte limit for one file")]
    TooLarge { path: PathBuf, limit: usize },
    #[error("BPF backend: {what}: {detail}")]
    Bpf { what: &'static str, detail: String },
    #[error("BPF record stream: {0}")]
    Decode(String),
    #[error("taskstats: {0}")]
    Taskstats(#[source] std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

/// What kind of failure an [`Error`] is, for a caller that acts on it
/// rather than shows it: the C library's `QS_ERR_*` finer codes, the
/// Python module's exceptions.
pub use sys::ErrorKind;

impl From<Error> for sys::Error {
    fn from(e: Error) -> sys::Error {
        sys::Error::new(e.kind(), e.to_string())
    }
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        let io = ErrorKind::of_io;
        match self {
            Error::Io { source, .. } => io(source, ErrorKind::Io),
            Error::Parse { .. } | Error::TooLarge { .. } | Error::Decode(_) => ErrorKind::Malformed,
            Error::Bpf { .. } => ErrorKind::Kernel,
            Error::Taskstats(e) => io(e, ErrorKind::Kernel),
        }
    }
}
