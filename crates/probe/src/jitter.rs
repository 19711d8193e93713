//! A cyclictest-style timer-latency probe. One thread, pinned to the CPU
//! under test, SCHED_FIFO when permitted, memory locked, sleeps with
//! `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` to deadlines spaced by
//! the interval and records how late it woke (now minus deadline) into a
//! preallocated HDR histogram: no I/O and no allocation in the loop.

use std::time::Duration;
use sys::Error;

use hdrhistogram::Histogram;
use serde::Serialize;

#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub cpu: u32,
    pub interval: Duration,
    pub duration: Duration,
    /// SCHED_FIFO priority (1-99); 0 for SCHED_OTHER.
    pub priority: i32,
}

/// One measurement.
#[derive(Debug, Clone)]
pub struct Run {
    pub label: String,
    /// Latencies in nanoseconds.
    pub histogram: Histogram<u64>,
    /// Whether the thread ran SCHED_FIFO at the asked priority.
    pub fifo: bool,
    /// Whether memory was locked.
    pub locked: bool,
    /// Deadlines already past when the thread got to them (overruns).
    pub overruns: u64,
    /// Time the hypervisor ran something else while this CPU wanted to run
    /// (the `steal` column of its /proc/stat row) during the run, in
    /// milliseconds at clock-tick resolution; `None` when not readable. On a
    /// virtual machine this is the host's share of the latencies.
    pub steal_ms: Option<u64>,
}

/// The figures of a run, in microseconds.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Summary {
    pub samples: u64,
    pub min_us: f64,
    pub avg_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub over_50us: u64,
    pub over_100us: u64,
}

/// Latencies above this are clamped (the histogram's range).
const MAX_NS: u64 = 10_000_000_000;

impl Run {
    pub fn summary(&self) -> Summary {
        let h = &self.histogram;
        let us = |ns: u64| ns as f64 / 1e3;
        Summary {
            samples: h.len(),
            min_us: us(h.min()),
            avg_us: h.mean() / 1e3,
            p50_us: us(h.value_at_quantile(0.5)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            max_us: us(h.max()),
            over_50us: h.len() - h.count_between(0, 50_000),
            over_100us: h.len() - h.count_between(0, 100_000),
        }
    }
}

fn sleep_until(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // EINTR: the loop records the (early) wakeup's lateness as zero and
    // moves on, as cyclictest does.
    // SAFETY: a valid timespec; no remainder needed with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// Holds a CPU-wakeup-latency request of `us` microseconds on
/// /dev/cpu_dma_latency (PM QoS) for as long as the file stays open, as
/// cyclictest does by default (`--latency`, 0 unless `--laptop`): with 0,
/// idle CPUs stay out of deep sleep states, whose exit latency would
/// otherwise be part of every measurement. Needs root.
pub fn hold_dma_latency(us: i32) -> Result<std::fs::File, Error> {
    use std::io::Write as _;
    let path = "/dev/cpu_dma_latency";
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    f.write_all(&us.to_ne_bytes())
        .map_err(|e| Error::io(path, e))?;
    Ok(f)
}

/// Checks the options: the CPU exists and is online, the interval and
/// priority are in range.
pub fn validate(o: &Options) -> Result<(), Error> {
    let online = crate::online_cpus().unwrap_or_default();
    if !online.contains(o.cpu) {
        return Err(Error::invalid(format!(
            "--cpu {}: not an online CPU (online: {online})",
            o.cpu
        )));
    }
    if o.interval < Duration::from_micros(50) || o.interval > Duration::from_secs(1) {
        return Err(Error::invalid(format!(
            "--interval {:?}: accepted 50us to 1s",
            o.interval
        )));
    }
    if !(0..=99).contains(&o.priority) {
        return Err(Error::invalid(format!(
            "--priority {}: accepted 0 (SCHED_OTHER) to 99",
            o.priority
        )));
    }
    if o.duration < o.interval {
        return Err(Error::invalid("--duration must be at least one interval"));
    }
    Ok(())
}

/// Measures for `o.duration` on a new thread; `label` names the run.
pub fn measure(o: &Options, label: &str) -> Result<Run, Error> {
    validate(o)?;
    let o = *o;
    let label = label.to_string();
    std::thread::Builder::new()
        .name("jitter".into())
        .spawn(move || run_on_this_thread(&o, label))
        .map_err(|e| Error::io("starting the probe thread", e))?
        .join()
        .map_err(|_| Error::other("the probe thread panicked"))?
}

fn run_on_this_thread(o: &Options, label: String) -> Result<Run, Error> {
    crate::pin_to(o.cpu)?;
    let fifo = o.priority > 0 && {
        let p = libc::sched_param {
            sched_priority: o.priority,
        };
        // SAFETY: a valid sched_param for this thread.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
    };
    // SAFETY: locks this process's pages; failure is reported, not fatal.
    let locked = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) == 0 };
    let mut h = Histogram::<u64>::new_with_bounds(1, MAX_NS, 3)
        .map_err(|e| Error::other(format!("histogram: {e}")))?;
    h.auto(false);
    let interval = o.interval.as_nanos() as u64;
    let mut overruns = 0;
    // Read before the first deadline is set: reading and parsing /proc/stat
    // allocates and takes time the first sleep should not pay.
    let steal_before = steal_ticks(o.cpu);
    let mut next = sys::mono_ns() + interval;
    // Touch the loop's code and stack once before measuring.
    sleep_until(next);
    next += interval;
    // Deadlines within the duration, as cyclictest's --duration: a run
    // with overruns records fewer samples, it does not run longer.
    let end = next + o.duration.as_nanos() as u64;
    while next < end {
        sleep_until(next);
        let woke = sys::mono_ns();
        let late = woke.saturating_sub(next).clamp(1, MAX_NS);
        // In range by construction: record cannot fail.
        let _ = h.record(late);
        let (n, missed) = next_deadline(next, woke, interval, end);
        next = n;
        overruns += missed;
    }
    let steal_ms = steal_before
        .zip(steal_ticks(o.cpu))
        .map(|(a, b)| b.saturating_sub(a) * 1000 / procfs::stat::USER_HZ);
    if locked {
        // SAFETY: undoes mlockall for this process; no preconditions.
        unsafe { libc::munlockall() };
    }
    Ok(Run {
        label,
        histogram: h,
        fifo,
        locked,
        overruns,
        steal_ms,
    })
}

/// After waking at `woke` for the deadline `next`: the next deadline on the
/// grid still ahead, and how many deadlines were missed on the way (only
/// those before `end`: a stall at the end of the run must not count
/// deadlines after it).
fn next_deadline(next: u64, woke: u64, interval: u64, end: u64) -> (u64, u64) {
    let next = next + interval;
    if next > woke {
        return (next, 0);
    }
    let missed = (woke - next) / interval + 1;
    let counted = missed.min(end.saturating_sub(next).div_ceil(interval));
    (next + missed * interval, counted)
}

/// The steal ticks of `cpu` in /proc/stat so far.
fn steal_ticks(cpu: u32) -> Option<u64> {
    let text = std::fs::read("/proc/stat").ok()?;
    let stat = procfs::stat::parse(&text).ok()?;
    let row = stat.cpus.iter().find(|c| c.cpu == cpu)?;
    row.times.ticks(procfs::stat::CpuMode::Steal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_run_records_every_deadline() {
        let o = Options {
            cpu: 0,
            interval: Duration::from_millis(1),
            duration: Duration::from_millis(200),
            priority: 0,
        };
        let r = measure(&o, "t").unwrap();
        let s = r.summary();
        // Every deadline of the 200 ms window is measured or counted as
        // overrun, none beyond it.
        assert_eq!(s.samples + r.overruns, 200);
        assert!(s.samples > 0);
        assert!(s.min_us > 0.0 && s.min_us <= s.p50_us && s.p50_us <= s.max_us);
        assert!(s.over_100us <= s.over_50us && s.over_50us <= s.samples);
    }

    #[test]
    fn missed_deadlines_are_counted_up_to_the_end_only() {
        // On time: the next one, nothing missed.
        assert_eq!(next_deadline(100, 101, 10, 1000), (110, 0));
        // Woke 25 late: 110 and 120 missed, 130 is next.
        assert_eq!(next_deadline(100, 125, 10, 1000), (130, 2));
        // A stall across the end: 990 is the last deadline that counts.
        assert_eq!(next_deadline(970, 1035, 10, 1000), (1040, 2));
        assert_eq!(next_deadline(990, 1100, 10, 1000), (1110, 0));
    }

    #[test]
    fn bad_options_are_named() {
        let mut o = Options {
            cpu: 4096,
            interval: Duration::from_millis(1),
            duration: Duration::from_secs(1),
            priority: 0,
        };
        assert!(validate(&o).unwrap_err().to_string().contains("--cpu 4096"));
        o.cpu = 0;
        o.interval = Duration::from_micros(5);
        assert!(validate(&o).unwrap_err().to_string().contains("50us to 1s"));
        o.interval = Duration::from_millis(1);
        o.priority = 120;
        assert!(
            validate(&o)
                .unwrap_err()
                .to_string()
                .contains("0 (SCHED_OTHER) to 99")
        );
    }
}
