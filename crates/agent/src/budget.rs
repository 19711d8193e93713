//! The overhead budget: the agent may spend a set share of one CPU reading
//! the kernel (default 1%). It is shared by water-filling: a source that
//! costs less than its part by weight takes only what it costs, and what it
//! leaves goes to the others by weight. A source whose measured cost per
//! read exceeds its part at its interval is read less often, by whole
//! multiples of its interval (with a quarter to spare), never beyond its
//! max age; when its cost falls clearly below (by a quarter), its interval
//! is restored.

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

/// The budget's water level: nanoseconds of CPU per second per unit of
/// weight such that every source costing less than the level times its
/// weight keeps what it costs and the others share what is left by weight
/// (max-min fairness). `wants` holds each scheduled source's weight and
/// cost per second at its configured interval. Infinite when everything
/// fits: nobody is slowed.
pub fn water_level(budget_pct: f64, wants: &[(u32, f64)]) -> f64 {
    let mut left = budget_pct / 100.0 * 1e9;
    let mut wants = wants.to_vec();
    wants.sort_by(|a, b| (a.1 / f64::from(a.0.max(1))).total_cmp(&(b.1 / f64::from(b.0.max(1)))));
    let mut weight: u32 = wants.iter().map(|(w, _)| *w).sum();
    for (w, want) in wants {
        let level = left / f64::from(weight.max(1));
        if want > level * f64::from(w) {
            // Sorted by want per weight: none of the rest fits either.
            return level;
        }
        left -= want;
        weight -= w;
    }
    f64::INFINITY
}

/// Nanoseconds of CPU per second that `s` may spend at water level `level`.
pub fn share_ns_per_s(level: f64, s: AgentSource) -> f64 {
    level * f64::from(weight(s))
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
///
/// Three cases, so that a source whose cost drifts does not step up and
/// down (and log) at every read:
/// - the configured interval fits with a quarter to spare: it is used;
/// - the current interval still fits (the configured one included): it is
///   kept, so a source is slowed only once its cost exceeds its share and
///   restored only once it is a quarter below;
/// - otherwise the interval becomes the smallest whole multiple of the
///   configured one that fits with a quarter to spare, never beyond the
///   max age.
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
    let spare = needed.mul_f64(1.25);
    if spare <= base {
        return base;
    }
    let current = current.clamp(base, max_age.max(base));
    if needed <= current {
        return current;
    }
    let k = spare.as_nanos().div_ceil(base.as_nanos().max(1)) as u32;
    base.saturating_mul(k).min(max_age).max(base)
}

/// The budget as a bucket that every read draws on, scheduled or asked
/// for by a consumer: it fills at the budget's rate and holds one second of
/// it. Scheduled reads are never declined by it (the water level keeps
/// them within the budget); a read a consumer asks for is declined while
/// the bucket is empty, and HTTP consumers are served the data there is.
/// So everything read in a window of T seconds costs at most the budget
/// for T + 1 seconds, plus the read that emptied the bucket.
#[derive(Debug, Default)]
pub struct ReadBucket {
    tokens_ns: f64,
    last_mono_ns: u64,
}

impl ReadBucket {
    /// Charges `cost_ns` spent reading at `now`, with reads allowed
    /// `rate` ns of CPU per second; returns the instant (CLOCK_MONOTONIC
    /// ns) until which reads consumers ask for are declined, 0 for none.
    pub fn charge(&mut self, now_mono_ns: u64, cost_ns: u64, rate_ns_per_s: f64) -> u64 {
        if rate_ns_per_s <= 0.0 {
            return 0;
        }
        let cap = rate_ns_per_s;
        if self.last_mono_ns == 0 {
            self.tokens_ns = cap;
        } else {
            let secs = now_mono_ns.saturating_sub(self.last_mono_ns) as f64 / 1e9;
            self.tokens_ns = (self.tokens_ns + secs * rate_ns_per_s).min(cap);
        }
        self.last_mono_ns = now_mono_ns;
        self.tokens_ns -= cost_ns as f64;
        if self.tokens_ns >= 0.0 {
            0
        } else {
            now_mono_ns + (-self.tokens_ns / rate_ns_per_s * 1e9) as u64
        }
    }
}

/// The budget in ns of CPU per second; 0 when there is none.
pub fn budget_ns_per_s(budget_pct: f64) -> f64 {
    budget_pct.max(0.0) / 100.0 * 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_past_the_budget_decline_demand_until_it_refills() {
        let mut b = ReadBucket::default();
        let rate = budget_ns_per_s(1.0);
        assert_eq!(rate, 10e6);
        let t0 = 1_000_000_000;
        // Scheduled reads of 4 ms and six demand reads of 1 ms fit the
        // bucket's second; the next read does not.
        assert_eq!(b.charge(t0, 4_000_000, rate), 0);
        for i in 0..6 {
            assert_eq!(b.charge(t0, 1_000_000, rate), 0, "read {i}");
        }
        let until = b.charge(t0, 1_000_000, rate);
        // 1 ms over at 10 ms/s: declined for 1/10 s.
        assert_eq!(until, t0 + 100_000_000);
        // Half a second later it has refilled 5 ms, of which 1 ms was owed.
        assert_eq!(b.charge(t0 + 500_000_000, 4_000_000, rate), 0);
        assert_ne!(b.charge(t0 + 500_000_000, 1_000_000, rate), 0);
        assert_eq!(ReadBucket::default().charge(t0, 1, 0.0), 0);
    }

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_cheap_source_keeps_its_interval() {
        // 100 us per read every second against a 1 ms/s share.
        assert_eq!(interval_for(S, 5 * S, S, 100_000.0, 1e6), S);
    }

    #[test]
    fn an_expensive_source_slows_by_whole_intervals_up_to_max_age() {
        // 2.5 ms per read against 1 ms/s: needs 2.5 s, gets 4 s (a quarter
        // to spare, rounded up to whole intervals).
        assert_eq!(interval_for(S, 5 * S, S, 2.5e6, 1e6), 4 * S);
        // The cost drifts up but still fits at 4 s: no change.
        assert_eq!(interval_for(S, 5 * S, 4 * S, 3.2e6, 1e6), 4 * S);
        // 60 ms per read: would need 60 s, capped at max age.
        assert_eq!(interval_for(S, 5 * S, S, 60e6, 1e6), 5 * S);
    }

    #[test]
    fn restored_only_when_clearly_cheaper() {
        // Throttled to 3 s; cost falls to 0.9 ms: 1 s would fit, but not by a quarter.
        assert_eq!(interval_for(S, 5 * S, 3 * S, 0.9e6, 1e6), 3 * S);
        // Cost falls to 0.5 ms: restored.
        assert_eq!(interval_for(S, 5 * S, 3 * S, 0.5e6, 1e6), S);
        // Somewhat cheaper, not enough for the configured interval: kept
        // (no step down to 2 s).
        assert_eq!(interval_for(S, 5 * S, 3 * S, 1.5e6, 1e6), 3 * S);
    }

    #[test]
    fn a_cost_hovering_near_its_share_does_not_flap() {
        // At its configured interval, 0.85 to 0.95 of the share: kept (it
        // fits, though not by a quarter), so it is neither slowed nor
        // restored at every read.
        for cost in [0.85e6, 0.95e6, 0.82e6, 0.99e6] {
            assert_eq!(interval_for(S, 5 * S, S, cost, 1e6), S, "{cost}");
        }
        // Over the share: slowed, and kept slowed until a quarter below.
        assert_eq!(interval_for(S, 5 * S, S, 1.05e6, 1e6), 2 * S);
        assert_eq!(interval_for(S, 5 * S, 2 * S, 0.85e6, 1e6), 2 * S);
        assert_eq!(interval_for(S, 5 * S, 2 * S, 0.75e6, 1e6), S);
    }

    #[test]
    fn no_budget_means_no_throttling() {
        assert_eq!(interval_for(S, 5 * S, S, 1e9, 0.0), S);
    }

    #[test]
    fn shares_follow_weights() {
        let level = 1e6;
        let p = share_ns_per_s(level, AgentSource::Processes);
        let i = share_ns_per_s(level, AgentSource::System(Source::Interrupts));
        assert_eq!((p, i), (4e6, 2e6));
    }

    #[test]
    fn what_cheap_sources_leave_goes_to_the_others() {
        // 1% of a CPU is 10 ms/s. Sixty cheap sources and a 300 us/s
        // netstat all fit: no level, nobody slowed (an even split would
        // give netstat 10 ms / 64 = 156 us/s and slow it).
        let mut wants = vec![(1, 10_000.0); 60];
        wants.push((1, 300_000.0));
        wants.push((4, 5e6));
        assert_eq!(water_level(1.0, &wants), f64::INFINITY);
        // Over the budget: a (1 ms/s) fits at the even level (10/6 ms/s a
        // unit) and keeps its 1 ms; the other 9 ms/s go 1 to 4 between b
        // and c, whose wants exceed their parts.
        let level = water_level(1.0, &[(1, 1e6), (1, 8e6), (4, 8e6)]);
        assert!((level - 1.8e6).abs() < 1e-3, "{level}");
        // The shares spent add up to the budget.
        assert!((1e6 + level + 4.0 * level - 1e7).abs() < 1e-3);
        assert_eq!(water_level(1.0, &[]), f64::INFINITY);
    }
}
