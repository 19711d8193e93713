//! `bench push`: pushing to one remote-write receiver, side by side in one
//! run, as a fleet does it today and as the agent does it:
//!
//! - node_exporter (Debian's `prometheus-node-exporter`, its defaults)
//!   scraped by Prometheus in agent mode (`--enable-feature=agent`, Debian's
//!   `prometheus`) every `scrape_interval`, remote-writing;
//! - the agent with its defaults, recording its history and pushing from it
//!   (the recorded sources at every read, the rest once a flush interval).
//!
//! The receiver is a Prometheus taking remote writes. Per pusher, over the
//! same window after a warm-up: CPU (ticks of `/proc/PID/stat`), wake-ups
//! (every thread's context switches), RSS at the end, and what the
//! receiver acknowledged (each pusher's own counters: samples and bytes on
//! the wire). The pushers do not send the same number of samples (the
//! agent sends its recorded sources at every read, a scrape every
//! interval), so CPU per thousand samples pushed is the equal-work figure.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use exporter::metrics::families::{
    QUIETSTAT_REMOTE_WRITE_SENT_BYTES_TOTAL, QUIETSTAT_REMOTE_WRITE_SENT_SAMPLES_TOTAL,
};
use serde::Serialize;
use sys::Error;
use sys::child::Guard;

use crate::agent_cost::{free_port, get, http_body, spawn_quiet};

pub struct Options {
    pub exe: std::path::PathBuf,
    /// How long each is measured, after the warm-up.
    pub duration: Duration,
    /// Prometheus agent mode's scrape interval.
    pub scrape_interval: Duration,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub pusher: String,
    pub seconds: f64,
    pub samples: f64,
    pub bytes: f64,
    pub cpu_ms: f64,
    pub cpu_ms_per_1k_samples: f64,
    pub wakeups_per_s: f64,
    pub rss_mib: f64,
}

/// CPU ms and context switches (all threads) of `pid` now.
fn usage(pid: u32) -> Result<(f64, u64), Error> {
    let st = crate::child::pid_stat(pid)?;
    // USER_HZ is 100 on Linux.
    let cpu = (st.utime_ticks + st.stime_ticks) as f64 * 10.0;
    let mut switches = 0;
    if let Ok(d) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in d.flatten() {
            let s = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            for l in s.lines() {
                if l.starts_with("voluntary_ctxt_switches")
                    || l.starts_with("nonvoluntary_ctxt_switches")
                {
                    switches += l
                        .split_whitespace()
                        .nth(1)
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(0);
                }
            }
        }
    }
    Ok((cpu, switches))
}

fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
        / 1024.0
}

/// The sum of the series of `family` a loopback `/metrics` serves.
fn sum(port: u16, family: &str) -> f64 {
    let Ok(r) = get(port, "/metrics") else {
        return 0.0;
    };
    String::from_utf8_lossy(http_body(&r))
        .lines()
        .filter(|l| {
            l.strip_prefix(family)
                .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{'))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn wait_ready(port: u16, path: &str, what: &str) -> Result<(), Error> {
    let t = Instant::now();
    let ok = |r: &[u8]| r.starts_with(b"HTTP/1.0 200") || r.starts_with(b"HTTP/1.1 200");
    while !get(port, path).is_ok_and(|r| ok(&r)) {
        if t.elapsed() > Duration::from_secs(60) {
            return Err(Error::other(format!(
                "{what} did not answer {path} within 60 s"
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| Error::file(path, e))
}

/// A pusher measured: its processes, and how to read what it pushed.
struct Pusher {
    name: String,
    pids: Vec<u32>,
    /// (port, samples family, bytes family) of its own counters.
    counters: (u16, &'static str, &'static str),
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let dir = tempfile::tempdir().map_err(|e| Error::io("a temporary directory", e))?;
    let d = dir.path();
    // The receiver.
    let rport = free_port()?;
    write(
        &d.join("receiver.yml"),
        "global:\n  scrape_interval: 1h\nstorage:\n  tsdb:\n    out_of_order_time_window: 1h\n",
    )?;
    let mut c = Command::new("prometheus");
    c.arg(format!(
        "--config.file={}",
        d.join("receiver.yml").display()
    ))
    .arg(format!(
        "--storage.tsdb.path={}",
        d.join("receiver").display()
    ))
    .arg(format!("--web.listen-address=127.0.0.1:{rport}"))
    .arg("--web.enable-remote-write-receiver");
    let _receiver: Guard = spawn_quiet(c, "prometheus (Debian package prometheus)")?;
    wait_ready(rport, "/-/ready", "the receiving Prometheus")?;
    let url = format!("http://127.0.0.1:{rport}/api/v1/write");

    // node_exporter, scraped by Prometheus in agent mode.
    progress("node_exporter and Prometheus agent mode");
    let nport = free_port()?;
    let mut c = Command::new("prometheus-node-exporter");
    c.arg(format!("--web.listen-address=127.0.0.1:{nport}"));
    let ne = spawn_quiet(c, "node_exporter (Debian package prometheus-node-exporter)")?;
    let aport = free_port()?;
    write(
        &d.join("agent.yml"),
        &format!(
            "global:\n  scrape_interval: {}s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{nport}']\nremote_write:\n  - url: {url}\n",
            opts.scrape_interval.as_secs().max(1)
        ),
    )?;
    let mut c = Command::new("prometheus");
    c.arg("--enable-feature=agent")
        .arg(format!("--config.file={}", d.join("agent.yml").display()))
        .arg(format!("--storage.agent.path={}", d.join("wal").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{aport}"));
    let pa = spawn_quiet(c, "prometheus --enable-feature=agent")?;
    wait_ready(aport, "/-/ready", "Prometheus agent mode")?;

    // The agent, pushing from its history.
    progress("quietstat agent");
    let qport = free_port()?;
    let mut c = Command::new(&opts.exe);
    c.arg("agent")
        .args(["--listen", &format!("127.0.0.1:{qport}"), "--shm-path", ""])
        .arg("--store")
        .arg(d.join("store"))
        .args(["--remote-write.url", &url]);
    let q = spawn_quiet(c, "quietstat agent")?;
    wait_ready(qport, "/metrics", "the agent")?;

    let pushers = [
        Pusher {
            name: format!(
                "node_exporter + Prometheus agent mode (scrape every {} s)",
                opts.scrape_interval.as_secs()
            ),
            pids: vec![ne.0.id(), pa.0.id()],
            counters: (
                aport,
                "prometheus_remote_storage_samples_total",
                "prometheus_remote_storage_bytes_total",
            ),
        },
        Pusher {
            name: "quietstat agent (from its history)".into(),
            pids: vec![q.0.id()],
            counters: (
                qport,
                QUIETSTAT_REMOTE_WRITE_SENT_SAMPLES_TOTAL.name,
                QUIETSTAT_REMOTE_WRITE_SENT_BYTES_TOTAL.name,
            ),
        },
    ];
    progress("warming up for 30 s");
    std::thread::sleep(Duration::from_secs(30));
    let start = |p: &Pusher| -> Result<(f64, u64, f64, f64), Error> {
        let mut cpu = 0.0;
        let mut sw = 0;
        for &pid in &p.pids {
            let (c, s) = usage(pid)?;
            cpu += c;
            sw += s;
        }
        let (port, samples, bytes) = p.counters;
        Ok((cpu, sw, sum(port, samples), sum(port, bytes)))
    };
    let before = pushers.iter().map(start).collect::<Result<Vec<_>, _>>()?;
    let t0 = Instant::now();
    progress(&format!("measuring for {:?}", opts.duration));
    std::thread::sleep(opts.duration);
    let after = pushers.iter().map(start).collect::<Result<Vec<_>, _>>()?;
    let secs = t0.elapsed().as_secs_f64();
    Ok(pushers
        .iter()
        .zip(before.iter().zip(&after))
        .map(|(p, (b, a))| {
            let samples = a.2 - b.2;
            let cpu_ms = a.0 - b.0;
            Row {
                pusher: p.name.clone(),
                seconds: secs,
                samples,
                bytes: a.3 - b.3,
                cpu_ms,
                cpu_ms_per_1k_samples: cpu_ms / (samples / 1000.0).max(1e-9),
                wakeups_per_s: (a.1 - b.1) as f64 / secs,
                rss_mib: p.pids.iter().map(|&pid| rss_mib(pid)).sum(),
            }
        })
        .collect())
}
