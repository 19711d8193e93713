//! The kernel's split of CPU time between user and system (cputime_adjust in
//! kernel/sched/cputime.c), replayed on the raw counters BPF programs read
//! (a task's, a cgroup's).
//!
//! The kernel samples utime and stime at ticks but counts the precise runtime
//! (sum_exec_runtime); /proc reports utime and stime scaled so that they add
//! up to the runtime, and never lower than what it last reported
//! (prev_cputime). Reading the same raw values and the same prev_cputime, this
//! gives what /proc would print at that instant, without taking the kernel's
//! lock or updating prev_cputime.

/// Raw counters of one task or thread group, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawCputime {
    pub utime: u64,
    pub stime: u64,
    pub runtime: u64,
    pub prev_utime: u64,
    pub prev_stime: u64,
}

/// Returns (utime, stime) in nanoseconds as /proc would report them.
pub fn adjust(raw: RawCputime) -> (u64, u64) {
    let rtime = raw.runtime;
    let (prev_u, prev_s) = (raw.prev_utime, raw.prev_stime);
    if prev_s.saturating_add(prev_u) >= rtime {
        return (prev_u, prev_s);
    }
    let mut stime = if raw.stime == 0 {
        0
    } else if raw.utime == 0 {
        rtime
    } else {
        let total = raw.stime as u128 + raw.utime as u128;
        ((raw.stime as u128 * rtime as u128 / total) as u64).min(rtime)
    };
    if stime < prev_s {
        stime = prev_s;
    }
    let mut utime = rtime - stime;
    if utime < prev_u {
        utime = prev_u;
        stime = rtime.saturating_sub(utime);
    }
    (utime, stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(utime: u64, stime: u64, runtime: u64) -> RawCputime {
        RawCputime {
            utime,
            stime,
            runtime,
            ..RawCputime::default()
        }
    }

    #[test]
    fn scales_to_runtime() {
        // 3:1 sampled split, 8 ms of precise runtime.
        assert_eq!(adjust(raw(3, 1, 8)), (6, 2));
        assert_eq!(adjust(raw(0, 5, 7)), (0, 7));
        assert_eq!(adjust(raw(5, 0, 7)), (7, 0));
    }

    #[test]
    fn never_below_what_was_reported() {
        let mut r = raw(1, 3, 100);
        r.prev_utime = 40;
        r.prev_stime = 50;
        // Scaled stime would be 75 and utime 25 < 40: utime holds at 40.
        assert_eq!(adjust(r), (40, 60));
        r.runtime = 80;
        assert_eq!(adjust(r), (40, 50));
    }
}
