//! node_exporter's stat collector: interrupts, context switches, forks,
//! boot time, runnable and blocked tasks, softirqs (/proc/stat).

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Stat) {
        let st = &s.stat;
        one(out, &NODE_INTR_TOTAL, st.intr_total as f64)?;
        one(out, &NODE_CONTEXT_SWITCHES_TOTAL, st.ctxt as f64)?;
        one(out, &NODE_FORKS_TOTAL, st.processes as f64)?;
        one(out, &NODE_BOOT_TIME_SECONDS, st.btime_secs as f64)?;
        if let Some(r) = st.procs_running {
            one(out, &NODE_PROCS_RUNNING, r as f64)?;
        }
        if let Some(b) = st.procs_blocked {
            one(out, &NODE_PROCS_BLOCKED, b as f64)?;
        }
        if !st.softirq_counts.is_empty() {
            let mut m = out.family(&NODE_SOFTIRQS_TOTAL)?;
            for (v, n) in SOFTIRQ_VECTORS.iter().zip(&st.softirq_counts) {
                counter_l(&mut m, &[("vector", *v)], *n as f64)?;
            }
        }
    }
    Ok(())
}

/// node_exporter's names for /proc/stat's softirq columns.
pub(crate) const SOFTIRQ_VECTORS: [&str; 10] = [
    "hi",
    "timer",
    "net_tx",
    "net_rx",
    "block",
    "block_iopoll",
    "tasklet",
    "sched",
    "hrtimer",
    "rcu",
];
