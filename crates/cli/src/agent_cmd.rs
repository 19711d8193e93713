//! `quietstat agent`: flags onto the configuration, then the sampler and
//! the HTTP server.

use std::path::PathBuf;
use std::process::ExitCode;

use agent::Agent;
use agent::config::{Config, FileConfig};
use anyhow::{Context, bail};

#[derive(clap::Args)]
pub struct Args {
    /// TOML configuration file (every key optional; flags override it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address for /metrics and /api/v1/snapshot ("" for none).
    #[arg(long, value_name = "IP:PORT")]
    listen: Option<String>,
    /// CPUs the agent's threads may run on (default: every online CPU that
    /// is neither isolated nor nohz_full).
    #[arg(long, value_name = "LIST")]
    housekeeping_cpus: Option<String>,
    /// Process-table backend: auto, bpf or procfs.
    #[arg(long, value_name = "NAME")]
    backend: Option<String>,
    /// Shared-memory snapshot file ("" for none).
    #[arg(long, value_name = "PATH")]
    shm_path: Option<String>,
    /// Percent of one CPU the agent may spend reading (0: no budget).
    #[arg(long, value_name = "PCT")]
    overhead_budget_pct: Option<f64>,
    /// Print the effective configuration as TOML and exit.
    #[arg(long)]
    print_config: bool,
}

pub fn run(
    proc_root: Option<PathBuf>,
    sys_root: Option<PathBuf>,
    args: &Args,
) -> anyhow::Result<ExitCode> {
    let overrides = FileConfig {
        listen: args.listen.clone(),
        proc_root,
        sys_root,
        housekeeping_cpus: args.housekeeping_cpus.clone(),
        shm_path: args.shm_path.clone(),
        overhead_budget_pct: args.overhead_budget_pct,
        process_backend: args.backend.clone(),
        ..FileConfig::default()
    };
    if args.print_config {
        let c = Config::load(args.config.as_deref(), &overrides)?;
        print!("{}", c.to_toml());
        return Ok(ExitCode::SUCCESS);
    }
    crate::raise_nofile_limit();
    let agent = Agent::start(args.config.as_deref(), overrides)?;
    let shared = agent.shared();
    let listen = shared.config().listen;
    let server = match listen {
        Some(addr) => {
            let s = exporter::http::serve(shared.clone(), addr, 2)
                .map_err(anyhow::Error::msg)
                .context("starting the HTTP server")?;
            eprintln!(
                "quietstat agent: serving http://{}/metrics and /api/v1/snapshot",
                s.local_addr().map_or(addr.to_string(), |a| a.to_string())
            );
            Some(s)
        }
        None => None,
    };
    if let Some(p) = shared.shm.path() {
        eprintln!("quietstat agent: shared-memory snapshot at {}", p.display());
    }
    agent.run();
    if let Some(s) = server {
        s.shutdown();
    }
    if shared.state.read().is_err() {
        bail!("the agent's state was poisoned by a panic");
    }
    Ok(ExitCode::SUCCESS)
}
