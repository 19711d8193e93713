//! The `quietstat` binary end to end, on fixture trees and on this machine.

mod common;

use common::*;

fn fixture_args(tree: &str) -> Vec<String> {
    let (p, s) = fixtures::roots(tree);
    vec![
        "--proc-root".into(),
        p.display().to_string(),
        "--sys-root".into(),
        s.display().to_string(),
    ]
}

#[test]
fn stat_json_snapshot_of_a_fixture() {
    let mut args = fixture_args("cpu256-irq3000");
    args.extend(["stat", "--format", "json"].map(String::from));
    let out = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sample"]["stat"]["cpus"].as_array().unwrap().len(), 256);
    assert_eq!(v["topology"]["isolated"], "8-15");
    assert_eq!(v["sample"]["cpu_isolated"], "8-15");
    assert_eq!(
        v["sample"]["interrupts"]["rows"].as_array().unwrap().len(),
        3014
    );
}

#[test]
fn stat_table_snapshot_of_an_old_kernel() {
    let mut args = fixture_args("linux-2.6.32");
    args.push("stat".into());
    let out = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("available -"),
        "no MemAvailable on 2.6.32: {text}"
    );
    assert!(text.contains("context switches 1990473"));
    assert!(
        out.stderr.is_empty(),
        "missing pressure files are not warnings: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn stat_rates_on_this_machine() {
    let out = run(&[
        "stat",
        "--interval",
        "200ms",
        "--count",
        "2",
        "--format",
        "json",
    ]);
    assert_ok(&out);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    for l in &lines {
        let r = &l["rates"];
        assert!((r["interval_secs"].as_f64().unwrap() - 0.2).abs() < 0.1);
        let idle = r["cpu_all"]["idle"].as_f64();
        let busy = r["cpu_all"]["busy"].as_f64();
        if let (Some(i), Some(b)) = (idle, busy) {
            assert!((0.0..=100.0).contains(&i) && (0.0..=100.0).contains(&b));
        }
        assert!(r["context_switches_per_sec"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn bad_input_is_named() {
    let out = run(&["stat", "--interval", "fast"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`fast` is not a duration"));
    let out = run(&["--proc-root", "/nonexistent", "stat"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/stat: not found"));
    let out = run(&["bench", "procfs", "--files", "stat,nope"]);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("unknown source `nope`; accepted: stat, interrupts")
    );
    // `top` into a pipe: what it needs, and what to use instead.
    let out = quietstat()
        .arg("top")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("needs a terminal") && err.contains("quietstat ps"),
        "{err}"
    );
    // One cause, said once: no "(os error N): ..." repeat.
    let out = run(&["--proc-root", "/etc/passwd", "ps"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("Not a directory").count(), 1, "{err}");
}

#[test]
fn bench_procfs_saves_and_compares_with_a_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let saved = dir.join("base.json");
    let out = run(&[
        "bench",
        "procfs",
        "--reads",
        "50",
        "--files",
        "stat,loadavg",
        "--save",
        saved.to_str().unwrap(),
    ]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("stat") && text.contains("loadavg") && !text.contains("meminfo"));
    // A baseline whose reads were 10x cheaper must flag a regression (exit 3).
    let mut base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    for f in base["files"].as_array_mut().unwrap() {
        let m = f["open_read_close"]["median_us"].as_f64().unwrap();
        f["open_read_close"]["median_us"] = serde_json::json!(m / 10.0);
    }
    let cheap = dir.join("cheap.json");
    std::fs::write(&cheap, base.to_string()).unwrap();
    let out = run(&[
        "bench",
        "procfs",
        "--reads",
        "50",
        "--files",
        "stat",
        "--baseline",
        cheap.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["comparison"][0]["regressed"], true);
    // A baseline that cannot be read is named.
    let out = run(&[
        "bench",
        "procfs",
        "--reads",
        "5",
        "--baseline",
        "/nonexistent.json",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading baseline /nonexistent.json"));
}

#[test]
fn ps_lists_this_process_in_csv_and_json_from_both_backends() {
    let me = std::process::id().to_string();
    for backend in ["procfs", "bpf"] {
        let out = run(&[
            "ps",
            "--backend",
            backend,
            "--format",
            "csv",
            "--fields",
            "pid,comm,utime",
        ]);
        assert!(
            out.status.success(),
            "{backend}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().next(), Some("pid,comm,utime_ticks"));
        assert!(
            text.lines()
                .any(|l| l.split(',').next() == Some(me.as_str())),
            "{backend}"
        );
    }
    let out = run(&[
        "ps",
        "--format",
        "json",
        "--pids",
        &me,
        "--sort=-utime",
        "--fields",
        "pid,cmdline",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 1);
    assert_eq!(v["rows"][0]["pid"].to_string(), me);
    // This test binary's own arguments, as /proc shows them.
    let args: Vec<String> = std::env::args().collect();
    assert_eq!(v["rows"][0]["cmdline"], args.join(" "));
}

/// Asked for the delay accounting while the kernel keeps none, `ps` says
/// so and how to turn it on; while it keeps them, nothing.
#[test]
fn ps_says_when_the_delay_accounting_is_off() {
    let on = std::fs::read_to_string("/proc/sys/kernel/task_delayacct").unwrap();
    let out = run(&["ps", "--fields", "pid,delayacct", "--pids", "1"]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.contains("kernel.task_delayacct is 0"),
        on.trim() == "0",
        "{err}"
    );
    let out = run(&["ps", "--fields", "pid,comm", "--pids", "1"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("task_delayacct"));
}

/// Asked for GPU use, `ps` says what its readers could not give (here,
/// at least NVIDIA's library, absent); asked for network bytes from
/// /proc, that /proc cannot give them. Not asked, nothing.
#[test]
fn ps_says_what_the_gpu_and_network_readers_could_not_give() {
    // What `ps` of PID 1 with `fields` (and the backend, when given)
    // says on stderr; it succeeds.
    let stderr = |backend: Option<&str>, fields: &str| {
        let mut args = vec!["ps", "--fields", fields, "--pids", "1"];
        if let Some(b) = backend {
            args.extend(["--backend", b]);
        }
        let out = run(&args);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = stderr(Some("bpf"), "pid,gpu");
    assert!(
        err.contains("quietstat ps: GPU figures: ") && err.contains("libnvidia-ml"),
        "{err}"
    );
    let err = stderr(Some("procfs"), "pid,net");
    assert!(err.contains("the procfs backend cannot give them"), "{err}");
    assert!(!stderr(Some("bpf"), "pid,net").contains("network"));
    let err = stderr(None, "pid,comm");
    assert!(!err.contains("GPU") && !err.contains("network"), "{err}");
}

#[test]
fn ps_rejects_unknown_fields_naming_the_accepted_ones() {
    let out = run(&["ps", "--fields", "pid,bogus"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"bogus\"") && err.contains("accepted") && err.contains("utime"),
        "{err}"
    );
}

#[test]
fn ps_asked_for_absent_pids_fails_as_ps_p_does() {
    // pid_max is at most 2^22: this pid cannot exist.
    let out = run(&["ps", "--backend", "procfs", "--pids", "99999999"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no process"));
    let me = std::process::id().to_string();
    let out = run(&[
        "ps",
        "--backend",
        "procfs",
        "--pids",
        &format!("99999999,{me}"),
    ]);
    assert_ok(&out);
}

#[test]
fn ps_sorts_by_a_column_as_well_as_by_a_field() {
    let out = run(&[
        "ps",
        "--fields",
        "pid,io",
        "--sort=-write_bytes",
        "--format",
        "csv",
        "--backend",
        "procfs",
    ]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|&h| h == "write_bytes").unwrap();
    // Rows without I/O counters (not permitted) sort last, as absent values.
    let written: Vec<u64> = lines
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap_or(0))
        .collect();
    assert!(written.len() > 10, "{text}");
    assert!(written.windows(2).all(|w| w[0] >= w[1]), "{written:?}");
    assert!(written[0] > 0, "{written:?}");
    let out = run(&["ps", "--sort", "nonsense"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("\"nonsense\""),
        "{err}"
    );
}

/// Exit capture under load: every child the forker made is found in the
/// BPF ring with its exit code, none lost (root; the full 5,000/s figure is
/// in BENCHMARKS.md).
#[test]
fn bench_exits_captures_every_child_of_a_fork_storm() {
    let out = run(&[
        "bench",
        "exits",
        "--rate",
        "2000",
        "--duration",
        "3s",
        "--drain-every",
        "1s",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let forked = r["forked"].as_u64().unwrap();
    assert!(forked >= 3000, "{r}");
    assert_eq!(r["captured"].as_u64(), Some(forked), "{r}");
    assert_eq!(r["lost"].as_u64(), Some(0), "{r}");
    assert_eq!(r["wrong_code"].as_u64(), Some(0), "{r}");
    assert!(r["drains"].as_u64().unwrap() >= 3, "{r}");
}

#[test]
fn commands_that_measure_the_live_kernel_refuse_another_root() {
    for args in [
        &["--proc-root", "/tmp", "jitter", "--cpu", "1"][..],
        &["--sys-root", "/tmp", "jitter", "--cpu", "1"],
        &["--proc-root", "/tmp", "noise", "--cpus", "1"],
        &["--proc-root", "/tmp", "bench", "proctable"],
        &["--sys-root", "/tmp", "bench", "consumers"],
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let flag = args[0];
        assert!(
            err.contains(&format!("{flag} is not accepted"))
                && err.contains("stat, cgroups, ps, agent"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn cgroups_on_a_fixture_sorted_and_cut_by_depth() {
    let mut args = fixture_args("cgroup-v2");
    args.extend(
        [
            "cgroups",
            "--interval",
            "10ms",
            "--sort",
            "memory",
            "--depth",
            "1",
            "--format",
            "json",
        ]
        .map(String::from),
    );
    let out = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v.as_array().unwrap();
    let paths: Vec<&str> = rows.iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        ["/kubepods.slice", "/system.slice", "/user.slice", "/"]
    );
    assert_eq!(rows[1]["memory_bytes"], 163_840);
    assert_eq!(rows[1]["working_set_bytes"], 163_840 - 20_480);
    assert_eq!(rows[1]["cpu_pct"], 0.0, "a tree that stands still");

    let mut args = fixture_args("cgroup-v2");
    args.extend(
        [
            "cgroups",
            "--interval",
            "10ms",
            "--files",
            "v2:memory.bogus",
        ]
        .map(String::from),
    );
    let out = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("v2:memory.bogus") && err.contains("accepted: v2:cpu.stat"),
        "{err}"
    );
}

#[test]
fn cgroups_on_this_machine_gives_the_root_its_cpu_share() {
    // The root cgroup holds every process: on any machine it is there.
    let out = run(&[
        "cgroups",
        "--interval",
        "200ms",
        "--format",
        "json",
        "--depth",
        "0",
    ]);
    assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["path"], "/");
    assert!(rows[0]["cpu_pct"].as_f64().is_some(), "{}", rows[0]);
}
