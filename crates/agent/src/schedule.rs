//! When each source is next due. Pure arithmetic on clock readings passed
//! in, so it is tested without sleeping or stepping a real clock.
//!
//! Samples align to wall-clock multiples of their interval (a 5 s source is
//! read at :00, :05, :10 ...), so the samples of a fleet line up and sources
//! whose intervals divide one another fall due in the same wakeup. A source
//! due within its slack window of a wakeup is read in that wakeup.
//!
//! Time runs on CLOCK_MONOTONIC, shifted by the wall clock's offset from it
//! ([`Anchor`]): due times are wall-aligned, waits are monotonic, and a
//! step of the wall clock (NTP at boot, an operator, a VM resumed) moves
//! the alignment, never the rate: a backward step of an hour no longer
//! stops sampling for an hour, a forward one does not hurry it.

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

/// The wall clock's offset from CLOCK_MONOTONIC, as last followed: the
/// schedule's time is monotonic time plus this offset.
#[derive(Debug, Clone, Copy)]
pub struct Anchor {
    offset: i128,
}

/// A change of the offset beyond this re-anchors the schedule (NTP's slew
/// moves it by at most 0.5 ms a second).
const REANCHOR_NS: i128 = 20_000_000;

impl Anchor {
    pub fn new(unix_ns: u64, mono_ns: u64) -> Anchor {
        Anchor {
            offset: i128::from(unix_ns) - i128::from(mono_ns),
        }
    }

    /// The schedule's time at monotonic `mono_ns`.
    pub fn now(&self, mono_ns: u64) -> u64 {
        (i128::from(mono_ns) + self.offset).max(0) as u64
    }

    /// The monotonic time of the schedule's `t`.
    pub fn to_mono(&self, t: u64) -> u64 {
        (i128::from(t) - self.offset).max(0) as u64
    }

    /// Follows the wall clock: when its offset moved by more than a slew
    /// could, re-anchors and returns by how much (ns; negative: back).
    pub fn follow(&mut self, unix_ns: u64, mono_ns: u64) -> Option<i128> {
        let offset = i128::from(unix_ns) - i128::from(mono_ns);
        let delta = offset - self.offset;
        if delta.abs() <= REANCHOR_NS {
            return None;
        }
        self.offset = offset;
        Some(delta)
    }
}

/// The next due time of every scheduled source (the [`Anchor`]'s time,
/// ns).
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

    /// After the wall clock stepped by `delta_ns`: every due time moves
    /// with it, so each source's next read comes when it would have; the
    /// read after it is aligned to the new wall clock (one interval at
    /// most that much shorter, never longer).
    pub fn shift(&mut self, delta_ns: i128) {
        for s in self.slots.iter_mut().flatten() {
            s.next_due_ns = (i128::from(s.next_due_ns) + delta_ns).max(0) as u64;
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

    /// A source every second, through a wall clock stepped back an hour
    /// and then forward a day: one read per monotonic second throughout.
    #[test]
    fn wall_clock_steps_leave_the_rate_unchanged() {
        let mut wall = 1_795_600_000 * S + 300 * MS;
        let mut mono = 50 * S;
        let mut anchor = Anchor::new(wall, mono);
        let mut s = Schedule::default();
        s.set(0, Some((S, 0)), anchor.now(mono));
        let mut reads = Vec::new();
        let step = 10 * MS;
        for tick in 0..3000u64 {
            mono += step;
            wall += step;
            if tick == 1000 {
                wall -= 3600 * S + 250 * MS;
            }
            if tick == 2000 {
                wall += 86_400 * S + 400 * MS;
            }
            if let Some(d) = anchor.follow(wall, mono) {
                assert!(d.abs() >= 3600 * i128::from(S));
                s.shift(d);
            }
            let now = anchor.now(mono);
            if s.due(now) != 0 {
                reads.push(mono);
                s.advance(1, now);
            }
            // The wait ends at the next due time, in monotonic terms.
            let next = anchor.to_mono(s.next_deadline().unwrap());
            assert!(next > mono && next <= mono + S, "tick {tick}");
        }
        // 30 s of monotonic time: 30 reads (one more where a step moved
        // the alignment), never two further apart than a second, and
        // closer only once per step.
        assert!((30..=32).contains(&reads.len()), "{}", reads.len());
        let gaps: Vec<u64> = reads.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|g| *g <= 1010 * MS), "{gaps:?}");
        assert!(
            gaps.iter().filter(|g| **g < 990 * MS).count() <= 2,
            "{gaps:?}"
        );
        // Small slews move nothing.
        assert_eq!(anchor.follow(wall + 5 * MS, mono), None);
    }
}
