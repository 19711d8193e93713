//! `waits`: the processes, and the cgroups, that waited most over the whole
//! range: for a CPU (the run delay), on block I/O and on memory (swap-in,
//! reclaim, thrashing, compaction, copy-on-write: the kernel's delay
//! accounting), from the recorded process tables; then the cgroups that
//! stalled most by their own pressure figures (`cpu.pressure`,
//! `io.pressure`, `memory.pressure`: the wall time at least one of their
//! tasks waited), from the recorded walks.

use std::collections::HashMap;

use cgroups::Figure;

use store::procs::{IdHasher, Static, Values, rebuild};
use sys::Error;

use super::*;

pub(super) struct Waits;

/// A process's waits at one table, nanoseconds: for a CPU, on block I/O,
/// on memory; `None` where the table did not carry them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct At {
    cpu: Option<u64>,
    io: Option<u64>,
    mem: Option<u64>,
}

fn at(s: &Static, v: &Values) -> At {
    let p = rebuild(s, v);
    At {
        cpu: p.sched.map(|s| s.run_delay_ns),
        io: p.delays.map(|d| d.blkio_ns),
        mem: p.delays.map(|d| d.memory_ns()),
    }
}

/// One process seen in the range: its facts, its waits when first and
/// last seen, and when.
struct Seen {
    facts: Static,
    first: At,
    last: At,
    first_ms: u64,
    last_ms: u64,
}

impl Seen {
    fn waited(&self) -> Waited {
        let (a, b) = (self.first, self.last);
        Waited {
            who: format!(
                "{} {}",
                self.facts.pid,
                String::from_utf8_lossy(self.facts.comm.as_bytes())
            ),
            cpu: grew(a.cpu, b.cpu),
            io: grew(a.io, b.io),
            mem: grew(a.mem, b.mem),
            seen: (self.last_ms - self.first_ms) as f64 / 1000.0,
            last_ms: self.last_ms,
        }
    }
}

/// What one process or cgroup waited over the range, seconds.
#[derive(Debug, Clone, Default, PartialEq)]
struct Waited {
    who: String,
    cpu: Option<f64>,
    io: Option<f64>,
    mem: Option<f64>,
    /// Seconds it was seen over.
    seen: f64,
    last_ms: u64,
}

impl Waited {
    fn total(&self) -> f64 {
        self.cpu.unwrap_or(0.0) + self.io.unwrap_or(0.0) + self.mem.unwrap_or(0.0)
    }

    fn add(&mut self, o: &Waited) {
        let sum = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        self.cpu = sum(self.cpu, o.cpu);
        self.io = sum(self.io, o.io);
        self.mem = sum(self.mem, o.mem);
        self.seen = self.seen.max(o.seen);
        self.last_ms = self.last_ms.max(o.last_ms);
    }
}

/// Seconds a counter grew by between two tables, where both carried it
/// (a counter that went back, as no kernel counter of a live task does,
/// gives none).
fn grew(a: Option<u64>, b: Option<u64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (b >= a).then(|| (b - a) as f64 / 1e9)
}

/// The `n` highest by total wait (ties: by name), those that waited at all.
fn most(mut v: Vec<Waited>, n: usize) -> Vec<Waited> {
    v.retain(|w| w.total() > 0.0);
    v.sort_by(|a, b| b.total().total_cmp(&a.total()).then(a.who.cmp(&b.who)));
    v.truncate(n);
    v
}

impl Section for Waits {
    fn name(&self) -> &'static str {
        "waits"
    }
    fn sources(&self) -> &'static [Source] {
        &[]
    }
    fn columns(&self) -> &'static [&'static str] {
        &[
            "kind",
            "who",
            "total_s",
            "cpu_wait_s",
            "io_wait_s",
            "mem_wait_s",
            "seen_s",
        ]
    }
    fn report(&self, h: &History, w: &Window, o: &Options) -> Result<Report, Error> {
        let names = cgroup_names(h, w)?;
        // The processes of the last table taken; those gone from it are
        // done: ranked (at most a few times `--top` kept) and added to
        // their cgroup's sums, so memory follows the live processes, not
        // every one the range saw.
        let mut seen: HashMap<(u32, u64), Seen, std::hash::BuildHasherDefault<IdHasher>> =
            HashMap::default();
        let mut procs: Vec<Waited> = Vec::new();
        let mut groups: HashMap<u64, Waited> = HashMap::new();
        let mut done = |e: Seen, procs: &mut Vec<Waited>| {
            let p = e.waited();
            if let Some(id) = e.facts.cgroup_id {
                let g = groups.entry(id).or_insert_with(|| Waited {
                    who: names
                        .get(&id)
                        .cloned()
                        .unwrap_or_else(|| format!("cgroup id {id}")),
                    ..Waited::default()
                });
                g.add(&p);
            }
            procs.push(p);
            if procs.len() >= 2 * o.top + 64 {
                *procs = most(std::mem::take(procs), o.top);
            }
        };
        let mut last_due: Option<u64> = None;
        // Tables at the report's interval (as `proc` takes them): each
        // process's waits are its counters' growth from the first of them
        // it is in to the last (what it waited after that last one, in
        // less than an interval before it ended, is not counted).
        h.procs(w.from, w.to, &mut |ts, snap| {
            if last_due.is_some_and(|t0| !w.due(t0, ts)) {
                return;
            }
            last_due = Some(ts);
            snap.each(&mut |s, v| {
                if !o.keeps(s.pid, &s.comm) {
                    return;
                }
                let now = at(s, v);
                seen.entry((s.pid, s.start_ticks))
                    .and_modify(|e| {
                        e.last = now;
                        e.last_ms = ts;
                    })
                    .or_insert_with(|| Seen {
                        facts: s.clone(),
                        first: now,
                        last: now,
                        first_ms: ts,
                        last_ms: ts,
                    });
            });
            for (_, e) in seen.extract_if(|_, e| e.last_ms != ts) {
                done(e, &mut procs);
            }
        })?;
        for (_, e) in seen.drain() {
            done(e, &mut procs);
        }
        let mut r = empty(self);
        let groups: Vec<Waited> = groups.into_values().collect();
        let stalls = stalls(h, w)?;
        for (kind, list) in [
            ("process", most(procs, o.top)),
            ("cgroup", most(groups, o.top)),
            ("cgroup stall", most(stalls, o.top)),
        ] {
            for x in list {
                r.table.rows.push(vec![
                    w.time(x.last_ms),
                    text(kind),
                    text(x.who.clone()),
                    num(Some(x.total())),
                    num(x.cpu),
                    num(x.io),
                    num(x.mem),
                    num(Some(x.seen)),
                ]);
            }
        }
        Ok(r)
    }
}

/// A cgroup's pressure stall totals (`some`, microseconds) at one walk:
/// for a CPU, on I/O, on memory.
type Stall = [Option<u64>; 3];

const STALL: [Figure; 3] = [Figure::CpuSomeUs, Figure::IoSomeUs, Figure::MemorySomeUs];

/// The cgroups' own stalls over the range: each one's pressure totals'
/// growth from the first walk it is in to the last, the walks taken at the
/// report's interval (a cgroup made again under its path is another id).
fn stalls(h: &History, w: &Window) -> Result<Vec<Waited>, Error> {
    // By id: path, first and last totals, and when.
    let mut seen: HashMap<u64, (String, Stall, Stall, u64, u64)> = HashMap::new();
    let mut last_due: Option<u64> = None;
    h.cgroups(w.from, w.to, &mut |ts, walk| {
        if last_due.is_some_and(|t0| !w.due(t0, ts)) {
            return;
        }
        last_due = Some(ts);
        for c in walk.sample(ts).cgroups {
            let now: Stall = STALL.map(|f| c.figures.get(f));
            if now.iter().all(Option::is_none) {
                continue;
            }
            seen.entry(c.id)
                .and_modify(|e| {
                    e.2 = now;
                    e.4 = ts;
                })
                .or_insert_with(|| (c.path.to_string(), now, now, ts, ts));
        }
    })?;
    let us = |a: Option<u64>, b: Option<u64>| grew(a, b).map(|s| s * 1000.0);
    Ok(seen
        .into_values()
        .map(|(who, a, b, first, last)| Waited {
            who,
            cpu: us(a[0], b[0]),
            io: us(a[1], b[1]),
            mem: us(a[2], b[2]),
            seen: (last - first) as f64 / 1000.0,
            last_ms: last,
        })
        .collect())
}

/// The paths of the cgroups recorded in the range (by the `cgroups`
/// source, where it was on): those made or removed in it, and those of its
/// last minutes' walks.
fn cgroup_names(h: &History, w: &Window) -> Result<HashMap<u64, String>, Error> {
    let mut names = HashMap::new();
    for c in h.cgroup_changes(w.from, w.to)? {
        names.insert(c.id, c.path);
    }
    h.cgroups(
        w.to.saturating_sub(120_000).max(w.from),
        w.to,
        &mut |ts, walk| {
            for c in walk.sample(ts).cgroups {
                names.entry(c.id).or_insert_with(|| c.path.to_string());
            }
        },
    )?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_waited_first_and_only_those_that_waited() {
        let w = |who: &str, cpu: Option<f64>, io: Option<f64>| Waited {
            who: who.into(),
            cpu,
            io,
            ..Waited::default()
        };
        let got = most(
            vec![
                w("a", Some(1.0), None),
                w("b", Some(0.5), Some(2.0)),
                w("c", None, None),
                w("d", Some(0.0), Some(0.0)),
                w("e", Some(1.0), None),
            ],
            3,
        );
        let who: Vec<&str> = got.iter().map(|w| w.who.as_str()).collect();
        assert_eq!(who, ["b", "a", "e"]);
        assert_eq!(grew(Some(5), Some(2_000_000_005)), Some(2.0));
        assert_eq!((grew(None, Some(1)), grew(Some(3), Some(1))), (None, None));
        let mut g = w("g", None, None);
        g.add(&w("x", Some(1.0), None));
        g.add(&w("y", None, Some(2.0)));
        assert_eq!(
            (g.cpu, g.io, g.mem, g.total()),
            (Some(1.0), Some(2.0), None, 3.0)
        );
    }
}
