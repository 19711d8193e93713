//! What each cgroup's read takes from the BPF walk's row and what from its
//! files, and when a file not read at every walk falls due.

use super::*;

/// Whether `flags` (a BPF row's) has `flag` (record.h's, as bpfgen gives it).
pub(super) fn has(flags: u32, flag: u64) -> bool {
    u64::from(flags) & flag != 0
}

/// What the BPF walk's row gives of a file: named once per hierarchy,
/// so that a read matches no file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Given {
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
    pub(super) fn of(file: &File) -> Given {
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
pub(super) fn gives(given: Given, f: u32) -> bool {
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
pub(super) enum Walked {
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
pub(super) fn needs_dir(
    h: &Hier,
    p: &PerHier,
    row: (&QsCgroup, u32),
    reads: u64,
    every: u64,
) -> bool {
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
pub(super) fn give(
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
pub(super) fn turn(ino: u64, reads: u64, every: u64) -> bool {
    reads
        .wrapping_add(ino.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32)
        .is_multiple_of(every.max(1))
}

/// Whether v1's `memory.stat` is read again for a cgroup the BPF walk
/// read: when it has tasks, when its charge moved since the file was last
/// read (`pages`), or once every `every` reads at the cgroup's [`turn`]
/// (the kernel can age an idle cgroup's pages from one list to another
/// without changing its charge).
pub(super) fn memory_stat_due(r: &QsCgroup, p: &PerHier, reads: u64, every: u64) -> bool {
    has(r.flags, QS_CG_POPULATED)
        || r.memory_pages != p.stat_pages
        || p.stat_at == 0
        || turn(p.ino, reads, every)
}
