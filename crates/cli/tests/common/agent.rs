//! Starting the agent for a test and talking to it over plain HTTP.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sys::child::Guard;

use super::quietstat;

/// A child process stopped (SIGTERM, then SIGKILL) and reaped on drop.
pub struct Proc(pub Guard);

impl Proc {
    pub fn id(&self) -> u32 {
        self.0.0.id()
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: our own child's pid.
        unsafe { libc::kill(self.id() as i32, sig) };
    }

    /// Waits up to `limit` for it to exit; its status.
    pub fn wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Ok(Some(s)) = self.0.0.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

pub struct Agent {
    pub proc: Proc,
    pub addr: SocketAddr,
    pub shm: PathBuf,
    pub log: mpsc::Receiver<String>,
    /// What it logged before it was serving.
    pub early: Vec<String>,
    pub dir: tempfile::TempDir,
}

/// Starts `quietstat agent` on a free loopback port with its snapshot in a
/// temporary directory of /dev/shm; `config` is written to a file and
/// passed.
pub fn agent(config: &str, extra: &[&str]) -> Agent {
    agent_with(config, extra, |_| {})
}

/// As [`agent`], with `prepare` applied to the command first.
pub fn agent_with(config: &str, extra: &[&str], prepare: impl FnOnce(&mut Command)) -> Agent {
    // In memory, as /run is on a host: the snapshot, and the journal of an
    // agent that records, beside it (removed with the directory).
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let shm = dir.path().join("snapshot");
    let cfg = dir.path().join("agent.toml");
    std::fs::write(&cfg, config).unwrap();
    // A test that names its own snapshot path gets it.
    let shm = match extra.iter().position(|a| *a == "--shm-path") {
        Some(i) => PathBuf::from(extra[i + 1]),
        None => shm,
    };
    let mut cmd = quietstat();
    cmd.arg("agent");
    if !extra.contains(&"--listen") && !extra.contains(&"--web.listen-address") {
        cmd.args(["--listen", "127.0.0.1:0"]);
    }
    if !extra.contains(&"--shm-path") {
        cmd.arg("--shm-path").arg(&shm);
    }
    // Recording is tested where it is the subject (tests/store.rs). An
    // agent that records starts at least three minutes before a UTC
    // midnight (a minute inside the margin `store::dirs` keeps, so that a
    // test past that wait never waits again here).
    if extra.contains(&"--store") {
        super::clear_of_midnight(Duration::from_secs(180));
    } else if !extra.contains(&"--no-store") {
        cmd.arg("--no-store");
    }
    cmd.arg("--config")
        .arg(&cfg)
        .args(extra)
        .stderr(Stdio::piped());
    prepare(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let proc = Proc(Guard(child));
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => {
                if let Some((_, rest)) = line
                    .strip_prefix("quietstat agent: serving ")
                    .and_then(|r| r.split_once("://"))
                {
                    let addr = rest.split('/').next().unwrap().parse().unwrap();
                    seen.push(line.clone());
                    return Agent {
                        proc,
                        addr,
                        shm,
                        log: rx,
                        early: seen,
                        dir,
                    };
                }
                seen.push(line);
            }
            Err(_) => panic!("the agent did not start serving; it said: {seen:#?}"),
        }
    }
}

pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

/// A plain HTTP/1.0 GET.
pub fn get(addr: SocketAddr, path: &str, accept: Option<&str>) -> Response {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    // One write, as an HTTP client sends a request (`write!` would send
    // each piece on its own, each a wakeup of the server).
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n{accept}\r\n").as_bytes())
        .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-type")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    Response {
        status,
        content_type,
        body: body.to_string(),
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every source's configuration key.
pub fn all_sources() -> Vec<&'static str> {
    agent::config::AgentSource::ALL
        .into_iter()
        .map(agent::config::AgentSource::key)
        .collect()
}

/// Configuration with no floor (demand or otherwise) for `sources` and an overhead budget
/// of `budget_pct` (0: none): `max_age_ms=0` then reads again unless the
/// budget declines it.
pub fn demand_without_floors(budget_pct: f64, sources: &[&str]) -> String {
    let mut c = format!("overhead_budget_pct = {budget_pct:?}\n");
    for s in sources {
        c += &format!("[sources.{s}]\nmin_interval = \"0s\"\ndemand_min_interval = \"0s\"\n");
    }
    c
}
