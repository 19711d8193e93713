//! The `quietstat` command: argument parsing and wiring of the library crates.

mod agent_cmd;
mod bench_cmd;
mod cgroups_cmd;
mod docs_cmd;
mod jitter_cmd;
mod noise_cmd;
mod ps_cmd;
mod report_cmd;
mod stat_cmd;
mod top_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

/// A Linux system and process statistics collector that stays cheap on huge
/// machines and quiet on isolated CPUs.
#[derive(Parser)]
#[command(name = "quietstat", version, propagate_version = true)]
struct Cli {
    /// Root of the proc filesystem to read [default: /proc].
    #[arg(long, global = true, value_name = "DIR", alias = "path.procfs")]
    proc_root: Option<PathBuf>,
    /// Root of the sys filesystem to read [default: /sys].
    #[arg(long, global = true, value_name = "DIR", alias = "path.sysfs")]
    sys_root: Option<PathBuf>,
    /// Prefix of the root filesystem: mount points for statfs,
    /// /etc/os-release, /etc/selinux [default: /] (node_exporter's
    /// --path.rootfs).
    #[arg(long, global = true, value_name = "DIR", alias = "path.rootfs")]
    rootfs: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The agent: samples on a tickless schedule and serves /metrics, a JSON
    /// API and a shared-memory snapshot from its latest samples.
    Agent(Box<agent_cmd::Args>),
    /// Snapshot of every system source; with --interval, rates per interval.
    Stat(stat_cmd::Args),
    /// Timer latency on one CPU (cyclictest-style), alone and beside a
    /// command: `quietstat jitter --cpu 1 -- quietstat agent`.
    Jitter(jitter_cmd::Args),
    /// Every interruption on the given CPUs during a window, by cause (IPIs,
    /// IRQs, softirqs, timers, switches, wakeups), counted with BPF.
    Noise(noise_cmd::Args),
    /// A deliberately noisy process: membarrier IPIs from --from to --target
    /// (for tests and demonstrations of `noise`).
    #[command(hide = true)]
    NoiseHelper(noise_cmd::HelperArgs),
    /// One snapshot of the process table (BPF task iterator or /proc).
    Ps(ps_cmd::Args),
    /// What each cgroup (service, container, slice) used over an interval,
    /// as the kernel counts it: CPU, memory, I/O, pids, pressure.
    Cgroups(cgroups_cmd::Args),
    /// A terminal view of the machine: live from the agent (or sampled
    /// here), or replaying the recorded history (--replay).
    Top(top_cmd::Args),
    /// Tables of what the agent recorded: CPU, memory, disks, network,
    /// interrupts, pressure, load, top processes and exits, per interval.
    Report(report_cmd::Args),
    /// Measure what reading the kernel costs.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Shell completions on stdout: `quietstat completions bash >
    /// /etc/bash_completion.d/quietstat`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Man pages of every command into DIR (for packaging).
    #[command(hide = true)]
    Manpages { dir: PathBuf },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Cost of one read of each system source: open/read/close, pread, parse.
    Procfs(bench_cmd::ProcfsArgs),
    /// One full process-table snapshot per backend with N idle processes,
    /// beside a naive /proc loop measured in the same run.
    Proctable(bench_cmd::ProctableArgs),
    /// What each field costs the BPF walk with N idle processes: the cache
    /// lines it reads per process on this kernel and one walker's time with
    /// it beside the identity alone (the floor), in the same run.
    Fields(bench_cmd::FieldsArgs),
    /// What the TCP bytes per process cost a read of the agent's fields,
    /// with N idle processes and S open sockets, with and without a
    /// loopback stream beside it, in the same run.
    Net(bench_cmd::NetArgs),
    /// What the GPU figures per process cost a read of the agent's fields,
    /// with N idle processes holding D descriptors each, on both backends:
    /// a read between scans and a scan of every descriptor, in the same
    /// run.
    Gpu(bench_cmd::GpuArgs),
    /// N cgroups made in every hierarchy the cgroup reader uses, read
    /// whole: a naive reader (listed and read by path) beside the cgroup
    /// reader's ways, and memory.stat apart, taking turns in one run.
    Cgroups(bench_cmd::CgroupsArgs),
    /// C consumers each reading CPU times and the IRQ total N times: from
    /// /proc/stat, from the agent's shared memory at several max ages, and
    /// over HTTP.
    Consumers(bench_cmd::ConsumersArgs),
    /// What a collector costs with N idle processes and nobody scraping:
    /// CPU, wakeups and RSS of the agent (bpf, procfs) and of a naive
    /// sampler, measured one after another in the same run.
    Agent(bench_cmd::AgentArgs),
    /// Exit capture under a fork/exit load (default 5,000 children/s):
    /// every child must be found in the exit ring, none lost.
    Exits(bench_cmd::ExitsArgs),
    /// A read of 1,000 systemd units (a real user manager's) by the
    /// systemd source and by node_exporter's collector: wall time and the
    /// CPU of reader, manager and bus.
    Systemd(bench_cmd::SystemdArgs),
    /// Hours of history for N processes written through the real writer
    /// faster than real time; its size per day and source, and the time
    /// `report` takes over it.
    Store(bench_cmd::StoreArgs),
    /// What looking costs with N idle processes and an agent running:
    /// `ps` from the agent, from BPF, from /proc and procps' `ps`; `top`'s
    /// start to its first screen; CPU of 10 `top`s and 10 `htop`s and the
    /// agent's reads beside them.
    Viewers(bench_cmd::ViewersArgs),
    /// The agent with its defaults beside N idle processes (several N in
    /// one run): its CPU, wakeups, RSS, read cost per process, history and
    /// view bytes, and ps, top and report times. Raises kernel.pid_max when
    /// needed and restores it.
    Scale(bench_cmd::ScaleArgs),
    /// The agent beside node_exporter at equal work (every source each
    /// 15 s, no processes, no history), both scraped every 15 s at the same
    /// time: CPU, wakeups per thread, RSS, and the switches and CPU one
    /// scrape costs each.
    Quiet(bench_cmd::QuietArgs),
    /// The agent with its defaults and history for hours beside a load
    /// that changes everything it watches (forks, threads, cgroups,
    /// sockets, textfiles, mounts, scrapes, ps, a clock step), sampled
    /// every minute: RSS, heap, descriptors, threads, history size, log
    /// lines, CPU, the oldest source; a table, and with --out a JSON file
    /// and an SVG plot.
    Soak(bench_cmd::SoakArgs),
    /// The agent with its defaults started in a memory cgroup of its own
    /// with a tight limit, beside many idle processes and cgroups: whether
    /// it starts, answers every scrape with node_exporter's families and
    /// stays clear of the OOM killer; its peak, ceiling and what it shed.
    MemoryLimit(bench_cmd::MemoryLimitArgs),
    /// The fork load of `bench soak` (started by it).
    #[command(hide = true)]
    SoakForker(bench_cmd::ForkerArgs),
    /// Pushing to a remote-write receiver (a Prometheus): node_exporter
    /// scraped by Prometheus in agent mode beside the agent pushing from
    /// its history, in one run: CPU, wake-ups, RSS, samples and bytes.
    Push(bench_cmd::PushArgs),
    /// The forker of `bench exits` (started by it).
    #[command(hide = true)]
    Forker(bench_cmd::ForkerArgs),
    /// Holds N idle processes for a while (for observer-effect runs by hand),
    /// cleaning them up at the end or on SIGINT/SIGTERM.
    #[command(hide = true)]
    Idle(bench_cmd::IdleArgs),
    /// The naive sampler of `bench agent` (started by it).
    #[command(hide = true)]
    NaiveCollector,
    /// One consumer of `bench consumers` (started by it).
    #[command(hide = true)]
    ConsumerWorker(bench_cmd::WorkerArgs),
}

/// Output formats shared by the commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// Parses a duration such as `1s`, `250ms` or `2m` (positive).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| {
        format!("`{s}` is not a duration ({e}); accepted: a number with a unit, e.g. 500ms, 1s, 2m")
    })?;
    if d.is_zero() {
        return Err(format!("`{s}` is zero; the duration must be positive"));
    }
    Ok(d)
}

/// Raises the soft open-file limit to the hard one: the procfs backend keeps
/// one fd per process open between snapshots, bounded by this limit.
pub fn raise_nofile_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on a valid struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// Commands that measure the running kernel itself (timers, BPF, trace
/// events, processes they start) cannot read another root: they refuse
/// `--proc-root` and `--sys-root` rather than ignore them.
fn check_roots(cli: &Cli) -> Result<(), String> {
    // (command, takes --proc-root, takes --sys-root)
    let (name, proc_ok, sys_ok) = match &cli.command {
        Command::Agent(_) | Command::Stat(_) | Command::Cgroups(_) => return Ok(()),
        Command::Completions { .. } => ("completions", false, false),
        Command::Manpages { .. } => ("manpages", false, false),
        Command::Report(_) => ("report", false, false),
        Command::Ps(_) | Command::Top(_) if cli.rootfs.is_none() => return Ok(()),
        Command::Bench(BenchCommand::Procfs(_)) => return Ok(()),
        // noise reads the CPU topology under --sys-root to find isolated CPUs.
        Command::Noise(_) => ("noise", false, true),
        Command::Jitter(_) => ("jitter", false, false),
        Command::NoiseHelper(_) => ("noise-helper", false, false),
        Command::Bench(_) => ("this bench command", false, false),
        Command::Ps(_) => ("ps", true, true),
        Command::Top(_) => ("top", true, true),
    };
    for (given, ok, flag) in [
        (cli.proc_root.is_some(), proc_ok, "--proc-root"),
        (cli.sys_root.is_some(), sys_ok, "--sys-root"),
        (cli.rootfs.is_some(), false, "--rootfs"),
    ] {
        if given && !ok {
            return Err(format!(
                "{flag} is not accepted by {name}: it measures the running kernel. \
                 Commands that read another root: stat, cgroups, ps, agent, bench procfs{}",
                if sys_ok {
                    " (noise takes --sys-root only)"
                } else {
                    ""
                }
            ));
        }
    }
    Ok(())
}

/// The error and its causes, each said once: an error whose message
/// already carries its cause (`path: No such file`) is not followed by it
/// again.
fn one_line(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`quietstat stat | head`), as other Unix
    // tools do, instead of failing a write (the agent and the benches
    // ignore SIGPIPE instead, below).
    // SAFETY: called before any thread starts; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = agent_cmd::collector_flags(std::env::args_os());
    if let Err(e) = agent_cmd::refuse_not_taken(&args) {
        eprintln!("quietstat: {e}");
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::{ContextKind, ContextValue, ErrorKind};
            if e.kind() == ErrorKind::UnknownArgument
                && let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg)
                && let Some(why) = agent_cmd::unknown_node_exporter_flag(arg)
            {
                eprintln!("quietstat: {why}");
                return ExitCode::from(2);
            }
            e.exit()
        }
    };
    if let Err(e) = check_roots(&cli) {
        eprintln!("quietstat: {e}");
        return ExitCode::from(2);
    }
    // The agent and the benches talk to peers that may go away mid-answer
    // (a scraper that drops its connection, a pipe's reader gone): a write
    // there must fail with EPIPE, not kill the process. Still no thread.
    if matches!(cli.command, Command::Agent(_) | Command::Bench(_)) {
        // SAFETY: before any thread starts; SIG_IGN is a valid disposition.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
    }
    let roots = (
        cli.proc_root.clone().unwrap_or_else(|| "/proc".into()),
        cli.sys_root.clone().unwrap_or_else(|| "/sys".into()),
    );
    let result = match cli.command {
        Command::Completions { shell } => Ok(docs_cmd::completions(&mut Cli::command(), shell)),
        Command::Manpages { dir } => docs_cmd::manpages(Cli::command(), &dir),
        Command::Jitter(args) => jitter_cmd::run(&args),
        Command::Noise(args) => noise_cmd::run(&roots.1, &args),
        Command::Report(args) => report_cmd::run(&args),
        Command::NoiseHelper(args) => noise_cmd::run_helper(&args),
        Command::Agent(args) => agent_cmd::run(cli.proc_root, cli.sys_root, cli.rootfs, &args),
        Command::Stat(args) => stat_cmd::run(&roots.0, &roots.1, cli.rootfs, &args),
        Command::Cgroups(args) => cgroups_cmd::run(&roots.0, &roots.1, &args),
        Command::Ps(args) => {
            raise_nofile_limit();
            ps_cmd::run(&roots.0, &roots.1, &args)
        }
        Command::Top(args) => {
            raise_nofile_limit();
            top_cmd::run(&roots.0, &roots.1, &args)
        }
        Command::Bench(BenchCommand::Proctable(args)) => bench_cmd::run_proctable(&args),
        Command::Bench(BenchCommand::Fields(args)) => bench_cmd::run_fields(&args),
        Command::Bench(BenchCommand::Net(args)) => bench_cmd::run_net(&args),
        Command::Bench(BenchCommand::Gpu(args)) => bench_cmd::run_gpu(&args),
        Command::Bench(BenchCommand::Cgroups(args)) => bench_cmd::run_cgroups(&args),
        Command::Bench(BenchCommand::Consumers(args)) => bench_cmd::run_consumers(&args),
        Command::Bench(BenchCommand::Agent(args)) => bench_cmd::run_agent(&args),
        Command::Bench(BenchCommand::Idle(args)) => bench_cmd::run_idle(&args),
        Command::Bench(BenchCommand::Push(args)) => bench_cmd::run_push(&args),
        Command::Bench(BenchCommand::Exits(args)) => bench_cmd::run_exits(&args),
        Command::Bench(BenchCommand::Systemd(args)) => bench_cmd::run_systemd(&args),
        Command::Bench(BenchCommand::Store(args)) => bench_cmd::run_store(&args),
        Command::Bench(BenchCommand::Viewers(args)) => bench_cmd::run_viewers(&args),
        Command::Bench(BenchCommand::Scale(args)) => bench_cmd::run_scale(&args),
        Command::Bench(BenchCommand::Quiet(args)) => bench_cmd::run_quiet(&args),
        Command::Bench(BenchCommand::Soak(args)) => bench_cmd::run_soak(&args),
        Command::Bench(BenchCommand::MemoryLimit(args)) => bench_cmd::run_memory_limit(&args),
        Command::Bench(BenchCommand::SoakForker(args)) => {
            let (forks, execs) = bench::soak::forker(
                args.rate,
                std::time::Duration::from_millis(args.duration_ms),
            );
            println!("{forks} {execs}");
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Bench(BenchCommand::Forker(args)) => bench_cmd::run_forker(&args),
        Command::Bench(BenchCommand::NaiveCollector) => bench::agent_cost::naive_collector(),
        Command::Bench(BenchCommand::ConsumerWorker(args)) => bench_cmd::run_worker(&args),
        Command::Bench(BenchCommand::Procfs(args)) => {
            bench_cmd::run_procfs(&roots.0, &roots.1, &args)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("quietstat: {}", one_line(&e));
            ExitCode::from(1)
        }
    }
}

/// A table of figures written as text, the first column aligned as
/// `first`, the others right, each as wide as its widest cell.
fn print_rows(columns: Vec<&'static str>, first: report::table::Align, rows: Vec<Vec<String>>) {
    for l in report::table::Table::texts(columns, first, rows).lines(" ") {
        println!("{l}");
    }
}
