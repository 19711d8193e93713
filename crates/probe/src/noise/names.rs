//! Names for what the counts are keyed by (kernel addresses, IRQ numbers,
//! tasks), read once at the end of the window, and the report on `--pid`.

use super::*;

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
pub(super) fn start_ticks_of(pid: u32) -> Option<u64> {
    let buf = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let st = procfs::pid::parse_stat(&buf).ok()?;
    (!matches!(st.state, b'Z' | b'X' | b'x')).then_some(st.start_ticks)
}

/// What `pid` did: its threads are the tids under /proc/PID/task at the end
/// (a thread that ended during the window is not counted).
pub(super) fn pid_report(pid: u32, raw: &[(QnKey, QnValue)], names: &Names) -> PidReport {
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
pub(super) struct Names {
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
    pub(super) fn load(interned: Interned) -> Names {
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

    pub(super) fn sym(&self, addr: u64) -> String {
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

    pub(super) fn cause(&self, k: &QnKey, v: &QnValue) -> Cause {
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

#[cfg(test)]
mod tests {
    use super::*;

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
