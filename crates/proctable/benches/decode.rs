//! Decoding the walk's records into rows (the user-space half of a BPF
//! snapshot), on synthetic records shaped like an idle machine's.
//!
//! cargo bench -p proctable --bench decode

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use proctable::record::QsTask;
use proctable::{Field, Fields, Proc};

const NAMES: &[&[u8]] = &[
    b"sleep",
    b"kworker/1:2",
    b"systemd-journal",
    b"bash",
    b"postgres: wal w",
];

fn records(n: usize) -> Vec<QsTask> {
    (0..n)
        .map(|i| {
            let mut comm = [0u8; 16];
            let name = NAMES[i % NAMES.len()];
            comm[..name.len()].copy_from_slice(name);
            QsTask {
                start_boottime_ns: 1_000_000_000 + i as u64 * 1_000_003,
                utime_ns: (i as u64 % 7) * 4_000_000,
                stime_ns: (i as u64 % 5) * 4_000_000,
                runtime_ns: (i as u64 % 11) * 3_000_000,
                min_flt: 100 + i as u64,
                vm_pages: 2_000,
                rss_pages: 200,
                cgroup_id: 4_242,
                pid: 1_000 + i as u32,
                tgid: 1_000 + i as u32,
                ppid: 1,
                state: 1,
                prio: 120,
                static_prio: 120,
                nr_threads: 1,
                comm,
                ..QsTask::default()
            }
        })
        .collect()
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode_walk");
    // The published figures' field set (the uid, added later, left out).
    let all_but_io = Fields::all()
        .without(Field::Io)
        .without(Field::Uid)
        .without(Field::Cmdline);
    for n in [1_000, 8_000, 30_000] {
        let tasks = records(n);
        let mut order = Vec::new();
        let mut out: Vec<Proc> = Vec::new();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(format!("{n}"), |b| {
            b.iter(|| {
                proctable::bpf::decode_walk(
                    &tasks,
                    Default::default(),
                    4096,
                    all_but_io,
                    &mut order,
                    &mut out,
                );
                black_box(out.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
