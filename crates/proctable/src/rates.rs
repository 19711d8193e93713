//! Per-process rates between two snapshots, matched by [`Identity`]: a PID
//! that now belongs to another process (a different start time) gets no
//! rate, and a counter that went backwards gives none either.

use model::rate;
use serde::Serialize;

use crate::proc::{Identity, Proc};

/// Rates of one process over an interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProcRate {
    pub identity: Identity,
    /// CPU use in percent of one CPU (user, system).
    pub user_pct: Option<f64>,
    pub system_pct: Option<f64>,
    pub minflt_per_s: Option<f64>,
    pub majflt_per_s: Option<f64>,
    pub read_bytes_per_s: Option<f64>,
    pub write_bytes_per_s: Option<f64>,
}

/// Rates for every process in `cur` that is also in `prev` with the same
/// identity. Both slices are sorted by PID (as snapshots are); `secs` is the
/// time between them.
pub fn between(prev: &[Proc], cur: &[Proc], secs: f64) -> Vec<ProcRate> {
    let mut out = Vec::with_capacity(cur.len());
    let mut j = 0;
    for c in cur {
        while j < prev.len() && prev[j].pid < c.pid {
            j += 1;
        }
        let Some(p) = prev.get(j).filter(|p| p.pid == c.pid) else {
            continue;
        };
        if p.identity() != c.identity() {
            continue;
        }
        let pct = |a: u64, b: u64| rate(a, b, secs).map(|ns| ns / 1e7);
        let io = p.io.zip(c.io);
        out.push(ProcRate {
            identity: c.identity(),
            user_pct: pct(p.utime_ns, c.utime_ns),
            system_pct: pct(p.stime_ns, c.stime_ns),
            minflt_per_s: rate(p.minflt, c.minflt, secs),
            majflt_per_s: rate(p.majflt, c.majflt, secs),
            read_bytes_per_s: io.and_then(|(a, b)| rate(a.read_bytes, b.read_bytes, secs)),
            write_bytes_per_s: io.and_then(|(a, b)| rate(a.write_bytes, b.write_bytes, secs)),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(pid: u32, start: u64, utime_s: u64) -> Proc {
        Proc {
            pid,
            tgid: pid,
            start_ticks: start,
            utime_ns: utime_s * 1_000_000_000,
            ..Proc::default()
        }
    }

    #[test]
    fn reused_pid_gets_no_rate() {
        let prev = [proc(10, 100, 5), proc(20, 200, 1)];
        // PID 10 is now a new process with less CPU time; 20 used 1 s in 2 s.
        let cur = [proc(10, 900, 0), proc(20, 200, 2), proc(30, 950, 0)];
        let r = between(&prev, &cur, 2.0);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].identity.pid, 20);
        assert_eq!(r[0].user_pct, Some(50.0));
    }

    #[test]
    fn backwards_counter_gives_no_rate() {
        let r = between(&[proc(1, 1, 5)], &[proc(1, 1, 4)], 1.0);
        assert_eq!(r[0].user_pct, None);
    }
}
