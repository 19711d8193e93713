//! `quietstat bench procfs`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use bench::procfs_cost::{self, Comparison, Options, Report};
use report::table::Align;

use crate::{Format, print_rows};

mod agent_bench;

pub use agent_bench::*;

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
    print_bench(
        args.format,
        &rows,
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
        |r| {
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
        },
    )?;
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
    print_bench(
        args.format,
        &rows,
        vec![
            "asked",
            "rows",
            "median_ms",
            "ns/proc",
            "+ns/proc",
            "+lines",
            "lines beyond the identity's",
        ],
        |r| {
            vec![
                r.asked.clone(),
                r.rows.to_string(),
                f3(r.median_ms),
                format!("{:.0}", r.ns_per_proc),
                format!("{:+.0}", r.extra_ns_per_proc),
                r.extra_line_count.to_string(),
                r.extra_lines.clone(),
            ]
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct NetArgs {
    /// Idle processes to spawn (capped by kernel.pid_max,
    /// kernel.threads-max and available memory).
    #[arg(long, default_value_t = bench::net_cost::DEFAULT_PROCS, value_name = "N")]
    procs: usize,
    /// TCP sockets to hold open (loopback connections, both ends; capped
    /// by the open-files limit).
    #[arg(long, default_value_t = bench::net_cost::DEFAULT_SOCKETS, value_name = "S")]
    sockets: usize,
    /// Reads per row (after one warm-up).
    #[arg(long, default_value_t = bench::net_cost::DEFAULT_RUNS, value_name = "R")]
    runs: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_net(args: &NetArgs) -> anyhow::Result<ExitCode> {
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    if args.sockets < 2 {
        bail!("--sockets takes a count of at least 2, e.g. 10000");
    }
    let opts = bench::net_cost::Options {
        procs: args.procs,
        sockets: args.sockets,
        runs: args.runs,
    };
    let rows = bench::net_cost::run(&opts, &mut |msg| eprintln!("quietstat: {msg}"))
        .map_err(anyhow::Error::msg)?;
    print_bench(
        args.format,
        &rows,
        vec![
            "case",
            "rows",
            "sockets",
            "median_ms",
            "+ms",
            "+ns/socket",
            "+% core at 5 s",
            "stream Gbit/s",
        ],
        |r| {
            vec![
                r.case.clone(),
                r.rows.to_string(),
                r.sockets.to_string(),
                f3(r.median_ms),
                f3(r.extra_ms),
                format!("{:.0}", r.extra_ns_per_socket),
                format!("{:.4}", r.extra_core_pct),
                format!("{:.2}", r.stream_gbit),
            ]
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct GpuArgs {
    /// Idle processes to spawn (capped by kernel.pid_max,
    /// kernel.threads-max and available memory).
    #[arg(long, default_value_t = bench::gpu_cost::DEFAULT_PROCS, value_name = "N")]
    procs: usize,
    /// Descriptors each idle process holds beyond its standard three.
    #[arg(long, default_value_t = bench::gpu_cost::DEFAULT_FDS, value_name = "D")]
    fds: usize,
    /// Reads per row (after one warm-up).
    #[arg(long, default_value_t = bench::gpu_cost::DEFAULT_RUNS, value_name = "R")]
    runs: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_gpu(args: &GpuArgs) -> anyhow::Result<ExitCode> {
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let opts = bench::gpu_cost::Options {
        procs: args.procs,
        fds: args.fds,
        runs: args.runs,
    };
    let rows = bench::gpu_cost::run(&opts, &mut |msg| eprintln!("quietstat: {msg}"))
        .map_err(anyhow::Error::msg)?;
    print_bench(
        args.format,
        &rows,
        vec![
            "case",
            "rows",
            "descriptors",
            "median_ms",
            "+ms",
            "+ns/descriptor",
            "+% core",
        ],
        |r| {
            vec![
                r.case.clone(),
                r.rows.to_string(),
                r.descriptors.to_string(),
                f3(r.median_ms),
                f3(r.extra_ms),
                format!("{:.1}", r.extra_ns_per_descriptor),
                format!("{:.4}", r.extra_core_pct),
            ]
        },
    )?;
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
    print_bench(
        args.format,
        &rows,
        vec![
            "way",
            "cgroups",
            "figures",
            "median_ms",
            "us/cgroup",
            "naive/this",
            "kept fds",
        ],
        |r| {
            vec![
                r.method.clone(),
                r.cgroups.to_string(),
                r.figures.to_string(),
                f3(r.median_ms),
                format!("{:.2}", r.us_per_cgroup),
                format!("{:.2}", r.naive_over_this),
                r.kept_fds.to_string(),
            ]
        },
    )?;
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
    print_bench(
        args.format,
        &rows,
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
        |r| {
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
        },
    )?;
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

/// A figure with three decimals, as the tables print most.
fn f3(v: f64) -> String {
    format!("{v:.3}")
}

/// The rows as `format` asks: a JSON object a line, or a table of
/// `columns` with each row's `cells`.
fn print_bench<T: serde::Serialize>(
    format: Format,
    rows: &[T],
    columns: Vec<&'static str>,
    cells: impl Fn(&T) -> Vec<String>,
) -> anyhow::Result<()> {
    match format {
        Format::Json => print_json_lines(rows),
        Format::Table => {
            print_rows(columns, Align::Left, rows.iter().map(cells).collect());
            Ok(())
        }
    }
}

/// One JSON object per row, a line each.
fn print_json_lines<T: serde::Serialize>(rows: &[T]) -> anyhow::Result<()> {
    for r in rows {
        println!("{}", serde_json::to_string(r)?);
    }
    Ok(())
}
