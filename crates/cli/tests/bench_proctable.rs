//! `quietstat bench proctable` end to end: one JSON object per backend and
//! count, and every idle process it spawned gone once it ends, also when
//! it is interrupted. The counts asked for are odd ones no other test
//! uses: the spawned processes are forks of the benchmark, and are found by
//! the `--procs` value in their command line.

use std::process::Stdio;
use std::time::Duration;

mod common;

use common::*;

/// The PIDs of processes whose command line has `--procs N` (the
/// benchmark, its spawner and the idle processes, all forks of one
/// command).
fn forks_of(n: &str) -> Vec<i32> {
    let needle = format!("--procs\0{n}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<i32>().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            cmdline
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
                .then_some(pid)
        })
        .collect()
}

/// On drop (a failed test too), kills whatever forks of `--procs N` are
/// left: they are this test's.
struct Reap(&'static str);

impl Drop for Reap {
    fn drop(&mut self) {
        for pid in forks_of(self.0) {
            // SAFETY: kill on a PID; only forks of this test's command
            // carry its `--procs` value.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

#[test]
fn json_has_one_object_per_backend_and_count_and_no_process_is_left() {
    let _reap = Reap("37,41");
    let out = quietstat()
        .args([
            "bench",
            "proctable",
            "--procs",
            "37,41",
            "--runs",
            "2",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_ok(&out);
    let rows: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for procs in [37, 41] {
        let here: Vec<&serde_json::Value> = rows.iter().filter(|r| r["procs"] == procs).collect();
        let names: Vec<&str> = here
            .iter()
            .map(|r| r["backend"].as_str().unwrap())
            .collect();
        for want in [
            "naive",
            "procfs",
            "procfs-1thread",
            "procfs-no-kept-fds",
            "bpf",
            "bpf-all-but-io",
        ] {
            assert_eq!(
                names.iter().filter(|&&n| n == want).count(),
                1,
                "{procs}: {names:?}"
            );
        }
        for r in here {
            assert_eq!(r["runs"], 2, "{r}");
            let (median, p99) = (
                r["median_ms"].as_f64().unwrap(),
                r["p99_ms"].as_f64().unwrap(),
            );
            assert!(median > 0.0 && p99 >= median, "{r}");
            assert!(r["table_rows"].as_u64().unwrap() >= procs, "{r}");
        }
    }
    assert!(
        wait_for(Duration::from_secs(5), || forks_of("37,41").is_empty()),
        "processes left: {:?}",
        forks_of("37,41")
    );
}

#[test]
fn an_interrupted_run_leaves_no_process_behind() {
    let _reap = Reap("301");
    let mut bench = quietstat()
        .args(["bench", "proctable", "--procs", "301", "--runs", "1000000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The benchmark, its spawner and the 301 idle processes.
    let up = wait_for(Duration::from_secs(60), || forks_of("301").len() >= 303);
    // SAFETY: kill on the PID of a child we started and have not reaped.
    unsafe { libc::kill(bench.id() as libc::pid_t, libc::SIGINT) };
    let status = bench.wait().unwrap();
    assert!(up, "the idle processes never all came up");
    assert!(!status.success(), "interrupted, yet {status}");
    assert!(
        wait_for(Duration::from_secs(10), || forks_of("301").is_empty()),
        "processes left: {:?}",
        forks_of("301")
    );
}
