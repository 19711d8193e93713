//! Cgroup walks through the real writer: each walk comes back as it was
//! given (from the day file's chain, and from the journal after a kill),
//! and the cgroups made and removed between walks are rows of `cgroup`.

use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use cgroups::{Cgroup, Figure, Figures, Sample};
use store::History;

fn log(_: String) {}

fn opts(root: &Path) -> store::Options {
    store::Options::private_in(root, "a test's own store", Path::new("/nonexistent"))
}

fn cg(path: &str, id: u64, cpu: u64, mem: Option<u64>) -> Cgroup {
    let mut figures = Figures::default();
    figures.set(Figure::CpuUsageNs, cpu);
    if let Some(m) = mem {
        figures.set(Figure::MemoryBytes, m);
    }
    Cgroup {
        path: path.into(),
        id,
        depth: path.split('/').filter(|p| !p.is_empty()).count() as u16,
        figures,
    }
}

/// Walk `i`: 200 idle services, one busy one, and `/job-i.scope` made at
/// walk i (removed at walk i+2).
fn walk(i: u64) -> Sample {
    let mut cgroups = vec![cg("/", 1, 1_000_000 * i, None)];
    cgroups.push(cg("/busy.service", 2, 500_000_000 * i, Some(4096 * i)));
    for s in 0..200 {
        cgroups.push(cg(&format!("/idle-{s:03}.service"), 100 + s, 7, Some(8192)));
    }
    for j in i.saturating_sub(1)..=i {
        cgroups.push(cg(&format!("/job-{j:02}.scope"), 1000 + j, j, None));
    }
    cgroups.sort_by(|a, b| a.path.cmp(&b.path));
    Sample {
        cgroups,
        ..Sample::default()
    }
}

fn read_back(store: &Path) -> Vec<(u64, Sample)> {
    let h = History::open(store).unwrap();
    let mut out = Vec::new();
    let bad = h
        .cgroups(0, u64::MAX, &mut |ts, d| out.push((ts, d.sample(ts))))
        .unwrap();
    assert_eq!(bad, 0);
    out
}

#[test]
fn walks_and_their_made_and_removed_cgroups_come_back_after_flushes_and_a_kill() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("store");
    // Noon yesterday (UTC): the walks' half hour lies in one day file,
    // whenever the test runs.
    let t0 = (store::writer::now_ms() - 86_400_000) / 86_400_000 * 86_400_000 + 43_200_000;
    // Every 4 minutes: a new chain every 10 minutes of wall clock.
    let ts = |i: u64| t0 + i * 240_000;
    let (mut tap, mut flusher, stats) = store::writer::open(opts(d.path()), log).unwrap();
    for i in 0..6 {
        tap.cgroups(ts(i), &walk(i));
        assert!(flusher.flush());
        // The writer's time on the walk, for the cgroups source's budget,
        // taken once.
        assert!(stats.take_cgroups_cpu_ns() > 0, "walk {i}");
        assert_eq!(stats.take_cgroups_cpu_ns(), 0);
    }
    for i in 6..8 {
        tap.cgroups(ts(i), &walk(i));
    }
    // Killed: the last two only in the journal.
    drop((tap, flusher));
    let got = read_back(&store);
    assert_eq!(got.len(), 8);
    for (i, (t, s)) in got.iter().enumerate() {
        assert_eq!(*t, ts(i as u64));
        assert_eq!(s.cgroups, walk(i as u64).cgroups, "walk {i}");
    }
    // Idle cgroups cost nothing after a chain's first walk.
    let db = store.join(store::db::day_of(ts(0)) + store::db::SUFFIX);
    let c = rusqlite::Connection::open(&db).unwrap();
    let sizes: Vec<(bool, i64)> = c
        .prepare("SELECT key, length(body) FROM block WHERE kind = 3 ORDER BY start_ms")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(sizes.len(), 6, "{sizes:?}");
    let keys = sizes.iter().filter(|s| s.0).count();
    assert!((2..=3).contains(&keys), "a chain per 10 minutes: {sizes:?}");
    let delta = sizes.iter().filter(|s| !s.0).map(|s| s.1).max().unwrap();
    let key = sizes.iter().filter(|s| s.0).map(|s| s.1).min().unwrap();
    assert!(delta * 5 < key, "{sizes:?}");
    // A restart writes the journal's walks once; the next walks follow.
    let (mut tap, mut flusher, _) = store::writer::open(opts(d.path()), log).unwrap();
    assert!(flusher.flush());
    tap.cgroups(ts(8), &walk(8));
    assert!(flusher.flush());
    drop((tap, flusher));
    let got = read_back(&store);
    assert_eq!(got.len(), 9);
    assert_eq!(got[8].1.cgroups, walk(8).cgroups);
    // Made: /job-01 at walk 1 ... (job-00 was there at the first walk);
    // removed: job-j at walk j+2. None made at the restart.
    let h = History::open(&store).unwrap();
    let changes = h.cgroup_changes(0, u64::MAX).unwrap();
    let want: Vec<(u64, bool, String)> = (1..=8)
        .flat_map(|i| {
            let mut v = vec![(ts(i), true, format!("/job-{i:02}.scope"))];
            if i >= 2 {
                v.insert(0, (ts(i), false, format!("/job-{:02}.scope", i - 2)));
            }
            v
        })
        .collect();
    let got: Vec<(u64, bool, String)> = changes
        .iter()
        .map(|c| (c.ts_ms, c.made, c.path.clone()))
        .collect();
    assert_eq!(got, want);
    // The store says what the cgroups cost.
    let usage = h.usage().unwrap();
    assert!(
        usage
            .iter()
            .any(|d| d.sources.iter().any(|s| s.0 == "cgroups" && s.1 == 9)),
        "{usage:?}"
    );
}

/// A reader with a cursor gets every walk as one from the start does,
/// going on where it stopped (inside a block, or at the end).
#[test]
fn a_cursor_goes_on_where_a_read_stopped_and_gives_every_walk_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("store");
    // Noon yesterday (UTC): one day file, one chain, whenever it runs.
    let t0 = (store::writer::now_ms() - 86_400_000) / 86_400_000 * 86_400_000 + 43_200_000;
    let ts = |i: u64| t0 + i * 10_000;
    let (mut tap, mut flusher, _) = store::writer::open(opts(d.path()), log).unwrap();
    for i in 0..12 {
        tap.cgroups(ts(i), &walk(i));
        if i % 3 == 2 {
            assert!(flusher.flush());
        }
    }
    drop((tap, flusher));
    let h = History::open(&store).unwrap();
    let mut cur = store::read::Cursor::default();
    let mut got = Vec::new();
    for (from, stop_after) in [(0, 4), (4, 2), (6, usize::MAX)] {
        let mut n = 0;
        h.cgroups_from(&mut cur, ts(from), u64::MAX, &mut |t, dec| {
            let i = (t - t0) / 10_000;
            let mut want = walk(i);
            want.unix_ns = t * 1_000_000;
            assert_eq!(dec.sample(t).cgroups, want.cgroups, "walk {i}");
            got.push(t);
            n += 1;
            n < stop_after
        })
        .unwrap();
    }
    assert_eq!(got, (0..12).map(ts).collect::<Vec<_>>());
    assert_eq!(cur.resumed(), 2);
}

/// The writer thread is handed the agent's first sample at once, then one
/// flush with the first sample of each flush interval.
#[test]
fn the_first_sample_is_written_at_once_then_one_flush_an_interval() {
    let d = tempfile::tempdir().unwrap();
    let mut o = opts(d.path());
    // One interval for the whole test, whenever it runs.
    o.flush = Duration::from_secs(86_400 * 365);
    let (mut tap, mut writer, stats) = store::start(o, log).unwrap();
    let flushes = |n: u64| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while stats.flushes.load(Relaxed) < n {
            assert!(Instant::now() < deadline, "{n} flushes not done");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    // The thread's own first flush: what a previous run left (nothing).
    flushes(1);
    let t = store::writer::now_ms();
    tap.cgroups(t, &walk(0));
    writer.sampled(t);
    flushes(2);
    assert_eq!(read_back(&d.path().join("store")).len(), 1);
    // Within the interval: none.
    tap.cgroups(t + 1, &walk(1));
    writer.sampled(t + 1);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(stats.flushes.load(Relaxed), 2);
    // The next interval's first sample: everything before it.
    let next = t + 86_400_000 * 365;
    tap.cgroups(next, &walk(2));
    writer.sampled(next);
    flushes(3);
    drop(writer);
    let got = read_back(&d.path().join("store"));
    assert_eq!(
        got.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        [t, t + 1, next]
    );
}
