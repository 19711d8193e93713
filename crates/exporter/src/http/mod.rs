//! The HTTP server: one thread drives every connection (tokio, current
//! thread, hyper's HTTP/1.1) and encodes an exposition of ordinary size
//! whole, at once; two more run what blocks (a fresh read, a bcrypt check)
//! and four encode a large exposition a part at a time, each started with
//! its first job. With no client connected nothing is armed: the thread
//! sleeps in epoll until a connection arrives.
//!
//! What a client cannot do (docs/agent.md, "Serving"):
//! - hold the server: connections are capped (below the descriptor limit);
//!   at the cap the connection idle longest makes room, and only when every
//!   connection is mid-request is a new one refused (503);
//! - stall it: a read or a write with no progress for 10 s, or a request
//!   head not complete within 10 s, closes that connection; a slow or
//!   non-reading client holds only its own connection;
//! - grow it: a request head is read into at most 64 KiB (431 beyond); a
//!   body is never read;
//! - stop it: an accept error (out of descriptors) is logged and retried
//!   with backoff after making room; should the server ever stop on its
//!   own, the agent logs why and exits non-zero.
//!
//! Routes are in `routes.rs`; TLS and basic authentication come from the
//! web configuration file ([`crate::web_config`]).

mod auth;
mod conns;
mod io;
mod offload;
mod routes;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use sys::Error;

use agent::Shared;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::web_config::WebConfig;
use conns::{Admit, Conns, Slot};

/// A request head larger than this is answered 431.
pub const HEAD_CAP: usize = 64 * 1024;
/// No read progress for this long closes a connection (idle keep-alive too).
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// No write progress for this long (a client not reading) closes it.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// A request head must be complete within this.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Large `/metrics` answers encoded at once; the others wait their turn
/// (a connection has one request in progress at most, so the queue, as
/// long as the connection cap, never turns one away). An encoder whose
/// client stops reading is freed by the write timeout.
const ENCODERS: usize = 4;
/// A TLS handshake must be complete within this.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

pub use crate::http_stats::HttpStats;

/// Connections by default, when the descriptor limit allows.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// How the server behaves beyond its routes.
pub struct Options {
    /// At most this many connections (0: the default); lowered to fit the
    /// descriptor limit.
    pub max_connections: usize,
    /// Exposition answers in progress at most (0: no limit); beyond, 503.
    pub max_requests: usize,
    pub web: Option<WebConfig>,
    /// Whether `/api/v1/snapshot` lists processes (pid, command, user...).
    pub process_rows: bool,
    /// Where the exposition answers (node_exporter's
    /// `--web.telemetry-path`): `/metrics` when empty.
    pub telemetry_path: String,
    /// Serve no figures about the agent itself
    /// (`--web.disable-exporter-metrics`).
    pub no_exporter_metrics: bool,
}

/// Where the exposition answers unless told otherwise.
pub const TELEMETRY_PATH: &str = "/metrics";

/// Checks a telemetry path: absolute, one of no other route, no query.
pub fn check_telemetry_path(p: &str) -> Result<(), Error> {
    if !p.starts_with('/') || p.contains(['?', '#', ' ']) || p == "/" || p == "/api/v1/snapshot" {
        return Err(Error::invalid(format!(
            "telemetry path {p:?}: give an absolute path such as /metrics, not / or /api/v1/snapshot, with no query"
        )));
    }
    Ok(())
}

/// What the routes need.
pub(crate) struct Ctx {
    pub(crate) shared: Arc<Shared>,
    pub(crate) exposition: crate::metrics::Exposition,
    pub(crate) offload: offload::Offload,
    /// Where `/metrics` answers are encoded, a part at a time, as their
    /// clients read them.
    pub(crate) encoders: offload::Offload,
    pub(crate) auth: Option<Arc<auth::Auth>>,
    pub(crate) headers: Vec<(hyper::header::HeaderName, hyper::header::HeaderValue)>,
    pub(crate) process_rows: bool,
    pub(crate) telemetry_path: String,
    /// Exposition answers in progress, and the most allowed (0: any).
    pub(crate) scrapes: Arc<std::sync::atomic::AtomicUsize>,
    pub(crate) max_scrapes: usize,
    /// Bytes of the last exposition answered (0 before the first): one
    /// below [`routes::WHOLE_BELOW`] is encoded whole on this thread.
    pub(crate) last_answer: Arc<std::sync::atomic::AtomicUsize>,
    conns: Conns,
}

/// A running server.
pub struct HttpServer {
    addrs: Vec<SocketAddr>,
    stop: watch::Sender<bool>,
    thread: std::thread::JoinHandle<()>,
    ctx: Arc<Ctx>,
    tls: bool,
}

impl HttpServer {
    /// The first address served.
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Every address served, in the order given.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The connection cap in force.
    pub fn max_connections(&self) -> usize {
        self.ctx.conns.cap
    }

    pub fn tls(&self) -> bool {
        self.tls
    }

    /// Stops accepting and closes every connection.
    pub fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.thread.join();
    }
}

/// Binds `addr`: done before anything else is published, so a second
/// agent on a port in use stops before touching the first one's files.
pub fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, Error> {
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| Error::io(format!("listening on {addr}"), e))?;
    ready(listener, &format!("listening on {addr}"))
}

/// A listening socket made ready to serve, bound here or handed over.
fn ready(listener: std::net::TcpListener, what: &str) -> Result<std::net::TcpListener, Error> {
    // Accepted sockets inherit TCP_NODELAY from the listener (Linux). Without
    // it a keep-alive client (Prometheus) waits out its delayed ACK, 40 ms,
    // on every response written in two segments.
    set_nodelay(&listener).map_err(|e| Error::io(format!("{what}: TCP_NODELAY"), e))?;
    // A deeper accept queue than the library's 128: a burst of scrapers
    // arriving while the agent is busy waits instead of having its SYNs
    // dropped (and retried a second later). The kernel clamps it to
    // net.core.somaxconn, as it does node_exporter's.
    // SAFETY: listen() again on a listening socket only sets its backlog.
    if unsafe { libc::listen(std::os::fd::AsRawFd::as_raw_fd(&listener), libc::c_int::MAX) } != 0 {
        return Err(Error::io(what, std::io::Error::last_os_error()));
    }
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::io(what, e))?;
    Ok(listener)
}

/// The listening sockets the service manager handed over (systemd's
/// socket activation, node_exporter's `--web.systemd-socket`): descriptors
/// 3 to 3 + `LISTEN_FDS` - 1, when `LISTEN_PID` is this process. Each must
/// be a listening TCP socket, or the start is refused naming it. The
/// variables are removed, so no child takes the sockets for its own.
pub fn handed_over() -> Result<Vec<std::net::TcpListener>, Error> {
    use std::os::fd::FromRawFd;
    const FIRST: libc::c_int = 3;
    let var = |k: &str| std::env::var(k).ok();
    let (pid, fds) = (var("LISTEN_PID"), var("LISTEN_FDS"));
    // SAFETY: removing variables before any thread of ours reads the
    // environment (the agent's threads start after the listeners).
    unsafe {
        for k in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
            std::env::remove_var(k);
        }
    }
    let why = "--web.systemd-socket: no sockets were handed over (LISTEN_PID and LISTEN_FDS, set by systemd's socket activation)";
    let (Some(pid), Some(fds)) = (pid, fds) else {
        return Err(Error::invalid(why));
    };
    if pid.trim().parse::<u32>().ok() != Some(std::process::id()) {
        return Err(Error::invalid(format!(
            "{why}: LISTEN_PID={pid} is not this process"
        )));
    }
    let n = match fds.trim().parse::<libc::c_int>() {
        Ok(n) if (1..=64).contains(&n) => n,
        _ => {
            return Err(Error::invalid(format!(
                "{why}: LISTEN_FDS={fds} is not 1 to 64"
            )));
        }
    };
    (FIRST..FIRST + n)
        .map(|fd| {
            let what = format!("--web.systemd-socket: descriptor {fd}");
            let opt = |level, name| -> Option<libc::c_int> {
                let mut v: libc::c_int = 0;
                let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
                // SAFETY: any descriptor number; getsockopt writes one c_int.
                let r = unsafe {
                    libc::getsockopt(fd, level, name, (&mut v as *mut libc::c_int).cast(), &mut len)
                };
                (r == 0).then_some(v)
            };
            let listening = opt(libc::SOL_SOCKET, libc::SO_ACCEPTCONN) == Some(1);
            let stream = opt(libc::SOL_SOCKET, libc::SO_TYPE) == Some(libc::SOCK_STREAM);
            let inet = matches!(
                opt(libc::SOL_SOCKET, libc::SO_DOMAIN),
                Some(libc::AF_INET | libc::AF_INET6)
            );
            if !(listening && stream && inet) {
                return Err(Error::invalid(format!(
                    "{what} is not a listening TCP socket; hand over ListenStream= sockets of IP addresses"
                )));
            }
            // SAFETY: FD_CLOEXEC on a descriptor that is open (checked above).
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            // SAFETY: the descriptor is a listening TCP socket handed to
            // this process, owned from here on by the listener alone.
            let l = unsafe { std::net::TcpListener::from_raw_fd(fd) };
            ready(l, &what)
        })
        .collect()
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

/// The connection cap: `wanted` (or the default), at most half the
/// descriptors left under the soft limit, so the agent's own files and a
/// burst of accepts always find one.
fn connection_cap(wanted: usize) -> usize {
    let wanted = if wanted == 0 {
        DEFAULT_MAX_CONNECTIONS
    } else {
        wanted
    };
    let Some(limit) = sys::fd_limit() else {
        return wanted;
    };
    let open = sys::open_fds().unwrap_or(64);
    let room = limit.saturating_sub(open) / 2;
    wanted.min(room as usize).max(4)
}

/// Starts serving `shared` on `listeners` (from [`bind`] or
/// [`handed_over`]): one thread, one accept loop per listener.
pub fn serve(
    shared: Arc<Shared>,
    listeners: Vec<std::net::TcpListener>,
    options: Options,
) -> Result<HttpServer, Error> {
    let addrs = listeners
        .iter()
        .map(|l| l.local_addr())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::io("serving", e))?;
    let Some(&addr) = addrs.first() else {
        return Err(Error::invalid("serving: no address to listen on"));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| Error::io(format!("serving on {addr}"), e))?;
    let listeners = {
        let _in = runtime.enter();
        listeners
            .into_iter()
            .zip(&addrs)
            .map(|(l, a)| {
                tokio::net::TcpListener::from_std(l)
                    .map_err(|e| Error::io(format!("serving on {a}"), e))
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    let offload = offload::Offload::new(2, 64);
    let conns = Conns::new(connection_cap(options.max_connections));
    let encoders = offload::Offload::named("http-encode", ENCODERS, conns.cap);
    let (tls, auth, headers) = match options.web {
        Some(w) => (
            w.tls,
            (!w.users.is_empty()).then(|| Arc::new(auth::Auth::new(w.users))),
            w.headers
                .into_iter()
                .filter_map(|(k, v)| Some((k.parse().ok()?, v.parse().ok()?)))
                .collect(),
        ),
        None => (None, None, Vec::new()),
    };
    let ctx = Arc::new(Ctx {
        exposition: {
            let e = crate::metrics::Exposition::new(shared.clone(), Some(conns.stats.clone()));
            if options.no_exporter_metrics {
                e.without_exporter_metrics()
            } else {
                e
            }
        },
        shared: shared.clone(),
        offload,
        encoders,
        auth,
        headers,
        process_rows: options.process_rows,
        telemetry_path: if options.telemetry_path.is_empty() {
            TELEMETRY_PATH.to_string()
        } else {
            options.telemetry_path
        },
        scrapes: Arc::default(),
        max_scrapes: options.max_requests,
        last_answer: Arc::default(),
        conns,
    });
    let (stop, stopped) = watch::channel(false);
    let acceptor = tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let thread = {
        let ctx = ctx.clone();
        std::thread::Builder::new()
            .name("http".into())
            .spawn(move || {
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    runtime.block_on(accept_loops(listeners, ctx.clone(), acceptor, stopped))
                }));
                let why = match run {
                    Ok(true) => return,
                    Ok(false) => "the accept loop ended".to_string(),
                    Err(p) => p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic".into()),
                };
                ctx.shared.fail(format!(
                    "the HTTP server on {addr} stopped ({why}); exiting"
                ));
            })
            .map_err(|e| Error::io(format!("serving on {addr}: starting the HTTP thread"), e))?
    };
    Ok(HttpServer {
        addrs,
        stop,
        thread,
        tls: tls.is_some(),
        ctx,
    })
}

/// Whether an accept error is about one connection (gone before it was
/// taken), not the listener or the process.
fn per_connection(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNABORTED | libc::ECONNRESET | libc::EPERM | libc::EPROTO)
    )
}

/// One accept loop per listener until `stop`; true when stopped, false if
/// one could not go on.
async fn accept_loops(
    listeners: Vec<tokio::net::TcpListener>,
    ctx: Arc<Ctx>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    stop: watch::Receiver<bool>,
) -> bool {
    let mut loops = tokio::task::JoinSet::new();
    for l in listeners {
        loops.spawn(accept_loop(l, ctx.clone(), tls.clone(), stop.clone()));
    }
    while let Some(r) = loops.join_next().await {
        if !matches!(r, Ok(true)) {
            return false;
        }
    }
    true
}

/// Accepts until `stop`; true when stopped, false if it could not go on.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    ctx: Arc<Ctx>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
) -> bool {
    const FIRST_BACKOFF: Duration = Duration::from_millis(5);
    let mut backoff = FIRST_BACKOFF;
    let mut failing: u64 = 0;
    loop {
        let accepted = tokio::select! {
            _ = stop.changed() => return true,
            r = listener.accept() => r,
        };
        match accepted {
            Ok((sock, _)) => {
                if failing > 0 {
                    agent::logging::info(&format!(
                        "HTTP: accepting connections again after {failing} failed attempts"
                    ));
                    failing = 0;
                }
                backoff = FIRST_BACKOFF;
                admit(sock, &ctx, &tls);
            }
            Err(e) if per_connection(&e) => {}
            Err(e) => {
                if failing == 0 {
                    agent::logging::warn(&format!(
                        "HTTP: accepting a connection failed ({e}); {} connections open (cap {}); retrying with backoff",
                        ctx.conns.len(),
                        ctx.conns.cap
                    ));
                }
                failing += 1;
                ctx.conns
                    .stats
                    .accept_errors
                    .fetch_add(1, Ordering::Relaxed);
                if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                    ctx.conns.evict_one();
                }
                tokio::select! {
                    _ = stop.changed() => return true,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
}

fn refusal() -> Vec<u8> {
    let body = "too many connections, every one mid-request; try again later\n";
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn admit(sock: TcpStream, ctx: &Arc<Ctx>, tls: &Option<tokio_rustls::TlsAcceptor>) {
    match ctx.conns.admit() {
        Admit::Full => {
            // Best effort, never waits: the socket's buffer takes it or not.
            if tls.is_none() {
                let _ = sock.try_write(&refusal());
            }
        }
        Admit::In(id, slot) => {
            let (ctx, tls) = (ctx.clone(), tls.clone());
            tokio::spawn(async move {
                connection(sock, slot, &ctx, tls).await;
                ctx.conns.remove(id);
            });
        }
    }
}

async fn connection(
    sock: TcpStream,
    slot: Arc<Slot>,
    ctx: &Arc<Ctx>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let fd = std::os::fd::AsRawFd::as_raw_fd(&sock);
    let io = io::TimedIo::new(sock, slot.clone(), READ_TIMEOUT, WRITE_TIMEOUT);
    match tls {
        None => http(TokioIo::new(io), fd, slot, ctx).await,
        Some(acceptor) => {
            let stream = tokio::select! {
                _ = slot.evict.notified() => return,
                r = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(io)) => match r {
                    Ok(Ok(s)) => s,
                    _ => return,
                },
            };
            http(TokioIo::new(stream), fd, slot, ctx).await
        }
    }
}

/// Whether the client on `fd` is gone (it reset the connection, or both
/// directions are shut): its request is then not answered, so a burst of
/// clients that ask and hang up costs no encoding. A client that only
/// shut its sending side still gets its answer.
fn peer_gone(fd: std::os::fd::RawFd) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no wait; the socket outlives the request.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & (libc::POLLHUP | libc::POLLERR) != 0
}

/// Room in the socket's send buffer for an answer of `bytes` (and its
/// head), so that it is written in one call however slowly the client
/// reads: each time a full buffer makes the write wait, the connection's
/// thread sleeps and wakes once more (a new connection's buffer starts at
/// 16 KiB and grows only as the client keeps up). Only ever raised; the
/// kernel caps it at `net.core.wmem_max` (Debian's default: 208 KiB,
/// doubled by the kernel).
fn fit_send_buffer(fd: std::os::fd::RawFd, bytes: usize) {
    let want = (bytes + 4096).min(libc::c_int::MAX as usize / 2) as libc::c_int;
    let mut have: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a valid socket (open while its connection is served) and a
    // c_int option value.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&mut have as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    // The kernel reports twice what was set (its bookkeeping included).
    if r != 0 || have / 2 >= want {
        return;
    }
    // SAFETY: as above.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&want as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}

/// `fd` is the connection's socket, open while the connection is served.
async fn http<I>(io: I, fd: std::os::fd::RawFd, slot: Arc<Slot>, ctx: &Arc<Ctx>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let svc = {
        let (ctx, slot) = (ctx.clone(), slot.clone());
        service_fn(move |req| {
            let (ctx, slot) = (ctx.clone(), slot.clone());
            async move {
                if peer_gone(fd) {
                    ctx.conns.stats.abandoned.fetch_add(1, Ordering::Relaxed);
                    return Ok(routes::gone());
                }
                slot.set_busy(true);
                let r = routes::handle(&ctx, req, &slot).await;
                ctx.conns.stats.count_answer(r.status().as_u16());
                if let Some(n) = hyper::body::Body::size_hint(r.body()).exact() {
                    fit_send_buffer(fd, n as usize);
                }
                // A streamed answer is busy until its body is sent.
                if !r.body().streams() {
                    slot.set_busy(false);
                }
                Ok::<_, Infallible>(r)
            }
        })
    };
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_buf_size(HEAD_CAP)
        .serve_connection(io, svc);
    tokio::select! {
        _ = conn => {}
        _ = slot.evict.notified() => {}
    }
}
