//! node_exporter's swap collector: /proc/swaps, each area's size, use and
//! priority.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if !x.s.ok(Source::Swaps) {
        return Ok(());
    }
    type Get = fn(&procfs::ktables::SwapArea) -> f64;
    let fields: [(&'static Family, Get); 3] = [
        (&NODE_SWAP_SIZE_BYTES, |a| a.size_kib as f64 * 1024.0),
        (&NODE_SWAP_USED_BYTES, |a| a.used_kib as f64 * 1024.0),
        (&NODE_SWAP_PRIORITY, |a| a.priority as f64),
    ];
    for (f, get) in fields {
        let mut m = out.family(f)?;
        for a in &x.s.swaps {
            let labels = [("device", a.name.as_str()), ("swap_type", a.kind.as_str())];
            gauge_l(&mut m, &labels, get(a))?;
        }
    }
    Ok(())
}
