//! node_exporter's pressure collector: /proc/pressure/{cpu,memory,io,irq}.

use super::*;
use model::units::pressure_us_to_secs;
use procfs::pressure::Resource;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    for (r, waiting, stalled) in [
        (
            Resource::Cpu,
            Some(&NODE_PRESSURE_CPU_WAITING_SECONDS_TOTAL),
            None,
        ),
        (
            Resource::Memory,
            Some(&NODE_PRESSURE_MEMORY_WAITING_SECONDS_TOTAL),
            Some(&NODE_PRESSURE_MEMORY_STALLED_SECONDS_TOTAL),
        ),
        (
            Resource::Io,
            Some(&NODE_PRESSURE_IO_WAITING_SECONDS_TOTAL),
            Some(&NODE_PRESSURE_IO_STALLED_SECONDS_TOTAL),
        ),
        (
            Resource::Irq,
            None,
            Some(&NODE_PRESSURE_IRQ_STALLED_SECONDS_TOTAL),
        ),
    ] {
        let Some(p) = s.pressure(r) else { continue };
        if let (Some(n), Some(l)) = (waiting, p.some) {
            one(out, n, pressure_us_to_secs(l.total_usec))?;
        }
        if let (Some(n), Some(l)) = (stalled, p.full) {
            one(out, n, pressure_us_to_secs(l.total_usec))?;
        }
    }
    Ok(())
}
