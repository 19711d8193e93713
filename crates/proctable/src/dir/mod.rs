//! The procfs backend: the best a process without privileges can do.
//!
//! - /proc is opened once as a directory fd; every file is opened relative to
//!   it (`openat`), so no path is built or resolved from `/` per process.
//! - PIDs are listed with `getdents64` into one 256 KiB buffer (about 10,000
//!   entries per call).
//! - /proc/PID/stat files are kept open between snapshots and re-read with
//!   `pread` (the kernel regenerates the text on every read at offset 0),
//!   saving an open and a close per process. The number kept is bounded
//!   (by default by RLIMIT_NOFILE less a reserve); past it, open/read/close.
//!   A kept fd pins the process it was opened for: once that process exits,
//!   reads fail with ESRCH, so a reused PID is never read through an old fd.
//! - One reused read buffer; parsing allocates nothing per field.
//! - When a field needs another file (status, io, cgroup), the process's
//!   directory is opened first and every file is opened under it, so all of a
//!   process's fields come from one process even if its PID is reused
//!   mid-scan. A process that exits mid-scan is left out, never half-read.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use procfs::pid;

use crate::error::{Error, Result};
use crate::fields::{Field, Fields};
use crate::pool::{Helpers, Threads};
use crate::proc::{NS_PER_TICK, Proc};
use crate::query::Query;

mod reader;

use reader::*;

const DENTS_BYTES: usize = 256 * 1024;
/// A task directory's listing buffer (about 1,000 threads per call).
const TASK_DENTS_BYTES: usize = 32 * 1024;
/// Processes a thread of a split scan takes at a time: about a millisecond
/// of reads.
const PIDS_PER_PART: usize = 256;

/// Processes per thread below which a scan is not split: a helper's wakeup
/// costs about what reading a few dozen processes does, but every split
/// wakes a second CPU.
pub const MIN_PER_READER: usize = 512;

/// fds left for everything else when the kept-open bound comes from
/// RLIMIT_NOFILE.
const FD_RESERVE: usize = 256;

/// What reading a process needs that no read changes: shared by the
/// threads of a split scan.
struct Tree {
    root: PathBuf,
    cgroup_root: PathBuf,
    dirfd: OwnedFd,
    page_size: u64,
    /// The running kernel's /proc seen from our own PID namespace: what
    /// taskstats (the delay accounting) answers for, by the same ids.
    live: bool,
}

/// What the threads of one scan share: the tree, the kept fds (read only),
/// and how many more may be kept.
#[derive(Clone, Copy)]
struct Scan<'a> {
    tree: &'a Tree,
    kept: &'a HashMap<u32, OwnedFd>,
    room: &'a AtomicUsize,
}

/// The procfs process-table reader. Keep one per proc root and reuse it: its
/// buffers and kept-open fds are what make the second snapshot cheap.
pub struct ProcDir {
    tree: Tree,
    reader: Reader,
    skipped: u64,
    first_skip: Option<String>,
    dents: Vec<u8>,
    pids: Vec<u32>,
    kept: HashMap<u32, OwnedFd>,
    max_kept: usize,
    threads: Threads,
    /// Processes a thread takes at a time ([`PIDS_PER_PART`] unless set).
    part_pids: usize,
    helpers: Helpers,
    /// /proc/loadavg, kept open when `root` is the live /proc of our own
    /// PID namespace: its last allocated PID and task total let a full scan
    /// skip the listing.
    loadavg: Option<OwnedFd>,
    pid_max: u32,
    /// The processes of the last full scan, sorted, and the last PID
    /// allocated when it began (`None`: list next time).
    listed: Vec<u32>,
    last_pid: Option<u32>,
    skipped_listings: u64,
    last_threads: usize,
}

/// New PIDs probed directly instead of listing /proc, at most.
const PROBE_MAX: u32 = 256;

pub(crate) use sys::dir::{open_at, open_dir};

/// Lists the numeric entries of an open directory with getdents64.
fn list_numeric(dirfd: RawFd, dents: &mut [u8], out: &mut Vec<u32>) -> io::Result<()> {
    out.clear();
    sys::dir::entries(dirfd, dents, |name, _| {
        if let Some(pid) = parse_pid(name) {
            out.push(pid);
        }
    })
}

fn parse_pid(name: &[u8]) -> Option<u32> {
    if name.is_empty() || name.len() > 10 || !name.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = name.iter().fold(0u64, |v, &b| v * 10 + (b - b'0') as u64);
    u32::try_from(v).ok().filter(|&v| v > 0)
}

/// Opening a file failed for want of fds (this process's or the system's).
fn out_of_fds(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. }
        if matches!(source.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)))
}

/// The soft RLIMIT_NOFILE less a reserve: how many fds a reader may keep.
pub fn default_max_kept() -> usize {
    sys::fd_limit().map_or(0, |l| (l as usize).saturating_sub(FD_RESERVE))
}

impl Tree {
    fn path(&self, rel: &[u8]) -> PathBuf {
        self.root.join(std::ffi::OsStr::from_bytes(rel))
    }

    fn read_error(&self, rel: &[u8], source: io::Error) -> Error {
        if source.raw_os_error() == Some(libc::EFBIG) {
            Error::TooLarge {
                path: self.path(rel),
                limit: STATUS_LIMIT,
            }
        } else {
            Error::Io {
                path: self.path(rel),
                source,
            }
        }
    }

    /// Opens `name` under `dir`; `None` when the process is gone.
    fn open_live(
        &self,
        dir: RawFd,
        name: &[u8],
        flags: i32,
        rel: &[u8],
    ) -> Result<Option<OwnedFd>> {
        match open_at(dir, name, flags) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) if is_gone(&e) => Ok(None),
            Err(source) => Err(Error::Io {
                path: self.path(rel),
                source,
            }),
        }
    }
}

impl ProcDir {
    /// Opens `proc_root` (e.g. `/proc`); cgroup ids resolve under
    /// `sys_root/fs/cgroup`.
    pub fn open(proc_root: impl AsRef<Path>, sys_root: impl AsRef<Path>) -> Result<ProcDir> {
        let root = proc_root.as_ref().to_path_buf();
        let io_err = |source| Error::Io {
            path: root.clone(),
            source,
        };
        let dirfd = open_dir(&root).map_err(io_err)?;
        Ok(ProcDir {
            tree: Tree {
                cgroup_root: sys_root.as_ref().join("fs/cgroup"),
                root,
                dirfd,
                page_size: sys::page_size(),
                live: false,
            },
            reader: Reader::new(),
            skipped: 0,
            first_skip: None,
            dents: vec![0; DENTS_BYTES],
            pids: Vec::new(),
            kept: HashMap::new(),
            max_kept: default_max_kept(),
            threads: Threads::Auto,
            part_pids: PIDS_PER_PART,
            helpers: Helpers::default(),
            loadavg: None,
            pid_max: 0,
            listed: Vec::new(),
            last_pid: None,
            skipped_listings: 0,
            last_threads: 0,
        }
        .with_loadavg())
    }

    /// Keeps /proc/loadavg open when `root` is the live /proc seen from our
    /// own PID namespace (its last PID is that namespace's).
    fn with_loadavg(mut self) -> ProcDir {
        let root = &self.tree.root;
        let ours = std::fs::read_link(root.join("self"))
            .ok()
            .and_then(|p| p.to_str()?.parse::<u32>().ok())
            == Some(std::process::id());
        let pid_max = std::fs::read_to_string(root.join("sys/kernel/pid_max"))
            .ok()
            .and_then(|s| s.trim().parse().ok());
        self.tree.live = root == Path::new("/proc") && ours;
        if self.tree.live
            && let Some(pid_max) = pid_max
        {
            self.pid_max = pid_max;
            self.loadavg = open_at(self.tree.dirfd.as_raw_fd(), b"loadavg", libc::O_RDONLY).ok();
        }
        self
    }

    /// (tasks in the system, last PID allocated), from /proc/loadavg.
    fn read_loadavg(&self) -> Option<(u64, u32)> {
        let fd = self.loadavg.as_ref()?;
        let mut b = [0u8; 128];
        // SAFETY: pread into a stack buffer, its length passed.
        let n = unsafe { libc::pread(fd.as_raw_fd(), b.as_mut_ptr().cast(), b.len(), 0) };
        let text = std::str::from_utf8(b.get(..usize::try_from(n).ok()?)?).ok()?;
        let mut w = text.split_ascii_whitespace().skip(3);
        let total = w.next()?.split_once('/')?.1.parse().ok()?;
        let last = w.next()?.parse().ok()?;
        Some((total, last))
    }

    /// The PIDs allocated after `prev` up to `last` (in the kernel's cyclic
    /// order), or `None` when there are more than [`PROBE_MAX`].
    fn new_pids(&self, prev: u32, last: u32) -> Option<Vec<u32>> {
        let ranges = if last >= prev {
            [(prev + 1, last), (1, 0)]
        } else {
            [(prev + 1, self.pid_max.saturating_sub(1)), (1, last)]
        };
        let span: u32 = ranges.iter().map(|&(a, b)| (b + 1).saturating_sub(a)).sum();
        (span <= PROBE_MAX).then(|| ranges.iter().flat_map(|&(a, b)| a..=b).collect())
    }

    /// Full scans that did not list /proc (no new task, or only a few
    /// probed directly, and the task total agreed).
    pub fn skipped_listings(&self) -> u64 {
        self.skipped_listings
    }

    /// Bounds the /proc/PID/stat fds kept open between snapshots (0: open,
    /// read and close every time).
    pub fn set_max_kept(&mut self, n: usize) {
        self.max_kept = n;
        if self.kept.len() > n {
            self.kept.clear();
        }
    }

    /// How many fds are kept open now.
    pub fn kept(&self) -> usize {
        self.kept.len()
    }

    /// How many threads a scan's reads are split between (see [`Threads`]).
    pub fn set_threads(&mut self, threads: Threads) {
        self.threads = threads;
    }

    /// Tests: processes a thread of a split scan takes at a time, so that
    /// a small table is split too.
    #[doc(hidden)]
    pub fn set_part_pids(&mut self, n: usize) {
        self.part_pids = n.max(1);
    }

    /// The threads the last scan's reads were split between
    /// (1: read on the calling thread alone).
    pub fn last_threads(&self) -> usize {
        self.last_threads
    }

    pub fn root(&self) -> &Path {
        &self.tree.root
    }

    fn scan<'a>(&'a self, room: &'a AtomicUsize) -> Scan<'a> {
        Scan {
            tree: &self.tree,
            kept: &self.kept,
            room,
        }
    }

    fn room(&self) -> AtomicUsize {
        AtomicUsize::new(self.max_kept.saturating_sub(self.kept.len()))
    }

    /// Runs `op` on this thread with the kept reader, then applies what it
    /// found of the kept fds.
    fn with_reader<T>(&mut self, op: impl FnOnce(&mut Reader, Scan<'_>) -> T) -> T {
        let room = self.room();
        let mut reader = std::mem::take(&mut self.reader);
        let result = op(&mut reader, self.scan(&room));
        self.settle(&mut reader);
        self.reader = reader;
        result
    }

    /// Applies what a reader found of the kept fds: drops those of tasks
    /// gone, keeps those it opened.
    fn settle(&mut self, reader: &mut Reader) {
        for key in reader.gone.drain(..) {
            self.kept.remove(&key);
        }
        self.kept.extend(reader.opened.drain(..));
        self.skipped += std::mem::take(&mut reader.skipped);
        if self.first_skip.is_none() {
            self.first_skip = reader.first_skip.take();
        }
    }

    /// Processes left out since this reader was opened because a file of
    /// theirs could not be parsed, and the first such error.
    pub fn unreadable(&self) -> (u64, Option<&str>) {
        (self.skipped, self.first_skip.as_deref())
    }

    /// Fills `out` with one row per process (or thread) that `query` selects.
    ///
    /// A full process scan with kept fds may skip listing /proc: when
    /// /proc/loadavg shows that no PID was allocated since the last full
    /// scan (or only a few, which are probed directly), the processes are
    /// the last scan's plus those; the scan stands only if, read again
    /// after it, /proc/loadavg is unchanged and the rows' threads add up to
    /// its task total. Otherwise (a thread probed as if a process, a
    /// zombie, a task made during the scan) /proc is listed and the rows
    /// are made to match the listing.
    ///
    /// A scan of many processes is split between threads (see
    /// [`Threads`]); in threads mode a process's threads are read by one.
    ///
    /// A scan that runs out of fds (EMFILE, ENFILE: the process holds
    /// more than the bound allowed for, or the system is out) halves the
    /// fds kept, lowers the bound to that, and scans again, once.
    pub fn snapshot(&mut self, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        self.retrying_out_of_fds(|d| d.snapshot_once(query, out))
    }

    /// Runs `op`; should it fail for want of fds while fds are kept, frees
    /// half of them ([`ProcDir::shrink_kept`]) and runs it again, once.
    fn retrying_out_of_fds<T>(&mut self, mut op: impl FnMut(&mut Self) -> Result<T>) -> Result<T> {
        match op(self) {
            Err(e) if out_of_fds(&e) && !self.kept.is_empty() => {
                self.shrink_kept();
                op(self)
            }
            result => result,
        }
    }

    /// Keeps half the kept fds, and at most that many from now on.
    fn shrink_kept(&mut self) {
        let keep = self.kept.len() / 2;
        self.max_kept = keep;
        let mut n = 0;
        self.kept.retain(|_, _| {
            n += 1;
            n <= keep
        });
    }

    fn snapshot_once(&mut self, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        out.clear();
        self.reader.cgroup_ids.clear();
        let mut pids = std::mem::take(&mut self.pids);
        let full = query.pids.is_none() && !query.threads && self.max_kept > 0;
        let before = if full { self.read_loadavg() } else { None };
        let quick = match (before, self.last_pid) {
            (Some((_, last)), Some(prev)) => self.new_pids(prev, last),
            _ => None,
        };
        let listed = match (&query.pids, &quick) {
            (Some(list), _) => {
                pids.clear();
                pids.extend_from_slice(list);
                false
            }
            (None, Some(new)) => {
                pids.clear();
                pids.extend_from_slice(&self.listed);
                pids.extend(new.iter().filter(|p| self.listed.binary_search(p).is_err()));
                false
            }
            (None, None) => {
                self.list(&mut pids)?;
                true
            }
        };
        let mut result = self.read_pids(&pids, query.fields, query.threads, out);
        if result.is_ok() && quick.is_some() {
            let threads: u64 = out.iter().map(|p| u64::from(p.num_threads)).sum();
            let after = self.read_loadavg();
            if after == before && before.is_some_and(|(total, _)| total == threads) {
                self.skipped_listings += 1;
            } else {
                result = self.reconcile(&mut pids, query.fields, out);
            }
        }
        // PID order, as the BPF backend gives and rates::between merges
        // by: a list of PIDs asked for, new PIDs probed after a wrap, and
        // a thread list (in creation order) may be out of it.
        if !out.is_sorted_by_key(|p| p.pid) {
            out.sort_unstable_by_key(|p| p.pid);
        }
        if full && result.is_ok() {
            if listed || quick.is_some() {
                // Sorted: out is in PID order.
                self.listed.clear();
                self.listed.extend(out.iter().map(|p| p.pid));
            }
            self.last_pid = before.map(|(_, last)| last);
        } else if query.pids.is_none() {
            self.last_pid = None;
        }
        self.pids = pids;
        // A whole scan: close the fds of tasks it did not find.
        if query.pids.is_none() {
            self.kept
                .retain(|key, _| out.binary_search_by_key(key, |p| p.pid).is_ok());
        }
        result
    }

    /// One row per process of `pids` (per thread of each in threads mode),
    /// split between threads when there are many processes: each takes
    /// [`PIDS_PER_PART`] at a time until none is left; rows come back in
    /// the order of `pids`.
    fn read_pids(
        &mut self,
        pids: &[u32],
        fields: Fields,
        threads_mode: bool,
        out: &mut Vec<Proc>,
    ) -> Result<()> {
        let threads = self.threads.count(pids.len() as u64, MIN_PER_READER as u64);
        let per = self.part_pids;
        let parts = pids.len().div_ceil(per);
        self.last_threads = threads.min(parts.max(1));
        if self.last_threads == 1 {
            return self.with_reader(|reader, scan| {
                pids.iter()
                    .try_for_each(|&pid| reader.read_pid(scan, pid, fields, threads_mode, out))
            });
        }
        let room = self.room();
        type Part = (Reader, Vec<Proc>, Result<()>);
        let done: Vec<Mutex<Option<Part>>> = (0..parts).map(|_| Mutex::new(None)).collect();
        let scan = Scan {
            tree: &self.tree,
            kept: &self.kept,
            room: &room,
        };
        let job = |part: usize| -> io::Result<u32> {
            let chunk = &pids[part * per..((part + 1) * per).min(pids.len())];
            let mut reader = Reader::new();
            let mut rows = Vec::with_capacity(chunk.len());
            let result = chunk
                .iter()
                .try_for_each(|&pid| reader.read_pid(scan, pid, fields, threads_mode, &mut rows));
            *done[part].lock().unwrap_or_else(|e| e.into_inner()) = Some((reader, rows, result));
            Ok(0)
        };
        let ran = self.helpers.run_shared(self.last_threads, parts, &job);
        // Every part's fds are settled, whatever else failed: none leaks
        // past the bound.
        let mut first_error = None;
        for slot in done {
            let part = slot.into_inner().unwrap_or_else(|e| e.into_inner());
            let Some((mut reader, rows, result)) = part else {
                continue;
            };
            self.settle(&mut reader);
            out.extend(rows);
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        }
        ran.map_err(|source| Error::Io {
            path: self.tree.root.clone(),
            source,
        })?;
        first_error.map_or(Ok(()), Err)
    }

    fn list(&mut self, pids: &mut Vec<u32>) -> Result<()> {
        list_numeric(self.tree.dirfd.as_raw_fd(), &mut self.dents, pids).map_err(|source| {
            Error::Io {
                path: self.tree.root.clone(),
                source,
            }
        })
    }

    /// After a scan without a listing that did not add up: lists /proc,
    /// drops rows of PIDs it does not list (threads probed as processes)
    /// and reads the processes missing.
    fn reconcile(
        &mut self,
        pids: &mut Vec<u32>,
        fields: Fields,
        out: &mut Vec<Proc>,
    ) -> Result<()> {
        self.list(pids)?;
        pids.sort_unstable();
        out.retain(|p| pids.binary_search(&p.pid).is_ok());
        out.sort_unstable_by_key(|p| p.pid);
        let missing: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|pid| out.binary_search_by_key(pid, |p| p.pid).is_err())
            .collect();
        // The scan's split is the main read's, not this one's.
        let threads = self.last_threads;
        let result = self.read_pids(&missing, fields, false, out);
        self.last_threads = threads;
        result
    }

    /// Start time (clock ticks since boot) of each PID, `None` for one that
    /// does not exist: the vectored identity check. Out of fds, it frees
    /// kept ones and tries again once, as [`ProcDir::snapshot`] does.
    pub fn start_ticks(&mut self, pids: &[u32]) -> Result<Vec<Option<u64>>> {
        self.retrying_out_of_fds(|d| d.start_ticks_once(pids))
    }

    fn start_ticks_once(&mut self, pids: &[u32]) -> Result<Vec<Option<u64>>> {
        let mut out = Vec::with_capacity(pids.len());
        let result = self.with_reader(|reader, scan| {
            pids.iter().try_for_each(|&pid| {
                let mut name = [0u8; 48];
                let rel = pid_path(&mut name, pid, b"/stat");
                let Some(len) = reader.read_stat_bytes(scan, pid, rel)? else {
                    out.push(None);
                    return Ok(());
                };
                let ticks =
                    pid::parse_start_ticks(&reader.buf[..len]).map_err(|source| Error::Parse {
                        path: scan.tree.path(rel),
                        source,
                    })?;
                out.push(Some(ticks));
                Ok(())
            })
        });
        result.map(|()| out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_names() {
        assert_eq!(parse_pid(b"1234"), Some(1234));
        assert_eq!(parse_pid(b"0"), None);
        assert_eq!(parse_pid(b"self"), None);
        assert_eq!(parse_pid(b"99999999999"), None);
        let mut b = [0u8; 48];
        assert_eq!(pid_path(&mut b, 4194304, b"/stat"), b"4194304/stat");
        assert_eq!(pid_path(&mut b, 0, b""), b"0");
    }

    #[test]
    fn rows_come_in_pid_order_whatever_order_they_are_asked_or_made_in() {
        let mut d = ProcDir::open("/proc", "/sys").unwrap();
        let me = std::process::id();
        let threads = fixtures::threads::Parked::start(2);
        let mut rows = Vec::new();
        for threads_mode in [false, true] {
            let q = Query {
                pids: Some(vec![me, 1]),
                threads: threads_mode,
                ..Query::default()
            };
            d.snapshot(&q, &mut rows).unwrap();
            let got: Vec<u32> = rows.iter().map(|p| p.pid).collect();
            assert!(got.is_sorted(), "threads {threads_mode}: {got:?}");
            assert_eq!((got[0], got.contains(&me)), (1, true), "{got:?}");
            if threads_mode {
                assert!(rows.iter().filter(|p| p.tgid == me).count() >= 3, "{got:?}");
            }
        }
        drop(threads);
    }
}
