//! The history store with the real agent and a real SQLite file: kill -9
//! after a restart, damaged files, limits, a full or read-only directory,
//! a newer format, and `report` checked against figures computed here
//! from the same raw counters. Kills at twenty random moments are a
//! target of their own, `stress.rs`.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::agent::{Agent, get};
use common::store::*;
use common::{assert_ok, quietstat, wait_for};
use procfs::Source;
use store::History;

/// `quietstat report --format json` on `store` with `args`, parsed.
fn report_json(store: &Path, args: &[&str]) -> serde_json::Value {
    let out = quietstat()
        .args([
            "report",
            "--store",
            store.to_str().unwrap(),
            "--format",
            "json",
        ])
        .args(args)
        .output()
        .unwrap();
    assert_ok(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs a recording agent for `reads` reads of stat (one a second).
fn record_a_while(store: &Path, shm: &Path, reads: u32) -> Vec<String> {
    let a = recorder(store, shm, "200ms", "");
    after_reads(&a, "stat", reads);
    stop(a)
}

fn day_file(store: &Path) -> std::path::PathBuf {
    store::db::day_files(store).pop().unwrap().1
}

#[test]
fn a_damaged_day_file_is_set_aside_with_one_line_and_recording_goes_on() {
    for damage in ["flipped page", "truncated file", "truncated wal"] {
        let (_d, store, shm) = dirs();
        record_a_while(&store, &shm, 2);
        let f = day_file(&store);
        // Another day (yesterday: within retention), intact, beside it.
        let yesterday = store::db::day_of(now_ms() - 86_400_000);
        let other = store::db::path_for(&store, &yesterday);
        std::fs::copy(&f, &other).unwrap();
        let before = stat_times(&store).len();
        match damage {
            "flipped page" => {
                let mut b = std::fs::read(&f).unwrap();
                // Every byte of the second page: a b-tree page.
                for x in &mut b[4096..8192] {
                    *x ^= 0x5a;
                }
                std::fs::write(&f, b).unwrap();
            }
            "truncated file" => {
                let len = std::fs::metadata(&f).unwrap().len();
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&f)
                    .unwrap()
                    .set_len(len / 2)
                    .unwrap();
            }
            _ => {
                let wal = format!("{}-wal", f.display());
                if let Ok(m) = std::fs::metadata(&wal) {
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(&wal)
                        .unwrap()
                        .set_len(m.len() / 2)
                        .unwrap();
                }
            }
        }
        let log = record_a_while(&store, &shm, 2);
        let aside: Vec<_> = std::fs::read_dir(&store)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
            .collect();
        let said: Vec<_> = log.iter().filter(|l| l.contains("damaged")).collect();
        if damage == "truncated wal" {
            // SQLite drops the torn frames: the file is whole, what the
            // complete frames held is there, nothing is set aside.
            assert!(aside.is_empty() && said.is_empty(), "{log:#?}");
            assert!(stat_times(&store).len() > before / 2, "{damage}");
        } else {
            assert_eq!(said.len(), 1, "{damage}: {log:#?}");
            assert!(
                said[0].contains("moved aside") && said[0].contains(".corrupt-"),
                "{}",
                said[0]
            );
            assert!(!aside.is_empty(), "{damage}");
        }
        // Recording went on in today's file, and the other day reads.
        let h = History::open(&store).unwrap();
        assert!(h.skipped().is_empty(), "{damage}: {:?}", h.skipped());
        assert!(h.usage().unwrap().iter().any(|u| u.day == yesterday));
        assert!(stat_times(&store).len() >= 2, "{damage}");
    }
}

#[test]
fn the_store_stays_under_its_size_cap_and_drops_days_past_retention() {
    let (_d, store, shm) = dirs();
    std::fs::create_dir(&store).unwrap();
    // A day past retention, made by copying a real one.
    record_a_while(&store, &shm, 1);
    let old = store.join("2020-01-01.qsdb");
    std::fs::copy(day_file(&store), &old).unwrap();
    let cap = 256 * 1024;
    let a = recorder(
        &store,
        &shm,
        "100ms",
        &format!("max_size = \"{cap}\"\nretention = \"1d\""),
    );
    let t = Instant::now();
    let mut max_seen = 0u64;
    while t.elapsed() < Duration::from_secs(6) {
        std::thread::sleep(Duration::from_millis(250));
        if let Some(b) = metric(&a, "quietstat_store_bytes") {
            max_seen = max_seen.max(b as u64);
        }
    }
    assert!(!old.exists(), "the day past retention is still there");
    assert!(
        max_seen > 0 && max_seen <= cap,
        "the store took {max_seen} bytes against a cap of {cap}"
    );
    let on_disk: u64 = store::db::day_files(&store)
        .iter()
        .map(|(_, p)| store::db::file_bytes(p))
        .sum();
    assert!(on_disk <= cap + 64 * 1024, "{on_disk} bytes on disk");
    stop(a);
    // What the cap left can be read: a chain it cut is gone whole, and
    // the writer started a new one.
    let times = stat_times(&store);
    assert!(
        times.last().is_some_and(|t| *t + 5_000 > now_ms()),
        "the newest reads kept cannot be read back: {:?}",
        times.last()
    );
}

#[test]
fn a_full_disk_stops_recording_with_one_line_and_it_resumes_with_room() {
    let (_d, store, shm) = dirs();
    std::fs::create_dir(&store).unwrap();
    assert!(
        mount_tmpfs(&store, "size=48k"),
        "mount tmpfs (the test runs as root)"
    );
    let _u = Unmount(&store);
    let a = recorder(&store, &shm, "100ms", "");
    let full = recording_becomes(&a, 0.0, Duration::from_secs(15));
    assert!(full, "recording never failed on a 48 KiB filesystem");
    // Sampling and serving go on.
    let reads = |a: &Agent| {
        let v: serde_json::Value =
            serde_json::from_str(&get(a.addr, "/api/v1/snapshot?sources=stat", None).body).unwrap();
        v["agent"]["sources"]["stat"]["reads"].as_u64().unwrap()
    };
    let r0 = reads(&a);
    assert!(wait_for(Duration::from_secs(5), || reads(&a) > r0 + 1));
    // Room again: recording resumes.
    assert!(mount_tmpfs(&store, "remount,size=16m"));
    assert!(
        recording_becomes(&a, 1.0, Duration::from_secs(15)),
        "recording did not resume"
    );
    let log = stop(a);
    let failing: Vec<_> = log
        .iter()
        .filter(|l| l.contains("store: writing") || l.contains("store: "))
        .collect();
    assert!(
        failing
            .iter()
            .any(|l| l.contains(&store.display().to_string()) && l.contains("resumes")),
        "{log:#?}"
    );
    // A full disk is not an unwritable directory: the line says to free space.
    assert!(
        failing
            .iter()
            .filter(|l| l.contains("resumes"))
            .all(|l| l.contains("free space") && !l.contains("writable")),
        "{log:#?}"
    );
    assert!(failing.iter().any(|l| l.contains("again")), "{log:#?}");
    // One line per failure streak, not one per flush.
    assert!(failing.len() <= 4, "{failing:#?}");
    assert!(!stat_times(&store).is_empty());
}

#[test]
fn a_read_only_directory_is_reported_and_sampling_goes_on() {
    let (_d, store, shm) = dirs();
    std::fs::create_dir(&store).unwrap();
    assert!(mount_tmpfs(&store, "ro,size=1m"));
    let _u = Unmount(&store);
    let a = recorder(&store, &shm, "100ms", "");
    assert!(recording_becomes(&a, 0.0, Duration::from_secs(10)));
    assert_eq!(get(a.addr, "/metrics", None).status, 200);
    let log = stop(a);
    assert!(
        log.iter().any(|l| l.contains(&store.display().to_string())
            && (l.contains("--store") || l.contains("writable"))),
        "{log:#?}"
    );
}

#[test]
fn a_store_in_a_newer_format_is_never_written_and_report_names_both_versions() {
    let (_d, store, shm) = dirs();
    std::fs::create_dir(&store).unwrap();
    let today = store::db::path_for(&store, &store::db::day_of(now_ms()));
    {
        let c = rusqlite::Connection::open(&today).unwrap();
        c.execute_batch(&format!(
            "PRAGMA application_id = {}; PRAGMA user_version = 99; CREATE TABLE future(x);",
            store::db::APPLICATION_ID
        ))
        .unwrap();
    }
    let before = std::fs::read(&today).unwrap();
    let log = record_a_while(&store, &shm, 2);
    assert_eq!(
        std::fs::read(&today).unwrap(),
        before,
        "the newer file was written to"
    );
    assert!(
        log.iter()
            .any(|l| l.contains("format 99") && l.contains("not recording")),
        "{log:#?}"
    );
    let out = quietstat()
        .args(["report", "--store", store.to_str().unwrap()])
        .output()
        .unwrap();
    // What the journal holds (the store refused it) may be reported; the
    // newer file is named with both versions either way.
    let err =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        err.contains(&today.display().to_string())
            && err.contains("format 99")
            && err.contains(&format!("this quietstat's {}", store::db::FORMAT)),
        "{err}"
    );
}

#[test]
fn report_agrees_with_rates_computed_here_from_the_raw_counters() {
    let (_d, store, shm) = dirs();
    record_a_while(&store, &shm, 5);
    // The raw /proc/stat lines as recorded, parsed here.
    let mut raw: Vec<(u64, Vec<u64>)> = Vec::new();
    // Independently: decode the blocks' stat text with the store codec.
    let c = rusqlite::Connection::open(day_file(&store)).unwrap();
    let mut dec = store::blocks::SysDecoder::default();
    let mut st = c
        .prepare("SELECT key, body FROM block WHERE kind = 1 ORDER BY start_ms")
        .unwrap();
    let rows = st
        .query_map([], |r| Ok((r.get::<_, bool>(0)?, r.get::<_, Vec<u8>>(1)?)))
        .unwrap();
    for r in rows {
        let (key, body) = r.unwrap();
        if key {
            dec.reset();
        }
        let b = dec.decode(&body, 1u128 << Source::Stat as usize).unwrap();
        for (ts, files) in b.times.iter().zip(b.files) {
            for (_, bytes) in files {
                let s = String::from_utf8(bytes).unwrap();
                let cpu: Vec<u64> = s
                    .lines()
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .skip(1)
                    .map(|v| v.parse().unwrap())
                    .collect();
                raw.push((*ts, cpu));
            }
        }
    }
    // The same samples as the store's reader rebuilds.
    assert_eq!(
        raw.iter().map(|r| r.0).collect::<Vec<_>>(),
        stat_times(&store)
    );
    assert!(raw.len() >= 4, "{} samples", raw.len());
    let v = report_json(
        &store,
        &["--from", "-10m", "--interval", "1s", "--source", "cpu"],
    );
    let rows = v["sections"]["cpu"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), raw.len() - 1, "{v:#}");
    for (row, w) in rows.iter().zip(raw.windows(2)) {
        let (a, b) = (&w[0].1, &w[1].1);
        // user nice system idle iowait irq softirq steal guest guest_nice
        let d: Vec<f64> = (0..a.len()).map(|i| (b[i] - a[i]) as f64).collect();
        let total: f64 = d[..8].iter().sum();
        let pct = |x: f64| x * 100.0 / total;
        let user = pct(d[0] - d.get(8).copied().unwrap_or(0.0));
        for (col, want) in [
            ("%user", user),
            ("%system", pct(d[2])),
            ("%idle", pct(d[3])),
            ("%iowait", pct(d[4])),
        ] {
            let got = row[col].as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-9,
                "{col}: report {got}, computed {want}"
            );
        }
    }
}

#[test]
fn exits_are_recorded_with_status_and_lifetime_and_a_reused_pid_is_another_process() {
    exits_recorded("auto");
}

/// Without BPF, exits come from taskstats, whose start times are whole
/// seconds: each is still matched to its process (and its command line).
#[test]
fn exits_on_the_procfs_backend_keep_their_command_line() {
    exits_recorded("procfs");
}

/// `sleep secs` as the process of `pid`: the next pid set (init namespace,
/// root), retrying should another fork take it.
fn spawn_at(pid: u32, secs: &str) -> Option<std::process::Child> {
    for _ in 0..50 {
        std::fs::write("/proc/sys/kernel/ns_last_pid", format!("{}", pid - 1)).unwrap();
        let mut c = std::process::Command::new("sleep")
            .arg(secs)
            .spawn()
            .unwrap();
        if c.id() == pid {
            return Some(c);
        }
        c.kill().unwrap();
        c.wait().unwrap();
    }
    None
}

fn exits_recorded(backend: &str) {
    let (_d, store, shm) = dirs();
    let cfg = "[store]\nflush_interval = \"200ms\"\nprocess_interval = \"1s\"\n[sources.processes]\ninterval = \"1s\"\n";
    let a = recording_agent(&store, &shm, cfg, backend, |_| {});
    after_reads(&a, "processes", 1);
    // One exits with 3; one is killed; one pid used twice.
    let three = std::process::Command::new("sh")
        .args(["-c", "sleep 1.5; exit 3"])
        .spawn()
        .unwrap();
    let mut killed = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let (p3, pk) = (three.id(), killed.id());
    // A table read begun after both started, then a flush: each has its
    // identity row, written while it runs.
    after_reads(&a, "processes", 2);
    after_flush(&a);
    killed.kill().unwrap();
    killed.wait().unwrap();
    let mut three = three;
    assert_eq!(three.wait().unwrap().code(), Some(3));
    // The pid of the killed one again, twice, within the same second: a
    // process killed at once, then one that exits 0. The three ends of
    // the pid are drained together; only the first can be the killed
    // one's row, whatever the start to within a second says.
    let mut transient = spawn_at(pk, "29").expect("pid reuse");
    transient.kill().unwrap();
    transient.wait().unwrap();
    let reused = spawn_at(pk, "3");
    let mut reused = reused.expect("pid reuse");
    reused.wait().unwrap();
    // A table read begun after the last exit has taken every exit.
    after_reads(&a, "processes", 2);
    stop(a);
    let v = report_json(&store, &["--from", "-5m", "--source", "exits"]);
    let exits = v["sections"]["exits"]["rows"].as_array().unwrap();
    let of = |pid: u32| -> Vec<&serde_json::Value> {
        exits.iter().filter(|e| e["pid"] == pid).collect()
    };
    let e3 = of(p3);
    assert!(
        e3.iter()
            .any(|e| e["status"] == "exit 3" && e["comm"] == "sh"),
        "{e3:#?}"
    );
    let ek = of(pk);
    // The killed one, then the last process's normal exit.
    assert!(
        ek.iter()
            .any(|e| e["status"] == "SIGKILL" && e["cmdline"] == "sleep 30"),
        "{backend}: {ek:#?}"
    );
    assert!(
        ek.iter()
            .any(|e| e["status"] == "exit 0" && e["cmdline"] == "sleep 3"),
        "{backend}: {ek:#?}"
    );
    assert!(ek.iter().all(|e| e["lifetime"] != "-"), "{ek:#?}");
    // Two identities for one pid in the store (and the one killed at
    // once, should a table have caught it).
    let c = rusqlite::Connection::open(day_file(&store)).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT count(DISTINCT start_ticks) FROM identity WHERE pid = ?1
             AND cmdline IN ('sleep 30', 'sleep 3')",
            [pk],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 2);
}

#[test]
fn report_refuses_bad_input_naming_what_is_accepted() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().to_str().unwrap();
    for (args, says) in [
        (vec!["--source", "gpu"], "accepted: cpu, mem"),
        (vec!["--format", "xml"], "accepted: table, csv, json"),
        (vec!["--from", "yesterday"], "RFC 3339"),
        (vec!["--from", "-1h", "--to", "-2h"], "before --from"),
        (vec![], "no history recorded here"),
    ] {
        let out = quietstat()
            .args(["report", "--store", s])
            .args(&args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// The journal sits beside a snapshot kept in memory, and in /dev/shm when
/// the snapshot's directory is on a disk. A kill -9 leaves it for the next
/// start; that start writes what it holds, and a clean stop, with
/// everything in the store, removes it.
#[test]
fn a_kill_leaves_the_journal_and_a_clean_stop_removes_it() {
    let (_d, store, shm) = dirs();
    let journal = shm.parent().unwrap().join("store-journal");
    assert_eq!(agent::default_journal(Some(&shm), &store), journal);
    kill_then_stop(&store, &shm, &journal);

    // A snapshot directory on the build's disk (or, on a machine whose
    // build directory is a tmpfs, in memory all the same).
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let shm = disk.path().join("snapshot");
    let journal = agent::default_journal(Some(&shm), &store);
    let in_memory = matches!(shm::memory_backed(disk.path()), Ok(Ok(_)));
    assert_eq!(journal.starts_with("/dev/shm"), !in_memory, "{journal:?}");
    kill_then_stop(&store, &shm, &journal);
}

fn kill_then_stop(store: &Path, shm: &Path, journal: &Path) {
    let started = now_ms();
    let mut a = recorder(store, shm, "15s", "");
    after_reads(&a, "stat", 2);
    let killed = now_ms();
    a.proc.signal(libc::SIGKILL);
    assert!(a.proc.wait(Duration::from_secs(10)).is_some());
    assert!(journal.is_file(), "a kill leaves the journal");

    let a = recorder(store, shm, "15s", "");
    assert!(recording_becomes(&a, 1.0, Duration::from_secs(20)));
    let log = stop(a);
    assert!(!journal.exists(), "a clean stop removes it: {log:#?}");
    let times = stat_times(store);
    assert!(
        times.iter().any(|t| (started..=killed).contains(t)),
        "the killed agent's samples, written from its journal: {times:?}"
    );
}

/// `report` reads what it can: a day file with a damaged page is named in
/// one warning and the other days are reported (exit 0); hundreds of day
/// files are read one at a time under a descriptor limit of 64.
#[test]
fn report_reads_the_good_days_past_a_damaged_one_and_many_days_under_a_low_fd_limit() {
    let (_d, store, shm) = dirs();
    record_a_while(&store, &shm, 2);
    let today = day_file(&store);
    // 400 earlier days, copies of today's file; one with a page of noise.
    let day_ms = store::db::day_start_ms(&store::db::day_of(now_ms())).unwrap();
    let mut damaged = None;
    for back in 1..=400u64 {
        let day = store::db::day_of(day_ms - back * 86_400_000);
        let p = store::db::path_for(&store, &day);
        std::fs::copy(&today, &p).unwrap();
        if back == 3 {
            use std::os::unix::fs::FileExt;
            let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            let len = f.metadata().unwrap().len();
            // Every page but the first (the header): noise.
            let noise: Vec<u8> = (0..len - 4096).map(|i| (i * 7919 % 251) as u8).collect();
            f.write_all_at(&noise, 4096).unwrap();
            damaged = Some(p);
        }
    }
    let damaged = damaged.unwrap();
    let run = |args: &[&str]| {
        let mut c = quietstat();
        c.args(["report", "--store", store.to_str().unwrap()])
            .args(args);
        common::limit_fds(&mut c, 64);
        c.output().unwrap()
    };
    let out = run(&["--source", "store", "--format", "csv"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let days = text.lines().filter(|l| l.contains("(file,")).count();
    assert_eq!(days, 400, "every readable day listed: {text}");
    let err = String::from_utf8_lossy(&out.stderr);
    let skipped: Vec<&str> = err.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skipped.len(), 1, "{err}");
    assert!(
        skipped[0].contains(damaged.to_str().unwrap()),
        "{skipped:#?}"
    );
    // A range over the damaged day and good ones: the good are reported.
    let out = run(&[
        "--from",
        "-5d",
        "--source",
        "cpu",
        "--interval",
        "1s",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !v["sections"]["cpu"]["rows"].as_array().unwrap().is_empty(),
        "{v}"
    );
    let skipped = v["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(
        skipped[0]
            .as_str()
            .unwrap()
            .contains(damaged.to_str().unwrap())
    );
}

/// After a kill -9 and before any restart, `report` reads what the
/// journal holds: every sample up to the kill, and the journal listed
/// with `--source store`. The next start writes that tail once.
#[test]
fn after_a_kill_report_shows_every_sample_up_to_it_without_a_restart() {
    let (_d, store, shm) = dirs();
    // Flushes at multiples of 5 minutes: the journal nearly always holds
    // every sample of the run (whatever it holds is checked below).
    let mut a = recorder(&store, &shm, "300s", "");
    after_reads(&a, "stat", 4);
    let killed = now_ms();
    a.proc.signal(libc::SIGKILL);
    assert!(a.proc.wait(Duration::from_secs(10)).is_some());
    // What the journal holds, read here from its file.
    let journal = shm.parent().unwrap().join("store-journal");
    let snap = store::journal::Snapshot::read(&journal).unwrap();
    let mut held_stat = Vec::new();
    let mut held_tables = Vec::new();
    for r in snap.records() {
        match r.kind {
            store::journal::Kind::System
                if procfs::kept::entries(r.payload).any(|(s, _)| s == Source::Stat) =>
            {
                held_stat.push(r.ts_ms)
            }
            store::journal::Kind::Procs | store::journal::Kind::ProcsDelta => {
                held_tables.push(r.ts_ms)
            }
            _ => {}
        }
    }
    let times = stat_times(&store);
    assert!(
        held_stat.iter().all(|t| times.contains(t)),
        "the journal's stat samples {held_stat:?} in what report reads {times:?}"
    );
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    let h = History::open(&store).unwrap();
    let mut tables = Vec::new();
    h.procs(0, killed, &mut |ts, s| tables.push((ts, s.len())))
        .unwrap();
    assert!(
        held_tables
            .iter()
            .all(|t| tables.iter().any(|(ts, n)| ts == t && *n > 10)),
        "the journal's tables {held_tables:?} in what report reads {tables:?}"
    );
    // Every second of the run is there, from the day file or the journal.
    let run: Vec<_> = times.iter().filter(|t| **t >= killed - 4500).collect();
    assert!(run.len() >= 3, "{times:?}");
    // Listed with --source store whenever it holds unwritten samples.
    let v = report_json(&store, &["--source", "store"]);
    let rows = v["sections"]["store"]["rows"].as_array().unwrap();
    let listed = rows
        .iter()
        .any(|r| r["day"] == "journal" && r["source"].as_str().unwrap().contains("agent is gone"));
    assert_eq!(listed, snap.records().next().is_some(), "{rows:#?}");
    // The next start writes the tail once: the same samples, no more.
    let a = recorder(&store, &shm, "15s", "");
    assert!(recording_becomes(&a, 1.0, Duration::from_secs(20)));
    stop(a);
    let after = stat_times(&store);
    let kept: Vec<u64> = after.iter().copied().filter(|t| *t <= killed).collect();
    let before: Vec<u64> = times.iter().copied().filter(|t| *t <= killed).collect();
    assert_eq!(kept, before, "written once, none lost");
}

/// A killed agent's journal whose store was removed is removed by the next
/// agent that starts (one line); one whose store exists is left for it.
#[test]
fn orphan_journals_are_removed_and_a_live_stores_journal_is_left() {
    let shared = tempfile::tempdir_in("/dev/shm").unwrap();
    let jcfg = |n: &str| format!("journal = \"{}\"", shared.path().join(n).display());
    let kill = |mut a: Agent| {
        after_reads(&a, "stat", 1);
        a.proc.signal(libc::SIGKILL);
        assert!(a.proc.wait(Duration::from_secs(10)).is_some());
    };
    let (_d1, gone, shm1) = dirs();
    kill(recorder(&gone, &shm1, "15s", &jcfg("j1")));
    let (_d3, kept, shm3) = dirs();
    kill(recorder(&kept, &shm3, "15s", &jcfg("j3")));
    assert!(shared.path().join("j1").is_file() && shared.path().join("j3").is_file());
    std::fs::remove_dir_all(&gone).unwrap();

    let (_d2, store, shm2) = dirs();
    let log = stop(recorder(&store, &shm2, "15s", &jcfg("j2")));
    let j1 = shared.path().join("j1").display().to_string();
    let said: Vec<_> = log.iter().filter(|l| l.contains(&j1)).collect();
    assert_eq!(said.len(), 1, "{log:#?}");
    assert!(
        said[0].contains("no longer exists") && said[0].contains("samples never written"),
        "{}",
        said[0]
    );
    assert!(!shared.path().join("j1").exists());
    assert!(
        shared.path().join("j3").is_file(),
        "a live store's journal was removed"
    );
    // Its store's next start adopts it.
    let log = stop(recorder(&kept, &shm3, "15s", &jcfg("j3")));
    assert!(!shared.path().join("j3").exists(), "{log:#?}");
}
