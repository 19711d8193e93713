//! node_exporter's softirqs collector: /proc/softirqs per CPU.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Softirqs) {
        let t = &s.softirqs;
        let cpus: Vec<String> = t.cpus().iter().map(u32::to_string).collect();
        let mut m = out.family(&QUIETSTAT_SOFTIRQS_CPU_TOTAL)?;
        for row in t.rows() {
            let vector = row.label.to_ascii_lowercase();
            for (cpu, n) in cpus.iter().zip(row.counts) {
                counter_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("vector", vector.as_str())],
                    *n as f64,
                )?;
            }
        }
    }
    Ok(())
}
