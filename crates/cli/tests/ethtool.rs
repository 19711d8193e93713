//! node_exporter's ethtool collector, on a real device: a veth pair made
//! here (its driver answers the ethtool ioctl: driver information, link
//! settings and statistics), read by the agent and by Debian's
//! node_exporter, compared series by series.

mod common;

use std::time::Duration;

use common::agent::{agent, get};
use common::exposition::{Series, node_exporter_env, parse_exposition};
use common::veth::Veth;
use common::wait_for;

/// The ethtool collector's series of device `dev`.
fn of_device(body: &str, dev: &str) -> Series {
    parse_exposition(body)
        .0
        .into_iter()
        .filter(|((n, labels), _)| {
            (n.starts_with("node_ethtool_")
                || n.starts_with("node_network_supported")
                || n.starts_with("node_network_advertised")
                || n.starts_with("node_network_autonegotiate")
                || n.starts_with("node_network_pause")
                || n.starts_with("node_network_asymmetricpause"))
                && labels.iter().any(|(k, v)| k == "device" && v == dev)
        })
        .collect()
}

#[test]
fn a_real_devices_ethtool_figures_are_served_as_node_exporter_serves_them() {
    let veth = Veth::new("qe");
    veth.up();
    let include = format!("--collector.ethtool.device-include=^{}$", veth.a);
    let a = agent("", &["--collector.ethtool", &include]);
    let (_ne, naddr) = node_exporter_env(
        &[
            "--collector.disable-defaults",
            "--collector.ethtool",
            &include,
        ],
        &[],
    );
    let theirs = of_device(&get(naddr, "/metrics", None).body, &veth.a);
    assert!(
        theirs.keys().any(|(n, _)| n == "node_ethtool_info")
            && theirs.keys().any(|(n, _)| n == "node_ethtool_peer_ifindex"),
        "node_exporter served {theirs:#?}"
    );
    let mut mine = Series::new();
    let same = wait_for(Duration::from_secs(30), || {
        mine = of_device(&get(a.addr, "/metrics", None).body, &veth.a);
        mine == theirs
    });
    assert!(same, "the agent: {mine:#?}\nnode_exporter: {theirs:#?}");
    // The include leaves out every other device (`lo` answers too).
    let body = get(a.addr, "/metrics", None).body;
    assert!(
        !body
            .lines()
            .any(|l| l.starts_with("node_ethtool_info{") && !l.contains(&veth.a))
    );
    // A statistics pattern leaves out what it does not match.
    let peer_only = agent(
        "",
        &[
            "--collector.ethtool",
            &include,
            "--collector.ethtool.metrics-include=^peer",
        ],
    );
    let stats: Vec<String> = of_device(&get(peer_only.addr, "/metrics", None).body, &veth.a)
        .into_keys()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with("node_ethtool_") && n != "node_ethtool_info")
        .collect();
    assert_eq!(stats, ["node_ethtool_peer_ifindex"]);
}
