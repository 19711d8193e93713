//! The agent under a memory limit on its own cgroup, as operators set one
//! (`MemoryLimit=` in a unit), on a machine of a few thousand processes
//! and a thousand cgroups: `bench memory-limit`'s run in a smaller shape.
//! It must start, answer every scrape with node_exporter's families and
//! never meet the OOM killer, its ceiling chosen from the limit; under a
//! limit too tight for every row, it sheds rows and says so.
//! Needs root and a memory controller (v1, or v2 with `memory` enabled).
//! And the room a burst of exits took is given back after it.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use bench::memory_limit::{Options, run};
use common::agent::agent;
use common::store::{after_reads, metric};

/// One test at a time: each watches the whole machine, and the other's
/// thousands of processes would be part of what it measures.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_quietstat"))
}

#[test]
fn the_agent_starts_serves_and_stays_alive_under_a_tight_limit_and_sheds_rows_to_do_so() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let o = run(
        &Options {
            // 14,000 processes would take more than half of a 30 MiB
            // ceiling at 1,280 bytes each: rows are capped from the start.
            // (Below about 36 MiB the start-up peak itself, the kernel's
            // BTF parsed beside the walk's maps, meets the limit.)
            processes: 14_000,
            cgroups: 1_000,
            limit: 40 << 20,
            duration: Duration::from_secs(20),
            exe: exe(),
        },
        &mut |m| eprintln!("{m}"),
    )
    .unwrap();
    eprintln!("{o:#?}");
    assert!(o.failures().is_empty(), "{:?}: {o:#?}", o.failures());
    // "auto": three quarters of the limit.
    assert_eq!(o.ceiling_bytes, (30 << 20) as f64);
    // (The charge held against the ceiling may stay above it: the BPF
    // maps, sized for every task, are kernel memory shedding rows does
    // not give back; what keeps the agent alive is that the rest is.)
    assert_eq!(o.shedding, 1.0, "{o:#?}");
    assert!(o.shed_rows > 0.0, "{o:#?}");
    assert!(
        o.log.iter().any(|l| l.contains("shedding")),
        "the start of shedding is logged: {:?}",
        o.log
    );
}

/// A build's burst of short-lived processes, all drained by one table
/// read: the agent's exit buffers grow to hold it, and give the room back
/// once tables of ordinary size follow (the soak found 18 MB of them held
/// for good after such a burst).
#[test]
fn the_room_a_burst_of_exits_took_is_given_back_after_it() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let a = agent("[sources.processes]\ninterval = \"5s\"\n", &[]);
    after_reads(&a, "processes", 2);
    let heap = || metric(&a, "quietstat_agent_heap_bytes").unwrap();
    let before = heap();
    // 30,000 processes that exit at once: 3 s at the rate, within one
    // table's interval (a machine that forks slower takes longer; a read
    // falling inside the burst splits it, which still grows each buffer
    // that takes a share).
    let out = common::quietstat()
        .args([
            "bench",
            "forker",
            "--rate",
            "10000",
            "--count",
            "30000",
            "--duration-ms",
            "120000",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let forked: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(forked, 30_000, "forks in 120 s");
    after_reads(&a, "processes", 1);
    let during = heap();
    // Tables of ordinary size: each of the three buffers, which take
    // turns, holds one and is trimmed (a burst split between two reads
    // grew two of them).
    after_reads(&a, "processes", 5);
    let after = heap();
    let grown = during - before;
    eprintln!("heap before {before}, after the burst {during}, five tables later {after}");
    assert!(
        grown > (1u64 << 20) as f64,
        "the burst grew the heap by {grown} bytes only"
    );
    assert!(
        after - before < grown / 4.0,
        "{} of the {grown} bytes the burst took are still held",
        after - before
    );
}
