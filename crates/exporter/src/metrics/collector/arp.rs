//! node_exporter's arp collector: /proc/net/arp entries per device.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Arp) {
        let c = &x.ctx.config;
        let served =
            crate::metrics::compat::device_filter(&c.arp_device_exclude, &c.arp_device_include);
        let mut m = out.family(&NODE_ARP_ENTRIES)?;
        for (dev, n) in s.arp.devices.iter().filter(|(d, _)| served(d)) {
            gauge_l(&mut m, &[("device", dev.as_str())], *n as f64)?;
        }
    }
    Ok(())
}
