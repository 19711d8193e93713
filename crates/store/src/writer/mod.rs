//! Recording: the sampler appends to the journal ([`Tap`]); the writer
//! thread keeps no clock of its own: the sampler hands it a flush with the
//! first sample of each flush interval ([`Writer::sampled`]; 15 s by
//! default: 0.07 wakeups a second, each at an instant the sampler is awake
//! for), and it moves what the journal holds into the day's file in one
//! transaction, and keeps the store within its age and size limits.

use crate::{Error, ErrorKind};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use foldhash::fast::RandomState as Fast;
use rusqlite::{Connection, OptionalExtension, params};

use crate::blocks::{SysEncoder, compress};
use crate::codec::{put_delta, put_varint};
use crate::db::exec;
use crate::db::{self, KIND_CGROUPS, KIND_EXITS, KIND_PROCS, KIND_SYSTEM, OpenError};
use crate::journal::{Journal, Kind, Record, records};
use crate::procs::{self, Encoder, Static};

mod day;
mod tap;

pub use tap::*;

/// Blocks start a new chain (a keyframe) at every multiple of this.
pub const KEY_EVERY_MS: u64 = 600_000;

#[derive(Debug, Clone)]
pub struct Options {
    pub dir: PathBuf,
    /// The journal's file (in memory: tmpfs).
    pub journal: PathBuf,
    pub journal_bytes: usize,
    pub retention: Duration,
    pub max_bytes: u64,
    pub flush: Duration,
    /// Where command lines of new processes are read.
    pub proc_root: PathBuf,
    /// Who may read the store ([`crate::access::decide`]).
    pub access: crate::access::Access,
}

impl Options {
    /// A store of one's own under `root` (`root/store`, its journal
    /// `root/journal`), readable by this user only, kept 30 days with no
    /// size cap to speak of: for a benchmark or a test that records a
    /// history of its own. `why` is said where access is decided.
    pub fn private_in(root: &Path, why: &str, proc_root: &Path) -> Options {
        Options {
            dir: root.join("store"),
            journal: root.join("journal"),
            access: crate::access::Access::private(why),
            journal_bytes: crate::JOURNAL_BYTES,
            retention: Duration::from_secs(30 * 86_400),
            max_bytes: u64::MAX / 4,
            flush: Duration::from_secs(15),
            proc_root: proc_root.to_path_buf(),
        }
    }
}

/// The store's own figures, exported as `quietstat_store_*`.
#[derive(Debug, Default)]
pub struct Stats {
    pub bytes_on_disk: AtomicU64,
    /// Bytes written (compressed) per source, since start.
    pub written: Mutex<BTreeMap<String, u64>>,
    /// Rows inserted (blocks, identities, gaps).
    pub rows: AtomicU64,
    /// Samples dropped: the journal was full.
    pub dropped: AtomicU64,
    pub flushes: AtomicU64,
    pub failed_flushes: AtomicU64,
    pub write_ns: AtomicU64,
    /// The writer's CPU time recording cgroup walks, not yet taken by
    /// [`Stats::take_cgroups_cpu_ns`]: the sampler charges it to the
    /// cgroups source, so that the source's budget sees what a walk costs
    /// in all.
    pub cgroups_cpu_ns: AtomicU64,
    /// Whether the last flush succeeded.
    pub recording: AtomicBool,
    /// The time of the last record the day files hold (Unix ms): what
    /// readers in the agent may read up to.
    pub committed_ms: AtomicU64,
    /// Flushes done, for whoever reads what they wrote (the remote-write
    /// senders): they wake when the writer does, never on a clock.
    pub flushed: Flushed,
}

/// A count of the writer's flushes that readers of the store wait on.
#[derive(Debug, Default)]
pub struct Flushed {
    state: Mutex<(u64, bool)>,
    cv: Condvar,
}

impl Flushed {
    /// The flushes done so far.
    pub fn count(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    /// Counts a flush and wakes the waiters.
    pub fn done(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0 += 1;
        self.cv.notify_all();
    }

    /// Wakes the waiters for good: [`Flushed::wait_past`] returns `None`
    /// from now on.
    pub fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.cv.notify_all();
    }

    /// Waits, without a timeout, until more than `seen` flushes are done;
    /// their count, or `None` once closed.
    pub fn wait_past(&self, seen: u64) -> Option<u64> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 <= seen && !s.1 {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        (!s.1).then_some(s.0)
    }
}

impl Stats {
    fn add_written(&self, source: &str, n: u64) {
        let mut w = self.written.lock().unwrap_or_else(|e| e.into_inner());
        *w.entry(source.to_string()).or_default() += n;
    }

    /// The writer's CPU time on cgroup walks since the last call.
    pub fn take_cgroups_cpu_ns(&self) -> u64 {
        self.cgroups_cpu_ns.swap(0, Relaxed)
    }

    pub fn written(&self) -> Vec<(String, u64)> {
        let w = self.written.lock().unwrap_or_else(|e| e.into_inner());
        w.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }
}

/// The writer thread; stopped (after a last flush) on drop.
pub struct Writer {
    asked: Arc<(Mutex<Asked>, Condvar)>,
    thread: Option<JoinHandle<()>>,
    flush_ms: u64,
    /// The flush interval of the last sample ([`Writer::sampled`]).
    window: Option<u64>,
}

/// What the writer thread is asked to do next.
#[derive(Default)]
struct Asked {
    flush: bool,
    stop: bool,
}

impl Writer {
    /// The sampler appended a sample taken at `ms` (Unix ms): with the
    /// first sample of a flush interval (aligned to the wall clock) the
    /// writer is handed a flush of everything before it. The writer never
    /// wakes on a timer of its own: its flushes come at instants the
    /// sampler is awake for. A wall clock stepped back starts an interval
    /// too. The first sample is handed over at once: the history holds
    /// the start-up read, and the writer runs its code for a write (its
    /// pages faulted in, a sleep each when another thread holds the page)
    /// while the agent starts, not at its first scheduled flush.
    pub fn sampled(&mut self, ms: u64) {
        let w = ms / self.flush_ms;
        match self.window.replace(w) {
            Some(last) if last == w => {}
            _ => self.flush(),
        }
    }

    /// Hands the writer a flush now (one already asked for and not begun
    /// is the same flush).
    pub fn flush(&self) {
        let (m, c) = &*self.asked;
        m.lock().unwrap_or_else(|e| e.into_inner()).flush = true;
        c.notify_one();
    }
}

/// Why the store's lock was not taken.
enum LockError {
    /// Another agent records here: refused.
    InUse(String),
    /// The lock cannot be opened (an unwritable directory, something
    /// planted at its name): not recording until it can.
    Cannot(String),
}

/// Locks `dir` for one recorder.
fn lock(dir: &Path) -> Result<std::fs::File, LockError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;
    let path = dir.join("lock");
    let f = crate::access::open_file(&path, true, Some((0o600, None))).map_err(|e| {
        LockError::Cannot(format!(
            "store: cannot open its lock {}: {e}; not recording until it can (or give --store DIR, or --no-store)",
            path.display()
        ))
    })?;
    // SAFETY: flock on an open descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut holder = vec![0u8; 64];
        let n = f.read_at(&mut holder, 0).unwrap_or(0);
        return Err(LockError::InUse(format!(
            "store {} is in use by another agent ({}); give this one --store DIR or --no-store",
            dir.display(),
            String::from_utf8_lossy(&holder[..n]).trim()
        )));
    }
    let _ = f.set_len(0);
    let _ = f.write_all_at(format!("pid {}\n", std::process::id()).as_bytes(), 0);
    Ok(f)
}

impl Drop for Writer {
    fn drop(&mut self) {
        {
            let (m, c) = &*self.asked;
            m.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
            c.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The last journal sequence number the store holds (0: none), the time
/// of its last sample and the boot that sample belongs to. Day files dated
/// after today (written while the wall clock was ahead) count for the
/// sequence only: the last sample is the newest day's up to today, so a
/// clock that went back records no false gap.
pub(crate) fn committed_seq(dir: &Path, now_ms: u64) -> (u64, u64, u64) {
    let today = db::day_of(now_ms);
    let mut seq = 0;
    for (day, p) in db::day_files(dir).iter().rev() {
        let Ok(c) = db::open_read(p) else { continue };
        let Some(s) = db::meta_get(&c, "journal_seq") else {
            continue;
        };
        seq = seq.max(s as u64);
        if *day <= today {
            return (
                seq,
                db::meta_get(&c, "last_ms").unwrap_or(0) as u64,
                db::meta_get(&c, "boot_ms").unwrap_or(0) as u64,
            );
        }
    }
    (seq, 0, 0)
}

/// Now, for deciding what is old: the wall clock, or less when it has
/// jumped forward since `start` (wall ms and CLOCK_BOOTTIME ms then): the
/// boot clock counts the time that really passed, so a forward step never
/// ages out a day whose samples are real.
fn settled_now(start: (u64, u64)) -> u64 {
    let passed = boot_clock_ms().saturating_sub(start.1);
    now_ms().min(start.0 + passed)
}

fn boot_clock_ms() -> u64 {
    sys::boot_ns() / 1_000_000
}

/// A writer without its thread: the caller flushes (a benchmark writing a
/// day faster than real time, through the same code).
pub struct Flusher {
    inner: Inner,
}

impl Flusher {
    /// The boot's Unix ms this writer dates process times by
    /// ([`boot_ms`] when it opened).
    pub fn boot_ms(&self) -> u64 {
        self.inner.boot_ms
    }

    /// Moves what the journal holds into the store; true when written.
    pub fn flush(&mut self) -> bool {
        self.inner.flush();
        self.inner.stats.recording.load(Relaxed)
    }
}

/// Opens the journal and the store for a caller that flushes itself.
/// Refused: a store directory others may write to or own, and a store or
/// journal another agent uses. A directory not there yet, or a lock that
/// cannot be opened, is logged and retried at every flush.
pub fn open(opts: Options, log: fn(String)) -> Result<(Tap, Flusher, Arc<Stats>), Error> {
    let dir = &opts.dir;
    match crate::access::prepare_dir(dir, &opts.access) {
        Ok(0) => {}
        Ok(n) => log(format!(
            "store: {n} modes in {} tightened: readable by {} ({})",
            dir.display(),
            opts.access.readers(),
            opts.access.why
        )),
        Err(e) if dir.is_dir() => return Err(e.context("store")),
        Err(e) => log(format!(
            "store: {e}; recording waits until it can (or give --store DIR, or --no-store)"
        )),
    }
    let lock = match lock(dir) {
        Ok(f) => Some(f),
        Err(LockError::InUse(e)) => return Err(Error::new(ErrorKind::Busy, e)),
        // The writer says why at its first flush, and retries at each.
        Err(LockError::Cannot(_)) => None,
    };
    let (seq, last_ms, prev_boot_ms) = committed_seq(dir, now_ms());
    let owner = crate::journal::Owner {
        store: std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone()),
        id: lock
            .as_ref()
            .map_or(0, |_| crate::access::store_id(dir, Some(&opts.access))),
    };
    let places = crate::journal::places(opts.journal.parent());
    crate::journal::sweep(&places, &opts.journal, &log);
    if lock.is_some() {
        // Where the journal is, for `report` after a crash.
        let _ = crate::access::write_line(
            &dir.join(crate::journal::NAMED_IN_STORE),
            &opts.access,
            &opts.journal.display().to_string(),
        );
    }
    let journal = match Journal::open(&opts.journal, opts.journal_bytes, seq, &owner) {
        Ok(j) => j,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            return Err(Error::new(
                ErrorKind::Busy,
                format!("store journal {}: {e}", opts.journal.display()),
            ));
        }
        Err(e) => {
            log(format!(
                "store: journal {}: {e}; recording goes on with the journal in the agent's memory (a kill -9 loses up to one flush interval of samples)",
                opts.journal.display()
            ));
            Journal::anonymous(opts.journal_bytes, &owner)
                .map_err(|e| Error::io("store: a journal in memory", e))?
        }
    };
    let journal = Arc::new(Mutex::new(journal));
    let stats = Arc::new(Stats::default());
    let inner = Inner {
        opts,
        stats: stats.clone(),
        journal: journal.clone(),
        log,
        day: None,
        sys: SysEncoder::default(),
        procs: Encoder::default(),
        chain: procs::Chain::default(),
        need_key: true,
        cg: crate::cgroups::Encoder::default(),
        cg_key_due: true,
        cg_rows: None,
        cg_prev: None,
        last_window: u64::MAX,
        committed: seq,
        last_ms,
        last_table_ms: 0,
        started: true,
        failing: None,
        disabled: None,
        boot_ms: boot_ms(),
        prev_boot_ms,
        lock,
        clock_start: (now_ms(), boot_clock_ms()),
    };
    Ok((Tap::new(journal, stats.clone()), Flusher { inner }, stats))
}

/// Opens the journal and starts the writer. `log` takes one line.
pub fn start(opts: Options, log: fn(String)) -> Result<(Tap, Writer, Arc<Stats>), Error> {
    let (tap, Flusher { mut inner }, stats) = open(opts, log)?;
    let flush_ms = inner.opts.flush.as_millis().max(1) as u64;
    let asked = Arc::new((Mutex::new(Asked::default()), Condvar::new()));
    let asked2 = asked.clone();
    let thread = std::thread::Builder::new()
        .name("quietstat-store".into())
        .spawn(move || {
            // What a previous run left in the journal goes in first.
            inner.flush();
            loop {
                // No timeout: a flush is handed over by the sampler.
                let (m, c) = &*asked2;
                let mut a = m.lock().unwrap_or_else(|e| e.into_inner());
                while !a.flush && !a.stop {
                    a = c.wait(a).unwrap_or_else(|e| e.into_inner());
                }
                let stopping = a.stop;
                a.flush = false;
                drop(a);
                inner.flush();
                if stopping {
                    inner.remove_journal_if_empty();
                    break;
                }
            }
        })
        .map_err(|e| Error::io("starting the store writer", e))?;
    Ok((
        tap,
        Writer {
            asked,
            thread: Some(thread),
            flush_ms,
            window: None,
        },
        stats,
    ))
}

/// Unix ms of the boot (CLOCK_REALTIME - CLOCK_BOOTTIME): the two clocks
/// read in nanoseconds (the boot clock on either side of the wall clock)
/// and the difference rounded to the nearest ms, so that two calls in one
/// boot agree (unless the wall clock was set between them, or the
/// difference falls within the reads' few hundred ns of a half ms).
/// Truncating each clock to ms first made two calls 1 ms apart as often
/// as the difference's fraction of a ms.
pub fn boot_ms() -> u64 {
    let before = sys::boot_ns();
    let wall = sys::unix_ns();
    let after = sys::boot_ns();
    let boot_wall_ns = wall.saturating_sub(before / 2 + after / 2);
    (boot_wall_ns + 500_000) / 1_000_000
}

struct Inner {
    opts: Options,
    stats: Arc<Stats>,
    journal: Arc<Mutex<Journal>>,
    log: fn(String),
    day: Option<(String, Connection)>,
    sys: SysEncoder,
    procs: Encoder,
    /// The journal's process tables, rebuilt from its whole table and
    /// deltas.
    chain: procs::Chain,
    need_key: bool,
    /// The cgroup walks' encoder, and whether the next walk written starts
    /// a chain (the first walk of a keyframe block).
    cg: crate::cgroups::Encoder,
    cg_key_due: bool,
    /// The cgroups with a row open (no `gone_ms`) in the day file, loaded
    /// from it when `None`; the ids of the last walk written, when this run
    /// wrote one since its last failure (whether a cgroup is new since).
    cg_rows: Option<HashMap<u64, Arc<str>, Fast>>,
    cg_prev: Option<HashSet<u64, Fast>>,
    last_window: u64,
    committed: u64,
    last_ms: u64,
    /// The day file's last table's time (0: none): a process started
    /// after it was in none of its tables.
    last_table_ms: u64,
    /// No flush has succeeded since start.
    started: bool,
    /// The error last logged (logged again only when it changes).
    failing: Option<String>,
    /// Why recording stopped for good (a newer store).
    disabled: Option<String>,
    boot_ms: u64,
    /// The boot the store's last sample belongs to.
    prev_boot_ms: u64,
    /// The store's lock (one agent records to a directory); nothing is
    /// written without it.
    lock: Option<std::fs::File>,
    /// Wall and boot-clock ms at start ([`settled_now`]).
    clock_start: (u64, u64),
}

impl Inner {
    /// At a clean stop, after the last flush: a journal whose records are
    /// all in the store is removed (the next start makes a new one), so no
    /// file of journal size is left in memory; one still holding records
    /// (the disk failing) stays for the next start to write.
    fn remove_journal_if_empty(&self) {
        let j = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(path) = j.path()
            && !j.holds_above(self.committed)
            && self.stats.recording.load(Relaxed)
        {
            let _ = std::fs::remove_file(path);
        }
    }

    fn flush(&mut self) {
        let journal = self.journal.clone();
        let (ptr, len) = journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take_in_place();
        // SAFETY: the taken records stay where they are, unchanged, until
        // the release below, and `journal` (holding the mapping) outlives
        // this borrow.
        let buf = unsafe { std::slice::from_raw_parts(ptr, len) };
        let t0 = Instant::now();
        let written = self.write(buf);
        self.stats
            .write_ns
            .fetch_add(t0.elapsed().as_nanos() as u64, Relaxed);
        self.stats.flushes.fetch_add(1, Relaxed);
        journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .release(written);
        self.stats.recording.store(written, Relaxed);
        if !written {
            self.stats.failed_flushes.fetch_add(1, Relaxed);
        }
        self.retain();
        self.stats.flushed.done();
    }

    fn fail(&mut self, what: String) {
        if self.failing.as_ref() != Some(&what) {
            (self.log)(what.clone());
            self.failing = Some(what);
        }
        // The encoders ran ahead of what was committed: start over.
        self.need_key = true;
        self.procs.reset();
        self.chain.forget();
        self.cg.reset();
        self.cg_rows = None;
        self.cg_prev = None;
        self.day = None;
    }

    /// Writes the records of `buf` not yet in the store; true when all are.
    fn write(&mut self, buf: &[u8]) -> bool {
        if self.disabled.is_some() {
            return false;
        }
        if self.lock.is_none() {
            match lock(&self.opts.dir) {
                Ok(f) => self.lock = Some(f),
                Err(LockError::InUse(e) | LockError::Cannot(e)) => {
                    self.fail(e);
                    return false;
                }
            }
        }
        let mut recs: Vec<Record> = records(buf).collect();
        // What is in the store already: only the process tables it leads to.
        let old = recs.iter().take_while(|r| r.seq <= self.committed).count();
        for r in recs.drain(..old) {
            self.chain.feed(r.kind, r.seq, r.payload);
        }
        let Some(first) = recs.first() else {
            return true;
        };
        let mut gaps = Vec::new();
        if self.committed > 0 && first.seq > self.committed + 1 {
            gaps.push((
                self.last_ms,
                first.ts_ms,
                "samples dropped: the writer fell behind",
            ));
            self.need_key = true;
        }
        if self.started && self.last_ms > 0 && first.ts_ms > self.last_ms {
            // The counters go on across an agent restart, not a reboot.
            let rebooted = self.prev_boot_ms.abs_diff(self.boot_ms) > 2000;
            gaps.push((
                self.last_ms,
                first.ts_ms,
                if rebooted { "reboot" } else { "agent stopped" },
            ));
        }
        let mut i = 0;
        while i < recs.len() {
            let day = db::day_of(recs[i].ts_ms);
            let n = recs[i..]
                .iter()
                .take_while(|r| db::day_of(r.ts_ms) == day)
                .count();
            if let Err(e) = self.write_day(&day, &recs[i..i + n], &gaps) {
                self.fail(e.to_string());
                return false;
            }
            gaps.clear();
            i += n;
        }
        if self.failing.take().is_some() {
            (self.log)(format!(
                "store: recording to {} again",
                self.opts.dir.display()
            ));
        }
        self.started = false;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::day::*;
    use super::*;
    use rusqlite::StatementStatus;

    /// The statements the writer runs for each process that ends are
    /// prepared once: a plan that depends on the values bound (the exit
    /// lookup's range) would otherwise be parsed and planned again at
    /// every run, which cost the writer more than the rest of recording a
    /// burst of 10,000 short-lived processes.
    #[test]
    fn a_statement_run_again_with_other_values_is_not_prepared_again() {
        let d = tempfile::tempdir().unwrap();
        let access = crate::access::Access::private("a test's own store");
        let c = db::open_write(&d.path().join("day.db"), &access).unwrap();
        let s = |pid: u32| Static {
            pid,
            start_ticks: u64::from(pid) * 100,
            ..Default::default()
        };
        for pid in 1..=5 {
            identity_id(&c, &s(pid), 1, 0, Path::new("")).unwrap();
        }
        for pid in 1..=10 {
            exit_identity(&c, pid, u64::from(pid) * 100 + 7).unwrap();
        }
        for sql in [EXIT_IDENTITY, IDENTITY_OF] {
            let st = c.prepare_cached(sql).unwrap();
            assert_eq!(st.get_status(StatementStatus::RePrepare), 0, "{sql}");
        }
    }

    /// An exit whose start is known to within a second goes to the row of
    /// its pid that has not ended: a second exit near an ended row's start
    /// is a later process that took the pid, never a new end for it.
    #[test]
    fn an_exit_never_ends_a_row_that_has_ended() {
        let d = tempfile::tempdir().unwrap();
        let access = crate::access::Access::private("a test's own store");
        let c = db::open_write(&d.path().join("day.db"), &access).unwrap();
        let s = Static {
            pid: 9,
            start_ticks: 1_000,
            ..Default::default()
        };
        let id = identity_id(&c, &s, 1, 0, Path::new("")).unwrap();
        assert_eq!(exit_identity(&c, 9, 1_050).unwrap(), Some(id));
        c.execute("UPDATE identity SET exit_ms = 5 WHERE id = ?1", [id])
            .unwrap();
        assert_eq!(exit_identity(&c, 9, 1_050).unwrap(), None);
    }
}
