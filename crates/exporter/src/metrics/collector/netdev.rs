//! node_exporter's netdev collector: /proc/net/dev.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::NetDev) {
        let c = &x.ctx.config;
        let served = crate::metrics::compat::device_filter(
            &c.netdev_device_exclude,
            &c.netdev_device_include,
        );
        net(out, s, &served)?;
    }
    Ok(())
}

fn net(out: &mut Out<'_>, s: &SystemSample, served: &dyn Fn(&str) -> bool) -> Fmt {
    use procfs::net_dev::NetDev;
    type Get = fn(&NetDev) -> u64;
    let fields: [(&Family, &str, Get); 16] = [
        (&NODE_NETWORK_RECEIVE_TOTAL, "bytes", |d| d.rx_bytes),
        (&NODE_NETWORK_RECEIVE_TOTAL, "packets", |d| d.rx_packets),
        (&NODE_NETWORK_RECEIVE_TOTAL, "errs", |d| d.rx_errs),
        (&NODE_NETWORK_RECEIVE_TOTAL, "drop", |d| d.rx_drop),
        (&NODE_NETWORK_RECEIVE_TOTAL, "fifo", |d| d.rx_fifo),
        (&NODE_NETWORK_RECEIVE_TOTAL, "frame", |d| d.rx_frame),
        (&NODE_NETWORK_RECEIVE_TOTAL, "compressed", |d| {
            d.rx_compressed
        }),
        (&NODE_NETWORK_RECEIVE_TOTAL, "multicast", |d| d.rx_multicast),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "bytes", |d| d.tx_bytes),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "packets", |d| d.tx_packets),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "errs", |d| d.tx_errs),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "drop", |d| d.tx_drop),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "fifo", |d| d.tx_fifo),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "colls", |d| d.tx_colls),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "carrier", |d| d.tx_carrier),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "compressed", |d| {
            d.tx_compressed
        }),
    ];
    let devs: Vec<(String, &NetDev)> = s
        .net_dev
        .iter()
        .map(|d| (d.name.to_string(), d))
        .filter(|(n, _)| served(n))
        .collect();
    let mut name = String::new();
    for (f, key, get) in fields {
        let mut m = out.family_of(f, key, &mut name)?;
        for (dev, d) in &devs {
            counter_l(&mut m, &[("device", dev.as_str())], get(d) as f64)?;
        }
    }
    Ok(())
}
