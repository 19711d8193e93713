//! SIGHUP (reload), SIGTERM and SIGINT (stop): the handlers set flags the
//! sampler looks at when its futex wait returns.

use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) static STOP: AtomicBool = AtomicBool::new(false);
pub(crate) static RELOAD: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe: two atomic stores. The sampler's futex wait returns
    // EINTR (no SA_RESTART) and it looks at the flags.
    if sig == libc::SIGHUP {
        RELOAD.store(true, Ordering::SeqCst);
    } else {
        STOP.store(true, Ordering::SeqCst);
    }
}

const SIGNALS: [libc::c_int; 3] = [libc::SIGHUP, libc::SIGTERM, libc::SIGINT];

fn sigset() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise the set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

pub(crate) fn mask_signals(how: libc::c_int) {
    let set = sigset();
    // SAFETY: set is initialised.
    unsafe { libc::pthread_sigmask(how, &set, std::ptr::null_mut()) };
}

/// Asks a running agent (in this process) to stop, as SIGTERM does.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

pub(crate) fn install_handlers() {
    for s in SIGNALS {
        // SAFETY: a handler that only stores atomics; no SA_RESTART so the
        // sampler's futex wait returns.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(s, &sa, std::ptr::null_mut());
        }
    }
}
