//! node_exporter's rapl collector: /sys/class/powercap RAPL zones.

use super::*;

/// node_exporter's RAPL names: `package-0` is zone `package` index 0; a
/// name without an index is numbered by its use so far (`dram` 0, 1, ...).
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::Rapl) {
        Some(d) => rapl(out, d, &x.ctx.config.sys_root.join(procfs::class::RAPL.dir)),
        None => Ok(()),
    }
}

fn rapl(out: &mut Out<'_>, zones: &[ClassDevice], dir: &Path) -> Fmt {
    use std::collections::BTreeMap;
    let mut uses: BTreeMap<String, u64> = BTreeMap::new();
    // (metric name, help, index, path, joules), grouped by name.
    let mut series: BTreeMap<String, Vec<(String, String, f64)>> = BTreeMap::new();
    for z in zones {
        let (Some(raw), Some(uj)) = (z.get("name"), z.uint("energy_uj")) else {
            continue;
        };
        let (base, index) = match raw.split_once('-') {
            Some((b, i)) if !i.contains('-') && i.parse::<u64>().is_ok() => {
                (b.to_string(), i.parse().unwrap_or(0))
            }
            _ => (raw.to_string(), uses.get(raw).copied().unwrap_or(0)),
        };
        uses.insert(base.clone(), index + 1);
        let path = dir.join(&z.name).display().to_string();
        series
            .entry(base)
            .or_default()
            .push((index.to_string(), path, uj as f64 / 1e6));
    }
    let mut name = String::new();
    for (zone, rows) in &series {
        let key: String = zone
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        NODE_RAPL_JOULES_TOTAL.instance_into(&key, &mut name);
        let help = format!("Current RAPL {zone} value in joules");
        let mut m = out.family_named(&NODE_RAPL_JOULES_TOTAL, &name, &help)?;
        for (index, path, j) in rows {
            counter_l(
                &mut m,
                &[("index", index.as_str()), ("path", path.as_str())],
                *j,
            )?;
        }
    }
    Ok(())
}
