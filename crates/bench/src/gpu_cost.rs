//! `bench gpu`: what the GPU figures per process cost a process-table
//! read, with N idle processes holding D descriptors each (inherited from
//! this process, so that the scan has a machine's descriptors to visit).
//! Each backend reads the agent's fields with and without
//! [`Field::Gpu`], taking turns in one run: without a scan due (what a read
//! between scans pays: the fdinfo of the GPU descriptors found, none on a
//! machine without a GPU) and with a scan at each read (what a scan of
//! every descriptor costs: the kernel's task-file iterator on BPF, a
//! listing and a link read per descriptor on procfs). The per-second cost
//! is a read's extra at the agent's process interval plus a scan's extra
//! at the scan interval.

use std::time::{Duration, Instant};

use proctable::{BackendChoice, Field, Fields, Proc, ProcTable, Query, Threads};
use serde::Serialize;
use sys::Error;

use crate::proctable_cost::{percentile_ms, run_order};
use crate::spawn::{Idle, cap};

pub const DEFAULT_PROCS: usize = 8000;
pub const DEFAULT_FDS: usize = 16;
pub const DEFAULT_RUNS: usize = 15;
/// The agent's default process interval (`sources.processes.interval`).
pub const AGENT_INTERVAL_SECS: f64 = 5.0;

/// What to measure.
pub struct Options {
    pub procs: usize,
    /// Descriptors each idle process holds beyond its three standard ones.
    pub fds: usize,
    pub runs: usize,
}

/// One row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub case: String,
    /// Processes in the table, and descriptors on the machine.
    pub rows: usize,
    pub descriptors: usize,
    pub median_ms: f64,
    /// Over the same backend's read without `gpu`, per read.
    pub extra_ms: f64,
    /// That extra per descriptor on the machine.
    pub extra_ns_per_descriptor: f64,
    /// That extra as a share of one core: at the agent's process interval
    /// for a read, at the scan interval for a scan.
    pub extra_core_pct: f64,
}

fn agent_fields(bpf: bool, gpu: bool) -> Fields {
    let mut f = Fields::stat();
    if bpf {
        f = f
            .with(Field::Uid)
            .with(Field::Io)
            .with(Field::Cgroup)
            .with(Field::Delay);
    }
    if gpu { f.with(Field::Gpu) } else { f }
}

/// Descriptors of every process, counted in /proc.
fn descriptors() -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter_map(|e| std::fs::read_dir(e.path().join("fd")).ok())
        .map(|fds| fds.count())
        .sum()
}

/// Measures; `note` receives messages (caps).
pub fn run(opts: &Options, note: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let existing = std::fs::read_dir("/proc").map(|d| d.count()).unwrap_or(0);
    let (n, why) = cap(opts.procs, existing);
    if let Some(why) = why {
        note(&format!("{} processes capped to {n}: {why}", opts.procs));
    }
    // Held here while the idle processes are forked: each inherits them.
    let held = (0..opts.fds)
        .map(|_| std::fs::File::open("/dev/null"))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::io("opening /dev/null", e))?;
    let idle = Idle::start(n).map_err(|e| Error::io(format!("spawning {n} idle processes"), e))?;
    drop(held);
    let descriptors = descriptors();
    let scan_every = proctable::gpu::SCAN_EVERY.as_secs_f64();
    let mut out = Vec::new();
    for backend in [BackendChoice::Bpf, BackendChoice::Procfs] {
        let bpf = backend == BackendChoice::Bpf;
        let name = if bpf { "bpf" } else { "procfs" };
        let mut table = ProcTable::open(backend, "/proc", "/sys")?;
        table.set_threads(Threads::Fixed(1));
        let query = |gpu| Query {
            fields: agent_fields(bpf, gpu),
            ..Query::default()
        };
        let mut rows: Vec<Proc> = Vec::new();
        // Warm: the table, and the GPU scan loaded.
        table.snapshot(&query(false), &mut rows)?;
        table.snapshot(&query(true), &mut rows)?;
        let rows_seen = rows.len();
        // Without gpu, with it between scans, with a scan each read.
        let mut samples = [Vec::new(), Vec::new(), Vec::new()];
        for run in 0..=opts.runs {
            for k in run_order(3, run) {
                table.set_gpu_scan_every(match k {
                    2 => Duration::ZERO,
                    _ => Duration::from_secs(3600),
                });
                let t = Instant::now();
                table.snapshot(&query(k > 0), &mut rows)?;
                if run > 0 {
                    samples[k].push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
        }
        let note_now = table.gpu_note();
        if !note_now.is_empty() {
            note(&format!("{name}: {note_now}"));
        }
        let medians: Vec<f64> = samples
            .iter_mut()
            .map(|s| {
                s.sort_by(f64::total_cmp);
                percentile_ms(s, 50.0)
            })
            .collect();
        let row = |case: String, k: usize, per_secs: f64| {
            let extra = medians[k] - if k == 2 { medians[1] } else { medians[0] };
            Row {
                case,
                rows: rows_seen,
                descriptors,
                median_ms: medians[k],
                extra_ms: if k == 0 { 0.0 } else { extra },
                extra_ns_per_descriptor: if k == 0 {
                    0.0
                } else {
                    extra * 1e6 / descriptors.max(1) as f64
                },
                extra_core_pct: if k == 0 {
                    0.0
                } else {
                    extra / 1e3 / per_secs * 100.0
                },
            }
        };
        // The kernel's scan alone, by each of its programs in turn: the
        // walk (reading tables by hand) and the task-file iterator (a call
        // per descriptor).
        let mut alone = [Vec::new(), Vec::new()];
        if let Some(b) = table.bpf_mut() {
            let mut found = Vec::new();
            for run in 0..=opts.runs {
                for k in run_order(2, run) {
                    b.set_gpu_scan_per_descriptor(k == 1);
                    b.gpu_files(None, &mut found)?;
                    let t = Instant::now();
                    b.gpu_files(None, &mut found)?;
                    if run > 0 {
                        alone[k].push(t.elapsed().as_secs_f64() * 1e3);
                    }
                }
            }
            b.set_gpu_scan_per_descriptor(false);
        }
        out.push(row(format!("{name}: agent's fields"), 0, 1.0));
        out.push(row(
            format!("{name}: + gpu, between scans (at {AGENT_INTERVAL_SECS} s)"),
            1,
            AGENT_INTERVAL_SECS,
        ));
        out.push(row(
            format!("{name}: + gpu, scan of every descriptor (at {scan_every} s)"),
            2,
            scan_every,
        ));
        for (k, program) in ["qs_gpu_walk", "qs_gpu_files (iter/task_file)"]
            .iter()
            .enumerate()
        {
            if alone[k].is_empty() {
                continue;
            }
            alone[k].sort_by(f64::total_cmp);
            let ms = percentile_ms(&alone[k], 50.0);
            out.push(Row {
                case: format!("{name}: the scan alone, {program}"),
                rows: rows_seen,
                descriptors,
                median_ms: ms,
                extra_ms: ms,
                extra_ns_per_descriptor: ms * 1e6 / descriptors.max(1) as f64,
                extra_core_pct: ms / 1e3 / scan_every * 100.0,
            });
        }
    }
    drop(idle);
    Ok(out)
}
