//! node_exporter's ethtool collector: each network device's driver, link
//! modes and driver statistics (the ethtool ioctl), named as node_exporter
//! names them.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use super::*;
use procfs::ethtool::EthtoolDevice;

/// node_exporter's link-mode bits below 32 (it reads the legacy 32-bit
/// masks, so the others never show): bit, speed in Mb/s, duplex, PHY.
const SPEEDS: [(u32, u64, &str, &str); 22] = [
    (0, 10, "half", "T"),
    (1, 10, "full", "T"),
    (2, 100, "half", "T"),
    (3, 100, "full", "T"),
    (4, 1000, "half", "T"),
    (5, 1000, "full", "T"),
    (12, 10000, "full", "T"),
    (17, 1000, "full", "KX"),
    (18, 10000, "full", "KX4"),
    (19, 10000, "full", "KR"),
    (20, 10000, "full", "R_FEC"),
    (21, 20000, "full", "MLD2"),
    (22, 20000, "full", "KR2"),
    (23, 40000, "full", "KR4"),
    (24, 40000, "full", "CR4"),
    (25, 40000, "full", "SR4"),
    (26, 40000, "full", "LR4"),
    (27, 56000, "full", "KR4"),
    (28, 56000, "full", "CR4"),
    (29, 56000, "full", "SR4"),
    (30, 56000, "full", "LR4"),
    (31, 25000, "full", "CR"),
];
const PORTS: [(u32, &str); 6] = [
    (7, "TP"),
    (8, "AUI"),
    (9, "MII"),
    (10, "FIBRE"),
    (11, "BNC"),
    (16, "Backplane"),
];
const AUTONEG: u32 = 6;
const PAUSE: u32 = 13;
const ASYM_PAUSE: u32 = 14;

/// The statistics node_exporter names with `_total` and its own help.
const NAMED: [(&str, &Family); 7] = [
    ("rx_bytes", &NODE_ETHTOOL_RECEIVED_BYTES_TOTAL),
    ("rx_dropped", &NODE_ETHTOOL_RECEIVED_DROPPED_TOTAL),
    ("rx_errors", &NODE_ETHTOOL_RECEIVED_ERRORS_TOTAL),
    ("rx_packets", &NODE_ETHTOOL_RECEIVED_PACKETS_TOTAL),
    ("tx_bytes", &NODE_ETHTOOL_TRANSMITTED_BYTES_TOTAL),
    ("tx_errors", &NODE_ETHTOOL_TRANSMITTED_ERRORS_TOTAL),
    ("tx_packets", &NODE_ETHTOOL_TRANSMITTED_PACKETS_TOTAL),
];

fn bit(mask: u32, b: u32) -> f64 {
    f64::from(u8::from(mask & (1 << b) != 0))
}

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if !x.s.ok(Source::Ethtool) {
        return Ok(());
    }
    let devs = &x.s.ethtool;
    let links: Vec<(&str, (u32, u32, u8))> = devs
        .iter()
        .filter_map(|d| d.link.map(|l| (d.name.as_str(), l)))
        .collect();
    for (f, advertised) in [
        (&NODE_NETWORK_SUPPORTED_SPEED_BYTES, false),
        (&NODE_NETWORK_ADVERTISED_SPEED_BYTES, true),
    ] {
        let mut m = out.family(f)?;
        for (dev, (sup, adv, _)) in &links {
            let mask = if advertised { *adv } else { *sup };
            for (b, speed, duplex, phy) in SPEEDS {
                if mask & (1 << b) != 0 {
                    let mode = format!("{speed}base{phy}");
                    let labels = [
                        ("device", *dev),
                        ("duplex", duplex),
                        ("mode", mode.as_str()),
                    ];
                    gauge_l(&mut m, &labels, speed as f64 * 125_000.0)?;
                }
            }
        }
    }
    {
        let mut m = out.family(&NODE_NETWORK_SUPPORTED_PORT_INFO)?;
        for (dev, (sup, _, _)) in &links {
            for (b, kind) in PORTS {
                if sup & (1 << b) != 0 {
                    gauge_l(&mut m, &[("device", *dev), ("type", kind)], 1.0)?;
                }
            }
        }
    }
    type Bit = (&'static Family, bool, u32);
    let bits: [Bit; 6] = [
        (&NODE_NETWORK_AUTONEGOTIATE_SUPPORTED, false, AUTONEG),
        (&NODE_NETWORK_PAUSE_SUPPORTED, false, PAUSE),
        (&NODE_NETWORK_ASYMMETRICPAUSE_SUPPORTED, false, ASYM_PAUSE),
        (&NODE_NETWORK_AUTONEGOTIATE_ADVERTISED, true, AUTONEG),
        (&NODE_NETWORK_PAUSE_ADVERTISED, true, PAUSE),
        (&NODE_NETWORK_ASYMMETRICPAUSE_ADVERTISED, true, ASYM_PAUSE),
    ];
    for (f, advertised, b) in bits {
        let mut m = out.family(f)?;
        for (dev, (sup, adv, _)) in &links {
            let mask = if advertised { *adv } else { *sup };
            gauge_l(&mut m, &[("device", *dev)], bit(mask, b))?;
        }
    }
    {
        let mut m = out.family(&NODE_NETWORK_AUTONEGOTIATE)?;
        for (dev, (_, _, auto)) in &links {
            gauge_l(&mut m, &[("device", *dev)], f64::from(*auto))?;
        }
    }
    {
        let mut m = out.family(&NODE_ETHTOOL_INFO)?;
        for d in devs {
            if let Some([driver, version, fw, bus, erom]) = &d.info {
                let labels = [
                    ("bus_info", bus.as_str()),
                    ("device", d.name.as_str()),
                    ("driver", driver.as_str()),
                    ("expansion_rom_version", erom.as_str()),
                    ("firmware_version", fw.as_str()),
                    ("version", version.as_str()),
                ];
                gauge_l(&mut m, &labels, 1.0)?;
            }
        }
    }
    statistics(out, devs, &x.ctx.config.ethtool_metrics_include)
}

/// node_exporter's SanitizeMetricName (each run of characters outside
/// `[0-9A-Za-z_]`, with the underscores around it, becomes one `_`) and its
/// ethtool renaming (`rx` and `tx` words spelled out).
static SANITIZE: LazyLock<[regex::Regex; 3]> = LazyLock::new(|| {
    ["_*[^0-9A-Za-z_]+_*", "(^|_)rx(_|$)", "(^|_)tx(_|$)"]
        .map(|p| regex::Regex::new(p).expect("a valid expression"))
});

fn sanitize(name: &str) -> String {
    SANITIZE[0].replace_all(name, "_").into_owned()
}

/// The family name node_exporter gives a sanitized statistic.
fn ethtool_name(sanitized: &str) -> String {
    let lower = sanitized.to_ascii_lowercase();
    let trimmed = lower.trim_start_matches('_');
    let n = SANITIZE[1].replace_all(trimmed, "${1}received${2}");
    let n = SANITIZE[2].replace_all(&n, "${1}transmitted${2}");
    let mut name = String::new();
    NODE_ETHTOOL.instance_into(&n, &mut name);
    name
}

/// A statistic's value by device.
type Series<'a> = Vec<(&'a str, u64)>;

/// The driver statistics, a family each, named as node_exporter names
/// them; names that two statistics of a device would share are left out,
/// as node_exporter leaves them out.
fn statistics(out: &mut Out<'_>, devs: &[EthtoolDevice], include: &str) -> Fmt {
    let include = crate::metrics::compat::pattern(include);
    // family name -> (key, [(device, value)])
    let mut by_name: BTreeMap<String, (String, Series<'_>)> = BTreeMap::new();
    for d in devs {
        let mut names: BTreeMap<String, Option<(String, u64)>> = BTreeMap::new();
        for (raw, v) in &d.stats {
            let key = sanitize(raw);
            if include.as_ref().is_some_and(|r| !r.is_match(&key)) {
                continue;
            }
            let fq = ethtool_name(&key);
            match names.get_mut(&fq) {
                Some(e) => *e = None,
                None => {
                    names.insert(fq, Some((key, *v)));
                }
            }
        }
        for (fq, e) in names {
            let Some((key, v)) = e else { continue };
            let entry = by_name.entry(fq).or_insert_with(|| (key, Vec::new()));
            entry.1.push((d.name.as_str(), v));
        }
    }
    // The named ones under their own names, the rest per key.
    let mut rows: Vec<(String, &'static Family, String, &Series<'_>)> = by_name
        .iter()
        .map(
            |(fq, (key, series))| match NAMED.iter().find(|(k, _)| k == key) {
                Some((_, f)) => (f.name.to_string(), *f, f.help.to_string(), series),
                None => (
                    fq.clone(),
                    &NODE_ETHTOOL,
                    format!("Network interface {key}"),
                    series,
                ),
            },
        )
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, f, help, series) in rows {
        let mut m = if std::ptr::eq(f, &NODE_ETHTOOL) {
            out.family_named(f, &name, &help)?
        } else {
            out.family(f)?
        };
        for (dev, v) in series {
            sample_l(&mut m, &[("device", *dev)], *v as f64)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_node_exporter_makes_them() {
        assert_eq!(sanitize("rx_queue_0_packets"), "rx_queue_0_packets");
        assert_eq!(sanitize("tx-queue 1 bytes"), "tx_queue_1_bytes");
        assert_eq!(sanitize("a__-__b"), "a_b");
        assert_eq!(sanitize("__x"), "__x");
        assert_eq!(sanitize("port.rx_bytes[0]"), "port_rx_bytes_0_");
        assert_eq!(
            ethtool_name("rx_queue_0_packets"),
            "node_ethtool_received_queue_0_packets"
        );
        assert_eq!(ethtool_name("peer_ifindex"), "node_ethtool_peer_ifindex");
        assert_eq!(ethtool_name("_TX_Bytes"), "node_ethtool_transmitted_bytes");
        assert_eq!(ethtool_name("rxtx_rx"), "node_ethtool_rxtx_received");
    }
}
