//! `bench net`: what the network bytes per process cost a process-table
//! read, with N idle processes and S open TCP sockets (S/2 loopback
//! connections, both ends, held by idle processes: the target's case). The
//! agent's own fields are read with and without [`Field::Net`], taking
//! turns in one run; the difference is what the agent pays per read:
//! between sweeps (the sockets of the processes that ran), and at a sweep
//! of every socket (every read a sweep: what the design before paid at
//! every read); and per second at its process interval with a sweep every
//! [`SWEEP_EVERY`]. A loopback stream beside the reads: the cost must not
//! grow with the traffic, as nothing runs per packet. Then every socket
//! held by this process, which runs at every read (a busy server's case),
//! and a holder scan of its listener. The first read with `net` (loading
//! the programs and the holder scan over every descriptor) is timed apart.
//! Last, what the tracepoints cost each loopback connection made, used and
//! closed, with and without the programs loaded.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use proctable::bpf::net::SWEEP_EVERY;
use proctable::bpf::{Bpf, Method};
use proctable::{Field, Fields, Proc, Query};
use serde::Serialize;
use sys::Error;

use crate::proctable_cost::{percentile_ms, run_order};
use crate::spawn::{Idle, cap};

pub const DEFAULT_PROCS: usize = 8000;
pub const DEFAULT_SOCKETS: usize = 10_000;
pub const DEFAULT_RUNS: usize = 15;
/// The agent's default process interval (`sources.processes.interval`).
pub const AGENT_INTERVAL_SECS: f64 = 5.0;

/// What to measure.
pub struct Options {
    pub procs: usize,
    pub sockets: usize,
    pub runs: usize,
}

/// One row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub case: String,
    /// Processes in the table and TCP sockets open.
    pub rows: usize,
    pub sockets: usize,
    pub median_ms: f64,
    /// Over the same fields without `net` (the row before), per read.
    pub extra_ms: f64,
    /// That extra per open socket.
    pub extra_ns_per_socket: f64,
    /// That extra as a share of one core at the agent's process interval.
    pub extra_core_pct: f64,
    /// The loopback stream's rate during the row, Gbit/s (0: none).
    pub stream_gbit: f64,
}

/// The agent's fields with the BPF backend (`sampler`), with or without
/// `net`.
fn agent_fields(net: bool) -> Fields {
    let f = Fields::stat()
        .with(Field::Uid)
        .with(Field::Io)
        .with(Field::Cgroup)
        .with(Field::Delay);
    if net { f.with(Field::Net) } else { f }
}

/// S/2 loopback connections, both ends held here.
fn open_sockets(n: usize) -> Result<(TcpListener, Vec<TcpStream>), Error> {
    let io = |what: &str, e: std::io::Error| Error::io(what.to_string(), e);
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| io("binding a listener", e))?;
    let addr = l.local_addr().map_err(|e| io("its address", e))?;
    let mut held = Vec::with_capacity(n);
    for _ in 0..n / 2 {
        let mut c = TcpStream::connect(addr).map_err(|e| io("connecting", e))?;
        let (mut s, _) = l.accept().map_err(|e| io("accepting", e))?;
        // A little traffic each way, so that every socket has counts.
        c.write_all(b"ping").map_err(|e| io("writing", e))?;
        let mut b = [0u8; 4];
        s.read_exact(&mut b).map_err(|e| io("reading", e))?;
        s.write_all(b"pong").map_err(|e| io("writing", e))?;
        c.read_exact(&mut b).map_err(|e| io("reading", e))?;
        held.push(c);
        held.push(s);
    }
    Ok((l, held))
}

/// A loopback stream, written as fast as it goes until dropped: the
/// bytes it moved.
struct Stream {
    stop: Arc<AtomicBool>,
    moved: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Stream {
    fn start() -> Result<Stream, Error> {
        let io = |what: &str, e: std::io::Error| Error::io(what.to_string(), e);
        let l = TcpListener::bind("127.0.0.1:0").map_err(|e| io("binding a listener", e))?;
        let mut tx = TcpStream::connect(l.local_addr().map_err(|e| io("its address", e))?)
            .map_err(|e| io("connecting", e))?;
        let (mut rx, _) = l.accept().map_err(|e| io("accepting", e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let moved = Arc::new(AtomicU64::new(0));
        let (s1, m1) = (stop.clone(), moved.clone());
        let writer = std::thread::spawn(move || {
            let buf = vec![0u8; 1 << 16];
            while !s1.load(Ordering::Relaxed) {
                if tx.write_all(&buf).is_err() {
                    break;
                }
            }
        });
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n) = rx.read(&mut buf) {
                if n == 0 {
                    break;
                }
                m1.fetch_add(n as u64, Ordering::Relaxed);
            }
        });
        Ok(Stream {
            stop,
            moved,
            threads: vec![writer, reader],
        })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Measures; `note` receives messages (caps).
pub fn run(opts: &Options, note: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let existing = std::fs::read_dir("/proc").map(|d| d.count()).unwrap_or(0);
    let (n, why) = cap(opts.procs, existing);
    if let Some(why) = why {
        note(&format!("{} processes capped to {n}: {why}", opts.procs));
    }
    // Every socket is a descriptor of this process.
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit with a valid struct.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
    let room = (lim.rlim_cur as usize).saturating_sub(256);
    let sockets = opts.sockets.min(room) / 2 * 2;
    if sockets < opts.sockets {
        note(&format!(
            "{} sockets capped to {sockets}: RLIMIT_NOFILE is {}",
            opts.sockets, lim.rlim_cur
        ));
    }
    let (listener, held) = open_sockets(sockets)?;
    // The target's case: the sockets held by idle processes (a holder per
    // HOLD_EACH connections), not by this one, which runs every read.
    let pairs = held.len() / 2;
    let holders_n = pairs.div_ceil(HOLD_EACH).min(n);
    let holders = Holders::start(&held, holders_n)
        .map_err(|e| Error::io(format!("starting {holders_n} holders"), e))?;
    drop(held);
    let idle = Idle::start(n - holders_n)
        .map_err(|e| Error::io(format!("spawning {} idle processes", n - holders_n), e))?;
    let mut bpf = Bpf::open_with(Method::Walk)?;
    let query = |net| Query {
        fields: agent_fields(net),
        ..Query::default()
    };
    let mut table: Vec<Proc> = Vec::new();
    // The first read with net loads the programs and scans every
    // descriptor: timed apart, after a read without it (warm).
    bpf.snapshot(&query(false), &mut table)?;
    let t = Instant::now();
    bpf.snapshot(&query(true), &mut table)?;
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    if let Some(why) = bpf.net_unavailable() {
        return Err(Error::new(
            sys::ErrorKind::Kernel,
            format!("network bytes are unavailable: {why}"),
        ));
    }
    let rows_seen = table.len();
    // Medians of reads without and with net, taking turns.
    let mut pair = |bpf: &mut Bpf| -> Result<(f64, f64), Error> {
        let mut samples = [Vec::new(), Vec::new()];
        for run in 0..=opts.runs {
            for k in run_order(2, run) {
                let t = Instant::now();
                bpf.snapshot(&query(k == 1), &mut table)?;
                if run > 0 {
                    samples[k].push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
        }
        let [mut without, mut with] = samples;
        without.sort_by(f64::total_cmp);
        with.sort_by(f64::total_cmp);
        Ok((percentile_ms(&without, 50.0), percentile_ms(&with, 50.0)))
    };
    let row = |case: String, median_ms: f64, extra: f64, gbit: f64| Row {
        case,
        rows: rows_seen,
        sockets,
        median_ms,
        extra_ms: extra,
        extra_ns_per_socket: extra * 1e6 / sockets.max(1) as f64,
        extra_core_pct: extra / 1e3 / AGENT_INTERVAL_SECS * 100.0,
        stream_gbit: gbit,
    };
    let mut out = Vec::new();
    // Between sweeps: the sockets of the processes that ran.
    let (a, b) = pair(&mut bpf)?;
    out.push(row("agent's fields".into(), a, 0.0, 0.0));
    let between = b - a;
    out.push(row(
        format!("+ net, between sweeps ({holders_n} idle holders)"),
        b,
        between,
        0.0,
    ));
    // Every read a sweep.
    bpf.set_net_sweep_every(Duration::ZERO);
    let (a, b) = pair(&mut bpf)?;
    bpf.set_net_sweep_every(SWEEP_EVERY);
    let sweep = b - a;
    out.push(row("+ net, a sweep of every socket".into(), b, sweep, 0.0));
    // The agent: a read every interval, a sweep in each sweep interval.
    let reads = SWEEP_EVERY.as_secs_f64() / AGENT_INTERVAL_SECS;
    let agent = between + (sweep - between).max(0.0) / reads;
    out.push(row(
        format!(
            "+ net, the agent's defaults (a sweep every {} s)",
            SWEEP_EVERY.as_secs()
        ),
        a + agent,
        agent,
        0.0,
    ));
    // A loopback stream beside the reads, between sweeps.
    {
        let stream = Stream::start()?;
        let started = Instant::now();
        let moved_before = stream.moved.load(Ordering::Relaxed);
        let (a, b) = pair(&mut bpf)?;
        let bytes = stream.moved.load(Ordering::Relaxed) - moved_before;
        let gbit = bytes as f64 * 8.0 / started.elapsed().as_secs_f64() / 1e9;
        drop(stream);
        out.push(row("agent's fields, loopback stream".into(), a, 0.0, gbit));
        out.push(row(
            "+ net, between sweeps, loopback stream".into(),
            b,
            b - a,
            gbit,
        ));
    }
    // The sockets held by a process that runs every read (this one): its
    // descriptors are visited each read.
    drop(holders);
    let (busy_listener, busy) = open_sockets(sockets)?;
    let (a, b) = pair(&mut bpf)?;
    out.push(row(
        "+ net, every socket held by a process that runs".into(),
        b,
        b - a,
        0.0,
    ));
    // A holder scan of the listener (this process, holding every socket):
    // a sweep finds a new accepted connection unheld, and leaves a scan
    // due at the next read.
    bpf.set_net_scan_every(Duration::ZERO);
    bpf.set_net_sweep_every(Duration::ZERO);
    let mut scans = Vec::new();
    for _ in 0..opts.runs {
        let c = TcpStream::connect(
            busy_listener
                .local_addr()
                .map_err(|e| Error::io("its address", e))?,
        )
        .map_err(|e| Error::io("connecting", e))?;
        let (s, _) = busy_listener
            .accept()
            .map_err(|e| Error::io("accepting", e))?;
        // The read that finds it unheld, then the one that scans.
        bpf.snapshot(&query(true), &mut table)?;
        let t = Instant::now();
        bpf.snapshot(&query(true), &mut table)?;
        scans.push(t.elapsed().as_secs_f64() * 1e3);
        drop((c, s));
    }
    scans.sort_by(f64::total_cmp);
    let scan = percentile_ms(&scans, 50.0);
    out.push(row(
        format!(
            "+ net, first read (load, scan of every descriptor): {load_ms:.1} ms; a sweep and a scan of the listener's {} descriptors",
            sockets + 4
        ),
        scan,
        scan - b,
        0.0,
    ));
    drop(busy);
    drop(busy_listener);
    drop(bpf);
    out.push(churn(opts.runs, rows_seen)?);
    drop(listener);
    drop(idle);
    Ok(out)
}

/// Connections a churn batch makes.
const CHURN_BATCH: usize = 1000;

/// What the tracepoints cost a connection: batches of loopback
/// connections made, used (a byte each way) and closed, with and without
/// the programs loaded, taking turns (a handle loaded and dropped for
/// each batch with them). The row's figures are per connection; its share
/// of a core is at 10,000 connections a second.
fn churn(runs: usize, rows: usize) -> Result<Row, Error> {
    let io = |what: &str, e: std::io::Error| Error::io(what.to_string(), e);
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| io("binding a listener", e))?;
    let addr = l.local_addr().map_err(|e| io("its address", e))?;
    let batch = || -> Result<f64, Error> {
        let t = Instant::now();
        for _ in 0..CHURN_BATCH {
            let mut c = TcpStream::connect(addr).map_err(|e| io("connecting", e))?;
            let (mut s, _) = l.accept().map_err(|e| io("accepting", e))?;
            let mut b = [0u8; 1];
            c.write_all(b"p").map_err(|e| io("writing", e))?;
            s.read_exact(&mut b).map_err(|e| io("reading", e))?;
            s.write_all(b"q").map_err(|e| io("writing", e))?;
            c.read_exact(&mut b).map_err(|e| io("reading", e))?;
        }
        Ok(t.elapsed().as_secs_f64() * 1e3 / CHURN_BATCH as f64)
    };
    let query = |net| Query {
        fields: if net {
            Fields::NONE.with(Field::Net)
        } else {
            Fields::NONE
        },
        ..Query::default()
    };
    let mut table = Vec::new();
    let mut samples = [Vec::new(), Vec::new()];
    // Fewer batches than reads: each makes a thousand connections, whose
    // closing ends wait a minute in TIME_WAIT holding a port.
    for run in 0..=runs.min(6) {
        for k in run_order(2, run) {
            // A handle opened and read either way, so that both batches
            // follow the same work.
            let mut b = Bpf::open_with(Method::Walk)?;
            b.snapshot(&query(k == 1), &mut table)?;
            let each = batch()?;
            drop(b);
            if run > 0 {
                samples[k].push(each);
            }
        }
    }
    let [mut without, mut with] = samples;
    without.sort_by(f64::total_cmp);
    with.sort_by(f64::total_cmp);
    let (a, b) = (percentile_ms(&without, 50.0), percentile_ms(&with, 50.0));
    let extra = b - a;
    Ok(Row {
        case: format!(
            "connection churn, per connection (without the programs {:.1} us; % core at 10,000/s)",
            a * 1e3
        ),
        rows,
        sockets: CHURN_BATCH,
        median_ms: b,
        extra_ms: extra,
        extra_ns_per_socket: extra * 1e6,
        extra_core_pct: extra * 1e-3 * 10_000.0 * 100.0,
        stream_gbit: 0.0,
    })
}

/// Connections a holder process holds (both ends of each).
const HOLD_EACH: usize = 5;

/// Idle processes holding the sockets, alive until dropped: each a fork of
/// this process that keeps its share of the connections and closes every
/// other descriptor.
struct Holders {
    pids: Vec<libc::pid_t>,
}

impl Holders {
    /// `n` holders sharing `held` (pairs of ends, in order) between them.
    fn start(held: &[TcpStream], n: usize) -> std::io::Result<Holders> {
        use std::os::fd::AsRawFd;
        let mut holders = Holders { pids: Vec::new() };
        let pairs = held.len() / 2;
        for i in 0..n {
            let first = pairs * i / n.max(1) * 2;
            let last = pairs * (i + 1) / n.max(1) * 2;
            let mut keep: Vec<u32> = held[first..last]
                .iter()
                .map(|s| s.as_raw_fd() as u32)
                .collect();
            keep.sort_unstable();
            // SAFETY: the child only calls async-signal-safe system calls
            // (close_range, prctl, pause) and never returns.
            let pid = unsafe { libc::fork() };
            if pid < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if pid == 0 {
                // SAFETY: async-signal-safe system calls in the child.
                unsafe {
                    let mut from = 0u32;
                    for &fd in &keep {
                        if fd > from {
                            libc::syscall(libc::SYS_close_range, from, fd - 1, 0);
                        }
                        from = fd + 1;
                    }
                    libc::syscall(libc::SYS_close_range, from, u32::MAX, 0);
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    loop {
                        libc::pause();
                    }
                }
            }
            holders.pids.push(pid);
        }
        Ok(holders)
    }
}

impl Drop for Holders {
    fn drop(&mut self) {
        for &pid in &self.pids {
            // SAFETY: our own children, killed and reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
}
