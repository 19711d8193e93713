//! The agent's own families: per-source reads, cost, interval and age, and
//! its CPU, wakeups, memory and threads.

use std::sync::Arc;

use agent::State;
use agent::config::AgentSource;
use model::units::ns_to_secs;

use crate::http_stats::HttpStats;

use super::Context;
use super::compat::collectors as node_collectors;
use super::families::*;
use super::out::{Fmt, Out, counter_l, gauge_l, info, one, sample_l};

pub(super) fn agent_figures(out: &mut Out<'_>, st: &State, ctx: &Context) -> Fmt {
    if !ctx.exporter_metrics {
        return collectors(out, st, ctx);
    }
    source_figures(out, st, ctx)?;
    usage_figures(out, st, ctx)?;
    let backend = st.backend.map_or("none", |b| b.name());
    info(
        out,
        &QUIETSTAT_AGENT_INFO,
        &[("version", env!("CARGO_PKG_VERSION")), ("backend", backend)],
    )?;
    collectors(out, st, ctx)?;
    info(
        out,
        &QUIETSTAT_BUILD_INFO,
        &[
            ("version", env!("CARGO_PKG_VERSION")),
            ("revision", env!("QUIETSTAT_REVISION")),
            ("rustc", env!("QUIETSTAT_RUSTC")),
            ("arch", std::env::consts::ARCH),
            ("os", std::env::consts::OS),
        ],
    )?;
    if let Some(s) = &ctx.store {
        store_figures(out, s)?;
    }
    if !ctx.remote_write.is_empty() {
        remote_write_figures(out, &ctx.remote_write)?;
    }
    if let Some(h) = &ctx.http {
        http_figures(out, h)?;
    }
    Ok(())
}

/// Each remote-write receiver's sends, failures, drops and position.
fn remote_write_figures(out: &mut Out<'_>, rs: &[Arc<store::sent::Stats>]) -> Fmt {
    use std::sync::atomic::Ordering::Relaxed;
    let now = store::writer::now_ms();
    type Get = fn(&store::sent::Stats, u64) -> f64;
    let plain: [(&Family, Get); 5] = [
        (&QUIETSTAT_REMOTE_WRITE_SENT_SAMPLES_TOTAL, |r, _| {
            r.sent.load(Relaxed) as f64
        }),
        (&QUIETSTAT_REMOTE_WRITE_SENT_BYTES_TOTAL, |r, _| {
            r.bytes.load(Relaxed) as f64
        }),
        (&QUIETSTAT_REMOTE_WRITE_PENDING_SAMPLES, |r, _| {
            r.pending.load(Relaxed) as f64
        }),
        (&QUIETSTAT_REMOTE_WRITE_POSITION_AGE_SECONDS, |r, now| {
            now.saturating_sub(r.position_ms.load(Relaxed)) as f64 / 1000.0
        }),
        (&QUIETSTAT_REMOTE_WRITE_UP, |r, _| {
            f64::from(u8::from(r.up.load(Relaxed)))
        }),
    ];
    for (f, get) in plain {
        let mut m = out.family(f)?;
        for r in rs {
            sample_l(&mut m, &[("receiver", r.name.as_str())], get(r, now))?;
        }
    }
    type Map =
        fn(&store::sent::Stats) -> &std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>;
    let split: [(&Family, &str, Map); 2] = [
        (&QUIETSTAT_REMOTE_WRITE_FAILED_REQUESTS_TOTAL, "why", |r| {
            &r.failed
        }),
        (
            &QUIETSTAT_REMOTE_WRITE_DROPPED_SAMPLES_TOTAL,
            "reason",
            |r| &r.dropped,
        ),
    ];
    for (f, label, map) in split {
        let mut m = out.family(f)?;
        for r in rs {
            for (k, n) in store::sent::Stats::counts(map(r)) {
                sample_l(
                    &mut m,
                    &[("receiver", r.name.as_str()), (label, k)],
                    n as f64,
                )?;
            }
        }
    }
    Ok(())
}

/// Each scheduled source's reads, cost, interval, age and whether its last
/// read succeeded.
fn source_figures(out: &mut Out<'_>, st: &State, ctx: &Context) -> Fmt {
    let now = sys::mono_ns();
    let srcs: Vec<AgentSource> = AgentSource::ALL
        .into_iter()
        .filter(|s| st.stats[s.index()].scheduled)
        .collect();
    type Get = fn(&State, &Context, AgentSource, u64) -> f64;
    let fields: [(&Family, Get); 12] = [
        (&QUIETSTAT_SOURCE_READS_TOTAL, |st, _, s, _| {
            st.stats[s.index()].reads as f64
        }),
        (&QUIETSTAT_SOURCE_DEMAND_READS_TOTAL, |st, _, s, _| {
            st.stats[s.index()].demand_reads as f64
        }),
        (&QUIETSTAT_SOURCE_READ_SECONDS_TOTAL, |st, _, s, _| {
            ns_to_secs(st.stats[s.index()].read_ns)
        }),
        (&QUIETSTAT_SOURCE_PARSE_SECONDS_TOTAL, |st, _, s, _| {
            ns_to_secs(st.stats[s.index()].parse_ns)
        }),
        (&QUIETSTAT_SOURCE_CPU_SECONDS_TOTAL, |st, _, s, _| {
            ns_to_secs(st.stats[s.index()].cpu_ns)
        }),
        (&QUIETSTAT_SOURCE_READ_BYTES_TOTAL, |st, _, s, _| {
            st.stats[s.index()].bytes as f64
        }),
        (&QUIETSTAT_SOURCE_ERRORS_TOTAL, |st, _, s, _| {
            st.stats[s.index()].skipped_lines as f64
        }),
        (&QUIETSTAT_SOURCE_LAST_COST_SECONDS, |st, _, s, _| {
            ns_to_secs(st.stats[s.index()].last_cost_ns)
        }),
        (&QUIETSTAT_SOURCE_INTERVAL_SECONDS, |st, _, s, _| {
            st.stats[s.index()].interval.as_secs_f64()
        }),
        (
            &QUIETSTAT_SOURCE_CONFIGURED_INTERVAL_SECONDS,
            |_, ctx, s, _| ctx.config.source(s).interval.as_secs_f64(),
        ),
        (&QUIETSTAT_SOURCE_AGE_SECONDS, |st, _, s, now| {
            ns_to_secs(now.saturating_sub(st.read_mono_ns[s.index()]))
        }),
        (&QUIETSTAT_SOURCE_UP, |st, _, s, _| {
            let ok = match s {
                AgentSource::System(src) => st.sample.ok(src),
                AgentSource::Processes => st.procs_status == procfs::SourceStatus::Ok,
                AgentSource::Cgroups => st.cgroups_ok(),
            };
            if ok { 1.0 } else { 0.0 }
        }),
    ];
    for (name, get) in fields {
        let mut m = out.family(name)?;
        for &s in &srcs {
            sample_l(&mut m, &[("source", s.key())], get(st, ctx, s, now))?;
        }
        // A source enabled but not scheduled (its file is missing on this
        // kernel or tree) is down, not absent from the list.
        if std::ptr::eq(name, &QUIETSTAT_SOURCE_UP) {
            for s in AgentSource::ALL {
                if ctx.config.source(s).enabled && !st.stats[s.index()].scheduled {
                    sample_l(&mut m, &[("source", s.key())], 0.0)?;
                }
            }
        }
    }
    Ok(())
}

/// The agent's own CPU, wakeups, memory and threads, under its names and
/// under every exporter's `process_*`.
fn usage_figures(out: &mut Out<'_>, st: &State, ctx: &Context) -> Fmt {
    let u = &ctx.usage;
    let mut m = out.family(&QUIETSTAT_AGENT_CPU_SECONDS_TOTAL)?;
    counter_l(&mut m, &[("mode", "user")], ns_to_secs(u.user_ns))?;
    counter_l(&mut m, &[("mode", "system")], ns_to_secs(u.system_ns))?;
    let mut m = out.family(&QUIETSTAT_AGENT_CONTEXT_SWITCHES_TOTAL)?;
    counter_l(&mut m, &[("kind", "voluntary")], u.voluntary_ctxsw as f64)?;
    counter_l(
        &mut m,
        &[("kind", "involuntary")],
        u.involuntary_ctxsw as f64,
    )?;
    one(
        out,
        &QUIETSTAT_AGENT_SAMPLING_WAKEUPS_TOTAL,
        st.sampling_wakeups as f64,
    )?;
    one(
        out,
        &QUIETSTAT_AGENT_RESIDENT_MEMORY_BYTES,
        u.rss_bytes as f64,
    )?;
    one(out, &QUIETSTAT_AGENT_THREADS, u.threads as f64)?;
    if let Some(heap) = sys::heap_in_use() {
        one(out, &QUIETSTAT_AGENT_HEAP_BYTES, heap as f64)?;
    }
    let mem = &st.memory;
    one(
        out,
        &QUIETSTAT_AGENT_MEMORY_CEILING_BYTES,
        mem.ceiling as f64,
    )?;
    one(
        out,
        &QUIETSTAT_AGENT_MEMORY_CHARGED_BYTES,
        mem.charged as f64,
    )?;
    one(
        out,
        &QUIETSTAT_AGENT_SHEDDING,
        f64::from(u8::from(mem.caps.any())),
    )?;
    one(
        out,
        &QUIETSTAT_AGENT_SHED_EPISODES_TOTAL,
        mem.episodes as f64,
    )?;
    let mut m = out.family(&QUIETSTAT_AGENT_SHED_TOTAL)?;
    counter_l(&mut m, &[("what", "process_rows")], mem.shed.rows as f64)?;
    counter_l(&mut m, &[("what", "cgroups")], mem.shed.cgroups as f64)?;
    counter_l(
        &mut m,
        &[("what", "textfile_files")],
        mem.shed.textfile_files as f64,
    )?;
    one(
        out,
        &QUIETSTAT_AGENT_START_TIME_SECONDS,
        ns_to_secs(ctx.started_unix_ns),
    )?;
    // The standard families every Prometheus exporter serves about its
    // own process (dashboards' "Exporter" panels read them).
    one(
        out,
        &PROCESS_CPU_SECONDS_TOTAL,
        ns_to_secs(u.user_ns + u.system_ns),
    )?;
    for (f, v) in [
        (&PROCESS_RESIDENT_MEMORY_BYTES, Some(u.rss_bytes)),
        (&PROCESS_VIRTUAL_MEMORY_BYTES, Some(u.virtual_bytes)),
        // Only here: the JSON API's usage has no need of a directory
        // listing per request.
        (&PROCESS_OPEN_FDS, sys::open_fds()),
        (&PROCESS_MAX_FDS, sys::fd_limit()),
    ] {
        if let Some(v) = v {
            one(out, f, v as f64)?;
        }
    }
    one(
        out,
        &PROCESS_START_TIME_SECONDS,
        ns_to_secs(ctx.started_unix_ns),
    )?;
    Ok(())
}

/// The history's size, writes and flushes.
fn store_figures(out: &mut Out<'_>, s: &store::Stats) -> Fmt {
    use std::sync::atomic::Ordering::Relaxed;
    one(
        out,
        &QUIETSTAT_STORE_BYTES,
        s.bytes_on_disk.load(Relaxed) as f64,
    )?;
    one(
        out,
        &QUIETSTAT_STORE_RECORDING,
        f64::from(u8::from(s.recording.load(Relaxed))),
    )?;
    let mut m = out.family(&QUIETSTAT_STORE_WRITTEN_BYTES_TOTAL)?;
    for (src, n) in s.written() {
        sample_l(&mut m, &[("source", src)], n as f64)?;
    }
    for (f, v) in [
        (&QUIETSTAT_STORE_ROWS_TOTAL, &s.rows),
        (&QUIETSTAT_STORE_DROPPED_SAMPLES_TOTAL, &s.dropped),
        (&QUIETSTAT_STORE_FLUSHES_TOTAL, &s.flushes),
        (&QUIETSTAT_STORE_FAILED_FLUSHES_TOTAL, &s.failed_flushes),
    ] {
        one(out, f, v.load(Relaxed) as f64)?;
    }
    one(
        out,
        &QUIETSTAT_STORE_WRITE_SECONDS_TOTAL,
        ns_to_secs(s.write_ns.load(Relaxed)),
    )?;
    Ok(())
}

/// The HTTP server's connections and answers.
fn http_figures(out: &mut Out<'_>, h: &HttpStats) -> Fmt {
    use std::sync::atomic::Ordering::Relaxed;
    one(
        out,
        &QUIETSTAT_HTTP_CONNECTIONS,
        h.open.load(Relaxed) as f64,
    )?;
    one(
        out,
        &QUIETSTAT_HTTP_CONNECTIONS_MAX,
        h.max.load(Relaxed) as f64,
    )?;
    for (f, v) in [
        (&QUIETSTAT_HTTP_CONNECTIONS_EVICTED_TOTAL, &h.evicted),
        (&QUIETSTAT_HTTP_CONNECTIONS_REFUSED_TOTAL, &h.refused),
        (&QUIETSTAT_HTTP_ACCEPT_ERRORS_TOTAL, &h.accept_errors),
        (&QUIETSTAT_HTTP_REQUESTS_ABANDONED_TOTAL, &h.abandoned),
    ] {
        one(out, f, v.load(Relaxed) as f64)?;
    }
    let mut m = out.family(&QUIETSTAT_HTTP_REQUESTS_TOTAL)?;
    for (code, n) in h.answered() {
        sample_l(&mut m, &[("code", code.to_string())], n as f64)?;
    }
    Ok(())
}

/// node_exporter's per-collector figures, from the agent's per-source ones:
/// the duration of the last read (read and parse) of the collector's
/// sources, and whether it succeeded: every source it needs is scheduled
/// (its file present, the source enabled) and was read without error, and
/// so was every optional one that is scheduled. As node_exporter lists
/// only the collectors it runs, a collector is listed only when served:
/// some source of it enabled, and, for one off by default
/// ([`agent::config::COLLECTORS_OFF_BY_DEFAULT`]), turned on.
fn collectors(out: &mut Out<'_>, st: &State, ctx: &Context) -> Fmt {
    let ok = |s: AgentSource| match s {
        AgentSource::System(src) => st.sample.ok(src),
        AgentSource::Processes => st.procs_status == procfs::SourceStatus::Ok,
        AgentSource::Cgroups => st.cgroups_ok(),
    };
    let scheduled =
        |s: &AgentSource| st.stats[s.index()].scheduled && ctx.config.source(*s).enabled;
    let table = node_collectors();
    let mut rows = Vec::with_capacity(table.len());
    for c in table {
        let all = c.required.iter().chain(&c.optional);
        let off = agent::config::COLLECTORS_OFF_BY_DEFAULT.contains(&c.name)
            && !ctx.config.collector_on(c.name);
        if off || !all.clone().any(|s| ctx.config.source(*s).enabled) {
            continue;
        }
        let secs: u64 = all
            .clone()
            .filter(|s| scheduled(s))
            .map(|s| st.stats[s.index()].last_cost_ns)
            .sum();
        let success = c.required.iter().all(|s| scheduled(s) && ok(*s))
            && c.optional.iter().filter(|s| scheduled(s)).all(|s| ok(*s));
        rows.push((c.name, ns_to_secs(secs), if success { 1.0 } else { 0.0 }));
    }
    let mut m = out.family(&NODE_SCRAPE_COLLECTOR_DURATION_SECONDS)?;
    for (name, secs, _) in &rows {
        gauge_l(&mut m, &[("collector", *name)], *secs)?;
    }
    let mut m = out.family(&NODE_SCRAPE_COLLECTOR_SUCCESS)?;
    for (name, _, success) in &rows {
        gauge_l(&mut m, &[("collector", *name)], *success)?;
    }
    Ok(())
}
