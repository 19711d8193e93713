//! node_exporter's infiniband collector: /sys/class/infiniband.

use super::*;

/// InfiniBand port counters: `(path below the port, name after
/// node_infiniband_, scale, help)`; data counters count 4-byte words.
const IB_COUNTERS: &[(&str, &str, f64, &str)] = &[
    (
        "counters_ext/port_multicast_rcv_packets",
        "legacy_multicast_packets_received",
        1.0,
        "Number of multicast packets received",
    ),
    (
        "counters_ext/port_multicast_xmit_packets",
        "legacy_multicast_packets_transmitted",
        1.0,
        "Number of multicast packets transmitted",
    ),
    (
        "counters_ext/port_rcv_data_64",
        "legacy_data_received_bytes",
        4.0,
        "Number of data octets received on all links",
    ),
    (
        "counters_ext/port_rcv_packets_64",
        "legacy_packets_received",
        1.0,
        "Number of data packets received on all links",
    ),
    (
        "counters_ext/port_unicast_rcv_packets",
        "legacy_unicast_packets_received",
        1.0,
        "Number of unicast packets received",
    ),
    (
        "counters_ext/port_unicast_xmit_packets",
        "legacy_unicast_packets_transmitted",
        1.0,
        "Number of unicast packets transmitted",
    ),
    (
        "counters_ext/port_xmit_data_64",
        "legacy_data_transmitted_bytes",
        4.0,
        "Number of data octets transmitted on all links",
    ),
    (
        "counters_ext/port_xmit_packets_64",
        "legacy_packets_transmitted",
        1.0,
        "Number of data packets received on all links",
    ),
    (
        "counters/link_downed",
        "link_downed",
        1.0,
        "Number of times the link failed to recover from an error state and went down",
    ),
    (
        "counters/link_error_recovery",
        "link_error_recovery",
        1.0,
        "Number of times the link successfully recovered from an error state",
    ),
    (
        "counters/multicast_rcv_packets",
        "multicast_packets_received",
        1.0,
        "Number of multicast packets received (including errors)",
    ),
    (
        "counters/multicast_xmit_packets",
        "multicast_packets_transmitted",
        1.0,
        "Number of multicast packets transmitted (including errors)",
    ),
    (
        "counters/port_rcv_constraint_errors",
        "port_constraint_errors_received",
        1.0,
        "Number of packets received on the switch physical port that are discarded",
    ),
    (
        "counters/port_xmit_constraint_errors",
        "port_constraint_errors_transmitted",
        1.0,
        "Number of packets not transmitted from the switch physical port",
    ),
    (
        "counters/port_rcv_data",
        "port_data_received_bytes",
        4.0,
        "Number of data octets received on all links",
    ),
    (
        "counters/port_xmit_data",
        "port_data_transmitted_bytes",
        4.0,
        "Number of data octets transmitted on all links",
    ),
    (
        "counters/port_rcv_discards",
        "port_discards_received",
        1.0,
        "Number of inbound packets discarded by the port because the port is down or congested",
    ),
    (
        "counters/port_xmit_discards",
        "port_discards_transmitted",
        1.0,
        "Number of outbound packets discarded by the port because the port is down or congested",
    ),
    (
        "counters/port_rcv_errors",
        "port_errors_received",
        1.0,
        "Number of packets containing an error that were received on this port",
    ),
    (
        "counters/port_rcv_packets",
        "port_packets_received",
        1.0,
        "Number of packets received on all VLs by this port (including errors)",
    ),
    (
        "counters/port_xmit_packets",
        "port_packets_transmitted",
        1.0,
        "Number of packets transmitted on all VLs from this port (including errors)",
    ),
    (
        "counters/port_xmit_wait",
        "port_transmit_wait",
        1.0,
        "Number of ticks during which the port had data to transmit but no data was sent during the entire tick",
    ),
    (
        "counters/unicast_rcv_packets",
        "unicast_packets_received",
        1.0,
        "Number of unicast packets received (including errors)",
    ),
    (
        "counters/unicast_xmit_packets",
        "unicast_packets_transmitted",
        1.0,
        "Number of unicast packets transmitted (including errors)",
    ),
];

/// `4: ACTIVE` as 4.
fn leading_id(v: &str) -> Option<f64> {
    v.split(':').next()?.trim().parse().ok()
}

/// `100 Gb/sec (4X EDR)` as bytes per second.
fn ib_rate(v: &str) -> Option<f64> {
    let gbits: f64 = v.split_whitespace().next()?.parse().ok()?;
    Some(gbits * 125_000_000.0)
}

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let Some(devices) = class(x, Source::Infiniband) else {
        return Ok(());
    };
    let c = &x.ctx.config;
    let kept = crate::metrics::compat::device_filter(
        &c.infiniband_device_exclude,
        &c.infiniband_device_include,
    );
    let devices: Vec<&ClassDevice> = devices.iter().filter(|d| kept(&d.name)).collect();
    infiniband(out, &devices)
}

fn infiniband(out: &mut Out<'_>, devices: &[&ClassDevice]) -> Fmt {
    {
        let mut m = out.family(&NODE_INFINIBAND_INFO)?;
        for d in devices {
            let g = |a| d.get(a).unwrap_or("");
            let labels = [
                ("board_id", g("board_id")),
                ("device", d.name.as_str()),
                ("firmware_version", g("fw_ver")),
                ("hca_type", g("hca_type")),
            ];
            info_l(&mut m, &labels)?;
        }
    }
    // (device, port, values by path below the port)
    let mut ports = Vec::new();
    for d in devices {
        for port in d.children("ports") {
            let dir = format!("ports/{port}");
            let values = d.below(&dir);
            ports.push((d.name.as_str(), port, values));
        }
    }
    fn get<'a>(values: &[(&str, &'a str)], k: &str) -> Option<&'a str> {
        values.iter().find(|(p, _)| *p == k).map(|(_, v)| *v)
    }
    type Gauge = (
        &'static str,
        &'static str,
        &'static str,
        fn(&str) -> Option<f64>,
    );
    let gauges: [Gauge; 3] = [
        (
            "state",
            "state_id",
            "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, 5: act defer)",
            leading_id,
        ),
        (
            "phys_state",
            "physical_state_id",
            "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: polling, 3: disable, 4: shift, 5: link up, 6: link error recover, 7: phytest)",
            leading_id,
        ),
        (
            "rate",
            "rate_bytes_per_second",
            "Maximum signal transfer rate",
            ib_rate,
        ),
    ];
    let mut name = String::new();
    for (file, key, help, parse) in gauges {
        let rows: Vec<_> = ports
            .iter()
            .filter_map(|(d, p, v)| Some((*d, *p, parse(get(v, file)?)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_INFINIBAND.instance_into(key, &mut name);
        let mut m = out.family_named(&NODE_INFINIBAND, &name, help)?;
        for (d, p, v) in rows {
            gauge_l(&mut m, &[("device", d), ("port", p)], v)?;
        }
    }
    for (file, suffix, scale, help) in IB_COUNTERS {
        let rows: Vec<_> = ports
            .iter()
            .filter_map(|(d, p, v)| Some((*d, *p, parse_uint(get(v, file)?)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_INFINIBAND_TOTAL.instance_into(suffix, &mut name);
        let mut m = out.family_named(&NODE_INFINIBAND_TOTAL, &name, help)?;
        for (d, p, v) in rows {
            counter_l(&mut m, &[("device", d), ("port", p)], v as f64 * scale)?;
        }
    }
    Ok(())
}
