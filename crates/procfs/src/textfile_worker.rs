//! The textfile source off the reader's thread. A directory of `*.prom`
//! files is written by other programs: it may be large (tens of thousands
//! of series), slow (a network filesystem) or hung, and reading it on the
//! agent's sampler thread would delay every other source. With
//! [`crate::Reader::set_textfile_background`], a read of the source hands
//! back the last parse that finished and starts the next one on a thread of
//! its own; only the first read waits for a parse, and at most a second.
//! Each parse uses buffers of its own that are freed when it ends, so the
//! memory of a large directory goes back once its files shrink.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};

use std::time::{Duration, Instant};

use crate::gather::Gatherer;
use crate::sample::{SourceCost, SourceStatus};
use crate::source::Source;
use crate::textfile::{self, Textfile};

#[derive(Default)]
struct Slot {
    dir: Option<PathBuf>,
    max_bytes: usize,
    max_dir_bytes: usize,
    /// Parses asked for, and finished.
    wanted: u64,
    done: u64,
    last: Option<(Arc<Textfile>, SourceStatus, SourceCost)>,
    /// What a read replaced, dropped here: freeing tens of thousands of
    /// series takes milliseconds the reader's thread should not spend.
    garbage: Vec<Arc<Textfile>>,
    stop: bool,
    /// The first read has waited (once) for the first parse.
    waited: bool,
}

type Shared = Arc<(Mutex<Slot>, Condvar)>;

pub(crate) struct Worker {
    shared: Shared,
}

/// How long the first read waits for the first parse.
const FIRST_WAIT: Duration = Duration::from_secs(1);

impl Worker {
    pub fn start() -> std::io::Result<Worker> {
        let shared: Shared = Arc::default();
        let s = shared.clone();
        std::thread::Builder::new()
            .name("quietstat-textfile".into())
            .spawn(move || run(&s))?;
        Ok(Worker { shared })
    }

    /// The last parse of `dir` that finished, into `out` (its status and
    /// cost returned), and the next one started unless one is running.
    pub fn read(
        &self,
        dir: Option<PathBuf>,
        max_bytes: usize,
        max_dir_bytes: usize,
        out: &mut Arc<Textfile>,
    ) -> (SourceStatus, SourceCost) {
        let (m, c) = &*self.shared;
        let mut slot = m.lock().unwrap_or_else(|e| e.into_inner());
        slot.dir = dir;
        slot.max_bytes = max_bytes;
        slot.max_dir_bytes = max_dir_bytes;
        if slot.wanted == slot.done {
            slot.wanted += 1;
            c.notify_all();
        }
        // Only the first read waits: while a slow first parse goes on, the
        // reads after it return at once, so the sampler is held up by one
        // second at most, once.
        if slot.done == 0 && !slot.waited {
            slot.waited = true;
            let deadline = Instant::now() + FIRST_WAIT;
            while slot.done == 0 {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                slot = c
                    .wait_timeout(slot, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        match &slot.last {
            Some((t, status, cost)) => {
                let (t, status, cost) = (t.clone(), status.clone(), *cost);
                if !Arc::ptr_eq(out, &t) {
                    let old = std::mem::replace(out, t);
                    slot.garbage.push(old);
                    c.notify_all();
                }
                (status, cost)
            }
            None => (
                SourceStatus::Failed(format!(
                    "textfile directory: its first read has not finished within {FIRST_WAIT:?} (a slow or hung filesystem?); it is served once it does"
                )),
                SourceCost::default(),
            ),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Not joined: a parse stuck on a hung filesystem must not hold up
        // the reader's owner; the thread ends after it.
        let (m, c) = &*self.shared;
        m.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        c.notify_all();
    }
}

fn run(shared: &Shared) {
    let (m, c) = &**shared;
    loop {
        let (dir, max_bytes, max_dir_bytes, target) = {
            let mut slot = m.lock().unwrap_or_else(|e| e.into_inner());
            while !slot.stop && slot.wanted == slot.done && slot.garbage.is_empty() {
                slot = c.wait(slot).unwrap_or_else(|e| e.into_inner());
            }
            if slot.stop {
                return;
            }
            let garbage = std::mem::take(&mut slot.garbage);
            if !garbage.is_empty() {
                drop(slot);
                drop(garbage);
                sys::release_free_memory();
                continue;
            }
            (
                slot.dir.clone(),
                slot.max_bytes,
                slot.max_dir_bytes,
                slot.wanted,
            )
        };
        let result = parse(dir, max_bytes, max_dir_bytes);
        let old = {
            let mut slot = m.lock().unwrap_or_else(|e| e.into_inner());
            let old = slot.last.replace(result);
            slot.done = target;
            c.notify_all();
            old
        };
        drop(old);
        sys::release_free_memory();
    }
}

/// One read and parse of the directory, with buffers of its own.
fn parse(
    dir: Option<PathBuf>,
    max_bytes: usize,
    max_dir_bytes: usize,
) -> (Arc<Textfile>, SourceStatus, SourceCost) {
    let mut g = Gatherer::default();
    g.options.textfile_directory = dir;
    g.options.textfile_max_dir_bytes = max_dir_bytes;
    let mut buf = Vec::new();
    let mut t = Textfile::default();
    let t0 = Instant::now();
    let root = std::path::Path::new("/");
    let read = g.gather(Source::Textfile, root, root, &mut buf, max_bytes);
    let read_ns = t0.elapsed().as_nanos() as u64;
    let (status, cost) = match read {
        Ok(n) => {
            let t1 = Instant::now();
            let r = textfile::parse_into(&buf[..n], &mut t);
            let cost = SourceCost {
                read_ns,
                parse_ns: t1.elapsed().as_nanos() as u64,
                bytes: n as u64,
            };
            let status = match r {
                Ok(()) => SourceStatus::Ok,
                Err(e) => SourceStatus::Failed(format!("textfile directory: {e}")),
            };
            (status, cost)
        }
        Err(e) => (
            SourceStatus::Failed(format!("textfile directory: {e}")),
            SourceCost::default(),
        ),
    };
    (Arc::new(t), status, cost)
}
