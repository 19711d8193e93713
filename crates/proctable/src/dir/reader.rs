//! One reader's work on a part of the pids: each process's files read
//! through descriptors kept from the last table, into its row.

use super::*;
use crate::taskstats::DelayQuery;

pub(super) const READ_BYTES: usize = 4096;

/// Bytes of /proc/PID/status we accept (it is about 1.5 KiB).
pub(super) const STATUS_LIMIT: usize = 64 * 1024;

/// A reading thread's own: its read buffer, the cgroup ids it resolved,
/// and what it found of the kept fds, for the scan's end to apply (a
/// split scan's threads share the kept fds read-only).
#[derive(Default)]
pub(super) struct Reader {
    pub(super) buf: Vec<u8>,
    pub(super) cgroup_ids: HashMap<Box<[u8]>, Option<u64>>,
    /// Fds opened for tasks with none kept, to keep: (PID or TID, fd).
    pub(super) opened: Vec<(u32, OwnedFd)>,
    /// Tasks whose kept fd showed them gone: the PID may be reused.
    pub(super) gone: Vec<u32>,
    /// A process's task directory listing (threads mode).
    pub(super) dents: Vec<u8>,
    pub(super) tids: Vec<u32>,
    /// Processes left out because a file of theirs could not be parsed,
    /// and the first such error.
    pub(super) skipped: u64,
    pub(super) first_skip: Option<String>,
    /// Taskstats, for the delay accounting (opened at the first row that
    /// asks; why not, where it cannot be).
    pub(super) delays: Option<std::result::Result<DelayQuery, String>>,
}

/// Reads a whole /proc file from offset 0 in one `pread`
/// ([`sys::dir::pread_all`]); returns its length.
pub(super) fn pread_all(fd: RawFd, buf: &mut Vec<u8>, limit: usize) -> io::Result<usize> {
    sys::dir::pread_all(fd, buf, READ_BYTES, limit)
}

/// `123` as ASCII into a small stack buffer, followed by `suffix`.
pub(super) fn pid_path<'a>(buf: &'a mut [u8; 48], pid: u32, suffix: &[u8]) -> &'a [u8] {
    let mut digits = [0u8; 10];
    let mut n = pid;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let d = &digits[i..];
    buf[..d.len()].copy_from_slice(d);
    buf[d.len()..d.len() + suffix.len()].copy_from_slice(suffix);
    &buf[..d.len() + suffix.len()]
}

/// The process is gone (or was never there): leave it out.
pub(super) fn is_gone(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH))
}

impl Reader {
    pub(super) fn new() -> Reader {
        Reader {
            buf: vec![0; READ_BYTES],
            cgroup_ids: HashMap::new(),
            opened: Vec::new(),
            gone: Vec::new(),
            dents: Vec::new(),
            tids: Vec::new(),
            skipped: 0,
            delays: None,
            first_skip: None,
        }
    }

    /// Process `pid`'s row, or in threads mode one row per thread of it.
    pub(super) fn read_pid(
        &mut self,
        scan: Scan<'_>,
        pid: u32,
        fields: Fields,
        threads_mode: bool,
        out: &mut Vec<Proc>,
    ) -> Result<()> {
        if threads_mode {
            self.read_threads(scan, pid, fields, out)
        } else {
            self.read_one(scan, pid, None, fields, out)
        }
    }

    /// One row per thread of process `pid`.
    pub(super) fn read_threads(
        &mut self,
        scan: Scan<'_>,
        pid: u32,
        fields: Fields,
        out: &mut Vec<Proc>,
    ) -> Result<()> {
        let tree = scan.tree;
        let mut name = [0u8; 48];
        let rel = pid_path(&mut name, pid, b"/task");
        let Some(task) = tree.open_live(
            tree.dirfd.as_raw_fd(),
            rel,
            libc::O_RDONLY | libc::O_DIRECTORY,
            rel,
        )?
        else {
            return Ok(());
        };
        if self.dents.is_empty() {
            self.dents.resize(TASK_DENTS_BYTES, 0);
        }
        let mut tids = std::mem::take(&mut self.tids);
        let result = match list_numeric(task.as_raw_fd(), &mut self.dents, &mut tids) {
            Ok(()) => tids
                .iter()
                .try_for_each(|&tid| self.read_one(scan, tid, Some(pid), fields, out)),
            Err(e) if is_gone(&e) => Ok(()),
            Err(source) => Err(Error::Io {
                path: tree.path(rel),
                source,
            }),
        };
        self.tids = tids;
        result
    }

    /// Reads PID/stat (or PID/task/TID/stat) into self.buf through a kept fd
    /// or a fresh one, kept if there is room; `None` when the task is gone.
    pub(super) fn read_stat_bytes(
        &mut self,
        scan: Scan<'_>,
        key: u32,
        rel: &[u8],
    ) -> Result<Option<usize>> {
        if let Some(fd) = scan.kept.get(&key) {
            match pread_all(fd.as_raw_fd(), &mut self.buf, STATUS_LIMIT) {
                Ok(len) if len > 0 => return Ok(Some(len)),
                // Gone (ESRCH or empty): the PID may now be another process's.
                _ => self.gone.push(key),
            }
        }
        let tree = scan.tree;
        let Some(fd) = tree.open_live(tree.dirfd.as_raw_fd(), rel, libc::O_RDONLY, rel)? else {
            return Ok(None);
        };
        let len = match pread_all(fd.as_raw_fd(), &mut self.buf, STATUS_LIMIT) {
            Ok(0) => return Ok(None),
            Ok(len) => len,
            Err(e) if is_gone(&e) => return Ok(None),
            Err(source) => return Err(tree.read_error(rel, source)),
        };
        let room = scan
            .room
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(1));
        if room.is_ok() {
            self.opened.push((key, fd));
        }
        Ok(Some(len))
    }

    /// Reads `file` under an open process directory into self.buf.
    pub(super) fn read_under(
        &mut self,
        tree: &Tree,
        dir: &OwnedFd,
        file: &[u8],
        rel: &[u8],
    ) -> Result<Option<usize>> {
        let Some(fd) = tree.open_live(dir.as_raw_fd(), file, libc::O_RDONLY, rel)? else {
            return Ok(None);
        };
        match pread_all(fd.as_raw_fd(), &mut self.buf, STATUS_LIMIT) {
            Ok(0) => Ok(None),
            Ok(len) => Ok(Some(len)),
            Err(e) if is_gone(&e) => Ok(None),
            Err(source) => Err(tree.read_error(rel, source)),
        }
    }

    pub(super) fn fill_stat(
        &self,
        tree: &Tree,
        rel: &[u8],
        len: usize,
        p: &mut Proc,
    ) -> Result<()> {
        let s = pid::parse_stat(&self.buf[..len]).map_err(|source| Error::Parse {
            path: tree.path(rel),
            source,
        })?;
        p.ppid = s.ppid;
        p.comm = s.comm;
        p.state = s.state as char;
        p.start_ticks = s.start_ticks;
        p.start_ns = s.start_ticks * NS_PER_TICK;
        p.utime_ns = s.utime_ticks * NS_PER_TICK;
        p.stime_ns = s.stime_ticks * NS_PER_TICK;
        p.minflt = s.minflt;
        p.majflt = s.majflt;
        p.num_threads = s.num_threads.min(u32::MAX as u64) as u32;
        p.rss_bytes = s.rss_pages * tree.page_size;
        p.vsize_bytes = s.vsize_bytes;
        p.nice = s.nice as i32;
        p.priority = s.priority as i32;
        p.policy = s.policy;
        p.rt_priority = s.rt_priority;
        p.cpu = s.processor;
        p.exec = s.start_stack;
        Ok(())
    }

    /// The cgroup id of a v2 path: the inode number of its directory.
    pub(super) fn cgroup_id(&mut self, tree: &Tree, path: &[u8]) -> Option<u64> {
        if let Some(&id) = self.cgroup_ids.get(path) {
            return id;
        }
        let rel = std::ffi::OsStr::from_bytes(path.strip_prefix(b"/").unwrap_or(path));
        let full = tree.cgroup_root.join(rel);
        let id = std::fs::metadata(full)
            .ok()
            .map(|m| std::os::unix::fs::MetadataExt::ino(&m));
        self.cgroup_ids.insert(path.into(), id);
        id
    }

    /// The task's delay accounting, asked of taskstats, where the row asks
    /// for it and the tree is the live /proc (a fixture tree has none).
    fn fill_delays(&mut self, tree: &Tree, fields: Fields, id: u32, p: &mut Proc) {
        if !fields.has(Field::DelayAcct) || !tree.live {
            return;
        }
        let q = self
            .delays
            .get_or_insert_with(|| DelayQuery::open().map_err(|e| e.to_string()));
        if let Ok(q) = q {
            p.delays = q.task(id).ok().flatten();
        }
    }

    /// One process row (`tgid` None) or one thread row of process `tgid`.
    /// A process whose files cannot be parsed (a copied tree's odd file)
    /// costs its row, counted, not the table.
    pub(super) fn read_one(
        &mut self,
        scan: Scan<'_>,
        id: u32,
        tgid: Option<u32>,
        fields: Fields,
        out: &mut Vec<Proc>,
    ) -> Result<()> {
        match self.read_one_row(scan, id, tgid, fields, out) {
            Err(e @ (Error::Parse { .. } | Error::TooLarge { .. })) => {
                self.skipped += 1;
                self.first_skip.get_or_insert_with(|| e.to_string());
                Ok(())
            }
            r => r,
        }
    }

    pub(super) fn read_one_row(
        &mut self,
        scan: Scan<'_>,
        id: u32,
        tgid: Option<u32>,
        fields: Fields,
        out: &mut Vec<Proc>,
    ) -> Result<()> {
        let tree = scan.tree;
        // "PID" or "TGID/task/TID", then "/stat" etc. after it.
        let mut rel = [0u8; 64];
        let mut dir_len = match tgid {
            Some(tgid) => {
                let mut head = [0u8; 48];
                let head = pid_path(&mut head, tgid, b"/task/");
                rel[..head.len()].copy_from_slice(head);
                head.len()
            }
            None => 0,
        };
        let mut tail = [0u8; 48];
        let tail = pid_path(&mut tail, id, b"");
        rel[dir_len..dir_len + tail.len()].copy_from_slice(tail);
        dir_len += tail.len();
        let with = |rel: &mut [u8; 64], file: &[u8]| -> usize {
            rel[dir_len] = b'/';
            rel[dir_len + 1..dir_len + 1 + file.len()].copy_from_slice(file);
            dir_len + 1 + file.len()
        };

        let mut p = Proc {
            pid: id,
            tgid: tgid.unwrap_or(id),
            ..Proc::default()
        };
        let status = fields.has(Field::Ctxsw) || fields.has(Field::Uid);
        let secondary = status
            || fields.has(Field::Delay)
            || fields.has(Field::Io)
            || fields.has(Field::Cgroup)
            || fields.has(Field::OomScoreAdj);
        if !secondary {
            let n = with(&mut rel, b"stat");
            let Some(len) = self.read_stat_bytes(scan, id, &rel[..n])? else {
                return Ok(());
            };
            self.fill_stat(tree, &rel[..n], len, &mut p)?;
            self.fill_delays(tree, fields, id, &mut p);
            out.push(p);
            return Ok(());
        }
        // Every file under one directory fd: one process, even if its PID is
        // reused while we read.
        let Some(dir) = tree.open_live(
            tree.dirfd.as_raw_fd(),
            &rel[..dir_len],
            libc::O_PATH | libc::O_DIRECTORY,
            &rel[..dir_len],
        )?
        else {
            return Ok(());
        };
        if fields.needs_stat() {
            let n = with(&mut rel, b"stat");
            let Some(len) = self.read_under(tree, &dir, b"stat", &rel[..n])? else {
                return Ok(());
            };
            self.fill_stat(tree, &rel[..n], len, &mut p)?;
        }
        if status {
            let n = with(&mut rel, b"status");
            let Some(len) = self.read_under(tree, &dir, b"status", &rel[..n])? else {
                return Ok(());
            };
            let buf = &self.buf[..len];
            let parse_err = |source| Error::Parse {
                path: tree.path(&rel[..n]),
                source,
            };
            if fields.has(Field::Ctxsw) {
                p.ctxsw = Some(pid::parse_status_ctxsw(buf).map_err(parse_err)?);
            }
            if fields.has(Field::Uid) {
                p.uid = Some(pid::parse_status_euid(buf).map_err(parse_err)?);
            }
        }
        if fields.has(Field::OomScoreAdj) {
            let file = pid::OOM_SCORE_ADJ_FILE.as_bytes();
            let n = with(&mut rel, file);
            let Some(len) = self.read_under(tree, &dir, file, &rel[..n])? else {
                return Ok(());
            };
            let adj =
                pid::parse_oom_score_adj(&self.buf[..len]).map_err(|source| Error::Parse {
                    path: tree.path(&rel[..n]),
                    source,
                })?;
            p.oom_score_adj = Some(adj);
        }
        if fields.has(Field::Delay) {
            let file = pid::SCHEDSTAT_FILE.as_bytes();
            let n = with(&mut rel, file);
            let Some(len) = self.read_under(tree, &dir, file, &rel[..n])? else {
                return Ok(());
            };
            let sched = pid::parse_schedstat(&self.buf[..len]).map_err(|source| Error::Parse {
                path: tree.path(&rel[..n]),
                source,
            })?;
            p.sched = Some(sched);
        }
        if fields.has(Field::Io) {
            let n = with(&mut rel, b"io");
            match self.read_under(tree, &dir, b"io", &rel[..n]) {
                Ok(None) => return Ok(()),
                Ok(Some(len)) => {
                    let io = pid::parse_io(&self.buf[..len]).map_err(|source| Error::Parse {
                        path: tree.path(&rel[..n]),
                        source,
                    })?;
                    p.io = Some(io);
                }
                // Another user's process without CAP_SYS_PTRACE: no I/O row.
                Err(Error::Io { source, .. })
                    if source.kind() == io::ErrorKind::PermissionDenied => {}
                Err(e) => return Err(e),
            }
        }
        if fields.has(Field::Cgroup) {
            let n = with(&mut rel, b"cgroup");
            let Some(len) = self.read_under(tree, &dir, b"cgroup", &rel[..n])? else {
                return Ok(());
            };
            let buf = std::mem::take(&mut self.buf);
            let parsed = pid::parse_cgroup_v2(&buf[..len]);
            let result = match parsed {
                Ok(Some(path)) => {
                    p.cgroup_id = self.cgroup_id(tree, path);
                    Ok(())
                }
                Ok(None) => Ok(()),
                Err(source) => Err(Error::Parse {
                    path: tree.path(&rel[..n]),
                    source,
                }),
            };
            self.buf = buf;
            result?;
        }
        self.fill_delays(tree, fields, id, &mut p);
        out.push(p);
        Ok(())
    }
}
