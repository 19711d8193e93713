//! The helper threads of a split walk (see [`crate::walk`]): started on the
//! first split walk and kept, each runs one walker per walk, at the same
//! time as the calling thread runs the first. Kept rather than started per
//! walk: a thread's start and end (its stack mapped and unmapped) cost
//! about a quarter of what splitting an 8,000-process walk saves.

use std::io;
use std::os::fd::RawFd;
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

#[derive(Default)]
struct State {
    job: Option<(RawFd, Args)>,
    started: bool,
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
    thread: Option<JoinHandle<()>>,
}

fn helper_loop(shared: &Shared) {
    loop {
        let mut st = shared.lock();
        while st.job.is_none() && !st.quit {
            st = shared.wait(st);
        }
        let Some((fd, args)) = st.job.take() else {
            return;
        };
        st.started = true;
        shared.cv.notify_all();
        drop(st);
        let r = test_run(fd, &args);
        shared.lock().done = Some(r);
        shared.cv.notify_all();
    }
}

/// Helper threads, started as walks need them.
#[derive(Default)]
pub(crate) struct Helpers {
    helpers: Vec<Helper>,
}

impl Helpers {
    /// Runs `prog_fd` with each of `args` at once: the first on this
    /// thread, the others on helpers. Returns each run's return value, in
    /// the order of `args`.
    pub(crate) fn run(&mut self, prog_fd: RawFd, args: &[Args]) -> io::Result<Vec<u32>> {
        let Some((mine, theirs)) = args.split_first() else {
            return Ok(Vec::new());
        };
        while self.helpers.len() < theirs.len() {
            let shared = Arc::new(Shared {
                state: Mutex::new(State::default()),
                cv: Condvar::new(),
            });
            let s = shared.clone();
            let thread = std::thread::Builder::new()
                .name("qs-walker".into())
                .spawn(move || helper_loop(&s))?;
            self.helpers.push(Helper {
                shared,
                thread: Some(thread),
            });
        }
        let helpers = &self.helpers[..theirs.len()];
        for (h, a) in helpers.iter().zip(theirs) {
            let mut st = h.shared.lock();
            st.job = Some((prog_fd, *a));
            st.started = false;
            st.done = None;
            h.shared.cv.notify_all();
        }
        // Each helper is running before this walker starts: the walk is
        // not preempted, so a helper woken onto this CPU would otherwise
        // wait out this walker, and the walks would run one after the
        // other. Waiting here lets it run, and the scheduler then finds
        // this thread a CPU of its own.
        for h in helpers {
            let mut st = h.shared.lock();
            while !st.started {
                st = h.shared.wait(st);
            }
        }
        let mut ret = vec![test_run(prog_fd, mine)];
        // Every helper is done before any error is returned: one still
        // running would report into the next walk.
        for h in helpers {
            let mut st = h.shared.lock();
            loop {
                if let Some(done) = st.done.take() {
                    ret.push(done);
                    break;
                }
                st = h.shared.wait(st);
            }
        }
        ret.into_iter().collect()
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
