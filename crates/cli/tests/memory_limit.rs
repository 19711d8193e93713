//! The agent under a memory limit on its own cgroup, as operators set one
//! (`MemoryLimit=` in a unit), on a machine of a few thousand processes
//! and a thousand cgroups: `bench memory-limit`'s run in a smaller shape.
//! It must start, answer every scrape with node_exporter's families and
//! never meet the OOM killer, its ceiling chosen from the limit; under a
//! limit too tight for every row, it sheds rows and says so.
//! Needs root and a memory controller (v1, or v2 with `memory` enabled).

use std::path::PathBuf;
use std::time::Duration;

use bench::memory_limit::{Options, run};

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_quietstat"))
}

#[test]
fn the_agent_starts_serves_and_stays_alive_under_a_tight_limit_and_sheds_rows_to_do_so() {
    let o = run(
        &Options {
            processes: 6_000,
            cgroups: 1_000,
            limit: 28 << 20,
            duration: Duration::from_secs(20),
            exe: exe(),
        },
        &mut |m| eprintln!("{m}"),
    )
    .unwrap();
    eprintln!("{o:#?}");
    assert!(o.failures().is_empty(), "{:?}: {o:#?}", o.failures());
    // "auto": three quarters of the limit.
    assert_eq!(o.ceiling_bytes, (21 << 20) as f64);
    assert!(o.charged_bytes < o.ceiling_bytes, "{o:#?}");
    assert_eq!(o.shedding, 1.0, "{o:#?}");
    assert!(o.shed_rows > 0.0, "{o:#?}");
    assert!(
        o.log.iter().any(|l| l.contains("shedding")),
        "the start of shedding is logged: {:?}",
        o.log
    );
}
