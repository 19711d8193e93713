//! `bench proctable`: one full process-table snapshot per backend with N idle
//! processes running, next to a naive loop (list /proc, then open, read and
//! close each /proc/PID/stat and split it into fields) measured in the same
//! run, interleaved run by run so machine noise falls on all alike.

use std::io::Read;
use std::time::Instant;
use sys::Error;

use proctable::Threads;
use proctable::bpf::{Bpf, Method};
use proctable::{BackendChoice, Proc, ProcTable, Query};
use serde::Serialize;

use crate::spawn::{Idle, cap};

pub const DEFAULT_PROCS: &[usize] = &[1000, 8000, 30000];
pub const DEFAULT_RUNS: usize = 9;

/// One (backend, N) result.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub backend: String,
    /// Idle processes spawned for this measurement.
    pub procs: usize,
    /// Rows in the table (spawned plus what the machine already ran).
    pub table_rows: usize,
    pub runs: usize,
    pub median_ms: f64,
    pub p99_ms: f64,
    /// Median CPU time of one snapshot, all of this process's threads (a
    /// walk split between walkers takes less time than CPU).
    pub cpu_ms: f64,
    pub ms_per_1000: f64,
    /// The naive loop's median over this one's (1 for the naive loop).
    pub speedup_vs_naive: f64,
}

/// The same fields a ps-like tool takes from /proc/PID/stat, the usual way:
/// a path string per process, open/read/close, split on whitespace.
pub fn naive_snapshot(out: &mut Vec<(u32, u64, u64, u64)>) -> usize {
    out.clear();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut text = String::new();
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        text.clear();
        let Ok(mut f) = std::fs::File::open(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if f.read_to_string(&mut text).is_err() {
            continue;
        }
        let Some(close) = text.rfind(')') else {
            continue;
        };
        let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
        let num = |i: usize| rest.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        // utime, stime, starttime (fields 14, 15, 22; rest[0] is field 3)
        out.push((pid, num(11), num(12), num(19)));
    }
    out.len()
}

/// CPU time this process (all its threads) has used, in milliseconds.
fn process_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// Steal ticks of all CPUs in /proc/stat so far.
fn steal_ticks() -> Option<u64> {
    let text = std::fs::read("/proc/stat").ok()?;
    let stat = procfs::stat::parse(&text).ok()?;
    stat.total.ticks(procfs::stat::CpuMode::Steal)
}

pub(crate) fn percentile_ms(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// What takes a row's snapshot.
#[derive(Clone, Copy)]
enum Source {
    /// The naive open/read/close loop.
    Naive,
    /// The procfs backend as `ProcTable` opens it, its reads split between
    /// threads as set (`Auto`: the default).
    Procfs(Threads),
    /// A procfs backend that opens, reads and closes every file.
    Cold,
    /// The BPF backend as `ProcTable` opens it (the walk, split).
    Bpf,
    /// One of the BPF backends opened beside it for comparison (`beside`).
    Beside(usize),
}

/// A BPF backend opened beside the default for comparison: its row's
/// name, method, whether it reads all fields but I/O (else /proc/PID/stat's),
/// and how it is set.
type BesideRow = (&'static str, Method, bool, fn(&mut Bpf));

/// What to measure.
pub struct Options {
    pub procs: Vec<usize>,
    pub runs: usize,
}

/// The order of the `kinds` rows in run `run`: a permutation drawn afresh
/// for each run (Fisher-Yates over a fixed-seed splitmix64, so a run's order
/// is the same from one invocation to the next). A row's time depends on
/// what ran just before it: the naive loop and procfs evict the caches a
/// walk right after another walk finds warm, at 1,000 processes by up to
/// 2x. Over the runs every row so follows a mix of the others; a rotation
/// (each run starting one row later) left each row after the same one in
/// all runs but one in `kinds`.
pub(crate) fn run_order(kinds: usize, run: usize) -> Vec<usize> {
    let mut state = 0x5157_4154_5052_4f43_u64 ^ (run as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut order: Vec<usize> = (0..kinds).collect();
    for i in (1..kinds).rev() {
        order.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    order
}

/// Measures every N; `note` receives messages (caps, skipped backends).
pub fn run(opts: &Options, note: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let mut rows = Vec::new();
    let mut bpf = match ProcTable::open(BackendChoice::Bpf, "/proc", "/sys") {
        Ok(t) => Some(t),
        Err(e) => {
            note(&format!("bpf backend not measured: {e}"));
            None
        }
    };
    if let Some(why) = bpf
        .as_mut()
        .and_then(|t| t.bpf_mut())
        .and_then(|b| b.walk_unavailable().map(str::to_string))
    {
        note(&format!("bpf backend uses the task iterator: {why}"));
    }
    // Where the walk is the default, more for comparison: the walk by one
    // walker (the default splits it between CPUs), the split walk that
    // waits for a helper stalled in a stretch (the default walks that
    // stretch again), the walk split in one stretch per thread fixed in
    // advance and waited for (the default cuts it in stretches the threads
    // take in turn), and the iter/task link.
    let walks = bpf.as_mut().and_then(|t| t.bpf_mut()).map(|b| b.method()) == Some(Method::Walk);
    let mut beside = if walks {
        beside_walks(note)
    } else {
        Vec::new()
    };
    let mut procfs = ProcTable::open(BackendChoice::Procfs, "/proc", "/sys")?;
    // On one thread, every file opened, read and closed. The one-thread
    // row with kept fds is the default backend set to one thread for its
    // snapshot: the same kept fds (two readers each keeping one per
    // process would run out of them).
    let mut cold = proctable::dir::ProcDir::open("/proc", "/sys")?;
    cold.set_threads(Threads::Fixed(1));
    cold.set_max_kept(0);
    // What the naive loop reads too: every field of /proc/PID/stat.
    let query = Query::default();
    // The target's field set but I/O: /proc/PID/stat's fields, the cgroup
    // id and context switches (the set every published figure used; the
    // uid, added later, is left out to keep them comparable).
    let all_but_io = Query {
        fields: proctable::Fields::all()
            .without(proctable::Field::Io)
            .without(proctable::Field::Uid)
            .without(proctable::Field::Cmdline),
        ..Query::default()
    };
    // What a monitor showing command lines pays once they are cached (the
    // warm-up round reads them all).
    let with_cmdline = Query {
        fields: all_but_io.fields.with(proctable::Field::Cmdline),
        ..Query::default()
    };
    // One row per thread, the stat fields (never split between walkers).
    let threads = Query {
        threads: true,
        ..Query::default()
    };
    for &asked in &opts.procs {
        let existing = std::fs::read_dir("/proc").map(|d| d.count()).unwrap_or(0);
        let (n, why) = cap(asked, existing);
        if let Some(why) = why {
            note(&format!("{asked} processes capped to {n}: {why}"));
        }
        let idle =
            Idle::start(n).map_err(|e| Error::io(format!("spawning {n} idle processes"), e))?;
        // (row name, what takes the snapshot, what it asks for, samples).
        let mut times: Vec<(&str, Source, &Query, Vec<f64>)> = vec![
            ("naive", Source::Naive, &query, Vec::new()),
            ("procfs", Source::Procfs(Threads::Auto), &query, Vec::new()),
            (
                "procfs-1thread",
                Source::Procfs(Threads::Fixed(1)),
                &query,
                Vec::new(),
            ),
            ("procfs-no-kept-fds", Source::Cold, &query, Vec::new()),
        ];
        if bpf.is_some() {
            times.push(("bpf", Source::Bpf, &query, Vec::new()));
            times.push(("bpf-all-but-io", Source::Bpf, &all_but_io, Vec::new()));
            times.push(("bpf-cmdline", Source::Bpf, &with_cmdline, Vec::new()));
            times.push(("bpf-threads", Source::Bpf, &threads, Vec::new()));
        }
        for (k, &(name, all_fields, _)) in beside.iter().enumerate() {
            let q = if all_fields { &all_but_io } else { &query };
            times.push((name, Source::Beside(k), q, Vec::new()));
        }
        let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); times.len()];
        let mut naive_rows = Vec::new();
        let mut table: Vec<Proc> = Vec::new();
        let mut table_rows = 0;
        let steal_before = steal_ticks();
        let started = Instant::now();
        // One warm-up round (fills kept fds, caches, buffers), then runs,
        // each in its own order (see `run_order`).
        let kinds = times.len();
        for run in 0..=opts.runs {
            for k in run_order(kinds, run) {
                let (_, source, q, samples) = &mut times[k];
                let c = process_cpu_ms();
                let t = Instant::now();
                let got = match source {
                    Source::Naive => Ok(naive_snapshot(&mut naive_rows)),
                    Source::Cold => cold.snapshot(q, &mut table).map(|_| table.len()),
                    Source::Procfs(threads) => {
                        procfs.set_threads(*threads);
                        procfs.snapshot(q, &mut table).map(|_| table.len())
                    }
                    Source::Bpf => {
                        let b = bpf.as_mut().expect("bpf opened");
                        b.snapshot(q, &mut table).map(|_| table.len())
                    }
                    Source::Beside(i) => beside[*i].2.snapshot(q, &mut table).map(|_| table.len()),
                }?;
                let ms = t.elapsed().as_secs_f64() * 1e3;
                if run > 0 {
                    samples.push(ms);
                    cpu[k].push(process_cpu_ms() - c);
                }
                // Processes: a threads query has one row per thread.
                if !q.threads {
                    table_rows = table_rows.max(got);
                }
            }
        }
        note_runs(n, steal_before, started, bpf.as_mut(), note);
        let count = idle.count();
        drop(idle);
        rows.extend(rows_of(&mut times, &mut cpu, count, table_rows, opts.runs));
    }
    Ok(rows)
}

/// The BPF ways measured beside the default where the walk is the default.
fn beside_walks(note: &mut dyn FnMut(&str)) -> Vec<(&'static str, bool, Bpf)> {
    let mut beside = Vec::new();
    let rows: [BesideRow; 4] = [
        ("bpf-all-but-io-1walker", Method::Walk, true, |b| {
            b.set_walkers(Threads::Fixed(1))
        }),
        ("bpf-all-but-io-no-backups", Method::Walk, true, |b| {
            b.set_backups(false)
        }),
        ("bpf-all-but-io-halves", Method::Walk, true, |b| {
            b.set_stretch_procs(u64::MAX);
            b.set_backups(false);
        }),
        ("bpf-iter", Method::Iter, false, |_| {}),
    ];
    for (name, method, all_fields, configure) in rows {
        match Bpf::open_with(method) {
            Ok(mut b) => {
                configure(&mut b);
                beside.push((name, all_fields, b));
            }
            Err(e) => note(&format!("{name} not measured: {e}")),
        }
    }
    beside
}

/// What the host took of these CPUs during the runs, and how the BPF walks
/// went.
fn note_runs(
    n: usize,
    steal_before: Option<u64>,
    started: Instant,
    bpf: Option<&mut ProcTable>,
    note: &mut dyn FnMut(&str),
) {
    // The host's share of these CPUs: a split walk's walkers overlap
    // only where the host runs both vCPUs at once.
    if let Some(ticks) = steal_before
        .zip(steal_ticks())
        .map(|(a, b)| b.saturating_sub(a))
    {
        note(&format!(
            "{n} processes: steal {} ms over all CPUs in {:.1} s of runs",
            ticks * 1000 / procfs::stat::USER_HZ,
            started.elapsed().as_secs_f64()
        ));
    }
    if let Some(stats) = bpf.and_then(|t| t.bpf_mut()).and_then(|b| b.walk_stats()) {
        note(&format!(
            "{n} processes: bpf walks so far: {} split (the last in {} stretches on {} threads), {} walked again by one walker, {} with a stalled stretch walked again",
            stats.split, stats.last_walkers, stats.last_threads, stats.redone, stats.backups
        ));
    }
}

/// Each way's row: median and 99th percentile time and CPU, and how
/// much faster than the naive loop it was.
fn rows_of(
    times: &mut [(&str, Source, &Query, Vec<f64>)],
    cpu: &mut [Vec<f64>],
    count: usize,
    table_rows: usize,
    runs: usize,
) -> Vec<Row> {
    let mut out = Vec::new();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (percentile_ms(v, 50.0), percentile_ms(v, 99.0))
    };
    let mut naive_median = 0.0;
    for ((name, source, _, samples), cpu) in times.iter_mut().zip(cpu.iter_mut()) {
        let (med, p99) = median(samples);
        let (cpu_ms, _) = median(cpu);
        if matches!(source, Source::Naive) {
            naive_median = med;
        }
        out.push(Row {
            backend: name.to_string(),
            procs: count,
            table_rows,
            runs,
            median_ms: med,
            p99_ms: p99,
            cpu_ms,
            ms_per_1000: med * 1000.0 / table_rows.max(1) as f64,
            speedup_vs_naive: if med > 0.0 { naive_median / med } else { 0.0 },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::run_order;

    #[test]
    fn each_run_orders_every_row_once_and_rows_follow_a_mix_of_others() {
        let (kinds, runs) = (12, 16);
        // How often row b ran right after row a.
        let mut after = vec![vec![0; kinds]; kinds];
        let mut orders = Vec::new();
        for run in 0..runs {
            let order = run_order(kinds, run);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..kinds).collect::<Vec<_>>(),
                "run {run}: {order:?}"
            );
            for w in order.windows(2) {
                after[w[0]][w[1]] += 1;
            }
            orders.push(order);
        }
        assert_eq!(run_order(kinds, 3), orders[3], "not reproducible");
        orders.dedup();
        assert_eq!(orders.len(), runs, "two runs in a row in the same order");
        // A rotation puts each row after the same one in 15 of 16 runs.
        let most = after.iter().flatten().max().copied().unwrap_or(0);
        assert!(most <= runs / 3, "a row followed the same one {most} times");
    }
}
