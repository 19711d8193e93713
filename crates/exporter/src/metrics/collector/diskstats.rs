//! node_exporter's diskstats collector: /proc/diskstats, with udev's
//! labels in `node_disk_info`.

use super::*;
use model::units::{ms_to_secs, sectors_to_bytes};

use crate::metrics::compat::device_filter;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Diskstats) {
        let c = &x.ctx.config;
        let served = device_filter(&c.diskstats_device_exclude, &c.diskstats_device_include);
        disks(out, s, &served)?;
    }
    Ok(())
}

fn disks(out: &mut Out<'_>, s: &SystemSample, served: &dyn Fn(&str) -> bool) -> Fmt {
    use procfs::diskstats::DiskStat;
    type Get = fn(&DiskStat) -> Option<f64>;
    let fields: [(&Family, Get); 17] = [
        (&NODE_DISK_READS_COMPLETED_TOTAL, |d| {
            Some(d.reads_completed as f64)
        }),
        (&NODE_DISK_READS_MERGED_TOTAL, |d| {
            Some(d.reads_merged as f64)
        }),
        (&NODE_DISK_READ_BYTES_TOTAL, |d| {
            Some(sectors_to_bytes(d.read_sectors) as f64)
        }),
        (&NODE_DISK_READ_TIME_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.read_time_ms))
        }),
        (&NODE_DISK_WRITES_COMPLETED_TOTAL, |d| {
            Some(d.writes_completed as f64)
        }),
        (&NODE_DISK_WRITES_MERGED_TOTAL, |d| {
            Some(d.writes_merged as f64)
        }),
        (&NODE_DISK_WRITTEN_BYTES_TOTAL, |d| {
            Some(sectors_to_bytes(d.write_sectors) as f64)
        }),
        (&NODE_DISK_WRITE_TIME_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.write_time_ms))
        }),
        (&NODE_DISK_IO_NOW, |d| Some(d.io_in_progress as f64)),
        (&NODE_DISK_IO_TIME_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.io_time_ms))
        }),
        (&NODE_DISK_IO_TIME_WEIGHTED_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.io_weighted_time_ms))
        }),
        (&NODE_DISK_DISCARDS_COMPLETED_TOTAL, |d| {
            d.discards_completed.map(|v| v as f64)
        }),
        (&NODE_DISK_DISCARDS_MERGED_TOTAL, |d| {
            d.discards_merged.map(|v| v as f64)
        }),
        (&NODE_DISK_DISCARDED_SECTORS_TOTAL, |d| {
            d.discard_sectors.map(|v| v as f64)
        }),
        (&NODE_DISK_DISCARD_TIME_SECONDS_TOTAL, |d| {
            d.discard_time_ms.map(ms_to_secs)
        }),
        (&NODE_DISK_FLUSH_REQUESTS_TOTAL, |d| {
            d.flushes_completed.map(|v| v as f64)
        }),
        (&NODE_DISK_FLUSH_REQUESTS_TIME_SECONDS_TOTAL, |d| {
            d.flush_time_ms.map(ms_to_secs)
        }),
    ];
    let disks: Vec<(String, &DiskStat)> = s
        .diskstats
        .iter()
        .map(|d| (d.name.to_string(), d))
        .filter(|(n, _)| served(n))
        .collect();
    {
        // udev's labels where its database has the device, empty otherwise
        // (as node_exporter).
        let udev = if s.ok(Source::Udev) { &s.udev[..] } else { &[] };
        let mut m = out.family(&NODE_DISK_INFO)?;
        for (dev, d) in &disks {
            let u = udev
                .iter()
                .find(|u| u.major == d.major && u.minor == d.minor);
            let get = |k: &str| u.map_or("", |u| u.get(k));
            let (major, minor) = (d.major.to_string(), d.minor.to_string());
            gauge_l(
                &mut m,
                &[
                    ("device", dev.as_str()),
                    ("major", major.as_str()),
                    ("minor", minor.as_str()),
                    ("path", get("ID_PATH")),
                    ("wwn", get("ID_WWN")),
                    ("model", get("ID_MODEL")),
                    ("serial", u.map_or("", |u| u.serial())),
                    ("revision", get("ID_REVISION")),
                ],
                1.0,
            )?;
        }
    }
    for (name, get) in fields {
        if disks.iter().all(|(_, d)| get(d).is_none()) {
            continue;
        }
        let mut m = out.family(name)?;
        for (dev, d) in &disks {
            if let Some(v) = get(d) {
                sample_l(&mut m, &[("device", dev.as_str())], v)?;
            }
        }
    }
    Ok(())
}
