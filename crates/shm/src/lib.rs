//! The agent's shared-memory snapshot: a memory-mapped file (by default
//! `/run/quietstat/snapshot`) holding the latest CPU times, interrupt and
//! context-switch totals, memory and load, guarded by a sequence lock, so
//! that a local reader gets them with no system call at all.
//!
//! # Layout, version 1 (all integers little-endian, native to the host)
//!
//! ```text
//! offset  size  field
//!      0     8  magic            b"QSTATSHM"
//!      8     4  version          1; a reader refuses any other
//!     12     4  ncpu             per-CPU slots in the data area
//!     16     8  total_bytes      size of the file
//!     24     4  agent_pid
//!     28     4  state            1 live, 2 stopped (the agent exited; data is stale)
//!     32     4  request          futex word: a reader adds 1 to ask for a fresh sample
//!     36     4  published        futex word: the agent adds 1 after each publish
//!     40     8  seq              sequence lock: odd while the agent writes
//!     48     8  interval_ns      the agent's interval for these sources
//!     56     8  min_interval_ns  the floor: never sampled more often than this
//!     64     -  data: 8-byte words, read under `seq`
//! ```
//!
//! Data words (index: meaning). `ABSENT` (`u64::MAX`) marks a value this
//! kernel does not report.
//!
//! ```text
//!  0 sample_unix_ns   1 sample_mono_ns (CLOCK_MONOTONIC when read)
//!  2..12 CPU ticks of all CPUs: user nice system idle iowait irq softirq steal guest guest_nice
//! 12 intr_total  13 ctxt  14 forks  15 procs_running  16 procs_blocked
//! 17 btime_secs  18 softirq_total
//! 19 mem_total  20 mem_free  21 mem_available  22 buffers  23 cached
//! 24 swap_total  25 swap_free   (bytes)
//! 26 load1  27 load5  28 load15 (f64 bits)
//! 29 cpus_valid (per-CPU slots filled)
//! 30 want_since_mono_ns: written by readers (atomic max), not under `seq`:
//!    the oldest sample time any reader asking for a fresh one accepts
//! 31 reserved (0)
//! 32 + 11*i: per-CPU slot i: cpu number, then its 10 tick counters
//! ```
//!
//! A new field goes into a reserved word or after the per-CPU area with a
//! version bump; a reader checks `version` and refuses what it does not know.
//!
//! # Freshness
//!
//! [`ShmReader::read_fresh`] asks for a sample no older than a given age at
//! the moment of asking: if the one published is older, it raises
//! `want_since_mono_ns` to that moment minus the age (atomic max; the same
//! instant however often the reader is woken before it is served), adds 1 to `request`, wakes the agent with
//! `FUTEX_WAKE` and sleeps on `published` until the agent has read the kernel
//! again. The agent reads only when its last read is older than
//! `want_since_mono_ns`, so readers that ask at the same time, or while a
//! read is under way that satisfies them, are served by one read.

mod sample;
pub mod view;

use sys::mono_ns;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::time::Duration;

mod file;
mod reader;

pub use file::*;
pub use reader::*;

/// Where the agent publishes its snapshot unless told otherwise (its
/// `shm_path`), and so where readers look by default.
pub const DEFAULT_PATH: &str = "/run/quietstat/snapshot";

pub const MAGIC: [u8; 8] = *b"QSTATSHM";
pub const VERSION: u32 = 1;
pub const HEADER_BYTES: usize = 64;
/// Marks a value this kernel does not report.
pub const ABSENT: u64 = u64::MAX;
/// CPU time modes, in /proc/stat's column order.
pub const CPU_MODES: usize = 10;
const FIXED_WORDS: usize = 32;
const PER_CPU_WORDS: usize = 1 + CPU_MODES;

const WANT_SINCE: usize = 30;

const STATE_LIVE: u32 = 1;
const STATE_STOPPED: u32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}: not a quietstat snapshot ({what})")]
    NotSnapshot { path: PathBuf, what: String },
    #[error("{path}: layout version {found}; this reader accepts version {VERSION}")]
    Version { path: PathBuf, found: u32 },
    #[error(
        "{path}: view layout version {found}; this reader accepts version {}",
        view::VIEW_VERSION
    )]
    ViewVersion { path: PathBuf, found: u32 },
    #[error("{path}: written by pid {found}, not by the running agent (pid {running})")]
    NotFromAgent {
        path: PathBuf,
        found: u32,
        running: u32,
    },
    #[error("the agent has stopped; the snapshot is stale")]
    Stopped,
    #[error("{path}: the agent that wrote it{} is gone (killed?); its data is stale", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Gone { path: PathBuf, pid: Option<u32> },
    #[error("{path}: another agent{} publishes here; stop it first or give this one another --shm-path", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    InUse { path: PathBuf, pid: Option<u32> },
    #[error(
        "{dir}: {why}; other users could replace the snapshot. Use a directory only this user (or root) can write, e.g. /run/quietstat"
    )]
    UnsafeDir { dir: PathBuf, why: String },
    #[error("the snapshot was being rewritten on every attempt (agent stuck mid-write?)")]
    Torn,
    #[error("opened read-only: asking the agent for a fresh sample needs write access")]
    ReadOnly,
    #[error("no sample younger than {max_age:?} within {timeout:?}")]
    Timeout {
        max_age: Duration,
        timeout: Duration,
    },
}

impl Error {
    /// What kind of failure this is, for a caller that acts on it.
    pub fn kind(&self) -> sys::ErrorKind {
        use sys::ErrorKind as K;
        match self {
            Error::Io { source, .. } => K::of_io(source, K::Io),
            Error::NotSnapshot { .. } | Error::Version { .. } | Error::ViewVersion { .. } => {
                K::Malformed
            }
            Error::NotFromAgent { .. } | Error::InUse { .. } | Error::Torn => K::Busy,
            Error::Stopped | Error::Gone { .. } => K::Absent,
            Error::UnsafeDir { .. } => K::Invalid,
            Error::ReadOnly => K::Denied,
            Error::Timeout { .. } => K::Io,
        }
    }
}

impl From<Error> for sys::Error {
    fn from(e: Error) -> sys::Error {
        sys::Error::new(e.kind(), e.to_string())
    }
}

/// One CPU's ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuSlot {
    pub cpu: u32,
    pub ticks: [u64; CPU_MODES],
}

/// What the snapshot holds. Counters are as /proc shows them (ticks, totals
/// since boot); memory in bytes; `ABSENT` where the kernel lacks a value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub unix_ns: u64,
    pub mono_ns: u64,
    pub cpu_ticks: [u64; CPU_MODES],
    pub intr_total: u64,
    pub ctxt: u64,
    pub forks: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
    pub btime_secs: u64,
    pub softirq_total: u64,
    pub mem_total_bytes: u64,
    pub mem_free_bytes: u64,
    pub mem_available_bytes: u64,
    pub buffers_bytes: u64,
    pub cached_bytes: u64,
    pub swap_total_bytes: u64,
    pub swap_free_bytes: u64,
    pub load: [f64; 3],
    pub cpus: Vec<CpuSlot>,
}

#[repr(C)]
struct Header {
    magic: [u8; 8],
    version: u32,
    ncpu: u32,
    total_bytes: u64,
    agent_pid: u32,
    state: AtomicU32,
    request: AtomicU32,
    published: AtomicU32,
    seq: AtomicU64,
    interval_ns: AtomicU64,
    min_interval_ns: AtomicU64,
}
const _: () = assert!(std::mem::size_of::<Header>() == HEADER_BYTES);

pub fn total_bytes(ncpu: u32) -> usize {
    HEADER_BYTES + 8 * (FIXED_WORDS + PER_CPU_WORDS * ncpu as usize)
}

/// A shared mapping of the whole file.
struct Map {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is only accessed through atomics.
unsafe impl Send for Map {}
// SAFETY: as above: shared references only reach it through atomics.
unsafe impl Sync for Map {}

impl Map {
    fn new(file: Option<&File>, len: usize, writable: bool) -> io::Result<Map> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        let (flags, fd) = match file {
            Some(f) => (libc::MAP_SHARED, f.as_raw_fd()),
            None => (libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1),
        };
        // SAFETY: a fresh mapping; the kernel checks fd, length and protection.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Map {
            ptr: ptr.cast(),
            len,
        })
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping is at least HEADER_BYTES long and page-aligned.
        unsafe { &*(self.ptr as *const Header) }
    }

    fn words(&self) -> &[AtomicU64] {
        let n = (self.len - HEADER_BYTES) / 8;
        // SAFETY: in bounds, 8-byte aligned (page-aligned base + 64).
        unsafe { std::slice::from_raw_parts(self.ptr.add(HEADER_BYTES) as *const AtomicU64, n) }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: ptr/len came from mmap.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Wakes up to `n` threads waiting on `word` (FUTEX_WAKE). One system
/// call, async-signal-safe.
pub fn futex_wake(word: &AtomicU32, n: i32) {
    // SAFETY: word is a valid, live u32 (a reference guarantees it).
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            n,
            std::ptr::null::<libc::timespec>(),
        )
    };
}

/// Sleeps while `word == val`, until `deadline` (absolute,
/// CLOCK_MONOTONIC), or a wake, or a signal.
fn futex_wait_until(word: &AtomicU32, val: u32, deadline_ns: Option<u64>) {
    let ts = deadline_ns.map(|d| libc::timespec {
        tv_sec: (d / 1_000_000_000) as libc::time_t,
        tv_nsec: (d % 1_000_000_000) as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    let op = libc::FUTEX_WAIT_BITSET;
    // SAFETY: word is a valid u32; ts_ptr is null or a valid timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            val,
            ts_ptr,
            std::ptr::null::<u32>(),
            libc::FUTEX_BITSET_MATCH_ANY,
        )
    };
}

/// The agent's side: creates the file and publishes into it. Dropping it
/// marks the snapshot stopped.
pub struct ShmWriter {
    map: Map,
    ncpu: u32,
    path: Option<PathBuf>,
    /// Holds the one-agent-per-path lock for the writer's life.
    _lock: Option<File>,
}

impl Drop for ShmWriter {
    fn drop(&mut self) {
        self.mark_stopped();
    }
}

impl ShmWriter {
    /// Creates the snapshot at `path`, or an anonymous mapping when `path`
    /// is `None`. Mode 0644: anyone may read; asking for a fresh sample
    /// needs write access.
    ///
    /// The file is made so that no one else can steer it:
    /// - its directory must not be writable by other users (else
    ///   [`Error::UnsafeDir`]): they could replace the file readers trust;
    /// - one agent per path: a lock on `<path>.lock` (an open-file-description
    ///   lock, released when the agent dies however it dies) is taken first;
    ///   if another agent holds it, [`Error::InUse`] and nothing is touched;
    /// - the file is created unnamed (`O_TMPFILE`, or failing that a random
    ///   name with `O_EXCL|O_NOFOLLOW`), its space allocated up front (a full
    ///   filesystem is [`Error::Io`] with ENOSPC now, never SIGBUS later), its
    ///   header written, then linked under a random name and renamed into
    ///   place: no link is ever followed, and a reader never sees a
    ///   half-made file.
    pub fn create(path: Option<&Path>, ncpu: u32) -> Result<ShmWriter, Error> {
        let len = total_bytes(ncpu);
        let Some(path) = path else {
            let map = Map::new(None, len, true).map_err(|source| Error::Io {
                path: PathBuf::from("(anonymous)"),
                source,
            })?;
            init_header(&map, ncpu, len);
            return Ok(ShmWriter {
                map,
                ncpu,
                path: None,
                _lock: None,
            });
        };
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(d) => d.to_path_buf(),
            None => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        safe_dir(&dir)?;
        let lock = lock_path(path);
        let lock_file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&lock)
            .map_err(|source| Error::Io {
                path: lock.clone(),
                source,
            })?;
        if !take_lock(&lock_file).map_err(|source| Error::Io {
            path: lock.clone(),
            source,
        })? {
            let pid = ShmReader::open(path).map(|r| r.agent_pid()).ok();
            return Err(Error::InUse {
                path: path.to_path_buf(),
                pid,
            });
        }
        let (file, tmp_name) = unnamed_file(&dir).map_err(io)?;
        let fd = file.as_raw_fd();
        // SAFETY: a valid fd; fchmod and posix_fallocate take plain integers.
        let r = unsafe {
            libc::fchmod(fd, 0o644);
            libc::posix_fallocate(fd, 0, len as libc::off_t)
        };
        if r != 0 {
            if let Some(t) = &tmp_name {
                let _ = std::fs::remove_file(t);
            }
            return Err(io(io::Error::from_raw_os_error(r)));
        }
        let map = Map::new(Some(&file), len, true).map_err(io)?;
        init_header(&map, ncpu, len);
        let placed = match tmp_name {
            Some(t) => std::fs::rename(&t, path).inspect_err(|_| {
                let _ = std::fs::remove_file(&t);
            }),
            None => link_into_place(&file, &dir, path),
        };
        placed.map_err(io)?;
        Ok(ShmWriter {
            map,
            ncpu,
            path: Some(path.to_path_buf()),
            _lock: Some(lock_file),
        })
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn ncpu(&self) -> u32 {
        self.ncpu
    }

    pub fn set_intervals(&self, interval_ns: u64, min_interval_ns: u64) {
        let h = self.map.header();
        h.interval_ns.store(interval_ns, Ordering::Relaxed);
        h.min_interval_ns.store(min_interval_ns, Ordering::Relaxed);
    }

    /// Writes `s` under the sequence lock and wakes readers waiting for it.
    /// Per-CPU slots beyond `ncpu` are dropped.
    pub fn publish(&self, s: &Snapshot) {
        let h = self.map.header();
        let w = self.map.words();
        let seq = h.seq.load(Ordering::Relaxed);
        h.seq.store(seq | 1, Ordering::Relaxed);
        fence(Ordering::Release);
        let put = |i: usize, v: u64| w[i].store(v, Ordering::Relaxed);
        put(0, s.unix_ns);
        put(1, s.mono_ns);
        for (i, t) in s.cpu_ticks.iter().enumerate() {
            put(2 + i, *t);
        }
        let scalars = [
            s.intr_total,
            s.ctxt,
            s.forks,
            s.procs_running,
            s.procs_blocked,
            s.btime_secs,
            s.softirq_total,
            s.mem_total_bytes,
            s.mem_free_bytes,
            s.mem_available_bytes,
            s.buffers_bytes,
            s.cached_bytes,
            s.swap_total_bytes,
            s.swap_free_bytes,
            s.load[0].to_bits(),
            s.load[1].to_bits(),
            s.load[2].to_bits(),
        ];
        for (i, v) in scalars.into_iter().enumerate() {
            put(12 + i, v);
        }
        let n = s.cpus.len().min(self.ncpu as usize);
        put(29, n as u64);
        for (i, c) in s.cpus[..n].iter().enumerate() {
            let base = FIXED_WORDS + PER_CPU_WORDS * i;
            put(base, c.cpu as u64);
            for (m, t) in c.ticks.iter().enumerate() {
                put(base + 1 + m, *t);
            }
        }
        h.seq.store(seq.wrapping_add(2) & !1, Ordering::Release);
        h.published.fetch_add(1, Ordering::Release);
        futex_wake(&h.published, i32::MAX);
    }

    /// Wakes readers waiting on the publish counter without changing the
    /// data (the agent read sources this snapshot does not carry).
    pub fn notify(&self) {
        let h = self.map.header();
        h.published.fetch_add(1, Ordering::Release);
        futex_wake(&h.published, i32::MAX);
    }

    /// The oldest sample time (CLOCK_MONOTONIC ns) a reader asking for a
    /// fresh sample accepts; 0 when none has asked.
    pub fn want_since(&self) -> u64 {
        self.map.words()[WANT_SINCE].load(Ordering::Acquire)
    }

    /// The word [`ShmWriter::wait_request`] sleeps on: adding to it and
    /// waking it (as a signal handler may) ends the wait.
    pub fn request_word(&self) -> &AtomicU32 {
        &self.map.header().request
    }

    /// The request counter now; pass it to [`ShmWriter::wait_request`].
    pub fn request_count(&self) -> u32 {
        self.map.header().request.load(Ordering::Acquire)
    }

    /// Sleeps until a reader asks for a fresh sample (the request counter
    /// differs from `seen`), until `deadline_mono_ns` (CLOCK_MONOTONIC,
    /// absolute: a step of the wall clock neither stalls nor hurries it),
    /// or until a signal. Returns the request counter.
    pub fn wait_request(&self, seen: u32, deadline_mono_ns: Option<u64>) -> u32 {
        let h = self.map.header();
        futex_wait_until(&h.request, seen, deadline_mono_ns);
        h.request.load(Ordering::Acquire)
    }

    /// Wakes the sampler from inside the agent (the HTTP server does this
    /// for `max_age_ms`, after saying what it wants). Load
    /// [`ShmWriter::published_count`] before checking the data, and wait on it.
    pub fn request(&self) {
        request(self.map.header())
    }

    /// Waits until the publish counter differs from `seen` or `timeout` passes.
    pub fn wait_published(&self, seen: u32, timeout: Duration) {
        wait_published(self.map.header(), seen, timeout)
    }

    pub fn published_count(&self) -> u32 {
        self.map.header().published.load(Ordering::Acquire)
    }

    /// Marks the snapshot stale (the agent is stopping) and wakes everyone.
    pub fn mark_stopped(&self) {
        let h = self.map.header();
        h.state.store(STATE_STOPPED, Ordering::Release);
        h.published.fetch_add(1, Ordering::Release);
        futex_wake(&h.published, i32::MAX);
    }
}

fn init_header(map: &Map, ncpu: u32, len: usize) {
    // SAFETY: the mapping is fresh and not yet visible to readers under its
    // final name (or anonymous); plain writes to the non-atomic fields.
    unsafe {
        let h = map.ptr as *mut Header;
        (*h).magic = MAGIC;
        (*h).version = VERSION;
        (*h).ncpu = ncpu;
        (*h).total_bytes = len as u64;
        (*h).agent_pid = std::process::id();
    }
    map.header().state.store(STATE_LIVE, Ordering::Release);
}

fn request(h: &Header) {
    h.request.fetch_add(1, Ordering::Release);
    futex_wake(&h.request, 1);
}

fn wait_published(h: &Header, seen: u32, timeout: Duration) {
    let deadline = mono_ns().saturating_add(timeout.as_nanos().min(u64::MAX as u128) as u64);
    futex_wait_until(&h.published, seen, Some(deadline));
}

#[cfg(test)]
mod tests {
    #[test]
    fn dev_shm_is_in_memory_and_the_root_is_named() {
        assert_eq!(
            super::memory_backed(std::path::Path::new("/dev/shm")).unwrap(),
            Ok("tmpfs")
        );
        // /proc is neither memory nor disk: named by its magic number.
        assert_eq!(
            super::memory_backed(std::path::Path::new("/proc")).unwrap(),
            Err("filesystem type 0x9fa0".to_string())
        );
        assert!(super::memory_backed(std::path::Path::new("/no/such/dir")).is_err());
    }

    use super::*;

    fn sample(k: u64, ncpu: u32) -> Snapshot {
        Snapshot {
            unix_ns: k,
            mono_ns: mono_ns(),
            cpu_ticks: [k; CPU_MODES],
            intr_total: k * 2,
            ctxt: k * 3,
            mem_available_bytes: ABSENT,
            load: [0.5, 1.25, k as f64],
            cpus: (0..ncpu)
                .map(|c| CpuSlot {
                    cpu: c,
                    ticks: [k + c as u64; CPU_MODES],
                })
                .collect(),
            ..Snapshot::default()
        }
    }

    #[test]
    fn published_snapshot_reads_back_field_for_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/snapshot");
        let w = ShmWriter::create(Some(&path), 4).unwrap();
        let s = sample(7, 4);
        w.publish(&s);
        let r = ShmReader::open(&path).unwrap();
        let mut out = Snapshot::default();
        r.read(&mut out).unwrap();
        assert_eq!(out, s);
        assert_eq!(r.agent_pid(), std::process::id());
        w.mark_stopped();
        assert!(matches!(r.read(&mut out), Err(Error::Stopped)));
    }

    #[test]
    fn more_cpus_than_slots_are_dropped_not_overflowed() {
        let w = ShmWriter::create(None, 2).unwrap();
        w.publish(&sample(1, 8));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let w2 = ShmWriter::create(Some(&path), 2).unwrap();
        w2.publish(&sample(3, 8));
        let mut out = Snapshot::default();
        ShmReader::open(&path).unwrap().read(&mut out).unwrap();
        assert_eq!(out.cpus.len(), 2);
        assert_eq!(out.cpus[1].ticks[0], 4);
    }

    #[test]
    fn wrong_magic_version_and_size_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        std::fs::write(&path, vec![0u8; total_bytes(1)]).unwrap();
        let e = ShmReader::open(&path).err().unwrap().to_string();
        assert!(
            e.contains("not a quietstat snapshot") && e.contains("magic"),
            "{e}"
        );
        std::fs::write(&path, b"short").unwrap();
        let e = ShmReader::open(&path).err().unwrap().to_string();
        assert!(e.contains("shorter than the header"), "{e}");
        let mut bytes = vec![0u8; total_bytes(1)];
        bytes[..8].copy_from_slice(&MAGIC);
        bytes[8..12].copy_from_slice(&9u32.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let e = ShmReader::open(&path).err().unwrap().to_string();
        assert!(
            e.contains("version 9") && e.contains("accepts version 1"),
            "{e}"
        );
    }

    #[test]
    fn read_fresh_wakes_the_writer_and_gets_a_new_sample() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let w = std::sync::Arc::new(ShmWriter::create(Some(&path), 1).unwrap());
        let mut old = sample(1, 1);
        old.mono_ns = mono_ns().saturating_sub(5_000_000_000);
        w.publish(&old);
        let w2 = w.clone();
        // A writer that publishes only when asked.
        let seen = w.request_count();
        let agent = std::thread::spawn(move || {
            let now = w2.wait_request(seen, Some(mono_ns() + 10_000_000_000));
            assert_ne!(now, seen, "woken by a request, not the deadline");
            w2.publish(&sample(2, 1));
        });
        let r = ShmReader::open(&path).unwrap();
        let mut out = Snapshot::default();
        r.read_fresh(
            Duration::from_millis(100),
            Duration::from_secs(10),
            &mut out,
        )
        .unwrap();
        assert_eq!(out.unix_ns, 2);
        agent.join().unwrap();
    }

    /// A reader woken by a publish that does not satisfy it (a read begun
    /// before it asked) asks again for the same instant, not a later one:
    /// otherwise the agent reads once more after the read that serves it.
    #[test]
    fn read_fresh_asks_again_for_the_same_instant() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let w = std::sync::Arc::new(ShmWriter::create(Some(&path), 1).unwrap());
        let mut old = sample(1, 1);
        old.mono_ns = 1;
        w.publish(&old);
        let asked_at = mono_ns();
        let w2 = w.clone();
        // Loaded before the reader can ask, as the sampler loads it before
        // it looks for work: a thread started late (a loaded machine) must
        // not take the reader's first request for the count to wait past.
        let before = w.request_count();
        let agent = std::thread::spawn(move || {
            // First request: publish a read that began before the call.
            let seen = w2.wait_request(before, Some(mono_ns() + 10_000_000_000));
            let mut under_way = sample(2, 1);
            under_way.mono_ns = asked_at - 1;
            std::thread::sleep(Duration::from_millis(20));
            let published_at = mono_ns();
            w2.publish(&under_way);
            // The reader asks again: what it wants must not have moved.
            let _ = w2.wait_request(seen, Some(mono_ns() + 10_000_000_000));
            let want = w2.want_since();
            w2.publish(&sample(3, 1));
            (want, published_at)
        });
        std::thread::sleep(Duration::from_millis(5));
        let r = ShmReader::open(&path).unwrap();
        let mut out = Snapshot::default();
        r.read_fresh(Duration::ZERO, Duration::from_secs(10), &mut out)
            .unwrap();
        let (want, published_at) = agent.join().unwrap();
        assert_eq!(out.unix_ns, 3);
        // The call began before the first request, so before that publish.
        assert!(
            want < published_at,
            "want_since moved {} ns past the unsatisfying publish",
            want - published_at
        );
    }

    #[test]
    fn read_fresh_times_out_when_nobody_publishes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let w = ShmWriter::create(Some(&path), 1).unwrap();
        let mut old = sample(1, 1);
        old.mono_ns = 1;
        w.publish(&old);
        let r = ShmReader::open(&path).unwrap();
        let e = r
            .read_fresh(
                Duration::ZERO,
                Duration::from_millis(50),
                &mut Snapshot::default(),
            )
            .unwrap_err();
        assert!(matches!(e, Error::Timeout { .. }), "{e}");
    }

    #[test]
    fn concurrent_reads_never_see_a_torn_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let wf = std::sync::Arc::new(ShmWriter::create(Some(&path), 16).unwrap());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (wf2, stop2) = (wf.clone(), stop.clone());
        let writer = std::thread::spawn(move || {
            let mut k = 0;
            while !stop2.load(Ordering::Relaxed) {
                k += 1;
                wf2.publish(&sample(k, 16));
                std::thread::sleep(Duration::from_micros(20));
            }
        });
        let r = ShmReader::open(&path).unwrap();
        let mut out = Snapshot::default();
        for _ in 0..20_000 {
            r.read(&mut out).unwrap();
            let k = out.unix_ns;
            assert!(out.cpu_ticks.iter().all(|&t| t == k));
            assert_eq!(out.intr_total, k * 2);
            assert!(out.cpus.iter().all(|c| c.ticks[9] == k + c.cpu as u64));
        }
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
    }
}
