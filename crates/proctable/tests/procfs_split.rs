//! The procfs backend's reads split between threads: the same rows as one
//! thread (process and threads mode), the kept-open fds within their bound, and a bad file an error
//! naming it whichever thread read it.

use std::process::{Child, Command, Stdio};

use proctable::dir::ProcDir;
use proctable::{Field, Fields, Proc, Query, Threads};

const CHILDREN: usize = 40;

/// Idle children, killed and reaped on drop (also when a test fails).
struct Sleepers(Vec<Child>);

impl Sleepers {
    fn start(n: usize) -> Sleepers {
        Sleepers(
            (0..n)
                .map(|_| {
                    Command::new("sleep")
                        .arg("60")
                        .stdout(Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }

    fn pids(&self) -> Vec<u32> {
        self.0.iter().map(Child::id).collect()
    }
}

impl Drop for Sleepers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn reader(threads: usize) -> ProcDir {
    let mut d = ProcDir::open("/proc", "/sys").unwrap();
    d.set_threads(Threads::Fixed(threads));
    // Small parts: this machine's table is split into many.
    d.set_part_pids(8);
    d
}

/// Waits until every child is asleep in `sleep` (exec'd, not still the
/// forked test binary), so that its row no longer changes.
fn settled(kids: &Sleepers) {
    for pid in kids.pids() {
        for _ in 0..500 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat.contains("(sleep) S") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// Scans with `q` by one thread, split, and by one thread again; checks
/// that every row the one-thread scans both found (alive throughout) the
/// split scan found once, with the same identity and process, and that the
/// sleeping children's rows are equal field by field. Returns the split
/// scan's rows.
fn compare(kids: &Sleepers, one: &mut ProcDir, split: &mut ProcDir, q: &Query) -> Vec<Proc> {
    let (mut a, mut b, mut a2) = (Vec::new(), Vec::new(), Vec::new());
    one.snapshot(q, &mut a).unwrap();
    split.snapshot(q, &mut b).unwrap();
    one.snapshot(q, &mut a2).unwrap();
    assert_eq!(one.last_threads(), 1);
    assert_eq!(split.last_threads(), 3, "{q:?}");
    assert!(b.is_sorted_by_key(|p| p.pid), "{q:?}: not in PID order");
    for p in a
        .iter()
        .filter(|p| a2.iter().any(|q| q.identity() == p.identity()))
    {
        let found: Vec<&Proc> = b.iter().filter(|q| q.pid == p.pid).collect();
        assert_eq!(found.len(), 1, "{q:?}: {p:?}");
        assert_eq!(
            (found[0].identity(), found[0].tgid),
            (p.identity(), p.tgid),
            "{q:?}"
        );
    }
    // The sleeping children do not change.
    for pid in kids.pids() {
        let row = |rows: &[Proc]| rows.iter().find(|p| p.pid == pid).copied();
        assert!(row(&a).is_some(), "{q:?}: child {pid} missing");
        assert_eq!(row(&b), row(&a), "{q:?}: child {pid}");
    }
    b
}

#[test]
fn split_scans_give_the_rows_one_thread_gives() {
    let kids = Sleepers::start(CHILDREN);
    settled(&kids);
    let mut one = reader(1);
    let mut split = reader(3);
    for fields in [
        Fields::stat(),
        Fields::all().without(Field::Io),
        Fields::all(),
    ] {
        let q = Query {
            fields,
            ..Query::default()
        };
        compare(&kids, &mut one, &mut split, &q);
    }
    // A list of PIDs asked for is split too, and comes back in PID order.
    let mut asked = kids.pids();
    asked.reverse();
    let q = Query {
        pids: Some(asked.clone()),
        ..Query::default()
    };
    let mut rows = Vec::new();
    split.snapshot(&q, &mut rows).unwrap();
    assert_eq!(split.last_threads(), 3);
    asked.sort_unstable();
    assert_eq!(rows.iter().map(|p| p.pid).collect::<Vec<_>>(), asked);
}

#[test]
fn split_thread_scans_give_the_rows_one_thread_gives() {
    let kids = Sleepers::start(CHILDREN);
    settled(&kids);
    let sleepers = fixtures::threads::Parked::start(4);
    let mut one = reader(1);
    let mut split = reader(3);
    let q = Query {
        threads: true,
        ..Query::default()
    };
    let b = compare(&kids, &mut one, &mut split, &q);
    let me = std::process::id();
    assert!(
        b.iter().filter(|p| p.tgid == me).count() >= 5,
        "our threads"
    );
    drop(sleepers);
}

#[test]
fn split_scans_keep_fds_within_the_bound_and_close_those_of_gone_processes() {
    let kids = Sleepers::start(CHILDREN);
    let mut d = reader(2);
    let q = Query::default();
    let mut rows = Vec::new();
    d.set_max_kept(20);
    d.snapshot(&q, &mut rows).unwrap();
    assert_eq!(d.last_threads(), 2);
    assert!(rows.len() > 20 + CHILDREN / 2, "{} rows", rows.len());
    assert_eq!(d.kept(), 20, "the bound, all of it");
    d.snapshot(&q, &mut rows).unwrap();
    assert_eq!(d.kept(), 20, "still the bound");

    d.set_max_kept(100_000);
    d.snapshot(&q, &mut rows).unwrap();
    assert_eq!(
        d.kept(),
        rows.len(),
        "one fd per process once there is room"
    );
    drop(kids);
    d.snapshot(&q, &mut rows).unwrap();
    assert_eq!(d.kept(), rows.len(), "the gone children's fds closed");
}

#[test]
fn a_bad_stat_file_costs_its_row_named_whichever_thread_reads_it() {
    let tree = fixtures::Tree::empty();
    let stat = |pid: u32| {
        format!(
            "{pid} (idle) S 1 {pid} {pid} 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 100 1000 10 \
             18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        )
    };
    for pid in 100..160 {
        tree.proc_file(&format!("{pid}/stat"), stat(pid));
    }
    let mut d = ProcDir::open(tree.proc_root(), tree.sys_root()).unwrap();
    d.set_threads(Threads::Fixed(2));
    d.set_part_pids(4);
    let mut rows = Vec::new();
    d.snapshot(&Query::default(), &mut rows).unwrap();
    assert_eq!(rows.len(), 60);
    assert_eq!(d.last_threads(), 2);
    assert!(rows.windows(2).all(|w| w[0].pid < w[1].pid));

    tree.proc_file("137/stat", "137 (idle) S not-a-number\n");
    d.snapshot(&Query::default(), &mut rows).unwrap();
    assert_eq!(rows.len(), 59, "every other process is there");
    assert!(rows.iter().all(|p| p.pid != 137));
    let (n, first) = d.unreadable();
    assert_eq!(n, 1);
    assert!(first.unwrap().contains("137/stat"), "{first:?}");
}
