//! The per-cgroup families, under cAdvisor's names, units, help and `id`
//! label (the cgroup's path), so that dashboards and alerts written for
//! cAdvisor (every kubelet's) work unchanged. Served for the cgroups at
//! most [`MAX_DEPTH`] levels below the root (slices, services, container
//! scopes), at most [`MAX_EXPORTED`] of them: the series stay bounded
//! however many cgroups the machine has.

use agent::State;
use agent::config::AgentSource;
use cgroups::{Cgroup, Figure};
use model::units::{ns_to_secs, us_to_secs};

use super::families::*;
use super::out::{Fmt, Out, one, sample_l};

/// Levels below the root whose cgroups are exported.
pub const MAX_DEPTH: u16 = 2;
/// Cgroups exported at most (in path order: parents first).
pub const MAX_EXPORTED: usize = 1000;

/// A figure's family and its scale to the family's unit.
type Scale = fn(u64) -> f64;

const FIGURES: &[(&Family, Figure, Scale)] = &[
    (
        &CONTAINER_CPU_USAGE_SECONDS_TOTAL,
        Figure::CpuUsageNs,
        ns_to_secs,
    ),
    (
        &CONTAINER_CPU_USER_SECONDS_TOTAL,
        Figure::CpuUserNs,
        ns_to_secs,
    ),
    (
        &CONTAINER_CPU_SYSTEM_SECONDS_TOTAL,
        Figure::CpuSystemNs,
        ns_to_secs,
    ),
    (&CONTAINER_CPU_CFS_PERIODS_TOTAL, Figure::CpuPeriods, as_f64),
    (
        &CONTAINER_CPU_CFS_THROTTLED_PERIODS_TOTAL,
        Figure::CpuThrottledPeriods,
        as_f64,
    ),
    (
        &CONTAINER_CPU_CFS_THROTTLED_SECONDS_TOTAL,
        Figure::CpuThrottledNs,
        ns_to_secs,
    ),
    (&CONTAINER_SPEC_CPU_QUOTA, Figure::CpuQuotaUs, as_f64),
    (&CONTAINER_SPEC_CPU_PERIOD, Figure::CpuPeriodUs, as_f64),
    (&CONTAINER_MEMORY_USAGE_BYTES, Figure::MemoryBytes, as_f64),
    (&CONTAINER_MEMORY_RSS, Figure::MemoryAnonBytes, as_f64),
    (&CONTAINER_MEMORY_CACHE, Figure::MemoryFileBytes, as_f64),
    (
        &CONTAINER_MEMORY_MAPPED_FILE,
        Figure::MemoryMappedFileBytes,
        as_f64,
    ),
    (
        &CONTAINER_MEMORY_KERNEL_USAGE,
        Figure::MemoryKernelBytes,
        as_f64,
    ),
    (
        &CONTAINER_MEMORY_TOTAL_ACTIVE_FILE_BYTES,
        Figure::MemoryActiveFileBytes,
        as_f64,
    ),
    (
        &CONTAINER_MEMORY_TOTAL_INACTIVE_FILE_BYTES,
        Figure::MemoryInactiveFileBytes,
        as_f64,
    ),
    (&CONTAINER_MEMORY_FAILCNT, Figure::MemoryFailcnt, as_f64),
    (
        &CONTAINER_SPEC_MEMORY_LIMIT_BYTES,
        Figure::MemoryMaxBytes,
        as_f64,
    ),
    (&CONTAINER_OOM_EVENTS_TOTAL, Figure::OomEvents, as_f64),
    (&CONTAINER_FS_READS_BYTES_TOTAL, Figure::IoReadBytes, as_f64),
    (
        &CONTAINER_FS_WRITES_BYTES_TOTAL,
        Figure::IoWriteBytes,
        as_f64,
    ),
    (&CONTAINER_FS_READS_TOTAL, Figure::IoReads, as_f64),
    (&CONTAINER_FS_WRITES_TOTAL, Figure::IoWrites, as_f64),
    (
        &CONTAINER_PRESSURE_CPU_WAITING_SECONDS_TOTAL,
        Figure::CpuSomeUs,
        us_to_secs,
    ),
    (
        &CONTAINER_PRESSURE_CPU_STALLED_SECONDS_TOTAL,
        Figure::CpuFullUs,
        us_to_secs,
    ),
    (
        &CONTAINER_PRESSURE_MEMORY_WAITING_SECONDS_TOTAL,
        Figure::MemorySomeUs,
        us_to_secs,
    ),
    (
        &CONTAINER_PRESSURE_MEMORY_STALLED_SECONDS_TOTAL,
        Figure::MemoryFullUs,
        us_to_secs,
    ),
    (
        &CONTAINER_PRESSURE_IO_WAITING_SECONDS_TOTAL,
        Figure::IoSomeUs,
        us_to_secs,
    ),
    (
        &CONTAINER_PRESSURE_IO_STALLED_SECONDS_TOTAL,
        Figure::IoFullUs,
        us_to_secs,
    ),
    (&QUIETSTAT_CGROUP_TASKS, Figure::Pids, as_f64),
];

fn as_f64(v: u64) -> f64 {
    v as f64
}

/// The cgroups whose series are served.
fn exported(st: &State) -> Vec<&Cgroup> {
    st.cgroups
        .cgroups
        .iter()
        .filter(|c| c.depth <= MAX_DEPTH)
        .take(MAX_EXPORTED)
        .collect()
}

pub(super) fn cgroups(out: &mut Out<'_>, st: &State) -> Fmt {
    if !st.stats[AgentSource::Cgroups.index()].scheduled {
        return Ok(());
    }
    let exported = exported(st);
    one(out, &QUIETSTAT_CGROUPS, st.cgroups.cgroups.len() as f64)?;
    one(out, &QUIETSTAT_CGROUPS_EXPORTED, exported.len() as f64)?;
    for (family, figure, scale) in FIGURES {
        if !exported.iter().any(|c| c.figures.get(*figure).is_some()) {
            continue;
        }
        let mut m = out.family(family)?;
        for c in &exported {
            if let Some(v) = c.figures.get(*figure) {
                sample_l(&mut m, &[("id", &*c.path)], scale(v))?;
            }
        }
    }
    if exported
        .iter()
        .any(|c| c.figures.get(Figure::MemoryBytes).is_some())
    {
        let mut m = out.family(&CONTAINER_MEMORY_WORKING_SET_BYTES)?;
        for c in &exported {
            if let Some(v) = model::cgroup::working_set_bytes(&c.figures) {
                sample_l(&mut m, &[("id", &*c.path)], v as f64)?;
            }
        }
    }
    let faults = [
        (Figure::PageFaults, "pgfault"),
        (Figure::MajorPageFaults, "pgmajfault"),
    ];
    if exported
        .iter()
        .any(|c| faults.iter().any(|(f, _)| c.figures.get(*f).is_some()))
    {
        let mut m = out.family(&CONTAINER_MEMORY_FAILURES_TOTAL)?;
        for c in &exported {
            for (f, kind) in faults {
                if let Some(v) = c.figures.get(f) {
                    // The kernel's counts include the cgroup's descendants.
                    let l = [
                        ("id", &*c.path),
                        ("failure_type", kind),
                        ("scope", "hierarchy"),
                    ];
                    sample_l(&mut m, &l, v as f64)?;
                }
            }
        }
    }
    Ok(())
}
