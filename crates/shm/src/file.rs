//! The snapshot's file: made unnamed and linked into place, in a directory
//! only its owner may change, locked by the agent that writes it.

use super::*;

/// The lock file of the snapshot at `path`: `<path>.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

/// The type of the filesystem holding `dir`: `Ok(name)` when its pages
/// live only in memory (`tmpfs`, `ramfs`), `Err(name)` for any other type
/// (its magic number when the name is not known here). A snapshot, view
/// files or a journal on a disk filesystem have their pages written back
/// every 30 s or so: I/O, and a write that waits for that writeback to
/// finish is one more wakeup.
pub fn memory_backed(dir: &Path) -> std::io::Result<Result<&'static str, String>> {
    let s = sys::statfs(dir)?;
    Ok(match s.f_type as u64 {
        0x0102_1994 => Ok("tmpfs"),
        0x8584_58f6 => Ok("ramfs"),
        0xef53 => Err("ext4".into()),
        0x5846_5342 => Err("xfs".into()),
        0x9123_683e => Err("btrfs".into()),
        0x794c_7630 => Err("overlay".into()),
        other => Err(format!("filesystem type {other:#x}")),
    })
}

/// Refuses a directory other users could write to: they could swap the
/// snapshot readers trust, or plant links where it is made.
pub(super) fn safe_dir(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    // SAFETY: geteuid and getegid cannot fail.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let mode = m.mode();
    let why = if m.uid() != uid && m.uid() != 0 {
        Some(format!(
            "owned by uid {}, neither this user nor root",
            m.uid()
        ))
    } else if mode & 0o002 != 0 {
        Some(format!("writable by every user (mode {:o})", mode & 0o7777))
    } else if mode & 0o020 != 0 && m.gid() != gid {
        Some(format!(
            "writable by group {} (mode {:o})",
            m.gid(),
            mode & 0o7777
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(Error::UnsafeDir {
            dir: dir.to_path_buf(),
            why,
        }),
        None => Ok(()),
    }
}

/// Takes the write lock on `f` without waiting; false when another process
/// holds it. A reader testing the lock (F_OFD_GETLK) never holds it, so it
/// cannot make a starting agent fail.
pub(super) fn take_lock(f: &File) -> io::Result<bool> {
    let mut fl: libc::flock = unsafe_zeroed_flock();
    fl.l_type = libc::F_WRLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    // SAFETY: a valid fd and flock struct.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &fl) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN | libc::EACCES) => Ok(false),
        _ => Err(e),
    }
}

/// Whether some process holds the write lock on `f`.
pub(super) fn lock_held(f: &File) -> io::Result<bool> {
    let mut fl: libc::flock = unsafe_zeroed_flock();
    fl.l_type = libc::F_WRLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    // SAFETY: a valid fd and flock struct, filled in by the kernel.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_GETLK, &mut fl) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fl.l_type != libc::F_UNLCK as libc::c_short)
}

pub(super) fn unsafe_zeroed_flock() -> libc::flock {
    // SAFETY: flock is plain integers; all zeroes is a valid value.
    unsafe { std::mem::zeroed() }
}

/// A file in `dir` with no name yet (`O_TMPFILE`); where the filesystem
/// lacks it, one under a random name created exclusively, never through a
/// link (the name is returned, to rename).
pub(super) fn unnamed_file(dir: &Path) -> io::Result<(File, Option<PathBuf>)> {
    match OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o644)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(dir)
    {
        Ok(f) => return Ok((f, None)),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {}
        Err(e) => return Err(e),
    }
    let name = dir.join(format!(".snapshot.{:016x}", sys::random_u64()?));
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&name)?;
    Ok((f, Some(name)))
}

/// Gives the unnamed `file` a random name in `dir` (linkat never follows
/// the new name) and renames that over `path`.
pub(super) fn link_into_place(file: &File, dir: &Path, path: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let cstr = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))
    };
    let from = cstr(Path::new(&format!("/proc/self/fd/{}", file.as_raw_fd())))?;
    for _ in 0..8 {
        let tmp = dir.join(format!(".snapshot.{:016x}", sys::random_u64()?));
        let to = cstr(&tmp)?;
        // SAFETY: valid NUL-terminated paths.
        let r = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if r != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EEXIST) {
                continue;
            }
            return Err(e);
        }
        return std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        });
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free temporary name",
    ))
}
