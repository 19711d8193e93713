//! node_exporter's watchdog collector: /sys/class/watchdog.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::Watchdog) {
        Some(d) => watchdog(out, d),
        None => Ok(()),
    }
}

fn watchdog(out: &mut Out<'_>, dogs: &[ClassDevice]) -> Fmt {
    for (f, attr) in [
        (&NODE_WATCHDOG_BOOTSTATUS, "bootstatus"),
        (&NODE_WATCHDOG_FW_VERSION, "fw_version"),
        (&NODE_WATCHDOG_NOWAYOUT, "nowayout"),
        (&NODE_WATCHDOG_TIMELEFT_SECONDS, "timeleft"),
        (&NODE_WATCHDOG_TIMEOUT_SECONDS, "timeout"),
        (&NODE_WATCHDOG_PRETIMEOUT_SECONDS, "pretimeout"),
        (&NODE_WATCHDOG_ACCESS_CS0, "access_cs0"),
    ] {
        let rows: Vec<_> = dogs
            .iter()
            .filter_map(|d| Some((d.name.as_str(), d.int(attr)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let mut m = out.family(f)?;
        for (name, v) in rows {
            gauge_l(&mut m, &[("name", name)], v as f64)?;
        }
    }
    let mut m = out.family(&NODE_WATCHDOG_INFO)?;
    for d in dogs {
        let g = |a| d.get(a).unwrap_or("");
        let labels = [
            ("name", d.name.as_str()),
            ("options", g("options")),
            ("identity", g("identity")),
            ("state", g("state")),
            ("status", g("status")),
            ("pretimeout_governor", g("pretimeout_governor")),
        ];
        info_l(&mut m, &labels)?;
    }
    Ok(())
}
