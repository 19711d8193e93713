//! `proc`: the top processes of each interval (`--top`, ranked by
//! `--sort`), as `pidstat`, from the recorded process tables.

use model::process::{rates, top};

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
        let keep = |p: &proctable::Proc| {
            o.pid.is_none_or(|pid| p.pid == pid)
                && o.comm
                    .as_deref()
                    .is_none_or(|c| p.comm.as_bytes() == c.as_bytes())
        };
        let mut start: Option<(u64, Vec<proctable::Proc>)> = None;
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
            let mut cur = snap.procs();
            cur.retain(|p| keep(p));
            if let Some((t0, prev)) = &start {
                let secs = (ts - t0) as f64 / 1000.0;
                let picked = top(prev, &cur, secs, o.rank, o.top);
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
            start = Some((ts, cur));
        })?;
        let mut r = empty(self);
        r.table.rows = rows;
        r.gaps = steps.gaps;
        Ok(r)
    }
}
