//! The BPF backend. A snapshot is taken one of two ways, both writing one
//! fixed-size record per process or thread (layout: `bpf/record.h`):
//!
//! - [`Method::Walk`] (Linux 6.7 and later; see [`crate::walk`]): a program
//!   run on demand walks the task list with the open-coded task iterator and
//!   writes into a memory-mapped array decoded in place, summing each
//!   group's threads into its leader's row in the kernel.
//! - [`Method::Iter`] (Linux 5.8 and later): an `iter/task` program whose
//!   records are read back in large batches from the iterator's fd into one
//!   reused buffer; the threads are summed here.
//!
//! A `tp_btf/sched_process_exit` program records every thread group that
//! ends into a ring buffer that wakes its reader only past a watermark.
//!
//! The objects are `bpf/proctable.bpf.o` and `bpf/walk.bpf.o`, built by
//! `bpf/build.sh` and committed (a test fails when one is older than its
//! sources): they are CO-RE, relocated at load time against the running
//! kernel's BTF, so building quietstat needs no clang and no libbpf.

use std::io::Read;
use std::mem::{MaybeUninit, size_of};
use std::sync::Mutex;

use aya::maps::{Array, HashMap as BpfHashMap, MapData, RingBuf};
use aya::programs::{BtfTracePoint, Iter};
use aya::{Btf, Ebpf, EbpfLoader};
use procfs::pid::{Comm, CtxSwitches, PidIo};

use crate::cputime::{RawCputime, adjust};
use crate::error::{Error, Result};
use crate::fields::Field;
use crate::proc::{Exit, NS_PER_TICK, Proc, state_letter};
use crate::query::Query;
use crate::record::{
    QS_CFG_CGROUP, QS_CFG_EXEC, QS_CFG_FILTER, QS_CFG_IO, QS_CFG_THREADS, QS_EXIT_RING_BYTES,
    QS_MAX_PIDS, QS_MAX_WALKERS, QsConfig, QsExit, QsExitStats, QsIo, QsTask,
};
use crate::walk::{self, Walk, WalkRows};
pub use crate::walk::{MIN_PER_WALKER, PROCS_PER_STRETCH, WalkStats};
use crate::walkers::Helpers;
pub use crate::walkers::Threads;

/// The committed object, 8-byte aligned as the ELF parser needs.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../bpf/proctable.bpf.o");

// SAFETY: plain #[repr(C)] integer structs with no padding (checked by the
// generated size assertions).
unsafe impl aya::Pod for QsConfig {}
unsafe impl aya::Pod for QsExitStats {}

const ITER_READ_BYTES: usize = 1 << 20;

pub(crate) fn bpf_err(what: &'static str) -> impl FnOnce(String) -> Error {
    move |detail| Error::Bpf { what, detail }
}

/// An error with its chain of causes, on one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(cause) = src {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        src = cause.source();
    }
    s
}

/// Runs a program load with every signal blocked in this thread, and again
/// if the verifier still gave up because a signal was pending (EAGAIN), as
/// libbpf does, up to five attempts. The verifier stops at any pending
/// signal: a process whose children exit gets SIGCHLD at any time, and a
/// 10 ms verification under a stream of them would never finish. Blocked
/// signals stay pending and are delivered when the mask is restored.
pub fn load_retrying(
    mut load: impl FnMut() -> std::result::Result<(), aya::programs::ProgramError>,
) -> std::result::Result<(), aya::programs::ProgramError> {
    let mut attempt = 1;
    loop {
        let result = with_signals_blocked(&mut load);
        match result {
            Err(aya::programs::ProgramError::LoadError { io_error, .. })
                if io_error.raw_os_error() == Some(libc::EAGAIN) && attempt < 5 =>
            {
                attempt += 1;
            }
            other => return other,
        }
    }
}

fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigset_t is plain data filled by sigfillset; pthread_sigmask
    // only changes this thread's mask, restored below.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let blocked = libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old) == 0;
        let out = f();
        if blocked {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
        out
    }
}

/// The program `name` of `ebpf` as its type (`Iter`, `BtfTracePoint`, ...).
pub(crate) fn program<'a, T>(ebpf: &'a mut Ebpf, name: &'static str) -> Result<&'a mut T>
where
    &'a mut T: TryFrom<&'a mut aya::programs::Program, Error = aya::programs::ProgramError>,
{
    ebpf.program_mut(name)
        .ok_or_else(|| bpf_err(name)("not in the object".into()))?
        .try_into()
        .map_err(|e| bpf_err(name)(chain(&e)))
}

/// Makes the one entry of an object's `qs_config` map `cfg`, given that it
/// holds `current` (updated); writes only on a change.
pub(crate) fn write_config(ebpf: &mut Ebpf, current: &mut QsConfig, cfg: QsConfig) -> Result<()> {
    if cfg == *current {
        return Ok(());
    }
    let map = ebpf
        .map_mut("qs_config")
        .ok_or_else(|| bpf_err("qs_config")("not in the object".into()))?;
    let mut arr: Array<_, QsConfig> =
        Array::try_from(map).map_err(|e| bpf_err("qs_config")(chain(&e)))?;
    arr.set(0, cfg, 0)
        .map_err(|e| bpf_err("writing qs_config")(chain(&e)))?;
    *current = cfg;
    Ok(())
}

/// Makes an object's `qs_pids` map hold `pids`, given that it holds
/// `current` (updated).
pub(crate) fn write_filter(ebpf: &mut Ebpf, current: &mut Vec<u32>, pids: &[u32]) -> Result<()> {
    let mut want: Vec<u32> = pids.to_vec();
    want.sort_unstable();
    want.dedup();
    if want == *current {
        return Ok(());
    }
    let map = ebpf
        .map_mut("qs_pids")
        .ok_or_else(|| bpf_err("qs_pids")("not in the object".into()))?;
    let mut hash: BpfHashMap<_, u32, u8> =
        BpfHashMap::try_from(map).map_err(|e| bpf_err("qs_pids")(chain(&e)))?;
    for pid in current.iter() {
        if want.binary_search(pid).is_err() {
            let _ = hash.remove(pid);
        }
    }
    for pid in &want {
        hash.insert(pid, 1, 0)
            .map_err(|e| bpf_err("writing qs_pids")(chain(&e)))?;
    }
    *current = want;
    Ok(())
}

/// How the BPF backend takes a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The open-coded task iterator run on demand into a mapped array.
    Walk,
    /// The `iter/task` link read through its fd.
    Iter,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Walk => "walk",
            Method::Iter => "iter",
        }
    }
}

/// A loaded process-table program (and, once enabled, exit capture).
pub struct Bpf {
    ebpf: Ebpf,
    walk: Option<Walk>,
    walk_object: Vec<u64>,
    walk_unavailable: Option<String>,
    /// The split walk's threads, also decoding its rows.
    helpers: Helpers,
    order: Vec<u64>,
    config: QsConfig,
    filter: Vec<u32>,
    buf: Vec<u8>,
    raw: Vec<RawCputime>,
    io: Vec<PidIo>,
    page_size: u64,
    exits: Option<RingBuf<MapData>>,
}

/// Counters of exit capture.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExitStats {
    /// Thread groups that ended since capture began.
    pub seen: u64,
    /// Of those, records dropped because the ring buffer was full.
    pub lost: u64,
}

impl Bpf {
    /// Loads the programs (needs CAP_BPF and CAP_PERFMON, or root, and a
    /// kernel with BTF and BPF iterators: 5.8 or later), taking snapshots
    /// with [`Method::Walk`] where the kernel has it, else [`Method::Iter`]
    /// ([`Bpf::walk_unavailable`] says why).
    pub fn open() -> Result<Bpf> {
        Bpf::open_with(Method::Walk)
    }

    /// As [`Bpf::open`], with `Method::Iter` to use the iterator even where
    /// the walk is available (to compare them).
    pub fn open_with(method: Method) -> Result<Bpf> {
        let btf = Btf::from_sys_fs()
            .map_err(|e| bpf_err("reading /sys/kernel/btf/vmlinux")(chain(&e)))?;
        let mut ebpf = EbpfLoader::new()
            .btf(Some(&btf))
            .load(OBJECT)
            .map_err(|e| bpf_err("loading proctable.bpf.o")(chain(&e)))?;
        let prog: &mut Iter = program(&mut ebpf, "qs_tasks")?;
        load_retrying(|| prog.load("task", &btf))
            .map_err(|e| bpf_err("verifying the task iterator")(chain(&e)))?;
        let exit: &mut BtfTracePoint = program(&mut ebpf, "qs_exit")?;
        load_retrying(|| exit.load("sched_process_exit", &btf))
            .map_err(|e| bpf_err("verifying the exit tracepoint")(chain(&e)))?;
        let mut walk_object = Vec::new();
        let (walk, walk_unavailable) = match method {
            Method::Iter => (None, Some("the iterator was asked for".to_string())),
            Method::Walk => match walk::link_kfuncs(walk::OBJECT, &btf).and_then(|(object, _)| {
                walk_object = object;
                Walk::open(words_as_bytes(&walk_object), &btf)
            }) {
                Ok(w) => (Some(w), None),
                Err(e) => (None, Some(e.to_string())),
            },
        };
        drop(btf);
        let mut bpf = Bpf {
            ebpf,
            walk,
            walk_object,
            walk_unavailable,
            helpers: Helpers::default(),
            order: Vec::new(),
            config: QsConfig {
                flags: u32::MAX,
                wakeup_bytes: (QS_EXIT_RING_BYTES / 2) as u32,
            },
            filter: Vec::new(),
            buf: vec![0; ITER_READ_BYTES],
            raw: Vec::new(),
            io: Vec::new(),
            page_size: sys::page_size(),
            exits: None,
        };
        bpf.set_config(QsConfig {
            flags: 0,
            wakeup_bytes: (QS_EXIT_RING_BYTES / 2) as u32,
        })?;
        Ok(bpf)
    }

    /// How snapshots are taken.
    pub fn method(&self) -> Method {
        if self.walk.is_some() {
            Method::Walk
        } else {
            Method::Iter
        }
    }

    /// Why snapshots are not taken with [`Method::Walk`], if they are not.
    pub fn walk_unavailable(&self) -> Option<&str> {
        self.walk_unavailable.as_deref()
    }

    /// Rows the walk's mapped array holds before it is reloaded larger.
    pub fn walk_capacity(&self) -> Option<u32> {
        self.walk.as_ref().map(Walk::capacity)
    }

    /// How many times the walk was reloaded with a larger array since it
    /// was opened (each may flush every CPU's TLB: see [`crate::walk`]).
    pub fn walk_reloads(&self) -> u64 {
        self.walk.as_ref().map_or(0, Walk::reloads)
    }

    /// How many threads split a process-mode walk (see [`Threads`]).
    pub fn set_walkers(&mut self, walkers: Threads) {
        if let Some(w) = self.walk.as_mut() {
            w.set_walkers(walkers);
        }
    }

    /// Processes per stretch of a split walk ([`PROCS_PER_STRETCH`] unless
    /// set): `u64::MAX` cuts it into one stretch per thread, fixed in
    /// advance.
    pub fn set_stretch_procs(&mut self, procs: u64) {
        if let Some(w) = self.walk.as_mut() {
            w.set_stretch_procs(procs);
        }
    }

    /// Whether the calling thread walks again a stretch a helper stalls on
    /// (on unless set; see [`WalkStats::backups`]); off, it waits for the
    /// helper (the benchmark's comparison row).
    pub fn set_backups(&mut self, on: bool) {
        if let Some(w) = self.walk.as_mut() {
            w.set_backups(on);
        }
    }

    /// Tests only: helper threads of split walks sleep this long at the
    /// start of each stretch they take, as if their CPU were taken away, so
    /// that the calling thread walks that stretch again (see
    /// [`WalkStats::backups`]).
    #[doc(hidden)]
    pub fn set_helper_stall(&mut self, stall: Option<std::time::Duration>) {
        if let Some(w) = self.walk.as_mut() {
            w.set_helper_stall(stall);
        }
    }

    /// What split walks did; `None` without the walk.
    pub fn walk_stats(&self) -> Option<WalkStats> {
        self.walk.as_ref().map(Walk::stats)
    }

    /// Reloads the walk with room for `rows` rows (it grows by itself when a
    /// walk finds more; this sets it, e.g. small to exercise that).
    pub fn set_walk_capacity(&mut self, rows: u32) -> Result<()> {
        match self.walk.as_mut() {
            Some(w) => w.reload(words_as_bytes(&self.walk_object), rows),
            None => Ok(()),
        }
    }

    fn set_config(&mut self, cfg: QsConfig) -> Result<()> {
        write_config(&mut self.ebpf, &mut self.config, cfg)
    }

    /// Runs the iterator once and returns the bytes it wrote.
    fn run_iterator(&mut self) -> Result<usize> {
        let prog: &mut Iter = program(&mut self.ebpf, "qs_tasks")?;
        let id = prog
            .attach()
            .map_err(|e| bpf_err("attaching the task iterator")(chain(&e)))?;
        let link = prog
            .take_link(id)
            .map_err(|e| bpf_err("taking the iterator link")(chain(&e)))?;
        let mut file = link
            .into_file()
            .map_err(|e| bpf_err("creating an iterator fd")(chain(&e)))?;
        let mut len = 0;
        loop {
            if self.buf.len() - len < 64 * 1024 {
                let grown = self.buf.len() * 2;
                self.buf.resize(grown, 0);
            }
            match file.read(&mut self.buf[len..]) {
                Ok(0) => return Ok(len),
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(bpf_err("reading the task iterator")(e.to_string())),
            }
        }
    }

    /// Fills `out` with one row per process (or thread) that `query` selects.
    pub fn snapshot(&mut self, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        out.clear();
        let mut flags = 0;
        if query.threads {
            flags |= QS_CFG_THREADS as u32;
        }
        let want_io = query.fields.has(Field::Io);
        if want_io {
            flags |= QS_CFG_IO as u32;
        }
        if query.fields.has(Field::Cgroup) {
            flags |= QS_CFG_CGROUP as u32;
        }
        if query.fields.has(Field::Cmdline) {
            flags |= QS_CFG_EXEC as u32;
        }
        // Past the map's size, filter here instead.
        let in_kernel = query
            .pids
            .as_ref()
            .filter(|p| p.len() <= QS_MAX_PIDS as usize);
        if in_kernel.is_some() {
            flags |= QS_CFG_FILTER as u32;
        }
        if let Some(walk) = self.walk.as_mut() {
            if let Some(pids) = in_kernel {
                walk.set_filter(pids)?;
            }
            walk.set_config(QsConfig {
                flags,
                wakeup_bytes: 0,
            })?;
            let rows = walk.run(words_as_bytes(&self.walk_object), &mut self.helpers)?;
            decode_walk_parts(
                &rows,
                &mut self.helpers,
                self.page_size,
                query.fields,
                &mut self.order,
                out,
            )?;
        } else {
            if let Some(pids) = in_kernel {
                write_filter(&mut self.ebpf, &mut self.filter, pids)?;
            }
            self.set_config(QsConfig {
                flags,
                wakeup_bytes: self.config.wakeup_bytes,
            })?;
            let len = self.run_iterator()?;
            self.decode(len, query, out)?;
        }
        if let Some(pids) = query.pids.as_ref().filter(|_| in_kernel.is_none()) {
            let mut want = pids.clone();
            want.sort_unstable();
            out.retain(|p| want.binary_search(&p.tgid).is_ok());
        }
        Ok(())
    }

    fn decode(&mut self, len: usize, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        let want_io = query.fields.has(Field::Io);
        let step = size_of::<QsTask>() + if want_io { size_of::<QsIo>() } else { 0 };
        if !len.is_multiple_of(step) {
            return Err(Error::Decode(format!(
                "{len} bytes is not a whole number of {step}-byte records"
            )));
        }
        let bytes = &self.buf[..len];
        self.raw.clear();
        self.io.clear();
        let page = self.page_size;
        let fields = query.fields;
        let read = |chunk: &[u8]| -> (QsTask, Option<PidIo>) {
            // SAFETY: chunk holds at least one QsTask (then a QsIo when
            // asked); both are plain integer structs read unaligned.
            let t: QsTask = unsafe { std::ptr::read_unaligned(chunk.as_ptr().cast()) };
            let io = want_io.then(|| {
                // SAFETY: as above, the QsIo follows the QsTask.
                let r: QsIo = unsafe {
                    std::ptr::read_unaligned(chunk[size_of::<QsTask>()..].as_ptr().cast())
                };
                pid_io(&r)
            });
            (t, io)
        };
        // Rows: every task in threads mode, else leaders only; sorted by PID
        // as the iterator walks them.
        for chunk in bytes.chunks_exact(step) {
            let (t, io) = read(chunk);
            if !query.threads && t.pid != t.tgid {
                continue;
            }
            out.push(row(&t, page, fields, (0, 0), None));
            self.raw.push(RawCputime {
                utime: t.utime_ns,
                stime: t.stime_ns,
                runtime: t.runtime_ns,
                prev_utime: t.prev_utime_ns,
                prev_stime: t.prev_stime_ns,
            });
            self.io.push(io.unwrap_or_default());
        }
        if !query.threads {
            // Add every other thread's own counters to its leader's row.
            for chunk in bytes.chunks_exact(step) {
                let (t, io) = read(chunk);
                if t.pid == t.tgid {
                    continue;
                }
                let Ok(i) = out.binary_search_by_key(&t.tgid, |p| p.pid) else {
                    continue;
                };
                let raw = &mut self.raw[i];
                raw.utime += t.utime_ns;
                raw.stime += t.stime_ns;
                raw.runtime += t.runtime_ns;
                out[i].minflt += t.min_flt;
                out[i].majflt += t.maj_flt;
                if let Some(io) = io {
                    let sum = &mut self.io[i];
                    sum.rchar += io.rchar;
                    sum.wchar += io.wchar;
                    sum.syscr += io.syscr;
                    sum.syscw += io.syscw;
                    sum.read_bytes += io.read_bytes;
                    sum.write_bytes += io.write_bytes;
                    sum.cancelled_write_bytes += io.cancelled_write_bytes;
                }
            }
        }
        for (i, p) in out.iter_mut().enumerate() {
            let (u, s) = adjust(self.raw[i]);
            p.utime_ns = u;
            p.stime_ns = s;
            if want_io {
                p.io = Some(self.io[i]);
            }
        }
        Ok(())
    }

    /// Start time (clock ticks since boot) of each PID, `None` for one that
    /// does not exist: the vectored identity check.
    pub fn start_ticks(&mut self, pids: &[u32]) -> Result<Vec<Option<u64>>> {
        let query = Query {
            fields: crate::Fields::NONE.with(Field::Start),
            threads: false,
            pids: Some(pids.to_vec()),
        };
        let mut rows = Vec::with_capacity(pids.len());
        self.snapshot(&query, &mut rows)?;
        Ok(pids
            .iter()
            .map(|pid| {
                rows.binary_search_by_key(pid, |p| p.pid)
                    .ok()
                    .map(|i| rows[i].start_ticks)
            })
            .collect())
    }

    /// Starts exit capture: from now on every thread group that ends is
    /// recorded until [`Bpf::drain_exits`] takes it. `wakeup_bytes` is the
    /// watermark past which a reader waiting on [`Bpf::exits_fd`] is woken
    /// (the ring holds 4 MiB, about 37,000 exits).
    pub fn enable_exits(&mut self, wakeup_bytes: u32) -> Result<()> {
        self.set_config(QsConfig {
            flags: self.config.flags,
            wakeup_bytes,
        })?;
        if self.exits.is_some() {
            return Ok(());
        }
        let ring = self
            .ebpf
            .take_map("qs_exits")
            .ok_or_else(|| bpf_err("qs_exits")("not in the object".into()))?;
        let ring = RingBuf::try_from(ring).map_err(|e| bpf_err("qs_exits")(chain(&e)))?;
        let exit: &mut BtfTracePoint = program(&mut self.ebpf, "qs_exit")?;
        exit.attach()
            .map_err(|e| bpf_err("attaching sched_process_exit")(chain(&e)))?;
        self.exits = Some(ring);
        Ok(())
    }

    /// The ring buffer's fd, readable (epoll) once `wakeup_bytes` wait.
    pub fn exits_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.exits.as_ref().map(|r| r.as_fd())
    }

    /// Appends every exit recorded since the last call; returns how many.
    pub fn drain_exits(&mut self, out: &mut Vec<Exit>) -> usize {
        let Some(ring) = self.exits.as_mut() else {
            return 0;
        };
        let page = self.page_size;
        let mut n = 0;
        while let Some(item) = ring.next() {
            if item.len() < size_of::<QsExit>() {
                continue;
            }
            // SAFETY: the item holds one QsExit, a plain integer struct.
            let e: QsExit = unsafe { std::ptr::read_unaligned(item.as_ptr().cast()) };
            let (utime, stime) = adjust(RawCputime {
                utime: e.utime_ns,
                stime: e.stime_ns,
                runtime: e.runtime_ns,
                prev_utime: e.prev_utime_ns,
                prev_stime: e.prev_stime_ns,
            });
            out.push(Exit {
                pid: e.pid,
                ppid: e.ppid,
                comm: Comm::from_task_comm(&e.comm),
                start_ns: e.start_boottime_ns,
                start_ticks: e.start_boottime_ns / NS_PER_TICK,
                exit_ns: e.exit_boottime_ns,
                utime_ns: utime,
                stime_ns: stime,
                minflt: e.min_flt,
                majflt: e.maj_flt,
                maxrss_bytes: e.maxrss_pages * page,
                exit_status: e.exit_code,
            });
            n += 1;
        }
        n
    }

    /// How many exits were seen and lost since capture began.
    pub fn exit_stats(&self) -> Result<ExitStats> {
        let map = self
            .ebpf
            .map("qs_exit_stats")
            .ok_or_else(|| bpf_err("qs_exit_stats")("not in the object".into()))?;
        let arr: Array<_, QsExitStats> =
            Array::try_from(map).map_err(|e| bpf_err("qs_exit_stats")(chain(&e)))?;
        let s = arr
            .get(&0, 0)
            .map_err(|e| bpf_err("reading qs_exit_stats")(chain(&e)))?;
        Ok(ExitStats {
            seen: s.seen,
            lost: s.lost,
        })
    }
}

fn words_as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: any u64 slice is a valid byte slice of eight times its length.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) }
}

fn pid_io(r: &QsIo) -> PidIo {
    PidIo {
        rchar: r.rchar,
        wchar: r.wchar,
        syscr: r.syscr,
        syscw: r.syscw,
        read_bytes: r.read_bytes,
        write_bytes: r.write_bytes,
        cancelled_write_bytes: r.cancelled_write_bytes,
    }
}

/// Rows from the walk's records, in PID order: threads are already summed
/// into their leaders' rows; `io` is empty or holds one record per task.
/// The records are in task-list (creation) order, sorted but where PIDs
/// wrapped: sorting (PID, index) keys and writing each row once in its
/// place beats moving whole rows. `order` is scratch space kept between
/// calls; `page` the page size in bytes.
pub fn decode_walk(
    tasks: &[QsTask],
    io: &[QsIo],
    page: u64,
    fields: crate::Fields,
    order: &mut Vec<u64>,
    out: &mut Vec<Proc>,
) {
    let all = 0..tasks.len();
    decode_walk_ranges(
        tasks,
        io,
        std::slice::from_ref(&all),
        page,
        fields,
        order,
        out,
    );
}

/// As [`decode_walk`], for the records in `ranges` of `tasks` (and `io`),
/// which follow one another in task-list order: the shares of a split
/// walk. A process found twice (where walkers overlapped) gets one row.
pub fn decode_walk_ranges(
    tasks: &[QsTask],
    io: &[QsIo],
    ranges: &[std::ops::Range<usize>],
    page: u64,
    fields: crate::Fields,
    order: &mut Vec<u64>,
    out: &mut Vec<Proc>,
) {
    walk_order(tasks, ranges, order);
    out.clear();
    out.reserve(order.len());
    let n = order.len();
    decode_keys(
        tasks,
        io,
        order,
        page,
        fields,
        &mut out.spare_capacity_mut()[..n],
    );
    // SAFETY: out was empty; decode_keys initialised its first n slots,
    // for which reserve made room.
    unsafe { out.set_len(n) };
}

/// Rows per part of a split walk's decoding (see [`decode_walk_parts`]).
const DECODE_PART_ROWS: usize = 2048;

/// As [`decode_walk_ranges`], for a walk's rows, the rows decoded in parts
/// that the walk's `rows.threads` threads (this one and its helpers, idle
/// now) take in turn, as they took the walk's stretches. Filling the rows
/// is most of decoding: 2 ms at 30,000 processes on one thread.
fn decode_walk_parts(
    rows: &WalkRows<'_>,
    helpers: &mut Helpers,
    page: u64,
    fields: crate::Fields,
    order: &mut Vec<u64>,
    out: &mut Vec<Proc>,
) -> Result<()> {
    if rows.threads <= 1 {
        decode_walk_ranges(rows.tasks, rows.io, rows.ranges, page, fields, order, out);
        return Ok(());
    }
    walk_order(rows.tasks, rows.ranges, order);
    out.clear();
    out.reserve(order.len());
    let n = order.len();
    let mut slots = &mut out.spare_capacity_mut()[..n];
    let mut keys = &order[..];
    let count = (n / DECODE_PART_ROWS).clamp(rows.threads, 4 * QS_MAX_WALKERS as usize);
    let mut parts = Vec::with_capacity(count);
    for j in 0..count {
        let len = n * (j + 1) / count - n * j / count;
        let (k, rest_keys) = keys.split_at(len);
        let (sl, rest_slots) = slots.split_at_mut(len);
        parts.push(Mutex::new((k, sl)));
        (keys, slots) = (rest_keys, rest_slots);
    }
    helpers
        .run_shared(rows.threads, parts.len(), &|j| {
            let mut part = parts[j].lock().unwrap_or_else(|e| e.into_inner());
            let (keys, slots) = &mut *part;
            decode_keys(rows.tasks, rows.io, keys, page, fields, slots);
            Ok(0)
        })
        .map_err(|e| Error::Decode(format!("decoding the walk's rows: {e}")))?;
    // SAFETY: out was empty; the parts, which cover its first n slots
    // (reserved above), were each initialised by decode_keys.
    unsafe { out.set_len(n) };
    Ok(())
}

/// Fills `order` with one (PID << 32 | index) key per process in `ranges`
/// of `tasks`, in PID order; of a process found twice (where walkers
/// overlapped), one.
fn walk_order(tasks: &[QsTask], ranges: &[std::ops::Range<usize>], order: &mut Vec<u64>) {
    order.clear();
    for r in ranges {
        order.extend(
            tasks[r.clone()]
                .iter()
                .zip(r.clone())
                .map(|(t, i)| (u64::from(t.pid) << 32) | i as u64),
        );
    }
    if !order.is_sorted() {
        // Stable sort finds the sorted runs (one per PID wrap) and merges.
        order.sort();
    }
    order.dedup_by_key(|k| *k >> 32);
}

/// Decodes the rows `keys` name (see [`walk_order`]) into `slots`, one
/// each: built in its slot, as a row built aside and moved is one more
/// copy of the whole row per task.
fn decode_keys(
    tasks: &[QsTask],
    io: &[QsIo],
    keys: &[u64],
    page: u64,
    fields: crate::Fields,
    slots: &mut [MaybeUninit<Proc>],
) {
    debug_assert_eq!(keys.len(), slots.len());
    for (slot, &key) in slots.iter_mut().zip(keys) {
        let i = key as u32 as usize;
        let t = &tasks[i];
        let times = adjust(RawCputime {
            utime: t.utime_ns,
            stime: t.stime_ns,
            runtime: t.runtime_ns,
            prev_utime: t.prev_utime_ns,
            prev_stime: t.prev_stime_ns,
        });
        slot.write(row(t, page, fields, times, io.get(i).map(pid_io)));
    }
}

/// One row; `times` are the scaled (utime, stime). Every field is set here
/// (no struct update from a second value): the row is then written once, in
/// place, not built aside and copied.
#[inline(always)]
fn row(
    t: &QsTask,
    page: u64,
    fields: crate::Fields,
    (utime_ns, stime_ns): (u64, u64),
    io: Option<PidIo>,
) -> Proc {
    Proc {
        pid: t.pid,
        tgid: t.tgid,
        ppid: t.ppid,
        comm: Comm::from_task_comm(&t.comm),
        state: state_letter(t.state, t.exit_state),
        start_ns: t.start_boottime_ns,
        start_ticks: t.start_boottime_ns / NS_PER_TICK,
        utime_ns,
        stime_ns,
        minflt: t.min_flt,
        majflt: t.maj_flt,
        num_threads: t.nr_threads,
        rss_bytes: t.rss_pages * page,
        vsize_bytes: t.vm_pages * page,
        nice: t.static_prio - 120,
        priority: t.prio - 100,
        policy: t.policy,
        rt_priority: t.rt_priority,
        cpu: t.cpu,
        cgroup_id: fields.has(Field::Cgroup).then_some(t.cgroup_id),
        io,
        ctxsw: fields.has(Field::Ctxsw).then_some(CtxSwitches {
            voluntary: t.nvcsw,
            involuntary: t.nivcsw,
        }),
        exec: t.exec_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(pid: u32) -> QsTask {
        QsTask {
            pid,
            tgid: pid,
            start_boottime_ns: u64::from(pid) * 1_000,
            ..QsTask::default()
        }
    }

    fn pids(rows: &[Proc]) -> Vec<u32> {
        rows.iter().map(|p| p.pid).collect()
    }

    #[test]
    fn split_walk_rows_decode_in_pid_order_once_each() {
        // Two walkers' shares of a 10-row array: rows 0..3 and 5..9; the
        // first walker ran on past the second's start (PID 7 twice) and
        // PIDs wrapped in the second share (2 after 9).
        let mut tasks = vec![QsTask::default(); 10];
        for (i, pid) in [(0, 3), (1, 5), (2, 7), (5, 7), (6, 8), (7, 9), (8, 2)] {
            tasks[i] = task(pid);
        }
        let (mut order, mut out) = (Vec::new(), Vec::new());
        let fields = crate::Fields::stat();
        decode_walk_ranges(
            &tasks,
            &[],
            &[0..3, 5..9],
            4096,
            fields,
            &mut order,
            &mut out,
        );
        assert_eq!(pids(&out), [2, 3, 5, 7, 8, 9]);
        assert!(out.iter().all(|p| p.io.is_none()));
        // One range, as decode_walk takes it; the gap rows are not read.
        decode_walk(&tasks[5..9], &[], 4096, fields, &mut order, &mut out);
        assert_eq!(pids(&out), [2, 7, 8, 9]);
    }

    #[test]
    fn rows_decoded_in_parts_on_helpers_match_one_thread() {
        // Three walkers' shares of 9,000 rows, PIDs wrapped inside the
        // second, the third starting on two rows the second also walked;
        // I/O records to show each part reads its own rows' records. More
        // rows than DECODE_PART_ROWS for each thread: threads take several
        // parts each.
        let mut tasks = Vec::new();
        let mut io = Vec::new();
        for i in 0..9000u32 {
            let pid = match i {
                0..3000 => 300 + i,
                3000..4500 => 6300 + (i - 3000),
                4500..6000 => 3300 + (i - 4500),
                _ => 9000 + (i - 6000),
            };
            let mut t = task(pid);
            t.utime_ns = u64::from(i) * 10;
            t.runtime_ns = t.utime_ns;
            tasks.push(t);
            io.push(QsIo {
                rchar: u64::from(pid),
                ..QsIo::default()
            });
        }
        tasks[6000] = tasks[5998];
        tasks[6001] = tasks[5999];
        io[6000] = io[5998];
        io[6001] = io[5999];
        let ranges = [0..3000, 3000..6000, 6000..9000];
        let fields = crate::Fields::all();
        let (mut order, mut one) = (Vec::new(), Vec::new());
        decode_walk_ranges(&tasks, &io, &ranges, 4096, fields, &mut order, &mut one);
        assert!(one.is_sorted_by_key(|p| p.pid));
        assert_eq!(one.len(), 8998);
        assert!(one.len() > 4 * DECODE_PART_ROWS);
        let mut helpers = Helpers::default();
        for threads in 1..=4 {
            let rows = WalkRows {
                tasks: &tasks,
                io: &io,
                ranges: &ranges,
                threads,
            };
            let mut parts = vec![Proc::default(); 5];
            decode_walk_parts(&rows, &mut helpers, 4096, fields, &mut order, &mut parts).unwrap();
            assert_eq!(parts, one, "{threads} threads");
        }
        assert!(one.iter().all(|p| p.io.unwrap().rchar == u64::from(p.pid)));
    }
}
