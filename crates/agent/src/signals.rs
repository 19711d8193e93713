//! SIGHUP (reload), SIGTERM and SIGINT (stop): the handlers set flags the
//! sampler looks at when its futex wait returns.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};

pub(crate) static STOP: AtomicBool = AtomicBool::new(false);
pub(crate) static RELOAD: AtomicBool = AtomicBool::new(false);
/// The futex word the sampler sleeps on (null when it is not running).
static WAKE: AtomicPtr<AtomicU32> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe: atomic stores, an atomic add and a futex wake. A
    // signal that lands while the sampler reads (not yet in its futex wait)
    // changes the word it is about to wait on, so the wait returns at once
    // instead of at the next deadline; one that lands during the wait
    // interrupts it (no SA_RESTART). Either way it then looks at the flags.
    if sig == libc::SIGHUP {
        RELOAD.store(true, Ordering::SeqCst);
    } else {
        STOP.store(true, Ordering::SeqCst);
    }
    wake();
}

fn wake() {
    let w = WAKE.load(Ordering::SeqCst);
    if !w.is_null() {
        // SAFETY: set from a word the sampler keeps alive while it runs, and
        // cleared before it stops.
        let word = unsafe { &*w };
        word.fetch_add(1, Ordering::SeqCst);
        shm::futex_wake(word, 1);
    }
}

/// The sampler's futex word, for the handlers to wake; `None` when it stops.
pub(crate) fn set_wake_word(word: Option<&AtomicU32>) {
    let p = word.map_or(std::ptr::null_mut(), |w| {
        w as *const AtomicU32 as *mut AtomicU32
    });
    WAKE.store(p, Ordering::SeqCst);
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
    wake();
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
