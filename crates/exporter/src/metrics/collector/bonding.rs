//! node_exporter's bonding collector: /sys/class/net/*/bonding.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Bonding) {
        for (f, active) in [(&NODE_BONDING_SLAVES, false), (&NODE_BONDING_ACTIVE, true)] {
            let mut m = out.family(f)?;
            for b in &s.bonding {
                let n = b
                    .slaves
                    .iter()
                    .filter(|(_, state)| !active || state == "up")
                    .count();
                gauge_l(&mut m, &[("master", b.master.as_str())], n as f64)?;
            }
        }
    }
    Ok(())
}
