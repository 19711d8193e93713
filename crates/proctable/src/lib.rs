//! Process-table snapshots.
//!
//! One call returns chosen fields of every process (or thread), or of a given
//! list of PIDs, from one of two backends:
//!
//! - [`bpf`]: a BPF program walks the task list and writes fixed-size
//!   records (layout in `bpf/record.h`, shared with the decoder) into a
//!   memory-mapped array ([`bpf::walk`]; Linux 6.7 and later), or a task iterator
//!   writes them to be read in large batches (older kernels); needs CAP_BPF
//!   and CAP_PERFMON (or root).
//! - [`dir`]: /proc read relative to one directory fd, listed with large
//!   `getdents64` batches, with kept-open /proc/PID/stat fds re-read by
//!   `pread`. Needs no privileges.
//!
//! [`ProcTable`] picks one (`auto`: BPF when it loads, else procfs, saying
//! why once). A process is an [`Identity`] (PID and start time): the model
//! derives rates only within one identity, so PID reuse never yields a bogus
//! delta.
//! [`ProcTable::enable_exits`] captures every process that ends, with its
//! final counters, so short-lived processes between two snapshots are not
//! lost.

pub mod bpf;
mod cmdline;
pub use sys::cputime;
pub mod dir;
mod error;
mod fields;
pub mod gpu;
mod largest;
pub mod layout;
mod pool;
mod proc;
mod query;
mod table;
pub mod taskstats;

pub mod record {
    //! The BPF record layout, generated from `bpf/record.h`.
    include!(concat!(env!("OUT_DIR"), "/record.rs"));
}

pub use cmdline::{CMDLINE_MAX, read_cmdline, read_cmdline_of};
pub use error::{Error, ErrorKind, Result};
pub use fields::{Field, Fields, UnknownField};
pub use largest::keep_largest_by;
pub use pool::{MAX_THREADS, Threads};
/// Whether the kernel keeps delay accounting (`kernel.task_delayacct`
/// under `proc_root`); `None` where it has none (no CONFIG_TASK_DELAY_ACCT,
/// or a tree without the file).
pub fn delay_accounting_on(proc_root: &std::path::Path) -> Option<bool> {
    let v = std::fs::read(proc_root.join("sys/kernel/task_delayacct")).ok()?;
    Some(v.trim_ascii() != b"0")
}

pub use proc::{Delays, Exit, Gpu, Identity, NS_PER_TICK, NetBytes, Proc, state_letter};
pub use query::{Query, pid_list, pid_set};
pub use table::{Backend, BackendChoice, ProcTable};
