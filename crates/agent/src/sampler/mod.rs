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
use crate::{StartError, budget, log, memory, placement, warn};

mod commit;
mod outputs;
mod pacing;

pub use outputs::default_journal;
use outputs::*;
use pacing::*;

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
    /// Whether the network bytes' absence was logged.
    net_off_logged: bool,
    /// The cgroups' network namespaces (container_network_*).
    cgroup_net: crate::cgroup_net::CgroupNet,
    /// What the GPU read last said (logged when it changes).
    gpu_note: String,
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
    /// The memory ceiling and what is shed near it.
    memory: memory::Governor,
    /// The textfile parse whose refused files were last counted.
    textfile_counted: usize,
    /// The process table's RSS floor in force ([`memory::next_floor`]).
    rss_floor: u64,
    /// The agent's own memory cgroup, whose charge counts too.
    own_cgroup: Option<memory::OwnCgroup>,
}

/// The housekeeping CPUs, and this thread pinned to them: CPUs asked for
/// by name must be honoured; the ones found are a preference (a machine
/// whose /sys is unreadable names none).
fn place(
    config: &Config,
    machine: &procfs::cpu::Topology,
) -> Result<procfs::cpu::CpuList, StartError> {
    let housekeeping = placement::housekeeping(config.housekeeping_cpus.as_ref(), machine)
        .map_err(StartError::Setup)?;
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
            return Err(StartError::Setup(sys::Error::io(
                format!("pinning to housekeeping CPUs {housekeeping}"),
                e,
            )));
        }
        Err(e) => log(format!(
            "not pinned to housekeeping CPUs \"{housekeeping}\" ({e}); running on any CPU"
        )),
    }
    Ok(housekeeping)
}

/// The shared-memory snapshot at its path, or an anonymous one when the
/// path cannot be used; refused when another agent holds the path.
fn open_snapshot(config: &Config, ncpu: u32) -> Result<ShmWriter, StartError> {
    let shm = match ShmWriter::create(config.shm_path.as_deref(), ncpu) {
        Ok(w) => w,
        // One agent per path: the running one keeps it, untouched.
        Err(e @ shm::Error::InUse { .. }) => return Err(StartError::Setup(e.into())),
        Err(e) => {
            log(format!(
                "running without the shared-memory snapshot: {e} (local readers fall back to HTTP or /proc)"
            ));
            ShmWriter::create(None, ncpu).map_err(|e| StartError::Setup(e.into()))?
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
    Ok(shm)
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
        let housekeeping = place(&config, &machine)?;

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
        let shm = open_snapshot(&config, ncpu)?;
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
            remote_write: std::sync::OnceLock::new(),
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
            net_off_logged: false,
            cgroup_net: crate::cgroup_net::CgroupNet::new(config.proc_root.clone()),
            gpu_note: String::new(),
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
            memory: memory::Governor::new(0),
            textfile_counted: 0,
            rss_floor: 0,
            own_cgroup: memory::OwnCgroup::find(),
        };
        agent.set_ceiling(&config);
        // A machine whose processes would not fit is capped before the
        // first table is built (the tasks counted by /proc/loadavg, read
        // above with every source).
        if let Some(memory::Change::Began(m)) =
            agent.memory.before_first_table(agent.work.loadavg.threads)
        {
            warn(m);
        }
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
            match ProcTable::open_with_exit_ring(
                config.process_backend,
                &config.proc_root,
                &config.sys_root,
                memory::exit_ring_bytes_for(self.memory.stats.ceiling),
                // Capped from the start: the walk's rows, kernel memory
                // charged to the agent's cgroup, are written for the cap's
                // processes only.
                self.memory.caps().rows.unwrap_or(0),
                // The TCP sockets' bytes when asked, loaded with the rest
                // (one parse of the kernel's BTF), unless the ceiling caps
                // the rows from the start: their owners are kernel memory
                // charged to the agent's cgroup, about 100 bytes a socket.
                config.process_network && self.memory.caps().rows.is_none(),
            ) {
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
                        if config.process_network && self.memory.caps().rows.is_some() {
                            log(
                                "process table: no network bytes per process: the memory ceiling caps the rows from the start",
                            );
                        }
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
        // With BPF, the owner, cgroup, I/O counters and run delay come
        // with the task at little cost, and a viewer shows them; from
        // /proc each is another file per process, read only when asked
        // for. So do the TCP sockets' bytes (a visit per socket; BPF only),
        // where their programs were loaded with the table.
        let bpf = self.table.as_ref().is_some_and(|t| t.bpf().is_some());
        let net = self
            .table
            .as_ref()
            .and_then(|t| t.bpf())
            .is_some_and(|b| b.net_loaded());
        let mut fields = Fields::stat();
        if bpf {
            fields = fields
                .with(proctable::Field::Uid)
                .with(proctable::Field::Io)
                .with(proctable::Field::Cgroup)
                .with(proctable::Field::Delay);
        }
        if net {
            fields = fields.with(proctable::Field::Net);
            if let Some(t) = self.table.as_mut() {
                t.set_net_sweep_every(config.process_network_sweep_interval);
            }
        }
        // GPU use: a scan of every descriptor at its own interval, the
        // GPU descriptors' fdinfo at each read.
        if config.process_gpu
            && let Some(t) = self.table.as_mut()
        {
            t.set_gpu_scan_every(config.process_gpu_scan_interval);
            fields = fields.with(proctable::Field::Gpu);
        }
        // Delay accounting: five more lines a task, only while the kernel
        // keeps the figures (looked at here: at start and on reload).
        if bpf && proctable::delay_accounting_on(&config.proc_root) == Some(true) {
            fields = fields.with(proctable::Field::DelayAcct);
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

    /// The memory ceiling of `config`, said in the log.
    fn set_ceiling(&mut self, config: &Config) {
        let c = config.memory_ceiling();
        if c.bytes != self.memory.stats.ceiling {
            log(format!(
                "memory ceiling {} ({})",
                memory::mib(c.bytes),
                c.why
            ));
            self.memory.stats.ceiling = c.bytes;
            self.shared.state_mut().memory = self.memory.stats;
        }
    }

    /// After a process-table read of `rows` processes: the memory held
    /// against the ceiling, and what the next reads keep.
    fn govern_memory(&mut self, st: &mut State, rows: usize) {
        let Some(charged) = memory::charged_now(self.own_cgroup.as_ref()) else {
            return;
        };
        let depth = st
            .cgroups
            .cgroups
            .iter()
            .map(|c| c.depth)
            .max()
            .unwrap_or(0);
        let before = self.memory.caps();
        match self.memory.check(charged, rows, depth) {
            Some(memory::Change::Began(m)) => warn(m),
            Some(memory::Change::Ended(m)) => log(m),
            None => {}
        }
        let caps = self.memory.caps();
        if caps != before {
            if let Some(w) = self.cgroups.as_mut() {
                w.set_max_depth(caps.cgroup_depth);
            }
            self.reader.set_textfile_max_dir_bytes(caps.textfile_bytes);
            sys::release_free_memory();
        }
        st.memory = self.memory.stats;
    }

    fn reload(&mut self) {
        match Config::load(self.config_path.as_deref(), &self.overrides) {
            Ok(c) => {
                self.set_ceiling(&c);
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
                self.reader
                    .set_textfile_max_dir_bytes(self.memory.caps().textfile_bytes);
                self.apply(&c, false);
            }
            Err(e) => log(format!(
                "reload refused, keeping the running configuration: {e}"
            )),
        }
    }
}
