//! node_exporter's netclass collector: /sys/class/net.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Netclass) {
        let c = &x.ctx.config;
        let served = crate::metrics::compat::device_filter(&c.netclass_ignored_devices, "");
        let devs: Vec<&procfs::netclass::NetClass> =
            s.netclass.iter().filter(|d| served(&d.device)).collect();
        netclass(out, &devs, c.netclass_ignore_invalid_speed)?;
    }
    Ok(())
}

type NetGet = fn(&procfs::netclass::NetClass) -> Option<i64>;

/// node_exporter's netclass families: `node_network_up` and `_info` for
/// every device, each property the device has (an attribute that could
/// not be read is left out, as node_exporter does); with
/// `ignore_invalid_speed`, a speed of -1 (unknown) is left out too.
fn netclass(
    out: &mut Out<'_>,
    devs: &[&procfs::netclass::NetClass],
    ignore_invalid_speed: bool,
) -> Fmt {
    {
        let mut m = out.family(&NODE_NETWORK_UP)?;
        for d in devs {
            let up = f64::from(u8::from(d.operstate == "up"));
            gauge_l(&mut m, &[("device", d.device.as_str())], up)?;
        }
    }
    {
        let mut m = out.family(&NODE_NETWORK_INFO)?;
        for d in devs {
            // Up when IFF_UP is set in `flags`, as node_exporter's current
            // release says.
            let admin = match d.flags {
                Some(f) if f & 1 == 1 => "up",
                Some(_) => "down",
                None => "unknown",
            };
            gauge_l(
                &mut m,
                &[
                    ("device", d.device.as_str()),
                    ("address", d.address.as_str()),
                    ("broadcast", d.broadcast.as_str()),
                    ("duplex", d.duplex.as_str()),
                    ("operstate", d.operstate.as_str()),
                    ("adminstate", admin),
                    ("ifalias", d.ifalias.as_str()),
                ],
                1.0,
            )?;
        }
    }
    let props: [(&'static Family, NetGet); 18] = [
        (&NODE_NETWORK_ADDRESS_ASSIGN_TYPE, |d| d.addr_assign_type),
        (&NODE_NETWORK_CARRIER, |d| d.carrier),
        (&NODE_NETWORK_CARRIER_CHANGES_TOTAL, |d| d.carrier_changes),
        (&NODE_NETWORK_CARRIER_UP_CHANGES_TOTAL, |d| {
            d.carrier_up_count
        }),
        (&NODE_NETWORK_CARRIER_DOWN_CHANGES_TOTAL, |d| {
            d.carrier_down_count
        }),
        (&NODE_NETWORK_DEVICE_ID, |d| d.dev_id),
        (&NODE_NETWORK_DORMANT, |d| d.dormant),
        (&NODE_NETWORK_FLAGS, |d| d.flags),
        (&NODE_NETWORK_IFACE_ID, |d| d.ifindex),
        (&NODE_NETWORK_IFACE_LINK, |d| d.iflink),
        (&NODE_NETWORK_IFACE_LINK_MODE, |d| d.link_mode),
        (&NODE_NETWORK_MTU_BYTES, |d| d.mtu),
        (&NODE_NETWORK_NAME_ASSIGN_TYPE, |d| d.name_assign_type),
        (&NODE_NETWORK_NET_DEV_GROUP, |d| d.netdev_group),
        // Mbit/s to bytes/s; -1 (unknown) gives -125000, as node_exporter.
        (&NODE_NETWORK_SPEED_BYTES, |d| {
            d.speed_mbps.map(|v| v * 1_000_000 / 8)
        }),
        (&NODE_NETWORK_TRANSMIT_QUEUE_LENGTH, |d| d.tx_queue_len),
        (&NODE_NETWORK_PROTOCOL_TYPE, |d| d.protocol_type),
        (&NODE_NETWORK_RECEIVE_NOHANDLER_TOTAL, |d| d.rx_nohandler),
    ];
    let value = |f: &Family, get: NetGet, d: &procfs::netclass::NetClass| {
        let speed = std::ptr::eq(f, &NODE_NETWORK_SPEED_BYTES);
        get(d).filter(|v| !(ignore_invalid_speed && speed && *v < 0))
    };
    for (f, get) in props {
        if !devs.iter().any(|d| value(f, get, d).is_some()) {
            continue;
        }
        let mut m = out.family(f)?;
        for d in devs {
            if let Some(v) = value(f, get, d) {
                sample_l(&mut m, &[("device", d.device.as_str())], v as f64)?;
            }
        }
    }
    Ok(())
}
