//! GPU figures per process: on fixture trees of DRM fdinfo files in the
//! kernel's documented format from two drivers (amdgpu and i915, with a
//! client shared by two descriptors and by a parent and its child, and the
//! same client id on two devices), read through the procfs backend's scan;
//! and on the live kernel, the BPF scan for descriptors of a character
//! device (this machine has no GPU, so the scan is pointed at /dev/zero's
//! major, which is what it is checked to find).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use proctable::{BackendChoice, Field, Fields, Gpu, Proc, ProcTable, Query};

fn query() -> Query {
    Query {
        fields: Fields::stat().with(Field::Gpu),
        ..Query::default()
    }
}

fn gpu_of(rows: &[Proc], pid: u32) -> Gpu {
    rows.iter()
        .find(|p| p.pid == pid)
        .unwrap_or_else(|| panic!("no row for {pid}"))
        .gpu
        .unwrap_or_else(|| panic!("no GPU figures for {pid}"))
}

fn open(proc_root: &Path, sys_root: &Path) -> ProcTable {
    let mut t = ProcTable::open(BackendChoice::Procfs, proc_root, sys_root).unwrap();
    // What this machine's NVIDIA library would add is not the fixture's.
    t.set_gpu_nvml(false);
    t
}

const GFX_14: u64 = 2_000_000_000 + 1000;
const MEM_14: u64 = (65536 + 2048) * 1024;

#[test]
fn two_drivers_each_client_counted_once() {
    let (proc_root, sys_root) = fixtures::roots("gpu-drm");
    let mut t = open(&proc_root, &sys_root);
    let mut rows = Vec::new();
    t.snapshot(&query(), &mut rows).unwrap();
    assert_eq!(t.gpu_note(), "");
    // Client 14, on two descriptors of 100 and inherited by its child 101:
    // once, and the parent's (the lower PID).
    assert_eq!(
        gpu_of(&rows, 100),
        Gpu {
            busy_ns: GFX_14,
            mem_bytes: MEM_14,
            clients: 1
        }
    );
    // The child keeps its own client 20 only.
    assert_eq!(
        gpu_of(&rows, 101),
        Gpu {
            busy_ns: 500_000_000 + 1000,
            mem_bytes: 1024 * 1024,
            clients: 1
        }
    );
    // i915: render and video engines (capacity is no engine); resident
    // system memory, not the total beside it.
    assert_eq!(
        gpu_of(&rows, 200),
        Gpu {
            busy_ns: 5_284_918 + 3_091_347,
            mem_bytes: 8192 * 1024,
            clients: 1
        }
    );
    // Client id 7 on the amdgpu is not the i915's client 7; the i915
    // client without stats is still a client.
    assert_eq!(
        gpu_of(&rows, 300),
        Gpu {
            busy_ns: 1000 + 1000,
            mem_bytes: 4 * 1024,
            clients: 2
        }
    );
    // No GPU: zero, not absent.
    assert_eq!(gpu_of(&rows, 400), Gpu::default());
    let (scans, holders) = t.gpu_holders().unwrap();
    assert_eq!(scans, 1);
    assert_eq!(
        holders,
        &[
            (100, 5),
            (100, 6),
            (101, 5),
            (101, 7),
            (200, 3),
            (300, 3),
            (300, 4)
        ]
    );
    // A sum over processes counts each client once.
    let busy: u64 = rows.iter().filter_map(|p| p.gpu).map(|g| g.busy_ns).sum();
    assert_eq!(busy, GFX_14 + 500_001_000 + 8_376_265 + 2000);
    // Without the field, no figures and no scan.
    let mut t = open(&proc_root, &sys_root);
    t.snapshot(&Query::default(), &mut rows).unwrap();
    assert!(rows.iter().all(|p| p.gpu.is_none()));
    assert!(t.gpu_holders().is_none());
}

#[test]
fn between_scans_closed_descriptors_go_and_busy_time_never_goes_back() {
    let tree = fixtures::Tree::copy_of("gpu-drm");
    let (proc_root, sys_root) = (tree.proc_root(), tree.sys_root());
    let mut t = open(&proc_root, &sys_root);
    t.set_gpu_scan_every(Duration::from_secs(3600));
    let mut rows = Vec::new();
    t.snapshot(&query(), &mut rows).unwrap();
    let fdinfo = |pid: u32, fd: u32| proc_root.join(format!("{pid}/fdinfo/{fd}"));
    // The parent closes both its descriptors of client 14: the child,
    // which still holds it, is charged with it from the next read on.
    for fd in [5, 6] {
        std::fs::remove_file(fdinfo(100, fd)).unwrap();
        std::fs::remove_file(proc_root.join(format!("100/fd/{fd}"))).unwrap();
    }
    // The i915 driver shows a smaller busy time for a moment.
    let i915 = std::fs::read_to_string(fdinfo(200, 3)).unwrap();
    std::fs::write(
        fdinfo(200, 3),
        i915.replace(
            "drm-engine-render:\t5284918 ns",
            "drm-engine-render:\t5000000 ns",
        ),
    )
    .unwrap();
    // A process that opened a GPU after the scan is not read yet.
    std::fs::create_dir_all(proc_root.join("400/fdinfo")).unwrap();
    std::os::unix::fs::symlink("/dev/dri/renderD128", proc_root.join("400/fd/9")).unwrap();
    std::fs::copy(fdinfo(101, 7), fdinfo(400, 9)).unwrap();
    t.snapshot(&query(), &mut rows).unwrap();
    assert_eq!(gpu_of(&rows, 100), Gpu::default());
    assert_eq!(gpu_of(&rows, 101).clients, 2);
    assert_eq!(gpu_of(&rows, 101).busy_ns, GFX_14 + 500_001_000);
    assert_eq!(gpu_of(&rows, 200).busy_ns, 5_284_918 + 3_091_347);
    assert_eq!(gpu_of(&rows, 400), Gpu::default());
    assert_eq!(t.gpu_holders().unwrap().0, 1);
    // A scan finds it: client 20 is then 101's and 400's, charged to 101.
    t.set_gpu_scan_every(Duration::ZERO);
    t.snapshot(&query(), &mut rows).unwrap();
    assert_eq!(t.gpu_holders().unwrap().0, 2);
    assert!(t.gpu_holders().unwrap().1.contains(&(400, 9)));
    assert_eq!(gpu_of(&rows, 400), Gpu::default());
    // Its own client (a new id) is its own.
    let own = std::fs::read_to_string(fdinfo(400, 9))
        .unwrap()
        .replace("drm-client-id:\t20", "drm-client-id:\t21");
    std::fs::write(fdinfo(400, 9), own).unwrap();
    t.snapshot(&query(), &mut rows).unwrap();
    assert_eq!(gpu_of(&rows, 400).clients, 1);
    assert_eq!(gpu_of(&rows, 400).busy_ns, 500_001_000);
}

#[test]
fn a_malformed_file_is_named_and_the_rest_read() {
    let tree = fixtures::Tree::copy_of("gpu-drm");
    let (proc_root, sys_root) = (tree.proc_root(), tree.sys_root());
    let path = proc_root.join("200/fdinfo/3");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("drm-engine-copy:\t0 ns", "drm-engine-copy:\tlots"),
    )
    .unwrap();
    let mut t = open(&proc_root, &sys_root);
    let mut rows = Vec::new();
    t.snapshot(&query(), &mut rows).unwrap();
    let note = t.gpu_note();
    assert!(
        note.contains("200/fdinfo/3") && note.contains("drm-engine-"),
        "{note}"
    );
    assert_eq!(gpu_of(&rows, 200), Gpu::default());
    assert_eq!(gpu_of(&rows, 100).busy_ns, GFX_14);
}

/// A Python child running `script`, and the first line it prints.
fn python_child(script: &str) -> (std::process::Child, String) {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line.trim().to_string())
}

/// A child holding /dev/zero open; its PID and the descriptor (also held
/// as descriptor 130, past the first 64 of its table).
fn zero_holder() -> (std::process::Child, u32) {
    let (child, line) = python_child(
        "import os, sys\nfd = os.open('/dev/zero', os.O_RDONLY)\nos.dup2(fd, 130)\nprint(fd, flush=True)\nsys.stdin.read()",
    );
    (child, line.parse().unwrap())
}

fn major_of(path: &str) -> u32 {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(path).unwrap().rdev();
    libc::major(rdev)
}

#[test]
fn bpf_scan_finds_the_descriptors_of_a_device() {
    let mut t = ProcTable::open(BackendChoice::Bpf, "/proc", "/sys").unwrap();
    t.set_gpu_nvml(false);
    let (mut child, fd) = zero_holder();
    let pid = child.id();
    let mut rows = Vec::new();
    // DRM's and accel's majors: this machine has neither device.
    t.snapshot(&query(), &mut rows).unwrap();
    let (scans, holders) = t.gpu_holders().unwrap();
    assert_eq!((scans, holders), (1, &[][..]), "{}", t.gpu_note());
    // This kernel has what the walk needs.
    assert_eq!(
        t.bpf().unwrap().gpu_scan_method(),
        Some(("qs_gpu_walk", None))
    );
    assert_eq!(gpu_of(&rows, pid), Gpu::default());
    // Pointed at /dev/zero's major (1, the memory devices), the scan finds
    // the child's descriptor; its fdinfo names no DRM driver, so it gives
    // no client and is dropped by the read.
    let mut t = ProcTable::open(BackendChoice::Bpf, "/proc", "/sys").unwrap();
    t.set_gpu_nvml(false);
    t.bpf_mut()
        .unwrap()
        .set_gpu_majors(&[major_of("/dev/zero")])
        .unwrap();
    let mut found = Vec::new();
    t.bpf_mut().unwrap().gpu_files(None, &mut found).unwrap();
    assert!(found.contains(&(pid, fd)), "{found:?}");
    // Each of the three programs finds the same descriptors of the child
    // (the rest of the machine may open and close meanwhile): the walk
    // and the task iterator's program over every process, the task-file
    // iterator's too, and the task iterator's by PID.
    let mine = |v: &[(u32, u32)]| {
        let mut m: Vec<(u32, u32)> = v.iter().copied().filter(|h| h.0 == pid).collect();
        m.sort_unstable();
        m
    };
    let walk = mine(&found);
    assert!(
        walk.contains(&(pid, fd)) && walk.contains(&(pid, 130)),
        "{walk:?}"
    );
    let b = t.bpf_mut().unwrap();
    let mut by_pid = Vec::new();
    b.gpu_files(Some(&[pid]), &mut by_pid).unwrap();
    assert_eq!(mine(&by_pid), walk);
    b.set_gpu_scan_per_descriptor(true);
    let mut slow = Vec::new();
    b.gpu_files(None, &mut slow).unwrap();
    assert_eq!(b.gpu_scan_method().unwrap().0, "qs_gpu_files");
    assert_eq!(mine(&slow), walk);
    b.gpu_files(Some(&[pid]), &mut slow).unwrap();
    assert_eq!(mine(&slow), walk);
    b.set_gpu_scan_per_descriptor(false);
    b.gpu_files(None, &mut slow).unwrap();
    assert_eq!(b.gpu_scan_method().unwrap().0, "qs_gpu_walk");
    assert_eq!(b.gpu_scan_lost(), 0);
    // A scan of one process visits its descriptors only; one of a PID
    // that names no process finds nothing and is no error.
    let mut one = Vec::new();
    t.bpf_mut()
        .unwrap()
        .gpu_files(Some(&[pid]), &mut one)
        .unwrap();
    assert!(one.contains(&(pid, fd)), "{one:?}");
    assert!(one.iter().all(|&(tgid, _)| tgid == pid), "{one:?}");
    let unused = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse::<u32>()
        .unwrap();
    t.bpf_mut()
        .unwrap()
        .gpu_files(Some(&[unused]), &mut one)
        .unwrap();
    assert_eq!(one, []);
    t.snapshot(&query(), &mut rows).unwrap();
    assert_eq!(gpu_of(&rows, pid), Gpu::default());
    assert!(!t.gpu_holders().unwrap().1.contains(&(pid, fd)));
    drop(child.stdin.take());
    child.wait().unwrap();
}

#[test]
fn a_walk_past_its_room_says_how_many_it_could_not_give() {
    // A child holding 17,000 descriptors of /dev/null, the scan pointed at
    // the memory devices' major: more than the walk's room.
    let (mut child, line) = python_child(
        "import os, resource, sys\n\
         soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n\
         resource.setrlimit(resource.RLIMIT_NOFILE, (min(20000, hard), hard))\n\
         held = [os.open('/dev/null', os.O_RDONLY) for _ in range(17000)]\n\
         print(len(held), flush=True)\n\
         sys.stdin.read()",
    );
    assert_eq!(line, "17000");
    let mut t = ProcTable::open(BackendChoice::Bpf, "/proc", "/sys").unwrap();
    let b = t.bpf_mut().unwrap();
    b.set_gpu_majors(&[major_of("/dev/null")]).unwrap();
    let mut found = Vec::new();
    b.gpu_files(None, &mut found).unwrap();
    assert_eq!(b.gpu_scan_method().unwrap().0, "qs_gpu_walk");
    let room = proctable::bpf::gpu::WALK_CAPACITY as usize;
    assert_eq!(found.len(), room);
    let lost = b.gpu_scan_lost() as usize;
    assert!(found.len() + lost >= 17_000 && lost > 0, "{lost} lost");
    t.set_gpu_nvml(false);
    let mut rows = Vec::new();
    t.set_gpu_scan_every(Duration::ZERO);
    t.snapshot(&query(), &mut rows).unwrap();
    assert!(
        t.gpu_note().contains("past the scan's room were not read"),
        "{}",
        t.gpu_note()
    );
    drop(child.stdin.take());
    child.wait().unwrap();
}
