//! Every figure derived from raw samples, in one place.
//!
//! Readers (`procfs`, `proctable`, the agent's shared memory) produce
//! samples: counters as the kernel printed them. This crate turns them into
//! what outputs present (`stat`, `ps`, the exporter, and whatever comes
//! next), so that every output shows the same figure under the same name:
//!
//! - [`system`]: per-second rates and percentages between two system samples.
//! - [`cgroup`]: per-cgroup shares of a CPU, memory, rates and stalls
//!   between two cgroup samples.
//! - [`process`]: per-process rates within one identity, top N, groups.
//! - [`columns`]: the process fields, each defined once (name, unit, help,
//!   getter) for `ps`, the JSON API and the exporter.
//! - [`units`]: clock ticks, sectors and pages to seconds and bytes.
//! - [`text`]: other users' text (command lines, names) made safe to print.
//!
//! Policy: a counter that went backwards between two samples (a reset, a
//! device that was replaced, a CPU that went offline and back, a PID reused)
//! yields `None`, never a wrapped delta. Rows are matched by identity (CPU
//! number, device or interface name, IRQ label, PID and start time), never
//! by position. Rates are named `_per_sec`.

#![forbid(unsafe_code)]

pub mod cgroup;
pub mod columns;
pub mod process;
pub mod system;
pub mod text;
pub mod units;

pub use system::{
    CpuPercent, DiskRate, Memory, NetRate, Paging, PressureRate, RowRate, SystemRates,
};

/// `cur - prev`, or `None` when the counter went backwards.
#[inline]
pub fn delta(prev: u64, cur: u64) -> Option<u64> {
    cur.checked_sub(prev)
}

/// Per-second rate of a counter, or `None` when it went backwards or no time passed.
#[inline]
pub fn rate(prev: u64, cur: u64, secs: f64) -> Option<f64> {
    if secs <= 0.0 {
        return None;
    }
    delta(prev, cur).map(|d| d as f64 / secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_helpers() {
        assert_eq!(rate(5, 3, 1.0), None);
        assert_eq!(rate(3, 5, 0.0), None);
        assert_eq!(rate(3, 5, 2.0), Some(1.0));
        assert_eq!(delta(u64::MAX, 0), None);
    }
}
