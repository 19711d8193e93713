//! node_exporter's interrupts collector: /proc/interrupts per CPU, and the
//! system-wide rows (ERR, MIS) node_exporter drops.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Interrupts) {
        let t = &s.interrupts;
        let cpus: Vec<String> = t.cpus().iter().map(u32::to_string).collect();
        let per_cpu =
            |r: &procfs::Row<'_>| r.counts.len() >= cpus.len() && !r.description.is_empty();
        let mut m = out.family(&NODE_INTERRUPTS_TOTAL)?;
        for row in t.rows().filter(per_cpu) {
            // node_exporter: for a numbered IRQ, `info` is the chip (first
            // word after the counts) and `devices` the rest; for a named one
            // (NMI, LOC) `info` is the whole description.
            let mut words = row.description.split_whitespace();
            let numbered = row.label.bytes().all(|b| b.is_ascii_digit());
            let (info, devices) = if numbered {
                let info = words.next().unwrap_or("").to_string();
                (info, words.collect::<Vec<_>>().join(" "))
            } else {
                (words.collect::<Vec<_>>().join(" "), String::new())
            };
            for (cpu, n) in cpus.iter().zip(row.counts) {
                counter_l(
                    &mut m,
                    &[
                        ("cpu", cpu.as_str()),
                        ("devices", devices.as_str()),
                        ("info", info.as_str()),
                        ("type", row.label),
                    ],
                    *n as f64,
                )?;
            }
        }
    }
    if s.ok(Source::Interrupts)
        && s.interrupts
            .rows()
            .any(|r| r.counts.len() < s.interrupts.cpus().len() || r.description.is_empty())
    {
        // ERR and MIS: one system-wide count, no description; node_exporter
        // drops them.
        let mut m = out.family(&QUIETSTAT_INTERRUPTS_UNSPLIT_TOTAL)?;
        for row in s.interrupts.rows() {
            if row.counts.len() < s.interrupts.cpus().len() || row.description.is_empty() {
                counter_l(&mut m, &[("type", row.label)], row.total as f64)?;
            }
        }
    }
    Ok(())
}
