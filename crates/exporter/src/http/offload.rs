//! Work that blocks (waiting for a fresh read, checking a bcrypt hash,
//! encoding a large exposition) runs on a few threads, never on the thread
//! that drives the connections. The threads start with the first job, not
//! with the server: a server never asked for such work has none. The queue
//! is bounded: when it is full the request is answered 503 at once rather
//! than queued without end.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

#[derive(Clone)]
pub(crate) struct Offload {
    inner: Arc<Inner>,
}

struct Inner {
    tx: SyncSender<Job>,
    rx: Arc<Mutex<Receiver<Job>>>,
    name: String,
    threads: usize,
    /// Whether the threads were started (at the first job).
    started: OnceLock<bool>,
}

/// The queue was full (too much blocking work in flight), or no thread
/// could be started.
pub(crate) struct Busy;

impl Offload {
    /// `threads` threads (started with the first job) and a queue of
    /// `queue` jobs.
    pub(crate) fn new(threads: usize, queue: usize) -> Offload {
        Self::named("http-work", threads, queue)
    }

    /// The same, the threads named `name-N`.
    pub(crate) fn named(name: &str, threads: usize, queue: usize) -> Offload {
        let (tx, rx) = sync_channel::<Job>(queue);
        Offload {
            inner: Arc::new(Inner {
                tx,
                rx: Arc::new(Mutex::new(rx)),
                name: name.to_string(),
                threads: threads.max(1),
                started: OnceLock::new(),
            }),
        }
    }

    /// Whether its threads were started.
    #[cfg(test)]
    pub(crate) fn started(&self) -> bool {
        self.inner.started.get().copied().unwrap_or(false)
    }

    /// Starts the threads, once; whether any runs. They inherit the
    /// starting thread's CPU placement (the housekeeping CPUs).
    fn start(&self) -> bool {
        let i = &self.inner;
        *i.started.get_or_init(|| {
            let mut any = false;
            for n in 0..i.threads {
                let rx = i.rx.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("{}-{n}", i.name))
                    .spawn(move || work(&rx));
                match spawned {
                    Ok(_) => any = true,
                    Err(e) => agent::logging::warn(&format!(
                        "HTTP: starting thread {}-{n}: {e}; its work goes to the others",
                        i.name
                    )),
                }
            }
            any
        })
    }

    /// Runs `f` on a worker thread and waits for its result.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Busy> {
        if !self.start() {
            return Err(Busy);
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        match self.inner.tx.try_send(Box::new(move || {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn threads_named(prefix: &str) -> usize {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.trim_end().starts_with(prefix))
            })
            .count()
    }

    #[test]
    fn threads_start_with_the_first_job_not_before() {
        let o = Offload::named("qs-offload-t", 2, 4);
        assert!(!o.started());
        assert_eq!(threads_named("qs-offload-t"), 0, "none before a job");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let r = rt.block_on(o.run(|| 6 * 7));
        assert_eq!(r.ok(), Some(42));
        assert!(o.started());
        // A new thread names itself once it runs.
        let t = std::time::Instant::now();
        while threads_named("qs-offload-t") < 2 && t.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(threads_named("qs-offload-t"), 2);
    }
}
