//! What is read of a cgroup: the figures, and the files of each hierarchy
//! version that give them. A figure is named once, here; a file is one row
//! of [`FILES`], saying which figures it gives, under which keys, in which
//! unit.

/// Declares the figures, each with its one name (JSON, history, labels).
macro_rules! figures {
    ($( $(#[$doc:meta])* $var:ident = $name:literal, )*) => {
        /// One figure of a cgroup, as the kernel counts it (with what its
        /// exited processes and the kernel work charged to it used).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Figure { $( $(#[$doc])* $var, )* }

        impl Figure {
            pub const ALL: &'static [Figure] = &[$( Figure::$var, )*];
            pub const COUNT: usize = Self::ALL.len();

            /// Its name, with its unit.
            pub fn name(self) -> &'static str {
                match self { $( Figure::$var => $name, )* }
            }

            pub fn from_name(n: &str) -> Option<Figure> {
                match n { $( $name => Some(Figure::$var), )* _ => None }
            }

            pub fn index(self) -> usize {
                self as usize
            }
        }
    };
}

figures! {
    /// CPU time used, user and system (counter).
    CpuUsageNs = "cpu_usage_ns",
    CpuUserNs = "cpu_user_ns",
    CpuSystemNs = "cpu_system_ns",
    /// Bandwidth-control periods that had runnable tasks, those in which the
    /// cgroup was throttled, and the time it was (counters).
    CpuPeriods = "cpu_periods",
    CpuThrottledPeriods = "cpu_throttled_periods",
    CpuThrottledNs = "cpu_throttled_ns",
    /// CPU time allowed per period (absent: no limit), and the period.
    CpuQuotaUs = "cpu_quota_us",
    CpuPeriodUs = "cpu_period_us",
    /// Memory charged to the cgroup (page cache and kernel memory included).
    MemoryBytes = "memory_bytes",
    /// The hard limit (absent: none) and the throttling one (v2).
    MemoryMaxBytes = "memory_max_bytes",
    MemoryHighBytes = "memory_high_bytes",
    /// Anonymous memory (v1: `rss`), page cache (v1: `cache`), kernel
    /// memory, shared memory, socket buffers, slab, mapped files, the
    /// inactive and active file lists (the working set is the usage less
    /// the inactive file list).
    MemoryAnonBytes = "memory_anon_bytes",
    MemoryFileBytes = "memory_file_bytes",
    MemoryKernelBytes = "memory_kernel_bytes",
    MemoryShmemBytes = "memory_shmem_bytes",
    MemorySockBytes = "memory_sock_bytes",
    MemorySlabBytes = "memory_slab_bytes",
    MemoryMappedFileBytes = "memory_mapped_file_bytes",
    MemoryInactiveFileBytes = "memory_inactive_file_bytes",
    MemoryActiveFileBytes = "memory_active_file_bytes",
    /// Page faults, major ones, and refaults of evicted pages (counters).
    PageFaults = "page_faults",
    MajorPageFaults = "major_page_faults",
    WorkingsetRefaultAnon = "workingset_refault_anon",
    WorkingsetRefaultFile = "workingset_refault_file",
    /// Times the limit was hit (v1), times the OOM killer was invoked for
    /// the cgroup (v2), processes it killed (counters).
    MemoryFailcnt = "memory_failcnt",
    OomEvents = "oom_events",
    OomKills = "oom_kills",
    /// Block I/O, summed over devices (counters).
    IoReadBytes = "io_read_bytes",
    IoWriteBytes = "io_write_bytes",
    IoReads = "io_reads",
    IoWrites = "io_writes",
    /// Tasks in the cgroup (v1: processes and threads alike).
    Pids = "pids",
    /// Time some (or all) of the cgroup's tasks stalled on a resource
    /// (counters; pressure stall information).
    CpuSomeUs = "pressure_cpu_some_us",
    CpuFullUs = "pressure_cpu_full_us",
    MemorySomeUs = "pressure_memory_some_us",
    MemoryFullUs = "pressure_memory_full_us",
    IoSomeUs = "pressure_io_some_us",
    IoFullUs = "pressure_io_full_us",
}

/// The layout of a file's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One number (`max`, or a negative one for v1's "no limit": absent).
    Single,
    /// `key value` lines.
    Keyed,
    /// `quota period` (`max 100000`: no quota).
    CpuMax,
    /// v2 `io.stat`: `MAJ:MIN key=value ...` lines, summed over devices.
    IoStat,
    /// v1 `blkio.*`: `MAJ:MIN Op value` lines and a `Total` line; the
    /// devices' lines summed.
    Blkio,
    /// `some avg10=.. avg60=.. avg300=.. total=N` and a `full` line.
    Pressure,
}

/// Which hierarchy a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V2,
    /// A v1 hierarchy with this controller.
    V1(&'static str),
}

/// A cgroup file and the figures it gives.
#[derive(Debug)]
pub struct File {
    pub name: &'static str,
    pub version: Version,
    pub format: Format,
    /// (key, figure, multiplier): the key is `""` for [`Format::Single`],
    /// `quota`/`period` for [`Format::CpuMax`], `some`/`full` for
    /// [`Format::Pressure`], the kernel's key otherwise.
    pub keys: &'static [(&'static str, Figure, u64)],
}

impl File {
    /// The v2 controller whose file this is, present only in cgroups that
    /// controller is enabled in; `None` for a core file, present in every
    /// cgroup (`cpu.stat`, the pressure files), and for a v1 file.
    pub fn v2_controller(&self) -> Option<&'static str> {
        if self.version != Version::V2
            || self.name == "cpu.stat"
            || self.name.ends_with(".pressure")
        {
            return None;
        }
        self.name.split('.').next()
    }
}

impl Figure {
    /// A setting (a limit, a period), not a count: it changes when someone
    /// writes it, not as the cgroup runs.
    pub fn is_setting(self) -> bool {
        matches!(
            self,
            Figure::CpuQuotaUs
                | Figure::CpuPeriodUs
                | Figure::MemoryMaxBytes
                | Figure::MemoryHighBytes
        )
    }
}

impl File {
    /// A file of settings only (`cpu.max`, `memory.max`, `memory.high`,
    /// `cpu.cfs_quota_us`, `cpu.cfs_period_us`, `memory.limit_in_bytes`).
    pub fn is_settings(&self) -> bool {
        self.keys.iter().all(|k| k.1.is_setting())
    }
}

use Figure::*;
use Format::*;
use Version::*;

macro_rules! file {
    ($name:literal, $version:expr, $format:expr, [$(($k:literal, $f:expr, $m:literal)),* $(,)?]) => {
        File { name: $name, version: $version, format: $format, keys: &[$(($k, $f, $m)),*] }
    };
}

/// Every file read, v2 first. Which are read is configurable by name.
pub static FILES: &[File] = &[
    file!(
        "cpu.stat",
        V2,
        Keyed,
        [
            ("usage_usec", CpuUsageNs, 1000),
            ("user_usec", CpuUserNs, 1000),
            ("system_usec", CpuSystemNs, 1000),
            ("nr_periods", CpuPeriods, 1),
            ("nr_throttled", CpuThrottledPeriods, 1),
            ("throttled_usec", CpuThrottledNs, 1000),
        ]
    ),
    file!(
        "cpu.max",
        V2,
        CpuMax,
        [("quota", CpuQuotaUs, 1), ("period", CpuPeriodUs, 1)]
    ),
    file!("memory.current", V2, Single, [("", MemoryBytes, 1)]),
    file!("memory.max", V2, Single, [("", MemoryMaxBytes, 1)]),
    file!("memory.high", V2, Single, [("", MemoryHighBytes, 1)]),
    file!(
        "memory.stat",
        V2,
        Keyed,
        [
            ("anon", MemoryAnonBytes, 1),
            ("file", MemoryFileBytes, 1),
            ("kernel", MemoryKernelBytes, 1),
            ("shmem", MemoryShmemBytes, 1),
            ("sock", MemorySockBytes, 1),
            ("slab", MemorySlabBytes, 1),
            ("file_mapped", MemoryMappedFileBytes, 1),
            ("inactive_file", MemoryInactiveFileBytes, 1),
            ("active_file", MemoryActiveFileBytes, 1),
            ("pgfault", PageFaults, 1),
            ("pgmajfault", MajorPageFaults, 1),
            ("workingset_refault_anon", WorkingsetRefaultAnon, 1),
            ("workingset_refault_file", WorkingsetRefaultFile, 1),
        ]
    ),
    file!(
        "memory.events",
        V2,
        Keyed,
        [("oom", OomEvents, 1), ("oom_kill", OomKills, 1)]
    ),
    file!(
        "io.stat",
        V2,
        IoStat,
        [
            ("rbytes", IoReadBytes, 1),
            ("wbytes", IoWriteBytes, 1),
            ("rios", IoReads, 1),
            ("wios", IoWrites, 1),
        ]
    ),
    file!("pids.current", V2, Single, [("", Pids, 1)]),
    file!(
        "cpu.pressure",
        V2,
        Pressure,
        [("some", CpuSomeUs, 1), ("full", CpuFullUs, 1)]
    ),
    file!(
        "memory.pressure",
        V2,
        Pressure,
        [("some", MemorySomeUs, 1), ("full", MemoryFullUs, 1)]
    ),
    file!(
        "io.pressure",
        V2,
        Pressure,
        [("some", IoSomeUs, 1), ("full", IoFullUs, 1)]
    ),
    file!(
        "cpuacct.usage",
        V1("cpuacct"),
        Single,
        [("", CpuUsageNs, 1)]
    ),
    file!(
        "cpuacct.usage_user",
        V1("cpuacct"),
        Single,
        [("", CpuUserNs, 1)]
    ),
    file!(
        "cpuacct.usage_sys",
        V1("cpuacct"),
        Single,
        [("", CpuSystemNs, 1)]
    ),
    file!(
        "cpu.stat",
        V1("cpu"),
        Keyed,
        [
            ("nr_periods", CpuPeriods, 1),
            ("nr_throttled", CpuThrottledPeriods, 1),
            ("throttled_time", CpuThrottledNs, 1),
        ]
    ),
    file!("cpu.cfs_quota_us", V1("cpu"), Single, [("", CpuQuotaUs, 1)]),
    file!(
        "cpu.cfs_period_us",
        V1("cpu"),
        Single,
        [("", CpuPeriodUs, 1)]
    ),
    file!(
        "memory.usage_in_bytes",
        V1("memory"),
        Single,
        [("", MemoryBytes, 1)]
    ),
    file!(
        "memory.limit_in_bytes",
        V1("memory"),
        Single,
        [("", MemoryMaxBytes, 1)]
    ),
    file!(
        "memory.failcnt",
        V1("memory"),
        Single,
        [("", MemoryFailcnt, 1)]
    ),
    // The total_ keys count the cgroup's descendants too, as v2's do.
    file!(
        "memory.stat",
        V1("memory"),
        Keyed,
        [
            ("total_rss", MemoryAnonBytes, 1),
            ("total_cache", MemoryFileBytes, 1),
            ("total_shmem", MemoryShmemBytes, 1),
            ("total_mapped_file", MemoryMappedFileBytes, 1),
            ("total_inactive_file", MemoryInactiveFileBytes, 1),
            ("total_active_file", MemoryActiveFileBytes, 1),
            ("total_pgfault", PageFaults, 1),
            ("total_pgmajfault", MajorPageFaults, 1),
        ]
    ),
    file!(
        "memory.oom_control",
        V1("memory"),
        Keyed,
        [("oom_kill", OomKills, 1)]
    ),
    // The _recursive files count the cgroup's descendants too.
    file!(
        "blkio.throttle.io_service_bytes_recursive",
        V1("blkio"),
        Blkio,
        [("Read", IoReadBytes, 1), ("Write", IoWriteBytes, 1),]
    ),
    file!(
        "blkio.throttle.io_serviced_recursive",
        V1("blkio"),
        Blkio,
        [("Read", IoReads, 1), ("Write", IoWrites, 1),]
    ),
    file!("pids.current", V1("pids"), Single, [("", Pids, 1)]),
];

/// The files of `FILES` named in `names` (`v2:cpu.stat`, `v1:memory.stat`,
/// or a bare name for both versions), or an error naming the first name
/// that is none of them and what is accepted.
pub fn select(names: &[&str]) -> Result<Vec<&'static File>, sys::Error> {
    let mut out: Vec<&'static File> = Vec::new();
    for n in names {
        let (version, name) = match n.split_once(':') {
            Some(("v2", f)) => (Some(true), f),
            Some(("v1", f)) => (Some(false), f),
            _ => (None, *n),
        };
        let found: Vec<&'static File> = FILES
            .iter()
            .filter(|f| f.name == name && version.is_none_or(|v2| v2 == (f.version == V2)))
            .collect();
        if found.is_empty() {
            let known: Vec<String> = FILES.iter().map(File::spelled).collect();
            return Err(sys::Error::invalid(format!(
                "cgroup file {n:?} is not one read; accepted: {}",
                known.join(", ")
            )));
        }
        for f in found {
            if !out.iter().any(|o| std::ptr::eq(*o, f)) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

impl File {
    /// `v2:cpu.stat`, `v1:memory.stat`.
    pub fn spelled(&self) -> String {
        match self.version {
            V2 => format!("v2:{}", self.name),
            V1(_) => format!("v1:{}", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v2_file_names_the_controller_it_needs_and_core_files_none() {
        let of = |n: &str| {
            FILES
                .iter()
                .find(|f| f.name == n && f.version == Version::V2)
                .unwrap()
                .v2_controller()
        };
        for core in ["cpu.stat", "cpu.pressure", "memory.pressure", "io.pressure"] {
            assert_eq!(of(core), None, "{core}");
        }
        assert_eq!(of("cpu.max"), Some("cpu"));
        assert_eq!(of("memory.stat"), Some("memory"));
        assert_eq!(of("io.stat"), Some("io"));
        assert_eq!(of("pids.current"), Some("pids"));
        assert!(
            FILES
                .iter()
                .filter(|f| f.version != Version::V2)
                .all(|f| f.v2_controller().is_none())
        );
    }

    #[test]
    fn every_figure_has_a_file_in_some_version_and_names_round_trip() {
        for f in Figure::ALL {
            assert!(
                FILES.iter().any(|x| x.keys.iter().any(|k| k.1 == *f)),
                "{f:?} is read from no file"
            );
            assert_eq!(Figure::from_name(f.name()), Some(*f));
        }
    }

    #[test]
    fn files_are_chosen_by_name_and_version() {
        let s = select(&["memory.stat"]).unwrap();
        assert_eq!(s.len(), 2);
        let s = select(&["v1:memory.stat", "v1:memory.stat"]).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].version, V1("memory"));
        let e = select(&["memory.bogus"]).unwrap_err().to_string();
        assert!(
            e.contains("memory.bogus") && e.contains("v2:cpu.stat"),
            "{e}"
        );
        assert!(select(&["v3:cpu.stat"]).is_err());
    }
}
