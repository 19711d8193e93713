//! Helpers for loading BPF programs (with the `bpf` feature).

/// An error with its chain of causes, on one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(cause) = src {
        // Some errors print their source in their own message as well:
        // say each part once.
        let c = cause.to_string();
        if !s.contains(&c) {
            s.push_str(": ");
            s.push_str(&c);
        }
        src = cause.source();
    }
    s
}

/// Runs a program load with every signal blocked in this thread, and again
/// if the verifier still gave up because a signal was pending (EAGAIN), as
/// libbpf does, up to five attempts. The verifier stops at any pending
/// signal: a process whose children exit gets SIGCHLD at any time, and a
/// 10 ms verification under a stream of them would never finish. Blocked
/// signals stay pending and are delivered when the mask is restored.
pub fn load_retrying(
    mut load: impl FnMut() -> std::result::Result<(), aya::programs::ProgramError>,
) -> std::result::Result<(), aya::programs::ProgramError> {
    let mut attempt = 1;
    loop {
        let result = with_signals_blocked(&mut load);
        match result {
            Err(aya::programs::ProgramError::LoadError { io_error, .. })
                if io_error.raw_os_error() == Some(libc::EAGAIN) && attempt < 5 =>
            {
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// Runs `f` with every signal blocked in this thread, restoring the mask
/// after.
pub fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigset_t is plain data filled by sigfillset; pthread_sigmask
    // only changes this thread's mask, restored below.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let blocked = libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old) == 0;
        let out = f();
        if blocked {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::chain;

    #[derive(Debug, thiserror::Error)]
    #[error("map error: {0}")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("failed to create map `m`")]
    struct Inner(#[source] std::io::Error);

    #[test]
    fn each_cause_is_said_once() {
        let e = Outer(Inner(std::io::Error::from_raw_os_error(libc::EPERM)));
        assert_eq!(
            chain(&e),
            "map error: failed to create map `m`: Operation not permitted (os error 1)"
        );
    }
}
