//! node_exporter's ksmd collector: /sys/kernel/mm/ksm.

use super::*;
use procfs::mm::Ksm;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Ksm) {
        ksm(out, &s.ksm)?;
    }
    Ok(())
}

/// node_exporter's ksmd: one family per file, `sleep_millisecs` in seconds
/// (divided, as node_exporter does, so the floats agree).
fn ksm(out: &mut Out<'_>, k: &Ksm) -> Fmt {
    let files: [(&'static Family, &str, f64); 10] = [
        (&NODE_KSMD_FULL_SCANS_TOTAL, "full_scans", 1.0),
        (&NODE_KSMD_GENERAL_PROFIT_BYTES, "general_profit", 1.0),
        (&NODE_KSMD_MERGE_ACROSS_NODES, "merge_across_nodes", 1.0),
        (&NODE_KSMD_PAGES_SHARED, "pages_shared", 1.0),
        (&NODE_KSMD_PAGES_SHARING, "pages_sharing", 1.0),
        (&NODE_KSMD_PAGES_TO_SCAN, "pages_to_scan", 1.0),
        (&NODE_KSMD_PAGES_UNSHARED, "pages_unshared", 1.0),
        (&NODE_KSMD_PAGES_VOLATILE, "pages_volatile", 1.0),
        (&NODE_KSMD_RUN, "run", 1.0),
        (&NODE_KSMD_SLEEP_SECONDS, "sleep_millisecs", 1e3),
    ];
    for (f, file, divisor) in files {
        if let Some(v) = k.get(file) {
            one(out, f, v as f64 / divisor)?;
        }
    }
    Ok(())
}
