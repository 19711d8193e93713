//! Exit capture: a `tp_btf/sched_process_exit` program records every
//! thread group that ends into a ring buffer that wakes its reader only past
//! a watermark.

use aya::maps::{Array, Map};
use aya::programs::BtfTracePoint;
use procfs::pid::Comm;

use super::load::{bpf_err, chain, program};
use super::ring::Ring;
use super::{Bpf, ExitStats};
use crate::cputime::{RawCputime, adjust};
use crate::error::Result;
use crate::proc::{Exit, NS_PER_TICK};
use crate::record::{QsConfig, QsExit, QsExitStats};

impl Bpf {
    /// Starts exit capture: from now on every thread group that ends is
    /// recorded until [`Bpf::drain_exits`] takes it. `wakeup_bytes` is the
    /// watermark past which a reader waiting on [`Bpf::exits_fd`] is woken
    /// (the ring holds 4 MiB unless opened smaller, about 35,000 exits).
    pub fn enable_exits(&mut self, wakeup_bytes: u32) -> Result<()> {
        self.set_config(QsConfig {
            flags: self.config.flags,
            wakeup_bytes,
        })?;
        if self.exits.is_some() {
            return Ok(());
        }
        let ring = self
            .ebpf
            .take_map("qs_exits")
            .ok_or_else(|| bpf_err("qs_exits")("not in the object".into()))?;
        let Map::RingBuf(ring) = ring else {
            return Err(bpf_err("qs_exits")("not a ring buffer".into()));
        };
        let ring = Ring::new(ring, self.ring_bytes as usize, self.page_size as usize)?;
        let exit: &mut BtfTracePoint = program(&mut self.ebpf, "qs_exit")?;
        exit.attach()
            .map_err(|e| bpf_err("attaching sched_process_exit")(chain(&e)))?;
        self.exits = Some(ring);
        Ok(())
    }

    /// The ring buffer's fd, readable (epoll) once `wakeup_bytes` wait.
    pub fn exits_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.exits.as_ref().map(Ring::fd)
    }

    /// Appends every exit recorded since the last call; returns how many.
    pub fn drain_exits(&mut self, out: &mut Vec<Exit>) -> usize {
        let Some(ring) = self.exits.as_mut() else {
            return 0;
        };
        let page = self.page_size;
        let mut n = 0;
        let mut scratch = Vec::new();
        ring.drain(&mut scratch, |item| {
            if item.len() < size_of::<QsExit>() {
                return;
            }
            // SAFETY: the item holds one QsExit, a plain integer struct.
            let e: QsExit = unsafe { std::ptr::read_unaligned(item.as_ptr().cast()) };
            let (utime, stime) = adjust(RawCputime {
                utime: e.utime_ns,
                stime: e.stime_ns,
                runtime: e.runtime_ns,
                prev_utime: e.prev_utime_ns,
                prev_stime: e.prev_stime_ns,
            });
            out.push(Exit {
                pid: e.pid,
                ppid: e.ppid,
                comm: Comm::from_task_comm(&e.comm),
                start_ns: e.start_boottime_ns,
                start_ticks: e.start_boottime_ns / NS_PER_TICK,
                exit_ns: e.exit_boottime_ns,
                utime_ns: utime,
                stime_ns: stime,
                minflt: e.min_flt,
                majflt: e.maj_flt,
                maxrss_bytes: e.maxrss_pages * page,
                exit_status: e.exit_code,
            });
            n += 1;
        });
        n
    }

    /// How many exits were seen and lost since capture began.
    pub fn exit_stats(&self) -> Result<ExitStats> {
        let map = self
            .ebpf
            .map("qs_exit_stats")
            .ok_or_else(|| bpf_err("qs_exit_stats")("not in the object".into()))?;
        let arr: Array<_, QsExitStats> =
            Array::try_from(map).map_err(|e| bpf_err("qs_exit_stats")(chain(&e)))?;
        let s = arr
            .get(&0, 0)
            .map_err(|e| bpf_err("reading qs_exit_stats")(chain(&e)))?;
        Ok(ExitStats {
            seen: s.seen,
            lost: s.lost,
        })
    }
}
