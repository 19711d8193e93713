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
