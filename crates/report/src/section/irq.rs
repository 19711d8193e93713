//! `irq`: the busiest interrupt sources (`--top` of them), as `sar -I`
//! (/proc/interrupts).

use model::system::{RowRate, SystemRates};
use sys::Error;

use super::*;

pub(super) struct Irq;

/// One row per counter of `list`, busiest first.
pub(super) fn push(w: &Window, ts: u64, list: Vec<RowRate>, rows: &mut Vec<Vec<Cell>>) {
    for x in list {
        rows.push(vec![
            w.time(ts),
            text(x.label),
            text(x.description),
            num(x.per_sec),
        ]);
    }
}

pub(super) const COLUMNS: &[&str] = &["name", "description", "per_s"];

impl Section for Irq {
    fn name(&self) -> &'static str {
        "irq"
    }
    fn sources(&self) -> &'static [Source] {
        &[Source::Interrupts]
    }
    fn columns(&self) -> &'static [&'static str] {
        COLUMNS
    }
    fn report(&self, h: &History, w: &Window, o: &Options) -> Result<Report, Error> {
        system_pass(h, w, self, &mut |ts, a, b, rows| {
            let mut irqs = SystemRates::between(a, b).irqs;
            irqs.truncate(o.top);
            push(w, ts, irqs, rows);
        })
    }
}
