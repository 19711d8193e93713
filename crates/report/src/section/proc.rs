//! `proc`: the top processes of each interval (`--top`, ranked by
//! `--sort`), as `pidstat`, from the recorded process tables.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

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
            "state",
        ]
    }
    fn report(&self, h: &History, w: &Window, o: &Options) -> Result<Report, String> {
        let keep = |s: &Static| {
            o.pid.is_none_or(|pid| s.pid == pid)
                && o.comm
                    .as_deref()
                    .is_none_or(|c| s.comm.as_bytes() == c.as_bytes())
        };
        // The table at the start of the interval, as stored values: rows
        // are rebuilt only for what is ranked (64,000 a table otherwise).
        let mut start: Option<(u64, Stored)> = None;
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
            let mut now = Stored::with_capacity_and_hasher(snap.len(), Default::default());
            snap.each(&mut |s, v| {
                if keep(s) {
                    now.insert((s.pid, s.start_ticks), (s.clone(), *v));
                }
            });
            if let Some((t0, before)) = &start {
                let secs = (ts - t0) as f64 / 1000.0;
                let (prev, cur) = ranked_rows(before, &now, o.rank, o.top);
                let picked = top(&prev, &cur, secs, o.rank, o.top);
                // Rates of the picked rows only (both lists sorted by pid).
                let mut prev_of: Vec<proctable::Proc> = picked
                    .iter()
                    .filter_map(|p| {
                        prev.binary_search_by_key(&p.pid, |q| q.pid)
                            .ok()
                            .map(|i| prev[i])
                    })
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

/// Rows sorted by pid.
fn rows_of<'a>(it: impl Iterator<Item = &'a (Static, Values)>) -> Vec<proctable::Proc> {
    let mut v: Vec<proctable::Proc> = it.map(|(s, v)| rebuild(s, v)).collect();
    v.sort_unstable_by_key(|p| (p.pid, p.start_ticks));
    v
}

/// The rows `top` ranks for an interval from `before` to `now`, the
/// table before and the table now. Ranked by a column: every process.
/// Ranked by CPU: only those that can be in the top `n`, which is the
/// same top `n`: every process whose stored values changed (one that did
/// not used no CPU: 0%), and the `n` lowest pids (the ties at 0% go to
/// the lowest pids), each with its row before when it has one.
fn ranked_rows(
    before: &Stored,
    now: &Stored,
    rank: Rank,
    n: usize,
) -> (Vec<proctable::Proc>, Vec<proctable::Proc>) {
    if !matches!(rank, Rank::CpuPct) {
        return (rows_of(before.values()), rows_of(now.values()));
    }
    let mut lowest: std::collections::BinaryHeap<(u32, u64)> = Default::default();
    let mut picked: Vec<(u32, u64)> = Vec::new();
    for (k, (_, v)) in now {
        if before.get(k).is_none_or(|(_, b)| b != v) {
            picked.push(*k);
        } else if n > 0 {
            lowest.push(*k);
            if lowest.len() > n {
                lowest.pop();
            }
        }
    }
    picked.extend(lowest);
    let cur = rows_of(picked.iter().filter_map(|k| now.get(k)));
    let prev = rows_of(picked.iter().filter_map(|k| before.get(k)));
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
        for n in [0, 1, 3, 5, 10, 400] {
            let all = (rows_of(before.values()), rows_of(now.values()));
            let some = ranked_rows(&before, &now, Rank::CpuPct, n);
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
