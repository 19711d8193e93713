//! Reading kernel directories and files by descriptor: a directory opened
//! once, files opened beneath it with `openat` (one path component looked
//! up, not a whole path), directories listed with `getdents64` into one
//! reused buffer, and kernel-generated files read whole with one `pread` at
//! offset 0.

use std::ffi::CString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Opens a directory for `openat` and listing beneath it.
pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: c is NUL-terminated; open returns a new fd we own or -1.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `name` (one component, shorter than 255 bytes) beneath the
/// directory `dir`, close-on-exec and non-blocking besides `flags`.
pub fn open_at(dir: RawFd, name: &[u8], flags: i32) -> io::Result<OwnedFd> {
    let mut z = [0u8; 256];
    if name.len() >= z.len() || name.contains(&0) {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    z[..name.len()].copy_from_slice(name);
    // SAFETY: z is NUL-terminated; openat returns a new fd we own or -1.
    let fd = unsafe {
        libc::openat(
            dir,
            z.as_ptr().cast(),
            flags | libc::O_CLOEXEC | libc::O_NONBLOCK,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `d_type` of a directory entry that is a directory, and of one whose
/// filesystem does not say what it is.
pub const DT_DIR: u8 = libc::DT_DIR;
pub const DT_UNKNOWN: u8 = libc::DT_UNKNOWN;

/// Lists an open directory from its start with getdents64, calling `each`
/// with every entry's name and `d_type` ("." and ".." included).
pub fn entries(dirfd: RawFd, dents: &mut [u8], mut each: impl FnMut(&[u8], u8)) -> io::Result<()> {
    // SAFETY: rewinding a directory fd the caller owns.
    if unsafe { libc::lseek(dirfd, 0, libc::SEEK_SET) } < 0 {
        return Err(io::Error::last_os_error());
    }
    loop {
        // SAFETY: the kernel writes at most dents.len() bytes into dents.
        let n =
            unsafe { libc::syscall(libc::SYS_getdents64, dirfd, dents.as_mut_ptr(), dents.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(());
        }
        let mut off = 0usize;
        let n = n as usize;
        // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
        while off + 19 <= n {
            let reclen = u16::from_ne_bytes([dents[off + 16], dents[off + 17]]) as usize;
            if reclen == 0 || off + reclen > n {
                break;
            }
            let name = &dents[off + 19..off + reclen];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            each(name, dents[off + 18]);
            off += reclen;
        }
    }
}

/// Reads a whole kernel-generated file from offset 0 in one `pread`;
/// returns its length. Such a file (/proc/PID/stat, a cgroup's files) is
/// generated whole on each read at offset 0, so a read shorter than the
/// buffer is the whole file: no second call to see EOF (which, at an offset
/// other than the file position, would make the kernel generate the text
/// again). An empty buffer is first made `first` bytes; a full one is grown
/// up to `limit` and the read retried (EFBIG beyond).
pub fn pread_all(fd: RawFd, buf: &mut Vec<u8>, first: usize, limit: usize) -> io::Result<usize> {
    if buf.is_empty() {
        buf.resize(first.max(1), 0);
    }
    loop {
        // SAFETY: the destination range lies within buf.
        let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let n = n as usize;
        if n < buf.len() {
            return Ok(n);
        }
        if buf.len() >= limit {
            return Err(io::Error::from_raw_os_error(libc::EFBIG));
        }
        let grown = (buf.len() * 2).min(limit);
        buf.resize(grown, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_directory_is_listed_and_a_file_read_whole_beneath_it() {
        let d = std::env::temp_dir().join(format!("sys-dir-{}", std::process::id()));
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("f"), vec![b'x'; 10_000]).unwrap();
        let fd = open_dir(&d).unwrap();
        let mut names = Vec::new();
        let mut dents = vec![0u8; 64];
        entries(fd.as_raw_fd(), &mut dents, |n, t| {
            names.push((n.to_vec(), t == DT_DIR))
        })
        .unwrap();
        names.sort();
        assert_eq!(
            names,
            [
                (b".".to_vec(), true),
                (b"..".to_vec(), true),
                (b"f".to_vec(), false),
                (b"sub".to_vec(), true)
            ]
        );
        let f = open_at(fd.as_raw_fd(), b"f", libc::O_RDONLY).unwrap();
        let mut buf = Vec::new();
        assert_eq!(
            pread_all(f.as_raw_fd(), &mut buf, 16, 1 << 20).unwrap(),
            10_000
        );
        assert_eq!(
            pread_all(f.as_raw_fd(), &mut Vec::new(), 16, 4096)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EFBIG)
        );
        assert!(open_at(fd.as_raw_fd(), b"a/\0b", libc::O_RDONLY).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
