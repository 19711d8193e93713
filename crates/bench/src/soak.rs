//! `bench soak`: the agent with its defaults and its history, for hours,
//! beside a load that changes everything it watches, sampled every
//! minute. What a run of minutes cannot show: memory, descriptors or
//! threads that grow with what came and went, logs that flood, a history
//! that outgrows its cap, sources that go stale.
//!
//! The load, each at a rate the report gives as measured:
//!
//! - processes forked and exited (short-lived ones that exit at once,
//!   one in fifty living seconds; odd names, set with `PR_SET_NAME`; one
//!   in a hundred an exec of `sleep` with a long command line);
//! - threads made and ended;
//! - cgroups made and removed, two levels deep, in every v1 hierarchy
//!   the agent walks and in the v2 one;
//! - TCP connections opened and closed on loopback;
//! - the textfile directory's files rewritten every second;
//! - tmpfs mounts added and removed;
//! - scrapes every second from three clients: one that reads the whole
//!   answer, one that reads it slowly, one that drops the connection
//!   after the first bytes;
//! - `ps --backend agent` every 5 s;
//! - the wall clock stepped forward once, half way, and back at the end.
//!
//! Sampled every minute: RSS (anonymous and file), the heap in use (the
//! agent's own `quietstat_agent_heap_bytes`), open descriptors, threads,
//! the history's size on disk, log lines, CPU, and the oldest source.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use exporter::metrics::families::{
    QUIETSTAT_AGENT_HEAP_BYTES, QUIETSTAT_SOURCE_AGE_SECONDS, QUIETSTAT_SOURCE_INTERVAL_SECONDS,
    QUIETSTAT_SOURCE_UP,
};
use serde::Serialize;
use sys::Error;
use sys::child::{Guard, die_with_parent};

use crate::agent_cost::{free_port, get, http_body};

pub struct Options {
    pub duration: Duration,
    pub sample_every: Duration,
    /// Processes forked a second, and cgroups made a second.
    pub forks_per_s: u32,
    pub cgroups_per_s: u32,
    /// The history's `max_size` as the configuration writes it; the
    /// agent's default when absent.
    pub store_max_size: Option<String>,
    pub exe: PathBuf,
    /// Where the plot and the samples are written, if anywhere.
    pub out: Option<PathBuf>,
}

/// One minute's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    pub minute: f64,
    pub rss_anon_kib: u64,
    pub rss_file_kib: u64,
    pub heap_kib: Option<u64>,
    pub fds: usize,
    pub threads: usize,
    pub store_kib: u64,
    pub log_lines: usize,
    /// The agent's CPU over the minute, percent of one CPU.
    pub cpu_pct: f64,
    /// The oldest data served, among the sources read, and which.
    pub oldest_source_s: f64,
    pub oldest_source: String,
}

/// What the load did, per second over the run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Rates {
    pub forks: f64,
    pub execs: f64,
    pub threads: f64,
    pub cgroups: f64,
    pub connections: f64,
    pub textfile_writes: f64,
    pub mounts: f64,
    pub scrapes: f64,
    pub scrapes_dropped: f64,
    pub ps_runs: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub minutes: f64,
    pub rates: Rates,
    pub samples: Vec<Sample>,
    /// RSS growth after the first ten minutes, MiB an hour (a least-squares
    /// slope over the samples), and the same for descriptors and threads.
    pub rss_mib_per_hour: f64,
    pub fds_per_hour: f64,
    pub threads_per_hour: f64,
    pub store_max_kib: u64,
    /// The store's cap, as the agent's configuration says.
    pub store_cap_kib: u64,
    /// Sources older than three intervals at the end.
    pub stale_at_end: Vec<String>,
    pub cpu_max_pct: f64,
    pub log_lines: usize,
    /// The first `ps --backend agent` that failed, and why.
    pub ps_error: Option<String>,
}

/// Counts of what the load did.
#[derive(Default)]
struct Counts {
    forks: AtomicU64,
    execs: AtomicU64,
    threads: AtomicU64,
    cgroups: AtomicU64,
    connections: AtomicU64,
    textfile_writes: AtomicU64,
    mounts: AtomicU64,
    scrapes: AtomicU64,
    scrapes_dropped: AtomicU64,
    ps_runs: AtomicU64,
}

/// Sleeps until `next`, then moves it on by `every`: a paced loop that
/// catches up after a slow turn but never bursts more than a second's
/// worth.
fn pace(next: &mut Instant, every: Duration) {
    let now = Instant::now();
    if *next > now {
        std::thread::sleep(*next - now);
    } else if now - *next > Duration::from_secs(1) {
        *next = now;
    }
    *next += every;
}

/// Names a forked child may take: spaces, parentheses, a newline, a
/// bracket, UTF-8, the longest a comm holds.
const ODD_NAMES: [&[u8]; 6] = [
    b"a b c\0",
    b"x) (y\0",
    b"new\nline\0",
    b"[fake/1:0]\0",
    b"\xc3\xa9t\xc3\xa9\0",
    b"fifteen-chars-x\0",
];

/// The fork load, run in a process of its own (`bench soak-forker`, so
/// that reaping any child reaps only its own): `per_s` forks a second
/// for `duration`; returns the forks and execs made.
pub fn forker(per_s: u32, duration: Duration) -> (u64, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let c = Counts::default();
    let s = stop.clone();
    let timer = std::thread::spawn(move || {
        std::thread::sleep(duration);
        s.store(true, Ordering::Relaxed);
    });
    fork_loop(&stop, &c, per_s);
    let _ = timer.join();
    (
        c.forks.load(Ordering::Relaxed),
        c.execs.load(Ordering::Relaxed),
    )
}

fn fork_loop(stop: &AtomicBool, c: &Counts, per_s: u32) {
    use std::ffi::CString;
    let every = Duration::from_secs(1) / per_s.max(1);
    let mut next = Instant::now();
    let mut i: u64 = 0;
    // `sleep 2` with a 16 KB command line, made before any fork: the
    // child only calls execv. Every child is this process's own and is
    // reaped by `waitpid(-1)`; none is held as a `Child`, so none is ever
    // signalled by a PID that may have been reaped and used again.
    let long_arg = CString::new("x".repeat(2000)).expect("no nul");
    let sleep_path = CString::new("/bin/sleep").expect("no nul");
    let mut argv_owned = vec![
        CString::new("sleep").expect("no nul"),
        CString::new("2").expect("no nul"),
    ];
    argv_owned.extend(std::iter::repeat_n(long_arg, 8));
    let mut argv: Vec<*const libc::c_char> = argv_owned.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    while !stop.load(Ordering::Relaxed) {
        pace(&mut next, every);
        i += 1;
        let exec = i.is_multiple_of(100);
        let name = ODD_NAMES[(i % ODD_NAMES.len() as u64) as usize];
        let live_ms: libc::c_uint = if i.is_multiple_of(50) {
            (1000 + (i % 7) * 1000) as libc::c_uint
        } else {
            0
        };
        // SAFETY: the child calls only async-signal-safe functions
        // (prctl, usleep, execv, _exit) before it exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: in the child: execv with a nul-terminated argv made
            // before the fork, prctl with a nul-terminated name, usleep
            // and _exit are async-signal-safe.
            unsafe {
                if exec {
                    libc::execv(sleep_path.as_ptr(), argv.as_ptr());
                    libc::_exit(127);
                }
                libc::prctl(libc::PR_SET_NAME, name.as_ptr());
                if live_ms > 0 {
                    libc::usleep(live_ms * 1000);
                }
                libc::_exit(0);
            }
        }
        if pid > 0 {
            if exec {
                c.execs.fetch_add(1, Ordering::Relaxed);
            } else {
                c.forks.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Reap whatever has exited.
        loop {
            // SAFETY: waitpid with WNOHANG on any child of this process.
            let r = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
            if r <= 0 {
                break;
            }
        }
    }
    // The long-lived ones (7 s at most) and the execs (2 s): waited for,
    // not killed.
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        // SAFETY: as above.
        let r = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
        if r < 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn thread_loop(stop: &AtomicBool, c: &Counts) {
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        pace(&mut next, Duration::from_millis(10));
        let h = std::thread::spawn(|| std::thread::sleep(Duration::from_millis(30)));
        c.threads.fetch_add(1, Ordering::Relaxed);
        // Joined a few turns later, so that several live at once.
        std::thread::sleep(Duration::from_millis(1));
        let _ = h.join();
    }
}

/// The cgroup roots the load makes its cgroups in: every v1 hierarchy
/// mounted under /sys/fs/cgroup and the v2 one.
fn cgroup_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return roots;
    };
    for l in mounts.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        if f.len() > 2 && (f[2] == "cgroup" || f[2] == "cgroup2") {
            roots.push(PathBuf::from(f[1]));
        }
    }
    roots.sort();
    roots.dedup();
    roots
}

/// Makes and removes cgroups, two levels deep below `qs-soak-<pid>` in
/// each root; each lives about ten seconds. Everything it made is gone
/// when it returns.
fn cgroup_loop(stop: &AtomicBool, c: &Counts, per_s: u32) {
    let tag = format!("qs-soak-{}", std::process::id());
    let roots: Vec<PathBuf> = cgroup_roots().into_iter().map(|r| r.join(&tag)).collect();
    for r in &roots {
        let _ = std::fs::create_dir(r);
    }
    let every = Duration::from_secs(1) / per_s.max(1);
    let mut next = Instant::now();
    let mut live: std::collections::VecDeque<(Instant, Vec<PathBuf>)> = Default::default();
    let mut i: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        pace(&mut next, every);
        i += 1;
        // One cgroup a turn, in one root after another; its parent made
        // with it.
        let root = &roots[(i % roots.len().max(1) as u64) as usize % roots.len().max(1)];
        let parent = root.join(format!("p{}", i % 16));
        let _ = std::fs::create_dir(&parent);
        let dir = parent.join(format!("c{i}"));
        if std::fs::create_dir(&dir).is_ok() {
            c.cgroups.fetch_add(1, Ordering::Relaxed);
            live.push_back((Instant::now() + Duration::from_secs(10), vec![dir]));
        }
        while live.front().is_some_and(|(t, _)| *t <= Instant::now()) {
            let (_, dirs) = live.pop_front().expect("front");
            for d in dirs {
                let _ = std::fs::remove_dir(d);
            }
        }
    }
    for (_, dirs) in live {
        for d in dirs {
            let _ = std::fs::remove_dir(d);
        }
    }
    for r in &roots {
        if let Ok(rd) = std::fs::read_dir(r) {
            for e in rd.flatten() {
                if e.path().is_dir() {
                    if let Ok(kids) = std::fs::read_dir(e.path()) {
                        for k in kids.flatten() {
                            if k.path().is_dir() {
                                let _ = std::fs::remove_dir(k.path());
                            }
                        }
                    }
                    let _ = std::fs::remove_dir(e.path());
                }
            }
        }
        let _ = std::fs::remove_dir(r);
    }
}

fn tcp_loop(stop: &AtomicBool, c: &Counts) {
    let Ok(l) = std::net::TcpListener::bind("127.0.0.1:0") else {
        return;
    };
    let Ok(addr) = l.local_addr() else { return };
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        pace(&mut next, Duration::from_millis(5));
        if let Ok(mut s) = std::net::TcpStream::connect(addr)
            && let Ok((mut a, _)) = l.accept()
        {
            let _ = s.write_all(b"soak");
            let mut b = [0u8; 4];
            let _ = a.read_exact(&mut b);
            c.connections.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Rewrites five textfiles a second, each through a rename, as a cron
/// job writing them would.
fn textfile_loop(stop: &AtomicBool, c: &Counts, dir: &Path) {
    let mut next = Instant::now();
    let mut n: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        pace(&mut next, Duration::from_secs(1));
        n += 1;
        for f in 0..5 {
            let tmp = dir.join(format!(".soak{f}.prom.tmp"));
            let mut text = format!(
                "# HELP soak_gauge_{f} A gauge the soak rewrites.\n# TYPE soak_gauge_{f} gauge\n"
            );
            for s in 0..20 {
                text.push_str(&format!("soak_gauge_{f}{{series=\"{s}\"}} {n}\n"));
            }
            if std::fs::write(&tmp, text).is_ok()
                && std::fs::rename(&tmp, dir.join(format!("soak{f}.prom"))).is_ok()
            {
                c.textfile_writes.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Mounts a tmpfs and unmounts it every 10 s.
fn mount_loop(stop: &AtomicBool, c: &Counts, dir: &Path) {
    let mut next = Instant::now();
    let mut i: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        pace(&mut next, Duration::from_secs(5));
        i += 1;
        let at = dir.join("m");
        let _ = std::fs::create_dir_all(&at);
        let ok = if i % 2 == 1 {
            Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=1m", "qs-soak"])
                .arg(&at)
                .status()
        } else {
            Command::new("umount").arg(&at).status()
        };
        if ok.is_ok_and(|s| s.success()) {
            c.mounts.fetch_add(1, Ordering::Relaxed);
        }
    }
    if i % 2 == 1 {
        let _ = Command::new("umount").arg(dir.join("m")).status();
    }
}

/// Three scrapers a second: whole, slow, dropped after the first bytes.
fn scrape_loop(stop: &AtomicBool, c: &Counts, port: u16) {
    let mut next = Instant::now();
    let mut i: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        pace(&mut next, Duration::from_secs(1));
        i += 1;
        if get(port, "/metrics").is_ok() {
            c.scrapes.fetch_add(1, Ordering::Relaxed);
        }
        let req = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
            let _ = s.write_all(req);
            let mut b = [0u8; 256];
            let _ = s.read(&mut b);
            c.scrapes_dropped.fetch_add(1, Ordering::Relaxed);
        }
        // A slow reader every 10 s: 4 KiB every 50 ms.
        if i.is_multiple_of(10)
            && let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port))
        {
            let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
            let _ = s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
            let mut b = [0u8; 4096];
            while let Ok(n) = s.read(&mut b) {
                if n == 0 || stop.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            c.scrapes.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Runs `ps --backend agent` every 5 s; the first failure's message.
fn ps_loop(stop: &AtomicBool, c: &Counts, exe: &Path, shm: &Path) -> Option<String> {
    let mut next = Instant::now();
    let mut first_error = None;
    while !stop.load(Ordering::Relaxed) {
        pace(&mut next, Duration::from_secs(5));
        let out = Command::new(exe)
            .args(["ps", "--backend", "agent", "--shm-path"])
            .arg(shm)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        match out {
            Ok(o) if o.status.success() => {
                c.ps_runs.fetch_add(1, Ordering::Relaxed);
            }
            Ok(o) => {
                first_error
                    .get_or_insert_with(|| String::from_utf8_lossy(&o.stderr).trim().to_string());
            }
            Err(e) => {
                first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    first_error
}

/// Steps CLOCK_REALTIME by `secs`.
fn step_clock(secs: i64) -> std::io::Result<()> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime and clock_settime with a valid timespec.
    unsafe {
        if libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        ts.tv_sec += secs as libc::time_t;
        if libc::clock_settime(libc::CLOCK_REALTIME, &ts) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn metrics(port: u16) -> String {
    get(port, "/metrics")
        .map(|r| String::from_utf8_lossy(http_body(&r)).into_owned())
        .unwrap_or_default()
}

/// `family`'s series as (labels, value).
fn series<'a>(body: &'a str, family: &str) -> Vec<(&'a str, f64)> {
    body.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(family)?;
            let (labels, v) = if let Some(r) = rest.strip_prefix('{') {
                let (labels, v) = r.split_once("} ")?;
                (labels, v)
            } else {
                ("", rest.strip_prefix(' ')?)
            };
            Some((labels, v.trim().parse().ok()?))
        })
        .collect()
}

fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix(key)?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

fn dir_kib(dir: &Path) -> u64 {
    fn walk(d: &Path) -> u64 {
        let Ok(rd) = std::fs::read_dir(d) else {
            return 0;
        };
        rd.flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => walk(&e.path()),
                Ok(m) => {
                    use std::os::unix::fs::MetadataExt;
                    m.blocks() * 512
                }
                Err(_) => 0,
            })
            .sum()
    }
    walk(dir) / 1024
}

/// The least-squares slope of `y` over `x`.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let (num, den) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    if den == 0.0 { 0.0 } else { num / den }
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let dir = PathBuf::from(format!("/var/tmp/quietstat-soak-{}", std::process::id()));
    let textfiles = dir.join("textfile");
    let mounts = dir.join("mnt");
    let store = dir.join("store");
    std::fs::create_dir_all(&textfiles).map_err(|e| Error::file(&textfiles, e))?;
    std::fs::create_dir_all(&mounts).map_err(|e| Error::file(&mounts, e))?;
    let shm_dir = PathBuf::from(format!("/dev/shm/quietstat-soak-{}", std::process::id()));
    let shm = shm_dir.join("snapshot");
    let log = dir.join("agent.log");
    let port = free_port()?;
    let mut cmd = crate::scale::recording_agent(&opts.exe, port, &shm, &store);
    cmd.arg(format!(
        "--collector.textfile.directory={}",
        textfiles.display()
    ))
    .stderr(std::fs::File::create(&log).map_err(|e| Error::file(&log, e))?);
    if let Some(size) = &opts.store_max_size {
        let config = dir.join("agent.toml");
        std::fs::write(&config, format!("[store]\nmax_size = \"{size}\"\n"))
            .map_err(|e| Error::file(&config, e))?;
        cmd.arg("--config").arg(&config);
    }
    let agent = die_with_parent(&mut cmd)
        .spawn()
        .map(Guard)
        .map_err(|e| Error::io("starting the agent", e))?;
    let pid = agent.0.id();
    let r = soak(
        opts, pid, port, &dir, &textfiles, &mounts, &store, &shm, &log, progress,
    );
    drop(agent);
    // The agent's log kept beside the results.
    if let Some(out) = &opts.out {
        let _ = std::fs::create_dir_all(out);
        let _ = std::fs::copy(&log, out.join("agent.log"));
    }
    let _ = std::fs::remove_dir_all(&shm_dir);
    let _ = std::fs::remove_dir_all(&dir);
    r
}

#[allow(clippy::too_many_arguments)]
fn soak(
    opts: &Options,
    pid: u32,
    port: u16,
    dir: &Path,
    textfiles: &Path,
    mounts: &Path,
    store: &Path,
    shm: &Path,
    log: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, Error> {
    // The agent up and serving before the load starts.
    let t = Instant::now();
    while metrics(port).is_empty() {
        if t.elapsed() > Duration::from_secs(60) {
            return Err(Error::other("the agent did not answer in 60 s".to_string()));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut print = Command::new(&opts.exe);
    print
        .args(["agent", "--print-config", "--store"])
        .arg(store);
    if opts.store_max_size.is_some() {
        print.arg("--config").arg(dir.join("agent.toml"));
    }
    let config = print
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let store_cap_kib = config
        .lines()
        .find_map(|l| {
            let v = l.strip_prefix("max_size")?.split('=').nth(1)?;
            let v = v.split('#').next()?.trim().trim_matches('"');
            let (n, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
            let n: u64 = n.parse().ok()?;
            Some(match unit.trim() {
                "GiB" => n << 20,
                "MiB" => n << 10,
                "KiB" => n,
                _ => n / 1024,
            })
        })
        .unwrap_or(0);
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let mut workers = Vec::new();
    let mut forker_cmd = Command::new(&opts.exe);
    forker_cmd
        .args(["bench", "soak-forker", "--rate"])
        .arg(opts.forks_per_s.to_string())
        .arg("--duration-ms")
        .arg(opts.duration.as_millis().to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut forker = die_with_parent(&mut forker_cmd)
        .spawn()
        .map(Guard)
        .map_err(|e| Error::io("starting the forker", e))?;
    {
        let (s, c) = (stop.clone(), counts.clone());
        workers.push(std::thread::spawn(move || thread_loop(&s, &c)));
    }
    {
        let (s, c) = (stop.clone(), counts.clone());
        let per_s = opts.cgroups_per_s;
        workers.push(std::thread::spawn(move || cgroup_loop(&s, &c, per_s)));
    }
    {
        let (s, c) = (stop.clone(), counts.clone());
        workers.push(std::thread::spawn(move || tcp_loop(&s, &c)));
    }
    {
        let (s, c, d) = (stop.clone(), counts.clone(), textfiles.to_path_buf());
        workers.push(std::thread::spawn(move || textfile_loop(&s, &c, &d)));
    }
    {
        let (s, c, d) = (stop.clone(), counts.clone(), mounts.to_path_buf());
        workers.push(std::thread::spawn(move || mount_loop(&s, &c, &d)));
    }
    {
        let (s, c) = (stop.clone(), counts.clone());
        workers.push(std::thread::spawn(move || scrape_loop(&s, &c, port)));
    }
    let ps_worker = {
        let (s, c, e, m) = (
            stop.clone(),
            counts.clone(),
            opts.exe.clone(),
            shm.to_path_buf(),
        );
        std::thread::spawn(move || ps_loop(&s, &c, &e, &m))
    };
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut stepped = false;
    let mut last_cpu = crate::agent_cost::usage(pid)?.cpu_ticks;
    let mut last_at = Instant::now();
    let result = (|| -> Result<(), Error> {
        while started.elapsed() < opts.duration {
            std::thread::sleep(opts.sample_every.min(opts.duration - started.elapsed()));
            if !stepped && started.elapsed() >= opts.duration / 2 {
                match step_clock(2) {
                    Ok(()) => progress("wall clock stepped 2 s forward"),
                    Err(e) => progress(&format!("wall clock not stepped: {e}")),
                }
                stepped = true;
            }
            let u = crate::agent_cost::usage(pid)?;
            let secs = last_at.elapsed().as_secs_f64();
            let cpu_pct = (u.cpu_ticks - last_cpu) as f64 / 100.0 / secs * 100.0;
            last_cpu = u.cpu_ticks;
            last_at = Instant::now();
            let m = metrics(port);
            let heap = series(&m, QUIETSTAT_AGENT_HEAP_BYTES.name)
                .first()
                .map(|(_, v)| *v as u64 / 1024);
            let intervals: Vec<(&str, f64)> = series(&m, QUIETSTAT_SOURCE_INTERVAL_SECONDS.name);
            let (oldest_source, oldest_source_s) = series(&m, QUIETSTAT_SOURCE_AGE_SECONDS.name)
                .into_iter()
                .filter(|(l, _)| {
                    series(&m, QUIETSTAT_SOURCE_UP.name)
                        .iter()
                        .any(|(l2, v)| l2 == l && *v == 1.0)
                })
                .map(|(l, v)| {
                    let i = intervals
                        .iter()
                        .find(|(l2, _)| *l2 == l)
                        .map_or(1.0, |x| x.1);
                    (l.to_string(), v / i.max(0.001), v)
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(l, _, v)| (l, v))
                .unwrap_or_default();
            let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
                .map(|d| d.count())
                .unwrap_or(0);
            let s = Sample {
                minute: started.elapsed().as_secs_f64() / 60.0,
                rss_anon_kib: status_kib(pid, "RssAnon:"),
                rss_file_kib: status_kib(pid, "RssFile:"),
                heap_kib: heap,
                fds,
                threads: u.threads,
                store_kib: dir_kib(store),
                log_lines: std::fs::read_to_string(log)
                    .map(|t| t.lines().count())
                    .unwrap_or(0),
                cpu_pct,
                oldest_source_s,
                oldest_source,
            };
            progress(&format!(
                "{:.0} min: rss {} KiB anon, {} KiB file; heap {:?} KiB; {} fds; {} threads; store {} KiB; {} log lines; cpu {:.2}%; oldest {} {:.1} s",
                s.minute,
                s.rss_anon_kib,
                s.rss_file_kib,
                s.heap_kib,
                s.fds,
                s.threads,
                s.store_kib,
                s.log_lines,
                s.cpu_pct,
                s.oldest_source,
                s.oldest_source_s
            ));
            samples.push(s);
        }
        Ok(())
    })();
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = w.join();
    }
    let ps_error = ps_worker.join().ok().flatten();
    let mut out = String::new();
    if let Some(mut o) = forker.0.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    let _ = forker.0.wait();
    let mut words = out
        .split_whitespace()
        .map(|w| w.parse::<u64>().unwrap_or(0));
    counts
        .forks
        .store(words.next().unwrap_or(0), Ordering::Relaxed);
    counts
        .execs
        .store(words.next().unwrap_or(0), Ordering::Relaxed);
    if stepped {
        let _ = step_clock(-2);
    }
    result?;
    let secs = started.elapsed().as_secs_f64();
    let rate = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64 / secs;
    let c = &counts;
    let rates = Rates {
        forks: rate(&c.forks),
        execs: rate(&c.execs),
        threads: rate(&c.threads),
        cgroups: rate(&c.cgroups),
        connections: rate(&c.connections),
        textfile_writes: rate(&c.textfile_writes),
        mounts: rate(&c.mounts),
        scrapes: rate(&c.scrapes),
        scrapes_dropped: rate(&c.scrapes_dropped),
        ps_runs: rate(&c.ps_runs),
    };
    // Sources stale at the end: the load stopped, one more read each.
    std::thread::sleep(Duration::from_secs(20));
    let m = metrics(port);
    let intervals = series(&m, QUIETSTAT_SOURCE_INTERVAL_SECONDS.name);
    let up = series(&m, QUIETSTAT_SOURCE_UP.name);
    let stale_at_end: Vec<String> = series(&m, QUIETSTAT_SOURCE_AGE_SECONDS.name)
        .into_iter()
        .filter(|(l, v)| {
            let i = intervals
                .iter()
                .find(|(l2, _)| l2 == l)
                .map_or(1.0, |x| x.1);
            let read = up.iter().any(|(l2, u)| l2 == l && *u == 1.0);
            read && *v > 3.0 * i.max(1.0) + 20.0
        })
        .map(|(l, _)| l.to_string())
        .collect();
    let settled: Vec<&Sample> = samples.iter().filter(|s| s.minute >= 10.0).collect();
    let per_hour = |f: &dyn Fn(&Sample) -> f64| {
        let pts: Vec<(f64, f64)> = settled.iter().map(|s| (s.minute / 60.0, f(s))).collect();
        slope(&pts)
    };
    let report = Report {
        minutes: secs / 60.0,
        rates,
        rss_mib_per_hour: per_hour(&|s| (s.rss_anon_kib + s.rss_file_kib) as f64 / 1024.0),
        fds_per_hour: per_hour(&|s| s.fds as f64),
        threads_per_hour: per_hour(&|s| s.threads as f64),
        store_max_kib: samples.iter().map(|s| s.store_kib).max().unwrap_or(0),
        store_cap_kib,
        stale_at_end,
        cpu_max_pct: samples.iter().map(|s| s.cpu_pct).fold(0.0, f64::max),
        log_lines: samples.last().map_or(0, |s| s.log_lines),
        ps_error,
        samples,
    };
    let _ = dir;
    Ok(report)
}

/// A panel of the plot: its unit, and its lines (label, colour, points).
type Panel<'a> = (&'a str, Vec<(&'a str, &'a str, Vec<(f64, f64)>)>);

/// The samples over time as SVG: RSS and heap (MiB), descriptors and
/// threads, one panel each.
pub fn svg(title: &str, r: &Report) -> String {
    use std::fmt::Write as _;
    const W: f64 = 900.0;
    const PANEL: f64 = 220.0;
    const LEFT: f64 = 70.0;
    const RIGHT: f64 = 140.0;
    const TOP: f64 = 50.0;
    let x_max = r.minutes.max(1.0);
    let panels: [Panel; 2] = [
        (
            "MiB",
            vec![
                (
                    "RSS",
                    "#1f77b4",
                    r.samples
                        .iter()
                        .map(|s| (s.minute, (s.rss_anon_kib + s.rss_file_kib) as f64 / 1024.0))
                        .collect(),
                ),
                (
                    "RSS anon",
                    "#9467bd",
                    r.samples
                        .iter()
                        .map(|s| (s.minute, s.rss_anon_kib as f64 / 1024.0))
                        .collect(),
                ),
                (
                    "heap in use",
                    "#d62728",
                    r.samples
                        .iter()
                        .filter_map(|s| Some((s.minute, s.heap_kib? as f64 / 1024.0)))
                        .collect(),
                ),
            ],
        ),
        (
            "count",
            vec![
                (
                    "descriptors",
                    "#2ca02c",
                    r.samples.iter().map(|s| (s.minute, s.fds as f64)).collect(),
                ),
                (
                    "threads",
                    "#ff7f0e",
                    r.samples
                        .iter()
                        .map(|s| (s.minute, s.threads as f64))
                        .collect(),
                ),
            ],
        ),
    ];
    let h = TOP + panels.len() as f64 * (PANEL + 50.0) + 30.0;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/><text x="{}" y="25" font-size="15" text-anchor="middle">{}</text>"#,
        W / 2.0,
        title.replace('&', "&amp;").replace('<', "&lt;")
    );
    for (p, (unit, lines)) in panels.iter().enumerate() {
        let y0 = TOP + p as f64 * (PANEL + 50.0);
        let y_max = lines
            .iter()
            .flat_map(|(_, _, pts)| pts.iter().map(|(_, y)| *y))
            .fold(0.0, f64::max)
            .max(1.0)
            * 1.1;
        let px = |x: f64| LEFT + x / x_max * (W - LEFT - RIGHT);
        let py = |y: f64| y0 + PANEL - y / y_max * PANEL;
        let _ = write!(
            o,
            r##"<rect x="{LEFT}" y="{y0}" width="{}" height="{PANEL}" fill="none" stroke="#888"/>"##,
            W - LEFT - RIGHT
        );
        for k in 0..=4 {
            let y = y_max * k as f64 / 4.0;
            let _ = write!(
                o,
                r##"<text x="{}" y="{}" text-anchor="end">{y:.1}</text>"##,
                LEFT - 6.0,
                py(y) + 4.0
            );
        }
        let _ = write!(
            o,
            r#"<text x="15" y="{}" transform="rotate(-90 15 {})" text-anchor="middle">{unit}</text>"#,
            y0 + PANEL / 2.0,
            y0 + PANEL / 2.0
        );
        for k in 0..=6 {
            let x = x_max * k as f64 / 6.0;
            let _ = write!(
                o,
                r#"<text x="{}" y="{}" text-anchor="middle">{x:.0}</text>"#,
                px(x),
                y0 + PANEL + 16.0
            );
        }
        let _ = write!(
            o,
            r#"<text x="{}" y="{}" text-anchor="middle">minutes</text>"#,
            LEFT + (W - LEFT - RIGHT) / 2.0,
            y0 + PANEL + 32.0
        );
        for (i, (label, color, pts)) in lines.iter().enumerate() {
            let d: Vec<String> = pts
                .iter()
                .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
                .collect();
            let _ = write!(
                o,
                r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/><text x="{}" y="{}" fill="{color}">{label}</text>"#,
                d.join(" "),
                W - RIGHT + 10.0,
                y0 + 15.0 + i as f64 * 16.0
            );
        }
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_and_series() {
        assert!((slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]) - 2.0).abs() < 1e-9);
        assert_eq!(slope(&[(0.0, 1.0)]), 0.0);
        let body = "a{x=\"1\"} 2\na 3\nab 4\n";
        assert_eq!(series(body, "a"), [("x=\"1\"", 2.0), ("", 3.0)]);
    }
}
