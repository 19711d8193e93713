//! node_exporter's meminfo_numa collector: per-node meminfo and numastat.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Numa) {
        numa(out, &s.numa)?;
    }
    Ok(())
}

/// node_exporter's meminfo_numa: `node_memory_numa_<Key>{node}` per meminfo
/// line (in bytes, without the suffix, as node_exporter names them) and
/// `node_memory_numa_<key>_total{node}` per numastat counter.
fn numa(out: &mut Out<'_>, nodes: &[procfs::numa::NumaNode]) -> Fmt {
    use std::collections::BTreeMap;
    type Series<'a> = BTreeMap<&'a str, Vec<(String, u64)>>;
    let (mut mem, mut stat): (Series, Series) = (BTreeMap::new(), BTreeMap::new());
    for n in nodes {
        for (k, v) in &n.meminfo {
            mem.entry(k.as_str())
                .or_default()
                .push((n.node.to_string(), *v));
        }
        for (k, v) in &n.numastat {
            stat.entry(k.as_str())
                .or_default()
                .push((n.node.to_string(), *v));
        }
    }
    let mut name = String::new();
    for (f, series) in [(&NODE_MEMORY_NUMA, &mem), (&NODE_MEMORY_NUMA_TOTAL, &stat)] {
        for (key, rows) in series {
            let help = format!("Memory information field {key}.");
            f.instance_into(key, &mut name);
            let mut m = out.family_named(f, &name, &help)?;
            for (node, v) in rows {
                sample_l(&mut m, &[("node", node.as_str())], *v as f64)?;
            }
        }
    }
    Ok(())
}
