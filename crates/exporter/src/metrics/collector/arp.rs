//! node_exporter's arp collector: /proc/net/arp entries per device.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Arp) {
        let mut m = out.family(&NODE_ARP_ENTRIES)?;
        for (dev, n) in &s.arp.devices {
            gauge_l(&mut m, &[("device", dev.as_str())], *n as f64)?;
        }
    }
    Ok(())
}
