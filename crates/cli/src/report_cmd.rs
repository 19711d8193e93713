//! `quietstat report`: sar-style tables from the recorded history; the
//! sections and their printing are the `report` crate's.

use std::path::PathBuf;
use std::process::ExitCode;

use report::{Format, Options, Window};
use store::History;
use store::when;

#[derive(clap::Args)]
pub struct Args {
    /// Start: RFC 3339, `HH:MM[:SS]` (today, local), "YYYY-MM-DD HH:MM", or
    /// relative (-1h, -30m) [default: -1h].
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    from: Option<String>,
    /// End, in the same forms [default: now].
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    to: Option<String>,
    /// What to report, comma-separated or repeated: cpu, mem, disk, net,
    /// irq, softirq, pressure, load, filefd, proc, waits, exits, cgroup,
    /// cgroup-events, store [default: cpu].
    #[arg(long, value_delimiter = ',')]
    source: Vec<String>,
    /// One row per this much time (rates over it, as `sar -i`) [default: 1m].
    #[arg(long, value_name = "D", value_parser = crate::parse_duration)]
    interval: Option<std::time::Duration>,
    /// Processes (interrupts, cgroups) listed per interval.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Processes ranked by: cpu, or a process field (rss_bytes, minflt,
    /// majflt, threads, read_bytes, ...); cgroups by cpu, memory, io, pids
    /// or path.
    #[arg(long, default_value = "cpu")]
    sort: String,
    /// Only this process (by PID; a reused PID is another process, shown
    /// as its own rows).
    #[arg(long)]
    pid: Option<u32>,
    /// Only processes with this name.
    #[arg(long)]
    comm: Option<String>,
    /// Only this cgroup and those below it (a path: /system.slice).
    #[arg(long, value_name = "PATH")]
    cgroup: Option<String>,
    /// table, csv or json.
    #[arg(long, default_value = "table")]
    format: String,
    /// The store [default: the agent's: /var/lib/quietstat as root].
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let format = Format::parse(&args.format).map_err(anyhow::Error::msg)?;
    let mut sources: Vec<&str> = args.source.iter().map(String::as_str).collect();
    if sources.is_empty() {
        sources.push("cpu");
    }
    // Refused before the store is opened.
    report::sections(&sources).map_err(anyhow::Error::msg)?;
    let (rank, cgroup_sort) = report::sorts(&args.sort, &sources).map_err(anyhow::Error::msg)?;
    let opts = Options {
        top: args.top,
        rank,
        pid: args.pid,
        comm: args.comm.clone(),
        cgroup_sort,
        cgroup: args.cgroup.clone(),
    };
    let now = store::writer::now_ms();
    let from = when::parse(args.from.as_deref().unwrap_or("-1h"), now)
        .map_err(|e| anyhow::anyhow!("--from {e}"))?;
    let to = when::parse(args.to.as_deref().unwrap_or("now"), now)
        .map_err(|e| anyhow::anyhow!("--to {e}"))?;
    if to < from {
        anyhow::bail!("--to is before --from");
    }
    let dir = match &args.store {
        Some(d) => d.clone(),
        None => agent::config::default_store_path().map_err(anyhow::Error::msg)?,
    };
    let h = History::open(&dir).map_err(anyhow::Error::msg)?;
    let Some((first, last)) = h.range() else {
        let mut msg = format!(
            "{}: no history recorded here (the agent records by default; is it running with --no-store, or with another --store?)",
            dir.display()
        );
        for s in &h.skipped() {
            msg += &format!("\n  skipped: {s}");
        }
        anyhow::bail!(msg);
    };
    if to < first || from > last {
        anyhow::bail!(
            "nothing recorded between {} and {}: the store at {} holds {} to {}",
            when::format(from, true),
            when::format(to, true),
            dir.display(),
            when::format(first, true),
            when::format(last, true)
        );
    }
    let every = args.interval.map_or(60_000, |d| d.as_millis() as u64);
    let w = Window::new(&h, from, to, every).map_err(anyhow::Error::msg)?;
    let reports = report::run(&h, &w, &sources, &opts).map_err(anyhow::Error::msg)?;
    let skipped = h.skipped();
    let out = report::render(&reports, &w, format, &skipped);
    if format == Format::Csv {
        // CSV has no place for them: one warning each on stderr.
        for f in &skipped {
            eprintln!("quietstat report: skipped: {f}");
        }
    }
    use std::io::Write;
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
