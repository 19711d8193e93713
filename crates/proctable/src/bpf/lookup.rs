//! The vectored lookup: `bpf/lookup.bpf.c`'s program, run on demand with
//! `BPF_PROG_RUN`, looks each PID of a memory-mapped array up in the
//! caller's PID namespace and writes its process's start time into a second
//! mapped array. Its cost is per PID asked for, where a walk's is per task
//! on the machine. Needs `bpf_task_from_vpid` (Linux 6.13 or later);
//! [`crate::bpf::Bpf::start_ticks`] walks the table otherwise.

use std::os::fd::AsRawFd;

use aya::Btf;

use super::load::{
    Mapped, SyscallProgram, bpf_err, link_kfuncs_of, load_syscall_program, page_round,
};
use super::test_run::{Args, test_run};
use crate::error::Result;
use crate::pool::{Helpers, Threads};
use crate::proc::NS_PER_TICK;
use crate::record::{
    QS_KFUNC_ITER_NUM_DESTROY, QS_KFUNC_ITER_NUM_NEW, QS_KFUNC_ITER_NUM_NEXT,
    QS_KFUNC_TASK_FROM_VPID, QS_KFUNC_TASK_RELEASE, QS_LOOKUP_FOUND, QS_LOOKUP_MIN_PIDS,
};

/// The committed object, 8-byte aligned as the ELF parser needs.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../../bpf/lookup.bpf.o");

const KFUNCS: [(u64, &str); 5] = [
    (QS_KFUNC_TASK_FROM_VPID, "bpf_task_from_vpid"),
    (QS_KFUNC_TASK_RELEASE, "bpf_task_release"),
    (QS_KFUNC_ITER_NUM_NEW, "bpf_iter_num_new"),
    (QS_KFUNC_ITER_NUM_NEXT, "bpf_iter_num_next"),
    (QS_KFUNC_ITER_NUM_DESTROY, "bpf_iter_num_destroy"),
];

/// The most PIDs one run looks up: longer arrays are taken in runs of
/// this many, so that the kernel memory the arrays hold (16 bytes a PID)
/// stays bounded whatever a caller asks.
pub const MAX_PIDS_PER_RUN: u32 = 1 << 18;

/// PIDs per program run when a lookup is split between threads: small
/// enough that a thread whose CPU runs slow takes fewer, large enough that
/// a run's system call is a small part of it (about 150 ns a PID here).
pub const PIDS_PER_PART: u64 = 1024;

/// PIDs per thread below which a lookup is not split: waking a helper
/// costs about what looking this many up takes.
pub const MIN_PER_THREAD: u64 = 2048;

/// Returns a copy of `object` with its kernel-function calls linked (see
/// [`super::walk::link_kfuncs`]), and how many calls were rewritten.
pub fn link_kfuncs(object: &[u8], btf: &Btf) -> Result<(Vec<u64>, usize)> {
    link_kfuncs_of(
        object,
        "lookup.bpf.o",
        &KFUNCS,
        "looking PIDs up needs Linux 6.13 or later",
        btf,
    )
}

/// The loaded lookup and its two mapped arrays.
pub(crate) struct Lookup {
    pids: Mapped,
    starts: Mapped,
    capacity: u32,
    program: SyscallProgram,
}

// SAFETY: the mappings are only used through &self/&mut self.
unsafe impl Send for Lookup {}

impl Lookup {
    /// Loads the lookup with room for `capacity` PIDs a run; `object` is
    /// [`OBJECT`] after [`link_kfuncs`].
    pub(crate) fn load(object: &[u8], btf: &Btf, capacity: u32) -> Result<Lookup> {
        let capacity = capacity.clamp(QS_LOOKUP_MIN_PIDS as u32, MAX_PIDS_PER_RUN);
        let program = load_syscall_program(
            object,
            "lookup.bpf.o",
            "qs_lookup",
            btf,
            &[("qs_lookup_pids", capacity), ("qs_lookup_starts", capacity)],
        )?;
        let map = |name: &'static str, size: usize, writable: bool| -> Result<Mapped> {
            let m = program
                .maps
                .iter()
                .find(|(n, _)| n == name)
                .ok_or_else(|| bpf_err(name)("not in the object".into()))?;
            Mapped::new(&m.1, page_round(capacity as usize * size), writable)
                .map_err(|e| bpf_err(name)(e.to_string()))
        };
        let pids = map("qs_lookup_pids", size_of::<u64>(), true)?;
        let starts = map("qs_lookup_starts", size_of::<u64>(), false)?;
        Ok(Lookup {
            pids,
            starts,
            capacity,
            program,
        })
    }

    /// PIDs one run takes.
    pub(crate) fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Start time in clock ticks of the task each of `pids` names (a
    /// process, or a thread by its id, as /proc/PID/stat answers; `None`:
    /// no such task), in runs of at most [`Lookup::capacity`] PIDs, each
    /// cut in parts of [`PIDS_PER_PART`] that `threads` threads (this one
    /// and `helpers`) take in turn.
    pub(crate) fn start_ticks(
        &mut self,
        pids: &[u32],
        threads: Threads,
        helpers: &mut Helpers,
    ) -> Result<Vec<Option<u64>>> {
        let mut out = Vec::with_capacity(pids.len());
        let fd = self.program.fd.as_raw_fd();
        for chunk in pids.chunks(self.capacity as usize) {
            // SAFETY: the mapping holds `capacity` u64 values, writable, and
            // no program runs on them now (every run below is waited for).
            let asked = unsafe { self.pids.slice_mut::<u64>(chunk.len()) };
            for (a, &pid) in asked.iter_mut().zip(chunk) {
                *a = u64::from(pid);
            }
            let n = chunk.len() as u64;
            let parts = n.div_ceil(PIDS_PER_PART) as usize;
            let run = |part: usize| -> std::io::Result<u32> {
                let mut args: Args = [0; 12];
                args[0] = part as u64 * PIDS_PER_PART;
                args[1] = PIDS_PER_PART.min(n - args[0]);
                test_run(fd, &args)
            };
            let threads = threads.count(n, MIN_PER_THREAD);
            if threads == 1 {
                (0..parts).try_for_each(|part| run(part).map(drop))
            } else {
                helpers.run_shared(threads, parts, &run).map(drop)
            }
            .map_err(|e| bpf_err("running the PID lookup")(e.to_string()))?;
            // SAFETY: `capacity` u64 values, written by runs that have all
            // returned (BPF_PROG_RUN is a full barrier; run_shared waits).
            let starts = unsafe { self.starts.slice::<u64>(chunk.len()) };
            out.extend(starts.iter().map(|&s| {
                (s & QS_LOOKUP_FOUND != 0).then_some((s & !QS_LOOKUP_FOUND) / NS_PER_TICK)
            }));
        }
        Ok(out)
    }
}
