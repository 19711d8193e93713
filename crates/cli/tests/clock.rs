//! The real agent with its wall clock stepped under it (libfaketime, with
//! the monotonic clock left alone, as an NTP step or an operator's `date
//! -s` would): sampling keeps its rate, and the history keeps its real
//! days and records no false gap.

mod common;

use std::path::Path;
use std::time::Duration;

use common::agent::{Agent, get};
use common::store::{dirs, now_ms, recording_agent, stop};
use common::wait_for;

const LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

fn reads(a: &Agent, source: &str) -> f64 {
    let want = format!("quietstat_source_reads_total{{source=\"{source}\"}} ");
    get(a.addr, "/metrics", None)
        .body
        .lines()
        .find_map(|l| l.strip_prefix(&want)?.parse().ok())
        .unwrap_or(0.0)
}

fn set_offset(file: &Path, offset: &str) {
    std::fs::write(file, format!("{offset}\n")).unwrap();
}

#[test]
fn wall_clock_steps_keep_the_rate_and_the_real_days() {
    if !Path::new(LIB).exists() {
        println!("skipped: libfaketime is not installed (Debian package faketime)");
        return;
    }
    let (_d, store, shm) = dirs();
    let offset = store.with_file_name("offset");
    set_offset(&offset, "+0");
    let cfg = "[store]\nflush_interval = \"200ms\"\n[sources.stat]\ninterval = \"500ms\"\n";
    let start = |offset: &Path| {
        let offset = offset.to_path_buf();
        recording_agent(&store, &shm, cfg, "procfs", move |c| {
            c.env("LD_PRELOAD", LIB)
                .env("FAKETIME_TIMESTAMP_FILE", &offset)
                .env("FAKETIME_NO_CACHE", "1")
                .env("DONT_FAKE_MONOTONIC", "1");
        })
    };
    let a = start(&offset);
    std::thread::sleep(Duration::from_secs(2));
    let today = store::db::day_of(now_ms());
    let today_file = store::db::path_for(&store, &today);
    assert!(wait_for(Duration::from_secs(5), || today_file.exists()));

    // Back an hour: stat goes on at two reads a second.
    set_offset(&offset, "-1h");
    let before = reads(&a, "stat");
    std::thread::sleep(Duration::from_secs(4));
    let during = reads(&a, "stat") - before;
    assert!(
        during >= 6.0,
        "{during} reads of stat in 4 s after the step"
    );

    // Forward 400 days for a few seconds, then back to the real time:
    // today's file stays, the future one is kept out of retention.
    set_offset(&offset, "+400d");
    std::thread::sleep(Duration::from_secs(3));
    set_offset(&offset, "+0");
    std::thread::sleep(Duration::from_secs(2));
    let log = stop(a);
    assert!(
        log.iter()
            .any(|l| l.contains("the wall clock stepped back by 1h")),
        "{log:#?}"
    );
    assert!(
        log.iter().any(|l| l.contains("stepped forward")),
        "{log:#?}"
    );
    assert!(today_file.exists(), "today's real day file was removed");
    let days = store::db::day_files(&store);
    assert!(days.iter().any(|(d, _)| *d > today), "{days:?}");

    // A kill and a restart at the real time: the gap runs from the last
    // real sample, not from 400 days ahead.
    let mut a = start(&offset);
    std::thread::sleep(Duration::from_millis(1500));
    a.proc.signal(libc::SIGKILL);
    assert!(a.proc.wait(Duration::from_secs(10)).is_some());
    // libfaketime's shared memory, which a process killed cannot remove.
    for name in [
        format!("/dev/shm/faketime_shm_{}", a.proc.id()),
        format!("/dev/shm/sem.faketime_sem_{}", a.proc.id()),
    ] {
        let _ = std::fs::remove_file(name);
    }
    let a = start(&offset);
    std::thread::sleep(Duration::from_millis(1500));
    stop(a);
    let h = store::History::open(&store).unwrap();
    let real = now_ms() - 3_600_000 * 2..now_ms();
    for g in h.gaps(0, u64::MAX).unwrap() {
        assert!(
            real.contains(&g.start_ms) && real.contains(&g.end_ms),
            "a gap outside the real last hours: {g:?}"
        );
    }
    let out = common::run(&[
        "report",
        "--store",
        store.to_str().unwrap(),
        "--source",
        "store",
    ]);
    common::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("dated after today"), "{text}");
}
