//! The cgroup walk: on the sampler's thread while it is small, off it once
//! it is large.
//!
//! A walk of a few hundred cgroups takes well under a millisecond; it is
//! made on the sampler's thread when the source falls due, with the other
//! sources of that instant, and costs no wakeup of its own. A walk of
//! thousands of cgroups takes tens to hundreds of milliseconds (the kernel
//! writes every file's text); on the sampler's thread it would delay every
//! source due while it lasts. So once a walk finds [`INLINE_MAX_CGROUPS`]
//! cgroups or more, the walks after it go to a thread of their own,
//! started then: when the source falls due the sampler starts a walk there
//! and goes on, and commits it at its next wakeup, as a read that began
//! when the walk did. A walk a consumer asked for wakes the sampler when it
//! ends (the consumer waits for it); a scheduled one does not. One walk at
//! a time: a source due while its walk still runs waits for that walk. The
//! count decides, not a time, so that where the walk runs does not depend
//! on how fast or busy the machine is. A BPF walk on the sampler's thread
//! that meets that many cgroups and has no room for them (thousands made
//! at once) stops the read before the walk is loaded again larger (the
//! kernel's BTF parsed, the program verified: tens of milliseconds), and
//! that read is made on the thread from the start.

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

/// Walks of this many cgroups or more (all hierarchies together) go to
/// a thread of their own: about 5 ms of walking at 5 us a cgroup
/// (BENCHMARKS.md, the cgroup walk).
pub(crate) const INLINE_MAX_CGROUPS: usize = 1_000;

/// Wakes the sampler.
type Wake = Box<dyn Fn() + Send + 'static>;

/// Walks made on the sampler's thread: the last found fewer than
/// `limit` cgroups.
pub(crate) struct Inline {
    /// [`INLINE_MAX_CGROUPS`] but in tests.
    limit: usize,
    reader: Box<cgroups::Reader>,
    done: Option<Done>,
    sample: cgroups::Sample,
    said_bpf: bool,
    /// Called after a walk a consumer asked for, once walks are on their
    /// own thread.
    wake: Wake,
}

/// Where the walks are made.
pub(crate) enum CgroupWalks {
    Inline(Box<Inline>),
    Thread(CgroupWorker),
}

impl CgroupWalks {
    /// Walks on the sampler's thread to begin with; `wake` wakes the
    /// sampler (after a walk a consumer asked for, once walks are on their
    /// own thread).
    pub fn new(reader: cgroups::Reader, wake: impl Fn() + Send + 'static) -> CgroupWalks {
        Self::with_limit(reader, INLINE_MAX_CGROUPS, wake)
    }

    /// The same, walks of `limit` cgroups or more sent to a thread.
    fn with_limit(
        mut reader: cgroups::Reader,
        limit: usize,
        wake: impl Fn() + Send + 'static,
    ) -> CgroupWalks {
        reader.set_hand_over(Some(limit));
        CgroupWalks::Inline(Box::new(Inline {
            limit,
            reader: Box::new(reader),
            done: None,
            sample: cgroups::Sample::default(),
            said_bpf: false,
            wake: Box::new(wake),
        }))
    }

    pub fn on_thread(&self) -> bool {
        matches!(self, CgroupWalks::Thread(_))
    }

    /// Walks from the next on go `depth` levels deep at most (`None`: as
    /// deep as the reader goes): what the memory ceiling sheds.
    pub fn set_max_depth(&mut self, depth: Option<u16>) {
        match self {
            CgroupWalks::Inline(i) => i.reader.set_max_depth(depth),
            CgroupWalks::Thread(w) => lock(&w.shared).max_depth = depth,
        }
    }

    /// A walk, now on this thread when walks are small (then taken with
    /// [`CgroupWalks::take`]); otherwise started on the walk's thread,
    /// unless one is asked for, running, or finished and not taken yet.
    /// A walk on this thread that finds [`INLINE_MAX_CGROUPS`] or more
    /// sends the walks after it to a thread of their own.
    pub fn walk(self, demand: bool) -> CgroupWalks {
        let mut i = match self {
            CgroupWalks::Thread(w) => {
                w.begin(demand);
                return CgroupWalks::Thread(w);
            }
            CgroupWalks::Inline(i) => i,
        };
        i.done = Some(walk_once(
            &mut i.reader,
            &mut i.sample,
            &mut i.said_bpf,
            demand,
        ));
        // A BPF walk that met more cgroups than its rows hold stopped
        // short of the load that makes room: that walk is made on the
        // thread, from the start.
        let outgrown = i.reader.outgrown();
        let n = outgrown.unwrap_or(i.sample.cgroups.len());
        if n < i.limit {
            return CgroupWalks::Inline(i);
        }
        // The walk just made goes with the walks to the thread, to be
        // taken from its slot as any; it stays here if none can start. One
        // that stopped short is no walk.
        let done = i.done.take().filter(|_| outgrown.is_none());
        let sample = std::mem::take(&mut i.sample);
        match CgroupWorker::start(i) {
            Ok(w) => {
                w.hand(done, sample);
                if outgrown.is_some() {
                    w.begin(demand);
                }
                crate::log(format!(
                    "cgroups: {n} found; walks go on a thread of their own from now on, so that none delays another source"
                ));
                CgroupWalks::Thread(w)
            }
            Err((e, mut i)) => {
                crate::log(format!(
                    "cgroups: {n} found, but no thread could be started for their walks ({e}); walked on the sampler's thread"
                ));
                i.sample = sample;
                match done {
                    Some(d) => i.done = Some(d),
                    // Walked here after all, loaded again within the read.
                    None => {
                        i.reader.set_hand_over(None);
                        i.done = Some(walk_once(
                            &mut i.reader,
                            &mut i.sample,
                            &mut i.said_bpf,
                            demand,
                        ));
                    }
                }
                CgroupWalks::Inline(i)
            }
        }
    }

    /// A walk is asked for or running: the source is not to be read again.
    pub fn walking(&self) -> bool {
        match self {
            CgroupWalks::Inline(_) => false,
            CgroupWalks::Thread(w) => w.walking(),
        }
    }

    /// A walk finished and waits to be taken.
    pub fn finished(&self) -> bool {
        match self {
            CgroupWalks::Inline(i) => i.done.is_some(),
            CgroupWalks::Thread(w) => w.finished(),
        }
    }

    /// The finished walk, its sample swapped into `into` (whose old one
    /// the next walk reuses).
    pub fn take(&mut self, into: &mut cgroups::Sample) -> Option<Done> {
        match self {
            CgroupWalks::Inline(i) => {
                let d = i.done.take()?;
                std::mem::swap(&mut i.sample, into);
                Some(d)
            }
            CgroupWalks::Thread(w) => w.take(into),
        }
    }
}

/// One walk into `work`, timed; the first walk made from files rather than
/// by BPF is said once.
fn walk_once(
    reader: &mut cgroups::Reader,
    work: &mut cgroups::Sample,
    said_bpf: &mut bool,
    demand: bool,
) -> Done {
    let read_at = sys::mono_ns();
    let cpu = sys::thread_cpu_ns();
    reader.read(work);
    if let Some(why) = reader.bpf_off()
        && !*said_bpf
    {
        *said_bpf = true;
        crate::log(format!(
            "cgroups: a hierarchy read from its files, not by the BPF walk: {why}"
        ));
    }
    Done {
        read_at,
        cost_ns: sys::mono_ns().saturating_sub(read_at),
        cpu_ns: sys::thread_cpu_ns().saturating_sub(cpu),
        demand,
    }
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
    /// The depth walks go to ([`CgroupWalks::set_max_depth`]).
    max_depth: Option<u16>,
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
    /// Starts the worker's thread, which owns the walks' reader from then
    /// on; their `wake` is called after each walk a consumer asked for (it
    /// wakes the sampler), under the worker's lock: it must not take it.
    /// Where no thread can be started, the walks are handed back.
    fn start(walks: Box<Inline>) -> Result<CgroupWorker, (std::io::Error, Box<Inline>)> {
        let shared: Shared = Arc::default();
        lock(&shared).max_depth = walks.reader.max_depth();
        let s = shared.clone();
        // Handed over through a slot, so that a thread that could not be
        // started gives them back.
        let handoff = Arc::new(Mutex::new(Some(walks)));
        let h = handoff.clone();
        let spawned = std::thread::Builder::new()
            .name("quietstat-cgroups".into())
            .spawn(move || {
                let taken = h.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(i) = taken {
                    let Inline {
                        mut reader,
                        said_bpf,
                        wake,
                        ..
                    } = *i;
                    // Here a walk that outgrows its rows is loaded again
                    // within the read.
                    reader.set_hand_over(None);
                    run(&s, *reader, said_bpf, wake);
                }
            });
        match spawned {
            Ok(thread) => Ok(CgroupWorker {
                shared,
                thread: Some(thread),
            }),
            Err(e) => {
                let taken = handoff.lock().unwrap_or_else(|e| e.into_inner()).take();
                match taken {
                    Some(walks) => Err((e, walks)),
                    None => unreachable!("a thread that was not started took the reader"),
                }
            }
        }
    }

    /// A walk made elsewhere, to be taken as this worker's.
    fn hand(&self, done: Option<Done>, sample: cgroups::Sample) {
        let mut slot = lock(&self.shared);
        slot.done = done;
        slot.sample = sample;
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

    /// Waits until no walk is asked for or running.
    #[cfg(test)]
    fn wait(&self) {
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

fn run(shared: &Shared, mut reader: cgroups::Reader, mut said_bpf: bool, wake: Wake) {
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
            reader.set_max_depth(slot.max_depth);
            (demand, std::mem::take(&mut slot.sample))
        };
        let done = walk_once(&mut reader, &mut work, &mut said_bpf, demand);
        let mut slot = lock(shared);
        slot.sample = work;
        slot.done = Some(done);
        slot.running = false;
        // A consumer waits for this walk: the sampler commits it now. A
        // scheduled walk waits for the sampler's next wakeup instead.
        // Under the lock: whoever sees the walk done sees its owner woken.
        if demand {
            wake();
        }
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

    /// The fixture's walks on a thread of their own.
    fn worker(wake: impl Fn() + Send + 'static) -> CgroupWorker {
        let CgroupWalks::Inline(i) = CgroupWalks::with_limit(fixture_reader(), usize::MAX, wake)
        else {
            panic!("walks start on the sampler's thread")
        };
        CgroupWorker::start(i).map_err(|(e, _)| e).unwrap()
    }

    fn counter() -> (Arc<AtomicU32>, impl Fn() + Send + 'static) {
        let woken = Arc::new(AtomicU32::new(0));
        let w = woken.clone();
        (woken, move || {
            w.fetch_add(1, Ordering::SeqCst);
        })
    }

    #[test]
    fn a_small_walk_is_made_in_line_and_wakes_nobody() {
        let (woken, wake) = counter();
        let mut walks = Some(CgroupWalks::with_limit(fixture_reader(), usize::MAX, wake));
        let mut sample = cgroups::Sample::default();
        for demand in [false, true, false] {
            walks = walks.map(|w| w.walk(demand));
            let w = walks.as_mut().unwrap();
            assert!(!w.on_thread() && !w.walking() && w.finished());
            let done = w.take(&mut sample).expect("the walk, made at once");
            assert_eq!(done.demand, demand);
            assert!(!sample.cgroups.is_empty());
            assert!(w.take(&mut sample).is_none(), "taken once");
        }
        assert_eq!(woken.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_large_walk_sends_the_next_ones_to_a_thread() {
        let (woken, wake) = counter();
        // Every walk of the fixture is "large" here.
        let walks = CgroupWalks::with_limit(fixture_reader(), 1, wake);
        let mut w = walks.walk(false);
        assert!(w.on_thread());
        let mut sample = cgroups::Sample::default();
        // The walk made in line is taken from the thread's slot.
        let done = w.take(&mut sample).expect("the first walk");
        assert!(!done.demand && !sample.cgroups.is_empty());
        let n = sample.cgroups.len();
        w = w.walk(false);
        let CgroupWalks::Thread(t) = &w else {
            panic!("on a thread")
        };
        t.wait();
        assert_eq!(
            woken.load(Ordering::SeqCst),
            0,
            "a scheduled walk wakes nobody"
        );
        let mut second = cgroups::Sample::default();
        assert!(!w.take(&mut second).expect("the second walk").demand);
        assert_eq!(second.cgroups.len(), n);
    }

    #[test]
    fn a_walk_runs_on_its_own_thread_and_wakes_its_owner_once_done_when_asked_for() {
        let (woken, wake) = counter();
        let worker = worker(wake);
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
        // The next walk reuses the sample handed back, and is on schedule:
        // it wakes nobody.
        worker.begin(false);
        worker.wait();
        let mut second = cgroups::Sample::default();
        let done = worker.take(&mut second).expect("the second walk");
        assert!(!done.demand);
        assert_eq!(second.cgroups.len(), sample.cgroups.len());
        assert_eq!(woken.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_finished_walk_not_taken_holds_off_the_next() {
        let worker = worker(|| {});
        worker.begin(false);
        worker.wait();
        worker.begin(true);
        assert!(!worker.walking(), "no second walk over one not taken");
        let mut sample = cgroups::Sample::default();
        assert!(!worker.take(&mut sample).unwrap().demand);
    }
}
