//! Reading a file a user named (a configuration, a baseline, a fixture)
//! without trusting what it is: opened non-blocking, so a FIFO with no
//! writer cannot hang the caller; refused unless it is a regular file; read
//! with a size cap, so `/dev/zero` or a huge file cannot grow memory.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}: is a {kind}; a regular file is accepted")]
    NotRegular { path: String, kind: &'static str },
    #[error("{path}: larger than {cap} bytes, the most accepted")]
    TooLarge { path: String, cap: u64 },
}

impl From<ReadError> for crate::Error {
    fn from(e: ReadError) -> crate::Error {
        use crate::ErrorKind as K;
        let kind = match &e {
            ReadError::Io { source, .. } => K::of_io(source, K::Io),
            ReadError::NotRegular { .. } => K::Invalid,
            ReadError::TooLarge { .. } => K::Malformed,
        };
        crate::Error::new(kind, e.to_string())
    }
}

/// What a file that is not a regular one is, in a word or two
/// ("directory", "FIFO", "symbolic link" ...), for a message refusing it.
pub fn kind(t: std::fs::FileType) -> &'static str {
    if t.is_symlink() {
        "symbolic link"
    } else if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Opens `path` for reading, non-blocking, and checks that it is a regular
/// file.
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    let name = || path.display().to_string();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(|source| ReadError::Io {
            path: name(),
            source,
        })?;
    let t = f
        .metadata()
        .map_err(|source| ReadError::Io {
            path: name(),
            source,
        })?
        .file_type();
    if !t.is_file() {
        return Err(ReadError::NotRegular {
            path: name(),
            kind: kind(t),
        });
    }
    Ok(f)
}

/// The whole of the regular file `path`, at most `cap` bytes.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let f = open_regular(path)?;
    let mut out = Vec::new();
    f.take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|source| ReadError::Io {
            path: path.display().to_string(),
            source,
        })?;
    if out.len() as u64 > cap {
        return Err(ReadError::TooLarge {
            path: path.display().to_string(),
            cap,
        });
    }
    Ok(out)
}

/// As [`read_capped`], as UTF-8 text.
pub fn read_text_capped(path: &Path, cap: u64) -> Result<String, ReadError> {
    let b = read_capped(path, cap)?;
    String::from_utf8(b).map_err(|_| ReadError::Io {
        path: path.display().to_string(),
        source: io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_and_oversized_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_capped(&fifo, 10).unwrap_err().to_string();
        assert!(e.contains("FIFO") && e.contains("regular file"), "{e}");
        let e = read_capped(Path::new("/dev/zero"), 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
        let e = read_capped(dir.path(), 10).unwrap_err().to_string();
        assert!(e.contains("directory"), "{e}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 11]).unwrap();
        let e = read_capped(&big, 10).unwrap_err().to_string();
        assert!(e.contains("larger than 10 bytes"), "{e}");
        assert_eq!(read_capped(&big, 11).unwrap().len(), 11);
        let e = read_capped(&dir.path().join("absent"), 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("absent") && e.contains("No such file"), "{e}");
    }
}
