//! `quietstat stat`: a snapshot of every system source, or rates per interval.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::bail;
use model::SystemRates;
use procfs::meminfo::MemKey;
use procfs::stat::CpuMode;
use procfs::{Reader, Source, SourceStatus, SystemSample};

use report::table::Align;

use crate::{Format, print_rows};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Print rates over each interval (e.g. 1s, 500ms) instead of a snapshot.
    #[arg(long, value_parser = crate::parse_duration, value_name = "D")]
    interval: Option<Duration>,
    /// Number of intervals to print (default: until interrupted).
    #[arg(long, value_name = "N", requires = "interval")]
    count: Option<u64>,
    /// Read the running agent's shared-memory snapshot (no system call per
    /// read) instead of /proc: CPU times, interrupt and context-switch
    /// totals, memory and load.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "/run/quietstat/snapshot")]
    from_agent: Option<std::path::PathBuf>,
}

pub fn run(
    proc_root: &Path,
    sys_root: &Path,
    rootfs: Option<std::path::PathBuf>,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    if args.count == Some(0) {
        bail!("--count must be at least 1");
    }
    if let Some(path) = &args.from_agent {
        return from_agent(path, args);
    }
    let mut reader = Reader::new(proc_root, sys_root);
    if let Some(rootfs) = rootfs {
        reader.set_gather_options(procfs::GatherOptions {
            rootfs,
            ..Default::default()
        });
    }
    let topology = reader.read_topology();
    for note in &topology.notes {
        eprintln!("quietstat: {note}");
    }
    // What the agent reads by default: not the opt-in sources.
    let sources: Vec<Source> = Source::ALL
        .into_iter()
        .filter(|&s| !agent::config::AgentSource::System(s).opt_in())
        .collect();
    let mut prev = SystemSample::default();
    reader.read_sample(&sources, &mut prev);
    // A partial tree shows what it has (each source's status says what it
    // lacks); a root with none of the files is a wrong root (the clock and
    // other system calls answer whatever the root).
    if !Source::ALL.iter().any(|&s| !s.gathered() && prev.ok(s)) {
        bail!(
            "{}: not found, nor any other source; --proc-root must name a mounted proc filesystem or a fixture tree",
            reader.path(Source::Stat).display()
        );
    }
    let Some(interval) = args.interval else {
        match args.format {
            Format::Json => {
                let v = serde_json::json!({ "topology": topology, "sample": prev });
                println!("{}", serde_json::to_string_pretty(&v)?);
            }
            Format::Table => print_snapshot(&prev, &topology),
        }
        return Ok(ExitCode::SUCCESS);
    };
    let mut cur = SystemSample::default();
    let start = Instant::now();
    let mut n = 0u64;
    while args.count.is_none_or(|c| n < c) {
        n += 1;
        // Absolute deadlines: the printing time does not drift the intervals.
        let deadline = start + interval * n as u32;
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        reader.read_sample(&sources, &mut cur);
        print_interval(&prev, &cur, args.format, n == 1)?;
        std::mem::swap(&mut prev, &mut cur);
    }
    Ok(ExitCode::SUCCESS)
}

/// One interval's rates, as one JSON line or a block of table rows.
fn print_interval(
    prev: &SystemSample,
    cur: &SystemSample,
    format: Format,
    first: bool,
) -> anyhow::Result<()> {
    let rates = SystemRates::between(prev, cur);
    match format {
        Format::Json => {
            let v = serde_json::json!({ "unix_ns": cur.unix_ns, "rates": rates });
            println!("{}", serde_json::to_string(&v)?);
        }
        Format::Table => print_rates(&rates, cur, first),
    }
    Ok(())
}

fn f1(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

fn f2(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

fn mib(v: Option<u64>) -> String {
    v.map_or_else(
        || "-".into(),
        |v| format!("{:.0}", model::units::bytes_to_mib(v)),
    )
}

fn print_snapshot(s: &SystemSample, t: &procfs::cpu::Topology) {
    let list =
        |l: &Option<procfs::cpu::CpuList>| l.as_ref().map_or("n/a".into(), |l| l.to_string());
    println!(
        "CPUs online {}  possible {}  isolated {}  nohz_full {}  housekeeping {}",
        t.online,
        t.possible,
        list(&t.isolated),
        list(&t.nohz_full),
        t.housekeeping()
    );
    print_totals(s);
}

/// The counters since boot and the gauges of a sample, source by source.
fn print_totals(s: &SystemSample) {
    println!("\nCPU time since boot, seconds");
    let row = |label: String, times: &procfs::stat::CpuTimes| {
        let secs = CpuMode::ALL.map(|m| {
            times.ticks(m).map_or_else(
                || "-".to_string(),
                |v| format!("{:.2}", model::units::ticks_to_secs(v)),
            )
        });
        std::iter::once(label).chain(secs).collect()
    };
    let rows = std::iter::once(row("all".into(), &s.stat.total))
        .chain(s.stat.cpus.iter().map(|c| row(c.cpu.to_string(), &c.times)))
        .collect();
    let columns = std::iter::once("cpu")
        .chain(CpuMode::ALL.map(CpuMode::name))
        .collect();
    print_rows(columns, Align::Right, rows);
    let st = &s.stat;
    println!(
        "\ninterrupts {}  context switches {}  forks {}  softirqs {}  running {}  blocked {}  boot time {}",
        st.intr_total,
        st.ctxt,
        st.processes,
        st.softirq_total.map_or("-".into(), |v| v.to_string()),
        st.procs_running.map_or("-".into(), |v| v.to_string()),
        st.procs_blocked.map_or("-".into(), |v| v.to_string()),
        st.btime_secs
    );
    if s.ok(Source::Loadavg) {
        let l = &s.loadavg;
        print!("load {:.2} {:.2} {:.2}", l.load1, l.load5, l.load15);
        // A sample from the agent's snapshot carries the averages only.
        if l.threads > 0 {
            print!(
                "  runnable {}/{}  last pid {}",
                l.runnable, l.threads, l.last_pid
            );
        }
        println!();
    }
    if s.ok(Source::Meminfo) {
        let m = |k| s.meminfo.get(k);
        println!(
            "memory MiB: total {} free {} available {} buffers {} cached {} swap {}/{} dirty {}",
            mib(m(MemKey::MemTotal)),
            mib(m(MemKey::MemFree)),
            mib(m(MemKey::MemAvailable)),
            mib(m(MemKey::Buffers)),
            mib(m(MemKey::Cached)),
            mib(m(MemKey::SwapFree)),
            mib(m(MemKey::SwapTotal)),
            mib(m(MemKey::Dirty))
        );
    }
    for r in procfs::pressure::Resource::ALL {
        if let Some(p) = s.pressure(r) {
            let line = |l: Option<procfs::pressure::PressureLine>| {
                l.map_or("-".into(), |l| {
                    format!(
                        "{:.2}/{:.2}/{:.2}% total {}us",
                        l.avg10_pct, l.avg60_pct, l.avg300_pct, l.total_usec
                    )
                })
            };
            println!(
                "pressure {:<6} some {}  full {}",
                r.name(),
                line(p.some),
                line(p.full)
            );
        }
    }
    print_devices(s);
    if s.ok(Source::Interrupts) {
        let mut rows: Vec<_> = s.interrupts.rows().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.total));
        println!("\ninterrupts since boot, top 10 of {}", rows.len());
        for r in rows.iter().take(10) {
            println!("{:>6} {:>14}  {}", r.label, r.total, r.description);
        }
    }
    if s.ok(Source::Softirqs) {
        print!("\nsoftirqs since boot:");
        for r in s.softirqs.rows() {
            print!(" {}={}", r.label, r.total);
        }
        println!();
    }
    if s.ok(Source::Schedstat) {
        let run: u64 = s.schedstat.cpus.iter().map(|c| c.running_ns).sum();
        let wait: u64 = s.schedstat.cpus.iter().map(|c| c.waiting_ns).sum();
        println!(
            "schedstat v{}: running {:.1}s waiting {:.1}s (all CPUs)",
            s.schedstat.version,
            run as f64 / 1e9,
            wait as f64 / 1e9
        );
    }
    print_status(s);
}

/// Disks' and network interfaces' counters since boot, one table each.
fn print_devices(s: &SystemSample) {
    if s.ok(Source::Diskstats) {
        println!();
        let rows = s
            .diskstats
            .iter()
            .map(|d| {
                vec![
                    d.name.to_string(),
                    d.reads_completed.to_string(),
                    (d.read_sectors * procfs::diskstats::SECTOR_BYTES).to_string(),
                    d.writes_completed.to_string(),
                    (d.write_sectors * procfs::diskstats::SECTOR_BYTES).to_string(),
                    d.io_in_progress.to_string(),
                    d.io_time_ms.to_string(),
                ]
            })
            .collect();
        print_rows(
            vec![
                "disk",
                "reads",
                "read bytes",
                "writes",
                "write bytes",
                "in flight",
                "io ms",
            ],
            Align::Left,
            rows,
        );
    }
    if s.ok(Source::NetDev) {
        println!();
        let rows = s
            .net_dev
            .iter()
            .map(|n| {
                vec![
                    n.name.to_string(),
                    n.rx_bytes.to_string(),
                    n.rx_packets.to_string(),
                    n.tx_bytes.to_string(),
                    n.tx_packets.to_string(),
                    (n.rx_errs + n.tx_errs).to_string(),
                    (n.rx_drop + n.tx_drop).to_string(),
                ]
            })
            .collect();
        print_rows(
            vec![
                "interface",
                "rx bytes",
                "rx packets",
                "tx bytes",
                "tx packets",
                "errs",
                "drops",
            ],
            Align::Left,
            rows,
        );
    }
}

fn print_status(s: &SystemSample) {
    for source in Source::ALL {
        match &s.status[source as usize] {
            SourceStatus::Failed(e) => eprintln!("warning: {e}"),
            SourceStatus::Missing if !source.optional() => {
                eprintln!("warning: {} is missing", source.name())
            }
            // Read, with something left out (lines, files, mounts).
            SourceStatus::Ok => {
                for w in s.warnings(source) {
                    eprintln!("warning: {w}");
                }
            }
            _ => {}
        }
    }
}

fn print_rates(r: &SystemRates, cur: &SystemSample, first: bool) {
    let secs = cur.unix_ns / 1_000_000_000;
    let time = format!(
        "{:02}:{:02}:{:02}",
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60
    );
    if !first {
        println!();
    }
    println!(
        "{time} UTC {:>4} {:>6} {:>6} {:>6} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "CPU", "%usr", "%nice", "%sys", "%iowait", "%irq", "%soft", "%steal", "%guest", "%idle"
    );
    let row = |label: String, c: &model::CpuPercent| {
        println!(
            "{time} UTC {label:>4} {:>6} {:>6} {:>6} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6}",
            f2(c.user),
            f2(c.nice),
            f2(c.system),
            f2(c.iowait),
            f2(c.irq),
            f2(c.softirq),
            f2(c.steal),
            f2(c.guest),
            f2(c.idle)
        );
    };
    if let Some(all) = &r.cpu_all {
        row("all".into(), all);
    }
    for c in &r.cpus {
        row(c.cpu.map_or("?".into(), |c| c.to_string()), c);
    }
    println!(
        "system: intr/s {}  cswch/s {}  forks/s {}  softirq/s {}  running {}  blocked {}  load {} {} {}",
        f1(r.interrupts_per_sec),
        f1(r.context_switches_per_sec),
        f1(r.forks_per_sec),
        f1(r.softirqs_per_sec),
        r.procs_running.map_or("-".into(), |v| v.to_string()),
        r.procs_blocked.map_or("-".into(), |v| v.to_string()),
        f2(r.load1),
        f2(r.load5),
        f2(r.load15)
    );
    // A sample from the agent's snapshot carries no vmstat: no line for it.
    if cur.ok(Source::Meminfo) {
        let m = &r.memory;
        println!(
            "memory MiB: total {} free {} avail {} used {} buffers {} cached {} swap free {}/{}",
            mib(m.total_bytes),
            mib(m.free_bytes),
            mib(m.available_bytes),
            mib(m.used_bytes),
            mib(m.buffers_bytes),
            mib(m.cached_bytes),
            mib(m.swap_free_bytes),
            mib(m.swap_total_bytes)
        );
    }
    if cur.ok(Source::Vmstat) {
        let p = &r.paging;
        println!(
            "paging: pgpgin KiB/s {}  pgpgout KiB/s {}  fault/s {}  majflt/s {}  pswpin/s {}  pswpout/s {}",
            f1(p.pgpgin_kib_per_sec),
            f1(p.pgpgout_kib_per_sec),
            f1(p.pgfault_per_sec),
            f1(p.pgmajfault_per_sec),
            f1(p.pswpin_per_sec),
            f1(p.pswpout_per_sec)
        );
    }
    if !r.pressure.is_empty() {
        print!("pressure (stalled % of interval):");
        for pr in &r.pressure {
            print!(
                "  {} some {} full {}",
                pr.resource.name(),
                f2(pr.some_pct),
                f2(pr.full_pct)
            );
        }
        println!();
    }
    for d in r
        .disks
        .iter()
        .filter(|d| d.reads_per_sec.unwrap_or(0.0) + d.writes_per_sec.unwrap_or(0.0) > 0.0)
    {
        println!(
            "disk {:<10} r/s {} w/s {} rKiB/s {} wKiB/s {} await ms {} %util {}",
            d.name,
            f1(d.reads_per_sec),
            f1(d.writes_per_sec),
            f1(d.read_bytes_per_sec.map(|b| b / 1024.0)),
            f1(d.write_bytes_per_sec.map(|b| b / 1024.0)),
            f2(d.await_ms),
            f1(d.util_pct)
        );
    }
    for n in &r.nets {
        println!(
            "net  {:<10} rxKiB/s {} txKiB/s {} rxpck/s {} txpck/s {} err/s {} drop/s {}",
            n.name,
            f1(n.rx_bytes_per_sec.map(|b| b / 1024.0)),
            f1(n.tx_bytes_per_sec.map(|b| b / 1024.0)),
            f1(n.rx_packets_per_sec),
            f1(n.tx_packets_per_sec),
            f1(n.rx_errs_per_sec.zip(n.tx_errs_per_sec).map(|(a, b)| a + b)),
            f1(n.rx_drop_per_sec.zip(n.tx_drop_per_sec).map(|(a, b)| a + b))
        );
    }
    let busy: Vec<_> = r
        .irqs
        .iter()
        .filter(|i| i.per_sec.unwrap_or(0.0) > 0.0)
        .take(5)
        .collect();
    if !busy.is_empty() {
        print!("irq/s top:");
        for i in busy {
            print!("  {}={}", i.label, f1(i.per_sec));
        }
        println!();
    }
    print_status(cur);
}

/// `stat --from-agent`: the agent's snapshot, or rates between snapshots
/// asked to be no older than half the interval. The snapshot becomes a
/// partial sample, so the figures, their names and their printing are those
/// of `stat --interval`.
fn from_agent(path: &Path, args: &Args) -> anyhow::Result<ExitCode> {
    let reader = shm::ShmReader::open(path).map_err(|e| {
        anyhow::anyhow!(
            "{e}; is `quietstat agent` running, publishing to this path (its --shm-path)?"
        )
    })?;
    // A snapshot whose agent is gone is old data, not a reading: say so
    // and fail rather than print it as current.
    reader.check_live()?;
    let mut snap = shm::Snapshot::default();
    reader.read(&mut snap)?;
    let mut prev = snap.to_sample();
    let Some(interval) = args.interval else {
        let age_ms = sys::mono_ns().saturating_sub(snap.mono_ns) as f64 / 1e6;
        match args.format {
            Format::Json => {
                let v = serde_json::json!({
                    "agent_pid": reader.agent_pid(),
                    "age_ms": age_ms,
                    "sample": prev,
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            }
            Format::Table => {
                println!(
                    "agent pid {}, sample {age_ms:.0} ms old",
                    reader.agent_pid()
                );
                print_totals(&prev);
            }
        }
        return Ok(ExitCode::SUCCESS);
    };
    let start = Instant::now();
    let mut n = 0u64;
    while args.count.is_none_or(|c| n < c) {
        n += 1;
        let deadline = start + interval * n as u32;
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        match reader.read_fresh(interval / 2, Duration::from_secs(5), &mut snap) {
            Ok(()) => {}
            // Without write access, take what the agent's schedule gives.
            Err(shm::Error::ReadOnly) => reader.read(&mut snap)?,
            Err(e) => return Err(e.into()),
        }
        let cur = snap.to_sample();
        print_interval(&prev, &cur, args.format, n == 1)?;
        prev = cur;
    }
    Ok(ExitCode::SUCCESS)
}
