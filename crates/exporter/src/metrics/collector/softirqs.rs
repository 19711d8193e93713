//! node_exporter's softirqs collector: /proc/softirqs per CPU, served only
//! when the collector is turned on (node_exporter leaves it off: CPUs x 10
//! series). The count per vector over all CPUs is `node_softirqs_total`
//! (stat.rs), served by default.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if !s.ok(Source::Softirqs) || !x.ctx.config.collector_on("softirqs") {
        return Ok(());
    }
    let t = &s.softirqs;
    let cpus: Vec<String> = t.cpus().iter().map(u32::to_string).collect();
    let mut m = out.family(&NODE_SOFTIRQS_FUNCTIONS_TOTAL)?;
    for row in t.rows() {
        for (cpu, n) in cpus.iter().zip(row.counts) {
            counter_l(
                &mut m,
                &[("cpu", cpu.as_str()), ("type", row.label)],
                *n as f64,
            )?;
        }
    }
    Ok(())
}
