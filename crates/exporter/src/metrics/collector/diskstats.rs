//! node_exporter's diskstats collector: /proc/diskstats, with udev's
//! labels in `node_disk_info`.

use super::*;
use model::units::{ms_to_secs, sectors_to_bytes};

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if x.s.ok(Source::Diskstats) {
        // The disks served: the same filter the block_queue source reads by.
        let filter = x.ctx.config.disk_filter();
        disks(out, x, &|n| filter.keeps(n))?;
    }
    Ok(())
}

fn disks(out: &mut Out<'_>, x: &Input<'_>, served: &dyn Fn(&str) -> bool) -> Fmt {
    let s = x.s;
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
        let udev_of = |d: &DiskStat| {
            udev.iter()
                .find(|u| u.major == d.major && u.minor == d.minor)
        };
        // `rotational` from the disk's queue: "0" where there is none to
        // read (a partition), as node_exporter.
        let queues = class(x, Source::BlockQueue).unwrap_or_default();
        let rotational = |dev: &str| {
            let q = queues.iter().find(|q| q.name == dev);
            match q.and_then(|q| q.uint("queue/rotational")) {
                Some(1) => "1",
                _ => "0",
            }
        };
        let mut m = out.family(&NODE_DISK_INFO)?;
        for (dev, d) in &disks {
            let u = udev_of(d);
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
                    ("rotational", rotational(dev)),
                ],
                1.0,
            )?;
        }
        // What udev found on the device: a filesystem's (or volume
        // member's) signature, device-mapper's names, an ATA disk's cache
        // and rotation rate.
        // An info family each, for the devices udev gave its first key,
        // labelled by udev's keys.
        type UdevInfo = (&'static Family, &'static [(&'static str, &'static str)]);
        let infos: [UdevInfo; 2] = [
            (
                &NODE_DISK_FILESYSTEM_INFO,
                &[
                    ("type", "ID_FS_TYPE"),
                    ("usage", "ID_FS_USAGE"),
                    ("uuid", "ID_FS_UUID"),
                    ("version", "ID_FS_VERSION"),
                ],
            ),
            (
                &NODE_DISK_DEVICE_MAPPER_INFO,
                &[
                    ("name", "DM_NAME"),
                    ("uuid", "DM_UUID"),
                    ("vg_name", "DM_VG_NAME"),
                    ("lv_name", "DM_LV_NAME"),
                    ("lv_layer", "DM_LV_LAYER"),
                ],
            ),
        ];
        for (f, keys) in infos {
            let mut m = out.family(f)?;
            for (dev, d) in &disks {
                let Some(u) = udev_of(d).filter(|u| !u.get(keys[0].1).is_empty()) else {
                    continue;
                };
                let labels: Vec<(&str, &str)> = std::iter::once(("device", dev.as_str()))
                    .chain(keys.iter().map(|(l, k)| (*l, u.get(k))))
                    .collect();
                gauge_l(&mut m, &labels, 1.0)?;
            }
        }
        for (f, key) in [
            (&NODE_DISK_ATA_WRITE_CACHE, "ID_ATA_WRITE_CACHE"),
            (
                &NODE_DISK_ATA_WRITE_CACHE_ENABLED,
                "ID_ATA_WRITE_CACHE_ENABLED",
            ),
            (&NODE_DISK_ATA_ROTATION_RATE_RPM, "ID_ATA_ROTATION_RATE_RPM"),
        ] {
            let mut m = out.family(f)?;
            for (dev, d) in &disks {
                let Some(u) = udev_of(d).filter(|u| !u.get("ID_ATA").is_empty()) else {
                    continue;
                };
                if let Ok(v) = u.get(key).parse::<f64>() {
                    gauge_l(&mut m, &[("device", dev.as_str())], v)?;
                }
            }
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
