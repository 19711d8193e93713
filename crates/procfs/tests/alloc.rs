//! Allocation counting: after one warm-up read, reading and parsing every
//! file source again into the same sample allocates nothing. Counted with a
//! global allocator wrapper, on the biggest fixtures and on the live machine.
//! (Gathered sources, [`Source::gathered`], list directories and build paths
//! on each read; they are read every 15 s or more, or are a system call.)

use procfs::{Reader, Source, SystemSample};

#[global_allocator]
static GLOBAL: fixtures::alloc::Counting = fixtures::alloc::Counting;

fn allocs_of(f: impl FnOnce()) -> u64 {
    fixtures::alloc::during(f)
}

// One test function: the counter is global, and tests run on threads.
#[test]
fn warm_reads_allocate_nothing() {
    for tree in ["cpu4096", "cpu256-irq3000", "this-machine"] {
        let (proc_root, sys_root) = fixtures::roots(tree);
        for keep_open in [false, true] {
            let mut r = Reader::new(&proc_root, &sys_root);
            r.set_keep_open(keep_open);
            let mut s = SystemSample::default();
            let files: Vec<Source> = Source::ALL.into_iter().filter(|s| !s.gathered()).collect();
            r.read_sample(&files, &mut s);
            let n = allocs_of(|| {
                for _ in 0..3 {
                    r.read_sample(&files, &mut s);
                }
            });
            assert_eq!(n, 0, "{tree} keep_open={keep_open}");
        }
    }
    // Live sources change size between reads; give them room to settle once.
    let mut r = Reader::new("/proc", "/sys");
    let mut s = SystemSample::default();
    r.read_sample(&Source::ALL, &mut s);
    r.read_sample(&Source::ALL, &mut s);
    let n = allocs_of(|| {
        r.read_sample(
            &[
                Source::Stat,
                Source::Interrupts,
                Source::Meminfo,
                Source::Vmstat,
            ],
            &mut s,
        )
    });
    assert_eq!(n, 0, "live /proc");
}
