//! `quietstat bench procfs`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use bench::procfs_cost::{self, Comparison, Options, Report};
use report::table::Align;

use crate::{Format, print_rows};

#[derive(clap::Args)]
pub struct ProcfsArgs {
    /// Sources to measure, comma-separated names below the proc root
    /// (default: every one present).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    files: Vec<String>,
    /// Reads per file and method (default: a day of 10-second samples).
    #[arg(long, default_value_t = procfs_cost::DEFAULT_READS, value_name = "N")]
    reads: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write the result as JSON to FILE (for a later --baseline).
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// Compare with a saved result; exit 3 if any file's read cost grew more than 2x.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
}

pub fn run_procfs(
    proc_root: &Path,
    sys_root: &Path,
    args: &ProcfsArgs,
) -> anyhow::Result<ExitCode> {
    let files = args
        .files
        .iter()
        .map(|name| {
            procfs::Source::from_name(name.trim()).with_context(|| {
                format!(
                    "--files: unknown source `{name}`; accepted: {}",
                    procfs::Source::names()
                )
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if args.reads == 0 {
        bail!("--reads must be at least 1");
    }
    let baseline: Option<Report> = match &args.baseline {
        Some(p) => {
            // A saved report is a few kilobytes; 16 MiB is far beyond any.
            let text = sys::file::read_text_capped(p, 16 << 20)
                .with_context(|| format!("reading baseline {}", p.display()))?;
            Some(serde_json::from_str(&text).with_context(|| {
                format!(
                    "{}: not a result saved by `quietstat bench procfs --save`",
                    p.display()
                )
            })?)
        }
        None => None,
    };
    let opts = Options {
        proc_root: proc_root.to_path_buf(),
        sys_root: sys_root.to_path_buf(),
        files,
        reads: args.reads,
    };
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(1);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} reading {pos}/{len} [{bar:40}] {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        Some(b)
    } else {
        None
    };
    let report = procfs_cost::run(&opts, &mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(path) = &args.save {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    let comparisons = baseline.as_ref().map(|b| procfs_cost::compare(&report, b));
    match args.format {
        Format::Json => {
            let v = serde_json::json!({ "report": report, "comparison": comparisons });
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Table => print_table(&report, comparisons.as_deref()),
    }
    let regressed = comparisons.iter().flatten().any(|c| c.regressed);
    Ok(if regressed {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_table(r: &Report, cmp: Option<&[Comparison]>) {
    println!(
        "{} reads per file and method; kernel {}, {} online CPUs, root {}",
        r.context.reads, r.context.kernel, r.context.online_cpus, r.context.proc_root
    );
    let mut columns = vec![
        "file",
        "bytes",
        "o/r/c med",
        "p99",
        "pread med",
        "p99",
        "parse med",
        "p99",
    ];
    if cmp.is_some() {
        columns.extend(["x base", ""]);
    }
    let us = |v: f64| format!("{v:.2}us");
    let rows = r
        .files
        .iter()
        .map(|f| {
            let mut row = vec![
                f.file.to_string(),
                f.bytes_per_read.to_string(),
                us(f.open_read_close.median_us),
                us(f.open_read_close.p99_us),
                us(f.pread.median_us),
                us(f.pread.p99_us),
                us(f.parse.median_us),
                us(f.parse.p99_us),
            ];
            if let Some(c) = cmp.and_then(|c| c.iter().find(|c| c.file == f.file)) {
                row.push(format!("{:.2}x", c.ratio));
                row.push(if c.regressed { "REGRESSED" } else { "" }.into());
            }
            row
        })
        .collect();
    print_rows(columns, Align::Left, rows);
}

#[derive(clap::Args)]
pub struct ProctableArgs {
    /// Idle processes to spawn, one measurement per count (capped by
    /// kernel.pid_max, kernel.threads-max and available memory).
    #[arg(long, value_delimiter = ',', value_name = "N,...", default_values_t = bench::proctable_cost::DEFAULT_PROCS.to_vec())]
    procs: Vec<usize>,
    /// Snapshots per backend and count (after one warm-up).
    #[arg(long, default_value_t = bench::proctable_cost::DEFAULT_RUNS, value_name = "R")]
    runs: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_proctable(args: &ProctableArgs) -> anyhow::Result<ExitCode> {
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    if args.procs.is_empty() || args.procs.contains(&0) {
        bail!("--procs takes positive counts, e.g. 1000,8000,30000");
    }
    crate::raise_nofile_limit();
    let opts = bench::proctable_cost::Options {
        procs: args.procs.clone(),
        runs: args.runs,
    };
    let rows = bench::proctable_cost::run(&opts, &mut |msg| eprintln!("quietstat: {msg}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => print_json_lines(&rows)?,
        Format::Table => {
            print_rows(
                vec![
                    "backend",
                    "procs",
                    "rows",
                    "runs",
                    "median_ms",
                    "p99_ms",
                    "cpu_ms",
                    "ms/1000",
                    "vs_naive",
                ],
                Align::Left,
                rows.iter()
                    .map(|r| {
                        vec![
                            r.backend.to_string(),
                            r.procs.to_string(),
                            r.table_rows.to_string(),
                            r.runs.to_string(),
                            f3(r.median_ms),
                            f3(r.p99_ms),
                            f3(r.cpu_ms),
                            f3(r.ms_per_1000),
                            format!("{:.1}x", r.speedup_vs_naive),
                        ]
                    })
                    .collect(),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct FieldsArgs {
    /// Idle processes to spawn (capped by kernel.pid_max,
    /// kernel.threads-max and available memory).
    #[arg(long, default_value_t = bench::fields_cost::DEFAULT_PROCS, value_name = "N")]
    procs: usize,
    /// Snapshots per row (after one warm-up).
    #[arg(long, default_value_t = bench::fields_cost::DEFAULT_RUNS, value_name = "R")]
    runs: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_fields(args: &FieldsArgs) -> anyhow::Result<ExitCode> {
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    if args.procs == 0 {
        bail!("--procs takes a positive count, e.g. 8000");
    }
    let opts = bench::fields_cost::Options {
        procs: args.procs,
        runs: args.runs,
    };
    let rows = bench::fields_cost::run(&opts, &mut |msg| eprintln!("quietstat: {msg}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => print_json_lines(&rows)?,
        Format::Table => print_rows(
            vec![
                "asked",
                "rows",
                "median_ms",
                "ns/proc",
                "+ns/proc",
                "+lines",
                "lines beyond the identity's",
            ],
            Align::Left,
            rows.iter()
                .map(|r| {
                    vec![
                        r.asked.clone(),
                        r.rows.to_string(),
                        f3(r.median_ms),
                        format!("{:.0}", r.ns_per_proc),
                        format!("{:+.0}", r.extra_ns_per_proc),
                        r.extra_line_count.to_string(),
                        r.extra_lines.clone(),
                    ]
                })
                .collect(),
        ),
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct CgroupsArgs {
    /// Cgroups to make in each hierarchy (a hundred per slice).
    #[arg(long, default_value_t = bench::cgroups_cost::DEFAULT_COUNT, value_name = "N")]
    count: usize,
    /// Walks per way (after one warm-up).
    #[arg(long, default_value_t = bench::cgroups_cost::DEFAULT_RUNS, value_name = "R")]
    runs: usize,
    /// A row for each file alone, too.
    #[arg(long)]
    per_file: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_cgroups(args: &CgroupsArgs) -> anyhow::Result<ExitCode> {
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    if args.count == 0 || args.count > 1_000_000 {
        bail!("--count takes 1 to 1,000,000 cgroups, e.g. 10000");
    }
    let opts = bench::cgroups_cost::Options {
        count: args.count,
        runs: args.runs,
        per_file: args.per_file,
    };
    let rows = bench::cgroups_cost::run(&opts, &mut |msg| eprintln!("quietstat: {msg}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => print_json_lines(&rows)?,
        Format::Table => print_rows(
            vec![
                "way",
                "cgroups",
                "figures",
                "median_ms",
                "us/cgroup",
                "naive/this",
                "kept fds",
            ],
            Align::Left,
            rows.iter()
                .map(|r| {
                    vec![
                        r.method.clone(),
                        r.cgroups.to_string(),
                        r.figures.to_string(),
                        f3(r.median_ms),
                        format!("{:.2}", r.us_per_cgroup),
                        format!("{:.2}", r.naive_over_this),
                        r.kept_fds.to_string(),
                    ]
                })
                .collect(),
        ),
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct ConsumersArgs {
    /// Consumer processes per variant.
    #[arg(long, default_value_t = 10, value_name = "C")]
    consumers: usize,
    /// Reads per consumer.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    reads: u64,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_consumers(args: &ConsumersArgs) -> anyhow::Result<ExitCode> {
    if args.consumers == 0 || args.reads == 0 {
        bail!("--consumers and --reads must be at least 1");
    }
    let exe = std::env::current_exe().context("finding the quietstat binary")?;
    let opts = bench::consumers::Options {
        consumers: args.consumers,
        reads: args.reads,
        exe,
    };
    let rows = bench::consumers::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => print_json_lines(&rows)?,
        Format::Table => {
            print_rows(
                vec![
                    "variant",
                    "reads",
                    "elapsed_s",
                    "user_s",
                    "system_s",
                    "cpu_us/read",
                    "agent_s",
                    "stat_reads",
                    "stat_reads/s",
                ],
                Align::Left,
                rows.iter()
                    .map(|r| {
                        vec![
                            r.variant.to_string(),
                            r.reads_per_consumer.to_string(),
                            f3(r.elapsed_s),
                            f3(r.consumers_user_s),
                            f3(r.consumers_system_s),
                            f3(r.cpu_us_per_read),
                            f3(r.agent_cpu_s),
                            r.proc_stat_reads.to_string(),
                            format!("{:.1}", r.proc_stat_reads_per_s),
                        ]
                    })
                    .collect(),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct WorkerArgs {
    #[arg(long)]
    variant: String,
    #[arg(long)]
    reads: u64,
    #[arg(long)]
    shm_path: std::path::PathBuf,
    #[arg(long)]
    addr: std::net::SocketAddr,
}

pub fn run_worker(args: &WorkerArgs) -> anyhow::Result<ExitCode> {
    let v = bench::consumers::Variant::parse(&args.variant)
        .with_context(|| format!("unknown variant {:?}", args.variant))?;
    let r = bench::consumers::worker(v, args.reads, &args.shm_path, args.addr)
        .map_err(anyhow::Error::msg)?;
    println!("{}", serde_json::to_string(&r)?);
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct AgentArgs {
    /// Idle processes present during the measurement.
    #[arg(long, default_value_t = 8000, value_name = "N")]
    procs: usize,
    /// How long each collector is measured (after 20 s to settle).
    #[arg(long, value_parser = crate::parse_duration, default_value = "5m", value_name = "D")]
    duration: std::time::Duration,
    /// Collectors to measure, in order.
    #[arg(long, value_delimiter = ',', default_values_t = bench::agent_cost::COLLECTORS.map(String::from).to_vec())]
    collectors: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Instead: the agent beside node_exporter on this fixture tree
    /// (proc/, sys/, rootfs/), as scheduled and at equal work, each
    /// scraped --scrapes times back to back.
    #[arg(long, value_name = "DIR")]
    fixture: Option<PathBuf>,
    /// Scrapes of each collector with --fixture.
    #[arg(long, default_value_t = 20, value_name = "N", requires = "fixture")]
    scrapes: usize,
    /// More agent flags with --fixture, after `--` (e.g. `--
    /// --disable-collector interrupts`).
    #[arg(last = true, value_name = "AGENT FLAGS", requires = "fixture")]
    agent_args: Vec<String>,
}

pub fn run_agent(args: &AgentArgs) -> anyhow::Result<ExitCode> {
    if let Some(fixture) = &args.fixture {
        return run_equal_work(args, fixture);
    }
    for c in &args.collectors {
        if !bench::agent_cost::COLLECTORS.contains(&c.as_str()) {
            bail!(
                "--collectors: unknown {c:?}; accepted: {}",
                bench::agent_cost::COLLECTORS.join(", ")
            );
        }
    }
    crate::raise_nofile_limit();
    let opts = bench::agent_cost::Options {
        procs: args.procs,
        duration: args.duration,
        exe: std::env::current_exe().context("finding the quietstat binary")?,
        collectors: args.collectors.clone(),
    };
    let rows = bench::agent_cost::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => print_json_lines(&rows)?,
        Format::Table => {
            print_rows(
                vec![
                    "collector",
                    "procs",
                    "seconds",
                    "cpu_%",
                    "wakeups/s",
                    "preempted/s",
                    "rss_MiB",
                    "threads",
                    "store_MB/day",
                ],
                Align::Left,
                rows.iter()
                    .map(|r| {
                        vec![
                            r.collector.to_string(),
                            r.procs.to_string(),
                            format!("{:.0}", r.seconds),
                            f3(r.cpu_pct),
                            format!("{:.2}", r.wakeups_per_s),
                            format!("{:.2}", r.preempted_per_s),
                            format!("{:.1}", r.rss_mib),
                            r.threads.to_string(),
                            r.store_mb_per_day
                                .map_or_else(|| "-".to_string(), |m| format!("{m:.1}")),
                        ]
                    })
                    .collect(),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_equal_work(args: &AgentArgs, fixture: &Path) -> anyhow::Result<ExitCode> {
    if args.scrapes == 0 {
        bail!("--scrapes must be at least 1");
    }
    let opts = bench::equal_work::Options {
        fixture: fixture.to_path_buf(),
        scrapes: args.scrapes,
        exe: std::env::current_exe().context("finding the quietstat binary")?,
        source_keys: agent::config::AgentSource::ALL
            .iter()
            .map(|s| s.key().to_string())
            .collect(),
        agent_args: args.agent_args.clone(),
    };
    let rows = bench::equal_work::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => print_json_lines(&rows)?,
        Format::Table => {
            println!("{}, {} scrapes each", fixture.display(), args.scrapes);
            print_rows(
                vec![
                    "collector",
                    "bytes",
                    "series",
                    "cpu_ms/scrape",
                    "wall_s",
                    "rss_MiB",
                    "hwm_MiB",
                ],
                Align::Left,
                rows.iter()
                    .map(|r| {
                        vec![
                            r.collector.clone(),
                            r.bytes.to_string(),
                            r.series.to_string(),
                            format!("{:.0}", r.cpu_ms_per_scrape),
                            format!("{:.2}", r.wall_s),
                            format!("{:.1}", r.rss_mib),
                            format!("{:.1}", r.hwm_mib),
                        ]
                    })
                    .collect(),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A figure with three decimals, as the tables print most.
fn f3(v: f64) -> String {
    format!("{v:.3}")
}

/// One JSON object per row, a line each.
fn print_json_lines<T: serde::Serialize>(rows: &[T]) -> anyhow::Result<()> {
    for r in rows {
        println!("{}", serde_json::to_string(r)?);
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct IdleArgs {
    #[arg(long, default_value_t = 8000, value_name = "N")]
    procs: usize,
    #[arg(long, value_parser = crate::parse_duration, default_value = "10m", value_name = "D")]
    duration: std::time::Duration,
}

pub fn run_idle(args: &IdleArgs) -> anyhow::Result<ExitCode> {
    let idle = bench::spawn::Idle::start(args.procs).context("spawning idle processes")?;
    eprintln!(
        "quietstat: {} idle processes for {:?}",
        idle.count(),
        args.duration
    );
    std::thread::sleep(args.duration);
    drop(idle);
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct ExitsArgs {
    /// Children forked (and exiting at once) per second.
    #[arg(long, default_value_t = 5000, value_name = "N")]
    rate: u32,
    /// How long the load runs.
    #[arg(long, value_parser = crate::parse_duration, default_value = "20s", value_name = "D")]
    duration: std::time::Duration,
    /// How often the exit ring is drained (the agent's process-table
    /// interval: 5 s by default).
    #[arg(long, value_parser = crate::parse_duration, default_value = "5s", value_name = "D")]
    drain_every: std::time::Duration,
    /// Capture through taskstats (the agent's way without BPF) instead of
    /// the BPF ring buffer.
    #[arg(long)]
    taskstats: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_exits(args: &ExitsArgs) -> anyhow::Result<ExitCode> {
    if args.rate == 0 || args.duration.is_zero() || args.drain_every.is_zero() {
        bail!("--rate, --duration and --drain-every must be positive");
    }
    let opts = bench::exits::Options {
        rate: args.rate,
        duration: args.duration,
        drain_every: args.drain_every,
        exe: std::env::current_exe().context("finding the quietstat binary")?,
        taskstats: args.taskstats,
    };
    let r = bench::exits::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => print_json_lines(std::slice::from_ref(&r))?,
        Format::Table => {
            println!(
                "{}: offered {}/s for {:.1} s: forked {} ({:.0}/s), captured {} ({} with a wrong exit code), lost {}",
                r.capture,
                r.offered_per_s,
                r.seconds,
                r.forked,
                r.forked_per_s,
                r.captured,
                r.wrong_code,
                r.lost
            );
            println!(
                "drained {} exits machine-wide in {} drains (max {} in one), {:.0} ns of reader CPU per exit",
                r.drained, r.drains, r.max_per_drain, r.drain_ns_per_exit
            );
        }
    }
    Ok(
        if r.captured == r.forked && r.lost == 0 && r.wrong_code == 0 {
            ExitCode::SUCCESS
        } else {
            eprintln!("quietstat: exits were missed");
            ExitCode::from(1)
        },
    )
}

#[derive(clap::Args)]
pub struct ForkerArgs {
    #[arg(long)]
    rate: u32,
    #[arg(long)]
    duration_ms: u64,
}

pub fn run_forker(args: &ForkerArgs) -> anyhow::Result<ExitCode> {
    let n = bench::exits::forker(
        args.rate,
        std::time::Duration::from_millis(args.duration_ms),
    )
    .map_err(anyhow::Error::msg)?;
    println!("{n}");
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct StoreArgs {
    /// Processes in each recorded table.
    #[arg(long, default_value_t = 8000, value_name = "N")]
    procs: usize,
    /// Hours of history written (1 s system samples, a table every 5 s).
    #[arg(long, default_value_t = 24)]
    hours: u64,
    /// 5% of processes change every interval; 10 start and 10 end a second.
    #[arg(long)]
    churn: bool,
    /// Keep the store in this directory.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
}

pub fn run_store(args: &StoreArgs) -> anyhow::Result<ExitCode> {
    if args.hours == 0 || args.hours > 24 * 7 {
        anyhow::bail!("--hours {}: accepted: 1 to 168", args.hours);
    }
    let opts = bench::store_day::Options {
        procs: args.procs,
        hours: args.hours,
        churn: args.churn,
        exe: std::env::current_exe().context("finding the quietstat binary")?,
        keep: args.keep.clone(),
    };
    let r = bench::store_day::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    println!("{}", serde_json::to_string_pretty(&r)?);
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct ViewersArgs {
    /// Idle processes present during the measurement.
    #[arg(long, default_value_t = 8000, value_name = "N")]
    procs: usize,
    /// Rounds of the ps commands and of top's first screen, taking turns.
    #[arg(long, default_value_t = 21, value_name = "N")]
    runs: usize,
    /// How long the agent alone, then the tops, then the htops are watched.
    #[arg(long, value_parser = crate::parse_duration, default_value = "60s", value_name = "D")]
    window: std::time::Duration,
    /// How many tops (and htops) run at once.
    #[arg(long, default_value_t = 10, value_name = "N")]
    viewers: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_viewers(args: &ViewersArgs) -> anyhow::Result<ExitCode> {
    if args.runs == 0 || args.viewers == 0 {
        bail!("--runs and --viewers must be at least 1");
    }
    crate::raise_nofile_limit();
    let opts = bench::viewers::Options {
        procs: args.procs,
        runs: args.runs,
        window: args.window,
        viewers: args.viewers,
        exe: std::env::current_exe().context("finding the quietstat binary")?,
    };
    let r = bench::viewers::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string(&r)?),
        Format::Table => {
            println!("{} idle processes, an agent running (bpf)", r.procs);
            print_rows(
                vec!["whole process", "runs", "median_ms", "min_ms", "max_ms"],
                Align::Left,
                r.timings
                    .iter()
                    .map(|t| {
                        vec![
                            t.what.to_string(),
                            t.runs.to_string(),
                            format!("{:.1}", t.median_ms),
                            format!("{:.1}", t.min_ms),
                            format!("{:.1}", t.max_ms),
                        ]
                    })
                    .collect(),
            );
            println!();
            print_rows(
                vec![
                    "watching",
                    "viewers",
                    "seconds",
                    "viewer_cpu_%",
                    "agent_reads/s",
                    "agent_cpu_%",
                ],
                Align::Left,
                r.watches
                    .iter()
                    .map(|w| {
                        vec![
                            w.what.to_string(),
                            w.viewers.to_string(),
                            format!("{:.0}", w.seconds),
                            w.viewer_cpu_pct.map_or_else(|| "-".into(), f3),
                            format!("{:.2}", w.agent_reads_per_s),
                            f3(w.agent_cpu_pct),
                        ]
                    })
                    .collect(),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct ScaleArgs {
    /// Idle processes, comma-separated: one run of the agent per figure.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1000,8000,30000,64000",
        value_name = "N,..."
    )]
    procs: Vec<usize>,
    /// The window with no viewer, and the one with top.
    #[arg(long, value_parser = crate::parse_duration, default_value = "60s", value_name = "D")]
    window: std::time::Duration,
    /// Runs of each ps and of top's first screen.
    #[arg(long, default_value_t = 5, value_name = "N")]
    runs: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_scale(args: &ScaleArgs) -> anyhow::Result<ExitCode> {
    if args.runs == 0 || args.procs.is_empty() || args.procs.contains(&0) {
        bail!("--runs and every --procs figure must be at least 1");
    }
    crate::raise_nofile_limit();
    let opts = bench::scale::Options {
        procs: args.procs.clone(),
        window: args.window,
        runs: args.runs,
        exe: std::env::current_exe().context("finding the quietstat binary")?,
    };
    let rows = bench::scale::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string(&rows)?),
        Format::Table => {
            let f1 = |x: f64| format!("{x:.1}");
            let f2 = |x: f64| format!("{x:.2}");
            print_rows(
                vec![
                    "procs",
                    "agent_cpu_%",
                    "wakeups/s",
                    "rss_mib",
                    "read_ms",
                    "us/proc",
                    "interval_s",
                    "budget_lines",
                    "history_mb/day",
                    "procs_mb/day",
                    "view_unwatched",
                    "view_mb/h",
                    "ps_agent_ms",
                    "ps_bpf_ms",
                    "ps_procps_ms",
                    "top_first_ms",
                    "top_cpu_%",
                    "agent_cpu_%_top",
                    "report_ms",
                ],
                Align::Left,
                rows.iter()
                    .map(|r| {
                        vec![
                            r.procs.to_string(),
                            f3(r.agent_cpu_pct),
                            f2(r.agent_wakeups_per_s),
                            f1(r.agent_rss_mib),
                            f1(r.read_ms),
                            f3(r.read_us_per_proc),
                            f1(r.procs_interval_s),
                            r.budget_lines.to_string(),
                            f1(r.history_mb_per_day),
                            f1(r.history_procs_mb_per_day),
                            if r.view_written_unwatched {
                                "written"
                            } else {
                                "no"
                            }
                            .into(),
                            f1(r.view_mb_per_hour_watched),
                            f1(r.ps_agent_ms),
                            f1(r.ps_bpf_ms),
                            f1(r.ps_procps_ms),
                            f1(r.top_first_screen_ms),
                            f3(r.top_cpu_pct),
                            f3(r.agent_cpu_pct_top),
                            f1(r.report_ms),
                        ]
                    })
                    .collect(),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct QuietArgs {
    /// How long both run side by side, scraped every --interval.
    #[arg(long, value_parser = crate::parse_duration, default_value = "5m", value_name = "D")]
    duration: std::time::Duration,
    /// Every source's interval in the agent, and how often both are
    /// scraped.
    #[arg(long, value_parser = crate::parse_duration, default_value = "15s", value_name = "D")]
    interval: std::time::Duration,
    /// Scrapes of each, back to back, counted one by one.
    #[arg(long, default_value_t = 20, value_name = "N")]
    scrapes: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_quiet(args: &QuietArgs) -> anyhow::Result<ExitCode> {
    if args.scrapes == 0 || args.interval.is_zero() || args.duration < args.interval {
        bail!("--scrapes must be at least 1, and --duration at least one --interval (not 0)");
    }
    let opts = bench::quiet::Options {
        duration: args.duration,
        interval: args.interval,
        scrapes: args.scrapes,
        exe: std::env::current_exe().context("finding the quietstat binary")?,
    };
    let rows = bench::quiet::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string(&rows)?),
        Format::Table => {
            print_rows(
                vec![
                    "collector",
                    "cpu_%",
                    "wakeups/s",
                    "by thread (wakeups/s)",
                    "rss_mib",
                    "bytes",
                    "switches/scrape (median, max)",
                    "cpu_ms/scrape",
                ],
                Align::Left,
                rows.iter()
                    .map(|r| {
                        vec![
                            r.collector.clone(),
                            format!("{:.4}", r.cpu_pct),
                            format!("{:.3}", r.wakeups_per_s),
                            r.threads
                                .iter()
                                .filter(|(_, w)| **w > 0.0)
                                .map(|(n, w)| format!("{n} {w:.3}"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            format!("{:.1}", r.rss_mib),
                            r.answer_bytes.to_string(),
                            format!("{:.0}, {}", r.scrape_switches_median, r.scrape_switches_max),
                            format!("{:.2}", r.scrape_cpu_ms_median),
                        ]
                    })
                    .collect(),
            );
            if let [a, n] = rows.as_slice() {
                let ratio = |x: f64, y: f64| if y > 0.0 { x / y } else { f64::NAN };
                println!(
                    "agent / node_exporter: CPU {:.2}x, wakeups {:.3}x, RSS {:.2}x, switches a scrape {:.3}x",
                    ratio(a.cpu_pct, n.cpu_pct),
                    ratio(a.wakeups_per_s, n.wakeups_per_s),
                    ratio(a.rss_mib, n.rss_mib),
                    ratio(a.scrape_switches_median, n.scrape_switches_median),
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
