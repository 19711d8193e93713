//! node_exporter's selinux collector.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Selinux) {
        let x = &s.selinux;
        one(out, &NODE_SELINUX_ENABLED, f64::from(u8::from(x.enabled)))?;
        if x.enabled {
            if let Some(m) = x.config_mode {
                one(out, &NODE_SELINUX_CONFIG_MODE, m as f64)?;
            }
            if let Some(m) = x.current_mode {
                one(out, &NODE_SELINUX_CURRENT_MODE, m as f64)?;
            }
        }
    }
    Ok(())
}
