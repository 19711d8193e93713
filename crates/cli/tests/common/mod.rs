//! What every integration test of the `quietstat` binary shares: starting
//! it, checking that it succeeded, reading its JSON lines, waiting for a
//! condition. Each test file uses some of these, hence the allow.
#![allow(dead_code)]

pub mod agent;
pub mod exposition;
pub mod store;

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
