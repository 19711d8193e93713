//! Prometheus remote write (1.0), sent from the history: the history is
//! the send queue, so an outage of any length up to the retention, an
//! agent restart or a kill -9 loses nothing.
//!
//! One thread per receiver. It keeps no clock of its own: it wakes when
//! the store's writer has committed a flush (every `flush_interval`, at an
//! instant the sampler is awake for), reads what was recorded after the
//! receiver's send positions, encodes each record with the same encoders
//! `/metrics` uses (`Replay`), and posts it. There is a position per lane
//! (`store::sent::Lane`): the system reads, the walks of the cgroups and
//! the process tables are recorded at their own instants, and each lane
//! is sent in time order. A position is written after each request the
//! receiver acknowledged, so after a kill at most the last
//! unacknowledged request is sent again. Families the history does not
//! record (the agent's own, its counts of its reading of the processes,
//! the collectors of unrecorded sources) are sent live, once a wake, and
//! only then.
//!
//! A failed request (5xx, 429, no answer) is sent again at a later wake,
//! after a backoff that doubles from one flush interval to a minute, or
//! at `Retry-After`; another 4xx is never sent again, its samples counted
//! as dropped for the reason the receiver gave. While catching up, a wake
//! sends at most `catch_up_rate` samples a second since the last wake and
//! spends at most half the agent's overhead budget of CPU.

mod batch;
mod client;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use agent::Shared;
use agent::config::{Config, RemoteWrite, SendOrder};
use store::sent::{Lane, Position, Sent, Stats};

pub use batch::{Batch, Label, Sample, TimeSeries, WriteRequest, decode, parse_line};
pub use client::{Answer, Client, answer};

use crate::metrics::{Exposition, Replay, Replayed, recorded_collectors};

/// The longest wait between two attempts at a receiver that is down.
/// A receiver back after an outage is found within this, and one down
/// costs a failed attempt this often at most.
const MAX_BACKOFF_MS: u64 = 60_000;

/// The running senders; stopped on drop.
pub struct Pushers {
    threads: Vec<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    store: Arc<store::Stats>,
}

impl Drop for Pushers {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        self.store.flushed.close();
        // A sender inside a request that hangs is not waited for past a
        // second: the request's own timeout ends it, or the process does.
        let deadline = Instant::now() + Duration::from_secs(1);
        while self.threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        for t in self.threads.drain(..) {
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}

/// A receiver's name: the one configured, else its URL.
pub fn receiver_name(c: &RemoteWrite) -> String {
    c.name.clone().unwrap_or_else(|| c.url.clone())
}

/// The labels a scrape of this agent would add: `job="node"` and
/// `instance` the host name (from the configured proc root, as the uname
/// source reads it) and the first listen port; the receiver's
/// `external_labels` replace them and add others.
pub fn scrape_labels(config: &Config, external: &[(String, String)]) -> Vec<(String, String)> {
    let host = std::fs::read_to_string(config.proc_root.join("sys/kernel/hostname"))
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let instance = match config.listen.first() {
        Some(a) => format!("{host}:{}", a.port()),
        None => host,
    };
    let mut out = vec![
        ("instance".to_string(), instance),
        ("job".to_string(), "node".to_string()),
    ];
    for (k, v) in external {
        out.retain(|(name, _)| name != k);
        out.push((k.clone(), v.clone()));
    }
    out.sort();
    out
}

/// Starts a sender per configured receiver (none configured: `None`).
/// Refused: remote write without the history (`--no-store`), and a
/// receiver whose files (CAs, certificate, key, password, token) cannot be
/// read.
pub fn start(shared: Arc<Shared>, log: fn(String)) -> Result<Option<Pushers>, sys::Error> {
    let config = shared.config();
    if config.remote_write.is_empty() {
        return Ok(None);
    }
    if !config.store.enabled {
        return Err(sys::Error::invalid(
            "remote_write sends from the history, which --no-store (or [store] enabled = false) turns off",
        ));
    }
    let Some(store) = shared.store.get().cloned() else {
        return Err(sys::Error::invalid(
            "remote_write: the history was not started",
        ));
    };
    let mut senders = Vec::new();
    let mut names = Vec::new();
    for c in &config.remote_write {
        let name = receiver_name(c);
        if names.contains(&name) {
            return Err(sys::Error::invalid(format!(
                "remote_write: two receivers named {name:?}; give each its own name"
            )));
        }
        names.push(name.clone());
        let client = Client::new(c).map_err(|e| e.context(format!("remote_write {name}")))?;
        senders.push(Sender {
            labels: scrape_labels(&config, &c.external_labels),
            c: c.clone(),
            client,
            stats: Arc::new(Stats::named(&name)),
            name,
            replays: Some(Replays::new(&shared)),
            live: Exposition::new(shared.clone(), None),
            dir: config.store.path.clone(),
            flush_ms: config.store.flush_interval.as_millis().max(1) as u64,
            cpu_share: config.overhead_budget_pct / 2.0 / 100.0,
            log,
            store: store.clone(),
            started_ms: shared.started_unix_ns / 1_000_000,
            state: State::default(),
        });
    }
    let _ = shared
        .remote_write
        .set(senders.iter().map(|s| s.stats.clone()).collect());
    if !store.recording.load(Relaxed) && store.flushes.load(Relaxed) > 0 {
        log("remote write: the history is not recording; receivers are sent what it holds".into());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for (i, s) in senders.into_iter().enumerate() {
        let stop = stop.clone();
        log(format!(
            "remote write to {} ({}, up to {} samples a request, catching up at {} samples/s at most)",
            s.name, s.c.url, s.c.max_samples_per_send, s.c.catch_up_rate
        ));
        let t = std::thread::Builder::new()
            .name(format!("quietstat-push{i}"))
            .spawn(move || s.run(&stop))
            .map_err(|e| sys::Error::io("starting a remote-write sender", e))?;
        threads.push(t);
    }
    Ok(Some(Pushers {
        threads,
        stop,
        store,
    }))
}

/// What a sender keeps of one lane between wakes.
#[derive(Default)]
struct LaneState {
    pos: Position,
    /// Series in the last record encoded: for the pending estimate.
    series_per_record: u64,
}

/// What a sender keeps between wakes.
#[derive(Default)]
struct State {
    lanes: [LaneState; Lane::ALL.len()],
    /// No attempt before this (Unix ms): the backoff, or `Retry-After`.
    retry_at: u64,
    backoff_ms: u64,
    /// Since when the receiver has failed (Unix ms).
    down_since: Option<u64>,
    /// The refusal reasons already logged.
    said: Vec<&'static str>,
    last_wake: u64,
}

impl State {
    fn lane(&mut self, lane: Lane) -> &mut LaneState {
        &mut self.lanes[lane as usize]
    }
}

/// Each lane's encoder, the text it encodes into, and what the process
/// lane keeps from one table to the next.
struct Replays {
    system: Replay,
    procs: Replay,
    cgroups: Replay,
    text: String,
    /// Where the last read of each lane left off: the next goes on from
    /// there, each block of the history decoded once.
    cursor: store::read::Cursor,
    /// The time of the table in `procs`' state (its CPU rates are from it
    /// to the next).
    procs_ms: u64,
    /// Whether a table's CPU rates are needed (the top processes by CPU).
    procs_rates: bool,
    process_interval_ms: u64,
    shared: Arc<Shared>,
}

impl Replays {
    fn new(shared: &Arc<Shared>) -> Replays {
        let config = shared.config();
        let pm = &config.process_metrics;
        Replays {
            system: Replay::new(config.clone(), Replayed::Collectors(recorded_collectors())),
            procs: Replay::new(config.clone(), Replayed::Processes),
            cgroups: Replay::new(config.clone(), Replayed::Cgroups),
            text: String::new(),
            cursor: store::read::Cursor::default(),
            procs_ms: 0,
            procs_rates: pm.mode == agent::ProcessMetricsMode::Top
                && pm.sort_by == agent::config::SortKey::Cpu,
            process_interval_ms: config.store.process_interval.as_millis() as u64,
            shared: shared.clone(),
        }
    }

    /// Calls `f` with each record of `lane` in [from, to], in time order,
    /// encoded; `f` returns false to stop.
    fn each(
        &mut self,
        lane: Lane,
        hist: &store::History,
        (from, to): (u64, u64),
        f: &mut dyn FnMut(u64, &str) -> bool,
    ) -> Result<usize, store::Error> {
        let (text, cur) = (&mut self.text, &mut self.cursor);
        match lane {
            Lane::System => {
                let replay = &self.system;
                hist.system_from(cur, from, to, &store::RECORDED, &mut |ts, sample| {
                    {
                        let mut st = replay.sample();
                        for s in store::RECORDED {
                            st.sample.copy_source(sample, s);
                        }
                    }
                    text.clear();
                    replay.encode(text).is_ok() && f(ts, text)
                })
            }
            Lane::Cgroups => {
                let replay = &self.cgroups;
                hist.cgroups_from(cur, from, to, &mut |ts, dec| {
                    replay.sample().cgroups = dec.sample(ts);
                    text.clear();
                    replay.encode(text).is_ok() && f(ts, text)
                })
            }
            Lane::Procs => {
                let (replay, shared) = (&self.procs, &self.shared);
                let (rates, every) = (self.procs_rates, self.process_interval_ms);
                let last = &mut self.procs_ms;
                hist.procs_from(cur, from, to, &mut |ts, snap| {
                    {
                        let mut st = replay.sample();
                        {
                            // What a table does not hold: the boot time
                            // (start times) and the filter's cgroup.
                            let live = shared.state.read().unwrap_or_else(|e| e.into_inner());
                            st.sample.stat.btime_secs = live.sample.stat.btime_secs;
                            st.cgroup_filter_id = live.cgroup_filter_id;
                        }
                        // CPU rates from the table before, when it is the
                        // one recorded just before.
                        let prev = std::mem::take(&mut st.procs);
                        let follows = ts > *last && ts - *last <= 2 * every;
                        st.procs_prev = if rates && follows { prev } else { Vec::new() };
                        st.procs_secs = ts.saturating_sub(*last) as f64 / 1000.0;
                        st.procs = snap.procs();
                    }
                    *last = ts;
                    text.clear();
                    replay.encode(text).is_ok() && f(ts, text)
                })
            }
        }
    }
}

struct Sender {
    name: String,
    c: RemoteWrite,
    client: Client,
    stats: Arc<Stats>,
    labels: Vec<(String, String)>,
    /// Taken by the thread that sends.
    replays: Option<Replays>,
    live: Exposition,
    dir: PathBuf,
    flush_ms: u64,
    /// The part of one CPU catching up may spend.
    cpu_share: f64,
    log: fn(String),
    store: Arc<store::Stats>,
    /// When the agent started (Unix ms).
    started_ms: u64,
    state: State,
}

/// What is left of a wake's share of the catch-up rate and of the CPU.
/// A wake always keeps pace: in each lane it sends at least as much
/// recorded time as passed since the last wake, so a receiver that is
/// behind never falls further behind; the share bounds what it sends
/// beyond that.
struct Budget {
    /// Samples it may send.
    samples: u64,
    cpu_ns: u64,
    /// The thread's CPU time when the wake began.
    cpu0: u64,
    given: u64,
    /// Whether the CPU is capped (an overhead budget is set).
    capped: bool,
    /// The recorded time of the lane sent so far, and the time it must
    /// reach.
    reached: u64,
    pace_to: u64,
}

impl Budget {
    fn spent(&self) -> bool {
        self.spent_with(&Batch::default())
    }

    /// Whether it is spent once `b`, not yet sent, is: checked after each
    /// record, so that a wake overruns its share by one record at most.
    fn spent_with(&self, b: &Batch) -> bool {
        self.reached.max(b.last_ms) >= self.pace_to
            && (self.given + (b.samples - b.live) as u64 >= self.samples
                || (self.capped && sys::thread_cpu_ns().saturating_sub(self.cpu0) >= self.cpu_ns))
    }
}

/// How a request went, for the caller's loop.
enum Went {
    /// Acknowledged or refused for good: go on.
    On,
    /// Failed: try again at a later wake.
    Stop,
}

/// What a wake reads from and writes to.
struct Io<'a> {
    sent: &'a Sent,
    hist: &'a store::History,
    rp: &'a mut Replays,
}

impl Sender {
    fn run(mut self, stop: &AtomicBool) {
        // The writer's first flush writes what a previous run left in its
        // journal: what is sent starts after it.
        let mut seen = 0;
        let sent = loop {
            match Sent::open(&self.dir, &store::access::Access::of_dir(&self.dir)) {
                Ok(s) => break s,
                Err(e) => {
                    (self.log)(format!(
                        "remote write {}: {e}; retried at the next flush",
                        self.name
                    ));
                    match self.store.flushed.wait_past(seen) {
                        Some(n) if !stop.load(Relaxed) => seen = n,
                        _ => return,
                    }
                }
            }
        };
        let Some(mut rp) = self.replays.take() else {
            return;
        };
        for lane in Lane::ALL {
            self.state.lane(lane).pos = match sent.get(&self.name, lane) {
                Ok(Some(p)) => p,
                // A receiver (or a lane) seen for the first time is sent
                // what this run of the agent records.
                _ => Position {
                    through: self.started_ms.saturating_sub(1),
                    ahead: None,
                    written: store::writer::now_ms(),
                },
            };
            self.save(&sent, lane);
        }
        self.stats.up.store(true, Relaxed);
        self.state.last_wake = store::writer::now_ms();
        while let Some(n) = self.store.flushed.wait_past(seen) {
            seen = n;
            if stop.load(Relaxed) {
                return;
            }
            self.wake(&sent, &mut rp, stop);
        }
    }

    fn wake(&mut self, sent: &Sent, rp: &mut Replays, stop: &AtomicBool) {
        let now = store::writer::now_ms();
        let since = now.saturating_sub(self.state.last_wake).max(self.flush_ms);
        self.state.last_wake = now;
        if now < self.state.retry_at {
            return;
        }
        // What the day files hold: the journal's tail is read at a later wake.
        let upto = self.store.committed_ms.load(Relaxed);
        let hist = match store::History::open_days(&self.dir) {
            Ok(h) => h,
            Err(e) => {
                (self.log)(format!(
                    "remote write {}: reading the history: {e}",
                    self.name
                ));
                return;
            }
        };
        let mut io = Io {
            sent,
            hist: &hist,
            rp,
        };
        let mut budget = Budget {
            samples: (self.c.catch_up_rate as u64).saturating_mul(since) / 1000,
            cpu_ns: (self.cpu_share * since as f64 * 1e6) as u64,
            cpu0: sys::thread_cpu_ns(),
            given: 0,
            capped: self.cpu_share > 0.0,
            reached: 0,
            pace_to: 0,
        };
        let mut live = Some(self.live(now));
        for lane in Lane::ALL {
            if stop.load(Relaxed) || self.state.retry_at > now {
                break;
            }
            let first = live.take().unwrap_or_default();
            self.backlog(&mut io, lane, (upto, since), first, &mut budget, stop);
        }
        let pending: u64 = Lane::ALL
            .into_iter()
            .map(|lane| {
                let l = self.state.lane(lane);
                hist.records_after(lane, l.pos.through) * l.series_per_record
            })
            .sum();
        self.stats.pending.store(pending, Relaxed);
    }

    /// The families the history does not record, as they are now: sent
    /// with the first request of the wake.
    fn live(&mut self, now: u64) -> Batch {
        let mut b = Batch::default();
        let e = self.live.encoding(true);
        if let Ok(text) = e.without(&store::RECORDED).without_tables().whole() {
            b.add_live(&text, now, &self.labels);
        }
        b
    }

    /// What the history holds of `lane` after its position (oldest first,
    /// or the newest first), within this wake's share of the catch-up
    /// rate and of the CPU.
    fn backlog(
        &mut self,
        io: &mut Io<'_>,
        lane: Lane,
        (upto, since_ms): (u64, u64),
        live: Batch,
        budget: &mut Budget,
        stop: &AtomicBool,
    ) {
        self.retention_drops(io.sent, lane);
        let p = self.state.lane(lane).pos;
        budget.reached = p.through;
        budget.pace_to = p.through.saturating_add(since_ms);
        let behind = upto.saturating_sub(p.through) > 2 * since_ms;
        if self.c.send_order == SendOrder::NewestFirst && (p.ahead.is_some() || behind) {
            self.newest_first(io, lane, (upto, since_ms), live, budget, stop);
        } else if self.span(io, lane, (p.through + 1, upto), live, budget, true, stop) {
            // Everything recorded up to `upto` is the receiver's.
            let l = self.state.lane(lane);
            l.pos.through = l.pos.through.max(upto);
            self.save(io.sent, lane);
        }
    }

    /// After an outage, newest first: the records since the last wake (or
    /// since the span already sent ahead), then the gap from its end
    /// backwards, a minute at a time, each minute in time order.
    fn newest_first(
        &mut self,
        io: &mut Io<'_>,
        lane: Lane,
        (upto, since_ms): (u64, u64),
        live: Batch,
        budget: &mut Budget,
        stop: &AtomicBool,
    ) {
        let p = self.state.lane(lane).pos;
        let edge = p
            .ahead
            .map_or(upto.saturating_sub(since_ms), |(_, b)| b + 1)
            .max(p.through + 1);
        if edge <= upto {
            if !self.span(io, lane, (edge, upto), live, budget, false, stop) {
                return;
            }
            self.state.lane(lane).pos.ahead = Some((p.ahead.map_or(edge, |a| a.0), upto));
            self.save(io.sent, lane);
        } else if !live.is_empty() {
            let mut live = live;
            if let Went::Stop = self.deliver(io.sent, lane, &mut live, false) {
                return;
            }
        }
        // At least one minute of the gap a wake, then while the budget lasts.
        while !stop.load(Relaxed) {
            let l = self.state.lane(lane);
            let Some((a, b)) = l.pos.ahead else {
                break;
            };
            let through = l.pos.through;
            if a <= through + 1 {
                // The gap is filled: one span again.
                l.pos.through = b;
                l.pos.ahead = None;
                self.save(io.sent, lane);
                break;
            }
            let start = ((a - 1) / 60_000 * 60_000).max(through + 1);
            if !self.span(
                io,
                lane,
                (start, a - 1),
                Batch::default(),
                budget,
                false,
                stop,
            ) {
                break;
            }
            self.state.lane(lane).pos.ahead = Some((start, b));
            self.save(io.sent, lane);
            if budget.spent() {
                break;
            }
        }
    }

    /// Sends the records of `lane` in `[from, to]`, in time order, a
    /// request per `max_samples_per_send`. With `track`, each acknowledged
    /// request moves the position past it, and the budget is checked
    /// after each record (oldest first); else the span goes whole. True
    /// when all of it is the receiver's.
    #[allow(clippy::too_many_arguments)]
    fn span(
        &mut self,
        io: &mut Io<'_>,
        lane: Lane,
        (from, to): (u64, u64),
        first: Batch,
        budget: &mut Budget,
        track: bool,
        stop: &AtomicBool,
    ) -> bool {
        let mut b = first;
        let mut halt = false;
        let key = store::writer::KEY_EVERY_MS;
        let mut cursor = from.saturating_sub(1);
        let (sent, hist) = (io.sent, io.hist);
        while !halt && cursor < to && !stop.load(Relaxed) {
            let from = cursor + 1;
            // One keyframe's chain at a time: its blocks are decoded once.
            let end = ((from / key + 1) * key - 1).min(to);
            let r = io.rp.each(lane, hist, (from, end), &mut |ts, text| {
                let n0 = b.samples;
                b.add(text, ts, &self.labels);
                self.state.lane(lane).series_per_record = (b.samples - n0) as u64;
                let over = track && budget.spent_with(&b);
                if b.samples >= self.c.max_samples_per_send || over {
                    budget.given += (b.samples - b.live) as u64;
                    budget.reached = budget.reached.max(b.last_ms);
                    halt = matches!(self.deliver(sent, lane, &mut b, track), Went::Stop) || over;
                }
                !halt
            });
            if let Err(e) = r {
                (self.log)(format!(
                    "remote write {}: reading the history: {e}",
                    self.name
                ));
                return false;
            }
            cursor = end;
        }
        if !halt && !b.is_empty() {
            budget.given += (b.samples - b.live) as u64;
            budget.reached = budget.reached.max(b.last_ms);
            halt = matches!(self.deliver(sent, lane, &mut b, track), Went::Stop);
        }
        !halt && cursor >= to
    }

    /// Writes `lane`'s position, and serves the oldest of them.
    fn save(&mut self, sent: &Sent, lane: Lane) {
        let now = store::writer::now_ms();
        let l = self.state.lane(lane);
        l.pos.written = now;
        let p = l.pos;
        if let Err(e) = sent.set(&self.name, lane, &p) {
            (self.log)(format!("remote write {}: {e}", self.name));
        }
        let oldest = self.state.lanes.iter().map(|l| l.pos.through).min();
        self.stats
            .position_ms
            .store(oldest.unwrap_or(p.through), Relaxed);
    }

    /// Sends `b`; on an answer (with `track`) `lane`'s position moves
    /// past it.
    fn deliver(&mut self, sent: &Sent, lane: Lane, b: &mut Batch, track: bool) -> Went {
        let r = match self.send(b) {
            Answer::Again { .. } => {
                // Not recorded: not sent again.
                Stats::count(&self.stats.dropped, "not_recorded", b.live as u64);
                Went::Stop
            }
            _ => {
                if track && b.last_ms > 0 {
                    self.state.lane(lane).pos.through = b.last_ms;
                    self.save(sent, lane);
                }
                Went::On
            }
        };
        *b = Batch::default();
        r
    }

    /// Posts `b`; counts, logs state changes, sets the backoff.
    fn send(&mut self, b: &Batch) -> Answer {
        let body = b.body();
        let a = self.client.send(&body);
        let now = store::writer::now_ms();
        match &a {
            Answer::Taken => {
                self.stats.sent.fetch_add(b.samples as u64, Relaxed);
                self.stats.bytes.fetch_add(body.len() as u64, Relaxed);
                self.up(now);
            }
            Answer::Refused {
                reason,
                status,
                detail,
            } => {
                Stats::count(&self.stats.dropped, reason, b.samples as u64);
                if !self.state.said.contains(reason) {
                    self.state.said.push(reason);
                    let hint = match *reason {
                        "out_of_bounds" | "too_old" | "out_of_order" => {
                            "; a Prometheus receiver accepts them with storage.tsdb.out_of_order_time_window"
                        }
                        _ => "",
                    };
                    (self.log)(format!(
                        "remote write {}: refused {} samples ({status}, {reason}: {detail}); such samples are counted in quietstat_remote_write_dropped_samples_total and not sent again{hint}",
                        self.name, b.samples
                    ));
                }
                self.up(now);
            }
            Answer::Again { why, after, detail } => {
                Stats::count(&self.stats.failed, why, 1);
                self.stats.up.store(false, Relaxed);
                self.state.backoff_ms = (self.state.backoff_ms * 2)
                    .min(MAX_BACKOFF_MS)
                    .max(self.flush_ms);
                let wait = after.map_or(self.state.backoff_ms, |d| d.as_millis() as u64);
                // The next attempt is at the first wake at or after this;
                // half a flush early, so that it is the wake due then.
                self.state.retry_at = now + wait.saturating_sub(self.flush_ms / 2);
                if self.state.down_since.is_none() {
                    self.state.down_since = Some(now);
                    (self.log)(format!(
                        "remote write {}: down ({why}: {detail}); what is recorded meanwhile is sent when it answers",
                        self.name
                    ));
                }
            }
        }
        a
    }

    fn up(&mut self, now: u64) {
        self.stats.up.store(true, Relaxed);
        self.state.backoff_ms = 0;
        self.state.retry_at = 0;
        if let Some(t) = self.state.down_since.take() {
            (self.log)(format!(
                "remote write {}: up again after {}s; catching up from {}",
                self.name,
                (now - t) / 1000,
                store::when::format(self.state.lanes[0].pos.through, true)
            ));
        }
    }

    /// Records of `lane` the retention removed before they were sent:
    /// counted as dropped, and the position moves past them.
    fn retention_drops(&mut self, sent: &Sent, lane: Lane) {
        let l = self.state.lane(lane);
        let Ok((records, to)) = sent.removed_after(lane, l.pos.through) else {
            return;
        };
        if records == 0 {
            return;
        }
        let n = records * l.series_per_record.max(1);
        l.pos.through = to;
        let p = l.pos;
        Stats::count(&self.stats.dropped, "retention", n);
        (self.log)(format!(
            "remote write {}: {records} recorded {} ({n} samples) were removed by the store's retention before they were sent (through {}); counted as dropped",
            self.name,
            match lane {
                Lane::System => "reads",
                Lane::Cgroups => "walks of the cgroups",
                Lane::Procs => "process tables",
            },
            store::when::format(to, true)
        ));
        let _ = sent.set(&self.name, lane, &p);
    }
}
