//! node_exporter's drbd collector: /proc/drbd.

use super::*;

/// Each device's counters, scaled as node_exporter scales them (KiB to
/// bytes where it does: not the received bytes, which it serves as
/// printed), whether each side is primary and up to date, and whether the
/// device is connected.
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if !x.s.ok(Source::Drbd) {
        return Ok(());
    }
    let devs = &x.s.drbd;
    let numbers: [(&'static Family, &str, f64); 12] = [
        (&NODE_DRBD_NETWORK_SENT_BYTES_TOTAL, "ns", 1024.0),
        (&NODE_DRBD_NETWORK_RECEIVED_BYTES_TOTAL, "nr", 1.0),
        (&NODE_DRBD_DISK_WRITTEN_BYTES_TOTAL, "dw", 1024.0),
        (&NODE_DRBD_DISK_READ_BYTES_TOTAL, "dr", 1024.0),
        (&NODE_DRBD_ACTIVITYLOG_WRITES_TOTAL, "al", 1.0),
        (&NODE_DRBD_BITMAP_WRITES_TOTAL, "bm", 1.0),
        (&NODE_DRBD_LOCAL_PENDING, "lo", 1.0),
        (&NODE_DRBD_REMOTE_PENDING, "pe", 1.0),
        (&NODE_DRBD_REMOTE_UNACKNOWLEDGED, "ua", 1.0),
        (&NODE_DRBD_APPLICATION_PENDING, "ap", 1.0),
        (&NODE_DRBD_EPOCHS, "ep", 1.0),
        (&NODE_DRBD_OUT_OF_SYNC_BYTES, "oos", 1024.0),
    ];
    for (f, key, scale) in numbers {
        let mut m = out.family(f)?;
        for d in devs {
            if let Some(v) = d.get(key).and_then(|v| v.parse::<f64>().ok()) {
                sample_l(&mut m, &[("device", d.name.as_str())], v * scale)?;
            }
        }
    }
    for (f, key, ok) in [
        (&NODE_DRBD_NODE_ROLE_IS_PRIMARY, "ro", "Primary"),
        (&NODE_DRBD_DISK_STATE_IS_UP_TO_DATE, "ds", "UpToDate"),
    ] {
        let mut m = out.family(f)?;
        for d in devs {
            let Some((local, remote)) = d.get(key).and_then(|v| v.split_once('/')) else {
                continue;
            };
            for (node, v) in [("local", local), ("remote", remote)] {
                let labels = [("device", d.name.as_str()), ("node", node)];
                gauge_l(&mut m, &labels, f64::from(u8::from(v == ok)))?;
            }
        }
    }
    let mut m = out.family(&NODE_DRBD_CONNECTED)?;
    for d in devs {
        if let Some(cs) = d.get("cs") {
            let connected = f64::from(u8::from(cs == "Connected"));
            gauge_l(&mut m, &[("device", d.name.as_str())], connected)?;
        }
    }
    Ok(())
}
