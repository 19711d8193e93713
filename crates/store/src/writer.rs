//! Recording: the sampler appends to the journal ([`Tap`]); the writer
//! thread keeps no clock of its own: the sampler hands it a flush with the
//! first sample of each flush interval ([`Writer::sampled`]; 15 s by
//! default: 0.07 wakeups a second, each at an instant the sampler is awake
//! for), and it moves what the journal holds into the day's file in one
//! transaction, and keeps the store within its age and size limits.

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
use crate::db::{self, KIND_CGROUPS, KIND_PROCS, KIND_SYSTEM, OpenError};
use crate::journal::{Journal, Kind, Record, records};
use crate::procs::{self, Encoder, Static};

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

/// Bytes of other records after which a new whole process table goes into
/// the journal even when the table is small (the journal keeps everything
/// after its last whole table).
pub const WHOLE_AFTER_MIN: usize = 1 << 20;

/// The sampler's end: copies into the journal, never waits on the disk.
pub struct Tap {
    journal: Arc<Mutex<Journal>>,
    stats: Arc<Stats>,
    /// Exits or a table's delta, encoded, reused.
    buf: Vec<u8>,
    /// What is kept of the last table given, to tell what changed.
    last: procs::Seen,
    /// The record holding the last table (a whole one or a delta), and
    /// the last whole one.
    last_seq: Option<u64>,
    whole_seq: Option<u64>,
    /// Bytes appended since the last whole table, and its size.
    since_whole: usize,
    whole_len: usize,
}

impl Tap {
    fn new(journal: Arc<Mutex<Journal>>, stats: Arc<Stats>) -> Tap {
        Tap {
            journal,
            stats,
            buf: Vec::new(),
            last: procs::Seen::new(),
            last_seq: None,
            whole_seq: None,
            since_whole: 0,
            whole_len: 0,
        }
    }

    fn append(&mut self, kind: Kind, ts_ms: u64, len: usize, fill: &mut dyn FnMut(&mut [u8])) {
        let mut j = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        j.append_with(kind, ts_ms, len, fill);
        self.since_whole += len;
        self.stats.dropped.store(j.dropped, Relaxed);
    }

    /// System sources' bytes as read ([`procfs::kept`] entries).
    pub fn system(&mut self, ts_ms: u64, kept: &[u8]) {
        if !kept.is_empty() {
            self.append(Kind::System, ts_ms, kept.len(), &mut |d| {
                d.copy_from_slice(kept)
            });
        }
    }

    /// The process table: what changed since the last one (births, changed
    /// rows, ends), or the whole table when the journal no longer holds
    /// the last whole one (the writer released it, or a full journal
    /// dropped it), or once more bytes than half of one (and at least
    /// [`WHOLE_AFTER_MIN`]) were appended since, so that the journal's
    /// chain stays short.
    pub fn procs(&mut self, ts_ms: u64, procs: &[proctable::Proc]) {
        let mut j = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        let chained = self.last_seq.is_some_and(|s| j.holds(s))
            && self.whole_seq.is_some_and(|s| j.holds(s))
            && self.since_whole <= (self.whole_len / 2).max(WHOLE_AFTER_MIN);
        let before = j.last_seq();
        if chained {
            let base = self.last_seq.unwrap_or(0);
            // Rows made one at a time and hashed; a walk not in pid order
            // (none lists so) costs a table of rows.
            if self
                .last
                .put_delta_procs(&mut self.buf, base, procs)
                .is_none()
            {
                let mut rows = Vec::new();
                procs::put_rows(&mut rows, procs);
                procs::sort_rows(&mut rows, &mut Vec::new());
                self.last.put_delta_rows(&mut self.buf, base, &rows);
            }
            j.append(Kind::ProcsDelta, ts_ms, &self.buf);
            self.since_whole += self.buf.len();
        } else {
            let len = procs::rows_len(procs);
            let last = &mut self.last;
            last.forget();
            if procs::in_pid_order(procs) {
                // Written where the journal keeps it: no table of rows here.
                j.append_with(Kind::Procs, ts_ms, len, &mut |d| {
                    procs::fill_rows(d, procs);
                    last.keep(d);
                });
            } else {
                procs::put_rows(&mut self.buf, procs);
                procs::sort_rows(&mut self.buf, &mut Vec::new());
                j.append(Kind::Procs, ts_ms, &self.buf);
                last.keep(&self.buf);
            }
            self.whole_seq = Some(j.last_seq());
            self.whole_len = len;
            self.since_whole = 0;
        }
        // A record too large for the journal is not there: the next table
        // goes whole.
        self.last_seq = Some(j.last_seq()).filter(|s| *s != before);
        self.stats.dropped.store(j.dropped, Relaxed);
        drop(j);
        if self.buf.capacity() > 1 << 20 && self.buf.len() < 1 << 18 {
            // A large table's sort or delta: not kept for the next one.
            self.buf = Vec::new();
        }
    }

    /// A walk of the cgroups, whole.
    pub fn cgroups(&mut self, ts_ms: u64, s: &cgroups::Sample) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        crate::cgroups::put_whole(&mut buf, s);
        self.append(Kind::Cgroups, ts_ms, buf.len(), &mut |d| {
            d.copy_from_slice(&buf)
        });
        self.buf = buf;
    }

    pub fn exits(&mut self, ts_ms: u64, exits: &[proctable::Exit]) {
        if exits.is_empty() {
            return;
        }
        let mut buf = std::mem::take(&mut self.buf);
        procs::put_exits(&mut buf, exits);
        self.append(Kind::Exits, ts_ms, buf.len(), &mut |d| {
            d.copy_from_slice(&buf)
        });
        self.buf = buf;
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
    /// too.
    pub fn sampled(&mut self, ms: u64) {
        let w = ms / self.flush_ms;
        match self.window.replace(w) {
            Some(last) if last != w => self.flush(),
            _ => {}
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
pub fn open(opts: Options, log: fn(String)) -> Result<(Tap, Flusher, Arc<Stats>), String> {
    let dir = &opts.dir;
    match crate::access::prepare_dir(dir, &opts.access) {
        Ok(0) => {}
        Ok(n) => log(format!(
            "store: {n} modes in {} tightened: readable by {} ({})",
            dir.display(),
            opts.access.readers(),
            opts.access.why
        )),
        Err(e) if dir.is_dir() => return Err(format!("store: {e}")),
        Err(e) => log(format!(
            "store: {e}; recording waits until it can (or give --store DIR, or --no-store)"
        )),
    }
    let lock = match lock(dir) {
        Ok(f) => Some(f),
        Err(LockError::InUse(e)) => return Err(e),
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
            return Err(format!("store journal {}: {e}", opts.journal.display()));
        }
        Err(e) => {
            log(format!(
                "store: journal {}: {e}; recording goes on with the journal in the agent's memory (a kill -9 loses up to one flush interval of samples)",
                opts.journal.display()
            ));
            Journal::anonymous(opts.journal_bytes, &owner)
                .map_err(|e| format!("store: a journal in memory: {e}"))?
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
pub fn start(opts: Options, log: fn(String)) -> Result<(Tap, Writer, Arc<Stats>), String> {
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
        .map_err(|e| format!("starting the store writer: {e}"))?;
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

/// Unix ms of the boot (CLOCK_REALTIME - CLOCK_BOOTTIME).
pub fn boot_ms() -> u64 {
    now_ms().saturating_sub(boot_clock_ms())
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
                self.fail(e);
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

    fn open_day(&mut self, day: &str) -> Result<(), String> {
        if self.day.as_ref().is_some_and(|(d, _)| d == day) {
            return Ok(());
        }
        self.day = None;
        crate::access::prepare_dir(&self.opts.dir, &self.opts.access).map_err(|e| {
            format!("store: {e}; recording waits until it can (or give --store DIR, or --no-store)")
        })?;
        let path = db::path_for(&self.opts.dir, day);
        let c = match db::open_write(&path, &self.opts.access) {
            Ok(c) => c,
            Err(OpenError::Damaged { path, why }) => {
                let aside = db::set_aside(&path, now_ms() / 1000).map_err(|e| {
                    format!(
                        "store: {} is damaged ({why}) and cannot be moved aside: {e}",
                        path.display()
                    )
                })?;
                (self.log)(format!(
                    "store: {} is damaged ({why}); moved aside to {} and recording goes on in a new file; other days are intact (sqlite3 .recover may save what the damaged one holds)",
                    path.display(),
                    aside.display()
                ));
                db::open_write(&path, &self.opts.access).map_err(|e| format!("store: {e}"))?
            }
            Err(e @ OpenError::Newer { .. }) => {
                let msg = format!("store: {e}; not recording");
                self.disabled = Some(msg.clone());
                (self.log)(msg.clone());
                return Err(msg);
            }
            Err(e) => {
                let e = e.to_string();
                return Err(format!(
                    "store: {e}; sampling and serving go on, {}",
                    remedy(&e)
                ));
            }
        };
        self.need_key = true;
        self.procs.reset();
        self.cg_rows = None;
        self.day = Some((day.to_string(), c));
        Ok(())
    }

    fn write_day(
        &mut self,
        day: &str,
        recs: &[Record],
        gaps: &[(u64, u64, &str)],
    ) -> Result<(), String> {
        self.open_day(day)?;
        let window = recs[0].ts_ms / KEY_EVERY_MS;
        let key = self.need_key || window != self.last_window;
        if key {
            self.sys.reset();
            self.cg_key_due = true;
        }
        let Some((_, c)) = self.day.as_mut() else {
            return Err("store: no file open".into());
        };
        let path = db::path_for(&self.opts.dir, day);
        let err = |e: rusqlite::Error| {
            let e = e.to_string();
            format!(
                "store: writing {}: {e}; sampling and serving go on, {}",
                path.display(),
                remedy(&e)
            )
        };
        let tx = c.transaction().map_err(err)?;
        let mut rows = 0u64;
        for (a, b, why) in gaps {
            exec(
                &tx,
                "INSERT INTO gap(start_ms, end_ms, why) VALUES (?1, ?2, ?3)",
                params![*a as i64, *b as i64, why],
            )
            .map_err(err)?;
            rows += 1;
        }
        // System sources.
        let sys: Vec<(u64, &[u8])> = recs
            .iter()
            .filter(|r| r.kind == Kind::System)
            .map(|r| (r.ts_ms, r.payload))
            .collect();
        let mut written: Vec<(String, u64, u64, u64)> = Vec::new();
        if !sys.is_empty() {
            let mut body = Vec::new();
            let sizes = self.sys.encode(&sys, &mut body);
            exec(&tx,
                "INSERT INTO block(kind, key, start_ms, end_ms, samples, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![KIND_SYSTEM, key, sys[0].0 as i64, sys[sys.len() - 1].0 as i64, sys.len() as i64, body],
            )
            .map_err(err)?;
            rows += 1;
            for (src, raw, z) in sizes {
                written.push((
                    src.name().to_string(),
                    sys.len() as u64,
                    raw as u64,
                    z as u64,
                ));
            }
        }
        // Process tables and exits.
        let boot_ms = self.boot_ms;
        let proc_root = self.opts.proc_root.clone();
        let mut snaps = Vec::new();
        let mut dbuf = Vec::new();
        let mut times = Vec::new();
        let mut prev_ts = self.last_ms;
        let mut first = true;
        let cg_key = self.cg_key_due;
        let mut cg_body = Vec::new();
        let mut cg_times = Vec::new();
        let mut cg_cpu_ns = 0;
        for r in recs {
            match r.kind {
                Kind::Procs | Kind::ProcsDelta => {
                    if !self.chain.accepts(r.kind, r.seq, r.payload) {
                        continue;
                    }
                    let mut identify = |s: &Static| -> u32 {
                        identity_id(&tx, s, r.ts_ms, boot_ms, &proc_root).unwrap_or(0)
                    };
                    // A keyframe from the table after; else the delta,
                    // from the table before.
                    let ch = if (key && first) || self.procs.is_empty() {
                        self.chain.commit(r.kind, r.seq, r.payload);
                        self.procs
                            .encode_key(self.chain.rows(), &mut snaps, &mut identify)
                    } else {
                        let delta = self.chain.delta_of(r.kind, r.payload, &mut dbuf);
                        let ch = self.procs.encode_delta(
                            self.chain.rows(),
                            delta,
                            &mut snaps,
                            &mut identify,
                        );
                        self.chain.commit(r.kind, r.seq, r.payload);
                        ch
                    };
                    first = false;
                    rows += ch.born as u64;
                    for id in ch.gone {
                        exec(
                            &tx,
                            "UPDATE identity SET last_ms = ?1 WHERE id = ?2 AND last_ms IS NULL",
                            params![prev_ts as i64, id],
                        )
                        .map_err(err)?;
                    }
                    times.push(r.ts_ms);
                    prev_ts = r.ts_ms;
                }
                Kind::Exits => {
                    for e in procs::exits(r.payload) {
                        let s = Static {
                            pid: e.pid,
                            start_ticks: e.start_ticks,
                            start_ns: e.start_ns,
                            comm: e.comm,
                            ..Default::default()
                        };
                        let near = || exit_identity(&tx, e.pid, e.start_ticks);
                        let id = match self.procs.id_of(e.pid, e.start_ticks) {
                            Some(id) => id,
                            None => match near().map_err(err)? {
                                Some(id) => id,
                                None => {
                                    rows += 1;
                                    identity_id(&tx, &s, 0, boot_ms, Path::new("")).map_err(err)?
                                }
                            },
                        };
                        exec(&tx,
                            "UPDATE identity SET ppid = coalesce(ppid, ?2), exit_ms = ?3, exit_status = ?4,
                                exit_utime_ns = ?5, exit_stime_ns = ?6, exit_maxrss_bytes = ?7 WHERE id = ?1",
                            params![
                                id,
                                e.ppid,
                                (boot_ms + e.exit_ns / 1_000_000) as i64,
                                e.exit_status,
                                e.utime_ns as i64,
                                e.stime_ns as i64,
                                e.maxrss_bytes as i64
                            ],
                        )
                        .map_err(err)?;
                    }
                }
                Kind::Cgroups => {
                    let cpu = sys::thread_cpu_ns();
                    let Some(walk) = crate::cgroups::whole(r.payload, r.ts_ms) else {
                        continue;
                    };
                    self.cg.encode(&walk, self.cg_key_due, &mut cg_body);
                    self.cg_key_due = false;
                    rows += cgroup_rows(&tx, &mut self.cg_rows, &mut self.cg_prev, &walk, r.ts_ms)
                        .map_err(err)?;
                    cg_times.push(r.ts_ms);
                    cg_cpu_ns += sys::thread_cpu_ns().saturating_sub(cpu);
                }
                Kind::System => {}
            }
        }
        if !cg_times.is_empty() {
            let cpu = sys::thread_cpu_ns();
            let (raw, z) =
                insert_timed_block(&tx, KIND_CGROUPS, cg_key, &cg_times, &cg_body).map_err(err)?;
            rows += 1;
            written.push(("cgroups".into(), cg_times.len() as u64, raw, z));
            cg_cpu_ns += sys::thread_cpu_ns().saturating_sub(cpu);
        }
        if !times.is_empty() {
            let (raw, z) = insert_timed_block(&tx, KIND_PROCS, key, &times, &snaps).map_err(err)?;
            rows += 1;
            written.push(("processes".into(), times.len() as u64, raw, z));
        }
        for (src, samples, raw, z) in &written {
            exec(&tx,
                "INSERT INTO usage(source, samples, raw_bytes, stored_bytes) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(source) DO UPDATE SET samples = samples + excluded.samples,
                   raw_bytes = raw_bytes + excluded.raw_bytes, stored_bytes = stored_bytes + excluded.stored_bytes",
                params![src, *samples as i64, *raw as i64, *z as i64],
            )
            .map_err(err)?;
        }
        let last = recs[recs.len() - 1];
        db::meta_set(&tx, "journal_seq", last.seq as i64).map_err(err)?;
        db::meta_set(&tx, "last_ms", last.ts_ms as i64).map_err(err)?;
        db::meta_set(&tx, "boot_ms", boot_ms as i64).map_err(err)?;
        tx.commit().map_err(err)?;
        for (src, _, _, z) in written {
            self.stats.add_written(&src, z);
        }
        self.stats.rows.fetch_add(rows, Relaxed);
        self.stats.cgroups_cpu_ns.fetch_add(cg_cpu_ns, Relaxed);
        self.committed = last.seq;
        self.last_ms = last.ts_ms;
        self.need_key = false;
        self.last_window = window;
        Ok(())
    }

    /// Age and size limits: whole old days go first, then the oldest blocks
    /// of the only day left. Day files dated after today (a wall clock
    /// that was ahead) are never aged out; over the size cap they go
    /// first, before any real day.
    fn retain(&mut self) {
        let now = settled_now(self.clock_start);
        let today = db::day_of(now);
        let files = db::day_files(&self.opts.dir);
        let open = self.day.as_ref().map(|(d, _)| d.clone());
        let cutoff = now.saturating_sub(self.opts.retention.as_millis() as u64);
        let mut kept = Vec::new();
        for (day, path) in files {
            let end = db::day_start_ms(&day).unwrap_or(0) + 86_400_000;
            if end <= cutoff && Some(&day) != open.as_ref() {
                if let Err(e) = db::remove_day(&path) {
                    (self.log)(format!(
                        "store: removing {} (past retention): {e}",
                        path.display()
                    ));
                }
            } else {
                kept.push((day, path));
            }
        }
        // Removal order under the cap: future days, then the oldest.
        kept.sort_by_key(|(d, _)| (*d <= today, d.clone()));
        let total = |k: &[(String, PathBuf)]| k.iter().map(|(_, p)| db::file_bytes(p)).sum::<u64>();
        let mut bytes = total(&kept);
        let mut rounds = 0;
        while bytes > self.opts.max_bytes && rounds < 64 {
            rounds += 1;
            // A future day, or one older than the day being written.
            let first = kept.iter().position(|(d, _)| {
                Some(d) != open.as_ref() && (*d > today || open.as_ref().is_none_or(|o| d < o))
            });
            if let Some(i) = first.filter(|_| kept.len() > 1) {
                let _ = db::remove_day(&kept[i].1);
                kept.remove(i);
            } else if let Some((_, c)) = self.day.as_ref() {
                let r = c.execute_batch(
                    "DELETE FROM block WHERE id IN (SELECT id FROM block ORDER BY start_ms LIMIT (SELECT count(*) / 8 + 1 FROM block));
                     PRAGMA incremental_vacuum;
                     PRAGMA wal_checkpoint(TRUNCATE);",
                );
                if r.is_err() {
                    break;
                }
            } else {
                break;
            }
            bytes = total(&kept);
        }
        self.stats.bytes_on_disk.store(bytes, Relaxed);
    }
}

/// What to do about a failed write, for the log line: `why` as SQLite or
/// the system said it.
fn remedy(why: &str) -> &'static str {
    let w = why.to_ascii_lowercase();
    if w.contains("full") || w.contains("no space") || w.contains("quota") {
        "recording resumes when there is room (free space on that filesystem, or lower max_size, or give --store DIR)"
    } else if w.contains("read-only") || w.contains("readonly") || w.contains("permission") {
        "recording resumes when the directory is writable (or give --store DIR, or --no-store)"
    } else {
        "recording resumes when it can (or give --store DIR, or --no-store)"
    }
}

/// Inserts a block of `kind` holding the samples taken at `times`: their
/// times as deltas, then `payload` (the samples), compressed. Returns its
/// raw and stored sizes.
fn insert_timed_block(
    tx: &Connection,
    kind: i64,
    key: bool,
    times: &[u64],
    payload: &[u8],
) -> rusqlite::Result<(u64, u64)> {
    let mut body = Vec::with_capacity(payload.len() + 4 * times.len() + 8);
    put_varint(&mut body, times.len() as u64);
    let mut last = 0;
    for t in times {
        put_delta(&mut body, last, *t);
        last = *t;
    }
    body.extend_from_slice(payload);
    let z = compress(&body);
    let (first, end) = (times[0], times[times.len() - 1]);
    exec(
        tx,
        "INSERT INTO block(kind, key, start_ms, end_ms, samples, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![kind, key, first as i64, end as i64, times.len() as i64, z],
    )?;
    Ok((body.len() as u64, z.len() as u64))
}

/// The rows of `cgroup` a walk at `ts` makes and closes: one for each
/// cgroup the day file has no open row of (made since the walk before
/// when `prev` holds that walk and not it: this run's last walk, else the
/// day file's open rows), `gone_ms` on the open rows of cgroups the walk
/// did not find. Returns the rows made.
fn cgroup_rows(
    tx: &Connection,
    open: &mut Option<HashMap<u64, Arc<str>, Fast>>,
    prev: &mut Option<HashSet<u64, Fast>>,
    walk: &cgroups::Sample,
    ts: u64,
) -> rusqlite::Result<u64> {
    let open = match open {
        Some(o) => o,
        None => {
            let mut st = tx.prepare("SELECT cgroup_id, path FROM cgroup WHERE gone_ms IS NULL")?;
            let rows = st.query_map([], |r| {
                Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?))
            })?;
            let mut m = HashMap::default();
            for row in rows {
                let (id, path) = row?;
                m.insert(id, Arc::from(path));
            }
            // The file's last walk (this run's, or one before a restart).
            if prev.is_none() && !m.is_empty() {
                *prev = Some(m.keys().copied().collect());
            }
            open.insert(m)
        }
    };
    let now: HashMap<u64, &Arc<str>, Fast> = walk.cgroups.iter().map(|c| (c.id, &c.path)).collect();
    let gone: Vec<(u64, Arc<str>)> = open
        .iter()
        .filter(|(id, path)| now.get(*id).is_none_or(|p| *p != *path))
        .map(|(id, p)| (*id, p.clone()))
        .collect();
    for (id, path) in gone {
        exec(
            tx,
            "UPDATE cgroup SET gone_ms = ?3 WHERE cgroup_id = ?1 AND path = ?2 AND gone_ms IS NULL",
            params![id as i64, &*path, ts as i64],
        )?;
        open.remove(&id);
    }
    let mut made = 0;
    for c in &walk.cgroups {
        if open.contains_key(&c.id) {
            continue;
        }
        let new = prev.as_ref().is_some_and(|p| !p.contains(&c.id));
        made += exec(
            tx,
            "INSERT OR IGNORE INTO cgroup(cgroup_id, path, first_ms, made) VALUES (?1, ?2, ?3, ?4)",
            params![c.id as i64, &*c.path, ts as i64, new],
        )? as u64;
        open.insert(c.id, c.path.clone());
    }
    *prev = Some(now.into_keys().collect());
    Ok(made)
}

/// [`exit_identity`]'s query.
const EXIT_IDENTITY: &str = "SELECT id FROM identity WHERE pid = ?1
    AND start_ticks BETWEEN ?2 - ?3 AND ?2 + ?3
    ORDER BY exit_ms IS NOT NULL, abs(start_ticks - ?2) LIMIT 1";

/// The identity row an exit belongs to when its start time is not exact:
/// taskstats (the exit capture without BPF) gives it to within a second
/// either way ([`proctable::taskstats::START_WITHIN_TICKS`]; the agent
/// gives an exit the exact start of the table it was last seen in, but a
/// process that ended while the table that first showed it was being read
/// is not settled). The nearest row of that pid within that window, one
/// not yet ended first.
fn exit_identity(tx: &Connection, pid: u32, start_ticks: u64) -> rusqlite::Result<Option<u32>> {
    let within = proctable::taskstats::START_WITHIN_TICKS as i64;
    tx.prepare_cached(EXIT_IDENTITY)?
        .query_row(params![pid, start_ticks as i64, within], |r| {
            r.get::<_, u32>(0)
        })
        .optional()
}

/// [`identity_id`]'s lookup.
const IDENTITY_OF: &str = "SELECT id FROM identity WHERE pid = ?1 AND start_ticks = ?2";

/// The id of the identity row for `s` in this day's file, added (with its
/// command line, read now) when missing.
fn identity_id(
    tx: &Connection,
    s: &Static,
    seen_ms: u64,
    boot_ms: u64,
    proc_root: &Path,
) -> rusqlite::Result<u32> {
    if let Some(id) = tx
        .prepare_cached(IDENTITY_OF)?
        .query_row(params![s.pid, s.start_ticks as i64], |r| r.get::<_, u32>(0))
        .optional()?
    {
        return Ok(id);
    }
    let cmdline = (!proc_root.as_os_str().is_empty())
        .then(|| proctable::read_cmdline_of(proc_root, s.pid, s.start_ticks))
        .flatten();
    let start_ms = boot_ms + s.start_ticks * 10;
    exec(
        tx,
        "INSERT INTO identity(pid, start_ticks, start_ms, uid, cgroup_id, comm, cmdline, first_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            s.pid,
            s.start_ticks as i64,
            start_ms as i64,
            s.uid,
            s.cgroup_id.map(|g| g as i64),
            String::from_utf8_lossy(s.comm.as_bytes()),
            cmdline,
            (seen_ms > 0).then_some(seen_ms as i64)
        ],
    )?;
    Ok(tx.last_insert_rowid() as u32)
}

#[cfg(test)]
mod tests {
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
}
