//! `stat` and the agent on incomplete proc/sys trees (containers, chroots,
//! copies of another machine): every file of a captured tree removed in
//! turn, and an empty tree. Nothing may stop them; what is missing is said.

use std::time::Duration;

mod common;

use common::agent::*;
use common::*;

/// Every file of the `this-machine` fixture, relative to the tree.
fn files() -> Vec<String> {
    fn walk(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let base = fixtures::dir().join("this-machine");
    let mut out = Vec::new();
    walk(&base, &base, &mut out);
    // Per-process directories belong to the process table's own tests.
    out.retain(|f| {
        !f.split('/')
            .nth(1)
            .is_some_and(|c| c.chars().all(|c| c.is_ascii_digit()))
    });
    out.sort();
    out
}

fn roots(t: &fixtures::Tree) -> (String, String) {
    (
        t.proc_root().display().to_string(),
        t.sys_root().display().to_string(),
    )
}

/// The source and node_exporter collector a removed file belongs to.
fn source_of(file: &str) -> Option<(&'static str, &'static str)> {
    Some(match file {
        "proc/stat" => ("stat", "cpu"),
        "proc/interrupts" => ("interrupts", "interrupts"),
        "proc/softirqs" => ("softirqs", "softirqs"),
        "proc/meminfo" => ("meminfo", "meminfo"),
        "proc/vmstat" => ("vmstat", "vmstat"),
        "proc/loadavg" => ("loadavg", "loadavg"),
        "proc/diskstats" => ("diskstats", "diskstats"),
        "proc/net/dev" => ("net_dev", "netdev"),
        "proc/pressure/cpu" => ("pressure_cpu", "pressure"),
        "proc/pressure/memory" => ("pressure_memory", "pressure"),
        "proc/pressure/io" => ("pressure_io", "pressure"),
        "proc/net/arp" => ("arp", "arp"),
        "proc/net/udp" => ("udp_queues", "udp_queues"),
        "proc/sys/net/netfilter/nf_conntrack_count" => ("conntrack", "conntrack"),
        // No /proc/mounts beside it in the tree either.
        "proc/1/mounts" => ("filesystem", "filesystem"),
        "rootfs/etc/os-release" => ("os", "os"),
        _ => return None,
    })
}

/// The agent on `t`: it must start serving, answer a scrape and stop on
/// SIGTERM with success; what it logged. With `down`, that source reports
/// `quietstat_source_up` 0 and its collector `node_scrape_collector_success` 0.
fn agent_runs_on(t: &fixtures::Tree, what: &str, down: Option<(&str, &str)>) -> Vec<String> {
    let (p, s) = roots(t);
    let rootfs = t.proc_root().parent().unwrap().join("rootfs");
    let rootfs = rootfs.to_str().unwrap();
    let mut a = agent(
        "",
        &[
            "--backend",
            "procfs",
            "--proc-root",
            &p,
            "--sys-root",
            &s,
            "--path.rootfs",
            rootfs,
        ],
    );
    let r = get(a.addr, "/metrics", None);
    assert_eq!(r.status, 200, "{what}: {}", r.body);
    assert!(r.body.contains("quietstat_source_up"), "{what}");
    if let Some((source, collector)) = down {
        for series in [
            format!("quietstat_source_up{{source=\"{source}\"}}"),
            format!("node_scrape_collector_success{{collector=\"{collector}\"}}"),
        ] {
            let v: Option<f64> = r
                .body
                .lines()
                .find_map(|l| l.strip_prefix(series.as_str())?.trim().parse().ok());
            assert_eq!(v, Some(0.0), "{what}: {series}");
        }
    }
    a.proc.signal(libc::SIGTERM);
    let status = a
        .proc
        .wait(Duration::from_secs(5))
        .expect("stops on SIGTERM");
    assert!(status.success(), "{what}: {status:?}");
    a.early
}

#[test]
fn every_file_of_a_tree_removed_in_turn_leaves_stat_and_the_agent_running() {
    let files = files();
    assert!(files.len() > 15, "{files:?}");
    for f in &files {
        let t = fixtures::Tree::copy_of("this-machine");
        std::fs::remove_file(t.proc_root().parent().unwrap().join(f)).unwrap();
        let (p, s) = roots(&t);
        let out = run(&[
            "--proc-root",
            &p,
            "--sys-root",
            &s,
            "stat",
            "--format",
            "json",
        ]);
        assert_ok(&out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["topology"]["online"], "0-1", "without {f}");
        agent_runs_on(&t, &format!("without {f}"), source_of(f));
    }
}

#[test]
fn an_empty_tree_leaves_the_agent_running_and_stat_says_the_root_is_wrong() {
    let t = fixtures::Tree::empty();
    let log = agent_runs_on(&t, "empty tree", Some(("meminfo", "meminfo")));
    assert!(
        log.iter().any(|l| l.contains("CPU topology unknown")),
        "{log:#?}"
    );
    let (p, s) = roots(&t);
    let out = run(&["--proc-root", &p, "--sys-root", &s, "stat"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nor any other source"));
}
