//! node_exporter's own end-to-end test with the agent in its place: the
//! fixture trees of node_exporter's repository (`fixtures/node-exporter-e2e`)
//! and its script's command line, the scrape compared series by series
//! with its `e2e-output.txt` (the series the script skips left out). The
//! share of node_exporter's series the agent serves with the same value
//! is printed, with the families that differ, and must not fall below
//! what it reached when this test was written.

mod common;

use std::collections::BTreeMap;

use common::agent::{agent_with, get};
use common::e2e::{E2E_DISABLED, E2E_ENABLED, E2E_REFUSED, extract_ttar};
use common::exposition::{Series, parse_exposition};

const TREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fixtures/node-exporter-e2e"
);

/// The series the script does not compare (its `skip_re`): the Go
/// runtime's, build and timing figures, the clock, and the network byte
/// and packet counters netlink reads from the live machine.
fn skipped(name: &str) -> bool {
    ["go_", "node_exporter_build_info", "process_"]
        .iter()
        .any(|p| name.starts_with(p))
        || [
            "node_scrape_collector_duration_seconds",
            "node_textfile_mtime_seconds",
            "node_time_zone",
            "node_time_seconds",
        ]
        .iter()
        .any(|p| name.starts_with(p))
        || ["receive", "transmit"].iter().any(|d| {
            ["bytes", "packets"]
                .iter()
                .any(|k| name.starts_with(&format!("node_network_{d}_{k}_total")))
        })
}

/// The share of node_exporter's end-to-end series served with the same
/// value, at least (in thousandths; the target is 950).
const FLOOR: usize = 987;

#[test]
fn node_exporters_end_to_end_fixture_series_by_series() {
    // The sysfs tree where the script has it, `collector/fixtures/sys`,
    // named relative to the agent's working directory as the script
    // names it: RAPL's `path` label carries it.
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = tmp.path().join("collector/fixtures");
    extract_ttar(&std::path::Path::new(TREE).join("sys.ttar"), &fixtures);
    extract_ttar(&std::path::Path::new(TREE).join("udev.ttar"), &fixtures);
    let mut args: Vec<String> = vec![
        format!("--path.rootfs={TREE}"),
        format!("--path.procfs={TREE}/proc"),
        "--path.sysfs=collector/fixtures/sys".to_string(),
        format!("--path.udev.data={}/udev/data", fixtures.display()),
    ];
    args.extend(E2E_ENABLED.iter().map(|c| format!("--collector.{c}")));
    args.extend(E2E_DISABLED.iter().map(|c| format!("--no-collector.{c}")));
    let flags = [
        "--collector.cpu.info",
        "--collector.arp.device-exclude=nope",
        "--collector.bcache.priorityStats",
        "--collector.cpu.info.bugs-include=^(cpu_meltdown|spectre_.*|mds)$",
        "--collector.cpu.info.flags-include=^(aes|avx.?|constant_tsc)$",
        "--collector.hwmon.chip-include=(applesmc|asus_nb_wmi|coretemp|hwmon4|ieee80211|nct6779)",
        "--collector.netclass.ignore-invalid-speed",
        "--collector.netclass.ignored-devices=(dmz|int)",
        "--collector.netdev.device-include=lo",
        "--collector.qdisc.device-include=(wlan0|eth0)",
        "--collector.stat.softirq",
        "--collector.sysctl.include-info=kernel.seccomp.actions_avail",
        "--collector.sysctl.include=fs.file-nr",
        "--collector.sysctl.include=fs.file-nr:total,current,max",
        "--collector.sysctl.include=kernel.threads-max",
        "--no-collector.arp.netlink",
    ];
    // The flags the agent refuses by name are left out, as the script
    // leaves out those of collectors its build lacks.
    let refused = |f: &str| {
        E2E_REFUSED
            .iter()
            .any(|r| r.split('=').next() == f.split('=').next())
    };
    args.extend(flags.iter().filter(|f| !refused(f)).map(|f| f.to_string()));
    args.push(format!(
        "--collector.textfile.directory={TREE}/textfile/two_metric_files"
    ));
    // The script's `collector/fixtures/qdisc/` and `wifi`, where they are
    // kept here.
    args.push(format!("--collector.qdisc.fixtures={TREE}/qdisc/"));
    args.push(format!("--collector.wifi.fixtures={TREE}/wifi"));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let a = agent_with("", &refs, |c| {
        c.current_dir(tmp.path());
    });
    let ours = parse_exposition(&get(a.addr, "/metrics", None).body).0;
    let theirs: Series =
        parse_exposition(&std::fs::read_to_string(format!("{TREE}/e2e-output.txt")).unwrap())
            .0
            .into_iter()
            .filter(|((name, _), _)| !skipped(name))
            .collect();
    let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
    // Per family: series missing here, and series with another value.
    let mut off: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut exact = 0;
    for (k, v) in &theirs {
        let e = off.entry(k.0.as_str()).or_default();
        e.2 += 1;
        match ours.get(k) {
            Some(o) if same(*o, *v) => exact += 1,
            Some(_) => e.1 += 1,
            None => e.0 += 1,
        }
    }
    let mut worst: Vec<(&str, (usize, usize, usize))> =
        off.into_iter().filter(|(_, (m, d, _))| m + d > 0).collect();
    worst.sort_by_key(|(f, (m, d, _))| (std::cmp::Reverse(m + d), *f));
    let share = exact * 1000 / theirs.len();
    println!(
        "{exact} of {} series exact ({}.{}%); families that differ (missing, other value, of):",
        theirs.len(),
        share / 10,
        share % 10
    );
    for (f, (m, d, n)) in &worst {
        println!("  {f}: {m} missing, {d} other value, of {n}");
    }
    // Which collectors: the one family whose series name them.
    for ((name, labels), v) in &theirs {
        if name == "node_scrape_collector_success"
            && ours.get(&(name.clone(), labels.clone())) != Some(v)
        {
            println!(
                "  collector {labels:?}: node_exporter {v}, here {:?}",
                ours.get(&(name.clone(), labels.clone()))
            );
        }
    }
    assert!(
        theirs.len() > 2000,
        "{} series in e2e-output.txt",
        theirs.len()
    );
    assert!(
        share >= FLOOR,
        "{share} thousandths of node_exporter's series exact, below {FLOOR}"
    );
}
