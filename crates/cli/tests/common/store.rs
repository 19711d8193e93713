//! The history store's test set-up: an agent recording to a store with
//! its journal in memory, stopped cleanly, and tmpfs mounts.

use std::path::Path;
use std::time::Duration;

use super::agent::{Agent, agent_with, get};
use procfs::Source;
use store::History;

pub fn now_ms() -> u64 {
    store::writer::now_ms()
}

/// An agent recording to `store`, its journal beside `shm` (kept across
/// restarts), the process table every second.
pub fn recorder(store: &Path, shm: &Path, flush: &str, extra_cfg: &str) -> Agent {
    let cfg = format!(
        "[store]\nflush_interval = \"{flush}\"\nprocess_interval = \"1s\"\n{extra_cfg}\n[sources.processes]\ninterval = \"1s\"\n"
    );
    recording_agent(store, shm, &cfg, "procfs", |_| {})
}

/// An agent recording to `store` with the configuration `cfg`, its
/// snapshot at `shm`, its process table from `backend`; `prepare` applied
/// to the command first.
pub fn recording_agent(
    store: &Path,
    shm: &Path,
    cfg: &str,
    backend: &str,
    prepare: impl FnOnce(&mut std::process::Command),
) -> Agent {
    agent_with(
        cfg,
        &[
            "--store",
            store.to_str().unwrap(),
            "--shm-path",
            shm.to_str().unwrap(),
            "--backend",
            backend,
        ],
        prepare,
    )
}

/// True once `quietstat_store_recording` is `v`, within `limit`.
pub fn recording_becomes(a: &Agent, v: f64, limit: Duration) -> bool {
    super::wait_for(limit, || metric(a, "quietstat_store_recording") == Some(v))
}

/// Temporary directories: the store's path in one on disk, a snapshot
/// path in one in memory (the journal goes beside it and is removed with
/// it). Made at least four minutes before a UTC midnight, so that the
/// test recording there, naming today's file before its agent starts,
/// runs within one day.
#[allow(clippy::type_complexity)]
pub fn dirs() -> (
    (tempfile::TempDir, tempfile::TempDir),
    std::path::PathBuf,
    std::path::PathBuf,
) {
    super::clear_of_midnight(Duration::from_secs(240));
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("store");
    let mem = tempfile::tempdir_in("/dev/shm").unwrap();
    let shm = mem.path().join("snapshot");
    ((d, mem), store, shm)
}

pub fn stop(mut a: Agent) -> Vec<String> {
    a.proc.signal(libc::SIGTERM);
    assert!(
        a.proc.wait(Duration::from_secs(20)).is_some(),
        "the agent did not stop"
    );
    let mut lines = a.early.clone();
    while let Ok(l) = a.log.recv_timeout(Duration::from_millis(100)) {
        lines.push(l);
    }
    lines
}

pub fn stat_times(store: &Path) -> Vec<u64> {
    let h = History::open(store).unwrap();
    let mut t = Vec::new();
    h.system(0, u64::MAX, &[Source::Stat], &mut |ts, s| {
        if s.ok(Source::Stat) {
            t.push(ts);
        }
    })
    .unwrap();
    t
}

/// The recorded walks of the cgroups: each one's time and cgroups.
pub fn walks(store: &Path) -> Vec<(u64, usize)> {
    let mut t = Vec::new();
    History::open(store)
        .unwrap()
        .cgroups(0, u64::MAX, &mut |ts, d| {
            t.push((ts, d.sample(ts).cgroups.len()))
        })
        .unwrap();
    t
}

/// The recorded process tables: each one's time and processes.
pub fn tables(store: &Path) -> Vec<(u64, usize)> {
    let mut t = Vec::new();
    History::open(store)
        .unwrap()
        .procs(0, u64::MAX, &mut |ts, s| t.push((ts, s.len())))
        .unwrap();
    t
}

pub fn metric(a: &Agent, name: &str) -> Option<f64> {
    get(a.addr, "/metrics", None)
        .body
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// `quietstat_source_reads_total` of `source` (0 before the first).
pub fn reads(a: &Agent, source: &str) -> f64 {
    let series = format!("quietstat_source_reads_total{{source=\"{source}\"}}");
    metric(a, &series).unwrap_or(0.0)
}

/// Waits until the agent has read `source` `n` more times than it had
/// when called: a test waits on the agent's own count, not on the clock
/// (a minute at most, then fails).
pub fn after_reads(a: &Agent, source: &str, n: u32) {
    let from = reads(a, source);
    assert!(
        super::wait_for(Duration::from_secs(60), || reads(a, source)
            >= from + f64::from(n)),
        "{source}: fewer than {n} reads in a minute"
    );
}

/// Waits until a flush that began after the call has ended (the flush
/// writes the identity rows of the processes the tables saw): the count
/// goes up twice, as a flush under way when called (handed over with the
/// sample just read, and begun before that sample was in the journal)
/// ends first.
pub fn after_flush(a: &Agent) {
    let flushes = || metric(a, "quietstat_store_flushes_total").unwrap_or(0.0);
    let from = flushes();
    assert!(
        super::wait_for(Duration::from_secs(60), || flushes() > from + 1.0),
        "no flush in a minute"
    );
}

pub fn mount_tmpfs(dir: &Path, opts: &str) -> bool {
    std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success())
}

pub struct Unmount<'a>(pub &'a Path);
impl Drop for Unmount<'_> {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.0)
            .status();
    }
}
