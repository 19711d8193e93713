//! `mem`: memory and major faults, as `sar -r` and `sar -B` (/proc/meminfo,
//! /proc/vmstat).

use model::system::SystemRates;
use sys::Error;

use super::*;

pub(super) struct Mem;

impl Section for Mem {
    fn name(&self) -> &'static str {
        "mem"
    }
    fn sources(&self) -> &'static [Source] {
        &[Source::Meminfo, Source::Vmstat]
    }
    fn columns(&self) -> &'static [&'static str] {
        &[
            "free_mib",
            "avail_mib",
            "used_mib",
            "%used",
            "buffers_mib",
            "cached_mib",
            "dirty_mib",
            "swap_used_mib",
            "pgmajfault/s",
        ]
    }
    fn report(&self, h: &History, w: &Window, _: &Options) -> Result<Report, Error> {
        system_pass(h, w, self, &mut |ts, a, b, rows| {
            let r = SystemRates::between(a, b);
            let m = &r.memory;
            let pct = m
                .used_bytes
                .zip(m.total_bytes)
                .map(|(u, t)| u as f64 * 100.0 / t.max(1) as f64);
            let swap = m
                .swap_total_bytes
                .zip(m.swap_free_bytes)
                .map(|(t, f)| t.saturating_sub(f));
            rows.push(vec![
                w.time(ts),
                mib(m.free_bytes),
                mib(m.available_bytes),
                mib(m.used_bytes),
                num(pct),
                mib(m.buffers_bytes),
                mib(m.cached_bytes),
                mib(m.dirty_bytes),
                mib(swap),
                num(r.paging.pgmajfault_per_sec),
            ]);
        })
    }
}
