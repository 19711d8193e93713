//! Exits come back whole from both places they are kept: on the identity
//! row of a process seen in a table, and in the exits blocks of those that
//! were in none (started after the last table, or found in none by a
//! lookup).

use std::path::Path;

use proctable::{Exit, Proc};
use store::History;

fn log(_: String) {}

#[test]
fn exits_of_processes_seen_and_never_seen_in_a_table_read_back_alike() {
    let d = tempfile::tempdir().unwrap();
    let opts = store::Options::private_in(d.path(), "a test's own store", Path::new(""));
    let (mut tap, mut flusher, _) = store::writer::open(opts, log).unwrap();
    let boot_ms = flusher.boot_ms();
    // An hour ago, or two minutes after the boot on a machine up for less
    // (an exit's times are ticks since the boot).
    let t0 = store::writer::now_ms()
        .saturating_sub(3_600_000)
        .max(boot_ms + 120_000)
        / 60_000
        * 60_000;
    let ticks_at = |ms: u64| (ms - boot_ms) / 10;
    let proc = |pid: u32, start_ticks: u64| Proc {
        pid,
        tgid: pid,
        ppid: 1,
        comm: procfs::pid::Comm::new(b"seen"),
        state: 'S',
        start_ticks,
        start_ns: start_ticks * 10_000_000,
        num_threads: 1,
        ..Proc::default()
    };
    let seen_start = ticks_at(t0 - 60_000);
    tap.procs(t0, &[proc(10, seen_start), proc(11, seen_start)]);
    let exit = |pid: u32, start_ticks: u64, end_ms: u64, status: i32| Exit {
        pid,
        ppid: 1,
        comm: procfs::pid::Comm::new(if pid == 11 { b"seen" } else { b"short" }),
        start_ticks,
        start_ns: start_ticks * 10_000_000,
        exit_ns: (end_ms - boot_ms) * 1_000_000,
        utime_ns: u64::from(pid) * 1_000_000,
        maxrss_bytes: 1 << 20,
        exit_status: status,
        ..Default::default()
    };
    tap.exits(
        t0 + 3_000,
        &[
            // In the table.
            exit(11, seen_start, t0 + 2_000, 0),
            // Started after it: in none, no lookup.
            exit(500, ticks_at(t0 + 2_500), t0 + 2_900, 3 << 8),
            // Started before it, yet in none of its tables: a lookup
            // finds no row.
            exit(501, ticks_at(t0 - 500), t0 + 2_950, 9),
        ],
    );
    tap.procs(t0 + 5_000, &[proc(10, seen_start)]);
    assert!(flusher.flush());
    drop((tap, flusher));
    let h = History::open(&d.path().join("store")).unwrap();
    let all = h.exits(0, u64::MAX).unwrap();
    let got: Vec<(u32, &str, u64, i32, u64, bool)> = all
        .iter()
        .map(|e| {
            (
                e.pid,
                e.comm.as_str(),
                e.exit_ms,
                e.status,
                e.utime_ns,
                e.first_ms.is_some(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (11, "seen", t0 + 2_000, 0, 11_000_000, true),
            (500, "short", t0 + 2_900, 3 << 8, 500_000_000, false),
            (501, "short", t0 + 2_950, 9, 501_000_000, false),
        ]
    );
    assert_eq!(all[1].start_ms, Some(boot_ms + ticks_at(t0 + 2_500) * 10));
    // A window finds each where it is kept.
    let w = h.exits(t0 + 2_800, t0 + 2_920).unwrap();
    assert_eq!(w.iter().map(|e| e.pid).collect::<Vec<_>>(), [500]);
}
