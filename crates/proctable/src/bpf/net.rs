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
//! when a read saw unheld connections and at most every [`SCAN_EVERY`]
//! unless set, over the descriptors of the processes that listen for them
//! and of their children (which is where a server's workers are: those
//! /proc/PID/task/*/children lists, whatever fields the query asked). A
//! read then sums, by owner:
//!
//! - every owned socket's `bytes_received` and `bytes_acked` (payload
//!   received in order; payload sent and acknowledged), through the
//!   iterator over the owners' storage: a visit per owned socket, of every
//!   network namespace, not per process, per descriptor nor per bucket of
//!   the kernel's socket hash, and no socket locked; summed by owner in the
//!   kernel, so that a read copies a record per process; an unheld
//!   connection is not counted while it is live;
//! - the last counts of the process's sockets that ended since it started,
//!   which the kernel adds up as each socket is destroyed (an unheld one
//!   is charged to the process that listens).
//!
//! What it cannot give:
//!
//! - UDP, raw or unix sockets: the kernel keeps no byte counts for them
//!   (counting them would take a hook on every send and receive).
//! - Exactness for a socket handed on: a connection whose holder changes
//!   after the scan that found it (a descriptor passed over a unix socket)
//!   stays charged to the first holder; a socket two processes hold, to
//!   the lower PID; a connection held by a process that is neither the
//!   listener nor its child stays unheld until it ends.
//! - The procfs backend reads nothing: `/proc/PID/net` is the network
//!   namespace's, not the process's.
//!
//! The tracepoints run in the socket's own changes of state, on the CPU
//! that makes them: never on another CPU, and never waking a reader.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

use aya::maps::{Array, Map};
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

/// The committed object, 8-byte aligned as the ELF parser needs.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../../bpf/net.bpf.o");

// SAFETY: a plain #[repr(C)] integer struct with no padding.
unsafe impl aya::Pod for QsNetStats {}

/// One process's sockets' sums from a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sum {
    tgid: u32,
    start_ns: u64,
    rx: u64,
    tx: u64,
}

/// The loaded programs, their hooks attached, and the last read's sums.
pub(crate) struct Net {
    ebpf: Ebpf,
    /// The link of the iterator over the sockets' owners.
    socks: OwnedFd,
    buf: Vec<u8>,
    /// The last read's sums by owner, sorted by thread-group id.
    sums: Vec<Sum>,
    /// What the last build gave each process it found: a figure never goes
    /// below it (see [`Net::apply`]).
    given: Vec<Sum>,
    /// The next build's, swapped with it (one buffer reused, not one
    /// allocated a build).
    giving: Vec<Sum>,
    /// Unheld connections the last read saw.
    unheld: usize,
    /// The processes that listen for them, and then their children too:
    /// the next holder scan's.
    listeners: Vec<u32>,
    /// The ended sums' batches: keys and values.
    keys: Vec<u32>,
    values: Vec<QsSock>,
    /// The live sums' batches.
    owners: Vec<QsOwner>,
    live: Vec<QsSock>,
    /// A read ran the iterator and did not take its sums.
    live_left: bool,
    last_scan: Instant,
    scan_every: Duration,
    scans: u64,
    /// When the ended sums were last pruned of processes that ended.
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
            given: Vec::new(),
            giving: Vec::new(),
            unheld: 0,
            listeners: Vec::new(),
            keys: Vec::new(),
            values: Vec::new(),
            owners: Vec::new(),
            live: Vec::new(),
            live_left: false,
            last_scan: Instant::now(),
            scan_every: SCAN_EVERY,
            scans: 0,
            last_prune: Instant::now(),
        };
        net.scan(None)?;
        Ok(net)
    }

    /// The holder scan: the descriptors of every process (`None`), or of
    /// those named, are visited, and each TCP socket without an owner, or
    /// unheld, is given to the first process found holding it.
    fn scan(&mut self, pids: Option<&[u32]>) -> Result<()> {
        let whole = [0];
        let targets: &[u32] = pids.unwrap_or(&whole);
        for &pid in targets {
            // union bpf_iter_link_info's task member: tid, pid, pid_fd.
            let info = pids.map(|_| [0, pid, 0, 0]);
            let link = match iter_link(&self.ebpf, "qs_sk_files", info) {
                Ok(l) => l,
                // The process ended since it was named.
                Err(_) if pids.is_some() => continue,
                Err(e) => return Err(e),
            };
            let mut file = std::fs::File::from(iter_create(&link)?);
            read_to_end(&mut file, &mut self.buf, "running the holder scan")?;
        }
        self.last_scan = Instant::now();
        self.scans += 1;
        Ok(())
    }

    /// The least time between two holder scans.
    pub(crate) fn set_scan_every(&mut self, every: Duration) {
        self.scan_every = every;
    }

    /// Holder scans run since the load, the load's included.
    pub(crate) fn scans(&self) -> u64 {
        self.scans
    }

    /// Unheld connections the last read saw (not counted while live).
    pub(crate) fn unheld(&self) -> usize {
        self.unheld
    }

    /// Sums every owned socket's counts by owner: the ended sockets' first,
    /// then the live ones', so that a socket destroyed between the two is
    /// missed for one read rather than counted twice. Runs a holder scan
    /// first when one is due.
    pub(crate) fn read(&mut self) -> Result<()> {
        if self.unheld > 0 && self.last_scan.elapsed() >= self.scan_every {
            let mut pids = std::mem::take(&mut self.listeners);
            let listeners = pids.len();
            for i in 0..listeners {
                children_of(pids[i], &mut pids);
            }
            pids.sort_unstable();
            pids.dedup();
            self.scan(Some(&pids))?;
        }
        self.sums.clear();
        self.unheld = 0;
        self.listeners.clear();
        self.read_ended()?;
        if self.last_prune.elapsed() >= self.scan_every {
            self.prune();
            self.last_prune = Instant::now();
        }
        for (i, v) in self.values.iter().enumerate() {
            debug_assert_eq!(self.keys[i], v.tgid);
            self.sums.push(Sum {
                tgid: v.tgid,
                start_ns: v.start_ns,
                rx: v.rx_bytes,
                tx: v.tx_bytes,
            });
        }
        // The live sockets, summed by owner into qs_net_live; the unheld
        // connections written out one by one. A read that failed between
        // the two left sums behind: they are dropped first.
        let fd = map_fd(&self.ebpf, "qs_net_live")?.as_raw_fd();
        if self.live_left {
            self.take_live(fd)?;
        }
        self.live_left = true;
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
        self.take_live(fd)?;
        self.live_left = false;
        for v in &self.live {
            self.sums.push(Sum {
                tgid: v.tgid,
                start_ns: v.start_ns,
                rx: v.rx_bytes,
                tx: v.tx_bytes,
            });
        }
        self.listeners.sort_unstable();
        self.listeners.dedup();
        self.sums.sort_unstable_by_key(|s| (s.tgid, s.start_ns));
        self.sums.dedup_by(|next, kept| {
            let same = (next.tgid, next.start_ns) == (kept.tgid, kept.start_ns);
            if same {
                kept.rx += next.rx;
                kept.tx += next.tx;
            }
            same
        });
        Ok(())
    }

    /// Takes every entry of the live sums (map `fd`) into `owners` and
    /// `live`, deleting them as they are read: the next run of the
    /// iterator starts empty.
    fn take_live(&mut self, fd: RawFd) -> Result<()> {
        batch(
            fd,
            aya_obj::generated::bpf_cmd::BPF_MAP_LOOKUP_AND_DELETE_BATCH,
            &mut self.owners,
            &mut self.live,
        )
        .map_err(|e| bpf_err("reading the live sockets' sums")(e.to_string()))
    }

    /// Takes every entry of the ended sums into `keys` and `values`, in
    /// batches of one system call each.
    fn read_ended(&mut self) -> Result<()> {
        let fd = map_fd(&self.ebpf, "qs_net_ended")?.as_raw_fd();
        batch(
            fd,
            aya_obj::generated::bpf_cmd::BPF_MAP_LOOKUP_BATCH,
            &mut self.keys,
            &mut self.values,
        )
        .map_err(|e| bpf_err("reading the ended sockets' sums")(e.to_string()))
    }

    /// Gives each process row of `out` (sorted by PID) its sums from the
    /// last read: zero for a process that owns no socket. A figure never
    /// goes below what the last build gave the same process, as a socket
    /// destroyed during a read is missed by it and counted by the next.
    pub(crate) fn apply(&mut self, out: &mut [Proc]) {
        let mut given = std::mem::take(&mut self.giving);
        given.clear();
        for p in out.iter_mut().filter(|p| p.pid == p.tgid) {
            let mut sum = Sum {
                tgid: p.tgid,
                start_ns: p.start_ns,
                rx: 0,
                tx: 0,
            };
            let first = self.sums.partition_point(|s| s.tgid < p.tgid);
            if let Some(s) = self.sums[first..]
                .iter()
                .take_while(|s| s.tgid == p.tgid)
                .find(|s| s.start_ns == p.start_ns)
            {
                (sum.rx, sum.tx) = (s.rx, s.tx);
            }
            if let Ok(i) = self
                .given
                .binary_search_by_key(&(sum.tgid, sum.start_ns), |g| (g.tgid, g.start_ns))
            {
                sum.rx = sum.rx.max(self.given[i].rx);
                sum.tx = sum.tx.max(self.given[i].tx);
            }
            p.net = Some(NetBytes {
                rx_bytes: sum.rx,
                tx_bytes: sum.tx,
            });
            given.push(sum);
        }
        given.sort_unstable_by_key(|g| (g.tgid, g.start_ns));
        self.giving = std::mem::replace(&mut self.given, given);
        // What a table of a burst's processes grew them to is given back
        // when tables of ordinary size follow.
        sys::trim_capacity(&mut self.giving, self.given.len());
        sys::trim_capacity(&mut self.given, 0);
    }

    /// Drops the ended sums of processes that ended: those whose PID names
    /// no process. Run by [`Net::read`] (not by the build, which a caller
    /// may hold a lock for) at most every scan interval, whatever the
    /// query: one `kill(pid, 0)` per process with ended sockets. A sum
    /// whose PID a new process took stays until that one ends; no row
    /// matches it (the start time differs).
    fn prune(&mut self) {
        let Ok(fd) = map_fd(&self.ebpf, "qs_net_ended").map(|f| f.as_raw_fd()) else {
            return;
        };
        for (&key, v) in self.keys.iter().zip(&self.values) {
            // SAFETY: kill with signal 0 sends nothing; it only checks.
            let gone = unsafe { libc::kill(v.tgid as libc::pid_t, 0) } != 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            if gone {
                let mut attr = [0u64; 18];
                attr[0] = fd as u32 as u64;
                attr[1] = &key as *const u32 as u64;
                // The entry may be gone already, or taken again by a new
                // process with that PID: either is fine.
                let _ = bpf(
                    aya_obj::generated::bpf_cmd::BPF_MAP_DELETE_ELEM as i64,
                    &mut attr,
                );
            }
        }
    }

    /// Sockets whose counts found no room to be kept: ended ones (65,536
    /// processes with ended sockets between two reads) and live ones
    /// (65,536 processes holding sockets at one read).
    pub(crate) fn lost(&self) -> u64 {
        self.ebpf
            .map("qs_net_stats")
            .and_then(|m| Array::<_, QsNetStats>::try_from(m).ok())
            .and_then(|a| a.get(&0, 0).ok())
            .map_or(0, |s| s.ended_lost + s.live_lost)
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
