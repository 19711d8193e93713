//! The helper threads of a split snapshot (the BPF walk, see
//! [`crate::bpf::walk`], and the procfs backend's reads): started on the
//! first split snapshot and kept, they take the walk's stretches in turn with
//! the calling thread, and then parts of the decoding. A stretch a helper
//! stalls in (its vCPU taken away by the host) the calling thread walks
//! again and does not wait for ([`Helpers::run_backed`]): such a part owns
//! what it uses. Kept rather than started per walk: a thread's start and
//! end (its stack mapped and unmapped) cost about a quarter of what
//! splitting an 8,000-process walk saves.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Work split in parts run at once: `job(j)` does part `j` and returns what
/// the caller collects for it.
pub(crate) type Job<'a> = dyn Fn(usize) -> io::Result<u32> + Sync + 'a;

/// A job a helper may still be running after the caller returned: it owns
/// what it uses.
pub(crate) type OwnedJob = dyn Fn(usize) -> io::Result<u32> + Send + Sync;

/// A job's address with its borrow's lifetime erased, to hand to a kept
/// thread. Sound because [`Helpers::run`] waits for every helper to finish
/// its part before it returns or unwinds: the job outlives every use.
#[derive(Clone, Copy)]
struct JobPtr(*const Job<'static>);

// SAFETY: the job is Sync, so calling it from another thread is sound; see
// JobPtr for its lifetime.
unsafe impl Send for JobPtr {}

/// What a helper is handed: a borrowed job the caller waits for, or an
/// owned one it may leave running.
#[derive(Clone)]
enum JobRef {
    Borrowed(JobPtr),
    Owned(Arc<OwnedJob>),
}

#[derive(Default)]
struct State {
    /// The helper's thread id, set when it starts.
    tid: Option<libc::pid_t>,
    job: Option<(usize, JobRef)>,
    /// From the job's handing over to its end.
    busy: bool,
    done: Option<io::Result<u32>>,
    quit: bool,
}

struct Shared {
    state: Mutex<State>,
    cv: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A helper never panics holding the lock; take it over if so.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.cv.wait(guard).unwrap_or_else(|e| e.into_inner())
    }
}

struct Helper {
    shared: Arc<Shared>,
    tid: libc::pid_t,
    thread: Option<JoinHandle<()>>,
}

impl Helper {
    fn idle(&self) -> bool {
        !self.shared.lock().busy
    }

    /// Hands `job`'s part `part` over; the helper must be idle.
    fn hand(&self, part: usize, job: JobRef) {
        let mut st = self.shared.lock();
        st.job = Some((part, job));
        st.busy = true;
        st.done = None;
        self.shared.cv.notify_all();
    }
}

/// Runs `job(part)`, a panic turned into an error.
fn call(job: &(dyn Fn(usize) -> io::Result<u32> + Sync), part: usize) -> io::Result<u32> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(part)))
        .unwrap_or_else(|_| Err(io::Error::other("a walker thread's part panicked")))
}

fn helper_loop(shared: &Shared) {
    // SAFETY: gettid has no preconditions.
    shared.lock().tid = Some(unsafe { libc::gettid() });
    shared.cv.notify_all();
    loop {
        let mut st = shared.lock();
        while st.job.is_none() && !st.quit {
            st = shared.wait(st);
        }
        let Some((part, job)) = st.job.take() else {
            return;
        };
        drop(st);
        let r = match job {
            // SAFETY: Helpers::run does not return (nor unwind) before
            // this part is reported done below (JobPtr).
            JobRef::Borrowed(ptr) => call(unsafe { &*ptr.0 }, part),
            JobRef::Owned(job) => call(&*job, part),
        };
        let mut st = shared.lock();
        st.done = Some(r);
        st.busy = false;
        drop(st);
        shared.cv.notify_all();
    }
}

/// Helper threads, started as walks need them.
#[derive(Default)]
pub(crate) struct Helpers {
    helpers: Vec<Helper>,
}

/// The parts handed to helpers, collected as they finish; on drop (also
/// when this thread's own part unwinds) it waits for every one: a part
/// still running borrows the caller's job, and would report into the next
/// run.
struct Pending<'h> {
    /// The helpers not yet waited for.
    helpers: Vec<&'h Helper>,
    done: Vec<io::Result<u32>>,
}

impl Pending<'_> {
    fn finish(&mut self) {
        for h in self.helpers.drain(..) {
            let mut st = h.shared.lock();
            while st.busy {
                st = h.shared.wait(st);
            }
            self.done.push(
                st.done
                    .take()
                    .unwrap_or_else(|| Err(io::Error::other("no result"))),
            );
        }
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

/// What the threads of [`Helpers::run_backed`] did, shared with helpers
/// that may outlive the call.
struct Tally {
    next: AtomicUsize,
    t0: Instant,
    /// Per part: when it started, in nanoseconds from t0 plus one (0: not
    /// yet); whether it is done; its value.
    started: Vec<AtomicU64>,
    done: Vec<AtomicBool>,
    values: Vec<AtomicU32>,
    error: Mutex<Option<io::Error>>,
    progress: Mutex<()>,
    cv: Condvar,
}

impl Tally {
    /// Takes parts of `job` until none is left, sleeping `stall` first in
    /// each (tests: a CPU taken away mid-part); returns the longest one
    /// this thread ran.
    fn take(&self, job: &OwnedJob, stall: Option<Duration>) -> Duration {
        let mut longest = Duration::ZERO;
        loop {
            let part = self.next.fetch_add(1, Ordering::Relaxed);
            if part >= self.done.len() {
                return longest;
            }
            let start = Instant::now();
            let ns = start.duration_since(self.t0).as_nanos() as u64;
            self.started[part].store(ns + 1, Ordering::Release);
            if let Some(stall) = stall {
                self.progressed();
                std::thread::sleep(stall);
            }
            match call(job, part) {
                Ok(v) => self.values[part].store(v, Ordering::Relaxed),
                Err(e) => {
                    let mut err = self.error.lock().unwrap_or_else(|e| e.into_inner());
                    err.get_or_insert(e);
                }
            }
            longest = longest.max(start.elapsed());
            self.done[part].store(true, Ordering::Release);
            self.progressed();
        }
    }

    /// Wakes the calling thread of [`Helpers::run_backed`] to look again.
    fn progressed(&self) {
        let _g = self.progress.lock().unwrap_or_else(|e| e.into_inner());
        self.cv.notify_all();
    }

    /// When part `part` started, if it has.
    fn started(&self, part: usize) -> Option<Instant> {
        match self.started[part].load(Ordering::Acquire) {
            0 => None,
            ns => Some(self.t0 + Duration::from_nanos(ns - 1)),
        }
    }
}

/// A part of [`Helpers::run_backed`] runs this much longer than the longest
/// the calling thread ran before the caller runs it again: an outlier,
/// such as a vCPU the host took away mid-part.
const BACKUP_AFTER_LONGEST: u32 = 2;

/// And at least this long.
const BACKUP_AFTER_MIN: Duration = Duration::from_micros(200);

/// What [`Helpers::run_backed`] returns: each part's value, in part order,
/// and the part the calling thread ran again (its value is the backup's).
#[derive(Debug)]
pub(crate) struct Backed {
    pub values: Vec<u32>,
    pub backed_up: Option<usize>,
}

impl Helpers {
    /// Idle helpers for `n` parts: the idle ones first, then new ones while
    /// there are fewer than `n` in all; none replaces a busy one (a part
    /// left running by [`Helpers::run_backed`]), so there may be fewer.
    fn idle(&mut self, n: usize) -> io::Result<Vec<&Helper>> {
        while self.helpers.len() < n {
            let shared = Arc::new(Shared {
                state: Mutex::new(State::default()),
                cv: Condvar::new(),
            });
            let s = shared.clone();
            let thread = std::thread::Builder::new()
                .name("qs-helper".into())
                .spawn(move || helper_loop(&s))?;
            let tid = {
                let mut st = shared.lock();
                loop {
                    if let Some(tid) = st.tid {
                        break tid;
                    }
                    st = shared.wait(st);
                }
            };
            self.helpers.push(Helper {
                shared,
                tid,
                thread: Some(thread),
            });
        }
        let idle: Vec<&Helper> = self.helpers.iter().filter(|h| h.idle()).take(n).collect();
        keep_off_this_cpu(&idle);
        Ok(idle)
    }

    /// Waits until no helper runs a part left running by
    /// [`Helpers::run_backed`]: its walker writes into arrays the next
    /// walk reuses.
    pub(crate) fn wait_idle(&self) {
        for h in &self.helpers {
            let mut st = h.shared.lock();
            while st.busy {
                st = h.shared.wait(st);
            }
        }
    }

    /// Runs `job`'s `parts` parts at once: part 0 on this thread, the
    /// others on idle helpers; parts no helper is idle for run on this
    /// thread after its own. Returns each part's value, in part order, or
    /// the first error once every part is done.
    pub(crate) fn run(&mut self, parts: usize, job: &Job<'_>) -> io::Result<Vec<u32>> {
        if parts == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: only the lifetime is erased; see JobPtr.
        let ptr = JobPtr(unsafe {
            std::mem::transmute::<*const Job<'_>, *const Job<'static>>(job as *const Job<'_>)
        });
        let helpers = self.idle(parts - 1)?;
        let handed = helpers.len();
        let mut pending = Pending {
            helpers,
            done: Vec::with_capacity(parts - 1),
        };
        for (k, h) in pending.helpers.iter().enumerate() {
            h.hand(k + 1, JobRef::Borrowed(ptr));
        }
        let mine = job(0);
        let rest: Vec<io::Result<u32>> = (handed + 1..parts).map(job).collect();
        pending.finish();
        std::iter::once(mine)
            .chain(pending.done.drain(..))
            .chain(rest)
            .collect()
    }

    /// Runs `job`'s `parts` parts on `threads` threads at once (this one
    /// and helpers), each taking the next part not yet taken until none is
    /// left: a thread that starts late or runs slow (its CPU shared with
    /// the host's other work) takes fewer parts, the others more. Returns
    /// each part's value, in part order, or the first error once every
    /// thread is done (a thread stops taking parts at its first error).
    pub(crate) fn run_shared(
        &mut self,
        threads: usize,
        parts: usize,
        job: &Job<'_>,
    ) -> io::Result<Vec<u32>> {
        let next = AtomicUsize::new(0);
        let values: Vec<AtomicU32> = (0..parts).map(|_| AtomicU32::new(0)).collect();
        self.run(threads.clamp(1, parts.max(1)), &|_| {
            loop {
                let part = next.fetch_add(1, Ordering::Relaxed);
                if part >= parts {
                    return Ok(0);
                }
                values[part].store(job(part)?, Ordering::Relaxed);
            }
        })?;
        // Every thread is done: run() waited for each under its lock.
        Ok(values.into_iter().map(AtomicU32::into_inner).collect())
    }

    /// As [`Helpers::run_shared`], but a part a helper runs for far longer
    /// than the parts this thread ran (more than [`BACKUP_AFTER_LONGEST`]
    /// times the longest, its CPU taken away mid-part) is run again by this
    /// thread through `backup(part)`, once per call, and the call returns
    /// without waiting for the helper: its part runs on with what `job`
    /// owns, and [`Helpers::wait_idle`] waits for it. `backup` must not
    /// touch what `job(part)` writes. With `stall` (tests), helpers sleep
    /// that long in each part before running it, and this thread takes
    /// parts only once a helper has taken one.
    pub(crate) fn run_backed(
        &mut self,
        threads: usize,
        parts: usize,
        job: Arc<OwnedJob>,
        backup: Option<&Job<'_>>,
        stall: Option<Duration>,
    ) -> io::Result<Backed> {
        let tally = Arc::new(Tally {
            next: AtomicUsize::new(0),
            t0: Instant::now(),
            started: (0..parts).map(|_| AtomicU64::new(0)).collect(),
            done: (0..parts).map(|_| AtomicBool::new(false)).collect(),
            values: (0..parts).map(|_| AtomicU32::new(0)).collect(),
            error: Mutex::new(None),
            progress: Mutex::new(()),
            cv: Condvar::new(),
        });
        let helpers = self.idle(threads.clamp(1, parts.max(1)) - 1)?;
        let takes: Arc<OwnedJob> = {
            let (tally, job) = (tally.clone(), job.clone());
            Arc::new(move |_| {
                tally.take(&*job, stall);
                Ok(0)
            })
        };
        for h in &helpers {
            h.hand(0, JobRef::Owned(takes.clone()));
        }
        if stall.is_some() && !helpers.is_empty() {
            // Tests: a helper holds a part before this thread takes any,
            // however late the scheduler wakes it, so that a stalled part
            // is there to run again.
            let mut g = tally.progress.lock().unwrap_or_else(|e| e.into_inner());
            while tally.next.load(Ordering::Relaxed) == 0 {
                g = tally.cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
        }
        let after = (tally.take(&*job, None) * BACKUP_AFTER_LONGEST).max(BACKUP_AFTER_MIN);
        let mut backed: Option<(usize, io::Result<u32>)> = None;
        // When this thread first saw a part taken but not started.
        let mut seen: Vec<Option<Instant>> = vec![None; parts];
        let mut g = tally.progress.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            let running = (0..parts)
                .filter(|&p| !tally.done[p].load(Ordering::Acquire))
                .filter(|&p| backed.as_ref().is_none_or(|(b, _)| *b != p))
                .map(|p| (p, tally.started(p).unwrap_or(*seen[p].get_or_insert(now))))
                .min_by_key(|&(_, at)| at);
            let Some((part, at)) = running else {
                break;
            };
            let Some(backup) = backup.filter(|_| backed.is_none()) else {
                g = tally.cv.wait(g).unwrap_or_else(|e| e.into_inner());
                continue;
            };
            let deadline = at + after;
            if now < deadline {
                g = tally
                    .cv
                    .wait_timeout(g, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
            drop(g);
            backed = Some((part, call(backup, part)));
            g = tally.progress.lock().unwrap_or_else(|e| e.into_inner());
        }
        drop(g);
        if let Some(e) = tally.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(e);
        }
        let mut values: Vec<u32> = tally
            .values
            .iter()
            .map(|v| v.load(Ordering::Relaxed))
            .collect();
        let backed_up = match backed {
            Some((part, r)) => {
                values[part] = r?;
                Some(part)
            }
            None => None,
        };
        Ok(Backed { values, backed_up })
    }
}

/// How many threads (and so, with CPUs free, CPUs) a snapshot is split
/// between: the BPF walk's stretches (process mode only), the procfs
/// backend's reads (either mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// One per CPU this thread may run on, one per so many processes at
    /// most ([`crate::bpf::MIN_PER_WALKER`] for a walk,
    /// [`crate::dir::MIN_PER_READER`] for procfs), up to [`MAX_THREADS`]:
    /// an agent confined to housekeeping CPUs reads on those only.
    Auto,
    /// This many (1 to [`MAX_THREADS`]), whatever the table's size.
    Fixed(usize),
}

/// The most threads a snapshot is split between.
pub const MAX_THREADS: usize = 15;

impl Threads {
    /// How many threads to split `procs` processes between, given
    /// `min_per_thread` processes per thread for `Auto`: 1 to
    /// [`MAX_THREADS`].
    pub(crate) fn count(self, procs: u64, min_per_thread: u64) -> usize {
        match self {
            Threads::Fixed(n) => n,
            Threads::Auto => allowed_cpus().min((procs / min_per_thread) as usize),
        }
        .clamp(1, MAX_THREADS)
    }
}

/// How many CPUs this thread may run on.
fn allowed_cpus() -> usize {
    // SAFETY: CPU_COUNT reads the set.
    allowed_cpu_set().map_or(1, |set| unsafe { libc::CPU_COUNT(&set) }.max(1) as usize)
}

/// The CPUs this thread may run on.
pub(crate) fn allowed_cpu_set() -> Option<libc::cpu_set_t> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity
    // writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) == 0).then_some(set)
    }
}

/// Lets `helpers` run on this thread's CPUs but the one it is on now. A
/// walk runs with preemption off: a helper woken onto this CPU would wait
/// out this thread's walk (and this thread, woken onto a helper's, the
/// helper's). Traced on this machine's two CPUs while this thread waited
/// for its helper to start, the scheduler put both on one CPU in 26 of 118
/// split walks (8,000 and 30,000 processes), leaving the other idle; the
/// walks then ran one after the other. Set before every run: it
/// is a sleeping thread's mask (no migration), and this thread may have
/// moved. Where this thread has one CPU, the helpers share it. Best
/// effort: a failure leaves the mask as it was.
fn keep_off_this_cpu(helpers: &[&Helper]) {
    // SAFETY: sched_getcpu has no preconditions.
    let here = unsafe { libc::sched_getcpu() };
    let Some(mut set) = allowed_cpu_set() else {
        return;
    };
    if here < 0 || (here as usize) >= libc::CPU_SETSIZE as usize {
        return;
    }
    // SAFETY: here is within the set's size; CPU_COUNT only reads it.
    unsafe {
        libc::CPU_CLR(here as usize, &mut set);
        if libc::CPU_COUNT(&set) == 0 {
            return;
        }
    }
    for h in helpers {
        // SAFETY: set is a valid cpu_set_t of the size given; tid names a
        // thread of this process (kept until Helpers is dropped).
        unsafe { libc::sched_setaffinity(h.tid, size_of::<libc::cpu_set_t>(), &set) };
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        for h in &self.helpers {
            h.shared.lock().quit = true;
            h.shared.cv.notify_all();
        }
        for h in &mut self.helpers {
            if let Some(t) = h.thread.take() {
                let _ = t.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI32;

    fn count(set: &libc::cpu_set_t) -> usize {
        // SAFETY: CPU_COUNT only reads the set.
        unsafe { libc::CPU_COUNT(set) as usize }
    }

    #[test]
    fn helpers_run_every_part_off_the_callers_cpu() {
        let allowed = allowed_cpu_set().unwrap();
        let mut helpers = Helpers::default();
        let cpus: Vec<AtomicI32> = (0..3).map(|_| AtomicI32::new(-1)).collect();
        for _ in 0..20 {
            let ret = helpers
                .run(3, &|j| {
                    // SAFETY: sched_getcpu has no preconditions.
                    cpus[j].store(unsafe { libc::sched_getcpu() }, Ordering::Relaxed);
                    Ok(j as u32 * 10)
                })
                .unwrap();
            assert_eq!(ret, [0, 10, 20]);
            if count(&allowed) < 2 {
                continue; // one CPU: the helpers share it
            }
            for h in &helpers.helpers {
                // SAFETY: a zeroed set is valid.
                let mut mask: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                // SAFETY: the kernel writes at most the set's size; h.tid is
                // a live thread of this process.
                let r = unsafe {
                    libc::sched_getaffinity(h.tid, size_of::<libc::cpu_set_t>(), &mut mask)
                };
                assert_eq!(r, 0);
                // One CPU fewer than the caller's: the one it was on.
                assert_eq!(count(&mask), count(&allowed) - 1);
            }
            for (j, cpu) in cpus.iter().enumerate().skip(1) {
                let cpu = cpu.load(Ordering::Relaxed);
                // SAFETY: a zeroed set is valid.
                let mut mask: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                // SAFETY: as above.
                unsafe {
                    libc::sched_getaffinity(
                        helpers.helpers[j - 1].tid,
                        size_of::<libc::cpu_set_t>(),
                        &mut mask,
                    )
                };
                // SAFETY: cpu is a CPU number sched_getcpu returned.
                let on = unsafe { libc::CPU_ISSET(cpu as usize, &mask) };
                assert!(on, "part {j} on CPU {cpu}");
            }
        }
    }

    #[test]
    fn shared_parts_run_once_each_and_a_slow_thread_takes_fewer() {
        let mut helpers = Helpers::default();
        // SAFETY: gettid has no preconditions.
        let caller = unsafe { libc::gettid() };
        let runs: Vec<AtomicI32> = (0..40).map(|_| AtomicI32::new(0)).collect();
        let by_helper = AtomicI32::new(0);
        let values = helpers
            .run_shared(2, runs.len(), &|part| {
                runs[part].fetch_add(1, Ordering::Relaxed);
                // SAFETY: as above.
                if unsafe { libc::gettid() } != caller {
                    by_helper.fetch_add(1, Ordering::Relaxed);
                    // A helper 200 times slower than this thread.
                    std::thread::sleep(std::time::Duration::from_millis(200));
                } else {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Ok(part as u32 * 3)
            })
            .unwrap();
        assert_eq!(values, (0..40).map(|p| p * 3).collect::<Vec<u32>>());
        assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
        // The caller takes the parts the helper is too slow for (it runs
        // 40 in about 40 ms; the helper one in 200).
        let helper = by_helper.load(Ordering::Relaxed);
        assert!(helper <= 2, "the slow helper ran {helper} of 40 parts");
        // More threads than parts: one part each at most, none lost.
        assert_eq!(helpers.run_shared(3, 2, &|p| Ok(p as u32)).unwrap(), [0, 1]);
        assert!(helpers.run_shared(2, 0, &|_| Ok(9)).unwrap().is_empty());
        // An error comes back once every thread is done.
        let r = helpers.run_shared(2, 10, &|p| {
            if p == 4 {
                Err(io::Error::other("part 4"))
            } else {
                Ok(0)
            }
        });
        assert_eq!(r.unwrap_err().to_string(), "part 4");
    }

    #[test]
    fn a_stalled_part_is_run_again_here_and_not_waited_for() {
        let mut helpers = Helpers::default();
        // SAFETY: gettid has no preconditions.
        let caller = unsafe { libc::gettid() };
        let stalled = Arc::new(AtomicI32::new(-1));
        let finished = Arc::new(AtomicBool::new(false));
        let job: Arc<OwnedJob> = {
            let (stalled, finished) = (stalled.clone(), finished.clone());
            Arc::new(move |part| {
                // SAFETY: as above.
                let on_helper = unsafe { libc::gettid() } != caller;
                if on_helper
                    && stalled
                        .compare_exchange(-1, part as i32, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                {
                    // The helper's first part stalls for 2 s.
                    std::thread::sleep(Duration::from_secs(2));
                    finished.store(true, Ordering::Release);
                } else {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(part as u32 * 3)
            })
        };
        let backed = helpers
            .run_backed(
                2,
                20,
                job.clone(),
                Some(&|part| Ok(1000 + part as u32)),
                None,
            )
            .unwrap();
        // Returned long before the stalled part ended.
        assert!(!finished.load(Ordering::Acquire));
        let p = stalled.load(Ordering::Acquire);
        assert!(p >= 0, "the helper took no part");
        assert_eq!(backed.backed_up, Some(p as usize));
        for (part, &v) in backed.values.iter().enumerate() {
            let want = if part == p as usize {
                1000 + part as u32
            } else {
                part as u32 * 3
            };
            assert_eq!(v, want, "part {part}");
        }
        // The next run finds the helper busy and runs without it; waiting
        // for it lets the stalled part end.
        let r = helpers.run_shared(2, 4, &|p| Ok(p as u32)).unwrap();
        assert_eq!(r, [0, 1, 2, 3]);
        assert!(!finished.load(Ordering::Acquire));
        helpers.wait_idle();
        assert!(finished.load(Ordering::Acquire));
        // No stall now (a part run again for a slow sleep gives the same
        // value); an error comes back.
        let backed = helpers
            .run_backed(2, 6, job, Some(&|part| Ok(part as u32 * 3)), None)
            .unwrap();
        assert_eq!(backed.values, [0, 3, 6, 9, 12, 15]);
        let failing: Arc<OwnedJob> = Arc::new(|part| {
            if part == 4 {
                Err(io::Error::other("part 4"))
            } else {
                Ok(0)
            }
        });
        let r = helpers.run_backed(2, 10, failing, None, None);
        assert_eq!(r.unwrap_err().to_string(), "part 4");
    }

    #[test]
    fn a_panicking_part_is_an_error_after_every_part_is_done() {
        let mut helpers = Helpers::default();
        let done = AtomicI32::new(0);
        let r = helpers.run(3, &|j| {
            if j == 1 {
                panic!("part 1");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            done.fetch_add(1, Ordering::Relaxed);
            Ok(0)
        });
        assert!(r.is_err());
        assert_eq!(done.load(Ordering::Relaxed), 2);
        // The helpers are still there for the next run.
        assert_eq!(helpers.run(3, &|j| Ok(j as u32)).unwrap(), [0, 1, 2]);
    }
}
