//! `quietstat noise`: what interrupts a set of CPUs, and who caused it.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use probe::noise::{self, Options, Report};
use procfs::cpu::CpuList;

use crate::Format;

#[derive(clap::Args)]
pub struct Args {
    /// CPUs to watch (default: the isolated and nohz_full CPUs).
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// How long to count.
    #[arg(long, value_parser = crate::parse_duration, default_value = "10s", value_name = "D")]
    duration: Duration,
    /// Also report what this process caused on those CPUs.
    #[arg(long, value_name = "PID")]
    pid: Option<u32>,
    /// How to count: BPF programs on the tracepoints, or the kernel's trace
    /// events in a private tracefs instance (no BPF needed); auto takes BPF
    /// when it loads.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Rows per cause in the table (all in JSON).
    #[arg(long, default_value_t = 8, value_name = "N")]
    top: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum BackendArg {
    Auto,
    Bpf,
    Tracefs,
}

pub fn run(sys_root: &std::path::Path, args: &Args) -> anyhow::Result<ExitCode> {
    let cpus = match &args.cpus {
        Some(l) => CpuList::parse(l).map_err(|e| {
            anyhow::anyhow!("--cpus {l:?}: {e}; write a CPU list such as 1 or 2-3,8")
        })?,
        None => {
            let topo = procfs::Reader::new("/proc", sys_root).read_topology();
            if let Some(note) = topo.notes.first() {
                bail!("reading the CPU topology: {note}; name the CPUs to watch with --cpus");
            }
            let reserved = topo.online.minus(&topo.housekeeping());
            if reserved.is_empty() {
                bail!("no CPU is isolated or nohz_full here; name the CPUs to watch with --cpus");
            }
            reserved
        }
    };
    if let Some(pid) = args.pid
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
    {
        bail!("--pid {pid}: no such process");
    }
    let report = noise::measure(&Options {
        cpus,
        duration: args.duration,
        pid: args.pid,
        backend: match args.backend {
            BackendArg::Auto => noise::Backend::Auto,
            BackendArg::Bpf => noise::Backend::Bpf,
            BackendArg::Tracefs => noise::Backend::Tracefs,
        },
    })?;
    if let Some(why) = &report.fallback {
        eprintln!("quietstat: counted with tracefs: BPF did not load: {why}");
    }
    if report.lost_events > 0 {
        eprintln!(
            "quietstat: the trace buffers dropped {} events: counts are short by at most that many",
            report.lost_events
        );
    }
    if let Some(p) = report.pid.as_ref().filter(|p| !p.alive_whole_window) {
        eprintln!(
            "quietstat: --pid {} ended during the window: its counts cover only part of it",
            p.pid
        );
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Table => print_table(&report, args.top),
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(r: &Report, top: usize) {
    println!(
        "CPUs {} for {:.1} s (counted with {})",
        r.cpus, r.duration_s, r.backend
    );
    let mut groups: Vec<(&str, &str)> = r.causes.iter().map(|c| (c.kind, c.by)).collect();
    groups.dedup();
    for (kind, by) in groups {
        let rows: Vec<_> = r
            .causes
            .iter()
            .filter(|c| c.kind == kind && c.by == by)
            .collect();
        let total: u64 = rows.iter().map(|c| c.count).sum();
        println!("\n{kind} by {by}: {total}");
        let mut rows = rows;
        rows.sort_by_key(|c| std::cmp::Reverse(c.count));
        for c in rows.iter().take(top) {
            let time = match (c.total_us, c.max_us) {
                (Some(t), Some(m)) => format!("{t:>12.1} us total {m:>9.1} us max"),
                _ => String::new(),
            };
            println!("  cpu {:<4} {:>9}  {:<44} {time}", c.cpu, c.count, c.what);
        }
        if rows.len() > top {
            println!("  ... {} more", rows.len() - top);
        }
    }
    if let Some(p) = &r.pid {
        println!(
            "\npid {} ({}): IPIs sent to these CPUs {}, wakeups caused there {}, switched in there {} times, ran there {:.1} us",
            p.pid, p.comm, p.ipis_sent, p.wakeups_caused, p.switches_in, p.runtime_us
        );
        if !p.alive_whole_window {
            println!("  (it ended during the window: these counts cover only part of it)");
        }
        for (site, n) in &p.ipi_sites {
            println!("  IPI from {site}: {n}");
        }
        for (task, n) in &p.woke {
            println!("  woke {task}: {n}");
        }
    }
    if !r.unavailable.is_empty() {
        println!(
            "\nnot counted (tracepoint missing on this kernel): {}",
            r.unavailable.join("; ")
        );
    }
}

#[derive(clap::Args)]
pub struct HelperArgs {
    #[arg(long, default_value_t = 0)]
    from: u32,
    #[arg(long, default_value_t = 1)]
    target: u32,
    #[arg(long, value_parser = crate::parse_duration, default_value = "5s")]
    duration: Duration,
    /// Instead of membarrier: read this file every millisecond on --from.
    #[arg(long, value_name = "PATH")]
    read: Option<std::path::PathBuf>,
}

/// `quietstat noise-helper`: sends membarrier IPIs from one CPU to another.
pub fn run_helper(args: &HelperArgs) -> anyhow::Result<ExitCode> {
    let n = match &args.read {
        Some(p) => noise::read_loop(args.from, p, args.duration),
        None => noise::noisy_helper(args.from, args.target, args.duration),
    }
    .map_err(anyhow::Error::msg)?;
    println!("{n}");
    Ok(ExitCode::SUCCESS)
}
