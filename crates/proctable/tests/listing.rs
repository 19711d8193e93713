//! A full /proc scan that skips the listing (its own test binary: no other
//! test makes tasks meanwhile). Needs the live /proc of this PID namespace.

use std::process::{Command, Stdio};

use proctable::dir::ProcDir;
use proctable::{Proc, Query};

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

#[test]
fn scans_without_a_listing_see_new_processes_and_drop_gone_ones_and_threads() {
    let mut d = ProcDir::open("/proc", "/sys").unwrap();
    let q = Query::default();
    let mut rows = Vec::new();
    d.snapshot(&q, &mut rows).unwrap();
    assert_eq!(d.skipped_listings(), 0, "the first scan lists /proc");
    d.snapshot(&q, &mut rows).unwrap();
    assert_eq!(d.skipped_listings(), 1, "nothing new: no listing");
    assert_eq!(pids(&rows), listed_now());

    // A new process: its PID is probed, not listed.
    let mut child = Command::new("sleep")
        .arg("30")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let before = d.skipped_listings();
    d.snapshot(&q, &mut rows).unwrap();
    assert!(pids(&rows).contains(&child.id()), "new process missing");
    assert_eq!(d.skipped_listings(), before + 1);

    // Gone again.
    child.kill().unwrap();
    child.wait().unwrap();
    d.snapshot(&q, &mut rows).unwrap();
    assert!(!pids(&rows).contains(&child.id()));

    // A new thread of ours: its TID is probed as a PID, the threads no
    // longer add up, /proc is listed and the thread is not a row.
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
    d.snapshot(&q, &mut rows).unwrap();
    assert!(
        !pids(&rows).contains(&tid),
        "thread {tid} listed as a process"
    );
    assert_eq!(pids(&rows), listed_now());
    tx.send(()).unwrap();
    t.join().unwrap();
}
