//! Exit capture without BPF: the kernel's taskstats interface (generic
//! netlink). A listener registered for every CPU receives, for each task
//! that exits, its final accounting record (CPU times, faults, RSS
//! high-water mark, exit code); the last task of a thread group carries the
//! `AGROUP` flag. Records are summed per thread group here ([`Groups`]) and
//! a process's [`Exit`] is produced when its last task ends (a group that
//! had several threads [`HOLD_NS`] later, for a thread still on its way
//! out whose record comes after the last one).
//!
//! Needs CAP_NET_ADMIN (the kernel refuses the registration otherwise) and
//! CONFIG_TASKSTATS. The socket is non-blocking and drained on the caller's
//! schedule, so no thread is woken per exit; the kernel queues records in
//! the socket's receive buffer (raised to 32 MiB) and drops them when it is
//! full, which shows as ENOBUFS and is counted in [`TaskstatsExits::overflows`].
//!
//! Resolution: taskstats gives the start time in whole seconds of wall-clock
//! time (`ac_btime64`: whole seconds of the clock at exit less whole
//! seconds of the elapsed time), so `start_ns`/`start_ticks` (and
//! `exit_ns`, start plus the exact elapsed time) are within a second of
//! the truth, either way; [`settle_starts`] gives an exit the exact start
//! a process table saw. CPU times are the
//! kernel's tick-sampled user and system times scaled to the task's exact
//! runtime (`cpu_run_virtual_total`, filled by delay accounting's hook), as
//! /proc scales them, without /proc's monotonic clamp; each task's runtime
//! is read as it begins to exit, so the exit's own work (tearing down the
//! address space) is not in it: a few ms for a big process. The RSS
//! high-water mark is that of the last program the process ran (BPF's, like
//! getrusage's, also counts the forked parent's image before an exec).

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use procfs::pid::Comm;

use crate::cputime::{RawCputime, adjust};
use crate::proc::{Delays, Exit, NS_PER_TICK, Proc};

const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const TASKSTATS_CMD_GET: u8 = 1;
const TASKSTATS_CMD_NEW: u8 = 2;
const TASKSTATS_CMD_ATTR_PID: u16 = 1;
const TASKSTATS_CMD_ATTR_REGISTER_CPUMASK: u16 = 3;
const TASKSTATS_TYPE_STATS: u16 = 3;
const TASKSTATS_TYPE_AGGR_PID: u16 = 4;
const TASKSTATS_TYPE_AGGR_TGID: u16 = 5;
const NLA_TYPE_MASK: u16 = 0x3fff;
const AGROUP: u8 = 0x20;

/// Offsets in `struct taskstats` (include/uapi/linux/taskstats.h, x86-64
/// layout; fields after `ac_flag` are 8-byte aligned where the header says
/// so). `ac_tgid` appeared in version 10; older records are per process
/// only and use `ac_pid`.
mod off {
    pub const VERSION: usize = 0;
    pub const EXITCODE: usize = 4;
    pub const FLAG: usize = 8;
    /// The task's exact runtime (se.sum_exec_runtime, ns), filled by
    /// delay accounting's taskstats hook.
    pub const CPU_RUN_VIRTUAL_TOTAL: usize = 72;
    pub const COMM: usize = 80;
    pub const PID: usize = 128;
    pub const PPID: usize = 132;
    pub const BTIME: usize = 136;
    pub const ETIME: usize = 144;
    pub const UTIME: usize = 152;
    pub const STIME: usize = 160;
    pub const MINFLT: usize = 168;
    pub const MAJFLT: usize = 176;
    pub const HIWATER_RSS: usize = 200;
    pub const BTIME64: usize = 344;
    pub const TGID: usize = 368;
    pub const END_V10: usize = 372;
    /// The delay totals: block I/O and swap-in from version 1, reclaim
    /// (`freepages`) 6, thrashing 9, compaction 11, copy-on-write 13,
    /// IRQ 14.
    pub const BLKIO_DELAY: usize = 40;
    pub const SWAPIN_DELAY: usize = 56;
    pub const FREEPAGES_DELAY: usize = 320;
    pub const THRASHING_DELAY: usize = 336;
    pub const COMPACT_DELAY: usize = 360;
    pub const WPCOPY_DELAY: usize = 408;
    pub const IRQ_DELAY: usize = 424;
}

/// One task's final record, as far as an [`Exit`] needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskRecord {
    pub pid: u32,
    pub tgid: u32,
    pub ppid: u32,
    pub exit_code: i32,
    pub last_of_group: bool,
    /// The message also carried the group's aggregate: the group had more
    /// than one thread when one of them ended.
    pub threaded: bool,
    pub comm: [u8; 16],
    pub btime_s: u64,
    pub etime_us: u64,
    pub utime_us: u64,
    pub stime_us: u64,
    pub runtime_ns: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub hiwater_rss_kb: u64,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(o..o + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(o..o + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// Reads a `struct taskstats` payload; `None` when it is too short for the
/// fields used.
pub fn parse_taskstats(b: &[u8]) -> Option<TaskRecord> {
    let version = u16_at(b, off::VERSION)?;
    let pid = u32_at(b, off::PID)?;
    let tgid = if version >= 10 && b.len() >= off::END_V10 {
        u32_at(b, off::TGID)?
    } else {
        pid
    };
    let mut comm = [0u8; 16];
    comm.copy_from_slice(b.get(off::COMM..off::COMM + 16)?);
    let btime64 = u64_at(b, off::BTIME64).unwrap_or(0);
    Some(TaskRecord {
        pid,
        tgid,
        ppid: u32_at(b, off::PPID)?,
        exit_code: u32_at(b, off::EXITCODE)? as i32,
        last_of_group: b.get(off::FLAG)? & AGROUP != 0,
        threaded: false,
        comm,
        btime_s: if btime64 != 0 {
            btime64
        } else {
            u64::from(u32_at(b, off::BTIME)?)
        },
        etime_us: u64_at(b, off::ETIME)?,
        utime_us: u64_at(b, off::UTIME)?,
        stime_us: u64_at(b, off::STIME)?,
        runtime_ns: u64_at(b, off::CPU_RUN_VIRTUAL_TOTAL)?,
        minflt: u64_at(b, off::MINFLT)?,
        majflt: u64_at(b, off::MAJFLT)?,
        hiwater_rss_kb: u64_at(b, off::HIWATER_RSS)?,
    })
}

/// Netlink attributes in `b`: (type, payload).
fn attrs(mut b: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let len = usize::from(u16_at(b, 0)?);
        let kind = u16_at(b, 2)? & NLA_TYPE_MASK;
        if len < 4 || len > b.len() {
            return None;
        }
        let payload = &b[4..len];
        b = &b[len.next_multiple_of(4).min(b.len())..];
        Some((kind, payload))
    })
}

/// The task records in one netlink datagram (several messages may share
/// it).
pub fn parse_datagram(mut b: &[u8], family: u16, out: &mut Vec<TaskRecord>) {
    while b.len() >= 20 {
        let len = u32_at(b, 0).unwrap_or(0) as usize;
        if len < 20 || len > b.len() {
            return;
        }
        let kind = u16_at(b, 4).unwrap_or(0);
        if kind == family && b[16] == TASKSTATS_CMD_NEW {
            let first = out.len();
            for (t, nested) in attrs(&b[20..len]) {
                if t == TASKSTATS_TYPE_AGGR_TGID {
                    out[first..].iter_mut().for_each(|r| r.threaded = true);
                }
                if t != TASKSTATS_TYPE_AGGR_PID {
                    continue;
                }
                for (t, payload) in attrs(nested) {
                    if t == TASKSTATS_TYPE_STATS
                        && let Some(r) = parse_taskstats(payload)
                    {
                        out.push(r);
                    }
                }
            }
        }
        b = &b[len.next_multiple_of(4).min(b.len())..];
    }
}

/// Sums of a thread group's tasks that ended so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct GroupSums {
    pub utime_us: u64,
    pub stime_us: u64,
    pub runtime_ns: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub hiwater_rss_kb: u64,
    /// The leader's own record, where it came.
    pub leader: Option<TaskRecord>,
    /// When a record was last added (monotonic ns).
    updated_ns: u64,
}

impl GroupSums {
    fn add(&mut self, r: TaskRecord, now_ns: u64) {
        self.utime_us += r.utime_us;
        self.stime_us += r.stime_us;
        self.runtime_ns += r.runtime_ns;
        self.minflt += r.minflt;
        self.majflt += r.majflt;
        self.hiwater_rss_kb = self.hiwater_rss_kb.max(r.hiwater_rss_kb);
        if r.pid == r.tgid {
            self.leader = Some(r);
        }
        self.updated_ns = now_ns;
    }
}

/// How long a group whose last task has ended waits for the records of
/// its other threads. The task that takes the group's live count to zero
/// sends the record flagged `AGROUP`, but a thread that dropped the count
/// just before may still be on its way out and send its own record after
/// it: seen here when a process calls exit while its threads end. Only a
/// group that had more than one thread (its last record carries the
/// group's aggregate) is held; a single-threaded one is produced at once.
pub const HOLD_NS: u64 = 1_000_000_000;

/// A group with records but no last one, untouched this long and whose
/// process is gone, is dropped (its last record was lost to an overflow,
/// or came after [`HOLD_NS`]): memory stays bounded by live processes.
pub const STALE_NS: u64 = 60_000_000_000;

/// Per-group sums of task records, and groups that ended but wait
/// [`HOLD_NS`] for late threads. Pure: the clock and the liveness check
/// are passed in.
#[derive(Default)]
pub struct Groups {
    pending: HashMap<u32, GroupSums>,
    held: HashMap<u32, (GroupSums, TaskRecord, u64)>,
    /// Held groups known to be complete: a record of a later process with
    /// the same PID came.
    done: Vec<(GroupSums, TaskRecord)>,
    swept_ns: u64,
    dropped: u64,
}

/// Whether `r`, for the PID of a group that ended (its sums `p`, its last
/// record `last`), is a thread of that group still on its way out rather
/// than a later process that took the PID. Every task of a group sends its
/// record before the PID can be reused (the leader is released only after
/// its threads), so the first record of a later process ends the group:
/// one that never had threads has no late records; a group has one last
/// record and one leader; a task started after the group ended (whole
/// seconds, a second's slack) is not of it.
fn late_thread_of(p: &GroupSums, last: &TaskRecord, r: &TaskRecord) -> bool {
    let ended_s = last.btime_s + last.etime_us / 1_000_000 + 1;
    last.threaded
        && !r.last_of_group
        && !(r.pid == r.tgid && p.leader.is_some())
        && r.btime_s <= ended_s
}

impl Groups {
    /// Adds one task's record received at `now_ns`.
    pub fn add(&mut self, r: TaskRecord, now_ns: u64) {
        if let Some((p, last, _)) = self.held.get_mut(&r.tgid) {
            if late_thread_of(p, last, &r) {
                p.add(r, now_ns);
                return;
            }
            if let Some((p, last, _)) = self.held.remove(&r.tgid) {
                self.done.push((p, last));
            }
        }
        let p = self.pending.entry(r.tgid).or_default();
        p.add(r, now_ns);
        if r.last_of_group {
            let p = self.pending.remove(&r.tgid).unwrap_or_default();
            self.held.insert(r.tgid, (p, r, now_ns));
        }
    }

    /// Moves every group that ended and is settled at `now_ns` (single-
    /// threaded, or ended [`HOLD_NS`] ago) into `out` as its sums and last
    /// record; drops stale partial groups whose process `alive` says is
    /// gone (checked at most once per [`STALE_NS`]).
    pub fn take(
        &mut self,
        now_ns: u64,
        alive: impl Fn(u32) -> bool,
        out: &mut Vec<(GroupSums, TaskRecord)>,
    ) {
        out.append(&mut self.done);
        self.held.retain(|_, (p, last, at)| {
            if last.threaded && now_ns.saturating_sub(*at) < HOLD_NS {
                return true;
            }
            out.push((*p, *last));
            false
        });
        if now_ns.saturating_sub(self.swept_ns) >= STALE_NS {
            self.swept_ns = now_ns;
            let before = self.pending.len();
            self.pending
                .retain(|&tgid, p| now_ns.saturating_sub(p.updated_ns) < STALE_NS || alive(tgid));
            self.dropped += (before - self.pending.len()) as u64;
        }
    }

    /// Partial groups dropped as stale so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Groups with records but no last one yet, and ended groups held.
    pub fn waiting(&self) -> (usize, usize) {
        (self.pending.len(), self.held.len())
    }
}

/// A generic-netlink socket that speaks to the TASKSTATS family.
struct Genl {
    sock: OwnedFd,
    family: u16,
    seq: u32,
    buf: Vec<u8>,
}

impl Genl {
    /// A bound socket, its receive buffer raised to `rcvbuf` bytes where
    /// given, with the TASKSTATS family resolved. Replies are waited for
    /// at most 2 s.
    fn open(rcvbuf: Option<libc::c_int>) -> io::Result<Genl> {
        // SAFETY: socket(2) with constant arguments; the fd is owned below.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_GENERIC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh socket we own.
        let sock = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: a zeroed sockaddr_nl with the family set is valid.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as u16;
        // SAFETY: addr outlives the call; its size is passed.
        if unsafe {
            libc::bind(
                fd,
                (&raw const addr).cast(),
                size_of::<libc::sockaddr_nl>() as u32,
            )
        } < 0
        {
            return Err(io::Error::last_os_error());
        }
        if let Some(big) = rcvbuf {
            for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
                // SAFETY: setsockopt with an int option value.
                let r = unsafe {
                    libc::setsockopt(
                        fd,
                        libc::SOL_SOCKET,
                        opt,
                        (&raw const big).cast(),
                        size_of::<libc::c_int>() as u32,
                    )
                };
                if r == 0 {
                    break;
                }
            }
        }
        let tv = libc::timeval {
            tv_sec: 2,
            tv_usec: 0,
        };
        // SAFETY: setsockopt with a timeval.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&raw const tv).cast(),
                size_of::<libc::timeval>() as u32,
            )
        };
        let mut g = Genl {
            sock,
            family: 0,
            seq: 1,
            buf: vec![0; 1 << 16],
        };
        g.family = g.resolve_family()?;
        Ok(g)
    }

    fn next_seq(&mut self) -> u32 {
        self.seq += 1;
        self.seq
    }

    /// Sends a TASKSTATS request of `cmd` with one attribute; returns its
    /// sequence number, which the reply carries.
    fn ask(&mut self, flags: u16, cmd: u8, attr: u16, payload: &[u8]) -> io::Result<u32> {
        let seq = self.next_seq();
        let m = request(self.family, flags, seq, cmd, attr, payload);
        send(&self.sock, &m)?;
        Ok(seq)
    }

    fn recv(&mut self, flags: i32) -> io::Result<usize> {
        // SAFETY: recv into our buffer, its length passed.
        let n = unsafe {
            libc::recv(
                self.sock.as_raw_fd(),
                self.buf.as_mut_ptr().cast(),
                self.buf.len(),
                flags,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    fn resolve_family(&mut self) -> io::Result<u16> {
        let seq = self.next_seq();
        let m = request(
            GENL_ID_CTRL,
            NLM_F_REQUEST,
            seq,
            CTRL_CMD_GETFAMILY,
            CTRL_ATTR_FAMILY_NAME,
            b"TASKSTATS\0",
        );
        send(&self.sock, &m)?;
        let n = self.recv(0)?;
        let b = &self.buf[..n];
        if u16_at(b, 4) == Some(NLMSG_ERROR) {
            let errno = -(u32_at(b, 16).unwrap_or(0) as i32);
            return Err(io::Error::other(format!(
                "taskstats is not in this kernel (CONFIG_TASKSTATS): {}",
                io::Error::from_raw_os_error(errno)
            )));
        }
        attrs(b.get(20..n).unwrap_or(&[]))
            .find(|(t, _)| *t == CTRL_ATTR_FAMILY_ID)
            .and_then(|(_, p)| u16_at(p, 0))
            .ok_or_else(|| io::Error::other("no TASKSTATS family id in the reply"))
    }
}

/// The error a netlink error message carries (`None` for an ack).
fn nl_error(b: &[u8], what: &str) -> Option<io::Error> {
    let errno = -(u32_at(b, 16).unwrap_or(0) as i32);
    if errno == 0 {
        return None;
    }
    let e = io::Error::from_raw_os_error(errno);
    Some(if errno == libc::EPERM {
        io::Error::new(e.kind(), format!("{what} needs CAP_NET_ADMIN"))
    } else {
        e
    })
}

/// A task's delays from a `struct taskstats` payload; each total the
/// record is too short (too old a kernel) to hold reads 0. `None` when it
/// lacks even the first ones.
pub fn parse_delays(b: &[u8]) -> Option<Delays> {
    let at = |o: usize| u64_at(b, o).unwrap_or(0);
    u64_at(b, off::SWAPIN_DELAY)?;
    Some(Delays {
        blkio_ns: at(off::BLKIO_DELAY),
        swapin_ns: at(off::SWAPIN_DELAY),
        reclaim_ns: at(off::FREEPAGES_DELAY),
        thrashing_ns: at(off::THRASHING_DELAY),
        compact_ns: at(off::COMPACT_DELAY),
        wpcopy_ns: at(off::WPCOPY_DELAY),
        irq_ns: at(off::IRQ_DELAY),
    })
}

/// Tasks' delay accounting asked of taskstats one at a time
/// (`TASKSTATS_CMD_GET` with the task's id; a round trip each): the
/// procfs backend's source for [`crate::Field::DelayAcct`]. Needs
/// CAP_NET_ADMIN.
pub struct DelayQuery {
    genl: Genl,
}

impl DelayQuery {
    /// A socket, checked by asking for this thread's own record: refused
    /// without CAP_NET_ADMIN, naming it.
    pub fn open() -> io::Result<DelayQuery> {
        let mut q = DelayQuery {
            genl: Genl::open(None)?,
        };
        // SAFETY: gettid has no arguments and cannot fail.
        let me = unsafe { libc::gettid() } as u32;
        q.task(me)?;
        Ok(q)
    }

    /// Task `tid`'s delays; `None` when no task has that id (it ended).
    pub fn task(&mut self, tid: u32) -> io::Result<Option<Delays>> {
        let seq = self.genl.ask(
            NLM_F_REQUEST,
            TASKSTATS_CMD_GET,
            TASKSTATS_CMD_ATTR_PID,
            &tid.to_ne_bytes(),
        )?;
        loop {
            let n = self.genl.recv(0)?;
            let b = &self.genl.buf[..n];
            // A reply to an earlier request that timed out: not this one.
            if u32_at(b, 8) != Some(seq) {
                continue;
            }
            if u16_at(b, 4) == Some(NLMSG_ERROR) {
                return match nl_error(b, "asking taskstats for a task") {
                    Some(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(None),
                    Some(e) => Err(e),
                    None => Err(io::Error::other("taskstats answered with no record")),
                };
            }
            let found = attrs(b.get(20..).unwrap_or(&[]))
                .filter(|(t, _)| *t == TASKSTATS_TYPE_AGGR_PID)
                .flat_map(|(_, nested)| attrs(nested))
                .find(|(t, _)| *t == TASKSTATS_TYPE_STATS)
                .and_then(|(_, payload)| parse_delays(payload));
            return found
                .map(Some)
                .ok_or_else(|| io::Error::other("no task record in taskstats' reply"));
        }
    }
}

/// A registered taskstats listener.
pub struct TaskstatsExits {
    genl: Genl,
    records: Vec<TaskRecord>,
    groups: Groups,
    ended: Vec<(GroupSums, TaskRecord)>,
    boot_wall_ns: i128,
    overflows: u64,
}

fn send(sock: &OwnedFd, msg: &[u8]) -> io::Result<()> {
    // SAFETY: a plain send of our buffer on our socket (to the kernel: the
    // socket is not connected, the default destination is pid 0).
    let n = unsafe { libc::send(sock.as_raw_fd(), msg.as_ptr().cast(), msg.len(), 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A generic-netlink request: header, genl header, one attribute.
fn request(kind: u16, flags: u16, seq: u32, cmd: u8, attr: u16, payload: &[u8]) -> Vec<u8> {
    let attr_len = 4 + payload.len();
    let len = 16 + 4 + attr_len.next_multiple_of(4);
    let mut m = Vec::with_capacity(len);
    m.extend_from_slice(&(len as u32).to_ne_bytes());
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(&flags.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(&[cmd, 1, 0, 0]);
    m.extend_from_slice(&(attr_len as u16).to_ne_bytes());
    m.extend_from_slice(&attr.to_ne_bytes());
    m.extend_from_slice(payload);
    m.resize(len, 0);
    m
}

impl TaskstatsExits {
    /// Registers for the exits of tasks on `cpus` (a CPU list such as
    /// `0-63`, normally every possible CPU).
    pub fn open(cpus: &str) -> io::Result<TaskstatsExits> {
        let mut me = TaskstatsExits {
            genl: Genl::open(Some(32 << 20))?,
            records: Vec::new(),
            groups: Groups::default(),
            ended: Vec::new(),
            boot_wall_ns: boot_wall_ns(),
            overflows: 0,
        };
        me.genl.ask(
            NLM_F_REQUEST | NLM_F_ACK,
            TASKSTATS_CMD_GET,
            TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
            format!("{cpus}\0").as_bytes(),
        )?;
        me.wait_ack()?;
        Ok(me)
    }

    fn wait_ack(&mut self) -> io::Result<()> {
        loop {
            let n = self.genl.recv(0)?;
            let b = &self.genl.buf[..n];
            if u16_at(b, 4) == Some(NLMSG_ERROR) {
                return match nl_error(b, "registering for taskstats exits") {
                    None => Ok(()),
                    Some(e) => Err(e),
                };
            }
            // An exit record that came before the ack: keep it.
            let family = self.genl.family;
            parse_datagram(&self.genl.buf[..n], family, &mut self.records);
        }
    }

    /// Receive-buffer overflows seen (each lost an unknown number of
    /// records).
    pub fn overflows(&self) -> u64 {
        self.overflows
    }

    /// Appends every process that ended since the last call; returns how
    /// many.
    pub fn drain(&mut self, out: &mut Vec<Exit>) -> usize {
        loop {
            match self.genl.recv(libc::MSG_DONTWAIT) {
                Ok(n) => {
                    let family = self.genl.family;
                    parse_datagram(&self.genl.buf[..n], family, &mut self.records);
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => self.overflows += 1,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let before = out.len();
        let now = sys::mono_ns();
        // Now, not at open: the wall clock is slewed against the boot clock.
        self.boot_wall_ns = boot_wall_ns();
        for r in self.records.drain(..) {
            self.groups.add(r, now);
        }
        self.groups.take(now, process_exists, &mut self.ended);
        for (p, r) in self.ended.drain(..) {
            let named = p.leader.unwrap_or(r);
            let start_ns =
                (i128::from(named.btime_s) * 1_000_000_000 - self.boot_wall_ns).max(0) as u64;
            // Scaled to the exact runtime as /proc does (without its
            // monotonic clamp), where the kernel filled it in.
            let (utime_ns, stime_ns) = if p.runtime_ns > 0 {
                adjust(RawCputime {
                    utime: p.utime_us * 1000,
                    stime: p.stime_us * 1000,
                    runtime: p.runtime_ns,
                    prev_utime: 0,
                    prev_stime: 0,
                })
            } else {
                (p.utime_us * 1000, p.stime_us * 1000)
            };
            out.push(Exit {
                pid: r.tgid,
                ppid: r.ppid,
                comm: Comm::from_task_comm(&named.comm),
                start_ns,
                start_ticks: start_ns / NS_PER_TICK,
                exit_ns: start_ns + named.etime_us * 1000,
                utime_ns,
                stime_ns,
                minflt: p.minflt,
                majflt: p.majflt,
                maxrss_bytes: p.hiwater_rss_kb * 1024,
                exit_status: group_exit_code(p.leader.as_ref(), &r),
            });
        }
        out.len() - before
    }
}

/// How far, in ticks, an exit's start from taskstats may be from the true
/// start: under a second either way (see the module's note on resolution),
/// and a tenth more for the wall clock's slew against the boot clock
/// between the kernel's record and its reading here.
pub const START_WITHIN_TICKS: u64 = 110;

/// Gives each exit whose process a table saw (`seen`, sorted by PID) that
/// table's exact start, in place of taskstats' start to within a second;
/// its end moves with it (the elapsed time is exact). A process is the
/// table's row of the same PID whose start is within
/// [`START_WITHIN_TICKS`]. Of a PID that ended more than once in `exits`
/// (in the order they ended), only the first can be the table's: the
/// processes after it took the PID once it had ended, after the table was
/// read.
pub fn settle_starts(exits: &mut [Exit], seen: &[Proc]) {
    let mut firsts: Vec<(u32, usize)> = exits.iter().enumerate().map(|(i, e)| (e.pid, i)).collect();
    firsts.sort_unstable();
    firsts.dedup_by_key(|(pid, _)| *pid);
    for (_, i) in firsts {
        let e = &mut exits[i];
        let at = seen.partition_point(|p| p.pid < e.pid);
        let row = seen[at..]
            .iter()
            .take_while(|p| p.pid == e.pid)
            .find(|p| p.start_ticks.abs_diff(e.start_ticks) <= START_WITHIN_TICKS);
        if let Some(p) = row {
            let elapsed = e.exit_ns.saturating_sub(e.start_ns);
            e.start_ticks = p.start_ticks;
            e.start_ns = p.start_ns;
            e.exit_ns = p.start_ns + elapsed;
        }
    }
}

/// The group's exit status, as wait reports it: the group exit's code, or
/// the leader's own. Every task that ends in a group exit (exit_group, a
/// fatal signal) carries its code, the leader among them, but the task that
/// sends the last record may be a thread that ended on its own just before
/// (code 0). A leader's code that is not 0 is a group exit's; a leader that
/// ended with 0 either took part in one that exited 0 or left early
/// (pthread_exit), and then the last task's code is the group's.
fn group_exit_code(leader: Option<&TaskRecord>, last: &TaskRecord) -> i32 {
    match leader {
        Some(l) if l.exit_code != 0 => l.exit_code,
        _ => last.exit_code,
    }
}

/// Whether a process with this PID exists (kill with no signal: EPERM
/// still means it does).
fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let sent = unsafe { libc::kill(pid, 0) } == 0;
    sent || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Wall-clock time of boot in nanoseconds (realtime minus boottime).
fn boot_wall_ns() -> i128 {
    let now = |clock| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-pointer.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
    };
    now(libc::CLOCK_REALTIME) - now(libc::CLOCK_BOOTTIME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_and_a_short_record() {
        // Two attributes, the first padded to 4 bytes.
        let b = [6u8, 0, 1, 0, 0xaa, 0xbb, 0, 0, 8, 0, 2, 0, 1, 2, 3, 4];
        let v: Vec<_> = attrs(&b).collect();
        assert_eq!(v, vec![(1, &[0xaa, 0xbb][..]), (2, &[1, 2, 3, 4][..])]);
        // A length past the end stops the walk without a panic.
        assert_eq!(attrs(&[200u8, 0, 1, 0]).count(), 0);
        assert_eq!(parse_taskstats(&[0; 100]), None);
    }

    fn record(pid: u32, tgid: u32, minflt: u64, last: bool, threaded: bool) -> TaskRecord {
        TaskRecord {
            pid,
            tgid,
            ppid: 1,
            exit_code: 0,
            last_of_group: last,
            threaded,
            comm: [0; 16],
            btime_s: 0,
            etime_us: 0,
            utime_us: 0,
            stime_us: 0,
            runtime_ns: 0,
            minflt,
            majflt: 0,
            hiwater_rss_kb: 0,
        }
    }

    #[test]
    fn an_exit_takes_the_exact_start_a_table_saw_within_a_second_either_way() {
        let row = |pid: u32, start_ticks: u64| Proc {
            pid,
            start_ticks,
            start_ns: start_ticks * NS_PER_TICK,
            ..Default::default()
        };
        let exit = |pid: u32, start_ticks: u64| Exit {
            pid,
            start_ticks,
            start_ns: start_ticks * NS_PER_TICK,
            exit_ns: start_ticks * NS_PER_TICK + 3_000_000_000,
            ..Default::default()
        };
        // The kernel's whole seconds: 0.95 s after the true start (a clock
        // at .05 past a second, 2.95 s elapsed) and 0.95 s before it.
        let seen = [row(5, 900), row(7, 1_000), row(9, 2_000), row(11, 500)];
        let mut exits = [
            exit(7, 1_095),
            exit(9, 1_905),
            // Two seconds off: another process of that PID.
            exit(11, 700),
            // Not in the table.
            exit(13, 50),
            // Ended twice: the first is the table's, the second took the
            // PID after it, even within a second of the table's start.
            exit(5, 880),
            exit(5, 950),
        ];
        settle_starts(&mut exits, &seen);
        assert_eq!(
            (exits[0].start_ticks, exits[0].start_ns),
            (1_000, 10_000_000_000)
        );
        assert_eq!(
            exits[0].exit_ns, 13_000_000_000,
            "the exact elapsed time kept"
        );
        assert_eq!(exits[1].start_ticks, 2_000);
        assert_eq!(exits[2].start_ticks, 700);
        assert_eq!(exits[3].start_ticks, 50);
        assert_eq!((exits[4].start_ticks, exits[5].start_ticks), (900, 950));
    }

    #[test]
    fn a_single_threaded_group_is_produced_at_once() {
        let mut g = Groups::default();
        let mut out = Vec::new();
        g.add(record(10, 10, 5, true, false), 1);
        g.take(1, |_| true, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0.minflt, 5);
        assert_eq!(g.waiting(), (0, 0));
    }

    #[test]
    fn a_thread_ending_after_the_last_record_is_still_counted() {
        let mut g = Groups::default();
        let mut out = Vec::new();
        // A worker took the live count to zero; the leader, which dropped
        // it first, sends its record later.
        g.add(record(21, 20, 3, false, true), 0);
        g.add(record(22, 20, 17, true, true), 10);
        g.take(10, |_| true, &mut out);
        assert!(out.is_empty(), "held for late threads");
        g.add(record(20, 20, 2829, false, true), 20);
        g.take(HOLD_NS + 9, |_| true, &mut out);
        assert!(out.is_empty(), "held HOLD_NS from the group's last record");
        g.take(HOLD_NS + 10, |_| true, &mut out);
        assert_eq!(out.len(), 1);
        let (sums, last) = out[0];
        assert_eq!((sums.minflt, last.pid), (2849, 22));
        assert_eq!(sums.leader.map(|l| l.pid), Some(20));
        assert_eq!(g.waiting(), (0, 0));
    }

    #[test]
    fn a_pid_that_ends_twice_between_two_takes_is_two_processes() {
        let mut g = Groups::default();
        let mut out = Vec::new();
        let at = |pid, tgid, minflt, last, threaded, btime_s| TaskRecord {
            btime_s,
            etime_us: 1_500_000,
            ..record(pid, tgid, minflt, last, threaded)
        };
        // A single-threaded process ends and another takes its PID and
        // ends before the next take.
        g.add(at(60, 60, 5, true, false, 100), 0);
        g.add(at(60, 60, 7, true, false, 102), 1);
        // A threaded one ends (a worker's record after the last one is
        // still its own), then a later process of its PID: its leader, a
        // thread started after the group ended, and its last record.
        g.add(at(70, 70, 1, false, true, 100), 2);
        g.add(at(71, 70, 2, true, true, 100), 3);
        g.add(at(72, 70, 4, false, true, 101), 4);
        g.add(at(70, 70, 8, false, true, 103), 5);
        g.add(at(73, 70, 16, false, true, 104), 6);
        g.add(at(74, 70, 32, true, true, 104), 7);
        g.take(8, |_| true, &mut out);
        g.take(HOLD_NS + 8, |_| true, &mut out);
        let mut got: Vec<_> = out.iter().map(|(s, l)| (l.pid, s.minflt)).collect();
        got.sort_unstable();
        assert_eq!(got, vec![(60, 5), (60, 7), (71, 7), (74, 56)]);
        assert_eq!(g.waiting(), (0, 0));
    }

    #[test]
    fn the_exit_status_is_the_group_exits() {
        let code = |pid, c| TaskRecord {
            exit_code: c,
            ..record(pid, 50, 0, pid != 50, true)
        };
        // The leader called exit(99) while a worker ended on its own.
        assert_eq!(
            group_exit_code(Some(&code(50, 99 << 8)), &code(51, 0)),
            99 << 8
        );
        // The leader left early; a worker called exit(5).
        assert_eq!(
            group_exit_code(Some(&code(50, 0)), &code(51, 5 << 8)),
            5 << 8
        );
        // The leader's record came before the capture began.
        assert_eq!(group_exit_code(None, &code(51, 9)), 9);
    }

    #[test]
    fn stale_partial_groups_of_gone_processes_are_dropped() {
        let mut g = Groups::default();
        let mut out = Vec::new();
        g.add(record(31, 30, 1, false, true), 0);
        g.add(record(41, 40, 1, false, true), 0);
        g.take(STALE_NS - 1, |_| false, &mut out);
        assert_eq!(g.waiting(), (2, 0), "too young to drop");
        g.take(STALE_NS, |pid| pid == 40, &mut out);
        assert_eq!((g.waiting(), g.dropped()), ((1, 0), 1));
        assert!(out.is_empty());
    }
}
