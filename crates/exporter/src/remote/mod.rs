//! Prometheus remote write (1.0), sent from the history: the history is
//! the send queue, so an outage of any length up to the retention, an
//! agent restart or a kill -9 loses nothing.
//!
//! One thread per receiver. It keeps no clock of its own: it wakes when
//! the store's writer has committed a flush (every `flush_interval`, at an
//! instant the sampler is awake for), reads what was recorded after the
//! receiver's send position, encodes each recorded read with the same
//! encoders `/metrics` uses (`Replay`), and posts it. The position
//! (`store::sent`) is written after each request the receiver
//! acknowledged, so after a kill at most the last unacknowledged request
//! is sent again. Families whose sources the history does not record
//! (the per-process ones, the cgroups', the agent's own, the collectors
//! of unrecorded sources) are sent live, once a wake, and only then.
//!
//! A failed request (5xx, 429, no answer) is sent again at a later wake,
//! after a backoff that doubles from one flush interval to 5 minutes, or
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
use store::sent::{Position, Sent, Stats};

pub use batch::{Batch, Label, Sample, TimeSeries, WriteRequest, decode, parse_line};
pub use client::{Answer, Client, answer};

use crate::metrics::{Exposition, Replay, recorded_collectors};

/// The longest wait between two attempts at a receiver that is down.
const MAX_BACKOFF_MS: u64 = 300_000;

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
            replay: Replay::new(config.clone(), recorded_collectors()),
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

/// What a sender keeps between wakes.
#[derive(Default)]
struct State {
    pos: Position,
    /// No attempt before this (Unix ms): the backoff, or `Retry-After`.
    retry_at: u64,
    backoff_ms: u64,
    /// Since when the receiver has failed (Unix ms).
    down_since: Option<u64>,
    /// The refusal reasons already logged.
    said: Vec<&'static str>,
    last_wake: u64,
    /// Series in the last recorded read encoded: for the pending estimate.
    series_per_read: u64,
}

struct Sender {
    name: String,
    c: RemoteWrite,
    client: Client,
    stats: Arc<Stats>,
    labels: Vec<(String, String)>,
    replay: Replay,
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
/// A wake always keeps pace: it sends at least as much recorded time as
/// passed since the last wake, so a receiver that is behind never falls
/// further behind; the share bounds what it sends beyond that.
struct Budget {
    /// Samples it may send.
    samples: u64,
    cpu_ns: u64,
    /// The thread's CPU time when the wake began.
    cpu0: u64,
    given: u64,
    /// Whether the CPU is capped (an overhead budget is set).
    capped: bool,
    /// The recorded time sent so far, and the time it must reach.
    reached: u64,
    pace_to: u64,
}

impl Budget {
    fn spent(&self) -> bool {
        self.spent_with(&Batch::default())
    }

    /// Whether it is spent once `b`, not yet sent, is: checked after each
    /// read, so that a wake overruns its share by one read at most.
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
        self.state.pos = match sent.get(&self.name) {
            Ok(Some(p)) => p,
            // A receiver seen for the first time is sent what this run of
            // the agent records.
            _ => Position {
                through: self.started_ms.saturating_sub(1),
                ahead: None,
                written: store::writer::now_ms(),
            },
        };
        self.save(&sent);
        self.stats.up.store(true, Relaxed);
        self.state.last_wake = store::writer::now_ms();
        while let Some(n) = self.store.flushed.wait_past(seen) {
            seen = n;
            if stop.load(Relaxed) {
                return;
            }
            self.wake(&sent, stop);
        }
    }

    fn wake(&mut self, sent: &Sent, stop: &AtomicBool) {
        let now = store::writer::now_ms();
        let since = now.saturating_sub(self.state.last_wake).max(self.flush_ms);
        self.state.last_wake = now;
        if now < self.state.retry_at {
            return;
        }
        let live = self.live(now);
        self.backlog(sent, since, live, stop);
    }

    /// The families the history does not record, as they are now: sent
    /// with the first request of the wake.
    fn live(&mut self, now: u64) -> Batch {
        let mut b = Batch::default();
        if let Ok(text) = self.live.encoding(true).without(&store::RECORDED).whole() {
            b.add_live(&text, now, &self.labels);
        }
        b
    }

    /// What the history holds after the position (oldest first, or the
    /// newest first), within this wake's share of the catch-up rate and
    /// of the CPU.
    fn backlog(&mut self, sent: &Sent, since_ms: u64, live: Batch, stop: &AtomicBool) {
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
        self.retention_drops(sent);
        let mut budget = Budget {
            samples: (self.c.catch_up_rate as u64).saturating_mul(since_ms) / 1000,
            cpu_ns: (self.cpu_share * since_ms as f64 * 1e6) as u64,
            cpu0: sys::thread_cpu_ns(),
            given: 0,
            capped: self.cpu_share > 0.0,
            reached: self.state.pos.through,
            pace_to: self.state.pos.through.saturating_add(since_ms),
        };
        let p = self.state.pos;
        let behind = upto.saturating_sub(p.through) > 2 * since_ms;
        if self.c.send_order == SendOrder::NewestFirst && (p.ahead.is_some() || behind) {
            self.newest_first(sent, &hist, (upto, since_ms), live, &mut budget, stop);
        } else if self.span(
            (sent, &hist),
            (p.through + 1, upto),
            live,
            &mut budget,
            true,
            stop,
        ) {
            // Everything recorded up to `upto` is the receiver's.
            self.state.pos.through = self.state.pos.through.max(upto);
            self.save(sent);
        }
        let pending = hist.system_samples_after(self.state.pos.through);
        self.stats
            .pending
            .store(pending * self.state.series_per_read.max(1), Relaxed);
    }

    /// After an outage, newest first: the reads since the last wake (or
    /// since the span already sent ahead), then the gap from its end
    /// backwards, a minute at a time, each minute in time order.
    fn newest_first(
        &mut self,
        sent: &Sent,
        hist: &store::History,
        (upto, since_ms): (u64, u64),
        live: Batch,
        budget: &mut Budget,
        stop: &AtomicBool,
    ) {
        let p = self.state.pos;
        let edge = p
            .ahead
            .map_or(upto.saturating_sub(since_ms), |(_, b)| b + 1)
            .max(p.through + 1);
        if edge <= upto {
            if !self.span((sent, hist), (edge, upto), live, budget, false, stop) {
                return;
            }
            self.state.pos.ahead = Some((p.ahead.map_or(edge, |a| a.0), upto));
            self.save(sent);
        }
        // At least one minute of the gap a wake, then while the budget lasts.
        while !stop.load(Relaxed) {
            let Some((a, b)) = self.state.pos.ahead else {
                break;
            };
            let through = self.state.pos.through;
            if a <= through + 1 {
                // The gap is filled: one span again.
                self.state.pos.through = b;
                self.state.pos.ahead = None;
                self.save(sent);
                break;
            }
            let start = ((a - 1) / 60_000 * 60_000).max(through + 1);
            if !self.span(
                (sent, hist),
                (start, a - 1),
                Batch::default(),
                budget,
                false,
                stop,
            ) {
                break;
            }
            self.state.pos.ahead = Some((start, b));
            self.save(sent);
            if budget.spent() {
                break;
            }
        }
    }

    /// Sends the recorded reads in `[from, to]`, in time order, a request
    /// per `max_samples_per_send`. With `track`, each acknowledged request
    /// moves the position past it, and the budget is checked after each
    /// (oldest first); else the span goes whole. True when all of it is
    /// the receiver's.
    fn span(
        &mut self,
        (sent, hist): (&Sent, &store::History),
        (from, to): (u64, u64),
        first: Batch,
        budget: &mut Budget,
        track: bool,
        stop: &AtomicBool,
    ) -> bool {
        let mut text = String::new();
        let mut b = first;
        let mut halt = false;
        let key = store::writer::KEY_EVERY_MS;
        let mut cursor = from.saturating_sub(1);
        while !halt && cursor < to && !stop.load(Relaxed) {
            let from = cursor + 1;
            // One keyframe's chain at a time: its blocks are decoded once.
            let end = ((from / key + 1) * key - 1).min(to);
            let r = hist.system_while(from, end, &store::RECORDED, &mut |ts, sample| {
                {
                    let mut st = self.replay.sample();
                    for s in store::RECORDED {
                        st.sample.copy_source(sample, s);
                    }
                }
                text.clear();
                if self.replay.encode(&mut text).is_err() {
                    return true;
                }
                let n0 = b.samples;
                b.add(&text, ts, &self.labels);
                self.state.series_per_read = (b.samples - n0) as u64;
                let over = track && budget.spent_with(&b);
                if b.samples >= self.c.max_samples_per_send || over {
                    budget.given += (b.samples - b.live) as u64;
                    budget.reached = budget.reached.max(b.last_ms);
                    halt = matches!(self.deliver(sent, &mut b, track), Went::Stop) || over;
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
            halt = matches!(self.deliver(sent, &mut b, track), Went::Stop);
        }
        !halt && cursor >= to
    }

    /// Writes the position, and serves it.
    fn save(&mut self, sent: &Sent) {
        self.state.pos.written = store::writer::now_ms();
        if let Err(e) = sent.set(&self.name, &self.state.pos) {
            (self.log)(format!("remote write {}: {e}", self.name));
        }
        self.stats
            .position_ms
            .store(self.state.pos.through, Relaxed);
    }

    /// Sends `b`; on an answer (with `track`) the position moves past it.
    fn deliver(&mut self, sent: &Sent, b: &mut Batch, track: bool) -> Went {
        let r = match self.send(b) {
            Answer::Again { .. } => {
                // Not recorded: not sent again.
                Stats::count(&self.stats.dropped, "not_recorded", b.live as u64);
                Went::Stop
            }
            _ => {
                if track && b.last_ms > 0 {
                    self.state.pos.through = b.last_ms;
                    self.save(sent);
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
                self.state.backoff_ms =
                    (self.state.backoff_ms * 2).clamp(self.flush_ms, MAX_BACKOFF_MS);
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
                store::when::format(self.state.pos.through, true)
            ));
        }
    }

    /// Samples the retention removed before they were sent: counted as
    /// dropped, and the position moves past them.
    fn retention_drops(&mut self, sent: &Sent) {
        let Ok((reads, to)) = sent.removed_after(self.state.pos.through) else {
            return;
        };
        if reads == 0 {
            return;
        }
        let n = reads * self.state.series_per_read.max(1);
        Stats::count(&self.stats.dropped, "retention", n);
        (self.log)(format!(
            "remote write {}: {reads} recorded reads ({n} samples) were removed by the store's retention before they were sent (through {}); counted as dropped",
            self.name,
            store::when::format(to, true)
        ));
        self.state.pos.through = to;
        let _ = sent.set(&self.name, &self.state.pos);
    }
}
