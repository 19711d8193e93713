//! `bench scale`: the agent with its defaults (processes every 5 s,
//! history on) beside N idle processes, and what looking at them costs, in
//! one run per N. kernel.pid_max is raised when N needs it and restored,
//! and the processes are killed however the run ends.
//!
//! Per N, after the agent has settled:
//!
//! - a window with no viewer: the agent's CPU, voluntary context switches
//!   (its wakeups), RSS, the process read's CPU per process (its own
//!   `quietstat_source_cpu_seconds_total{source="processes"}` over its
//!   reads), the history's bytes (`quietstat_store_written_bytes_total`),
//!   the overhead budget's interval changes (log lines), and whether the
//!   process view file was written (it should not be: nobody looks);
//! - whole-process times of `ps --backend agent`, `ps --backend bpf` and
//!   procps `ps`, and `top` from start to its first screen, taking turns;
//! - a window with one `top -d 2s` on a terminal: its CPU, the agent's, and
//!   the view file's size (written once per process interval while viewed);
//! - `report --source proc --top 10` over what the agent recorded.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};
use sys::Error;

use exporter::metrics::families::{
    QUIETSTAT_PROCESSES, QUIETSTAT_SOURCE_CPU_SECONDS_TOTAL, QUIETSTAT_SOURCE_INTERVAL_SECONDS,
    QUIETSTAT_SOURCE_READS_TOTAL, QUIETSTAT_STORE_DROPPED_SAMPLES_TOTAL,
    QUIETSTAT_STORE_FLUSHES_TOTAL, QUIETSTAT_STORE_WRITTEN_BYTES_TOTAL,
};
use serde::Serialize;
use sys::child::{Guard, die_with_parent};

use crate::agent_cost::{free_port, get, http_body, usage};
use crate::spawn::{Idle, PidMax};
use crate::viewers::{Tmux, first_screen, procps_ps, ps_quietstat, runtime_ns, time_run, timing};

pub struct Options {
    pub procs: Vec<usize>,
    /// The window with no viewer, and the one with `top`.
    pub window: Duration,
    /// Runs of each ps and of top's first screen.
    pub runs: usize,
    pub exe: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Idle processes started (the machine has a few dozen more).
    pub procs: usize,
    /// Processes in the agent's table.
    pub table: u64,
    pub agent_cpu_pct: f64,
    /// Voluntary context switches of all the agent's threads, per second.
    pub agent_wakeups_per_s: f64,
    pub agent_rss_mib: f64,
    /// The process read's CPU (walk and table), per read.
    pub read_ms: f64,
    /// The same per process, in microseconds.
    pub read_us_per_proc: f64,
    /// The process interval at the end of the window, seconds.
    pub procs_interval_s: f64,
    /// Lines of the overhead budget slowing or restoring a source, over
    /// the whole run.
    pub budget_lines: usize,
    /// History blocks written during the window (compressed; every source,
    /// and the process tables alone), per day. Identity rows are not
    /// counted: an idle machine adds none.
    pub history_mb_per_day: f64,
    pub history_procs_mb_per_day: f64,
    /// Whether the view file was written while nobody looked.
    pub view_written_unwatched: bool,
    /// The view file's size while `top` ran, and the bytes written per
    /// hour at one table per process interval.
    pub view_bytes: u64,
    pub view_mb_per_hour_watched: f64,
    pub ps_agent_ms: f64,
    pub ps_bpf_ms: f64,
    pub ps_procps_ms: f64,
    pub top_first_screen_ms: f64,
    /// One `top -d 2s`: its CPU, and the agent's in the same window.
    pub top_cpu_pct: f64,
    pub agent_cpu_pct_top: f64,
    /// `report --source proc --top 10 --interval 1m` over the run.
    pub report_ms: f64,
    pub history_dropped: f64,
}

/// Counters of the agent's /metrics: the sum of every series of `family`
/// whose labels contain `labels`.
fn counter(body: &str, family: &str, labels: &str) -> f64 {
    body.lines()
        .filter(|l| {
            l.strip_prefix(family)
                .is_some_and(|r| r.starts_with('{') || r.starts_with(' '))
                && l.contains(labels)
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn metrics(port: u16) -> Result<String, Error> {
    let resp = get(port, "/metrics")?;
    Ok(String::from_utf8_lossy(http_body(&resp)).into_owned())
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let mut rows = Vec::new();
    for &n in &opts.procs {
        let _pid_max = PidMax::room_for(n)?;
        let existing = std::fs::read_dir("/proc").map(|d| d.count()).unwrap_or(0);
        let (n, why) = crate::spawn::cap(n, existing);
        if let Some(why) = why {
            progress(&format!("{n} processes: {why}"));
        }
        progress(&format!("starting {n} idle processes"));
        let idle = Idle::start(n).map_err(|e| Error::io(format!("starting {n} processes"), e))?;
        // In memory: the snapshot, and so the journal beside it.
        let dir = PathBuf::from(format!(
            "/dev/shm/quietstat-bench-scale-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| Error::file(&dir, e))?;
        let r = one(opts, &idle, &dir, progress);
        let _ = std::fs::remove_dir_all(&dir);
        drop(idle);
        rows.push(r?);
    }
    Ok(rows)
}

/// The agent with its defaults and its history in `store`, serving on
/// loopback `port`, its snapshot at `shm`, its output dropped.
pub(crate) fn recording_agent(exe: &Path, port: u16, shm: &Path, store: &Path) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(["agent", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--shm-path")
        .arg(shm)
        .arg("--store")
        .arg(store)
        .stdout(Stdio::null());
    cmd
}

fn one(
    opts: &Options,
    idle: &Idle,
    dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Row, Error> {
    let n = idle.count();
    let shm = dir.join("snapshot");
    let store = dir.join("store");
    let log = dir.join("agent.log");
    let port = free_port()?;
    let mut cmd = recording_agent(&opts.exe, port, &shm, &store);
    cmd.stderr(std::fs::File::create(&log)?);
    let agent = die_with_parent(&mut cmd)
        .spawn()
        .map(Guard)
        .map_err(|e| Error::io("starting the agent", e))?;
    let pid = agent.0.id();
    let started = SystemTime::now();
    wait_settled(port, n, &log)?;
    std::thread::sleep(Duration::from_secs(5));
    let view = shm::view::procs_path(&shm);
    let view_mtime = || std::fs::metadata(&view).and_then(|m| m.modified()).ok();
    progress(&format!(
        "{n} processes: the agent alone for {:?}",
        opts.window
    ));
    let m0 = metrics(port)?;
    let u0 = usage(pid)?;
    let v0 = view_mtime();
    let t0 = Instant::now();
    std::thread::sleep(opts.window);
    let secs = t0.elapsed().as_secs_f64();
    let u1 = usage(pid)?;
    let m1 = metrics(port)?;
    let v1 = view_mtime();
    let d = |f: &str, l: &str| counter(&m1, f, l) - counter(&m0, f, l);
    let reads = d(QUIETSTAT_SOURCE_READS_TOTAL.name, "source=\"processes\"");
    let read_s = d(
        QUIETSTAT_SOURCE_CPU_SECONDS_TOTAL.name,
        "source=\"processes\"",
    );
    let read_ms = if reads > 0.0 {
        read_s / reads * 1e3
    } else {
        0.0
    };
    let table = counter(&m1, QUIETSTAT_PROCESSES.name, "");
    let per_day = |bytes: f64| bytes / secs * 86_400.0 / 1e6;
    let tick = 100.0;
    let mut row = Row {
        procs: n,
        table: table as u64,
        agent_cpu_pct: (u1.cpu_ticks - u0.cpu_ticks) as f64 / tick / secs * 100.0,
        agent_wakeups_per_s: (u1.voluntary - u0.voluntary) as f64 / secs,
        agent_rss_mib: u1.rss_bytes as f64 / (1 << 20) as f64,
        read_ms,
        read_us_per_proc: read_ms * 1e3 / n.max(1) as f64,
        procs_interval_s: counter(
            &m1,
            QUIETSTAT_SOURCE_INTERVAL_SECONDS.name,
            "source=\"processes\"",
        ),
        budget_lines: 0,
        history_mb_per_day: per_day(d(QUIETSTAT_STORE_WRITTEN_BYTES_TOTAL.name, "")),
        history_procs_mb_per_day: per_day(d(
            QUIETSTAT_STORE_WRITTEN_BYTES_TOTAL.name,
            "source=\"processes\"",
        )),
        view_written_unwatched: v1.is_some() && v1 != v0,
        view_bytes: 0,
        view_mb_per_hour_watched: 0.0,
        ps_agent_ms: 0.0,
        ps_bpf_ms: 0.0,
        ps_procps_ms: 0.0,
        top_first_screen_ms: 0.0,
        top_cpu_pct: 0.0,
        agent_cpu_pct_top: 0.0,
        report_ms: 0.0,
        history_dropped: counter(&m1, QUIETSTAT_STORE_DROPPED_SAMPLES_TOTAL.name, ""),
    };

    progress(&format!(
        "{n} processes: ps and top's first screen, {} rounds",
        opts.runs
    ));
    let shm_s = shm.to_string_lossy().into_owned();
    let (mut a, mut b, mut p, mut f) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..opts.runs {
        a.push(time_run(&mut ps_quietstat(&opts.exe, "agent", &shm_s))?);
        b.push(time_run(&mut ps_quietstat(&opts.exe, "bpf", &shm_s))?);
        p.push(time_run(&mut procps_ps())?);
        f.push(first_screen(&opts.exe, &shm)?);
    }
    row.ps_agent_ms = timing("", &mut a).median_ms;
    row.ps_bpf_ms = timing("", &mut b).median_ms;
    row.ps_procps_ms = timing("", &mut p).median_ms;
    row.top_first_screen_ms = timing("", &mut f).median_ms;

    progress(&format!(
        "{n} processes: one top -d 2s for {:?}",
        opts.window
    ));
    (row.top_cpu_pct, row.agent_cpu_pct_top) = top_beside(opts, pid, &shm_s, n)?;
    row.view_bytes = std::fs::metadata(&view).map_or(0, |m| m.len());
    row.view_mb_per_hour_watched =
        row.view_bytes as f64 * 3600.0 / row.procs_interval_s.max(1.0) / 1e6;

    progress(&format!("{n} processes: report over the run"));
    let from = humantime::format_rfc3339_seconds(started).to_string();
    let store_s = store.to_string_lossy().into_owned();
    let mut r = Vec::new();
    for _ in 0..3 {
        r.push(time_run(Command::new(&opts.exe).args([
            "report",
            "--store",
            &store_s,
            "--source",
            "proc",
            "--top",
            "10",
            "--interval",
            "1m",
            "--from",
            &from,
            "--format",
            "csv",
        ]))?);
    }
    row.report_ms = timing("", &mut r).median_ms;
    drop(agent);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    row.budget_lines = text
        .lines()
        .filter(|l| l.contains(": slowed from every") || l.contains(": restored from every"))
        .count();
    Ok(row)
}

/// Waits until the agent at `port` has settled: two process reads of the
/// whole table, the first table written to the history (every process's
/// identity row, a command line read for each: once per start, not the
/// running cost), and one flush after that.
fn wait_settled(port: u16, n: usize, log: &Path) -> Result<(), Error> {
    let t = Instant::now();
    let mut flushes_after_first_table = None;
    loop {
        let m = metrics(port).unwrap_or_default();
        let flushes = counter(&m, QUIETSTAT_STORE_FLUSHES_TOTAL.name, "");
        let tables = counter(
            &m,
            QUIETSTAT_STORE_WRITTEN_BYTES_TOTAL.name,
            "source=\"processes\"",
        );
        if counter(
            &m,
            QUIETSTAT_SOURCE_READS_TOTAL.name,
            "source=\"processes\"",
        ) >= 2.0
            && tables > 0.0
        {
            match flushes_after_first_table {
                None => flushes_after_first_table = Some(flushes),
                Some(f) if flushes > f => break,
                Some(_) => {}
            }
        }
        if t.elapsed() > Duration::from_secs(180) {
            return Err(Error::other(format!(
                "{n} processes: the agent did not settle (see {})",
                log.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Ok(())
}

/// One `top -d 2s` in tmux for the window: its CPU and the agent's beside
/// it, in percent of a CPU.
fn top_beside(opts: &Options, pid: u32, shm_s: &str, n: usize) -> Result<(f64, f64), Error> {
    let tmux = Tmux::new();
    let exe = opts.exe.to_string_lossy().into_owned();
    let top = tmux.run("top", &[&exe, "top", "-d", "2s", "--shm-path", shm_s])?;
    std::thread::sleep(Duration::from_secs(3));
    let (c0, a0) = (runtime_ns(top), runtime_ns(pid));
    let t0 = Instant::now();
    std::thread::sleep(opts.window);
    let secs = t0.elapsed().as_secs_f64();
    let (c1, a1) = (runtime_ns(top), runtime_ns(pid));
    let pct = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (Some(x), Some(y)) => Ok(y.saturating_sub(x) as f64 / (secs * 1e9) * 100.0),
        _ => Err(Error::other(format!(
            "{n} processes: top or the agent ended during the window"
        ))),
    };
    let cpu = (pct(c0, c1)?, pct(a0, a1)?);
    drop(tmux);
    Ok(cpu)
}
