//! `quietstat bench` on the agent and its consumers: its cost alone and
//! beside node_exporter, idle, exits, the history, viewers, scale and
//! quiet.

use super::*;

#[derive(clap::Args)]
pub struct AgentArgs {
    /// Idle processes present during the measurement.
    #[arg(long, default_value_t = 8000, value_name = "N")]
    pub(super) procs: usize,
    /// How long each collector is measured (after 20 s to settle).
    #[arg(long, value_parser = crate::parse_duration, default_value = "5m", value_name = "D")]
    pub(super) duration: std::time::Duration,
    /// Collectors to measure, in order.
    #[arg(long, value_delimiter = ',', default_values_t = bench::agent_cost::COLLECTORS.map(String::from).to_vec())]
    pub(super) collectors: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
    /// Instead: the agent beside node_exporter on this fixture tree
    /// (proc/, sys/, rootfs/), as scheduled and at equal work, each
    /// scraped --scrapes times back to back.
    #[arg(long, value_name = "DIR")]
    pub(super) fixture: Option<PathBuf>,
    /// Scrapes of each collector with --fixture.
    #[arg(long, default_value_t = 20, value_name = "N", requires = "fixture")]
    pub(super) scrapes: usize,
    /// More agent flags with --fixture, after `--` (e.g. `--
    /// --disable-collector interrupts`).
    #[arg(last = true, value_name = "AGENT FLAGS", requires = "fixture")]
    pub(super) agent_args: Vec<String>,
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
    print_bench(
        args.format,
        &rows,
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
        |r| {
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
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn run_equal_work(args: &AgentArgs, fixture: &Path) -> anyhow::Result<ExitCode> {
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

#[derive(clap::Args)]
pub struct IdleArgs {
    #[arg(long, default_value_t = 8000, value_name = "N")]
    pub(super) procs: usize,
    #[arg(long, value_parser = crate::parse_duration, default_value = "10m", value_name = "D")]
    pub(super) duration: std::time::Duration,
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
    pub(super) rate: u32,
    /// How long the load runs.
    #[arg(long, value_parser = crate::parse_duration, default_value = "20s", value_name = "D")]
    pub(super) duration: std::time::Duration,
    /// How often the exit ring is drained (the agent's process-table
    /// interval: 5 s by default).
    #[arg(long, value_parser = crate::parse_duration, default_value = "5s", value_name = "D")]
    pub(super) drain_every: std::time::Duration,
    /// Capture through taskstats (the agent's way without BPF) instead of
    /// the BPF ring buffer.
    #[arg(long)]
    pub(super) taskstats: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
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
    pub(crate) rate: u32,
    #[arg(long)]
    pub(crate) duration_ms: u64,
    /// Stop once this many are forked (the duration is then a cap): a
    /// burst of a size, however fast the machine forks
    #[arg(long)]
    pub(crate) count: Option<u64>,
}

pub fn run_forker(args: &ForkerArgs) -> anyhow::Result<ExitCode> {
    let n = bench::exits::forker(
        args.rate,
        std::time::Duration::from_millis(args.duration_ms),
        args.count,
    )
    .map_err(anyhow::Error::msg)?;
    println!("{n}");
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct StoreArgs {
    /// Processes in each recorded table.
    #[arg(long, default_value_t = 8000, value_name = "N")]
    pub(super) procs: usize,
    /// Hours of history written (1 s system samples, a table every 5 s).
    #[arg(long, default_value_t = 24)]
    pub(super) hours: u64,
    /// 5% of processes change every interval; 10 start and 10 end a second.
    #[arg(long)]
    pub(super) churn: bool,
    /// Processes a second that start and end between two tables, recorded
    /// by their exits alone (a build, a shell loop).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub(super) short_lived: u32,
    /// Keep the store in this directory.
    #[arg(long, value_name = "DIR")]
    pub(super) keep: Option<PathBuf>,
}

pub fn run_store(args: &StoreArgs) -> anyhow::Result<ExitCode> {
    if args.hours == 0 || args.hours > 24 * 7 {
        anyhow::bail!("--hours {}: accepted: 1 to 168", args.hours);
    }
    let opts = bench::store_day::Options {
        procs: args.procs,
        hours: args.hours,
        churn: args.churn,
        short_lived: args.short_lived,
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
    pub(super) procs: usize,
    /// Rounds of the ps commands and of top's first screen, taking turns.
    #[arg(long, default_value_t = 21, value_name = "N")]
    pub(super) runs: usize,
    /// How long the agent alone, then the tops, then the htops are watched.
    #[arg(long, value_parser = crate::parse_duration, default_value = "60s", value_name = "D")]
    pub(super) window: std::time::Duration,
    /// How many tops (and htops) run at once.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub(super) viewers: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
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
    pub(super) procs: Vec<usize>,
    /// The window with no viewer, and the one with top.
    #[arg(long, value_parser = crate::parse_duration, default_value = "60s", value_name = "D")]
    pub(super) window: std::time::Duration,
    /// Runs of each ps and of top's first screen.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub(super) runs: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
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
    pub(super) duration: std::time::Duration,
    /// Every source's interval in the agent, and how often both are
    /// scraped.
    #[arg(long, value_parser = crate::parse_duration, default_value = "15s", value_name = "D")]
    pub(super) interval: std::time::Duration,
    /// Scrapes of each, back to back, counted one by one.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub(super) scrapes: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
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

#[derive(clap::Args)]
pub struct PushArgs {
    /// How long both push while measured (after a 30 s warm-up).
    #[arg(long, value_parser = crate::parse_duration, default_value = "3m", value_name = "D")]
    pub(super) duration: std::time::Duration,
    /// Prometheus agent mode's scrape interval.
    #[arg(long, value_parser = crate::parse_duration, default_value = "15s", value_name = "D")]
    pub(super) scrape_interval: std::time::Duration,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
}

pub fn run_push(args: &PushArgs) -> anyhow::Result<ExitCode> {
    let opts = bench::push::Options {
        exe: std::env::current_exe().context("finding the quietstat binary")?,
        duration: args.duration,
        scrape_interval: args.scrape_interval,
    };
    let rows = bench::push::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => print_json_lines(&rows)?,
        Format::Table => {
            for r in &rows {
                println!(
                    "{}: {:.0} samples, {:.0} bytes in {:.0} s; CPU {:.0} ms ({:.2} ms per 1000 samples); {:.2} wake-ups/s; RSS {:.1} MiB",
                    r.pusher,
                    r.samples,
                    r.bytes,
                    r.seconds,
                    r.cpu_ms,
                    r.cpu_ms_per_1k_samples,
                    r.wakeups_per_s,
                    r.rss_mib
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct SystemdArgs {
    /// Units the manager is given and starts (services, a tenth sockets,
    /// a tenth timers).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub(super) units: usize,
    /// Reads by each side.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub(super) reads: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
}

pub fn run_systemd(args: &SystemdArgs) -> anyhow::Result<ExitCode> {
    let opts = bench::systemd::Options {
        units: args.units,
        reads: args.reads,
    };
    let rows = bench::systemd::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    match args.format {
        Format::Json => print_json_lines(&rows)?,
        Format::Table => {
            for r in &rows {
                println!(
                    "{}: {} units, {} served; a read: {:.1} ms median ({:.1} ms p99), CPU {:.2} ms (reader {:.2}, manager {:.2}, bus {:.2})",
                    r.reader,
                    r.units,
                    r.units_served,
                    r.wall.median_us / 1000.0,
                    r.wall.p99_us / 1000.0,
                    r.total_cpu_ms,
                    r.reader_cpu_ms,
                    r.manager_cpu_ms,
                    r.bus_cpu_ms
                );
            }
            if let [q, n] = &rows[..] {
                println!(
                    "quietstat / node_exporter: wall {:.3}x, CPU {:.3}x",
                    q.wall.median_us / n.wall.median_us,
                    q.total_cpu_ms / n.total_cpu_ms
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct SoakArgs {
    /// How long the load runs.
    #[arg(long, value_parser = crate::parse_duration, default_value = "1h", value_name = "D")]
    pub(super) duration: std::time::Duration,
    /// How often the agent is sampled.
    #[arg(long, value_parser = crate::parse_duration, default_value = "1m", value_name = "D")]
    pub(super) sample_every: std::time::Duration,
    /// Processes forked a second.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub(super) forks: u32,
    /// Cgroups made (and, ten seconds later, removed) a second.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub(super) cgroups: u32,
    /// The history's cap (`[store] max_size`, e.g. 256MiB), so that a run
    /// shorter than the default cap's fill time shows the cap kept.
    #[arg(long, value_name = "SIZE")]
    pub(super) store_max_size: Option<String>,
    /// A directory to write soak.json and soak.svg into.
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
}

pub fn run_soak(args: &SoakArgs) -> anyhow::Result<ExitCode> {
    if args.forks == 0 || args.cgroups == 0 || args.sample_every.is_zero() {
        bail!("--forks, --cgroups and --sample-every must be above 0");
    }
    if let Some(size) = &args.store_max_size
        && !size.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.')
    {
        bail!("--store-max-size {size:?}: a size such as 256MiB or 1GiB is accepted");
    }
    crate::raise_nofile_limit();
    let opts = bench::soak::Options {
        duration: args.duration,
        sample_every: args.sample_every,
        forks_per_s: args.forks,
        cgroups_per_s: args.cgroups,
        store_max_size: args.store_max_size.clone(),
        exe: std::env::current_exe().context("finding the quietstat binary")?,
        out: args.out.clone(),
    };
    let r = bench::soak::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
        .map_err(anyhow::Error::msg)?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
        std::fs::write(dir.join("soak.json"), serde_json::to_string_pretty(&r)?)?;
        let title = format!(
            "quietstat agent under churn, {:.0} minutes: {:.0} forks/s, {:.0} cgroups/s",
            r.minutes, r.rates.forks, r.rates.cgroups
        );
        std::fs::write(dir.join("soak.svg"), bench::soak::svg(&title, &r))?;
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string(&r)?),
        Format::Table => {
            let rt = &r.rates;
            println!(
                "load per second: {:.0} forks, {:.1} execs, {:.0} threads, {:.1} cgroups, {:.0} connections, {:.1} textfile writes, {:.2} mounts, {:.1} scrapes ({:.1} dropped), {:.2} ps runs",
                rt.forks,
                rt.execs,
                rt.threads,
                rt.cgroups,
                rt.connections,
                rt.textfile_writes,
                rt.mounts,
                rt.scrapes,
                rt.scrapes_dropped,
                rt.ps_runs
            );
            print_rows(
                vec![
                    "minute",
                    "rss_anon_kib",
                    "rss_file_kib",
                    "heap_kib",
                    "fds",
                    "threads",
                    "store_kib",
                    "log_lines",
                    "cpu_%",
                    "oldest_s",
                    "oldest",
                ],
                Align::Left,
                r.samples
                    .iter()
                    .map(|s| {
                        vec![
                            format!("{:.1}", s.minute),
                            s.rss_anon_kib.to_string(),
                            s.rss_file_kib.to_string(),
                            s.heap_kib.map_or("-".into(), |h| h.to_string()),
                            s.fds.to_string(),
                            s.threads.to_string(),
                            s.store_kib.to_string(),
                            s.log_lines.to_string(),
                            f3(s.cpu_pct),
                            format!("{:.1}", s.oldest_source_s),
                            s.oldest_source.clone(),
                        ]
                    })
                    .collect(),
            );
            println!(
                "after minute 10: rss {:+.3} MiB/h, descriptors {:+.2}/h, threads {:+.2}/h; store at most {} KiB (cap {} KiB); {} log lines; cpu at most {}%; stale at the end: {}",
                r.rss_mib_per_hour,
                r.fds_per_hour,
                r.threads_per_hour,
                r.store_max_kib,
                r.store_cap_kib,
                r.log_lines,
                f3(r.cpu_max_pct),
                if r.stale_at_end.is_empty() {
                    "none".to_string()
                } else {
                    r.stale_at_end.join(", ")
                }
            );
            if let Some(e) = &r.ps_error {
                println!("ps --backend agent failed at least once: {e}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct MemoryLimitArgs {
    /// Processes on the machine (idle ones started to make up the count),
    /// one run each.
    #[arg(long, value_delimiter = ',', default_values_t = [30_000usize, 64_000], value_name = "N,...")]
    pub(super) processes: Vec<usize>,
    /// Cgroups made in the v2 hierarchy.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub(super) cgroups: usize,
    /// The agent's cgroup's memory limit (e.g. 64MiB).
    #[arg(long, default_value = "64MiB", value_name = "SIZE")]
    pub(super) limit: String,
    /// How long the agent is scraped, once a second, after its first answer.
    #[arg(long, value_parser = crate::parse_duration, default_value = "90s", value_name = "D")]
    pub(super) duration: std::time::Duration,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(super) format: Format,
}

pub fn run_memory_limit(args: &MemoryLimitArgs) -> anyhow::Result<ExitCode> {
    let limit = agent::config::parse_bytes(&args.limit)
        .filter(|l| *l >= 8 << 20)
        .with_context(|| {
            format!(
                "--limit {:?}: a size of at least 8MiB, e.g. 64MiB",
                args.limit
            )
        })?;
    crate::raise_nofile_limit();
    let exe = std::env::current_exe().context("finding the quietstat binary")?;
    let mut failed = false;
    for &processes in &args.processes {
        let opts = bench::memory_limit::Options {
            processes,
            cgroups: args.cgroups,
            limit,
            duration: args.duration,
            exe: exe.clone(),
        };
        let o = bench::memory_limit::run(&opts, &mut |m| eprintln!("quietstat: {m}"))
            .map_err(anyhow::Error::msg)?;
        let failures = o.failures();
        failed |= !failures.is_empty();
        match args.format {
            Format::Json => println!("{}", serde_json::to_string(&o)?),
            Format::Table => {
                let mib = |b: f64| b / f64::from(1u32 << 20);
                println!(
                    "{} processes, {} cgroups, limit {:.0} MiB ({}): first answer {}, {} of {} scrapes answered, {}, {} OOM kills; peak {:.1} MiB, at the end {:.1} MiB (anonymous {:.1}, page cache {:.1} of which shared memory {:.1}, kernel {:.1}); ceiling {:.1} MiB, charged {:.1} MiB, shedding {}, rows shed {}, cgroups shed {}",
                    o.processes,
                    o.cgroups,
                    mib(o.limit_bytes as f64),
                    o.limit_file,
                    o.first_answer_s
                        .map_or("none".into(), |s| format!("after {s:.1} s")),
                    o.answered,
                    o.scrapes,
                    if o.alive { "alive" } else { "dead" },
                    o.oom_kills,
                    mib(o.peak_bytes as f64),
                    mib(o.end_bytes as f64),
                    mib(o.end_anon_bytes as f64),
                    mib(o.end_cache_bytes as f64),
                    mib(o.end_shmem_bytes as f64),
                    mib(o.end_kernel_bytes as f64),
                    mib(o.ceiling_bytes),
                    mib(o.charged_bytes),
                    o.shedding,
                    o.shed_rows,
                    o.shed_cgroups
                );
                for l in &o.log {
                    println!("  {l}");
                }
                if !failures.is_empty() {
                    println!("  FAILED: {}", failures.join("; "));
                }
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
