//! `bench quiet`: the agent's wakeups and CPU beside node_exporter's at
//! equal work, counted per thread. Both run at the same time on this
//! machine: the agent reads every source once per 15 s (`--interval`), with
//! no process table, no cgroups and no history (node_exporter has none),
//! and both are scraped every 15 s (GET /metrics, a connection a scrape,
//! the whole body read), one right after the other.
//!
//! Per collector, over the window: CPU time (the sum of its threads'
//! schedstat run time, in nanoseconds: ticks are too coarse for a quiet
//! process), wakeups (voluntary context switches summed over its threads:
//! each is a sleep some event ended), those per thread name, and RSS at the
//! end. Then `--scrapes` scrapes one after another, 200 ms apart: the
//! switches (voluntary, all threads, its 200 ms included: a quiet
//! collector's instants may fall in them) and CPU each scrape cost, as
//! their median and maximum, and the answer's size.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use sys::Error;

use serde::Serialize;
use sys::child::Guard;

use crate::agent_cost::{free_port, get, http_body, spawn_quiet};

pub struct Options {
    pub duration: Duration,
    /// Every source's interval (and the scrape interval).
    pub interval: Duration,
    pub scrapes: usize,
    pub exe: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub collector: String,
    pub seconds: f64,
    pub cpu_pct: f64,
    pub wakeups_per_s: f64,
    /// Wakeups per second by thread name (threads of one name summed).
    pub threads: BTreeMap<String, f64>,
    pub rss_mib: f64,
    pub answer_bytes: usize,
    pub scrape_switches_median: f64,
    pub scrape_switches_max: u64,
    pub scrape_cpu_ms_median: f64,
}

/// Its threads' voluntary switches and CPU ns, summed by thread name.
fn costs(pid: u32) -> Result<BTreeMap<String, (u64, u64)>, Error> {
    let mut m: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let threads = procfs::threads::thread_costs(Path::new("/proc"), pid)
        .map_err(|e| Error::io(format!("/proc/{pid}/task"), e))?;
    for t in threads {
        let e = m.entry(t.name).or_default();
        e.0 += t.switches.voluntary;
        e.1 += t.cpu_ns;
    }
    Ok(m)
}

fn totals(m: &BTreeMap<String, (u64, u64)>) -> (u64, u64) {
    m.values().fold((0, 0), |(v, c), (a, b)| (v + a, c + b))
}

fn scrape(what: &str, port: u16) -> Result<usize, Error> {
    let r = get(port, "/metrics").map_err(|e| e.context(format!("{what}: scrape")))?;
    if !r.starts_with(b"HTTP/1.0 200") && !r.starts_with(b"HTTP/1.1 200") {
        return Err(Error::other(format!("{what}: scrape: not 200")));
    }
    Ok(http_body(&r).len())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// The agent's configuration at equal work: every source at `every`, no
/// process table, no cgroups.
fn equal_work_config(every: Duration) -> String {
    let every = humantime::format_duration(every).to_string();
    let mut c = String::new();
    for s in agent::config::AgentSource::ALL {
        let k = s.key();
        match s {
            agent::config::AgentSource::Processes | agent::config::AgentSource::Cgroups => {
                c += &format!("[sources.{k}]\nenabled = false\n");
            }
            agent::config::AgentSource::System(_) => {
                c += &format!("[sources.{k}]\ninterval = \"{every}\"\nmax_age = \"{every}\"\n");
            }
        }
    }
    c
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    let dir = tempfile::tempdir_in("/dev/shm").map_err(|e| Error::io("/dev/shm", e))?;
    let config = dir.path().join("agent.toml");
    std::fs::write(&config, equal_work_config(opts.interval))
        .map_err(|e| Error::file(&config, e))?;
    let (ap, np) = (free_port()?, free_port()?);
    let mut a = Command::new(&opts.exe);
    a.arg("agent")
        .arg("--config")
        .arg(&config)
        .args(["--listen", &format!("127.0.0.1:{ap}"), "--no-store"])
        .arg("--shm-path")
        .arg(dir.path().join("snapshot"));
    let agent = spawn_quiet(a, "the agent")?;
    let mut n = Command::new("prometheus-node-exporter");
    n.arg(format!("--web.listen-address=127.0.0.1:{np}"));
    let node = spawn_quiet(n, "node_exporter (Debian package prometheus-node-exporter)")?;
    let collectors: [(&str, &Guard, u16); 2] = [
        ("agent (every source each interval)", &agent, ap),
        ("node_exporter (defaults)", &node, np),
    ];
    progress("starting both, then 20 s to settle");
    let t = Instant::now();
    for (what, _, port) in collectors {
        while scrape(what, port).is_err() {
            if t.elapsed() > Duration::from_secs(60) {
                return Err(Error::other(format!(
                    "{what}: /metrics did not answer within 60 s"
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    std::thread::sleep(Duration::from_secs(20));
    progress(&format!(
        "{} s, both scraped every {} s",
        opts.duration.as_secs(),
        opts.interval.as_secs()
    ));
    let before = collectors
        .iter()
        .map(|(_, g, _)| costs(g.0.id()))
        .collect::<Result<Vec<_>, _>>()?;
    let t0 = Instant::now();
    let end = t0 + opts.duration;
    let mut next = t0 + opts.interval;
    let mut bytes = [0usize; 2];
    while next <= end {
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        for (i, (what, _, port)) in collectors.iter().enumerate() {
            bytes[i] = scrape(what, *port)?;
        }
        next += opts.interval;
    }
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    let secs = t0.elapsed().as_secs_f64();
    let after = collectors
        .iter()
        .map(|(_, g, _)| costs(g.0.id()))
        .collect::<Result<Vec<_>, _>>()?;
    progress(&format!("{} scrapes of each, back to back", opts.scrapes));
    let mut rows = Vec::new();
    for (i, (what, g, port)) in collectors.iter().enumerate() {
        let pid = g.0.id();
        let mut switches = Vec::new();
        let mut cpu_ms = Vec::new();
        for _ in 0..opts.scrapes {
            let b = totals(&costs(pid)?);
            bytes[i] = scrape(what, *port)?;
            // The answer is read before its threads have gone back to
            // sleep: those sleeps belong to this scrape.
            std::thread::sleep(Duration::from_millis(200));
            let a = totals(&costs(pid)?);
            switches.push((a.0 - b.0) as f64);
            cpu_ms.push(a.1.saturating_sub(b.1) as f64 / 1e6);
        }
        let (v0, c0) = totals(&before[i]);
        let (v1, c1) = totals(&after[i]);
        let threads = after[i]
            .iter()
            .map(|(name, (v, _))| {
                let was = before[i].get(name).map_or(0, |b| b.0);
                (name.clone(), v.saturating_sub(was) as f64 / secs)
            })
            .collect();
        rows.push(Row {
            collector: what.to_string(),
            seconds: secs,
            cpu_pct: c1.saturating_sub(c0) as f64 / 1e9 / secs * 100.0,
            wakeups_per_s: v1.saturating_sub(v0) as f64 / secs,
            threads,
            rss_mib: crate::child::pid_stat(pid)?.rss_pages as f64 * 4096.0 / (1 << 20) as f64,
            answer_bytes: bytes[i],
            scrape_switches_max: switches.iter().fold(0.0f64, |m, x| m.max(*x)) as u64,
            scrape_switches_median: median(&mut switches),
            scrape_cpu_ms_median: median(&mut cpu_ms),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_equal_work_configuration_is_one_the_agent_takes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.toml");
        std::fs::write(&path, equal_work_config(Duration::from_secs(15))).unwrap();
        let config =
            agent::config::Config::load(Some(&path), &agent::config::FileConfig::default())
                .unwrap();
        for s in agent::config::AgentSource::ALL {
            let sc = config.source(s);
            match s {
                agent::config::AgentSource::System(_) => {
                    assert_eq!(sc.interval, Duration::from_secs(15), "{}", s.key());
                }
                _ => assert!(!sc.enabled, "{}", s.key()),
            }
        }
    }
}
