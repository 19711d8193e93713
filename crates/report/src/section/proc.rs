//! `proc`: the top processes of each interval (`--top`, ranked by
//! `--sort`), as `pidstat`, from the recorded process tables: with the
//! time each waited for a CPU (`%wait`, its run delay) and on block I/O
//! (`%iod`, delay accounting), its TCP payload received and sent
//! (`rxkB/s`, `txkB/s`) and its GPU engines' busy time (`%gpu`), where the
//! tables carried them.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use sys::Error;

use model::process::{Rank, rates, top};
use store::procs::{IdHasher, Static, Values, rebuild};

use super::*;

pub(super) struct Proc;

impl Section for Proc {
    fn name(&self) -> &'static str {
        "proc"
    }
    fn sources(&self) -> &'static [Source] {
        &[]
    }
    fn columns(&self) -> &'static [&'static str] {
        &[
            "pid", "comm", "%cpu", "%usr", "%sys", "rss_mib", "minflt/s", "majflt/s", "threads",
            "state", "%wait", "%iod", "rxkB/s", "txkB/s", "%gpu",
        ]
    }
    fn report(&self, h: &History, w: &Window, o: &Options) -> Result<Report, Error> {
        let by_cpu = matches!(o.rank, Rank::CpuPct);
        let mut start: Option<(u64, Kept)> = None;
        let mut steps = Steps::new(15_000);
        let mut rows = Vec::new();
        h.procs(w.from, w.to, &mut |ts, snap| {
            if steps.gap(w, ts) {
                start = None;
            }
            let due = match &start {
                None => true,
                Some((t0, _)) => w.due(*t0, ts),
            };
            if !due {
                return;
            }
            let now = if by_cpu {
                let mut m = Stored::with_capacity_and_hasher(snap.len(), Default::default());
                snap.each(&mut |s, v| {
                    if o.keeps(s.pid, &s.comm) {
                        m.insert((s.pid, s.start_ticks), (s.clone(), *v));
                    }
                });
                Kept::Values(m)
            } else {
                let mut r = snap.procs();
                r.retain(|p| o.keeps(p.pid, &p.comm));
                Kept::Rows(r)
            };
            if let Some((t0, before)) = &start {
                let secs = (ts - t0) as f64 / 1000.0;
                let (prev, cur) = match &now {
                    Kept::Values(n) => {
                        let (p, c) = ranked_by_cpu(before, n, o.top);
                        (p, Cow::Owned(c))
                    }
                    // A column's value needs no row before.
                    Kept::Rows(r) => (Vec::new(), Cow::Borrowed(&r[..])),
                };
                let picked = top(&prev, &cur, secs, o.rank, o.top);
                // Rates of the picked rows only (both lists sorted by pid).
                let mut prev_of: Vec<proctable::Proc> = picked
                    .iter()
                    .filter_map(|p| before.row(p.pid, p.start_ticks))
                    .collect();
                prev_of.sort_by_key(|p| p.pid);
                let mut mine: Vec<proctable::Proc> = picked.iter().map(|p| **p).collect();
                mine.sort_by_key(|p| p.pid);
                let r = rates(&prev_of, &mine, secs);
                for p in picked {
                    let pr = r.iter().find(|x| x.identity == p.identity());
                    let u = pr.and_then(|x| x.user_pct);
                    let s = pr.and_then(|x| x.system_pct);
                    rows.push(vec![
                        w.time(ts),
                        num(Some(f64::from(p.pid))),
                        text(String::from_utf8_lossy(p.comm.as_bytes())),
                        num(u.zip(s).map(|(u, s)| u + s)),
                        num(u),
                        num(s),
                        mib(Some(p.rss_bytes)),
                        num(pr.and_then(|x| x.minflt_per_sec)),
                        num(pr.and_then(|x| x.majflt_per_sec)),
                        num(Some(f64::from(p.num_threads))),
                        text(p.state.to_string()),
                        num(pr.and_then(|x| x.wait_pct)),
                        num(pr.and_then(|x| x.blkio_delay_pct)),
                        num(pr.and_then(|x| x.net_rx_bytes_per_sec).map(|v| v / 1024.0)),
                        num(pr.and_then(|x| x.net_tx_bytes_per_sec).map(|v| v / 1024.0)),
                        num(pr.and_then(|x| x.gpu_pct)),
                    ]);
                }
            }
            start = Some((ts, now));
        })?;
        let mut r = empty(self);
        r.table.rows = rows;
        r.gaps = steps.gaps;
        Ok(r)
    }
}

/// A table's processes by identity (pid, start ticks): fixed facts and
/// stored values.
type Stored = HashMap<(u32, u64), (Static, Values), BuildHasherDefault<IdHasher>>;

/// An interval end's table, kept for the next interval. Ranked by CPU:
/// stored values by identity, rows rebuilt only for what can rank (64,000
/// a table otherwise). Ranked by a column: every row, each is ranked.
enum Kept {
    Values(Stored),
    Rows(Vec<proctable::Proc>),
}

impl Kept {
    fn values(&self, pid: u32, start_ticks: u64) -> Option<Values> {
        match self {
            Kept::Values(m) => m.get(&(pid, start_ticks)).map(|(_, v)| *v),
            Kept::Rows(_) => self.row(pid, start_ticks).map(|p| store::procs::values(&p)),
        }
    }

    fn row(&self, pid: u32, start_ticks: u64) -> Option<proctable::Proc> {
        match self {
            Kept::Values(m) => m.get(&(pid, start_ticks)).map(|(s, v)| rebuild(s, v)),
            Kept::Rows(r) => r
                .binary_search_by_key(&(pid, start_ticks), |q| (q.pid, q.start_ticks))
                .ok()
                .map(|i| r[i]),
        }
    }
}

/// The rows `top` ranks by CPU for an interval from `before` to `now`:
/// only those that can be in the top `n`, which is the same top `n`:
/// every process whose stored values changed (one that did not used no
/// CPU: 0%), and the `n` lowest pids (the ties at 0% go to the lowest
/// pids); each with its row before when it has one. Both sorted by pid.
fn ranked_by_cpu(
    before: &Kept,
    now: &Stored,
    n: usize,
) -> (Vec<proctable::Proc>, Vec<proctable::Proc>) {
    let mut lowest: std::collections::BinaryHeap<(u32, u64)> = Default::default();
    let mut picked: Vec<(u32, u64)> = Vec::new();
    for (k, (_, v)) in now {
        if before.values(k.0, k.1).as_ref() != Some(v) {
            picked.push(*k);
        } else if n > 0 {
            lowest.push(*k);
            if lowest.len() > n {
                lowest.pop();
            }
        }
    }
    picked.extend(lowest);
    let mut cur: Vec<proctable::Proc> = picked
        .iter()
        .filter_map(|k| now.get(k))
        .map(|(s, v)| rebuild(s, v))
        .collect();
    cur.sort_unstable_by_key(|p| (p.pid, p.start_ticks));
    let mut prev: Vec<proctable::Proc> =
        picked.iter().filter_map(|k| before.row(k.0, k.1)).collect();
    prev.sort_unstable_by_key(|p| (p.pid, p.start_ticks));
    (prev, cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(t: &[(u32, u64, u64)]) -> Stored {
        t.iter()
            .map(|&(pid, start, cpu)| {
                let s = Static {
                    pid,
                    start_ticks: start,
                    ..Default::default()
                };
                let p = proctable::Proc {
                    pid,
                    tgid: pid,
                    start_ticks: start,
                    utime_ns: cpu,
                    ..Default::default()
                };
                ((pid, start), (s, store::procs::values(&p)))
            })
            .collect()
    }

    /// Ranked by CPU, the rows kept for ranking give the same top n as
    /// every row: the busy ones, and the ties at 0% by the lowest pids
    /// (also when fewer are busy than asked, a pid is reused, or one ends).
    #[test]
    fn ranking_by_cpu_from_the_changed_rows_gives_the_top_of_all() {
        let mut before = Vec::new();
        let mut now = Vec::new();
        for pid in 1..=300u32 {
            let cpu = u64::from(pid % 7) * 1_000_000;
            before.push((pid, 1, cpu));
            // Every 50th uses CPU; pid 120 is a new process; pid 200 ended.
            match pid {
                120 => now.push((pid, 2, 0)),
                200 => {}
                p if p % 50 == 0 => now.push((pid, 1, cpu + u64::from(p) * 1_000_000)),
                _ => now.push((pid, 1, cpu)),
            }
        }
        let (before, now) = (stored(&before), stored(&now));
        let rows = |m: &Stored| {
            let mut v: Vec<proctable::Proc> = m.values().map(|(s, v)| rebuild(s, v)).collect();
            v.sort_unstable_by_key(|p| p.pid);
            v
        };
        let all = (rows(&before), rows(&now));
        let before = Kept::Values(before);
        for n in [0, 1, 3, 5, 10, 400] {
            let some = ranked_by_cpu(&before, &now, n);
            let pids = |(p, c): &(Vec<proctable::Proc>, Vec<proctable::Proc>)| -> Vec<u32> {
                top(p, c, 5.0, Rank::CpuPct, n)
                    .iter()
                    .map(|p| p.pid)
                    .collect()
            };
            assert_eq!(pids(&some), pids(&all), "top {n}");
            assert!(
                some.1.len() <= 7 + n,
                "{} rows kept for top {n}",
                some.1.len()
            );
        }
    }
}
