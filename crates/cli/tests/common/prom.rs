//! A real Prometheus from Debian's package, started by the tests that need
//! one, and a poll of its HTTP API.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sys::child::Guard;

use super::agent::{free_port, get};
use super::exposition::which;

/// A real Prometheus on a free loopback port scraping every second with
/// `scrape_configs` (YAML, indented as under that key); stopped on drop.
pub fn prometheus(dir: &Path, scrape_configs: &str) -> (Guard, SocketAddr) {
    prometheus_with(
        dir,
        &format!("global:\n  scrape_interval: 1s\nscrape_configs:\n{scrape_configs}"),
    )
}

/// A real Prometheus on a free loopback port with configuration `yaml`
/// (the whole file); stopped on drop.
pub fn prometheus_with(dir: &Path, yaml: &str) -> (Guard, SocketAddr) {
    let port = free_port();
    let cfg = dir.join("prometheus.yml");
    std::fs::write(&cfg, yaml).unwrap();
    let prom = Command::new(which("prometheus"))
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (Guard(prom), format!("127.0.0.1:{port}").parse().unwrap())
}

/// Polls Prometheus's API at `path` until `done` accepts the JSON answer
/// (60 s at most); that answer.
pub fn prometheus_until(
    paddr: SocketAddr,
    path: &str,
    mut done: impl FnMut(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let end = Instant::now() + Duration::from_secs(60);
    let mut last = String::new();
    loop {
        assert!(
            Instant::now() < end,
            "Prometheus never gave what was expected at {path}; last answer: {last}"
        );
        std::thread::sleep(Duration::from_millis(500));
        if TcpStream::connect(paddr).is_err() {
            continue;
        }
        let r = get(paddr, path, None);
        last = r.body.clone();
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&r.body)
            && done(&v)
        {
            return v;
        }
    }
}
