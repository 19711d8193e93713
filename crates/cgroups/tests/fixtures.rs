//! The reader on the committed trees: `cgroup-v2` (a pure v2 host with
//! controllers enabled, written from the kernel's cgroup-v2 documentation)
//! and `cgroup-v1` (v1 controllers beside a v2 hierarchy without any, as
//! this machine's kernel mounts them), each figure checked exactly.

use cgroups::Figure::*;
use cgroups::{Figure, Options, Reader, Sample};

fn read(tree: &str, tweak: impl FnOnce(&mut Options)) -> Sample {
    let (proc_root, sys_root) = fixtures::roots(tree);
    let mut opts = Options::new(&proc_root, &sys_root);
    tweak(&mut opts);
    let mut r = Reader::new(opts).unwrap();
    let mut s = Sample::default();
    r.read(&mut s);
    s
}

fn get(s: &Sample, path: &str, f: Figure) -> Option<u64> {
    let c = s
        .cgroups
        .iter()
        .find(|c| &*c.path == path)
        .unwrap_or_else(|| panic!("{path} not read"));
    c.figures.get(f)
}

const POD: &str = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice";

#[test]
fn a_v2_host_gives_every_cgroup_in_path_order_with_its_files_figures() {
    let s = read("cgroup-v2", |_| {});
    assert_eq!(
        (s.errors, s.left_out, s.skipped_lines),
        (0, 0, 0),
        "{:?}",
        s.first_error
    );
    let paths: Vec<(&str, u16)> = s.cgroups.iter().map(|c| (&*c.path, c.depth)).collect();
    let scope = format!(
        "{POD}/cri-containerd-4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b.scope"
    );
    assert_eq!(
        paths,
        [
            ("/", 0),
            ("/kubepods.slice", 1),
            ("/kubepods.slice/kubepods-burstable.slice", 2),
            (POD, 3),
            (scope.as_str(), 4),
            ("/system.slice", 1),
            ("/system.slice/cron.service", 2),
            ("/user.slice", 1),
        ]
    );
    let ids: std::collections::HashSet<u64> = s.cgroups.iter().map(|c| c.id).collect();
    assert_eq!(ids.len(), s.cgroups.len(), "each cgroup its own id");

    let sys = "/system.slice";
    assert_eq!(get(&s, sys, CpuUsageNs), Some(10_300_000));
    assert_eq!(get(&s, sys, CpuUserNs), Some(10_000_000));
    assert_eq!(get(&s, sys, CpuSystemNs), Some(300_000));
    assert_eq!(get(&s, sys, CpuPeriods), Some(100));
    assert_eq!(get(&s, sys, CpuThrottledPeriods), Some(10));
    assert_eq!(get(&s, sys, CpuThrottledNs), Some(500_000));
    assert_eq!(get(&s, sys, CpuQuotaUs), None, "max");
    assert_eq!(get(&s, sys, CpuPeriodUs), Some(100_000));
    assert_eq!(get(&s, sys, MemoryBytes), Some(163_840));
    assert_eq!(get(&s, sys, MemoryMaxBytes), None, "max");
    assert_eq!(get(&s, sys, MemoryAnonBytes), Some(40_960));
    assert_eq!(get(&s, sys, MemoryFileBytes), Some(81_920));
    assert_eq!(get(&s, sys, MemoryKernelBytes), Some(10_240));
    assert_eq!(get(&s, sys, MemoryShmemBytes), Some(5_120));
    assert_eq!(get(&s, sys, MemorySockBytes), Some(0));
    assert_eq!(get(&s, sys, MemorySlabBytes), Some(1_280));
    assert_eq!(get(&s, sys, MemoryMappedFileBytes), Some(2_560));
    assert_eq!(get(&s, sys, MemoryInactiveFileBytes), Some(20_480));
    assert_eq!(get(&s, sys, MemoryActiveFileBytes), Some(61_440));
    assert_eq!(get(&s, sys, PageFaults), Some(1_000));
    assert_eq!(get(&s, sys, MajorPageFaults), Some(10));
    assert_eq!(get(&s, sys, WorkingsetRefaultAnon), Some(0));
    assert_eq!(get(&s, sys, WorkingsetRefaultFile), Some(30));
    assert_eq!(get(&s, sys, MemoryFailcnt), None, "v1 only");
    assert_eq!(get(&s, sys, OomEvents), Some(2));
    assert_eq!(get(&s, sys, OomKills), Some(1));
    assert_eq!(
        get(&s, sys, IoReadBytes),
        Some(40_960 + 4_096),
        "two devices summed"
    );
    assert_eq!(get(&s, sys, IoWriteBytes), Some(81_920));
    assert_eq!(get(&s, sys, IoReads), Some(11));
    assert_eq!(get(&s, sys, IoWrites), Some(20));
    assert_eq!(get(&s, sys, Pids), Some(10));
    assert_eq!(get(&s, sys, CpuSomeUs), Some(1_000));
    assert_eq!(get(&s, sys, CpuFullUs), Some(100));
    assert_eq!(get(&s, sys, MemorySomeUs), Some(2_000));
    assert_eq!(get(&s, sys, IoFullUs), Some(300));

    // Limits; a cgroup without io.stat; the root, which has no limits,
    // current usage or pids of its own.
    assert_eq!(get(&s, "/kubepods.slice", CpuQuotaUs), Some(200_000));
    assert_eq!(
        get(&s, "/kubepods.slice", MemoryMaxBytes),
        Some(200_000_000)
    );
    assert_eq!(get(&s, POD, CpuQuotaUs), Some(50_000));
    assert_eq!(get(&s, "/user.slice", IoReadBytes), None);
    assert_eq!(get(&s, "/user.slice", CpuUsageNs), Some(5_300_000));
    assert_eq!(get(&s, "/", CpuUsageNs), Some(1_300_000));
    assert_eq!(get(&s, "/", MemoryBytes), None);
    assert_eq!(get(&s, "/", Pids), None);
}

#[test]
fn a_v1_host_joins_its_controllers_hierarchies_by_path() {
    let (proc_root, sys_root) = fixtures::roots("cgroup-v1");
    let r = Reader::new(Options::new(&proc_root, &sys_root)).unwrap();
    let h: Vec<(bool, Vec<String>, String)> = r
        .hierarchies()
        .map(|h| (h.v2, h.controllers.clone(), h.mount.display().to_string()))
        .collect();
    let c = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // devices and name=systemd give nothing read; pids mounted twice counts once.
    assert_eq!(
        h,
        [
            (true, c(&[]), "/sys/fs/cgroup/unified".to_string()),
            (
                false,
                c(&["cpu", "cpuacct"]),
                "/sys/fs/cgroup/cpu,cpuacct".to_string()
            ),
            (false, c(&["memory"]), "/sys/fs/cgroup/memory".to_string()),
            (false, c(&["blkio"]), "/sys/fs/cgroup/blkio".to_string()),
            (false, c(&["pids"]), "/sys/fs/cgroup/pids".to_string()),
        ]
    );
    // A v2 hierarchy without controllers: only its core files are looked
    // for in each cgroup, not the memory.* that are in none of them.
    let all: Vec<&'static cgroups::File> = cgroups::FILES.iter().collect();
    let names =
        |h: &cgroups::Hierarchy| -> Vec<&str> { h.files(&all).iter().map(|f| f.name).collect() };
    let unified = r.hierarchies().next().unwrap();
    assert_eq!(
        names(unified),
        ["cpu.stat", "cpu.pressure", "memory.pressure", "io.pressure"]
    );
    let (proc_root, sys_root) = fixtures::roots("cgroup-v2");
    let v2 = Reader::new(Options::new(&proc_root, &sys_root)).unwrap();
    let v2 = v2.hierarchies().next().unwrap();
    assert_eq!(v2.controllers, c(&["cpu", "io", "memory", "pids"]));
    let every_v2 = cgroups::FILES
        .iter()
        .filter(|f| f.version == cgroups::files::Version::V2);
    assert_eq!(names(v2).len(), every_v2.count());

    let s = read("cgroup-v1", |_| {});
    assert_eq!(
        (s.errors, s.left_out, s.skipped_lines),
        (0, 0, 0),
        "{:?}",
        s.first_error
    );
    let paths: Vec<&str> = s.cgroups.iter().map(|c| &*c.path).collect();
    let container = "/docker/4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b";
    assert_eq!(
        paths,
        [
            "/",
            "/docker",
            container,
            "/memory-only",
            "/system.slice",
            "/system.slice/cron.service",
            "/user.slice"
        ]
    );
    let sys = "/system.slice";
    // CPU time from the v2 hierarchy (read first), throttling from v1's cpu.
    assert_eq!(get(&s, sys, CpuUsageNs), Some(10_301_000));
    assert_eq!(get(&s, sys, CpuSystemNs), Some(301_000));
    assert_eq!(get(&s, sys, CpuPeriods), Some(100));
    assert_eq!(get(&s, sys, CpuThrottledPeriods), Some(10));
    assert_eq!(get(&s, sys, CpuThrottledNs), Some(500_000));
    assert_eq!(get(&s, sys, CpuQuotaUs), None, "-1");
    assert_eq!(get(&s, sys, MemoryBytes), Some(163_840));
    assert_eq!(get(&s, sys, MemoryMaxBytes), None, "v1's no limit");
    assert_eq!(get(&s, sys, MemoryAnonBytes), Some(40_960));
    assert_eq!(get(&s, sys, MemoryFileBytes), Some(81_920));
    assert_eq!(get(&s, sys, MemoryInactiveFileBytes), Some(20_480));
    assert_eq!(get(&s, sys, PageFaults), Some(1_000));
    assert_eq!(get(&s, sys, MemoryKernelBytes), None, "v2 only");
    assert_eq!(get(&s, sys, MemoryFailcnt), Some(2));
    assert_eq!(get(&s, sys, OomKills), Some(1));
    assert_eq!(get(&s, sys, IoReadBytes), Some(40_960));
    assert_eq!(get(&s, sys, IoWrites), Some(20));
    assert_eq!(get(&s, sys, Pids), Some(10));
    assert_eq!(get(&s, sys, MemorySomeUs), Some(2_000));
    assert_eq!(get(&s, "/docker", CpuQuotaUs), Some(200_000));
    assert_eq!(get(&s, "/docker", MemoryMaxBytes), Some(200_000_000));
    assert_eq!(
        get(&s, "/user.slice", IoReadBytes),
        Some(0),
        "Total 0: no I/O yet"
    );
    assert_eq!(get(&s, "/memory-only", MemoryBytes), Some(4_096));
    assert_eq!(get(&s, "/memory-only", CpuUsageNs), None);
    assert_eq!(get(&s, "/", Pids), None);
}

#[test]
fn only_the_files_chosen_are_read() {
    let files = cgroups::files::select(&["memory.current", "v1:memory.usage_in_bytes"]).unwrap();
    for tree in ["cgroup-v2", "cgroup-v1"] {
        let s = read(tree, |o| o.files = files.clone());
        let sys = s
            .cgroups
            .iter()
            .find(|c| &*c.path == "/system.slice")
            .unwrap();
        let present: Vec<Figure> = sys.figures.iter().map(|(f, _)| f).collect();
        assert_eq!(present, [MemoryBytes], "{tree}");
    }
}

#[test]
fn cgroups_past_the_cap_are_left_out_and_counted() {
    let s = read("cgroup-v2", |o| o.max_cgroups = 3);
    assert_eq!(s.cgroups.len(), 3);
    // Those met past the cap (their children are not walked).
    assert!(s.left_out >= 1, "{}", s.left_out);
    // With no descriptor kept, and with every file kept open: the same figures.
    let a = read("cgroup-v2", |o| o.max_fds = 0);
    let b = read("cgroup-v2", |o| o.keep_open = true);
    let c = read("cgroup-v2", |_| {});
    let figures = |s: &Sample| {
        s.cgroups
            .iter()
            .map(|c| (c.path.clone(), c.figures.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(figures(&a), figures(&c));
    assert_eq!(figures(&b), figures(&c));
}

#[test]
fn a_burst_of_new_cgroups_is_taken_a_share_at_a_time_after_the_first_read() {
    let t = fixtures::Tree::copy_of("cgroup-v2");
    let mut opts = Options::new(&t.proc_root(), &t.sys_root());
    opts.max_new_per_read = 2;
    let mut r = Reader::new(opts).unwrap();
    let mut s = Sample::default();
    // The first read takes every cgroup, past the share.
    r.read(&mut s);
    let first = s.cgroups.len();
    assert!(first > 2, "{first}");
    assert_eq!(s.left_out, 0);
    // Five new ones: two a read, the rest left out and counted.
    for j in 0..5 {
        let cg = format!("fs/cgroup/system.slice/burst-{j}.service");
        t.sys_file(&format!("{cg}/cgroup.procs"), "");
        t.sys_file(
            &format!("{cg}/memory.current"),
            format!("{}\n", 4096 * (j + 1)),
        );
    }
    let mut seen = Vec::new();
    for _ in 0..4 {
        r.read(&mut s);
        seen.push((s.cgroups.len() - first, s.left_out));
    }
    assert_eq!(seen, [(2, 3), (4, 1), (5, 0), (5, 0)]);
    let five = s
        .cgroups
        .iter()
        .find(|c| &*c.path == "/system.slice/burst-4.service");
    assert_eq!(
        five.and_then(|c| c.figures.get(MemoryBytes)),
        Some(4096 * 5)
    );
}

#[test]
fn files_half_written_or_unreadable_cost_only_their_own_figures() {
    let t = fixtures::Tree::copy_of("cgroup-v2");
    let cg = "fs/cgroup/system.slice";
    // Cut short mid-line, garbage, and a directory where a file was.
    t.sys_file(&format!("{cg}/cpu.stat"), "usage_usec 10300\nuser_usec 100");
    t.sys_file(&format!("{cg}/memory.current"), "16\u{0}84x\n");
    let io = t.sys_root().join(cg).join("io.stat");
    std::fs::remove_file(&io).unwrap();
    std::fs::create_dir(&io).unwrap();
    let mut r = Reader::new(Options::new(&t.proc_root(), &t.sys_root())).unwrap();
    let mut s = Sample::default();
    r.read(&mut s);
    assert_eq!(s.errors, 2, "{:?}", s.first_error);
    let e = s.first_error.clone().unwrap();
    assert!(
        e.contains("/system.slice") && (e.contains("memory.current") || e.contains("io.stat")),
        "{e}"
    );
    assert_eq!(s.skipped_lines, 0, "a line cut short is still a number");
    let sys = "/system.slice";
    assert_eq!(get(&s, sys, CpuUsageNs), Some(10_300_000));
    assert_eq!(get(&s, sys, CpuUserNs), Some(100_000), "what was there");
    assert_eq!(get(&s, sys, CpuSystemNs), None);
    assert_eq!(get(&s, sys, MemoryBytes), None);
    assert_eq!(get(&s, sys, IoReadBytes), None);
    assert_eq!(
        get(&s, sys, MemoryAnonBytes),
        Some(40_960),
        "the other files read"
    );
    assert_eq!(
        get(&s, "/system.slice/cron.service", MemoryBytes),
        Some(49_152)
    );
    // A cgroup gone between two reads: no error, no row.
    std::fs::remove_dir_all(t.sys_root().join("fs/cgroup/system.slice/cron.service")).unwrap();
    r.read(&mut s);
    assert!(s.cgroups.iter().all(|c| !c.path.contains("cron")));
    assert_eq!(s.errors, 2);
}

/// Settings (limits, periods) are read at a cgroup's first read, then every
/// `settings_every` reads; the reads between give the last ones, and the
/// counts are read every time.
#[test]
fn settings_are_read_at_first_and_then_every_few_reads() {
    let t = fixtures::Tree::copy_of("cgroup-v2");
    let cg = "fs/cgroup/system.slice";
    let mut opts = Options::new(&t.proc_root(), &t.sys_root());
    opts.settings_every = 3;
    let mut r = Reader::new(opts).unwrap();
    let mut s = Sample::default();
    r.read(&mut s);
    let sys = "/system.slice";
    assert_eq!(get(&s, sys, MemoryMaxBytes), None, "max: no limit");
    assert_eq!(get(&s, sys, CpuPeriodUs), Some(100_000));
    // A limit and a period written, and the usage moved.
    t.sys_file(&format!("{cg}/memory.max"), "1048576\n");
    t.sys_file(&format!("{cg}/cpu.max"), "50000 200000\n");
    t.sys_file(&format!("{cg}/memory.current"), "200000\n");
    for _ in 0..2 {
        r.read(&mut s);
        assert_eq!(
            get(&s, sys, MemoryBytes),
            Some(200_000),
            "counts every read"
        );
        assert_eq!(
            get(&s, sys, MemoryMaxBytes),
            None,
            "the settings read before"
        );
        assert_eq!(get(&s, sys, CpuPeriodUs), Some(100_000));
    }
    r.read(&mut s);
    assert_eq!(get(&s, sys, MemoryMaxBytes), Some(1_048_576));
    assert_eq!(get(&s, sys, CpuQuotaUs), Some(50_000));
    assert_eq!(get(&s, sys, CpuPeriodUs), Some(200_000));
    // A cgroup made since has its settings at its first read.
    let new = t.sys_root().join(cg).join("new.service");
    std::fs::create_dir(&new).unwrap();
    for (f, text) in [
        ("cgroup.procs", ""),
        ("memory.max", "4096\n"),
        ("memory.current", "8192\n"),
    ] {
        std::fs::write(new.join(f), text).unwrap();
    }
    r.read(&mut s);
    let n = "/system.slice/new.service";
    assert_eq!(get(&s, n, MemoryMaxBytes), Some(4096));
    assert_eq!(get(&s, n, MemoryBytes), Some(8192));
    // Every read: the written limit at once.
    let mut opts = Options::new(&t.proc_root(), &t.sys_root());
    opts.settings_every = 1;
    let mut r = Reader::new(opts).unwrap();
    r.read(&mut s);
    t.sys_file(&format!("{cg}/memory.max"), "2097152\n");
    r.read(&mut s);
    assert_eq!(get(&s, sys, MemoryMaxBytes), Some(2_097_152));
}

/// Cgroups removed and made between reads, some under the paths of those
/// removed (their places in the reader are taken again): each read gives
/// what a reader made for it alone gives, in path order.
#[test]
fn cgroups_made_and_removed_between_reads_read_as_a_new_reader_reads_them() {
    let t = fixtures::Tree::copy_of("cgroup-v2");
    let slice = t.sys_root().join("fs/cgroup/system.slice");
    let mut r = Reader::new(Options::new(&t.proc_root(), &t.sys_root())).unwrap();
    let mut s = Sample::default();
    let same_as_new = |s: &Sample| {
        let fresh = read_tree(&t);
        let rows = |s: &Sample| {
            s.cgroups
                .iter()
                .map(|c| (c.path.to_string(), c.depth, c.figures.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(rows(s), rows(&fresh));
        assert!(s.cgroups.windows(2).all(|w| w[0].path < w[1].path));
    };
    r.read(&mut s);
    same_as_new(&s);
    let make = |name: &str, bytes: u64| {
        let d = slice.join(name);
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("cgroup.procs"), "").unwrap();
        std::fs::write(d.join("memory.current"), format!("{bytes}\n")).unwrap();
    };
    for round in 0..3u64 {
        std::fs::remove_dir_all(slice.join("cron.service")).unwrap();
        r.read(&mut s);
        same_as_new(&s);
        assert!(s.cgroups.iter().all(|c| !c.path.contains("cron")));
        make("cron.service", 4096 * (round + 1));
        make(&format!("new{round}.service"), 8192);
        r.read(&mut s);
        same_as_new(&s);
        assert_eq!(
            get(&s, "/system.slice/cron.service", MemoryBytes),
            Some(4096 * (round + 1))
        );
        assert_eq!(
            get(
                &s,
                &format!("/system.slice/new{round}.service"),
                MemoryBytes
            ),
            Some(8192)
        );
    }
}

fn read_tree(t: &fixtures::Tree) -> Sample {
    let mut r = Reader::new(Options::new(&t.proc_root(), &t.sys_root())).unwrap();
    let mut s = Sample::default();
    r.read(&mut s);
    s
}

#[test]
fn a_depth_set_between_reads_forgets_the_deeper_cgroups_and_lifting_it_finds_them_again() {
    let (proc_root, sys_root) = fixtures::roots("cgroup-v2");
    let mut r = Reader::new(Options::new(&proc_root, &sys_root)).unwrap();
    let mut s = Sample::default();
    let seen = |s: &Sample| -> Vec<_> {
        s.cgroups
            .iter()
            .map(|c| (c.path.clone(), c.depth))
            .collect()
    };
    r.read(&mut s);
    let all = seen(&s);
    assert!(all.iter().any(|(_, d)| *d >= 3), "{all:?}");
    assert_eq!(r.max_depth(), None);
    r.set_max_depth(Some(1));
    assert_eq!(r.max_depth(), Some(1));
    r.read(&mut s);
    let want: Vec<_> = all.iter().filter(|(_, d)| *d <= 1).cloned().collect();
    assert_eq!(seen(&s), want);
    let deeper = all.iter().filter(|(_, d)| *d == 2).count() as u64;
    assert_eq!(s.left_out, deeper, "the children of the last level kept");
    r.set_max_depth(None);
    r.read(&mut s);
    assert_eq!(seen(&s), all);
    assert_eq!(s.left_out, 0);
}
