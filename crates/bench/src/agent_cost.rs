//! `bench agent`: what a collector costs the machine while nobody scrapes.
//! With N idle processes, each collector runs for a set time sampling system
//! sources every second and processes every five; this measures its CPU time
//! (user + system, all threads), its wakeups (voluntary context switches
//! summed over all its threads: each is a sleep the thread was woken from),
//! the times it was preempted while running (involuntary switches, kept
//! apart: another task's wakeup, not the collector's) and its RSS at the
//! end.
//!
//! Collectors, one after another in the same run: the agent with the bpf
//! backend, the agent with the procfs backend, and a naive collector (the
//! same binary, `bench naive-collector`) that reads the same system files
//! with open/read/close every second and every /proc/PID/stat every five,
//! sleeping in between, as a simple sampler would. And, scraped by the
//! bench every 15 s as Prometheus would: the agent (`agent-scraped`) and
//! node_exporter with its defaults (`node-exporter`, Debian's
//! `prometheus-node-exporter`), each answering every scrape.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use sys::Error;

use serde::Serialize;

use sys::child::{Guard, die_with_parent};

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub collector: String,
    pub procs: usize,
    pub seconds: f64,
    /// CPU time in percent of one CPU.
    pub cpu_pct: f64,
    /// Voluntary context switches per second, all threads: sleeps ended
    /// by a wakeup.
    pub wakeups_per_s: f64,
    /// Involuntary context switches per second, all threads: the
    /// collector was running and another task took the CPU.
    pub preempted_per_s: f64,
    pub rss_mib: f64,
    pub threads: usize,
    /// For `agent-store`: bytes the history took on disk once the agent
    /// stopped, and that per day at the rate it was recorded.
    pub store_bytes: Option<u64>,
    pub store_mb_per_day: Option<f64>,
}

pub struct Options {
    pub procs: usize,
    pub duration: Duration,
    pub exe: PathBuf,
    pub collectors: Vec<String>,
}

pub const COLLECTORS: [&str; 7] = [
    "agent-bpf",
    "agent-store",
    "agent-procfs",
    "naive",
    "agent-scraped",
    "agent-defaults",
    "node-exporter",
];

/// How long a collector runs before it is measured: its start, and the
/// history's first flush (every 15 s, on the quarter minute).
pub const SETTLE: Duration = Duration::from_secs(20);

/// How often the scraped collectors are scraped.
pub const SCRAPE_EVERY: Duration = Duration::from_secs(15);

/// A loopback port free now.
pub(crate) fn free_port() -> Result<u16, Error> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Error::io("finding a free port", e))
}

/// GET `path` over HTTP/1.0 on a loopback port: the whole response,
/// headers included.
pub(crate) fn get(port: u16, path: &str) -> Result<Vec<u8>, Error> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())?;
    let mut body = Vec::new();
    s.read_to_end(&mut body)?;
    Ok(body)
}

/// The body of an HTTP response (after its head); empty without one.
pub(crate) fn http_body(resp: &[u8]) -> &[u8] {
    resp.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(&[][..], |i| &resp[i + 4..])
}

/// GET /metrics, the whole body read; its size.
fn scrape(port: u16) -> Result<usize, Error> {
    get(port, "/metrics").map(|b| b.len())
}

#[derive(Default, Clone, Copy)]
pub(crate) struct Usage {
    pub(crate) cpu_ticks: u64,
    pub(crate) voluntary: u64,
    pub(crate) involuntary: u64,
    pub(crate) rss_bytes: u64,
    pub(crate) threads: usize,
}

/// CPU ticks from /proc/PID/stat; context switches summed over its live
/// threads (an agent's threads live as long as it does).
pub(crate) fn usage(pid: u32) -> Result<Usage, Error> {
    let st = crate::child::pid_stat(pid)?;
    let mut u = Usage {
        cpu_ticks: st.utime_ticks + st.stime_ticks,
        rss_bytes: st.rss_pages * 4096,
        ..Usage::default()
    };
    let threads = procfs::threads::thread_costs(Path::new("/proc"), pid)
        .map_err(|e| Error::io(format!("/proc/{pid}/task"), e))?;
    for t in threads {
        u.voluntary += t.switches.voluntary;
        u.involuntary += t.switches.involuntary;
        u.threads += 1;
    }
    Ok(u)
}

/// Where an agent under test keeps its snapshot (in memory) and its store
/// (on disk); removed when dropped, however the run ends.
struct Dirs {
    made: Vec<PathBuf>,
}

impl Dirs {
    fn shm(&self) -> PathBuf {
        self.made[0].join("snapshot")
    }

    fn store(&self) -> PathBuf {
        self.made[1].join("store")
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        for d in &self.made {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

fn start(opts: &Options, collector: &str, dirs: &Dirs, port: u16) -> Result<Guard, Error> {
    let mut cmd = Command::new(&opts.exe);
    match collector {
        "agent-scraped" => {
            cmd.args([
                "agent",
                "--no-store",
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .arg("--shm-path")
            .arg(dirs.shm());
        }
        "agent-store" => {
            // The bpf agent recording its history, as it does by default.
            cmd.args(["agent", "--listen", "127.0.0.1:0", "--backend", "bpf"])
                .arg("--store")
                .arg(dirs.store())
                .arg("--shm-path")
                .arg(dirs.shm());
        }
        "agent-defaults" => {
            // Everything as a user starts it, history included, scraped.
            cmd.args(["agent", "--listen", &format!("127.0.0.1:{port}")])
                .arg("--store")
                .arg(dirs.store())
                .arg("--shm-path")
                .arg(dirs.shm());
        }
        "node-exporter" => {
            cmd = Command::new("prometheus-node-exporter");
            cmd.arg(format!("--web.listen-address=127.0.0.1:{port}"));
        }
        "agent-bpf" | "agent-procfs" => {
            cmd.args([
                "agent",
                "--no-store",
                "--listen",
                "127.0.0.1:0",
                "--backend",
            ])
            .arg(collector.trim_start_matches("agent-"))
            .arg("--shm-path")
            .arg(dirs.shm());
        }
        "naive" => {
            cmd.args(["bench", "naive-collector"]);
        }
        other => {
            return Err(Error::invalid(format!(
                "unknown collector {other:?}; accepted: {}",
                COLLECTORS.join(", ")
            )));
        }
    }
    spawn_quiet(cmd, collector)
}

/// Starts `cmd` with its output discarded, killed if the bench dies and
/// stopped when the guard drops.
pub(crate) fn spawn_quiet(mut cmd: Command, what: &str) -> Result<Guard, Error> {
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    die_with_parent(&mut cmd)
        .spawn()
        .map(Guard)
        .map_err(|e| Error::io(format!("starting {what}"), e))
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let existing = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter(|e| {
                e.as_ref().is_ok_and(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                })
            })
            .count()
        })
        .unwrap_or(0);
    let (n, why) = crate::spawn::cap(opts.procs, existing);
    if let Some(why) = why {
        progress(&format!(
            "spawning {n} processes, not {}: {why}",
            opts.procs
        ));
    }
    let idle = crate::spawn::Idle::start(n).map_err(|e| Error::io("spawning idle processes", e))?;
    // The snapshot (and the journal beside it) in memory, as /run is on
    // systemd hosts; the store on the disk of the temporary directory.
    let name = format!("quietstat-bench-agent-{}", std::process::id());
    let dirs = Dirs {
        made: vec![
            Path::new("/dev/shm").join(&name),
            std::env::temp_dir().join(&name),
        ],
    };
    for d in &dirs.made {
        std::fs::create_dir_all(d).map_err(|e| Error::file(d, e))?;
    }
    let mut rows = Vec::new();
    for c in &opts.collectors {
        progress(&format!(
            "{c}: {} s with {} idle processes",
            opts.duration.as_secs(),
            idle.count()
        ));
        let port = free_port()?;
        // Each recording collector starts with an empty store.
        let _ = std::fs::remove_dir_all(dirs.store());
        let spawned = Instant::now();
        let child = start(opts, c, &dirs, port)?;
        let pid = child.0.id();
        // Let it start and take its first samples: past the history's
        // first flush, which writes every process it has not seen (once
        // per start, not the recording's running cost).
        std::thread::sleep(SETTLE);
        let scraped = matches!(
            c.as_str(),
            "agent-scraped" | "agent-defaults" | "node-exporter"
        );
        if scraped {
            scrape(port).map_err(|e| e.context(format!("{c}: first scrape")))?;
        }
        let u0 = usage(pid)?;
        let store_dir = dirs.store();
        let t0 = Instant::now();
        let end = t0 + opts.duration;
        if scraped {
            // A scrape every 15 s, counted in the window.
            let mut next = t0 + SCRAPE_EVERY;
            while next <= end {
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
                scrape(port).map_err(|e| e.context(format!("{c}: scrape")))?;
                next += SCRAPE_EVERY;
            }
        }
        std::thread::sleep(end.saturating_duration_since(Instant::now()));
        let u1 = usage(pid)?;
        let secs = t0.elapsed().as_secs_f64();
        drop(child);
        // The store started empty: all it holds once the agent stopped
        // (its last flush done, the WAL checkpointed into the day file),
        // over all the time it recorded.
        let recorded = spawned.elapsed().as_secs_f64();
        let store_bytes =
            matches!(c.as_str(), "agent-store" | "agent-defaults").then(|| dir_bytes(&store_dir));
        rows.push(Row {
            collector: c.clone(),
            procs: idle.count(),
            seconds: secs,
            cpu_pct: (u1.cpu_ticks - u0.cpu_ticks) as f64 / 100.0 / secs * 100.0,
            wakeups_per_s: u1.voluntary.saturating_sub(u0.voluntary) as f64 / secs,
            preempted_per_s: u1.involuntary.saturating_sub(u0.involuntary) as f64 / secs,
            rss_mib: u1.rss_bytes as f64 / (1024.0 * 1024.0),
            threads: u1.threads,
            store_bytes,
            store_mb_per_day: store_bytes.map(|b| b as f64 / recorded * 86_400.0 / 1e6),
        });
    }
    drop(dirs);
    drop(idle);
    Ok(rows)
}

/// Bytes of the files in `dir` (a store: day files and their WAL).
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// The naive collector: open/read/close of each system file every second,
/// and of every /proc/PID/stat every fifth second, sleeping in between.
pub fn naive_collector() -> ! {
    let files = [
        "/proc/stat",
        "/proc/meminfo",
        "/proc/vmstat",
        "/proc/loadavg",
        "/proc/pressure/cpu",
        "/proc/pressure/memory",
        "/proc/pressure/io",
        "/proc/diskstats",
        "/proc/net/dev",
    ];
    let start = Instant::now();
    let mut tick = 0u64;
    let mut buf = Vec::with_capacity(1 << 16);
    // open, read to the end, close; a file that is missing is skipped.
    let mut slurp = |path: &Path| {
        buf.clear();
        if let Ok(mut file) = std::fs::File::open(path) {
            let _ = std::io::Read::read_to_end(&mut file, &mut buf);
        }
    };
    loop {
        for f in files {
            slurp(Path::new(f));
        }
        if tick.is_multiple_of(5) {
            for f in ["/proc/interrupts", "/proc/softirqs"] {
                slurp(Path::new(f));
            }
            if let Ok(d) = std::fs::read_dir("/proc") {
                for e in d.flatten() {
                    if e.file_name()
                        .to_string_lossy()
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                    {
                        slurp(&e.path().join("stat"));
                    }
                }
            }
        }
        tick += 1;
        let next = start + Duration::from_secs(tick);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
}
