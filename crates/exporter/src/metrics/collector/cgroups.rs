//! node_exporter's cgroups collector: /proc/cgroups, each controller's
//! cgroups and whether it is enabled.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::CgroupControllers) {
        type Get = fn(&procfs::ktables::Controller) -> f64;
        let figures: [(&Family, Get); 2] = [
            (&NODE_CGROUPS_CGROUPS, |c| c.cgroups as f64),
            (&NODE_CGROUPS_ENABLED, |c| f64::from(u8::from(c.enabled))),
        ];
        for (f, get) in figures {
            let mut m = out.family(f)?;
            for c in &s.cgroup_controllers {
                gauge_l(&mut m, &[("subsys_name", c.name.as_str())], get(c))?;
            }
        }
    }
    Ok(())
}
