//! node_exporter's cpu_vulnerabilities collector:
//! /sys/devices/system/cpu/vulnerabilities.

use super::*;

/// A series per vulnerability file: its state (`not affected`,
/// `vulnerable`, `mitigation`, `unknown`) and the rest of the kernel's
/// words as the mitigation, as node_exporter reads them.
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let Some(dirs) = class(x, Source::CpuVulnerabilities) else {
        return Ok(());
    };
    let mut m = out.family(&NODE_CPU_VULNERABILITIES_INFO)?;
    for (codename, text) in dirs.iter().flat_map(|d| &d.attrs) {
        let text = text.trim();
        let lower = text.to_ascii_lowercase();
        let rest = || {
            text.split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let (state, mitigation) = if lower.starts_with("not affected") {
            ("not affected", String::new())
        } else if lower.starts_with("vulnerable") {
            ("vulnerable", rest())
        } else if lower.starts_with("mitigation") {
            ("mitigation", rest())
        } else if lower.starts_with("unknown") {
            ("unknown", rest())
        } else {
            ("unknown", text.to_string())
        };
        let labels = [
            ("codename", codename.as_str()),
            ("state", state),
            ("mitigation", mitigation.as_str()),
        ];
        gauge_l(&mut m, &labels, 1.0)?;
    }
    Ok(())
}
