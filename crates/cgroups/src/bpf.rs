//! A hierarchy read by a BPF program instead of files:
//! `bpf/cgroups.bpf.c`'s sleepable `iter/cgroup` program, linked to the
//! hierarchy's root in pre-order, writes each cgroup's figures into a
//! memory-mapped array read here in place. In v2 it flushes the
//! hierarchy's base statistics once and gives what `cpu.stat` (without the
//! cpu controller) and the three pressure files give; in a v1 hierarchy
//! what the cpuacct, cpu, memory (but `memory.stat`) and pids controllers'
//! files give, and whether a blkio cgroup did any I/O. A few hundred
//! nanoseconds a cgroup instead of an open, a read and a text a file.
//!
//! Needs `css_rstat_flush` as a kernel function (Linux 6.16 or later), the
//! cgroup iterator (6.1; a later kernel on a v1 root) and `bpf_loop` (5.17); the
//! reader reads the files when it does not load.

use std::io::Read;
use std::mem::size_of;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use aya::programs::Iter;
use aya::{Btf, Ebpf};
use sys::bpf::{Mapped, chain, link_kfuncs_of, load_retrying, page_round};
use sys::{Error, ErrorKind};

use crate::record::{
    QS_CG_MIN_ROWS, QS_CG_MODE_V2, QS_KFUNC_CSS_RSTAT_FLUSH, QS_KFUNC_RDONLY_CAST, QsCgOut,
    QsCgroup,
};

/// The committed object, 8-byte aligned as the ELF parser needs.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../bpf/cgroups.bpf.o");

/// Returns a copy of `object` (an ELF BPF object) whose calls to the
/// `QS_KFUNC_*` numbers call `css_rstat_flush` and `bpf_rdonly_cast`, and
/// how many calls were rewritten (in `u64`s: the ELF parser needs 8-byte
/// alignment).
pub fn link_kfuncs(object: &[u8], btf: &Btf) -> Result<(Vec<u64>, usize), Error> {
    link_kfuncs_of(
        object,
        "cgroups.bpf.o",
        &[
            (QS_KFUNC_CSS_RSTAT_FLUSH, "css_rstat_flush"),
            (QS_KFUNC_RDONLY_CAST, "bpf_rdonly_cast"),
        ],
        "flushing a hierarchy's statistics from BPF needs Linux 6.16 or later",
        btf,
    )
    .map_err(|(what, e)| kernel(what, e))
}

/// The kernel refused `what`, for the reason `why`.
fn kernel(what: &str, why: String) -> Error {
    Error::new(ErrorKind::Kernel, why).context(what)
}

/// `bpf(2)` commands and values of the kernel's uapi (`linux/bpf.h`).
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_ITER_CREATE: libc::c_long = 33;
const BPF_TRACE_ITER: u32 = 28;
const BPF_CGROUP_ITER_DESCENDANTS_PRE: u32 = 2;

/// The loaded program and its mapped rows, one for every hierarchy: each
/// is walked through a [`Link`] of its own, one after the other, each run
/// writing its rows from the first (the kernel verifies and the loader
/// relocates the program once, not once a hierarchy).
pub struct BpfWalk {
    rows: Mapped,
    out: Mapped,
    /// Entries of `cpu_off`: the highest possible CPU's number and one;
    /// of them, those `/sys/devices/system/cpu/possible` lists.
    cpus: u32,
    possible: u64,
    capacity: u32,
    /// Rows the last run wrote.
    last: usize,
    buf: Vec<u8>,
    // Dropped last: the mappings hold the maps.
    ebpf: Ebpf,
}

// SAFETY: the mappings are this value's alone, only read or written
// through &self/&mut self, and unmapped on drop.
unsafe impl Send for BpfWalk {}

/// The walk's link to one hierarchy's root (it holds the program).
pub struct Link {
    fd: OwnedFd,
    mode: u64,
}

impl Link {
    /// How the walk reads its hierarchy ([`mode_of`]).
    pub fn mode(&self) -> u64 {
        self.mode
    }
}

/// How the walk reads the hierarchy mounted at `root`: v2 or v1; an
/// error when it is no cgroup mount (a tree of files: the fixtures), said
/// before anything is loaded.
pub fn mode_of(root: &Path) -> Result<u64, Error> {
    let fs = sys::statfs(root).map_err(|e| Error::file(root, e))?;
    match fs.f_type {
        libc::CGROUP2_SUPER_MAGIC => Ok(QS_CG_MODE_V2),
        libc::CGROUP_SUPER_MAGIC => Ok(0),
        _ => Err(Error::invalid(format!(
            "{} is not a cgroup mount",
            root.display()
        ))),
    }
}

/// What one run of the walk wrote.
pub struct Rows<'a> {
    /// The cgroups written, the hierarchy's root first, parents before
    /// children.
    pub rows: &'a [QsCgroup],
    /// Cgroups the walk visited past the capacity (not in `rows`).
    pub lost: u64,
    /// A v1 hierarchy's per-CPU figures (cpuacct) are in `rows`: the walk
    /// found every possible CPU's per-CPU offset.
    pub per_cpu: bool,
}

/// The running kernel's possible CPUs.
fn possible_cpus() -> Result<procfs::cpu::CpuList, Error> {
    const FILE: &str = "/sys/devices/system/cpu/possible";
    let text = std::fs::read_to_string(FILE).map_err(|e| Error::file(Path::new(FILE), e))?;
    let l = procfs::cpu::CpuList::parse(&text)
        .map_err(|e| Error::malformed(FILE, None, e.to_string()))?;
    if l.is_empty() {
        return Err(Error::malformed(FILE, None, "no CPU"));
    }
    Ok(l)
}

/// `bpf(2)`: `attr` is the command's attribute, zero past its fields.
fn bpf(cmd: libc::c_long, attr: &mut [u64; 16]) -> std::io::Result<OwnedFd> {
    // SAFETY: attr is 128 readable and writable bytes, all zero past the
    // command's fields, as the kernel requires of the bytes it does not
    // know.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), 128u32) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both commands return a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as i32) })
}

/// Room for `cgroups` and half as many again (at least
/// [`QS_CG_MIN_ROWS`]): the walk is loaded again, larger, when it lost
/// some.
pub fn capacity_for(cgroups: usize) -> u32 {
    let n = u32::try_from(cgroups.saturating_add(cgroups / 2)).unwrap_or(u32::MAX);
    n.max(QS_CG_MIN_ROWS as u32)
}

impl BpfWalk {
    /// Loads the walk with room for `capacity` cgroups a hierarchy. The
    /// kernel's BTF is parsed for the load and freed after it (a parse
    /// holds 16 MiB; a load again, larger, parses again).
    pub fn load(capacity: u32) -> Result<BpfWalk, Error> {
        let possible = possible_cpus()?;
        let cpus = possible.cpus().last().map_or(1, |c| c + 1);
        let mut loader = sys::bpf::loader();
        let btf = &Btf::from_sys_fs()
            .map_err(|e| kernel("reading /sys/kernel/btf/vmlinux", chain(&e)))?;
        let (words, _) = link_kfuncs(OBJECT, btf)?;
        // SAFETY: the words hold the object's bytes (and up to 7 more).
        let object =
            unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), OBJECT.len()) };
        let mut ebpf = loader
            .btf(Some(btf))
            .map_max_entries("qs_cg_rows", capacity)
            .map_max_entries("qs_cpu_off", cpus)
            .load(object)
            .map_err(|e| kernel("loading cgroups.bpf.o", chain(&e)))?;
        let prog: &mut Iter = ebpf
            .program_mut("qs_cgroups")
            .ok_or_else(|| Error::malformed("cgroups.bpf.o", None, "no qs_cgroups"))?
            .try_into()
            .map_err(|e: aya::programs::ProgramError| kernel("qs_cgroups", chain(&e)))?;
        load_retrying(|| prog.load("cgroup", btf))
            .map_err(|e| kernel("verifying the cgroup walk", chain(&e)))?;
        let map = |name: &'static str, entries: usize, size: usize, writable: bool| {
            let m = ebpf
                .map(name)
                .ok_or_else(|| Error::malformed("cgroups.bpf.o", None, format!("no map {name}")))?;
            Mapped::new(m, page_round(entries * size), writable).map_err(|e| e.context(name))
        };
        let rows = map(
            "qs_cg_rows",
            capacity as usize,
            size_of::<QsCgroup>(),
            false,
        )?;
        let out = map("qs_cg_out", 1, size_of::<QsCgOut>(), true)?;
        let mut cpu_off = map("qs_cpu_off", cpus as usize, size_of::<u64>(), true)?;
        // The CPUs that are not possible have no per-CPU area: marked so
        // once; the program finds the others' offsets at every run.
        // SAFETY: qs_cpu_off's values are `cpus` u64s, mapped writable; no
        // program has run.
        for (cpu, off) in unsafe { cpu_off.slice_mut::<u64>(cpus as usize) }
            .iter_mut()
            .enumerate()
        {
            *off = if possible.contains(cpu as u32) {
                0
            } else {
                u64::MAX
            };
        }
        Ok(BpfWalk {
            rows,
            out,
            cpus,
            possible: possible.len() as u64,
            capacity,
            last: 0,
            buf: vec![0; 4096],
            ebpf,
        })
    }

    /// Links the walk to the root of the hierarchy mounted at `root`,
    /// read as `mode` says ([`mode_of`]).
    pub fn link(&self, root: &Path, mode: u64) -> Result<Link, Error> {
        let prog: &Iter = self
            .ebpf
            .program("qs_cgroups")
            .ok_or_else(|| Error::malformed("cgroups.bpf.o", None, "no qs_cgroups"))?
            .try_into()
            .map_err(|e: aya::programs::ProgramError| kernel("qs_cgroups", chain(&e)))?;
        let prog_fd = prog
            .fd()
            .map_err(|e| kernel("qs_cgroups", chain(&e)))?
            .as_fd()
            .as_raw_fd();
        let dir = sys::dir::open_dir(root).map_err(|e| Error::file(root, e))?;
        // union bpf_iter_link_info's cgroup member: order, cgroup_fd.
        let info: [u64; 2] = [
            u64::from(BPF_CGROUP_ITER_DESCENDANTS_PRE) | (dir.as_raw_fd() as u64) << 32,
            0,
        ];
        // BPF_LINK_CREATE: prog_fd, target_fd, attach_type, flags, then
        // iter_info and iter_info_len.
        let mut attr = [0u64; 16];
        attr[0] = prog_fd as u32 as u64;
        attr[1] = u64::from(BPF_TRACE_ITER);
        attr[2] = info.as_ptr() as u64;
        attr[3] = size_of::<[u64; 2]>() as u64;
        let fd = bpf(BPF_LINK_CREATE, &mut attr).map_err(|e| {
            Error::kernel(format!("linking the cgroup walk to {}", root.display()), e)
        })?;
        Ok(Link { fd, mode })
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The rows the last run wrote (none before the first).
    pub fn last(&self) -> &[QsCgroup] {
        // SAFETY: as in `run`: the first `last` rows were written by the
        // last run, and no program runs until the next.
        unsafe { self.rows.slice::<QsCgroup>(self.last) }
    }

    /// Walks the hierarchy of `link` once; its rows replace the last
    /// run's.
    pub fn run(&mut self, link: &Link) -> Result<Rows<'_>, Error> {
        // SAFETY: qs_cg_out's one value is a QsCgOut, mapped writable; no
        // program runs until the iterator is read below.
        let out = unsafe { &mut self.out.slice_mut::<QsCgOut>(1)[0] };
        out.count = 0;
        out.mode = link.mode;
        out.cpus = u64::from(self.cpus);
        out.cpus_found = 0;
        let mut attr = [0u64; 16];
        attr[0] = link.fd.as_raw_fd() as u32 as u64;
        let iter = bpf(BPF_ITER_CREATE, &mut attr)
            .map_err(|e| Error::kernel("starting the cgroup walk", e))?;
        let mut file = std::fs::File::from(iter);
        // The program writes nothing here: one read runs the whole walk.
        loop {
            match file.read(&mut self.buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::kernel("running the cgroup walk", e)),
            }
        }
        // SAFETY: as above; the walk is over.
        let out = unsafe { self.out.slice::<QsCgOut>(1)[0] };
        let count = out.count;
        let n = count.min(u64::from(self.capacity)) as usize;
        // SAFETY: qs_cg_rows' values are QsCgroups, `capacity` of them
        // mapped; the program wrote the first `n` and runs no more.
        let rows = unsafe { self.rows.slice::<QsCgroup>(n) };
        self.last = n;
        Ok(Rows {
            rows,
            lost: count - n as u64,
            per_cpu: out.cpus_found == self.possible,
        })
    }
}
