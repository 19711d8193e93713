//! The cgroup hierarchies of the mount table that give a figure.

use super::*;

/// A cgroup hierarchy of the mount table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    /// Where it is mounted, as the mount table says.
    pub mount: PathBuf,
    /// Where it is read (under the sys root for a mount under /sys).
    pub dir: PathBuf,
    pub v2: bool,
    /// v1: the controllers it holds that a file here reads. v2: those its
    /// root's `cgroup.controllers` lists (none on a machine whose
    /// controllers are all bound to v1 hierarchies), or every one a file
    /// here needs when that file cannot be read.
    pub controllers: Vec<String>,
}

impl Hierarchy {
    /// The files of `chosen` read in this hierarchy (64 at most): a v2
    /// controller's only where the hierarchy has that controller (looked
    /// for in every cgroup, each missing file would be a failed lookup a
    /// cgroup and a read, and a negative dentry charged to the reader).
    pub fn files(&self, chosen: &[&'static File]) -> Vec<&'static File> {
        chosen
            .iter()
            .copied()
            .filter(|f| match f.version {
                Version::V2 => {
                    self.v2
                        && f.v2_controller()
                            .is_none_or(|c| self.controllers.iter().any(|x| x == c))
                }
                Version::V1(c) => !self.v2 && self.controllers.iter().any(|x| x == c),
            })
            .take(64)
            .collect()
    }
}

/// The hierarchies in `<proc_root>/self/mountinfo` that give a figure of
/// `files`, v2 first, each once.
pub fn hierarchies(
    proc_root: &Path,
    sys_root: &Path,
    files: &[&File],
) -> io::Result<Vec<Hierarchy>> {
    let text = std::fs::read_to_string(proc_root.join("self/mountinfo"))?;
    let mut out: Vec<(String, Hierarchy)> = Vec::new();
    for line in text.lines() {
        // id parent maj:min root mount options [optional...] - fstype source super
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        let (Some(dev), Some(mount), Some(fstype), Some(sup)) =
            (l.get(2), l.get(4), r.first(), r.get(2))
        else {
            continue;
        };
        let v2 = match *fstype {
            "cgroup2" => true,
            "cgroup" => false,
            _ => continue,
        };
        let mount = PathBuf::from(unescape(mount));
        let dir = match mount.strip_prefix("/sys") {
            Ok(rest) => sys_root.join(rest),
            Err(_) => mount.clone(),
        };
        let controllers: Vec<String> = if v2 {
            let mut needed: Vec<&str> = files.iter().filter_map(|f| f.v2_controller()).collect();
            needed.sort_unstable();
            needed.dedup();
            let listed = std::fs::read_to_string(dir.join("cgroup.controllers"));
            needed
                .into_iter()
                .filter(|c| {
                    listed
                        .as_ref()
                        .map_or(true, |l| l.split_whitespace().any(|l| l == *c))
                })
                .map(str::to_string)
                .collect()
        } else {
            sup.split(',')
                .filter(|c| {
                    files
                        .iter()
                        .any(|f| matches!(f.version, Version::V1(x) if x == *c))
                })
                .map(str::to_string)
                .collect()
        };
        if !v2 && controllers.is_empty() || out.iter().any(|(d, _)| d == dev) {
            continue;
        }
        out.push((
            dev.to_string(),
            Hierarchy {
                mount,
                dir,
                v2,
                controllers,
            },
        ));
    }
    let mut out: Vec<Hierarchy> = out.into_iter().map(|(_, h)| h).collect();
    out.sort_by_key(|h| !h.v2);
    Ok(out)
}

/// The mount table's octal escapes (`\040` for a space).
pub(super) fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|o| b[i] == b'\\' && o.iter().all(|c| (b'0'..=b'7').contains(c)));
        match oct {
            Some(o) => {
                out.push(
                    o.iter()
                        .fold(0u8, |v, c| v.wrapping_mul(8).wrapping_add(c - b'0')),
                );
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
