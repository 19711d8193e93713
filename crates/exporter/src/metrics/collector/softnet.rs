//! node_exporter's softnet collector: /proc/net/softnet_stat.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Softnet) {
        for (f, get) in [
            (
                &NODE_SOFTNET_PROCESSED_TOTAL,
                (|c| c.processed) as fn(&procfs::softnet::SoftnetCpu) -> u64,
            ),
            (&NODE_SOFTNET_DROPPED_TOTAL, |c| c.dropped),
            (&NODE_SOFTNET_TIMES_SQUEEZED_TOTAL, |c| c.time_squeezed),
        ] {
            let mut m = out.family(f)?;
            for (i, c) in s.softnet.iter().enumerate() {
                counter_l(&mut m, &[("cpu", i.to_string().as_str())], get(c) as f64)?;
            }
        }
    }
    Ok(())
}
