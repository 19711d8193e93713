//! The HTTP server: a few worker threads blocked in `recv` (no polling, no
//! timers), answering from the agent's snapshots.
//!
//! - `GET /metrics[?max_age_ms=N]`: OpenMetrics when the Accept header asks
//!   for `application/openmetrics-text`, else the text format 0.0.4.
//! - `GET /api/v1/snapshot[?sources=a,b][&max_age_ms=N]`: JSON.
//!
//! With `max_age_ms`, sources older than that are read once more (one read
//! for all requests that ask at the same time, never below each source's
//! floor) before the answer; without it, no request reads the kernel.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agent::Shared;
use prometheus_client::registry::Registry;
use tiny_http::{Header, Method, Request, Response, Server};

use crate::{json, metrics};

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
/// How long a request waits for a fresh read before answering 503.
const FRESH_TIMEOUT: Duration = Duration::from_secs(10);

/// A running server; requests are served until the process exits.
pub struct HttpServer {
    server: Arc<Server>,
    workers: Vec<std::thread::JoinHandle<()>>,
}

impl HttpServer {
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.server.server_addr().to_ip()
    }

    /// Stops accepting and lets the workers finish.
    pub fn shutdown(self) {
        self.server.unblock();
        for _ in 1..self.workers.len() {
            self.server.unblock();
        }
        for w in self.workers {
            let _ = w.join();
        }
    }
}

/// Binds `addr` and starts `workers` threads serving `shared`.
pub fn serve(shared: Arc<Shared>, addr: SocketAddr, workers: usize) -> Result<HttpServer, String> {
    let listener =
        std::net::TcpListener::bind(addr).map_err(|e| format!("listening on {addr}: {e}"))?;
    // Accepted sockets inherit TCP_NODELAY from the listener (Linux). Without
    // it a keep-alive client (Prometheus) waits out its delayed ACK, 40 ms,
    // on every response written in two segments.
    set_nodelay(&listener).map_err(|e| format!("TCP_NODELAY on {addr}: {e}"))?;
    let server = Arc::new(
        Server::from_listener(listener, None).map_err(|e| format!("serving on {addr}: {e}"))?,
    );
    let registry = Arc::new(metrics::registry(shared.clone()));
    let workers = (0..workers.max(1))
        .map(|i| {
            let (server, shared, registry) = (server.clone(), shared.clone(), registry.clone());
            std::thread::Builder::new()
                .name(format!("http-{i}"))
                .spawn(move || {
                    while let Ok(req) = server.recv() {
                        handle(req, &shared, &registry);
                    }
                })
                .expect("spawning an HTTP worker")
        })
        .collect();
    Ok(HttpServer { server, workers })
}

fn set_nodelay(l: &std::net::TcpListener) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let one: libc::c_int = 1;
    // SAFETY: a valid socket fd and a c_int option value.
    let r = unsafe {
        libc::setsockopt(
            l.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

fn text(status: u16, body: String) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
}

/// Splits `a=1&b=x%2Cy` into decoded pairs.
fn query_pairs(q: &str) -> Vec<(String, String)> {
    fn decode(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    let hex = |c: u8| (c as char).to_digit(16);
                    match (hex(b[i + 1]), hex(b[i + 2])) {
                        (Some(h), Some(l)) => {
                            out.push((h * 16 + l) as u8);
                            i += 2;
                        }
                        _ => out.push(b'%'),
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn handle(req: Request, shared: &Shared, registry: &Registry) {
    let url = req.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let pairs = query_pairs(query);
    let param = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if *req.method() != Method::Get && *req.method() != Method::Head {
        let _ = req.respond(text(405, "only GET and HEAD are served\n".into()));
        return;
    }
    let response = match path {
        "/metrics" => metrics_response(&req, shared, registry, param("max_age_ms")),
        "/api/v1/snapshot" => snapshot_response(shared, param("sources"), param("max_age_ms")),
        "/" => text(
            200,
            "quietstat agent\n\n/metrics[?max_age_ms=N]\n/api/v1/snapshot[?sources=a,b][&max_age_ms=N]\n".into(),
        ),
        _ => text(404, format!("{path}: not found; try /metrics or /api/v1/snapshot\n")),
    };
    let _ = req.respond(response);
}

fn fresh(shared: &Shared, mask: u32, max_age: Option<&str>) -> Result<(), (u16, String)> {
    let max_age = json::parse_max_age(max_age).map_err(|e| (400, e + "\n"))?;
    if let Some(age) = max_age {
        shared
            .fresh(mask, age, FRESH_TIMEOUT)
            .map_err(|e| (503, format!("{e}\n")))?;
    }
    Ok(())
}

fn metrics_response(
    req: &Request,
    shared: &Shared,
    registry: &Registry,
    max_age: Option<&str>,
) -> Response<std::io::Cursor<Vec<u8>>> {
    let all = json::parse_sources(None).expect("all sources");
    if let Err((code, msg)) = fresh(shared, all, max_age) {
        return text(code, msg);
    }
    let openmetrics = req.headers().iter().any(|h| {
        h.field.equiv("Accept") && h.value.as_str().contains("application/openmetrics-text")
    });
    let mut body = String::with_capacity(64 * 1024);
    if metrics::encode_openmetrics(registry, &mut body).is_err() {
        return text(500, "encoding failed\n".into());
    }
    let (body, ctype) = if openmetrics {
        (body, OPENMETRICS)
    } else {
        (metrics::to_text_format(&body), TEXT)
    };
    Response::from_string(body).with_header(header("Content-Type", ctype))
}

fn snapshot_response(
    shared: &Shared,
    sources: Option<&str>,
    max_age: Option<&str>,
) -> Response<std::io::Cursor<Vec<u8>>> {
    let mask = match json::parse_sources(sources) {
        Ok(m) => m,
        Err(e) => return text(400, e + "\n"),
    };
    if let Err((code, msg)) = fresh(shared, mask, max_age) {
        return text(code, msg);
    }
    let usage = agent::self_usage();
    let body = {
        let st = shared.state.read().unwrap_or_else(|e| e.into_inner());
        let uptime = sys::unix_ns().saturating_sub(shared.started_unix_ns) as f64 / 1e9;
        json::snapshot(&st, mask, &usage, sys::mono_ns(), uptime).to_string()
    };
    Response::from_string(body).with_header(header("Content-Type", "application/json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_are_decoded() {
        let p = query_pairs("sources=stat%2Cmeminfo&max_age_ms=5&flag&bad=%zz&utf=%C3%A9%");
        assert_eq!(p[0], ("sources".into(), "stat,meminfo".into()));
        assert_eq!(p[1], ("max_age_ms".into(), "5".into()));
        assert_eq!(p[2], ("flag".into(), "".into()));
        assert_eq!(p[3], ("bad".into(), "%zz".into()));
        assert_eq!(p[4], ("utf".into(), "é%".into()));
    }
}
