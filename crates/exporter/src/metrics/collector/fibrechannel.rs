//! node_exporter's fibrechannel collector: /sys/class/fc_host.

use super::*;

/// Fibre Channel statistics: `(file, name after node_fibrechannel_)`.
const FC_COUNTERS: &[(&str, &str)] = &[
    ("dumped_frames", "dumped_frames"),
    ("error_frames", "error_frames"),
    ("invalid_crc_count", "invalid_crc"),
    ("rx_frames", "rx_frames"),
    ("rx_words", "rx_words"),
    ("tx_frames", "tx_frames"),
    ("tx_words", "tx_words"),
    ("seconds_since_last_reset", "seconds_since_last_reset"),
    ("invalid_tx_word_count", "invalid_tx_words"),
    ("link_failure_count", "link_failure"),
    ("loss_of_sync_count", "loss_of_sync"),
    ("loss_of_signal_count", "loss_of_signal"),
    ("nos_count", "nos"),
    ("fcp_packet_aborts", "fcp_packet_aborts"),
];

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::FcHost) {
        Some(d) => fibrechannel(out, d),
        None => Ok(()),
    }
}

fn fibrechannel(out: &mut Out<'_>, hosts: &[ClassDevice]) -> Fmt {
    {
        let mut m = out.family(&NODE_FIBRECHANNEL_INFO)?;
        for h in hosts {
            let g = |a| h.get(a).unwrap_or("");
            // The identifiers without sysfs's `0x`, as node_exporter's
            // current release serves them (`port_id="000002"`).
            let id = |a| g(a).strip_prefix("0x").unwrap_or(g(a));
            let labels = [
                ("fc_host", h.name.as_str()),
                ("speed", g("speed")),
                ("port_state", g("port_state")),
                ("port_type", g("port_type")),
                ("port_id", id("port_id")),
                ("port_name", id("port_name")),
                ("fabric_name", id("fabric_name")),
                ("symbolic_name", g("symbolic_name")),
                ("supported_classes", g("supported_classes")),
                ("supported_speeds", g("supported_speeds")),
                ("dev_loss_tmo", g("dev_loss_tmo")),
            ];
            info_l(&mut m, &labels)?;
        }
    }
    let mut name = String::new();
    for (file, suffix) in FC_COUNTERS {
        let path = format!("statistics/{file}");
        // All ones: a counter the HBA firmware does not implement.
        let rows: Vec<_> = hosts
            .iter()
            .filter_map(|h| Some((h.name.as_str(), h.uint(&path).filter(|v| *v != u64::MAX)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_FIBRECHANNEL_TOTAL.instance_into(suffix, &mut name);
        let help = format!("Fibre Channel host statistics: {file}");
        let mut m = out.family_named(&NODE_FIBRECHANNEL_TOTAL, &name, &help)?;
        for (host, v) in rows {
            counter_l(&mut m, &[("fc_host", host)], v as f64)?;
        }
    }
    Ok(())
}
