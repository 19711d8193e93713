//! The cgroup walk off the sampler's thread. A walk of thousands of
//! cgroups takes hundreds of milliseconds (the kernel writes every file's
//! text); on the sampler's thread it would delay every source due while it
//! lasts. When the cgroups source is due the sampler starts a walk here and
//! goes on; the worker wakes the sampler when the walk ends, and the
//! sampler commits it then, as a read that began when the walk did. One
//! walk at a time: a source due while its walk still runs waits for that
//! walk.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// A finished walk, to be committed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Done {
    /// CLOCK_MONOTONIC ns when the walk began.
    pub read_at: u64,
    /// Its wall time and the worker thread's CPU time, in ns.
    pub cost_ns: u64,
    pub cpu_ns: u64,
    /// A consumer asked for it (not the schedule).
    pub demand: bool,
}

#[derive(Default)]
struct Slot {
    /// A walk asked for and not begun; whether a consumer asked.
    asked: Option<bool>,
    running: bool,
    done: Option<Done>,
    /// The finished walk's sample; between walks, the one a commit
    /// handed back, whose buffers the next walk reuses.
    sample: cgroups::Sample,
    stop: bool,
}

type Shared = Arc<(Mutex<Slot>, Condvar)>;

pub(crate) struct CgroupWorker {
    shared: Shared,
    thread: Option<JoinHandle<()>>,
}

fn lock(shared: &Shared) -> MutexGuard<'_, Slot> {
    shared.0.lock().unwrap_or_else(|e| e.into_inner())
}

impl CgroupWorker {
    /// Starts the worker's thread, which owns `reader`; `wake` is called
    /// after each walk (it wakes the sampler), under the worker's lock: it
    /// must not take it.
    pub fn start(
        reader: cgroups::Reader,
        wake: impl Fn() + Send + 'static,
    ) -> std::io::Result<CgroupWorker> {
        let shared: Shared = Arc::default();
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("quietstat-cgroups".into())
            .spawn(move || run(&s, reader, wake))?;
        Ok(CgroupWorker {
            shared,
            thread: Some(thread),
        })
    }

    /// Asks for a walk, unless one is asked for, running, or finished and
    /// not taken yet.
    pub fn begin(&self, demand: bool) {
        let mut slot = lock(&self.shared);
        if slot.asked.is_none() && !slot.running && slot.done.is_none() {
            slot.asked = Some(demand);
            self.shared.1.notify_all();
        }
    }

    /// A walk is asked for or running: the source is not to be read again.
    pub fn walking(&self) -> bool {
        let slot = lock(&self.shared);
        slot.asked.is_some() || slot.running
    }

    /// A walk finished and waits to be taken.
    pub fn finished(&self) -> bool {
        lock(&self.shared).done.is_some()
    }

    /// The finished walk, its sample swapped into `into` (whose old one
    /// the next walk reuses).
    pub fn take(&self, into: &mut cgroups::Sample) -> Option<Done> {
        let mut slot = lock(&self.shared);
        let done = slot.done.take()?;
        std::mem::swap(&mut slot.sample, into);
        Some(done)
    }

    /// Waits until no walk is asked for or running (the start-up read,
    /// which publishes every source at once).
    pub fn wait(&self) {
        let mut slot = lock(&self.shared);
        while slot.asked.is_some() || slot.running {
            slot = self.shared.1.wait(slot).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for CgroupWorker {
    /// Joined: a walk under way ends within its second or so (cgroupfs
    /// never waits on a device), and then the reader's descriptors close.
    fn drop(&mut self) {
        lock(&self.shared).stop = true;
        self.shared.1.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(shared: &Shared, mut reader: cgroups::Reader, wake: impl Fn()) {
    let mut said_bpf = false;
    loop {
        let (demand, mut work) = {
            let mut slot = lock(shared);
            while !slot.stop && slot.asked.is_none() {
                slot = shared.1.wait(slot).unwrap_or_else(|e| e.into_inner());
            }
            if slot.stop {
                return;
            }
            let demand = slot.asked.take().unwrap_or(false);
            slot.running = true;
            (demand, std::mem::take(&mut slot.sample))
        };
        let read_at = sys::mono_ns();
        let cpu = sys::thread_cpu_ns();
        reader.read(&mut work);
        if let Some(why) = reader.bpf_off()
            && !said_bpf
        {
            said_bpf = true;
            crate::log(format!(
                "cgroups: a hierarchy read from its files, not by the BPF walk: {why}"
            ));
        }
        let done = Done {
            read_at,
            cost_ns: sys::mono_ns().saturating_sub(read_at),
            cpu_ns: sys::thread_cpu_ns().saturating_sub(cpu),
            demand,
        };
        let mut slot = lock(shared);
        slot.sample = work;
        slot.done = Some(done);
        slot.running = false;
        // Under the lock: whoever sees the walk done sees its owner woken.
        wake();
        shared.1.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn fixture_reader() -> cgroups::Reader {
        let (proc_root, sys_root) = fixtures::roots("cgroup-v2");
        cgroups::Reader::new(cgroups::Options::new(&proc_root, &sys_root))
            .expect("the v2 fixture's reader")
    }

    #[test]
    fn a_walk_runs_on_its_own_thread_and_wakes_its_owner_once_done() {
        let woken = Arc::new(AtomicU32::new(0));
        let w = woken.clone();
        let worker = CgroupWorker::start(fixture_reader(), move || {
            w.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        let mut sample = cgroups::Sample::default();
        assert!(worker.take(&mut sample).is_none(), "nothing walked yet");
        worker.begin(true);
        // A second ask while the first is pending or running adds no walk.
        worker.begin(false);
        worker.wait();
        assert!(!worker.walking());
        assert!(worker.finished());
        let done = worker.take(&mut sample).expect("the walk");
        assert!(done.demand, "the first ask's origin is kept");
        assert!(!sample.cgroups.is_empty());
        assert_eq!(woken.load(Ordering::SeqCst), 1);
        assert!(worker.take(&mut sample).is_none(), "taken once");
        // The next walk reuses the sample handed back, and is on schedule.
        worker.begin(false);
        worker.wait();
        let mut second = cgroups::Sample::default();
        let done = worker.take(&mut second).expect("the second walk");
        assert!(!done.demand);
        assert_eq!(second.cgroups.len(), sample.cgroups.len());
        assert_eq!(woken.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_finished_walk_not_taken_holds_off_the_next() {
        let worker = CgroupWorker::start(fixture_reader(), || {}).unwrap();
        worker.begin(false);
        worker.wait();
        worker.begin(true);
        assert!(!worker.walking(), "no second walk over one not taken");
        let mut sample = cgroups::Sample::default();
        assert!(!worker.take(&mut sample).unwrap().demand);
    }
}
