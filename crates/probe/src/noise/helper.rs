//! Deliberately noisy processes, for tests and demonstrations of `noise`.

use std::path::Path;

use std::time::Duration;
use sys::Error;

/// Reads `path` (open, read to the end, close) every millisecond for
/// `duration` from the calling thread pinned to `from`: run under `noise
/// --pid` to see whether reading that file disturbs other CPUs.
pub fn read_loop(from: u32, path: &Path, duration: Duration) -> Result<u64, Error> {
    crate::pin_to(from)?;
    let end = std::time::Instant::now() + duration;
    let mut buf = Vec::with_capacity(1 << 20);
    let mut n = 0;
    while std::time::Instant::now() < end {
        buf.clear();
        let mut f = std::fs::File::open(path).map_err(|e| Error::file(path, e))?;
        std::io::Read::read_to_end(&mut f, &mut buf).map_err(|e| Error::file(path, e))?;
        n += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(n)
}

/// A deliberately noisy process for tests and demonstrations: one thread
/// spins on `target` while the calling thread, on `from`, issues
/// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) every millisecond, which
/// sends an IPI to every CPU running a thread of this process: `target`.
pub fn noisy_helper(from: u32, target: u32, duration: Duration) -> Result<u64, Error> {
    const REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;
    const PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    // SAFETY: membarrier takes no pointers.
    if unsafe { libc::syscall(libc::SYS_membarrier, REGISTER_PRIVATE_EXPEDITED, 0, 0) } != 0 {
        return Err(Error::kernel(
            "membarrier register",
            std::io::Error::last_os_error(),
        ));
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    let spinner = std::thread::spawn(move || -> Result<(), Error> {
        crate::pin_to(target)?;
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            std::hint::spin_loop();
        }
        Ok(())
    });
    crate::pin_to(from)?;
    let end = std::time::Instant::now() + duration;
    let mut sent = 0;
    while std::time::Instant::now() < end {
        // SAFETY: as above.
        unsafe { libc::syscall(libc::SYS_membarrier, PRIVATE_EXPEDITED, 0, 0) };
        sent += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spinner
        .join()
        .map_err(|_| Error::other("spinner panicked"))??;
    Ok(sent)
}
