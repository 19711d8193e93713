//! Every reader against this machine's own /proc and /sys, checked for
//! consistency across sources rather than exact values.

use procfs::meminfo::MemKey;
use procfs::stat::CpuMode;
use procfs::{Reader, Source, SourceStatus, SystemSample};

fn live() -> (Reader, SystemSample) {
    let mut r = Reader::new("/proc", "/sys");
    let mut s = SystemSample::default();
    r.read_sample(&Source::ALL, &mut s);
    (r, s)
}

/// `later` was read after `earlier` and may have grown by a little.
fn close_after(earlier: u64, later: u64, what: &str) {
    let slack = earlier / 100 + 200;
    assert!(
        earlier <= later && later <= earlier + slack,
        "{what}: {earlier} then {later}"
    );
}

#[test]
fn every_source_reads_or_is_optional() {
    let (_, s) = live();
    for source in Source::ALL {
        match &s.status[source as usize] {
            SourceStatus::Ok => {}
            SourceStatus::Missing if source.optional() => {}
            other => panic!("{}: {other:?}", source.name()),
        }
    }
}

#[test]
fn cpu_rows_match_online_cpus_and_sum_to_total() {
    let (mut r, s) = live();
    let topo = r.read_topology();
    let ids: Vec<u32> = s.stat.cpus.iter().map(|c| c.cpu).collect();
    assert_eq!(ids, topo.online.cpus());
    assert_eq!(s.interrupts.cpus(), topo.online.cpus());
    assert_eq!(s.softirqs.cpus(), topo.online.cpus());
    if topo.online == topo.possible {
        let n = s.stat.cpus.len() as u64;
        for mode in CpuMode::ALL {
            let Some(total) = s.stat.total.ticks(mode) else {
                continue;
            };
            let sum: u64 = s.stat.cpus.iter().filter_map(|c| c.times.ticks(mode)).sum();
            assert!(
                sum.abs_diff(total) <= 2 * n,
                "{mode:?}: rows sum {sum}, total row {total}"
            );
        }
    }
    assert!(!topo.housekeeping().is_empty());
}

#[test]
fn irq_and_softirq_counts_agree_across_files() {
    // /proc/stat is read first, so every count in the later files is at least it.
    let (_, s) = live();
    for row in s.interrupts.rows() {
        let Ok(irq) = row.label.parse::<usize>() else {
            continue;
        };
        close_after(s.stat.irq_counts[irq], row.total, &format!("irq {irq}"));
    }
    let device_sum: u64 = s.stat.irq_counts.iter().sum();
    assert!(s.stat.intr_total >= device_sum);
    for (i, row) in s.softirqs.rows().enumerate() {
        close_after(s.stat.softirq_counts[i], row.total, row.label);
    }
}

#[test]
fn memory_and_load_are_sane() {
    let (_, s) = live();
    let total = s.meminfo.get(MemKey::MemTotal).unwrap();
    assert!(s.meminfo.get(MemKey::MemFree).unwrap() <= total);
    assert!(s.meminfo.get(MemKey::MemAvailable).unwrap() <= total);
    assert!(s.loadavg.runnable <= s.loadavg.threads && s.loadavg.threads > 0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(s.stat.btime_secs > 1_000_000_000 && s.stat.btime_secs <= now);
}

#[test]
fn counters_only_grow_between_samples() {
    let (mut r, a) = live();
    let mut b = SystemSample::default();
    r.read_sample(&Source::ALL, &mut b);
    assert!(b.stat.ctxt >= a.stat.ctxt && b.stat.processes >= a.stat.processes);
    assert!(b.stat.intr_total >= a.stat.intr_total);
    assert!(b.stat.total.total_ticks() >= a.stat.total.total_ticks());
}
