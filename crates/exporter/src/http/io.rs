//! A connection's socket with stall timeouts: a read that makes no progress
//! for `read_timeout`, or a write for `write_timeout`, fails with TimedOut,
//! and hyper closes the connection. Each progress is recorded in the
//! connection's slot (for choosing whom to evict). The timers exist only
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
/// Pending: TimedOut once it has passed.
fn stalled(
    deadline: &mut Option<Pin<Box<Sleep>>>,
    timeout: Duration,
    cx: &mut Context<'_>,
    what: &str,
) -> Poll<io::Error> {
    let d = deadline
        .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + timeout)));
    ready!(d.as_mut().poll(cx));
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
            Poll::Pending => stalled(&mut me.read_deadline, me.read_timeout, cx, "read").map(Err),
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
            Poll::Pending => {
                stalled(&mut self.write_deadline, self.write_timeout, cx, "write").map(Err)
            }
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
