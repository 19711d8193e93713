//! `bench consumers`: many consumers needing CPU times and the interrupt
//! total, each reading N times as fast as it can, served four ways: straight
//! from /proc/stat; from the agent's shared-memory snapshot asking for data
//! no older than 0, 1, 10, 100 or 1000 ms; and over HTTP from the agent's
//! JSON API. For each: elapsed time, the consumers' user and system time,
//! the agent's CPU time, and how many times /proc/stat was read.
//!
//! The agent is started for the run (the same binary, `agent`, with the
//! process table off and /proc/stat's floor at 0 so that "max age 0" means a
//! fresh read for every request, as in the experiment this reproduces).
//! Consumers are separate processes (the same binary, `bench
//! consumer-worker`). Every child has PR_SET_PDEATHSIG, and the agent is
//! stopped on every exit path.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use sys::Error;

use serde::Serialize;

use sys::child::{Guard, die_with_parent};

/// How a consumer gets its figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Direct,
    Shm(u64),
    /// Shared memory at this max age, one read per millisecond (at most
    /// 3000 reads each), to measure the agent's read rate over seconds.
    ShmPaced(u64),
    Http,
}

impl Variant {
    pub const ALL: [Variant; 8] = [
        Variant::Direct,
        Variant::Shm(0),
        Variant::Shm(1),
        Variant::Shm(10),
        Variant::Shm(100),
        Variant::Shm(1000),
        Variant::ShmPaced(100),
        Variant::Http,
    ];

    pub fn name(self) -> String {
        match self {
            Variant::Direct => "proc-stat".into(),
            Variant::Shm(ms) => format!("shm-max-age-{ms}ms"),
            Variant::ShmPaced(ms) => format!("shm-{ms}ms-every-1ms"),
            Variant::Http => "http-json".into(),
        }
    }

    pub fn parse(s: &str) -> Option<Variant> {
        Self::ALL.into_iter().find(|v| v.name() == s)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub variant: String,
    pub consumers: usize,
    pub reads_per_consumer: u64,
    pub elapsed_s: f64,
    pub consumers_user_s: f64,
    pub consumers_system_s: f64,
    /// Consumers' CPU time per read, microseconds.
    pub cpu_us_per_read: f64,
    pub agent_cpu_s: f64,
    /// Reads of /proc/stat during the run, by the consumers or the agent.
    pub proc_stat_reads: u64,
    pub proc_stat_reads_per_s: f64,
}

pub struct Options {
    pub consumers: usize,
    pub reads: u64,
    /// The `quietstat` binary (for the agent and the workers).
    pub exe: PathBuf,
}

/// CPU time (user, system) of a process, from /proc/PID/stat.
fn cpu_of(pid: u32) -> Result<f64, Error> {
    let st = crate::child::pid_stat(pid)?;
    Ok((st.utime_ticks + st.stime_ticks) as f64 / procfs::stat::USER_HZ as f64)
}

fn http_get(
    stream: &mut BufReader<TcpStream>,
    addr: SocketAddr,
    path: &str,
) -> Result<Vec<u8>, Error> {
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    stream.get_mut().write_all(req.as_bytes())?;
    let mut len = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if stream.read_line(&mut line)? == 0 {
            return Err(Error::other("connection closed"));
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v
                .trim()
                .parse()
                .map_err(|_| Error::malformed("", None, format!("bad length {v}")))?;
        }
    }
    let mut body = vec![0; len];
    stream.read_exact(&mut body)?;
    Ok(body)
}

fn stat_reads(addr: SocketAddr) -> Result<u64, Error> {
    let s = TcpStream::connect(addr)?;
    let mut r = BufReader::new(s);
    let body = http_get(&mut r, addr, "/api/v1/snapshot?sources=stat")?;
    let v: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| Error::malformed("the agent's JSON", None, e.to_string()))?;
    v["agent"]["sources"]["stat"]["reads"]
        .as_u64()
        .ok_or_else(|| Error::malformed("", None, "no stat reads in the agent's answer"))
}

/// What one consumer measured of its own reading loop (set-up excluded).
#[derive(Debug, Clone, Copy, Default, Serialize, serde::Deserialize)]
pub struct WorkerResult {
    pub user_s: f64,
    pub system_s: f64,
    pub elapsed_s: f64,
    /// Sum of what was read, so the reads are not optimised away.
    pub checksum: u64,
}

fn rusage_self() -> (f64, f64) {
    // SAFETY: ru is a valid out-parameter.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// One consumer: `reads` reads of CPU times and the interrupt total, timed
/// from the first read to the last (opening and connecting excluded).
pub fn worker(
    variant: Variant,
    reads: u64,
    shm_path: &Path,
    addr: SocketAddr,
) -> Result<WorkerResult, Error> {
    let mut sum = 0u64;
    let (mut u0, mut s0, mut t0) = (0.0, 0.0, Instant::now());
    let mut start = || {
        (u0, s0) = rusage_self();
        t0 = Instant::now();
    };
    match variant {
        Variant::Direct => {
            let mut reader = procfs::Reader::new("/proc", "/sys");
            let mut sample = procfs::SystemSample::default();
            start();
            for _ in 0..reads {
                reader.read_source(procfs::Source::Stat, &mut sample);
                sum = sum.wrapping_add(sample.stat.intr_total + sample.stat.total.total_ticks());
            }
        }
        Variant::Shm(ms) | Variant::ShmPaced(ms) => {
            let r = shm::ShmReader::open(shm_path)?;
            let mut s = shm::Snapshot::default();
            let age = Duration::from_millis(ms);
            let paced = matches!(variant, Variant::ShmPaced(_));
            start();
            for _ in 0..reads {
                r.read_fresh(age, Duration::from_secs(10), &mut s)?;
                sum = sum.wrapping_add(s.intr_total + s.cpu_ticks[0]);
                if paced {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        Variant::Http => {
            let s = TcpStream::connect(addr)?;
            let mut r = BufReader::new(s);
            start();
            for _ in 0..reads {
                let body = http_get(&mut r, addr, "/api/v1/snapshot?sources=stat")?;
                sum = sum.wrapping_add(body.len() as u64);
            }
        }
    }
    let elapsed_s = t0.elapsed().as_secs_f64();
    let (u1, s1) = rusage_self();
    Ok(WorkerResult {
        user_s: u1 - u0,
        system_s: s1 - s0,
        elapsed_s,
        checksum: sum,
    })
}

/// Runs every variant; `progress` gets one line per step.
pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let dir =
        std::env::temp_dir().join(format!("quietstat-bench-consumers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::file(&dir, e))?;
    let result = run_in(opts, &dir, progress);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(opts: &Options, dir: &Path, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let shm_path = dir.join("snapshot");
    let cfg = dir.join("agent.toml");
    std::fs::write(
        &cfg,
        "[sources.stat]\nmin_interval = \"0s\"\n[sources.processes]\nenabled = false\n",
    )?;
    let mut cmd = Command::new(&opts.exe);
    cmd.args(["agent", "--no-store", "--listen", "127.0.0.1:0", "--config"])
        .arg(&cfg)
        .arg("--shm-path")
        .arg(&shm_path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = die_with_parent(&mut cmd)
        .spawn()
        .map_err(|e| Error::io("starting the agent", e))?;
    let stderr = child.stderr.take().expect("piped");
    let agent = Guard(child);
    let agent_pid = agent.0.id();
    let mut lines = BufReader::new(stderr).lines();
    let addr: SocketAddr = loop {
        match lines.next() {
            Some(Ok(l)) => {
                if let Some(rest) = l.strip_prefix("quietstat agent: serving http://") {
                    break rest
                        .split('/')
                        .next()
                        .and_then(|a| a.parse().ok())
                        .ok_or_else(|| {
                            Error::malformed("", None, format!("unexpected line: {l}"))
                        })?;
                }
            }
            _ => return Err(Error::other("the agent exited before serving")),
        }
    };
    // Drain the agent's log so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    let mut rows = Vec::new();
    for v in Variant::ALL {
        progress(&format!(
            "{}: {} consumers x {} reads",
            v.name(),
            opts.consumers,
            opts.reads
        ));
        let reads0 = stat_reads(addr)?;
        let agent0 = cpu_of(agent_pid)?;
        let t0 = Instant::now();
        let mut kids = Vec::new();
        let reads = match v {
            Variant::ShmPaced(_) => opts.reads.min(3000),
            _ => opts.reads,
        };
        for _ in 0..opts.consumers {
            let mut c = Command::new(&opts.exe);
            c.args([
                "bench",
                "consumer-worker",
                "--variant",
                &v.name(),
                "--reads",
            ])
            .arg(opts.reads.to_string())
            .arg("--shm-path")
            .arg(&shm_path)
            .arg("--addr")
            .arg(addr.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
            kids.push(die_with_parent(&mut c).spawn()?);
        }
        let (mut user, mut sys) = (0.0, 0.0);
        for k in kids {
            let out = k.wait_with_output()?;
            if !out.status.success() {
                return Err(Error::other(format!(
                    "a {} consumer failed: {}",
                    v.name(),
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            let r: WorkerResult = serde_json::from_slice(&out.stdout).map_err(|e| {
                Error::malformed("", None, format!("a {} consumer's report: {e}", v.name()))
            })?;
            user += r.user_s;
            sys += r.system_s;
        }
        let elapsed = t0.elapsed().as_secs_f64();
        let agent_cpu = cpu_of(agent_pid)? - agent0;
        let agent_reads = stat_reads(addr)?.saturating_sub(reads0);
        let total = opts.consumers as u64 * reads;
        let proc_stat_reads = match v {
            Variant::Direct => total + agent_reads,
            _ => agent_reads,
        };
        rows.push(Row {
            variant: v.name(),
            consumers: opts.consumers,
            reads_per_consumer: reads,
            elapsed_s: elapsed,
            consumers_user_s: user,
            consumers_system_s: sys,
            cpu_us_per_read: (user + sys) * 1e6 / total.max(1) as f64,
            agent_cpu_s: agent_cpu,
            proc_stat_reads,
            proc_stat_reads_per_s: proc_stat_reads as f64 / elapsed,
        });
    }
    drop(agent);
    Ok(rows)
}
