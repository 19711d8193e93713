//! node_exporter's edac collector: /sys/devices/system/edac memory controllers.

use super::*;

/// Per controller (`mcN` as N); per chip-select row, with the errors no row
/// was named for as row `unknown`.
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::Edac) {
        Some(d) => edac(out, d),
        None => Ok(()),
    }
}

fn edac(out: &mut Out<'_>, mcs: &[ClassDevice]) -> Fmt {
    let id = |mc: &ClassDevice| mc.name.trim_start_matches("mc").to_string();
    for (f, attr) in [
        (&NODE_EDAC_CORRECTABLE_ERRORS_TOTAL, "ce_count"),
        (&NODE_EDAC_UNCORRECTABLE_ERRORS_TOTAL, "ue_count"),
    ] {
        let mut m = out.family(f)?;
        for mc in mcs {
            if let Some(v) = mc.uint(attr) {
                counter_l(&mut m, &[("controller", id(mc).as_str())], v as f64)?;
            }
        }
    }
    for (f, noinfo, row) in [
        (
            &NODE_EDAC_CSROW_CORRECTABLE_ERRORS_TOTAL,
            "ce_noinfo_count",
            "ce_count",
        ),
        (
            &NODE_EDAC_CSROW_UNCORRECTABLE_ERRORS_TOTAL,
            "ue_noinfo_count",
            "ue_count",
        ),
    ] {
        let mut m = out.family(f)?;
        for mc in mcs {
            let c = id(mc);
            if let Some(v) = mc.uint(noinfo) {
                counter_l(
                    &mut m,
                    &[("controller", c.as_str()), ("csrow", "unknown")],
                    v as f64,
                )?;
            }
            for (path, v) in &mc.attrs {
                let Some((csrow, file)) = path.split_once('/') else {
                    continue;
                };
                let (Some(n), true, Some(v)) =
                    (csrow.strip_prefix("csrow"), file == row, parse_uint(v))
                else {
                    continue;
                };
                counter_l(
                    &mut m,
                    &[("controller", c.as_str()), ("csrow", n)],
                    v as f64,
                )?;
            }
        }
    }
    // Per channel of a row (`csrowN/chM_ce_count`), with its DIMM's label
    // as node_exporter writes it (`#` dropped, `_` before `csrow` and
    // `channel`; `unknown` without one); uncorrectable where the channel
    // has a count.
    for (f, file) in [
        (&NODE_EDAC_CHANNEL_CORRECTABLE_ERRORS_TOTAL, "ce_count"),
        (&NODE_EDAC_CHANNEL_UNCORRECTABLE_ERRORS_TOTAL, "ue_count"),
    ] {
        let mut m = out.family(f)?;
        for mc in mcs {
            let c = id(mc);
            for (path, _) in &mc.attrs {
                let Some((csrow, name)) = path.split_once('/') else {
                    continue;
                };
                let channel = name
                    .strip_prefix("ch")
                    .and_then(|r| r.strip_suffix("_ce_count"));
                let (Some(row), Some(channel)) = (csrow.strip_prefix("csrow"), channel) else {
                    continue;
                };
                if channel.is_empty() || !channel.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                let Some(v) = mc.uint(&format!("{csrow}/ch{channel}_{file}")) else {
                    continue;
                };
                let label = mc
                    .get(&format!("{csrow}/ch{channel}_dimm_label"))
                    .map_or_else(
                        || "unknown".to_string(),
                        |l| {
                            l.trim()
                                .replace('#', "")
                                .replace("csrow", "_csrow")
                                .replace("channel", "_channel")
                        },
                    );
                let labels = [
                    ("controller", c.as_str()),
                    ("csrow", row),
                    ("channel", channel),
                    ("dimm_label", label.as_str()),
                ];
                counter_l(&mut m, &labels, v as f64)?;
            }
        }
    }
    Ok(())
}
