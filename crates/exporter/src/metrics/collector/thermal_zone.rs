//! node_exporter's thermal_zone collector: thermal zones and cooling
//! devices.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::ThermalZone) {
        let t = &s.thermal;
        {
            let mut m = out.family(&NODE_THERMAL_ZONE_TEMP)?;
            for z in &t.zones {
                let labels = [("zone", z.zone.as_str()), ("type", z.kind.as_str())];
                gauge_l(&mut m, &labels, z.temp_millicelsius as f64 / 1000.0)?;
            }
        }
        for (f, cur) in [
            (&NODE_COOLING_DEVICE_CUR_STATE, true),
            (&NODE_COOLING_DEVICE_MAX_STATE, false),
        ] {
            let mut m = out.family(f)?;
            for c in &t.cooling {
                let v = if cur { c.cur_state } else { c.max_state };
                gauge_l(
                    &mut m,
                    &[("name", c.name.as_str()), ("type", c.kind.as_str())],
                    v as f64,
                )?;
            }
        }
    }
    Ok(())
}
