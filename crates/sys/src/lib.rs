//! Operating-system helpers that several crates need, in one leaf crate, so
//! that no crate depends on another only to borrow a helper.
//!
//! - [`mono_ns`], [`unix_ns`]: the clocks every timestamp is taken from;
//!   [`thread_cpu_ns`]: what the calling thread has run.
//! - [`page_size`]: the size of a memory page, from `sysconf`;
//!   [`release_free_memory`]: the heap freed by a large piece of work,
//!   handed back; [`fix_malloc_thresholds`]: freed large blocks and arena
//!   tops returned at once.
//! - [`fd_limit`], [`open_fds`]: this process's descriptor limit and use.
//! - [`pin_current_thread`]: CPU affinity.
//! - [`statfs`]: a filesystem's figures and type.
//! - [`child`]: child processes that die with their starter and are reaped.
//! - [`dir`]: kernel directories and files read by descriptor (`openat`,
//!   `getdents64`, one `pread` at offset 0).
//! - [`Error`], [`ErrorKind`]: a failure's kind and what failed, for the
//!   library crates without an error enum of their own.
//! - `bpf` (feature `bpf`): loading BPF programs with signals blocked, and
//!   errors with their causes on one line.

#[cfg(feature = "bpf")]
pub mod bpf;
pub mod child;
pub mod cputime;
pub mod dbus;
pub mod dir;
pub mod error;
pub mod file;

pub use error::{Error, ErrorKind};

use std::sync::OnceLock;

/// CLOCK_MONOTONIC in nanoseconds (vDSO: no system call). `Instant` reads
/// the same clock on Linux, so the two can be compared.
#[inline]
pub fn mono_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in nanoseconds since the epoch.
pub fn unix_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// CPU time the calling thread has run, in nanoseconds
/// (CLOCK_THREAD_CPUTIME_ID: a system call, some hundreds of ns). Unlike
/// wall time around a piece of work, it leaves out the time the thread
/// waited for a CPU while others ran.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CLOCK_BOOTTIME in nanoseconds: time since boot, suspend included; what
/// really passed, whatever the wall clock did.
pub fn boot_ns() -> u64 {
    clock_ns(libc::CLOCK_BOOTTIME)
}

/// Eight random bytes from the kernel (`getrandom`): names no one can
/// guess, ids that do not repeat.
pub fn random_u64() -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    // SAFETY: b is a valid 8-byte buffer.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != 8 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(u64::from_ne_bytes(b))
}

/// The soft limit on this process's file descriptors (RLIMIT_NOFILE);
/// `None` when it cannot be read.
pub fn fd_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills a valid struct.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0).then_some(lim.rlim_cur)
}

/// The file descriptors this process has open (`/proc/self/fd`, the
/// listing's own included); `None` when it cannot be listed.
pub fn open_fds() -> Option<u64> {
    std::fs::read_dir("/proc/self/fd")
        .ok()
        .map(|d| d.count() as u64)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; the clock ids are always supported.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Bytes of the heap in use, as the allocator counts them (glibc's
/// `mallinfo2`: the main arena's and every thread arena's allocated
/// chunks, and the mapped blocks); `None` where the C library is not
/// glibc.
pub fn heap_in_use() -> Option<u64> {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: mallinfo2 takes no argument and returns a plain struct.
        let m = unsafe { libc::mallinfo2() };
        Some((m.uordblks + m.hblkhd) as u64)
    }
    #[cfg(not(target_env = "gnu"))]
    None
}

/// Hands the heap freed so far back to the system (`malloc_trim`): glibc
/// keeps each thread's freed memory in its arena otherwise, so a thread
/// that once did a large piece of work (loading BPF, parsing a large
/// textfile directory, encoding a large exposition) would keep the agent
/// resident at that peak. Nothing where the C library is not glibc.
pub fn release_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free memory; no pointer is held.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Gives back a reused buffer's room once a burst that grew it is over:
/// when it has room for more than four times what it holds (and `floor`
/// elements), it keeps room for twice that. A buffer refilled to the same
/// size each time keeps its room; one a burst grew once does not keep it
/// for the rest of the process's life.
pub fn trim_capacity<T>(v: &mut Vec<T>, floor: usize) {
    let keep = v.len().max(floor);
    if v.capacity() > keep.saturating_mul(4) {
        v.shrink_to(keep.saturating_mul(2));
    }
}

/// Fixes glibc's mmap and trim thresholds at 256 KiB, for a process that
/// stays resident. By default freeing a mapped block raises both with its
/// size (up to 32 and 64 MiB): once a thread has parsed the kernel's BTF
/// (vectors of megabytes), its arena keeps that much freed memory at its
/// top, resident, and [`release_free_memory`] cannot return a thread
/// arena's top. Fixed, a block of 256 KiB or more is mapped apart and
/// unmapped when freed, and an arena's free top beyond 256 KiB is given
/// back at the next free. Call before the process starts its threads.
/// Nothing where the C library is not glibc.
pub fn fix_malloc_thresholds() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes the allocator's parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 10);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 10);
    }
}

/// Bytes in a memory page (`sysconf(_SC_PAGESIZE)`, read once): 4096 on
/// x86-64, 16384 or 65536 on some arm64 and ppc64 kernels, which is why no
/// caller may assume 4096. Falls back to 4096 if sysconf fails.
pub fn page_size() -> u64 {
    static PAGE: OnceLock<u64> = OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 { page as u64 } else { 4096 }
    })
}

/// Pins the calling thread (and so every thread it creates later) to
/// `cpus`; CPUs beyond `CPU_SETSIZE` are left out.
pub fn pin_current_thread(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET's index is checked
    // against CPU_SETSIZE first.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if (c as usize) < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c as usize, &mut set);
            }
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// statfs(2) of `path`. A path with a NUL byte is EINVAL, as the kernel
/// would say of a name it cannot take.
pub fn statfs(path: &std::path::Path) -> std::io::Result<libc::statfs> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: an all-zero `struct statfs` is valid output space.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `s` is writable for the call.
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_buffer_a_burst_grew_gives_its_room_back_and_a_steady_one_keeps_it() {
        let mut v: Vec<u64> = Vec::with_capacity(100_000);
        v.extend(0..1000);
        super::trim_capacity(&mut v, 256);
        assert!(
            v.capacity() >= 2000 && v.capacity() < 4000,
            "{}",
            v.capacity()
        );
        let cap = v.capacity();
        v.extend(0..1000);
        super::trim_capacity(&mut v, 256);
        assert_eq!(v.capacity(), cap, "within four times: kept");
        v.clear();
        super::trim_capacity(&mut v, 256);
        assert!(v.capacity() <= 512, "{}", v.capacity());
    }

    use super::*;

    #[test]
    fn page_size_is_a_power_of_two_and_clocks_advance() {
        assert!(page_size().is_power_of_two() && page_size() >= 4096);
        let a = mono_ns();
        let i = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = mono_ns();
        assert!(b - a >= 2_000_000);
        // Instant and mono_ns read one clock.
        assert!(i.elapsed().as_nanos() as u64 <= mono_ns() - a);
        assert!(unix_ns() > 1_600_000_000_000_000_000);
    }
}
