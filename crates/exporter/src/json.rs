//! `/api/v1/snapshot`: the latest snapshot of chosen sources as JSON, with
//! each source's age and status and the agent's own figures.

use std::time::Duration;
use sys::Error;

use agent::config::{AgentSource, Mask};
use agent::{SelfUsage, State};
use model::columns::{self, Column, NoExtra, Row};
use serde_json::{Map, Value, json};

/// Parses `sources=` (comma-separated source names or their aliases, such
/// as `pressure/cpu`; empty or absent: all) into a source mask.
pub fn parse_sources(list: Option<&str>) -> Result<Mask, Error> {
    let Some(list) = list.filter(|l| !l.trim().is_empty()) else {
        return Ok(AgentSource::ALL.into_iter().fold(0, |m, s| m | s.bit()));
    };
    let mut mask = 0;
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let s = AgentSource::from_key(name).ok_or_else(|| {
            Error::invalid(format!(
                "sources: unknown source {name:?}; accepted: {}",
                AgentSource::keys()
            ))
        })?;
        mask |= s.bit();
    }
    Ok(mask)
}

/// Parses `max_age_ms=`: whole milliseconds, 0 to one day.
pub fn parse_max_age(v: Option<&str>) -> Result<Option<Duration>, Error> {
    let Some(v) = v else { return Ok(None) };
    match v.trim().parse::<u64>() {
        Ok(ms) if ms <= 86_400_000 => Ok(Some(Duration::from_millis(ms))),
        _ => Err(Error::invalid(format!(
            "max_age_ms: {v:?} is not a whole number of milliseconds from 0 to 86400000"
        ))),
    }
}

/// The columns of the JSON API's process rows: every process field but the
/// command line, which the agent does not keep.
fn row_columns() -> Vec<&'static Column> {
    columns::ALL
        .iter()
        .copied()
        .filter(|c| c.field != proctable::Field::Cmdline)
        .collect()
}

/// The snapshot of the sources in `mask`.
/// `uptime_s`: seconds since the agent started, for reads per second.
/// `process_rows`: whether processes are listed (else only counted).
pub fn snapshot(
    st: &State,
    mask: Mask,
    usage: &SelfUsage,
    now_mono_ns: u64,
    uptime_s: f64,
    process_rows: bool,
) -> Value {
    let mut sources = Map::new();
    let cols = row_columns();
    for s in AgentSource::ALL {
        let i = s.index();
        if mask & s.bit() == 0 || !st.stats[i].scheduled {
            continue;
        }
        let age_ms = now_mono_ns.saturating_sub(st.read_mono_ns[i]) as f64 / 1e6;
        let entry = match s {
            AgentSource::System(src) => json!({
                "age_ms": age_ms,
                "status": st.sample.status[src as usize],
                "data": if st.sample.ok(src) {
                    serde_json::to_value(procfs::SourceData(&st.sample, src)).unwrap_or(Value::Null)
                } else {
                    Value::Null
                },
            }),
            AgentSource::Processes => {
                let mut e = json!({
                    "age_ms": age_ms,
                    "status": st.procs_status,
                    "backend": st.backend,
                    "interval_s": st.procs_secs,
                    "count": st.procs.len(),
                    "exits": {
                        "capture": st.exits.capture,
                        "captured_total": st.exits.captured,
                        "lost_total": st.exits.lost,
                    },
                });
                if process_rows {
                    e["rows"] = json!(
                        st.procs
                            .iter()
                            .map(|p| Row {
                                proc: p,
                                columns: &cols,
                                extra: &NoExtra
                            })
                            .collect::<Vec<_>>()
                    );
                    e["exits"]["since_last_read"] = json!(st.exits.last);
                } else {
                    // Counts only: which processes run, and their commands,
                    // are not everyone's to see.
                    e["rows"] = Value::Null;
                    e["rows_note"] = json!(
                        "process rows are not exposed; set http_process_rows = true to list them"
                    );
                    e["exits"]["since_last_read"] = json!(st.exits.last.len());
                }
                e
            }
            AgentSource::Cgroups => {
                let c = &st.cgroups;
                let mut e = json!({
                    "age_ms": age_ms,
                    "count": c.cgroups.len(),
                    "left_out": c.left_out,
                    "files_not_read": c.errors,
                    "first_error": c.first_error,
                });
                // Cgroup paths name services and containers: listed under
                // the same setting as process rows.
                e["rows"] = if process_rows {
                    json!(
                        c.cgroups
                            .iter()
                            .map(|g| {
                                let ids = model::cgroup::container_ids(&g.path);
                                json!({
                                    "path": g.path,
                                    "id": g.id,
                                    "depth": g.depth,
                                    "container_id": ids.container_id,
                                    "pod_uid": ids.pod_uid,
                                    "figures": g.figures.iter().map(|(f, v)| (f.name().to_string(), json!(v))).collect::<Map<_, _>>(),
                                })
                            })
                            .collect::<Vec<_>>()
                    )
                } else {
                    Value::Null
                };
                e
            }
        };
        sources.insert(s.key().to_string(), entry);
    }
    let costs: Map<String, Value> = AgentSource::ALL
        .into_iter()
        .filter(|s| st.stats[s.index()].scheduled)
        .map(|s| {
            let c = &st.stats[s.index()];
            (
                s.key().to_string(),
                json!({
                    "reads": c.reads,
                    "reads_per_s": c.reads as f64 / uptime_s.max(1e-9),
                    "demand_reads": c.demand_reads,
                    "read_ns": c.read_ns,
                    "parse_ns": c.parse_ns,
                    "cpu_ns": c.cpu_ns,
                    "bytes": c.bytes,
                    "last_cost_ns": c.last_cost_ns,
                    "interval_ms": c.interval.as_millis() as u64,
                }),
            )
        })
        .collect();
    let mut agent = json!({
        "housekeeping_cpus": st.housekeeping.to_string(),
        "backend": st.backend,
        "backend_note": st.backend_note,
        "sampling_wakeups": st.sampling_wakeups,
        "cpu_user_ns": usage.user_ns,
        "cpu_system_ns": usage.system_ns,
        "sources": costs,
    });
    // The agent's own process figures, under the process fields' names.
    for (col, v) in [
        (&columns::VOLUNTARY_CTXSW, usage.voluntary_ctxsw),
        (&columns::INVOLUNTARY_CTXSW, usage.involuntary_ctxsw),
        (&columns::RSS_BYTES, usage.rss_bytes),
        (&columns::THREADS, usage.threads),
    ] {
        agent[col.name] = json!(v);
    }
    json!({
        "unix_ns": st.sample.unix_ns,
        "sources": sources,
        "agent": agent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use procfs::Source;

    #[test]
    fn source_lists_accept_keys_and_proc_names_and_name_bad_ones() {
        let m = parse_sources(Some("stat, pressure/cpu,processes")).unwrap();
        assert_eq!(
            m,
            AgentSource::System(Source::Stat).bit()
                | AgentSource::System(Source::PressureCpu).bit()
                | AgentSource::Processes.bit()
        );
        let e = parse_sources(Some("stat,cpu_info"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"cpu_info\"") && e.contains("meminfo"), "{e}");
        assert_eq!(
            parse_sources(None).unwrap().count_ones() as usize,
            agent::config::SOURCE_COUNT
        );
    }

    #[test]
    fn max_age_must_be_whole_milliseconds() {
        assert_eq!(
            parse_max_age(Some("250")).unwrap(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_max_age(None).unwrap(), None);
        for bad in ["-1", "1.5", "soon", "99999999999"] {
            let e = parse_max_age(Some(bad)).unwrap_err().to_string();
            assert!(e.contains("max_age_ms") && e.contains(bad), "{e}");
        }
    }
}
