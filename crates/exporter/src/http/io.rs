//! A connection's socket with stall timeouts: a write that makes no
//! progress for `write_timeout` (a client not reading its answer), or a
//! connection that waits for a request with no progress either way for
//! `read_timeout` (an idle or silent client), fails with TimedOut, and
//! hyper closes the connection. A read waiting while an answer is made or
//! sent never times out: an answer that takes longer than `read_timeout`
//! to encode (a large textfile directory, thousands of CPUs) or to send is
//! delivered whole. Each progress is recorded in the connection's slot (for
//! choosing whom to evict, and for the read timeout). The timers exist only
//! while an operation waits, so an idle server arms none.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::conns::Slot;

pub(crate) struct TimedIo<S> {
    inner: S,
    slot: Arc<Slot>,
    read_timeout: Duration,
    write_timeout: Duration,
    read_deadline: Option<Pin<Box<Sleep>>>,
    write_deadline: Option<Pin<Box<Sleep>>>,
}

impl<S> TimedIo<S> {
    pub(crate) fn new(inner: S, slot: Arc<Slot>, read: Duration, write: Duration) -> Self {
        TimedIo {
            inner,
            slot,
            read_timeout: read,
            write_timeout: write,
            read_deadline: None,
            write_deadline: None,
        }
    }
}

/// Polls `deadline` (armed on first use) after the operation returned
/// Pending: TimedOut once it has passed, unless `extend` gives a later
/// time to wait until instead.
fn stalled(
    deadline: &mut Option<Pin<Box<Sleep>>>,
    timeout: Duration,
    cx: &mut Context<'_>,
    what: &str,
    extend: impl Fn() -> Option<Instant>,
) -> Poll<io::Error> {
    let d = deadline
        .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + timeout)));
    loop {
        ready!(d.as_mut().poll(cx));
        match extend() {
            Some(until) if until > d.deadline() => d.as_mut().reset(until),
            _ => break,
        }
    }
    Poll::Ready(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("no {what} progress for {timeout:?}"),
    ))
}

impl<S: AsyncRead + Unpin> AsyncRead for TimedIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        match Pin::new(&mut me.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                me.read_deadline = None;
                me.slot.touch();
                Poll::Ready(r)
            }
            Poll::Pending => {
                // While an answer is made the connection is not idle, and
                // the silence is counted from its last progress either way
                // (the answer's last write, the end of its making).
                let (slot, timeout) = (&me.slot, me.read_timeout);
                let extend = || {
                    let now = Instant::now();
                    if slot.busy() {
                        return Some(now + timeout);
                    }
                    timeout.checked_sub(slot.idle_for()).map(|left| now + left)
                };
                stalled(&mut me.read_deadline, timeout, cx, "read", extend).map(Err)
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> TimedIo<S> {
    fn write_op<T>(
        &mut self,
        cx: &mut Context<'_>,
        op: impl FnOnce(Pin<&mut S>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match op(Pin::new(&mut self.inner), cx) {
            Poll::Ready(r) => {
                self.write_deadline = None;
                self.slot.touch();
                Poll::Ready(r)
            }
            Poll::Pending => stalled(
                &mut self.write_deadline,
                self.write_timeout,
                cx,
                "write",
                || None,
            )
            .map(Err),
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for TimedIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().write_op(cx, |s, cx| s.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .write_op(cx, |s, cx| s.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().write_op(cx, |s, cx| s.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().write_op(cx, |s, cx| s.poll_shutdown(cx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::conns::{Admit, Conns};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const TIMEOUT: Duration = Duration::from_secs(1);

    fn slot() -> Arc<Slot> {
        let Admit::In(_, s) = Conns::new(1).admit() else {
            panic!("a slot")
        };
        s
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    /// The peer writes one byte after `after`.
    fn byte_after(mut peer: tokio::io::DuplexStream, after: Duration) {
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            peer.write_all(b"x").await.unwrap();
            // Kept open until the byte is read.
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
    }

    #[test]
    fn a_silent_idle_connection_times_out() {
        rt().block_on(async {
            let (a, _peer) = tokio::io::duplex(64);
            let mut io = TimedIo::new(a, slot(), TIMEOUT, TIMEOUT);
            let e = io.read(&mut [0u8; 1]).await.unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        });
    }

    #[test]
    fn a_read_waiting_while_an_answer_is_made_never_times_out() {
        rt().block_on(async {
            let (a, peer) = tokio::io::duplex(64);
            let s = slot();
            let mut io = TimedIo::new(a, s.clone(), TIMEOUT, TIMEOUT);
            s.set_busy(true);
            byte_after(peer, TIMEOUT * 2);
            assert_eq!(io.read(&mut [0u8; 1]).await.unwrap(), 1);
        });
    }

    /// An answer encoded on the connection's thread for longer than the
    /// timeout: the read armed before it counts from the answer's end.
    #[test]
    fn the_silence_counts_from_the_last_progress() {
        rt().block_on(async {
            let (a, peer) = tokio::io::duplex(64);
            let s = slot();
            let mut io = TimedIo::new(a, s.clone(), TIMEOUT, TIMEOUT);
            // The read timer is armed.
            let mut b = [0u8; 1];
            let armed = tokio::time::timeout(Duration::from_millis(10), io.read(&mut b));
            assert!(armed.await.is_err());
            s.set_busy(true);
            std::thread::sleep(TIMEOUT + TIMEOUT / 2);
            s.set_busy(false);
            byte_after(peer, TIMEOUT / 5);
            assert_eq!(io.read(&mut [0u8; 1]).await.unwrap(), 1);
        });
    }
}
