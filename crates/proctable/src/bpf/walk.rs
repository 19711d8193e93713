//! The BPF walk: `bpf/walk.bpf.c`'s program, run on demand with
//! `BPF_PROG_RUN`, walks the task list with the kernel's open-coded task
//! iterator and writes one record per process (or thread) into a
//! memory-mapped array that is decoded in place. Needs the iterator's kernel
//! functions (Linux 6.7 or later); [`crate::bpf::Bpf`] falls back to the
//! `iter/task` link otherwise.
//!
//! The loader library cannot resolve calls to kernel functions, so the
//! object calls them as helpers with placeholder numbers (`QS_KFUNC_*` in
//! `bpf/record.h`) and [`link_kfuncs`] rewrites each such call into a
//! kernel-function call with the function's BTF id in the running kernel
//! before the object is loaded.

use std::ops::Range;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use aya::programs::RawTracePoint;
use aya::{Btf, Ebpf, EbpfLoader};

use super::load::{
    Mapped, bpf_err, chain, kernel_btf, link_kfuncs_of, load_retrying, page_round, program,
    write_config, write_filter,
};
use super::test_run::{Args, test_run};
use crate::error::Result;
use crate::pool::{Helpers, MAX_THREADS, OwnedJob, Threads};
use crate::record::{
    QS_CFG_DELAYACCT, QS_CFG_IO, QS_CFG_RSS_HIST, QS_CFG_THREADS, QS_KFUNC_ITER_TASK_DESTROY,
    QS_KFUNC_ITER_TASK_NEW, QS_KFUNC_ITER_TASK_NEXT, QS_KFUNC_RDONLY_CAST, QS_MAX_WALKERS,
    QS_RSS_BUCKETS, QS_WALK_MARKS, QS_WALK_MIN_ROWS, QS_WALK_STALE_START, QsConfig, QsDelays, QsIo,
    QsTask, QsWalkArgs, QsWalkOut,
};

/// The committed object, 8-byte aligned as the ELF parser needs.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../../bpf/walk.bpf.o");

const KFUNCS: [(u64, &str); 4] = [
    (QS_KFUNC_ITER_TASK_NEW, "bpf_iter_task_new"),
    (QS_KFUNC_ITER_TASK_NEXT, "bpf_iter_task_next"),
    (QS_KFUNC_ITER_TASK_DESTROY, "bpf_iter_task_destroy"),
    (QS_KFUNC_RDONLY_CAST, "bpf_rdonly_cast"),
];

/// Returns a copy of `object` (an ELF BPF object) in which every helper
/// call to a `QS_KFUNC_*` number calls that kernel function instead, and
/// how many calls were rewritten. The copy is kept in `u64`s: the ELF
/// parser needs 8-byte alignment.
pub fn link_kfuncs(object: &[u8], btf: &Btf) -> Result<(Vec<u64>, usize)> {
    link_kfuncs_of(
        object,
        "walk.bpf.o",
        &KFUNCS,
        "the open-coded task iterator needs Linux 6.7 or later",
        btf,
    )
}

/// Processes per thread below which a walk is not split: a helper thread's
/// wakeup and its cold start cost about what walking this many saves.
pub const MIN_PER_WALKER: u64 = 2048;

/// Processes per stretch of a split walk. A split walk is cut into
/// stretches, one program run ("walker") each, that the threads take in
/// turn: a thread whose CPU runs slow or whose start is late walks fewer.
/// On the VM of BENCHMARKS.md the second CPU at times ran a 15,000-process
/// half in 14-27 ms against the first's 5-7, which halves fixed in advance
/// cannot absorb. Each stretch costs one `BPF_PROG_RUN` and a cold start of
/// the list's prefetch: a few microseconds.
pub const PROCS_PER_STRETCH: u64 = 1024;

/// The most marks a walk lays over the whole table: 4 in each of the most
/// stretches a walk is cut into.
const MARKS_PER_TABLE: u64 = 4 * QS_MAX_WALKERS;

/// The `qs_walk_out` entry a stalled stretch is walked again into; the
/// others (so up to this many stretches, and threads) are the stretches'.
const SPARE: usize = QS_MAX_WALKERS as usize - 1;

/// How walks split, as the caller set it; kept across reloads.
#[derive(Debug, Clone, Copy)]
struct SplitSettings {
    walkers: Threads,
    stretch_procs: u64,
    /// Walk again a stretch a helper stalls in (else wait for it).
    backups: bool,
    /// Tests: helpers sleep this long in each stretch.
    helper_stall: Option<Duration>,
}

impl Default for SplitSettings {
    fn default() -> Self {
        SplitSettings {
            walkers: Threads::Auto,
            stretch_procs: PROCS_PER_STRETCH,
            backups: true,
            helper_stall: None,
        }
    }
}

/// Where a walk may be split: a task a walk marked, at a position counted
/// in processes from the list's head.
#[derive(Debug, Clone, Copy)]
struct Mark {
    at: u64,
    task: u64,
    start_ns: u64,
    pid: u64,
}

/// The loaded walk program with its mapped output arrays.
pub(crate) struct Walk {
    rows: Mapped,
    io: Mapped,
    delays: Mapped,
    outs: Mapped,
    capacity: u32,
    /// PIDs its filter holds at most.
    pid_filter: u32,
    /// Rows for an eighth more tasks than met, not half ([`tight_capacity_for`]).
    tight: bool,
    /// At most about this many rows are written, those of the most
    /// resident processes ([`Walk::set_rows_cap`]); 0: all.
    rows_cap: u32,
    /// The last capped walk's count of processes by resident pages, which
    /// bounds the next one's rows ([`bounds_for`]); all 0 while uncapped.
    hist: [u64; QS_RSS_BUCKETS as usize],
    /// Processes the last walk's bounds left out.
    left_out: u64,
    reloads: u64,
    config: QsConfig,
    filter: Vec<u32>,
    split: SplitSettings,
    marks: Vec<Mark>,
    /// Processes the last process-mode walk visited.
    visited: u64,
    ranges: Vec<Range<usize>>,
    stats: WalkStats,
    // Dropped last: the mappings hold the maps' memory, not their fds.
    ebpf: Ebpf,
}

/// The rows a walk wrote: `tasks`, `io` and `delays` (each empty unless the
/// configuration asks for it) are the whole arrays, of which the walkers wrote `ranges`,
/// in task-list order. A split walk's ranges may hold a few processes twice
/// (see walk.bpf.c's qs_visit_next); the reader keeps one.
pub(crate) struct WalkRows<'a> {
    pub tasks: &'a [QsTask],
    pub io: &'a [QsIo],
    pub delays: &'a [QsDelays],
    pub ranges: &'a [Range<usize>],
    /// How many threads walked them.
    pub threads: usize,
}

impl WalkRows<'_> {
    /// The records beside the tasks'.
    pub fn extras(&self) -> super::Extras<'_> {
        super::Extras {
            io: self.io,
            delays: self.delays,
        }
    }
}

/// What split walks did since the walk was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WalkStats {
    /// Walkers (stretches, one program run each) of the last walk.
    pub last_walkers: usize,
    /// Threads that ran them.
    pub last_threads: usize,
    /// Walks split between walkers that stood.
    pub split: u64,
    /// Split walks walked again by one walker: a start task had left the
    /// list, or a walker's rows did not fit its share of the array.
    pub redone: u64,
    /// Stretches of split walks the calling thread walked again because a
    /// helper's run of it stalled (its CPU taken away mid-walk); the walk
    /// then returned without waiting for that helper.
    pub backups: u64,
}

// SAFETY: the mappings are only read through &self/&mut self.
unsafe impl Send for Walk {}

/// Tasks (threads) in the system now: the fourth field of /proc/loadavg.
pub(crate) fn tasks_now() -> u32 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(3)
                .and_then(|f| f.split_once('/'))
                .and_then(|(_, n)| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Rows for `tasks` tasks (threads included) with room to grow by half:
/// a reload frees and allocates kernel memory and loads a program, which
/// may flush every CPU's TLB (an IPI to isolated CPUs too), so it should be
/// rare. Not more: the reader maps the whole array (and the I/O array
/// beside it), so all of it counts in its RSS, 240 bytes a row (7.7 MB
/// more at 64,000 processes for room to double). A split walk's shares
/// fit in half again as many rows as processes: each marked stretch gets
/// its processes and an eighth, the last and the spare halves of the rest.
pub(crate) fn capacity_for(tasks: u32) -> u32 {
    (tasks.saturating_add(tasks / 2)).max(QS_WALK_MIN_ROWS as u32)
}

/// Rows for `tasks` tasks with room to grow by an eighth: for a walk
/// whose rows are capped by a memory ceiling, where the kernel memory
/// its rows take (charged to the caller's cgroup: 23 MB at 64,000
/// processes with room for half again, 17 MB with an eighth) matters
/// more than a reload now and then. One walker only: a split walk's
/// shares need half again as many rows.
pub(crate) fn tight_capacity_for(tasks: u32) -> u32 {
    (tasks.saturating_add(tasks / 8)).max(QS_WALK_MIN_ROWS as u32)
}

/// Which processes a capped walk writes rows for (walk.bpf.c's
/// qs_within_bounds): those resident in `hi` pages or more, and the first
/// `ties` resident in `lo` or more; `hi` 0: all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Bounds {
    lo: u64,
    hi: u64,
    ties: u64,
}

/// The first resident page count of `rss_hist` bucket `b` (walk.bpf.c's
/// qs_rss_bucket): the count itself below 4, else four buckets per power
/// of two; past the last bucket, none.
pub(crate) fn bucket_floor(b: usize) -> u64 {
    match b {
        0..4 => b as u64,
        _ if b >= QS_RSS_BUCKETS as usize => u64::MAX,
        _ => {
            let msb = b / 4 + 1;
            (4 + (b % 4) as u64) << (msb - 2)
        }
    }
}

/// Bounds that keep `cap` rows of a walk that counted `hist`: every
/// process of the buckets above the one where the count from the top
/// passes `cap`, and of that bucket as many as make `cap`; none when all
/// fit.
pub(crate) fn bounds_for(hist: &[u64], cap: u64) -> Bounds {
    let mut above = 0u64;
    for b in (0..hist.len()).rev() {
        if above + hist[b] > cap {
            return Bounds {
                lo: bucket_floor(b),
                hi: bucket_floor(b + 1),
                ties: cap - above,
            };
        }
        above += hist[b];
    }
    Bounds::default()
}

/// Rows for `tasks` tasks: [`tight_capacity_for`] when `tight`, else
/// [`capacity_for`].
fn rows_for(tasks: u32, tight: bool) -> u32 {
    match tight {
        true => tight_capacity_for(tasks),
        false => capacity_for(tasks),
    }
}

/// How far past a stop task's start a walker runs on when that task left
/// the list during the walk: longer than any fork takes between setting a
/// task's start time and linking it into the list.
const STOP_MARGIN_NS: u64 = 1_000_000_000;

const _: () = assert!(SPARE == MAX_THREADS);

const _: () = assert!(size_of::<QsWalkArgs>() <= size_of::<Args>());

/// The program's context for walker `a.walker`: the struct's words in
/// record.h's order, the rest 0.
fn walker_args(a: &QsWalkArgs) -> Args {
    let mut args = [0; 12];
    // SAFETY: QsWalkArgs is #[repr(C)] with only u64 members (record.h;
    // the generated size assertion rules out padding) and no larger than
    // Args (asserted above).
    unsafe {
        std::ptr::copy_nonoverlapping(
            (a as *const QsWalkArgs).cast::<u64>(),
            args.as_mut_ptr(),
            size_of::<QsWalkArgs>() / 8,
        )
    };
    args
}

fn walker_returned(ret: u32) -> Result<()> {
    if ret != 0 {
        return Err(bpf_err("running the task walk")(format!(
            "the program returned {ret} (its maps are missing)"
        )));
    }
    Ok(())
}

/// Runs walker `args.walker` on this thread's CPU.
fn run_walker(prog_fd: RawFd, args: &QsWalkArgs) -> Result<()> {
    let ret = test_run(prog_fd, &walker_args(args))
        .map_err(|e| bpf_err("running the task walk")(e.to_string()))?;
    walker_returned(ret)
}

impl Walk {
    /// Loads the walk with room for `capacity` rows; `object` is
    /// [`OBJECT`] after [`link_kfuncs`], `loader` made (by
    /// [`sys::bpf::loader`]) before `btf` was parsed.
    fn load<'a>(
        object: &[u8],
        btf: &'a Btf,
        capacity: u32,
        mut loader: EbpfLoader<'a>,
        pid_filter: u32,
        tight: bool,
    ) -> Result<Walk> {
        let mut ebpf = loader
            .btf(Some(btf))
            .map_max_entries("qs_rows", capacity)
            .map_max_entries("qs_rows_io", capacity)
            .map_max_entries("qs_rows_delays", capacity)
            .map_max_entries("qs_pids", pid_filter)
            .load(object)
            .map_err(|e| bpf_err("loading walk.bpf.o")(chain(&e)))?;
        let prog: &mut RawTracePoint = program(&mut ebpf, "qs_walk")?;
        load_retrying(|| prog.load()).map_err(|e| bpf_err("verifying the task walk")(chain(&e)))?;
        // The first `entries` values of the map, in whole pages.
        let map = |name: &'static str, entries: usize, size: usize| -> Result<Mapped> {
            let m = ebpf
                .map(name)
                .ok_or_else(|| bpf_err(name)("not in the object".into()))?;
            Mapped::new(m, page_round(entries * size), false)
                .map_err(|e| bpf_err(name)(e.to_string()))
        };
        let rows = map("qs_rows", capacity as usize, size_of::<QsTask>())?;
        let io = map("qs_rows_io", capacity as usize, size_of::<QsIo>())?;
        let delays = map("qs_rows_delays", capacity as usize, size_of::<QsDelays>())?;
        let outs = map(
            "qs_walk_out",
            QS_MAX_WALKERS as usize,
            size_of::<QsWalkOut>(),
        )?;
        let mut walk = Walk {
            rows,
            io,
            delays,
            outs,
            capacity,
            pid_filter,
            tight,
            rows_cap: 0,
            hist: [0; QS_RSS_BUCKETS as usize],
            left_out: 0,
            reloads: 0,
            config: QsConfig {
                flags: u32::MAX,
                wakeup_bytes: 0,
            },
            filter: Vec::new(),
            split: SplitSettings::default(),
            marks: Vec::new(),
            visited: 0,
            ranges: Vec::new(),
            stats: WalkStats::default(),
            ebpf,
        };
        walk.set_config(QsConfig {
            flags: 0,
            wakeup_bytes: 0,
        })?;
        Ok(walk)
    }

    /// Loads the walk sized for the tasks there are now (with room for
    /// half again), with room for `pid_filter` PIDs in its filter; with a
    /// `rows_cap` ([`Walk::set_rows_cap`]), for that many rows and an
    /// eighth more, however many tasks there are.
    pub(crate) fn open<'a>(
        object: &[u8],
        btf: &'a Btf,
        loader: EbpfLoader<'a>,
        pid_filter: u32,
        rows_cap: u32,
    ) -> Result<Walk> {
        let tight = rows_cap > 0;
        let tasks = match tight {
            true => rows_cap,
            false => tasks_now(),
        };
        let mut walk = Walk::load(
            object,
            btf,
            rows_for(tasks, tight),
            loader,
            pid_filter,
            tight,
        )?;
        walk.set_rows_cap(rows_cap)?;
        Ok(walk)
    }

    /// Writes the program's configuration, with the count by resident
    /// pages a capped walk bounds its next rows by.
    pub(crate) fn set_config(&mut self, mut cfg: QsConfig) -> Result<()> {
        if self.rows_cap > 0 {
            cfg.flags |= QS_CFG_RSS_HIST as u32;
        }
        write_config(&mut self.ebpf, &mut self.config, cfg)
    }

    /// From the next walk on, rows are written for about `cap` processes,
    /// those resident in the most pages (0: all), in rows for an eighth
    /// more: the processes are counted by resident pages in each walk, and
    /// the next walk writes rows only within the bounds that count gives
    /// ([`bounds_for`]); a walk whose rows overrun them (processes grew) is
    /// walked again at once within the bounds its own count gives. Such a
    /// walk is never split. The caller keeps the `cap` most resident of
    /// the rows written (ties in a bucket go by their order in the list).
    pub(crate) fn set_rows_cap(&mut self, cap: u32) -> Result<()> {
        if cap == self.rows_cap {
            return Ok(());
        }
        // The last count stands for a new cap; uncapped walks count none.
        if cap == 0 {
            self.hist = [0; QS_RSS_BUCKETS as usize];
        }
        self.rows_cap = cap;
        // The count is asked for (or no longer) by set_config.
        let config = self.config;
        self.set_config(QsConfig {
            flags: config.flags & !(QS_CFG_RSS_HIST as u32),
            ..config
        })
    }

    /// Processes the last walk's bounds left out.
    pub(crate) fn left_out(&self) -> u64 {
        self.left_out
    }

    /// Processes the last walk wrote rows for (not counting the rows that
    /// hold kernel threads' names).
    pub(crate) fn written(&self) -> u64 {
        let tasks = self.rows().tasks;
        let rows = |r: &Range<usize>| tasks[r.clone()].iter().filter(|t| t.pid != 0).count();
        self.ranges.iter().map(|r| rows(r) as u64).sum()
    }

    pub(crate) fn set_filter(&mut self, pids: &[u32]) -> Result<()> {
        write_filter(&mut self.ebpf, &mut self.filter, pids)
    }

    /// What walker `j` wrote in its last run.
    fn out(&self, j: usize) -> QsWalkOut {
        debug_assert!(j < QS_MAX_WALKERS as usize);
        // SAFETY: qs_walk_out holds QS_MAX_WALKERS QsWalkOut values (a
        // multiple of 8 bytes each); the program that wrote them has
        // returned (BPF_PROG_RUN is a full barrier). Copied out by value.
        unsafe { self.outs.slice::<QsWalkOut>(QS_MAX_WALKERS as usize)[j] }
    }

    /// How often a walk by `walkers` walkers marks: every this many
    /// processes, so that each walker fills half its mark slots over its
    /// share of the last walk's table (the other half is room for the table
    /// to grow), and at most [`MARKS_PER_TABLE`] over the table: with 15
    /// stretches, each is found to within a quarter of its length.
    fn mark_every(&self, walkers: usize) -> u64 {
        let procs = if self.visited > 0 {
            self.visited
        } else {
            u64::from(tasks_now())
        };
        let marks = (walkers as u64 * (QS_WALK_MARKS / 2)).min(MARKS_PER_TABLE);
        (procs / marks).max(1)
    }

    /// How the next walk splits: between how many threads, and where its
    /// stretches start, the marks of the last walk nearest to even shares,
    /// one per stretch but the first (none: one walker on this thread).
    /// Fewer stretches than asked for where the marks are too few to tell
    /// apart.
    fn plan(&self) -> (usize, Vec<Mark>) {
        if self.config.flags & QS_CFG_THREADS as u32 != 0 || self.rows_cap > 0 {
            return (1, Vec::new());
        }
        let threads = self.split.walkers.count(self.visited, MIN_PER_WALKER);
        if threads == 1 {
            return (1, Vec::new());
        }
        let stretches =
            (self.visited / self.split.stretch_procs.max(1)).clamp(threads as u64, SPARE as u64);
        let mut starts: Vec<Mark> = Vec::new();
        for j in 1..stretches {
            let want = self.visited * j / stretches;
            let Some(m) = self.marks.iter().min_by_key(|m| m.at.abs_diff(want)) else {
                break;
            };
            if m.at > 0 && starts.last().is_none_or(|l| l.at < m.at) {
                starts.push(*m);
            }
        }
        (threads.min(starts.len() + 1), starts)
    }

    /// Runs the walk (split when [`Walk::plan`] says so, else, or when a
    /// split walk does not stand, by one walker that reloads with more rows
    /// when they did not fit); [`Walk::rows`] gives what it wrote.
    pub(crate) fn run(&mut self, object: &[u8], helpers: &mut Helpers) -> Result<()> {
        // A stretch a helper still walks writes into the arrays this walk
        // reuses.
        helpers.wait_idle();
        // Only a capped walk, never split, leaves processes out.
        self.left_out = 0;
        let (threads, starts) = self.plan();
        if !starts.is_empty() && self.run_split(threads, &starts, helpers)? {
            self.stats.split += 1;
            self.stats.last_walkers = starts.len() + 1;
            self.stats.last_threads = threads;
        } else {
            if !starts.is_empty() {
                self.stats.redone += 1;
            }
            self.run_single(object)?;
            self.stats.last_walkers = 1;
            self.stats.last_threads = 1;
        }
        Ok(())
    }

    /// The rows the last [`Walk::run`] wrote.
    pub(crate) fn rows(&self) -> WalkRows<'_> {
        let n = self.capacity as usize;
        let want_io = self.config.flags & QS_CFG_IO as u32 != 0;
        let want_delays = self.config.flags & QS_CFG_DELAYACCT as u32 != 0;
        // SAFETY: qs_rows holds QsTask values, qs_rows_io QsIo values,
        // qs_rows_delays QsDelays values (all multiples of 8 bytes), `capacity`
        // of each.
        let tasks = unsafe { self.rows.slice::<QsTask>(n) };
        let io = if want_io {
            // SAFETY: as above.
            unsafe { self.io.slice::<QsIo>(n) }
        } else {
            &[]
        };
        let delays = if want_delays {
            // SAFETY: as above.
            unsafe { self.delays.slice::<QsDelays>(n) }
        } else {
            &[]
        };
        WalkRows {
            tasks,
            io,
            delays,
            ranges: &self.ranges,
            threads: self.stats.last_threads,
        }
    }

    fn prog_fd(&self) -> Result<RawFd> {
        let prog = self
            .ebpf
            .program("qs_walk")
            .ok_or_else(|| bpf_err("qs_walk")("not in the object".into()))?;
        let prog: &RawTracePoint = prog
            .try_into()
            .map_err(|e: aya::programs::ProgramError| bpf_err("qs_walk")(chain(&e)))?;
        let fd = prog.fd().map_err(|e| bpf_err("qs_walk")(chain(&e)))?;
        Ok(fd.as_fd().as_raw_fd())
    }

    /// The walkers' arguments: one from the list's head and one from each
    /// of `starts`, each to the next one's start; None when their rows do
    /// not fit the array. A stretch between two marks gets rows for the
    /// processes the last walk found there and an eighth more: new
    /// processes join the list at its end, so such a stretch holds no more
    /// unless its stop task left and its walker ran on past it (see
    /// walk.bpf.c's qs_visit_next). The last stretch, where new processes
    /// come, gets the rest of the array, or with `spare` half of it, the
    /// other half (returned) left for walking a stalled stretch again.
    fn shares(&self, starts: &[Mark], spare: bool) -> Option<(Vec<QsWalkArgs>, Range<u64>)> {
        let capacity = u64::from(self.capacity);
        let mark_every = self.mark_every(starts.len() + 1);
        let mut first_row = 0;
        let mut args = Vec::with_capacity(starts.len() + 1);
        for j in 0..=starts.len() {
            let start = j.checked_sub(1).map(|i| starts[i]);
            let stop = starts.get(j);
            let rest = capacity.checked_sub(first_row).filter(|&r| r > 0)?;
            let max_rows = match stop {
                Some(stop) => {
                    let procs = stop.at - start.map_or(0, |m| m.at);
                    procs + procs / 8 + 64
                }
                None if spare => rest / 2,
                None => rest,
            };
            if max_rows > rest || max_rows == 0 {
                return None;
            }
            args.push(QsWalkArgs {
                walker: j as u64,
                first_row,
                max_rows,
                start_task: start.map_or(0, |m| m.task),
                start_ns: start.map_or(0, |m| m.start_ns),
                start_pid: start.map_or(0, |m| m.pid),
                stop_task: stop.map_or(0, |m| m.task),
                stop_after_ns: stop.map_or(u64::MAX, |m| m.start_ns.saturating_add(STOP_MARGIN_NS)),
                mark_every,
                rss_lo: 0,
                rss_hi: 0,
                tie_rows: 0,
            });
            first_row += max_rows;
        }
        Some((args, first_row..capacity))
    }

    /// One walker over the whole list.
    fn run_single(&mut self, object: &[u8]) -> Result<()> {
        let mut args = self
            .shares(&[], false)
            .and_then(|(args, _)| args.first().copied())
            .ok_or_else(|| bpf_err("running the task walk")("the row array is empty".into()))?;
        let bounded = |args: &mut QsWalkArgs, b: Bounds| {
            args.rss_lo = b.lo;
            args.rss_hi = b.hi;
            args.tie_rows = b.ties;
        };
        if self.rows_cap > 0 {
            bounded(&mut args, bounds_for(&self.hist, u64::from(self.rows_cap)));
        }
        run_walker(self.prog_fd()?, &args)?;
        let mut out = self.out(0);
        if out.wanted > out.rows {
            if self.rows_cap > 0 {
                // Every process was counted: the bounds of this count fit
                // in rows for the cap, or for all when fewer.
                // Kernel threads' name rows (of processes the bounds
                // kept) come on top.
                let total: u64 = out.rss_hist.iter().sum();
                let kept = total.min(u64::from(self.rows_cap)) + out.names;
                let need = tight_capacity_for(kept.min(u64::from(u32::MAX)) as u32);
                if need > self.capacity {
                    self.reload(object, need)?;
                    args.max_rows = u64::from(self.capacity);
                }
                bounded(
                    &mut args,
                    bounds_for(&out.rss_hist, u64::from(self.rows_cap)),
                );
            } else {
                self.reload(object, rows_for(out.wanted as u32, self.tight))?;
                args.max_rows = u64::from(self.capacity);
            }
            run_walker(self.prog_fd()?, &args)?;
            out = self.out(0);
        }
        self.left_out = out.left_out;
        if self.rows_cap > 0 {
            self.hist = out.rss_hist;
        }
        self.ranges.clear();
        self.ranges
            .push(0..(out.rows as usize).min(self.capacity as usize));
        self.take_marks(&[], &|j| j);
        Ok(())
    }

    /// One walker from the list's head and one from each of `starts`, each
    /// to the next one's start, taken in turn by `threads` threads (this
    /// one among them); a stretch a helper stalls on (its CPU taken away
    /// mid-walk) this thread walks again into the spare rows and entry
    /// (`Helpers::run_backed`). Returns whether the walk stands: false when
    /// a start task was no longer where it was marked, or a walker's rows
    /// did not fit its share of the array.
    fn run_split(
        &mut self,
        threads: usize,
        starts: &[Mark],
        helpers: &mut Helpers,
    ) -> Result<bool> {
        let Some((args, spare)) = self.shares(starts, true) else {
            return Ok(false);
        };
        let fd = self.prog_fd()?;
        // The helpers' own handle on the program: a stretch left running
        // may outlive this walk (and a reload).
        // SAFETY: fd is the program's, open while self is borrowed.
        let prog = unsafe { BorrowedFd::borrow_raw(fd) }
            .try_clone_to_owned()
            .map_err(|e| bpf_err("running the task walk")(e.to_string()))?;
        let runs: Vec<Args> = args.iter().map(walker_args).collect();
        let job: Arc<OwnedJob> = Arc::new(move |j| test_run(prog.as_raw_fd(), &runs[j]));
        let again = |j: usize| QsWalkArgs {
            walker: SPARE as u64,
            first_row: spare.start,
            max_rows: spare.end - spare.start,
            ..args[j]
        };
        let backed = helpers
            .run_backed(
                threads,
                args.len(),
                job,
                self.split
                    .backups
                    .then_some(&|j| test_run(fd, &walker_args(&again(j)))),
                self.split.helper_stall,
            )
            .map_err(|e| bpf_err("running the task walk")(e.to_string()))?;
        for &r in &backed.values {
            walker_returned(r)?;
        }
        // Stretch j's arguments as walked: a stalled one's, the spare's.
        let used = |j: usize| match backed.backed_up {
            Some(b) if b == j => again(j),
            _ => args[j],
        };
        self.ranges.clear();
        for j in 0..args.len() {
            let a = used(j);
            let out = self.out(a.walker as usize);
            if out.status == QS_WALK_STALE_START || out.wanted > out.rows {
                return Ok(false);
            }
            let first = a.first_row as usize;
            self.ranges.push(first..first + out.rows as usize);
        }
        if backed.backed_up.is_some() {
            self.stats.backups += 1;
        }
        self.take_marks(starts, &|j| used(j).walker as usize);
        Ok(true)
    }

    /// Keeps the marks the last walk's walkers left, at their positions
    /// from the list's head, with the tasks walkers after the first started
    /// at (`starts`): a walker's own marks begin a share's length past its
    /// start, so without them the next plan would split away from the even
    /// point the last one found. `slot(j)` is stretch j's `qs_walk_out`
    /// entry.
    fn take_marks(&mut self, starts: &[Mark], slot: &dyn Fn(usize) -> usize) {
        self.marks.clear();
        let mut at = 0;
        for j in 0..=starts.len() {
            if let Some(&start) = j.checked_sub(1).map(|i| &starts[i]) {
                self.marks.push(Mark { at, ..start });
            }
            let out = self.out(slot(j));
            let n = (out.marks as usize).min(QS_WALK_MARKS as usize);
            for i in 0..n {
                // The k-th mark (from 1) is the (k * mark_every)-th process
                // visited: this many came before it.
                self.marks.push(Mark {
                    at: at + (i as u64 + 1) * out.mark_every - 1,
                    task: out.mark_task[i],
                    start_ns: out.mark_ns[i],
                    pid: out.mark_pid[i],
                });
            }
            at += out.visited;
        }
        self.visited = at;
    }

    pub(crate) fn set_walkers(&mut self, walkers: Threads) {
        self.split.walkers = walkers;
    }

    pub(crate) fn set_stretch_procs(&mut self, procs: u64) {
        self.split.stretch_procs = procs;
    }

    pub(crate) fn set_backups(&mut self, on: bool) {
        self.split.backups = on;
    }

    pub(crate) fn set_helper_stall(&mut self, stall: Option<Duration>) {
        self.split.helper_stall = stall;
    }

    pub(crate) fn stats(&self) -> WalkStats {
        self.stats
    }

    /// Loads the walk again with room for `capacity` rows, keeping its
    /// configuration and PID filter. The kernel's BTF is read again rather
    /// than kept: parsed, it holds about 10 MiB, and reloads are rare.
    pub(crate) fn reload(&mut self, object: &[u8], capacity: u32) -> Result<()> {
        let loader = sys::bpf::loader();
        let btf = kernel_btf()?;
        let config = self.config;
        let filter = std::mem::take(&mut self.filter);
        let reloads = self.reloads + 1;
        let (split, stats, visited) = (self.split, self.stats, self.visited);
        let (rows_cap, hist) = (self.rows_cap, self.hist);
        let marks = std::mem::take(&mut self.marks);
        *self = Walk::load(
            object,
            &btf,
            capacity.max(1),
            loader,
            self.pid_filter,
            self.tight,
        )?;
        self.reloads = reloads;
        // Marks are tasks, not rows: they stand across a reload.
        self.split = split;
        self.stats = stats;
        self.visited = visited;
        self.marks = marks;
        (self.rows_cap, self.hist) = (rows_cap, hist);
        self.set_config(config)?;
        self.set_filter(&filter)
    }

    pub(crate) fn reloads(&self) -> u64 {
        self.reloads
    }

    pub(crate) fn capacity(&self) -> u32 {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// walk.bpf.c's qs_rss_bucket.
    fn bucket_of(pages: u64) -> usize {
        match pages {
            0..4 => pages as usize,
            _ if pages >> 32 != 0 => QS_RSS_BUCKETS as usize - 1,
            _ => {
                let msb = pages.ilog2() as usize;
                (msb - 1) * 4 + ((pages >> (msb - 2)) & 3) as usize
            }
        }
    }

    #[test]
    fn each_bucket_of_resident_pages_starts_where_the_walk_counts_it() {
        let n = QS_RSS_BUCKETS as usize;
        for b in 0..n - 1 {
            let (lo, next) = (bucket_floor(b), bucket_floor(b + 1));
            assert!(lo < next, "bucket {b}: {lo} then {next}");
            assert_eq!(bucket_of(lo), b, "the first of bucket {b}");
            assert_eq!(bucket_of(next - 1), b, "the last of bucket {b}");
        }
        assert_eq!(bucket_floor(n - 1), 1 << 32);
        assert_eq!(bucket_of(u64::MAX), n - 1);
        assert_eq!(bucket_floor(n), u64::MAX);
        // Four buckets per power of two: 8, 10, 12, 14 pages.
        assert_eq!(
            (8..16).map(bucket_of).collect::<Vec<_>>(),
            [8, 8, 9, 9, 10, 10, 11, 11]
        );
    }

    #[test]
    fn bounds_keep_the_buckets_above_the_cap_and_as_many_of_the_one_it_falls_in() {
        let mut hist = vec![0u64; QS_RSS_BUCKETS as usize];
        // 30,000 processes of 200 pages (bucket 26), 40 of 5,000 (bucket
        // 46) and 3 of 70,000 (bucket 64).
        hist[bucket_of(200)] = 30_000;
        hist[bucket_of(5_000)] = 40;
        hist[bucket_of(70_000)] = 3;
        assert_eq!(
            bounds_for(&hist, 1_000),
            Bounds {
                lo: bucket_floor(bucket_of(200)),
                hi: bucket_floor(bucket_of(200) + 1),
                ties: 957,
            }
        );
        assert!(bucket_floor(bucket_of(200)) <= 200 && 200 < bucket_floor(bucket_of(200) + 1));
        // The cap falls in the bucket of 5,000 pages: 30 of its 40.
        let b = bounds_for(&hist, 33);
        assert_eq!((b.lo, b.ties), (bucket_floor(bucket_of(5_000)), 30));
        // All fit: no bounds.
        assert_eq!(bounds_for(&hist, 30_043), Bounds::default());
        assert_eq!(bounds_for(&hist, 30_042).ties, 29_999);
    }

    #[test]
    fn tight_rows_keep_an_eighth_of_room_where_others_keep_half() {
        assert_eq!(capacity_for(64_000), 96_000);
        assert_eq!(tight_capacity_for(64_000), 72_000);
        // Never below the least a walk is loaded with.
        let least = QS_WALK_MIN_ROWS as u32;
        assert_eq!(tight_capacity_for(10), least);
        assert_eq!(capacity_for(10), least);
    }
}
