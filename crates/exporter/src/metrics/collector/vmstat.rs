//! node_exporter's vmstat collector: the /proc/vmstat keys it exports.

use super::*;

use crate::metrics::compat::vmstat_exported;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Vmstat) {
        let mut name = String::new();
        for (k, v) in s.vmstat.all().iter().filter(|(k, _)| vmstat_exported(k)) {
            let mut m = out.family_of(&NODE_VMSTAT, k, &mut name)?;
            gauge(&mut m, v as f64)?;
        }
    }
    Ok(())
}
