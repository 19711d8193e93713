//! The overhead budget: the agent may spend a set share of one CPU reading
//! the kernel (default 1%). Each source gets a part of it by weight; a source
//! whose measured cost per read would exceed its part at its interval is read
//! less often, by whole multiples of its interval, never beyond its max age;
//! when its cost falls clearly below (by a quarter), its interval is restored.

use std::time::Duration;

use procfs::Source;

use crate::config::AgentSource;

/// Relative share of the budget: expensive sources get more of it.
pub fn weight(s: AgentSource) -> u32 {
    match s {
        AgentSource::Processes => 4,
        AgentSource::System(Source::Interrupts) => 2,
        AgentSource::System(_) => 1,
    }
}

/// Nanoseconds of CPU per second that `s` may spend, given the budget (in
/// percent of one CPU) and the weight of every scheduled source.
pub fn share_ns_per_s(budget_pct: f64, s: AgentSource, total_weight: u32) -> f64 {
    budget_pct / 100.0 * 1e9 * weight(s) as f64 / total_weight.max(1) as f64
}

/// Smoothed cost per read: the mean of the last few reads, so one slow read
/// (a page fault, a preemption) does not throttle a source.
pub fn smooth(prev_ns: f64, cost_ns: u64) -> f64 {
    if prev_ns == 0.0 {
        cost_ns as f64
    } else {
        prev_ns * 0.75 + cost_ns as f64 * 0.25
    }
}

/// The interval `s` should run at, given its configured interval, max age,
/// current interval, smoothed cost per read and share of the budget.
pub fn interval_for(
    base: Duration,
    max_age: Duration,
    current: Duration,
    cost_ns: f64,
    share_ns_per_s: f64,
) -> Duration {
    if share_ns_per_s <= 0.0 || cost_ns <= 0.0 {
        return base;
    }
    // The shortest interval at which the cost fits in the share.
    let needed = Duration::from_secs_f64((cost_ns / share_ns_per_s).min(1e9));
    let target = if needed <= base {
        base
    } else {
        let k = needed.as_nanos().div_ceil(base.as_nanos().max(1)) as u32;
        base.saturating_mul(k).min(max_age)
    };
    if target < current && needed.mul_f64(1.25) > target {
        // Cheaper, but not clearly: stay, so a source does not flap.
        return current;
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_cheap_source_keeps_its_interval() {
        // 100 us per read every second against a 1 ms/s share.
        assert_eq!(interval_for(S, 5 * S, S, 100_000.0, 1e6), S);
    }

    #[test]
    fn an_expensive_source_slows_by_whole_intervals_up_to_max_age() {
        // 2.5 ms per read against 1 ms/s: needs 2.5 s, gets 3 s.
        assert_eq!(interval_for(S, 5 * S, S, 2.5e6, 1e6), 3 * S);
        // 60 ms per read: would need 60 s, capped at max age.
        assert_eq!(interval_for(S, 5 * S, S, 60e6, 1e6), 5 * S);
    }

    #[test]
    fn restored_only_when_clearly_cheaper() {
        // Throttled to 3 s; cost falls to 0.9 ms: 1 s would fit, but not by a quarter.
        assert_eq!(interval_for(S, 5 * S, 3 * S, 0.9e6, 1e6), 3 * S);
        // Cost falls to 0.5 ms: restored.
        assert_eq!(interval_for(S, 5 * S, 3 * S, 0.5e6, 1e6), S);
    }

    #[test]
    fn no_budget_means_no_throttling() {
        assert_eq!(interval_for(S, 5 * S, S, 1e9, 0.0), S);
    }

    #[test]
    fn shares_follow_weights() {
        let total = 4 + 2 + 1;
        let p = share_ns_per_s(1.0, AgentSource::Processes, total);
        let i = share_ns_per_s(1.0, AgentSource::System(Source::Interrupts), total);
        assert!((p - 1e7 * 4.0 / 7.0).abs() < 1.0);
        assert!((p / i - 2.0).abs() < 1e-9);
    }
}
