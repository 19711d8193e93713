//! `bench fields`: what each field costs the process walk, with N idle
//! processes running. For every group of kernel fields the walk reads (see
//! `proctable::bpf::reads`): the cache lines it touches per process on this
//! kernel (from its BTF), and the time one walker takes with only the
//! identity (PID, start time) against the identity plus that group, in the
//! same run, rows taking turns in a fresh order each run. The identity row
//! is the floor: following the task list and reading the lines every row
//! needs.

use std::time::Instant;
use sys::Error;

use proctable::bpf::btf_types::KernelTypes;
use proctable::bpf::reads::{self, GroupLines};
use proctable::bpf::{Bpf, Method};
use proctable::{Field, Fields, Proc, Query, Threads};
use serde::Serialize;

use crate::proctable_cost::{percentile_ms, run_order};
use crate::spawn::{Idle, cap};

pub const DEFAULT_PROCS: usize = 8000;
pub const DEFAULT_RUNS: usize = 15;

/// One row: a group of fields asked on top of the identity (or the
/// identity alone, or every field).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// What was asked beside the identity.
    pub asked: String,
    /// The fields that ask for this group.
    pub fields: Vec<&'static str>,
    /// Processes in the table.
    pub rows: usize,
    pub median_ms: f64,
    /// Median time per process.
    pub ns_per_proc: f64,
    /// Over the identity row's, per process.
    pub extra_ns_per_proc: f64,
    /// Cache lines per process beyond the identity's, by structure, e.g.
    /// "task_struct 2, mm_struct 3" (lines of shared structures such as a
    /// parent or a cred cost once per sharer group, not per process).
    pub extra_lines: String,
    pub extra_line_count: usize,
}

/// What to measure.
pub struct Options {
    pub procs: usize,
    pub runs: usize,
}

/// The query for one group: the identity plus its fields.
fn identity() -> Fields {
    Fields::NONE.with(Field::Pid).with(Field::Start)
}

fn describe(g: &GroupLines) -> String {
    g.extra_by_struct()
        .iter()
        .map(|(s, n)| format!("{} {n}", s.label()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Measures; `note` receives messages (caps, the layout's source).
pub fn run(opts: &Options, note: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let types = KernelTypes::running()?;
    let groups = reads::group_lines(&types)?;
    let mut bpf = Bpf::open_with(Method::Walk)?;
    if let Some(why) = bpf.walk_unavailable() {
        return Err(Error::new(
            sys::ErrorKind::Kernel,
            format!("the walk is unavailable: {why}"),
        ));
    }
    // One walker: the cost per process, not how well two vCPUs overlap.
    bpf.set_walkers(Threads::Fixed(1));
    let existing = std::fs::read_dir("/proc").map(|d| d.count()).unwrap_or(0);
    let (n, why) = cap(opts.procs, existing);
    if let Some(why) = why {
        note(&format!("{} processes capped to {n}: {why}", opts.procs));
    }
    let idle = Idle::start(n).map_err(|e| Error::io(format!("spawning {n} idle processes"), e))?;
    // (row, its group, the query, samples)
    let mut kinds: Vec<(String, Option<&GroupLines>, Query, Vec<f64>)> = Vec::new();
    for g in &groups {
        let fields = g.fields.iter().fold(identity(), |s, &f| s.with(f));
        let asked = if g.flag == 0 {
            "identity only (the floor)".to_string()
        } else {
            g.name.to_string()
        };
        kinds.push((
            asked,
            Some(g),
            Query {
                fields,
                ..Query::default()
            },
            Vec::new(),
        ));
    }
    kinds.push((
        "every field".to_string(),
        None,
        Query {
            fields: Fields::all(),
            ..Query::default()
        },
        Vec::new(),
    ));
    let mut table: Vec<Proc> = Vec::new();
    let mut rows_seen = 0;
    for run in 0..=opts.runs {
        for k in run_order(kinds.len(), run) {
            let (_, _, q, samples) = &mut kinds[k];
            let t = Instant::now();
            bpf.snapshot(q, &mut table)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if run > 0 {
                samples.push(ms);
            }
            rows_seen = rows_seen.max(table.len());
        }
    }
    drop(idle);
    let mut out = Vec::new();
    let mut floor = 0.0;
    let always = groups.first().map(|g| g.lines.len()).unwrap_or(0);
    for (asked, group, _, samples) in &mut kinds {
        samples.sort_by(f64::total_cmp);
        let med = percentile_ms(samples, 50.0);
        let per = med * 1e6 / rows_seen.max(1) as f64;
        let (lines, count, fields) = match group {
            Some(g) if g.flag == 0 => {
                floor = per;
                (describe(g), g.extra.len(), vec!["pid", "start"])
            }
            Some(g) => (
                describe(g),
                g.extra.len(),
                g.fields.iter().map(|f| f.name()).collect(),
            ),
            None => {
                let all: std::collections::BTreeSet<_> = groups
                    .iter()
                    .flat_map(|g| g.lines.iter().copied())
                    .collect();
                let n = all.len() - always;
                (format!("{n} beyond the identity's"), n, vec!["all"])
            }
        };
        out.push(Row {
            asked: asked.clone(),
            fields,
            rows: rows_seen,
            median_ms: med,
            ns_per_proc: per,
            extra_ns_per_proc: 0.0,
            extra_lines: lines,
            extra_line_count: count,
        });
    }
    for r in &mut out {
        r.extra_ns_per_proc = r.ns_per_proc - floor;
    }
    Ok(out)
}
