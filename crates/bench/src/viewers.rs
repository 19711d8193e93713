//! `bench viewers`: what looking at the machine costs, with N idle
//! processes and an agent running (bpf backend, no store).
//!
//! - `ps`: one whole `quietstat ps` process (start to exit, output to
//!   /dev/null) with the same fields from the agent's table, from its own
//!   BPF snapshot and from /proc, beside `ps -e -o ...` (procps), taking
//!   turns in each round so that all see the same machine.
//! - `first screen`: `quietstat top --first-screen` on a pseudo-terminal of
//!   80x24, from spawn until it has drawn its first full screen and quit.
//! - `top` and `htop`: T of each, in a tmux server of our own (80x24
//!   windows) refreshing every 2 s for the window: CPU per viewer process
//!   (the runtime of all its threads, from /proc/PID/task/*/schedstat), and
//!   the agent's reads and CPU in the same window, against a window with no
//!   viewer before them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use sys::Error;

use serde::Serialize;
use sys::child::{Guard, die_with_parent};

use crate::spawn::Idle;
use crate::stats::Summary;

pub struct Options {
    pub procs: usize,
    pub runs: usize,
    pub window: Duration,
    pub viewers: usize,
    pub exe: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    pub what: String,
    pub runs: usize,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Watch {
    pub what: String,
    pub viewers: usize,
    pub seconds: f64,
    /// CPU of one viewer process, percent of a core (median over viewers).
    pub viewer_cpu_pct: Option<f64>,
    /// The agent in the same window: its reads of every source, per second,
    /// and its CPU, percent of a core.
    pub agent_reads_per_s: f64,
    pub agent_cpu_pct: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub procs: usize,
    pub timings: Vec<Timing>,
    pub watches: Vec<Watch>,
}

/// Nanoseconds of CPU of every thread of `pid`.
pub(crate) fn runtime_ns(pid: u32) -> Option<u64> {
    let mut total = 0;
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let Ok(t) = t else { continue };
        let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) else {
            continue;
        };
        total += s.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

/// The agent's reads so far, summed over its sources, from its JSON API.
fn agent_reads(port: u16) -> Result<u64, Error> {
    let resp = crate::agent_cost::get(port, "/api/v1/snapshot?sources=stat")?;
    let v: serde_json::Value = serde_json::from_slice(crate::agent_cost::http_body(&resp))
        .map_err(|e| Error::malformed("the agent's JSON", None, e.to_string()))?;
    let sources = v["agent"]["sources"]
        .as_object()
        .ok_or_else(|| Error::malformed("", None, "no agent.sources in the agent's JSON"))?;
    Ok(sources.values().filter_map(|s| s["reads"].as_u64()).sum())
}

/// `quietstat ps` from `backend`, with the fields compared with procps.
pub(crate) fn ps_quietstat(exe: &Path, backend: &str, shm: &str) -> Command {
    let mut c = Command::new(exe);
    c.args(["ps", "--backend", backend, "--shm-path", shm])
        .args(["--fields", "pid,ppid,comm,state,start,utime,stime,rss"])
        .args(["--format", "csv"]);
    c
}

/// procps' `ps` with the same fields.
pub(crate) fn procps_ps() -> Command {
    let mut c = Command::new("ps");
    c.args(["-e", "-o", "pid,ppid,comm,stat,lstart,time,rss"]);
    c
}

/// Wall time of one run of `cmd` (stdout to /dev/null); fails if it fails.
pub(crate) fn time_run(cmd: &mut Command) -> Result<u64, Error> {
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let t = Instant::now();
    let out = cmd.output().map_err(|e| Error::io(format!("{cmd:?}"), e))?;
    let ns = t.elapsed().as_nanos() as u64;
    if !out.status.success() {
        return Err(Error::other(format!(
            "{cmd:?}: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(ns)
}

pub(crate) fn timing(what: &str, ns: &mut [u64]) -> Timing {
    let s = Summary::of_ns(ns);
    Timing {
        what: what.into(),
        runs: ns.len(),
        median_ms: s.median_us / 1000.0,
        min_ms: s.min_us / 1000.0,
        max_ms: s.max_us / 1000.0,
    }
}

/// A pseudo-terminal of 80x24: (controller, path of the terminal).
fn pty() -> Result<(std::fs::File, PathBuf), Error> {
    use std::os::fd::FromRawFd;
    let err = |w: &str| Error::kernel(w, std::io::Error::last_os_error());
    // SAFETY: plain calls on a descriptor we own; ptsname_r writes into buf.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(err("posix_openpt"));
        }
        let file = std::fs::File::from_raw_fd(fd);
        if libc::grantpt(fd) != 0 || libc::unlockpt(fd) != 0 {
            return Err(err("grantpt"));
        }
        let mut buf = [0 as libc::c_char; 128];
        if libc::ptsname_r(fd, buf.as_mut_ptr(), buf.len()) != 0 {
            return Err(err("ptsname_r"));
        }
        let ws = libc::winsize {
            ws_row: 24,
            ws_col: 80,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        libc::ioctl(fd, libc::TIOCSWINSZ, &ws);
        let name = std::ffi::CStr::from_ptr(buf.as_ptr());
        Ok((file, PathBuf::from(name.to_string_lossy().into_owned())))
    }
}

/// Start of `quietstat top --first-screen` to its exit, on a terminal.
pub(crate) fn first_screen(exe: &Path, shm: &Path) -> Result<u64, Error> {
    use std::io::Read;
    let (mut ctl, tty) = pty()?;
    let open = |w: bool| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(w)
            .open(&tty)
            .map_err(|e| Error::file(&tty, e))
    };
    let (i, o, e) = (open(false)?, open(true)?, open(true)?);
    // What top draws is read, so that it never waits on a full terminal.
    let drain = std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while matches!(ctl.read(&mut buf), Ok(n) if n > 0) {}
    });
    let t = Instant::now();
    let status = Command::new(exe)
        .args(["top", "--first-screen", "--shm-path"])
        .arg(shm)
        .env("TERM", "xterm-256color")
        .stdin(i)
        .stdout(o)
        .stderr(e)
        .status()
        .map_err(|e| Error::io("starting top", e))?;
    let ns = t.elapsed().as_nanos() as u64;
    if !status.success() {
        return Err(Error::other(format!("top --first-screen: {status}")));
    }
    drop(drain);
    Ok(ns)
}

/// A tmux server of our own, killed on drop.
pub(crate) struct Tmux(String);

impl Tmux {
    pub(crate) fn new() -> Tmux {
        Tmux(format!("qs-bench-{}", std::process::id()))
    }

    /// Runs `args` in a new 80x24 session; the pid of its process.
    pub(crate) fn run(&self, name: &str, args: &[&str]) -> Result<u32, Error> {
        let out = Command::new("tmux")
            .args(["-L", &self.0, "-f", "/dev/null", "new-session", "-d", "-P"])
            .args(["-F", "#{pane_pid}", "-x", "80", "-y", "24", "-s", name])
            .args(args)
            .env("TERM", "xterm-256color")
            .output()
            .map_err(|e| Error::io("tmux (Debian package tmux)", e))?;
        if !out.status.success() {
            return Err(Error::other(format!(
                "tmux new-session: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|e: std::num::ParseIntError| {
                Error::malformed("tmux pane pid", None, e.to_string())
            })
    }

    /// Stops the server and everything in it, and removes its socket.
    fn kill_sessions(&self) {
        let path = Command::new("tmux")
            .args(["-L", &self.0, "display-message", "-p", "#{socket_path}"])
            .stderr(Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let _ = Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .stderr(Stdio::null())
            .status();
        if !path.is_empty() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.kill_sessions();
    }
}

/// CPU of each viewer and of the agent over `window` (after a settling
/// second), and the agent's reads.
fn watch(
    what: &str,
    viewers: &[u32],
    agent: u32,
    port: u16,
    window: Duration,
) -> Result<Watch, Error> {
    std::thread::sleep(Duration::from_secs(3));
    let before: Vec<Option<u64>> = viewers.iter().map(|&p| runtime_ns(p)).collect();
    let a0 =
        runtime_ns(agent).ok_or_else(|| Error::new(sys::ErrorKind::Absent, "the agent is gone"))?;
    let r0 = agent_reads(port)?;
    let t = Instant::now();
    std::thread::sleep(window);
    let secs = t.elapsed().as_secs_f64();
    let r1 = agent_reads(port)?;
    let a1 =
        runtime_ns(agent).ok_or_else(|| Error::new(sys::ErrorKind::Absent, "the agent is gone"))?;
    let mut pcts: Vec<u64> = Vec::new();
    for (&p, b) in viewers.iter().zip(before) {
        let (Some(b), Some(a)) = (b, runtime_ns(p)) else {
            return Err(Error::other(format!(
                "{what}: viewer {p} ended during the window"
            )));
        };
        pcts.push(a.saturating_sub(b));
    }
    let viewer_cpu_pct = (!pcts.is_empty()).then(|| {
        let s = Summary::of_ns(&mut pcts);
        s.median_us * 1000.0 / (secs * 1e9) * 100.0
    });
    // The reads of the JSON request itself (none: it asks for no fresh
    // data) are not counted.
    Ok(Watch {
        what: what.into(),
        viewers: viewers.len(),
        seconds: secs,
        viewer_cpu_pct,
        agent_reads_per_s: r1.saturating_sub(r0) as f64 / secs,
        agent_cpu_pct: a1.saturating_sub(a0) as f64 / (secs * 1e9) * 100.0,
    })
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let existing = std::fs::read_dir("/proc").map(|d| d.count()).unwrap_or(0);
    let (n, why) = crate::spawn::cap(opts.procs, existing);
    if let Some(why) = why {
        progress(&format!("{n} processes, not {}: {why}", opts.procs));
    }
    let idle = Idle::start(n).map_err(|e| Error::io(format!("starting {n} processes"), e))?;
    let dir = std::env::temp_dir().join(format!("quietstat-bench-viewers-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = measure(opts, &idle, n, &dir, progress);
    let _ = std::fs::remove_dir_all(&dir);
    drop(idle);
    result
}

fn measure(
    opts: &Options,
    idle: &Idle,
    n: usize,
    dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, Error> {
    let shm = dir.join("snapshot");
    let port = crate::agent_cost::free_port()?;
    let mut cmd = Command::new(&opts.exe);
    cmd.args(["agent", "--no-store", "--backend", "bpf", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--shm-path")
        .arg(&shm)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let agent = die_with_parent(&mut cmd)
        .spawn()
        .map(Guard)
        .map_err(|e| Error::io("starting the agent", e))?;
    let agent_pid = agent.0.id();
    // Its table holds the idle processes.
    let procs = shm::view::procs_path(&shm);
    let t = Instant::now();
    loop {
        if let Ok(v) = shm::view::read_procs(&procs)
            && v.procs.len() >= idle.count()
        {
            break;
        }
        if t.elapsed() > Duration::from_secs(60) {
            return Err(Error::other(format!(
                "{}: no table of {n} processes",
                procs.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let shm_s = shm.to_string_lossy().into_owned();
    let mut ps_agent = Vec::new();
    let mut ps_bpf = Vec::new();
    let mut ps_procfs = Vec::new();
    let mut ps_procps = Vec::new();
    let mut screens = Vec::new();
    progress(&format!("ps and first screen: {} rounds", opts.runs));
    for _ in 0..opts.runs {
        let q = |backend: &str| ps_quietstat(&opts.exe, backend, &shm_s);
        ps_agent.push(time_run(&mut q("agent"))?);
        ps_bpf.push(time_run(&mut q("bpf"))?);
        ps_procfs.push(time_run(&mut q("procfs"))?);
        ps_procps.push(time_run(&mut procps_ps())?);
        screens.push(first_screen(&opts.exe, &shm)?);
    }
    let timings = vec![
        timing("ps --backend agent", &mut ps_agent),
        timing("ps --backend bpf", &mut ps_bpf),
        timing("ps --backend procfs", &mut ps_procfs),
        timing("ps -e -o ... (procps)", &mut ps_procps),
        timing("top: start to first screen", &mut screens),
    ];

    let mut watches = Vec::new();
    progress(&format!("the agent alone for {:?}", opts.window));
    watches.push(watch("agent alone", &[], agent_pid, port, opts.window)?);
    let tmux = Tmux::new();
    let shm_arg = shm_s.clone();
    for (what, args) in [
        (
            "quietstat top -d 2s",
            vec![
                opts.exe.to_string_lossy().into_owned(),
                "top".into(),
                "-d".into(),
                "2s".into(),
                "--shm-path".into(),
                shm_arg.clone(),
            ],
        ),
        ("htop -d 20", vec!["htop".into(), "-d".into(), "20".into()]),
    ] {
        progress(&format!("{} x {what} for {:?}", opts.viewers, opts.window));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut pids = Vec::new();
        for i in 0..opts.viewers {
            pids.push(tmux.run(&format!("v{i}"), &argv)?);
        }
        watches.push(watch(what, &pids, agent_pid, port, opts.window)?);
        tmux.kill_sessions();
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(agent);
    Ok(Report {
        procs: n,
        timings,
        watches,
    })
}
