//! Command lines, read from /proc/PID/cmdline once per program a process
//! runs and kept until it execs another or goes.
//!
//! A command line changes only at exec (or when a process rewrites its own
//! argument area, as some servers do to show their state: that is seen when
//! the process is next read for another reason, not followed). Each
//! process's entry is keyed by its identity (PID, start time), its exec
//! marker ([`Proc::exec`]) and its name; a row whose key matches is served
//! from the cache, any other is read again. The read is checked against the
//! row: the process directory is opened first, its start time read under
//! it, and the command line read only if it is the row's process, so a PID
//! reused between the snapshot and the read never lends its command line.
//! A process caught inside exec shows an empty command line for a moment
//! (its new arguments are not set up yet, while its exec count has already
//! moved): an empty one is kept only for kernel threads and zombies.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use procfs::pid::Comm;

use crate::dir::open_at;
use crate::error::{Error, Result};
use crate::proc::Proc;

/// Bytes of a command line kept: the rest is cut, as `ps` cuts to its
/// column width.
pub const CMDLINE_MAX: usize = 4096;

struct Entry {
    pid: u32,
    start_ticks: u64,
    exec: u64,
    comm: Comm,
    text: Option<Arc<str>>,
}

/// Entries sorted by PID, as snapshot rows are: an update is one merge of
/// the two, no hashing per row.
pub(crate) struct Cmdlines {
    proc_root: PathBuf,
    dirfd: Option<OwnedFd>,
    entries: Vec<Entry>,
    buf: Vec<u8>,
    reads: u64,
}

impl Cmdlines {
    pub(crate) fn new(proc_root: &Path) -> Cmdlines {
        Cmdlines {
            proc_root: proc_root.to_path_buf(),
            dirfd: None,
            entries: Vec::new(),
            buf: vec![0; CMDLINE_MAX],
            reads: 0,
        }
    }

    /// Brings the cache to `rows` (one snapshot): reads what is new or
    /// exec'd, forgets processes no longer there. In a threads snapshot
    /// the leaders' rows stand for their processes.
    pub(crate) fn update(&mut self, rows: &[Proc]) -> Result<()> {
        if self.dirfd.is_none() {
            let root = &self.proc_root;
            let fd = crate::dir::open_dir(root).map_err(|source| Error::Io {
                path: root.clone(),
                source,
            })?;
            self.dirfd = Some(fd);
        }
        let mut new = Vec::with_capacity(self.entries.len().max(16));
        let mut old = std::mem::take(&mut self.entries).into_iter().peekable();
        for p in rows.iter().filter(|p| p.pid == p.tgid) {
            while old.next_if(|e| e.pid < p.pid).is_some() {}
            if let Some(e) = old.next_if(|e| {
                e.pid == p.pid && (e.start_ticks, e.exec, e.comm) == (p.start_ticks, p.exec, p.comm)
            }) {
                new.push(e);
                continue;
            }
            let text = self.read(p.pid, p.start_ticks);
            // An empty command line is final for kernel threads (kthreadd
            // and its children) and zombies; for anything else it may be a
            // process caught inside exec, before its new arguments are
            // set up: not kept, read again next time.
            let kernel_thread = p.pid == 2 || p.ppid == 2;
            if text.is_none() && !kernel_thread && !matches!(p.state, 'Z' | 'X') {
                continue;
            }
            new.push(Entry {
                pid: p.pid,
                start_ticks: p.start_ticks,
                exec: p.exec,
                comm: p.comm,
                text,
            });
        }
        // Rows come sorted by PID (ProcTable sorts them); the merge relies
        // on it.
        debug_assert!(new.is_sorted_by_key(|e| e.pid));
        self.entries = new;
        Ok(())
    }

    /// The command line of `p`'s process as of the last update; `None` for
    /// kernel threads, zombies, and processes gone before they were read.
    pub(crate) fn get(&self, p: &Proc) -> Option<&str> {
        let i = self.entries.binary_search_by_key(&p.tgid, |e| e.pid).ok()?;
        self.entries[i].text.as_deref()
    }

    /// Command lines read from /proc so far (cache misses).
    pub(crate) fn reads(&self) -> u64 {
        self.reads
    }

    fn read(&mut self, pid: u32, start_ticks: u64) -> Option<Arc<str>> {
        let root = self.dirfd.as_ref()?.as_raw_fd();
        self.reads += 1;
        read_checked(root, pid, start_ticks, &mut self.buf).map(Arc::from)
    }
}

/// The command line of the process `pid` under the proc root `root` if it
/// is the one that started at `start_ticks`: its directory is opened
/// first and the start time read under it, so a PID reused meanwhile never
/// lends its command line. `buf` holds each file read in turn.
fn read_checked(
    root: std::os::fd::RawFd,
    pid: u32,
    start_ticks: u64,
    buf: &mut [u8],
) -> Option<String> {
    let dir = open_at(
        root,
        pid.to_string().as_bytes(),
        libc::O_PATH | libc::O_DIRECTORY,
    )
    .ok()?;
    let n = read_under(&dir, b"stat", buf)?;
    if procfs::pid::parse_start_ticks(&buf[..n]).ok()? != start_ticks {
        return None;
    }
    let n = read_under(&dir, b"cmdline", buf)?;
    procfs::pid::cmdline_text(&buf[..n])
}

/// The command line of process `pid` under `proc_root` as `ps` shows it
/// (its first [`CMDLINE_MAX`] bytes), read once, unchecked against any
/// row: for a caller that names a process by PID alone (`top`'s rows on
/// screen). `None` when it cannot be read or is empty.
pub fn read_cmdline(proc_root: &Path, pid: u32) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(proc_root.join(pid.to_string()).join("cmdline")).ok()?;
    let mut b = Vec::with_capacity(256);
    f.take(CMDLINE_MAX as u64).read_to_end(&mut b).ok()?;
    procfs::pid::cmdline_text(&b)
}

/// The command line of the process `pid` that started at `start_ticks`,
/// as [`read_cmdline`] gives it, or `None` when that PID is now another
/// process (or gone), checked as the table's own reads are. For the
/// history's identity rows, written a flush after the snapshot that saw
/// the process.
pub fn read_cmdline_of(proc_root: &Path, pid: u32, start_ticks: u64) -> Option<String> {
    let root = crate::dir::open_dir(proc_root).ok()?;
    read_checked(root.as_raw_fd(), pid, start_ticks, &mut [0; CMDLINE_MAX])
}

/// The first `buf.len()` bytes of `name` under the directory `dir`.
fn read_under(dir: &OwnedFd, name: &[u8], buf: &mut [u8]) -> Option<usize> {
    let fd = open_at(dir.as_raw_fd(), name, libc::O_RDONLY).ok()?;
    // SAFETY: reads into buf, within its length.
    let n = unsafe { libc::pread(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    usize::try_from(n).ok()
}
