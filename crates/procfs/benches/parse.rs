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

fn parsers(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for &(tree, source) in CASES {
        let (proc_root, _) = fixtures::roots(tree);
        let bytes = std::fs::read(proc_root.join(source.name())).expect("fixture file");
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

    // Baseline in the same run: the obvious parser (UTF-8 check, lines,
    // split_whitespace, str::parse into fresh vectors) on the same bytes.
    let mut group = c.benchmark_group("naive");
    for &(tree, source) in &CASES[..2] {
        let (proc_root, _) = fixtures::roots(tree);
        let bytes = std::fs::read(proc_root.join(source.name())).expect("fixture file");
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
