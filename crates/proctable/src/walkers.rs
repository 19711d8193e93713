//! The helper threads of a split walk (see [`crate::walk`]): started on the
//! first split walk and kept, they take the walk's stretches in turn with
//! the calling thread, and then parts of the decoding. Kept rather than
//! started per walk: a thread's start and end (its stack mapped and
//! unmapped) cost about a quarter of what splitting an 8,000-process walk
//! saves.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// `BPF_PROG_TEST_RUN`'s part of `union bpf_attr` (include/uapi/linux/bpf.h).
#[repr(C)]
#[derive(Default)]
struct TestRunAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    pad: u32,
}

const BPF_PROG_TEST_RUN: libc::c_long = 10;

/// The arguments a raw tracepoint program is run with: up to 12.
pub(crate) type Args = [u64; 12];

/// Runs the raw tracepoint program `prog_fd` once on this thread's CPU with
/// `args` as its context (no CPU given: no other CPU is interrupted) and
/// returns what it returned.
pub(crate) fn test_run(prog_fd: RawFd, args: &Args) -> io::Result<u32> {
    let mut attr = TestRunAttr {
        prog_fd: prog_fd as u32,
        ctx_size_in: size_of::<Args>() as u32,
        ctx_in: args.as_ptr() as u64,
        ..TestRunAttr::default()
    };
    // SAFETY: attr is a valid BPF_PROG_TEST_RUN attribute of the size
    // given; ctx_in points at size_of::<Args>() readable bytes.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_PROG_TEST_RUN,
            &mut attr as *mut TestRunAttr,
            size_of::<TestRunAttr>() as u32,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(attr.retval)
}

/// Work split in parts run at once: `job(j)` does part `j` and returns what
/// the caller collects for it.
pub(crate) type Job<'a> = dyn Fn(usize) -> io::Result<u32> + Sync + 'a;

/// A job's address with its borrow's lifetime erased, to hand to a kept
/// thread. Sound because [`Helpers::run`] waits for every helper to finish
/// its part before it returns or unwinds: the job outlives every use.
#[derive(Clone, Copy)]
struct JobPtr(*const Job<'static>);

// SAFETY: the job is Sync, so calling it from another thread is sound; see
// JobPtr for its lifetime.
unsafe impl Send for JobPtr {}

#[derive(Default)]
struct State {
    /// The helper's thread id, set when it starts.
    tid: Option<libc::pid_t>,
    job: Option<(usize, JobPtr)>,
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
        // SAFETY: Helpers::run does not return (nor unwind) before this
        // part is reported done below (JobPtr).
        let job = unsafe { &*job.0 };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(part)))
            .unwrap_or_else(|_| Err(io::Error::other("a walker thread's part panicked")));
        shared.lock().done = Some(r);
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
    helpers: &'h [Helper],
    done: Vec<io::Result<u32>>,
}

impl Pending<'_> {
    fn finish(&mut self) {
        while let Some((h, rest)) = self.helpers.split_first() {
            let mut st = h.shared.lock();
            loop {
                if let Some(done) = st.done.take() {
                    self.done.push(done);
                    break;
                }
                st = h.shared.wait(st);
            }
            self.helpers = rest;
        }
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Helpers {
    /// Runs `job`'s `parts` parts at once: part 0 on this thread, the
    /// others on helpers. Returns each part's value, in part order, or the
    /// first error once every part is done.
    pub(crate) fn run(&mut self, parts: usize, job: &Job<'_>) -> io::Result<Vec<u32>> {
        if parts == 0 {
            return Ok(Vec::new());
        }
        while self.helpers.len() < parts - 1 {
            let shared = Arc::new(Shared {
                state: Mutex::new(State::default()),
                cv: Condvar::new(),
            });
            let s = shared.clone();
            let thread = std::thread::Builder::new()
                .name("qs-walker".into())
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
        // SAFETY: only the lifetime is erased; see JobPtr.
        let ptr = JobPtr(unsafe {
            std::mem::transmute::<*const Job<'_>, *const Job<'static>>(job as *const Job<'_>)
        });
        let helpers = &self.helpers[..parts - 1];
        keep_off_this_cpu(helpers);
        let mut pending = Pending {
            helpers,
            done: Vec::with_capacity(parts - 1),
        };
        for (k, h) in helpers.iter().enumerate() {
            let mut st = h.shared.lock();
            st.job = Some((k + 1, ptr));
            st.done = None;
            h.shared.cv.notify_all();
        }
        let mine = job(0);
        pending.finish();
        std::iter::once(mine)
            .chain(pending.done.drain(..))
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
fn keep_off_this_cpu(helpers: &[Helper]) {
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
                // SAFETY: a zeroed set is valid; the kernel writes at most
                // its size; h.tid is a live thread of this process.
                let mut mask: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                let r = unsafe {
                    libc::sched_getaffinity(h.tid, size_of::<libc::cpu_set_t>(), &mut mask)
                };
                assert_eq!(r, 0);
                // One CPU fewer than the caller's: the one it was on.
                assert_eq!(count(&mask), count(&allowed) - 1);
            }
            for (j, cpu) in cpus.iter().enumerate().skip(1) {
                let cpu = cpu.load(Ordering::Relaxed);
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
                assert!(
                    unsafe { libc::CPU_ISSET(cpu as usize, &mask) },
                    "part {j} on CPU {cpu}"
                );
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
