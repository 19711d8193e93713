//! Delay accounting (`delayacct`) from both BPF readers against the
//! kernel's own figure: /proc/PID/stat's block I/O ticks. The test turns
//! `kernel.task_delayacct` on and puts back what it found. Needs root (the
//! suite runs as root in CI); without it this fails, naming why.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proctable::bpf::{Bpf, Method};
use proctable::dir::ProcDir;
use proctable::{Field, Fields, Proc, Query};

const SYSCTL: &str = "/proc/sys/kernel/task_delayacct";

/// Delay accounting on while it lives, then as it was.
struct AccountingOn(String);

impl AccountingOn {
    fn new() -> AccountingOn {
        let was = std::fs::read_to_string(SYSCTL).expect("CONFIG_TASK_DELAY_ACCT");
        std::fs::write(SYSCTL, "1").expect("turning kernel.task_delayacct on needs root");
        AccountingOn(was.trim().to_string())
    }
}

impl Drop for AccountingOn {
    fn drop(&mut self) {
        let _ = std::fs::write(SYSCTL, &self.0);
    }
}

struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        // SAFETY: our own child; kill has no memory effects.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// A file of `mib` MiB on the disk the build is on (not a tmpfs, which
/// refuses O_DIRECT).
fn data_file(mib: usize) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("delayacct-direct");
    let block: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let mut all = Vec::with_capacity(mib << 20);
    for _ in 0..mib {
        all.extend_from_slice(&block);
    }
    std::fs::write(&path, all).unwrap();
    path
}

/// A child reading `path` 4 KiB at a time with O_DIRECT, round and round:
/// every read waits for the disk.
fn direct_reader(path: &std::path::Path) -> Kid {
    let script = "import mmap, os, sys\n\
        fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)\n\
        size = os.fstat(fd).st_size\n\
        buf = mmap.mmap(-1, 4096)\n\
        off = 0\n\
        while True:\n\
        \x20   os.preadv(fd, [buf], off)\n\
        \x20   off = (off + 4096) % size\n";
    let child = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .process_group(0)
        .stdin(Stdio::null())
        .spawn()
        .expect("python3");
    Kid(child)
}

fn bpf(method: Method) -> Bpf {
    let b = Bpf::open_with(method)
        .unwrap_or_else(|e| panic!("the BPF backend must load here (run as root): {e}"));
    assert_eq!(b.method(), method, "{:?}", b.walk_unavailable());
    b
}

fn row(b: &mut Bpf, query: &Query) -> Proc {
    let mut out = Vec::new();
    b.snapshot(query, &mut out).unwrap();
    assert_eq!(out.len(), 1, "{out:?}");
    out[0]
}

/// Field 42 of /proc/PID/stat: block I/O delay in clock ticks.
fn stat_blkio_ticks(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &text[text.rfind(')').unwrap() + 2..];
    // Field 3 (state) is the first after the name.
    after.split(' ').nth(42 - 3).unwrap().parse().unwrap()
}

/// A process reading with direct I/O spends most of its time blocked on
/// the disk: its block I/O delay grows by between a fifth and all of the
/// wall time, both BPF readers give the same figures, and stopped, the
/// figure is exactly what /proc/PID/stat shows in ticks, and every figure
/// what taskstats gives the procfs backend. A query without the field
/// gives none.
#[test]
fn a_process_reading_with_direct_io_shows_its_block_io_delay() {
    let _on = AccountingOn::new();
    let path = data_file(16);
    std::thread::sleep(Duration::from_millis(100));
    let kid = direct_reader(&path);
    let pid = kid.0.id();
    let query = Query {
        fields: Fields::NONE.with(Field::Comm).with(Field::DelayAcct),
        threads: false,
        pids: Some(vec![pid]),
    };
    let (mut walk, mut iter) = (bpf(Method::Walk), bpf(Method::Iter));
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    let before = row(&mut walk, &query).delays.unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let after = row(&mut walk, &query).delays.unwrap();
    let wall_ns = t0.elapsed().as_nanos() as u64;
    let blocked = after.blkio_ns - before.blkio_ns;
    assert!(
        blocked >= wall_ns / 5 && blocked <= wall_ns,
        "blocked on I/O {blocked} ns of {wall_ns}"
    );

    // SAFETY: our own child; kill has no memory effects.
    unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
    // The read in flight ends, then the process stops for good.
    let mut stopped = false;
    for _ in 0..200 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        if stat[stat.rfind(')').unwrap() + 2..].starts_with('T') {
            stopped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(stopped, "{pid} did not stop");
    let w = row(&mut walk, &query).delays.unwrap();
    let i = row(&mut iter, &query).delays.unwrap();
    assert_eq!(w, i, "the walk and the iterator read the same task");
    assert_eq!(
        w.blkio_ns / proctable::NS_PER_TICK,
        stat_blkio_ticks(pid),
        "{w:?}"
    );
    assert!(w.blkio_ns >= after.blkio_ns);

    let without = Query {
        fields: Fields::NONE.with(Field::Comm),
        ..query.clone()
    };
    assert_eq!(row(&mut walk, &without).delays, None);
    assert_eq!(row(&mut iter, &without).delays, None);
    let mut dir = ProcDir::open("/proc", "/sys").unwrap();
    let mut out = Vec::new();
    dir.snapshot(&query, &mut out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].delays, Some(w), "taskstats, for the procfs backend");
    dir.snapshot(&without, &mut out).unwrap();
    assert_eq!(out[0].delays, None);
    drop(kid);
    let _ = std::fs::remove_file(path);
}
