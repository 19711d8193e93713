//! The per-process families: the processes the configuration selects (by
//! name or cgroup, or the top N by `model::process::top`) with values from
//! `model::columns`, and per-comm groups from `model::process::groups`.

use agent::config::{AgentSource, ProcessMetrics, SortKey};
use agent::{ProcessMetricsMode, State};
use model::columns::{self, Column};
use model::process::{self, Group, GroupBy, Rank};
use model::units::{boot_ticks_to_unix_secs, ns_to_secs};
use proctable::Proc;

use super::families::*;
use super::out::{Fmt, Out, counter_l, gauge_l, one, sample_l};

/// The processes `pm` selects: by name or cgroup, or the top N.
fn selected<'a>(st: &'a State, pm: &ProcessMetrics) -> Vec<&'a Proc> {
    match pm.mode {
        ProcessMetricsMode::Off | ProcessMetricsMode::Group => Vec::new(),
        ProcessMetricsMode::Filter => st
            .procs
            .iter()
            .filter(|p| {
                pm.names.iter().any(|n| n.as_bytes() == p.comm.as_bytes())
                    || (st.cgroup_filter_id.is_some() && p.cgroup_id == st.cgroup_filter_id)
            })
            .collect(),
        ProcessMetricsMode::Top => {
            let rank = match pm.sort_by {
                SortKey::Cpu => Rank::CpuPct,
                SortKey::Rss => Rank::Column(&columns::RSS_BYTES),
                SortKey::Majflt => Rank::Column(&columns::MAJFLT),
                SortKey::Threads => Rank::Column(&columns::THREADS),
            };
            process::top(&st.procs_prev, &st.procs, st.procs_secs, rank, pm.top_n)
        }
    }
}

/// Which of the per-process families: those of the table (what the
/// history records of it), those of the reading of it (what the agent
/// counts as it reads), or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Parts {
    All,
    Table,
    Reading,
}

pub(super) fn processes(out: &mut Out<'_>, st: &State, pm: &ProcessMetrics, parts: Parts) -> Fmt {
    if !st.stats[AgentSource::Processes.index()].scheduled {
        return Ok(());
    }
    if parts != Parts::Reading {
        one(out, &QUIETSTAT_PROCESSES, st.procs.len() as f64)?;
        let threads = process::threads(&st.procs);
        one(out, &QUIETSTAT_PROCESS_THREADS_ALL, threads as f64)?;
    }
    if parts != Parts::Table {
        reading(out, st)?;
    }
    if parts == Parts::Reading {
        return Ok(());
    }
    table(out, st, pm)
}

/// What the agent counts as it reads the table.
fn reading(out: &mut Out<'_>, st: &State) -> Fmt {
    if st.backend.is_some() {
        one(
            out,
            &QUIETSTAT_PROCESS_UNREADABLE_TOTAL,
            st.procs_unreadable as f64,
        )?;
    }
    if st.exits.capture.is_some() {
        one(
            out,
            &QUIETSTAT_PROCESS_EXITS_TOTAL,
            st.exits.captured as f64,
        )?;
        one(
            out,
            &QUIETSTAT_PROCESS_EXITS_LOST_TOTAL,
            st.exits.lost as f64,
        )?;
    }
    Ok(())
}

/// The selected processes' families, and the groups'.
fn table(out: &mut Out<'_>, st: &State, pm: &ProcessMetrics) -> Fmt {
    let btime = st.sample.stat.btime_secs;
    let sel = selected(st, pm);
    if !sel.is_empty() {
        let ids: Vec<(String, String)> = sel
            .iter()
            .map(|p| (p.pid.to_string(), p.comm.to_string_lossy().into_owned()))
            .collect();
        let l = |i: usize| [("pid", ids[i].0.as_str()), ("comm", ids[i].1.as_str())];
        let mut m = out.family(&QUIETSTAT_PROCESS_CPU_SECONDS_TOTAL)?;
        for (i, p) in sel.iter().enumerate() {
            let [a, b] = l(i);
            counter_l(&mut m, &[a, b, ("mode", "user")], ns_to_secs(p.utime_ns))?;
            counter_l(&mut m, &[a, b, ("mode", "system")], ns_to_secs(p.stime_ns))?;
        }
        // Each family's value is its process field's, as `ps` shows it.
        let fields: [(&Family, &Column); 5] = [
            (
                &QUIETSTAT_PROCESS_RESIDENT_MEMORY_BYTES,
                &columns::RSS_BYTES,
            ),
            (
                &QUIETSTAT_PROCESS_VIRTUAL_MEMORY_BYTES,
                &columns::VSIZE_BYTES,
            ),
            (&QUIETSTAT_PROCESS_MAJOR_FAULTS_TOTAL, &columns::MAJFLT),
            (&QUIETSTAT_PROCESS_MINOR_FAULTS_TOTAL, &columns::MINFLT),
            (&QUIETSTAT_PROCESS_THREADS, &columns::THREADS),
        ];
        for (f, col) in fields {
            let mut m = out.family(f)?;
            for (i, p) in sel.iter().enumerate() {
                sample_l(&mut m, &l(i), col.number(p).unwrap_or(0.0))?;
            }
        }
        // Only where the table read it (absent, not 0, from /proc).
        let mut m = out.family(&QUIETSTAT_PROCESS_RUN_DELAY_SECONDS_TOTAL)?;
        for (i, p) in sel.iter().enumerate() {
            if let Some(s) = p.sched {
                counter_l(&mut m, &l(i), ns_to_secs(s.run_delay_ns))?;
            }
        }
        let mut m = out.family(&QUIETSTAT_PROCESS_DELAY_SECONDS_TOTAL)?;
        for (i, p) in sel.iter().enumerate() {
            if let Some(d) = p.delays {
                let [a, b] = l(i);
                for (cause, ns) in d.named() {
                    counter_l(&mut m, &[a, b, ("cause", cause)], ns_to_secs(ns))?;
                }
            }
        }
        type Net = fn(&proctable::NetBytes) -> u64;
        let nets: [(&Family, Net); 2] = [
            (&QUIETSTAT_PROCESS_NETWORK_RECEIVE_BYTES_TOTAL, |n| {
                n.rx_bytes
            }),
            (&QUIETSTAT_PROCESS_NETWORK_TRANSMIT_BYTES_TOTAL, |n| {
                n.tx_bytes
            }),
        ];
        for (f, get) in nets {
            let mut m = out.family(f)?;
            for (i, p) in sel.iter().enumerate() {
                if let Some(n) = p.net.as_ref() {
                    counter_l(&mut m, &l(i), get(n) as f64)?;
                }
            }
        }
        // Only where the table read GPU use.
        if sel.iter().any(|p| p.gpu.is_some()) {
            let mut m = out.family(&QUIETSTAT_PROCESS_GPU_BUSY_SECONDS_TOTAL)?;
            for (i, p) in sel.iter().enumerate() {
                if let Some(g) = p.gpu {
                    counter_l(&mut m, &l(i), ns_to_secs(g.busy_ns))?;
                }
            }
            let mut m = out.family(&QUIETSTAT_PROCESS_GPU_MEMORY_BYTES)?;
            for (i, p) in sel.iter().enumerate() {
                if let Some(g) = p.gpu {
                    gauge_l(&mut m, &l(i), g.mem_bytes as f64)?;
                }
            }
        }
        let mut m = out.family(&QUIETSTAT_PROCESS_START_TIME_SECONDS)?;
        for (i, p) in sel.iter().enumerate() {
            let t = boot_ticks_to_unix_secs(btime, p.start_ticks);
            gauge_l(&mut m, &l(i), t)?;
        }
    }
    if pm.mode == ProcessMetricsMode::Group {
        let groups = process::groups(&st.procs, GroupBy::Comm);
        type Get = fn(&Group) -> f64;
        let gauges: [(&Family, Get); 4] = [
            (&QUIETSTAT_PROCESS_GROUP_PROCESSES, |g| g.processes as f64),
            (&QUIETSTAT_PROCESS_GROUP_THREADS, |g| g.threads as f64),
            (&QUIETSTAT_PROCESS_GROUP_RESIDENT_MEMORY_BYTES, |g| {
                g.rss_bytes as f64
            }),
            (&QUIETSTAT_PROCESS_GROUP_MAJOR_FAULTS_TOTAL, |g| {
                g.majflt as f64
            }),
        ];
        for (f, get) in gauges {
            let mut m = out.family(f)?;
            for (name, g) in &groups {
                sample_l(&mut m, &[("groupname", name.as_str())], get(g))?;
            }
        }
        let mut m = out.family(&QUIETSTAT_PROCESS_GROUP_CPU_SECONDS_TOTAL)?;
        for (name, g) in &groups {
            for (mode, ns) in [("user", g.utime_ns), ("system", g.stime_ns)] {
                counter_l(
                    &mut m,
                    &[("groupname", name.as_str()), ("mode", mode)],
                    ns_to_secs(ns),
                )?;
            }
        }
    }
    Ok(())
}
