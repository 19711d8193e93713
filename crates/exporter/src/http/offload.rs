//! Work that blocks (waiting for a fresh read, checking a bcrypt hash) runs
//! on a few threads started with the server, never on the thread that
//! drives the connections. The queue is bounded: when it is full the
//! request is answered 503 at once rather than queued without end.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send>;

#[derive(Clone)]
pub(crate) struct Offload {
    tx: SyncSender<Job>,
}

/// The queue was full: too much blocking work in flight.
pub(crate) struct Busy;

impl Offload {
    /// Starts `threads` threads with a queue of `queue` jobs.
    pub(crate) fn start(threads: usize, queue: usize) -> std::io::Result<Offload> {
        Self::start_named("http-work", threads, queue)
    }

    /// The same, the threads named `name-N`.
    pub(crate) fn start_named(
        name: &str,
        threads: usize,
        queue: usize,
    ) -> std::io::Result<Offload> {
        let (tx, rx) = sync_channel::<Job>(queue);
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads.max(1) {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || work(&rx))?;
        }
        Ok(Offload { tx })
    }

    /// Runs `f` on a worker thread and waits for its result.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Busy> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        match self.tx.try_send(Box::new(move || {
            let _ = tx.send(f());
        })) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => return Err(Busy),
        }
        rx.await.map_err(|_| Busy)
    }
}

fn work(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock().unwrap_or_else(|e| e.into_inner()).recv() {
            Ok(j) => j,
            Err(_) => return,
        };
        // A job that panics loses its request, not the thread.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    }
}
