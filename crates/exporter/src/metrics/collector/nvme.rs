//! node_exporter's nvme collector: /sys/class/nvme, each controller and
//! its namespaces.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::Nvme) {
        Some(d) => nvme(out, d),
        None => Ok(()),
    }
}

/// A namespace's figures: (family, value from size in sectors, blocks in
/// use and block size).
type NsGet = fn(Option<u64>, Option<u64>, Option<u64>) -> Option<u64>;

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
            ("cntlid", g("cntlid")),
        ];
        info_l(&mut m, &labels)?;
    }
    // Each controller's namespaces: `nvme0n1`, `nvme0c0n1`; the id is
    // the number after the last `n`.
    let namespaces: Vec<(&ClassDevice, &str, &str)> = d
        .iter()
        .flat_map(|n| {
            n.children("")
                .into_iter()
                .filter(|c| c.starts_with("nvme"))
                .filter_map(move |c| Some((n, c, c.rsplit_once('n')?.1)))
        })
        .filter(|(_, _, id)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    let mut m = out.family(&NODE_NVME_NAMESPACE_INFO)?;
    for (n, ns, id) in &namespaces {
        let ana = n.get(&format!("{ns}/ana_state")).unwrap_or("");
        let labels = [
            ("device", n.name.as_str()),
            ("nsid", id),
            ("ana_state", ana),
        ];
        info_l(&mut m, &labels)?;
    }
    // The kernel counts a namespace's size in 512-byte sectors whatever
    // its block size, and its blocks in use in logical blocks.
    let figures: [(&'static Family, NsGet); 4] = [
        (&NODE_NVME_NAMESPACE_CAPACITY_BYTES, |size, _, _| {
            size?.checked_mul(512)
        }),
        (&NODE_NVME_NAMESPACE_SIZE_BYTES, |size, _, _| {
            size?.checked_mul(512)
        }),
        (&NODE_NVME_NAMESPACE_USED_BYTES, |_, nuse, lbs| {
            nuse?.checked_mul(lbs?)
        }),
        (
            &NODE_NVME_NAMESPACE_LOGICAL_BLOCK_SIZE_BYTES,
            |_, _, lbs| lbs,
        ),
    ];
    for (f, get) in figures {
        let mut m = out.family(f)?;
        for (n, ns, id) in &namespaces {
            let u = |a: &str| n.uint(&format!("{ns}/{a}"));
            let v = get(u("size"), u("nuse"), u("queue/logical_block_size"));
            if let Some(v) = v {
                gauge_l(
                    &mut m,
                    &[("device", n.name.as_str()), ("nsid", id)],
                    v as f64,
                )?;
            }
        }
    }
    Ok(())
}
