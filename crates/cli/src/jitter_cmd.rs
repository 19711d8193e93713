//! `quietstat jitter`: timer latency on one CPU, alone and beside a command.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context, bail};
use probe::jitter::{self, Options, Run, Summary};
use sys::child::Guard;

use crate::Format;

#[derive(clap::Args)]
pub struct Args {
    /// CPU to measure on.
    #[arg(long, default_value_t = 1, value_name = "N")]
    cpu: u32,
    /// Time between wakeups.
    #[arg(long, value_parser = crate::parse_duration, default_value = "1ms", value_name = "D")]
    interval: Duration,
    /// How long each run measures.
    #[arg(long, value_parser = crate::parse_duration, default_value = "10s", value_name = "D")]
    duration: Duration,
    /// SCHED_FIFO priority (0: SCHED_OTHER).
    #[arg(long, default_value_t = 95, value_name = "P")]
    priority: i32,
    /// Write both runs' histograms as a picture: SVG or PNG, by the name's
    /// extension.
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    histogram: Option<PathBuf>,
    /// Hold this CPU wakeup latency (us) on /dev/cpu_dma_latency while
    /// measuring, as cyclictest does (its --latency, default 0): idle CPUs
    /// then stay out of deep sleep states.
    #[arg(long, default_value_t = 0, value_name = "US")]
    dma_latency: i32,
    /// Leave /dev/cpu_dma_latency alone (cyclictest's --laptop).
    #[arg(long)]
    laptop: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// With COMMAND: how long it runs before the second measurement starts.
    #[arg(long, value_parser = crate::parse_duration, default_value = "2s", value_name = "D")]
    settle: Duration,
    /// Measure alone, then while COMMAND runs (stopped afterwards).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let o = Options {
        cpu: args.cpu,
        interval: args.interval,
        duration: args.duration,
        priority: args.priority,
    };
    jitter::validate(&o).map_err(anyhow::Error::msg)?;
    let png = match args
        .histogram
        .as_ref()
        .map(|p| (p, p.extension().and_then(|e| e.to_str())))
    {
        Some((_, Some("png"))) => true,
        Some((_, Some("svg"))) | None => false,
        Some((p, _)) => bail!(
            "--histogram {}: the picture's format comes from the name; accepted: *.svg, *.png",
            p.display()
        ),
    };
    if args.dma_latency < 0 {
        bail!(
            "--dma-latency {}: accepted 0 or more microseconds (or --laptop)",
            args.dma_latency
        );
    }
    // Held (the file open) until both runs are done.
    let dma = if args.laptop {
        None
    } else {
        match jitter::hold_dma_latency(args.dma_latency) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!(
                    "quietstat: CPU wakeup latency not held ({e}): deep idle states may show as latency"
                );
                None
            }
        }
    };
    let mut runs = vec![jitter::measure(&o, "alone").map_err(anyhow::Error::msg)?];
    if !runs[0].fifo && args.priority > 0 {
        eprintln!(
            "quietstat: SCHED_FIFO {} not permitted (needs root or CAP_SYS_NICE): measured at SCHED_OTHER",
            args.priority
        );
    }
    if !runs[0].locked {
        eprintln!(
            "quietstat: memory not locked (mlockall refused): page faults may show as latency"
        );
    }
    if let Some((prog, rest)) = args.command.split_first() {
        let label = format!("with {}", args.command.join(" "));
        let mut child = Guard(
            Command::new(prog)
                .args(rest)
                .spawn()
                .with_context(|| format!("starting {prog}"))?,
        );
        std::thread::sleep(args.settle);
        if let Ok(Some(status)) = child.0.try_wait() {
            bail!("{prog} exited ({status}) before the second run; it must keep running");
        }
        runs.push(jitter::measure(&o, &label).map_err(anyhow::Error::msg)?);
        drop(child);
    }
    if let Some(p) = &args.histogram {
        let title = format!(
            "Timer latency on CPU {}: every {:?} for {:?}, {}",
            args.cpu,
            args.interval,
            args.duration,
            if runs[0].fifo {
                format!("SCHED_FIFO {}", args.priority)
            } else {
                "SCHED_OTHER".into()
            }
        );
        let series: Vec<probe::svg::Series<'_>> = runs
            .iter()
            .map(|r| probe::svg::Series {
                label: &r.label,
                hist: &r.histogram,
            })
            .collect();
        let bytes = if png {
            probe::png::render(&title, &series).map_err(anyhow::Error::msg)?
        } else {
            probe::svg::render(&title, &series).into_bytes()
        };
        std::fs::write(p, bytes).with_context(|| format!("writing {}", p.display()))?;
    }
    let dma_held = dma.is_some();
    drop(dma);
    print(args, &runs, dma_held)?;
    Ok(ExitCode::SUCCESS)
}

fn print(args: &Args, runs: &[Run], dma_held: bool) -> anyhow::Result<()> {
    let sums: Vec<Summary> = runs.iter().map(Run::summary).collect();
    match args.format {
        Format::Json => {
            let v = serde_json::json!({
                "cpu": args.cpu,
                "interval_us": args.interval.as_micros() as u64,
                "duration_s": args.duration.as_secs_f64(),
                "priority": args.priority,
                "fifo": runs[0].fifo,
                "memory_locked": runs[0].locked,
                "dma_latency_us": dma_held.then_some(args.dma_latency),
                "runs": runs.iter().zip(&sums).map(|(r, s)| serde_json::json!({
                    "label": r.label, "overruns": r.overruns, "steal_ms": r.steal_ms,
                    "summary": s,
                })).collect::<Vec<_>>(),
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Table => {
            type Get = fn(&Summary) -> f64;
            let rows: [(&str, Get); 9] = [
                ("samples", |s| s.samples as f64),
                ("min us", |s| s.min_us),
                ("avg us", |s| s.avg_us),
                ("p50 us", |s| s.p50_us),
                ("p99 us", |s| s.p99_us),
                ("p99.9 us", |s| s.p999_us),
                ("max us", |s| s.max_us),
                ("> 50 us", |s| s.over_50us as f64),
                ("> 100 us", |s| s.over_100us as f64),
            ];
            print!("{:<10} {:>12}", "", "alone");
            if sums.len() > 1 {
                print!(" {:>12} {:>12}", "with command", "difference");
            }
            println!();
            for (name, get) in rows {
                print!("{name:<10} {:>12.1}", get(&sums[0]));
                if let Some(w) = sums.get(1) {
                    print!(" {:>12.1} {:>+12.1}", get(w), get(w) - get(&sums[0]));
                }
                println!();
            }
            // Host steal is not the guest's doing: shown so that a run
            // disturbed by the hypervisor is recognised as such.
            let steal = |r: &Run| r.steal_ms.map_or("-".into(), |ms| ms.to_string());
            print!("{:<10} {:>12}", "steal ms", steal(&runs[0]));
            if let Some(w) = runs.get(1) {
                print!(" {:>12}", steal(w));
            }
            println!();
        }
    }
    Ok(())
}
