//! Where the view's samples come from: a running agent's view files, a
//! sampler of our own, or the recorded history.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sys::{Error, ErrorKind};

use procfs::{Reader, SystemSample};
use proctable::{BackendChoice, Exit, Field, Fields, Proc, ProcTable, Query};
use shm::ShmReader;
use shm::view::{self, ProcView};

/// One sample as the view shows it: the system sources, and the process
/// table with the processes that ended since the table before it.
#[derive(Clone, Default)]
pub struct Tick {
    pub system: SystemSample,
    pub procs: Vec<Proc>,
    pub exits: Vec<Exit>,
    /// When the table was taken (ns since the epoch); 0 without one.
    pub procs_unix_ns: u64,
    /// The table's instant on the same clock as `system.taken`.
    pub procs_taken: Option<Instant>,
    /// Command lines known for the table's processes (own sampling, or
    /// the history), keyed by pid.
    pub cmdlines: Vec<(u32, String)>,
    /// A new read of the cgroups, when there is one.
    pub cgroups: Option<cgroups::Sample>,
    /// Why the cgroup view has nothing to show, when it has not.
    pub cgroups_note: Option<String>,
}

/// What a feed is: a label for the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A running agent (its pid), its process interval.
    Agent { pid: u32, procs_every: Duration },
    /// Our own sampling, with the backend it uses.
    Own { backend: &'static str },
    /// The history in this directory.
    Replay,
}

/// An instant on the sample clock for a CLOCK_MONOTONIC reading: rates
/// between two samples come from the difference of their `taken`.
fn taken_at(base: Instant, mono_ns: u64) -> Instant {
    base + Duration::from_nanos(mono_ns)
}

/// The cgroups read here (each read is a walk of every cgroup's files),
/// only while the cgroup view is shown: with no agent, or an agent that
/// reads none.
struct OwnCgroups {
    proc_root: PathBuf,
    sys_root: PathBuf,
    reader: Option<Result<cgroups::Reader, Error>>,
    on: bool,
}

impl OwnCgroups {
    fn new(proc_root: &Path, sys_root: &Path) -> OwnCgroups {
        OwnCgroups {
            proc_root: proc_root.to_path_buf(),
            sys_root: sys_root.to_path_buf(),
            reader: None,
            on: false,
        }
    }

    /// A read now into `tick`, or why there is none; nothing while the
    /// view is hidden.
    fn read(&mut self, tick: &mut Tick) {
        if !self.on {
            return;
        }
        let (p, s) = (&self.proc_root, &self.sys_root);
        let reader = self
            .reader
            .get_or_insert_with(|| cgroups::Reader::new(cgroups::Options::new(p, s)));
        match reader {
            Ok(r) => {
                let mut sample = cgroups::Sample::default();
                r.read(&mut sample);
                tick.cgroups = Some(sample);
            }
            Err(e) => tick.cgroups_note = Some(format!("no cgroups to read here: {e}")),
        }
    }
}

/// The agent's view files, read when the agent publishes.
pub struct AgentFeed {
    snapshot: PathBuf,
    reader: ShmReader,
    base: Instant,
    seen_published: u32,
    last_system_mono: u64,
    last_procs_mono: u64,
    tick: Tick,
    procs_every: Duration,
    /// The table read when the feed was opened, for the first poll.
    first: Option<ProcView>,
    last_cgroups_mono: u64,
    /// Read here while the view shows them, when the agent reads none.
    own_cgroups: OwnCgroups,
}

impl AgentFeed {
    /// The agent's feed; why not, when it has stopped or died or its
    /// files are missing or not its own.
    pub fn open(snapshot: &Path, proc_root: &Path, sys_root: &Path) -> Result<AgentFeed, Error> {
        let first = view::read_live_procs(snapshot)?;
        let reader = ShmReader::open(snapshot)?;
        // Woken once, the agent writes its last walk of the cgroups (it
        // writes none while no viewer reads): the first screen of the
        // cgroup view needs no wait for its next walk.
        reader.wake();
        Ok(AgentFeed {
            last_cgroups_mono: 0,
            own_cgroups: OwnCgroups::new(proc_root, sys_root),
            snapshot: snapshot.to_path_buf(),
            seen_published: reader.published_count(),
            reader,
            base: Instant::now(),
            last_system_mono: 0,
            last_procs_mono: 0,
            tick: Tick::default(),
            procs_every: Duration::ZERO,
            first: Some(first),
        })
    }

    /// Whether the cgroup view is shown.
    pub fn set_cgroups(&mut self, on: bool) {
        self.own_cgroups.on = on;
    }

    pub fn origin(&self) -> Origin {
        Origin::Agent {
            pid: self.reader.agent_pid(),
            procs_every: self.procs_every,
        }
    }

    /// Whether the agent still runs; why not when it does not.
    pub fn alive(&self) -> Result<(), Error> {
        self.reader.check_live().map_err(Error::from)
    }

    /// Waits until the agent publishes again, or `timeout`.
    pub fn wait(&mut self, timeout: Duration) {
        self.reader.wait_published(self.seen_published, timeout);
        self.seen_published = self.reader.published_count();
    }

    /// The latest sample, when the agent published one since the last call:
    /// `Ok(None)` when nothing changed. A table not new since the last
    /// call is left out (its instant is the one already shown).
    pub fn poll(&mut self) -> Result<Option<Tick>, Error> {
        self.alive()?;
        let sys_path = view::system_path(&self.snapshot);
        let mut system = std::mem::take(&mut self.tick.system);
        let meta = view::read_system(&sys_path, &mut system);
        let meta = meta.map_err(Error::from);
        let mut changed = false;
        if let Ok(meta) = &meta
            && meta.mono_ns != self.last_system_mono
        {
            self.last_system_mono = meta.mono_ns;
            system.taken = taken_at(self.base, meta.mono_ns);
            changed = true;
        }
        self.tick.system = system;
        meta?;
        let p = view::procs_path(&self.snapshot);
        let mut out = Tick {
            system: self.tick.system.clone(),
            procs_taken: self.tick.procs_taken,
            procs_unix_ns: self.tick.procs_unix_ns,
            ..Tick::default()
        };
        // The table (megabytes with thousands of processes) is read only
        // when its header says it is new.
        let mono = view::procs_mono_ns(&p)?;
        if mono != self.last_procs_mono {
            let pv = match self.first.take() {
                Some(v) if v.meta.mono_ns == mono => v,
                _ => view::read_procs(&p)?,
            };
            self.last_procs_mono = pv.meta.mono_ns;
            self.procs_every = Duration::from_nanos(pv.meta.interval_ns);
            self.tick.procs_unix_ns = pv.meta.unix_ns;
            self.tick.procs_taken = Some(taken_at(self.base, pv.meta.mono_ns));
            out.procs = pv.procs;
            out.exits = pv.exits;
            out.procs_unix_ns = self.tick.procs_unix_ns;
            out.procs_taken = self.tick.procs_taken;
            changed = true;
        }
        changed |= self.poll_cgroups(&mut out);
        Ok(changed.then_some(out))
    }

    /// The agent's latest read of the cgroups, when it is new (a few
    /// megabytes with thousands of cgroups, read once per walk); read
    /// here while the view shows them when the agent reads none.
    fn poll_cgroups(&mut self, out: &mut Tick) -> bool {
        let path = view::cgroups_path(&self.snapshot);
        match view::cgroups_mono_ns(&path) {
            Ok(Some(mono)) if mono == self.last_cgroups_mono => false,
            Ok(Some(_)) => match view::read_cgroups(&path) {
                Ok(v) => {
                    self.last_cgroups_mono = v.meta.mono_ns;
                    out.cgroups = Some(cgroups::Sample {
                        mono_ns: v.meta.mono_ns,
                        unix_ns: v.meta.unix_ns,
                        cgroups: v.cgroups,
                        ..cgroups::Sample::default()
                    });
                    true
                }
                Err(e) => {
                    out.cgroups_note = Some(format!("the agent's cgroups: {e}"));
                    true
                }
            },
            // No walk published: the agent reads none (its `cgroups`
            // source is off), or an older agent makes no such file.
            Ok(None) | Err(_) => {
                self.own_cgroups.read(out);
                self.own_cgroups.on
            }
        }
    }
}

/// Our own sampling: /proc (and sysfs) read at the view's refresh.
pub struct OwnFeed {
    reader: Reader,
    own_cgroups: OwnCgroups,
    table: ProcTable,
    query: Query,
    tick: Tick,
    exits_on: bool,
    backend: &'static str,
    note: Option<String>,
}

impl OwnFeed {
    pub fn open(proc_root: &Path, sys_root: &Path, threads: bool) -> Result<OwnFeed, Error> {
        let mut table = ProcTable::open(BackendChoice::Auto, proc_root, sys_root)?;
        let note = table
            .fallback_reason()
            .map(|why| format!("BPF unavailable: {why}"));
        // From /proc, the owner is one more file per process; I/O, the
        // cgroup and the run delay three more: read with BPF, where they
        // come with the task, as do the TCP sockets' bytes (BPF only).
        let mut fields = Fields::stat().with(Field::Uid).with(Field::Cmdline);
        if table.bpf().is_some() {
            // GPU use: the kernel's scan of every descriptor at the first
            // read and every 30 s, the GPU descriptors' fdinfo at each.
            fields = fields
                .with(Field::Io)
                .with(Field::Cgroup)
                .with(Field::Delay)
                .with(Field::Net)
                .with(Field::Gpu);
            // Four more cache lines a task: only while the kernel keeps
            // the figures.
            if proctable::delay_accounting_on(proc_root) == Some(true) {
                fields = fields.with(Field::DelayAcct);
            }
        }
        let exits_on = table.enable_exits().is_ok();
        let mut reader = Reader::new(proc_root, sys_root);
        reader.set_keep_open(true);
        let backend = table.backend().name();
        Ok(OwnFeed {
            reader,
            own_cgroups: OwnCgroups::new(proc_root, sys_root),
            table,
            query: Query {
                fields,
                threads,
                pids: None,
            },
            tick: Tick::default(),
            exits_on,
            backend,
            note,
        })
    }

    pub fn origin(&self) -> Origin {
        Origin::Own {
            backend: self.backend,
        }
    }

    pub fn origin_name(&self) -> &'static str {
        self.backend
    }

    /// Why BPF was not used, when it was not.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    pub fn set_threads(&mut self, on: bool) {
        self.query.threads = on;
    }

    /// Whether the cgroup view is shown: the cgroups are read only then.
    pub fn set_cgroups(&mut self, on: bool) {
        self.own_cgroups.on = on;
    }

    /// Reads everything now.
    pub fn sample(&mut self) -> Result<Tick, Error> {
        let mut s = std::mem::take(&mut self.tick.system);
        for src in view::VIEW_SOURCES {
            self.reader.read_source(src, &mut s);
        }
        s.taken = Instant::now();
        s.unix_ns = sys::unix_ns();
        self.tick.system = s;
        // Exits before the new table, so that those taskstats gave a start
        // to within a second take the exact one from the table they were
        // last seen in.
        self.tick.exits.clear();
        if self.exits_on {
            self.table.drain_exits(&mut self.tick.exits);
            self.table
                .settle_exits(&mut self.tick.exits, &self.tick.procs);
        }
        self.table.snapshot(&self.query, &mut self.tick.procs)?;
        self.tick.procs_taken = Some(self.tick.system.taken);
        self.tick.procs_unix_ns = self.tick.system.unix_ns;
        let table = &self.table;
        self.tick.cmdlines = self
            .tick
            .procs
            .iter()
            .filter_map(|p| table.cmdline(p).map(|c| (p.pid, c.to_string())))
            .collect();
        let mut out = self.tick.clone();
        self.own_cgroups.read(&mut out);
        Ok(out)
    }
}

/// The recorded history, walked sample by sample.
pub struct ReplayFeed {
    history: store::History,
    dir: PathBuf,
    base: Instant,
    /// The first and last recorded instants (ms).
    pub range: (u64, u64),
}

/// How far back a replayed sample looks for walks of the cgroups (every
/// 10 s, slowed by the agent's budget up to 50 s).
const WALKS_BACK_MS: u64 = 120_000;

/// How far a step looks for the next sample before widening.
const NEAR_MS: u64 = 15_000;

impl ReplayFeed {
    pub fn open(dir: &Path) -> Result<ReplayFeed, Error> {
        let history = store::History::open(dir)?;
        let range = history.range().ok_or_else(|| {
            Error::new(
                ErrorKind::Absent,
                format!("{}: nothing recorded yet", dir.display()),
            )
        })?;
        Ok(ReplayFeed {
            history,
            dir: dir.to_path_buf(),
            base: Instant::now(),
            range,
        })
    }

    /// `at` if it is inside the recorded range; else an error naming it.
    pub fn check(&self, at: u64) -> Result<u64, Error> {
        let (lo, hi) = self.range;
        if at < lo.saturating_sub(1000) || at > hi + 1000 {
            return Err(Error::invalid(format!(
                "{} is outside the history in {}: it holds {} to {}",
                store::when::format(at, true),
                self.dir.display(),
                store::when::format(lo, true),
                store::when::format(hi, true)
            )));
        }
        Ok(at.clamp(lo, hi))
    }

    /// The system sample times in [from, to].
    fn times(&self, from: u64, to: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let _ = self
            .history
            .system(from, to, &[procfs::Source::Stat], &mut |ts, _| out.push(ts));
        out
    }

    /// The first sample after `at` (`forward`) or the last before it,
    /// looking near first, then over the whole range.
    pub fn step(&self, at: u64, forward: bool) -> Option<u64> {
        let (lo, hi) = self.range;
        let windows = [NEAR_MS, 600_000, hi.saturating_sub(lo) + 1];
        for w in windows {
            let found = if forward {
                self.times(at + 1, at.saturating_add(w)).first().copied()
            } else if at > lo {
                self.times(at.saturating_sub(w), at - 1).last().copied()
            } else {
                None
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// The sample at or before `at` (or the first one after, when none is
    /// before), with rates over the interval before it.
    pub fn load(&self, at: u64) -> Result<(u64, Tick, Option<Tick>), Error> {
        let sources = view::VIEW_SOURCES;
        let mut samples: Vec<(u64, SystemSample)> = Vec::new();
        let mut from = at.saturating_sub(NEAR_MS);
        loop {
            samples.clear();
            self.history.system(from, at, &sources, &mut |ts, s| {
                if samples.len() >= 2 {
                    samples.remove(0);
                }
                samples.push((ts, s.clone()));
            })?;
            if samples.len() == 2 || from <= self.range.0 {
                break;
            }
            from = from.saturating_sub(600_000).max(self.range.0);
        }
        if samples.is_empty() {
            let next = self.step(at, true).ok_or_else(|| {
                Error::new(
                    ErrorKind::Absent,
                    format!("no sample recorded at or after {at}"),
                )
            })?;
            return self.load(next);
        }
        let at = samples.last().map_or(at, |s| s.0);
        let mut tables: Vec<(u64, Vec<Proc>)> = Vec::new();
        self.history
            .procs(at.saturating_sub(60_000), at, &mut |ts, snap| {
                if tables.len() >= 2 {
                    tables.remove(0);
                }
                tables.push((ts, snap.procs()));
            })?;
        let exits = match tables.as_slice() {
            [(a, _), (b, _)] => self.history.exits(*a + 1, *b)?,
            [(b, _)] => self.history.exits(b.saturating_sub(5_000), *b)?,
            _ => Vec::new(),
        };
        let mut ticks: Vec<Tick> = samples
            .into_iter()
            .map(|(ts, mut s)| {
                s.taken = self.base + Duration::from_millis(ts.saturating_sub(self.range.0));
                Tick {
                    system: s,
                    ..Tick::default()
                }
            })
            .collect();
        let n = ticks.len();
        let mut tables = tables.into_iter().rev();
        for (i, t) in ticks.iter_mut().rev().enumerate() {
            if let Some((ts, procs)) = tables.next() {
                t.procs = procs;
                t.procs_unix_ns = ts * 1_000_000;
                t.procs_taken =
                    Some(self.base + Duration::from_millis(ts.saturating_sub(self.range.0)));
                if i == 0 {
                    t.exits = exits
                        .iter()
                        .map(|e| Exit {
                            pid: e.pid,
                            ppid: e.ppid.unwrap_or(0),
                            comm: procfs::pid::Comm::new(e.comm.as_bytes()),
                            start_ns: 0,
                            start_ticks: 0,
                            exit_ns: 0,
                            utime_ns: e.utime_ns,
                            stime_ns: e.stime_ns,
                            minflt: 0,
                            majflt: 0,
                            maxrss_bytes: e.maxrss_bytes,
                            exit_status: e.status,
                        })
                        .collect();
                    t.cmdlines = exits
                        .iter()
                        .filter_map(|e| Some((e.pid, e.cmdline.clone()?)))
                        .collect();
                }
            }
        }
        let mut cur = ticks.pop().unwrap_or_default();
        let mut prev = (n == 2).then(|| ticks.pop()).flatten();
        let mut walks = self.walks(at)?;
        match walks.pop() {
            Some(w) => {
                cur.cgroups = Some(w);
                if let Some(p) = prev.as_mut() {
                    p.cgroups = walks.pop();
                }
            }
            None => {
                cur.cgroups_note = Some(format!(
                    "no walk of the cgroups recorded in the {} s before this sample (the agent records them with its cgroups source enabled)",
                    WALKS_BACK_MS / 1000
                ))
            }
        }
        Ok((at, cur, prev))
    }

    /// The last two walks of the cgroups recorded at or before `at`, at
    /// most [`WALKS_BACK_MS`] before it, oldest first: their times found
    /// first, so that only those two are rebuilt whole.
    fn walks(&self, at: u64) -> Result<Vec<cgroups::Sample>, Error> {
        let mut times = Vec::new();
        self.history
            .cgroups(at.saturating_sub(WALKS_BACK_MS), at, &mut |ts, _| {
                times.push(ts)
            })?;
        let want = &times[times.len().saturating_sub(2)..];
        let mut walks = Vec::new();
        if let Some(first) = want.first() {
            self.history.cgroups(*first, at, &mut |ts, d| {
                if want.contains(&ts) {
                    walks.push(d.sample(ts));
                }
            })?;
        }
        Ok(walks)
    }
}
