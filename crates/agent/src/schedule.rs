//! When each source is next due. Pure arithmetic on the wall clock, so it is
//! tested without sleeping.
//!
//! Samples align to wall-clock multiples of their interval (a 5 s source is
//! read at :00, :05, :10 ...), so the samples of a fleet line up and sources
//! whose intervals divide one another fall due in the same wakeup. A source
//! due within its slack window of a wakeup is read in that wakeup.

use crate::config::SOURCE_COUNT;

/// The first multiple of `interval_ns` strictly after `now_ns`.
pub fn align_next(now_ns: u64, interval_ns: u64) -> u64 {
    let i = interval_ns.max(1);
    (now_ns / i + 1) * i
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    next_due_ns: u64,
    interval_ns: u64,
    slack_ns: u64,
}

/// The next due time of every scheduled source (CLOCK_REALTIME, ns).
#[derive(Debug, Clone)]
pub struct Schedule {
    slots: [Option<Slot>; SOURCE_COUNT],
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            slots: [None; SOURCE_COUNT],
        }
    }
}

impl Schedule {
    /// Schedules source `i` every `interval_ns` from `now_ns` (first at the
    /// next aligned instant), or unschedules it with `None`.
    pub fn set(&mut self, i: usize, every: Option<(u64, u64)>, now_ns: u64) {
        self.slots[i] = every.map(|(interval_ns, slack_ns)| Slot {
            next_due_ns: align_next(now_ns, interval_ns),
            interval_ns,
            slack_ns,
        });
    }

    pub fn interval_ns(&self, i: usize) -> Option<u64> {
        self.slots[i].map(|s| s.interval_ns)
    }

    /// Sources due at `now_ns`, counting each one's slack: a bit per source.
    pub fn due(&self, now_ns: u64) -> crate::config::Mask {
        let mut mask = 0;
        for (i, s) in self.slots.iter().enumerate() {
            if let Some(s) = s
                && s.next_due_ns <= now_ns.saturating_add(s.slack_ns)
            {
                mask |= 1 << i;
            }
        }
        mask
    }

    /// Moves the sources in `mask`, read at `now_ns`, to their next instant.
    /// One read early within the slack still counts for the instant it served.
    pub fn advance(&mut self, mask: crate::config::Mask, now_ns: u64) {
        for (i, s) in self.slots.iter_mut().enumerate() {
            if mask & (1 << i) != 0
                && let Some(s) = s
            {
                s.next_due_ns = align_next(now_ns.saturating_add(s.slack_ns), s.interval_ns);
            }
        }
    }

    /// The earliest due time of any source.
    pub fn next_deadline(&self) -> Option<u64> {
        self.slots.iter().flatten().map(|s| s.next_due_ns).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000 * MS;

    #[test]
    fn due_times_align_to_wall_clock_multiples() {
        assert_eq!(align_next(12_345 * MS, S), 13 * S);
        assert_eq!(align_next(13 * S, S), 14 * S);
        assert_eq!(align_next(12_345 * MS, 5 * S), 15 * S);
    }

    #[test]
    fn sources_due_within_slack_share_a_wakeup() {
        let mut s = Schedule::default();
        let now = 100 * S + 300 * MS;
        s.set(0, Some((S, 10 * MS)), now);
        s.set(1, Some((5 * S, 50 * MS)), now);
        s.set(2, Some((S, 10 * MS)), now + 495 * MS); // first due 101 s as well
        assert_eq!(s.next_deadline(), Some(101 * S));
        // Woken 3 ms early: the two 1 s sources are within their slack.
        let mask = s.due(101 * S - 3 * MS);
        assert_eq!(mask, 0b101);
        s.advance(mask, 101 * S - 3 * MS);
        // Read early, they are next due one interval after the instant served.
        assert_eq!(s.next_deadline(), Some(102 * S));
        assert_eq!(s.due(105 * S), 0b111);
    }

    #[test]
    fn a_late_wakeup_skips_missed_instants_instead_of_bursting() {
        let mut s = Schedule::default();
        s.set(0, Some((S, 10 * MS)), 0);
        s.advance(1, 7 * S + 400 * MS);
        assert_eq!(s.next_deadline(), Some(8 * S));
    }

    #[test]
    fn unscheduled_sources_are_never_due() {
        let mut s = Schedule::default();
        s.set(3, Some((S, 0)), 0);
        s.set(3, None, 0);
        assert_eq!(s.due(u64::MAX / 2), 0);
        assert_eq!(s.next_deadline(), None);
    }
}
