//! node_exporter's kernel_hung collector: the hung-task detector's count.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::KernelHung) {
        one(out, &NODE_KERNEL_HUNG_TASKS_TOTAL, s.hung_tasks as f64)?;
    }
    Ok(())
}
