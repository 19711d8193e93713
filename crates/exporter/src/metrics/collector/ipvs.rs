//! node_exporter's ipvs collector: /proc/net/ip_vs and ip_vs_stats.

use super::*;

/// Totals, then per real server summed over node_exporter's label set.
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if x.s.ok(Source::Ipvs) {
        ipvs(out, &x.s.ipvs)?;
    }
    Ok(())
}

fn ipvs(out: &mut Out<'_>, v: &procfs::ipvs::Ipvs) -> Fmt {
    use std::collections::BTreeMap;
    for (f, n) in [
        (&NODE_IPVS_CONNECTIONS_TOTAL, v.connections),
        (&NODE_IPVS_INCOMING_PACKETS_TOTAL, v.incoming_packets),
        (&NODE_IPVS_OUTGOING_PACKETS_TOTAL, v.outgoing_packets),
        (&NODE_IPVS_INCOMING_BYTES_TOTAL, v.incoming_bytes),
        (&NODE_IPVS_OUTGOING_BYTES_TOTAL, v.outgoing_bytes),
    ] {
        one(out, f, n as f64)?;
    }
    let mut sums: BTreeMap<[String; 6], [u64; 3]> = BTreeMap::new();
    for b in &v.backends {
        let key = [
            b.local_address.clone(),
            b.local_port.to_string(),
            b.remote_address.clone(),
            b.remote_port.to_string(),
            b.proto.clone(),
            b.local_mark.clone(),
        ];
        let s = sums.entry(key).or_default();
        s[0] += b.active_connections;
        s[1] += b.inactive_connections;
        s[2] += b.weight;
    }
    for (i, f) in [
        &NODE_IPVS_BACKEND_CONNECTIONS_ACTIVE,
        &NODE_IPVS_BACKEND_CONNECTIONS_INACTIVE,
        &NODE_IPVS_BACKEND_WEIGHT,
    ]
    .into_iter()
    .enumerate()
    {
        let mut m = out.family(f)?;
        for (k, s) in &sums {
            let labels: Vec<(&str, &str)> = f
                .labels
                .iter()
                .copied()
                .zip(k.iter().map(String::as_str))
                .collect();
            gauge_l(&mut m, &labels, s[i] as f64)?;
        }
    }
    Ok(())
}
