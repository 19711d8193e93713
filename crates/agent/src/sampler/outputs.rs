//! What the sampler hands on after each commit besides the shared state:
//! the view files local viewers read, and the history's journal.

use super::*;

impl Agent {
    /// Opens the journal and starts the history's writer, unless recording
    /// is off. A store that cannot be opened is logged, and served as
    /// `quietstat_store_recording 0`; sampling goes on.
    pub(super) fn start_store(&mut self, config: &Config) {
        if !config.store.enabled {
            return;
        }
        if let Err(e) = self.open_store(config) {
            log(format!("not recording: {e}"));
            let _ = self.shared.store.set(Arc::new(store::Stats::default()));
        }
    }

    pub(super) fn open_store(&mut self, config: &Config) -> Result<(), sys::Error> {
        if config.store.path.as_os_str().is_empty() {
            return Err(match crate::config::default_store_path() {
                Err(e) => e,
                Ok(p) => sys::Error::invalid(format!(
                    "no store directory given (the default is {})",
                    p.display()
                )),
            });
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
            journal_bytes: store::journal_bytes_for(self.memory.stats.ceiling),
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
    pub(super) fn start_view(&mut self, config: &Config) {
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
    pub(super) fn publish_view(&mut self, st: &State, mask: Mask, committed: Mask) {
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
    pub(super) fn publish_wanted_table(&mut self) {
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
    pub(super) fn log_view_result(v: &mut View, result: std::io::Result<()>) {
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
    pub(super) fn record(&mut self, st: &State, config: &Config, committed: Mask) {
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
}

/// The view files and the latest bytes of each source they carry.
pub(super) struct View {
    pub(super) writer: shm::view::ViewWriter,
    pub(super) latest: Vec<Vec<u8>>,
    pub(super) buf: Vec<u8>,
    pub(super) failing: bool,
    /// A process table was read and not written: no viewer wanted it.
    pub(super) unpublished: bool,
    /// The same for a read of the cgroups.
    pub(super) cgroups_unpublished: bool,
}

/// What a view file says of the data of `s` it holds, read at `unix_ns`.
pub(super) fn view_meta(st: &State, s: AgentSource, unix_ns: u64) -> shm::view::Meta {
    shm::view::Meta {
        agent_pid: std::process::id(),
        unix_ns,
        mono_ns: st.read_mono_ns[s.index()],
        interval_ns: st.stats[s.index()].interval.as_nanos() as u64,
    }
}

/// Writes the state's read of the cgroups to the view.
pub(super) fn publish_cgroups(v: &mut View, st: &State) -> std::io::Result<()> {
    let meta = view_meta(st, AgentSource::Cgroups, st.cgroups.unix_ns);
    v.cgroups_unpublished = false;
    v.writer.publish_cgroups(&meta, &st.cgroups)
}

/// Writes the state's process table (and the exits before it) to the view.
pub(super) fn publish_table(
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
