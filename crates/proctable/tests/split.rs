//! A process-mode walk split between walkers, each on its own thread,
//! against one walker over the whole list: the same processes, once each,
//! and one walker again where a split cannot stand. Needs CAP_BPF and
//! CAP_PERFMON (the suite runs as root in CI); fails, naming why, without.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use proctable::Threads;
use proctable::bpf::{Bpf, Method};
use proctable::{Field, Fields, Identity, Proc, Query};

/// Children killed and reaped when dropped (also when a test fails).
struct Kids(Vec<Child>);

impl Kids {
    fn sleepers(n: usize) -> Kids {
        let mut kids = Kids(Vec::with_capacity(n));
        for _ in 0..n {
            kids.0.push(
                Command::new("sleep")
                    .arg("1000")
                    .process_group(0)
                    .stdin(Stdio::null())
                    .spawn()
                    .expect("spawn sleep"),
            );
        }
        kids
    }

    fn pids(&self) -> Vec<u32> {
        self.0.iter().map(Child::id).collect()
    }

    fn kill(&mut self) {
        for c in &mut self.0 {
            // SAFETY: our own child, not yet reaped; no memory effects.
            unsafe { libc::kill(c.id() as i32, libc::SIGKILL) };
            let _ = c.wait();
        }
        self.0.clear();
    }
}

impl Drop for Kids {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One test at a time: each counts on its own children being most of the
/// list, and on no other test's dying between its walks.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn walk(walkers: Threads) -> Bpf {
    let mut b = Bpf::open_with(Method::Walk)
        .unwrap_or_else(|e| panic!("the BPF backend must load here (run as root): {e}"));
    assert_eq!(b.method(), Method::Walk, "{:?}", b.walk_unavailable());
    b.set_walkers(walkers);
    b
}

fn ids(rows: &[Proc]) -> Vec<Identity> {
    rows.iter().map(Proc::identity).collect()
}

/// Rows in strictly increasing PID order: sorted, none twice.
fn assert_once_each(rows: &[Proc]) {
    for w in rows.windows(2) {
        assert!(w[0].pid < w[1].pid, "{} then {}", w[0].pid, w[1].pid);
    }
}

#[test]
fn split_walk_finds_what_one_walker_finds_once_each() {
    let _serial = serial();
    let kids = Kids::sleepers(600);
    let threaded = Command::new("python3")
        .args([
            "-c",
            "import threading,time\n\
             [threading.Thread(target=time.sleep,args=(1000,),daemon=True).start() for _ in range(7)]\n\
             time.sleep(1000)",
        ])
        .process_group(0)
        .spawn()
        .expect("python3");
    let threaded = Kids(vec![threaded]);
    let mut one = walk(Threads::Fixed(1));
    let mut split = walk(Threads::Fixed(3));
    let all = Query {
        fields: Fields::all().without(Field::Cmdline),
        ..Query::default()
    };
    let (mut a, mut s) = (Vec::new(), Vec::new());
    // The first walk is one walker's: it marks where the next may split.
    split.snapshot(&all, &mut s).unwrap();
    assert_eq!(split.walk_stats().unwrap().last_walkers, 1);
    // Wait for the python's threads (num_threads is compared below).
    let py = threaded.0[0].id();
    for _ in 0..200 {
        one.snapshot(&Query::default(), &mut a).unwrap();
        if a.iter().any(|p| p.pid == py && p.num_threads == 8) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut children = kids.pids();
    children.push(py);
    for round in 0..5 {
        let stats = walk_beside_one(&mut one, &mut split, &all, &children, round);
        assert_eq!(
            (stats.last_walkers, stats.last_threads),
            (3, 3),
            "round {round}: {stats:?}"
        );
    }
    assert!(split.walk_stats().unwrap().split >= 5);
    assert_eq!(split.walk_stats().unwrap().redone, 0);
    // With the PID filter: exactly the children asked for.
    let mut want = kids.pids();
    want.push(py);
    want.sort_unstable();
    let only = Query {
        pids: Some(want.clone()),
        ..Query::default()
    };
    split.snapshot(&only, &mut s).unwrap();
    assert_eq!(split.walk_stats().unwrap().last_walkers, 3);
    assert_eq!(s.iter().map(|p| p.pid).collect::<Vec<_>>(), want);
    // Threads mode is one walker's: one row per thread.
    let threads = Query {
        threads: true,
        ..Query::default()
    };
    split.snapshot(&threads, &mut s).unwrap();
    assert_eq!(split.walk_stats().unwrap().last_walkers, 1);
    assert_eq!(s.iter().filter(|p| p.tgid == py).count(), 8);
}

/// CLOCK_BOOTTIME now, in ns: the clock of a process's start.
fn boot_ns() -> u64 {
    // SAFETY: ts is a valid out-parameter.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts);
        ts
    };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One walk by `split` between two by `one`: every process alive through
/// all three is in the split walk, the split walk finds nothing neither
/// walk around it found but a process started since the first (and ended
/// before the last: the machine's short-lived processes), once each, and
/// `children` (whose counters do not move) have the same fields. Returns
/// the split walk's stats.
fn walk_beside_one(
    one: &mut Bpf,
    split: &mut Bpf,
    q: &Query,
    children: &[u32],
    round: usize,
) -> proctable::bpf::WalkStats {
    let (mut a, mut s, mut a2) = (Vec::new(), Vec::new(), Vec::new());
    let before = boot_ns();
    one.snapshot(q, &mut a).unwrap();
    split.snapshot(q, &mut s).unwrap();
    one.snapshot(q, &mut a2).unwrap();
    assert_once_each(&s);
    let (ia, is, ia2) = (ids(&a), ids(&s), ids(&a2));
    for i in ia.iter().filter(|i| ia2.contains(i)) {
        assert!(
            is.contains(i),
            "round {round}: {i:?} missing from the split walk"
        );
    }
    for (p, i) in s.iter().zip(&is) {
        assert!(
            ia.contains(i) || ia2.contains(i) || p.start_ns >= before,
            "round {round}: {i:?} only in the split walk, started before the walks"
        );
    }
    for &pid in children {
        let (x, y) = (
            a.iter().find(|p| p.pid == pid).unwrap(),
            s.iter().find(|p| p.pid == pid).unwrap(),
        );
        assert_eq!(
            (
                x.identity(),
                x.ppid,
                x.comm,
                x.num_threads,
                x.rss_bytes,
                x.cgroup_id
            ),
            (
                y.identity(),
                y.ppid,
                y.comm,
                y.num_threads,
                y.rss_bytes,
                y.cgroup_id
            ),
            "round {round}: pid {pid}"
        );
        assert_eq!(x.io, y.io, "round {round}: pid {pid}");
    }
    split.walk_stats().unwrap()
}

/// 600 sleeping children, one walker, and two threads splitting a walk of
/// about 700 processes in stretches of 64: ten of them, the most (15:
/// QS_MAX_WALKERS but the spare entry) not reached; and every field but
/// command lines.
fn in_stretches_of_64() -> (Kids, Bpf, Bpf, Query) {
    let kids = Kids::sleepers(600);
    let one = walk(Threads::Fixed(1));
    let mut split = walk(Threads::Fixed(2));
    split.set_stretch_procs(64);
    let all = Query {
        fields: Fields::all().without(Field::Cmdline),
        ..Query::default()
    };
    (kids, one, split, all)
}

#[test]
fn split_walk_in_more_stretches_than_threads_finds_what_one_walker_finds() {
    let _serial = serial();
    let (kids, mut one, mut split, all) = in_stretches_of_64();
    let mut s = Vec::new();
    split.snapshot(&all, &mut s).unwrap();
    assert_eq!(split.walk_stats().unwrap().last_walkers, 1);
    let want = s.len() / 64;
    for round in 0..5 {
        let stats = walk_beside_one(&mut one, &mut split, &all, &kids.pids(), round);
        assert_eq!(stats.last_threads, 2, "round {round}: {stats:?}");
        // One walker marked 16 times over the table, too few to cut ten
        // stretches apart; a split walk marks 64 times, so from the second
        // split on every stretch is found.
        let near = if round == 0 { 4 } else { 1 };
        assert!(
            stats.last_walkers.abs_diff(want) <= near && stats.last_walkers < 15,
            "round {round}: {} stretches, {want} expected: {stats:?}",
            stats.last_walkers
        );
    }
    let stats = split.walk_stats().unwrap();
    assert_eq!((stats.split, stats.redone), (5, 0), "{stats:?}");
    // Stretches of one process: as many as there are entries, 15.
    split.set_stretch_procs(1);
    split.snapshot(&all, &mut s).unwrap();
    assert_eq!(split.walk_stats().unwrap().last_walkers, 15);
}

#[test]
fn split_walk_with_stalled_stretches_walked_again_finds_what_one_walker_finds() {
    let _serial = serial();
    let (kids, mut one, mut split, all) = in_stretches_of_64();
    // The helper sleeps 30 ms in every stretch before walking it: this
    // thread walks all other stretches meanwhile, then the helper's again
    // into the spare rows and entry, and returns; the helper's run then
    // writes into the stretch's own rows and entry, which the decoder must
    // not read (they hold the last walk's, or nothing).
    split.set_helper_stall(Some(std::time::Duration::from_millis(30)));
    let mut s = Vec::new();
    split.snapshot(&all, &mut s).unwrap();
    // With the stall, this thread starts only once the helper holds a
    // stretch, so each walk has one to walk again, unless this thread's
    // own stretches ran so slowly (its CPU taken away) that the stall did
    // not stand out: count rounds until three had one.
    let mut round = 0;
    while split.walk_stats().unwrap().backups < 3 {
        assert!(round < 50, "{:?}", split.walk_stats());
        let before = split.walk_stats().unwrap().backups;
        let stats = walk_beside_one(&mut one, &mut split, &all, &kids.pids(), round);
        assert_eq!(stats.last_threads, 2, "round {round}: {stats:?}");
        // One helper: one stretch walked again at most.
        assert!(stats.backups - before <= 1, "round {round}: {stats:?}");
        round += 1;
    }
    let stats = split.walk_stats().unwrap();
    assert_eq!(stats.redone, 0, "{stats:?}");
    // The marks of a stretch walked again are the spare entry's: the next
    // walks still find every stretch.
    let want = s.len() / 64;
    assert!(
        stats.last_walkers.abs_diff(want) <= 1,
        "{} stretches, {want} expected: {stats:?}",
        stats.last_walkers
    );
}

#[test]
fn split_walk_is_walked_again_when_a_start_task_has_left() {
    let _serial = serial();
    let mut kids = Kids::sleepers(800);
    let mut split = walk(Threads::Fixed(4));
    let q = Query::default();
    let mut s = Vec::new();
    split.snapshot(&q, &mut s).unwrap();
    split.snapshot(&q, &mut s).unwrap();
    assert_eq!(split.walk_stats().unwrap().split, 1);
    // The children are most of the list's tail, where the walk splits:
    // the marked start tasks are gone.
    let gone = kids.pids();
    kids.kill();
    split.snapshot(&q, &mut s).unwrap();
    let stats = split.walk_stats().unwrap();
    assert_eq!((stats.redone, stats.last_walkers), (1, 1), "{stats:?}");
    assert_once_each(&s);
    assert!(!s.iter().any(|p| gone.contains(&p.pid)));
    assert!(s.iter().any(|p| p.pid == std::process::id()));
    // The walk marked the list again: the next ones split, into fewer
    // walkers until marks are laid for the smaller table.
    split.snapshot(&q, &mut s).unwrap();
    split.snapshot(&q, &mut s).unwrap();
    let stats = split.walk_stats().unwrap();
    assert_eq!((stats.redone, stats.last_walkers), (1, 4), "{stats:?}");
}

#[test]
fn split_walk_is_walked_again_when_a_share_of_rows_does_not_fit() {
    let _serial = serial();
    let kids = Kids::sleepers(600);
    let mut split = walk(Threads::Fixed(2));
    let q = Query::default();
    let (mut s, mut one) = (Vec::new(), Vec::new());
    split.snapshot(&q, &mut s).unwrap();
    // Four rows each: the split walk's first share overflows, and then the
    // one walker's array (marks are tasks: they stand across the reload).
    split.set_walk_capacity(8).unwrap();
    let reloads = split.walk_reloads();
    split.snapshot(&q, &mut s).unwrap();
    let stats = split.walk_stats().unwrap();
    assert_eq!((stats.redone, stats.last_walkers), (1, 1), "{stats:?}");
    assert_eq!(split.walk_reloads(), reloads + 1, "grown by the one walker");
    walk(Threads::Fixed(1)).snapshot(&q, &mut one).unwrap();
    assert_once_each(&s);
    for pid in kids.pids() {
        assert!(s.iter().any(|p| p.pid == pid), "{pid} missing");
    }
    assert!(
        s.len().abs_diff(one.len()) < 10,
        "{} vs {}",
        s.len(),
        one.len()
    );
}

#[test]
fn auto_splits_by_cpus_and_table_size() {
    let _serial = serial();
    // A small table (this machine's, with no children) is one walker's
    // however many CPUs there are.
    let mut auto = walk(Threads::Auto);
    let mut s = Vec::new();
    auto.snapshot(&Query::default(), &mut s).unwrap();
    auto.snapshot(&Query::default(), &mut s).unwrap();
    if s.len() < proctable::bpf::MIN_PER_WALKER as usize * 2 {
        assert_eq!(auto.walk_stats().unwrap().last_walkers, 1);
    }
}
