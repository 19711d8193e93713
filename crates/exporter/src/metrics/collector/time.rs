//! node_exporter's time collector: the clock, its zone and clocksources.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Time) {
        time(out, s)?;
    }
    Ok(())
}

fn time(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    let t = &s.time;
    // The clock as the scrape is answered (node_exporter's meaning; a
    // value as old as the source's interval would read as clock skew).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    one(out, &NODE_TIME_SECONDS, now)?;
    {
        let mut m = out.family(&NODE_TIME_ZONE_OFFSET_SECONDS)?;
        gauge_l(
            &mut m,
            &[("time_zone", t.zone.as_str())],
            t.zone_offset_secs as f64,
        )?;
    }
    {
        let mut m = out.family(&NODE_TIME_CLOCKSOURCE_AVAILABLE_INFO)?;
        for c in &t.clocksources {
            for a in &c.available {
                gauge_l(
                    &mut m,
                    &[("device", c.device.as_str()), ("clocksource", a.as_str())],
                    1.0,
                )?;
            }
        }
    }
    let mut m = out.family(&NODE_TIME_CLOCKSOURCE_CURRENT_INFO)?;
    for c in t.clocksources.iter().filter(|c| !c.current.is_empty()) {
        gauge_l(
            &mut m,
            &[
                ("device", c.device.as_str()),
                ("clocksource", c.current.as_str()),
            ],
            1.0,
        )?;
    }
    Ok(())
}
