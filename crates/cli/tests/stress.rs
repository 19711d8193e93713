//! The history store under twenty kill -9s at random moments: a target of
//! its own (about a minute), so a run of the store's other tests stays
//! quick; the whole suite runs it.

mod common;

use std::time::Duration;

use common::store::*;
use store::History;

/// A small generator, seeded from the clock; the seed is printed so a
/// failure can be replayed.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn kill_9_at_random_moments_loses_at_most_the_sample_being_taken() {
    let (_d, store, shm) = dirs();
    let seed = now_ms();
    eprintln!("seed {seed}");
    let mut rng = Rng(seed);
    let mut runs = Vec::new();
    for i in 0..20 {
        // Half the runs flush every 150 ms, so kills land inside SQLite
        // transactions; the others hold everything in the journal.
        let flush = if i % 2 == 0 { "150ms" } else { "15s" };
        let mut a = recorder(&store, &shm, flush, "");
        let started = now_ms();
        std::thread::sleep(Duration::from_millis(300 + rng.below(2200)));
        let killed = now_ms();
        a.proc.signal(libc::SIGKILL);
        assert!(a.proc.wait(Duration::from_secs(10)).is_some());
        runs.push((started, killed));
    }
    // A clean start and stop writes what the last kill left in the journal.
    let a = recorder(&store, &shm, "15s", "");
    assert!(recording_becomes(&a, 1.0, Duration::from_secs(20)));
    let log = stop(a);
    assert!(!log.iter().any(|l| l.contains("damaged")), "{log:#?}");
    let times = stat_times(&store);
    for (i, (started, killed)) in runs.iter().enumerate() {
        let mine: Vec<u64> = times
            .iter()
            .copied()
            .filter(|t| *t + 1000 >= *started && *t <= *killed)
            .collect();
        let last = *mine
            .last()
            .unwrap_or_else(|| panic!("run {i} (seed {seed}): no sample kept"));
        // Samples every second: the one the kill interrupted may be lost,
        // none before it.
        assert!(
            killed - last <= 1600,
            "run {i} (seed {seed}): last sample kept {} ms before the kill",
            killed - last
        );
        for w in mine.windows(2) {
            assert!(
                w[1] - w[0] <= 1600,
                "run {i} (seed {seed}): a sample missing between {} and {}",
                w[0],
                w[1]
            );
        }
    }
    // Every restart after a kill is a recorded gap, not interpolated over.
    let h = History::open(&store).unwrap();
    assert!(!h.gaps(0, u64::MAX).unwrap().is_empty());
}
