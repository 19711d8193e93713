//! node_exporter's interrupts collector: /proc/interrupts per CPU, served
//! only when the collector is turned on (node_exporter leaves it off: CPUs
//! x IRQs series, 868,352 on a 4,096-CPU machine). Always served: the count
//! per IRQ over all CPUs, and the system-wide rows (ERR, MIS) node_exporter
//! drops.

use super::*;

/// node_exporter's labels: for a numbered IRQ, `info` is the chip (the
/// first word after the counts) and `devices` the rest; for a named one
/// (NMI, LOC) `info` is the whole description.
fn info_devices(row: &procfs::Row<'_>) -> (String, String) {
    let mut words = row.description.split_whitespace();
    if row.label.bytes().all(|b| b.is_ascii_digit()) {
        let info = words.next().unwrap_or("").to_string();
        (info, words.collect::<Vec<_>>().join(" "))
    } else {
        (words.collect::<Vec<_>>().join(" "), String::new())
    }
}

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if !s.ok(Source::Interrupts) {
        return Ok(());
    }
    let t = &s.interrupts;
    let ncpus = t.cpus().len();
    let split = |r: &procfs::Row<'_>| r.counts.len() >= ncpus && !r.description.is_empty();
    if x.ctx.config.collector_on("interrupts") {
        let cpus: Vec<String> = t.cpus().iter().map(u32::to_string).collect();
        let c = &x.ctx.config;
        // node_exporter's name filter, on `name;info;devices`.
        let kept = crate::metrics::compat::device_filter(
            &c.interrupts_name_exclude,
            &c.interrupts_name_include,
        );
        let mut m = out.family(&NODE_INTERRUPTS_TOTAL)?;
        for row in t.rows().filter(split) {
            let (info, devices) = info_devices(&row);
            if !kept(&format!("{};{info};{devices}", row.label)) {
                continue;
            }
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
    {
        let mut m = out.family(&QUIETSTAT_IRQ_TOTAL)?;
        for row in t.rows().filter(split) {
            let (info, devices) = info_devices(&row);
            counter_l(
                &mut m,
                &[
                    ("devices", devices.as_str()),
                    ("info", info.as_str()),
                    ("type", row.label),
                ],
                row.total as f64,
            )?;
        }
    }
    if t.rows().any(|r| !split(&r)) {
        // ERR and MIS: one system-wide count, no description.
        let mut m = out.family(&QUIETSTAT_INTERRUPTS_UNSPLIT_TOTAL)?;
        for row in t.rows().filter(|r| !split(r)) {
            counter_l(&mut m, &[("type", row.label)], row.total as f64)?;
        }
    }
    Ok(())
}
