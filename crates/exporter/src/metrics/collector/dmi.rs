//! node_exporter's dmi collector: /sys/class/dmi/id.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Dmi) && !s.dmi.values.is_empty() {
        // Only the files this platform has are labels, as node_exporter.
        let labels: Vec<(&str, &str)> = s
            .dmi
            .values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        info(out, &NODE_DMI_INFO, &labels)?;
    }
    Ok(())
}
