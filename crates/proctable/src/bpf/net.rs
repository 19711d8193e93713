//! Network bytes per process ([`crate::Field::Net`]), read from the byte
//! counters the kernel keeps in every TCP socket, with no hook on any
//! packet, send or receive (`bpf/net.bpf.c`).
//!
//! Each TCP socket is given an owner in its own storage, by two
//! tracepoints that fire a few times in a socket's life: a socket that
//! connects is the caller's, one that listens the listener's. A connection
//! a listening socket accepts is made in the kernel's receive path, not in
//! any process's call: it is *unheld* until a holder scan gives it to the
//! first process found holding it. The scan is an iterator over
//! descriptors, about 400 ns each: at load over every process's; later,
//! when a sweep saw unheld connections and at most every [`SCAN_EVERY`]
//! unless set, over the descriptors of the processes that listen for them
//! and of their children (which is where a server's workers are: those
//! /proc/PID/task/*/children lists, whatever fields the query asked).
//!
//! A visit to a socket charges its owner with what the socket's
//! `bytes_received` and `bytes_acked` (payload received in order; payload
//! sent and acknowledged) grew by since the socket's last visit; the
//! kernel keeps each owner's sums from read to read. A read visits, by
//! cost proportional to what changed:
//!
//! - the sockets of the processes that ran since the last read (their
//!   run time or context switches moved: `Activity`), through the same
//!   iterator over their descriptors, which also gives an unheld
//!   connection to the process found holding it; or
//! - every owned socket (the *sweep*), through the iterator over the
//!   owners' storage: a visit per socket, of every network namespace, not
//!   per bucket of the kernel's socket hash, and no socket locked; at
//!   the first read, at least every [`SWEEP_EVERY`] unless set, and
//!   whenever visiting the processes that ran is estimated to cost more
//!   (each one's last visit, or the average visit: a server holding
//!   10,000 connections costs as much to visit as a sweep of them).
//!
//! A query by PID visits the processes it names (every socket when a
//! sweep is due).
//!
//! A socket is also visited as it closes and as the kernel destroys it,
//! so that the bytes of one closed between two reads are charged. What a
//! socket received while none of its holders ran (data left unread, or
//! the acknowledgement of data sent before) is charged by the next sweep
//! or the next read after a holder runs.
//!
//! What it cannot give:
//!
//! - UDP, raw or unix sockets: the kernel keeps no byte counts for them
//!   (counting them would take a hook on every send and receive).
//! - Exactness for a socket handed on: a connection whose holder changes
//!   after the scan that found it (a descriptor passed over a unix socket)
//!   stays charged to the first holder; a socket two processes hold, to
//!   the lower PID; a connection held by a process that is neither the
//!   listener nor its child stays unheld until that process is visited
//!   as one that ran, or the connection ends.
//! - The procfs backend reads nothing: `/proc/PID/net` is the network
//!   namespace's, not the process's.
//!
//! The tracepoints run in the socket's own changes of state, on the CPU
//! that makes them: never on another CPU, and never waking a reader.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

use aya::maps::{Array, HashMap, Map, MapData};
use std::time::{Duration, Instant};

use aya::programs::{BtfTracePoint, Iter};
use aya::{Btf, Ebpf};

use super::load::{bpf_err, chain, program, read_to_end};
use crate::error::{Error, Result};
use crate::proc::{NetBytes, Proc};
use crate::record::{QS_SOCK_UNHELD, QsNetStats, QsOwner, QsSock};

/// The least time between two holder scans, unless set
/// ([`crate::bpf::Bpf::set_net_scan_every`]).
pub const SCAN_EVERY: Duration = Duration::from_secs(10);

/// The most time between two sweeps of every socket, unless set
/// ([`crate::bpf::Bpf::set_net_sweep_every`]).
pub const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// What a read visits.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Visit<'a> {
    /// The descriptors of the processes that ran since the last read
    /// (sorted), or every socket where that is estimated to cost more;
    /// every socket when a sweep is due.
    Ran(&'a [u32]),
    /// The descriptors of the processes a query names (sorted); every
    /// socket when a sweep is due.
    Named(&'a [u32]),
    /// Every socket.
    All,
}

/// The committed object, 8-byte aligned as the ELF parser needs.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../../bpf/net.bpf.o");

// SAFETY: plain #[repr(C)] integer structs with no padding (checked by
// the generated size assertions).
unsafe impl aya::Pod for QsNetStats {}
// SAFETY: as above.
unsafe impl aya::Pod for QsOwner {}
// SAFETY: as above.
unsafe impl aya::Pod for QsSock {}

/// One process's sockets' sums from a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sum {
    tgid: u32,
    start_ns: u64,
    rx: u64,
    tx: u64,
}

impl Sum {
    fn of(v: &QsSock) -> Sum {
        Sum {
            tgid: v.tgid,
            start_ns: v.start_ns,
            rx: v.rx_bytes,
            tx: v.tx_bytes,
        }
    }
}

/// The loaded programs, their hooks attached, and the last read's sums.
pub(crate) struct Net {
    ebpf: Ebpf,
    /// The link of the iterator over the sockets' owners.
    socks: OwnedFd,
    buf: Vec<u8>,
    /// The owners' sums as last read, sorted by thread-group id.
    sums: Vec<Sum>,
    /// Unheld connections the last sweep saw, less those a holder scan
    /// has looked for since.
    unheld: usize,
    /// The processes that listen for them, and then their children too:
    /// the next holder scan's.
    listeners: Vec<u32>,
    /// The owners' sums, read in batches: keys and values; and the noted
    /// owners' values (unused).
    owners: Vec<QsOwner>,
    values: Vec<QsSock>,
    noted: Vec<u32>,
    /// The kernel's count of owners it could not note, as last read.
    touched_full: u64,
    last_scan: Instant,
    scan_every: Duration,
    scans: u64,
    /// When the last sweep ran (`None`: none yet), and what it took.
    last_sweep: Option<Instant>,
    sweep_took: Duration,
    sweep_every: Duration,
    sweeps: u64,
    /// What a visit to one process's descriptors took, on average; and
    /// each one's of the last read that visited, by PID (and the next's).
    per_process: Duration,
    costs: Vec<(u32, Duration)>,
    took: Vec<(u32, Duration)>,
    /// When the sums were last pruned of processes that ended.
    last_prune: Instant,
}

impl Net {
    /// Loads the programs against `btf`, attaches the hooks and gives an
    /// owner to every TCP socket there is now.
    pub(crate) fn load(btf: &Btf) -> Result<Net> {
        let mut ebpf = sys::bpf::loader()
            .btf(Some(btf))
            .load(OBJECT)
            .map_err(|e| bpf_err("loading net.bpf.o")(chain(&e)))?;
        for (name, tracepoint) in [
            ("qs_sk_state", "inet_sock_set_state"),
            ("qs_sk_ended", "tcp_destroy_sock"),
        ] {
            let prog: &mut BtfTracePoint = program(&mut ebpf, name)?;
            sys::bpf::load_retrying(|| prog.load(tracepoint, btf))
                .map_err(|e| bpf_err(name)(format!("verifying it: {}", chain(&e))))?;
        }
        for (name, target) in [
            ("qs_sk_files", "task_file"),
            ("qs_socks", "bpf_sk_storage_map"),
        ] {
            let prog: &mut Iter = program(&mut ebpf, name)?;
            sys::bpf::load_retrying(|| prog.load(target, btf))
                .map_err(|e| bpf_err(name)(format!("verifying it: {}", chain(&e))))?;
        }
        // The tracepoints first, then the holders of the sockets made
        // before: a socket that connects between the two is owned by its
        // tracepoint.
        for name in ["qs_sk_state", "qs_sk_ended"] {
            let prog: &mut BtfTracePoint = program(&mut ebpf, name)?;
            prog.attach()
                .map_err(|e| bpf_err(name)(format!("attaching it: {}", chain(&e))))?;
        }
        // union bpf_iter_link_info's map member: the storage to walk.
        let owners = storage_fd(&ebpf, "qs_sk_owner")?.as_raw_fd();
        let socks = iter_link(&ebpf, "qs_socks", Some([owners as u32, 0, 0, 0]))?;
        let mut net = Net {
            ebpf,
            socks,
            buf: vec![0u8; 64 * 1024],
            sums: Vec::new(),
            unheld: 0,
            listeners: Vec::new(),
            owners: Vec::new(),
            values: Vec::new(),
            noted: Vec::new(),
            touched_full: 0,
            last_scan: Instant::now(),
            scan_every: SCAN_EVERY,
            scans: 0,
            last_sweep: None,
            sweep_took: Duration::ZERO,
            sweep_every: SWEEP_EVERY,
            sweeps: 0,
            per_process: Duration::ZERO,
            costs: Vec::new(),
            took: Vec::new(),
            last_prune: Instant::now(),
        };
        net.scan(None)?;
        Ok(net)
    }

    /// The iterator over descriptors: those of every process (`None`), or
    /// of those named. Each TCP socket without an owner, or unheld, is
    /// given to the first process found holding it, and each owned one is
    /// visited.
    fn visit_holders(&mut self, pids: Option<&[u32]>) -> Result<()> {
        run_task_iter(
            &self.ebpf,
            "qs_sk_files",
            pids,
            &mut self.buf,
            "visiting descriptors",
            |_| {},
        )
    }

    /// Visits the descriptors of the processes in `ran` (sorted), keeping
    /// what each visit took.
    fn visit_ran(&mut self, ran: &[u32]) -> Result<()> {
        self.took.clear();
        for &pid in ran {
            let t = Instant::now();
            self.visit_holders(Some(&[pid]))?;
            let took = t.elapsed();
            self.took.push((pid, took));
            // A moving average, new visits weighing a quarter.
            self.per_process = match self.per_process {
                Duration::ZERO => took,
                p => (p * 3 + took) / 4,
            };
        }
        std::mem::swap(&mut self.took, &mut self.costs);
        sys::trim_capacity(&mut self.took, self.costs.len());
        Ok(())
    }

    /// What visiting the processes in `ran` (sorted) is estimated to take:
    /// each one's last visit, or the average visit for one not visited by
    /// the last read that visited.
    fn estimate(&self, ran: &[u32]) -> Duration {
        let mut at = 0;
        let mut sum = Duration::ZERO;
        for &pid in ran {
            at += self.costs[at..].partition_point(|c| c.0 < pid);
            sum += match self.costs.get(at) {
                Some(&(p, took)) if p == pid => took,
                _ => self.per_process,
            };
        }
        sum
    }

    /// The holder scan: [`Net::visit_holders`] of every process or of
    /// those named, counted.
    fn scan(&mut self, pids: Option<&[u32]>) -> Result<()> {
        self.visit_holders(pids)?;
        self.last_scan = Instant::now();
        self.scans += 1;
        Ok(())
    }

    /// The most time between two sweeps of every socket; `Duration::MAX`:
    /// none after the first read, whatever visiting those that ran costs.
    pub(crate) fn set_sweep_every(&mut self, every: Duration) {
        self.sweep_every = every;
    }

    /// Sweeps run since the load.
    pub(crate) fn sweeps(&self) -> u64 {
        self.sweeps
    }

    /// The least time between two holder scans.
    pub(crate) fn set_scan_every(&mut self, every: Duration) {
        self.scan_every = every;
    }

    /// Holder scans run since the load, the load's included.
    pub(crate) fn scans(&self) -> u64 {
        self.scans
    }

    /// Unheld connections the last sweep saw (not counted while live),
    /// less those a holder scan has looked for since.
    pub(crate) fn unheld(&self) -> usize {
        self.unheld
    }

    /// Visits the sockets `visit` says (every socket at the first read and
    /// when a sweep is due), and brings the owners' sums up to date. Runs
    /// a holder scan first when one is due.
    pub(crate) fn read(&mut self, visit: Visit<'_>) -> Result<()> {
        if self.unheld > 0 && self.last_scan.elapsed() >= self.scan_every {
            let mut pids = std::mem::take(&mut self.listeners);
            let listeners = pids.len();
            for i in 0..listeners {
                children_of(pids[i], &mut pids);
            }
            pids.sort_unstable();
            pids.dedup();
            self.scan(Some(&pids))?;
            // Found, or held where no scan looks: the next sweep says.
            self.unheld = 0;
        }
        let due = self
            .last_sweep
            .is_none_or(|t| t.elapsed() >= self.sweep_every);
        let sweep = match visit {
            Visit::All => true,
            Visit::Named(_) => due,
            // Duration::MAX: never again, whatever visiting costs.
            Visit::Ran(ran) => {
                due || (self.sweep_every < Duration::MAX && self.estimate(ran) >= self.sweep_took)
            }
        };
        match visit {
            Visit::Named(pids) | Visit::Ran(pids) if !sweep => self.visit_ran(pids)?,
            _ => {
                let t = Instant::now();
                self.sweep()?;
                self.sweep_took = t.elapsed();
                self.last_sweep = Some(Instant::now());
                self.sweeps += 1;
            }
        }
        self.take_sums(sweep)?;
        if self.last_prune.elapsed() >= self.scan_every {
            self.prune();
            self.last_prune = Instant::now();
        }
        Ok(())
    }

    /// Brings the sums up to date: every owner's after a sweep (or where
    /// the kernel could not note every owner whose sums changed), else
    /// those of the owners it noted.
    fn take_sums(&mut self, all: bool) -> Result<()> {
        let touched = map_fd(&self.ebpf, "qs_net_touched")?.as_raw_fd();
        batch(
            touched,
            aya_obj::generated::bpf_cmd::BPF_MAP_LOOKUP_AND_DELETE_BATCH,
            &mut self.owners,
            &mut self.noted,
        )
        .map_err(|e| bpf_err("reading the owners whose sums changed")(e.to_string()))?;
        let full = self.stats().touched_full;
        let all = all || full != self.touched_full;
        self.touched_full = full;
        let fd = map_fd(&self.ebpf, "qs_net_sums")?.as_raw_fd();
        if all {
            batch(
                fd,
                aya_obj::generated::bpf_cmd::BPF_MAP_LOOKUP_BATCH,
                &mut self.owners,
                &mut self.values,
            )
            .map_err(|e| bpf_err("reading the sockets' sums")(e.to_string()))?;
            self.sums.clear();
            self.sums.extend(self.values.iter().map(Sum::of));
            self.sums.sort_unstable_by_key(|s| (s.tgid, s.start_ns));
            return Ok(());
        }
        let map = sums_map(&self.ebpf)?;
        for key in &self.owners {
            // Gone: pruned meanwhile.
            let Ok(v) = map.get(key, 0) else {
                continue;
            };
            let new = Sum::of(&v);
            match self
                .sums
                .binary_search_by_key(&(new.tgid, new.start_ns), |s| (s.tgid, s.start_ns))
            {
                Ok(i) => self.sums[i] = new,
                Err(i) => self.sums.insert(i, new),
            }
        }
        Ok(())
    }

    fn stats(&self) -> QsNetStats {
        self.ebpf
            .map("qs_net_stats")
            .and_then(|m| Array::<_, QsNetStats>::try_from(m).ok())
            .and_then(|a| a.get(&0, 0).ok())
            .unwrap_or_default()
    }

    /// Visits every owned socket; the unheld connections are written out
    /// one by one, and their listeners kept for the next holder scan.
    fn sweep(&mut self) -> Result<()> {
        self.unheld = 0;
        self.listeners.clear();
        let mut file = std::fs::File::from(iter_create(&self.socks)?);
        let len = read_to_end(&mut file, &mut self.buf, "reading the TCP sockets")?;
        let step = size_of::<QsSock>();
        if !len.is_multiple_of(step) {
            return Err(Error::Decode(format!(
                "{len} bytes is not a whole number of {step}-byte socket records"
            )));
        }
        for chunk in self.buf[..len].chunks_exact(step) {
            // SAFETY: chunk is one QsSock, a plain integer struct read
            // unaligned.
            let s: QsSock = unsafe { std::ptr::read_unaligned(chunk.as_ptr().cast()) };
            if s.flags & QS_SOCK_UNHELD as u32 != 0 {
                self.unheld += 1;
                self.listeners.push(s.tgid);
            }
        }
        self.listeners.sort_unstable();
        self.listeners.dedup();
        Ok(())
    }

    /// Gives each process row of `out` (sorted by PID) its sums from the
    /// last read: zero for a process that owns no socket. The kernel only
    /// adds to a sum, so a figure never goes below what an earlier read
    /// gave.
    pub(crate) fn apply(&mut self, out: &mut [Proc]) {
        let mut at = 0;
        let mut last = 0;
        for p in out.iter_mut().filter(|p| p.pid == p.tgid) {
            // Rows in PID order are met in one pass; any other order
            // starts again.
            if p.tgid < last {
                at = 0;
            }
            last = p.tgid;
            at += self.sums[at..].partition_point(|s| s.tgid < p.tgid);
            let sum = self.sums[at..]
                .iter()
                .take_while(|s| s.tgid == p.tgid)
                .find(|s| s.start_ns == p.start_ns);
            p.net = Some(sum.map_or(NetBytes::default(), |s| NetBytes {
                rx_bytes: s.rx,
                tx_bytes: s.tx,
            }));
        }
    }

    /// Drops the sums of processes that ended: those whose PID names no
    /// process. Run by [`Net::read`] (not by the build, which a caller may
    /// hold a lock for) at most every scan interval, whatever the query:
    /// one `kill(pid, 0)` per process with sums. A sum whose PID a new
    /// process took stays until that one ends; no row matches it (the
    /// start time differs).
    fn prune(&mut self) {
        let Some(Ok(mut map)) = self
            .ebpf
            .map_mut("qs_net_sums")
            .map(HashMap::<&mut MapData, QsOwner, QsSock>::try_from)
        else {
            return;
        };
        self.sums.retain(|s| {
            // SAFETY: kill with signal 0 sends nothing; it only checks.
            let gone = unsafe { libc::kill(s.tgid as libc::pid_t, 0) } != 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            if gone {
                let key = QsOwner {
                    start_ns: s.start_ns,
                    tgid: s.tgid,
                    pad: 0,
                };
                // The entry may be gone already: fine.
                let _ = map.remove(&key);
            }
            !gone
        });
    }

    /// Visits whose counts found no room to be kept (65,536 processes
    /// with sums).
    pub(crate) fn lost(&self) -> u64 {
        self.stats().lost
    }
}

/// Which processes ran between two reads: each process's run time and
/// context switches from the process table's walk, kept from read to
/// read.
#[derive(Default)]
pub(crate) struct Activity {
    /// (TGID, start time, a sum of its counters), sorted, of the last read.
    last: Vec<(u32, u64, u64)>,
    now: Vec<(u32, u64, u64)>,
    /// The processes that ran, sorted.
    ran: Vec<u32>,
}

impl Activity {
    /// Takes a read's rows (TGID, start time, run time plus context
    /// switches: a thread's or a process's, several rows of one process
    /// summed) and gives the processes that are new or whose counters
    /// moved since the last.
    pub(crate) fn ran(&mut self, rows: impl Iterator<Item = (u32, u64, u64)>) -> &[u32] {
        self.now.clear();
        self.now.extend(rows);
        self.now.sort_unstable_by_key(|r| (r.0, r.1));
        self.now.dedup_by(|next, kept| {
            let same = (next.0, next.1) == (kept.0, kept.1);
            if same {
                kept.2 = kept.2.wrapping_add(next.2);
            }
            same
        });
        self.ran.clear();
        let mut i = 0;
        for &(tgid, start, sum) in &self.now {
            while i < self.last.len() && (self.last[i].0, self.last[i].1) < (tgid, start) {
                i += 1;
            }
            let before = self.last.get(i).filter(|l| (l.0, l.1) == (tgid, start));
            if before.is_none_or(|l| l.2 != sum) {
                self.ran.push(tgid);
            }
        }
        self.ran.dedup();
        std::mem::swap(&mut self.last, &mut self.now);
        sys::trim_capacity(&mut self.now, self.last.len());
        &self.ran
    }
}

/// Every entry of hash map `fd` into `keys` and `values` (cleared first),
/// by `cmd` (`BPF_MAP_LOOKUP_BATCH`, or `..._AND_DELETE_BATCH` to empty
/// the map as it is read), 4,096 entries a system call.
fn batch<K: Copy + Default, V: Copy + Default>(
    fd: RawFd,
    cmd: aya_obj::generated::bpf_cmd,
    keys: &mut Vec<K>,
    values: &mut Vec<V>,
) -> std::io::Result<()> {
    const BATCH: usize = 4096;
    keys.clear();
    values.clear();
    let mut token = 0u64;
    let mut first = true;
    loop {
        let at = keys.len();
        keys.resize(at + BATCH, K::default());
        values.resize(at + BATCH, V::default());
        // union bpf_attr's batch: in_batch, out_batch, keys, values,
        // count, map_fd.
        let mut attr = [0u64; 18];
        let mut next = 0u64;
        attr[0] = if first {
            0
        } else {
            &token as *const u64 as u64
        };
        attr[1] = &mut next as *mut u64 as u64;
        attr[2] = keys[at..].as_mut_ptr() as u64;
        attr[3] = values[at..].as_mut_ptr() as u64;
        attr[4] = BATCH as u64 | (fd as u32 as u64) << 32;
        let r = bpf(cmd as i64, &mut attr);
        let got = (attr[4] & 0xffff_ffff) as usize;
        keys.truncate(at + got);
        values.truncate(at + got);
        match r {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
            Err(e) => return Err(e),
        }
        token = next;
        first = false;
    }
}

/// Appends to `out` the children of every thread of process `pid`, as
/// /proc/PID/task/TID/children lists them (where a server's workers are,
/// whatever the query's fields); nothing for a process that ended.
fn children_of(pid: u32, out: &mut Vec<u32>) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return;
    };
    for t in tasks.flatten() {
        let Ok(list) = std::fs::read_to_string(t.path().join("children")) else {
            continue;
        };
        out.extend(
            list.split_ascii_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
    }
}

/// The fd of socket storage map `map_name` of `ebpf`.
fn storage_fd<'a>(ebpf: &'a Ebpf, map_name: &'static str) -> Result<std::os::fd::BorrowedFd<'a>> {
    match ebpf.map(map_name) {
        Some(Map::SkStorage(m)) => Ok(m.fd().as_fd()),
        Some(_) => Err(bpf_err(map_name)("not a socket storage map".into())),
        None => Err(bpf_err(map_name)("not in the object".into())),
    }
}

/// The owners' sums (`qs_net_sums`), by owner.
fn sums_map(ebpf: &Ebpf) -> Result<HashMap<&MapData, QsOwner, QsSock>> {
    let m = ebpf
        .map("qs_net_sums")
        .ok_or_else(|| bpf_err("qs_net_sums")("not in the object".into()))?;
    HashMap::try_from(m).map_err(|e| bpf_err("qs_net_sums")(chain(&e)))
}

/// The fd of map `map_name` of `ebpf`.
fn map_fd<'a>(ebpf: &'a Ebpf, map_name: &'static str) -> Result<std::os::fd::BorrowedFd<'a>> {
    match ebpf.map(map_name) {
        Some(Map::HashMap(m)) => Ok(m.fd().as_fd()),
        Some(_) => Err(bpf_err(map_name)("not a hash map".into())),
        None => Err(bpf_err(map_name)("not in the object".into())),
    }
}

/// A link of iterator program `prog`, with `info` (`union
/// bpf_iter_link_info`, as four words) when given: `BPF_LINK_CREATE`
/// by hand, as the loader library's iterator type passes no information.
pub(crate) fn iter_link(
    ebpf: &Ebpf,
    prog: &'static str,
    info: Option<[u32; 4]>,
) -> Result<OwnedFd> {
    use aya_obj::generated::{bpf_attach_type, bpf_cmd};
    let prog_fd = ebpf
        .program(prog)
        .ok_or_else(|| bpf_err(prog)("not in the object".into()))?
        .fd()
        .map_err(|e| bpf_err(prog)(chain(&e)))?
        .as_fd()
        .as_raw_fd();
    // union bpf_attr's link_create: prog_fd, target_fd, attach_type,
    // flags, then (at 16) iter_info and (at 24) iter_info_len.
    let mut attr = [0u64; 18];
    attr[0] = prog_fd as u32 as u64;
    attr[1] = bpf_attach_type::BPF_TRACE_ITER as u64;
    if let Some(info) = info.as_ref() {
        attr[2] = info.as_ptr() as u64;
        attr[3] = size_of_val(info) as u64;
    }
    bpf_fd(bpf_cmd::BPF_LINK_CREATE as i64, &mut attr)
        .map_err(|e| bpf_err("linking an iterator")(format!("{prog}: {e}")))
}

/// Runs iterator program `prog` (of a task target) over every process
/// (`None`), or over each of `pids` in turn (one that ended is passed
/// over), handing each run's output to `each`.
pub(crate) fn run_task_iter(
    ebpf: &Ebpf,
    prog: &'static str,
    pids: Option<&[u32]>,
    buf: &mut Vec<u8>,
    what: &'static str,
    mut each: impl FnMut(&[u8]),
) -> Result<()> {
    let whole = [0];
    for &pid in pids.unwrap_or(&whole) {
        // union bpf_iter_link_info's task member: tid, pid, pid_fd.
        let info = pids.map(|_| [0, pid, 0, 0]);
        let link = match iter_link(ebpf, prog, info) {
            Ok(l) => l,
            // No such process (ended, or never was).
            Err(_) if pids.is_some() => continue,
            Err(e) => return Err(e),
        };
        let mut file = std::fs::File::from(iter_create(&link)?);
        let len = read_to_end(&mut file, buf, what)?;
        each(&buf[..len]);
    }
    Ok(())
}

/// A new readable fd of iterator link `link` (`BPF_ITER_CREATE`).
pub(crate) fn iter_create(link: &OwnedFd) -> Result<OwnedFd> {
    use aya_obj::generated::bpf_cmd;
    let mut attr = [0u64; 18];
    attr[0] = link.as_raw_fd() as u32 as u64;
    bpf_fd(bpf_cmd::BPF_ITER_CREATE as i64, &mut attr)
        .map_err(|e| bpf_err("creating an iterator fd")(e.to_string()))
}

/// The bpf system call with `attr` (zero past what the command reads), for
/// a command that returns no descriptor.
fn bpf(cmd: i64, attr: &mut [u64; 18]) -> std::io::Result<()> {
    bpf_call(cmd, attr).map(drop)
}

/// The bpf system call with `attr` (zero past what the command reads), for
/// a command that returns a new descriptor: that descriptor.
fn bpf_fd(cmd: i64, attr: &mut [u64; 18]) -> std::io::Result<OwnedFd> {
    let fd = bpf_call(cmd, attr)?;
    // SAFETY: a new descriptor the kernel gave us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// The bpf system call; what it returned (a descriptor or 0).
fn bpf_call(cmd: i64, attr: &mut [u64; 18]) -> std::io::Result<libc::c_long> {
    // SAFETY: attr is a valid union bpf_attr for cmd (every pointer in it
    // outlives the call), 144 bytes, zero past the command's members.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd as libc::c_long,
            attr.as_mut_ptr(),
            size_of_val(attr) as u32,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_ran_when_new_or_its_counters_moved() {
        let mut a = Activity::default();
        // The first read: every process is new.
        assert_eq!(
            a.ran([(1, 10, 5), (2, 20, 7), (2, 20, 1)].into_iter()),
            [1, 2]
        );
        // Unchanged (its two rows summed as before): none.
        assert_eq!(
            a.ran([(2, 20, 1), (1, 10, 5), (2, 20, 7)].into_iter()),
            [0u32; 0]
        );
        // Moved; new; a PID taken by a new process; one gone.
        assert_eq!(
            a.ran([(1, 10, 6), (2, 21, 8), (3, 30, 0)].into_iter()),
            [1, 2, 3]
        );
        assert_eq!(a.ran([(1, 10, 6)].into_iter()), [0u32; 0]);
    }
}
