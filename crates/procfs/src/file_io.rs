//! Opening and size-limit errors shared by the file reader and the
//! gatherer: the one place both take them from.

use std::fs::File;
use std::path::Path;

use crate::error::Error;

/// Marker error for a file above the size limit.
#[derive(Debug)]
pub(crate) struct TooLarge;
impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("file too large")
    }
}
impl std::error::Error for TooLarge {}

pub(crate) fn too_large_or_io(path: &Path, e: std::io::Error, limit: usize) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<TooLarge>()) {
        Error::TooLarge {
            path: path.to_path_buf(),
            limit,
        }
    } else {
        Error::from_io(path, e)
    }
}

/// Opens for reading without blocking: a FIFO planted in a tree given as a
/// root reads as empty instead of hanging the reader (kernel files ignore
/// the flag).
pub(crate) fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}
