//! Idle processes for benchmarks, cleaned up whatever happens.
//!
//! A spawner child starts a new process group and forks the idle processes
//! into it; each sleeps in pause(). Cleanup is layered: dropping [`Idle`]
//! kills the whole group by its id and reaps the spawner; SIGINT, SIGTERM and
//! SIGHUP to the benchmark kill the group before exiting; and every spawned
//! process has PR_SET_PDEATHSIG set, so if the benchmark is killed outright
//! the spawner dies with it and the idle processes die with the spawner.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use sys::Error;

/// The process group to kill on a signal (0: none).
static GROUP: AtomicI32 = AtomicI32::new(0);
/// kernel.pid_max to restore on a signal (0: none raised).
static OLD_PID_MAX: AtomicI32 = AtomicI32::new(0);

const PID_MAX: &str = "/proc/sys/kernel/pid_max";

/// Writes `v` to kernel.pid_max with async-signal-safe calls only.
fn write_pid_max(v: i32) {
    let mut buf = [0u8; 12];
    let mut i = buf.len();
    let mut n = v.max(0) as u32;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // SAFETY: open, write and close are async-signal-safe; the path is a
    // NUL-terminated literal.
    unsafe {
        let fd = libc::open(c"/proc/sys/kernel/pid_max".as_ptr(), libc::O_WRONLY);
        if fd >= 0 {
            libc::write(fd, buf[i..].as_ptr().cast(), buf.len() - i);
            libc::close(fd);
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    let group = GROUP.load(Ordering::SeqCst);
    let old = OLD_PID_MAX.load(Ordering::SeqCst);
    // SAFETY: kill, signal and raise are async-signal-safe.
    unsafe {
        if group > 0 {
            libc::kill(-group, libc::SIGKILL);
        }
        if old > 0 {
            write_pid_max(old);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

fn catch_signals() {
    // SAFETY: installing a handler that only makes async-signal-safe calls.
    unsafe {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// kernel.pid_max raised for a benchmark's processes, restored on drop and
/// on SIGINT, SIGTERM or SIGHUP.
pub struct PidMax {
    old: Option<i32>,
}

impl PidMax {
    /// Raises kernel.pid_max to twice `n` plus the processes present, when
    /// it is lower (pids are handed out upward, wrapping at the limit).
    pub fn room_for(n: usize) -> Result<PidMax, Error> {
        let old: i32 = std::fs::read_to_string(PID_MAX)
            .map_err(|e| Error::io(PID_MAX, e))?
            .trim()
            .parse()
            .map_err(|e: std::num::ParseIntError| Error::malformed(PID_MAX, None, e.to_string()))?;
        let existing = std::fs::read_dir("/proc").map(|d| d.count()).unwrap_or(0);
        let want = (n * 2 + existing + 4096).min(4 << 20) as i32;
        if old >= want {
            return Ok(PidMax { old: None });
        }
        OLD_PID_MAX.store(old, Ordering::SeqCst);
        catch_signals();
        std::fs::write(PID_MAX, want.to_string())
            .map_err(|e| Error::io(format!("raising {PID_MAX} to {want} (needs root)"), e))?;
        Ok(PidMax { old: Some(old) })
    }
}

impl Drop for PidMax {
    fn drop(&mut self) {
        if let Some(old) = self.old {
            write_pid_max(old);
            OLD_PID_MAX.store(0, Ordering::SeqCst);
        }
    }
}

/// Why fewer processes than asked for can be started, from the machine's
/// limits; `None` when `n` fits.
pub fn cap(n: usize, existing: usize) -> (usize, Option<String>) {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
    };
    let mut limit = n;
    let mut why = None;
    let headroom = 512;
    if let Some(pid_max) = read("/proc/sys/kernel/pid_max") {
        let fit = pid_max.saturating_sub(existing + headroom);
        if fit < limit {
            limit = fit;
            why = Some(format!("kernel.pid_max is {pid_max}"));
        }
    }
    if let Some(threads_max) = read("/proc/sys/kernel/threads-max") {
        let fit = threads_max.saturating_sub(existing + headroom);
        if fit < limit {
            limit = fit;
            why = Some(format!("kernel.threads-max is {threads_max}"));
        }
    }
    // An idle forked process costs about 100 KiB of kernel memory and page
    // tables; allow 256 KiB each and keep a quarter of what is available.
    let avail_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<usize>().ok())
    });
    if let Some(kib) = avail_kib {
        let fit = kib * 3 / 4 / 256;
        if fit < limit {
            limit = fit;
            why = Some(format!("MemAvailable is {} MiB", kib / 1024));
        }
    }
    (limit, why.filter(|_| limit < n))
}

/// `n` idle processes, alive until dropped.
pub struct Idle {
    spawner: libc::pid_t,
    count: usize,
}

impl Idle {
    /// Starts `n` idle processes and waits until all are running.
    pub fn start(n: usize) -> io::Result<Idle> {
        let mut fds = [0; 2];
        // SAFETY: fds has room for two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let (rd, wr) = (fds[0], fds[1]);
        // Orphans of the spawner come to us, so Drop can reap every one.
        // SAFETY: a process attribute of our own.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
        // SAFETY: the child only calls async-signal-safe functions and exits
        // with _exit.
        let spawner = unsafe { libc::fork() };
        if spawner < 0 {
            return Err(io::Error::last_os_error());
        }
        if spawner == 0 {
            // SAFETY: async-signal-safe calls only, in the forked child.
            unsafe {
                libc::close(rd);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                libc::setpgid(0, 0);
                let mut started: u32 = 0;
                for _ in 0..n {
                    let pid = libc::fork();
                    if pid == 0 {
                        libc::close(wr);
                        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                        loop {
                            libc::pause();
                        }
                    }
                    if pid < 0 {
                        break;
                    }
                    started += 1;
                }
                let bytes = started.to_ne_bytes();
                libc::write(wr, bytes.as_ptr().cast(), 4);
                loop {
                    libc::pause();
                }
            }
        }
        // SAFETY: closing our copy of the write end.
        unsafe { libc::close(wr) };
        GROUP.store(spawner, Ordering::SeqCst);
        // The spawner calls setpgid itself; set it here too so the group
        // exists before we could need to kill it.
        // SAFETY: plain syscalls on our own child.
        unsafe {
            libc::setpgid(spawner, spawner);
        }
        catch_signals();
        // From here on, dropping `idle` cleans up.
        let mut idle = Idle { spawner, count: 0 };
        let mut buf = [0u8; 4];
        // SAFETY: reading 4 bytes into buf.
        let got = unsafe { libc::read(rd, buf.as_mut_ptr().cast(), 4) };
        // SAFETY: closing our read end.
        unsafe { libc::close(rd) };
        if got != 4 {
            return Err(io::Error::other("the spawner died before reporting"));
        }
        let started = u32::from_ne_bytes(buf) as usize;
        if started < n {
            return Err(io::Error::other(format!(
                "fork failed after {started} of {n} processes"
            )));
        }
        idle.count = started;
        Ok(idle)
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// The spawner's PID (the process group's id).
    pub fn group(&self) -> libc::pid_t {
        self.spawner
    }
}

impl Drop for Idle {
    fn drop(&mut self) {
        // SAFETY: killing the group we created; the spawner's orphans are
        // reparented to us (child subreaper), so waiting on the group reaps
        // the spawner and every idle process, leaving no zombie behind.
        unsafe {
            libc::kill(-self.spawner, libc::SIGKILL);
            libc::kill(self.spawner, libc::SIGKILL);
            let mut status = 0;
            while libc::waitpid(-self.spawner, &mut status, 0) > 0 {}
        }
        GROUP.store(0, Ordering::SeqCst);
    }
}
