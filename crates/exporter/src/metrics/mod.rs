//! The metric table, defined once, and its encoding from the agent's state.
//!
//! Every family node_exporter also exports keeps node_exporter's name,
//! labels, units and type, so dashboards work unchanged; the rest are
//! `quietstat_*`. [`FAMILIES`] lists them all (docs/metrics.md is checked
//! against it by a test); a family name containing `*` stands for one family
//! per kernel key (`node_memory_MemTotal_bytes`, `node_vmstat_pgfault`).
//!
//! Encoding goes through prometheus-client's OpenMetrics encoder; the classic
//! text format (0.0.4) is derived from it by [`to_text_format`].
//!
//! The files: `families.rs` (the catalog), `compat.rs` (node_exporter's
//! rules and the collector table), the encoders (`collector/` one file per
//! node_exporter collector and their table; `process.rs` and `own.rs` the
//! agent's own), `out.rs` (typed writing), `text.rs` (the 0.0.4 text
//! format).

use std::sync::Arc;

use agent::config::Config;
use agent::{SelfUsage, Shared, State};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::registry::Registry;

use crate::http_stats::HttpStats;

mod collector;
mod compat;
mod families;
mod out;
mod own;
mod process;
mod text;

pub use compat::{NOT_HERE, collector_names, collector_sources, disk_excluded, vmstat_exported};
pub use families::{FAMILIES, Family, Kind, family};
use out::{Fmt, Out};
pub use text::to_text_format;

/// What an encoding needs besides the state.
pub struct Context {
    pub config: Arc<Config>,
    pub usage: SelfUsage,
    pub started_unix_ns: u64,
    /// The HTTP server's connection figures, when one serves.
    pub http: Option<Arc<HttpStats>>,
    /// The history store's figures, when recording.
    pub store: Option<Arc<store::Stats>>,
}

/// The prometheus-client collector: on each scrape it takes the state's read
/// lock and encodes the latest snapshots. It reads no kernel file itself
/// but the agent's own usage (one getrusage call, /proc/self/statm, and
/// the listings of /proc/self/task and /proc/self/fd).
struct AgentCollector(Arc<Shared>, Option<Arc<HttpStats>>);

impl std::fmt::Debug for AgentCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentCollector")
    }
}

impl Collector for AgentCollector {
    fn encode(&self, enc: DescriptorEncoder) -> Fmt {
        let ctx = Context {
            config: self.0.config(),
            usage: agent::self_usage(),
            started_unix_ns: self.0.started_unix_ns,
            http: self.1.clone(),
            store: self.0.store.get().cloned(),
        };
        let mut out = Out { enc };
        // The textfile families (any number of series other programs
        // wrote) are encoded after the state's lock is let go: the sampler
        // commits meanwhile.
        let textfile = {
            let st = self.0.state.read().unwrap_or_else(|e| e.into_inner());
            encode_state(&mut out, &st, &ctx)?;
            st.sample
                .ok(procfs::Source::Textfile)
                .then(|| st.sample.textfile.clone())
        };
        match textfile {
            Some(t) => collector::textfile::textfile(&mut out, &t),
            None => Ok(()),
        }
    }
}

/// A registry whose one collector serves the agent's state (and the HTTP
/// server's figures, when given).
pub fn registry(shared: Arc<Shared>, http: Option<Arc<HttpStats>>) -> Registry {
    let mut r = Registry::default();
    r.register_collector(Box::new(AgentCollector(shared, http)));
    r
}

/// Everything, as OpenMetrics text (ending in `# EOF`).
pub fn encode_openmetrics(registry: &Registry, w: &mut String) -> Fmt {
    prometheus_client::encoding::text::encode(w, registry)
}

/// Everything but the textfile families ([`collector::textfile`]).
fn encode_state(out: &mut Out<'_>, st: &State, ctx: &Context) -> Fmt {
    let x = collector::Input {
        st,
        s: &st.sample,
        ctx,
    };
    for (_, encode) in collector::ENCODERS {
        encode(out, &x)?;
    }
    process::processes(out, st, &ctx.config.process_metrics)?;
    own::agent_figures(out, st, ctx)
}
