//! node_exporter's buddyinfo collector: /proc/buddyinfo.

use super::*;
use procfs::mm::BuddyZone;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Buddyinfo) {
        buddyinfo(out, &s.buddyinfo)?;
    }
    Ok(())
}

fn buddyinfo(out: &mut Out<'_>, zones: &[BuddyZone]) -> Fmt {
    let mut m = out.family(&NODE_BUDDYINFO_BLOCKS)?;
    for z in zones {
        let node = z.node.to_string();
        for (order, n) in z.free.iter().enumerate() {
            let size = order.to_string();
            let labels = [
                ("node", node.as_str()),
                ("zone", z.zone.as_str()),
                ("size", size.as_str()),
            ];
            gauge_l(&mut m, &labels, *n as f64)?;
        }
    }
    Ok(())
}
