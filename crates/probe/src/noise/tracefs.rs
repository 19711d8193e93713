//! `noise` without BPF: the same counts from the kernel's own trace events,
//! recorded into a private tracefs instance and read once at the end.
//!
//! The instance gets its own ring buffers (larger on the measured CPUs),
//! `overwrite` off (a full buffer drops new events and counts them, rather
//! than losing the oldest silently), `buffer_percent` 100 (a reader blocked
//! on the buffer would be woken only when it is full) and `record-tgid`.
//! Nobody reads during the window: the events are written into per-CPU
//! buffers with no wakeup, and the `trace` file is read after recording
//! stops. Events are enabled before the window opens and disabled after it
//! closes (enabling patches kernel text, which syncs every CPU). Filters keep
//! the buffers to what concerns the measured CPUs where the kernel accepts
//! them; every event is checked here again either way.
//!
//! Each event becomes the same (key, value) counts the BPF programs keep,
//! so the report is built by the same code. Times come from the trace's
//! microsecond timestamps. Symbols arrive as names (the kernel formats
//! them); they are interned as small ids that [`Interned`] names back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use procfs::cpu::CpuList;

use super::*;

const EVENTS: [&str; 21] = [
    "ipi/ipi_send_cpu",
    "ipi/ipi_send_cpumask",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "irq_vectors/local_timer_entry",
    "irq_vectors/local_timer_exit",
    "irq_vectors/call_function_entry",
    "irq_vectors/call_function_exit",
    "irq_vectors/call_function_single_entry",
    "irq_vectors/call_function_single_exit",
    "irq_vectors/reschedule_entry",
    "irq_vectors/reschedule_exit",
    "irq_vectors/irq_work_entry",
    "irq_vectors/irq_work_exit",
    "timer/hrtimer_expire_entry",
    "timer/timer_expire_entry",
    "sched/sched_switch",
    "sched/sched_waking",
    "sched/sched_wakeup",
];

/// A private trace instance, removed on drop.
struct Instance {
    dir: PathBuf,
    enabled: Vec<String>,
}

impl Instance {
    fn create(root: &Path) -> Result<Instance, Error> {
        let dir = root
            .join("instances")
            .join(format!("quietstat-noise-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| Error::Tracefs(format!("creating {}: {e}", dir.display())))?;
        Ok(Instance {
            dir,
            enabled: Vec::new(),
        })
    }

    fn write(&self, rel: &str, value: &str) -> Result<(), Error> {
        let p = self.dir.join(rel);
        std::fs::write(&p, value)
            .map_err(|e| Error::Tracefs(format!("writing {value:?} to {}: {e}", p.display())))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.write("tracing_on", "0");
        for e in &self.enabled {
            let _ = self.write(&format!("events/{e}/enable"), "0");
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn any_of(field: &str, cpus: &CpuList) -> String {
    cpus.cpus()
        .iter()
        .map(|c| format!("{field} == {c}"))
        .collect::<Vec<_>>()
        .join(" || ")
}

/// Records for `duration` and counts (the calling thread is already off the
/// measured CPUs).
pub fn count(cpus: &CpuList, duration: Duration, pid: Option<u32>) -> Result<Counted, Error> {
    record(cpus, duration, pid)
}

fn record(cpus: &CpuList, duration: Duration, pid: Option<u32>) -> Result<Counted, Error> {
    let root = Path::new("/sys/kernel/tracing");
    let mut inst = Instance::create(root)?;
    inst.write("tracing_on", "0")?;
    inst.write("options/overwrite", "0")?;
    inst.write("options/record-tgid", "1")?;
    inst.write("options/irq-info", "1")?;
    inst.write("buffer_percent", "100")?;
    inst.write("buffer_size_kb", "4096")?;
    for c in cpus.cpus() {
        inst.write(&format!("per_cpu/cpu{c}/buffer_size_kb"), "32768")?;
    }
    let on_cpu = any_of("CPU", cpus);
    let mut unavailable = Vec::new();
    for e in EVENTS {
        if !inst.dir.join("events").join(e).exists() {
            unavailable.push(e.rsplit('/').next().unwrap_or(e).to_string());
            continue;
        }
        // Filters only save buffer space; every event is checked below.
        let filter = match e {
            "ipi/ipi_send_cpu" => Some(any_of("cpu", cpus)),
            "ipi/ipi_send_cpumask" => Some(format!("cpumask & CPUS{{{cpus}}}")),
            "sched/sched_wakeup" => Some(any_of("target_cpu", cpus)),
            "sched/sched_waking" => None,
            _ => Some(on_cpu.clone()),
        };
        if let Some(f) = filter {
            let _ = inst.write(&format!("events/{e}/filter"), &f);
        }
        inst.write(&format!("events/{e}/enable"), "1")?;
        inst.enabled.push(e.to_string());
    }
    inst.write("tracing_on", "1")?;
    let t0 = Instant::now();
    std::thread::sleep(duration);
    inst.write("tracing_on", "0")?;
    let seconds = t0.elapsed().as_secs_f64();
    let mut lost = 0;
    let online = crate::online_cpus().map_err(|e| Error::Tracefs(e.to_string()))?;
    for c in online.cpus() {
        let stats = std::fs::read_to_string(inst.dir.join(format!("per_cpu/cpu{c}/stats")))
            .unwrap_or_default();
        for l in stats.lines() {
            if let Some(v) = l
                .strip_prefix("overrun:")
                .or_else(|| l.strip_prefix("dropped events:"))
            {
                lost += v.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    let trace = std::fs::read_to_string(inst.dir.join("trace"))
        .map_err(|e| Error::Tracefs(format!("reading {}/trace: {e}", inst.dir.display())))?;
    drop(inst);
    let mut counter = Counter::new(cpus, pid);
    for line in trace.lines() {
        if let Some(ev) = parse_line(line) {
            counter.event(&ev);
        }
    }
    Ok(Counted {
        raw: counter.counts.into_iter().collect(),
        interned: counter.interned,
        lost,
        unavailable,
        seconds,
        backend: Backend::Tracefs,
    })
}

/// One line of the `trace` file.
#[derive(Debug, PartialEq)]
pub struct Event<'a> {
    pub tid: u32,
    /// None when the kernel did not know it (`-------`).
    pub tgid: Option<u32>,
    pub cpu: u32,
    /// In an IRQ handler, a system vector, a softirq or an NMI (the
    /// context column of the flags).
    pub in_interrupt: bool,
    pub ts_us: u64,
    pub name: &'a str,
    pub fields: &'a str,
}

/// Parses `COMM-TID (TGID) [CPU] FLAGS SECS.USECS: EVENT: FIELDS`; `None`
/// for comments and anything else.
pub fn parse_line(line: &str) -> Option<Event<'_>> {
    if line.starts_with('#') {
        return None;
    }
    // The CPU column: the first " [DIGITS] " followed by the flags and a
    // "SECS.USECS:" timestamp (a task name may hold " [1] " itself).
    let is_ts = |t: &str| {
        t.strip_suffix(':')
            .and_then(|t| t.split_once('.'))
            .is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
            })
    };
    let mut from = 0;
    let (open, close) = loop {
        let o = from + line[from..].find(" [")?;
        from = o + 2;
        let c = o + 2 + line[o + 2..].find(']')?;
        if c == o + 2 || !line[o + 2..c].bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let mut after = line[c + 1..].split_ascii_whitespace();
        if after.next().is_some() && after.next().is_some_and(is_ts) {
            break (o, c);
        }
    };
    let cpu = line[open + 2..close].parse().ok()?;
    let head = line[..open].trim_end();
    let (task, tgid) = match head.strip_suffix(')') {
        Some(h) => {
            let (t, g) = h.rsplit_once('(')?;
            (t.trim_end(), g.trim().parse().ok())
        }
        None => (head, None),
    };
    let tid = task.rsplit_once('-')?.1.trim().parse().ok()?;
    let mut rest = line[close + 1..].split_ascii_whitespace();
    let flags = rest.next()?;
    let in_interrupt = matches!(flags.as_bytes().get(2), Some(b'h' | b's' | b'H' | b'z'));
    let ts = rest.next()?.strip_suffix(':')?;
    let (secs, usecs) = ts.split_once('.')?;
    let ts_us = secs.parse::<u64>().ok()? * 1_000_000 + usecs.parse::<u64>().ok()?;
    let after_ts = line.find(ts)? + ts.len() + 1;
    let tail = line[after_ts..].trim_start();
    let (name, fields) = match tail.split_once(": ") {
        Some(nf) => nf,
        None => (tail.strip_suffix(':')?, ""),
    };
    Some(Event {
        tid,
        tgid,
        cpu,
        in_interrupt,
        ts_us,
        name,
        fields,
    })
}

/// The value after `key=` (keys are matched at a word start), up to the
/// next space.
fn field<'a>(fields: &'a str, key: &str) -> Option<&'a str> {
    let mut at = 0;
    while let Some(i) = fields[at..].find(key) {
        let start = at + i;
        if (start == 0 || fields.as_bytes()[start - 1] == b' ')
            && fields[start + key.len()..].starts_with('=')
        {
            let v = &fields[start + key.len() + 1..];
            return Some(v.split(' ').next().unwrap_or(v));
        }
        at = start + key.len();
    }
    None
}

/// Per CPU: the entry times of the interrupts under way, and when the
/// running task was switched in.
#[derive(Default)]
struct CpuState {
    open: Vec<(u32, u64, u64)>,
    task_since: Option<u64>,
}

struct Counter {
    measured: Vec<u32>,
    pid: Option<u32>,
    counts: HashMap<QnKey, QnValue>,
    interned: Interned,
    cpus: HashMap<u32, CpuState>,
    /// tid -> the process (or interrupt context) of its last waker.
    waker: HashMap<u32, u32>,
}

fn vector_of(name: &str) -> Option<u64> {
    Some(
        match name.strip_suffix("_entry").or(name.strip_suffix("_exit"))? {
            "local_timer" => QN_VEC_LOCAL_TIMER,
            "call_function" => QN_VEC_CALL_FUNCTION,
            "call_function_single" => QN_VEC_CALL_FUNCTION_SINGLE,
            "reschedule" => QN_VEC_RESCHEDULE,
            "irq_work" => QN_VEC_IRQ_WORK,
            _ => return None,
        },
    )
}

impl Counter {
    fn new(cpus: &CpuList, pid: Option<u32>) -> Counter {
        Counter {
            measured: cpus.cpus().to_vec(),
            pid,
            counts: HashMap::new(),
            interned: Interned::default(),
            cpus: HashMap::new(),
            waker: HashMap::new(),
        }
    }

    fn add(&mut self, kind: u64, cpu: u32, id: u64, ns: u64) {
        let v = self
            .counts
            .entry(QnKey {
                id,
                kind: kind as u32,
                cpu,
            })
            .or_insert(QnValue {
                count: 0,
                total_ns: 0,
                max_ns: 0,
            });
        v.count += 1;
        v.total_ns += ns;
        v.max_ns = v.max_ns.max(ns);
    }

    fn actor(e: &Event<'_>) -> u32 {
        if e.in_interrupt {
            QN_IN_INTERRUPT as u32
        } else {
            e.tgid.unwrap_or(e.tid)
        }
    }

    fn ipi(&mut self, e: &Event<'_>, target: u32) {
        let site = field(e.fields, "callsite").unwrap_or("(none)");
        let site = self.interned.id(site);
        let func = field(e.fields, "callback").unwrap_or("(none)");
        let func = self.interned.id(func);
        let actor = Self::actor(e);
        self.add(QN_IPI_FROM_CPU, target, u64::from(e.cpu), 0);
        self.add(QN_IPI_SITE, target, site, 0);
        self.add(QN_IPI_FUNC, target, func, 0);
        self.add(QN_IPI_BY_TGID, target, u64::from(actor), 0);
        if self.pid == Some(actor) {
            self.add(QN_PID_IPI_SITE, target, site, 0);
        }
    }

    fn event(&mut self, e: &Event<'_>) {
        let here = self.measured.contains(&e.cpu);
        let num = |k: &str| field(e.fields, k).and_then(|v| v.parse::<u64>().ok());
        match e.name {
            "ipi_send_cpu" => {
                if let Some(t) = num("cpu").map(|c| c as u32)
                    && self.measured.contains(&t)
                {
                    self.ipi(e, t);
                }
            }
            "ipi_send_cpumask" => {
                let mask = field(e.fields, "cpumask").and_then(|m| CpuList::parse(m).ok());
                for t in mask.map(|m| m.cpus().to_vec()).unwrap_or_default() {
                    if self.measured.contains(&t) {
                        self.ipi(e, t);
                    }
                }
            }
            "sched_waking" => {
                if let Some(tid) = num("pid") {
                    self.waker.insert(tid as u32, Self::actor(e));
                }
            }
            "sched_wakeup" => {
                let (Some(tid), Some(target)) = (num("pid"), num("target_cpu")) else {
                    return;
                };
                let target = target as u32;
                if !self.measured.contains(&target) {
                    return;
                }
                self.add(QN_WAKEUP, target, tid, 0);
                if let Some(&w) = self.waker.get(&(tid as u32)) {
                    self.add(QN_WAKEUP_BY, target, u64::from(w), 0);
                    if self.pid == Some(w) {
                        self.add(QN_PID_WAKEE, target, tid, 0);
                    }
                }
            }
            _ if !here => {}
            "sched_switch" => {
                let now = e.ts_us * 1000;
                let st = self.cpus.entry(e.cpu).or_default();
                let since = st.task_since.replace(now);
                if let (Some(since), Some(prev)) = (since, num("prev_pid"))
                    && prev != 0
                {
                    self.add(QN_RUNTIME, e.cpu, prev, now.saturating_sub(since));
                }
                if let Some(next) = num("next_pid")
                    && next != 0
                {
                    self.add(QN_SWITCH_IN, e.cpu, next, 0);
                }
            }
            "hrtimer_expire_entry" | "timer_expire_entry" => {
                let f = field(e.fields, "function").unwrap_or("(none)");
                let id = self.interned.id(f);
                self.add(QN_TIMER, e.cpu, id, 0);
            }
            name => {
                let (kind, id) = if let Some(v) = vector_of(name) {
                    (QN_VECTOR, v)
                } else if name.starts_with("irq_handler_") {
                    let Some(irq) = num("irq") else { return };
                    (QN_IRQ, irq)
                } else if name.starts_with("softirq_") {
                    let Some(vec) = num("vec") else { return };
                    (QN_SOFTIRQ, vec)
                } else {
                    return;
                };
                let now = e.ts_us * 1000;
                let st = self.cpus.entry(e.cpu).or_default();
                if name.ends_with("_entry") {
                    st.open.push((kind as u32, id, now));
                } else if let Some(i) = st
                    .open
                    .iter()
                    .rposition(|&(k, n, _)| k == kind as u32 && n == id)
                {
                    // An exit without its entry (recording began inside the
                    // interrupt) is not counted.
                    let (_, _, since) = st.open.remove(i);
                    self.add(kind, e.cpu, id, now.saturating_sub(since));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_with_and_without_tgid() {
        let e = parse_line(
            "   kworker/u8:4-26774   (  26774) [000] d..2. 12345.678901: ipi_send_cpu: cpu=1 callsite=try_to_wake_up+0x2a3/0x5f0 callback=0x0",
        )
        .unwrap();
        assert_eq!(
            (e.tid, e.tgid, e.cpu, e.in_interrupt, e.ts_us),
            (26774, Some(26774), 0, false, 12_345_678_901)
        );
        assert_eq!(e.name, "ipi_send_cpu");
        assert_eq!(field(e.fields, "cpu"), Some("1"));
        assert_eq!(
            field(e.fields, "callsite"),
            Some("try_to_wake_up+0x2a3/0x5f0")
        );
        let e = parse_line(
            "          <idle>-0       (-------) [001] d.h1.    10.000002: irq_handler_entry: irq=24 name=virtio0-input.0",
        )
        .unwrap();
        assert_eq!((e.tid, e.tgid, e.cpu, e.in_interrupt), (0, None, 1, true));
        // A name with spaces, brackets and a dash.
        let e = parse_line(
            " a [1] b-x-42 (     40) [001] ..s1.     1.5: softirq_entry: vec=1 [action=TIMER]",
        )
        .unwrap();
        assert_eq!(
            (e.tid, e.tgid, e.cpu, e.in_interrupt),
            (42, Some(40), 1, true)
        );
        assert_eq!(parse_line("# tracer: nop"), None);
        assert_eq!(parse_line("garbage"), None);
    }

    #[test]
    fn counts_like_the_bpf_programs() {
        let cpus = CpuList::new(vec![1]);
        let mut c = Counter::new(&cpus, Some(500));
        for l in [
            "  noisy-501 (  500) [000] d..1. 1.000000: ipi_send_cpu: cpu=1 callsite=membarrier+0x10/0x20 callback=ipi_mb+0x0/0x10",
            "  noisy-501 (  500) [000] d..1. 1.000001: ipi_send_cpu: cpu=0 callsite=x+0x1/0x2 callback=0x0",
            "  noisy-501 (  500) [000] d..1. 1.000002: ipi_send_cpumask: cpumask=0-1 callsite=y+0x1/0x2 callback=z+0x0/0x4",
            "  <idle>-0 (-------) [001] d.h1. 1.000010: call_function_entry: vector=251",
            "  <idle>-0 (-------) [001] d.h1. 1.000015: call_function_exit: vector=251",
            "  <idle>-0 (-------) [000] d.h1. 1.000020: sched_waking: comm=sleeper pid=77 prio=120 target_cpu=001",
            "  <idle>-0 (-------) [000] d.h1. 1.000021: sched_wakeup: comm=sleeper pid=77 prio=120 target_cpu=001",
            "  noisy-501 (  500) [000] d..1. 1.000030: sched_waking: comm=sleeper pid=78 prio=120 target_cpu=001",
            "  noisy-501 (  500) [000] d..1. 1.000031: sched_wakeup: comm=sleeper pid=78 prio=120 target_cpu=001",
            "  <idle>-0 (-------) [001] d..2. 1.000040: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sleeper next_pid=78 next_prio=120",
            "  sleeper-78 (   78) [001] d..2. 1.000100: sched_switch: prev_comm=sleeper prev_pid=78 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
            "  <idle>-0 (-------) [001] ..s1. 1.000200: timer_expire_entry: timer=0000 function=process_timeout now=1 baseclk=1",
            "  <idle>-0 (-------) [000] ..s1. 1.000300: timer_expire_entry: timer=0000 function=elsewhere now=1 baseclk=1",
        ] {
            c.event(&parse_line(l).unwrap());
        }
        let get = |kind: u64, id: u64| {
            c.counts
                .get(&QnKey {
                    id,
                    kind: kind as u32,
                    cpu: 1,
                })
                .copied()
        };
        assert_eq!(get(QN_IPI_FROM_CPU, 0).unwrap().count, 2);
        assert_eq!(get(QN_IPI_BY_TGID, 500).unwrap().count, 2);
        let vec = get(QN_VECTOR, QN_VEC_CALL_FUNCTION).unwrap();
        assert_eq!((vec.count, vec.total_ns), (1, 5_000));
        assert_eq!(get(QN_WAKEUP, 77).unwrap().count, 1);
        assert_eq!(get(QN_WAKEUP_BY, QN_IN_INTERRUPT).unwrap().count, 1);
        assert_eq!(get(QN_WAKEUP_BY, 500).unwrap().count, 1);
        assert_eq!(get(QN_PID_WAKEE, 78).unwrap().count, 1);
        assert_eq!(get(QN_SWITCH_IN, 78).unwrap().count, 1);
        assert_eq!(get(QN_RUNTIME, 78).unwrap().total_ns, 60_000);
        let timers: u64 = c
            .counts
            .iter()
            .filter(|(k, _)| k.kind as u64 == QN_TIMER)
            .map(|(_, v)| v.count)
            .sum();
        assert_eq!(timers, 1, "the CPU 0 timer is not counted");
        let site = c.interned.ids["membarrier+0x10/0x20"];
        assert_eq!(get(QN_PID_IPI_SITE, site).unwrap().count, 1);
    }
}
