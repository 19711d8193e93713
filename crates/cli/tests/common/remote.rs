//! Receivers for the remote-write tests: Debian's Prometheus and
//! VictoriaMetrics on loopback, and a receiver of our own that answers as
//! it is told (2xx keeping what it was sent, an error status, or nothing).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::agent::{Proc, free_port};
use super::exposition::which;
use super::wait_for;

/// How our own receiver answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// 204, keeping every sample.
    Take,
    /// This status, with these headers and body.
    Status(u16, Vec<(String, String)>, String),
    /// Reads the request and never answers.
    Hang,
}

/// Every sample kept: (series as `name{labels}` sorted, timestamp) → values.
pub type Kept = BTreeMap<(String, i64), Vec<f64>>;

/// Our own receiver, answering on a thread per connection.
pub struct Fake {
    pub port: u16,
    pub mode: Arc<Mutex<Mode>>,
    pub kept: Arc<Mutex<Kept>>,
    /// Requests received, answered or not.
    pub requests: Arc<Mutex<u64>>,
    /// Each request taken: its samples' first and last timestamps.
    pub spans: Arc<Mutex<Vec<(i64, i64)>>>,
}

impl Fake {
    pub fn start(mode: Mode) -> Fake {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let f = Fake {
            port,
            mode: Arc::new(Mutex::new(mode)),
            kept: Arc::default(),
            requests: Arc::default(),
            spans: Arc::default(),
        };
        let shared = (
            f.mode.clone(),
            f.kept.clone(),
            f.requests.clone(),
            f.spans.clone(),
        );
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                let s = shared.clone();
                std::thread::spawn(move || serve(c, &s.0, &s.1, &s.2, &s.3));
            }
        });
        f
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/api/v1/write", self.port)
    }

    pub fn set(&self, m: Mode) {
        *self.mode.lock().unwrap() = m;
    }

    /// The timestamps kept for the series `series` (as [`series_key`]).
    pub fn times(&self, series: &str) -> Vec<i64> {
        let k = self.kept.lock().unwrap();
        k.iter()
            .filter(|((s, _), _)| s == series)
            .flat_map(|((_, t), v)| std::iter::repeat_n(*t, v.len()))
            .collect()
    }
}

/// A series as `name{a="1",b="2"}`, labels sorted, without `__name__`.
pub fn series_key(labels: &[(String, String)]) -> String {
    let name = labels
        .iter()
        .find(|(k, _)| k == "__name__")
        .map_or("", |(_, v)| v.as_str());
    let rest: Vec<String> = labels
        .iter()
        .filter(|(k, _)| k != "__name__")
        .map(|(k, v)| format!("{k}={v:?}"))
        .collect();
    format!("{name}{{{}}}", rest.join(","))
}

fn serve(
    c: TcpStream,
    mode: &Mutex<Mode>,
    kept: &Mutex<Kept>,
    requests: &Mutex<u64>,
    spans: &Mutex<Vec<(i64, i64)>>,
) {
    let mut r = BufReader::new(c.try_clone().unwrap());
    let mut w = c;
    loop {
        let mut len = 0usize;
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            line.clear();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                len = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; len];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        *requests.lock().unwrap() += 1;
        let m = mode.lock().unwrap().clone();
        let answer = match m {
            Mode::Take => {
                let req = exporter::remote::decode(&body).expect("a remote-write body");
                let mut k = kept.lock().unwrap();
                let times = req
                    .timeseries
                    .iter()
                    .flat_map(|t| t.samples.iter().map(|s| s.timestamp));
                let span = times.fold((i64::MAX, i64::MIN), |(a, b), t| (a.min(t), b.max(t)));
                spans.lock().unwrap().push(span);
                for ts in req.timeseries {
                    let labels: Vec<(String, String)> =
                        ts.labels.into_iter().map(|l| (l.name, l.value)).collect();
                    let key = series_key(&labels);
                    for s in ts.samples {
                        k.entry((key.clone(), s.timestamp))
                            .or_default()
                            .push(s.value);
                    }
                }
                "HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n".to_string()
            }
            Mode::Status(code, headers, text) => {
                let h: String = headers
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}\r\n"))
                    .collect();
                format!(
                    "HTTP/1.1 {code} X\r\n{h}content-length: {}\r\n\r\n{text}",
                    text.len()
                )
            }
            Mode::Hang => {
                std::thread::sleep(Duration::from_secs(3600));
                return;
            }
        };
        if w.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// A real receiver started by a test: Prometheus or VictoriaMetrics.
pub struct Receiver {
    pub proc: Option<Proc>,
    pub port: u16,
    kind: Kind,
    dir: std::path::PathBuf,
}

#[derive(Clone, Copy)]
enum Kind {
    Prometheus,
    Victoria,
}

impl Receiver {
    /// Prometheus 2.42 taking remote writes, with an out-of-order window.
    pub fn prometheus(dir: &Path) -> Receiver {
        let mut r = Receiver {
            proc: None,
            port: free_port(),
            kind: Kind::Prometheus,
            dir: dir.to_path_buf(),
        };
        r.start();
        r
    }

    /// VictoriaMetrics, answering queries without its latency offset.
    pub fn victoria(dir: &Path) -> Receiver {
        let mut r = Receiver {
            proc: None,
            port: free_port(),
            kind: Kind::Victoria,
            dir: dir.to_path_buf(),
        };
        r.start();
        r
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/api/v1/write", self.port)
    }

    /// Whether it keeps fewer digits of a value than a float holds.
    pub fn lossy(&self) -> bool {
        matches!(self.kind, Kind::Victoria)
    }

    /// Starts it (again, on the same port and data).
    pub fn start(&mut self) {
        let addr = format!("127.0.0.1:{}", self.port);
        let mut cmd = match self.kind {
            Kind::Prometheus => {
                let cfg = self.dir.join("prometheus.yml");
                std::fs::write(
                    &cfg,
                    "global:\n  scrape_interval: 1h\nstorage:\n  tsdb:\n    out_of_order_time_window: 1h\n",
                )
                .unwrap();
                let mut c = Command::new(which("prometheus"));
                c.arg(format!("--config.file={}", cfg.display()))
                    .arg(format!(
                        "--storage.tsdb.path={}",
                        self.dir.join("data").display()
                    ))
                    .arg(format!("--web.listen-address={addr}"))
                    .arg("--web.enable-remote-write-receiver");
                c
            }
            Kind::Victoria => {
                let mut c = Command::new(which("victoria-metrics"));
                c.arg(format!(
                    "-storageDataPath={}",
                    self.dir.join("vm").display()
                ))
                .arg(format!("-httpListenAddr={addr}"))
                .arg("-search.latencyOffset=0s")
                .arg("-search.disableCache");
                c
            }
        };
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        self.proc = Some(Proc(sys::child::Guard(cmd.spawn().unwrap())));
        let ready = match self.kind {
            Kind::Prometheus => "/-/ready",
            Kind::Victoria => "/health",
        };
        assert!(
            wait_for(Duration::from_secs(60), || http_get(self.port, ready)
                .is_some_and(|(code, _)| code == 200)),
            "the receiver on port {} did not become ready",
            self.port
        );
    }

    /// Stops it (SIGTERM, waited for).
    pub fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.signal(libc::SIGTERM);
            assert!(
                p.wait(Duration::from_secs(60)).is_some(),
                "the receiver did not stop"
            );
        }
    }

    /// The raw samples of `selector` over the `secs` seconds before `at`
    /// (Unix s): (timestamp ms, value).
    pub fn samples(&self, selector: &str, secs: u64, at: u64) -> Vec<(i64, f64)> {
        let q = format!("{selector}[{secs}s]");
        let path = format!(
            "/api/v1/query?query={}&time={at}",
            q.bytes()
                .map(|b| if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                })
                .collect::<String>()
        );
        let Some((200, body)) = http_get(self.port, &path) else {
            return Vec::new();
        };
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let mut out = Vec::new();
        for series in v["data"]["result"].as_array().into_iter().flatten() {
            for p in series["values"].as_array().into_iter().flatten() {
                let t = (p[0].as_f64().unwrap() * 1000.0).round() as i64;
                let val: f64 = p[1].as_str().unwrap().parse().unwrap();
                out.push((t, val));
            }
        }
        out.sort_by_key(|p| p.0);
        out
    }
}

/// A GET on loopback: status and body.
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(c, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    c.read_to_string(&mut text).ok()?;
    let code = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|x| x.1.to_string())?;
    Some((code, body))
}
