//! node_exporter's nvme collector: /sys/class/nvme.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::Nvme) {
        Some(d) => nvme(out, d),
        None => Ok(()),
    }
}

fn nvme(out: &mut Out<'_>, d: &[ClassDevice]) -> Fmt {
    let mut m = out.family(&NODE_NVME_INFO)?;
    for n in d {
        let g = |a| n.get(a).unwrap_or("");
        let labels = [
            ("device", n.name.as_str()),
            ("firmware_revision", g("firmware_rev")),
            ("model", g("model")),
            ("serial", g("serial")),
            ("state", g("state")),
        ];
        info_l(&mut m, &labels)?;
    }
    Ok(())
}
