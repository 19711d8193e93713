//! Counting with the BPF programs of bpf/noise.bpf.c: loaded and attached
//! before the window opens; the measured-CPU map is filled only then and
//! emptied before they are detached (attaching a tracepoint patches kernel
//! text, which syncs every CPU, and those IPIs are not the measured ones).

use aya::maps::{Array, HashMap as BpfHashMap};
use aya::programs::BtfTracePoint;
use aya::{Btf, Ebpf};
use sys::bpf::{chain, load_retrying};

use super::{Backend, Counted, Error, Interned, Options, QnKey, QnValue};

pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../../bpf/noise.bpf.o");

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

/// Counts for the window with the programs attached. A failure to load or
/// attach them is [`Error::BpfUnavailable`] (the caller may count with
/// tracefs instead); a failure once they run is [`Error::Failed`].
pub(super) fn count(o: &Options) -> Result<Counted, Error> {
    let (ebpf, unavailable) = load(o)?;
    run(ebpf, unavailable, o)
}

/// Loads and attaches every program this kernel has; the tracepoints it
/// lacks are listed.
fn load(o: &Options) -> Result<(Ebpf, Vec<String>), Error> {
    let mut loader = sys::bpf::loader();
    let btf = Btf::from_sys_fs().map_err(|e| {
        Error::BpfUnavailable(format!("reading /sys/kernel/btf/vmlinux: {}", chain(&e)))
    })?;
    let list_len = o.cpus.len() as u32;
    let mut ebpf = loader
        .btf(Some(&btf))
        .override_global("qn_list_len", &list_len, true)
        .override_global("qn_pid", &o.pid.unwrap_or(0), true)
        .load(OBJECT)
        .map_err(|e| Error::BpfUnavailable(format!("loading noise.bpf.o: {}", chain(&e))))?;
    let mut unavailable = Vec::new();
    for (prog, tp) in PROGRAMS.iter().chain(SCHED_PROGRAMS.iter()) {
        let p: &mut BtfTracePoint = ebpf
            .program_mut(prog)
            .ok_or_else(|| Error::BpfUnavailable(format!("{prog}: not in noise.bpf.o")))?
            .try_into()
            .map_err(|e| Error::BpfUnavailable(format!("{prog}: {}", chain(&e))))?;
        if let Err(e) = load_retrying(|| p.load(tp, &btf)) {
            // The verifier's log can be long; its last line says why.
            let why = chain(&e);
            let last = why.lines().last().unwrap_or("").trim_start_matches(": ");
            unavailable.push(format!("{tp} ({last})"));
            continue;
        }
        p.attach()
            .map_err(|e| Error::BpfUnavailable(format!("attaching {tp}: {}", chain(&e))))?;
    }
    Ok((ebpf, unavailable))
}

/// Fills the measured-CPU maps for the window, empties them, and reads the
/// counts.
fn run(mut ebpf: Ebpf, unavailable: Vec<String>, o: &Options) -> Result<Counted, Error> {
    let set = |ebpf: &mut aya::Ebpf, on: u8| -> Result<(), Error> {
        let mut cpus: Array<_, u8> = Array::try_from(
            ebpf.map_mut("qn_cpus")
                .ok_or_else(|| Error::Failed("qn_cpus: not in noise.bpf.o".into()))?,
        )
        .map_err(|e| Error::Failed(chain(&e)))?;
        for &c in o.cpus.cpus() {
            cpus.set(c, on, 0)
                .map_err(|e| Error::Failed(format!("qn_cpus[{c}]: {}", chain(&e))))?;
        }
        Ok(())
    };
    {
        let mut list: Array<_, u32> = Array::try_from(
            ebpf.map_mut("qn_list")
                .ok_or_else(|| Error::Failed("qn_list: not in noise.bpf.o".into()))?,
        )
        .map_err(|e| Error::Failed(chain(&e)))?;
        for (i, &c) in o.cpus.cpus().iter().enumerate() {
            list.set(i as u32, c, 0)
                .map_err(|e| Error::Failed(format!("qn_list[{i}]: {}", chain(&e))))?;
        }
    }
    set(&mut ebpf, 1)?;
    let t0 = std::time::Instant::now();
    std::thread::sleep(o.duration);
    set(&mut ebpf, 0)?;
    let secs = t0.elapsed().as_secs_f64();
    let counts: BpfHashMap<_, QnKey, QnValue> = BpfHashMap::try_from(
        ebpf.map("qn_counts")
            .ok_or_else(|| Error::Failed("qn_counts: not in noise.bpf.o".into()))?,
    )
    .map_err(|e| Error::Failed(chain(&e)))?;
    let mut raw = Vec::new();
    for kv in counts.iter() {
        let (k, v) = kv.map_err(|e| Error::Failed(format!("reading qn_counts: {}", chain(&e))))?;
        raw.push((k, v));
    }
    drop(ebpf);
    Ok(Counted {
        raw,
        interned: Interned::default(),
        lost: 0,
        unavailable,
        seconds: secs,
        backend: Backend::Bpf,
    })
}
