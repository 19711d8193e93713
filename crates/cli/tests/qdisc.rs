//! node_exporter's qdisc collector, on a real qdisc: a veth pair made
//! here with a `pfifo` root qdisc on one end, packets sent through it, and
//! the agent's series compared with `tc -s -j qdisc show` and with
//! Debian's node_exporter reading the same device. The pair is removed
//! after (a failed assertion too).

mod common;

use std::process::Command;
use std::time::Duration;

use common::agent::{agent, get};
use common::exposition::{node_exporter_env, parse_exposition};
use common::veth::{Veth, run};
use common::wait_for;

/// `tc -s -j qdisc show dev DEV`'s root qdisc: kind and counters.
fn tc(dev: &str) -> (String, [u64; 7]) {
    let out = Command::new("tc")
        .args(["-s", "-j", "qdisc", "show", "dev", dev])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let q = v
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["root"] == true)
        .expect("a root qdisc");
    let n = |k: &str| q[k].as_u64().unwrap_or_else(|| panic!("{k} in {q}"));
    (
        q["kind"].as_str().unwrap().to_string(),
        [
            n("bytes"),
            n("packets"),
            n("drops"),
            n("requeues"),
            n("overlimits"),
            n("qlen"),
            n("backlog"),
        ],
    )
}

const FAMILIES: [&str; 7] = [
    "node_qdisc_bytes_total",
    "node_qdisc_packets_total",
    "node_qdisc_drops_total",
    "node_qdisc_requeues_total",
    "node_qdisc_overlimits_total",
    "node_qdisc_current_queue_length",
    "node_qdisc_backlog",
];

#[test]
fn a_real_root_qdisc_is_served_as_tc_and_node_exporter_see_it() {
    let id = std::process::id() % 100_000;
    let veth = Veth::new("qs");
    let a = veth.a.clone();
    run(&[
        "tc", "qdisc", "add", "dev", &a, "root", "pfifo", "limit", "1000",
    ]);
    let net = format!("10.251.{}", id % 250);
    run(&["ip", "addr", "add", &format!("{net}.1/30"), "dev", &a]);
    veth.up();
    run(&[
        "ip",
        "neigh",
        "replace",
        &format!("{net}.2"),
        "lladdr",
        "02:00:00:00:00:02",
        "dev",
        &a,
        "nud",
        "permanent",
    ]);
    let s = std::net::UdpSocket::bind(format!("{net}.1:0")).unwrap();
    for _ in 0..50 {
        s.send_to(&[0u8; 100], format!("{net}.2:9")).unwrap();
    }
    let (kind, want) = tc(&a);
    assert_eq!(kind, "pfifo");
    assert!(want[1] >= 50, "{want:?}");

    let include = format!("--collector.qdisc.device-include=^{a}$");
    let ag = agent("", &["--collector.qdisc", &include]);
    let (_ne, naddr) = node_exporter_env(
        &[
            "--collector.disable-defaults",
            "--collector.qdisc",
            &format!("--collector.qdisk.device-include=^{a}$"),
        ],
        &[],
    );
    let labels = vec![
        ("device".to_string(), a.clone()),
        ("kind".to_string(), kind.clone()),
    ];
    let values = |body: &str| -> Vec<Option<f64>> {
        let series = parse_exposition(body).0;
        FAMILIES
            .iter()
            .map(|f| series.get(&(f.to_string(), labels.clone())).copied())
            .collect()
    };
    let want: Vec<Option<f64>> = want.iter().map(|v| Some(*v as f64)).collect();
    let mut mine = Vec::new();
    assert!(
        wait_for(Duration::from_secs(30), || {
            mine = values(&get(ag.addr, "/metrics", None).body);
            mine == want
        }),
        "the agent serves {mine:?}, tc says {want:?}"
    );
    assert_eq!(
        values(&get(naddr, "/metrics", None).body),
        want,
        "node_exporter"
    );
    // The include leaves out every other device.
    let body = get(ag.addr, "/metrics", None).body;
    let served: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with("node_qdisc_"))
        .collect();
    assert_eq!(served.len(), FAMILIES.len(), "{served:#?}");
}
