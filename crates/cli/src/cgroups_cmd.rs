//! `quietstat cgroups`: what each cgroup (service, container, slice) costs
//! over an interval, as the kernel counts it, in the style of systemd-cgtop.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use model::cgroup::CgroupRates;
use report::table::Align;

use crate::{Format, print_rows};

#[derive(clap::Args)]
pub struct Args {
    /// Rates over this interval (e.g. 1s, 500ms).
    #[arg(long, default_value = "1s", value_parser = crate::parse_duration, value_name = "D")]
    interval: Duration,
    /// Sort by: cpu, memory, io (read and write bytes), pids or path.
    #[arg(long, default_value = "cpu", value_parser = model::cgroup::Sort::parse)]
    sort: model::cgroup::Sort,
    /// Rows shown at most (0: all).
    #[arg(long, default_value_t = 30, value_name = "N")]
    top: usize,
    /// Cgroups at most this many levels below the root (the root: 0).
    #[arg(long, value_name = "D")]
    depth: Option<u16>,
    /// Files read, comma-separated (`v2:cpu.stat`, `v1:memory.stat`, or a
    /// name for both versions) [default: every one].
    #[arg(long, value_delimiter = ',', value_name = "FILES")]
    files: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run(proc_root: &Path, sys_root: &Path, args: &Args) -> anyhow::Result<ExitCode> {
    if args.interval.is_zero() {
        bail!("--interval must be longer than 0, e.g. 1s");
    }
    let mut opts = cgroups::Options::new(proc_root, sys_root);
    if !args.files.is_empty() {
        let names: Vec<&str> = args.files.iter().map(String::as_str).collect();
        opts.files = cgroups::files::select(&names).map_err(anyhow::Error::msg)?;
    }
    let mut reader = cgroups::Reader::new(opts).map_err(anyhow::Error::msg)?;
    let (mut prev, mut cur) = (cgroups::Sample::default(), cgroups::Sample::default());
    reader.read(&mut prev);
    std::thread::sleep(args.interval);
    reader.read(&mut cur);
    if let Some(why) = reader.bpf_off() {
        eprintln!("quietstat: a cgroup hierarchy read from its files, not by the BPF walk: {why}");
    }
    if let Some(e) = &cur.first_error {
        eprintln!("quietstat: {} files not read; the first: {e}", cur.errors);
    }
    if cur.left_out > 0 {
        eprintln!(
            "quietstat: {} cgroups left out (past the cap, too deep, or not UTF-8)",
            cur.left_out
        );
    }
    let mut rows: Vec<CgroupRates> = model::cgroup::between(Some(&prev), &cur)
        .into_iter()
        .filter(|r| args.depth.is_none_or(|d| r.depth <= d))
        .collect();
    if args.sort != model::cgroup::Sort::Path {
        args.sort.order(&mut rows);
    }
    if args.top > 0 {
        rows.truncate(args.top);
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        Format::Table => {
            let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
            let bytes =
                |v: Option<u64>| v.map_or("-".to_string(), |v| model::units::human_bytes(v as f64));
            let per_sec = |v: Option<f64>| v.map_or("-".to_string(), model::units::human_bytes);
            print_rows(
                vec![
                    "cgroup",
                    "cpu%",
                    "user%",
                    "sys%",
                    "thr%",
                    "memory",
                    "wset",
                    "read/s",
                    "write/s",
                    "pids",
                    "cpu_some%",
                    "mem_some%",
                    "io_some%",
                ],
                Align::ByCell,
                rows.iter()
                    .map(|r| {
                        vec![
                            model::text::printable(&r.path).into_owned(),
                            pct(r.cpu_pct),
                            pct(r.cpu_user_pct),
                            pct(r.cpu_system_pct),
                            pct(r.throttled_periods_pct),
                            bytes(r.memory_bytes),
                            bytes(r.working_set_bytes),
                            per_sec(r.io_read_bytes_per_sec),
                            per_sec(r.io_write_bytes_per_sec),
                            r.pids.map_or("-".to_string(), |p| p.to_string()),
                            pct(r.cpu_some_pct),
                            pct(r.memory_some_pct),
                            pct(r.io_some_pct),
                        ]
                    })
                    .collect(),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
