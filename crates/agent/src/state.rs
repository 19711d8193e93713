//! What the sampler shares with consumers: the latest snapshot of every
//! source with its cost, and the way a consumer asks for fresher data.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use procfs::cpu::CpuList;
use procfs::{SourceStatus, SystemSample};
use proctable::{Backend, Exit, Proc};
use shm::ShmWriter;
use sys::mono_ns;

use crate::budget::SourceStats;
use crate::config::{AgentSource, Config, Mask, SOURCE_COUNT};

/// Exits captured between process-table reads.
#[derive(Debug, Clone, Default)]
pub struct Exits {
    /// How exits are captured: `bpf` (ring buffer), `taskstats`, or `None`
    /// (not captured).
    pub capture: Option<&'static str>,
    /// Thread groups whose end was recorded, since the agent started.
    pub captured: u64,
    /// Records dropped, since capture began: by the BPF ring buffer (full),
    /// or taskstats receive-buffer overflows (each at least one record).
    pub lost: u64,
    /// Those drained at the last process-table read.
    pub last: Vec<Exit>,
}

/// The latest snapshot of everything, shared with consumers.
pub struct State {
    pub sample: SystemSample,
    /// CLOCK_MONOTONIC ns when each source was last read (0: never).
    pub read_mono_ns: [u64; SOURCE_COUNT],
    pub stats: [SourceStats; SOURCE_COUNT],
    /// Latest process table, and the one before it for the rates of
    /// per-process series ranked by CPU (`process_metrics.mode = "top"`;
    /// empty otherwise: at 64,000 processes a table is 20 MB).
    pub procs: Vec<Proc>,
    pub procs_prev: Vec<Proc>,
    /// Seconds between the two tables (0: only one yet).
    pub procs_secs: f64,
    pub procs_status: SourceStatus,
    /// Processes left out of process tables since start because a file of
    /// theirs could not be parsed (procfs backend).
    pub procs_unreadable: u64,
    pub exits: Exits,
    pub backend: Option<Backend>,
    /// Why `auto` did not take BPF.
    pub backend_note: Option<String>,
    pub housekeeping: CpuList,
    /// cgroup id of `process_metrics.cgroup`, when set and found.
    pub cgroup_filter_id: Option<u64>,
    /// Wakeups of the sampler in which it read something.
    pub sampling_wakeups: u64,
    /// The latest read of every cgroup.
    pub cgroups: cgroups::Sample,
    /// The cgroups whose processes are in a network namespace not the
    /// agent's, with its interfaces, by cgroup id (after each process
    /// table, where cgroups are read).
    pub cgroup_net: Vec<crate::cgroup_net::CgroupNetDev>,
    /// Each cgroup's GPU busy time and TCP bytes, its processes' growth
    /// added from process table to process table (where cgroups are read
    /// and the table carries them), so that a cgroup keeps what its
    /// processes that ended used.
    pub cgroup_totals: model::cgroup::CgroupTotals,
    /// The memory ceiling, the figure held against it, and what was shed.
    pub memory: crate::memory::MemoryStats,
}

impl State {
    /// Whether the last read of the cgroups found any (a machine without a
    /// cgroup hierarchy finds none).
    pub fn cgroups_ok(&self) -> bool {
        !self.cgroups.cgroups.is_empty()
    }
}

/// Nothing read yet: the sampler's start, and what an output that copies
/// part of the state encodes from.
impl Default for State {
    fn default() -> State {
        State {
            sample: SystemSample::default(),
            read_mono_ns: [0; SOURCE_COUNT],
            stats: [SourceStats::default(); SOURCE_COUNT],
            procs: Vec::new(),
            procs_prev: Vec::new(),
            procs_secs: 0.0,
            procs_status: SourceStatus::default(),
            procs_unreadable: 0,
            exits: Exits::default(),
            backend: None,
            backend_note: None,
            housekeeping: CpuList::default(),
            cgroup_filter_id: None,
            sampling_wakeups: 0,
            cgroups: cgroups::Sample::default(),
            cgroup_net: Vec::new(),
            cgroup_totals: Default::default(),
            memory: crate::memory::MemoryStats::default(),
        }
    }
}

/// What consumers hold: the state, the shared-memory snapshot, the config.
pub struct Shared {
    pub state: RwLock<State>,
    pub shm: ShmWriter,
    pub config: RwLock<Arc<Config>>,
    /// Per source: the oldest read a consumer will accept (CLOCK_MONOTONIC
    /// ns); raised with fetch_max by [`Shared::fresh`].
    pub(crate) want_since: [AtomicU64; SOURCE_COUNT],
    pub started_unix_ns: u64,
    /// CLOCK_MONOTONIC ns until which demand reads asked through
    /// [`Shared::fresh`] are declined: they used up their part of the
    /// overhead budget (0: not declined).
    pub(crate) demand_blocked_until: AtomicU64,
    /// Why the agent must stop, when a part of it failed for good.
    pub(crate) failure: Mutex<Option<String>>,
    /// The history store's figures, when recording.
    pub store: std::sync::OnceLock<Arc<store::Stats>>,
    /// Each remote-write receiver's figures, when pushing.
    pub remote_write: std::sync::OnceLock<Vec<Arc<store::sent::Stats>>>,
}

/// The sources [`Shared::fresh`] did not read again, and why: each was read
/// within its demand floor, or demand reads are over the overhead budget.
/// Their data is served as it is, with its age.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Declined {
    pub floor: Mask,
    pub budget: Mask,
}

impl Declined {
    pub fn any(&self) -> bool {
        self.floor | self.budget != 0
    }
}

/// A consumer asked for data the agent could not produce in time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no fresh sample of {sources} within {timeout:?}")]
pub struct NotFresh {
    pub sources: String,
    pub timeout: Duration,
}

impl Shared {
    /// Returns once every scheduled source in `mask` was read no earlier
    /// than `max_age` before this call, except those it declines to read
    /// again (returned): a source read within its demand floor
    /// (`demand_min_interval`), and every source while demand reads are over
    /// their part of the overhead budget. Sources older than `max_age` are
    /// read once by the sampler, however many consumers ask at the same
    /// time, and never more often than each source's floor (`min_interval`).
    pub fn fresh(
        &self,
        mask: Mask,
        max_age: Duration,
        timeout: Duration,
    ) -> Result<Declined, NotFresh> {
        let start = mono_ns();
        let since = start.saturating_sub(max_age.as_nanos().min(u64::MAX as u128) as u64);
        let deadline = Instant::now() + timeout;
        let mut declined = Declined::default();
        {
            let config = self.config();
            let blocked = self.demand_blocked_until.load(Ordering::Acquire) > start;
            let st = self.state.read().unwrap_or_else(|e| e.into_inner());
            for s in AgentSource::ALL {
                let i = s.index();
                if mask & s.bit() == 0
                    || !st.stats[i].scheduled
                    || st.read_mono_ns[i] >= since.max(1)
                {
                    continue;
                }
                // Never below the sampler's own floor: a read it would not
                // make yet is declined at once, not waited for.
                let c = config.source(s);
                let floor = c.demand_min_interval.max(c.min_interval).as_nanos() as u64;
                if st.read_mono_ns[i] > 0 && st.read_mono_ns[i].saturating_add(floor) > start {
                    declined.floor |= s.bit();
                } else if blocked {
                    declined.budget |= s.bit();
                }
            }
        }
        let mask = mask & !(declined.floor | declined.budget);
        loop {
            // Before looking: any publish after this wakes the wait below.
            let seen = self.shm.published_count();
            let stale = {
                let st = self.state.read().unwrap_or_else(|e| e.into_inner());
                AgentSource::ALL
                    .into_iter()
                    .filter(|s| mask & s.bit() != 0 && st.stats[s.index()].scheduled)
                    .filter(|s| st.read_mono_ns[s.index()] < since.max(1))
                    .fold(0, |m, s| m | s.bit())
            };
            if stale == 0 {
                return Ok(declined);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(NotFresh {
                    sources: AgentSource::ALL
                        .into_iter()
                        .filter(|s| stale & s.bit() != 0)
                        .map(AgentSource::key)
                        .collect::<Vec<_>>()
                        .join(","),
                    timeout,
                });
            }
            for s in AgentSource::ALL {
                if stale & s.bit() != 0 {
                    self.want_since[s.index()].fetch_max(since.max(1), Ordering::AcqRel);
                }
            }
            self.shm.request();
            self.shm.wait_published(seen, deadline - now);
        }
    }

    /// How old the oldest scheduled source in `mask` is.
    pub fn oldest_age(&self, mask: Mask) -> Duration {
        let now = mono_ns();
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        let ns = AgentSource::ALL
            .into_iter()
            .filter(|s| mask & s.bit() != 0 && st.stats[s.index()].scheduled)
            .map(|s| now.saturating_sub(st.read_mono_ns[s.index()]))
            .max()
            .unwrap_or(0);
        Duration::from_nanos(ns)
    }

    /// A part of the agent failed for good: logs `why` and stops the
    /// sampler; the agent then exits non-zero ([`Shared::failure`]).
    pub fn fail(&self, why: String) {
        crate::log(format!("error: {why}"));
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
        crate::signals::request_stop();
        self.shm.request();
    }

    /// Why the agent stopped, if a part of it failed.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn state_mut(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn config(&self) -> Arc<Config> {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
