//! node_exporter's loadavg collector: /proc/loadavg.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Loadavg) {
        one(out, &NODE_LOAD1, s.loadavg.load1)?;
        one(out, &NODE_LOAD5, s.loadavg.load5)?;
        one(out, &NODE_LOAD15, s.loadavg.load15)?;
    }
    Ok(())
}
