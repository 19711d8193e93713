//! `bench store`: hours of history for N processes written through the
//! real journal and writer faster than real time (system sources read
//! live from this machine at every synthetic second; a synthetic process
//! table every 5 s: idle, or with churn), then `quietstat report` timed
//! over the whole day: a system source per minute, and the top 10
//! processes per 10 minutes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use sys::Error;

use procfs::{Reader, SystemSample};
use proctable::{Exit, Proc};
use serde::Serialize;

pub struct Options {
    pub procs: usize,
    pub hours: u64,
    /// 5% of processes change every 5 s, and 10 start and 10 end a second.
    pub churn: bool,
    /// Processes a second that start and end between two tables (never in
    /// one: a build, a shell loop), recorded by their exits alone.
    pub short_lived: u32,
    pub exe: PathBuf,
    /// Keep the store here (else a temporary directory, removed).
    pub keep: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub procs: usize,
    pub hours: u64,
    pub churn: bool,
    pub short_lived: u32,
    /// Wall time to write the hours through the writer.
    pub write_secs: f64,
    /// The writer's own time (encode and SQLite).
    pub writer_secs: f64,
    pub file_bytes: u64,
    pub mb_per_day: f64,
    /// Stored bytes per source (and identities), per day.
    pub per_source_mb_per_day: Vec<(String, f64)>,
    /// `report --source cpu --interval 1m` over the range: median of 3, ms.
    pub report_cpu_ms: f64,
    /// `report --source proc --top 10 --interval 10m`: median of 3, ms.
    pub report_top_ms: f64,
    /// `report --source exits`: median of 3, ms.
    pub report_exits_ms: f64,
}

fn log(m: String) {
    eprintln!("quietstat: {m}");
}

fn synthetic(pid: u32, i: usize) -> Proc {
    Proc {
        pid,
        tgid: pid,
        ppid: 1,
        comm: procfs::pid::Comm::new(format!("worker{}", i % 50).as_bytes()),
        state: 'S',
        start_ticks: u64::from(pid),
        start_ns: u64::from(pid) * 10_000_000,
        utime_ns: 10_000_000 * (i as u64 % 7),
        stime_ns: 10_000_000 * (i as u64 % 3),
        minflt: 100 + i as u64,
        num_threads: 1,
        rss_bytes: 4 << 20,
        vsize_bytes: 16 << 20,
        uid: Some(1000),
        // What the agent's BPF table carries: the run delay (the delay
        // accounting's waits only where kernel.task_delayacct is 1: not
        // here, as by the kernel's default).
        sched: Some(procfs::pid::SchedInfo {
            run_delay_ns: 1_000_000 * (i as u64 % 5),
            timeslices: 0,
        }),
        ..Default::default()
    }
}

fn median_ms(exe: &Path, args: &[&str]) -> Result<f64, Error> {
    let mut t = Vec::new();
    for _ in 0..3 {
        let t0 = Instant::now();
        let out = Command::new(exe)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()?;
        if !out.status.success() {
            return Err(Error::other(format!(
                "report {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        t.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[1])
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let tmp = std::env::temp_dir().join(format!("quietstat-bench-store-{}", std::process::id()));
    let root = opts.keep.clone().unwrap_or_else(|| tmp.clone());
    std::fs::create_dir_all(&root).map_err(|e| Error::file(&root, e))?;
    let dir = root.join("store");
    let (mut tap, mut flusher, stats) = store::writer::open(
        store::Options::private_in(&root, "a benchmark's own store", Path::new("")),
        log,
    )?;
    // Yesterday from midnight (UTC): within retention, one day file.
    let now = store::writer::now_ms();
    let day0 = store::db::day_start_ms(&store::db::day_of(now - 86_400_000)).unwrap_or(0);
    let boot_ms = flusher.boot_ms();
    let mut reader = Reader::new("/proc", "/sys");
    reader.keep_bytes_of(&store::RECORDED);
    let mut sample = SystemSample::default();
    let mut kept = Vec::new();
    let base = 4_000_000u32;
    let mut procs: Vec<Proc> = (0..opts.procs)
        .map(|i| synthetic(base + i as u32, i))
        .collect();
    let mut next_pid = base + opts.procs as u32;
    let mut exits = Vec::new();
    let (mut short, mut short_pid) = (Vec::new(), 300u32);
    let secs = opts.hours * 3600;
    let t0 = Instant::now();
    for sec in 0..secs {
        let ts = day0 + sec * 1000;
        reader.read_sample(&store::RECORDED, &mut sample);
        reader.take_kept(&mut kept);
        tap.system(ts, &kept);
        // Short-lived processes: PIDs handed out upward and wrapping at
        // 32,768 as the kernel's default pid_max, each start the tick
        // before its exit.
        if opts.short_lived > 0 {
            short.clear();
            // Ticks since a boot a day before the first second.
            let now_ticks = 8_640_000 + sec * 100;
            for _ in 0..opts.short_lived {
                short_pid = if short_pid >= 32_767 {
                    300
                } else {
                    short_pid + 1
                };
                short.push(Exit {
                    pid: short_pid,
                    ppid: 1,
                    comm: procfs::pid::Comm::new(b"sh"),
                    start_ns: now_ticks.saturating_sub(1) * 10_000_000,
                    start_ticks: now_ticks.saturating_sub(1),
                    exit_ns: now_ticks * 10_000_000,
                    utime_ns: 1_000_000,
                    maxrss_bytes: 1 << 20,
                    ..Default::default()
                });
            }
            tap.exits(ts, &short);
        }
        if sec % 5 == 0 {
            if opts.churn && !procs.is_empty() {
                let n = procs.len();
                // 5% change: a rotating twentieth of the table.
                let k = (sec / 5) as usize % 20;
                for (i, p) in procs.iter_mut().enumerate().filter(|(i, _)| i % 20 == k) {
                    p.utime_ns += 10_000_000;
                    // What runs waits for its CPU now and then.
                    if let Some(s) = p.sched.as_mut() {
                        s.run_delay_ns += 1_000_000 + 1000 * (i as u64 % 97);
                    }
                    p.minflt += 3 + i as u64 % 5;
                    p.rss_bytes += 4096;
                }
                // 50 end and 50 start (10 a second).
                exits.clear();
                for j in 0..50.min(n) {
                    let i = (sec as usize / 5 * 50 + j * 7919) % n;
                    let old = &procs[i];
                    exits.push(Exit {
                        pid: old.pid,
                        ppid: old.ppid,
                        comm: old.comm,
                        start_ns: old.start_ns,
                        start_ticks: old.start_ticks,
                        exit_ns: (ts.saturating_sub(boot_ms)) * 1_000_000,
                        utime_ns: old.utime_ns,
                        stime_ns: old.stime_ns,
                        maxrss_bytes: old.rss_bytes,
                        exit_status: if j % 10 == 0 { 9 } else { 0 },
                        ..Default::default()
                    });
                    procs[i] = synthetic(next_pid, i);
                    next_pid += 1;
                }
                procs.sort_by_key(|p| p.pid);
                tap.exits(ts, &exits);
            }
            tap.procs(ts, &procs);
        }
        if sec % 15 == 14 && !flusher.flush() {
            return Err(Error::other("the writer failed (see above)"));
        }
        if sec % 3600 == 3599 {
            progress(&format!(
                "{} h written in {:.0} s",
                (sec + 1) / 3600,
                t0.elapsed().as_secs_f64()
            ));
        }
    }
    flusher.flush();
    let write_secs = t0.elapsed().as_secs_f64();
    let writer_secs = stats.write_ns.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9;
    drop(flusher);
    let h = store::History::open(&dir)?;
    let usage = h.usage()?;
    let scale = 24.0 / opts.hours as f64 / 1e6;
    let file_bytes: u64 = usage.iter().map(|u| u.file_bytes).sum();
    let mut per: Vec<(String, f64)> = Vec::new();
    for u in &usage {
        for (src, _, _, stored) in &u.sources {
            match per.iter_mut().find(|(s, _)| s == src) {
                Some(p) => p.1 += *stored as f64 * scale,
                None => per.push((src.clone(), *stored as f64 * scale)),
            }
        }
    }
    per.sort_by(|a, b| b.1.total_cmp(&a.1));
    let rfc = |ms: u64| {
        format!("{}T{}Z", store::db::day_of(ms), {
            let s = ms / 1000 % 86_400;
            format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
        })
    };
    let (from, to) = (rfc(day0), rfc(day0 + secs * 1000));
    let d = dir.to_string_lossy().to_string();
    let common = [
        "report", "--store", &d, "--from", &from, "--to", &to, "--format", "csv",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        common.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let time = |extra: &[&str]| -> Result<f64, Error> {
        let a = with(extra);
        median_ms(&opts.exe, &a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    progress("timing report");
    let report_cpu_ms = time(&["--source", "cpu", "--interval", "1m"])?;
    let report_top_ms = time(&["--source", "proc", "--top", "10", "--interval", "10m"])?;
    let report_exits_ms = time(&["--source", "exits"])?;
    if opts.keep.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(Report {
        procs: opts.procs,
        hours: opts.hours,
        churn: opts.churn,
        short_lived: opts.short_lived,
        write_secs,
        writer_secs,
        file_bytes,
        mb_per_day: file_bytes as f64 * scale,
        per_source_mb_per_day: per,
        report_cpu_ms,
        report_top_ms,
        report_exits_ms,
    })
}
