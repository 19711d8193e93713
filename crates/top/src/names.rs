//! Names for numbers the table holds: user names for uids, cgroup paths
//! for cgroup ids. Each is looked up once and kept.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// User names by uid (`getpwuid_r`, so NSS sources count); a uid without
/// a name shows as its number.
#[derive(Default)]
pub struct Users {
    names: HashMap<u32, String>,
}

impl Users {
    pub fn name(&mut self, uid: u32) -> &str {
        self.names.entry(uid).or_insert_with(|| lookup_user(uid))
    }

    /// The name of `uid` when it was looked up ([`Users::name`]).
    pub fn known(&self, uid: u32) -> Option<&str> {
        self.names.get(&uid).map(String::as_str)
    }

    /// The uid for a name, or a number given as is.
    pub fn uid_of(&mut self, name: &str) -> Option<u32> {
        if let Ok(n) = name.parse() {
            return Some(n);
        }
        let c = std::ffi::CString::new(name).ok()?;
        let mut pw: libc::passwd = zeroed_passwd();
        let mut buf = vec![0 as libc::c_char; 16 * 1024];
        let mut out: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call; buf outlives it.
        let r =
            unsafe { libc::getpwnam_r(c.as_ptr(), &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
        (r == 0 && !out.is_null()).then_some(pw.pw_uid)
    }
}

fn zeroed_passwd() -> libc::passwd {
    // SAFETY: passwd is plain data (integers and pointers); all-zero is a
    // valid value that getpw*_r overwrites.
    unsafe { std::mem::zeroed() }
}

fn lookup_user(uid: u32) -> String {
    let mut pw = zeroed_passwd();
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives it.
    let r = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
    if r == 0 && !out.is_null() && !pw.pw_name.is_null() {
        // SAFETY: getpwuid_r succeeded: pw_name is a NUL-terminated string in buf.
        let name = unsafe { std::ffi::CStr::from_ptr(pw.pw_name) };
        return name.to_string_lossy().into_owned();
    }
    uid.to_string()
}

/// cgroup v2 paths by id (the inode number of the cgroup's directory),
/// from a walk of the cgroup2 mount. An id not found makes a new walk, at
/// most every ten seconds.
pub struct Cgroups {
    root: PathBuf,
    paths: HashMap<u64, String>,
    walked: Option<Instant>,
}

const REWALK: Duration = Duration::from_secs(10);
/// Directories walked at most (a machine with more shows ids for the rest).
const MAX_DIRS: usize = 100_000;

impl Cgroups {
    pub fn new(sys_root: &Path) -> Cgroups {
        Cgroups {
            root: sys_root.join("fs/cgroup"),
            paths: HashMap::new(),
            walked: None,
        }
    }

    /// The path of `id` when a walk found it ([`Cgroups::path`]).
    pub fn known(&self, id: u64) -> Option<&str> {
        self.paths.get(&id).map(String::as_str)
    }

    pub fn path(&mut self, id: u64) -> String {
        if let Some(p) = self.paths.get(&id) {
            return p.clone();
        }
        if self.walked.is_none_or(|t| t.elapsed() >= REWALK) {
            self.walk();
            if let Some(p) = self.paths.get(&id) {
                return p.clone();
            }
        }
        id.to_string()
    }

    fn walk(&mut self) {
        use std::os::unix::fs::MetadataExt;
        self.walked = Some(Instant::now());
        self.paths.clear();
        let mut stack = vec![(self.root.clone(), String::from("/"))];
        while let Some((dir, name)) = stack.pop() {
            if self.paths.len() >= MAX_DIRS {
                break;
            }
            let Ok(m) = std::fs::metadata(&dir) else {
                continue;
            };
            self.paths.insert(m.ino(), name.clone());
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    let child = if name == "/" {
                        format!("/{}", e.file_name().to_string_lossy())
                    } else {
                        format!("{name}/{}", e.file_name().to_string_lossy())
                    };
                    stack.push((e.path(), child));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_uid_0_and_unknown_uids_show_as_numbers() {
        let mut u = Users::default();
        assert_eq!(u.name(0), "root");
        assert_eq!(u.name(4_000_000_000), "4000000000");
        assert_eq!(u.uid_of("root"), Some(0));
        assert_eq!(u.uid_of("1234"), Some(1234));
        assert_eq!(u.uid_of("no-such-user-here"), None);
    }

    #[test]
    fn cgroup_ids_are_named_by_their_directory() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path();
        std::fs::create_dir_all(sys.join("fs/cgroup/system.slice/cron.service")).unwrap();
        let ino = std::fs::metadata(sys.join("fs/cgroup/system.slice/cron.service"))
            .unwrap()
            .ino();
        let mut c = Cgroups::new(sys);
        assert_eq!(c.path(ino), "/system.slice/cron.service");
        let root = std::fs::metadata(sys.join("fs/cgroup")).unwrap().ino();
        assert_eq!(c.path(root), "/");
        assert_eq!(c.path(1), "1");
    }
}
