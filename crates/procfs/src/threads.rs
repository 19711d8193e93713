//! What each thread of a process has cost so far: its context switches
//! (/proc/PID/task/TID/status) and its time on a CPU
//! (/proc/PID/task/TID/schedstat, in nanoseconds, where ticks would be too
//! coarse for a quiet process). How the agent's quiet is counted: a
//! voluntary switch is a sleep some event ended, whatever the machine's
//! speed.

use std::path::Path;

use crate::pid::{CtxSwitches, parse_status_ctxsw};

/// One thread's figures, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadCost {
    pub tid: u32,
    /// Its name (`comm`: the kernel keeps 15 bytes).
    pub name: String,
    pub switches: CtxSwitches,
    /// Time on a CPU (schedstat's first field); 0 where the kernel keeps
    /// no schedstat.
    pub cpu_ns: u64,
}

/// Every live thread of `pid`, by thread id; a thread that ends while it
/// is read is left out.
pub fn thread_costs(proc_root: &Path, pid: u32) -> std::io::Result<Vec<ThreadCost>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(proc_root.join(pid.to_string()).join("task"))? {
        let Ok(e) = e else { continue };
        let Some(tid) = e.file_name().to_str().and_then(|t| t.parse::<u32>().ok()) else {
            continue;
        };
        let dir = e.path();
        let (Ok(status), Ok(comm)) = (
            std::fs::read(dir.join("status")),
            std::fs::read_to_string(dir.join("comm")),
        ) else {
            continue;
        };
        let Ok(switches) = parse_status_ctxsw(&status) else {
            continue;
        };
        let cpu_ns = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        out.push(ThreadCost {
            tid,
            name: comm.trim_end().to_string(),
            switches,
            cpu_ns,
        });
    }
    out.sort_by_key(|t| t.tid);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_its_own_thread_with_a_name_and_figures() {
        let me = std::process::id();
        let t = thread_costs(Path::new("/proc"), me).unwrap();
        let main = t.iter().find(|t| t.tid == me).expect("the main thread");
        assert!(!main.name.is_empty());
        assert!(main.cpu_ns > 0, "{main:?}");
    }

    #[test]
    fn a_process_that_is_not_there_is_an_error() {
        assert!(thread_costs(Path::new("/proc"), u32::MAX).is_err());
    }
}
