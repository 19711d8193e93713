//! node_exporter's entropy collector: /proc/sys/kernel/random.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Entropy) {
        one(
            out,
            &NODE_ENTROPY_AVAILABLE_BITS,
            s.entropy.available_bits as f64,
        )?;
        one(
            out,
            &NODE_ENTROPY_POOL_SIZE_BITS,
            s.entropy.pool_size_bits as f64,
        )?;
    }
    Ok(())
}
