//! The overhead budget on sources whose cost hovers about their shares:
//! each is slowed at most once, and held. In a test binary of its own, so
//! that no other test of the suite (an agent, a Prometheus) runs on the
//! same two CPUs while it measures: its first second measures what the
//! five sources cost, and the rest expects those costs to hover. They do
//! not always: beside one CPU-bound neighbour the cost per read of four of
//! them rose about 2.5x once they were read every 30 ms instead of every
//! 10 ms (stat 52 to 133 us, interrupts 86 to 202 us), the five took 1.28x
//! the budget after their first slowing, and the budget slowed them again,
//! as it must past its hold's tolerance (1.25x). So a second slowing is
//! allowed, and checked to have come only past that tolerance.

mod common;

use std::time::{Duration, Instant};

use agent::budget::HOLD_TOLERANCE;
use common::agent::*;
use common::exposition::*;

fn scrape(a: &Agent) -> Series {
    let r = get(a.addr, "/metrics", None);
    assert_eq!(r.status, 200, "{}", r.body);
    parse_exposition(&r.body).0
}

#[test]
fn sources_hovering_at_the_budget_are_slowed_once_and_held() {
    // Five sources every 10 ms, alone. Their cost per read wanders from
    // read to read (and rises as they are read less often: colder
    // caches). First measured with no budget; then the budget is set to
    // 70% of what they cost, so that it is over on any machine and their
    // costs hover about their shares, as costs do on a busy machine. Each
    // is slowed once, and held unless the total went past the hold's
    // tolerance.
    const SOURCES: [&str; 5] = ["stat", "interrupts", "softirqs", "meminfo", "vmstat"];
    let config = |budget: f64| {
        let mut c = format!("overhead_budget_pct = {budget:.4}\n");
        for s in SOURCES {
            c += &format!("[sources.{s}]\ninterval = \"10ms\"\nmax_age = \"1s\"\n");
        }
        c
    };
    let mut args = vec!["--backend", "procfs", "--collector.disable-defaults"];
    for s in SOURCES {
        args.extend(["--enable-collector", s]);
    }
    let a = agent(&config(0.0), &args);
    // CPU seconds spent reading (what the budget counts), and reads
    // made, by the five.
    let spent = |s: &Series| -> (f64, f64) {
        let mut secs = 0.0;
        let mut reads = 0.0;
        for src in SOURCES {
            let l = [("source", src)];
            secs += value(s, "quietstat_source_cpu_seconds_total", &l).unwrap();
            reads += value(s, "quietstat_source_reads_total", &l).unwrap();
        }
        (secs, reads)
    };
    std::thread::sleep(Duration::from_millis(500));
    let (s0, r0) = spent(&scrape(&a));
    std::thread::sleep(Duration::from_secs(1));
    let (s1, r1) = spent(&scrape(&a));
    assert!(r1 - r0 >= 250.0, "{} reads in 1 s", r1 - r0);
    // All five every 10 ms: CPU seconds per second.
    let per_s = (s1 - s0) / (r1 - r0) * SOURCES.len() as f64 * 100.0;
    let budget = (per_s * 100.0 * 0.7).max(0.01);
    std::fs::write(a.dir.path().join("agent.toml"), config(budget)).unwrap();
    a.proc.signal(libc::SIGHUP);
    let end = Instant::now() + Duration::from_secs(10);
    while !a
        .log
        .recv_timeout(Duration::from_millis(100))
        .is_ok_and(|l| l.contains("configuration reloaded"))
    {
        assert!(Instant::now() < end, "not reloaded");
    }
    let mut lines = Vec::new();
    let end = Instant::now() + Duration::from_secs(4);
    while Instant::now() < end {
        if let Ok(l) = a.log.recv_timeout(Duration::from_millis(100)) {
            lines.push(l);
        }
    }
    let said = |src: &str| -> Vec<&String> {
        let head = format!("quietstat agent: {src}:");
        lines.iter().filter(|l| l.starts_with(&head)).collect()
    };
    let counts: Vec<usize> = SOURCES.iter().map(|src| said(src).len()).collect();
    assert!(
        counts.iter().sum::<usize>() >= 1,
        "the budget ({budget:.4}% of a CPU, 70% of what the five cost) slowed nothing: {lines:#?}"
    );
    // Held: a source slowed again within its hold is one the budget could
    // not be kept without: at that decision all five would have taken
    // more than a quarter over it. Costs that hover never get there (each
    // slowed source's share holds half again its cost); costs per read that
    // rise past that at the longer interval (on a CPU shared with a busy
    // neighbour they have risen 2.5x) do, and then a second
    // slowing is what the budget is for.
    for src in SOURCES {
        for (n, l) in said(src).into_iter().enumerate() {
            let (total, budget_us) =
                over_figures(l).unwrap_or_else(|| panic!("{src} slowed not over the budget: {l}"));
            let tolerance = if n == 0 { 1.0 } else { HOLD_TOLERANCE };
            assert!(
                total + 1.0 > budget_us * tolerance,
                "{src}'s slowing number {} came at {total} us/s, within {tolerance}x the budget of {budget_us} us/s: {lines:#?}",
                n + 1
            );
        }
    }
}

/// The figures of a slowing's log line: what all sources would take and
/// the budget, us/s.
fn over_figures(line: &str) -> Option<(f64, f64)> {
    let rest = line.split("all sources would take ").nth(1)?;
    let (total, rest) = rest.split_once(" us/s, over the overhead budget of ")?;
    let (budget, _) = rest.split_once(" us/s")?;
    Some((total.parse().ok()?, budget.parse().ok()?))
}
