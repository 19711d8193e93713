//! A full /proc scan that skips the listing (its own test binary: no other
//! test makes tasks meanwhile). Needs the live /proc of this PID namespace.
//!
//! Any task made or ended anywhere on the host changes what a scan may
//! skip, and the host makes them when it will: each check below is made on
//! a window in which /proc/loadavg's task total and last PID show that
//! nothing but the test's own act changed the host's tasks, and a window
//! in which something else did is tried again (at most [`TRIES`] times; a
//! host that never stands still for two scans fails the test, saying so).

use std::process::{Command, Stdio};

use proctable::dir::ProcDir;
use proctable::{Proc, Query};

/// Windows tried before the host is called too busy to test on.
const TRIES: usize = 200;

fn pids(rows: &[Proc]) -> Vec<u32> {
    let mut v: Vec<u32> = rows.iter().map(|p| p.pid).collect();
    v.sort_unstable();
    v
}

/// The processes a fresh listing finds now.
fn listed_now() -> Vec<u32> {
    let mut fresh = ProcDir::open("/proc", "/sys").unwrap();
    let mut rows = Vec::new();
    fresh.snapshot(&Query::default(), &mut rows).unwrap();
    pids(&rows)
}

/// The host's tasks and its last PID, from /proc/loadavg: a task made or
/// ended anywhere changes them.
fn tasks_now() -> (u64, u32) {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap();
    let mut w = text.split_whitespace().skip(3);
    let total = w
        .next()
        .unwrap()
        .split_once('/')
        .unwrap()
        .1
        .parse()
        .unwrap();
    (total, w.next().unwrap().parse().unwrap())
}

/// The threads of `rows`: what the host's total must be for a scan to
/// trust it saw every task.
fn threads(rows: &[Proc]) -> u64 {
    rows.iter().map(|p| u64::from(p.num_threads)).sum()
}

#[test]
fn scans_without_a_listing_see_new_processes_and_drop_gone_ones_and_threads() {
    let mut d = ProcDir::open("/proc", "/sys").unwrap();
    let q = Query::default();
    let mut rows = Vec::new();
    d.snapshot(&q, &mut rows).unwrap();
    assert_eq!(d.skipped_listings(), 0, "the first scan lists /proc");

    // Nothing new: a scan after one that saw the same tasks does not list,
    // and finds what a listing does.
    let still = (0..TRIES).any(|_| {
        let t0 = tasks_now();
        d.snapshot(&q, &mut rows).unwrap();
        let t1 = tasks_now();
        let skipped = d.skipped_listings();
        d.snapshot(&q, &mut rows).unwrap();
        let listed = listed_now();
        let t2 = tasks_now();
        if !(t0 == t1 && t1 == t2 && t2.0 == threads(&rows)) {
            return false;
        }
        assert_eq!(d.skipped_listings(), skipped + 1, "nothing new: no listing");
        assert_eq!(pids(&rows), listed);
        true
    });
    assert!(still, "the host's tasks never stood still for two scans");

    // A new process: its PID is probed, not listed.
    let mut last = None;
    let still = (0..TRIES).any(|_| {
        let t0 = tasks_now();
        d.snapshot(&q, &mut rows).unwrap();
        let t1 = tasks_now();
        let mut child = Command::new("sleep")
            .arg("30")
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let t2 = tasks_now();
        let skipped = d.skipped_listings();
        d.snapshot(&q, &mut rows).unwrap();
        let t3 = tasks_now();
        assert!(pids(&rows).contains(&child.id()), "new process missing");
        // Ours the one task made, on the next PID (not past a wrap).
        let only_ours = t0 == t1 && t2 == (t1.0 + 1, t1.1 + 1) && t2.1 == child.id() && t2 == t3;
        if only_ours && t3.0 == threads(&rows) {
            assert_eq!(d.skipped_listings(), skipped + 1, "a new PID is probed");
        }
        child.kill().unwrap();
        child.wait().unwrap();
        last = Some(child.id());
        only_ours && t3.0 == threads(&rows)
    });
    assert!(still, "the host's tasks never stood still around a spawn");

    // Gone again.
    d.snapshot(&q, &mut rows).unwrap();
    assert!(!pids(&rows).contains(&last.unwrap()));

    // A new thread of ours: its TID is probed as a PID, the threads no
    // longer add up, /proc is listed and the thread is not a row.
    let still = (0..TRIES).any(|_| {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            let _ = rx.recv();
        });
        let tid = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .max()
            .unwrap();
        let t0 = tasks_now();
        d.snapshot(&q, &mut rows).unwrap();
        let listed = listed_now();
        let t1 = tasks_now();
        assert!(
            !pids(&rows).contains(&tid),
            "thread {tid} listed as a process"
        );
        if t0 == t1 {
            assert_eq!(pids(&rows), listed);
        }
        tx.send(()).unwrap();
        t.join().unwrap();
        t0 == t1
    });
    assert!(still, "the host's tasks never stood still around a thread");
}
