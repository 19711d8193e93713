//! Parser throughput on the fixture trees (bytes of kernel text per second),
//! with allocations per warm parse counted by a wrapping global allocator and
//! printed before the timings.
//!
//! cargo bench -p procfs --bench parse

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use procfs::{Source, SystemSample};

#[global_allocator]
static GLOBAL: fixtures::alloc::Counting = fixtures::alloc::Counting;

const CASES: &[(&str, Source)] = &[
    ("cpu4096", Source::Stat),
    ("cpu4096", Source::Interrupts),
    ("cpu4096", Source::Softirqs),
    ("cpu4096", Source::Schedstat),
    ("cpu256-irq3000", Source::Stat),
    ("cpu256-irq3000", Source::Interrupts),
    ("this-machine", Source::Stat),
    ("this-machine", Source::Interrupts),
    ("this-machine", Source::Meminfo),
    ("this-machine", Source::Vmstat),
    ("this-machine", Source::Diskstats),
    ("this-machine", Source::NetDev),
];

const PID_STAT: &[(&str, &str)] = &[
    (
        "user-process",
        "27600 (cat) R 27598 27598 9840 0 -1 4194304 101 0 0 0 0 0 0 0 20 0 1 0 2441176 \
         3133440 380 18446744073709551615 94579038654464 94579038674345 140727514499808 0 0 \
         0 0 0 0 0 0 0 17 1 0 0 0 0 0 94579038690352 94579038691968 94579608465408 \
         140727514507826 140727514507846 140727514507846 140727514509291 0\n",
    ),
    (
        "kernel-thread",
        "4 (kworker/R-rcu_gp) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 0 -20 1 0 9 0 0 \
         18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 \
         0\n",
    ),
    (
        "name-with-parens",
        "31337 (a) (b) S 1 31337 31337 0 -1 4194560 1510 0 0 0 3 1 0 0 20 0 1 0 2440000 \
         8151040 896 18446744073709551615 1 1 0 0 0 0 0 4096 65536 0 0 0 17 0 0 0 0 0 0 0 0 \
         0 0 0 0 0 0\n",
    ),
];

fn parsers(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for &(tree, source) in CASES {
        let (proc_root, _) = fixtures::roots(tree);
        let bytes = std::fs::read(proc_root.join(source.files()[0])).expect("fixture file");
        let mut sample = SystemSample::default();
        sample.parse_source(source, &bytes).expect("fixture parses");
        let allocs = fixtures::alloc::during(|| {
            for _ in 0..10 {
                sample.parse_source(source, &bytes).expect("fixture parses");
            }
        });
        println!(
            "allocations per warm parse: {tree}/{}: {} ({} bytes)",
            source.name(),
            allocs as f64 / 10.0,
            bytes.len()
        );
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("{tree}/{}", source.name()), |b| {
            b.iter(|| sample.parse_source(source, black_box(&bytes)))
        });
    }
    group.finish();

    // /proc/PID/stat lines as they come from the kernel: a process table
    // parses one per process.
    let mut group = c.benchmark_group("pid_stat");
    for (name, line) in PID_STAT {
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_function(*name, |b| {
            b.iter(|| procfs::pid::parse_stat(black_box(line.as_bytes())))
        });
    }
    group.finish();

    // Baseline in the same run: the obvious parser (UTF-8 check, lines,
    // split_whitespace, str::parse into fresh vectors) on the same bytes.
    let mut group = c.benchmark_group("naive");
    for &(tree, source) in &CASES[..2] {
        let (proc_root, _) = fixtures::roots(tree);
        let bytes = std::fs::read(proc_root.join(source.files()[0])).expect("fixture file");
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("{tree}/{}", source.name()), |b| {
            b.iter(|| naive(black_box(&bytes)))
        });
    }
    group.finish();
}

fn naive(bytes: &[u8]) -> Vec<Vec<u64>> {
    std::str::from_utf8(bytes)
        .expect("utf-8")
        .lines()
        .map(|l| {
            l.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .collect()
}

criterion_group!(benches, parsers);
criterion_main!(benches);
