//! The system sources this crate reads, indexed by one enum.

use serde::Serialize;

use crate::pressure::Resource;

/// A kernel file with system-wide statistics, relative to the proc root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "&'static str")]
pub enum Source {
    Stat,
    Interrupts,
    Softirqs,
    Meminfo,
    Vmstat,
    Loadavg,
    PressureCpu,
    PressureMemory,
    PressureIo,
    PressureIrq,
    Diskstats,
    NetDev,
    Schedstat,
    Filefd,
    Sockstat,
    Softnet,
    Entropy,
    Uname,
    Sockstat6,
    Netstat,
    Netclass,
    Filesystem,
    Time,
    Timex,
    Os,
    Selinux,
    Arp,
    UdpQueues,
    Conntrack,
    Textfile,
    Udev,
    Cpufreq,
    ThermalZone,
    Dmi,
    Bonding,
    Mdstat,
    Hwmon,
    Numa,
    Buddyinfo,
    Zoneinfo,
    Slabinfo,
    Ksm,
    KernelHung,
    TaskLimits,
    Cpuinfo,
    PowerSupply,
    Nvme,
    Watchdog,
    Rapl,
    Edac,
    Tape,
    FcHost,
    Infiniband,
    Xfs,
    Btrfs,
    Nfs,
    Nfsd,
    Ipvs,
    Zfs,
    Bcache,
}

impl From<Source> for &'static str {
    fn from(s: Source) -> &'static str {
        s.name()
    }
}

impl Source {
    pub const ALL: [Source; 60] = [
        Source::Stat,
        Source::Interrupts,
        Source::Softirqs,
        Source::Meminfo,
        Source::Vmstat,
        Source::Loadavg,
        Source::PressureCpu,
        Source::PressureMemory,
        Source::PressureIo,
        Source::PressureIrq,
        Source::Diskstats,
        Source::NetDev,
        Source::Schedstat,
        Source::Filefd,
        Source::Sockstat,
        Source::Softnet,
        Source::Entropy,
        Source::Uname,
        Source::Sockstat6,
        Source::Netstat,
        Source::Netclass,
        Source::Filesystem,
        Source::Time,
        Source::Timex,
        Source::Os,
        Source::Selinux,
        Source::Arp,
        Source::UdpQueues,
        Source::Conntrack,
        Source::Textfile,
        Source::Udev,
        Source::Cpufreq,
        Source::ThermalZone,
        Source::Dmi,
        Source::Bonding,
        Source::Mdstat,
        Source::Hwmon,
        Source::Numa,
        Source::Buddyinfo,
        Source::Zoneinfo,
        Source::Slabinfo,
        Source::Ksm,
        Source::KernelHung,
        Source::TaskLimits,
        Source::Cpuinfo,
        Source::PowerSupply,
        Source::Nvme,
        Source::Watchdog,
        Source::Rapl,
        Source::Edac,
        Source::Tape,
        Source::FcHost,
        Source::Infiniband,
        Source::Xfs,
        Source::Btrfs,
        Source::Nfs,
        Source::Nfsd,
        Source::Ipvs,
        Source::Zfs,
        Source::Bcache,
    ];
    pub const COUNT: usize = Self::ALL.len();

    /// The source's name: for the sources read from one file named as in
    /// /proc, the path below the proc root ([`Source::files`] has the paths
    /// of all).
    pub fn name(self) -> &'static str {
        match self {
            Source::Stat => "stat",
            Source::Interrupts => "interrupts",
            Source::Softirqs => "softirqs",
            Source::Meminfo => "meminfo",
            Source::Vmstat => "vmstat",
            Source::Loadavg => "loadavg",
            Source::PressureCpu => "pressure/cpu",
            Source::PressureMemory => "pressure/memory",
            Source::PressureIo => "pressure/io",
            Source::PressureIrq => "pressure/irq",
            Source::Diskstats => "diskstats",
            Source::NetDev => "net/dev",
            Source::Schedstat => "schedstat",
            Source::Filefd => "filefd",
            Source::Sockstat => "sockstat",
            Source::Softnet => "softnet",
            Source::Entropy => "entropy",
            Source::Uname => "uname",
            Source::Sockstat6 => "sockstat6",
            Source::Netstat => "netstat",
            Source::Netclass => "netclass",
            Source::Filesystem => "filesystem",
            Source::Time => "time",
            Source::Timex => "timex",
            Source::Os => "os",
            Source::Selinux => "selinux",
            Source::Arp => "arp",
            Source::UdpQueues => "udp_queues",
            Source::Conntrack => "conntrack",
            Source::Textfile => "textfile",
            Source::Udev => "udev",
            Source::Cpufreq => "cpufreq",
            Source::ThermalZone => "thermal_zone",
            Source::Dmi => "dmi",
            Source::Bonding => "bonding",
            Source::Mdstat => "mdstat",
            Source::Hwmon => "hwmon",
            Source::Numa => "numa",
            Source::Buddyinfo => "buddyinfo",
            Source::Zoneinfo => "zoneinfo",
            Source::Slabinfo => "slabinfo",
            Source::Ksm => "ksm",
            Source::KernelHung => "kernel_hung",
            Source::TaskLimits => "task_limits",
            Source::Cpuinfo => "cpuinfo",
            Source::PowerSupply => "power_supply",
            Source::Nvme => "nvme",
            Source::Watchdog => "watchdog",
            Source::Rapl => "rapl",
            Source::Edac => "edac",
            Source::Tape => "tape",
            Source::FcHost => "fc_host",
            Source::Infiniband => "infiniband",
            Source::Xfs => "xfs",
            Source::Btrfs => "btrfs",
            Source::Nfs => "net/rpc/nfs",
            Source::Nfsd => "net/rpc/nfsd",
            Source::Ipvs => "ipvs",
            Source::Zfs => "zfs",
            Source::Bcache => "bcache",
        }
    }

    /// The files below the proc root the source reads, in order; a source
    /// with several gets them one after another, each ending with a newline
    /// (a missing one after the first as an empty line). Empty for a
    /// [gathered](Source::gathered) source.
    pub fn files(self) -> &'static [&'static str] {
        match self {
            Source::Filefd => &["sys/fs/file-nr"],
            Source::Sockstat => &["net/sockstat"],
            Source::Softnet => &["net/softnet_stat"],
            Source::Entropy => &crate::entropy::FILES,
            Source::Uname => &crate::uname::FILES,
            Source::Sockstat6 => &["net/sockstat6"],
            Source::Netstat => &crate::netstat::FILES,
            Source::Arp => &["net/arp"],
            Source::Mdstat => &["mdstat"],
            Source::Buddyinfo => &["buddyinfo"],
            Source::Zoneinfo => &["zoneinfo"],
            Source::Slabinfo => &["slabinfo"],
            Source::KernelHung => &["sys/kernel/hung_task_detect_count"],
            Source::TaskLimits => &crate::mm::TASK_LIMIT_FILES,
            Source::Cpuinfo => &["cpuinfo"],
            Source::Nfs => &["net/rpc/nfs"],
            Source::Nfsd => &["net/rpc/nfsd"],
            Source::Ipvs => &crate::ipvs::FILES,
            Source::UdpQueues => &crate::netmisc::UDP_FILES,
            Source::Conntrack => &crate::netmisc::CONNTRACK_FILES,
            // Gathered from directories and system calls, not read as files.
            Source::Netclass
            | Source::Filesystem
            | Source::Time
            | Source::Timex
            | Source::Os
            | Source::Selinux
            | Source::Textfile
            | Source::Udev
            | Source::Cpufreq
            | Source::ThermalZone
            | Source::Dmi
            | Source::Bonding
            | Source::Hwmon
            | Source::Numa
            | Source::Ksm
            | Source::Zfs
            | crate::class_sources!() => &[],
            Source::Stat => &["stat"],
            Source::Interrupts => &["interrupts"],
            Source::Softirqs => &["softirqs"],
            Source::Meminfo => &["meminfo"],
            Source::Vmstat => &["vmstat"],
            Source::Loadavg => &["loadavg"],
            Source::PressureCpu => &["pressure/cpu"],
            Source::PressureMemory => &["pressure/memory"],
            Source::PressureIo => &["pressure/io"],
            Source::PressureIrq => &["pressure/irq"],
            Source::Diskstats => &["diskstats"],
            Source::NetDev => &["net/dev"],
            Source::Schedstat => &["schedstat"],
        }
    }

    /// The sysfs class a hardware source reads ([`crate::class`]).
    pub fn class_spec(self) -> Option<&'static crate::class::ClassSpec> {
        Some(&crate::class::CLASSES[self.class_index()?].1)
    }

    /// A class source's slot in [`crate::SystemSample::class`].
    pub fn class_index(self) -> Option<usize> {
        crate::class::CLASSES.iter().position(|(s, _)| *s == self)
    }

    /// Whether the reader gathers the source from directories, sysfs and
    /// system calls into a text (documented in its parser's module) instead
    /// of reading files below the proc root.
    pub fn gathered(self) -> bool {
        self.files().is_empty()
    }

    pub fn from_name(name: &str) -> Option<Source> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Every accepted name, comma-separated (for error messages).
    pub fn names() -> String {
        Self::ALL.map(Source::name).join(", ")
    }

    pub fn pressure(r: Resource) -> Source {
        match r {
            Resource::Cpu => Source::PressureCpu,
            Resource::Memory => Source::PressureMemory,
            Resource::Io => Source::PressureIo,
            Resource::Irq => Source::PressureIrq,
        }
    }

    /// The pressure resource of a `pressure/*` source (inverse of [`Source::pressure`]).
    pub fn resource(self) -> Option<Resource> {
        Resource::ALL
            .into_iter()
            .find(|&r| Source::pressure(r) == self)
    }

    /// Sources a machine may lack without anything being wrong: pressure
    /// files (CONFIG_PSI, or irq without CONFIG_IRQ_TIME_ACCOUNTING),
    /// schedstat (CONFIG_SCHEDSTATS), IPv6, connection tracking (a module),
    /// os-release (a chroot or a bare tree may have none), udev's
    /// database (containers, systems without udev), /sys/class/thermal, DMI
    /// (not every platform has it), bonding and software RAID (modules),
    /// hardware monitoring chips (none on most VMs), NUMA nodes (kernels
    /// without CONFIG_NUMA), same-page merging (CONFIG_KSM), the hung-task
    /// detector's count (CONFIG_DETECT_HUNG_TASK, kernels since 6.14), and
    /// the hardware classes (power supplies, NVMe, watchdogs, RAPL, EDAC,
    /// tapes, Fibre Channel, InfiniBand, XFS and btrfs filesystems, bcache), NFS
    /// client and server statistics (sunrpc, nfsd modules), IP Virtual
    /// Server (ip_vs), ZFS (a module few kernels have).
    pub fn optional(self) -> bool {
        self.resource().is_some()
            || matches!(
                self,
                Source::Schedstat
                    | Source::Sockstat6
                    | Source::Conntrack
                    | Source::Os
                    | Source::Udev
                    | Source::ThermalZone
                    | Source::Dmi
                    | Source::Bonding
                    | Source::Mdstat
                    | Source::Hwmon
                    | Source::Numa
                    | Source::Ksm
                    | Source::KernelHung
                    | Source::Nfs
                    | Source::Nfsd
                    | Source::Ipvs
                    | Source::Zfs
            )
            || self.class_spec().is_some()
    }
}
