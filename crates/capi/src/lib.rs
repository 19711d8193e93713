//! libquietstat: the process table for C callers, through one header,
//! `include/quietstat.h` (generated from this file by cbindgen; a test
//! keeps the two the same).
//!
//! The vectored call of the kernel proposal quietstat answers in user
//! space: PIDs in, start times (or any chosen fields) out, in one call,
//! from the BPF task walk where the caller may load it and from /proc
//! otherwise, or from a running agent's table when the caller asks for it
//! and it is fresh enough. A handle loads its backend once (`qs_open`);
//! every later call reuses it.
//!
//! Conventions (docs/library.md):
//! - every call returns `QS_OK` (0) or a negative `QS_ERR_*`; the handle's
//!   `qs_last_error` says what was wrong (the calling thread's, for a
//!   `qs_open` that returned NULL);
//! - a handle is internally locked: calls on one handle from several
//!   threads take turns;
//! - no panic crosses the boundary: each entry point catches unwinding
//!   and returns `QS_ERR_INTERNAL`.

#![allow(non_camel_case_types)]

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use proctable::{BackendChoice, Field, Fields, Proc, ProcTable, Query, pid_list, pid_set};

mod call;

use call::*;

/// The ABI this library implements: `qs_options.abi` must carry it, and
/// `qs_version()` returns it.
pub const QS_ABI_VERSION: u32 = 6;

/// Success.
pub const QS_OK: i32 = 0;
/// A NULL pointer where one is needed, or an argument out of its range.
pub const QS_ERR_ARG: i32 = -1;
/// The kernel could not be read (the message says what and why).
pub const QS_ERR_READ: i32 = -2;
/// A caller's array is too small; the length needed is given back.
pub const QS_ERR_RANGE: i32 = -3;
/// `qs_options.abi` is not this library's `QS_ABI_VERSION`.
pub const QS_ERR_ABI: i32 = -4;
/// A defect inside the library (a panic, caught).
pub const QS_ERR_INTERNAL: i32 = -5;
/// `qs_last_error_code`'s finer codes of a `QS_ERR_READ` (a call returns
/// `QS_ERR_READ` itself): a file or directory that is not there (a root
/// that does not exist).
pub const QS_ERR_ABSENT: i32 = -6;
/// Of a `QS_ERR_READ`: permission refused (another user's files, BPF
/// without CAP_BPF).
pub const QS_ERR_DENIED: i32 = -7;
/// Of a `QS_ERR_READ`: a file whose text could not be parsed, or a record
/// stream that does not decode.
pub const QS_ERR_MALFORMED: i32 = -8;
/// Of a `QS_ERR_READ`: the kernel refused a call (BPF, taskstats).
pub const QS_ERR_KERNEL: i32 = -9;

/// `qs_options.backend`: BPF where it loads, else /proc.
pub const QS_BACKEND_AUTO: u32 = 0;
/// The BPF task walk (root, or CAP_BPF with CAP_PERFMON), or fail.
pub const QS_BACKEND_BPF: u32 = 1;
/// /proc, read with kept-open descriptors.
pub const QS_BACKEND_PROCFS: u32 = 2;

/// `qs_served_by`: the last read came from the handle's own backend.
pub const QS_SERVED_SELF: i32 = 0;
/// `qs_served_by`: the last read came from the running agent's table.
pub const QS_SERVED_AGENT: i32 = 1;

/// `qs_fields` bits: which fields a record holds. pid, tgid and the start
/// time (the identity) are in every record.
pub type qs_fields = u32;
pub const QS_FIELD_PPID: qs_fields = 1 << 2;
pub const QS_FIELD_COMM: qs_fields = 1 << 3;
pub const QS_FIELD_STATE: qs_fields = 1 << 4;
pub const QS_FIELD_START: qs_fields = 1 << 5;
pub const QS_FIELD_UTIME: qs_fields = 1 << 6;
pub const QS_FIELD_STIME: qs_fields = 1 << 7;
pub const QS_FIELD_MINFLT: qs_fields = 1 << 8;
pub const QS_FIELD_MAJFLT: qs_fields = 1 << 9;
pub const QS_FIELD_THREADS: qs_fields = 1 << 10;
pub const QS_FIELD_RSS: qs_fields = 1 << 11;
pub const QS_FIELD_VSIZE: qs_fields = 1 << 12;
pub const QS_FIELD_NICE: qs_fields = 1 << 13;
pub const QS_FIELD_PRIORITY: qs_fields = 1 << 14;
pub const QS_FIELD_POLICY: qs_fields = 1 << 15;
pub const QS_FIELD_CPU: qs_fields = 1 << 16;
pub const QS_FIELD_CGROUP: qs_fields = 1 << 17;
pub const QS_FIELD_IO: qs_fields = 1 << 18;
pub const QS_FIELD_CTXSW: qs_fields = 1 << 19;
pub const QS_FIELD_UID: qs_fields = 1 << 20;
pub const QS_FIELD_OOM: qs_fields = 1 << 22;
pub const QS_FIELD_DELAY: qs_fields = 1 << 23;
pub const QS_FIELD_NET: qs_fields = 1 << 24;
pub const QS_FIELD_DELAYACCT: qs_fields = 1 << 25;
pub const QS_FIELD_GPU: qs_fields = 1 << 26;
/// Every field /proc/PID/stat has (ppid to cpu).
pub const QS_FIELDS_STAT: qs_fields = 0x1fffc;
/// Every field above.
pub const QS_FIELDS_ALL: qs_fields = 0x7dffffc;

/// The `qs_fields` bit of each field, in the process table's order (a test
/// checks them against it).
const FIELD_BITS: [(qs_fields, Field); 24] = [
    (QS_FIELD_PPID, Field::Ppid),
    (QS_FIELD_COMM, Field::Comm),
    (QS_FIELD_STATE, Field::State),
    (QS_FIELD_START, Field::Start),
    (QS_FIELD_UTIME, Field::Utime),
    (QS_FIELD_STIME, Field::Stime),
    (QS_FIELD_MINFLT, Field::Minflt),
    (QS_FIELD_MAJFLT, Field::Majflt),
    (QS_FIELD_THREADS, Field::Threads),
    (QS_FIELD_RSS, Field::Rss),
    (QS_FIELD_VSIZE, Field::Vsize),
    (QS_FIELD_NICE, Field::Nice),
    (QS_FIELD_PRIORITY, Field::Priority),
    (QS_FIELD_POLICY, Field::Policy),
    (QS_FIELD_CPU, Field::Cpu),
    (QS_FIELD_CGROUP, Field::Cgroup),
    (QS_FIELD_IO, Field::Io),
    (QS_FIELD_CTXSW, Field::Ctxsw),
    (QS_FIELD_UID, Field::Uid),
    (QS_FIELD_OOM, Field::OomScoreAdj),
    (QS_FIELD_DELAY, Field::Delay),
    (QS_FIELD_NET, Field::Net),
    (QS_FIELD_DELAYACCT, Field::DelayAcct),
    (QS_FIELD_GPU, Field::Gpu),
];

/// How a handle is opened. Zeroed members take their defaults.
#[repr(C)]
pub struct qs_options {
    /// `QS_ABI_VERSION`, as the caller's header has it.
    pub abi: u32,
    /// `QS_BACKEND_AUTO`, `QS_BACKEND_BPF` or `QS_BACKEND_PROCFS`.
    pub backend: u32,
    /// The proc root to read (NULL: /proc). BPF reads the running kernel,
    /// so another root means /proc's backend.
    pub proc_root: *const c_char,
    /// The sys root (NULL: /sys).
    pub sys_root: *const c_char,
    /// Threads a read is split between: 0 or 1, the calling thread alone
    /// (no other CPU is woken); up to 15, helpers on the CPUs the caller
    /// may run on but its own, which finish a large table sooner for the
    /// same CPU time.
    pub threads: u32,
    /// Serve `qs_pids_read` and `qs_snapshot*` from a running agent's
    /// table (no read of the kernel) when it has the fields asked and is
    /// fresh enough, else read as without it: NULL, never; "", the
    /// agent's default snapshot (/run/quietstat/snapshot); else the path of
    /// its snapshot (`shm_path`). `qs_pid_start_times` always reads the
    /// kernel: a table seconds old cannot tell a reused PID.
    pub agent: *const c_char,
    /// How old the agent's table may be, in milliseconds; 0: the agent's
    /// process interval plus a second (the agent is asked for a new table
    /// when its last one is older).
    pub agent_max_age_ms: u32,
}

/// One process, a fixed-size record. `fields` says which members hold
/// values; the others are zero.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct qs_proc {
    pub pid: i32,
    pub tgid: i32,
    pub ppid: i32,
    /// One of `RSDTtXZPI`, as /proc shows it.
    pub state: c_char,
    /// The `qs_fields` this record holds.
    pub fields: qs_fields,
    /// Start time since boot in clock ticks, as /proc/PID/stat field 22.
    pub start_ticks: u64,
    /// The same in nanoseconds (exact from BPF; tick resolution from /proc).
    pub start_ns: u64,
    /// CPU time, process-wide with dead threads, nanoseconds.
    pub utime_ns: u64,
    pub stime_ns: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub rss_bytes: u64,
    pub vsize_bytes: u64,
    /// cgroup v2 id (its directory's inode number).
    pub cgroup_id: u64,
    /// /proc/PID/io: bytes through read and write calls, those calls, and
    /// bytes from and to storage.
    pub rchar: u64,
    pub wchar: u64,
    pub syscr: u64,
    pub syscw: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Voluntary and involuntary context switches (the leader thread's).
    pub voluntary_ctxsw: u64,
    pub involuntary_ctxsw: u64,
    /// Time waiting on a run queue for a CPU (ns) and times given one (the
    /// leader thread's, as /proc/PID/schedstat).
    pub run_delay_ns: u64,
    pub timeslices: u64,
    /// Payload bytes the process's TCP sockets received and sent (BPF
    /// only).
    pub net_rx_bytes: u64,
    pub net_tx_bytes: u64,
    /// The task's own delays by cause, from the kernel's delay accounting
    /// (kernel.task_delayacct; from /proc through taskstats, with
    /// CAP_NET_ADMIN): block I/O, swap-in, direct
    /// reclaim, thrashing, compaction, copy-on-write, IRQs.
    pub blkio_delay_ns: u64,
    pub swapin_delay_ns: u64,
    pub reclaim_delay_ns: u64,
    pub thrashing_delay_ns: u64,
    pub compact_delay_ns: u64,
    pub wpcopy_delay_ns: u64,
    pub irq_delay_ns: u64,
    /// Time GPU engines were busy with the process's clients (ns, summed
    /// over engines) and the GPU memory they hold resident (bytes), from
    /// DRM fdinfo and NVIDIA's library (docs/proctable.md).
    pub gpu_busy_ns: u64,
    pub gpu_mem_bytes: u64,
    pub num_threads: u32,
    pub nice: i32,
    pub priority: i32,
    pub policy: u32,
    pub rt_priority: u32,
    /// CPU last run on.
    pub cpu: u32,
    /// Effective user id.
    pub uid: u32,
    pub oom_score_adj: i32,
    /// GPU clients (opens of a GPU's device) the process is charged with.
    pub gpu_clients: u32,
    /// The task name, NUL-terminated.
    pub comm: [c_char; 64],
}

impl qs_proc {
    const ZERO: qs_proc = qs_proc {
        pid: 0,
        tgid: 0,
        ppid: 0,
        state: 0,
        fields: 0,
        start_ticks: 0,
        start_ns: 0,
        utime_ns: 0,
        stime_ns: 0,
        minflt: 0,
        majflt: 0,
        rss_bytes: 0,
        vsize_bytes: 0,
        cgroup_id: 0,
        rchar: 0,
        wchar: 0,
        syscr: 0,
        syscw: 0,
        read_bytes: 0,
        write_bytes: 0,
        voluntary_ctxsw: 0,
        involuntary_ctxsw: 0,
        run_delay_ns: 0,
        timeslices: 0,
        net_rx_bytes: 0,
        net_tx_bytes: 0,
        blkio_delay_ns: 0,
        swapin_delay_ns: 0,
        reclaim_delay_ns: 0,
        thrashing_delay_ns: 0,
        compact_delay_ns: 0,
        wpcopy_delay_ns: 0,
        irq_delay_ns: 0,
        gpu_busy_ns: 0,
        gpu_mem_bytes: 0,
        num_threads: 0,
        nice: 0,
        priority: 0,
        policy: 0,
        rt_priority: 0,
        cpu: 0,
        uid: 0,
        oom_score_adj: 0,
        gpu_clients: 0,
        comm: [0; 64],
    };

    /// The record of `p`, holding the fields of `asked` it has.
    fn of(p: &Proc, asked: Fields) -> qs_proc {
        let mut r = qs_proc::ZERO;
        r.pid = p.pid as i32;
        r.tgid = p.tgid as i32;
        r.start_ticks = p.start_ticks;
        r.start_ns = p.start_ns;
        let mut held = QS_FIELD_START;
        for (bit, f) in FIELD_BITS {
            if !asked.has(f) {
                continue;
            }
            let has = match f {
                Field::Ppid => {
                    r.ppid = p.ppid as i32;
                    true
                }
                Field::Comm => {
                    let b = p.comm.as_bytes();
                    let n = b.len().min(r.comm.len() - 1);
                    for (d, s) in r.comm.iter_mut().zip(&b[..n]) {
                        *d = *s as c_char;
                    }
                    true
                }
                Field::State => {
                    r.state = p.state as u8 as c_char;
                    true
                }
                Field::Utime => {
                    r.utime_ns = p.utime_ns;
                    true
                }
                Field::Stime => {
                    r.stime_ns = p.stime_ns;
                    true
                }
                Field::Minflt => {
                    r.minflt = p.minflt;
                    true
                }
                Field::Majflt => {
                    r.majflt = p.majflt;
                    true
                }
                Field::Threads => {
                    r.num_threads = p.num_threads;
                    true
                }
                Field::Rss => {
                    r.rss_bytes = p.rss_bytes;
                    true
                }
                Field::Vsize => {
                    r.vsize_bytes = p.vsize_bytes;
                    true
                }
                Field::Nice => {
                    r.nice = p.nice;
                    true
                }
                Field::Priority => {
                    r.priority = p.priority;
                    true
                }
                Field::Policy => {
                    (r.policy, r.rt_priority) = (p.policy, p.rt_priority);
                    true
                }
                Field::Cpu => {
                    r.cpu = p.cpu;
                    true
                }
                Field::Cgroup => p.cgroup_id.map(|c| r.cgroup_id = c).is_some(),
                Field::Io => {
                    p.io.map(|io| {
                        (r.rchar, r.wchar, r.syscr, r.syscw) =
                            (io.rchar, io.wchar, io.syscr, io.syscw);
                        (r.read_bytes, r.write_bytes) = (io.read_bytes, io.write_bytes);
                    })
                    .is_some()
                }
                Field::Ctxsw => p
                    .ctxsw
                    .map(|c| {
                        (r.voluntary_ctxsw, r.involuntary_ctxsw) = (c.voluntary, c.involuntary)
                    })
                    .is_some(),
                Field::Uid => p.uid.map(|u| r.uid = u).is_some(),
                Field::OomScoreAdj => p.oom_score_adj.map(|o| r.oom_score_adj = o).is_some(),
                Field::Delay => p
                    .sched
                    .map(|s| (r.run_delay_ns, r.timeslices) = (s.run_delay_ns, s.timeslices))
                    .is_some(),
                Field::Net => p
                    .net
                    .map(|n| (r.net_rx_bytes, r.net_tx_bytes) = (n.rx_bytes, n.tx_bytes))
                    .is_some(),
                Field::DelayAcct => p
                    .delays
                    .map(|d| {
                        r.blkio_delay_ns = d.blkio_ns;
                        r.swapin_delay_ns = d.swapin_ns;
                        r.reclaim_delay_ns = d.reclaim_ns;
                        r.thrashing_delay_ns = d.thrashing_ns;
                        r.compact_delay_ns = d.compact_ns;
                        r.wpcopy_delay_ns = d.wpcopy_ns;
                        r.irq_delay_ns = d.irq_ns;
                    })
                    .is_some(),
                Field::Gpu => p
                    .gpu
                    .map(|g| {
                        r.gpu_busy_ns = g.busy_ns;
                        r.gpu_mem_bytes = g.mem_bytes;
                        r.gpu_clients = g.clients;
                    })
                    .is_some(),
                _ => false,
            };
            if has {
                held |= bit;
            }
        }
        r.fields = held;
        r
    }
}

/// An open process table: its backend, loaded once, and the last error.
pub struct qs_handle {
    state: Mutex<State>,
}

thread_local! {
    /// Why the calling thread's last `qs_open` returned NULL.
    static OPEN_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// Its code ([`qs_last_error_code`]).
    static OPEN_CODE: std::cell::Cell<i32> = const { std::cell::Cell::new(QS_OK) };
}

/// The library's ABI version (`QS_ABI_VERSION`).
#[unsafe(no_mangle)]
pub extern "C" fn qs_version() -> u32 {
    QS_ABI_VERSION
}

/// Opens a process table: loads the BPF walk and the PID lookup once (with
/// `QS_BACKEND_AUTO`, /proc when BPF is not allowed; `qs_backend_note`
/// says why). NULL
/// options take the defaults. Returns NULL on failure: `qs_last_error(NULL)`
/// says why, on the calling thread.
///
/// # Safety
/// `opts` is NULL or points to a `qs_options` whose strings are NULL or
/// NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_open(opts: *const qs_options) -> *mut qs_handle {
    let opened = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's options, or NULL.
        let o = unsafe { opts.as_ref() };
        let abi = o.map_or(QS_ABI_VERSION, |o| o.abi);
        if abi != QS_ABI_VERSION {
            return Err((
                QS_ERR_ABI,
                format!(
                    "qs_options.abi is {abi}; this library implements ABI {QS_ABI_VERSION} (rebuild against its quietstat.h)"
                ),
            ));
        }
        let choice = match o.map_or(QS_BACKEND_AUTO, |o| o.backend) {
            QS_BACKEND_AUTO => BackendChoice::Auto,
            QS_BACKEND_BPF => BackendChoice::Bpf,
            QS_BACKEND_PROCFS => BackendChoice::Procfs,
            b => {
                return Err((
                    QS_ERR_ARG,
                    format!(
                        "qs_options.backend is {b}; accepted: QS_BACKEND_AUTO (0), QS_BACKEND_BPF (1), QS_BACKEND_PROCFS (2)"
                    ),
                ));
            }
        };
        let root = |p: Option<*const c_char>, default: &str| -> Result<String, (i32, String)> {
            match p.filter(|p| !p.is_null()) {
                None => Ok(default.to_string()),
                // SAFETY: a NUL-terminated string, as documented.
                Some(p) => unsafe { CStr::from_ptr(p) }
                    .to_str()
                    .map(String::from)
                    .map_err(|_| (QS_ERR_ARG, "a root path is not UTF-8".to_string())),
            }
        };
        let threads = o.map_or(0, |o| o.threads).max(1) as usize;
        if threads > proctable::MAX_THREADS {
            return Err((
                QS_ERR_ARG,
                format!(
                    "qs_options.threads is {threads}; accepted: 0 to {}",
                    proctable::MAX_THREADS
                ),
            ));
        }
        let proc_root = root(o.map(|o| o.proc_root), "/proc")?;
        let sys_root = root(o.map(|o| o.sys_root), "/sys")?;
        let mut table = ProcTable::open_with_lookup(choice, &proc_root, &sys_root)
            .map_err(|e| (code_of(&e), format!("opening the process table: {e}")))?;
        table.set_threads(proctable::Threads::Fixed(threads));
        let note = c_string(&table.note());
        let agent = match o.map(|o| o.agent).filter(|p| !p.is_null()) {
            None => None,
            Some(p) => {
                // SAFETY: a NUL-terminated string, as documented.
                let path = unsafe { CStr::from_ptr(p) }
                    .to_str()
                    .map_err(|_| (QS_ERR_ARG, "qs_options.agent is not UTF-8".to_string()))?;
                let max_age_ms = o.map_or(0, |o| o.agent_max_age_ms);
                Some(shm::view::AgentTable::new(path, max_age_ms.into()))
            }
        };
        Ok(Box::into_raw(Box::new(qs_handle {
            state: Mutex::new(State {
                table,
                rows: Vec::new(),
                note,
                error: CString::default(),
                error_code: QS_OK,
                agent,
                served_by: QS_SERVED_SELF,
                agent_note: CString::default(),
            }),
        })))
    }));
    let (code, why) = match opened {
        Ok(Ok(h)) => {
            OPEN_CODE.with(|c| c.set(QS_OK));
            return h;
        }
        Ok(Err(e)) => e,
        Err(_) => (
            QS_ERR_INTERNAL,
            "internal error: a defect in libquietstat (a panic, caught)".into(),
        ),
    };
    OPEN_CODE.with(|c| c.set(code));
    OPEN_ERROR.with(|e| *e.borrow_mut() = c_string(&why));
    std::ptr::null_mut()
}

/// Closes a handle (NULL is ignored).
///
/// # Safety
/// `h` is NULL or a handle from `qs_open`, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_close(h: *mut qs_handle) {
    if !h.is_null() {
        // SAFETY: a handle from qs_open, given back once.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(h) })));
    }
}

/// The backend in use: `QS_BACKEND_BPF` or `QS_BACKEND_PROCFS`;
/// `QS_ERR_ARG` for NULL.
///
/// # Safety
/// `h` is NULL or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_backend(h: *mut qs_handle) -> i32 {
    with_state(h, |st| {
        Ok(match st.table.backend() {
            proctable::Backend::Bpf => QS_BACKEND_BPF as i32,
            proctable::Backend::Procfs => QS_BACKEND_PROCFS as i32,
        })
    })
}

/// Why `QS_BACKEND_AUTO` took /proc rather than BPF, and why
/// `qs_pid_start_times` walks the table on BPF rather than looking each PID
/// up (a kernel before 6.13); "" when neither. Valid until the handle is
/// closed.
///
/// # Safety
/// `h` is NULL or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_backend_note(h: *const qs_handle) -> *const c_char {
    // SAFETY: an open handle, or NULL.
    unsafe { state_str(h, |st| &st.note) }.unwrap_or(c"".as_ptr())
}

/// Who served the handle's last `qs_pids_read` or `qs_snapshot*`:
/// `QS_SERVED_AGENT` (the running agent's table) or `QS_SERVED_SELF` (the
/// handle's own read; also before any); `QS_ERR_ARG` for NULL.
///
/// # Safety
/// `h` is NULL or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_served_by(h: *mut qs_handle) -> i32 {
    with_state(h, |st| Ok(st.served_by))
}

/// Why the handle's last read was not served from the agent though
/// `qs_options.agent` asked for it (no agent running, its table too old,
/// a field it does not read); "" when it was, or when not asked. Valid
/// until the next call on the handle.
///
/// # Safety
/// `h` is NULL or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_agent_note(h: *const qs_handle) -> *const c_char {
    // SAFETY: an open handle, or NULL.
    unsafe { state_str(h, |st| &st.agent_note) }.unwrap_or(c"".as_ptr())
}

/// What the handle's last failed call was about; with NULL, why the
/// calling thread's last `qs_open` failed. Valid until the next call on
/// the handle (or the next `qs_open` on the thread).
///
/// # Safety
/// `h` is NULL or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_last_error(h: *const qs_handle) -> *const c_char {
    // SAFETY: an open handle, or NULL.
    unsafe { state_str(h, |st| &st.error) }
        .unwrap_or_else(|| OPEN_ERROR.with(|e| e.borrow().as_ptr()))
}

/// The code of the last failure on `h` (`QS_OK` when none yet): the code
/// the call returned, or for a `QS_ERR_READ` the finer one that says what
/// kind of failure it was (`QS_ERR_ABSENT`, `QS_ERR_DENIED`,
/// `QS_ERR_MALFORMED`, `QS_ERR_KERNEL`; `QS_ERR_READ` for any other).
/// With NULL, the calling thread's last `qs_open`'s (`QS_OK` when it
/// opened).
///
/// # Safety
/// `h` is NULL or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_last_error_code(h: *const qs_handle) -> i32 {
    // SAFETY: an open handle, or NULL.
    match unsafe { h.as_ref() } {
        Some(h) => h.state.lock().unwrap_or_else(|e| e.into_inner()).error_code,
        None => OPEN_CODE.with(|c| c.get()),
    }
}

/// The vectored call: the start time of each of `n` PIDs, in clock ticks
/// since boot (/proc/PID/stat field 22), into `out[i]`; 0 for a PID that
/// names no process or thread. On BPF one program run looks every PID up
/// in the kernel (a kernel before 6.13: one walk of the table, where a
/// thread's id gives 0); on /proc, each PID's stat file is read.
///
/// # Safety
/// `pids` and `out` point to `n` values each (or are NULL with `n` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_pid_start_times(
    h: *mut qs_handle,
    pids: *const i32,
    n: usize,
    out: *mut u64,
) -> i32 {
    with_state(h, |st| {
        // SAFETY: as the caller vouches.
        let (pids, out) = unsafe { (slice(pids, n, "pids")?, slice_mut(out, n, "out")?) };
        if n == 0 {
            return Ok(QS_OK);
        }
        let ticks = st.table.start_ticks(&pid_list(pids)).map_err(read_error)?;
        for (t, o) in ticks.iter().zip(out.iter_mut()) {
            *o = t.unwrap_or(0);
        }
        Ok(QS_OK)
    })
}

/// The fields of `mask` for each of `n` PIDs, into `out[i]` in the order
/// asked; a PID that is no process gets a zeroed record (pid 0).
///
/// # Safety
/// `pids` and `out` point to `n` values each (or are NULL with `n` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_pids_read(
    h: *mut qs_handle,
    pids: *const i32,
    n: usize,
    mask: qs_fields,
    out: *mut qs_proc,
) -> i32 {
    with_state(h, |st| {
        // SAFETY: as the caller vouches.
        let (pids, out) = unsafe { (slice(pids, n, "pids")?, slice_mut(out, n, "out")?) };
        if n == 0 {
            return Ok(QS_OK);
        }
        let fields = read(st, Some(pid_set(pids)), mask)?;
        for (pid, o) in pids.iter().zip(out.iter_mut()) {
            let row = u32::try_from(*pid)
                .ok()
                .and_then(|p| st.rows.binary_search_by_key(&p, |r| r.pid).ok());
            *o = row.map_or(qs_proc::ZERO, |i| qs_proc::of(&st.rows[i], fields));
        }
        Ok(QS_OK)
    })
}

/// Every process, with the fields of `mask`, into an array the library
/// allocates: `*out` and `*n` on success; free it with `qs_table_free`.
///
/// # Safety
/// `out` and `n` point to writable locations.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_snapshot(
    h: *mut qs_handle,
    mask: qs_fields,
    out: *mut *mut qs_proc,
    n: *mut usize,
) -> i32 {
    with_state(h, |st| {
        if out.is_null() || n.is_null() {
            return Err((QS_ERR_ARG, "out or n is NULL".into()));
        }
        let fields = read(st, None, mask)?;
        let table: Box<[qs_proc]> = st.rows.iter().map(|p| qs_proc::of(p, fields)).collect();
        let len = table.len();
        // SAFETY: both checked non-null above; the caller vouches they are writable.
        unsafe {
            *n = len;
            *out = Box::into_raw(table).cast::<qs_proc>();
        }
        Ok(QS_OK)
    })
}

/// Every process, with the fields of `mask`, into the caller's array of
/// `cap` records; `*n` is set to the count. When `cap` is too small,
/// nothing is written but `*n`, the count needed, and `QS_ERR_RANGE` is
/// returned.
///
/// # Safety
/// `out` points to `cap` writable records (or is NULL with `cap` 0), `n`
/// to a writable location.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_snapshot_into(
    h: *mut qs_handle,
    mask: qs_fields,
    out: *mut qs_proc,
    cap: usize,
    n: *mut usize,
) -> i32 {
    with_state(h, |st| {
        // SAFETY: as the caller vouches.
        let out = unsafe { slice_mut(out, cap, "out")? };
        if n.is_null() {
            return Err((QS_ERR_ARG, "n is NULL".into()));
        }
        let fields = read(st, None, mask)?;
        let len = st.rows.len();
        // SAFETY: checked non-null; the caller vouches it is writable.
        unsafe { *n = len };
        if len > cap {
            return Err((
                QS_ERR_RANGE,
                format!("{len} processes, room for {cap}; *n is the count needed"),
            ));
        }
        for (o, p) in out.iter_mut().zip(&st.rows) {
            *o = qs_proc::of(p, fields);
        }
        Ok(QS_OK)
    })
}

/// Frees an array from `qs_snapshot` (NULL is ignored).
///
/// # Safety
/// `table` and `n` are what one `qs_snapshot` gave, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qs_table_free(table: *mut qs_proc, n: usize) {
    if !table.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let slice = std::ptr::slice_from_raw_parts_mut(table, n);
            // SAFETY: the boxed slice qs_snapshot leaked, with its length.
            drop(unsafe { Box::from_raw(slice) })
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `QS_FIELD_*` bits are the process table's field bits, and the
    /// sets name every field.
    #[test]
    fn field_bits_follow_the_table() {
        for (bit, f) in FIELD_BITS {
            assert_eq!(bit, Fields::NONE.with(f).bits(), "{}", f.name());
        }
        let all = FIELD_BITS.iter().fold(0, |a, (b, _)| a | b);
        assert_eq!(all, QS_FIELDS_ALL);
        let stat = Fields::stat()
            .without(Field::Pid)
            .without(Field::Tgid)
            .bits();
        assert_eq!(stat, QS_FIELDS_STAT);
        // Every field but the identity (always there) and the command line
        // (not a fixed-size value) has a bit.
        for f in Field::ALL {
            let has_bit = FIELD_BITS.iter().any(|(_, g)| g == f);
            assert_eq!(
                has_bit,
                !matches!(f, Field::Pid | Field::Tgid | Field::Cmdline),
                "{}",
                f.name()
            );
        }
    }
}
