//! A procfs reader whose fd bound is more than the process may open: scans
//! still succeed, keeping fewer. Its own test binary: it lowers this
//! process's RLIMIT_NOFILE.

use proctable::dir::ProcDir;
use proctable::{Query, Threads};

const LIMIT: u64 = 200;
const PROCS: u32 = 400;

fn lower_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write lim only.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = LIMIT;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
}

fn tree() -> fixtures::Tree {
    let tree = fixtures::Tree::empty();
    for pid in 1000..1000 + PROCS {
        tree.proc_file(
            &format!("{pid}/stat"),
            format!(
                "{pid} (idle) S 1 {pid} {pid} 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 {pid} 1000 \
                 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
            ),
        );
    }
    tree
}

#[test]
fn scans_past_the_fd_limit_keep_fewer_fds_and_lose_no_process() {
    lower_fd_limit();
    let tree = tree();
    for threads in [1, 2] {
        let mut d = ProcDir::open(tree.proc_root(), tree.sys_root()).unwrap();
        d.set_threads(Threads::Fixed(threads));
        d.set_part_pids(16);
        // A bound far past what this process may open.
        d.set_max_kept(100_000);
        let mut rows = Vec::new();
        for scan in 0..3 {
            d.snapshot(&Query::default(), &mut rows)
                .unwrap_or_else(|e| panic!("{threads} threads, scan {scan}: {e}"));
            assert_eq!(rows.len(), PROCS as usize, "{threads} threads, scan {scan}");
            assert!(
                d.kept() > 0 && d.kept() < LIMIT as usize,
                "{threads} threads: {} kept",
                d.kept()
            );
        }
        let pids: Vec<u32> = (1000..1000 + PROCS).collect();
        let mut fresh = ProcDir::open(tree.proc_root(), tree.sys_root()).unwrap();
        fresh.set_max_kept(100_000);
        let ticks = fresh.start_ticks(&pids).unwrap();
        assert!(
            ticks
                .iter()
                .zip(&pids)
                .all(|(t, &p)| *t == Some(u64::from(p)))
        );
    }
}
