//! Per-process figures: rates between two snapshots, matched by
//! [`Identity`] (a PID that now belongs to another process, with a different
//! start time, gets no rate, and a counter that went backwards gives none
//! either); the top N processes by any figure; processes grouped by name or
//! cgroup.

use std::collections::BTreeMap;

use proctable::{Exit, Identity, Proc};
use serde::Serialize;

use crate::columns::Column;
use crate::rate;

/// Rates of one process over an interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProcRate {
    pub identity: Identity,
    /// CPU use in percent of one CPU (user, system).
    pub user_pct: Option<f64>,
    pub system_pct: Option<f64>,
    pub minflt_per_sec: Option<f64>,
    pub majflt_per_sec: Option<f64>,
    pub read_bytes_per_sec: Option<f64>,
    pub write_bytes_per_sec: Option<f64>,
    /// Time waiting on a run queue for a CPU, in percent of the interval
    /// (of the task itself; where its run delay was read).
    pub wait_pct: Option<f64>,
    /// Bytes a second the process's TCP sockets received and sent (where
    /// they were read).
    pub net_rx_bytes_per_sec: Option<f64>,
    pub net_tx_bytes_per_sec: Option<f64>,
    /// Time blocked on block I/O, in percent of the interval, and time
    /// waiting on memory (swap-in, reclaim, thrashing, compaction,
    /// copy-on-write), from delay accounting (of the task itself; where it
    /// was read).
    pub blkio_delay_pct: Option<f64>,
    pub mem_delay_pct: Option<f64>,
    /// Time GPU engines were busy with the process's clients, in percent
    /// of the interval, summed over engines (two engines busy all the
    /// interval give 200; where GPU figures were read).
    pub gpu_pct: Option<f64>,
}

/// Rates for every process in `cur` that is also in `prev` with the same
/// identity. Both slices are sorted by PID (as snapshots are); `secs` is the
/// time between them.
pub fn rates(prev: &[Proc], cur: &[Proc], secs: f64) -> Vec<ProcRate> {
    let mut out = Vec::with_capacity(cur.len());
    rates_into(prev, cur, secs, &mut out);
    out
}

/// As [`rates`], into `out` (cleared first): a viewer that takes a table
/// every few seconds reuses one buffer instead of faulting in a new one
/// (megabytes at tens of thousands of processes).
pub fn rates_into(prev: &[Proc], cur: &[Proc], secs: f64, out: &mut Vec<ProcRate>) {
    out.clear();
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
            minflt_per_sec: rate(p.minflt, c.minflt, secs),
            majflt_per_sec: rate(p.majflt, c.majflt, secs),
            read_bytes_per_sec: io.and_then(|(a, b)| rate(a.read_bytes, b.read_bytes, secs)),
            write_bytes_per_sec: io.and_then(|(a, b)| rate(a.write_bytes, b.write_bytes, secs)),
            wait_pct: p
                .sched
                .zip(c.sched)
                .and_then(|(a, b)| pct(a.run_delay_ns, b.run_delay_ns)),
            net_rx_bytes_per_sec: p
                .net
                .zip(c.net)
                .and_then(|(a, b)| rate(a.rx_bytes, b.rx_bytes, secs)),
            net_tx_bytes_per_sec: p
                .net
                .zip(c.net)
                .and_then(|(a, b)| rate(a.tx_bytes, b.tx_bytes, secs)),
            blkio_delay_pct: p
                .delays
                .zip(c.delays)
                .and_then(|(a, b)| pct(a.blkio_ns, b.blkio_ns)),
            mem_delay_pct: p
                .delays
                .zip(c.delays)
                .and_then(|(a, b)| pct(a.memory_ns(), b.memory_ns())),
            gpu_pct: p
                .gpu
                .zip(c.gpu)
                .and_then(|(a, b)| pct(a.busy_ns, b.busy_ns)),
        });
    }
}

/// Resident memory as a share of the machine's, percent.
pub fn mem_pct(rss_bytes: u64, total_bytes: u64) -> Option<f64> {
    (total_bytes > 0).then(|| rss_bytes as f64 * 100.0 / total_bytes as f64)
}

/// CPU over the last interval of a process that ended in it, percent of
/// one CPU: from its row in the table before (`before`, the same identity
/// when the exit record has a start time) and its final times.
pub fn exit_cpu_pct(before: &Proc, exit: &Exit, secs: f64) -> Option<f64> {
    if exit.pid != before.pid || (exit.start_ticks != 0 && exit.start_ticks != before.start_ticks) {
        return None;
    }
    rate(
        before.utime_ns + before.stime_ns,
        exit.utime_ns + exit.stime_ns,
        secs,
    )
    .map(|ns| ns / 1e7)
}

/// What to rank processes by.
#[derive(Debug, Clone, Copy)]
pub enum Rank {
    /// CPU use over the last interval (user plus system): a process with no
    /// rate (new, or its PID reused) counts as 0.
    CpuPct,
    /// A field's value now.
    Column(&'static Column),
}

/// The `n` processes of `cur` that rank highest by `rank`, highest first
/// (ties: lower PID first). `prev` and `secs` give the rates for
/// [`Rank::CpuPct`].
pub fn top<'a>(prev: &[Proc], cur: &'a [Proc], secs: f64, rank: Rank, n: usize) -> Vec<&'a Proc> {
    let mut v: Vec<(f64, &Proc)> = match rank {
        Rank::CpuPct => {
            let r = rates(prev, cur, secs);
            // Both sorted by PID: walk them together.
            let mut r = r.iter().peekable();
            cur.iter()
                .map(|p| {
                    while r.peek().is_some_and(|x| x.identity.pid < p.pid) {
                        r.next();
                    }
                    let pct = r
                        .peek()
                        .filter(|x| x.identity == p.identity())
                        .map_or(0.0, |x| {
                            x.user_pct.unwrap_or(0.0) + x.system_pct.unwrap_or(0.0)
                        });
                    (pct, p)
                })
                .collect()
        }
        Rank::Column(c) => cur
            .iter()
            .map(|p| (c.number(p).unwrap_or(f64::NEG_INFINITY), p))
            .collect(),
    };
    v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.pid.cmp(&b.1.pid)));
    v.truncate(n);
    v.into_iter().map(|(_, p)| p).collect()
}

/// How processes are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// By task name (`comm`), as process-exporter's `groupname`.
    Comm,
    /// By cgroup v2 id; processes without one (not asked for, or not in a
    /// v2 hierarchy) form the group `-`.
    Cgroup,
    /// By effective uid; processes whose uid was not read form the group `-`.
    User,
}

/// The sums of one group's live processes. Counters fall when a member
/// exits (its CPU time leaves the sum).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Group {
    pub processes: u64,
    pub threads: u64,
    pub utime_ns: u64,
    pub stime_ns: u64,
    pub rss_bytes: u64,
    pub majflt: u64,
}

/// `procs` grouped by `by`, keyed by the group's name.
pub fn groups(procs: &[Proc], by: GroupBy) -> BTreeMap<String, Group> {
    let mut out: BTreeMap<String, Group> = BTreeMap::new();
    for p in procs {
        let key = match by {
            GroupBy::Comm => p.comm.to_string_lossy().into_owned(),
            GroupBy::Cgroup => p.cgroup_id.map_or_else(|| "-".into(), |id| id.to_string()),
            GroupBy::User => p.uid.map_or_else(|| "-".into(), |uid| uid.to_string()),
        };
        let g = out.entry(key).or_default();
        g.processes += 1;
        g.threads += p.num_threads as u64;
        g.utime_ns += p.utime_ns;
        g.stime_ns += p.stime_ns;
        g.rss_bytes += p.rss_bytes;
        g.majflt += p.majflt;
    }
    out
}

/// Threads of all of `procs` (node_exporter's `node_processes_threads`).
pub fn threads(procs: &[Proc]) -> u64 {
    procs.iter().map(|p| u64::from(p.num_threads)).sum()
}

/// Processes per state letter (R, S, D, I, Z, ...), by letter: the counts
/// node_exporter's processes collector reports.
pub fn states(procs: &[Proc]) -> BTreeMap<char, u64> {
    let mut out = BTreeMap::new();
    for p in procs {
        *out.entry(p.state).or_default() += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns;

    #[test]
    fn threads_sum_every_process_s() {
        let p = |n| Proc {
            num_threads: n,
            ..Proc::default()
        };
        assert_eq!(threads(&[p(1), p(21), p(4)]), 26);
        assert_eq!(threads(&[]), 0);
    }

    #[test]
    fn states_count_processes_per_letter() {
        let p = |state| Proc {
            state,
            ..Proc::default()
        };
        let counts = states(&[p('S'), p('R'), p('S'), p('I')]);
        assert_eq!(
            counts.into_iter().collect::<Vec<_>>(),
            [('I', 1), ('R', 1), ('S', 2)]
        );
    }

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
        let r = rates(&prev, &cur, 2.0);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].identity.pid, 20);
        assert_eq!(r[0].user_pct, Some(50.0));
    }

    #[test]
    fn a_run_delay_is_a_percentage_of_the_interval_where_it_was_read() {
        let with = |p: Proc, delay: u64| Proc {
            sched: Some(procfs::pid::SchedInfo {
                run_delay_ns: delay,
                timeslices: 1,
            }),
            ..p
        };
        let prev = [with(proc(1, 1, 0), 1_000_000_000), proc(2, 2, 0)];
        let cur = [with(proc(1, 1, 0), 2_000_000_000), proc(2, 2, 0)];
        let r = rates(&prev, &cur, 4.0);
        assert_eq!((r[0].wait_pct, r[1].wait_pct), (Some(25.0), None));
    }

    #[test]
    fn accounted_delays_are_percentages_of_the_interval_where_they_were_read() {
        let with = |p: Proc, blkio: u64, reclaim: u64, wpcopy: u64| Proc {
            delays: Some(proctable::Delays {
                blkio_ns: blkio,
                reclaim_ns: reclaim,
                wpcopy_ns: wpcopy,
                irq_ns: 7_000_000_000,
                ..proctable::Delays::default()
            }),
            ..p
        };
        let prev = [with(proc(1, 1, 0), 0, 0, 0), proc(2, 2, 0)];
        let cur = [
            with(proc(1, 1, 0), 500_000_000, 100_000_000, 100_000_000),
            with(proc(2, 2, 0), 1, 1, 1),
        ];
        let r = rates(&prev, &cur, 2.0);
        assert_eq!(r[0].blkio_delay_pct, Some(25.0));
        assert_eq!(r[0].mem_delay_pct, Some(10.0));
        assert_eq!((r[1].blkio_delay_pct, r[1].mem_delay_pct), (None, None));
    }

    #[test]
    fn network_bytes_are_rates_where_they_were_read() {
        let with = |p: Proc, rx: u64, tx: u64| Proc {
            net: Some(proctable::NetBytes {
                rx_bytes: rx,
                tx_bytes: tx,
            }),
            ..p
        };
        let prev = [with(proc(1, 1, 0), 1000, 0), proc(2, 2, 0)];
        let cur = [with(proc(1, 1, 0), 5000, 2000), proc(2, 2, 0)];
        let r = rates(&prev, &cur, 2.0);
        assert_eq!(
            (r[0].net_rx_bytes_per_sec, r[0].net_tx_bytes_per_sec),
            (Some(2000.0), Some(1000.0))
        );
        assert_eq!(r[1].net_rx_bytes_per_sec, None);
    }

    #[test]
    fn gpu_busy_time_is_a_percentage_where_it_was_read() {
        let with = |p: Proc, busy: u64| Proc {
            gpu: Some(proctable::Gpu {
                busy_ns: busy,
                mem_bytes: 1 << 20,
                clients: 1,
            }),
            ..p
        };
        let prev = [with(proc(1, 1, 0), 1_000_000_000), proc(2, 2, 0)];
        // Two engines busy the whole 2 s, and a half.
        let cur = [with(proc(1, 1, 0), 6_000_000_000), with(proc(2, 2, 0), 5)];
        let r = rates(&prev, &cur, 2.0);
        assert_eq!((r[0].gpu_pct, r[1].gpu_pct), (Some(250.0), None));
    }

    #[test]
    fn backwards_counter_gives_no_rate() {
        let r = rates(&[proc(1, 1, 5)], &[proc(1, 1, 4)], 1.0);
        assert_eq!(r[0].user_pct, None);
    }

    #[test]
    fn top_by_cpu_ranks_rates_and_ignores_a_reused_pid() {
        // PID 10 reused: its 9 s are not a rate. PID 20 used 1 s, 30 used 2 s.
        let prev = [proc(10, 1, 0), proc(20, 1, 0), proc(30, 1, 0)];
        let cur = [proc(10, 2, 9), proc(20, 1, 1), proc(30, 1, 2)];
        let t: Vec<u32> = top(&prev, &cur, 1.0, Rank::CpuPct, 2)
            .iter()
            .map(|p| p.pid)
            .collect();
        assert_eq!(t, [30, 20]);
    }

    #[test]
    fn top_by_a_column_breaks_ties_by_pid() {
        let mut cur = [proc(3, 1, 0), proc(1, 1, 0), proc(2, 1, 0)];
        cur[0].rss_bytes = 10;
        cur[1].rss_bytes = 5;
        cur[2].rss_bytes = 10;
        let t: Vec<u32> = top(&[], &cur, 1.0, Rank::Column(&columns::RSS_BYTES), 3)
            .iter()
            .map(|p| p.pid)
            .collect();
        assert_eq!(t, [2, 3, 1]);
        // Ties across the cut: the lowest pids of the tied.
        let mut cur: Vec<Proc> = (1..=5).map(|pid| proc(pid, 1, 0)).collect();
        for (p, rss) in cur.iter_mut().zip([1, 5, 10, 10, 10]) {
            p.rss_bytes = rss;
        }
        let t: Vec<u32> = top(&[], &cur, 1.0, Rank::Column(&columns::RSS_BYTES), 2)
            .iter()
            .map(|p| p.pid)
            .collect();
        assert_eq!(t, [3, 4]);
    }

    #[test]
    fn memory_share_and_the_cpu_of_a_process_that_ended() {
        assert_eq!(mem_pct(1 << 30, 4 << 30), Some(25.0));
        assert_eq!(mem_pct(1, 0), None);
        let before = Proc {
            pid: 7,
            start_ticks: 70,
            utime_ns: 1_000_000_000,
            ..Proc::default()
        };
        let mut e = Exit {
            pid: 7,
            start_ticks: 70,
            utime_ns: 1_500_000_000,
            stime_ns: 500_000_000,
            ..Exit::default()
        };
        // 1 s of CPU in 2 s.
        assert_eq!(exit_cpu_pct(&before, &e, 2.0), Some(50.0));
        // Another process that reused the pid.
        e.start_ticks = 71;
        assert_eq!(exit_cpu_pct(&before, &e, 2.0), None);
        // Times that went backwards give nothing.
        e.start_ticks = 0;
        e.utime_ns = 0;
        e.stime_ns = 0;
        assert_eq!(exit_cpu_pct(&before, &e, 2.0), None);
    }

    #[test]
    fn groups_sum_by_comm_cgroup_and_user() {
        let mut a = proc(1, 1, 1);
        a.comm = procfs::pid::Comm::new(b"sh");
        a.num_threads = 2;
        a.cgroup_id = Some(7);
        let mut b = proc(2, 1, 2);
        b.comm = procfs::pid::Comm::new(b"sh");
        b.num_threads = 1;
        let g = groups(&[a, b], GroupBy::Comm);
        assert_eq!(g["sh"].processes, 2);
        assert_eq!(g["sh"].threads, 3);
        assert_eq!(g["sh"].utime_ns, 3_000_000_000);
        let g = groups(&[a, b], GroupBy::Cgroup);
        assert_eq!((g["7"].processes, g["-"].processes), (1, 1));
        a.uid = Some(1000);
        b.uid = Some(1000);
        let g = groups(&[a, b], GroupBy::User);
        assert_eq!((g["1000"].processes, g["1000"].threads), (2, 3));
    }
}
