//! The history against other local users: the real agent as root, and
//! `nobody` (uid 65534) as the other user. The store holds every process's
//! command line: nobody may read it, plant what the agent opens, share or
//! fill its journal, or switch recording off unseen.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::agent::{Agent, get};
use common::store::*;
use common::{BIN, finish_within, wait_for};

const NOBODY: u32 = 65534;

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

fn chown(p: &Path, uid: u32) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), uid, uid) }, 0);
}

/// A temporary directory everyone may enter (not write).
fn open_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// The binary, copied where `nobody` may run it (the build directory may
/// be private).
fn nobody_bin(dir: &Path) -> PathBuf {
    let bin = dir.join("quietstat");
    std::fs::copy(BIN, &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Runs `cmd` as nobody, with no environment, at most 20 s.
fn as_nobody(mut cmd: Command) -> std::process::Output {
    cmd.uid(NOBODY)
        .gid(NOBODY)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // (As root, setting the uid drops every supplementary group too.)
    finish_within(
        cmd.spawn().unwrap(),
        Duration::from_secs(20),
        "a command as nobody",
    )
}

fn today() -> String {
    store::db::day_of(now_ms())
}

fn logged(lines: &[String], what: &str) -> bool {
    lines.iter().any(|l| l.contains(what))
}

/// Lines the agent has logged so far (after the early ones).
fn drain(a: &Agent, into: &mut Vec<String>) {
    while let Ok(l) = a.log.recv_timeout(Duration::from_millis(50)) {
        into.push(l);
    }
}

#[test]
fn nobody_reads_no_command_line_and_wider_modes_are_tightened() {
    let (_d, _, shm) = dirs();
    let open = open_dir();
    let store_in_open = open.path().join("store");
    // A process with a secret on its command line (a shell that waits:
    // `; :` keeps it from becoming the sleep).
    let mut secret = Command::new("bash");
    secret.arg0("qs-private-test").args([
        "-c",
        "sleep 30; :",
        "qs-private-test",
        "--password=hunter2",
    ]);
    let kid = common::agent::Proc(sys::child::Guard(secret.spawn().unwrap()));

    let a = recorder(&store_in_open, &shm, "100ms", "");
    assert!(wait_for(Duration::from_secs(15), || metric(
        &a,
        "quietstat_store_rows_total"
    )
    .is_some_and(|r| r > 0.0)));
    std::thread::sleep(Duration::from_millis(1500));
    stop(a);
    drop(kid);
    let hidden = procfs::hidden_pids(Path::new("/proc"));
    let view = match hidden {
        Some(gid) => store::access::ProcView::Hidden { gid },
        None => store::access::ProcView::Open,
    };
    let access = store::access::decide(None, view).unwrap();
    let day = store::db::path_for(&store_in_open, &today());
    assert_eq!(mode(&store_in_open), access.dir_mode());
    assert_eq!(mode(&day), access.file_mode());
    // SQLite keeps text as it is: the secret is in the file's bytes.
    let bytes = std::fs::read(&day).unwrap();
    assert!(
        bytes.windows(7).any(|w| w == b"hunter2"),
        "the secret process is recorded"
    );

    // Nobody (in no group) can read neither the file nor a report.
    let mut cat = Command::new("cat");
    cat.arg(&day);
    let out = as_nobody(cat);
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("hunter2"));
    let bin = nobody_bin(open.path());
    let mut report = Command::new(&bin);
    report
        .args(["report", "--source", "proc", "--store"])
        .arg(&store_in_open);
    let out = as_nobody(report);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("hunter2"));
    assert!(
        err.contains("permission denied")
            && err.contains("readable by root")
            && err.lines().count() == 1,
        "one line saying who may read: {err}"
    );

    // A store left wider (an older build, a hand-made copy) is tightened
    // at start, and logged.
    std::fs::set_permissions(&store_in_open, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&day, std::fs::Permissions::from_mode(0o644)).unwrap();
    let a = recorder(&store_in_open, &shm, "100ms", "");
    std::thread::sleep(Duration::from_millis(500));
    let log = stop(a);
    assert!(logged(&log, "modes in"), "{log:#?}");
    assert_eq!(mode(&store_in_open), access.dir_mode());
    assert_eq!(mode(&day), access.file_mode());
}

/// With `/proc` hiding other users' processes (a proc mounted here with
/// `hidepid=2`), the store and the view files follow: the owner only.
#[test]
fn a_proc_that_hides_processes_makes_the_store_owner_only() {
    let (_d, store, shm) = dirs();
    let proc_dir = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "proc", "-o", "hidepid=2", "proc"])
        .arg(proc_dir.path())
        .status()
        .is_ok_and(|s| s.success());
    assert!(mounted, "mount -t proc -o hidepid=2");
    let _u = Unmount(proc_dir.path());
    let _ = shm;
    let cfg = "[store]\nflush_interval = \"100ms\"\n";
    let a = common::agent::agent(
        cfg,
        &[
            "--store",
            store.to_str().unwrap(),
            "--proc-root",
            proc_dir.path().to_str().unwrap(),
            "--backend",
            "procfs",
        ],
    );
    std::thread::sleep(Duration::from_millis(800));
    // The view files too: the owner only, as /proc.
    for view in [
        shm::view::system_path(&a.shm),
        shm::view::procs_path(&a.shm),
        shm::view::cgroups_path(&a.shm),
    ] {
        assert_eq!(mode(&view), 0o600, "{}", view.display());
    }
    let log = stop(a);
    assert_eq!(mode(&store), 0o700, "{log:#?}");
    let day = store::db::path_for(&store, &today());
    assert_eq!(mode(&day), 0o600, "{log:#?}");
}

#[test]
fn links_and_fifos_planted_in_the_store_neither_hang_nor_steer_the_agent() {
    // A store directory nobody owns: refused with the reason, served as
    // not recording; what its link points at is never touched.
    let open = open_dir();
    let (_d, _store, shm) = dirs();
    let theirs = open.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    let victim = open.path().join("victim.db");
    std::fs::write(&victim, b"not a store").unwrap();
    std::os::unix::fs::symlink(&victim, store::db::path_for(&theirs, &today())).unwrap();
    chown(&theirs, NOBODY);
    let a = recorder(&theirs, &shm, "100ms", "");
    assert_eq!(metric(&a, "quietstat_store_recording"), Some(0.0));
    let log = stop(a);
    assert!(
        logged(&log, "not recording") && logged(&log, "owned by uid 65534"),
        "{log:#?}"
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"not a store");

    // A FIFO named like today's file, and one at the lock: start, serve,
    // stop and `report` all go on; each is named.
    for planted in [
        store::db::path_for(Path::new("x"), &today()),
        "x/lock".into(),
    ] {
        let (_d, store, shm) = dirs();
        std::fs::create_dir(&store).unwrap();
        let fifo = store.join(planted.file_name().unwrap());
        common::mkfifo(&fifo, 0o666);
        let t = Instant::now();
        let a = recorder(&store, &shm, "100ms", "");
        assert!(t.elapsed() < Duration::from_secs(10));
        let mut log = a.early.clone();
        assert!(wait_for(Duration::from_secs(5), || {
            drain(&a, &mut log);
            logged(&log, "FIFO")
        }));
        assert_eq!(get(a.addr, "/metrics", None).status, 200);
        assert_eq!(metric(&a, "quietstat_store_recording"), Some(0.0));
        let t = Instant::now();
        stop(a);
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "SIGTERM took {:?}",
            t.elapsed()
        );
        let mut report = Command::new(BIN);
        report
            .args(["report", "--source", "store", "--store"])
            .arg(&store)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = finish_within(report.spawn().unwrap(), Duration::from_secs(20), "report");
        // Named on stderr, or in the table when the journal's samples are
        // reported.
        let err = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        if fifo.extension().is_some() {
            assert!(err.contains("FIFO"), "{err}");
        }
    }
}

/// Two agents on one store that is read-only at start: one journal, one
/// recorder. The second is refused at the journal; the first waits for
/// its lock and records once the store is writable.
#[test]
fn a_store_unwritable_at_start_never_gets_two_recorders() {
    let (_d, store, shm) = dirs();
    std::fs::create_dir(&store).unwrap();
    assert!(mount_tmpfs(&store, "ro,size=16m,mode=0755"));
    let _u = Unmount(&store);
    let jdir = tempfile::tempdir_in("/dev/shm").unwrap();
    let journal = jdir.path().join("journal");
    let cfg = format!("journal = \"{}\"", journal.display());
    let a = recorder(&store, &shm, "100ms", &cfg);
    let shm_b = shm.with_file_name("snapshot-b");
    let b = recorder(&store, &shm_b, "100ms", &cfg);
    assert!(
        Command::new("mount")
            .args(["-o", "remount,rw"])
            .arg(&store)
            .status()
            .unwrap()
            .success()
    );
    assert!(recording_becomes(&a, 1.0, Duration::from_secs(10)));
    assert!(wait_for(Duration::from_secs(20), || stat_times(&store)
        .len()
        >= 3));
    assert_eq!(metric(&b, "quietstat_store_recording"), Some(0.0));
    let log_b = stop(b);
    assert!(logged(&log_b, "in use by another agent"), "{log_b:#?}");
    let log_a = stop(a);
    assert!(logged(&log_a, "cannot open its lock"), "{log_a:#?}");
    // One recorder: no sample twice, none dropped, no false gap.
    let t = stat_times(&store);
    assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    let h = store::History::open(&store).unwrap();
    let gaps = h.gaps(0, u64::MAX).unwrap();
    assert!(
        gaps.iter().all(|g| !g.why.contains("fell behind")),
        "{gaps:?}"
    );
}

/// The journal's filesystem full (at start, or filled later by another
/// user), or a file planted at its path: the agent neither dies nor stops
/// recording.
#[test]
fn a_full_or_planted_journal_neither_kills_nor_silences_the_agent() {
    // Full at start: too small for the journal.
    let (_d, store, shm) = dirs();
    let jdir = tempfile::tempdir_in("/dev/shm").unwrap();
    assert!(mount_tmpfs(jdir.path(), "size=1m,mode=0700"));
    let _u = Unmount(jdir.path());
    let cfg = format!("journal = \"{}\"", jdir.path().join("journal").display());
    let a = recorder(&store, &shm, "100ms", &cfg);
    assert!(recording_becomes(&a, 1.0, Duration::from_secs(10)));
    let log = stop(a);
    assert!(logged(&log, "journal in the agent's memory"), "{log:#?}");
    assert!(!stat_times(&store).is_empty());

    // Filled while the agent runs: its pages were reserved.
    let (_d, store, shm) = dirs();
    let jdir = tempfile::tempdir_in("/dev/shm").unwrap();
    assert!(mount_tmpfs(jdir.path(), "size=40m,mode=0700"));
    let _u = Unmount(jdir.path());
    let cfg = format!("journal = \"{}\"", jdir.path().join("journal").display());
    let mut a = recorder(&store, &shm, "100ms", &cfg);
    let before = stat_times(&store).len();
    let fill = std::fs::write(jdir.path().join("fill"), vec![1u8; 40 << 20]);
    assert!(fill.is_err(), "the tmpfs filled up");
    std::thread::sleep(Duration::from_secs(3));
    assert!(a.proc.0.0.try_wait().unwrap().is_none(), "the agent died");
    assert_eq!(metric(&a, "quietstat_store_recording"), Some(1.0));
    stop(a);
    assert!(stat_times(&store).len() > before + 1);

    // A file another user planted at the journal's path.
    let (_d, store, shm) = dirs();
    let jdir = tempfile::tempdir().unwrap();
    let planted = jdir.path().join("journal");
    std::fs::write(&planted, b"theirs").unwrap();
    chown(&planted, NOBODY);
    let cfg = format!("journal = \"{}\"", planted.display());
    let a = recorder(&store, &shm, "100ms", &cfg);
    assert!(recording_becomes(&a, 1.0, Duration::from_secs(10)));
    let log = stop(a);
    assert!(
        logged(&log, "owned by uid 65534") && logged(&log, "journal in the agent's memory"),
        "{log:#?}"
    );
    assert_eq!(std::fs::read(&planted).unwrap(), b"theirs");
}

/// Without HOME, a user's store is under the home in its passwd entry;
/// with no usable home (nobody's is /nonexistent), not recording, said
/// once; never under /tmp.
#[test]
fn without_home_a_user_never_records_under_tmp() {
    let open = open_dir();
    let bin = nobody_bin(open.path());
    let snap = open.path().join("snap");
    std::fs::create_dir(&snap).unwrap();
    chown(&snap, NOBODY);
    let mut cmd = Command::new(&bin);
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--shm-path"])
        .arg(snap.join("snapshot"))
        .uid(NOBODY)
        .gid(NOBODY)
        .env_clear()
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let guard = common::agent::Proc(sys::child::Guard(child));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for l in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let mut log = Vec::new();
    while let Ok(l) = rx.recv_timeout(Duration::from_secs(15)) {
        let serving = l.contains("serving http");
        log.push(l);
        if serving {
            break;
        }
    }
    drop(guard);
    assert!(
        logged(&log, "not recording: no HOME or XDG_STATE_HOME"),
        "{log:#?}"
    );
    assert!(!logged(&log, "recording to /tmp"), "{log:#?}");
}

/// Another user's process named to retitle and clear the terminal of
/// whoever lists it: `ps` and `report` (table and CSV) print no control
/// byte of it.
#[test]
fn ps_and_report_print_no_escape_from_another_users_process() {
    let (_d, store, shm) = dirs();
    let open = open_dir();
    // The command name comes from the file run: a link named with escapes
    // (15 bytes, all of it kept).
    let name = "\u{1b}]2;PWNED\u{7}\u{1b}[2J";
    let link = open.path().join(name);
    std::os::unix::fs::symlink("/bin/sleep", &link).unwrap();
    let a = recorder(&store, &shm, "100ms", "");
    let mut hostile = Command::new(&link);
    hostile
        .arg0("\u{1b}[2J\u{1b}[31mred")
        .arg("30")
        .uid(NOBODY)
        .gid(NOBODY);
    let kid = common::agent::Proc(sys::child::Guard(hostile.spawn().unwrap()));
    let pid = kid.id().to_string();
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm.trim_end_matches('\n'), name);
    let ps = common::run(&["ps", "--pids", &pid, "--fields", "pid,comm,cmdline"]);
    common::assert_ok(&ps);
    assert!(
        !ps.stdout.contains(&0x1b),
        "{:?}",
        String::from_utf8_lossy(&ps.stdout)
    );
    assert!(String::from_utf8_lossy(&ps.stdout).contains("\\x1b]2;PWNED\\x07"));
    // Recorded in a process table, then ended: in both reports.
    std::thread::sleep(Duration::from_millis(2500));
    drop(kid);
    std::thread::sleep(Duration::from_millis(1500));
    stop(a);
    for format in ["table", "csv"] {
        for source in ["proc", "exits"] {
            let out = common::run(&[
                "report",
                "--store",
                store.to_str().unwrap(),
                "--from",
                "-5m",
                "--source",
                source,
                "--pid",
                &pid,
                "--interval",
                "1s",
                "--format",
                format,
            ]);
            common::assert_ok(&out);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(!out.stdout.contains(&0x1b), "{source} {format}: {text:?}");
            assert!(text.contains("\\x1b]2;PWNED"), "{source} {format}: {text}");
        }
    }
}
