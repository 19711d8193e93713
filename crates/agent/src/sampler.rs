//! The sampler: one thread that reads the kernel when a source is due or a
//! consumer asks, commits what it read to the shared state, re-budgets the
//! sources' intervals and publishes the shared-memory snapshot.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use procfs::{Reader, Source, SourceStatus, SystemSample};
use proctable::{Exit, Fields, ProcTable, Query};
use shm::ShmWriter;
use sys::{mono_ns, unix_ns};

use crate::cgroup_worker::CgroupWalks;
use crate::config::{AgentSource, Config, FileConfig, Mask, ProcessMetricsMode, SOURCE_COUNT};
use crate::schedule::{Anchor, Schedule};
use crate::signals::{RELOAD, STOP, install_handlers, mask_signals, set_wake_word};
use crate::state::{Shared, State};
use crate::{StartError, budget, log, placement, warn};

/// The sources the shared-memory snapshot carries: a local reader's
/// request for a fresh snapshot reads these.
const SHM_SOURCES: [AgentSource; 3] = [
    AgentSource::System(Source::Stat),
    AgentSource::System(Source::Meminfo),
    AgentSource::System(Source::Loadavg),
];

/// The sampler and everything it owns.
pub struct Agent {
    shared: Arc<Shared>,
    reader: Reader,
    work: SystemSample,
    table: Option<ProcTable>,
    /// The cgroup walks: on this thread while small, else on their own.
    cgroups: Option<CgroupWalks>,
    query: Query,
    exits_buf: Vec<Exit>,
    /// Exits drained since the process table was last published.
    exits_pending: Vec<Exit>,
    /// Walk reloads already logged.
    walk_reloads: u64,
    schedule: Schedule,
    /// The schedule's time: monotonic, wall-aligned.
    anchor: Anchor,
    config_path: Option<PathBuf>,
    overrides: FileConfig,
    seen_request: u32,
    /// Sources this kernel lacks.
    missing: Mask,
    procs_read_mono: u64,
    /// What reads may still spend of the overhead budget.
    bucket: budget::ReadBucket,
    /// The history: the sampler's end of the journal, and the writer
    /// (stopped, after a last flush, when the agent is dropped).
    tap: Option<store::Tap>,
    writer: Option<store::Writer>,
    /// Source bytes kept for the history and the view, reused.
    kept: Vec<u8>,
    /// The view files beside the snapshot, for local viewers (`top`,
    /// `ps`); `None` when the snapshot has no path.
    view: Option<View>,
    /// The process-record interval the last recorded table fell in.
    procs_bucket: u64,
    /// Whether the first sample, the start-up read of everything, has
    /// been taken: it is not charged to the bucket.
    started: bool,
    /// Per source, the warnings last logged ([`SystemSample::warnings`]):
    /// each is logged when it appears, not again while it lasts.
    warned: Vec<Vec<String>>,
    /// Per source, a slow not logged yet: the interval it began from and
    /// its last step ([`Agent::reschedule`]).
    unsaid: [Option<(Duration, budget::Change)>; SOURCE_COUNT],
}

/// The view files and the latest bytes of each source they carry.
struct View {
    writer: shm::view::ViewWriter,
    latest: Vec<Vec<u8>>,
    buf: Vec<u8>,
    failing: bool,
    /// A process table was read and not written: no viewer wanted it.
    unpublished: bool,
    /// The same for a read of the cgroups.
    cgroups_unpublished: bool,
}

/// What a view file says of the data of `s` it holds, read at `unix_ns`.
fn view_meta(st: &State, s: AgentSource, unix_ns: u64) -> shm::view::Meta {
    shm::view::Meta {
        agent_pid: std::process::id(),
        unix_ns,
        mono_ns: st.read_mono_ns[s.index()],
        interval_ns: st.stats[s.index()].interval.as_nanos() as u64,
    }
}

/// Writes the state's read of the cgroups to the view.
fn publish_cgroups(v: &mut View, st: &State) -> std::io::Result<()> {
    let meta = view_meta(st, AgentSource::Cgroups, st.cgroups.unix_ns);
    v.cgroups_unpublished = false;
    v.writer.publish_cgroups(&meta, &st.cgroups)
}

/// Writes the state's process table (and the exits before it) to the view.
fn publish_table(
    v: &mut View,
    st: &State,
    unix_ns: u64,
    fields: proctable::Fields,
) -> std::io::Result<()> {
    let meta = view_meta(st, AgentSource::Processes, unix_ns);
    v.unpublished = false;
    v.writer
        .publish_procs(&meta, fields, &st.procs, &st.exits.last)
}

impl Agent {
    /// Pins this thread (and every thread started
    /// after) to the housekeeping CPUs, opens the readers and the process
    /// table, reads every source once and publishes it. Blocks SIGHUP,
    /// SIGTERM and SIGINT in this thread, so threads started before
    /// [`Agent::run`] never take them.
    ///
    /// `config` is what `Config::load(config_path, &overrides)` gave the
    /// caller (which checks it before anything is published); the path and
    /// overrides are kept for SIGHUP.
    pub fn start(
        config: Config,
        config_path: Option<&Path>,
        overrides: FileConfig,
    ) -> Result<Agent, StartError> {
        mask_signals(libc::SIG_BLOCK);
        let mut reader = Reader::new(&config.proc_root, &config.sys_root);
        reader.set_keep_open(true);
        reader.set_gather_options(config.gather_options());
        // A slow or large textfile directory never delays another source.
        reader.set_textfile_background(true);
        // The tree's topology is what is read and reported; placement acts
        // on the running kernel, so it reads this machine's own /sys,
        // whatever tree the sources come from.
        let topo = reader.read_topology();
        let machine = if config.sys_root == Path::new("/sys") {
            reader.read_topology()
        } else {
            Reader::new("/proc", "/sys").read_topology()
        };
        // What the tree lacks (what is served), then what the machine does.
        let tree_notes = (config.sys_root != Path::new("/sys")).then_some(&topo.notes);
        for note in tree_notes.into_iter().flatten().chain(&machine.notes) {
            log(note);
        }
        let housekeeping = placement::housekeeping(config.housekeeping_cpus.as_ref(), &machine)
            .map_err(StartError::Setup)?;
        // CPUs asked for by name must be honoured; the ones found are a
        // preference: a machine whose /sys is unreadable names none.
        let pinned = if housekeeping.is_empty() {
            Err(std::io::Error::other("no CPU known"))
        } else {
            placement::pin_current_thread(&housekeeping)
        };
        match pinned {
            Ok(()) => log(format!(
                "running on housekeeping CPUs {housekeeping} (online {})",
                machine.online
            )),
            Err(e) if config.housekeeping_cpus.is_some() => {
                return Err(StartError::Setup(format!(
                    "pinning to housekeeping CPUs {housekeeping}: {e}"
                )));
            }
            Err(e) => log(format!(
                "not pinned to housekeeping CPUs \"{housekeeping}\" ({e}); running on any CPU"
            )),
        }

        let mut work = SystemSample::default();
        let mut missing = 0;
        for s in Source::ALL {
            if !config.source(AgentSource::System(s)).enabled {
                continue;
            }
            reader.read_source(s, &mut work);
            if work.status[s as usize] == SourceStatus::Missing {
                missing |= AgentSource::System(s).bit();
            }
        }
        if missing != 0 {
            log(format!(
                "not on this kernel, not scheduled: {}",
                keys(missing)
            ));
        }
        let ncpu = (topo.possible.len() as u32).max(work.stat.cpus.len() as u32);
        let shm = match ShmWriter::create(config.shm_path.as_deref(), ncpu) {
            Ok(w) => w,
            // One agent per path: the running one keeps it, untouched.
            Err(e @ shm::Error::InUse { .. }) => return Err(StartError::Setup(e.to_string())),
            Err(e) => {
                log(format!(
                    "running without the shared-memory snapshot: {e} (local readers fall back to HTTP or /proc)"
                ));
                ShmWriter::create(None, ncpu).map_err(|e| StartError::Setup(e.to_string()))?
            }
        };
        if let Some(dir) = shm.path().and_then(Path::parent)
            && let Ok(Err(kind)) = shm::memory_backed(dir)
        {
            log(format!(
                "{} is on {kind}, not in memory: the snapshot's and view files' pages are written back to disk every 30 s or so (I/O, and wakeups when a write waits for it); mount a tmpfs there, or give --shm-path in a directory of /dev/shm only root can write",
                dir.display()
            ));
        }
        let stat = config.source(AgentSource::System(Source::Stat));
        shm.set_intervals(
            stat.interval.as_nanos() as u64,
            stat.min_interval.as_nanos() as u64,
        );

        let state = State {
            housekeeping,
            ..State::default()
        };
        let shared = Arc::new(Shared {
            state: RwLock::new(state),
            shm,
            config: RwLock::new(Arc::new(config.clone())),
            want_since: std::array::from_fn(|_| AtomicU64::new(0)),
            started_unix_ns: unix_ns(),
            demand_blocked_until: AtomicU64::new(0),
            failure: std::sync::Mutex::new(None),
            store: std::sync::OnceLock::new(),
        });
        let mut agent = Agent {
            shared,
            reader,
            work,
            table: None,
            cgroups: None,
            query: Query::default(),
            exits_buf: Vec::new(),
            exits_pending: Vec::new(),
            walk_reloads: 0,
            schedule: Schedule::default(),
            anchor: Anchor::new(unix_ns(), mono_ns()),
            config_path: config_path.map(Path::to_path_buf),
            overrides,
            seen_request: 0,
            missing,
            procs_read_mono: 0,
            bucket: budget::ReadBucket::default(),
            started: false,
            tap: None,
            writer: None,
            kept: Vec::new(),
            view: None,
            procs_bucket: u64::MAX,
            warned: vec![Vec::new(); SOURCE_COUNT],
            unsaid: [None; SOURCE_COUNT],
        };
        agent.apply(&config, true);
        agent.seen_request = agent.shared.shm.request_count();
        // The first sample: everything scheduled, now.
        let all = AgentSource::ALL
            .into_iter()
            .filter(|s| agent.is_scheduled(&config, *s))
            .fold(0, |m, s| m | s.bit());
        agent.start_store(&config);
        agent.start_view(&config);
        // The start-up read (the first walk of the cgroups in it, made on
        // this thread: walks start there) serves every instant due by the
        // time it began (apply scheduled them before the store and the view
        // were set up): no second read of everything at once after it,
        // with rates over a few milliseconds.
        let began = agent.anchor.now(mono_ns());
        agent.read(all, 0);
        agent.schedule.advance(all, began);
        agent.started = true;
        // Loading BPF parses the kernel's BTF (megabytes, freed by now):
        // hand the freed heap back so it does not count as resident.
        sys::release_free_memory();
        Ok(agent)
    }

    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    fn is_scheduled(&self, config: &Config, s: AgentSource) -> bool {
        config.source(s).enabled
            && self.missing & s.bit() == 0
            && (s != AgentSource::Processes || self.table.is_some())
            && (s != AgentSource::Cgroups || self.cgroups.is_some())
    }

    /// Moves the exits recorded since the last call (nothing blocks) into
    /// `exits_pending`.
    fn drain_exits(&mut self) {
        if let Some(t) = self.table.as_mut() {
            t.drain_exits(&mut self.exits_pending);
        }
    }

    /// Applies a (new) configuration: the process table, the schedule.
    fn apply(&mut self, config: &Config, first: bool) {
        let procs_on = config.source(AgentSource::Processes).enabled;
        if procs_on && self.table.is_none() {
            match ProcTable::open(config.process_backend, &config.proc_root, &config.sys_root) {
                Ok(mut t) => {
                    // One thread: a split snapshot takes less time but no
                    // less CPU (BENCHMARKS.md, runs 15-16) and wakes a
                    // second thread on a second CPU every snapshot; an
                    // agent is judged by its CPU and its wakeups, not its
                    // latency.
                    t.set_threads(proctable::Threads::Fixed(1));
                    if let Some(why) = t.fallback_reason() {
                        log(format!(
                            "process table: procfs backend, because BPF did not load: {why}"
                        ));
                    } else {
                        log(format!("process table: {} backend", t.describe()));
                    }
                    // Drained on the sampler's own schedule: no wakeups.
                    let capture = match t.enable_exits() {
                        Ok(how) => {
                            if how == "taskstats" {
                                log("exit capture: taskstats (BPF not in use)");
                            }
                            Some(how)
                        }
                        Err(e) => {
                            log(format!("exit capture off: {e}"));
                            None
                        }
                    };
                    let mut st = self.shared.state_mut();
                    st.backend = Some(t.backend());
                    st.backend_note = t.fallback_reason().map(str::to_string);
                    st.exits.capture = capture;
                    drop(st);
                    self.table = Some(t);
                }
                Err(e) => log(format!("process table off: {e}")),
            }
        }
        if !procs_on {
            self.table = None;
        }
        let cgroups_on = config.source(AgentSource::Cgroups).enabled;
        if cgroups_on && self.cgroups.is_none() {
            let shared = self.shared.clone();
            match cgroups::Reader::new(cgroups::Options::new(&config.proc_root, &config.sys_root)) {
                Ok(r) => {
                    self.cgroups = Some(CgroupWalks::new(r, move || shared.shm.request()));
                }
                Err(e) => log(format!("cgroups off: {e}")),
            }
        }
        if !cgroups_on {
            self.cgroups = None;
        }
        let cgroup_id = config.process_metrics.cgroup.as_ref().and_then(|path| {
            use std::os::unix::fs::MetadataExt;
            let full = config
                .sys_root
                .join("fs/cgroup")
                .join(path.trim_start_matches('/'));
            match std::fs::metadata(&full) {
                Ok(m) => Some(m.ino()),
                Err(e) => {
                    log(format!(
                        "process_metrics.cgroup {path}: {} ({e}); no process matches",
                        full.display()
                    ));
                    None
                }
            }
        });
        // With BPF, the owner, cgroup and I/O counters come with the task
        // at little cost, and a viewer shows them; from /proc each is
        // another file per process, read only when asked for.
        let bpf = self.table.as_ref().is_some_and(|t| t.bpf().is_some());
        let mut fields = Fields::stat();
        if bpf {
            fields = fields
                .with(proctable::Field::Uid)
                .with(proctable::Field::Io)
                .with(proctable::Field::Cgroup);
        }
        if cgroup_id.is_some() {
            fields = fields.with(proctable::Field::Cgroup);
        }
        self.query = Query {
            fields,
            threads: false,
            pids: None,
        };
        let now = self.anchor.now(mono_ns());
        let shared = self.shared.clone();
        let mut st = shared.state_mut();
        st.cgroup_filter_id = cgroup_id;
        for s in AgentSource::ALL {
            let c = config.source(s);
            let on = self.is_scheduled(config, s);
            let stats = &mut st.stats[s.index()];
            stats.scheduled = on;
            stats.interval = c.interval;
            stats.budget.hold = budget::Hold::default();
            stats.budget.reads = 0;
            self.unsaid[s.index()] = None;
            let slack = config.slack_for(s).as_nanos() as u64;
            self.schedule.set(
                s.index(),
                on.then_some((c.interval.as_nanos() as u64, slack)),
                now,
            );
        }
        drop(st);
        if !first {
            log("configuration reloaded");
        }
    }

    /// One wakeup's work on the sources in `mask` (`demand`: those a
    /// consumer asked for): read them from the kernel, commit them to the
    /// shared state, re-budget their intervals and publish the
    /// shared-memory snapshot, then move the schedule for what the budget
    /// changed.
    fn read(&mut self, mask: Mask, asked: Mask) {
        let config = self.shared.config();
        let reads = self.read_kernel(mask);
        // A small walk of the cgroups is made here, now; a large one is
        // started on its thread once the last is committed (below).
        let cg = AgentSource::Cgroups.bit();
        let walk_on_thread = self.cgroups.as_ref().is_some_and(CgroupWalks::on_thread);
        if mask & cg != 0 && !walk_on_thread {
            self.cgroups = self.cgroups.take().map(|w| w.walk(asked & cg != 0));
        }
        let mut demand = asked;
        let (changes, settled) = {
            let shared = self.shared.clone();
            let mut guard = shared.state_mut();
            let st = &mut *guard;
            st.sampling_wakeups += 1;
            let keep_prev = config.process_metrics.mode == ProcessMetricsMode::Top;
            let committed = self.commit(st, mask, &mut demand, reads, keep_prev);
            if self.started && config.overhead_budget_pct > 0.0 {
                self.charge(st, &config, committed, demand);
            }
            let changes = if self.started && committed & !demand != 0 {
                budget::rebudget(&mut st.stats, &config, mono_ns())
            } else {
                Vec::new()
            };
            // Read on the schedule, at an interval now final.
            let settled = AgentSource::ALL
                .into_iter()
                .filter(|s| {
                    let stats = &st.stats[s.index()];
                    committed & !demand & s.bit() != 0 && stats.budget.is_final(stats.interval)
                })
                .fold(0, |m, s| m | s.bit());
            self.publish(st, mask);
            self.reader.take_kept(&mut self.kept);
            self.publish_view(st, mask, committed);
            self.record(st, &config, committed);
            (changes, settled)
        };
        // The next walk on its thread, once the last one is committed.
        if mask & cg != 0 && walk_on_thread {
            self.cgroups = self.cgroups.take().map(|w| w.walk(asked & cg != 0));
        }
        self.reschedule(&config, changes, settled);
    }

    /// Opens the journal and starts the history's writer, unless recording
    /// is off. A store that cannot be opened is logged, and served as
    /// `quietstat_store_recording 0`; sampling goes on.
    fn start_store(&mut self, config: &Config) {
        if !config.store.enabled {
            return;
        }
        if let Err(e) = self.open_store(config) {
            log(format!("not recording: {e}"));
            let _ = self.shared.store.set(Arc::new(store::Stats::default()));
        }
    }

    fn open_store(&mut self, config: &Config) -> Result<(), String> {
        if config.store.path.as_os_str().is_empty() {
            return Err(crate::config::default_store_path()
                .err()
                .unwrap_or_default());
        }
        let hidden = procfs::hidden_pids(&config.proc_root);
        let proc_view = match hidden {
            Some(gid) => store::access::ProcView::Hidden { gid },
            None => store::access::ProcView::Open,
        };
        let access = store::access::decide(config.store.group.as_deref(), proc_view)?;
        let journal = match &config.store.journal {
            Some(j) => j.clone(),
            None => {
                let j = default_journal(config.shm_path.as_deref(), &config.store.path);
                if let Some(dir) = j.parent().filter(|d| d.starts_with("/dev/shm")) {
                    use std::os::unix::fs::DirBuilderExt;
                    // Private; one another user made first is refused
                    // when the journal is opened.
                    let _ = std::fs::DirBuilder::new().mode(0o700).create(dir);
                }
                j
            }
        };
        let opts = store::Options {
            dir: config.store.path.clone(),
            journal,
            journal_bytes: store::JOURNAL_BYTES,
            retention: config.store.retention,
            max_bytes: config.store.max_size,
            flush: config.store.flush_interval,
            proc_root: config.proc_root.clone(),
            access,
        };
        let (tap, writer, stats) = store::start(opts, log)?;
        let b = config.store.max_size;
        let cap = match b {
            _ if b.is_multiple_of(1 << 30) => format!("{} GiB", b >> 30),
            _ if b.is_multiple_of(1 << 20) => format!("{} MiB", b >> 20),
            _ => format!("{b} bytes"),
        };
        log(format!(
            "recording to {} (process table every {}, kept {} or {cap} at most)",
            config.store.path.display(),
            humantime::format_duration(config.store.process_interval),
            humantime::format_duration(config.store.retention),
        ));
        self.reader.keep_bytes_of(&store::RECORDED);
        self.tap = Some(tap);
        self.writer = Some(writer);
        let _ = self.shared.store.set(stats);
        Ok(())
    }

    /// Starts the view files beside the snapshot, and keeps the bytes of
    /// the sources they carry (and the history records) as they are read.
    fn start_view(&mut self, config: &Config) {
        let mut keep: Vec<Source> = shm::view::VIEW_SOURCES.to_vec();
        if self.tap.is_some() {
            keep.extend(store::RECORDED);
        }
        self.reader.keep_bytes_of(&keep);
        let Some(path) = self.shared.shm.path() else {
            return;
        };
        let private = procfs::hides_pids(&config.proc_root);
        let writer = match shm::view::ViewWriter::new(path, private) {
            Ok(w) => w,
            Err(e) => {
                log(format!(
                    "view files beside {} not made: {e}; local viewers read /proc themselves",
                    path.display()
                ));
                return;
            }
        };
        self.view = Some(View {
            writer,
            latest: vec![Vec::new(); SOURCE_COUNT],
            buf: Vec::new(),
            failing: false,
            unpublished: false,
            cgroups_unpublished: false,
        });
    }

    /// Rewrites the view files whose data was just read: the system file
    /// when /proc/stat was, the process file when the table was.
    fn publish_view(&mut self, st: &State, mask: Mask, committed: Mask) {
        let Some(v) = self.view.as_mut() else {
            return;
        };
        for (src, bytes) in procfs::kept::entries(&self.kept) {
            let l = &mut v.latest[src as usize];
            l.clear();
            l.extend_from_slice(bytes);
        }
        let stat = AgentSource::System(Source::Stat);
        let mut result = Ok(());
        if mask & stat.bit() != 0 && st.sample.ok(Source::Stat) {
            v.buf.clear();
            for s in shm::view::VIEW_SOURCES {
                if st.sample.ok(s) {
                    procfs::kept::append(&mut v.buf, s, &v.latest[s as usize]);
                }
            }
            let meta = view_meta(st, stat, self.work.unix_ns);
            result = v.writer.publish_system(&meta, &v.buf);
        }
        let procs = AgentSource::Processes;
        if result.is_ok() && committed & procs.bit() != 0 && st.procs_status == SourceStatus::Ok {
            // Megabytes with tens of thousands of processes: written only
            // while a viewer reads them.
            if v.writer.wanted_within(shm::view::WANT_FOR) {
                result = publish_table(v, st, self.work.unix_ns, self.query.fields);
            } else {
                v.unpublished = true;
            }
        }
        // Written, as the table, while viewers read the process file.
        if result.is_ok() && committed & AgentSource::Cgroups.bit() != 0 {
            if v.writer.wanted_within(shm::view::WANT_FOR) {
                result = publish_cgroups(v, st);
            } else {
                v.cgroups_unpublished = true;
            }
        }
        Self::log_view_result(v, result);
    }

    /// Writes the latest process table when a viewer asks for it after a
    /// pause (it wakes the sampler, then waits for the file).
    fn publish_wanted_table(&mut self) {
        let Some(v) = self.view.as_mut() else {
            return;
        };
        if !(v.unpublished || v.cgroups_unpublished) || !v.writer.wanted_within(shm::view::WANT_FOR)
        {
            return;
        }
        let result = {
            let st = self.shared.state.read().unwrap_or_else(|e| e.into_inner());
            // The cgroups first: a viewer waiting for the table (its
            // first screen) then finds them too.
            let mut result = Ok(());
            if v.cgroups_unpublished {
                result = publish_cgroups(v, &st);
            }
            if result.is_ok() && v.unpublished {
                // The wall-clock time of the table's read.
                let ago = mono_ns().saturating_sub(st.read_mono_ns[AgentSource::Processes.index()]);
                let unix_ns = sys::unix_ns().saturating_sub(ago);
                result = publish_table(v, &st, unix_ns, self.query.fields);
            }
            result
        };
        Self::log_view_result(v, result);
        self.shared.shm.notify();
    }

    /// Logs a failure to write the view files once per streak of failures
    /// (a full /run, say), and the end of the streak.
    fn log_view_result(v: &mut View, result: std::io::Result<()>) {
        match result {
            Err(e) if !v.failing => {
                v.failing = true;
                log(format!(
                    "view files beside the snapshot not written: {e} ({}); local viewers read /proc themselves until this clears",
                    v.writer
                        .procs_path()
                        .parent()
                        .unwrap_or(Path::new("/"))
                        .display()
                ));
            }
            Ok(()) if v.failing => {
                v.failing = false;
                log("view files written again");
            }
            _ => {}
        }
    }

    /// Hands what was just read to the history: the system sources' bytes,
    /// exits, the process table once per process-record interval, and
    /// each walk of the cgroups (at the time it began).
    fn record(&mut self, st: &State, config: &Config, committed: Mask) {
        let Some(tap) = self.tap.as_mut() else {
            return;
        };
        let ts = self.work.unix_ns / 1_000_000;
        tap.system(ts, &self.kept);
        if committed & AgentSource::Processes.bit() != 0 && st.procs_status == SourceStatus::Ok {
            tap.exits(ts, &st.exits.last);
            let every = config.store.process_interval.as_millis().max(1) as u64;
            if ts / every != self.procs_bucket {
                self.procs_bucket = ts / every;
                tap.procs(ts, &st.procs);
            }
        }
        if committed & AgentSource::Cgroups.bit() != 0 && !st.cgroups.cgroups.is_empty() {
            tap.cgroups(st.cgroups.unix_ns / 1_000_000, &st.cgroups);
        }
        // The writer's flushes come at this instant, not on a clock of its
        // own.
        if let Some(w) = self.writer.as_mut() {
            w.sampled(ts);
        }
    }

    /// Takes the cost of the reads consumers asked for (`demand` in
    /// `mask`) from the bucket of what the scheduled reads leave of the
    /// budget, and tells consumers until when the reads they ask for are
    /// declined.
    fn charge(&mut self, st: &State, config: &Config, mask: Mask, demand: Mask) {
        let cost: u64 = AgentSource::ALL
            .into_iter()
            .filter(|s| mask & demand & s.bit() != 0)
            .map(|s| st.stats[s.index()].last_cost_ns)
            .sum();
        let rate = budget::budget_ns_per_s(config.overhead_budget_pct)
            - budget::scheduled_ns_per_s(&st.stats);
        let until = self.bucket.charge(mono_ns(), cost, rate);
        self.shared
            .demand_blocked_until
            .store(until, Ordering::Release);
    }

    /// Reads the sources in `mask` into the sampler's own buffers, without
    /// the state's lock.
    fn read_kernel(&mut self, mask: Mask) -> Reads {
        let mut read_at = [0u64; SOURCE_COUNT];
        let mut cpu_ns = [0u64; SOURCE_COUNT];
        // When this sample was taken: per-source reads leave the sample's
        // own times alone, so they are set here.
        self.work.taken = Instant::now();
        self.work.unix_ns = unix_ns();
        for s in Source::ALL {
            let a = AgentSource::System(s);
            if mask & a.bit() != 0 {
                read_at[a.index()] = mono_ns();
                let cpu = sys::thread_cpu_ns();
                self.reader.read_source(s, &mut self.work);
                cpu_ns[a.index()] = sys::thread_cpu_ns().saturating_sub(cpu);
            }
        }
        let procs = mask & AgentSource::Processes.bit() != 0;
        let mut procs_result = None;
        let mut procs_cost_ns = 0;
        // The exit ring is drained on every wakeup (two loads when it is
        // empty), not only with the process table: the ring holds about
        // 35,000 exits, seven seconds at 5,000 exits/s, and the table may
        // be read far less often than that.
        self.drain_exits();
        if procs && let Some(t) = self.table.as_mut() {
            let i = AgentSource::Processes.index();
            read_at[i] = mono_ns();
            let t0 = Instant::now();
            let cpu = sys::thread_cpu_ns();
            // The rows are built when the table is committed, into the
            // one readers get (`commit`).
            procs_result = Some(t.read(&self.query));
            if let Some(b) = t.bpf_mut()
                && b.walk_reloads() > self.walk_reloads
            {
                self.walk_reloads = b.walk_reloads();
                log(format!(
                    "process table: the walk's array was too small; reloaded with room for {} rows",
                    b.walk_capacity().unwrap_or(0)
                ));
            }
            self.drain_exits();
            std::mem::swap(&mut self.exits_buf, &mut self.exits_pending);
            self.exits_pending.clear();
            procs_cost_ns = t0.elapsed().as_nanos() as u64;
            cpu_ns[i] = sys::thread_cpu_ns().saturating_sub(cpu);
        }
        // One map lookup, only when the process table was read.
        let exits_lost = procs
            .then(|| self.table.as_ref().and_then(ProcTable::exits_lost))
            .flatten();
        Reads {
            read_at,
            procs: procs_result,
            procs_cost_ns,
            cpu_ns,
            exits_lost,
        }
    }

    /// Swaps what was read into the state and counts its cost; returns the
    /// sources committed (those of `mask`, but the process table when there
    /// is none to read).
    /// `keep_prev`: keep the table before the new one
    /// ([`State::procs_prev`]) for the rates of per-process series ranked
    /// by CPU; otherwise it is not kept: a table less in memory (20 MB at
    /// 64,000 processes).
    fn commit(
        &mut self,
        st: &mut State,
        mask: Mask,
        demand: &mut Mask,
        mut reads: Reads,
        keep_prev: bool,
    ) -> Mask {
        let mut committed = 0;
        for s in AgentSource::ALL {
            let i = s.index();
            // A finished cgroup walk is committed whether or not the
            // source is due (its read began earlier).
            if mask & s.bit() == 0 && s != AgentSource::Cgroups {
                continue;
            }
            let cost_ns = match s {
                AgentSource::System(src) => {
                    st.sample.taken = self.work.taken;
                    st.sample.unix_ns = self.work.unix_ns;
                    st.sample.swap_source(&mut self.work, src);
                    if st.sample.ok(src) {
                        let now = st.sample.warnings(src);
                        for w in now.iter().filter(|w| !self.warned[i].contains(w)) {
                            warn(w);
                        }
                        self.warned[i] = now;
                    }
                    let c = st.sample.cost[src as usize];
                    let stats = &mut st.stats[i];
                    stats.read_ns += c.read_ns;
                    stats.parse_ns += c.parse_ns;
                    stats.bytes += c.bytes;
                    stats.skipped_lines += u64::from(st.sample.skipped[src as usize].lines);
                    c.read_ns + c.parse_ns
                }
                AgentSource::Processes => {
                    let Some(r) = reads.procs.take() else {
                        continue;
                    };
                    // The rows are built here, under the state's lock,
                    // into the table readers get: no second table of
                    // 300 bytes a process held between reads. Should the
                    // build fail (a decoding thread panicked), the table
                    // is empty and the source says it failed.
                    // Exits taskstats gave a start to within a second
                    // take the exact one from the table before (the
                    // table they were last seen in, about to be replaced).
                    if let Some(t) = self.table.as_ref() {
                        t.settle_exits(&mut self.exits_buf, &st.procs);
                    }
                    let built = r.and_then(|()| {
                        if keep_prev {
                            std::mem::swap(&mut st.procs_prev, &mut st.procs);
                        } else {
                            st.procs_prev = Vec::new();
                        }
                        let t0 = Instant::now();
                        let cpu = sys::thread_cpu_ns();
                        let built = match self.table.as_mut() {
                            Some(t) => t.build(&self.query, &mut st.procs),
                            None => Ok(()),
                        };
                        reads.procs_cost_ns += t0.elapsed().as_nanos() as u64;
                        reads.cpu_ns[i] += sys::thread_cpu_ns().saturating_sub(cpu);
                        built
                    });
                    match built {
                        Ok(()) => {
                            let now = reads.read_at[i];
                            st.procs_secs = if self.procs_read_mono == 0 {
                                0.0
                            } else {
                                (now - self.procs_read_mono) as f64 / 1e9
                            };
                            self.procs_read_mono = now;
                            st.procs_status = SourceStatus::Ok;
                            if let Some(t) = &self.table {
                                let (n, first) = t.unreadable();
                                // Said once, with the first file that failed.
                                if n > 0 && st.procs_unreadable == 0 {
                                    log(format!(
                                        "process table: {n} processes left out, their files could not be read (counted in quietstat_process_unreadable_total); first: {}",
                                        first.unwrap_or("?")
                                    ));
                                }
                                st.procs_unreadable = n;
                            }
                        }
                        Err(e) => st.procs_status = SourceStatus::Failed(e.to_string()),
                    }
                    st.exits.captured += self.exits_buf.len() as u64;
                    std::mem::swap(&mut st.exits.last, &mut self.exits_buf);
                    if let Some(l) = reads.exits_lost {
                        st.exits.lost = l;
                    }
                    st.stats[i].read_ns += reads.procs_cost_ns;
                    reads.procs_cost_ns
                }
                AgentSource::Cgroups => {
                    // A walk that finished, whenever it was asked for.
                    let Some(d) = self.cgroups.as_mut().and_then(|w| w.take(&mut st.cgroups))
                    else {
                        continue;
                    };
                    reads.read_at[i] = d.read_at;
                    // Recording a walk is part of its cost: the history's
                    // writer's time on the walks it wrote since the last
                    // one committed (a walk behind: it writes at its
                    // flush), so that the source's cap holds the two.
                    let recorded = self
                        .shared
                        .store
                        .get()
                        .map_or(0, |s| s.take_cgroups_cpu_ns());
                    reads.cpu_ns[i] = d.cpu_ns + recorded;
                    *demand = (*demand & !s.bit()) | if d.demand { s.bit() } else { 0 };
                    let stats = &mut st.stats[i];
                    stats.read_ns += d.cost_ns;
                    stats.skipped_lines += st.cgroups.skipped_lines;
                    d.cost_ns
                }
            };
            st.read_mono_ns[i] = reads.read_at[i];
            let stats = &mut st.stats[i];
            stats.reads += 1;
            if *demand & s.bit() != 0 {
                stats.demand_reads += 1;
            }
            stats.last_cost_ns = cost_ns;
            stats.cpu_ns += reads.cpu_ns[i];
            // The start-up read (cold caches, first opens) says little of
            // what reads will cost: the budget counts a source from the next.
            if self.started {
                stats.budget.observe(reads.cpu_ns[i]);
            }
            committed |= s.bit();
        }
        committed
    }

    /// Publishes the shared-memory snapshot when a source it carries was
    /// read; otherwise only wakes in-process consumers waiting for others.
    fn publish(&self, st: &State, mask: Mask) {
        if SHM_SOURCES.iter().any(|s| mask & s.bit() != 0) {
            let snap =
                shm::Snapshot::from_sample(&st.sample, st.read_mono_ns[Source::Stat as usize]);
            self.shared.shm.publish(&snap);
        } else {
            self.shared.shm.notify();
        }
    }

    /// Moves the schedule of each source whose interval the budget
    /// changed, and says so once per decision: a restore at once; a slow
    /// once it is final (`settled`: the sources just read on the schedule
    /// at an interval now final, [`budget::Track::is_final`]), so that the
    /// steps of one slow (its cost often rises as it is read less often:
    /// colder caches) make one line, from the first interval to the last.
    fn reschedule(&mut self, config: &Config, changes: Vec<budget::SourceChange>, settled: Mask) {
        let now = self.anchor.now(mono_ns());
        let mut changed: Mask = 0;
        for budget::SourceChange {
            source: s,
            change: c,
        } in changes
        {
            changed |= s.bit();
            let slack = config.slack_for(s).as_nanos() as u64;
            self.schedule
                .set(s.index(), Some((c.to.as_nanos() as u64, slack)), now);
            match c.why {
                budget::Why::Over { .. } | budget::Why::Capped { .. } => {
                    let pending = &mut self.unsaid[s.index()];
                    let from = pending.map_or(c.from, |(from, _)| from);
                    *pending = Some((from, c));
                }
                budget::Why::Fits { .. } => {
                    self.say_slow(config, s);
                    say(config, s, c.from, &c);
                }
            }
        }
        for s in AgentSource::ALL {
            if settled & !changed & s.bit() != 0 {
                self.say_slow(config, s);
            }
        }
    }

    /// Re-anchors the schedule when the wall clock stepped, so that every
    /// source keeps its rate ([`Schedule::shift`]); a step of a second or
    /// more is logged.
    fn follow_wall_clock(&mut self) {
        let (unix, mono) = (unix_ns(), mono_ns());
        let Some(delta) = self.anchor.follow(unix, mono) else {
            return;
        };
        self.schedule.shift(delta);
        if delta.abs() >= 1_000_000_000 {
            let d = Duration::from_nanos(delta.unsigned_abs() as u64);
            log(format!(
                "the wall clock stepped {} by {}: sampling goes on at the same rate, and samples are stamped with the new time",
                if delta < 0 { "back" } else { "forward" },
                humantime::format_duration(Duration::from_millis(d.as_millis() as u64)),
            ));
        }
    }

    /// Logs the slow of `s` not said yet, if any.
    fn say_slow(&mut self, config: &Config, s: AgentSource) {
        if let Some((from, c)) = self.unsaid[s.index()].take() {
            say(config, s, from, &c);
        }
    }

    /// Runs until SIGTERM or SIGINT (or [`crate::request_stop`]); SIGHUP reloads
    /// the configuration file. On the way out the shared-memory snapshot is
    /// marked stale.
    pub fn run(mut self) {
        let shared = self.shared.clone();
        set_wake_word(Some(shared.shm.request_word()));
        install_handlers();
        mask_signals(libc::SIG_UNBLOCK);
        loop {
            // The counter first, the flags after: a signal after this load
            // changes the counter, so the wait below cannot sleep through it.
            self.seen_request = self.shared.shm.request_count();
            if STOP.load(Ordering::SeqCst) {
                break;
            }
            if RELOAD.swap(false, Ordering::SeqCst) {
                self.reload();
            }
            self.follow_wall_clock();
            let now = self.anchor.now(mono_ns());
            let mut mask = self.schedule.due(now);
            let scheduled = mask;
            // Consumers' requests: each asks for a sample read no earlier
            // than some instant (now minus its max age); a source is read
            // again only when its last read is older than the most demanding
            // request, so requests made while a read was under way, and
            // satisfied by it, cost nothing more.
            let shm_want = self.shared.shm.want_since();
            let mono = mono_ns();
            let mut floor_wait: Option<u64> = None;
            let mut demand = 0;
            {
                let config = self.shared.config();
                let st = self.shared.state.read().unwrap_or_else(|e| e.into_inner());
                for s in AgentSource::ALL {
                    let i = s.index();
                    // A read a consumer asked for within the last tenth of
                    // the interval stands for the scheduled one: the data is
                    // fresh, and consumers asking often never add a read.
                    let recent = st.stats[i].interval.as_nanos() as u64 / 10;
                    if mask & s.bit() != 0
                        && st.stats[i].demand_reads > 0
                        && mono.saturating_sub(st.read_mono_ns[i]) < recent
                    {
                        mask &= !s.bit();
                    }
                    let mut want = self.shared.want_since[i].load(Ordering::Acquire);
                    if SHM_SOURCES.contains(&s) {
                        want = want.max(shm_want);
                    }
                    if !st.stats[i].scheduled || want <= st.read_mono_ns[i] {
                        continue;
                    }
                    let floor = config.source(s).min_interval.as_nanos() as u64;
                    let ready_at = st.read_mono_ns[i].saturating_add(floor);
                    if ready_at <= mono {
                        demand |= s.bit();
                    } else {
                        let wait = ready_at - mono;
                        floor_wait = Some(floor_wait.map_or(wait, |w: u64| w.min(wait)));
                    }
                }
            }
            mask |= demand;
            demand &= !scheduled;
            // No second walk while one runs: the source waits for it.
            let mut walk_done = false;
            if let Some(w) = self.cgroups.as_ref() {
                if w.walking() {
                    mask &= !AgentSource::Cgroups.bit();
                    demand &= !AgentSource::Cgroups.bit();
                }
                walk_done = w.finished();
            }
            if mask != 0 || walk_done {
                self.read(mask, demand);
            }
            self.schedule.advance(scheduled, now);
            let mut deadline = self
                .schedule
                .next_deadline()
                .map(|d| self.anchor.to_mono(d));
            if let Some(w) = floor_wait {
                let d = mono_ns().saturating_add(w);
                deadline = Some(deadline.map_or(d, |x| x.min(d)));
            }
            self.publish_wanted_table();
            self.shared.shm.wait_request(self.seen_request, deadline);
        }
        mask_signals(libc::SIG_BLOCK);
        let config = self.shared.config();
        for s in AgentSource::ALL {
            self.say_slow(&config, s);
        }
        set_wake_word(None);
        self.shared.shm.mark_stopped();
        if let Some(v) = &self.view {
            v.writer.remove();
        }
        log("stopped; shared-memory snapshot marked stale");
    }

    fn reload(&mut self) {
        match Config::load(self.config_path.as_deref(), &self.overrides) {
            Ok(c) => {
                let old = self.shared.config();
                if c.listen != old.listen || c.shm_path != old.shm_path {
                    log("listen and shm_path changes take effect at restart");
                }
                *self
                    .shared
                    .config
                    .write()
                    .unwrap_or_else(|e| e.into_inner()) = Arc::new(c.clone());
                self.reader.set_gather_options(c.gather_options());
                self.apply(&c, false);
            }
            Err(e) => log(format!(
                "reload refused, keeping the running configuration: {e}"
            )),
        }
    }
}

/// What one wakeup read from the kernel, before it is committed.
struct Reads {
    /// CLOCK_MONOTONIC ns when each source read began.
    read_at: [u64; SOURCE_COUNT],
    /// The process table's result, when it was read.
    procs: Option<proctable::Result<()>>,
    procs_cost_ns: u64,
    /// CPU time of this thread in each source's read and parse (the
    /// process table's: its snapshot), what the overhead budget counts.
    cpu_ns: [u64; SOURCE_COUNT],
    /// Exit records lost so far, when the process table was read.
    exits_lost: Option<u64>,
}

/// Logs a change of the interval of `s` (from `from`, where a slow of
/// several steps began).
fn say(config: &Config, s: AgentSource, from: Duration, c: &budget::Change) {
    let src = config.source(s);
    log(c.describe(
        s.key(),
        from,
        src.interval,
        src.max_age,
        config.overhead_budget_pct,
    ));
}

fn keys(mask: Mask) -> String {
    AgentSource::ALL
        .into_iter()
        .filter(|s| mask & s.bit() != 0)
        .map(AgentSource::key)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where the history's journal goes when the configuration names no path:
/// `store-journal` beside the snapshot when its directory is a tmpfs; else
/// (no snapshot, or its directory on a disk) in `/dev/shm/quietstat-<uid>/`
/// (a directory of this user's, mode 0700), one per store, named by a hash
/// of the store's path so that a restart finds it.
pub fn default_journal(shm_path: Option<&Path>, store: &Path) -> PathBuf {
    match shm_path.and_then(Path::parent) {
        Some(dir) if matches!(shm::memory_backed(dir), Ok(Ok(_))) => dir.join("store-journal"),
        _ => {
            let h = store
                .as_os_str()
                .as_encoded_bytes()
                .iter()
                .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
                });
            PathBuf::from(format!(
                "/dev/shm/quietstat-{}/journal-{h:016x}",
                store::access::euid()
            ))
        }
    }
}
