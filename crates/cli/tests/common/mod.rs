//! What every integration test of the `quietstat` binary shares: starting
//! it, checking that it succeeded, reading its JSON lines, waiting for a
//! condition. Each test file uses some of these, hence the allow.
#![allow(dead_code)]

pub mod agent;
pub mod e2e;
pub mod exposition;
pub mod prom;
pub mod remote;
pub mod store;
pub mod veth;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_quietstat");

/// A command running the binary under test.
pub fn quietstat() -> Command {
    Command::new(BIN)
}

/// Runs the binary with `args` to completion.
pub fn run(args: &[&str]) -> Output {
    quietstat().args(args).output().expect("running quietstat")
}

/// Panics with what it printed on stderr unless `out` is a success.
#[track_caller]
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Its stdout as one JSON value per line.
pub fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Waits for `child` at most `limit`: a hang fails the test (naming
/// `what`), and the child is killed.
pub fn finish_within(child: std::process::Child, limit: Duration, what: &str) -> Output {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: our own child's pid.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("{what} still running after {limit:?}");
        }
    }
}

/// Makes a FIFO at `p` with `mode`.
pub fn mkfifo(p: &std::path::Path, mode: libc::mode_t) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), mode) }, 0);
}

/// Runs `cmd` with at most `n` file descriptors (RLIMIT_NOFILE, set in the
/// child before exec).
pub fn limit_fds(cmd: &mut Command, n: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; it runs in the child before
    // exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// True once `cond` holds, polling every 50 ms; its last answer at `limit`.
pub fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}

/// Waits out a UTC midnight due within `span`: the history keeps a file a
/// UTC day (`store::db::day_of`), and a test that names today's file or reads back what it
/// recorded as one day must run within one. Returns at once on every
/// other instant of the day.
pub fn clear_of_midnight(span: Duration) {
    let now = ::store::writer::now_ms();
    let today = ::store::db::day_start_ms(&::store::db::day_of(now)).unwrap();
    let left = today + 86_400_000 - now;
    if u128::from(left) <= span.as_millis() {
        std::thread::sleep(Duration::from_millis(left + 1_000));
    }
}
