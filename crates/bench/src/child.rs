//! What the benchmarks read of the children they start (which die with the
//! benchmark and are reaped by `sys::child::Guard`).

use sys::Error;

/// A child's /proc/PID/stat, parsed (its CPU time, RSS, ...).
pub fn pid_stat(pid: u32) -> Result<procfs::pid::PidStat, Error> {
    let path = format!("/proc/{pid}/stat");
    let bytes = std::fs::read(&path).map_err(|e| Error::io(path.as_str(), e))?;
    procfs::pid::parse_stat(&bytes).map_err(|e| Error::malformed(path, None, e.to_string()))
}
