//! A cgroup's directory during a read, and its files read through
//! descriptors beneath it.

use super::*;

impl Reader {
    /// Reads the files of hierarchy `hi` beneath `dir` into node `i`'s
    /// figures, taking what the BPF walk gives from its row `row`; false
    /// when the cgroup was removed.
    pub(super) fn read_files(
        &mut self,
        hi: usize,
        i: Ix,
        row: Option<u32>,
        dir: &mut Dir,
        out: &mut Sample,
    ) -> bool {
        let reads = self.reads;
        let keep_open = self.opts.keep_open;
        let max_fds = self.opts.max_fds;
        let every = self.opts.settings_every.max(1);
        let stat_every = self.opts.memory_stat_every.max(1);
        let node = &mut self.nodes[i as usize];
        if node.read != reads {
            node.carried.clone_from(&node.figures);
            if node.settings_at == 0 || reads - node.settings_at >= every {
                node.figures.clear();
                node.settings_at = reads;
            } else {
                // The settings last read stand; their files are skipped.
                node.figures.clear_counts();
            }
            node.read = reads;
        }
        let settings_due = node.settings_at == reads;
        let hier = &self.hiers[hi];
        let root = hier.root_fd();
        let rows = Self::rows_of(&self.walk, self.walked_hier, hi);
        let row = row.and_then(|r| hier.row(rows, r));
        let path = &node.path;
        let p = node.per.at(hi);
        p.seen = reads;
        if p.retry_absent(reads) {
            p.absent = 0;
        }
        if keep_open && p.files.len() != hier.files.len() {
            p.files.resize_with(hier.files.len(), || None);
        }
        for (i, file) in hier.files.iter().enumerate() {
            // Not there, or every figure it gives already read from a file
            // read before it (v1's cpuacct.usage after v2's cpu.stat on a
            // host with both).
            if p.absent & (1 << i) != 0
                || (file.is_settings() && !settings_due)
                || file.keys.iter().all(|k| node.figures.get(k.1).is_some())
            {
                continue;
            }
            if let Some((r, flags)) = row {
                let given = hier.given[i];
                if give(
                    given,
                    file,
                    r,
                    flags,
                    &mut node.figures,
                    &mut node.bpf_cputime,
                ) {
                    continue;
                }
                if given == Given::MemoryStat {
                    if !memory_stat_due(r, p, reads, stat_every) {
                        for k in file.keys {
                            if let Some(v) = node.carried.get(k.1) {
                                node.figures.set(k.1, v);
                            }
                        }
                        continue;
                    }
                    p.stat_pages = r.memory_pages;
                    p.stat_at = reads;
                }
            }
            let dir = match dir.get(root, path) {
                Ok(fd) => fd,
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                    node.stale = true;
                    return false;
                }
                Err(e) => {
                    out.error(format!("cgroups: {path}: {e}"));
                    return true;
                }
            };
            let name = file.name.as_bytes();
            let got = match p.files.get_mut(i) {
                Some(slot) => {
                    if slot.is_none()
                        && self.kept < max_fds
                        && let Ok(fd) = sys::dir::open_at(dir, name, libc::O_RDONLY)
                    {
                        *slot = Some(fd);
                        self.kept += 1;
                    }
                    match slot {
                        Some(fd) => {
                            sys::dir::pread_all(fd.as_raw_fd(), &mut self.buf, 4096, FILE_LIMIT)
                        }
                        None => read_at(dir, name, &mut self.buf),
                    }
                }
                None => read_at(dir, name, &mut self.buf),
            };
            match got {
                Ok(n) => match parse(file, &self.buf[..n], &mut node.figures) {
                    Ok(skipped) => out.skipped_lines += skipped as u64,
                    Err(e) => out.error(format!("cgroups: {path}: {e}")),
                },
                // A kept file of a removed cgroup.
                Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {
                    node.stale = true;
                    return false;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    if !exists(dir, b"cgroup.procs") {
                        node.stale = true;
                        return false;
                    }
                    p.absent |= 1 << i;
                    p.absent_at = reads;
                }
                Err(e) => out.error(format!("cgroups: {path}/{}: {e}", file.name)),
            }
        }
        true
    }
}

/// A cgroup's directory in one hierarchy during a read: open (kept, or
/// `held` for this read), or opened from the hierarchy's root when first
/// needed (the BPF walk read the cgroup: most reads need no descriptor).
pub(super) struct Dir {
    pub(super) fd: RawFd,
    pub(super) held: Option<OwnedFd>,
}

impl Dir {
    pub(super) fn open(fd: RawFd) -> Dir {
        Dir { fd, held: None }
    }

    pub(super) fn held(fd: OwnedFd) -> Dir {
        Dir {
            fd: fd.as_raw_fd(),
            held: Some(fd),
        }
    }

    pub(super) fn lazy() -> Dir {
        Dir { fd: -1, held: None }
    }

    /// The descriptor, `path` opened beneath the hierarchy's `root` first
    /// when it is not open.
    pub(super) fn get(&mut self, root: RawFd, path: &str) -> io::Result<RawFd> {
        if self.fd < 0 {
            let rel = path.trim_start_matches('/');
            let fd = if rel.is_empty() {
                sys::dir::open_at(root, b".", libc::O_RDONLY | libc::O_DIRECTORY)?
            } else {
                sys::dir::open_at(root, rel.as_bytes(), libc::O_RDONLY | libc::O_DIRECTORY)?
            };
            self.fd = fd.as_raw_fd();
            self.held = Some(fd);
        }
        Ok(self.fd)
    }
}

/// A non-blocking inotify instance, or none (every directory is then
/// listed at every read).
pub(super) fn inotify() -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: inotify_init1 returns a new fd we own or -1.
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    // SAFETY: fd is a fresh descriptor.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(super) fn read_at(dir: RawFd, name: &[u8], buf: &mut Vec<u8>) -> io::Result<usize> {
    let fd = sys::dir::open_at(dir, name, libc::O_RDONLY)?;
    sys::dir::pread_all(fd.as_raw_fd(), buf, 4096, FILE_LIMIT)
}

pub(super) fn exists(dir: RawFd, name: &[u8]) -> bool {
    sys::dir::open_at(dir, name, libc::O_PATH).is_ok()
}

pub(super) fn inode(fd: RawFd) -> Option<u64> {
    // SAFETY: fstat fills a stat buffer we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; st is valid for writing.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_ino)
}
