//! /proc/softirqs: per-CPU counts for each softirq vector (HI, TIMER, NET_TX,
//! NET_RX, BLOCK, IRQ_POLL, TASKLET, SCHED, HRTIMER, RCU). Since Linux 2.6.31.

use crate::cpu_table::{self, CpuTable};
use crate::error::ParseError;

/// Parsed /proc/softirqs: rows labelled by vector name.
pub type Softirqs = CpuTable;

pub fn parse(buf: &[u8]) -> Result<Softirqs, ParseError> {
    let mut t = Softirqs::default();
    parse_into(buf, &mut t)?;
    Ok(t)
}

pub fn parse_into(buf: &[u8], out: &mut Softirqs) -> Result<(), ParseError> {
    cpu_table::parse_into(buf, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let t = parse(b"                    CPU0       CPU1       \n          HI:          0          0\n       TIMER:       1064       1355\n      NET_RX:        302        308\n").unwrap();
        assert_eq!(t.len(), 3);
        let timer = t.find("TIMER").unwrap();
        assert_eq!((timer.counts, timer.total), (&[1064u64, 1355][..], 2419));
        assert_eq!(timer.description, "");
    }
}
