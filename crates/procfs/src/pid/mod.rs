//! Per-process files: /proc/PID/stat (and /proc/PID/task/TID/stat), the
//! context-switch lines of /proc/PID/status, /proc/PID/io, /proc/PID/schedstat,
//! the cgroup v2 line of /proc/PID/cgroup and the /proc/PID/ns/net link.
//! Pure parsers over one read of each file: a read of
//! a /proc/PID file is one kernel snapshot, so a value parsed from it is never
//! half of two.
//!
//! One module per file: `stat.rs`, `status.rs`, `io.rs`, `cgroup.rs`,
//! `cmdline.rs`, `ns.rs`, and `comm.rs` for the name they share.

mod cgroup;
mod cmdline;
mod comm;
mod io;
mod ns;
mod schedstat;
mod stat;
mod status;

pub use cgroup::parse_cgroup_v2;
pub use cmdline::cmdline_text;
pub use comm::{COMM_CAPACITY, Comm};
pub use io::{PidIo, parse_io};
pub use ns::parse_net_ns;
pub use schedstat::{SCHEDSTAT_FILE, SchedInfo, parse_schedstat};
pub use stat::{PidStat, parse_start_ticks, parse_stat, parse_stat_fast, parse_stat_general};
pub use status::{
    CtxSwitches, OOM_SCORE_ADJ_FILE, parse_oom_score_adj, parse_status_ctxsw, parse_status_euid,
};
