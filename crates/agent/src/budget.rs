//! The overhead budget: the agent may spend a set share of one CPU reading
//! the kernel (default 1%). Every source's intervals are decided together,
//! from each one's cost per read at the interval in force ([`Track`]):
//!
//! - **Over the budget** (the reads at their intervals in force would cost
//!   more per second than the budget): the budget is shared by
//!   water-filling at the configured intervals (a source that costs less
//!   than its part by weight keeps what it costs; what it leaves goes to
//!   the others by weight), and each source over its share is slowed to the
//!   smallest whole multiple of its configured interval at which half again
//!   its cost fits its share, never beyond its max age. A source whose
//!   interval changed less than its hold ago, and whose decision is final
//!   ([`Track::is_final`]), is slowed again only if slowing the others
//!   leaves the total over the budget by more than a quarter; within
//!   that, it waits for its hold to end.
//! - **Within the budget**: a slowed source whose hold has passed is
//!   restored to the shortest multiple of its configured interval at which
//!   half again the cost of everything still fits the budget: to the
//!   configured interval, or to at most half the interval in force (a
//!   smaller step, such as 15 s back to 10 s after a slow from 5 s that
//!   rounded up, is not worth a decision: it waits for the configured
//!   interval to fit).
//!
//! - **A source's cap** ([`cap`]): a source may take at most its cap's
//!   part of the budget, whatever the others leave (the cgroups a fifth:
//!   on a host of tens of thousands of cgroups their walk would otherwise
//!   take all the others leave). One over its cap is slowed to the
//!   smallest multiple of its configured interval at which half again its
//!   cost fits the cap (never beyond its max age), even when everything
//!   fits the budget; it counts for no more than its cap when the budget
//!   is shared, and is restored only to an interval at which half again
//!   its cost fits its cap.
//!
//! So a cost must rise by half before a slowed source is slowed again, and
//! fall by a third before it is restored; and a source's interval changes
//! at most once per hold (a minute; doubled each time a restored source
//! must be slowed again, up to an hour), unless the budget cannot be kept
//! otherwise.

use std::time::Duration;

use procfs::Source;

use crate::config::{AgentSource, Config};

/// How much more than their smoothed cost a decision leaves room for: a
/// slowed source's share holds half again its cost, and a restore needs
/// half again the cost of everything to fit. Costs that wander by ±20%
/// (a ratio of 1.5 from low to high) never undo a decision.
pub const HEADROOM: f64 = 1.5;

/// How far over the budget the agent may go before a decision that still
/// holds is undone: a quarter. Costs that rise by more than their
/// headroom after a decision (a source read less often may find caches
/// colder, on the whole machine once the agent is quieter) wait for the
/// hold to end up to this; beyond it, the budget comes first.
pub const HOLD_TOLERANCE: f64 = 1.25;

/// How long a source's first change holds before it is reconsidered.
pub const HOLD_MIN: Duration = Duration::from_secs(60);

/// The longest hold: a source slowed again after each restore waits
/// twice as long each time, up to this.
pub const HOLD_MAX: Duration = Duration::from_secs(3600);

/// What one source has cost since the agent started.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SourceStats {
    pub reads: u64,
    /// Reads a consumer asked for (fresher than the schedule gave).
    pub demand_reads: u64,
    pub read_ns: u64,
    pub parse_ns: u64,
    pub bytes: u64,
    /// Lines left out of its reads because they could not be read (the
    /// rest of each file used).
    pub skipped_lines: u64,
    /// The last read's cost (read + parse).
    pub last_cost_ns: u64,
    /// CPU time of the sampler thread in its reads (read + parse; for
    /// processes, the snapshot): what the overhead budget's intervals are
    /// decided on, without the time the thread waited for a CPU.
    pub cpu_ns: u64,
    /// The interval in force (the configured one, or longer under the budget).
    pub interval: Duration,
    /// What the overhead budget keeps of it: its cost at that interval, and
    /// when it last changed it.
    pub budget: Track,
    /// Whether it is on the schedule (enabled and present on this kernel).
    pub scheduled: bool,
}

/// Relative share of the budget: expensive sources get more of it.
pub fn weight(s: AgentSource) -> u32 {
    match s {
        AgentSource::Processes => 4,
        AgentSource::Cgroups => 2,
        AgentSource::System(Source::Interrupts) => 2,
        AgentSource::System(_) => 1,
    }
}

/// The most of the budget a source may take, whatever the others leave:
/// the cgroups a fifth (a walk of tens of thousands of cgroups would
/// otherwise take all the others leave, and the agent sit at its budget
/// on such a host), the others all of it.
pub fn cap(s: AgentSource) -> f64 {
    match s {
        AgentSource::Cgroups => 0.2,
        _ => 1.0,
    }
}

/// The budget's water level: nanoseconds of CPU per second per unit of
/// weight such that every source costing less than the level times its
/// weight keeps what it costs and the others share what is left by weight
/// (max-min fairness). `wants` holds each source's weight and cost per
/// second at its configured interval. Infinite when everything fits.
pub fn water_level(budget_ns_per_s: f64, wants: &[(u32, f64)]) -> f64 {
    let mut left = budget_ns_per_s;
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

/// What the budget keeps of one source between decisions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Track {
    /// Smoothed cost per read at the interval in force, ns of CPU time
    /// (0: not known). CPU time, not wall time: on a busy machine a read
    /// the thread was preempted in would otherwise count the other
    /// tasks' time, by milliseconds.
    pub cost_ns: f64,
    /// Reads at the interval in force since it was set (the start-up read
    /// not counted).
    pub reads: u32,
    pub hold: Hold,
    /// The last read's cost when it was over twice the estimate (0: it
    /// was not).
    pub over_ns: f64,
}

impl Track {
    /// Counts a read that cost `ns`. The first read at an interval
    /// replaces the estimate (a cost measured at another interval says
    /// little: a source read less often finds colder caches); later ones
    /// are averaged with it over the last few reads. Either way a read
    /// counts for at most twice the estimate: one read is one read, and
    /// one that met a page fault, or a burst of network softirqs charged
    /// to the thread that happened to be running, may take a hundred
    /// times its cost. A cost that really rose shows in the next read
    /// too: two reads in a row over twice the estimate make the lesser of
    /// them the estimate (10,000 cgroups made at once raise a walk's cost
    /// thirtyfold, which averaging at twice the estimate a read would take
    /// fifteen reads to see).
    pub fn observe(&mut self, ns: u64) {
        let ns = ns as f64;
        let prev = self.cost_ns;
        let outlying = prev > 0.0 && ns > prev * 2.0;
        self.cost_ns = match (self.reads, prev) {
            (_, 0.0) => ns,
            _ if outlying && self.over_ns > 0.0 => ns.min(self.over_ns),
            (0, prev) => ns.min(prev * 2.0),
            (_, prev) => prev * 0.75 + ns.min(prev * 2.0) * 0.25,
        };
        self.over_ns = if outlying { ns } else { 0.0 };
        self.reads = self.reads.saturating_add(1);
    }

    /// Whether the decision that set `interval` is final: the source was
    /// read there twice (the first read measures what it costs there, the
    /// second confirms it), or once when the interval is a second or more
    /// (caches are as cold as they get: one read tells).
    pub fn is_final(&self, interval: Duration) -> bool {
        let reads = if interval >= Duration::from_secs(1) {
            1
        } else {
            2
        };
        self.reads >= reads && self.cost_ns > 0.0
    }
}

/// When a source's interval last changed, and how long that decision holds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Hold {
    /// CLOCK_MONOTONIC ns of the last change (0: never changed).
    pub changed_mono_ns: u64,
    /// How long the last change holds.
    pub hold: Duration,
    /// Whether the last change restored (shortened) the interval.
    pub restored: bool,
}

impl Hold {
    fn holds(&self, now_mono_ns: u64) -> bool {
        self.changed_mono_ns != 0
            && now_mono_ns
                < self
                    .changed_mono_ns
                    .saturating_add(self.hold.as_nanos() as u64)
    }
}

/// What the budget knows of one scheduled source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    pub weight: u32,
    /// The most of the budget it may take ([`cap`]: 1 for all of it).
    pub cap: f64,
    /// The configured interval and max age.
    pub base: Duration,
    pub max_age: Duration,
    /// The interval in force.
    pub interval: Duration,
    /// Its cost there. A source not read at the interval in force since
    /// it changed is counted at the cost last known, so that the room it
    /// will take is kept, and left alone; one whose decision is not final
    /// is moved before the others; a cost of 0 (not read yet) counts for
    /// nothing.
    pub track: Track,
}

impl Entry {
    fn measured(&self) -> bool {
        self.track.reads >= 1 && self.track.cost_ns > 0.0
    }

    fn settled(&self) -> bool {
        self.track.is_final(self.interval)
    }

    /// Its share at water level `level` of a budget of `budget_ns_per_s`:
    /// its part by weight, never past its cap.
    fn share(&self, level: f64, budget_ns_per_s: f64) -> f64 {
        (level * f64::from(self.weight)).min(self.cap_ns(budget_ns_per_s))
    }

    /// Its cap in ns of CPU per second under a budget of `budget_ns_per_s`.
    fn cap_ns(&self, budget_ns_per_s: f64) -> f64 {
        budget_ns_per_s * self.cap
    }

    /// ns of CPU per second at interval `every`.
    fn spend(&self, every: Duration) -> f64 {
        self.track.cost_ns / every.as_secs_f64().max(1e-9)
    }

    /// The smallest whole multiple of the configured interval at which
    /// half again the cost fits `share_ns_per_s`, never beyond the max age.
    fn fit(&self, share_ns_per_s: f64) -> Duration {
        let needed_s = self.track.cost_ns * HEADROOM / share_ns_per_s.max(1e-9);
        let k = needed_s / self.base.as_secs_f64().max(1e-9);
        // Not a number, or within one interval: the configured one.
        if k.is_nan() || k <= 1.0 {
            return self.base;
        }
        let k = k.ceil().min(f64::from(u32::MAX)) as u32;
        self.base.saturating_mul(k).min(self.max_age).max(self.base)
    }

    /// How long a slow of this source decided at `now_mono_ns` holds:
    /// slowed again after a restore, the next restore waits twice as long;
    /// steps of one slow keep its hold.
    fn slow_hold(&self, now_mono_ns: u64) -> Duration {
        let h = self.track.hold;
        let since = now_mono_ns.saturating_sub(h.changed_mono_ns);
        if h.restored && since < HOLD_MAX.as_nanos() as u64 {
            (h.hold * 2).clamp(HOLD_MIN, HOLD_MAX)
        } else if !h.restored && h.holds(now_mono_ns) {
            h.hold
        } else {
            HOLD_MIN
        }
    }

    /// Moves this source (entry `index`) to interval `to` at `now_mono_ns`,
    /// held for `hold`: its cost is measured anew there. Returns the change.
    fn set(
        &mut self,
        index: usize,
        to: Duration,
        why: Why,
        hold: Duration,
        now_mono_ns: u64,
    ) -> Change {
        let change = Change {
            index,
            from: self.interval,
            to,
            cost_ns: self.track.cost_ns,
            why,
            hold,
        };
        self.interval = to;
        self.track.reads = 0;
        self.track.hold = Hold {
            changed_mono_ns: now_mono_ns.max(1),
            hold,
            restored: to < change.from,
        };
        change
    }
}

/// Why an interval changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Why {
    /// Everything at the intervals in force would have cost `total` ns per
    /// second, over the budget; this source's fair share was `share`.
    Over {
        total_ns_per_s: f64,
        share_ns_per_s: f64,
    },
    /// Restored: everything, with half again its cost, costs `total` ns
    /// per second at the new intervals, within the budget.
    Fits { total_ns_per_s: f64 },
    /// This source alone would have cost more than its cap
    /// (`share` ns per second: [`cap`] of the budget).
    Capped { share_ns_per_s: f64 },
}

/// One interval the budget changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// Index into the entries given to [`plan`].
    pub index: usize,
    pub from: Duration,
    pub to: Duration,
    pub cost_ns: f64,
    pub why: Why,
    /// How long the new interval holds at least.
    pub hold: Duration,
}

impl Change {
    /// The log line for this change of source `key`, whose configured
    /// interval and max age are given, under a budget of `budget_pct` of a
    /// CPU. `from` is where the source started: a slow that took several
    /// steps (its cost rose as it was read less often) is said once, from
    /// its first interval to its last, with the last step's figures.
    pub fn describe(
        &self,
        key: &str,
        from: Duration,
        configured: Duration,
        max_age: Duration,
        budget_pct: f64,
    ) -> String {
        let fmt = humantime::format_duration;
        let us = |ns: f64| ns / 1e3;
        let budget = us(budget_ns_per_s(budget_pct));
        let pct = format!("{budget_pct:.3}");
        let pct = pct.trim_end_matches('0').trim_end_matches('.');
        let to = if self.to == configured {
            format!("every {} (as configured)", fmt(self.to))
        } else {
            format!("every {} (configured {})", fmt(self.to), fmt(configured))
        };
        match self.why {
            Why::Over {
                total_ns_per_s,
                share_ns_per_s,
            } => format!(
                "{key}: slowed from every {} to {to} for at least {}, never beyond its max age of {}: {:.0} us per read at every {}; all sources would take {:.0} us/s, over the overhead budget of {budget:.0} us/s ({pct}% of a CPU); this source's share is {:.0} us/s",
                fmt(from),
                fmt(self.hold),
                fmt(max_age),
                us(self.cost_ns),
                fmt(self.from),
                us(total_ns_per_s),
                us(share_ns_per_s),
            ),
            Why::Capped { share_ns_per_s } => format!(
                "{key}: slowed from every {} to {to} for at least {}, never beyond its max age of {}: {:.0} us per read at every {}, over this source's cap of {:.0} us/s (of the overhead budget of {budget:.0} us/s, {pct}% of a CPU)",
                fmt(from),
                fmt(self.hold),
                fmt(max_age),
                us(self.cost_ns),
                fmt(self.from),
                us(share_ns_per_s),
            ),
            Why::Fits { total_ns_per_s } => format!(
                "{key}: restored from every {} to {to}: {:.0} us per read; all sources with half again their cost would take {:.0} us/s, within the overhead budget of {budget:.0} us/s ({pct}% of a CPU)",
                fmt(self.from),
                us(self.cost_ns),
                us(total_ns_per_s),
            ),
        }
    }
}

/// The budget in ns of CPU per second; 0 when there is none.
pub fn budget_ns_per_s(budget_pct: f64) -> f64 {
    budget_pct.max(0.0) / 100.0 * 1e9
}

/// Decides every source's interval at `now_mono_ns` under a budget of
/// `budget_ns_per_s` (the rules are in this module's comment). Changes
/// `entries`' intervals and holds, and returns what changed.
pub fn plan(budget_ns_per_s: f64, entries: &mut [Entry], now_mono_ns: u64) -> Vec<Change> {
    let mut changes = Vec::new();
    if budget_ns_per_s <= 0.0 {
        return changes;
    }
    // A source over its cap is slowed to fit it whatever the others
    // spend (one whose decision holds, only past the hold's tolerance).
    for (i, e) in entries.iter_mut().enumerate() {
        let cap = e.cap_ns(budget_ns_per_s);
        let held = e.settled() && e.track.hold.holds(now_mono_ns);
        let over = e.spend(e.interval) > cap * if held { HOLD_TOLERANCE } else { 1.0 };
        if e.cap >= 1.0 || !e.measured() || !over {
            continue;
        }
        let to = e.interval.max(e.fit(cap));
        if to != e.interval {
            let why = Why::Capped {
                share_ns_per_s: cap,
            };
            let hold = e.slow_hold(now_mono_ns);
            changes.push(e.set(i, to, why, hold, now_mono_ns));
        }
    }
    let spent: f64 = entries.iter().map(|e| e.spend(e.interval)).sum();
    if spent > budget_ns_per_s {
        // Each source's fair share: water-filling over the sources read
        // at their interval in force, with what the others take kept.
        let kept: f64 = entries
            .iter()
            .filter(|e| !e.measured())
            .map(|e| e.spend(e.interval))
            .sum();
        let wants: Vec<(u32, f64)> = entries
            .iter()
            .filter(|e| e.measured())
            .map(|e| (e.weight, e.spend(e.base).min(e.cap_ns(budget_ns_per_s))))
            .collect();
        let level = water_level((budget_ns_per_s - kept).max(0.0), &wants);
        // Those over their share whose last decision no longer holds or is
        // not final (read once at its new interval: its cost there is what
        // changed) are slowed first; the others too only when that leaves
        // the total over the budget by more than the hold's tolerance.
        let mut next: Vec<Duration> = Vec::new();
        for held_too in [false, true] {
            next = entries
                .iter()
                .map(|e| {
                    let moves = e.measured()
                        && (held_too || !e.settled() || !e.track.hold.holds(now_mono_ns));
                    match moves {
                        true => e.interval.max(e.fit(e.share(level, budget_ns_per_s))),
                        false => e.interval,
                    }
                })
                .collect();
            let after: f64 = entries.iter().zip(&next).map(|(e, n)| e.spend(*n)).sum();
            if after <= budget_ns_per_s * if held_too { 1.0 } else { HOLD_TOLERANCE } {
                break;
            }
        }
        for (i, e) in entries.iter_mut().enumerate() {
            if next[i] == e.interval {
                continue;
            }
            let hold = e.slow_hold(now_mono_ns);
            let why = Why::Over {
                total_ns_per_s: spent,
                share_ns_per_s: e.share(level, budget_ns_per_s),
            };
            changes.push(e.set(i, next[i], why, hold, now_mono_ns));
        }
        return changes;
    }
    // Within the budget: restore, cheapest by weight first.
    let mut order: Vec<usize> = (0..entries.len())
        .filter(|&i| {
            let e = &entries[i];
            e.settled()
                && !e.base.is_zero()
                && e.interval > e.base
                && !e.track.hold.holds(now_mono_ns)
        })
        .collect();
    order.sort_by(|&a, &b| {
        let per_w = |e: &Entry| e.spend(e.base) / f64::from(e.weight.max(1));
        per_w(&entries[a]).total_cmp(&per_w(&entries[b]))
    });
    let mut spent = spent;
    for i in order {
        let e = entries[i];
        let others = spent - e.spend(e.interval);
        let fits = (1..)
            .map(|k| e.base.saturating_mul(k))
            .take_while(|&to| to == e.base || to <= e.interval / 2)
            .find(|&to| {
                (others + e.spend(to)) * HEADROOM <= budget_ns_per_s
                    && e.spend(to) * HEADROOM <= e.cap_ns(budget_ns_per_s)
            });
        let Some(to) = fits else {
            continue;
        };
        spent = others + e.spend(to);
        let why = Why::Fits {
            total_ns_per_s: spent * HEADROOM,
        };
        let hold = e.track.hold.hold.max(HOLD_MIN);
        changes.push(entries[i].set(i, to, why, hold, now_mono_ns));
    }
    changes
}

/// What the budget leaves to the reads consumers ask for, as a bucket:
/// it fills at the budget's rate less what the scheduled reads spend
/// ([`scheduled_ns_per_s`]) and holds one second of that; only reads asked
/// for draw on it. A read a consumer asks for is declined while the bucket
/// is empty, and HTTP consumers are served the data there is. Scheduled
/// reads are never declined ([`plan`] keeps them within the budget) and
/// count at their average: a large one (a walk of 10,000 cgroups every
/// 50 s) does not decline consumers for the seconds after it. So
/// everything read in a window of T seconds costs at most the budget for
/// T + 1 seconds, plus one read of each source (a scheduled read falling
/// in the window, the read that emptied the bucket).
#[derive(Debug, Default)]
pub struct ReadBucket {
    tokens_ns: f64,
    last_mono_ns: u64,
}

impl ReadBucket {
    /// Charges `cost_ns` spent on reads consumers asked for at `now` (0
    /// after a scheduled read: the rate may have changed), with `rate` ns
    /// of CPU a second left to them; returns the instant (CLOCK_MONOTONIC
    /// ns) until which reads consumers ask for are declined, 0 for none.
    /// With nothing left (the scheduled reads spend the whole budget) they
    /// are declined for a second, until the next read looks again.
    pub fn charge(&mut self, now_mono_ns: u64, cost_ns: u64, rate_ns_per_s: f64) -> u64 {
        let rate = rate_ns_per_s.max(0.0);
        if self.last_mono_ns == 0 {
            self.tokens_ns = rate;
        } else {
            let secs = now_mono_ns.saturating_sub(self.last_mono_ns) as f64 / 1e9;
            self.tokens_ns = (self.tokens_ns + secs * rate).min(rate);
        }
        self.last_mono_ns = now_mono_ns;
        self.tokens_ns -= cost_ns as f64;
        if rate == 0.0 {
            now_mono_ns + 1_000_000_000
        } else if self.tokens_ns >= 0.0 {
            0
        } else {
            now_mono_ns + (-self.tokens_ns / rate * 1e9) as u64
        }
    }
}

/// What the scheduled reads spend, ns of CPU a second: each scheduled
/// source's cost per read at its interval in force, over that interval.
pub fn scheduled_ns_per_s(stats: &[SourceStats]) -> f64 {
    stats
        .iter()
        .filter(|s| s.scheduled)
        .map(|s| s.budget.cost_ns / s.interval.as_secs_f64().max(1e-9))
        .sum()
}

/// An interval the overhead budget changed, and the source's.
pub struct SourceChange {
    pub source: AgentSource,
    pub change: Change,
}

/// Decides every scheduled source's interval under the overhead budget
/// from its cost at the interval in force ([`plan`]), writing the new
/// intervals and tracks into `stats`; returns what changed.
pub fn rebudget(stats: &mut [SourceStats], config: &Config, now_mono_ns: u64) -> Vec<SourceChange> {
    if config.overhead_budget_pct <= 0.0 {
        return Vec::new();
    }
    let sources: Vec<AgentSource> = AgentSource::ALL
        .into_iter()
        .filter(|s| stats[s.index()].scheduled)
        .collect();
    let mut entries: Vec<Entry> = sources
        .iter()
        .map(|&s| {
            let st = &stats[s.index()];
            let c = config.source(s);
            Entry {
                weight: weight(s),
                cap: cap(s),
                base: c.interval,
                max_age: c.max_age,
                interval: st.interval,
                track: st.budget,
            }
        })
        .collect();
    let changes = plan(
        budget_ns_per_s(config.overhead_budget_pct),
        &mut entries,
        now_mono_ns,
    );
    for (s, e) in sources.iter().zip(&entries) {
        let st = &mut stats[s.index()];
        st.interval = e.interval;
        st.budget = e.track;
    }
    changes
        .into_iter()
        .map(|c| SourceChange {
            source: sources[c.index],
            change: c,
        })
        .collect()
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
        // Ten demand reads of 1 ms fit the bucket's second; the next does
        // not.
        for i in 0..10 {
            assert_eq!(b.charge(t0, 1_000_000, rate), 0, "read {i}");
        }
        let until = b.charge(t0, 1_000_000, rate);
        // 1 ms over at 10 ms/s: declined for 1/10 s.
        assert_eq!(until, t0 + 100_000_000);
        // Half a second later it has refilled 5 ms, of which 1 ms was owed.
        assert_eq!(b.charge(t0 + 500_000_000, 4_000_000, rate), 0);
        assert_ne!(b.charge(t0 + 500_000_000, 1_000_000, rate), 0);
    }

    #[test]
    fn demand_gets_what_the_scheduled_reads_leave_at_their_average() {
        let mut stats = vec![SourceStats::default(); 3];
        // A 63 ms walk every 50 s (1.26 ms/s) and 2 ms every second; the
        // third is not scheduled.
        stats[0].scheduled = true;
        stats[0].interval = Duration::from_secs(50);
        stats[0].budget.cost_ns = 63e6;
        stats[1].scheduled = true;
        stats[1].interval = Duration::from_secs(1);
        stats[1].budget.cost_ns = 2e6;
        stats[2].interval = Duration::from_secs(1);
        stats[2].budget.cost_ns = 50e6;
        let scheduled = scheduled_ns_per_s(&stats);
        assert!((scheduled - 3.26e6).abs() < 1.0, "{scheduled}");
        let left = budget_ns_per_s(1.0) - scheduled;
        // Right after the walk (charged nothing here), a consumer's 6 ms
        // read is not declined: 6.74 ms/s are left to demand.
        let mut b = ReadBucket::default();
        let t0 = 1_000_000_000;
        assert_eq!(b.charge(t0, 0, left), 0);
        assert_eq!(b.charge(t0 + 1, 6_000_000, left), 0);
        // The next 1 ms is over by 0.26 ms: declined for 0.26/6.74 s.
        let until = b.charge(t0 + 2, 1_000_000, left);
        let want = t0 + 2 + (0.26e6 / left * 1e9) as u64;
        assert!(until.abs_diff(want) < 1_000, "{until} against {want}");
        // With nothing left, a second at a time, looked at again at each
        // read; a budget freed again refills.
        let mut b = ReadBucket::default();
        assert_eq!(b.charge(t0, 0, -1e6), t0 + 1_000_000_000);
        assert_eq!(b.charge(t0 + 1_000_000_000, 0, 0.0), t0 + 2_000_000_000);
        assert_eq!(b.charge(t0 + 1_500_000_000, 1_000_000, left), 0);
    }

    const S: Duration = Duration::from_secs(1);
    const SEC: u64 = 1_000_000_000;
    const BUDGET: f64 = 10e6;

    /// A source read at its configured interval, costing `cost_ns` a read.
    fn entry(weight: u32, base: Duration, cost_ns: f64) -> Entry {
        let mut e = Entry {
            weight,
            cap: 1.0,
            base,
            max_age: base * 5,
            interval: base,
            track: Track::default(),
        };
        settle(&mut e, cost_ns);
        e
    }

    /// `e` read at its interval in force long enough that its cost there
    /// is known to be `cost_ns` and its decision is final (0: not read).
    fn settle(e: &mut Entry, cost_ns: f64) {
        e.track.cost_ns = cost_ns;
        e.track.reads = if cost_ns > 0.0 { 2 } else { 0 };
        assert_eq!(e.track.is_final(e.interval), cost_ns > 0.0);
    }

    /// a costing 1 ms/s and b 12 ms/s, every second: over the 10 ms/s
    /// budget, b (over its 9 ms/s share) is slowed to 2 s at 1 s.
    fn b_slowed() -> [Entry; 2] {
        let mut e = [entry(1, S, 1e6), entry(1, S, 12e6)];
        plan(BUDGET, &mut e, SEC);
        assert_eq!((e[0].interval, e[1].interval), (S, 2 * S));
        e
    }

    /// The agent's step: only scheduled sources are planned, from their
    /// configured intervals; the new interval and track are written back.
    #[test]
    fn rebudget_slows_the_scheduled_source_over_its_share() {
        let config = Config {
            overhead_budget_pct: 1.0,
            ..Config::default()
        };
        let mut stats = [SourceStats::default(); crate::config::SOURCE_COUNT];
        let stat = AgentSource::System(Source::Stat);
        let meminfo = AgentSource::System(Source::Meminfo);
        for (s, cost_ns) in [(stat, 30e6), (meminfo, 1e3)] {
            let st = &mut stats[s.index()];
            st.scheduled = true;
            st.interval = config.source(s).interval;
            st.budget.cost_ns = cost_ns;
            st.budget.reads = 2;
        }
        // Not scheduled: never planned, however dear.
        let loadavg = AgentSource::System(Source::Loadavg);
        stats[loadavg.index()].budget.cost_ns = 1e9;
        let changes = rebudget(&mut stats, &config, SEC);
        let slowed: Vec<_> = changes.iter().map(|c| c.source).collect();
        assert_eq!(slowed, vec![stat]);
        assert!(stats[stat.index()].interval > config.source(stat).interval);
        assert_eq!(
            stats[meminfo.index()].interval,
            config.source(meminfo).interval
        );
        assert_eq!(stats[loadavg.index()].interval, Duration::ZERO);
        // No budget: no decision.
        let off = Config {
            overhead_budget_pct: 0.0,
            ..config
        };
        assert!(rebudget(&mut stats, &off, 2 * SEC).is_empty());
    }

    #[test]
    fn everything_within_the_budget_keeps_its_interval() {
        // 1 ms/s and 8 ms/s of a 10 ms/s budget, however unequal.
        let mut e = [entry(1, S, 1e6), entry(1, S, 8e6)];
        assert!(plan(BUDGET, &mut e, SEC).is_empty());
        assert_eq!((e[0].interval, e[1].interval), (S, S));
        // Not known yet: counts for nothing.
        let mut e = [entry(1, S, 0.0), entry(1, S, 9e6)];
        assert!(plan(BUDGET, &mut e, SEC).is_empty());
    }

    #[test]
    fn a_source_not_read_at_its_new_interval_keeps_its_room_and_its_interval() {
        // b's interval just changed; it cost 6 ms a read before: it keeps
        // that room, so a (12 ms/s) gets the 4 ms/s left, and b is not
        // moved though over.
        let mut e = [entry(1, S, 12e6), entry(1, S, 6e6)];
        e[1].track.reads = 0;
        let c = plan(BUDGET, &mut e, SEC);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((e[0].interval, e[1].interval), (5 * S, S));
    }

    #[test]
    fn over_the_budget_the_source_over_its_share_is_slowed_with_half_to_spare() {
        // 1 ms/s fits its even part and keeps it; the other 9 ms/s go to b,
        // which wants 12 ms/s: half again is 18 ms per read, 2 s at 9 ms/s.
        let mut e = [entry(1, S, 1e6), entry(1, S, 12e6)];
        let c = plan(BUDGET, &mut e, SEC);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].index, c[0].from, c[0].to), (1, S, 2 * S));
        assert_eq!(
            c[0].why,
            Why::Over {
                total_ns_per_s: 13e6,
                share_ns_per_s: 9e6
            }
        );
        assert_eq!(c[0].hold, HOLD_MIN);
        assert_eq!(e[1].interval, 2 * S);
        // 60 ms per read: capped at the max age.
        let mut e = [entry(1, S, 60e6)];
        plan(BUDGET, &mut e, SEC);
        assert_eq!(e[0].interval, 5 * S);
    }

    #[test]
    fn shares_follow_weights() {
        // 1% of a CPU is 10 ms/s. Three sources of weights 1, 1, 2 wanting
        // 8 ms/s each: a level of 2.5 ms/s a unit.
        let mut e = [entry(1, S, 8e6), entry(1, S, 8e6), entry(2, S, 8e6)];
        let c = plan(BUDGET, &mut e, SEC);
        let shares: Vec<f64> = c
            .iter()
            .map(|c| match c.why {
                Why::Over { share_ns_per_s, .. } => share_ns_per_s,
                Why::Fits { .. } | Why::Capped { .. } => 0.0,
            })
            .collect();
        assert_eq!(shares, [2.5e6, 2.5e6, 5e6]);
        // 12 ms of room per read: 5 s at 2.5 ms/s, 3 s at 5 ms/s.
        let iv: Vec<Duration> = e.iter().map(|e| e.interval).collect();
        assert_eq!(iv, [5 * S, 5 * S, 3 * S]);
        assert!(e.iter().map(|e| e.spend(e.interval)).sum::<f64>() <= BUDGET);
        assert_eq!(weight(AgentSource::Processes), 4);
        assert_eq!(weight(AgentSource::System(Source::Interrupts)), 2);
    }

    #[test]
    fn a_source_past_its_cap_is_slowed_to_it_even_within_the_budget() {
        // Capped at a fifth (2 ms/s), 60 ms a read every 10 s is 6 ms/s:
        // within the 10 ms/s budget with a 1 ms/s neighbour, yet slowed to
        // the first multiple at which 90 ms a read fits 2 ms/s: 50 s.
        let mut e = [entry(1, S, 1e6), entry(2, 10 * S, 60e6)];
        e[1].cap = 0.2;
        e[1].max_age = 60 * S;
        let c = plan(BUDGET, &mut e, SEC);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(
            c[0].why,
            Why::Capped {
                share_ns_per_s: 2e6
            }
        );
        assert_eq!((e[0].interval, e[1].interval), (S, 50 * S));
        let line = c[0].describe("cgroups", 10 * S, 10 * S, 60 * S, 1.0);
        assert!(line.contains("cap of 2000 us/s"), "{line}");
        // Never beyond its max age.
        let mut e = [entry(2, 10 * S, 60e6)];
        e[0].cap = 0.2;
        plan(BUDGET, &mut e, SEC);
        assert_eq!(e[0].interval, 50 * S);
        // Its cost falls to 20 ms: after its hold, back to 20 s (30 ms fits
        // 2 ms/s at 15 s; 20 s is the first multiple), not to 10 s.
        let mut e = [entry(2, 10 * S, 60e6)];
        e[0].cap = 0.2;
        e[0].max_age = 60 * S;
        plan(BUDGET, &mut e, SEC);
        settle(&mut e[0], 20e6);
        let later = SEC + HOLD_MIN.as_nanos() as u64;
        let c = plan(BUDGET, &mut e, later);
        assert_eq!(e[0].interval, 20 * S, "{c:?}");
        // Uncapped, the same source stays at 10 s: 6 ms/s fits.
        let mut e = [entry(1, S, 1e6), entry(2, 10 * S, 60e6)];
        assert!(plan(BUDGET, &mut e, SEC).is_empty());
    }

    #[test]
    fn a_capped_source_counts_for_its_cap_when_the_budget_is_shared() {
        // Over the budget: a (weight 1, 9 ms/s) and b (weight 2, 12 ms/s,
        // capped at 2 ms/s). b wants no more than 2 ms/s, so a gets the 8
        // ms/s left rather than a third of 10.
        let mut e = [entry(1, S, 9e6), entry(2, S, 12e6)];
        e[1].cap = 0.2;
        e[1].max_age = 20 * S;
        let c = plan(BUDGET, &mut e, SEC);
        let share = |i: usize| {
            c.iter()
                .find(|c| c.index == i)
                .map(|c| match c.why {
                    Why::Over { share_ns_per_s, .. } | Why::Capped { share_ns_per_s } => {
                        share_ns_per_s
                    }
                    Why::Fits { .. } => 0.0,
                })
                .unwrap()
        };
        assert_eq!(share(1), 2e6);
        assert!(share(0) >= 8e6 - 1.0, "{c:?}");
        assert!(e.iter().map(|e| e.spend(e.interval)).sum::<f64>() <= BUDGET);
        assert_eq!(cap(AgentSource::Cgroups), 0.2);
        assert_eq!(cap(AgentSource::Processes), 1.0);
    }

    #[test]
    fn what_cheap_sources_leave_goes_to_the_others() {
        // Sixty cheap sources and a 300 us/s netstat all fit: no level,
        // nobody slowed (an even split would give netstat 10 ms / 64 =
        // 156 us/s and slow it).
        let mut wants = vec![(1, 10_000.0); 60];
        wants.push((1, 300_000.0));
        wants.push((4, 5e6));
        assert_eq!(water_level(BUDGET, &wants), f64::INFINITY);
        // Over the budget: a (1 ms/s) fits at the even level (10/6 ms/s a
        // unit) and keeps its 1 ms; the other 9 ms/s go 1 to 4 between b
        // and c, whose wants exceed their parts.
        let level = water_level(BUDGET, &[(1, 1e6), (1, 8e6), (4, 8e6)]);
        assert!((level - 1.8e6).abs() < 1e-3, "{level}");
        assert!((1e6 + level + 4.0 * level - 1e7).abs() < 1e-3);
        assert_eq!(water_level(BUDGET, &[]), f64::INFINITY);
    }

    #[test]
    fn a_held_source_is_slowed_again_only_when_the_others_cannot_make_room() {
        let mut e = b_slowed();
        // a's cost grows to 5 ms/s: 11 ms/s in all. a is not held and
        // over its share: a is slowed, b (held) is not.
        settle(&mut e[0], 5e6);
        let c = plan(BUDGET, &mut e, 2 * SEC);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((e[0].interval, e[1].interval), (2 * S, 2 * S));
        // b's cost rises to 30 ms: a (now held too) cannot make room
        // alone, so the budget breaks b's hold.
        settle(&mut e[1], 30e6);
        let c = plan(BUDGET, &mut e, 3 * SEC);
        assert!(c.iter().any(|c| c.index == 1 && c.to > 2 * S), "{c:?}");
        assert!(e.iter().map(|e| e.spend(e.interval)).sum::<f64>() <= BUDGET);
    }

    #[test]
    fn a_held_source_whose_cost_rose_a_little_waits_for_its_hold_to_end() {
        let mut e = b_slowed();
        // Read at 2 s, b costs 20 ms (colder caches): 11 ms/s in all, within
        // the tolerance. Kept until its hold ends, then slowed.
        settle(&mut e[1], 20e6);
        assert!(plan(BUDGET, &mut e, 2 * SEC).is_empty());
        let end = SEC + HOLD_MIN.as_nanos() as u64;
        assert!(plan(BUDGET, &mut e, end - 1).is_empty());
        let c = plan(BUDGET, &mut e, end);
        assert_eq!((c.len(), e[1].interval), (1, 4 * S), "{c:?}");
        // While it is not final (below a second, read once at its new
        // interval), a source is moved first and at once: the same, every
        // 10 ms.
        let ms = S / 1000;
        let mut e = [entry(1, 10 * ms, 10e3), entry(1, 10 * ms, 120e3)];
        plan(BUDGET, &mut e, SEC);
        assert_eq!(e[1].interval, 20 * ms);
        e[1].track.observe(200e3 as u64);
        assert!(!e[1].track.is_final(e[1].interval));
        assert_eq!(plan(BUDGET, &mut e, 2 * SEC).len(), 1);
        assert_eq!(e[1].interval, 40 * ms);
        e[1].track.observe(200e3 as u64);
        e[1].track.observe(200e3 as u64);
        assert!(e[1].track.is_final(e[1].interval));
    }

    #[test]
    fn restored_after_the_hold_when_everything_fits_with_half_to_spare() {
        let mut e = b_slowed();
        // Cheaper: 5 ms per read. Everything at 1 s would cost 6 ms/s,
        // 9 ms/s with half again: fits, but the hold has not passed.
        settle(&mut e[1], 5e6);
        assert!(plan(BUDGET, &mut e, SEC + HOLD_MIN.as_nanos() as u64 - 1).is_empty());
        let c = plan(BUDGET, &mut e, SEC + HOLD_MIN.as_nanos() as u64);
        assert_eq!((c.len(), e[1].interval), (1, S), "{c:?}");
        assert_eq!(
            c[0].why,
            Why::Fits {
                total_ns_per_s: 9e6
            }
        );
        // 7 ms per read would fit (8 ms/s), but not with half again (12):
        // no restore.
        let mut e = b_slowed();
        settle(&mut e[1], 7e6);
        assert!(plan(BUDGET, &mut e, 100 * SEC).is_empty());
        // From 5 s, a partial restore, to at most half: 12 ms per read at
        // 2 s is 6 ms/s, 9 ms/s with half again, which fits (1 s would be
        // 18).
        let mut e = [entry(1, S, 60e6)];
        plan(BUDGET, &mut e, SEC);
        assert_eq!(e[0].interval, 5 * S);
        settle(&mut e[0], 12e6);
        plan(BUDGET, &mut e, 100 * SEC);
        assert_eq!(e[0].interval, 2 * S);
        // 16 ms per read: 3 s would fit (5.3 ms/s, 8 with half again), but
        // it is more than half of 5 s, and 2 s does not fit (12): kept.
        let mut e = [entry(1, S, 60e6)];
        plan(BUDGET, &mut e, SEC);
        settle(&mut e[0], 16e6);
        assert!(plan(BUDGET, &mut e, 100 * SEC).is_empty());
        assert_eq!(e[0].interval, 5 * S);
    }

    #[test]
    fn slowed_again_after_a_restore_the_hold_doubles_up_to_an_hour() {
        // Dear enough to undo a restore at once: over the budget by more
        // than the hold's tolerance.
        let mut e = [entry(1, S, 14e6)];
        let mut t = SEC;
        let mut holds = Vec::new();
        for _ in 0..8 {
            let c = plan(BUDGET, &mut e, t);
            holds.push(c[0].hold.as_secs());
            // Cheap long enough to be restored, then dear again.
            t += c[0].hold.as_nanos() as u64;
            settle(&mut e[0], 1e6);
            assert_eq!(plan(BUDGET, &mut e, t).len(), 1);
            settle(&mut e[0], 14e6);
            t += SEC;
        }
        assert_eq!(holds, [60, 120, 240, 480, 960, 1920, 3600, 3600]);
        // An hour at its configured interval: the next slow holds a minute.
        t += HOLD_MAX.as_nanos() as u64;
        assert_eq!(plan(BUDGET, &mut e, t)[0].hold, HOLD_MIN);
    }

    #[test]
    fn a_change_is_said_with_its_figures() {
        let mut e = [entry(1, S, 1e6), entry(1, S / 100, 120e3)];
        let c = plan(BUDGET, &mut e, SEC);
        let line = c[0].describe("stat", S / 100, S / 100, S, 1.0);
        assert_eq!(
            line,
            "stat: slowed from every 10ms to every 20ms (configured 10ms) for at least 1m, never beyond its max age of 1s: 120 us per read at every 10ms; all sources would take 13000 us/s, over the overhead budget of 10000 us/s (1% of a CPU); this source's share is 9000 us/s"
        );
        // Said from where a slow of several steps began.
        assert!(
            c[0].describe("stat", S / 200, S / 100, S, 0.125)
                .contains("from every 5ms to every 20ms")
        );
        assert!(
            c[0].describe("stat", S / 200, S / 100, S, 0.125)
                .contains("(0.125% of a CPU)")
        );
        settle(&mut e[1], 20e3);
        let c = plan(BUDGET, &mut e, 100 * SEC);
        assert_eq!(
            c[0].describe("stat", c[0].from, S / 100, S, 1.0),
            "stat: restored from every 20ms to every 10ms (as configured): 20 us per read; all sources with half again their cost would take 4500 us/s, within the overhead budget of 10000 us/s (1% of a CPU)"
        );
    }

    #[test]
    fn one_outlying_read_cannot_swing_the_estimate() {
        // Read every 10 ms at 33 us, then slowed: the first read at the new
        // interval (colder) replaces the estimate, up to twice the old one.
        let mut t = Track::default();
        t.observe(33_000);
        t.reads = 0;
        t.observe(45_000);
        assert_eq!(t.cost_ns, 45e3);
        t.reads = 0;
        // An outlying read: 255 us counts as 90.
        t.observe(255_000);
        assert_eq!(t.cost_ns, 90e3);
        // Later reads are averaged: a quarter of the way, a read counting
        // for at most twice the estimate.
        t.observe(50_000);
        assert_eq!(t.cost_ns, 80e3);
        t.observe(8_000_000);
        assert_eq!(t.cost_ns, 100e3);
        // Nothing known yet: the first read is taken as it is.
        let mut t = Track::default();
        t.observe(255_000);
        assert_eq!(t.cost_ns, 255e3);
    }

    #[test]
    fn a_cost_that_rose_is_taken_at_the_second_read_over_twice_the_estimate() {
        // A walk of 1.5 ms, then 10,000 cgroups more: 60 ms, then 40.
        let mut t = Track::default();
        t.observe(1_500_000);
        t.observe(1_500_000);
        t.observe(60_000_000);
        assert_eq!(t.cost_ns, 0.75 * 1.5e6 + 0.25 * 3e6, "one read is one read");
        t.observe(40_000_000);
        assert_eq!(t.cost_ns, 40e6, "two in a row: the lesser");
        // Back to normal: averaged again, one outlier at a time.
        t.observe(40_000_000);
        assert_eq!(t.cost_ns, 40e6);
        t.observe(900_000_000);
        assert_eq!(t.cost_ns, 0.75 * 40e6 + 0.25 * 80e6);
        t.observe(40_000_000);
        assert_eq!(t.cost_ns, 0.75 * 50e6 + 0.25 * 40e6);
        // Outliers between normal reads never make the estimate: each
        // counts at twice it, and it settles at 4x the normal read, not
        // at the outliers' 100x.
        let mut t = Track::default();
        t.observe(100_000);
        for _ in 0..50 {
            t.observe(10_000_000);
            t.observe(100_000);
        }
        assert!(t.cost_ns < 400_000.0, "{}", t.cost_ns);
    }

    #[test]
    fn no_budget_means_no_throttling() {
        let mut e = [entry(1, S, 1e9)];
        assert!(plan(0.0, &mut e, SEC).is_empty());
        assert_eq!(e[0].interval, S);
    }

    /// How a source's cost per read wanders around its nominal cost.
    #[derive(Clone, Copy)]
    enum Wave {
        /// +20% and -20% at alternate reads.
        Alternate,
        /// A sine of ±20% with this period (s) and phase.
        Sine(f64, f64),
        /// Uniform within ±20%, from this seed.
        Noise(u64),
    }

    /// A source for the simulation: weight, configured interval, nominal
    /// cost per read at it (ns), how the cost wanders, and how much it rises
    /// per doubling of the interval (colder caches).
    #[derive(Clone, Copy)]
    struct Sim {
        weight: u32,
        base: Duration,
        nominal_ns: f64,
        wave: Wave,
        cold: f64,
    }

    fn sim(weight: u32, base: Duration, nominal_ns: f64, wave: Wave, cold: f64) -> Sim {
        Sim {
            weight,
            base,
            nominal_ns,
            wave,
            cold,
        }
    }

    /// What happened in a simulated run: each source's interval changes
    /// (seconds), and the cost of every read (seconds, ns).
    struct Run {
        changes: Vec<Vec<(f64, Duration)>>,
        reads: Vec<(f64, f64)>,
    }

    /// Runs `srcs` for `secs` simulated seconds as the agent does: each
    /// source read when due, its cost observed, then every interval decided
    /// by [`plan`]. The start-up read at 0 is not counted.
    fn simulate(srcs: &[Sim], secs: u64) -> Run {
        let mut e: Vec<Entry> = srcs.iter().map(|s| entry(s.weight, s.base, 0.0)).collect();
        for (e, s) in e.iter_mut().zip(srcs) {
            e.max_age = s.base * 20;
            e.track.reads = 0;
        }
        let mut due: Vec<u64> = srcs.iter().map(|s| s.base.as_nanos() as u64).collect();
        let mut n = vec![0u64; srcs.len()];
        let mut seeds: Vec<u64> = srcs
            .iter()
            .map(|s| match s.wave {
                Wave::Noise(seed) => seed | 1,
                _ => 1,
            })
            .collect();
        let mut run = Run {
            changes: vec![Vec::new(); srcs.len()],
            reads: Vec::new(),
        };
        loop {
            let (i, &now) = due.iter().enumerate().min_by_key(|(_, d)| **d).unwrap();
            if now > secs * SEC {
                return run;
            }
            let s = &srcs[i];
            let t = now as f64 / 1e9;
            let w = match s.wave {
                Wave::Alternate => [1.0, -1.0][(n[i] % 2) as usize],
                Wave::Sine(period, phase) => (std::f64::consts::TAU * t / period + phase).sin(),
                Wave::Noise(_) => {
                    let x = &mut seeds[i];
                    *x ^= *x << 13;
                    *x ^= *x >> 7;
                    *x ^= *x << 17;
                    (*x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
                }
            };
            n[i] += 1;
            let doublings = (e[i].interval.as_secs_f64() / s.base.as_secs_f64()).log2();
            let cost = s.nominal_ns * (1.0 + 0.2 * w) * (1.0 + s.cold * doublings);
            run.reads.push((t, cost));
            e[i].track.observe(cost as u64);
            for c in plan(BUDGET, &mut e, now) {
                run.changes[c.index].push((t, c.to));
                if c.index != i {
                    due[c.index] = now + c.to.as_nanos() as u64;
                }
            }
            due[i] = now + e[i].interval.as_nanos() as u64;
        }
    }

    /// The budget's promises over a simulated run: each source's interval
    /// changes at most `max_changes` times, never twice within a minute,
    /// and never back and forth (once restored, a source is not slowed
    /// again: it settles); and the reads of any minute cost at most a
    /// minute of budget.
    fn check(name: &str, srcs: &[Sim], secs: u64, max_changes: usize) {
        let run = simulate(srcs, secs);
        for (i, c) in run.changes.iter().enumerate() {
            assert!(
                c.len() <= max_changes,
                "{name}: source {i} changed {} times in {secs} s: {c:?}",
                c.len()
            );
            for w in c.windows(2) {
                assert!(
                    w[1].0 - w[0].0 >= 60.0,
                    "{name}: source {i} changed twice within a minute: {c:?}"
                );
            }
            for w in c.windows(3) {
                assert!(
                    !(w[1].1 < w[0].1 && w[2].1 > w[1].1),
                    "{name}: source {i} slowed again after a restore: {c:?}"
                );
            }
        }
        let mut from = 0;
        for start in 0..secs.saturating_sub(60) {
            let (a, b) = (start as f64, start as f64 + 60.0);
            while run.reads[from].0 < a {
                from += 1;
            }
            let spent: f64 = run.reads[from..]
                .iter()
                .take_while(|r| r.0 < b)
                .map(|r| r.1)
                .sum();
            assert!(
                spent <= BUDGET * 60.0,
                "{name}: {:.1} ms spent in the minute from {start} s, over the budget's {:.0} ms",
                spent / 1e6,
                BUDGET * 60.0 / 1e6
            );
        }
    }

    // Nominal costs that add up to the budget exactly, so each source's
    // share is its nominal cost and the wandering costs go ±20% around it.

    #[test]
    fn two_sources_wandering_around_their_shares_settle() {
        let ms = |x: f64| x * 1e6;
        let two = |wa: Wave, wb: Wave, cold: f64| {
            [
                sim(1, S, ms(3.0), wa, cold),
                sim(4, 5 * S, ms(35.0), wb, cold),
            ]
        };
        check(
            "alternate",
            &two(Wave::Alternate, Wave::Alternate, 0.0),
            3600,
            2,
        );
        check(
            "sines",
            &two(Wave::Sine(90.0, 0.0), Wave::Sine(400.0, 1.0), 0.0),
            3600,
            2,
        );
        check(
            "noise, colder caches",
            &two(Wave::Noise(7), Wave::Noise(11), 0.15),
            3600,
            2,
        );
        // The integration test's case: stat and interrupts every 10 ms.
        let fast = [
            sim(1, S / 100, 30e3, Wave::Noise(3), 0.15),
            sim(2, S / 100, 70e3, Wave::Noise(5), 0.15),
        ];
        check("every 10 ms", &fast, 600, 2);
    }

    #[test]
    fn five_sources_wandering_around_their_shares_settle() {
        let ms = |x: f64| x * 1e6;
        let five = [
            sim(1, S, ms(1.0), Wave::Alternate, 0.1),
            sim(1, S, ms(1.5), Wave::Sine(70.0, 0.5), 0.0),
            sim(2, 5 * S, ms(10.0), Wave::Noise(13), 0.1),
            sim(4, 5 * S, ms(22.5), Wave::Sine(300.0, 2.0), 0.15),
            sim(1, 15 * S, ms(15.0), Wave::Noise(17), 0.0),
        ];
        check("five", &five, 3600, 2);
    }
}
