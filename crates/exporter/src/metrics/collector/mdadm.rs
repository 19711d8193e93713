//! node_exporter's mdadm collector: /proc/mdstat.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Mdstat) {
        md(out, &s.mdstat)?;
    }
    if let Some(arrays) = class(x, Source::Mdraid) {
        raid(out, arrays)?;
    }
    Ok(())
}

/// From sysfs, as node_exporter: each array's member count (not for a
/// container's level, or none), and the members it lacks (read for the
/// levels with redundancy, 0 for the others).
fn raid(out: &mut Out<'_>, arrays: &[ClassDevice]) -> Fmt {
    let level = |a: &ClassDevice| a.get("md/level").unwrap_or("").trim().to_string();
    let mut m = out.family(&NODE_MD_RAID_DISKS)?;
    for a in arrays {
        if matches!(level(a).as_str(), "container" | "imsm" | "ddf" | "") {
            continue;
        }
        // `4 (3)` while the count is being changed: the first.
        let disks = a
            .get("md/raid_disks")
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
        if let Some(n) = disks {
            gauge_l(&mut m, &[("device", a.name.as_str())], n as f64)?;
        }
    }
    let mut m = out.family(&NODE_MD_DEGRADED)?;
    for a in arrays {
        let degraded = match level(a).as_str() {
            "raid1" | "raid4" | "raid5" | "raid6" | "raid10" => a.uint("md/degraded").unwrap_or(0),
            _ => 0,
        };
        gauge_l(&mut m, &[("device", a.name.as_str())], degraded as f64)?;
    }
    Ok(())
}

/// node_exporter's mdadm families: one `node_md_state` series per state
/// (1 for the device's), disks by state, blocks.
fn md(out: &mut Out<'_>, devs: &[procfs::mdstat::MdDevice]) -> Fmt {
    {
        let mut m = out.family(&NODE_MD_DISKS_REQUIRED)?;
        for d in devs {
            gauge_l(
                &mut m,
                &[("device", d.name.as_str())],
                d.disks_required as f64,
            )?;
        }
    }
    {
        let mut m = out.family(&NODE_MD_DISKS)?;
        for d in devs {
            for (state, n) in [
                ("active", d.disks_active),
                ("failed", d.disks_failed),
                ("spare", d.disks_spare),
            ] {
                gauge_l(
                    &mut m,
                    &[("device", d.name.as_str()), ("state", state)],
                    n as f64,
                )?;
            }
        }
    }
    {
        let mut m = out.family(&NODE_MD_STATE)?;
        for d in devs {
            for (label, state) in [
                ("active", "active"),
                ("inactive", "inactive"),
                ("recovering", "recovering"),
                ("resync", "resyncing"),
                ("check", "checking"),
            ] {
                let on = f64::from(u8::from(d.state == state));
                gauge_l(&mut m, &[("device", d.name.as_str()), ("state", label)], on)?;
            }
        }
    }
    for (f, synced) in [(&NODE_MD_BLOCKS, false), (&NODE_MD_BLOCKS_SYNCED, true)] {
        let mut m = out.family(f)?;
        for d in devs {
            let v = if synced { d.blocks_synced } else { d.blocks };
            gauge_l(&mut m, &[("device", d.name.as_str())], v as f64)?;
        }
    }
    Ok(())
}
