//! The size cap holds when most of what is recorded is exits: a busy
//! machine's short-lived processes (a build, a shell loop), never in a
//! table, are kept in exits blocks, which the cap removes with the
//! oldest blocks.

use std::path::Path;

use proctable::{Exit, Proc};
use store::History;

fn log(_: String) {}

#[test]
fn a_flood_of_exits_stays_under_the_cap_and_the_newest_stay() {
    let d = tempfile::tempdir().unwrap();
    let cap: u64 = 1 << 20;
    let opts = store::Options {
        max_bytes: cap,
        ..store::Options::private_in(d.path(), "a test's own store", Path::new("/nonexistent"))
    };
    let (mut tap, mut flusher, stats) = store::writer::open(opts, log).unwrap();
    let boot_ms = flusher.boot_ms();
    // An hour ago, or, on a machine up for less, after its boot (an exit's
    // times are ticks since the boot): then partly ahead of the clock. Not
    // across a UTC midnight, whose day after would be a future day, the
    // first the cap removes.
    const SPAN: u64 = 1_200_000;
    let mut t0 = store::writer::now_ms()
        .saturating_sub(3_600_000)
        .max(boot_ms + 60_000)
        / 60_000
        * 60_000;
    if t0 / 86_400_000 != (t0 + SPAN) / 86_400_000 {
        t0 = (t0 + SPAN) / 86_400_000 * 86_400_000;
    }
    let table: Vec<Proc> = (1..=50u32)
        .map(|pid| Proc {
            pid,
            tgid: pid,
            ppid: 1,
            comm: procfs::pid::Comm::new(b"idle"),
            state: 'S',
            start_ticks: u64::from(pid),
            num_threads: 1,
            ..Proc::default()
        })
        .collect();
    let mut pid = 300u32;
    let mut exits = Vec::new();
    let mut max_seen = 0;
    // 20 minutes at 500 exits a second: 600,000 exits.
    for sec in 0..SPAN / 1000 {
        let ts = t0 + sec * 1000;
        exits.clear();
        for _ in 0..500 {
            pid = if pid >= 32_767 { 300 } else { pid + 1 };
            let ticks = (ts - boot_ms) / 10;
            exits.push(Exit {
                pid,
                ppid: 1,
                comm: procfs::pid::Comm::new(b"sh"),
                start_ticks: ticks - 1,
                start_ns: (ticks - 1) * 10_000_000,
                exit_ns: ticks * 10_000_000,
                ..Default::default()
            });
        }
        tap.exits(ts, &exits);
        if sec % 5 == 0 {
            tap.procs(ts, &table);
        }
        if sec % 15 == 14 {
            assert!(flusher.flush());
            max_seen = max_seen.max(
                stats
                    .bytes_on_disk
                    .load(std::sync::atomic::Ordering::Relaxed),
            );
        }
    }
    drop((tap, flusher));
    assert!(
        max_seen > cap / 2,
        "the cap was never approached: {max_seen}"
    );
    assert!(
        max_seen <= cap,
        "{max_seen} bytes on disk against a cap of {cap}"
    );
    // The last minute's exits are all there; the first minutes' are gone,
    // and no more than what the cap needed: a minute and more of exits.
    let h = History::open(&d.path().join("store")).unwrap();
    // (Exit times are in ticks of 10 ms since boot: each second's exits
    // end up to 9 ms before it, whatever the boot's millisecond.)
    let last = h.exits(t0 + 1_139_990, t0 + 1_200_000).unwrap();
    assert_eq!(last.len(), 30_000);
    assert!(h.exits(t0, t0 + 60_000).unwrap().is_empty());
    assert!(h.exits(0, u64::MAX).unwrap().len() >= 30_000);
}
