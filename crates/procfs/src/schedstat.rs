//! /proc/schedstat (CONFIG_SCHEDSTATS; absent on kernels built without it).
//! Only the per-CPU lines are parsed; `domainN` lines are skipped.
//!
//! ```text
//! version 15
//! timestamp 4294937296
//! cpu0 yld_count 0 sched_count sched_goidle ttwu_count ttwu_local running_ns waiting_ns timeslices
//! ```

use serde::Serialize;

use crate::cursor::{Cursor, parse_u64_word};
use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_CPUS;

/// Oldest format version whose cpu lines have the layout parsed here
/// (times in nanoseconds since Linux 2.6.23's version 15).
pub const MIN_VERSION: u64 = 15;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SchedCpu {
    pub cpu: u32,
    pub yld_count: u64,
    pub sched_count: u64,
    pub sched_goidle: u64,
    pub ttwu_count: u64,
    pub ttwu_local: u64,
    /// Time tasks ran on this CPU.
    pub running_ns: u64,
    /// Time tasks waited on this CPU's run queue.
    pub waiting_ns: u64,
    /// Time slices run on this CPU.
    pub timeslices: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Schedstat {
    pub version: u64,
    pub timestamp_jiffies: u64,
    pub cpus: Vec<SchedCpu>,
}

pub fn parse(buf: &[u8]) -> Result<Schedstat, ParseError> {
    let mut s = Schedstat::default();
    parse_into(buf, &mut s)?;
    Ok(s)
}

pub fn parse_into(buf: &[u8], out: &mut Schedstat) -> Result<(), ParseError> {
    let mut c = Cursor::new(buf)?;
    out.cpus.clear();
    out.version = 0;
    while !c.at_end() {
        let key = c.word();
        match key {
            b"version" => {
                out.version = c.u64("version")?;
                if out.version < MIN_VERSION {
                    return Err(c.err("version", ParseErrorKind::Invalid, "version 15 or newer"));
                }
            }
            b"timestamp" => out.timestamp_jiffies = c.u64("timestamp")?,
            _ if key.len() > 3 && key.starts_with(b"cpu") => {
                let cpu = parse_u64_word(&key[3..])
                    .filter(|&n| n < MAX_CPUS as u64)
                    .ok_or_else(|| {
                        c.err("cpu", ParseErrorKind::Invalid, "cpuN with N below 65536")
                    })?;
                if out.cpus.len() >= MAX_CPUS {
                    return Err(c.err("cpu", ParseErrorKind::TooMany, "at most 65536 cpu lines"));
                }
                let yld_count = c.u64("yld_count")?;
                let _legacy = c.u64("legacy")?;
                out.cpus.push(SchedCpu {
                    cpu: cpu as u32,
                    yld_count,
                    sched_count: c.u64("sched_count")?,
                    sched_goidle: c.u64("sched_goidle")?,
                    ttwu_count: c.u64("ttwu_count")?,
                    ttwu_local: c.u64("ttwu_local")?,
                    running_ns: c.u64("running_ns")?,
                    waiting_ns: c.u64("waiting_ns")?,
                    timeslices: c.u64("timeslices")?,
                });
            }
            _ => {}
        }
        c.next_line();
    }
    if out.version == 0 {
        return Err(c.err("version", ParseErrorKind::Missing, "a `version N` line"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let s = parse(b"version 15\ntimestamp 4294937296\ncpu0 0 0 10 2 30 4 123456 789 55\ndomain0 3 1 2 3\ncpu1 1 0 11 3 31 5 223456 889 65\n").unwrap();
        assert_eq!((s.version, s.timestamp_jiffies), (15, 4294937296));
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(
            (
                s.cpus[1].cpu,
                s.cpus[1].running_ns,
                s.cpus[1].waiting_ns,
                s.cpus[1].timeslices
            ),
            (1, 223456, 889, 65)
        );
    }

    #[test]
    fn old_version_refused() {
        let e = parse(b"version 14\n").unwrap_err();
        assert_eq!((e.field, e.kind), ("version", ParseErrorKind::Invalid));
    }
}
