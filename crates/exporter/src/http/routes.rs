//! What each request gets, from the agent's snapshots.
//!
//! - `GET /metrics[?max_age_ms=N]`: OpenMetrics when the Accept header asks
//!   for `application/openmetrics-text`, else the text format 0.0.4.
//! - `GET /api/v1/snapshot[?sources=a,b][&max_age_ms=N]`: JSON.
//!
//! With `max_age_ms`, sources older than that are read once more (one read
//! for all requests that ask at the same time) before the answer, unless the
//! source was read within its demand floor or the demand reads have used up
//! the overhead budget: then the answer carries the data there is, and says
//! how old it is (`X-Data-Age-Ms`, `X-Data-Fresh`). Without `max_age_ms`, no
//! request reads the kernel. Every answer states the age of the oldest
//! source it carries in `X-Data-Age-Ms`.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use agent::config::{AgentSource, Mask};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::Ctx;
use super::auth::Verdict;
use super::conns::Slot;
use crate::metrics::Offered;
use crate::{json, metrics};

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
/// How long a request waits for a fresh read before answering 503.
const FRESH_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of an unknown path a 404 repeats.
const ECHO_CAP: usize = 128;

pub(crate) type Reply = Response<Body>;

/// An answer's body: whole, or an exposition's parts as they are encoded
/// (the connection is busy until the last is sent).
pub(crate) enum Body {
    Whole(Full<Bytes>),
    Parts {
        /// What was encoded whole before the answer turned out large.
        head: Option<Bytes>,
        rx: tokio::sync::mpsc::Receiver<String>,
        _busy: BusyUntilSent,
        _scrape: Option<Scrape>,
    },
}

/// One exposition answer in progress, counted against
/// `--web.max-requests` until its body is sent or dropped.
pub(crate) struct Scrape(Arc<AtomicUsize>);

impl Scrape {
    /// A place among `max` answers in progress (0: no limit, nothing
    /// counted), or `None` when all are taken.
    fn take(count: &Arc<AtomicUsize>, max: usize) -> Result<Option<Scrape>, ()> {
        if max == 0 {
            return Ok(None);
        }
        let taken = count.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        });
        match taken {
            Ok(_) => Ok(Some(Scrape(count.clone()))),
            Err(_) => Err(()),
        }
    }
}

impl Drop for Scrape {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Marks the connection idle again when a streamed body ends or is
/// dropped.
pub(crate) struct BusyUntilSent(Arc<Slot>);

impl Drop for BusyUntilSent {
    fn drop(&mut self) {
        self.0.set_busy(false);
    }
}

impl Body {
    pub(crate) fn streams(&self) -> bool {
        matches!(self, Body::Parts { .. })
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            Body::Whole(b) => Pin::new(b).poll_frame(cx),
            Body::Parts { head, rx, .. } => match head.take() {
                Some(h) => Poll::Ready(Some(Ok(Frame::data(h)))),
                None => rx
                    .poll_recv(cx)
                    .map(|c| c.map(|c| Ok(Frame::data(Bytes::from(c))))),
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Whole(b) => b.is_end_stream(),
            Body::Parts { .. } => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Whole(b) => b.size_hint(),
            Body::Parts { .. } => SizeHint::default(),
        }
    }
}

fn reply(status: StatusCode, ctype: &str, body: impl Into<Bytes>) -> Reply {
    typed(status, ctype, Body::Whole(Full::new(body.into())))
}

fn typed(status: StatusCode, ctype: &str, body: Body) -> Reply {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(ctype).expect("a valid content type"),
    );
    r
}

fn text(status: StatusCode, body: String) -> Reply {
    reply(status, "text/plain; charset=utf-8", body)
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

/// At most `ECHO_CAP` characters of what a client sent, for an error.
fn echo(s: &str) -> String {
    match s.char_indices().nth(ECHO_CAP) {
        Some((i, _)) => format!("{}... ({} bytes)", &s[..i], s.len()),
        None => s.to_string(),
    }
}

pub(crate) async fn handle(ctx: &Ctx, req: Request<Incoming>, slot: &Arc<Slot>) -> Reply {
    let mut r = route(ctx, &req, slot).await;
    for (k, v) in &ctx.headers {
        r.headers_mut().insert(k.clone(), v.clone());
    }
    r
}

async fn route(ctx: &Ctx, req: &Request<Incoming>, slot: &Arc<Slot>) -> Reply {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = text(
            StatusCode::METHOD_NOT_ALLOWED,
            format!(
                "{}: only GET and HEAD are served\n",
                echo(req.method().as_str())
            ),
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if let Some(auth) = &ctx.auth {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match auth.check(given, &ctx.offload).await {
            Verdict::Pass => {}
            Verdict::Fail => {
                let mut r = text(StatusCode::UNAUTHORIZED, "authentication required\n".into());
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"quietstat\""),
                );
                return r;
            }
            Verdict::Busy => return busy(),
        }
    }
    let path = req.uri().path();
    let pairs = query_pairs(req.uri().query().unwrap_or(""));
    let param = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    match path {
        p if p == ctx.telemetry_path => {
            let openmetrics = req.headers().get_all(header::ACCEPT).iter().any(|v| {
                v.to_str()
                    .is_ok_and(|v| v.contains("application/openmetrics-text"))
            });
            let Ok(scrape) = Scrape::take(&ctx.scrapes, ctx.max_scrapes) else {
                let mut r = text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "limit of concurrent scrapes reached ({}, --web.max-requests); try again later\n",
                        ctx.max_scrapes
                    ),
                );
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                return r;
            };
            metrics_response(ctx, slot, openmetrics, param("max_age_ms"), scrape).await
        }
        "/api/v1/snapshot" => snapshot_response(ctx, param("sources"), param("max_age_ms")).await,
        "/" => text(
            StatusCode::OK,
            format!(
                "quietstat agent\n\n{}[?max_age_ms=N]\n/api/v1/snapshot[?sources=a,b][&max_age_ms=N]\n",
                ctx.telemetry_path
            ),
        ),
        _ => text(
            StatusCode::NOT_FOUND,
            format!(
                "{}: not found; try {} or /api/v1/snapshot\n",
                echo(path),
                ctx.telemetry_path
            ),
        ),
    }
}

/// The answer to a client that is gone: never read, so nothing is made.
pub(crate) fn gone() -> Reply {
    let mut r = Reply::new(Body::Whole(Full::new(Bytes::new())));
    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

fn busy() -> Reply {
    let mut r = text(
        StatusCode::SERVICE_UNAVAILABLE,
        "busy: too many requests waiting; try again\n".into(),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// How fresh an answer is: the sources a demand read was declined for.
#[derive(Default)]
struct Freshness {
    declined: Option<agent::Declined>,
}

async fn fresh(ctx: &Ctx, mask: Mask, max_age: Option<&str>) -> Result<Freshness, Reply> {
    let max_age = json::parse_max_age(max_age)
        .map_err(|e| text(StatusCode::BAD_REQUEST, e.to_string() + "\n"))?;
    let Some(age) = max_age else {
        return Ok(Freshness::default());
    };
    let shared = ctx.shared.clone();
    match ctx
        .offload
        .run(move || shared.fresh(mask, age, FRESH_TIMEOUT))
        .await
    {
        Ok(Ok(declined)) => Ok(Freshness {
            declined: Some(declined),
        }),
        Ok(Err(e)) => Err(text(StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n"))),
        Err(_) => Err(busy()),
    }
}

/// The age headers: the oldest source's age, and when a fresh read was
/// asked for, whether it was made.
fn age_headers(r: &mut Reply, ctx: &Ctx, mask: Mask, f: &Freshness) {
    let age_ms = ctx.shared.oldest_age(mask).as_millis();
    r.headers_mut()
        .insert("x-data-age-ms", HeaderValue::from(age_ms as u64));
    if let Some(d) = &f.declined
        && let Ok(v) = HeaderValue::from_str(&declined_header(d))
    {
        r.headers_mut().insert("x-data-fresh", v);
    }
}

/// Chunks of an exposition in flight between its encoder and its client.
const CHUNKS_IN_FLIGHT: usize = 4;

/// An exposition smaller than this (as the last one was) is encoded whole
/// on the connection's thread and written at once: no other thread wakes
/// for it, and the connection's thread wakes only for the socket (1 to 2
/// sleeps a scrape against about 170 when every answer went a part at a
/// time to the encoder threads: bench/runs/2026-11-28-quiet/). Encoding
/// holds that thread from every other connection (about 12 us a KB here,
/// release: 3 ms at this size), so larger answers (a big textfile
/// directory; thousands of CPUs: 3.7 MB on fixtures/cpu4096) go a part at
/// a time to the encoder threads and stream to the client as they are
/// made, never held whole, while the connection's thread serves others.
/// Should an answer cross this while encoded whole, or reach a part of
/// any size (the textfile directory's, a per-CPU collector turned on),
/// the rest goes the same way.
pub(crate) const WHOLE_BELOW: usize = 256 << 10;

/// The encoder's end of a streamed body.
struct Channel(tokio::sync::mpsc::Sender<String>);

impl metrics::Sink for Channel {
    fn offer(&mut self, chunk: String) -> Offered {
        use tokio::sync::mpsc::error::TrySendError;
        match self.0.try_send(chunk) {
            // Gone: the next wait says so.
            Ok(()) | Err(TrySendError::Closed(_)) => Offered::Taken,
            Err(TrySendError::Full(c)) => Offered::Back(c),
        }
    }

    /// On an encoder thread, never the runtime's.
    fn wait(&mut self, chunk: String) -> bool {
        self.0.blocking_send(chunk).is_ok()
    }
}

/// An answer encoded whole: takes every chunk at once.
#[derive(Default)]
struct Whole {
    text: String,
}

impl metrics::Sink for Whole {
    fn offer(&mut self, chunk: String) -> Offered {
        self.text.push_str(&chunk);
        Offered::Taken
    }

    fn wait(&mut self, chunk: String) -> bool {
        let _ = self.offer(chunk);
        true
    }
}

async fn metrics_response(
    ctx: &Ctx,
    slot: &Arc<Slot>,
    openmetrics: bool,
    max_age: Option<&str>,
    scrape: Option<Scrape>,
) -> Reply {
    let all = json::parse_sources(None).expect("all sources");
    let f = match fresh(ctx, all, max_age).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let ctype = if openmetrics { OPENMETRICS } else { TEXT };
    let mut encoding = ctx.exposition.encoding(openmetrics);
    let last = ctx.last_answer.load(Ordering::Relaxed);
    let mut whole = Whole::default();
    if last < WHOLE_BELOW {
        // Room for an answer as large as the last and a little more: no
        // copy as it grows.
        whole.text.reserve(last + last / 8);
        // Every part here, while the answer stays small. (An error ends
        // the answer where it stopped, as it ends a streamed one.)
        let done = loop {
            if encoding.next_part_unbounded() {
                break false;
            }
            match encoding.next_part(&mut whole) {
                None | Some(Err(_)) => break true,
                Some(Ok(_)) if whole.text.len() >= WHOLE_BELOW => break false,
                Some(Ok(_)) => {}
            }
        };
        if done {
            ctx.last_answer.store(whole.text.len(), Ordering::Relaxed);
            let mut r = reply(StatusCode::OK, ctype, whole.text);
            age_headers(&mut r, ctx, all, &f);
            return r;
        }
    }
    let head = (!whole.text.is_empty()).then(|| Bytes::from(whole.text));
    let (tx, rx) = tokio::sync::mpsc::channel::<String>(CHUNKS_IN_FLIGHT);
    let encoders = ctx.encoders.clone();
    let last_answer = ctx.last_answer.clone();
    let mut sent = head.as_ref().map_or(0, Bytes::len);
    // Each part is encoded on an encoder thread. A part made under the
    // state's lock never waits there: the chunks its reader could not take
    // yet are sent from here, awaiting the reader without holding a thread.
    // A part made without the lock (a copy of per-CPU counts, the textfile
    // directory) waits for its reader on the encoder thread, freed by the
    // write timeout if the reader stalls. The body ends where an error or
    // a gone reader stopped it.
    tokio::spawn(async move {
        // A client gone (or a HEAD request, whose body is dropped) costs
        // no more parts.
        while !tx.is_closed() {
            let mut sink = Counted {
                channel: Channel(tx.clone()),
                bytes: 0,
            };
            let part = move || {
                let r = encoding.next_part(&mut sink);
                (encoding, sink.bytes, r)
            };
            let (back, bytes, held) = match encoders.run(part).await {
                Ok((back, bytes, Some(Ok(held)))) => (back, bytes, held),
                // The last part done: the answer's size decides how the
                // next is made.
                Ok((_, bytes, None)) => {
                    last_answer.store(sent + bytes, Ordering::Relaxed);
                    return;
                }
                _ => return,
            };
            encoding = back;
            sent += bytes;
            for c in held {
                sent += c.len();
                if tx.send(c).await.is_err() {
                    return;
                }
            }
        }
    });
    let body = Body::Parts {
        head,
        rx,
        _busy: BusyUntilSent(slot.clone()),
        _scrape: scrape,
    };
    let mut r = typed(StatusCode::OK, ctype, body);
    age_headers(&mut r, ctx, all, &f);
    r
}

/// A streamed body's sink, counting what it took at once.
struct Counted {
    channel: Channel,
    bytes: usize,
}

impl metrics::Sink for Counted {
    fn offer(&mut self, chunk: String) -> Offered {
        let n = chunk.len();
        let offered = self.channel.offer(chunk);
        if offered == Offered::Taken {
            self.bytes += n;
        }
        offered
    }

    fn wait(&mut self, chunk: String) -> bool {
        self.bytes += chunk.len();
        self.channel.wait(chunk)
    }
}

async fn snapshot_response(ctx: &Ctx, sources: Option<&str>, max_age: Option<&str>) -> Reply {
    let mask = match json::parse_sources(sources) {
        Ok(m) => m,
        Err(e) => return text(StatusCode::BAD_REQUEST, echo(&e.to_string()) + "\n"),
    };
    let f = match fresh(ctx, mask, max_age).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let usage = agent::self_usage();
    let body = {
        let st = ctx.shared.state.read().unwrap_or_else(|e| e.into_inner());
        let uptime = sys::unix_ns().saturating_sub(ctx.shared.started_unix_ns) as f64 / 1e9;
        let mut v = json::snapshot(&st, mask, &usage, sys::mono_ns(), uptime, ctx.process_rows);
        if let Some(d) = &f.declined {
            v["fresh"] = declined_json(d);
        }
        v.to_string()
    };
    let mut r = reply(StatusCode::OK, "application/json", body);
    age_headers(&mut r, ctx, mask, &f);
    r
}

fn keys(mask: Mask) -> Vec<&'static str> {
    AgentSource::ALL
        .into_iter()
        .filter(|s| mask & s.bit() != 0)
        .map(AgentSource::key)
        .collect()
}

/// `X-Data-Fresh`: `yes`, or which sources were served as they were and why.
fn declined_header(d: &agent::Declined) -> String {
    if !d.any() {
        return "yes".into();
    }
    let mut parts = Vec::new();
    if d.floor != 0 {
        parts.push(format!("within demand floor: {}", keys(d.floor).join(",")));
    }
    if d.budget != 0 {
        parts.push(format!(
            "over overhead budget: {}",
            keys(d.budget).join(",")
        ));
    }
    format!("no; {}", parts.join("; "))
}

/// The JSON answer's `fresh` field, when `max_age_ms` was given.
fn declined_json(d: &agent::Declined) -> serde_json::Value {
    serde_json::json!({
        "all_read": !d.any(),
        "within_demand_floor": keys(d.floor),
        "over_overhead_budget": keys(d.budget),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_the_channel_has_no_room_for_is_given_back_and_not_counted() {
        use metrics::Sink;
        let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(1);
        let mut c = Counted {
            channel: Channel(tx),
            bytes: 0,
        };
        assert_eq!(c.offer("abc".into()), Offered::Taken);
        assert_eq!(c.offer("defg".into()), Offered::Back("defg".into()));
        assert_eq!(c.bytes, 3);
        assert_eq!(rx.try_recv().as_deref(), Ok("abc"));
        assert_eq!(c.offer("hi".into()), Offered::Taken);
        assert_eq!(c.bytes, 5);
    }

    #[test]
    fn query_strings_are_decoded() {
        let p = query_pairs("sources=stat%2Cmeminfo&max_age_ms=5&flag&bad=%zz&utf=%C3%A9%");
        assert_eq!(p[0], ("sources".into(), "stat,meminfo".into()));
        assert_eq!(p[1], ("max_age_ms".into(), "5".into()));
        assert_eq!(p[2], ("flag".into(), "".into()));
        assert_eq!(p[3], ("bad".into(), "%zz".into()));
        assert_eq!(p[4], ("utf".into(), "é%".into()));
    }

    #[test]
    fn errors_repeat_a_bounded_part_of_what_was_sent() {
        let long = "x".repeat(100_000);
        let e = echo(&long);
        assert!(e.len() < 200 && e.ends_with("(100000 bytes)"), "{e}");
        assert_eq!(echo("/short"), "/short");
    }
}
