//! node_exporter's zoneinfo collector: /proc/zoneinfo.

use super::*;
use procfs::mm::Zone;

use crate::metrics::compat::ZONEINFO;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Zoneinfo) {
        zoneinfo(out, &s.zoneinfo)?;
    }
    Ok(())
}

/// One family per zoneinfo key node_exporter exports ([`ZONEINFO`]), a
/// series per zone that has the key; then `protection_<i>`.
fn zoneinfo(out: &mut Out<'_>, zones: &[Zone]) -> Fmt {
    let nodes: Vec<String> = zones.iter().map(|z| z.node.to_string()).collect();
    let mut name = String::new();
    for (key, suffix, counter, help) in ZONEINFO {
        let rows: Vec<_> = zones
            .iter()
            .zip(&nodes)
            .filter_map(|(z, node)| Some((node, z, z.get(key)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let f = if *counter {
            &NODE_ZONEINFO_TOTAL
        } else {
            &NODE_ZONEINFO
        };
        f.instance_into(suffix, &mut name);
        let mut m = out.family_named(f, &name, help)?;
        for (node, z, v) in rows {
            let labels = [("node", node.as_str()), ("zone", z.zone.as_str())];
            sample_l(&mut m, &labels, v as f64)?;
        }
    }
    let widest = zones.iter().map(|z| z.protection.len()).max().unwrap_or(0);
    for i in 0..widest {
        NODE_ZONEINFO.instance_into(&format!("protection_{i}"), &mut name);
        let help = format!("Protection array {i}. field");
        let mut m = out.family_named(&NODE_ZONEINFO, &name, &help)?;
        for (z, node) in zones.iter().zip(&nodes) {
            if let Some(v) = z.protection.get(i) {
                let labels = [("node", node.as_str()), ("zone", z.zone.as_str())];
                gauge_l(&mut m, &labels, *v as f64)?;
            }
        }
    }
    Ok(())
}
