//! node_exporter's qdisc collector: each network device's root queueing
//! discipline, from the kernel's netlink dump.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if !x.s.ok(Source::Qdisc) {
        return Ok(());
    }
    let c = &x.ctx.config;
    let kept =
        crate::metrics::compat::device_filter(&c.qdisc_device_exclude, &c.qdisc_device_include);
    type Get = fn(&procfs::qdisc::Qdisc) -> u64;
    let fields: [(&'static Family, Get); 7] = [
        (&NODE_QDISC_BYTES_TOTAL, |q| q.bytes),
        (&NODE_QDISC_PACKETS_TOTAL, |q| q.packets),
        (&NODE_QDISC_DROPS_TOTAL, |q| q.drops),
        (&NODE_QDISC_REQUEUES_TOTAL, |q| q.requeues),
        (&NODE_QDISC_OVERLIMITS_TOTAL, |q| q.overlimits),
        (&NODE_QDISC_CURRENT_QUEUE_LENGTH, |q| q.qlen),
        (&NODE_QDISC_BACKLOG, |q| q.backlog),
    ];
    for (f, get) in fields {
        let mut m = out.family(f)?;
        for q in x.s.qdisc.iter().filter(|q| kept(&q.device)) {
            let labels = [("device", q.device.as_str()), ("kind", q.kind.as_str())];
            sample_l(&mut m, &labels, get(q) as f64)?;
        }
    }
    Ok(())
}
