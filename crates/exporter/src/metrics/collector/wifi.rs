//! node_exporter's wifi collector: each wireless interface's frequency,
//! the BSS it is associated with, and its stations' figures, from nl80211.

use procfs::wifi::Station;

use super::*;

/// node_exporter's mode of a BSS status: authenticated or associated is
/// a client, an IBSS joined is ad hoc.
fn mode(status: u32) -> &'static str {
    match status {
        0 | 1 => "client",
        2 => "ad-hoc",
        _ => "unknown",
    }
}

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if !x.s.ok(Source::Wifi) {
        return Ok(());
    }
    let ifis = &x.s.wifi;
    let mut m = out.family(&NODE_WIFI_INTERFACE_FREQUENCY_HERTZ)?;
    for i in ifis {
        gauge_l(
            &mut m,
            &[("device", i.device.as_str())],
            i.frequency_mhz as f64 * 1e6,
        )?;
    }
    let mut m = out.family(&NODE_WIFI_STATION_INFO)?;
    for i in ifis {
        if let Some(b) = &i.bss {
            let labels = [
                ("device", i.device.as_str()),
                ("bssid", b.bssid.as_str()),
                ("ssid", b.ssid.as_str()),
                ("mode", mode(b.status)),
            ];
            info_l(&mut m, &labels)?;
        }
    }
    type Get = fn(&Station) -> f64;
    let figures: [(&'static Family, Get); 12] = [
        (&NODE_WIFI_STATION_CONNECTED_SECONDS_TOTAL, |s| {
            s.connected_ns as f64 / 1e9
        }),
        (&NODE_WIFI_STATION_INACTIVE_SECONDS, |s| {
            s.inactive_ns as f64 / 1e9
        }),
        (&NODE_WIFI_STATION_RECEIVE_BITS_PER_SECOND, |s| {
            s.receive_bitrate as f64
        }),
        (&NODE_WIFI_STATION_TRANSMIT_BITS_PER_SECOND, |s| {
            s.transmit_bitrate as f64
        }),
        (&NODE_WIFI_STATION_RECEIVE_BYTES_TOTAL, |s| {
            s.receive_bytes as f64
        }),
        (&NODE_WIFI_STATION_TRANSMIT_BYTES_TOTAL, |s| {
            s.transmit_bytes as f64
        }),
        (&NODE_WIFI_STATION_SIGNAL_DBM, |s| s.signal_dbm as f64),
        (&NODE_WIFI_STATION_TRANSMIT_RETRIES_TOTAL, |s| {
            s.transmit_retries as f64
        }),
        (&NODE_WIFI_STATION_TRANSMIT_FAILED_TOTAL, |s| {
            s.transmit_failed as f64
        }),
        (&NODE_WIFI_STATION_BEACON_LOSS_TOTAL, |s| {
            s.beacon_loss as f64
        }),
        (&NODE_WIFI_STATION_TRANSMITTED_PACKETS_TOTAL, |s| {
            s.transmit_packets as f64
        }),
        (&NODE_WIFI_STATION_RECEIVED_PACKETS_TOTAL, |s| {
            s.receive_packets as f64
        }),
    ];
    for (f, get) in figures {
        let mut m = out.family(f)?;
        for i in ifis {
            for s in &i.stations {
                let labels = [
                    ("device", i.device.as_str()),
                    ("mac_address", s.mac.as_str()),
                ];
                sample_l(&mut m, &labels, get(s))?;
            }
        }
    }
    Ok(())
}
