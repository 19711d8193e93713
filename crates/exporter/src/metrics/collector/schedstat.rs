//! node_exporter's schedstat collector: /proc/schedstat.

use super::*;
use model::units::ns_to_secs;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Schedstat) {
        for (name, f) in [
            (&NODE_SCHEDSTAT_RUNNING_SECONDS_TOTAL, 0),
            (&NODE_SCHEDSTAT_WAITING_SECONDS_TOTAL, 1),
            (&NODE_SCHEDSTAT_TIMESLICES_TOTAL, 2),
        ] {
            let mut m = out.family(name)?;
            for c in &s.schedstat.cpus {
                let v = match f {
                    0 => ns_to_secs(c.running_ns),
                    1 => ns_to_secs(c.waiting_ns),
                    _ => c.timeslices as f64,
                };
                counter_l(&mut m, &[("cpu", c.cpu.to_string().as_str())], v)?;
            }
        }
    }
    Ok(())
}
