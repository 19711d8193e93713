//! The textfile parser at node_exporter scale and beyond: one family of
//! 5,000 series (the baseline), 40,000 series, and two files of 20,000
//! series of one family each. Linear time shows as 40k taking about 8x the
//! 5k case; the target is 40,000 series in at most 0.2 s.
//!
//! cargo bench -p procfs --bench textfile

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use procfs::textfile::{Textfile, parse_into};

/// Framed records of files holding one gauge family each, `series` per
/// file.
fn records(files: &[(usize, usize)]) -> Vec<u8> {
    let mut out = String::new();
    for (n, (from, to)) in files.iter().enumerate() {
        let mut body = String::from("# HELP big A family of many series.\n# TYPE big gauge\n");
        for i in *from..*to {
            body += &format!("big{{job=\"batch\",instance=\"host-{i}\"}} {i}\n");
        }
        out += &format!(
            "@file 1700000000000000000 {} /t/{n}.prom\n{body}\n",
            body.len()
        );
    }
    out.into_bytes()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("textfile");
    g.sample_size(10);
    for (name, files) in [
        ("5k_series_one_family", vec![(0, 5_000)]),
        ("40k_series_one_family", vec![(0, 40_000)]),
        (
            "2_files_20k_series_one_family",
            vec![(0, 20_000), (20_000, 40_000)],
        ),
    ] {
        let buf = records(&files);
        let mut t = Textfile::default();
        g.bench_function(name, |b| {
            b.iter(|| {
                parse_into(black_box(&buf), &mut t).unwrap();
                assert!(!t.error());
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
