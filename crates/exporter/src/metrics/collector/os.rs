//! node_exporter's os collector: os-release.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Os) {
        os(out, &s.os)?;
    }
    Ok(())
}

fn os(out: &mut Out<'_>, o: &procfs::os_release::OsRelease) -> Fmt {
    {
        let keys = [
            ("build_id", "BUILD_ID"),
            ("id", "ID"),
            ("id_like", "ID_LIKE"),
            ("image_id", "IMAGE_ID"),
            ("image_version", "IMAGE_VERSION"),
            ("name", "NAME"),
            ("pretty_name", "PRETTY_NAME"),
            ("variant", "VARIANT"),
            ("variant_id", "VARIANT_ID"),
            ("version", "VERSION"),
            ("version_codename", "VERSION_CODENAME"),
            ("version_id", "VERSION_ID"),
        ];
        let labels: Vec<(&str, &str)> = keys.iter().map(|(l, k)| (*l, o.get(k))).collect();
        info(out, &NODE_OS_INFO, &labels)?;
    }
    if let Some(v) = o.version() {
        let mut m = out.family(&NODE_OS_VERSION)?;
        gauge_l(
            &mut m,
            &[
                ("id", o.get("ID")),
                ("id_like", o.get("ID_LIKE")),
                ("name", o.get("NAME")),
            ],
            v,
        )?;
    }
    Ok(())
}
