//! The per-cgroup families, under cAdvisor's names, units, help and `id`
//! label (the cgroup's path), so that dashboards and alerts written for
//! cAdvisor (every kubelet's) work unchanged; `container_id` and `pod_uid`
//! where the path names them ([`model::cgroup::container_ids`]). Served
//! for the cgroups `[cgroup_metrics]` chooses (by default those at most
//! two levels below the root: slices, services, container scopes), at
//! most its `max` of them: the series stay bounded however many cgroups
//! the machine has.

use agent::State;
use agent::config::{AgentSource, CgroupMetrics};

use cgroups::{Cgroup, Figure};
use model::units::{ns_to_secs, us_to_secs};

use super::families::*;
use super::out::{Fmt, Out, one, sample_l};

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

/// A cgroup whose series are served, and their labels.
struct Exported<'a> {
    c: &'a Cgroup,
    labels: Vec<(&'static str, String)>,
}

/// The cgroups whose series are served, in path order (parents first).
fn exported<'a>(st: &'a State, cm: &CgroupMetrics) -> Vec<Exported<'a>> {
    let paths = super::compat::pattern(&cm.paths);
    st.cgroups
        .cgroups
        .iter()
        .filter(|c| c.depth <= cm.depth || paths.as_ref().is_some_and(|r| r.is_match(&c.path)))
        .take(cm.max)
        .map(|c| {
            let ids = model::cgroup::container_ids(&c.path);
            let mut labels = vec![("id", c.path.to_string())];
            labels.extend(ids.container_id.map(|v| ("container_id", v)));
            labels.extend(ids.pod_uid.map(|v| ("pod_uid", v)));
            Exported { c, labels }
        })
        .collect()
}

pub(super) fn cgroups(out: &mut Out<'_>, st: &State, cm: &CgroupMetrics) -> Fmt {
    if !st.stats[AgentSource::Cgroups.index()].scheduled {
        return Ok(());
    }
    let exported = exported(st, cm);
    one(out, &QUIETSTAT_CGROUPS, st.cgroups.cgroups.len() as f64)?;
    one(out, &QUIETSTAT_CGROUPS_EXPORTED, exported.len() as f64)?;
    for (family, figure, scale) in FIGURES {
        if !exported.iter().any(|e| e.c.figures.get(*figure).is_some()) {
            continue;
        }
        let mut m = out.family(family)?;
        for e in &exported {
            if let Some(v) = e.c.figures.get(*figure) {
                sample_l(&mut m, &e.labels, scale(v))?;
            }
        }
    }
    if exported
        .iter()
        .any(|e| e.c.figures.get(Figure::MemoryBytes).is_some())
    {
        let mut m = out.family(&CONTAINER_MEMORY_WORKING_SET_BYTES)?;
        for e in &exported {
            if let Some(v) = model::cgroup::working_set_bytes(&e.c.figures) {
                sample_l(&mut m, &e.labels, v as f64)?;
            }
        }
    }
    // GPU use and network bytes, summed from the process table's rows
    // (where it read them). Busy time and bytes as counters the sampler
    // keeps from table to table (a sum over the live processes would fall
    // when one ends); GPU memory as the sum now.
    let cgs: Vec<&Cgroup> = exported.iter().map(|e| e.c).collect();
    let gpu = model::cgroup::gpu_sums(&st.procs, &cgs);
    interfaces(out, st, &exported)?;
    let net = st.procs.iter().any(|p| p.net.is_some());
    if !net && gpu.iter().all(Option::is_none) {
        return memory_failures(out, &exported);
    }
    let sums = st.cgroup_totals.sums(&cgs);
    if gpu.iter().any(Option::is_some) {
        let mut m = out.family(&QUIETSTAT_CGROUP_GPU_BUSY_SECONDS_TOTAL)?;
        for (e, t) in exported.iter().zip(&sums) {
            sample_l(&mut m, &e.labels, ns_to_secs(t.gpu_busy_ns))?;
        }
        let mut m = out.family(&QUIETSTAT_CGROUP_GPU_MEMORY_BYTES)?;
        for (e, g) in exported.iter().zip(&gpu) {
            if let Some(g) = g {
                sample_l(&mut m, &e.labels, g.mem_bytes as f64)?;
            }
        }
    }
    if net {
        let mut m = out.family(&QUIETSTAT_CGROUP_NETWORK_RECEIVE_BYTES_TOTAL)?;
        for (e, t) in exported.iter().zip(&sums) {
            sample_l(&mut m, &e.labels, t.net_rx_bytes as f64)?;
        }
        let mut m = out.family(&QUIETSTAT_CGROUP_NETWORK_TRANSMIT_BYTES_TOTAL)?;
        for (e, t) in exported.iter().zip(&sums) {
            sample_l(&mut m, &e.labels, t.net_tx_bytes as f64)?;
        }
    }
    memory_failures(out, &exported)
}

/// cAdvisor's `container_network_*`: the interfaces of the network
/// namespace of each exported cgroup whose processes are in one not the
/// agent's (`agent::cgroup_net`).
fn interfaces(out: &mut Out<'_>, st: &State, exported: &[Exported<'_>]) -> Fmt {
    let with: Vec<(&Exported<'_>, &agent::cgroup_net::CgroupNetDev)> = exported
        .iter()
        .filter_map(|e| {
            let i = st
                .cgroup_net
                .binary_search_by_key(&e.c.id, |n| n.cgroup_id)
                .ok()?;
            Some((e, &st.cgroup_net[i]))
        })
        .collect();
    if with.is_empty() {
        return Ok(());
    }
    type Counter = fn(&procfs::net_dev::NetDev) -> u64;
    let families: [(&Family, Counter); 8] = [
        (&CONTAINER_NETWORK_RECEIVE_BYTES_TOTAL, |d| d.rx_bytes),
        (&CONTAINER_NETWORK_RECEIVE_PACKETS_TOTAL, |d| d.rx_packets),
        (&CONTAINER_NETWORK_RECEIVE_ERRORS_TOTAL, |d| d.rx_errs),
        (&CONTAINER_NETWORK_RECEIVE_PACKETS_DROPPED_TOTAL, |d| {
            d.rx_drop
        }),
        (&CONTAINER_NETWORK_TRANSMIT_BYTES_TOTAL, |d| d.tx_bytes),
        (&CONTAINER_NETWORK_TRANSMIT_PACKETS_TOTAL, |d| d.tx_packets),
        (&CONTAINER_NETWORK_TRANSMIT_ERRORS_TOTAL, |d| d.tx_errs),
        (&CONTAINER_NETWORK_TRANSMIT_PACKETS_DROPPED_TOTAL, |d| {
            d.tx_drop
        }),
    ];
    for (family, counter) in families {
        let mut m = out.family(family)?;
        for (e, n) in &with {
            for d in n.devices.iter() {
                let mut l: Vec<(&str, &str)> =
                    e.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
                l.push(("interface", d.name.as_str()));
                sample_l(&mut m, &l, counter(d) as f64)?;
            }
        }
    }
    Ok(())
}

/// `container_memory_failures_total`: the cgroups' page faults.
fn memory_failures(out: &mut Out<'_>, exported: &[Exported<'_>]) -> Fmt {
    let faults = [
        (Figure::PageFaults, "pgfault"),
        (Figure::MajorPageFaults, "pgmajfault"),
    ];
    if exported
        .iter()
        .any(|e| faults.iter().any(|(f, _)| e.c.figures.get(*f).is_some()))
    {
        let mut m = out.family(&CONTAINER_MEMORY_FAILURES_TOTAL)?;
        for e in exported {
            for (f, kind) in faults {
                if let Some(v) = e.c.figures.get(f) {
                    // The kernel's counts include the cgroup's descendants.
                    let mut l: Vec<(&str, &str)> =
                        e.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    l.extend([("failure_type", kind), ("scope", "hierarchy")]);
                    sample_l(&mut m, &l, v as f64)?;
                }
            }
        }
    }
    Ok(())
}
