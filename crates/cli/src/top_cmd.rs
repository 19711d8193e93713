//! `quietstat top`: the terminal view (crate `top`), wired to its options.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, anyhow};
use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// Refresh at most this often (when sampling here: sample this often).
    #[arg(short = 'd', long = "delay", value_parser = crate::parse_duration, default_value = "2s", value_name = "D")]
    delay: Duration,
    /// No colours (also when NO_COLOR is set): bold, dim and reverse only.
    #[arg(long)]
    no_color: bool,
    /// Sample /proc here even when an agent runs.
    #[arg(long)]
    no_agent: bool,
    /// The agent's shared-memory snapshot; its view files are beside it.
    #[arg(long, value_name = "PATH", default_value = "/run/quietstat/snapshot")]
    shm_path: PathBuf,
    /// Walk the recorded history instead of the present.
    #[arg(long)]
    replay: bool,
    /// With --replay: the time to start at (`HH:MM`, `HH:MM:SS`,
    /// "YYYY-MM-DD HH:MM", RFC 3339, -1h) [default: the last sample].
    #[arg(long, requires = "replay", value_name = "TIME")]
    at: Option<String>,
    /// With --replay: the store [default: the agent's: /var/lib/quietstat as root].
    #[arg(long, requires = "replay", value_name = "DIR")]
    store: Option<PathBuf>,
    /// Start in the cgroup view (the key C switches).
    #[arg(long)]
    cgroups: bool,
    /// Quit once the first full screen is drawn (for `bench viewers`).
    #[arg(long, hide = true)]
    first_screen: bool,
}

pub fn run(proc_root: &Path, sys_root: &Path, args: &Args) -> Result<ExitCode> {
    if args.delay < Duration::from_millis(100) {
        return Err(anyhow!(
            "--delay {}: at least 100ms",
            humantime::format_duration(args.delay)
        ));
    }
    let no_color = args.no_color || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let replay = match (args.replay, &args.store) {
        (false, _) => None,
        (true, Some(d)) => Some((d.clone(), args.at.clone())),
        (true, None) => Some((
            agent::config::default_store_path().map_err(|e| anyhow!(e))?,
            args.at.clone(),
        )),
    };
    top::run(top::Options {
        proc_root: proc_root.to_path_buf(),
        sys_root: sys_root.to_path_buf(),
        snapshot: args.shm_path.clone(),
        delay: args.delay,
        color: !no_color,
        no_agent: args.no_agent,
        replay,
        first_screen: args.first_screen,
        cgroups: args.cgroups,
    })
    .map_err(|e| anyhow!(e))?;
    Ok(ExitCode::SUCCESS)
}
