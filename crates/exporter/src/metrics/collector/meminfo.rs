//! node_exporter's meminfo collector: /proc/meminfo, one family per key.

use super::*;

use crate::metrics::compat::meminfo_family;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Meminfo) {
        let (mut part, mut name) = (String::new(), String::new());
        for (k, v) in s.meminfo.all().iter() {
            let f = meminfo_family(k, &mut part);
            let mut m = out.family_of(f, &part, &mut name)?;
            gauge(&mut m, v as f64)?;
        }
    }
    Ok(())
}
