//! The journal holds a whole process table, then what changed: births,
//! changed rows and ends. What it gives back, before and after a flush,
//! after a kill and through a restart, is every table as it was given.

use std::path::Path;

use proctable::Proc;
use store::History;
use store::journal::{Kind, Snapshot};

fn log(_: String) {}

fn opts(root: &Path) -> store::Options {
    store::Options::private_in(root, "a test's own store", Path::new("/nonexistent"))
}

fn proc(pid: u32, cpu: u64) -> Proc {
    Proc {
        pid,
        tgid: pid,
        ppid: 1,
        comm: procfs::pid::Comm::new(format!("p{pid}").as_bytes()),
        state: 'S',
        start_ticks: 100 + u64::from(pid),
        start_ns: 1_000_000_000 + u64::from(pid),
        utime_ns: cpu * 10_000_000,
        num_threads: 1,
        rss_bytes: 4 << 20,
        ..Proc::default()
    }
}

/// 300 processes; at table `i` pid 1000+i is born, pid 1000+i-3 ends, and
/// pid 7 uses CPU. The walk's order is reversed on odd tables.
fn table(i: u64) -> Vec<Proc> {
    let mut t: Vec<Proc> = (1..=300)
        .map(|p| proc(p, if p == 7 { i } else { 1 }))
        .collect();
    let lo = i.saturating_sub(2);
    t.extend((lo..=i).map(|j| proc(1000 + j as u32, 1)));
    if i % 2 == 1 {
        t.reverse();
    }
    t
}

/// (pid, user CPU) of every process of each table in [from, to].
fn read_back(store: &Path, from: u64, to: u64) -> Vec<(u64, Vec<(u32, u64)>)> {
    let h = History::open(store).unwrap();
    let mut out = Vec::new();
    h.procs(from, to, &mut |ts, s| {
        let mut rows: Vec<(u32, u64)> = s.procs().iter().map(|p| (p.pid, p.utime_ns)).collect();
        rows.sort_unstable();
        out.push((ts, rows));
    })
    .unwrap();
    out
}

fn expected(i: u64) -> Vec<(u32, u64)> {
    let mut rows: Vec<(u32, u64)> = table(i).iter().map(|p| (p.pid, p.utime_ns)).collect();
    rows.sort_unstable();
    rows
}

#[test]
fn tables_come_back_whole_from_deltas_after_flushes_kills_and_restarts() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("store");
    let t0 = (store::writer::now_ms() - 3_600_000) / 60_000 * 60_000;
    let ts = |i: u64| t0 + i * 5000;
    let (mut tap, mut flusher, _) = store::writer::open(opts(d.path()), log).unwrap();
    for i in 0..4 {
        tap.procs(ts(i), &table(i));
    }
    // One whole table, then deltas of a few rows each.
    let kinds: Vec<(Kind, usize)> = Snapshot::read(&d.path().join("journal"))
        .unwrap()
        .records()
        .map(|r| (r.kind, r.payload.len()))
        .collect();
    assert_eq!(kinds.len(), 4);
    assert_eq!(kinds[0].0, Kind::Procs);
    for (k, len) in &kinds[1..] {
        assert_eq!(*k, Kind::ProcsDelta);
        assert!(
            *len * 20 < kinds[0].1,
            "a delta of 3 rows and an end: {kinds:?}"
        );
    }
    assert!(flusher.flush());
    for i in 4..8 {
        tap.procs(ts(i), &table(i));
    }
    // The writer released the first tables but kept the whole one the
    // deltas after it build on: a kill now leaves them rebuildable.
    drop((tap, flusher));
    let got = read_back(&store, 0, u64::MAX);
    assert_eq!(
        got.len(),
        8,
        "four from the day file, four from the journal"
    );
    for (i, (t, rows)) in got.iter().enumerate() {
        assert_eq!(*t, ts(i as u64));
        assert_eq!(*rows, expected(i as u64), "table {i}");
    }
    // A new writer on the same journal writes the four it lacks, once.
    let (mut tap, mut flusher, _) = store::writer::open(opts(d.path()), log).unwrap();
    assert!(flusher.flush());
    for i in 8..10 {
        tap.procs(ts(i), &table(i));
    }
    assert!(flusher.flush());
    drop((tap, flusher));
    let got = read_back(&store, 0, u64::MAX);
    assert_eq!(
        got.len(),
        10,
        "{:?}",
        got.iter().map(|g| g.0).collect::<Vec<_>>()
    );
    for (i, (t, rows)) in got.iter().enumerate() {
        assert_eq!(*t, ts(i as u64));
        assert_eq!(*rows, expected(i as u64), "table {i}");
    }
}

/// A flush keeps the last whole table and what follows it; a new whole
/// table goes in once the journal's chain grew past its bound, and the
/// next flush lets the old one go.
#[test]
fn the_journal_keeps_one_whole_table_and_starts_a_new_chain_when_it_grows() {
    let d = tempfile::tempdir().unwrap();
    let t0 = (store::writer::now_ms() - 3_600_000) / 60_000 * 60_000;
    let (mut tap, mut flusher, _) = store::writer::open(opts(d.path()), log).unwrap();
    let journal = d.path().join("journal");
    let kinds = || -> Vec<Kind> {
        Snapshot::read(&journal)
            .unwrap()
            .records()
            .filter(|r| r.kind != Kind::System)
            .map(|r| r.kind)
            .collect()
    };
    tap.procs(t0, &table(0));
    tap.procs(t0 + 5000, &table(1));
    assert!(flusher.flush());
    // Kept: the whole table and the delta after it (in the store already).
    assert_eq!(kinds(), [Kind::Procs, Kind::ProcsDelta]);
    tap.procs(t0 + 10_000, &table(2));
    assert_eq!(kinds(), [Kind::Procs, Kind::ProcsDelta, Kind::ProcsDelta]);
    // More than WHOLE_AFTER_MIN bytes of other records: a new whole table,
    // and after the next flush only it and what follows it are kept.
    let mut kept = Vec::new();
    let text = "cpu  1 2 3 4\n".repeat(store::writer::WHOLE_AFTER_MIN / 4 / 13);
    procfs::kept::append(&mut kept, procfs::Source::Stat, text.as_bytes());
    for i in 0..5 {
        tap.system(t0 + 10_000 + i, &kept);
    }
    tap.procs(t0 + 15_000, &table(3));
    assert_eq!(kinds().last(), Some(&Kind::Procs));
    assert!(flusher.flush());
    assert_eq!(kinds(), [Kind::Procs]);
    tap.procs(t0 + 20_000, &table(4));
    assert_eq!(kinds(), [Kind::Procs, Kind::ProcsDelta]);
}

/// A reader that comes back for what was added since (with a cursor)
/// gets every table as a reader from the start does: after a read that
/// stopped inside a block, after one that went to the end, and when it
/// goes back before where it left off.
#[test]
fn a_cursor_goes_on_where_a_read_stopped_and_gives_every_table_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("store");
    // Noon yesterday (UTC): one day file, one chain, whenever it runs.
    let t0 = (store::writer::now_ms() - 86_400_000) / 86_400_000 * 86_400_000 + 43_200_000;
    let ts = |i: u64| t0 + i * 5000;
    let (mut tap, mut flusher, _) = store::writer::open(opts(d.path()), log).unwrap();
    // Three tables a block.
    for i in 0..30 {
        tap.procs(ts(i), &table(i));
        if i % 3 == 2 {
            assert!(flusher.flush());
        }
    }
    drop((tap, flusher));
    let h = History::open(&store).unwrap();
    let mut cur = store::read::Cursor::default();
    let mut got: Vec<u64> = Vec::new();
    let read = |cur: &mut store::read::Cursor, from: u64, stop_after: usize| {
        let mut seen = Vec::new();
        h.procs_from(cur, from, u64::MAX, &mut |t, s| {
            let mut rows: Vec<(u32, u64)> = s.procs().iter().map(|p| (p.pid, p.utime_ns)).collect();
            rows.sort_unstable();
            let i = (t - t0) / 5000;
            assert_eq!(rows, expected(i), "table {i}");
            seen.push(t);
            seen.len() < stop_after
        })
        .unwrap();
        seen
    };
    // Stops inside the second block, then goes on from the next table.
    let first = read(&mut cur, ts(0), 4);
    assert_eq!(first, (0..4).map(ts).collect::<Vec<_>>());
    got.extend(&first);
    let next = read(&mut cur, ts(4), 5);
    got.extend(&next);
    // To the end, then nothing new, then back before where it was.
    got.extend(read(&mut cur, ts(9), usize::MAX));
    assert_eq!(got, (0..30).map(ts).collect::<Vec<_>>());
    // The second and third reads went on from the decoder's state.
    assert_eq!(cur.resumed(), 2);
    assert!(read(&mut cur, ts(30), usize::MAX).is_empty());
    assert_eq!(read(&mut cur, ts(7), 3), vec![ts(7), ts(8), ts(9)]);
    assert_eq!(
        read(&mut cur, ts(10), usize::MAX),
        (10..30).map(ts).collect::<Vec<_>>()
    );
}
