//! Man pages and shell completions, generated from the command-line
//! definition itself so that they never drift from the flags.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

/// Completions for `shell` on stdout.
pub fn completions(cmd: &mut clap::Command, shell: clap_complete::Shell) -> ExitCode {
    clap_complete::generate(shell, cmd, "quietstat", &mut std::io::stdout());
    ExitCode::SUCCESS
}

/// One man page per command (`quietstat.1`, `quietstat-agent.1`,
/// `quietstat-bench-procfs.1`, ...) into `dir`; hidden commands have none.
pub fn manpages(cmd: clap::Command, dir: &Path) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    clap_mangen::generate_to(cmd, dir)
        .with_context(|| format!("writing man pages into {}", dir.display()))?;
    Ok(ExitCode::SUCCESS)
}
