//! What a snapshot holds: one [`Proc`] per process (or thread), keyed by
//! [`Identity`].

use procfs::pid::{Comm, CtxSwitches, PidIo, SchedInfo};
use serde::Serialize;

/// Nanoseconds per clock tick.
pub const NS_PER_TICK: u64 = 1_000_000_000 / procfs::stat::USER_HZ;

/// A process is its PID and its start time: a PID reused by a later process
/// is a different identity, so no rate is ever computed across the two.
/// Start time is in clock ticks since boot, the resolution /proc gives, so
/// both backends agree on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Identity {
    pub pid: u32,
    pub start_ticks: u64,
}

/// One process, or one thread in a threads snapshot. Fields that were not
/// asked for hold zero (or `None`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Proc {
    /// PID, or TID in a threads snapshot.
    pub pid: u32,
    pub tgid: u32,
    pub ppid: u32,
    pub comm: Comm,
    /// One of `RSDTtXZPI`, as /proc shows it.
    pub state: char,
    /// Start time since boot: nanoseconds (exact from BPF; tick resolution
    /// from procfs) and the clock ticks /proc shows.
    pub start_ns: u64,
    pub start_ticks: u64,
    /// CPU time as /proc reports it (scaled to the precise runtime),
    /// process-wide with dead threads for a process row. Nanoseconds; tick
    /// resolution from procfs.
    pub utime_ns: u64,
    pub stime_ns: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub num_threads: u32,
    pub rss_bytes: u64,
    pub vsize_bytes: u64,
    pub nice: i32,
    /// `prio - 100` as in /proc/PID/stat: negative for real-time tasks.
    pub priority: i32,
    /// SCHED_* number (0 other, 1 fifo, 2 rr, 3 batch, 5 idle, 6 deadline).
    pub policy: u32,
    pub rt_priority: u32,
    /// CPU the task last ran on.
    pub cpu: u32,
    /// cgroup v2 id (the inode number of its directory under the cgroup2
    /// mount); `None` when not asked for or not in a v2 hierarchy.
    pub cgroup_id: Option<u64>,
    /// Process-wide I/O counters; `None` when not asked for or not permitted.
    pub io: Option<PidIo>,
    /// The task's own context switches (for a process row: its leader
    /// thread's, as /proc/PID/status shows).
    pub ctxsw: Option<CtxSwitches>,
    /// Effective user id (for a process row: its leader thread's, as
    /// /proc/PID/status shows); `None` when not asked for.
    pub uid: Option<u32>,
    /// The OOM killer's adjustment (`signal->oom_score_adj`, as
    /// /proc/PID/oom_score_adj shows it); `None` when not asked for.
    pub oom_score_adj: Option<i32>,
    /// The task's own wait for a CPU and timeslices (for a process row:
    /// its leader thread's, as /proc/PID/schedstat shows); `None` when not
    /// asked for.
    pub sched: Option<SchedInfo>,
    /// Bytes the process's TCP sockets received and sent (BPF only; see
    /// [`crate::bpf::net`]); `None` when not asked for or not read.
    pub net: Option<NetBytes>,
    /// The task's own delays by cause, from the kernel's delay accounting
    /// (for a process row: its leader thread's, as /proc/PID/stat's
    /// block I/O ticks are); `None` when not asked for or not read.
    pub delays: Option<Delays>,
    /// What the process's clients of a GPU used (see [`crate::gpu`]); `None`
    /// when not asked for, and for a thread's row.
    pub gpu: Option<Gpu>,
    /// Changes when the process execs another program; compare for equality
    /// only. BPF: the task's exec count (`self_exec_id`); procfs: the start of
    /// its stack, randomised at each exec (0 where /proc hides it from us).
    /// Read with [`crate::Field::Cmdline`], else 0.
    pub exec: u64,
}

impl Proc {
    pub fn identity(&self) -> Identity {
        Identity {
            pid: self.pid,
            start_ticks: self.start_ticks,
        }
    }

    pub fn utime_ticks(&self) -> u64 {
        self.utime_ns / NS_PER_TICK
    }

    pub fn stime_ticks(&self) -> u64 {
        self.stime_ns / NS_PER_TICK
    }
}

/// Payload bytes a process's TCP sockets received and sent, since it
/// started: its live sockets' counts and those its ended sockets left.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NetBytes {
    /// Received in order (`tcp_sock.bytes_received`).
    pub rx_bytes: u64,
    /// Sent and acknowledged by the peer (`tcp_sock.bytes_acked`).
    pub tx_bytes: u64,
}

/// What a process's clients of GPUs used, since each client opened the
/// device: the clients it is charged with (a client several processes hold
/// is charged to one; [`crate::gpu`]), every GPU summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Gpu {
    /// Nanoseconds the GPUs' engines were busy with them, summed over
    /// engines (two engines busy for a second give two).
    pub busy_ns: u64,
    /// Bytes of memory they hold resident, every region (a card's own
    /// memory and the system memory given to it).
    pub mem_bytes: u64,
    /// Clients: opens of a GPU's device (NVIDIA's: devices used).
    pub clients: u32,
}

/// Nanoseconds a task spent waiting, by cause, as the kernel's delay
/// accounting counts them (`task->delays`, what taskstats reports). They
/// advance only while `kernel.task_delayacct` is 1; the kernel's default
/// is 0, and the counts taken before it was turned on are not there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Delays {
    /// Synchronous block I/O (what /proc/PID/stat's field 42 shows in
    /// clock ticks).
    pub blkio_ns: u64,
    /// Swapping a page in.
    pub swapin_ns: u64,
    /// Direct memory reclaim (the kernel's `freepages_delay`).
    pub reclaim_ns: u64,
    /// Refaulting pages of the working set (thrashing).
    pub thrashing_ns: u64,
    /// Memory compaction.
    pub compact_ns: u64,
    /// Copying a page on write.
    pub wpcopy_ns: u64,
    /// Interrupts taken while the task ran (with IRQ time accounting).
    pub irq_ns: u64,
}

impl Delays {
    /// Waits on memory: swap-in, reclaim, thrashing, compaction and
    /// copy-on-write (saturating).
    pub fn memory_ns(&self) -> u64 {
        [
            self.swapin_ns,
            self.reclaim_ns,
            self.thrashing_ns,
            self.compact_ns,
            self.wpcopy_ns,
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }

    /// Every cause's nanoseconds, with the names the columns use.
    pub fn named(&self) -> [(&'static str, u64); 7] {
        [
            ("blkio", self.blkio_ns),
            ("swapin", self.swapin_ns),
            ("reclaim", self.reclaim_ns),
            ("thrashing", self.thrashing_ns),
            ("compact", self.compact_ns),
            ("wpcopy", self.wpcopy_ns),
            ("irq", self.irq_ns),
        ]
    }
}

/// The letter /proc prints for a task state, from the raw `__state` and
/// `exit_state` (task_state_index in include/linux/sched.h).
pub fn state_letter(state: u32, exit_state: u32) -> char {
    const TASK_REPORT: u32 = 0x7f;
    const TASK_IDLE: u32 = 0x402;
    const TASK_RTLOCK_WAIT: u32 = 0x1000;
    const LETTERS: &[u8; 9] = b"RSDTtXZPI";
    let mut s = (state | exit_state) & TASK_REPORT;
    if state == TASK_IDLE {
        s = TASK_REPORT + 1;
    } else if state == TASK_RTLOCK_WAIT {
        s = 2;
    }
    let index = (u32::BITS - s.leading_zeros()) as usize;
    LETTERS.get(index).map_or('?', |&b| b as char)
}

/// A thread group that ended, with its final counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Exit {
    pub pid: u32,
    pub ppid: u32,
    pub comm: Comm,
    pub start_ns: u64,
    pub start_ticks: u64,
    /// When it ended, nanoseconds since boot.
    pub exit_ns: u64,
    pub utime_ns: u64,
    pub stime_ns: u64,
    pub minflt: u64,
    pub majflt: u64,
    /// High-water mark of the resident set.
    pub maxrss_bytes: u64,
    /// The wait status (`code << 8 | signal`).
    pub exit_status: i32,
}

impl Exit {
    pub fn identity(&self) -> Identity {
        Identity {
            pid: self.pid,
            start_ticks: self.start_ticks,
        }
    }

    /// The exit code when it exited normally.
    pub fn exit_code(&self) -> Option<i32> {
        (self.exit_status & 0x7f == 0).then_some((self.exit_status >> 8) & 0xff)
    }

    /// The signal that killed it, if one did.
    pub fn signal(&self) -> Option<i32> {
        let sig = self.exit_status & 0x7f;
        (sig != 0).then_some(sig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_letters() {
        assert_eq!(state_letter(0, 0), 'R');
        assert_eq!(state_letter(1, 0), 'S');
        assert_eq!(state_letter(2, 0), 'D');
        assert_eq!(state_letter(0x402, 0), 'I');
        assert_eq!(state_letter(0x1000, 0), 'D');
        assert_eq!(state_letter(4, 0), 'T');
        assert_eq!(state_letter(8, 0), 't');
        assert_eq!(state_letter(0x80, 0x20), 'Z');
        assert_eq!(state_letter(0x80, 0x10), 'X');
        assert_eq!(state_letter(0x40, 0), 'P');
    }

    #[test]
    fn exit_status() {
        let e = Exit {
            exit_status: 3 << 8,
            ..Exit::default()
        };
        assert_eq!((e.exit_code(), e.signal()), (Some(3), None));
        let e = Exit {
            exit_status: 9,
            ..Exit::default()
        };
        assert_eq!((e.exit_code(), e.signal()), (None, Some(9)));
    }
}
