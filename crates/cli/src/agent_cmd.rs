//! `quietstat agent`: flags onto the configuration, then the sampler and
//! the HTTP server.

use std::path::PathBuf;
use std::process::ExitCode;

use agent::Agent;
use agent::config::{Config, FileConfig, FileSources, Shape};
use agent::logging::{Format, Level, info, warn};
use anyhow::bail;
use exporter::http::Options;
use exporter::web_config::WebConfig;

#[derive(clap::Args)]
pub struct Args {
    /// TOML configuration file (every key optional; flags override it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The flags that set configuration keys (`--listen`, the collectors'
    /// filters, ...), one per row of the key table.
    #[command(flatten)]
    keys: KeyFlags,
    /// Serve on the listening sockets the service manager hands over
    /// (systemd's socket activation: LISTEN_FDS) instead of --listen.
    #[arg(long = "web.systemd-socket", conflicts_with = "listen")]
    systemd_socket: bool,
    /// The path the exposition answers at (node_exporter's flag)
    /// [default: /metrics].
    #[arg(long = "web.telemetry-path", value_name = "PATH")]
    telemetry_path: Option<String>,
    /// Serve no figures about the agent itself (process_*, quietstat_*;
    /// node_scrape_collector_* stay), as node_exporter's flag.
    #[arg(long = "web.disable-exporter-metrics")]
    no_exporter_metrics: bool,
    /// The least a log line must be to be written: debug, info, warn or
    /// error (node_exporter's flag) [default: info].
    #[arg(long = "log.level", value_name = "LEVEL")]
    log_level: Option<String>,
    /// How log lines are written: plain ("quietstat agent: ..."), logfmt or
    /// json (node_exporter's flag) [default: plain].
    #[arg(long = "log.format", value_name = "FORMAT")]
    log_format: Option<String>,
    /// Read the sources of node_exporter collector NAME, or of the agent's
    /// source NAME (also written `--collector.NAME`; `all` for every one).
    #[arg(long = "enable-collector", value_name = "NAME")]
    enable_collector: Vec<String>,
    /// Do not read the sources of collector or source NAME (also written
    /// `--no-collector.NAME`; `all` for every one, as node_exporter's
    /// `--collector.disable-defaults`).
    #[arg(long = "disable-collector", value_name = "NAME")]
    disable_collector: Vec<String>,
    /// Record the history here [default: /var/lib/quietstat as root,
    /// else $XDG_STATE_HOME/quietstat].
    #[arg(long, value_name = "DIR", conflicts_with = "no_store")]
    store: Option<PathBuf>,
    /// Do not record the history.
    #[arg(long)]
    no_store: bool,
    /// Print the effective configuration as TOML and exit.
    #[arg(long)]
    print_config: bool,
}

/// The configuration keys set on the command line: a flag for each row of
/// the key table that names one ([`FileConfig::flags`]).
#[derive(Default)]
pub struct KeyFlags(FileConfig);

impl clap::FromArgMatches for KeyFlags {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut k = KeyFlags::default();
        k.update_from_arg_matches(m)?;
        Ok(k)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        for f in FileConfig::flags() {
            let given: Vec<String> = match f.shape {
                Shape::Switch if m.get_flag(f.key) => Vec::new(),
                Shape::Switch => continue,
                Shape::One | Shape::Many => match m.get_many::<String>(f.key) {
                    Some(v) => v.cloned().collect(),
                    None => continue,
                },
            };
            (f.set)(&mut self.0, &given).map_err(|e| {
                clap::Error::raw(
                    clap::error::ErrorKind::ValueValidation,
                    format!("--{}: {}", f.names[0], e.message),
                )
            })?;
        }
        Ok(())
    }
}

impl clap::Args for KeyFlags {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        use clap::{Arg, ArgAction};
        FileConfig::flags().into_iter().fold(cmd, |cmd, f| {
            // The other spellings in the text, where the man page shows
            // them too.
            let mut help = f.doc.to_string();
            if f.names.len() > 1 {
                let also: Vec<String> = f.names[1..].iter().map(|n| format!("`--{n}`")).collect();
                help.push_str(&format!(" (also written {})", also.join(", ")));
            }
            if let Some(d) = f.default.as_ref().filter(|_| f.shape != Shape::Switch) {
                help.push_str(&format!(" [default: {d}]"));
            }
            let arg = Arg::new(f.key)
                .long(f.names[0])
                .aliases(&f.names[1..])
                .help(help);
            cmd.arg(match f.shape {
                Shape::Switch => arg.action(ArgAction::SetTrue),
                Shape::One => arg.action(ArgAction::Set).value_name(f.value_name),
                Shape::Many => arg.action(ArgAction::Append).value_name(f.value_name),
            })
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// node_exporter flags the agent does not take, each with why: refused by
/// name rather than reported as an unknown argument.
pub const NOT_TAKEN: &[(&str, &str)] = &[
    (
        "--runtime.gomaxprocs",
        "a Go runtime setting; the agent's threads are placed with --housekeeping-cpus",
    ),
    (
        "--collector.bcache.priorityStats",
        "priority_stats makes the kernel walk every bucket of the cache at each read; the bcache source reads the cheap statistics only",
    ),
    (
        "--collector.ipvs.backend-labels",
        "the agent serves every backend label",
    ),
    (
        "--collector.netdev.address-info",
        "not supported yet: node_network_address_info needs netlink",
    ),
    (
        "--collector.netdev.enable-detailed-metrics",
        "not supported yet: the agent serves node_network_{receive,transmit}_*_total",
    ),
    (
        "--collector.powersupply.ignored-supplies",
        "not supported yet",
    ),
    ("--collector.tapestats.ignored-devices", "not supported yet"),
    ("--collector.rapl.enable-zone-label", "not supported yet"),
    (
        "--collector.pcidevice.names",
        "not supported yet: names come from the pci.ids database; node_pcidevice_info carries the numeric ids",
    ),
    (
        "--collector.filesystem.stat-workers",
        "the agent's statfs calls run on one worker thread, one at a time, each with its own deadline (filesystem_statfs_wait): a hung mount costs one wait, not a worker",
    ),
    (
        "--no-collector.interrupts.include-zeros",
        "node_interrupts_total serves every count, zeros too (leaving zeros out would make series come and go); --collector.interrupts.name-include and name-exclude choose interrupts",
    ),
    (
        "--collector.netdev.label-ifalias",
        "not supported yet: node_network_info carries each device's ifalias",
    ),
    (
        "--collector.pcidevice.idsfile",
        "not supported yet: names come from the pci.ids database; node_pcidevice_info carries the numeric ids",
    ),
];

/// node_exporter's flag namespaces: a flag in one of them that the agent
/// does not know is refused naming itself, never as a bare unknown
/// argument.
const NODE_EXPORTER_SPACES: &[&str] =
    &["--web.", "--log.", "--path.", "--runtime.", "--collector."];

/// A flag as given without its value (`--no-collector.x`), and as named
/// without its negation (`--collector.x`).
fn flag_name(arg: &str) -> (&str, String) {
    let flag = arg.split('=').next().unwrap_or(arg);
    let bare = match flag.strip_prefix("--no-") {
        Some(rest) => format!("--{rest}"),
        None => flag.to_string(),
    };
    (flag, bare)
}

/// The first argument that is a node_exporter flag the agent does not take,
/// as an error naming it and saying why.
pub fn refuse_not_taken(args: &[std::ffi::OsString]) -> Result<(), String> {
    // Not past `--`: what follows is another command's (jitter's).
    for a in args
        .iter()
        .filter_map(|a| a.to_str())
        .take_while(|a| *a != "--")
    {
        let (given, flag) = flag_name(a);
        if let Some((_, why)) = NOT_TAKEN.iter().find(|(f, _)| *f == flag || *f == given) {
            let flag = if given.starts_with("--no-") {
                given
            } else {
                &flag
            };
            return Err(format!("node_exporter's {flag} is not taken here: {why}"));
        }
    }
    Ok(())
}

/// Why an argument the agent's parser did not know is refused, when it is
/// in node_exporter's namespaces: an option of a collector the agent lacks
/// says which and why; any other says it is not taken. `None` for an
/// argument outside them (the parser's own message then stands).
pub fn unknown_node_exporter_flag(arg: &str) -> Option<String> {
    let (flag, bare) = flag_name(arg);
    let bare = bare.as_str();
    if !NODE_EXPORTER_SPACES.iter().any(|p| bare.starts_with(p)) {
        return None;
    }
    let collector = bare
        .strip_prefix("--collector.")
        .and_then(|r| r.split('.').next());
    if let Some(c) = collector
        && let Some((_, why)) = exporter::metrics::NOT_HERE.iter().find(|(n, _)| *n == c)
    {
        return Some(format!(
            "node_exporter's {flag} is not taken here: the {c} collector is not available ({why})"
        ));
    }
    Some(format!(
        "node_exporter's {flag} is not taken here: the agent has no such option; `quietstat agent --help` lists the node_exporter flags it takes"
    ))
}

/// node_exporter's per-collector switches, which name the collector in the
/// flag (`--collector.netclass`, `--no-collector.wifi`), rewritten as
/// `--enable-collector NAME` / `--disable-collector NAME`;
/// `--collector.disable-defaults` as `--disable-collector all` (before
/// the rest, so the enables that follow win); `--collector.cpu.info` as
/// `--enable-collector cpuinfo` (`node_cpu_info`), and
/// `--collector.cpu.guest`, on in node_exporter by default and always here,
/// as nothing.
/// node_exporter's switches for what the agent always does: guest time in
/// node_cpu_guest_seconds_total, softirqs by vector from /proc/stat, every
/// interrupt count, zeros too, in node_interrupts_total, and
/// the ARP, netclass and netdev figures from their files (the same figures
/// netlink would give).
const ALWAYS: &[&str] = &[
    "--collector.cpu.guest",
    "--collector.stat.softirq",
    "--collector.interrupts.include-zeros",
    "--collector.arp.netlink",
    "--no-collector.arp.netlink",
    "--collector.netclass.netlink",
    "--no-collector.netclass.netlink",
    "--collector.netdev.netlink",
    "--no-collector.netdev.netlink",
];

pub fn collector_flags(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    let mut disable_defaults = false;
    for a in args {
        let Some(text) = a.to_str() else {
            out.push(a);
            continue;
        };
        let name_ok = |n: &str| !n.is_empty() && !n.contains(['.', '=']);
        if text == "--collector.disable-defaults" {
            disable_defaults = true;
        } else if text == "--collector.cpu.info" {
            out.push("--enable-collector".into());
            out.push("cpuinfo".into());
        } else if text == "--no-collector.cpu.info" {
            out.push("--disable-collector".into());
            out.push("cpuinfo".into());
        } else if ALWAYS.contains(&text) {
        } else if let Some(n) = text.strip_prefix("--collector.").filter(|n| name_ok(n)) {
            out.push("--enable-collector".into());
            out.push(n.into());
        } else if let Some(n) = text.strip_prefix("--no-collector.").filter(|n| name_ok(n)) {
            out.push("--disable-collector".into());
            out.push(n.into());
        } else {
            out.push(a);
        }
    }
    if disable_defaults {
        // After the command name, so clap reads it as the agent's.
        let at = out
            .iter()
            .position(|a| a == "agent")
            .map_or(out.len(), |i| i + 1);
        out.insert(at, "all".into());
        out.insert(at, "--disable-collector".into());
    }
    out
}

/// The configuration's source table with the collector switches applied,
/// in order, and the collectors off by default that were turned on;
/// unknown names are errors, node_exporter collectors the agent lacks are
/// warnings.
fn collector_switches(args: &Args) -> anyhow::Result<(Option<FileSources>, Option<Vec<String>>)> {
    use agent::config::{AgentSource, COLLECTORS_OFF_BY_DEFAULT, FileSource};
    if args.enable_collector.is_empty() && args.disable_collector.is_empty() {
        return Ok((None, None));
    }
    let mut table = FileSources::default();
    let mut turned_on: Vec<String> = Vec::new();
    let mut set = |names: &[String], on: bool| -> anyhow::Result<()> {
        for name in names {
            for off in COLLECTORS_OFF_BY_DEFAULT {
                if name == off || name == "all" {
                    turned_on.retain(|c| c != off);
                    if on {
                        turned_on.push(off.to_string());
                    }
                }
            }
            let sources = if name == "all" {
                AgentSource::ALL.to_vec()
            } else if let Some(s) = exporter::metrics::collector_sources(name) {
                s
            } else if let Some((_, why)) =
                exporter::metrics::NOT_HERE.iter().find(|(n, _)| n == name)
            {
                warn(&format!(
                    "collector {name:?} is not available here ({why}); ignored"
                ));
                continue;
            } else {
                bail!(
                    "--collector.{name}: no such collector; accepted: node_exporter's collector names ({}) or the agent's source names ({})",
                    exporter::metrics::collector_names(),
                    AgentSource::keys()
                );
            };
            for s in sources {
                table
                    .get_mut(s)
                    .get_or_insert_with(FileSource::default)
                    .enabled = Some(on);
            }
        }
        Ok(())
    };
    let all_off = args.disable_collector.iter().any(|n| n == "all");
    if all_off {
        set(&["all".to_string()], false)?;
    }
    set(&args.enable_collector, true)?;
    let rest: Vec<String> = args
        .disable_collector
        .iter()
        .filter(|n| *n != "all")
        .cloned()
        .collect();
    set(&rest, false)?;
    Ok((Some(table), Some(turned_on)))
}

pub fn run(
    proc_root: Option<PathBuf>,
    sys_root: Option<PathBuf>,
    rootfs: Option<PathBuf>,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    let level = Level::parse(args.log_level.as_deref().unwrap_or("info"))
        .map_err(|e| anyhow::anyhow!("--log.level: {e}"))?;
    let format = Format::parse(args.log_format.as_deref().unwrap_or("plain"))
        .map_err(|e| anyhow::anyhow!("--log.format: {e}"))?;
    agent::logging::set(level, format);
    let (sources, collectors) = collector_switches(args)?;
    let mut overrides = args.keys.0.clone();
    overrides.rootfs = rootfs;
    overrides.proc_root = proc_root;
    overrides.sys_root = sys_root;
    overrides.sources = sources;
    overrides.collectors = collectors;
    if args.store.is_some() || args.no_store {
        overrides.store = Some(agent::config::FileStore {
            enabled: Some(!args.no_store),
            path: args.store.clone(),
            ..Default::default()
        });
    }
    if args.print_config {
        let c = Config::load(args.config.as_deref(), &overrides)?;
        print!("{}", c.to_toml_explained());
        return Ok(ExitCode::SUCCESS);
    }
    crate::raise_nofile_limit();
    // Everything that can refuse the start is checked before anything is
    // published: a second agent on a port in use leaves the first agent's
    // snapshot alone.
    let config = Config::load(args.config.as_deref(), &overrides)?;
    let web = match &config.web_config_file {
        Some(p) => {
            let w = WebConfig::load(p)?;
            for warning in &w.warnings {
                warn(&format!("{}: {warning}", p.display()));
            }
            Some(w)
        }
        None => None,
    };
    let telemetry_path = args
        .telemetry_path
        .clone()
        .unwrap_or_else(|| exporter::http::TELEMETRY_PATH.to_string());
    exporter::http::check_telemetry_path(&telemetry_path)
        .map_err(|e| anyhow::anyhow!("--web.telemetry-path: {e}"))?;
    let listeners = if args.systemd_socket {
        exporter::http::handed_over().map_err(anyhow::Error::msg)?
    } else {
        config
            .listen
            .iter()
            .map(|a| exporter::http::bind(*a))
            .collect::<Result<Vec<_>, _>>()
            .map_err(anyhow::Error::msg)?
    };
    let protected = web
        .as_ref()
        .is_some_and(|w| w.tls.is_some() || !w.users.is_empty());
    for addr in listeners.iter().filter_map(|l| l.local_addr().ok()) {
        if !addr.ip().is_loopback() && !protected {
            warn(&format!(
                "listening on {addr}, beyond this machine, without TLS or authentication: anyone who can reach it reads the metrics; see --web.config.file"
            ));
        }
    }
    // Before the agent's threads: what BPF loading parses in the cgroup
    // thread is given back, not kept resident for the agent's life.
    sys::fix_malloc_thresholds();
    let agent = Agent::start(config.clone(), args.config.as_deref(), overrides)?;
    let shared = agent.shared();
    let server = if listeners.is_empty() {
        None
    } else {
        let options = Options {
            max_connections: config.http_max_connections,
            max_requests: config.http_max_requests,
            web,
            process_rows: config.http_process_rows,
            telemetry_path: telemetry_path.clone(),
            no_exporter_metrics: args.no_exporter_metrics,
        };
        let s = exporter::http::serve(shared.clone(), listeners, options)
            .map_err(anyhow::Error::msg)?;
        for addr in s.local_addrs() {
            info(&format!(
                "serving {}://{addr}{telemetry_path} and /api/v1/snapshot (at most {} connections)",
                if s.tls() { "https" } else { "http" },
                s.max_connections()
            ));
        }
        Some(s)
    };
    if let Some(p) = shared.shm.path() {
        info(&format!("shared-memory snapshot at {}", p.display()));
    }
    let pushers = exporter::remote::start(shared.clone(), |line| info(&line))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    agent.run();
    drop(pushers);
    if let Some(s) = server {
        s.shutdown();
    }
    if let Some(why) = shared.failure() {
        bail!("{why}");
    }
    if shared.state.read().is_err() {
        bail!("the agent's state was poisoned by a panic");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::collector_flags;

    fn rewrite(args: &[&str]) -> Vec<String> {
        collector_flags(args.iter().map(|a| (*a).into()))
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn node_exporters_collector_flags_become_the_agents() {
        assert_eq!(
            rewrite(&[
                "quietstat",
                "agent",
                "--collector.buddyinfo",
                "--no-collector.wifi",
                "--collector.cpu.info",
                "--collector.cpu.guest",
                "--collector.textfile.directory=/x",
                "--collector.disable-defaults",
            ]),
            [
                "quietstat",
                "agent",
                "--disable-collector",
                "all",
                "--enable-collector",
                "buddyinfo",
                "--disable-collector",
                "wifi",
                "--enable-collector",
                "cpuinfo",
                "--collector.textfile.directory=/x",
            ]
        );
    }
}
