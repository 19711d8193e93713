//! `noise`: every interruption that lands on a set of CPUs during a window,
//! by cause, counted in the kernel by BPF programs on tracepoints (see
//! bpf/noise.bpf.c) and read once at the end from a housekeeping CPU; where
//! BPF is not allowed, recorded by the kernel's trace events into a private
//! tracefs instance and counted at the end ([`crate::noise_tracefs`]).
//!
//! The programs are loaded and attached before the window opens and the
//! measured-CPU map is filled only then, and emptied before they are
//! detached: attaching a tracepoint patches kernel text, which syncs every
//! CPU, and those IPIs are not the measured ones.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use aya::maps::{Array, HashMap as BpfHashMap};
use aya::programs::BtfTracePoint;
use aya::{Btf, EbpfLoader};
use procfs::cpu::CpuList;
use sys::bpf::{chain, load_retrying};

use crate::noise_tracefs::Interned;
use serde::Serialize;

#[allow(dead_code)]
mod layout {
    include!(concat!(env!("OUT_DIR"), "/noise.rs"));
}
pub use layout::*;

// SAFETY: plain-old-data structs of integers with no padding (bpfgen
// asserts each size).
unsafe impl aya::Pod for QnKey {}
unsafe impl aya::Pod for QnValue {}

pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../bpf/noise.bpf.o");

/// (program, tracepoint) pairs; the x86 vector ones are absent elsewhere.
/// Every `_exit` is attached before its `_entry`: the programs keep each
/// CPU's interrupt depth, and an entry seen without its exit would leave a
/// CPU looking as if it were in an interrupt for good.
const PROGRAMS: [(&str, &str); 18] = [
    ("qn_irq_exit", "irq_handler_exit"),
    ("qn_softirq_exit", "softirq_exit"),
    ("qn_local_timer_exit", "local_timer_exit"),
    ("qn_call_function_exit", "call_function_exit"),
    ("qn_call_function_single_exit", "call_function_single_exit"),
    ("qn_reschedule_exit", "reschedule_exit"),
    ("qn_irq_work_exit", "irq_work_exit"),
    ("qn_irq_entry", "irq_handler_entry"),
    ("qn_softirq_entry", "softirq_entry"),
    ("qn_local_timer_entry", "local_timer_entry"),
    ("qn_call_function_entry", "call_function_entry"),
    (
        "qn_call_function_single_entry",
        "call_function_single_entry",
    ),
    ("qn_reschedule_entry", "reschedule_entry"),
    ("qn_irq_work_entry", "irq_work_entry"),
    ("qn_ipi_cpu", "ipi_send_cpu"),
    ("qn_ipi_mask", "ipi_send_cpumask"),
    ("qn_hrtimer", "hrtimer_expire_entry"),
    ("qn_timer", "timer_expire_entry"),
];
const SCHED_PROGRAMS: [(&str, &str); 3] = [
    ("qn_switch", "sched_switch"),
    ("qn_waking", "sched_waking"),
    ("qn_wakeup", "sched_wakeup"),
];

/// How the events are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// BPF when it loads, else tracefs (saying why).
    Auto,
    Bpf,
    Tracefs,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub cpus: CpuList,
    pub duration: Duration,
    pub pid: Option<u32>,
    pub backend: Backend,
}

/// One cause on one CPU.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cause {
    /// ipi, irq, vector, softirq, timer, switch, wakeup.
    pub kind: &'static str,
    /// How `what` is keyed: from_cpu, site, function, process, irq, vector,
    /// softirq, function, task.
    pub by: &'static str,
    pub cpu: u32,
    pub what: String,
    pub count: u64,
    /// Time stolen, where measured (IRQs, vectors, softirqs, task runtime).
    pub total_us: Option<f64>,
    pub max_us: Option<f64>,
}

/// What `--pid` caused on the measured CPUs.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PidReport {
    pub pid: u32,
    pub comm: String,
    /// IPIs sent to the measured CPUs by its threads.
    pub ipis_sent: u64,
    /// Wakeups of tasks on the measured CPUs that its threads made.
    pub wakeups_caused: u64,
    /// Times its threads were switched in on the measured CPUs, and how long
    /// they ran there.
    pub switches_in: u64,
    pub runtime_us: f64,
    /// Where its IPIs to those CPUs came from, and whom it woke there.
    pub ipi_sites: Vec<(String, u64)>,
    pub woke: Vec<(String, u64)>,
    /// True when the same process (PID and start time) was there at the
    /// start and at the end of the window. False: it exited (or its PID was
    /// reused) during the window, and the counts above cover only part of it.
    pub alive_whole_window: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub cpus: String,
    pub duration_s: f64,
    /// `bpf` or `tracefs`.
    pub backend: &'static str,
    /// Why BPF was not used, when `auto` fell back to tracefs.
    pub fallback: Option<String>,
    /// Events the trace buffers dropped (tracefs only): counts are short by
    /// at most this many.
    pub lost_events: u64,
    pub causes: Vec<Cause>,
    pub pid: Option<PidReport>,
    /// Tracepoints this kernel lacks (their causes are not counted).
    pub unavailable: Vec<String>,
}

impl Report {
    /// Total count of a kind (`by` picks one of its keyings, as each event
    /// is counted once per keying).
    pub fn total(&self, kind: &str, by: &str) -> u64 {
        self.causes
            .iter()
            .filter(|c| c.kind == kind && c.by == by)
            .map(|c| c.count)
            .sum()
    }
}

/// Mounts tracefs at /sys/kernel/tracing if nothing is mounted there
/// (tracepoint names are read from it when a program does not attach).
pub fn mount_tracefs() -> Result<(), String> {
    let root = Path::new("/sys/kernel/tracing");
    if root.join("events").exists() {
        return Ok(());
    }
    let r = unsafe {
        // SAFETY: constant C strings; mount has no memory preconditions.
        libc::mount(
            c"nodev".as_ptr(),
            c"/sys/kernel/tracing".as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(format!(
            "mounting tracefs at /sys/kernel/tracing: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Pins this thread off the measured CPUs, so reading and sleeping here
/// lands nowhere near them.
fn pin_away(measured: &CpuList) -> Result<(), String> {
    let online = crate::online_cpus()?;
    let rest = online.minus(measured);
    if rest.is_empty() {
        return Err(format!(
            "--cpus {measured} leaves no other online CPU (online: {online}) to measure from"
        ));
    }
    sys::pin_current_thread(rest.cpus()).map_err(|e| format!("pinning to {rest}: {e}"))
}

/// Counts for `o.duration`; the calling thread is moved off the measured
/// CPUs for the rest of its life.
pub fn measure(o: &Options) -> Result<Report, String> {
    if o.cpus.is_empty() {
        return Err("--cpus is empty".into());
    }
    if let Some(&c) = o.cpus.cpus().iter().find(|&&c| c >= QN_MAX_CPUS as u32) {
        return Err(format!(
            "CPU {c}: CPUs 0 to {} can be watched",
            QN_MAX_CPUS - 1
        ));
    }
    if o.cpus.len() > QN_MAX_LIST as usize {
        return Err(format!(
            "--cpus names {} CPUs; at most {QN_MAX_LIST} at once",
            o.cpus.len()
        ));
    }
    pin_away(&o.cpus)?;
    let _ = mount_tracefs();
    let pid_start = o.pid.map(start_ticks_of);
    let (counted, fallback) = match o.backend {
        Backend::Bpf => (count_bpf(o)?, None),
        Backend::Tracefs => (tracefs_counted(o)?, None),
        Backend::Auto => match count_bpf(o) {
            Ok(c) => (c, None),
            Err(e) => (tracefs_counted(o)?, Some(e)),
        },
    };
    let Counted {
        raw,
        interned,
        lost,
        unavailable,
        seconds,
        backend,
    } = counted;
    let names = Names::load(interned);
    let mut causes: Vec<Cause> = raw
        .iter()
        .filter(|(k, _)| !matches!(k.kind as u64, QN_PID_IPI_SITE | QN_PID_WAKEE))
        .map(|(k, v)| names.cause(k, v))
        .collect();
    causes.sort_by(|a, b| {
        (a.kind, a.by, a.cpu)
            .cmp(&(b.kind, b.by, b.cpu))
            .then(b.count.cmp(&a.count))
            .then(a.what.cmp(&b.what))
    });
    let pid = o.pid.map(|pid| {
        let mut r = pid_report(pid, &raw, &names);
        r.alive_whole_window =
            pid_start.flatten().is_some() && start_ticks_of(pid) == pid_start.flatten();
        r
    });
    Ok(Report {
        cpus: o.cpus.to_string(),
        duration_s: seconds,
        backend,
        fallback,
        lost_events: lost,
        causes,
        pid,
        unavailable,
    })
}

/// Counts from either backend.
struct Counted {
    raw: Vec<(QnKey, QnValue)>,
    interned: Interned,
    lost: u64,
    unavailable: Vec<String>,
    seconds: f64,
    backend: &'static str,
}

fn tracefs_counted(o: &Options) -> Result<Counted, String> {
    let c = crate::noise_tracefs::count(&o.cpus, o.duration, o.pid)?;
    Ok(Counted {
        raw: c.raw,
        interned: c.interned,
        lost: c.lost,
        unavailable: c.unavailable,
        seconds: c.seconds,
        backend: "tracefs",
    })
}

/// The BPF programs of bpf/noise.bpf.c, attached for the window.
fn count_bpf(o: &Options) -> Result<Counted, String> {
    let btf = Btf::from_sys_fs()
        .map_err(|e| format!("reading /sys/kernel/btf/vmlinux: {}", chain(&e)))?;
    let list_len = o.cpus.len() as u32;
    let mut ebpf = EbpfLoader::new()
        .btf(Some(&btf))
        .override_global("qn_list_len", &list_len, true)
        .override_global("qn_pid", &o.pid.unwrap_or(0), true)
        .load(OBJECT)
        .map_err(|e| format!("loading noise.bpf.o: {}", chain(&e)))?;
    let mut unavailable = Vec::new();
    for (prog, tp) in PROGRAMS.iter().chain(SCHED_PROGRAMS.iter()) {
        let p: &mut BtfTracePoint = ebpf
            .program_mut(prog)
            .ok_or_else(|| format!("{prog}: not in noise.bpf.o"))?
            .try_into()
            .map_err(|e| format!("{prog}: {}", chain(&e)))?;
        if let Err(e) = load_retrying(|| p.load(tp, &btf)) {
            // The verifier's log can be long; its last line says why.
            let why = chain(&e);
            let last = why.lines().last().unwrap_or("").trim_start_matches(": ");
            unavailable.push(format!("{tp} ({last})"));
            continue;
        }
        p.attach()
            .map_err(|e| format!("attaching {tp}: {}", chain(&e)))?;
    }
    let set = |ebpf: &mut aya::Ebpf, on: u8| -> Result<(), String> {
        let mut cpus: Array<_, u8> = Array::try_from(
            ebpf.map_mut("qn_cpus")
                .ok_or("qn_cpus: not in noise.bpf.o")?,
        )
        .map_err(|e| chain(&e))?;
        for &c in o.cpus.cpus() {
            cpus.set(c, on, 0)
                .map_err(|e| format!("qn_cpus[{c}]: {}", chain(&e)))?;
        }
        Ok(())
    };
    {
        let mut list: Array<_, u32> = Array::try_from(
            ebpf.map_mut("qn_list")
                .ok_or("qn_list: not in noise.bpf.o")?,
        )
        .map_err(|e| chain(&e))?;
        for (i, &c) in o.cpus.cpus().iter().enumerate() {
            list.set(i as u32, c, 0)
                .map_err(|e| format!("qn_list[{i}]: {}", chain(&e)))?;
        }
    }
    set(&mut ebpf, 1)?;
    let t0 = std::time::Instant::now();
    std::thread::sleep(o.duration);
    set(&mut ebpf, 0)?;
    let secs = t0.elapsed().as_secs_f64();
    let counts: BpfHashMap<_, QnKey, QnValue> = BpfHashMap::try_from(
        ebpf.map("qn_counts")
            .ok_or("qn_counts: not in noise.bpf.o")?,
    )
    .map_err(|e| chain(&e))?;
    let mut raw = Vec::new();
    for kv in counts.iter() {
        let (k, v) = kv.map_err(|e| format!("reading qn_counts: {}", chain(&e)))?;
        raw.push((k, v));
    }
    drop(ebpf);
    Ok(Counted {
        raw,
        interned: Interned::default(),
        lost: 0,
        unavailable,
        seconds: secs,
        backend: "bpf",
    })
}

fn comm_of(tid: u64) -> String {
    std::fs::read_to_string(format!("/proc/{tid}/comm"))
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|_| "(exited)".into())
}

/// `pid (comm)`, or what stands for interrupt context.
fn process_name(id: u64) -> String {
    if id == QN_IN_INTERRUPT {
        "(interrupt context: the tick, an IRQ or a softirq)".into()
    } else {
        format!("{id} ({})", comm_of(id))
    }
}

/// The start time of process `pid` (clock ticks after boot), or `None` when
/// there is no such process or it has ended (a zombie not yet reaped).
fn start_ticks_of(pid: u32) -> Option<u64> {
    let buf = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let st = procfs::pid::parse_stat(&buf).ok()?;
    (!matches!(st.state, b'Z' | b'X' | b'x')).then_some(st.start_ticks)
}

/// What `pid` did: its threads are the tids under /proc/PID/task at the end
/// (a thread that ended during the window is not counted).
fn pid_report(pid: u32, raw: &[(QnKey, QnValue)], names: &Names) -> PidReport {
    let mut tids: Vec<u64> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    tids.push(pid as u64);
    let mut r = PidReport {
        pid,
        comm: comm_of(pid as u64),
        ..Default::default()
    };
    for (k, v) in raw {
        match k.kind as u64 {
            QN_IPI_BY_TGID if k.id == pid as u64 => r.ipis_sent += v.count,
            QN_WAKEUP_BY if k.id == pid as u64 => r.wakeups_caused += v.count,
            QN_SWITCH_IN if tids.contains(&k.id) => r.switches_in += v.count,
            QN_RUNTIME if tids.contains(&k.id) => r.runtime_us += v.total_ns as f64 / 1e3,
            QN_PID_IPI_SITE => r.ipi_sites.push((names.sym(k.id), v.count)),
            QN_PID_WAKEE => r
                .woke
                .push((format!("{} ({})", k.id, comm_of(k.id)), v.count)),
            _ => {}
        }
    }
    r
}

/// Names for addresses, IRQs and tasks, read once at the end.
struct Names {
    /// (address, name), sorted.
    syms: Vec<(u64, String)>,
    irqs: HashMap<u64, String>,
    /// Names the trace gave as text (tracefs), by their small ids.
    interned: Interned,
}

const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

impl Names {
    fn load(interned: Interned) -> Names {
        let mut syms: Vec<(u64, String)> = std::fs::read_to_string("/proc/kallsyms")
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let addr = u64::from_str_radix(w.next()?, 16).ok()?;
                let kind = w.next()?;
                let name = w.next()?;
                (addr != 0 && matches!(kind, "t" | "T" | "w" | "W"))
                    .then(|| (addr, name.to_string()))
            })
            .collect();
        syms.sort_unstable();
        // IRQ number -> its device name (the last word of the row).
        let mut irqs = HashMap::new();
        let mut reader = procfs::Reader::new("/proc", "/sys");
        if let Ok(t) = reader.read_with(procfs::Source::Interrupts, procfs::interrupts::parse) {
            for row in t.rows() {
                if let Ok(n) = row.label.parse::<u64>() {
                    let name = row.description.split_whitespace().last().unwrap_or("");
                    irqs.insert(n, name.to_string());
                }
            }
        }
        Names {
            syms,
            irqs,
            interned,
        }
    }

    fn sym(&self, addr: u64) -> String {
        if addr == 0 {
            return "(none)".into();
        }
        if let Some(name) = self.interned.name(addr) {
            return name.to_string();
        }
        match self.syms.partition_point(|(a, _)| *a <= addr) {
            0 => format!("{addr:#x}"),
            i => {
                let (a, n) = &self.syms[i - 1];
                if *a == addr {
                    n.clone()
                } else {
                    format!("{n}+{:#x}", addr - a)
                }
            }
        }
    }

    fn cause(&self, k: &QnKey, v: &QnValue) -> Cause {
        let timed = |c: Cause| Cause {
            total_us: Some(v.total_ns as f64 / 1e3),
            max_us: Some(v.max_ns as f64 / 1e3),
            ..c
        };
        let c = |kind, by, what: String| Cause {
            kind,
            by,
            cpu: k.cpu,
            what,
            count: v.count,
            total_us: None,
            max_us: None,
        };
        match k.kind as u64 {
            QN_IPI_FROM_CPU => c("ipi", "from_cpu", format!("CPU {}", k.id)),
            QN_IPI_SITE => c("ipi", "site", self.sym(k.id)),
            QN_IPI_FUNC => c("ipi", "function", self.sym(k.id)),
            QN_IPI_BY_TGID => c("ipi", "process", process_name(k.id)),
            QN_IRQ => timed(c(
                "irq",
                "irq",
                format!(
                    "{} {}",
                    k.id,
                    self.irqs.get(&k.id).map_or("", String::as_str)
                ),
            )),
            QN_VECTOR => timed(c(
                "vector",
                "vector",
                match k.id {
                    QN_VEC_LOCAL_TIMER => "local timer",
                    QN_VEC_CALL_FUNCTION => "call function",
                    QN_VEC_CALL_FUNCTION_SINGLE => "call function single",
                    QN_VEC_RESCHEDULE => "reschedule",
                    QN_VEC_IRQ_WORK => "irq work",
                    _ => "other",
                }
                .into(),
            )),
            QN_SOFTIRQ => timed(c(
                "softirq",
                "softirq",
                SOFTIRQS
                    .get(k.id as usize)
                    .map_or_else(|| k.id.to_string(), |s| s.to_string()),
            )),
            QN_TIMER => c("timer", "function", self.sym(k.id)),
            QN_SWITCH_IN => c("switch", "task", format!("{} ({})", k.id, comm_of(k.id))),
            QN_RUNTIME => timed(c(
                "runtime",
                "task",
                format!("{} ({})", k.id, comm_of(k.id)),
            )),
            QN_WAKEUP => c("wakeup", "task", format!("{} ({})", k.id, comm_of(k.id))),
            QN_WAKEUP_BY => c("wakeup", "waker", process_name(k.id)),
            _ => c("unknown", "id", k.id.to_string()),
        }
    }
}

/// Reads `path` (open, read to the end, close) every millisecond for
/// `duration` from the calling thread pinned to `from`: run under `noise
/// --pid` to see whether reading that file disturbs other CPUs.
pub fn read_loop(from: u32, path: &Path, duration: Duration) -> Result<u64, String> {
    crate::pin_to(from)?;
    let end = std::time::Instant::now() + duration;
    let mut buf = Vec::with_capacity(1 << 20);
    let mut n = 0;
    while std::time::Instant::now() < end {
        buf.clear();
        let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        std::io::Read::read_to_end(&mut f, &mut buf)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        n += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(n)
}

/// A deliberately noisy process for tests and demonstrations: one thread
/// spins on `target` while the calling thread, on `from`, issues
/// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) every millisecond, which
/// sends an IPI to every CPU running a thread of this process: `target`.
pub fn noisy_helper(from: u32, target: u32, duration: Duration) -> Result<u64, String> {
    const REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;
    const PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    // SAFETY: membarrier takes no pointers.
    if unsafe { libc::syscall(libc::SYS_membarrier, REGISTER_PRIVATE_EXPEDITED, 0, 0) } != 0 {
        return Err(format!(
            "membarrier register: {}",
            std::io::Error::last_os_error()
        ));
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    let spinner = std::thread::spawn(move || -> Result<(), String> {
        crate::pin_to(target)?;
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            std::hint::spin_loop();
        }
        Ok(())
    });
    crate::pin_to(from)?;
    let end = std::time::Instant::now() + duration;
    let mut sent = 0;
    while std::time::Instant::now() < end {
        // SAFETY: as above.
        unsafe { libc::syscall(libc::SYS_membarrier, PRIVATE_EXPEDITED, 0, 0) };
        sent += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spinner
        .join()
        .map_err(|_| "spinner panicked".to_string())??;
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    /// The committed object is built from the committed sources
    /// (bpf/build.sh writes their hashes next to it).
    #[test]
    fn bpf_object_is_built_from_the_current_sources() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bpf");
        let recorded = std::fs::read_to_string(dir.join("noise.bpf.o.sources")).unwrap();
        for line in recorded.lines() {
            let (hash, name) = line.split_once("  ").unwrap();
            let now = format!(
                "{:x}",
                Sha256::digest(std::fs::read(dir.join(name)).unwrap())
            );
            assert_eq!(
                now, hash,
                "bpf/{name} changed since noise.bpf.o was built: run bpf/build.sh"
            );
        }
    }

    #[test]
    fn symbols_resolve_with_offsets() {
        let n = Names {
            syms: vec![(0x1000, "a".into()), (0x2000, "b".into())],
            irqs: HashMap::new(),
            interned: Interned::default(),
        };
        assert_eq!(n.sym(0x1000), "a");
        assert_eq!(n.sym(0x2010), "b+0x10");
        assert_eq!(n.sym(0x10), "0x10");
        assert_eq!(n.sym(0), "(none)");
    }
}
