//! node_exporter's udp_queues collector: /proc/net/udp and udp6.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::UdpQueues) {
        let q = &s.udp_queues;
        let mut m = out.family(&NODE_UDP_QUEUES)?;
        let mut rows = vec![("v4", q.v4_tx, q.v4_rx)];
        if let Some((tx, rx)) = q.v6 {
            rows.push(("v6", tx, rx));
        }
        for (ip, tx, rx) in rows {
            gauge_l(&mut m, &[("ip", ip), ("queue", "tx")], tx as f64)?;
            gauge_l(&mut m, &[("ip", ip), ("queue", "rx")], rx as f64)?;
        }
    }
    Ok(())
}
