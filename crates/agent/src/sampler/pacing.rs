//! The overhead budget's side of a wakeup: each read charged, intervals
//! stretched or given back, the schedule moved, the wall clock followed.

use super::*;

impl Agent {
    /// Takes the cost of the reads consumers asked for (`demand` in
    /// `mask`) from the bucket of what the scheduled reads leave of the
    /// budget, and tells consumers until when the reads they ask for are
    /// declined.
    pub(super) fn charge(&mut self, st: &State, config: &Config, mask: Mask, demand: Mask) {
        let cost: u64 = AgentSource::ALL
            .into_iter()
            .filter(|s| mask & demand & s.bit() != 0)
            .map(|s| st.stats[s.index()].last_cost_ns)
            .sum();
        let rate = budget::budget_ns_per_s(config.overhead_budget_pct)
            - budget::scheduled_ns_per_s(&st.stats);
        let until = self.bucket.charge(mono_ns(), cost, rate);
        self.shared
            .demand_blocked_until
            .store(until, Ordering::Release);
    }

    /// Moves the schedule of each source whose interval the budget
    /// changed, and says so once per decision: a restore at once; a slow
    /// once it is final (`settled`: the sources just read on the schedule
    /// at an interval now final, [`budget::Track::is_final`]), so that the
    /// steps of one slow (its cost often rises as it is read less often:
    /// colder caches) make one line, from the first interval to the last.
    pub(super) fn reschedule(
        &mut self,
        config: &Config,
        changes: Vec<budget::SourceChange>,
        settled: Mask,
    ) {
        let now = self.anchor.now(mono_ns());
        let mut changed: Mask = 0;
        for budget::SourceChange {
            source: s,
            change: c,
        } in changes
        {
            changed |= s.bit();
            let slack = config.slack_for(s).as_nanos() as u64;
            self.schedule
                .set(s.index(), Some((c.to.as_nanos() as u64, slack)), now);
            match c.why {
                budget::Why::Over { .. } | budget::Why::Capped { .. } => {
                    let pending = &mut self.unsaid[s.index()];
                    let from = pending.map_or(c.from, |(from, _)| from);
                    *pending = Some((from, c));
                }
                budget::Why::Fits { .. } => {
                    self.say_slow(config, s);
                    say(config, s, c.from, &c);
                }
            }
        }
        for s in AgentSource::ALL {
            if settled & !changed & s.bit() != 0 {
                self.say_slow(config, s);
            }
        }
    }

    /// Re-anchors the schedule when the wall clock stepped, so that every
    /// source keeps its rate ([`Schedule::shift`]); a step of a second or
    /// more is logged.
    pub(super) fn follow_wall_clock(&mut self) {
        let (unix, mono) = (unix_ns(), mono_ns());
        let Some(delta) = self.anchor.follow(unix, mono) else {
            return;
        };
        self.schedule.shift(delta);
        if delta.abs() >= 1_000_000_000 {
            let d = Duration::from_nanos(delta.unsigned_abs() as u64);
            log(format!(
                "the wall clock stepped {} by {}: sampling goes on at the same rate, and samples are stamped with the new time",
                if delta < 0 { "back" } else { "forward" },
                humantime::format_duration(Duration::from_millis(d.as_millis() as u64)),
            ));
        }
    }

    /// Logs the slow of `s` not said yet, if any.
    pub(super) fn say_slow(&mut self, config: &Config, s: AgentSource) {
        if let Some((from, c)) = self.unsaid[s.index()].take() {
            say(config, s, from, &c);
        }
    }
}

/// Logs a change of the interval of `s` (from `from`, where a slow of
/// several steps began).
pub(super) fn say(config: &Config, s: AgentSource, from: Duration, c: &budget::Change) {
    let src = config.source(s);
    log(c.describe(
        s.key(),
        from,
        src.interval,
        src.max_age,
        config.overhead_budget_pct,
    ));
}

pub(super) fn keys(mask: Mask) -> String {
    AgentSource::ALL
        .into_iter()
        .filter(|s| mask & s.bit() != 0)
        .map(AgentSource::key)
        .collect::<Vec<_>>()
        .join(", ")
}
