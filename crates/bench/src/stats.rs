//! Order statistics of a set of timings.

use serde::{Deserialize, Serialize};

/// Median and 99th percentile of per-operation times, microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub median_us: f64,
    pub p99_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Summary {
    /// Summarises nanosecond timings (sorts them in place).
    pub fn of_ns(ns: &mut [u64]) -> Summary {
        ns.sort_unstable();
        let us = |v: u64| v as f64 / 1000.0;
        Summary {
            median_us: us(percentile(ns, 50.0)),
            p99_us: us(percentile(ns, 99.0)),
            min_us: us(ns.first().copied().unwrap_or(0)),
            max_us: us(ns.last().copied().unwrap_or(0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let mut v: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        let s = Summary::of_ns(&mut v);
        assert_eq!(
            (s.median_us, s.p99_us, s.min_us, s.max_us),
            (50.0, 99.0, 1.0, 100.0)
        );
        assert_eq!(Summary::of_ns(&mut []), Summary::default());
        assert_eq!(Summary::of_ns(&mut [7000]).p99_us, 7.0);
    }
}
