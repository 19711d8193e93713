//! node_exporter's btrfs collector: /sys/fs/btrfs.

use super::*;

/// node_exporter's allocation ratio of a btrfs layout on `devices` devices.
fn btrfs_ratio(layout: &str, devices: usize) -> f64 {
    let n = devices as f64;
    match layout {
        "single" | "raid0" => 1.0,
        "dup" | "raid1" | "raid10" => 2.0,
        "raid5" => n / (n - 1.0),
        "raid6" => n / (n - 2.0),
        _ => 0.0,
    }
}

/// Per filesystem: its sysfs allocation figures; per device, the ioctls'
/// sizes and error counters (sysfs's device size where they gave none).
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::Btrfs) {
        Some(d) => btrfs(out, d),
        None => Ok(()),
    }
}

fn btrfs(out: &mut Out<'_>, filesystems: &[ClassDevice]) -> Fmt {
    use procfs::btrfs::IoctlDevice;
    const TYPES: [&str; 3] = ["data", "metadata", "system"];
    let uuid = |f: &ClassDevice| f.get("metadata_uuid").unwrap_or(&f.name).to_string();
    {
        let mut m = out.family(&NODE_BTRFS_INFO)?;
        for f in filesystems {
            let (u, label) = (uuid(f), f.get("label").unwrap_or(""));
            gauge_l(&mut m, &[("uuid", u.as_str()), ("label", label)], 1.0)?;
        }
    }
    // commit_stats (kernels since 6.0; 0 without it, as node_exporter).
    for (fam, key, per) in [
        (&NODE_BTRFS_COMMITS_TOTAL, "commits", 1.0),
        (&NODE_BTRFS_LAST_COMMIT_SECONDS, "last_commit_ms", 1e3),
        (&NODE_BTRFS_MAX_COMMIT_SECONDS, "max_commit_ms", 1e3),
        (&NODE_BTRFS_COMMIT_SECONDS_TOTAL, "total_commit_ms", 1e3),
    ] {
        let mut m = out.family(fam)?;
        for f in filesystems {
            let v = f.uint(&format!("commit_stats:{key}")).unwrap_or(0);
            sample_l(&mut m, &[("uuid", uuid(f).as_str())], v as f64 / per)?;
        }
    }
    {
        let mut m = out.family(&NODE_BTRFS_GLOBAL_RSV_SIZE_BYTES)?;
        for f in filesystems {
            if let Some(v) = f.uint("allocation/global_rsv_size") {
                gauge_l(&mut m, &[("uuid", uuid(f).as_str())], v as f64)?;
            }
        }
    }
    {
        let mut m = out.family(&NODE_BTRFS_RESERVED_BYTES)?;
        for f in filesystems {
            let u = uuid(f);
            for t in TYPES {
                if let Some(v) = f.uint(&format!("allocation/{t}/bytes_reserved")) {
                    gauge_l(
                        &mut m,
                        &[("uuid", u.as_str()), ("block_group_type", t)],
                        v as f64,
                    )?;
                }
            }
        }
    }
    for (fam, file) in [
        (&NODE_BTRFS_USED_BYTES, Some("used_bytes")),
        (&NODE_BTRFS_SIZE_BYTES, Some("total_bytes")),
        (&NODE_BTRFS_ALLOCATION_RATIO, None),
    ] {
        let mut m = out.family(fam)?;
        for f in filesystems {
            let u = uuid(f);
            let devices = f.children("devices").len();
            for t in TYPES {
                let dir = format!("allocation/{t}");
                for layout in f.children(&dir) {
                    let (Some(used), Some(total)) = (
                        f.uint(&format!("{dir}/{layout}/used_bytes")),
                        f.uint(&format!("{dir}/{layout}/total_bytes")),
                    ) else {
                        continue;
                    };
                    let v = match file {
                        Some("used_bytes") => used as f64,
                        Some(_) => total as f64,
                        None => btrfs_ratio(layout, devices),
                    };
                    let labels = [
                        ("uuid", u.as_str()),
                        ("block_group_type", t),
                        ("mode", layout),
                    ];
                    gauge_l(&mut m, &labels, v)?;
                }
            }
        }
    }
    // Devices: the ioctls' where there are any, else sysfs's sizes; each
    // filesystem's ioctl lines parsed once.
    let devices: Vec<(String, Vec<IoctlDevice>)> = filesystems
        .iter()
        .map(|f| {
            let devs = f
                .attrs
                .iter()
                .filter_map(|(k, v)| IoctlDevice::parse(k.strip_prefix("ioctl:")?, v))
                .collect();
            (uuid(f), devs)
        })
        .collect();
    let base = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
    {
        let mut m = out.family(&NODE_BTRFS_DEVICE_SIZE_BYTES)?;
        for (f, (u, devs)) in filesystems.iter().zip(&devices) {
            if devs.is_empty() {
                for d in f.children("devices") {
                    if let Some(sectors) = f.uint(&format!("devices/{d}/size")) {
                        let labels = [("uuid", u.as_str()), ("device", d)];
                        gauge_l(&mut m, &labels, (sectors * 512) as f64)?;
                    }
                }
            }
            for d in devs {
                let dev = base(&d.path);
                let labels = [
                    ("uuid", u.as_str()),
                    ("device", dev.as_str()),
                    ("btrfs_dev_uuid", d.uuid.as_str()),
                ];
                gauge_l(&mut m, &labels, d.total_bytes as f64)?;
            }
        }
    }
    {
        let mut m = out.family(&NODE_BTRFS_DEVICE_UNUSED_BYTES)?;
        for (u, devs) in &devices {
            for d in devs {
                let dev = base(&d.path);
                let labels = [
                    ("uuid", u.as_str()),
                    ("device", dev.as_str()),
                    ("btrfs_dev_uuid", d.uuid.as_str()),
                ];
                gauge_l(
                    &mut m,
                    &labels,
                    d.total_bytes.saturating_sub(d.bytes_used) as f64,
                )?;
            }
        }
    }
    let mut m = out.family(&NODE_BTRFS_DEVICE_ERRORS_TOTAL)?;
    for (u, devs) in &devices {
        for d in devs {
            let dev = base(&d.path);
            for (kind, v) in ["write", "read", "flush", "corruption", "generation"]
                .iter()
                .zip(d.errors)
            {
                let labels = [
                    ("uuid", u.as_str()),
                    ("type", kind),
                    ("device", dev.as_str()),
                    ("btrfs_dev_uuid", d.uuid.as_str()),
                ];
                counter_l(&mut m, &labels, v as f64)?;
            }
        }
    }
    Ok(())
}
