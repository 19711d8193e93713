//! The metric table, defined once, and its encoding from the agent's state.
//!
//! Every family node_exporter also exports keeps node_exporter's name,
//! labels, units and type, so dashboards work unchanged; the rest are
//! `quietstat_*`. [`FAMILIES`] lists them all (docs/metrics.md is checked
//! against it by a test); a family name containing `*` stands for one family
//! per kernel key (`node_memory_MemTotal_bytes`, `node_vmstat_pgfault`).
//!
//! Encoding goes through prometheus-client's OpenMetrics encoder; the classic
//! text format (0.0.4) is derived from it by `text::TextFormat`. A scrape is
//! encoded a part at a time ([`Exposition`], [`Encoding`]): a collector's
//! families, the per-process ones, the agent's own, the textfile
//! directory's, each under the state's read lock for that part alone, cut
//! into chunks of 64 KiB as it goes, so its memory does not grow with the
//! exposition.
//!
//! The files: `families.rs` (the catalog), `compat.rs` (the collector
//! table and the node_exporter rules several collectors share), the
//! encoders (`collector/` one file per
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

mod cgroup;
mod collector;
mod compat;
pub mod families;
mod out;
mod own;
mod process;
mod text;

pub use collector::vmstat_exported;
pub use compat::{NOT_HERE, collector_names, collector_sources, disk_excluded};
pub use families::{FAMILIES, Family, Kind, family};
use out::{Fmt, Out};

/// What an encoding needs besides the state.
pub struct Context {
    pub config: Arc<Config>,
    pub usage: SelfUsage,
    pub started_unix_ns: u64,
    /// The HTTP server's connection figures, when one serves.
    pub http: Option<Arc<HttpStats>>,
    /// The history store's figures, when recording.
    pub store: Option<Arc<store::Stats>>,
    /// Each remote-write receiver's figures.
    pub remote_write: Vec<Arc<store::sent::Stats>>,
    /// Whether the figures about the agent itself are served (off with
    /// node_exporter's `--web.disable-exporter-metrics`).
    pub exporter_metrics: bool,
}

/// One part of an exposition: a collector's families, the per-process
/// families, the agent's own, or the textfile directory's.
#[derive(Debug, Clone, Copy)]
enum Part {
    Collector(usize),
    Processes,
    Cgroups,
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
    /// [`Part::unlocked`], as the encoding decided it.
    unlocked: bool,
    /// Sources whose families are left out (sent from the history).
    leave_out: Arc<[procfs::Source]>,
    /// Whether the families of the process tables and of the cgroups'
    /// walks are left out (sent from the history).
    leave_out_tables: bool,
}

impl std::fmt::Debug for PartCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PartCollector({:?})", self.part)
    }
}

impl Part {
    /// Whether its chunks may wait for the reader: no lock is held while
    /// they are made. The collectors that are off by default
    /// (`agent::config::COLLECTORS_OFF_BY_DEFAULT`), whose families grow as
    /// CPUs times IRQs or vectors, are, when on, encoded from a copy of
    /// their sources, far smaller than their series (the 4,096-CPU
    /// fixture's interrupts: 7 MB of counts, 96 MB of series), so their
    /// answer can wait for its reader instead of being held whole.
    fn unlocked(self, config: &Config) -> bool {
        match self {
            Part::Textfile => true,
            Part::Collector(i) => config.collector_on(collector::ENCODERS[i].0),
            Part::Processes | Part::Cgroups | Part::Own => false,
        }
    }
}

impl Collector for PartCollector {
    fn encode(&self, enc: DescriptorEncoder) -> Fmt {
        let mut out = Out { enc };
        let st = self.shared.state.read().unwrap_or_else(|e| e.into_inner());
        let sources = |i: usize| compat::collector_sources(collector::ENCODERS[i].0);
        let part_left_out = |i: usize| {
            sources(i).unwrap_or_default().iter().any(|s| {
                matches!(s, agent::config::AgentSource::System(s) if self.leave_out.contains(s))
            })
        };
        if let Part::Collector(i) = self.part
            && (self.unlocked || part_left_out(i))
        {
            let encode = collector::ENCODERS[i].1;
            let mut copy = agent::State::default();
            for s in sources(i).unwrap_or_default() {
                if let agent::config::AgentSource::System(s) = s
                    && !self.leave_out.contains(&s)
                {
                    copy.sample.copy_source(&st.sample, s);
                }
            }
            drop(st);
            let x = collector::Input {
                st: &copy,
                s: &copy.sample,
                ctx: &self.ctx,
            };
            return encode(&mut out, &x);
        }
        let x = collector::Input {
            st: &st,
            s: &st.sample,
            ctx: &self.ctx,
        };
        match self.part {
            Part::Collector(i) => (collector::ENCODERS[i].1)(&mut out, &x),
            Part::Processes => {
                let parts = match self.leave_out_tables {
                    true => process::Parts::Reading,
                    false => process::Parts::All,
                };
                process::processes(&mut out, &st, &self.ctx.config.process_metrics, parts)
            }
            Part::Cgroups if self.leave_out_tables => Ok(()),
            Part::Cgroups => cgroup::cgroups(&mut out, &st, &self.ctx.config.cgroup_metrics),
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

/// What a [`Sink`] did with a chunk offered to it.
#[derive(Debug, PartialEq, Eq)]
pub enum Offered {
    Taken,
    /// No room at once: the chunk, given back.
    Back(String),
}

/// Where an exposition's chunks go.
pub trait Sink {
    /// Takes `chunk` if it can at once, else gives it back.
    fn offer(&mut self, chunk: String) -> Offered;
    /// Takes `chunk`, waiting for room; false when the reader is gone.
    fn wait(&mut self, chunk: String) -> bool;
}

/// A chunk is cut from what was encoded once this much is there.
const CHUNK: usize = 64 * 1024;
/// A part made without the lock holds this much for a slow reader before
/// it waits for it (holding an encoder thread): an exposition of ordinary
/// size never keeps a thread from other scrapes.
const HOLD: usize = 4 << 20;

/// The writer a part is encoded into: whole lines are cut into chunks as
/// the encoding goes and offered to the reader; what it cannot take yet is
/// held until the part ends. While the state's lock is held nothing waits;
/// a part made without the lock waits for its reader once [`HOLD`] is
/// held.
struct Chunker<'o> {
    sink: &'o mut dyn Sink,
    text: &'o mut Option<text::TextFormat>,
    buf: String,
    held: Vec<String>,
    held_bytes: usize,
    may_wait: bool,
    gone: bool,
}

impl std::fmt::Write for Chunker<'_> {
    fn write_str(&mut self, s: &str) -> Fmt {
        self.buf.push_str(s);
        if self.buf.len() >= CHUNK {
            self.cut();
        }
        if self.gone {
            return Err(std::fmt::Error);
        }
        Ok(())
    }
}

impl Chunker<'_> {
    /// Hands on the whole lines written so far (after what is held, in
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
        let chunk = if self.held.is_empty() {
            match self.sink.offer(chunk) {
                Offered::Taken => return,
                Offered::Back(c) => c,
            }
        } else {
            chunk
        };
        if !self.may_wait || self.held_bytes + chunk.len() <= HOLD {
            self.held_bytes += chunk.len();
            self.held.push(chunk);
            return;
        }
        for c in std::mem::take(&mut self.held) {
            if !self.sink.wait(c) {
                self.gone = true;
                return;
            }
        }
        self.held_bytes = 0;
        self.gone = !self.sink.wait(chunk);
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
    exporter_metrics: bool,
}

/// One scrape's encoding, a part at a time ([`Encoding::next_part`]).
pub struct Encoding {
    shared: Arc<Shared>,
    ctx: Arc<Context>,
    /// The next part: the collectors, then processes, own, textfile, EOF.
    next: usize,
    openmetrics: bool,
    text: Option<text::TextFormat>,
    /// Sources whose families are left out.
    leave_out: Arc<[procfs::Source]>,
    leave_out_tables: bool,
}

/// The collectors with a source the history records (indices of the
/// encoder table): a remote-write receiver is sent their families of the
/// recorded sources from the history, at the resolution recorded, and the
/// rest live.
pub fn recorded_collectors() -> Vec<usize> {
    (0..collector::ENCODERS.len())
        .filter(|&i| {
            compat::collector_sources(collector::ENCODERS[i].0).is_some_and(|s| {
                s.iter().any(|s| {
                    matches!(s, agent::config::AgentSource::System(s) if store::RECORDED.contains(s))
                })
            })
        })
        .collect()
}

/// What a [`Replay`] encodes.
#[derive(Debug, Clone)]
pub enum Replayed {
    /// The collectors given (indices of the encoder table).
    Collectors(Vec<usize>),
    /// The per-process families of a process table.
    Processes,
    /// The per-cgroup families of a walk.
    Cgroups,
}

/// The encoding of a state that is not the agent's live one (a sample, a
/// process table or a walk of the cgroups read back from the history), as
/// OpenMetrics text.
pub struct Replay {
    state: Arc<std::sync::RwLock<agent::State>>,
    registry: Registry,
}

/// [`Replay`]'s collector: what it encodes, from its state.
struct ReplayCollector {
    state: Arc<std::sync::RwLock<agent::State>>,
    ctx: Arc<Context>,
    what: Replayed,
}

impl std::fmt::Debug for ReplayCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReplayCollector({:?})", self.what)
    }
}

impl Collector for ReplayCollector {
    fn encode(&self, enc: DescriptorEncoder) -> Fmt {
        let mut out = Out { enc };
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        let config = &self.ctx.config;
        match &self.what {
            Replayed::Collectors(which) => {
                let x = collector::Input {
                    st: &st,
                    s: &st.sample,
                    ctx: &self.ctx,
                };
                for &i in which {
                    (collector::ENCODERS[i].1)(&mut out, &x)?;
                }
                Ok(())
            }
            Replayed::Processes => process::processes(
                &mut out,
                &st,
                &config.process_metrics,
                process::Parts::Table,
            ),
            Replayed::Cgroups => cgroup::cgroups(&mut out, &st, &config.cgroup_metrics),
        }
    }
}

impl Replay {
    /// Encodes `what` as `config` has it.
    pub fn new(config: Arc<Config>, what: Replayed) -> Replay {
        let mut st = agent::State::default();
        let source = match what {
            Replayed::Collectors(_) => None,
            Replayed::Processes => Some(agent::config::AgentSource::Processes),
            Replayed::Cgroups => Some(agent::config::AgentSource::Cgroups),
        };
        if let Some(s) = source {
            // What was recorded was read: its families are served.
            st.stats[s.index()].scheduled = true;
        }
        let state = Arc::new(std::sync::RwLock::new(st));
        let ctx = Arc::new(Context {
            config,
            usage: SelfUsage::default(),
            started_unix_ns: 0,
            http: None,
            store: None,
            remote_write: Vec::new(),
            exporter_metrics: false,
        });
        let mut registry = Registry::default();
        registry.register_collector(Box::new(ReplayCollector {
            state: state.clone(),
            ctx,
            what,
        }));
        Replay { state, registry }
    }

    /// The state encoded next: every source not read until set.
    pub fn sample(&self) -> std::sync::RwLockWriteGuard<'_, agent::State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends the exposition of the state to `out` (without `# EOF`).
    pub fn encode(&self, out: &mut String) -> Fmt {
        prometheus_client::encoding::text::encode_registry(out, &self.registry)
    }
}

/// A sink keeping every chunk, in order.
impl Sink for String {
    fn offer(&mut self, chunk: String) -> Offered {
        self.push_str(&chunk);
        Offered::Taken
    }
    fn wait(&mut self, chunk: String) -> bool {
        self.push_str(&chunk);
        true
    }
}

impl Exposition {
    /// The exposition of `shared` (and of the HTTP server's figures, when
    /// given).
    pub fn new(shared: Arc<Shared>, http: Option<Arc<HttpStats>>) -> Exposition {
        Exposition {
            shared,
            http,
            exporter_metrics: true,
        }
    }

    /// Without the figures about the agent itself (its process, reads,
    /// budget, store and HTTP server), as node_exporter's
    /// `--web.disable-exporter-metrics`; `node_scrape_collector_*` stay.
    pub fn without_exporter_metrics(self) -> Exposition {
        Exposition {
            exporter_metrics: false,
            ..self
        }
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
                remote_write: self.shared.remote_write.get().cloned().unwrap_or_default(),
                exporter_metrics: self.exporter_metrics,
            }),
            next: 0,
            openmetrics,
            text: (!openmetrics).then(text::TextFormat::default),
            leave_out: Arc::new([]),
            leave_out_tables: false,
        }
    }
}

impl Encoding {
    /// Leaves out the families of the sources `sources`.
    pub fn without(mut self, sources: &[procfs::Source]) -> Encoding {
        self.leave_out = sources.into();
        self
    }

    /// Leaves out the families of the process tables and of the cgroups'
    /// walks (the history records them); the agent's counts of its reading
    /// of the processes stay.
    pub fn without_tables(mut self) -> Encoding {
        self.leave_out_tables = true;
        self
    }

    /// The whole of what is left, as one text (for a push, not a scrape).
    pub fn whole(mut self) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        while let Some(r) = self.next_part(&mut out) {
            for c in r? {
                out.push_str(&c);
            }
        }
        Ok(out)
    }

    /// Whether the next part may be of any size: one made without the
    /// state's lock (the textfile directory's, when it holds files; a
    /// per-CPU collector that is off by default, when on). An answer
    /// encoded whole stops before it and streams the rest.
    pub fn next_part_unbounded(&self) -> bool {
        let n = collector::ENCODERS.len();
        let part = match self.next {
            i if i < n => Part::Collector(i),
            i if i == n + 3 => Part::Textfile,
            _ => return false,
        };
        if !part.unlocked(&self.ctx.config) {
            return false;
        }
        match part {
            Part::Textfile => {
                let st = self.shared.state.read().unwrap_or_else(|e| e.into_inner());
                st.sample.ok(procfs::Source::Textfile) && !st.sample.textfile.files.is_empty()
            }
            _ => true,
        }
    }

    /// Encodes the next part into `sink` as it is made; returns the chunks
    /// `sink` could not take at once, to be sent before the next part.
    /// `None` once every part is done; an error when the reader is gone.
    pub fn next_part(
        &mut self,
        sink: &mut dyn Sink,
    ) -> Option<Result<Vec<String>, std::fmt::Error>> {
        let n = collector::ENCODERS.len();
        let part = match self.next {
            i if i < n => Some(Part::Collector(i)),
            i if i == n => Some(Part::Processes),
            i if i == n + 1 => Some(Part::Cgroups),
            i if i == n + 2 => Some(Part::Own),
            i if i == n + 3 => Some(Part::Textfile),
            i if i == n + 4 && self.openmetrics => None,
            _ => return None,
        };
        self.next += 1;
        let unlocked = part.is_some_and(|p| p.unlocked(&self.ctx.config));
        let mut w = Chunker {
            sink,
            text: &mut self.text,
            buf: String::new(),
            held: Vec::new(),
            held_bytes: 0,
            may_wait: unlocked,
            gone: false,
        };
        let r = match part {
            Some(part) => {
                let mut r = Registry::default();
                r.register_collector(Box::new(PartCollector {
                    shared: self.shared.clone(),
                    ctx: self.ctx.clone(),
                    part,
                    unlocked,
                    leave_out: self.leave_out.clone(),
                    leave_out_tables: self.leave_out_tables,
                }));
                prometheus_client::encoding::text::encode_registry(&mut w, &r)
            }
            None => prometheus_client::encoding::text::encode_eof(&mut w),
        };
        if let Err(e) = r {
            return Some(Err(e));
        }
        w.cut();
        let (gone, held) = (w.gone, w.held);
        if unlocked {
            // What a copied or unlocked part freed, on this encoder thread.
            sys::release_free_memory();
        }
        if gone {
            return Some(Err(std::fmt::Error));
        }
        Some(Ok(held))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    /// Takes nothing at once; records what it waited for.
    #[derive(Default)]
    struct Slow {
        waited: Vec<String>,
        gone: bool,
    }

    impl Sink for Slow {
        fn offer(&mut self, chunk: String) -> Offered {
            Offered::Back(chunk)
        }
        fn wait(&mut self, chunk: String) -> bool {
            self.waited.push(chunk);
            !self.gone
        }
    }

    fn chunker<'o>(
        sink: &'o mut Slow,
        text: &'o mut Option<text::TextFormat>,
        may_wait: bool,
    ) -> Chunker<'o> {
        Chunker {
            sink,
            text,
            buf: String::new(),
            held: Vec::new(),
            held_bytes: 0,
            may_wait,
            gone: false,
        }
    }

    /// `n` lines of a chunk's size each, numbered.
    fn write_lines(w: &mut Chunker<'_>, n: usize) -> Fmt {
        for i in 0..n {
            let mut line = format!("line{i} ");
            line.push_str(&"x".repeat(CHUNK - line.len() - 1));
            line.push('\n');
            w.write_str(&line)?;
        }
        Ok(())
    }

    fn number(chunk: &str) -> usize {
        chunk[4..chunk.find(' ').unwrap()].parse().unwrap()
    }

    #[test]
    fn under_the_lock_a_slow_reader_s_chunks_are_held_in_order_never_waited_for() {
        let (mut sink, mut text) = (Slow::default(), None);
        let mut w = chunker(&mut sink, &mut text, false);
        let n = HOLD / CHUNK + 8;
        write_lines(&mut w, n).unwrap();
        w.cut();
        let held: Vec<usize> = w.held.iter().map(|c| number(c)).collect();
        assert_eq!(held, (0..n).collect::<Vec<_>>());
        assert!(sink.waited.is_empty());
    }

    #[test]
    fn without_the_lock_a_slow_reader_is_waited_for_once_the_hold_is_full() {
        let (mut sink, mut text) = (Slow::default(), None);
        let mut w = chunker(&mut sink, &mut text, true);
        let n = HOLD / CHUNK + 8;
        write_lines(&mut w, n).unwrap();
        w.cut();
        let held: Vec<usize> = w.held.iter().map(|c| number(c)).collect();
        assert!(w.held_bytes <= HOLD, "{} bytes held", w.held_bytes);
        let waited: Vec<usize> = sink.waited.iter().map(|c| number(c)).collect();
        // Every chunk once, in order: first those waited for, then those
        // held at the end.
        let all: Vec<usize> = waited.iter().chain(&held).copied().collect();
        assert_eq!(all, (0..n).collect::<Vec<_>>());
        assert!(!waited.is_empty());
    }

    #[test]
    fn a_reader_gone_stops_the_encoding() {
        let (mut sink, mut text) = (
            Slow {
                gone: true,
                ..Slow::default()
            },
            None,
        );
        let mut w = chunker(&mut sink, &mut text, true);
        assert!(write_lines(&mut w, HOLD / CHUNK + 2).is_err());
    }
}
