//! Who may read the history, and files opened so that no one else can
//! steer the agent: the store holds every process's command line, and the
//! agent usually runs as root.
//!
//! - The store directory is 0750 and its files 0640 with a group allowed
//!   to read (`adm` where it exists, or `[store] group`), else 0700/0600;
//!   with `/proc` hiding other users' processes (`hidepid`), the same rule
//!   as `/proc`: its `gid=` group, or the owner only.
//! - The directory and every directory above it must be owned by this user
//!   or root, and not writable by others (unless sticky): whoever could
//!   write there could plant links or FIFOs where the agent opens files.
//! - Files are opened without following links and without blocking, and
//!   anything but a regular file is refused by name.

use crate::Error;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Who may read the store besides its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The group allowed to read; `None`: the owner only.
    pub gid: Option<u32>,
    /// Why, in words (for the log and `report`).
    pub why: String,
}

impl Access {
    /// The owner only (0700/0600).
    pub fn private(why: &str) -> Access {
        Access {
            gid: None,
            why: why.into(),
        }
    }

    /// The access a store directory was given ([`prepare_dir`]): its
    /// group, when the group may read it.
    pub fn of_dir(dir: &Path) -> Access {
        let gid = std::fs::metadata(dir)
            .ok()
            .filter(|m| m.mode() & 0o050 == 0o050)
            .map(|m| m.gid());
        Access {
            gid,
            why: "as the store's directory".into(),
        }
    }

    pub fn dir_mode(&self) -> u32 {
        if self.gid.is_some() { 0o750 } else { 0o700 }
    }

    pub fn file_mode(&self) -> u32 {
        if self.gid.is_some() { 0o640 } else { 0o600 }
    }

    /// Who can read, e.g. `root and group adm`.
    pub fn readers(&self) -> String {
        let owner = user_name(euid()).unwrap_or_else(|| format!("uid {}", euid()));
        match self.gid {
            Some(g) => format!(
                "{owner} and group {}",
                group_name(g).unwrap_or_else(|| g.to_string())
            ),
            None => format!("{owner} only"),
        }
    }
}

/// How `/proc` shows other users' processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcView {
    Open,
    /// `hidepid`: only to their owners, and to the `gid=` group if any.
    Hidden {
        gid: Option<u32>,
    },
}

/// The access rule: `/proc`'s own when it hides processes, else `group`
/// (a name; `None`: `adm` where it exists, else the owner only).
pub fn decide(group: Option<&str>, proc: ProcView) -> Result<Access, Error> {
    match (proc, group) {
        (ProcView::Hidden { gid: Some(g) }, _) => Ok(Access {
            gid: Some(g),
            why: format!("/proc is mounted hidepid with gid={g}: the same readers"),
        }),
        (ProcView::Hidden { gid: None }, _) => Ok(Access::private(
            "/proc is mounted hidepid without gid=: the owner only, as there",
        )),
        (ProcView::Open, Some(name)) => match group_id(name) {
            Some(g) => Ok(Access {
                gid: Some(g),
                why: format!("[store] group = \"{name}\""),
            }),
            None => Err(Error::invalid(format!(
                "[store] group = \"{name}\": no such group; give an existing group's name"
            ))),
        },
        (ProcView::Open, None) => Ok(match group_id("adm") {
            Some(g) => Access {
                gid: Some(g),
                why: "group adm (the log readers' group) may read".into(),
            },
            None => Access::private("no group adm here: the owner only"),
        }),
    }
}

pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// A group's id by name.
pub fn group_id(name: &str) -> Option<u32> {
    let c = std::ffi::CString::new(name).ok()?;
    let mut grp: libc::group = unsafe_zeroed();
    let mut out: *mut libc::group = std::ptr::null_mut();
    let mut buf = vec![0 as libc::c_char; 16 << 10];
    // SAFETY: valid pointers; buf's length is passed.
    let r =
        unsafe { libc::getgrnam_r(c.as_ptr(), &mut grp, buf.as_mut_ptr(), buf.len(), &mut out) };
    (r == 0 && !out.is_null()).then_some(grp.gr_gid)
}

fn group_name(gid: u32) -> Option<String> {
    let mut grp: libc::group = unsafe_zeroed();
    let mut out: *mut libc::group = std::ptr::null_mut();
    let mut buf = vec![0 as libc::c_char; 16 << 10];
    // SAFETY: valid pointers; buf's length is passed.
    let r = unsafe { libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut out) };
    if r != 0 || out.is_null() {
        return None;
    }
    // SAFETY: gr_name points into buf, NUL-terminated.
    Some(
        unsafe { std::ffi::CStr::from_ptr(grp.gr_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The passwd entry of `uid`: (name, home).
pub fn passwd(uid: u32) -> Option<(String, PathBuf)> {
    let mut pw: libc::passwd = unsafe_zeroed();
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    let mut buf = vec![0 as libc::c_char; 16 << 10];
    // SAFETY: valid pointers; buf's length is passed.
    let r = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
    if r != 0 || out.is_null() {
        return None;
    }
    // SAFETY: both point into buf, NUL-terminated.
    let (name, dir) = unsafe {
        (
            std::ffi::CStr::from_ptr(pw.pw_name),
            std::ffi::CStr::from_ptr(pw.pw_dir),
        )
    };
    use std::os::unix::ffi::OsStrExt;
    Some((
        name.to_string_lossy().into_owned(),
        PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes())),
    ))
}

fn user_name(uid: u32) -> Option<String> {
    passwd(uid).map(|(n, _)| n)
}

fn unsafe_zeroed<T>() -> T {
    // SAFETY: only used for libc's plain C structs (integers and pointers),
    // for which all zeroes is a valid value.
    unsafe { std::mem::zeroed() }
}

/// Why a directory others may write to (or own) is refused; `None`: safe.
fn unsafe_because(m: &std::fs::Metadata) -> Option<String> {
    let me = euid();
    let mode = m.mode() & 0o7777;
    if m.uid() != me && m.uid() != 0 {
        Some(format!(
            "owned by uid {}, neither this user nor root",
            m.uid()
        ))
    } else if mode & 0o022 != 0 && mode & libc::S_ISVTX == 0 {
        let who = if mode & 0o002 != 0 {
            "every user"
        } else {
            "its group"
        };
        Some(format!(
            "writable by {who} (mode {mode:o}) without the sticky bit"
        ))
    } else {
        None
    }
}

/// Checks `dir` and every directory above it: owned by this user or root,
/// and not writable by others unless sticky. A store or journal anywhere
/// else could be swapped or planted by whoever may write there.
pub fn check_dir(dir: &Path) -> Result<(), Error> {
    let real = std::fs::canonicalize(dir).map_err(|e| Error::file(dir, e))?;
    let mut at = Some(real.as_path());
    while let Some(d) = at {
        let m = std::fs::metadata(d).map_err(|e| Error::file(d, e))?;
        if let Some(why) = unsafe_because(&m) {
            let which = if d == real {
                String::new()
            } else {
                format!(" (above {})", dir.display())
            };
            return Err(Error::invalid(format!(
                "{}{which} is {why}: another user could plant files where the agent opens them; give a directory only this user or root can write",
                d.display()
            )));
        }
        // In a sticky directory, only the owner can rename what it holds:
        // everything below must be ours or root's, checked on the way up.
        at = d.parent();
    }
    Ok(())
}

/// Makes `dir` (with its parents) if missing, brings its mode and the
/// modes of the files it holds to `access` when this user owns them, and
/// checks it ([`check_dir`]). Returns how many modes were tightened.
pub fn prepare_dir(dir: &Path, access: &Access) -> Result<usize, Error> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
    }
    match std::fs::DirBuilder::new()
        .mode(access.dir_mode())
        .create(dir)
    {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(Error::io(format!("cannot create {}", dir.display()), e)),
    }
    let m = std::fs::symlink_metadata(dir).map_err(|e| Error::file(dir, e))?;
    if m.file_type().is_symlink() {
        // Followed only when the link and its target pass the checks.
        let t = std::fs::metadata(dir).map_err(|e| Error::file(dir, e))?;
        if !t.is_dir() {
            return Err(Error::invalid(format!(
                "{}: not a directory",
                dir.display()
            )));
        }
    } else if !m.is_dir() {
        return Err(Error::invalid(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    let mut tightened = 0;
    let real = std::fs::canonicalize(dir).map_err(|e| Error::file(dir, e))?;
    if std::fs::metadata(&real).is_ok_and(|m| m.uid() == euid()) {
        tightened += tighten(&real, access.dir_mode(), access.gid);
        check_dir(dir)?;
        for e in std::fs::read_dir(&real).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                tightened += tighten(&e.path(), access.file_mode(), access.gid);
            }
        }
    } else {
        check_dir(dir)?;
    }
    Ok(tightened)
}

/// Sets `path`'s mode and group to these when they differ and this user
/// owns it (links are not followed); 1 when changed.
fn tighten(path: &Path, mode: u32, gid: Option<u32>) -> usize {
    let Ok(f) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_PATH)
        .open(path)
    else {
        return 0;
    };
    let Ok(m) = f.metadata() else { return 0 };
    if m.uid() != euid() || m.file_type().is_symlink() {
        return 0;
    }
    let want_gid = gid.unwrap_or(m.gid());
    if m.mode() & 0o7777 == mode && m.gid() == want_gid {
        return 0;
    }
    // fchmod and fchown refuse O_PATH descriptors; the /proc/self/fd link
    // names this very file, whatever its name now.
    let fd_path = format!("/proc/self/fd/{}", f.as_raw_fd());
    let mut changed = 0;
    if m.gid() != want_gid {
        let c = std::ffi::CString::new(fd_path.clone()).unwrap_or_default();
        // SAFETY: a NUL-terminated path; -1 keeps the owner.
        if unsafe { libc::chown(c.as_ptr(), u32::MAX, want_gid) } == 0 {
            changed = 1;
        }
    }
    if m.mode() & 0o7777 != mode {
        use std::os::unix::fs::PermissionsExt;
        if std::fs::set_permissions(&fd_path, std::fs::Permissions::from_mode(mode)).is_ok() {
            changed = 1;
        }
    }
    changed
}

/// Opens `path` without following a link and without blocking (a FIFO
/// never hangs the caller), and refuses anything but a regular file.
/// `create`: made with `mode` (and `gid`) when missing.
pub fn open_file(path: &Path, write: bool, create: Option<(u32, Option<u32>)>) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true)
        .write(write)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    if let Some((mode, _)) = create {
        o.create(true).mode(mode);
    }
    let f = o.open(path).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            io::Error::other("a symbolic link; refused")
        } else {
            e
        }
    })?;
    let m = f.metadata()?;
    if !m.file_type().is_file() {
        return Err(io::Error::other(format!(
            "not a regular file ({}); refused",
            kind_of(&m)
        )));
    }
    if let Some((mode, gid)) = create
        && m.uid() == euid()
        && m.len() == 0
    {
        // New (or empty): its group, and its mode whatever the umask.
        if let Some(g) = gid {
            // SAFETY: a valid fd; -1 keeps the owner.
            unsafe { libc::fchown(f.as_raw_fd(), u32::MAX, g) };
        }
        // SAFETY: a valid fd.
        unsafe { libc::fchmod(f.as_raw_fd(), mode) };
    }
    // Back to blocking I/O for a regular file.
    // SAFETY: a valid fd.
    unsafe {
        let fl = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(f.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
    }
    Ok(f)
}

/// The id of the store in `dir` (`store-id`, 16 hex digits), made when
/// missing (by the agent, which holds the store's lock); 0 when it can be
/// neither read nor made. A journal names it, so that a store removed and
/// made again at the same path is not taken for the one it belonged to.
pub fn store_id(dir: &Path, access: Option<&Access>) -> u64 {
    use std::io::Read;
    let path = dir.join("store-id");
    if let Ok(mut f) = open_file(&path, false, None) {
        let mut t = String::new();
        if f.read_to_string(&mut t).is_ok()
            && let Ok(id) = u64::from_str_radix(t.trim(), 16)
        {
            return id;
        }
    }
    let Some(access) = access else { return 0 };
    let Ok(id) = sys::random_u64().map(|r| r.max(1)) else {
        return 0;
    };
    match write_line(&path, access, &format!("{id:016x}")) {
        Ok(()) => id,
        Err(_) => 0,
    }
}

/// Writes `line` as the whole of the store's small file `path` (made with
/// `access`'s mode and group when missing; never through a link).
pub fn write_line(path: &Path, access: &Access, line: &str) -> io::Result<()> {
    use std::io::Write;
    let mut f = open_file(path, true, Some((access.file_mode(), access.gid)))?;
    f.set_len(0)?;
    writeln!(f, "{line}")
}

/// The metadata of `path` when it exists and this user may not read it.
pub fn denied(path: &Path) -> Option<std::fs::Metadata> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path.
    let r = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::R_OK, libc::AT_EACCESS) };
    if r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EACCES) {
        return None;
    }
    std::fs::metadata(path).ok()
}

/// One line for a user who may not read the history: who may, and why.
pub fn unreadable(path: &Path, m: &std::fs::Metadata) -> String {
    let owner = user_name(m.uid()).unwrap_or_else(|| format!("uid {}", m.uid()));
    let group = group_name(m.gid()).unwrap_or_else(|| m.gid().to_string());
    let mode = m.mode() & 0o7777;
    let who = if mode & 0o040 != 0 {
        format!("{owner} and group {group}")
    } else {
        format!("{owner} only")
    };
    format!(
        "{}: permission denied: the history holds every process's command line, so it is readable by {who} (mode {mode:o}); run as one of them (see [store] group)",
        path.display()
    )
}

/// Refuses `path` when it exists and is not a regular file (a link, a
/// FIFO, a device), before handing it to SQLite (which would follow or
/// block on it). Missing is fine.
pub fn check_regular(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) => Err(io::Error::other(format!(
            "not a regular file ({}); refused",
            kind_of(&m)
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn kind_of(m: &std::fs::Metadata) -> String {
    format!("a {}", sys::file::kind(m.file_type()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
    }

    #[test]
    fn a_store_dir_is_made_private_and_wider_modes_are_tightened() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("a/store");
        let only_me = Access::private("test");
        assert_eq!(prepare_dir(&store, &only_me), Ok(0));
        assert_eq!(mode(&store), 0o700);
        let f = store.join("2026-01-01.qsdb");
        std::fs::write(&f, b"x").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(prepare_dir(&store, &only_me), Ok(2));
        assert_eq!((mode(&store), mode(&f)), (0o700, 0o600));
        let group = Access {
            gid: Some(0),
            why: "test".into(),
        };
        assert_eq!(prepare_dir(&store, &group), Ok(2));
        assert_eq!((mode(&store), mode(&f)), (0o750, 0o640));
    }

    #[test]
    fn links_fifos_and_directories_are_refused_by_name_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_file(&fifo, false, None).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert!(
            check_regular(&fifo)
                .unwrap_err()
                .to_string()
                .contains("FIFO")
        );
        let target = d.path().join("target");
        std::fs::write(&target, b"").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = open_file(&link, true, Some((0o600, None))).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(check_regular(&link).is_err());
        assert!(check_regular(&d.path().join("missing")).is_ok());
        let made = open_file(&d.path().join("new"), true, Some((0o640, None))).unwrap();
        assert_eq!(made.metadata().unwrap().mode() & 0o7777, 0o640);
    }

    #[test]
    fn a_dir_others_may_write_or_own_is_refused_with_the_reason() {
        let d = tempfile::tempdir().unwrap();
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_dir(&open.join("..").join("open"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("writable by every user"), "{e}");
        let inner = open.join("store");
        std::fs::create_dir(&inner).unwrap();
        let e = check_dir(&inner).unwrap_err().to_string();
        assert!(e.contains("above"), "{e}");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(check_dir(&inner), Ok(()));
        if euid() == 0 {
            let c = std::ffi::CString::new(inner.to_str().unwrap()).unwrap();
            // SAFETY: a valid path.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
            let e = check_dir(&inner).unwrap_err().to_string();
            assert!(e.contains("owned by uid 65534"), "{e}");
            assert!(prepare_dir(&inner, &Access::private("test")).is_err());
        }
    }

    #[test]
    fn hidepid_decides_before_the_group() {
        let a = decide(Some("root"), ProcView::Hidden { gid: None }).unwrap();
        assert_eq!(a.gid, None);
        let a = decide(None, ProcView::Hidden { gid: Some(4) }).unwrap();
        assert_eq!(a.gid, Some(4));
        assert_eq!(decide(Some("root"), ProcView::Open).unwrap().gid, Some(0));
        let e = decide(Some("no-such-group-here"), ProcView::Open)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such group"), "{e}");
    }
}
