//! The walk: every hierarchy of the mount table that gives a figure (the
//! v2 one, and v1 ones with the cpu, cpuacct, memory, blkio or pids
//! controller), each cgroup's files read through descriptors: a directory
//! kept open from one read to the next (within a descriptor budget), each
//! file opened beneath it with `openat` (one component looked up, no path
//! walked from the root) and read whole with one `pread`, or, with
//! `keep_open`, kept open too and read again in place. A directory is
//! listed again only when its inotify watch reports a child made or
//! removed.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bpf::{BpfWalk, KernelBtf, Link, capacity_for, mode_of};
use crate::files::{FILES, Figure, File, Version};
use crate::parse::{Figures, parse};
use crate::record::QsCgroup;

use crate::record::{
    QS_CG_BASE, QS_CG_BLKGS, QS_CG_BLKIO, QS_CG_CFS, QS_CG_CPU_CTL, QS_CG_CPUACCT, QS_CG_MEMCG,
    QS_CG_PIDS, QS_CG_POPULATED, QS_CG_PSI,
};

/// Cgroups read at most: past it, new ones are left out and counted.
pub const DEFAULT_MAX_CGROUPS: usize = 100_000;
/// New cgroups a read takes at most once the first read is made: a
/// cgroup's first read (its directory opened and watched, its children
/// listed, its settings read) costs 30-45 us on a small VM, ten times a
/// read after it, so a burst of 10,000 would cost one walk a third of a
/// second. Past it, the new ones are left out of that read (counted in
/// [`Sample::left_out`]) and taken by the reads after it, this many at a
/// time. The first read made to its end takes every cgroup.
pub const DEFAULT_MAX_NEW_PER_READ: usize = 1_000;
/// Levels below a hierarchy's root walked at most.
pub const MAX_DEPTH: u16 = 32;
/// A file's text read at most (io.stat on a machine with thousands of
/// devices is the largest).
const FILE_LIMIT: usize = 1 << 20;
/// Reads after which a file found missing in a cgroup is tried again (a v2
/// cgroup gains files when its parent enables a controller).
const ABSENT_RETRY: u64 = 30;

#[derive(Debug, Clone)]
pub struct Options {
    /// Where the mount table is read (`<proc_root>/self/mountinfo`).
    pub proc_root: PathBuf,
    /// Mount points under /sys are read under this root instead.
    pub sys_root: PathBuf,
    /// The files read ([`crate::files::select`]); every one by default.
    pub files: Vec<&'static File>,
    pub max_cgroups: usize,
    /// New cgroups a read after the first takes at most
    /// ([`DEFAULT_MAX_NEW_PER_READ`]).
    pub max_new_per_read: usize,
    /// Descriptors the reader may keep open between reads; past them,
    /// directories (and files) are opened for the read and closed.
    pub max_fds: usize,
    /// Keep each cgroup's files open between reads, not only its
    /// directory (faster; each costs the kernel a page for its text).
    pub keep_open: bool,
    /// A cgroup's files of settings (limits, periods:
    /// [`File::is_settings`]) are read at its first read and then every
    /// this many reads; the reads between give the settings last read.
    /// 1: every read.
    pub settings_every: u64,
    /// v1's `memory.stat` of a cgroup the BPF walk read, without tasks
    /// and whose charge did not move, is read again once every this many
    /// reads, each cgroup at its own turn (so that each read takes its
    /// share); the reads between carry its figures. 1: every read.
    pub memory_stat_every: u64,
    /// Read each hierarchy by the BPF walk ([`crate::bpf`]) when it loads:
    /// its figures are taken from it instead of their files (v2's CPU
    /// times and pressure; v1's cpuacct, cpu, memory but `memory.stat`,
    /// pids, and the blkio files of a cgroup that did no I/O).
    pub bpf: bool,
}

/// [`Options::settings_every`] by default: at the agent's 10 s, a limit
/// written shows within a minute.
pub const SETTINGS_EVERY: u64 = 6;

/// [`Options::memory_stat_every`] by default: at the agent's 10 s, an idle
/// cgroup's page lists, as the kernel ages them, show within five minutes.
pub const MEMORY_STAT_EVERY: u64 = 30;

impl Options {
    pub fn new(proc_root: &Path, sys_root: &Path) -> Options {
        Options {
            proc_root: proc_root.to_path_buf(),
            sys_root: sys_root.to_path_buf(),
            files: FILES.iter().collect(),
            max_cgroups: DEFAULT_MAX_CGROUPS,
            max_new_per_read: DEFAULT_MAX_NEW_PER_READ,
            max_fds: default_max_fds(),
            keep_open: false,
            settings_every: SETTINGS_EVERY,
            memory_stat_every: MEMORY_STAT_EVERY,
            bpf: true,
        }
    }
}

/// Whether `flags` (a BPF row's) has `flag` (record.h's, as bpfgen gives it).
fn has(flags: u32, flag: u64) -> bool {
    u64::from(flags) & flag != 0
}

/// What the BPF walk's row gives of a file: named once per hierarchy,
/// so that a read matches no file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Given {
    Nothing,
    /// v2 `cpu.stat` (without the cpu controller).
    BaseCpu,
    /// A v2 pressure file: its totals' first index in the row.
    Pressure(usize),
    CpuacctUsage,
    CpuacctUser,
    CpuacctSystem,
    CfsStat,
    CfsQuota,
    CfsPeriod,
    MemoryUsage,
    MemoryLimit,
    MemoryFailcnt,
    OomControl,
    /// v1 `memory.stat`: never given, read when due ([`memory_stat_due`]).
    MemoryStat,
    /// v1 blkio files: zeros for a cgroup without block groups.
    Blkio,
    Pids,
}

impl Given {
    fn of(file: &File) -> Given {
        match (file.version, file.name) {
            (Version::V2, "cpu.stat") => Given::BaseCpu,
            (Version::V2, "io.pressure") => Given::Pressure(0),
            (Version::V2, "memory.pressure") => Given::Pressure(2),
            (Version::V2, "cpu.pressure") => Given::Pressure(4),
            (Version::V1(_), "cpuacct.usage") => Given::CpuacctUsage,
            (Version::V1(_), "cpuacct.usage_user") => Given::CpuacctUser,
            (Version::V1(_), "cpuacct.usage_sys") => Given::CpuacctSystem,
            (Version::V1(_), "cpu.stat") => Given::CfsStat,
            (Version::V1(_), "cpu.cfs_quota_us") => Given::CfsQuota,
            (Version::V1(_), "cpu.cfs_period_us") => Given::CfsPeriod,
            (Version::V1(_), "memory.usage_in_bytes") => Given::MemoryUsage,
            (Version::V1(_), "memory.limit_in_bytes") => Given::MemoryLimit,
            (Version::V1(_), "memory.failcnt") => Given::MemoryFailcnt,
            (Version::V1(_), "memory.oom_control") => Given::OomControl,
            (Version::V1(_), "memory.stat") => Given::MemoryStat,
            (Version::V1("blkio"), _) => Given::Blkio,
            (Version::V1(_), "pids.current") => Given::Pids,
            _ => Given::Nothing,
        }
    }
}

/// Whether a row with flags `f` gives what `given` names (false: the file
/// is read).
fn gives(given: Given, f: u32) -> bool {
    match given {
        Given::Nothing | Given::MemoryStat => false,
        Given::BaseCpu => has(f, QS_CG_BASE) && !has(f, QS_CG_CPU_CTL),
        Given::Pressure(_) => has(f, QS_CG_PSI),
        Given::CpuacctUsage | Given::CpuacctUser | Given::CpuacctSystem => has(f, QS_CG_CPUACCT),
        Given::CfsStat | Given::CfsQuota | Given::CfsPeriod => has(f, QS_CG_CFS),
        Given::MemoryUsage | Given::MemoryLimit | Given::MemoryFailcnt | Given::OomControl => {
            has(f, QS_CG_MEMCG)
        }
        Given::Blkio => has(f, QS_CG_BLKIO) && !has(f, QS_CG_BLKGS),
        Given::Pids => has(f, QS_CG_PIDS),
    }
}

/// How a cgroup of a hierarchy read by the BPF walk is visited.
enum Walked {
    /// Its row gives every file it has (or they are carried): no
    /// descriptor needed.
    Whole,
    /// A file must be read, or its children listed.
    NeedsDir,
    /// Not in the walk: gone from this hierarchy.
    Gone,
}

/// Whether the cgroup `p` of `h`, with its walk's row, needs its
/// directory this read: its children to list, or a file there that the
/// row does not give (v1's memory.stat when due).
fn needs_dir(h: &Hier, p: &PerHier, row: (&QsCgroup, u32), reads: u64, every: u64) -> bool {
    if !(p.listed && p.wd >= 0) || p.retry_absent(reads) {
        return true;
    }
    h.given.iter().enumerate().any(|(i, g)| {
        p.absent & (1 << i) == 0
            && !gives(*g, row.1)
            && (*g != Given::MemoryStat || memory_stat_due(row.0, p, reads, every))
    })
}

/// Sets the figures of `file` from the BPF walk's row `r` (its flags
/// `f`), as the file would print them, and says whether it did (false:
/// the file is read). v2's user and system times are split as the kernel
/// splits them, never below what they were for this cgroup (`prev`).
fn give(
    given: Given,
    file: &File,
    r: &QsCgroup,
    f: u32,
    figures: &mut Figures,
    prev: &mut (u64, u64),
) -> bool {
    if !gives(given, f) {
        return false;
    }
    let us = |ns: u64| ns / 1000 * 1000;
    match given {
        Given::BaseCpu => {
            let (user, system) = sys::cputime::adjust(sys::cputime::RawCputime {
                utime: r.user_ns,
                stime: r.system_ns,
                runtime: r.usage_ns,
                prev_utime: prev.0,
                prev_stime: prev.1,
            });
            *prev = (user, system);
            figures.set(Figure::CpuUsageNs, us(r.usage_ns));
            figures.set(Figure::CpuUserNs, us(user));
            figures.set(Figure::CpuSystemNs, us(system));
        }
        Given::Pressure(i) => {
            for (k, ns) in file.keys.iter().zip(&r.psi_ns[i..]) {
                figures.set(k.1, ns / 1000);
            }
        }
        Given::CpuacctUsage => {
            figures.set(Figure::CpuUsageNs, r.usage_ns);
        }
        Given::CpuacctUser => figures.set(Figure::CpuUserNs, r.user_ns),
        Given::CpuacctSystem => {
            figures.set(Figure::CpuSystemNs, r.system_ns);
        }
        Given::CfsStat => {
            figures.set(Figure::CpuPeriods, r.periods);
            figures.set(Figure::CpuThrottledPeriods, r.throttled_periods);
            figures.set(Figure::CpuThrottledNs, r.throttled_ns);
        }
        // The kernel's RUNTIME_INF: no quota (the file prints -1).
        Given::CfsQuota => {
            if r.quota_ns != u64::MAX {
                figures.set(Figure::CpuQuotaUs, r.quota_ns / 1000);
            }
        }
        Given::CfsPeriod => {
            figures.set(Figure::CpuPeriodUs, r.period_ns / 1000);
        }
        Given::MemoryUsage => {
            figures.set(
                Figure::MemoryBytes,
                r.memory_pages.saturating_mul(sys::page_size()),
            );
        }
        Given::MemoryLimit => {
            let v = r.memory_max_pages.saturating_mul(sys::page_size());
            if v < crate::parse::NO_LIMIT_FROM {
                figures.set(Figure::MemoryMaxBytes, v);
            }
        }
        Given::MemoryFailcnt => {
            figures.set(Figure::MemoryFailcnt, r.memory_failcnt);
        }
        Given::OomControl => figures.set(Figure::OomKills, r.oom_kills),
        // No block group: the throttle files count nothing (`Total 0`).
        Given::Blkio => {
            for k in file.keys {
                figures.set(k.1, 0);
            }
        }
        Given::Pids => figures.set(Figure::Pids, r.pids),
        Given::Nothing | Given::MemoryStat => return false,
    }
    true
}

/// Whether read `reads` is the turn of the cgroup with inode `ino` for
/// what is done once every `every` reads: each cgroup has its own, spread
/// by a hash of the inode (the kernel numbers a hierarchy's cgroups with
/// its files, so the inodes themselves fall on few remainders), so that
/// each read does a share of it rather than one read all.
fn turn(ino: u64, reads: u64, every: u64) -> bool {
    reads
        .wrapping_add(ino.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32)
        .is_multiple_of(every.max(1))
}

/// Whether v1's `memory.stat` is read again for a cgroup the BPF walk
/// read: when it has tasks, when its charge moved since the file was last
/// read (`pages`), or once every `every` reads at the cgroup's [`turn`]
/// (the kernel can age an idle cgroup's pages from one list to another
/// without changing its charge).
fn memory_stat_due(r: &QsCgroup, p: &PerHier, reads: u64, every: u64) -> bool {
    has(r.flags, QS_CG_POPULATED)
        || r.memory_pages != p.stat_pages
        || p.stat_at == 0
        || turn(p.ino, reads, every)
}

/// A quarter of the descriptor limit (the process table keeps its own
/// within the rest), at most 16,384.
pub fn default_max_fds() -> usize {
    sys::fd_limit().map_or(0, |l| (l / 4) as usize).min(16_384)
}

/// A cgroup hierarchy of the mount table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    /// Where it is mounted, as the mount table says.
    pub mount: PathBuf,
    /// Where it is read (under the sys root for a mount under /sys).
    pub dir: PathBuf,
    pub v2: bool,
    /// v1: the controllers it holds that a file here reads.
    pub controllers: Vec<String>,
}

impl Hierarchy {
    /// The files of `chosen` read in this hierarchy (64 at most).
    pub fn files(&self, chosen: &[&'static File]) -> Vec<&'static File> {
        chosen
            .iter()
            .copied()
            .filter(|f| match f.version {
                Version::V2 => self.v2,
                Version::V1(c) => self.controllers.iter().any(|x| x == c),
            })
            .take(64)
            .collect()
    }
}

/// One cgroup, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup {
    /// Its path below the hierarchies' roots: `/` for the root,
    /// `/system.slice/cron.service`.
    pub path: Arc<str>,
    /// Its directory's inode in the v2 hierarchy (the kernel's cgroup id,
    /// as a process's cgroup id gives it), or in the first v1 one when it
    /// is in no v2 hierarchy. A cgroup removed and made again under the
    /// same path has a new one.
    pub id: u64,
    /// Levels below the root (the root: 0).
    pub depth: u16,
    pub figures: Figures,
}

/// One read of every cgroup.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub mono_ns: u64,
    pub unix_ns: u64,
    /// In path order: a parent before its children.
    pub cgroups: Vec<Cgroup>,
    /// Cgroups not read: past `max_cgroups`, deeper than [`MAX_DEPTH`],
    /// named in bytes that are not UTF-8, or new past `max_new_per_read`
    /// (those are read by a later read).
    pub left_out: u64,
    /// Lines of files left out (the rest of each file used).
    pub skipped_lines: u64,
    /// Files that could not be read or parsed, and the first one's error.
    pub errors: u64,
    pub first_error: Option<String>,
}

impl Sample {
    fn error(&mut self, e: String) {
        self.errors += 1;
        self.first_error.get_or_insert(e);
    }
}

/// The hierarchies in `<proc_root>/self/mountinfo` that give a figure of
/// `files`, v2 first, each once.
pub fn hierarchies(
    proc_root: &Path,
    sys_root: &Path,
    files: &[&File],
) -> io::Result<Vec<Hierarchy>> {
    let text = std::fs::read_to_string(proc_root.join("self/mountinfo"))?;
    let mut out: Vec<(String, Hierarchy)> = Vec::new();
    for line in text.lines() {
        // id parent maj:min root mount options [optional...] - fstype source super
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        let (Some(dev), Some(mount), Some(fstype), Some(sup)) =
            (l.get(2), l.get(4), r.first(), r.get(2))
        else {
            continue;
        };
        let v2 = match *fstype {
            "cgroup2" => true,
            "cgroup" => false,
            _ => continue,
        };
        let controllers: Vec<String> = if v2 {
            Vec::new()
        } else {
            sup.split(',')
                .filter(|c| {
                    files
                        .iter()
                        .any(|f| matches!(f.version, Version::V1(x) if x == *c))
                })
                .map(str::to_string)
                .collect()
        };
        if !v2 && controllers.is_empty() || out.iter().any(|(d, _)| d == dev) {
            continue;
        }
        let mount = PathBuf::from(unescape(mount));
        let dir = match mount.strip_prefix("/sys") {
            Ok(rest) => sys_root.join(rest),
            Err(_) => mount.clone(),
        };
        out.push((
            dev.to_string(),
            Hierarchy {
                mount,
                dir,
                v2,
                controllers,
            },
        ));
    }
    let mut out: Vec<Hierarchy> = out.into_iter().map(|(_, h)| h).collect();
    out.sort_by_key(|h| !h.v2);
    Ok(out)
}

/// The mount table's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|o| b[i] == b'\\' && o.iter().all(|c| (b'0'..=b'7').contains(c)));
        match oct {
            Some(o) => {
                out.push(
                    o.iter()
                        .fold(0u8, |v, c| v.wrapping_mul(8).wrapping_add(c - b'0')),
                );
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct Hier {
    info: Hierarchy,
    files: Vec<&'static File>,
    root: Option<OwnedFd>,
    /// The BPF walk's link to this hierarchy's root, once made, and the
    /// load of the walk it was made with ([`Reader::walk_era`]); why the
    /// walk is not used here, once linking or a run failed.
    link: Option<(Link, u32)>,
    bpf_off: Option<String>,
    /// What the walk gives of each of `files`.
    given: Vec<Given>,
    /// This read's figures come from the walk's last run (its rows in the
    /// walk's mapped array); false: the files are read.
    walked: bool,
    /// The last run's rows by this hierarchy's inode (the root's left
    /// out: its files count the whole machine), built only when a
    /// cgroup's row is not where the read before found it (a cgroup made
    /// or removed moves the rows after it).
    rows: HashMap<u64, u32, foldhash::fast::RandomState>,
    rows_built: bool,
    /// Flags the last run's rows may be trusted for: without every
    /// possible CPU's offset, not cpuacct's sums.
    trusted: u32,
}

impl Hier {
    fn new(info: Hierarchy, files: Vec<&'static File>) -> Hier {
        Hier {
            given: files.iter().map(|f| Given::of(f)).collect(),
            info,
            files,
            root: None,
            link: None,
            bpf_off: None,
            walked: false,
            rows: HashMap::default(),
            rows_built: false,
            trusted: 0,
        }
    }

    /// The root's directory, or -1 before it is opened.
    fn root_fd(&self) -> RawFd {
        self.root.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// Where in `rows`, the walk's run of this hierarchy, the cgroup
    /// with inode `ino` is (none: not in it, or the walk did not run),
    /// looked for first at `hint` (where the read before found it).
    fn find_row(&mut self, rows: &[QsCgroup], ino: u64, hint: u32) -> Option<u32> {
        if !self.walked || ino == 0 {
            return None;
        }
        if rows
            .get(hint as usize)
            .is_some_and(|r| r.id == ino && r.level > 0)
        {
            return Some(hint);
        }
        if !self.rows_built {
            self.rows.clear();
            self.rows.extend(
                rows.iter()
                    .enumerate()
                    .filter(|(_, c)| c.level > 0)
                    .map(|(i, c)| (c.id, i as u32)),
            );
            self.rows_built = true;
        }
        self.rows.get(&ino).copied()
    }

    /// Row `i` of `rows`, the walk's run of this hierarchy, and its
    /// trusted flags.
    fn row<'r>(&self, rows: &'r [QsCgroup], i: u32) -> Option<(&'r QsCgroup, u32)> {
        let r = rows.get(i as usize)?;
        Some((r, r.flags & self.trusted))
    }
}

/// A node's index in [`Reader::nodes`].
type Ix = u32;

struct Node {
    /// Its path below the roots: the key it is found by.
    path: Arc<str>,
    /// Counts the nodes its slot held: a child's [`Child::era`] names this
    /// one.
    era: u32,
    live: bool,
    id: u64,
    /// `id` is the v2 directory's inode (else the first v1 one's).
    id_v2: bool,
    depth: u16,
    figures: Figures,
    /// The read whose figures `figures` holds.
    read: u64,
    /// The read that last read its settings (0: none yet).
    settings_at: u64,
    /// Its figures before this read cleared them: what a file skipped this
    /// read (v1's `memory.stat`, see [`memory_stat_due`]) carries on.
    carried: Figures,
    /// The user and system times the BPF walk last gave (v2).
    bpf_cputime: (u64, u64),
    /// Its directory was removed (a file beneath it is no longer there):
    /// forgotten after this read, found again, with its new id, by the next.
    stale: bool,
    per: Vec<PerHier>,
}

/// A child as its parent's listing names it, and the node that was last
/// found for it.
struct Child {
    path: Arc<str>,
    node: Ix,
    era: u32,
}

struct PerHier {
    dir: Option<OwnedFd>,
    /// Its directory's inode here (0: not yet known): its BPF row's key.
    ino: u64,
    /// Where the walk's last run wrote its row (a hint: checked by inode).
    row: u32,
    /// v1's `memory.stat`: the charge (pages) when it was last read, and
    /// the read that read it.
    stat_pages: u64,
    stat_at: u64,
    /// With `keep_open`: the files, in the hierarchy's file order.
    files: Vec<Option<OwnedFd>>,
    /// Files not in this cgroup (bit per file), and when they were found so.
    absent: u64,
    absent_at: u64,
    /// The read that last found it in this hierarchy.
    seen: u64,
    /// Its inotify watch (creations and removals of its children), or -1.
    wd: i32,
    /// Its children as last listed; listed again only when its watch
    /// reports a change (or it has none).
    children: Vec<Child>,
    listed: bool,
    /// Children the listing left out (too deep, or not UTF-8).
    left_out: u64,
}

impl PerHier {
    /// Whether the files found missing are tried again at read `reads`.
    /// Once every [`ABSENT_RETRY`] reads, at this cgroup's turn.
    fn retry_absent(&self, reads: u64) -> bool {
        self.absent != 0 && reads > self.absent_at && turn(self.ino, reads, ABSENT_RETRY)
    }
}

impl Default for PerHier {
    fn default() -> PerHier {
        PerHier {
            dir: None,
            ino: 0,
            row: 0,
            stat_pages: 0,
            stat_at: 0,
            files: Vec::new(),
            absent: 0,
            absent_at: 0,
            seen: 0,
            wd: -1,
            children: Vec::new(),
            listed: false,
            left_out: 0,
        }
    }
}

/// Reads every cgroup of the machine's hierarchies; keeps their
/// directories (and with `keep_open` their files) open between reads.
pub struct Reader {
    opts: Options,
    hiers: Vec<Hier>,
    /// The BPF walk, loaded at the first read that runs it, for every
    /// hierarchy; why it is not used, once it did not load; the capacity
    /// it is loaded with next; how many times it was loaded (a hierarchy
    /// links to each load anew).
    walk: Option<BpfWalk>,
    walk_off: Option<String>,
    walk_capacity: u32,
    walk_era: u32,
    /// The hierarchy whose rows the walk's last run wrote.
    walked_hier: Option<usize>,
    /// Every cgroup in a slot of its own (a read reaches a child from its
    /// parent's listing by index, not by path); the slots of cgroups gone
    /// are `free` for the next ones.
    nodes: Vec<Node>,
    free: Vec<Ix>,
    /// The live nodes by path (a cgroup first listed is found here).
    by_path: HashMap<Arc<str>, Ix, foldhash::fast::RandomState>,
    /// The live nodes in path order, sorted again only when one was
    /// added or removed.
    order: Vec<Ix>,
    order_stale: bool,
    reads: u64,
    /// Reads made to the end (one a walk outgrew stops short).
    complete: u64,
    /// New cgroups this read has taken.
    made: usize,
    /// A walk that meets at least this many cgroups and has no room for
    /// them stops the read ([`Reader::set_hand_over`]).
    hand_over: Option<usize>,
    /// This read stopped so: the cgroups the walk met.
    outgrown: Option<usize>,
    kept: usize,
    buf: Vec<u8>,
    dents: Vec<u8>,
    /// Child names per level, reused.
    names: Vec<Vec<u8>>,
    /// inotify: directories' children made and removed since the last
    /// read (none: every directory is listed at every read).
    notify: Option<OwnedFd>,
    /// Each watch's hierarchy and cgroup.
    watches: HashMap<i32, (usize, Arc<str>)>,
    max_watches: usize,
    events: Vec<u8>,
}

/// Watches a reader adds at most (the user's inotify watches are shared
/// with every other program of root's).
const MAX_WATCHES: usize = 65_536;

impl Reader {
    /// Finds the hierarchies; an error when the mount table cannot be read
    /// or holds none that gives a figure of the files asked for.
    pub fn new(opts: Options) -> Result<Reader, String> {
        let mountinfo = opts.proc_root.join("self/mountinfo");
        let found = hierarchies(&opts.proc_root, &opts.sys_root, &opts.files)
            .map_err(|e| format!("cgroups: cannot read {}: {e}", mountinfo.display()))?;
        let hiers: Vec<Hier> = found
            .into_iter()
            .map(|info| {
                let files = info.files(&opts.files);
                Hier::new(info, files)
            })
            .filter(|h: &Hier| !h.files.is_empty())
            .collect();
        if hiers.is_empty() {
            return Err(format!(
                "cgroups: no cgroup hierarchy in {} holds a file asked for (v2, or v1 with cpu, cpuacct, memory, blkio or pids)",
                mountinfo.display()
            ));
        }
        Ok(Reader {
            opts,
            hiers,
            walk: None,
            walk_off: None,
            walk_capacity: 0,
            walk_era: 0,
            walked_hier: None,
            nodes: Vec::new(),
            free: Vec::new(),
            by_path: HashMap::default(),
            order: Vec::new(),
            order_stale: false,
            reads: 0,
            made: 0,
            complete: 0,
            hand_over: None,
            outgrown: None,
            kept: 0,
            buf: Vec::new(),
            dents: vec![0; 32 << 10],
            names: Vec::new(),
            notify: inotify(),
            watches: HashMap::new(),
            max_watches: MAX_WATCHES,
            events: vec![0; 64 << 10],
        })
    }

    /// Why a hierarchy is read from its files rather than by the BPF walk,
    /// when it is asked for and did not load (or failed): the first one's
    /// reason.
    pub fn bpf_off(&self) -> Option<&str> {
        self.walk_off
            .as_deref()
            .or_else(|| self.hiers.iter().find_map(|h| h.bpf_off.as_deref()))
    }

    /// The rows of the walk's last run, when it was of hierarchy `hi`.
    fn rows_of(walk: &Option<BpfWalk>, walked: Option<usize>, hi: usize) -> &[QsCgroup] {
        match walk {
            Some(w) if walked == Some(hi) => w.last(),
            _ => &[],
        }
    }

    /// How many hierarchies the last read took figures from the BPF walk.
    pub fn bpf_used(&self) -> usize {
        self.walked().count()
    }

    /// The hierarchies whose last read took figures from the BPF walk.
    pub fn walked(&self) -> impl Iterator<Item = &Hierarchy> {
        self.hiers.iter().filter(|h| h.walked).map(|h| &h.info)
    }

    /// Runs the BPF walk of hierarchy `hi`, when it is asked for and a
    /// file it may give is read there; the walk is loaded at the first
    /// read, again larger when it had no room for every cgroup of a
    /// hierarchy, never again once it did not load; a hierarchy it cannot
    /// be linked to or run in is read from its files from then on.
    fn run_bpf(&mut self, hi: usize, btf: &mut KernelBtf) {
        let nodes = self.by_path.len();
        let h = &mut self.hiers[hi];
        h.walked = false;
        h.rows_built = false;
        self.walked_hier = None;
        if !self.opts.bpf
            || self.walk_off.is_some()
            || h.bpf_off.is_some()
            || h.given.iter().all(|g| *g == Given::Nothing)
        {
            return;
        }
        // A tree of files (fixtures) is no hierarchy to walk: said before
        // the walk is loaded and the kernel's BTF parsed.
        let mode = match &h.link {
            Some((l, _)) => l.mode(),
            None => match mode_of(&h.info.dir) {
                Ok(m) => m,
                Err(e) => {
                    h.bpf_off = Some(e);
                    return;
                }
            },
        };
        // A walk with no room for every cgroup is loaded again, larger,
        // and run again (once: the count it saw is the room it gets).
        for _ in 0..2 {
            if self.walk.is_none() {
                let capacity = self.walk_capacity.max(capacity_for(nodes));
                match BpfWalk::load(capacity, btf) {
                    Ok(w) => {
                        self.walk = Some(w);
                        self.walk_era += 1;
                    }
                    Err(e) => {
                        self.walk_off = Some(format!("{}: {e}", h.info.dir.display()));
                        return;
                    }
                }
            }
            let Some(w) = self.walk.as_mut() else {
                return;
            };
            if h.link.as_ref().is_none_or(|(_, era)| *era != self.walk_era) {
                h.link = None;
                match w.link(&h.info.dir, mode) {
                    Ok(l) => h.link = Some((l, self.walk_era)),
                    Err(e) => {
                        h.bpf_off = Some(e);
                        return;
                    }
                }
            }
            let Some((link, _)) = h.link.as_ref() else {
                return;
            };
            match w.run(link) {
                Ok(r) if r.lost > 0 => {
                    let met = r.rows.len() + r.lost as usize;
                    self.walk_capacity = capacity_for(met);
                    self.walk = None;
                    if self.hand_over.is_some_and(|n| met >= n) {
                        self.outgrown = Some(met);
                        return;
                    }
                }
                Ok(r) => {
                    // Per-CPU sums over some CPUs only are no sums.
                    h.trusted = if r.per_cpu {
                        !0
                    } else {
                        !(QS_CG_CPUACCT as u32)
                    };
                    h.walked = true;
                    self.walked_hier = Some(hi);
                    return;
                }
                Err(e) => {
                    h.link = None;
                    h.bpf_off = Some(format!("{}: {e}", h.info.dir.display()));
                    return;
                }
            }
        }
    }

    pub fn hierarchies(&self) -> impl Iterator<Item = &Hierarchy> {
        self.hiers.iter().map(|h| &h.info)
    }

    /// Descriptors kept open between reads.
    pub fn kept_fds(&self) -> usize {
        self.kept
    }

    /// The node of `path`, made (with id `id`, found in hierarchy `hi`)
    /// when it has none; none when it is new past `max_cgroups`.
    fn node_of(
        &mut self,
        path: &Arc<str>,
        id: impl FnOnce() -> u64,
        hi: usize,
        depth: u16,
    ) -> Option<Ix> {
        if let Some(i) = self.by_path.get(path) {
            return Some(*i);
        }
        if self.by_path.len() >= self.opts.max_cgroups {
            return None;
        }
        self.made += 1;
        let node = Node {
            path: path.clone(),
            era: 0,
            live: true,
            id: id(),
            id_v2: self.hiers[hi].info.v2,
            depth,
            figures: Figures::default(),
            read: 0,
            settings_at: 0,
            carried: Figures::default(),
            bpf_cputime: (0, 0),
            stale: false,
            per: (0..self.hiers.len()).map(|_| PerHier::default()).collect(),
        };
        let i = match self.free.pop() {
            Some(i) => {
                let slot = &mut self.nodes[i as usize];
                let era = slot.era.wrapping_add(1);
                *slot = node;
                slot.era = era;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as Ix
            }
        };
        self.by_path.insert(path.clone(), i);
        self.order_stale = true;
        Some(i)
    }

    /// The live node a listed child names: the one last found for it, or
    /// the one its path now has.
    fn child_node(&self, c: &mut Child) -> Option<Ix> {
        if let Some(n) = self.nodes.get(c.node as usize)
            && n.live
            && n.era == c.era
        {
            return Some(c.node);
        }
        let i = *self.by_path.get(&c.path)?;
        c.node = i;
        c.era = self.nodes[i as usize].era;
        Some(i)
    }

    /// Reads every cgroup into `out`.
    pub fn read(&mut self, out: &mut Sample) {
        self.reads += 1;
        self.made = 0;
        self.outgrown = None;
        out.cgroups.clear();
        out.left_out = 0;
        out.skipped_lines = 0;
        out.errors = 0;
        out.first_error = None;
        out.mono_ns = sys::mono_ns();
        out.unix_ns = sys::unix_ns();
        self.drain_events();
        let mut btf = KernelBtf::default();
        for hi in 0..self.hiers.len() {
            self.run_bpf(hi, &mut btf);
            if self.outgrown.is_some() {
                // Nothing forgotten: the nodes keep what the last read saw.
                return;
            }
            if self.hiers[hi].root.is_none() {
                match sys::dir::open_dir(&self.hiers[hi].info.dir) {
                    Ok(fd) => self.hiers[hi].root = Some(fd),
                    Err(e) => {
                        out.error(format!(
                            "cgroups: {}: {e}",
                            self.hiers[hi].info.dir.display()
                        ));
                        continue;
                    }
                }
            }
            let root = self.hiers[hi].root_fd();
            let Some(i) = self.node_of(&Arc::from("/"), || inode(root).unwrap_or(0), hi, 0) else {
                out.left_out += 1;
                continue;
            };
            self.visit(hi, i, Dir::open(root), out);
        }
        let reads = self.reads;
        let mut kept = 0;
        let notify = self.notify.as_ref().map(|f| f.as_raw_fd());
        let watches = &mut self.watches;
        for (i, n) in self.nodes.iter_mut().enumerate() {
            if !n.live {
                continue;
            }
            let gone = n.stale || n.per.iter().all(|p| p.seen != reads);
            for p in &mut n.per {
                if p.seen != reads || gone {
                    if p.wd >= 0 {
                        watches.remove(&p.wd);
                        if let Some(fd) = notify {
                            // SAFETY: removing a watch of our inotify fd (one
                            // the kernel already dropped answers EINVAL).
                            unsafe { libc::inotify_rm_watch(fd, p.wd) };
                        }
                    }
                    *p = PerHier::default();
                }
                kept += usize::from(p.dir.is_some()) + p.files.iter().flatten().count();
            }
            if gone {
                self.by_path.remove(&n.path);
                n.live = false;
                n.per = Vec::new();
                self.free.push(i as Ix);
                self.order_stale = true;
            }
        }
        self.kept = kept;
        if self.order_stale {
            let nodes = &self.nodes;
            self.order.clear();
            self.order.extend(self.by_path.values().copied());
            self.order
                .sort_unstable_by(|a, b| nodes[*a as usize].path.cmp(&nodes[*b as usize].path));
            self.order_stale = false;
        }
        out.cgroups.extend(self.order.iter().map(|i| {
            let n = &self.nodes[*i as usize];
            Cgroup {
                path: n.path.clone(),
                id: n.id,
                depth: n.depth,
                figures: n.figures.clone(),
            }
        }));
        self.complete += 1;
    }

    /// A walk that meets `past` cgroups or more and has no room for them
    /// (it must be loaded again, larger: the kernel's BTF parsed, the
    /// program verified) stops the read instead, with no cgroup read
    /// ([`Reader::outgrown`]); the next read loads it. The agent walks on
    /// its sampler's thread while the cgroups are few, and hands a walk
    /// that outgrew them to a thread of its own before that load. `None`
    /// (the default): loaded again within the read.
    pub fn set_hand_over(&mut self, past: Option<usize>) {
        self.hand_over = past;
    }

    /// The cgroups the walk met, when the last read stopped because it
    /// outgrew them ([`Reader::set_hand_over`]).
    pub fn outgrown(&self) -> Option<usize> {
        self.outgrown
    }

    /// Reads node `i` in hierarchy `hi` (its directory `dir`), then its
    /// children.
    fn visit(&mut self, hi: usize, i: Ix, mut dir: Dir, out: &mut Sample) {
        let rows = Self::rows_of(&self.walk, self.walked_hier, hi);
        let h = &mut self.hiers[hi];
        let (v2, root) = (h.info.v2, h.root_fd());
        let node = &mut self.nodes[i as usize];
        // Found in v1 first, in v2 now (made there later): the v2 inode is
        // its id, as the kernel and the BPF walk number it.
        if v2 && !node.id_v2 {
            if let Ok(fd) = dir.get(root, &node.path) {
                node.id = inode(fd).unwrap_or(node.id);
            }
            node.id_v2 = true;
        }
        let p = &mut node.per[hi];
        if p.ino == 0
            && let Ok(fd) = dir.get(root, &node.path)
        {
            p.ino = inode(fd).unwrap_or(0);
        }
        let row = h.find_row(rows, p.ino, p.row);
        if let Some(r) = row {
            p.row = r;
        }
        let depth = node.depth;
        if self.read_files(hi, i, row, &mut dir, out) && self.list_children(hi, i, &mut dir, out) {
            let mut children = std::mem::take(&mut self.nodes[i as usize].per[hi].children);
            for child in &mut children {
                self.visit_child(hi, i, child, &mut dir, depth, out);
            }
            self.nodes[i as usize].per[hi].children = children;
        }
        // A directory opened for this read is kept within the budget.
        if let Some(fd) = dir.held.take() {
            let p = &mut self.nodes[i as usize].per[hi];
            if p.dir.is_none() && self.kept < self.opts.max_fds {
                p.dir = Some(fd);
                self.kept += 1;
            }
        }
    }

    /// Visits `child` of node `parent` (its directory `dir`) in hierarchy
    /// `hi`: through its kept directory; not opened at all when the BPF
    /// walk read it (opened from the hierarchy's root only if a file must
    /// be read or its children listed); else opened beneath `dir`.
    fn visit_child(
        &mut self,
        hi: usize,
        parent: Ix,
        child: &mut Child,
        dir: &mut Dir,
        depth: u16,
        out: &mut Sample,
    ) {
        let (reads, every) = (self.reads, self.opts.memory_stat_every.max(1));
        let i = self.child_node(child);
        let rows = Self::rows_of(&self.walk, self.walked_hier, hi);
        let h = &mut self.hiers[hi];
        // Walked: what the walk, when it ran, says of a cgroup with an
        // inode. Only a cgroup that needs no descriptor this read is
        // visited without one: the others are opened beneath `dir`, one
        // name looked up, rather than from the root later.
        let (kept, walked) = match i.map(|i| &mut self.nodes[i as usize].per[hi]) {
            Some(p) => {
                let walked =
                    (p.ino != 0 && h.walked).then(|| match h.find_row(rows, p.ino, p.row) {
                        Some(r) => {
                            p.row = r;
                            match h.row(rows, r) {
                                Some(row) if !needs_dir(h, p, row, reads, every) => Walked::Whole,
                                _ => Walked::NeedsDir,
                            }
                        }
                        None => Walked::Gone,
                    });
                (p.dir.as_ref().map(|f| f.as_raw_fd()), walked)
            }
            None => (None, None),
        };
        match (i, kept, walked) {
            // Gone from this hierarchy since the BPF walk's last read of
            // it (or made again under its name: found by the next read).
            (_, _, Some(Walked::Gone)) => {}
            (Some(i), Some(fd), _) => self.visit(hi, i, Dir::open(fd), out),
            (Some(i), None, Some(Walked::Whole)) => self.visit(hi, i, Dir::lazy(), out),
            // New past this read's share: taken by a later read.
            (None, _, _) if self.complete > 0 && self.made >= self.opts.max_new_per_read => {
                out.left_out += 1;
            }
            (_, _, _) => {
                let root = h.root_fd();
                let parent = match dir.get(root, &self.nodes[parent as usize].path) {
                    Ok(fd) => fd,
                    Err(e) => {
                        if e.raw_os_error() != Some(libc::ENOENT) {
                            out.error(format!(
                                "cgroups: {}: {e}",
                                self.nodes[parent as usize].path
                            ));
                        }
                        return;
                    }
                };
                let name = child.path.rsplit('/').next().unwrap_or_default().as_bytes();
                let fd = match sys::dir::open_at(parent, name, libc::O_RDONLY | libc::O_DIRECTORY) {
                    Ok(fd) => fd,
                    // Removed since the listing, or not a directory.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                        return;
                    }
                    Err(e) => {
                        out.error(format!("cgroups: {}: {e}", child.path));
                        return;
                    }
                };
                let raw = fd.as_raw_fd();
                match i.or_else(|| {
                    self.node_of(&child.path, || inode(raw).unwrap_or(0), hi, depth + 1)
                }) {
                    Some(i) => self.visit(hi, i, Dir::held(fd), out),
                    None => out.left_out += 1,
                }
            }
        }
    }

    /// Lists the children of node `i` in hierarchy `hi` when they may have
    /// changed (never listed, no watch, or its watch reported a child made
    /// or removed), watching it first; false when it was removed.
    fn list_children(&mut self, hi: usize, i: Ix, dir: &mut Dir, out: &mut Sample) -> bool {
        let root = self.hiers[hi].root_fd();
        let node = &mut self.nodes[i as usize];
        let (path, depth) = (node.path.clone(), node.depth);
        let p = &mut node.per[hi];
        if p.listed && p.wd >= 0 {
            out.left_out += p.left_out;
            return true;
        }
        let dir = match dir.get(root, &path) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                node.stale = true;
                return false;
            }
            Err(e) => {
                out.error(format!("cgroups: {path}: {e}"));
                return false;
            }
        };
        // Watched before listing: a child made meanwhile is in the listing
        // or reported by the next read's events.
        if p.wd < 0
            && self.watches.len() < self.max_watches
            && let Some(fd) = &self.notify
        {
            let full = self.hiers[hi].info.dir.join(path.trim_start_matches('/'));
            if let Ok(c) = std::ffi::CString::new(full.as_os_str().as_encoded_bytes()) {
                let mask = libc::IN_CREATE
                    | libc::IN_DELETE
                    | libc::IN_MOVED_FROM
                    | libc::IN_MOVED_TO
                    | libc::IN_ONLYDIR;
                // SAFETY: c is NUL-terminated; fd is our inotify fd.
                let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), mask) };
                if wd >= 0 {
                    p.wd = wd;
                    self.watches.insert(wd, (hi, path.clone()));
                }
            }
        }
        // The children's names, in this level's reused buffer.
        let level = usize::from(depth);
        if self.names.len() <= level {
            self.names.resize_with(level + 1, Vec::new);
        }
        let mut names = std::mem::take(&mut self.names[level]);
        names.clear();
        let listed = sys::dir::entries(dir, &mut self.dents, |name, t| {
            // A filesystem that does not say (a fixture tree on some) is
            // asked when the entry is opened.
            if (t == sys::dir::DT_DIR || t == sys::dir::DT_UNKNOWN) && name != b"." && name != b".."
            {
                names.extend_from_slice(name);
                names.push(0);
            }
        });
        let node = &mut self.nodes[i as usize];
        let ok = match listed {
            Ok(()) => {
                let p = &mut node.per[hi];
                p.children.clear();
                p.left_out = 0;
                for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
                    let Ok(s) = std::str::from_utf8(name) else {
                        p.left_out += 1;
                        continue;
                    };
                    if depth >= MAX_DEPTH {
                        p.left_out += 1;
                        continue;
                    }
                    p.children.push(Child {
                        path: if depth == 0 {
                            Arc::from(format!("/{s}"))
                        } else {
                            Arc::from(format!("{path}/{s}"))
                        },
                        node: Ix::MAX,
                        era: 0,
                    });
                }
                p.listed = true;
                out.left_out += p.left_out;
                true
            }
            // Removed since it was opened.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                node.stale = true;
                false
            }
            Err(e) => {
                out.error(format!("cgroups: listing {path}: {e}"));
                true
            }
        };
        self.names[level] = names;
        ok
    }

    /// Marks the directories whose children changed since the last read
    /// to be listed again (all of them when the kernel's queue overflowed).
    fn drain_events(&mut self) {
        let Some(fd) = self.notify.as_ref().map(|f| f.as_raw_fd()) else {
            return;
        };
        loop {
            // SAFETY: the kernel writes at most events.len() bytes.
            let n = unsafe { libc::read(fd, self.events.as_mut_ptr().cast(), self.events.len()) };
            if n <= 0 {
                return;
            }
            let n = n as usize;
            let mut off = 0;
            // struct inotify_event { int wd; u32 mask, cookie, len; char name[len]; }
            while off + 16 <= n {
                let word = |i: usize| {
                    u32::from_ne_bytes(
                        self.events[off + i..off + i + 4]
                            .try_into()
                            .unwrap_or_default(),
                    )
                };
                let (wd, mask, len) = (word(0) as i32, word(4), word(12) as usize);
                off += 16 + len;
                if mask & libc::IN_Q_OVERFLOW != 0 {
                    for node in &mut self.nodes {
                        for p in &mut node.per {
                            p.listed = false;
                        }
                    }
                    continue;
                }
                let Some((hi, path)) = self.watches.get(&wd).cloned() else {
                    continue;
                };
                if mask & libc::IN_IGNORED != 0 {
                    self.watches.remove(&wd);
                }
                if let Some(i) = self.by_path.get(&path) {
                    let p = &mut self.nodes[*i as usize].per[hi];
                    p.listed = false;
                    if mask & libc::IN_IGNORED != 0 {
                        p.wd = -1;
                    }
                }
            }
        }
    }

    /// Reads the files of hierarchy `hi` beneath `dir` into node `i`'s
    /// figures, taking what the BPF walk gives from its row `row`; false
    /// when the cgroup was removed.
    fn read_files(
        &mut self,
        hi: usize,
        i: Ix,
        row: Option<u32>,
        dir: &mut Dir,
        out: &mut Sample,
    ) -> bool {
        let reads = self.reads;
        let keep_open = self.opts.keep_open;
        let max_fds = self.opts.max_fds;
        let every = self.opts.settings_every.max(1);
        let stat_every = self.opts.memory_stat_every.max(1);
        let node = &mut self.nodes[i as usize];
        if node.read != reads {
            node.carried.clone_from(&node.figures);
            if node.settings_at == 0 || reads - node.settings_at >= every {
                node.figures.clear();
                node.settings_at = reads;
            } else {
                // The settings last read stand; their files are skipped.
                node.figures.clear_counts();
            }
            node.read = reads;
        }
        let settings_due = node.settings_at == reads;
        let hier = &self.hiers[hi];
        let root = hier.root_fd();
        let rows = Self::rows_of(&self.walk, self.walked_hier, hi);
        let row = row.and_then(|r| hier.row(rows, r));
        let path = &node.path;
        let p = &mut node.per[hi];
        p.seen = reads;
        if p.retry_absent(reads) {
            p.absent = 0;
        }
        if keep_open && p.files.len() != hier.files.len() {
            p.files.resize_with(hier.files.len(), || None);
        }
        for (i, file) in hier.files.iter().enumerate() {
            // Not there, or every figure it gives already read from a file
            // read before it (v1's cpuacct.usage after v2's cpu.stat on a
            // host with both).
            if p.absent & (1 << i) != 0
                || (file.is_settings() && !settings_due)
                || file.keys.iter().all(|k| node.figures.get(k.1).is_some())
            {
                continue;
            }
            if let Some((r, flags)) = row {
                let given = hier.given[i];
                if give(
                    given,
                    file,
                    r,
                    flags,
                    &mut node.figures,
                    &mut node.bpf_cputime,
                ) {
                    continue;
                }
                if given == Given::MemoryStat {
                    if !memory_stat_due(r, p, reads, stat_every) {
                        for k in file.keys {
                            if let Some(v) = node.carried.get(k.1) {
                                node.figures.set(k.1, v);
                            }
                        }
                        continue;
                    }
                    p.stat_pages = r.memory_pages;
                    p.stat_at = reads;
                }
            }
            let dir = match dir.get(root, path) {
                Ok(fd) => fd,
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                    node.stale = true;
                    return false;
                }
                Err(e) => {
                    out.error(format!("cgroups: {path}: {e}"));
                    return true;
                }
            };
            let name = file.name.as_bytes();
            let got = match p.files.get_mut(i) {
                Some(slot) => {
                    if slot.is_none()
                        && self.kept < max_fds
                        && let Ok(fd) = sys::dir::open_at(dir, name, libc::O_RDONLY)
                    {
                        *slot = Some(fd);
                        self.kept += 1;
                    }
                    match slot {
                        Some(fd) => {
                            sys::dir::pread_all(fd.as_raw_fd(), &mut self.buf, 4096, FILE_LIMIT)
                        }
                        None => read_at(dir, name, &mut self.buf),
                    }
                }
                None => read_at(dir, name, &mut self.buf),
            };
            match got {
                Ok(n) => match parse(file, &self.buf[..n], &mut node.figures) {
                    Ok(skipped) => out.skipped_lines += skipped as u64,
                    Err(e) => out.error(format!("cgroups: {path}: {e}")),
                },
                // A kept file of a removed cgroup.
                Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {
                    node.stale = true;
                    return false;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    if !exists(dir, b"cgroup.procs") {
                        node.stale = true;
                        return false;
                    }
                    p.absent |= 1 << i;
                    p.absent_at = reads;
                }
                Err(e) => out.error(format!("cgroups: {path}/{}: {e}", file.name)),
            }
        }
        true
    }
}

/// A cgroup's directory in one hierarchy during a read: open (kept, or
/// `held` for this read), or opened from the hierarchy's root when first
/// needed (the BPF walk read the cgroup: most reads need no descriptor).
struct Dir {
    fd: RawFd,
    held: Option<OwnedFd>,
}

impl Dir {
    fn open(fd: RawFd) -> Dir {
        Dir { fd, held: None }
    }

    fn held(fd: OwnedFd) -> Dir {
        Dir {
            fd: fd.as_raw_fd(),
            held: Some(fd),
        }
    }

    fn lazy() -> Dir {
        Dir { fd: -1, held: None }
    }

    /// The descriptor, `path` opened beneath the hierarchy's `root` first
    /// when it is not open.
    fn get(&mut self, root: RawFd, path: &str) -> io::Result<RawFd> {
        if self.fd < 0 {
            let rel = path.trim_start_matches('/');
            let fd = if rel.is_empty() {
                sys::dir::open_at(root, b".", libc::O_RDONLY | libc::O_DIRECTORY)?
            } else {
                sys::dir::open_at(root, rel.as_bytes(), libc::O_RDONLY | libc::O_DIRECTORY)?
            };
            self.fd = fd.as_raw_fd();
            self.held = Some(fd);
        }
        Ok(self.fd)
    }
}

/// A non-blocking inotify instance, or none (every directory is then
/// listed at every read).
fn inotify() -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: inotify_init1 returns a new fd we own or -1.
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    // SAFETY: fd is a fresh descriptor.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn read_at(dir: RawFd, name: &[u8], buf: &mut Vec<u8>) -> io::Result<usize> {
    let fd = sys::dir::open_at(dir, name, libc::O_RDONLY)?;
    sys::dir::pread_all(fd.as_raw_fd(), buf, 4096, FILE_LIMIT)
}

fn exists(dir: RawFd, name: &[u8]) -> bool {
    sys::dir::open_at(dir, name, libc::O_PATH).is_ok()
}

fn inode(fd: RawFd) -> Option<u64> {
    // SAFETY: fstat fills a stat buffer we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; st is valid for writing.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_ino)
}

#[cfg(test)]
mod tests {
    use super::turn;

    /// Every cgroup has one turn in any `every` reads running, and each read
    /// takes about its share of them, also for inodes the kernel numbers
    /// with a stride (a directory and its files).
    #[test]
    fn turns_come_once_per_period_and_spread_over_its_reads() {
        for stride in [1u64, 2, 6, 30, 31, 64] {
            let inos: Vec<u64> = (0..10_000).map(|i| 5_000 + i * stride).collect();
            for every in [6u64, 30] {
                for start in [1u64, 17] {
                    let mut per_read = vec![0usize; every as usize];
                    for ino in &inos {
                        let turns: Vec<u64> = (start..start + every)
                            .filter(|r| turn(*ino, *r, every))
                            .collect();
                        assert_eq!(turns.len(), 1, "ino {ino} every {every}");
                        per_read[(turns[0] - start) as usize] += 1;
                    }
                    let share = inos.len() / every as usize;
                    assert!(
                        per_read
                            .iter()
                            .all(|n| *n > share / 2 && *n < share * 3 / 2),
                        "stride {stride} every {every}: {per_read:?}"
                    );
                }
            }
        }
    }
}
