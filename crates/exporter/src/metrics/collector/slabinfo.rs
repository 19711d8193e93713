//! node_exporter's slabinfo collector: /proc/slabinfo.

use super::*;
use procfs::mm::Slab;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Slabinfo) {
        let c = &x.ctx.config;
        let kept = crate::metrics::compat::device_filter(
            &c.slabinfo_slabs_exclude,
            &c.slabinfo_slabs_include,
        );
        let slabs: Vec<&Slab> = s.slabinfo.iter().filter(|s| kept(&s.name)).collect();
        slabinfo(out, &slabs)?;
    }
    Ok(())
}

fn slabinfo(out: &mut Out<'_>, slabs: &[&Slab]) -> Fmt {
    type Field = (&'static Family, fn(&Slab) -> u64);
    let fields: [Field; 5] = [
        (&NODE_SLABINFO_ACTIVE_OBJECTS, |s| s.active_objects),
        (&NODE_SLABINFO_OBJECTS, |s| s.objects),
        (&NODE_SLABINFO_OBJECT_SIZE_BYTES, |s| s.object_size_bytes),
        (&NODE_SLABINFO_OBJECTS_PER_SLAB, |s| s.objects_per_slab),
        (&NODE_SLABINFO_PAGES_PER_SLAB, |s| s.pages_per_slab),
    ];
    for (f, get) in fields {
        let mut m = out.family(f)?;
        for s in slabs {
            gauge_l(&mut m, &[("slab", s.name.as_str())], get(s) as f64)?;
        }
    }
    Ok(())
}
