//! node_exporter's processes collector: the limits (pid_max, threads-max)
//! and, from the agent's process table, pids, threads and states.

use super::*;
use agent::config::AgentSource;
use model::process;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::TaskLimits) {
        let l = &s.task_limits;
        one(out, &NODE_PROCESSES_MAX_PROCESSES, l.pid_max as f64)?;
        one(out, &NODE_PROCESSES_MAX_THREADS, l.threads_max as f64)?;
    }
    let st = x.st;
    if !st.stats[AgentSource::Processes.index()].scheduled {
        return Ok(());
    }
    let threads = process::threads(&st.procs);
    one(out, &NODE_PROCESSES_PIDS, st.procs.len() as f64)?;
    one(out, &NODE_PROCESSES_THREADS, threads as f64)?;
    let mut m = out.family(&NODE_PROCESSES_STATE)?;
    for (state, n) in process::states(&st.procs) {
        let state = state.to_string();
        gauge_l(&mut m, &[("state", state.as_str())], n as f64)?;
    }
    Ok(())
}
