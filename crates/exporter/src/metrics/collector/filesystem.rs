//! node_exporter's filesystem collector: the mounts and their statfs.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Filesystem) {
        filesystem(out, s)?;
    }
    Ok(())
}

type MountGet = fn(&procfs::filesystem::Mount) -> f64;

/// `node_filesystem_*`: `device_error` for every mount, the figures only
/// for those statfs answered (as node_exporter).
fn filesystem(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    let mounts = &s.filesystem;
    let labels = |m: &procfs::filesystem::Mount| {
        [
            ("device", m.device.clone()),
            ("fstype", m.fstype.clone()),
            ("mountpoint", m.mountpoint.clone()),
        ]
    };
    {
        let mut f = out.family(&NODE_FILESYSTEM_DEVICE_ERROR)?;
        for m in mounts {
            gauge_l(&mut f, &labels(m), f64::from(u8::from(m.error.is_some())))?;
        }
    }
    let figures: [(&'static Family, MountGet); 6] = [
        (&NODE_FILESYSTEM_SIZE_BYTES, |m| m.size_bytes as f64),
        (&NODE_FILESYSTEM_FREE_BYTES, |m| m.free_bytes as f64),
        (&NODE_FILESYSTEM_AVAIL_BYTES, |m| m.avail_bytes as f64),
        (&NODE_FILESYSTEM_FILES, |m| m.files as f64),
        (&NODE_FILESYSTEM_FILES_FREE, |m| m.files_free as f64),
        (&NODE_FILESYSTEM_READONLY, |m| {
            f64::from(u8::from(m.readonly))
        }),
    ];
    for (f, get) in figures {
        let mut fam = out.family(f)?;
        for m in mounts.iter().filter(|m| m.error.is_none()) {
            gauge_l(&mut fam, &labels(m), get(m))?;
        }
    }
    Ok(())
}
