//! `bench exits`: exit capture under a sustained fork/exit load. A forker
//! process (the hidden `bench forker`) forks children that exit at once, at
//! a fixed rate for a fixed time, reaping them as it goes; meanwhile the
//! benchmark drains the BPF exit ring on the agent's schedule (no wakeup
//! per exit) and counts the exits whose parent is the forker. Every child
//! forked must be captured, with its exit code, and none lost.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use sys::Error;

use proctable::{BackendChoice, Exit, ProcTable};
use serde::Serialize;

use sys::child::{Guard, die_with_parent};

/// What to measure.
pub struct Options {
    /// Children per second the forker aims at.
    pub rate: u32,
    pub duration: Duration,
    /// How often the ring is drained (the agent drains it when it reads the
    /// process table: every 5 s by default).
    pub drain_every: Duration,
    /// The quietstat binary (runs `bench forker`).
    pub exe: std::path::PathBuf,
    /// Capture through taskstats instead of the BPF ring buffer.
    pub taskstats: bool,
}

/// The outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `bpf` or `taskstats`.
    pub capture: &'static str,
    pub offered_per_s: u32,
    pub seconds: f64,
    /// Children the forker forked (and reaped), and per second.
    pub forked: u64,
    pub forked_per_s: f64,
    /// Of those, exits found in the ring, with the right exit code.
    pub captured: u64,
    pub wrong_code: u64,
    /// Records lost machine-wide during the run: BPF ring-buffer drops, or
    /// taskstats socket overflows (each at least one record).
    pub lost: u64,
    /// Exits of every process on the machine drained during the run.
    pub drained: u64,
    pub drains: u64,
    pub max_per_drain: u64,
    /// Reader CPU per exit drained (the benchmark's own thread time while
    /// draining, over the exits drained).
    pub drain_ns_per_exit: f64,
}

/// Runs the load and the capture; `note` receives progress messages.
pub fn run(opts: &Options, note: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    // The procfs backend captures through taskstats, the bpf one through
    // its ring buffer.
    let backend = if opts.taskstats {
        BackendChoice::Procfs
    } else {
        BackendChoice::Bpf
    };
    let mut capture = ProcTable::open(backend, "/proc", "/sys")?;
    let how = capture.enable_exits()?;
    let lost = |t: &ProcTable| t.exits_lost().unwrap_or(0);
    let before = lost(&capture);
    let mut exits: Vec<Exit> = Vec::new();
    capture.drain_exits(&mut exits);
    exits.clear();

    let mut cmd = Command::new(&opts.exe);
    cmd.args([
        "bench",
        "forker",
        "--rate",
        &opts.rate.to_string(),
        "--duration-ms",
        &opts.duration.as_millis().to_string(),
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped());
    die_with_parent(&mut cmd);
    let mut forker = Guard(
        cmd.spawn()
            .map_err(|e| Error::io("starting the forker", e))?,
    );
    let forker_pid = forker.0.id();
    note(&format!(
        "forker {forker_pid}: {} children/s for {:?}, ring drained every {:?}",
        opts.rate, opts.duration, opts.drain_every
    ));
    let start = Instant::now();
    let (mut captured, mut wrong_code, mut drained, mut drains, mut max_per_drain) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut drain_cpu = 0u64;
    let mut next = start + opts.drain_every;
    let mut drain = |capture: &mut ProcTable| {
        let t = sys::thread_cpu_ns();
        exits.clear();
        let n = capture.drain_exits(&mut exits) as u64;
        for e in exits.iter().filter(|e| e.ppid == forker_pid) {
            captured += 1;
            // The forker's children exit with code pid % 100 (wait status
            // code << 8).
            if e.exit_status != ((e.pid % 100) << 8) as i32 {
                wrong_code += 1;
            }
        }
        drain_cpu += sys::thread_cpu_ns() - t;
        drained += n;
        drains += 1;
        max_per_drain = max_per_drain.max(n);
    };
    let status = loop {
        if let Some(status) = forker.0.try_wait()? {
            break status;
        }
        if Instant::now() >= next {
            drain(&mut capture);
            next += opts.drain_every;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let seconds = start.elapsed().as_secs_f64();
    drain(&mut capture);
    if !status.success() {
        return Err(Error::other(format!("the forker failed: {status}")));
    }
    let mut out = String::new();
    forker
        .0
        .stdout
        .take()
        .ok_or_else(|| Error::other("the forker's stdout"))?
        .read_to_string(&mut out)?;
    let forked: u64 = out.trim().parse().map_err(|_| {
        Error::malformed("", None, format!("the forker printed {out:?}, not a count"))
    })?;
    let after = lost(&capture);
    Ok(Report {
        offered_per_s: opts.rate,
        seconds,
        forked,
        forked_per_s: forked as f64 / opts.duration.as_secs_f64(),
        captured,
        wrong_code,
        capture: how,
        lost: after - before,
        drained,
        drains,
        max_per_drain,
        drain_ns_per_exit: drain_cpu as f64 / drained.max(1) as f64,
    })
}

/// The forker: forks `rate` children per second for `duration` (or until
/// `count` are forked, whichever comes first), each exiting at once with
/// code pid % 100, reaping them as it goes; returns how many it forked.
/// Paced on a 1 ms grid of absolute deadlines: a machine that cannot keep
/// the rate forks fewer in the duration, never more than `count`.
pub fn forker(rate: u32, duration: Duration, count: Option<u64>) -> Result<u64, Error> {
    let start = Instant::now();
    let mut forked = 0u64;
    let mut live = 0u64;
    let reap = |live: &mut u64, block: bool| {
        loop {
            let mut status = 0;
            let flags = if block { 0 } else { libc::WNOHANG };
            // SAFETY: waits for our own children.
            let pid = unsafe { libc::waitpid(-1, &mut status, flags) };
            if pid <= 0 {
                break;
            }
            *live -= 1;
            if block && *live == 0 {
                break;
            }
        }
    };
    let count = count.unwrap_or(u64::MAX);
    while start.elapsed() < duration && forked < count {
        let due = ((start.elapsed().as_secs_f64() * rate as f64) as u64 + 1).min(count);
        while forked < due {
            // SAFETY: the child only calls getpid and _exit.
            match unsafe { libc::fork() } {
                // SAFETY: in the child: getpid and _exit are async-signal-safe.
                0 => unsafe { libc::_exit(libc::getpid() % 100) },
                -1 => return Err(Error::kernel("fork", std::io::Error::last_os_error())),
                _ => {
                    forked += 1;
                    live += 1;
                }
            }
        }
        reap(&mut live, false);
        std::thread::sleep(Duration::from_millis(1));
    }
    if live > 0 {
        reap(&mut live, true);
    }
    Ok(forked)
}
