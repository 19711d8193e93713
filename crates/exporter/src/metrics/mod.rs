//! The metric table, defined once, and its encoding from the agent's state.
//!
//! Every family node_exporter also exports keeps node_exporter's name,
//! labels, units and type, so dashboards work unchanged; the rest are
//! `quietstat_*`. [`FAMILIES`] lists them all (docs/metrics.md is checked
//! against it by a test); a family name containing `*` stands for one family
//! per kernel key (`node_memory_MemTotal_bytes`, `node_vmstat_pgfault`).
//!
//! Encoding goes through prometheus-client's OpenMetrics encoder; the classic
//! text format (0.0.4) is derived from it by [`to_text_format`]. A scrape is
//! encoded a part at a time ([`Exposition`], [`Encoding`]): a collector's
//! families, the per-process ones, the agent's own, the textfile
//! directory's, each under the state's read lock for that part alone, cut
//! into chunks of 64 KiB as it goes, so its memory does not grow with the
//! exposition.
//!
//! The files: `families.rs` (the catalog), `compat.rs` (node_exporter's
//! rules and the collector table), the encoders (`collector/` one file per
//! node_exporter collector and their table; `process.rs` and `own.rs` the
//! agent's own), `out.rs` (typed writing), `text.rs` (the 0.0.4 text
//! format).

use std::sync::Arc;

use agent::config::Config;
use agent::{SelfUsage, Shared};
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

/// One part of an exposition: a collector's families, the per-process
/// families, the agent's own, or the textfile directory's.
#[derive(Debug, Clone, Copy)]
enum Part {
    Collector(usize),
    Processes,
    Own,
    Textfile,
}

/// The prometheus-client collector of one part: it takes the state's read
/// lock for that part alone and encodes the latest snapshots. It reads no
/// kernel file.
struct PartCollector {
    shared: Arc<Shared>,
    ctx: Arc<Context>,
    part: Part,
}

impl std::fmt::Debug for PartCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PartCollector({:?})", self.part)
    }
}

impl Collector for PartCollector {
    fn encode(&self, enc: DescriptorEncoder) -> Fmt {
        let mut out = Out { enc };
        let st = self.shared.state.read().unwrap_or_else(|e| e.into_inner());
        let x = collector::Input {
            st: &st,
            s: &st.sample,
            ctx: &self.ctx,
        };
        match self.part {
            Part::Collector(i) => (collector::ENCODERS[i].1)(&mut out, &x),
            Part::Processes => process::processes(&mut out, &st, &self.ctx.config.process_metrics),
            Part::Own => own::agent_figures(&mut out, &st, &self.ctx),
            // Any number of series other programs wrote: encoded after the
            // lock is let go, so the sampler commits meanwhile.
            Part::Textfile => {
                let t = st
                    .sample
                    .ok(procfs::Source::Textfile)
                    .then(|| st.sample.textfile.clone());
                drop(st);
                match t {
                    Some(t) => collector::textfile::textfile(&mut out, &t),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Takes a chunk of an exposition if it can at once, else gives it back.
pub type Offer<'a> = dyn FnMut(String) -> Result<(), String> + 'a;

/// A chunk is cut from what was encoded once this much is there.
const CHUNK: usize = 64 * 1024;

/// The writer a part is encoded into: whole lines are cut into chunks and
/// offered as the encoding goes (the state's lock may be held: nothing
/// waits); what the reader cannot take yet is held until the part ends.
struct Chunker<'o, 'a> {
    offer: &'o mut Offer<'a>,
    text: &'o mut Option<text::TextFormat>,
    buf: String,
    held: Vec<String>,
}

impl std::fmt::Write for Chunker<'_, '_> {
    fn write_str(&mut self, s: &str) -> Fmt {
        self.buf.push_str(s);
        if self.buf.len() >= CHUNK {
            self.cut();
        }
        Ok(())
    }
}

impl Chunker<'_, '_> {
    /// Offers the whole lines written so far (after what is held, in
    /// order).
    fn cut(&mut self) {
        let Some(end) = self.buf.rfind('\n').map(|i| i + 1) else {
            return;
        };
        let rest = self.buf.split_off(end);
        let om = std::mem::replace(&mut self.buf, rest);
        let chunk = match self.text {
            Some(t) => t.convert(&om),
            None => om,
        };
        if chunk.is_empty() {
            return;
        }
        if !self.held.is_empty() {
            self.held.push(chunk);
        } else if let Err(c) = (self.offer)(chunk) {
            self.held.push(c);
        }
    }
}

/// The agent's exposition, written part by part: each part (a collector,
/// the per-process families, the agent's own, the textfile directory) is
/// encoded while the state's read lock is held for it alone, its chunks
/// offered to the reader as they are made, and what the reader could not
/// take yet sent before the next part is made. A scrape holds a few chunks
/// while its reader keeps up, a part at most while it does not, never the
/// whole exposition; a slow reader holds no lock the sampler needs, and
/// waiting for it needs no thread.
#[derive(Clone)]
pub struct Exposition {
    shared: Arc<Shared>,
    http: Option<Arc<HttpStats>>,
}

/// One scrape's encoding, a part at a time ([`Encoding::next_part`]).
pub struct Encoding {
    shared: Arc<Shared>,
    ctx: Arc<Context>,
    /// The next part: the collectors, then processes, own, textfile, EOF.
    next: usize,
    openmetrics: bool,
    text: Option<text::TextFormat>,
}

impl Exposition {
    /// The exposition of `shared` (and of the HTTP server's figures, when
    /// given).
    pub fn new(shared: Arc<Shared>, http: Option<Arc<HttpStats>>) -> Exposition {
        Exposition { shared, http }
    }

    /// A scrape, as OpenMetrics (ending in `# EOF`) or as the text format
    /// 0.0.4. The agent's own usage (one getrusage call, /proc/self/statm,
    /// and the listings of /proc/self/task and /proc/self/fd) is read here,
    /// once.
    pub fn encoding(&self, openmetrics: bool) -> Encoding {
        Encoding {
            shared: self.shared.clone(),
            ctx: Arc::new(Context {
                config: self.shared.config(),
                usage: agent::self_usage(),
                started_unix_ns: self.shared.started_unix_ns,
                http: self.http.clone(),
                store: self.shared.store.get().cloned(),
            }),
            next: 0,
            openmetrics,
            text: (!openmetrics).then(text::TextFormat::default),
        }
    }

    /// The whole exposition in one string.
    pub fn to_text(&self, openmetrics: bool) -> String {
        let mut all = String::new();
        let mut e = self.encoding(openmetrics);
        let mut take = |c: String| {
            all.push_str(&c);
            Ok(())
        };
        while let Some(Ok(held)) = e.next_part(&mut take) {
            debug_assert!(held.is_empty());
        }
        all
    }
}

impl Encoding {
    /// Encodes the next part, offering its chunks to `offer` as they are
    /// made; returns the chunks `offer` gave back, to be sent before the
    /// next part. `None` once every part is done.
    pub fn next_part(
        &mut self,
        offer: &mut Offer<'_>,
    ) -> Option<Result<Vec<String>, std::fmt::Error>> {
        let n = collector::ENCODERS.len();
        let part = match self.next {
            i if i < n => Some(Part::Collector(i)),
            i if i == n => Some(Part::Processes),
            i if i == n + 1 => Some(Part::Own),
            i if i == n + 2 => Some(Part::Textfile),
            i if i == n + 3 && self.openmetrics => None,
            _ => return None,
        };
        self.next += 1;
        let mut w = Chunker {
            offer,
            text: &mut self.text,
            buf: String::new(),
            held: Vec::new(),
        };
        let r = match part {
            Some(part) => {
                let mut r = Registry::default();
                r.register_collector(Box::new(PartCollector {
                    shared: self.shared.clone(),
                    ctx: self.ctx.clone(),
                    part,
                }));
                prometheus_client::encoding::text::encode_registry(&mut w, &r)
            }
            None => prometheus_client::encoding::text::encode_eof(&mut w),
        };
        if let Err(e) = r {
            return Some(Err(e));
        }
        w.cut();
        Some(Ok(w.held))
    }
}
