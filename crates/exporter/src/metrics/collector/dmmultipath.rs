//! node_exporter's dmmultipath collector: /sys/block/dm-N of multipath
//! devices and their paths.

use super::*;

use model::units::sectors_to_bytes;

/// Per multipath device (a device-mapper UUID starting `mpath-`): its
/// identity, whether active, its size, its paths and how many are active
/// (SCSI `running`, NVMe `live`); per path, its state.
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let Some(dms) = class(x, Source::DmMultipath) else {
        return Ok(());
    };
    // Each device, its name, and its paths with their states.
    type Multipath<'a> = (&'a ClassDevice, &'a str, Vec<(&'a str, &'a str)>);
    let devs: Vec<Multipath<'_>> = dms
        .iter()
        .filter(|d| d.get("dm/uuid").is_some_and(|u| u.starts_with("mpath-")))
        .map(|d| {
            let paths = d
                .attrs
                .iter()
                .filter(|(k, _)| k == "path")
                .filter_map(|(_, v)| v.split_once(' '))
                .collect();
            (d, d.get("dm/name").unwrap_or("").trim(), paths)
        })
        .collect();
    let mut m = out.family(&NODE_DMMULTIPATH_DEVICE_INFO)?;
    for (d, name, _) in &devs {
        let uuid = d.get("dm/uuid").unwrap_or("").trim();
        gauge_l(
            &mut m,
            &[
                ("device", *name),
                ("sysfs_name", d.name.as_str()),
                ("uuid", uuid),
            ],
            1.0,
        )?;
    }
    let active = |state: &str| state == "running" || state == "live";
    type Value = fn(&ClassDevice, &[(&str, &str)], &dyn Fn(&str) -> bool) -> f64;
    let per_device: [(&'static Family, Value); 5] = [
        (&NODE_DMMULTIPATH_DEVICE_ACTIVE, |d, _, _| {
            f64::from(u8::from(d.uint("dm/suspended") != Some(1)))
        }),
        (&NODE_DMMULTIPATH_DEVICE_SIZE_BYTES, |d, _, _| {
            d.uint("size").map_or(0.0, |s| sectors_to_bytes(s) as f64)
        }),
        (&NODE_DMMULTIPATH_DEVICE_PATHS, |_, p, _| p.len() as f64),
        (&NODE_DMMULTIPATH_DEVICE_PATHS_ACTIVE, |_, p, a| {
            p.iter().filter(|(_, s)| a(s)).count() as f64
        }),
        (&NODE_DMMULTIPATH_DEVICE_PATHS_FAILED, |_, p, a| {
            p.iter().filter(|(_, s)| !a(s)).count() as f64
        }),
    ];
    for (f, value) in per_device {
        let mut m = out.family(f)?;
        for (d, name, paths) in &devs {
            let labels = [("device", *name), ("sysfs_name", d.name.as_str())];
            gauge_l(&mut m, &labels, value(d, paths, &active))?;
        }
    }
    let mut m = out.family(&NODE_DMMULTIPATH_PATH_STATE)?;
    for (_, name, paths) in &devs {
        for (path, state) in paths {
            gauge_l(
                &mut m,
                &[("device", *name), ("path", *path), ("state", *state)],
                1.0,
            )?;
        }
    }
    Ok(())
}
