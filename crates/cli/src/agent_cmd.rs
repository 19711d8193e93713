//! `quietstat agent`: flags onto the configuration, then the sampler and
//! the HTTP server.

use std::path::PathBuf;
use std::process::ExitCode;

use agent::Agent;
use agent::config::{Config, FileConfig};
use anyhow::bail;
use exporter::http::Options;
use exporter::web_config::WebConfig;

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
    /// node_exporter's web configuration file (YAML): TLS certificate and
    /// key, basic-auth users with bcrypt hashes.
    #[arg(
        long = "web.config.file",
        alias = "web-config-file",
        value_name = "FILE"
    )]
    web_config_file: Option<PathBuf>,
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
        web_config_file: args.web_config_file.clone(),
        ..FileConfig::default()
    };
    if args.print_config {
        let c = Config::load(args.config.as_deref(), &overrides)?;
        print!("{}", c.to_toml());
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
                eprintln!("quietstat agent: {}: {warning}", p.display());
            }
            Some(w)
        }
        None => None,
    };
    let listener = match config.listen {
        Some(addr) => {
            let protected = web
                .as_ref()
                .is_some_and(|w| w.tls.is_some() || !w.users.is_empty());
            if !addr.ip().is_loopback() && !protected {
                eprintln!(
                    "quietstat agent: warning: listening on {addr}, beyond this machine, without TLS or authentication: anyone who can reach it reads the metrics; see --web.config.file"
                );
            }
            Some(exporter::http::bind(addr).map_err(anyhow::Error::msg)?)
        }
        None => None,
    };
    let agent = Agent::start(config.clone(), args.config.as_deref(), overrides)?;
    let shared = agent.shared();
    let server = match listener {
        Some(l) => {
            let options = Options {
                max_connections: config.http_max_connections,
                web,
                process_rows: config.http_process_rows,
            };
            let s =
                exporter::http::serve(shared.clone(), l, options).map_err(anyhow::Error::msg)?;
            eprintln!(
                "quietstat agent: serving {}://{}/metrics and /api/v1/snapshot (at most {} connections)",
                if s.tls() { "https" } else { "http" },
                s.local_addr(),
                s.max_connections()
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
    if let Some(why) = shared.failure() {
        bail!("{why}");
    }
    if shared.state.read().is_err() {
        bail!("the agent's state was poisoned by a panic");
    }
    Ok(ExitCode::SUCCESS)
}
