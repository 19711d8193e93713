//! Real cgroups made by the test in this machine's hierarchies (v1
//! controllers and a v2 hierarchy without any): a busy loop in one, a
//! memory hog in another, a direct-I/O writer in a third, each found where
//! it should be, within the drift of two reads of the kernel's own files;
//! cgroups removed while they are walked; 10,000 cgroups.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cgroups::Figure::*;
use cgroups::{Cgroup, Figure, Hierarchy, Options, Reader, Sample};
use fixtures::cgroups::{Made, remove_tree};

fn machine() -> Vec<Hierarchy> {
    assert!(
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() } == 0,
        "making cgroups needs root"
    );
    let r = Reader::new(Options::new(Path::new("/proc"), Path::new("/sys"))).unwrap();
    r.hierarchies().cloned().collect()
}

fn hierarchy<'a>(h: &'a [Hierarchy], controller: &str) -> &'a Hierarchy {
    h.iter()
        .find(|h| {
            if controller == "v2" {
                h.v2
            } else {
                h.controllers.iter().any(|c| c == controller)
            }
        })
        .unwrap_or_else(|| panic!("this machine mounts no {controller} hierarchy"))
}

/// Makes `name` in each of `hierarchies`; starts `script` under sh, moves
/// it into them, then lets it run.
fn run_in(made: &mut Made, hierarchies: &[&Hierarchy], name: &str, script: &str) -> u32 {
    let dirs: Vec<PathBuf> = hierarchies.iter().map(|h| h.dir.join(name)).collect();
    made.run_in(&dirs, script)
}

/// `MAJ:MIN` of the whole disk holding `path`.
fn whole_disk(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let disk = if sys.join("partition").exists() {
        sys.join("../dev")
    } else {
        sys.join("dev")
    };
    std::fs::read_to_string(&disk)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}: the temp dir is on no block device",
                disk.display()
            )
        })
        .trim()
        .to_string()
}

/// A number in a kernel file: the whole file, or the value of `key`.
fn kernel(path: &Path, key: Option<&str>, field: usize) -> u64 {
    let t = std::fs::read_to_string(path).unwrap();
    let line = match key {
        None => t.lines().next().unwrap(),
        Some(k) => t.lines().find(|l| l.split(' ').next() == Some(k)).unwrap(),
    };
    line.split(' ').nth(field).unwrap().trim().parse().unwrap()
}

/// A cgroup of the test's own in the v2 hierarchy (`qs-live-PID-tag`),
/// removed with everything below it on drop, and a reader of `files`.
fn v2_base(tag: &str, files: &[&str]) -> (Made, PathBuf, Reader) {
    let h = machine();
    let base = hierarchy(&h, "v2")
        .dir
        .join(format!("qs-live-{}-{tag}", std::process::id()));
    let mut made = Made::default();
    std::fs::create_dir(&base).unwrap();
    made.dirs.push(base.clone());
    (made, base, reader(files))
}

/// A reader that takes every new cgroup at each read: these tests share
/// the machine's hierarchies and run side by side, and one test's 10,000
/// would otherwise take another's new cgroups' share of a read (the share
/// is tested on a fixture tree, where nothing else makes cgroups).
fn reader(files: &[&str]) -> Reader {
    let mut o = Options::new(Path::new("/proc"), Path::new("/sys"));
    o.max_new_per_read = usize::MAX;
    if !files.is_empty() {
        o.files = cgroups::files::select(files).unwrap();
    }
    Reader::new(o).unwrap()
}

/// Held by the tests that make thousands of cgroups: one test's
/// thousands, met by another's first read, would load its walk with room
/// enough for its own and it would never outgrow them.
static THOUSANDS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn thousands() -> std::sync::MutexGuard<'static, ()> {
    THOUSANDS.lock().unwrap_or_else(|e| e.into_inner())
}

fn read(files: &[&str]) -> Sample {
    let mut r = reader(files);
    let mut s = Sample::default();
    r.read(&mut s);
    s
}

/// One read of `files` by a reader without the BPF walk.
fn read_by_files(files: &[&str]) -> Sample {
    let mut o = Options::new(Path::new("/proc"), Path::new("/sys"));
    o.files = cgroups::files::select(files).unwrap();
    o.bpf = false;
    let mut r = Reader::new(o).unwrap();
    let mut t = Sample::default();
    r.read(&mut t);
    assert_eq!(r.bpf_used(), 0);
    t
}

/// The cgroups at and below `parent` in two reads `s` and `t` (only the
/// test's own: other tests make and remove theirs), paired: `count` of
/// them, the same paths and ids, each with the same figures in both.
fn own_pairs(s: &Sample, t: &Sample, parent: &str, count: usize) -> Vec<(Cgroup, Cgroup)> {
    let below = format!("{parent}/");
    let own = |s: &Sample| -> Vec<Cgroup> {
        s.cgroups
            .iter()
            .filter(|c| *c.path == *parent || c.path.starts_with(&below))
            .cloned()
            .collect()
    };
    let (mine, theirs) = (own(s), own(t));
    let ids = |c: &[Cgroup]| c.iter().map(|c| (c.path.clone(), c.id)).collect::<Vec<_>>();
    assert_eq!(ids(&mine), ids(&theirs));
    assert_eq!(mine.len(), count);
    let names = |c: &Cgroup| c.figures.iter().map(|x| x.0).collect::<Vec<_>>();
    for (c, f) in mine.iter().zip(&theirs) {
        assert_eq!(names(c), names(f), "{}: the same figures", c.path);
    }
    mine.into_iter().zip(theirs).collect()
}

/// How far v1's memory usage may move between two reads of an unchanged
/// cgroup: it is "a fuzz value for efficient access" (the kernel's
/// cgroup-v1 memory documentation), charges moving in per-CPU batches of
/// 64 pages.
fn charge_slack() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as u64;
    64 * sys::page_size() * cpus
}

fn figure(s: &Sample, path: &str, f: Figure) -> u64 {
    let c = s
        .cgroups
        .iter()
        .find(|c| &*c.path == path)
        .unwrap_or_else(|| panic!("{path} not read"));
    c.figures
        .get(f)
        .unwrap_or_else(|| panic!("{path}: no {}", f.name()))
}

/// The reader's figure lies between the kernel's before and after it.
fn between(what: &str, before: u64, got: u64, after: u64) {
    assert!(
        before <= got && got <= after,
        "{what}: {before} <= {got} <= {after}"
    );
}

#[test]
fn a_busy_loop_a_memory_hog_and_a_writer_show_up_where_they_run() {
    let h = machine();
    let (v2, cpuacct, memory, blkio, pids) = (
        hierarchy(&h, "v2"),
        hierarchy(&h, "cpuacct"),
        hierarchy(&h, "memory"),
        hierarchy(&h, "blkio"),
        hierarchy(&h, "pids"),
    );
    let me = std::process::id();
    let (busy, hog, io) = (
        format!("qs-live-{me}-busy"),
        format!("qs-live-{me}-hog"),
        format!("qs-live-{me}-io"),
    );
    let mut made = Made::default();
    run_in(
        &mut made,
        &[v2, cpuacct, pids],
        &busy,
        "while :; do :; done",
    );
    run_in(
        &mut made,
        &[memory],
        &hog,
        "x=$(head -c 67108864 /dev/zero | tr '\\0' a); sleep 600",
    );
    let tmp = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let out = tmp.path().join("written");
    // v1 counts a cgroup's block I/O only on a disk with a throttle rule:
    // one no writer reaches (1 TB/s) on the disk under the file.
    let disk = whole_disk(tmp.path());
    std::fs::create_dir(blkio.dir.join(&io)).unwrap();
    made.dirs.push(blkio.dir.join(&io));
    std::fs::write(
        blkio.dir.join(&io).join("blkio.throttle.write_bps_device"),
        format!("{disk} 1099511627776"),
    )
    .unwrap();
    let writer = run_in(
        &mut made,
        &[blkio],
        &io,
        &format!(
            "exec dd if=/dev/zero of={} bs=1M count=32 oflag=direct",
            out.display()
        ),
    );
    // The writer ends; the busy loop runs a while; the hog holds its 64 MiB.
    let w = made.children.iter_mut().find(|c| c.id() == writer).unwrap();
    assert!(w.wait().unwrap().success(), "dd with O_DIRECT failed");
    // Until the hog holds its 64 MiB and the loop has run 0.1 s, however
    // busy the machine.
    let hog_usage = memory.dir.join(&hog).join("memory.usage_in_bytes");
    let v2_usage = v2.dir.join(&busy).join("cpu.stat");
    let v1_usage = cpuacct.dir.join(&busy).join("cpuacct.usage");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let hog_stat = memory.dir.join(&hog).join("memory.stat");
    // memory.stat's counters are flushed from per-CPU ones at most every
    // 2 s or after enough change: wait until they show the 64 MiB too.
    // The hog is still for the reads once its pipeline is done: only the
    // shell holding the text and its sleep are left in its cgroup.
    let hog_procs = memory.dir.join(&hog).join("cgroup.procs");
    let settled = || {
        let mut comms: Vec<String> = std::fs::read_to_string(&hog_procs)
            .unwrap_or_default()
            .lines()
            .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok())
            .map(|c| c.trim().to_string())
            .collect();
        comms.sort();
        comms == ["sh", "sleep"]
    };
    while !settled()
        || kernel(&hog_usage, None, 0) < 64 << 20
        || kernel(&hog_stat, Some("total_rss"), 1) < 64 << 20
        || kernel(&v1_usage, None, 0) < 100_000_000
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the hog and the loop did not start"
        );
        std::thread::sleep(Duration::from_millis(25));
    }

    let (busy_p, hog_p, io_p) = (format!("/{busy}"), format!("/{hog}"), format!("/{io}"));
    let before = (
        kernel(&v2_usage, Some("usage_usec"), 1) * 1000,
        kernel(&v1_usage, None, 0),
        kernel(&hog_usage, None, 0),
        kernel(&hog_stat, Some("total_rss"), 1),
    );
    let all = read(&[]);
    let v1 = read(&["v1:cpuacct.usage", "v1:memory.usage_in_bytes"]);
    let after = (
        kernel(&v2_usage, Some("usage_usec"), 1) * 1000,
        kernel(&v1_usage, None, 0),
        kernel(&hog_usage, None, 0),
        kernel(&hog_stat, Some("total_rss"), 1),
    );
    assert_eq!(all.errors, 0, "{:?}", all.first_error);
    between(
        "busy, v2 cpu.stat",
        before.0,
        figure(&all, &busy_p, CpuUsageNs),
        after.0,
    );
    between(
        "busy, v1 cpuacct.usage",
        before.1,
        figure(&v1, &busy_p, CpuUsageNs),
        after.1,
    );
    assert_eq!(figure(&all, &busy_p, Pids), 1);
    let slack = charge_slack();
    let (lo, hi) = (before.2.min(after.2), before.2.max(after.2));
    between(
        "hog, memory.usage_in_bytes",
        lo - slack,
        figure(&all, &hog_p, MemoryBytes),
        hi + slack,
    );
    assert!(lo >= 64 << 20, "the hog holds {lo} bytes");
    between(
        "hog, memory.stat total_rss",
        before.3.min(after.3) - slack,
        figure(&all, &hog_p, MemoryAnonBytes),
        before.3.max(after.3) + slack,
    );
    // The writer has ended: its cgroup's figures stand still.
    let written: u64 = std::fs::read_to_string(
        blkio
            .dir
            .join(&io)
            .join("blkio.throttle.io_service_bytes_recursive"),
    )
    .unwrap()
    .lines()
    .filter_map(|l| match l.split(' ').collect::<Vec<_>>()[..] {
        [_, "Write", v] => v.parse::<u64>().ok(),
        _ => None,
    })
    .sum();
    assert!(
        written >= 32 << 20,
        "the kernel counts {written} bytes written"
    );
    assert_eq!(figure(&all, &io_p, IoWriteBytes), written);
    assert!(figure(&all, &io_p, IoWrites) >= 32);
    // Each cgroup has the v2 id where it is in the v2 hierarchy.
    let id = all.cgroups.iter().find(|c| *c.path == busy_p).unwrap().id;
    use std::os::unix::fs::MetadataExt;
    assert_eq!(id, std::fs::metadata(v2.dir.join(&busy)).unwrap().ino());
}

#[test]
fn cgroups_removed_and_made_again_while_walked_are_never_an_error() {
    let h = machine();
    let (_made, base, mut r) = v2_base("churn", &[]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let (base, stop) = (base.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Fifty made, then fifty removed: the walk meets both.
                for i in 0..50 {
                    let d = base.join(format!("c{i}"));
                    let _ = std::fs::create_dir(&d);
                    let _ = std::fs::create_dir(d.join("inner"));
                    n += 1;
                }
                for i in 0..50 {
                    let d = base.join(format!("c{i}"));
                    let _ = std::fs::remove_dir(d.join("inner"));
                    let _ = std::fs::remove_dir(&d);
                }
            }
            n
        })
    };
    let mut s = Sample::default();
    let prefix = format!("/{}/", base.file_name().unwrap().to_str().unwrap());
    let mut seen = 0;
    for _ in 0..300 {
        r.read(&mut s);
        assert_eq!(s.errors, 0, "{:?}", s.first_error);
        seen += s
            .cgroups
            .iter()
            .filter(|c| c.path.starts_with(&prefix))
            .count();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let made_n = churn.join().unwrap();
    for i in 0..50 {
        remove_tree(&base.join(format!("c{i}")));
    }
    assert!(made_n > 300, "the churn made {made_n} cgroups");
    // Nothing kept for the cgroups gone: only the kept base remains.
    r.read(&mut s);
    assert_eq!(
        s.cgroups
            .iter()
            .filter(|c| c.path.starts_with(&prefix))
            .count(),
        0
    );
    // Nor any descriptor: at most one directory a cgroup and hierarchy.
    assert!(
        r.kept_fds() <= s.cgroups.len() * h.len(),
        "{} kept",
        r.kept_fds()
    );
    eprintln!("churned cgroups met by the walk: {seen}");
}

#[test]
fn ten_thousand_cgroups_are_read_each_with_its_figures() {
    let _thousands = thousands();
    let (mut made, base, mut r) = v2_base(
        "many",
        &["v2:cpu.stat", "v2:memory.pressure", "v1:pids.current"],
    );
    // A v1 cgroup with one task, walked by the same program: loaded again
    // larger once the v2 cgroups outgrow its rows, it is linked again to
    // this hierarchy too (a link to the walk before would fill rows no
    // longer read: the cgroup would be missing). v2 itself may be read
    // from its files at a read where other tests' cgroups grew by half
    // while the walk was loaded again; the few in pids never do.
    let h = machine();
    let pids = hierarchy(&h, "pids");
    let name = base.file_name().unwrap().to_str().unwrap().to_string();
    run_in(&mut made, &[pids], &name, "exec sleep 600");
    let walked_pids = |r: &Reader| r.walked().any(|w| w.dir == pids.dir);
    // Read once before they are made: they are found through the watches.
    let mut s = Sample::default();
    r.read(&mut s);
    assert!(walked_pids(&r), "{:?}", r.bpf_off());
    assert_eq!(figure(&s, &format!("/{name}"), Pids), 1);
    for i in 0..100 {
        let d = base.join(format!("s{i}"));
        std::fs::create_dir(&d).unwrap();
        made.dirs.push(d.clone());
        for j in 0..99 {
            let c = d.join(format!("c{j}"));
            std::fs::create_dir(&c).unwrap();
            made.dirs.push(c);
        }
    }
    let prefix = format!("/{}/", base.file_name().unwrap().to_str().unwrap());
    // Told to hand a walk that outgrew its rows over (as the agent's
    // sampler does while the cgroups are few), the read stops short of
    // loading it again, and forgets nothing.
    r.set_hand_over(Some(1_000));
    r.read(&mut s);
    assert!(
        r.outgrown().is_some_and(|n| n >= 10_000),
        "outgrown {:?}, walk off {:?}",
        r.outgrown(),
        r.bpf_off()
    );
    assert!(s.cgroups.is_empty());
    r.set_hand_over(None);
    for round in 0..2 {
        r.read(&mut s);
        assert_eq!(s.errors, 0, "{:?}", s.first_error);
        let ours: Vec<_> = s
            .cgroups
            .iter()
            .filter(|c| c.path.starts_with(&prefix))
            .collect();
        assert_eq!(ours.len(), 10_000, "round {round}");
        assert_eq!(r.bpf_off(), None, "round {round}");
        assert!(walked_pids(&r), "round {round}");
        assert_eq!(figure(&s, &format!("/{name}"), Pids), 1, "round {round}");
        for c in &ours {
            assert_eq!(c.figures.get(CpuUsageNs), Some(0), "{}", c.path);
            assert_eq!(c.figures.get(MemorySomeUs), Some(0), "{}", c.path);
        }
    }
}

#[test]
fn cgroups_made_and_removed_between_reads_are_found_by_the_next() {
    let (mut made, base, mut r) = v2_base("between", &["v2:cpu.stat"]);
    let mut s = Sample::default();
    let top = format!("/{}", base.file_name().unwrap().to_str().unwrap());
    let ours = |s: &Sample| -> Vec<String> {
        s.cgroups
            .iter()
            .filter(|c| c.path.starts_with(&top))
            .map(|c| c.path.to_string())
            .collect()
    };
    r.read(&mut s);
    assert_eq!(ours(&s), std::slice::from_ref(&top));
    // Made after the base was listed (and watched): found by the next read,
    // a child of a new cgroup too.
    std::fs::create_dir_all(base.join("a/b")).unwrap();
    made.dirs.extend([base.join("a"), base.join("a/b")]);
    r.read(&mut s);
    assert_eq!(
        ours(&s),
        [top.clone(), format!("{top}/a"), format!("{top}/a/b")]
    );
    let id_b = s
        .cgroups
        .iter()
        .find(|c| c.path.ends_with("/a/b"))
        .unwrap()
        .id;
    // Removed, then made again under the same path: a new id.
    std::fs::remove_dir(base.join("a/b")).unwrap();
    r.read(&mut s);
    assert_eq!(ours(&s), [top.clone(), format!("{top}/a")]);
    std::fs::create_dir(base.join("a/b")).unwrap();
    r.read(&mut s);
    let again = s
        .cgroups
        .iter()
        .find(|c| c.path.ends_with("/a/b"))
        .unwrap()
        .id;
    assert_ne!(again, id_b);
    assert_eq!(s.errors, 0, "{:?}", s.first_error);
}

#[test]
fn more_changes_than_the_kernel_queues_lead_to_a_full_listing() {
    let _thousands = thousands();
    let (mut made, base, mut r) = v2_base("flood", &["v2:cpu.stat"]);
    let mut s = Sample::default();
    r.read(&mut s);
    // More creations in one watched directory than the kernel queues
    // (fs.inotify.max_queued_events) before the next read.
    let queued: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let n = queued + 500;
    for i in 0..n {
        let d = base.join(format!("c{i}"));
        std::fs::create_dir(&d).unwrap();
        made.dirs.push(d);
    }
    r.read(&mut s);
    let prefix = format!("/{}/", base.file_name().unwrap().to_str().unwrap());
    assert_eq!(
        s.cgroups
            .iter()
            .filter(|c| c.path.starts_with(&prefix))
            .count(),
        n
    );
    assert_eq!(s.errors, 0, "{:?}", s.first_error);
}

/// The v2 files the BPF walk gives.
const BPF_FILES: [&str; 4] = [
    "v2:cpu.stat",
    "v2:cpu.pressure",
    "v2:memory.pressure",
    "v2:io.pressure",
];

#[test]
fn the_bpf_walk_gives_what_the_v2_files_give() {
    let (mut made, base, mut by_bpf) = v2_base("bpf", &BPF_FILES);
    // Two loops in a nested cgroup: the parent's figures count the child's.
    let child = base.join("loop");
    made.run_in(std::slice::from_ref(&child), "while :; do :; done");
    made.run_in(std::slice::from_ref(&child), "while :; do :; done");
    let usage = |p: &Path| kernel(&p.join("cpu.stat"), Some("usage_usec"), 1) * 1000;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while usage(&child) < 200_000_000 {
        assert!(
            std::time::Instant::now() < deadline,
            "the loops did not run"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
    let name = base.file_name().unwrap().to_str().unwrap();
    let (parent_p, child_p) = (format!("/{name}"), format!("/{name}/loop"));
    let some = |p: &Path| -> u64 {
        let t = std::fs::read_to_string(p.join("cpu.pressure")).unwrap();
        let l = t.lines().find(|l| l.starts_with("some")).unwrap();
        l.rsplit("total=").next().unwrap().trim().parse().unwrap()
    };
    let before = (usage(&base), usage(&child), some(&child));
    let mut s = Sample::default();
    by_bpf.read(&mut s);
    let after = (usage(&base), usage(&child), some(&child));
    assert_eq!(by_bpf.bpf_off(), None, "the BPF walk did not load");
    assert!(by_bpf.bpf_used() > 0, "the BPF walk gave nothing");
    assert_eq!(s.errors, 0, "{:?}", s.first_error);
    between(
        "parent's CPU",
        before.0,
        figure(&s, &parent_p, CpuUsageNs),
        after.0,
    );
    between(
        "child's CPU",
        before.1,
        figure(&s, &child_p, CpuUsageNs),
        after.1,
    );
    // Pressure as the kernel last gathered it: a file read gathers first.
    between(
        "child's CPU pressure",
        before.2,
        figure(&s, &child_p, CpuSomeUs),
        after.2,
    );
    for p in [&parent_p, &child_p] {
        let (u, us, sy) = (
            figure(&s, p, CpuUsageNs),
            figure(&s, p, CpuUserNs),
            figure(&s, p, CpuSystemNs),
        );
        assert!(
            us + sy <= u && u - (us + sy) <= 2000,
            "{p}: {us} + {sy} against {u}"
        );
    }
    // The files, read after it by a reader without it: the same cgroups
    // and figures, each counter as far on or further (user and system are
    // split by each reader from its own last split: not compared).
    let t = read_by_files(&BPF_FILES);
    for (c, f) in own_pairs(&s, &t, &parent_p, 2) {
        for (k, v) in c
            .figures
            .iter()
            .filter(|(k, _)| !matches!(k, CpuUserNs | CpuSystemNs))
        {
            let later = f.figures.get(k).unwrap();
            assert!(
                v <= later,
                "{}: {} {v}, then {later} from the file",
                c.path,
                k.name()
            );
        }
    }
    drop(made);
}

#[test]
fn a_cgroup_made_in_v2_after_v1_takes_its_v2_id() {
    use std::os::unix::fs::MetadataExt;
    let h = machine();
    let (v2, pids) = (hierarchy(&h, "v2"), hierarchy(&h, "pids"));
    let name = format!("qs-live-{}-late", std::process::id());
    let mut made = Made::default();
    std::fs::create_dir(pids.dir.join(&name)).unwrap();
    made.dirs.push(pids.dir.join(&name));
    let mut r = reader(&["v2:cpu.stat", "v1:pids.current"]);
    let mut s = Sample::default();
    r.read(&mut s);
    let path = format!("/{name}");
    let v1_ino = std::fs::metadata(pids.dir.join(&name)).unwrap().ino();
    let id = |s: &Sample| s.cgroups.iter().find(|c| *c.path == path).map(|c| c.id);
    assert_eq!(id(&s), Some(v1_ino), "only in v1: its v1 inode");
    std::fs::create_dir(v2.dir.join(&name)).unwrap();
    made.dirs.push(v2.dir.join(&name));
    r.read(&mut s);
    let v2_ino = std::fs::metadata(v2.dir.join(&name)).unwrap().ino();
    assert_eq!(id(&s), Some(v2_ino), "in v2 too: the kernel's cgroup id");
    // Its CPU time is its own (an empty cgroup: none used).
    assert_eq!(figure(&s, &path, CpuUsageNs), 0);
    drop(made);
}

/// The v1 files the BPF walk gives.
const V1_BPF_FILES: [&str; 13] = [
    "v1:cpuacct.usage",
    "v1:cpuacct.usage_user",
    "v1:cpuacct.usage_sys",
    "v1:cpu.stat",
    "v1:cpu.cfs_quota_us",
    "v1:cpu.cfs_period_us",
    "v1:memory.usage_in_bytes",
    "v1:memory.limit_in_bytes",
    "v1:memory.failcnt",
    "v1:memory.oom_control",
    "v1:blkio.throttle.io_service_bytes_recursive",
    "v1:blkio.throttle.io_serviced_recursive",
    "v1:pids.current",
];

#[test]
fn the_bpf_walk_gives_what_the_v1_files_give() {
    let h = machine();
    let v1: Vec<&Hierarchy> = ["cpuacct", "cpu", "memory", "blkio", "pids"]
        .iter()
        .map(|c| hierarchy(&h, c))
        .collect();
    let name = format!("qs-live-{}-v1bpf", std::process::id());
    let mut made = Made::default();
    for x in &v1 {
        made.make(x.dir.join(&name));
    }
    // A loop holding 16 MiB in a child, under a parent with a CPU quota
    // (half a CPU: it is throttled) and a memory limit.
    let (cpu, memory) = (hierarchy(&h, "cpu"), hierarchy(&h, "memory"));
    std::fs::write(cpu.dir.join(&name).join("cpu.cfs_quota_us"), "50000").unwrap();
    std::fs::write(
        memory.dir.join(&name).join("memory.limit_in_bytes"),
        "1073741824",
    )
    .unwrap();
    let children: Vec<PathBuf> = v1.iter().map(|x| x.dir.join(&name).join("loop")).collect();
    made.run_in(
        &children,
        "x=$(head -c 16777216 /dev/zero | tr '\\0' a); while :; do :; done",
    );
    let (cpuacct, child) = (hierarchy(&h, "cpuacct"), format!("{name}/loop"));
    let pids = hierarchy(&h, "pids").dir.join(&child).join("pids.current");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    // Until the text is held and only the looping shell is left (the
    // pipeline's processes gone: the figures stand still but the CPU's).
    while kernel(&cpuacct.dir.join(&child).join("cpuacct.usage"), None, 0) < 200_000_000
        || kernel(&pids, None, 0) != 1
        || kernel(
            &cpu.dir.join(&name).join("cpu.stat"),
            Some("nr_throttled"),
            1,
        ) == 0
        || kernel(
            &memory.dir.join(&child).join("memory.usage_in_bytes"),
            None,
            0,
        ) < 16 << 20
    {
        assert!(std::time::Instant::now() < deadline, "the loop did not run");
        std::thread::sleep(Duration::from_millis(25));
    }
    let mut by_bpf = reader(&V1_BPF_FILES);
    let mut s = Sample::default();
    by_bpf.read(&mut s);
    assert_eq!(by_bpf.bpf_off(), None, "the BPF walk did not load");
    assert_eq!(by_bpf.bpf_used(), v1.len(), "hierarchies walked by BPF");
    assert_eq!(s.errors, 0, "{:?}", s.first_error);
    let t = read_by_files(&V1_BPF_FILES);
    let (parent_p, child_p) = (format!("/{name}"), format!("/{child}"));
    let slack = charge_slack();
    for (c, f) in own_pairs(&s, &t, &parent_p, 2) {
        for (k, v) in c.figures.iter() {
            let later = f.figures.get(k).unwrap();
            let what = format!("{} {}", c.path, k.name());
            match k {
                // Counters: as far on or further in the files read after.
                CpuUsageNs | CpuUserNs | CpuSystemNs | CpuPeriods | CpuThrottledPeriods
                | CpuThrottledNs => assert!(v <= later, "{what}: {v}, then {later}"),
                // v1's charge moves in per-CPU batches (see above).
                MemoryBytes => between(&what, later.saturating_sub(slack), v, later + slack),
                _ => assert_eq!(v, later, "{what}"),
            }
        }
    }
    assert_eq!(figure(&s, &parent_p, CpuQuotaUs), 50_000);
    assert_eq!(figure(&s, &parent_p, CpuPeriodUs), 100_000);
    assert_eq!(figure(&s, &parent_p, MemoryMaxBytes), 1 << 30);
    assert!(figure(&s, &parent_p, CpuThrottledPeriods) > 0);
    assert!(figure(&s, &child_p, MemoryBytes) >= 16 << 20);
    assert_eq!(figure(&s, &child_p, Pids), 1);
    assert_eq!(figure(&s, &child_p, IoWriteBytes), 0);
    assert!(figure(&s, &child_p, CpuUsageNs) >= 200_000_000);
    drop(made);
}

#[test]
fn an_idle_cgroups_memory_stat_is_carried_between_the_reads_that_skip_it() {
    let h = machine();
    let memory = hierarchy(&h, "memory");
    let name = format!("qs-live-{}-idle", std::process::id());
    let shm = PathBuf::from(format!("/dev/shm/{name}"));
    let mut made = Made::default();
    // 8 MiB of shared memory charged to the cgroup, which then has no task.
    let pid = made.run_in(
        &[memory.dir.join(&name)],
        &format!("head -c 8388608 /dev/zero > {}", shm.display()),
    );
    let c = made.children.iter_mut().find(|c| c.id() == pid).unwrap();
    assert!(c.wait().unwrap().success());
    let stat = memory.dir.join(&name).join("memory.stat");
    // memory.stat's counters are flushed from per-CPU ones at most every
    // 2 s or after enough change: until they show the 8 MiB; nothing
    // moves them after that.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while kernel(&stat, Some("total_shmem"), 1) < 8 << 20 {
        assert!(
            std::time::Instant::now() < deadline,
            "memory.stat never showed the 8 MiB"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
    let path = format!("/{name}");
    let mut r = reader(&["v1:memory.usage_in_bytes", "v1:memory.stat"]);
    let mut s = Sample::default();
    // The first read reads the file; the next ones carry its figures
    // (nothing moved: no task, the same charge) until its turn comes.
    for i in 0..cgroups::MEMORY_STAT_EVERY + 2 {
        r.read(&mut s);
        assert_eq!(s.errors, 0, "{:?}", s.first_error);
        let got = figure(&s, &path, MemoryShmemBytes);
        assert_eq!(got, kernel(&stat, Some("total_shmem"), 1), "read {i}");
        assert!(got >= 8 << 20, "read {i}: {got}");
        assert!(figure(&s, &path, MemoryFileBytes) >= 8 << 20, "read {i}");
    }
    let _ = std::fs::remove_file(&shm);
    drop(made);
}
