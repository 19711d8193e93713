//! The BPF backend. A snapshot is taken one of two ways, both writing one
//! fixed-size record per process or thread (layout: `bpf/record.h`):
//!
//! - [`Method::Walk`] (Linux 6.7 and later; see [`walk`]): a program
//!   run on demand walks the task list with the open-coded task iterator and
//!   writes into a memory-mapped array decoded in place, summing each
//!   group's threads into its leader's row in the kernel.
//! - [`Method::Iter`] (Linux 5.17 and later: the iterator came in 5.8, the
//!   exit program's `bpf_loop` in 5.17): an `iter/task` program whose
//!   records are read back in large batches from the iterator's fd into one
//!   reused buffer; the threads are summed here.
//!
//! A `tp_btf/sched_process_exit` program records every thread group that
//! ends into a ring buffer that wakes its reader only past a watermark.
//!
//! [`Bpf::start_ticks`] looks each PID up with `bpf/lookup.bpf.o` (see
//! [`lookup`]).
//!
//! The objects are `bpf/proctable.bpf.o`, `bpf/walk.bpf.o` and
//! `bpf/lookup.bpf.o`, built by
//! `bpf/build.sh` and committed (a test fails when one is older than its
//! sources): they are CO-RE, relocated at load time against the running
//! kernel's BTF, so building quietstat needs no clang and no libbpf.

use aya::programs::{BtfTracePoint, Iter};
use aya::{Btf, Ebpf};
use procfs::pid::PidIo;

use crate::cputime::RawCputime;
use crate::error::Result;
use crate::fields::Field;
use crate::pool::Helpers;
pub use crate::pool::Threads;
use crate::proc::Proc;
use crate::query::Query;
use crate::record::{
    QS_CFG_CGROUP, QS_CFG_COMM, QS_CFG_CPUTIME, QS_CFG_DELAY, QS_CFG_DELAYACCT, QS_CFG_EXEC,
    QS_CFG_FAULTS, QS_CFG_FILTER, QS_CFG_IO, QS_CFG_MM, QS_CFG_OOM, QS_CFG_PARENT, QS_CFG_PRIO,
    QS_CFG_STATE, QS_CFG_THREADS, QS_CFG_UID, QS_EXIT_RING_BYTES, QS_MAX_PIDS, QsConfig,
    QsExitStats,
};

/// The groups of kernel fields the BPF programs read for each [`Field`]
/// (`record.h`'s `QS_CFG_*`, `task.h` reads them). The identity (PID, thread
/// group, start time), the thread count and the context switches are always
/// read: they share cache lines the walk touches anyway.
pub const READ_GROUPS: &[(Field, u32)] = &[
    (Field::Ppid, QS_CFG_PARENT as u32),
    (Field::Comm, QS_CFG_COMM as u32),
    (Field::State, QS_CFG_STATE as u32),
    (Field::Cpu, QS_CFG_STATE as u32),
    (Field::Utime, QS_CFG_CPUTIME as u32),
    (Field::Stime, QS_CFG_CPUTIME as u32),
    (Field::Minflt, QS_CFG_FAULTS as u32),
    (Field::Majflt, QS_CFG_FAULTS as u32),
    (Field::Rss, QS_CFG_MM as u32),
    (Field::Vsize, QS_CFG_MM as u32),
    (Field::Nice, QS_CFG_PRIO as u32),
    (Field::Priority, QS_CFG_PRIO as u32),
    (Field::Policy, QS_CFG_PRIO as u32),
    (Field::Cgroup, QS_CFG_CGROUP as u32),
    (Field::Io, QS_CFG_IO as u32),
    (Field::Uid, QS_CFG_UID as u32),
    (Field::Cmdline, QS_CFG_EXEC as u32),
    // The command-line cache is keyed by the name too.
    (Field::Cmdline, QS_CFG_COMM as u32),
    (Field::OomScoreAdj, QS_CFG_OOM as u32),
    (Field::Delay, QS_CFG_DELAY as u32),
    (Field::DelayAcct, QS_CFG_DELAYACCT as u32),
    // The run time tells the network read which processes ran.
    (Field::Net, QS_CFG_CPUTIME as u32),
];

/// The `qs_config` flags that make the programs read `fields` and no more.
pub fn read_flags(fields: crate::Fields) -> u32 {
    READ_GROUPS
        .iter()
        .filter(|(f, _)| fields.has(*f))
        .fold(0, |flags, (_, g)| flags | g)
}

pub mod btf_types;
mod decode;
mod exits;
pub mod gpu;
mod iter;
mod load;
pub mod lookup;
pub mod net;
pub mod reads;
mod ring;
mod test_run;
pub mod walk;

pub use decode::{Extras, decode_walk, decode_walk_ranges};
use decode::{decode_walk_parts, words_as_bytes};
use load::{bpf_err, kernel_btf, program, write_config, write_filter};
pub use load::{chain, load_retrying};
use lookup::Lookup;
use walk::Walk;
pub use walk::{MIN_PER_WALKER, PROCS_PER_STRETCH, WalkStats};

/// The committed object, 8-byte aligned as the ELF parser needs.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../../bpf/proctable.bpf.o");

// SAFETY: plain #[repr(C)] integer structs with no padding (checked by the
// generated size assertions).
unsafe impl aya::Pod for QsConfig {}
// SAFETY: as above.
unsafe impl aya::Pod for QsExitStats {}

const ITER_READ_BYTES: usize = 1 << 20;

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
    exits: Option<ring::Ring>,
    /// The PID lookup once tried.
    lookup: Option<LookupState>,
    /// As set by [`Bpf::set_walkers`].
    threads: Threads,
    /// What the last [`Bpf::read`] left to build rows from (the iterator's
    /// bytes; 0 for the walk), until [`Bpf::build`] takes it.
    read_len: Option<usize>,
    /// Processes resident in fewer bytes are left out of the walk's rows
    /// before they are built ([`Bpf::set_rss_floor`]); 0: none.
    rss_floor: u64,
    /// At most this many of the walk's processes, those using the most
    /// memory, are built ([`Bpf::set_rows_cap`]); 0: no cap.
    rows_cap: usize,
    /// The cap the handle was opened with, which bounds the walk's rows
    /// whatever cap is set later ([`Bpf::open_with_exit_ring`]); 0: none.
    open_cap: usize,
    /// Whether the last read's query took the floor and the cap.
    bounded: bool,
    /// PIDs the kernel's filter holds at most; a longer list is filtered
    /// here.
    pid_filter: u32,
    /// The processes the last walk found, those left out included.
    found: usize,
    /// The exit ring buffer's size ([`exit_ring_bytes`]).
    ring_bytes: u32,
    /// Network bytes per process, once a query asked for them: loaded,
    /// or why not.
    net: Option<NetState>,
    /// Whether the last read read the sockets, for its build.
    net_read: bool,
    net_scan_every: std::time::Duration,
    net_sweep_every: std::time::Duration,
    /// Which processes ran between two walks, for the network read.
    activity: net::Activity,
    /// A query's PIDs, sorted, for the network read.
    named: Vec<u32>,
    /// Why the last read of the sockets failed, if it did.
    net_error: Option<String>,
    /// The scan for GPU descriptors, once a query asked for GPU figures:
    /// loaded, or why not.
    gpu: Option<std::result::Result<gpu::GpuScan, String>>,
    gpu_majors: Vec<u32>,
    gpu_per_descriptor: bool,
}

/// The network programs, once tried.
enum NetState {
    Loaded(Box<net::Net>),
    Off(String),
}

impl NetState {
    fn of(loaded: Result<net::Net>) -> NetState {
        match loaded {
            Ok(n) => NetState::Loaded(Box::new(n)),
            Err(e) => NetState::Off(e.to_string()),
        }
    }
}

/// Reads the sockets (`visit`),
/// the programs loaded at the first call with `every`'s holder-scan and
/// sweep intervals (their hooks attached, every TCP socket there is given
/// an owner): whether it did. A failed read leaves the rows without them
/// and says why (`err`, [`Bpf::net_unavailable`]), not the table unread.
fn read_net(
    state: &mut Option<NetState>,
    err: &mut Option<String>,
    every: (std::time::Duration, std::time::Duration),
    visit: net::Visit<'_>,
) -> bool {
    if state.is_none() {
        let loaded = kernel_btf().and_then(|btf| net::Net::load(&btf));
        *state = Some(NetState::of(loaded.map(|mut n| {
            n.set_scan_every(every.0);
            n.set_sweep_every(every.1);
            n
        })));
    }
    let Some(NetState::Loaded(net)) = state.as_mut() else {
        return false;
    };
    match net.read(visit) {
        Ok(()) => {
            *err = None;
            true
        }
        Err(e) => {
            *err = Some(e.to_string());
            false
        }
    }
}

/// A size for the exit ring buffer from `wanted` bytes: a power of two
/// (as the kernel requires) no larger, between a page and
/// [`QS_EXIT_RING_BYTES`] (4 MiB: about 35,000 exits between drains).
pub fn exit_ring_bytes(wanted: u64) -> u32 {
    let page = sys::page_size().max(4096) as u64;
    let w = wanted.clamp(page, QS_EXIT_RING_BYTES);
    // The largest power of two not above w.
    (1u64 << w.ilog2()) as u32
}

/// The PID lookup, once tried: loaded, or why not (for a person: logs and
/// `bench`).
enum LookupState {
    Loaded(Lookup),
    Off(String),
}

impl LookupState {
    fn of(loaded: Result<Lookup>) -> LookupState {
        match loaded {
            Ok(l) => LookupState::Loaded(l),
            Err(e) => LookupState::Off(e.to_string()),
        }
    }
}

/// The PID lookup with room for `capacity` PIDs a run.
fn load_lookup(btf: &Btf, capacity: u32) -> Result<Lookup> {
    let (object, _) = lookup::link_kfuncs(lookup::OBJECT, btf)?;
    Lookup::load(words_as_bytes(&object), btf, capacity)
}

/// Room for a lookup of every task there is now.
fn lookup_capacity_now() -> u32 {
    walk::capacity_for(walk::tasks_now())
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
    /// kernel with BTF, BPF iterators and `bpf_loop`, which the exit
    /// program uses: 5.17 or later), taking snapshots with
    /// [`Method::Walk`] where the kernel has it, else [`Method::Iter`]
    /// ([`Bpf::walk_unavailable`] says why).
    pub fn open() -> Result<Bpf> {
        Bpf::open_with(Method::Walk)
    }

    /// As [`Bpf::open`], with `Method::Iter` to use the iterator even where
    /// the walk is available (to compare them).
    pub fn open_with(method: Method) -> Result<Bpf> {
        Bpf::load(
            method,
            false,
            false,
            QS_EXIT_RING_BYTES as u32,
            QS_MAX_PIDS as u32,
            0,
        )
    }

    /// As [`Bpf::open`], with an exit ring buffer of `ring_bytes` (made a
    /// size the kernel takes by [`exit_ring_bytes`]) rather than 4 MiB: its
    /// pages are kernel memory charged to the caller's cgroup from the
    /// load on, exits captured or not. For an agent, whose queries list
    /// every process: a query by PID is filtered here, not in the kernel,
    /// as the filter's table (65,536 buckets, 1 MiB of kernel memory in
    /// each of the two objects, however few PIDs it holds) is not made.
    /// With a `rows_cap` (0: none), the walk writes rows for about that
    /// many processes, the most resident, and has room for an eighth more
    /// ([`Bpf::set_rows_cap`]): for a caller under a memory ceiling, as the
    /// walk's rows are kernel memory charged to the caller's cgroup. A cap
    /// set later above it, or lifted, leaves the walk's rows at it: they
    /// are never reloaded larger for a whole table (a reload parses the
    /// kernel's BTF again). With `net`, the network programs are loaded
    /// now too, with the same parse of the kernel's BTF (loaded at the
    /// first query that asks for them, they take a second parse, 10 MiB
    /// or more of heap at once, what a caller under a memory ceiling
    /// cannot afford).
    pub fn open_with_exit_ring(ring_bytes: u64, rows_cap: usize, net: bool) -> Result<Bpf> {
        Bpf::load(
            Method::Walk,
            false,
            net,
            exit_ring_bytes(ring_bytes),
            1,
            u32::try_from(rows_cap).unwrap_or(u32::MAX),
        )
    }

    /// As [`Bpf::open`], loading the PID lookup [`Bpf::start_ticks`] uses
    /// too, with the same parse of the kernel's BTF (what a library handle
    /// wants: every later call reuses what was loaded).
    pub fn open_with_lookup() -> Result<Bpf> {
        Bpf::load(
            Method::Walk,
            true,
            false,
            QS_EXIT_RING_BYTES as u32,
            QS_MAX_PIDS as u32,
            0,
        )
    }

    /// Loads with room for `pid_filter` PIDs in the kernel's filter, the
    /// walk's rows capped by `rows_cap` ([`Bpf::open_with_exit_ring`]).
    fn load(
        method: Method,
        with_lookup: bool,
        with_net: bool,
        ring_bytes: u32,
        pid_filter: u32,
        rows_cap: u32,
    ) -> Result<Bpf> {
        // Both loaders made before the one parse of the kernel's BTF.
        let mut loader = sys::bpf::loader();
        let walk_loader = sys::bpf::loader();
        let btf = kernel_btf()?;
        let mut ebpf = loader
            .btf(Some(&btf))
            .map_max_entries("qs_exits", ring_bytes)
            .map_max_entries("qs_pids", pid_filter)
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
                Walk::open(
                    words_as_bytes(&walk_object),
                    &btf,
                    walk_loader,
                    pid_filter,
                    rows_cap,
                )
            }) {
                Ok(w) => (Some(w), None),
                Err(e) => (None, Some(e.to_string())),
            },
        };
        let lookup = with_lookup.then(|| LookupState::of(load_lookup(&btf, lookup_capacity_now())));
        let net = with_net.then(|| NetState::of(net::Net::load(&btf)));
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
                wakeup_bytes: ring_bytes / 2,
            },
            filter: Vec::new(),
            buf: vec![0; ITER_READ_BYTES],
            raw: Vec::new(),
            io: Vec::new(),
            page_size: sys::page_size(),
            exits: None,
            lookup,
            threads: Threads::Auto,
            read_len: None,
            rss_floor: 0,
            rows_cap: rows_cap as usize,
            open_cap: rows_cap as usize,
            bounded: false,
            pid_filter,
            found: 0,
            ring_bytes,
            net,
            net_read: false,
            net_scan_every: net::SCAN_EVERY,
            net_sweep_every: net::SWEEP_EVERY,
            activity: net::Activity::default(),
            named: Vec::new(),
            net_error: None,
            gpu: None,
            gpu_majors: vec![crate::gpu::DRM_MAJOR, crate::gpu::ACCEL_MAJOR],
            gpu_per_descriptor: false,
        };
        bpf.set_config(QsConfig {
            flags: 0,
            wakeup_bytes: ring_bytes / 2,
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

    /// Rows the last walk wrote, and processes its bounds left out
    /// unwritten ([`Bpf::set_rows_cap`]).
    pub fn walk_written(&self) -> Option<(u64, u64)> {
        self.walk.as_ref().map(|w| (w.written(), w.left_out()))
    }

    /// How many times the walk was reloaded with a larger array since it
    /// was opened (each may flush every CPU's TLB: see [`walk`]).
    pub fn walk_reloads(&self) -> u64 {
        self.walk.as_ref().map_or(0, Walk::reloads)
    }

    /// How many threads split a process-mode walk and a PID lookup (see
    /// [`Threads`]).
    pub fn set_walkers(&mut self, walkers: Threads) {
        self.threads = walkers;
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

    /// Fills `out` with one row per process (or thread) that `query` selects.
    pub fn snapshot(&mut self, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        self.read(query)?;
        self.build(query, out)
    }

    /// The first half of [`Bpf::snapshot`]: runs the walk (or the
    /// iterator), which leaves its records in the program's array (or
    /// this handle's buffer); [`Bpf::build`] makes the rows. A caller
    /// that hands tables to readers under a lock reads outside it and
    /// builds in place under it, with one table in memory, not two.
    pub fn read(&mut self, query: &Query) -> Result<()> {
        self.read_len = None;
        self.net_read = false;
        let net_every = self.net_every();
        let mut flags = read_flags(query.fields);
        if query.threads {
            flags |= QS_CFG_THREADS as u32;
        }
        let in_kernel = self.in_kernel_filter(query);
        if in_kernel.is_some() {
            flags |= QS_CFG_FILTER as u32;
        }
        // The floor and the cap stand on resident memory, and on a whole
        // table: not for a query by PID, nor one without resident memory.
        self.bounded = query.pids.is_none() && flags & QS_CFG_MM as u32 != 0;
        if let Some(walk) = self.walk.as_mut() {
            if let Some(pids) = in_kernel {
                walk.set_filter(pids)?;
            }
            // Opened with a cap, the walk's rows are sized for it and
            // never grown for a table of that kind: a reload parses the
            // kernel's BTF again (16 MiB of heap), what a caller under a
            // memory ceiling cannot afford; a larger or lifted cap keeps
            // the cap it was opened with.
            let cap = match (self.rows_cap, self.open_cap) {
                (c, 0) | (0, c) => c,
                (c, o) => c.min(o),
            };
            walk.set_rows_cap(match self.bounded {
                true => u32::try_from(cap).unwrap_or(u32::MAX),
                false => 0,
            })?;
            walk.set_config(QsConfig {
                flags,
                wakeup_bytes: 0,
            })?;
            walk.run(words_as_bytes(&self.walk_object), &mut self.helpers)?;
            self.read_len = Some(0);
            // The sockets of the processes that ran since the last walk
            // of a whole table; of a query by PID, those it names.
            if query.fields.has(Field::Net) {
                let visit = match query.pids.as_ref() {
                    Some(pids) => {
                        self.named.clone_from(pids);
                        self.named.sort_unstable();
                        net::Visit::Named(&self.named)
                    }
                    None => net::Visit::Ran({
                        let rows = walk.rows();
                        let tasks = rows.ranges.iter().flat_map(|r| &rows.tasks[r.clone()]);
                        self.activity.ran(tasks.filter(|t| t.pid != 0).map(|t| {
                            let moved = t.runtime_ns.wrapping_add(t.nvcsw).wrapping_add(t.nivcsw);
                            (t.tgid, t.start_boottime_ns, moved)
                        }))
                    }),
                };
                self.net_read = read_net(&mut self.net, &mut self.net_error, net_every, visit);
            }
        } else {
            if let Some(pids) = in_kernel {
                write_filter(&mut self.ebpf, &mut self.filter, pids)?;
            }
            self.set_config(QsConfig {
                flags,
                wakeup_bytes: self.config.wakeup_bytes,
            })?;
            self.read_len = Some(self.run_iterator()?);
            if query.fields.has(Field::Net) {
                self.net_read = read_net(
                    &mut self.net,
                    &mut self.net_error,
                    net_every,
                    net::Visit::All,
                );
            }
        }
        Ok(())
    }

    /// The PIDs a query's filter gives the program (past the map's size,
    /// the rows are filtered here instead).
    fn in_kernel_filter<'q>(&self, query: &'q Query) -> Option<&'q Vec<u32>> {
        query
            .pids
            .as_ref()
            .filter(|p| p.len() <= self.pid_filter as usize)
    }

    /// The second half of [`Bpf::snapshot`]: fills `out` from the records
    /// the last [`Bpf::read`] (of the same `query`) left.
    pub fn build(&mut self, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        out.clear();
        let Some(len) = self.read_len.take() else {
            return Err(crate::Error::Decode(
                "no process-table read to build rows from".into(),
            ));
        };
        if let Some(walk) = self.walk.as_ref() {
            let (floor, cap) = match self.bounded {
                true => (
                    self.rss_floor.div_ceil(self.page_size.max(1)),
                    self.rows_cap,
                ),
                false => (0, 0),
            };
            self.found = decode_walk_parts(
                &walk.rows(),
                &mut self.helpers,
                self.page_size,
                query.fields,
                floor,
                cap,
                &mut self.order,
                out,
            )? + walk.left_out() as usize;
        } else {
            self.decode(len, query, out)?;
            self.found = out.len();
        }
        if let Some(pids) = query
            .pids
            .as_ref()
            .filter(|_| self.in_kernel_filter(query).is_none())
        {
            let mut want = pids.clone();
            want.sort_unstable();
            out.retain(|p| want.binary_search(&p.tgid).is_ok());
        }
        if self.net_read
            && let Some(NetState::Loaded(net)) = self.net.as_mut()
        {
            net.apply(out);
        }
        Ok(())
    }

    /// The descriptors of a GPU's device of every process (`None`) or of
    /// those named, as (TGID, descriptor), into `out` (see
    /// [`crate::gpu`]); the scan is loaded at the first call. An error says
    /// why it cannot run.
    pub fn gpu_files(&mut self, pids: Option<&[u32]>, out: &mut Vec<(u32, u32)>) -> Result<()> {
        if self.gpu.is_none() {
            let per_descriptor = self.gpu_per_descriptor;
            let loaded = kernel_btf()
                .and_then(|btf| gpu::GpuScan::load(&btf, &self.gpu_majors, per_descriptor));
            self.gpu = Some(loaded.map_err(|e| e.to_string()));
        }
        match self.gpu.as_mut() {
            Some(Ok(scan)) => scan.scan(pids, out),
            Some(Err(why)) => Err(crate::Error::Bpf {
                what: "the GPU scan",
                detail: why.clone(),
            }),
            None => Ok(()),
        }
    }

    /// GPU descriptors the last scan of every process found and could not
    /// give (past [`gpu::WALK_CAPACITY`]).
    pub fn gpu_scan_lost(&self) -> u64 {
        match self.gpu.as_ref() {
            Some(Ok(scan)) => scan.lost(),
            _ => 0,
        }
    }

    /// Whether the GPU scan is the task-file iterator's, a call per
    /// descriptor, whatever the kernel has (to compare the two); takes
    /// effect at the next scan.
    pub fn set_gpu_scan_per_descriptor(&mut self, on: bool) {
        if on != self.gpu_per_descriptor {
            self.gpu_per_descriptor = on;
            self.gpu = None;
        }
    }

    /// The GPU scan's program once loaded (`qs_gpu_tasks`, or
    /// `qs_gpu_files` where the kernel lacks what that needs), and why
    /// not the first; `None` before the first scan or where none loaded.
    pub fn gpu_scan_method(&self) -> Option<(&'static str, Option<&str>)> {
        match self.gpu.as_ref() {
            Some(Ok(scan)) => Some(scan.method()),
            _ => None,
        }
    }

    /// The character-device majors whose descriptors the GPU scan finds
    /// (at most four): [`crate::gpu::DRM_MAJOR`] and
    /// [`crate::gpu::ACCEL_MAJOR`] unless set.
    pub fn set_gpu_majors(&mut self, majors: &[u32]) -> Result<()> {
        self.gpu_majors = majors.to_vec();
        match self.gpu.as_mut() {
            Some(Ok(scan)) => scan.set_majors(majors),
            _ => Ok(()),
        }
    }

    /// The network read's holder-scan and sweep intervals.
    fn net_every(&self) -> (std::time::Duration, std::time::Duration) {
        (self.net_scan_every, self.net_sweep_every)
    }

    /// Why network bytes are not read, once a query asked for them: they
    /// could not be loaded, or the last read of the sockets failed.
    pub fn net_unavailable(&self) -> Option<&str> {
        match &self.net {
            Some(NetState::Off(why)) => Some(why),
            _ => self.net_error.as_deref(),
        }
    }

    /// The least time between two holder scans of the network read
    /// ([`net::SCAN_EVERY`] unless set).
    pub fn set_net_scan_every(&mut self, every: std::time::Duration) {
        self.net_scan_every = every;
        if let Some(NetState::Loaded(n)) = self.net.as_mut() {
            n.set_scan_every(every);
        }
    }

    /// The most time between two sweeps of every socket by the network
    /// read ([`net::SWEEP_EVERY`] unless set); between them a read visits
    /// the sockets of the processes that ran, or sweeps where that is
    /// estimated to cost more. `Duration::MAX`: no sweep after the first
    /// read, whatever visiting costs.
    pub fn set_net_sweep_every(&mut self, every: std::time::Duration) {
        self.net_sweep_every = every;
        if let Some(NetState::Loaded(n)) = self.net.as_mut() {
            n.set_sweep_every(every);
        }
    }

    /// Sweeps of every socket the network read ran; `None` before network
    /// bytes were asked for.
    pub fn net_sweeps(&self) -> Option<u64> {
        match &self.net {
            Some(NetState::Loaded(n)) => Some(n.sweeps()),
            _ => None,
        }
    }

    /// Holder scans the network read ran (its load's included), and the
    /// accepted connections its last sweep found unheld (less those a
    /// holder scan looked for since); `None` before network bytes were
    /// asked for.
    pub fn net_scans(&self) -> Option<(u64, usize)> {
        match &self.net {
            Some(NetState::Loaded(n)) => Some((n.scans(), n.unheld())),
            _ => None,
        }
    }

    /// Whether the network programs are loaded (a query asking for
    /// network bytes loads them when they are not).
    pub fn net_loaded(&self) -> bool {
        matches!(self.net, Some(NetState::Loaded(_)))
    }

    /// Visits to sockets whose counts found no room to be kept; `None`
    /// before network bytes were asked for.
    pub fn net_lost(&self) -> Option<u64> {
        match &self.net {
            Some(NetState::Loaded(n)) => Some(n.lost()),
            _ => None,
        }
    }

    /// From the next build on, the walk's processes resident in fewer
    /// than `bytes` are left out before their rows are built (the
    /// iterator's are built, and left to the caller). 0: none.
    pub fn set_rss_floor(&mut self, bytes: u64) {
        self.rss_floor = bytes;
    }

    /// From the next read on, at most `cap` of the walk's processes are
    /// built, those resident in the most memory (ties to the lower PID):
    /// under a memory ceiling the first table is never built whole, even
    /// before a floor is known. The walk itself writes rows for about
    /// `cap` processes, bounded by the count of the walk before by
    /// resident pages (walk.bpf.c's qs_within_bounds): those it leaves out
    /// never take kernel memory. 0: no cap. Neither the cap nor the floor
    /// applies to a query by PID or one without [`crate::Field::Rss`].
    pub fn set_rows_cap(&mut self, cap: usize) {
        self.rows_cap = cap;
    }

    /// The processes the last build found, those below the floor included.
    pub fn found(&self) -> usize {
        self.found
    }

    /// Loads the PID lookup [`Bpf::start_ticks`] uses (once; later calls
    /// return at once) and returns why it is not used, if it is not: then
    /// `start_ticks` walks the table.
    pub fn open_lookup(&mut self) -> Option<&str> {
        if self.lookup.is_none() {
            let loaded = kernel_btf().and_then(|btf| load_lookup(&btf, lookup_capacity_now()));
            self.lookup = Some(LookupState::of(loaded));
        }
        self.lookup_unavailable()
    }

    /// Tests only: start times walk the table as on a kernel without the
    /// lookup, `why` being the reason given.
    #[doc(hidden)]
    pub fn drop_lookup(&mut self, why: &str) {
        self.lookup = Some(LookupState::Off(why.to_string()));
    }

    /// Why [`Bpf::start_ticks`] walks the table, once the lookup was tried
    /// and did not load.
    pub fn lookup_unavailable(&self) -> Option<&str> {
        match &self.lookup {
            Some(LookupState::Off(why)) => Some(why),
            _ => None,
        }
    }

    /// Start time (clock ticks since boot) of each PID, `None` for one that
    /// is no process: the vectored identity check. Each PID is looked up in
    /// the kernel where it can be (see [`lookup`]; loaded at the first
    /// call, or by [`Bpf::open_lookup`]); otherwise the table is walked.
    pub fn start_ticks(&mut self, pids: &[u32]) -> Result<Vec<Option<u64>>> {
        self.open_lookup();
        if let Some(LookupState::Loaded(lookup)) = self.lookup.as_mut() {
            if pids.len() > lookup.capacity() as usize
                && lookup.capacity() < lookup::MAX_PIDS_PER_RUN
            {
                let want = u32::try_from(pids.len()).unwrap_or(u32::MAX);
                *lookup = load_lookup(
                    &kernel_btf()?,
                    want.checked_next_power_of_two().unwrap_or(u32::MAX),
                )?;
            }
            return lookup.start_ticks(pids, self.threads, &mut self.helpers);
        }
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
}
