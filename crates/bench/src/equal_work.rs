//! `bench agent --fixture DIR`: the agent beside node_exporter on a
//! fixture tree (`--path.procfs`, `--path.sysfs`, `--path.rootfs` and the
//! agent's `--proc-root`, `--sys-root`, `--rootfs`), each scraped the same
//! number of times back to back. Three collectors, one after another:
//!
//! - the agent as scheduled (its defaults: each source at its interval,
//!   scrapes answered from what it holds);
//! - the agent at equal work: every source read again for each scrape
//!   (`?max_age_ms=0`, no minimum interval, no overhead budget), as
//!   node_exporter reads every file on each scrape;
//! - node_exporter with its defaults (Debian's `prometheus-node-exporter`),
//!   but for `--no-collector.netdev.netlink`: its network devices from the
//!   tree's /proc/net/dev, not from this machine over netlink.
//!
//! Per collector: one scrape's bytes and series, CPU per scrape (ticks of
//! `/proc/PID/stat` over the scrapes), the scrapes' wall time, and VmRSS
//! and VmHWM at the end.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use sys::Error;

use serde::Serialize;
use sys::child::Guard;

use crate::agent_cost::{free_port, get, http_body, spawn_quiet};

pub struct Options {
    pub fixture: PathBuf,
    pub scrapes: usize,
    pub exe: PathBuf,
    /// The agent's source keys (each given no minimum interval at equal
    /// work).
    pub source_keys: Vec<String>,
    /// More flags for the agent (both runs).
    pub agent_args: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub collector: String,
    pub scrapes: usize,
    pub bytes: usize,
    pub series: usize,
    pub cpu_ms_per_scrape: f64,
    pub wall_s: f64,
    pub rss_mib: f64,
    pub hwm_mib: f64,
}

fn status_kib(pid: u32, key: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
}

fn measure(what: &str, child: &Guard, port: u16, path: &str, scrapes: usize) -> Result<Row, Error> {
    let pid = child.0.id();
    let t = Instant::now();
    while get(port, "/metrics").map_or(true, |r| {
        !r.starts_with(b"HTTP/1.0 200") && !r.starts_with(b"HTTP/1.1 200")
    }) {
        if t.elapsed() > Duration::from_secs(60) {
            return Err(Error::other(format!(
                "{what}: /metrics did not answer within 60 s"
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    let c0 = crate::child::pid_stat(pid)?;
    let t0 = Instant::now();
    let mut last = Vec::new();
    for _ in 0..scrapes {
        last = get(port, path)?;
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let c1 = crate::child::pid_stat(pid)?;
    let b = http_body(&last);
    let ticks = (c1.utime_ticks + c1.stime_ticks) - (c0.utime_ticks + c0.stime_ticks);
    Ok(Row {
        collector: what.into(),
        scrapes,
        bytes: b.len(),
        series: b
            .split(|c| *c == b'\n')
            .filter(|l| !l.is_empty() && l[0] != b'#')
            .count(),
        cpu_ms_per_scrape: ticks as f64 * 10.0 / scrapes as f64,
        wall_s,
        rss_mib: status_kib(pid, "VmRSS:") / 1024.0,
        hwm_mib: status_kib(pid, "VmHWM:") / 1024.0,
    })
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let f = &opts.fixture;
    for sub in ["proc", "sys"] {
        if !f.join(sub).is_dir() {
            return Err(Error::invalid(format!(
                "{}: not a fixture tree (no {sub}/ in it); accepted: a directory with proc/, sys/ and rootfs/, as fixtures/cpu4096",
                f.display()
            )));
        }
    }
    let rootfs = f.join("rootfs");
    let config =
        std::env::temp_dir().join(format!("quietstat-bench-equal-{}.toml", std::process::id()));
    let mut toml = String::from("overhead_budget_pct = 0.0\n");
    for k in &opts.source_keys {
        toml.push_str(&format!(
            "[sources.{k}]\nmin_interval = \"0s\"\ndemand_min_interval = \"0s\"\n"
        ));
    }
    std::fs::write(&config, toml).map_err(|e| Error::file(&config, e))?;
    let agent = |port: u16, config: Option<&Path>| {
        let mut c = Command::new(&opts.exe);
        c.arg("agent");
        if let Some(p) = config {
            c.arg("--config").arg(p);
        }
        c.args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--shm-path",
            "",
            "--no-store",
        ])
        .arg("--proc-root")
        .arg(f.join("proc"))
        .arg("--sys-root")
        .arg(f.join("sys"))
        .arg("--rootfs")
        .arg(&rootfs)
        .args(["--backend", "procfs"])
        .args(&opts.agent_args);
        c
    };
    let mut rows = Vec::new();
    let result = (|| {
        let extra = if opts.agent_args.is_empty() {
            String::new()
        } else {
            format!(" {}", opts.agent_args.join(" "))
        };
        let what = format!("agent{extra} (as scheduled)");
        progress(&what);
        let port = free_port()?;
        let a = spawn_quiet(agent(port, None), &what)?;
        rows.push(measure(&what, &a, port, "/metrics", opts.scrapes)?);
        drop(a);
        let what = format!("agent{extra} (every source read at each scrape)");
        progress(&what);
        let port = free_port()?;
        let a = spawn_quiet(agent(port, Some(&config)), &what)?;
        rows.push(measure(
            &what,
            &a,
            port,
            "/metrics?max_age_ms=0",
            opts.scrapes,
        )?);
        drop(a);
        let what = "node_exporter (defaults)".to_string();
        progress(&what);
        let port = free_port()?;
        let mut c = Command::new("prometheus-node-exporter");
        c.arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg(format!("--path.procfs={}", f.join("proc").display()))
            .arg(format!("--path.sysfs={}", f.join("sys").display()))
            .arg(format!("--path.rootfs={}", rootfs.display()))
            // Its network devices from the tree's /proc/net/dev, as the
            // agent's, not from this machine over netlink.
            .arg("--no-collector.netdev.netlink");
        let n = spawn_quiet(c, "node_exporter (Debian package prometheus-node-exporter)")?;
        rows.push(measure(&what, &n, port, "/metrics", opts.scrapes)?);
        Ok::<(), Error>(())
    })();
    let _ = std::fs::remove_file(&config);
    result.map(|()| rows)
}
