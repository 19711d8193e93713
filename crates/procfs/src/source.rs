//! The system sources this crate reads: one registry, one row per source.
//!
//! A row gives everything the rest of the program needs to know of a
//! source: its one name (configuration key, `report --source`, logs, labels
//! and the JSON API; older spellings accepted as aliases), the files it
//! reads below the proc root (none for a gathered source), its slot in
//! [`SystemSample`] and its parser, whether a machine may lack it, its
//! default schedule and whether it is read by default, the node_exporter
//! collectors it serves, and whether the history records it. The enum, the
//! per-source `match`es of [`SystemSample`] and [`SourceData`], the agent's
//! configuration table, the exporter's collector table and the store's
//! recorded list all come from here.
//!
//! A row's place is the source's index: the history stores sources by
//! index, so rows are only ever added at the end.

use serde::Serialize;

use crate::pressure::Resource;
// The modules whose files the rows name (their parsers are named in
// sample.rs, where the rows' code is written).
use crate::{entropy, ipvs, mm, netmisc, netstat, uname};

/// What the registry says of one source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceInfo {
    /// The one name: a configuration key, a label value, a JSON key.
    pub name: &'static str,
    /// Names accepted for it besides [`SourceInfo::name`] (older spellings).
    pub aliases: &'static [&'static str],
    /// Files below the proc root, in order; empty for a gathered source.
    pub files: &'static [&'static str],
    /// A machine may lack it without anything being wrong.
    pub optional: bool,
    /// The agent's default interval and its floor, ms.
    pub interval_ms: u64,
    pub min_interval_ms: u64,
    /// Read only when the configuration or a flag enables it.
    pub opt_in: bool,
    /// node_exporter collectors it serves: each needs it.
    pub serves: &'static [&'static str],
    /// node_exporter collectors it helps: each uses it where present.
    pub helps: &'static [&'static str],
    /// The history records it (`report` derives its figures from it).
    pub recorded: bool,
    /// Its lines stand alone after the first so many (headers): a line
    /// that cannot be read is skipped and counted, the rest used
    /// ([`SystemSample::parse_source_skipping`]). `None`: a line's place
    /// carries meaning (a CPU's number, a header's columns, a record's
    /// parts), and one bad line fails the read.
    pub rows_after: Option<u32>,
}

macro_rules! sources {
    ($(
        $(#[$doc:meta])*
        $variant:ident {
            name: $name:literal $(| $alias:literal)*,
            files: $files:expr,
            slot: [$($slot:tt)+],
            parse: $parse:expr,
            optional: $optional:expr,
            every: $every:expr,
            opt_in: $opt_in:expr,
            serves: [$($serves:literal),*],
            helps: [$($helps:literal),*],
            recorded: $recorded:expr
            $(, rows_after: $rows:expr)? $(,)?
        }
    ),* $(,)?) => {
        /// A source of system-wide statistics (one row of the registry).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(into = "&'static str")]
        pub enum Source {
            $($(#[$doc])* $variant,)*
        }

        const LIST: &[Source] = &[$(Source::$variant),*];

        const INFO: [SourceInfo; LIST.len()] = [$(SourceInfo {
            name: $name,
            aliases: &[$($alias),*],
            files: $files,
            optional: $optional,
            interval_ms: $every.0,
            min_interval_ms: $every.1,
            opt_in: $opt_in,
            serves: &[$($serves),*],
            helps: &[$($helps),*],
            recorded: $recorded,
            rows_after: rows_after!($($rows)?),
        }),*];

        static INFO_TABLE: [SourceInfo; LIST.len()] = INFO;

        /// The rows' slots and parsers, handed to `sample.rs`'s
        /// `source_slots!`, which writes the per-source code of
        /// `SystemSample` there: the registry needs nothing of the sample.
        macro_rules! for_each_source {
            () => {
                source_slots! { $($variant [$($slot)+] $parse;)* }
            };
        }
        pub(crate) use for_each_source;
    };
}

/// A row's `rows_after`, `None` when it gives none.
macro_rules! rows_after {
    () => {
        None
    };
    ($rows:expr) => {
        Some($rows)
    };
}

const READ_OFTEN: (u64, u64) = (1_000, 1);
/// Per-CPU tables: their size grows with CPUs times interrupts.
const PER_CPU_TABLES: (u64, u64) = (5_000, 10);
/// Tables of a few hundred lines that change by the second.
const SMALL_TABLES: (u64, u64) = (5_000, 100);
/// Read per scrape by node_exporter (15 s is the usual scrape interval); a
/// directory walk or a statfs per mount each time.
const PER_SCRAPE: (u64, u64) = (15_000, 1_000);
/// The host's names change rarely.
const NAMES: (u64, u64) = (60_000, 1_000);

sources! {
    Stat { name: "stat", files: &["stat"], slot: [stat], parse: stat::parse_into,
        optional: false, every: READ_OFTEN, opt_in: false, serves: ["cpu", "stat"], helps: [],
        recorded: true, rows_after: 0 },
    Interrupts { name: "interrupts", files: &["interrupts"], slot: [interrupts],
        parse: interrupts::parse_into, optional: false, every: PER_CPU_TABLES, opt_in: false,
        serves: ["interrupts"], helps: [], recorded: true, rows_after: 1 },
    Softirqs { name: "softirqs", files: &["softirqs"], slot: [softirqs],
        parse: softirqs::parse_into, optional: false, every: PER_CPU_TABLES, opt_in: false,
        serves: ["softirqs"], helps: [], recorded: true, rows_after: 1 },
    Meminfo { name: "meminfo", files: &["meminfo"], slot: [meminfo], parse: meminfo::parse_into,
        optional: false, every: READ_OFTEN, opt_in: false, serves: ["meminfo"], helps: [],
        recorded: true, rows_after: 0 },
    Vmstat { name: "vmstat", files: &["vmstat"], slot: [vmstat], parse: vmstat::parse_into,
        optional: false, every: READ_OFTEN, opt_in: false, serves: ["vmstat"], helps: [],
        recorded: true, rows_after: 0 },
    Loadavg { name: "loadavg", files: &["loadavg"], slot: [loadavg],
        parse: value!(loadavg::parse), optional: false, every: READ_OFTEN, opt_in: false,
        serves: ["loadavg"], helps: [], recorded: true },
    /// Pressure files: CONFIG_PSI.
    PressureCpu { name: "pressure_cpu" | "pressure/cpu", files: &["pressure/cpu"],
        slot: [pressure[Resource::Cpu as usize]], parse: value!(pressure::parse),
        optional: true, every: READ_OFTEN, opt_in: false, serves: ["pressure"], helps: [],
        recorded: true, rows_after: 0 },
    PressureMemory { name: "pressure_memory" | "pressure/memory", files: &["pressure/memory"],
        slot: [pressure[Resource::Memory as usize]], parse: value!(pressure::parse),
        optional: true, every: READ_OFTEN, opt_in: false, serves: ["pressure"], helps: [],
        recorded: true, rows_after: 0 },
    PressureIo { name: "pressure_io" | "pressure/io", files: &["pressure/io"],
        slot: [pressure[Resource::Io as usize]], parse: value!(pressure::parse),
        optional: true, every: READ_OFTEN, opt_in: false, serves: ["pressure"], helps: [],
        recorded: true, rows_after: 0 },
    /// Also needs CONFIG_IRQ_TIME_ACCOUNTING.
    PressureIrq { name: "pressure_irq" | "pressure/irq", files: &["pressure/irq"],
        slot: [pressure[Resource::Irq as usize]], parse: value!(pressure::parse),
        optional: true, every: READ_OFTEN, opt_in: false, serves: [], helps: ["pressure"],
        recorded: true, rows_after: 0 },
    Diskstats { name: "diskstats", files: &["diskstats"], slot: [diskstats],
        parse: diskstats::parse_into, optional: false, every: READ_OFTEN, opt_in: false,
        serves: ["diskstats"], helps: [], recorded: true, rows_after: 0 },
    NetDev { name: "net_dev" | "net/dev", files: &["net/dev"], slot: [net_dev],
        parse: net_dev::parse_into, optional: false, every: READ_OFTEN, opt_in: false,
        serves: ["netdev"], helps: [], recorded: true, rows_after: 2 },
    /// CONFIG_SCHEDSTATS.
    Schedstat { name: "schedstat", files: &["schedstat"], slot: [schedstat],
        parse: schedstat::parse_into, optional: true, every: READ_OFTEN, opt_in: false,
        serves: ["schedstat"], helps: [], recorded: false },
    Filefd { name: "filefd", files: &["sys/fs/file-nr"], slot: [filefd],
        parse: value!(filefd::parse), optional: false, every: READ_OFTEN, opt_in: false,
        serves: ["filefd"], helps: [], recorded: true },
    Sockstat { name: "sockstat", files: &["net/sockstat"], slot: [sockstat],
        parse: sockstat::parse_into, optional: false, every: READ_OFTEN, opt_in: false,
        serves: ["sockstat"], helps: [], recorded: false, rows_after: 0 },
    Softnet { name: "softnet", files: &["net/softnet_stat"], slot: [softnet],
        parse: softnet::parse_into, optional: false, every: READ_OFTEN, opt_in: false,
        serves: ["softnet"], helps: [], recorded: false },
    Entropy { name: "entropy", files: &entropy::FILES, slot: [entropy],
        parse: value!(entropy::parse), optional: false, every: READ_OFTEN, opt_in: false,
        serves: ["entropy"], helps: [], recorded: false },
    Uname { name: "uname", files: &uname::FILES, slot: [uname], parse: uname::parse_into,
        optional: false, every: NAMES, opt_in: false, serves: ["uname"], helps: [],
        recorded: false },
    /// IPv6.
    Sockstat6 { name: "sockstat6", files: &["net/sockstat6"], slot: [sockstat6],
        parse: sockstat::parse_into, optional: true, every: READ_OFTEN, opt_in: false,
        serves: [], helps: ["sockstat"], recorded: false, rows_after: 0 },
    Netstat { name: "netstat", files: &netstat::FILES, slot: [netstat],
        parse: netstat::parse_into, optional: false, every: READ_OFTEN, opt_in: false,
        serves: ["netstat"], helps: [], recorded: false },
    Netclass { name: "netclass", files: &[], slot: [netclass], parse: netclass::parse_into,
        optional: false, every: PER_SCRAPE, opt_in: false, serves: ["netclass"], helps: [],
        recorded: false },
    Filesystem { name: "filesystem", files: &[], slot: [filesystem],
        parse: filesystem::parse_into, optional: false, every: PER_SCRAPE, opt_in: false,
        serves: ["filesystem"], helps: [], recorded: false },
    Time { name: "time", files: &[], slot: [time], parse: time::parse_time, optional: false,
        every: READ_OFTEN, opt_in: false, serves: ["time"], helps: [], recorded: false },
    Timex { name: "timex", files: &[], slot: [timex], parse: value!(time::parse_timex),
        optional: false, every: READ_OFTEN, opt_in: false, serves: ["timex"], helps: [],
        recorded: false },
    /// os-release: a chroot or a bare tree may have none.
    Os { name: "os", files: &[], slot: [os], parse: os_release::parse_into, optional: true,
        every: NAMES, opt_in: false, serves: ["os"], helps: [], recorded: false },
    Selinux { name: "selinux", files: &[], slot: [selinux], parse: value!(selinux::parse),
        optional: false, every: NAMES, opt_in: false, serves: ["selinux"], helps: [],
        recorded: false },
    Arp { name: "arp", files: &["net/arp"], slot: [arp], parse: netmisc::parse_arp,
        optional: false, every: SMALL_TABLES, opt_in: false, serves: ["arp"], helps: [],
        recorded: false, rows_after: 1 },
    UdpQueues { name: "udp_queues", files: &netmisc::UDP_FILES, slot: [udp_queues],
        parse: value!(netmisc::parse_udp_queues), optional: false, every: SMALL_TABLES,
        opt_in: false, serves: ["udp_queues"], helps: [], recorded: false },
    /// Connection tracking is a module.
    Conntrack { name: "conntrack", files: &netmisc::CONNTRACK_FILES, slot: [conntrack],
        parse: value!(netmisc::parse_conntrack), optional: true, every: SMALL_TABLES,
        opt_in: false, serves: ["conntrack"], helps: [], recorded: false },
    Textfile { name: "textfile", files: &[], slot: [textfile],
        parse: |b: &[u8], x: &mut std::sync::Arc<textfile::Textfile>| {
            textfile::parse_into(b, std::sync::Arc::make_mut(x))
        },
        optional: false, every: PER_SCRAPE, opt_in: false, serves: ["textfile"], helps: [],
        recorded: false },
    /// udev's database: containers and systems without udev have none.
    Udev { name: "udev", files: &[], slot: [udev], parse: udev::parse_into, optional: true,
        every: NAMES, opt_in: false, serves: [], helps: ["diskstats"], recorded: false },
    Cpufreq { name: "cpufreq", files: &[], slot: [cpufreq], parse: hardware::parse_cpufreq,
        optional: false, every: PER_SCRAPE, opt_in: false, serves: ["cpufreq"], helps: [],
        recorded: false },
    ThermalZone { name: "thermal_zone", files: &[], slot: [thermal],
        parse: hardware::parse_thermal, optional: true, every: PER_SCRAPE, opt_in: false,
        serves: ["thermal_zone"], helps: [], recorded: false },
    /// Not every platform has DMI.
    Dmi { name: "dmi", files: &[], slot: [dmi], parse: hardware::parse_dmi, optional: true,
        every: NAMES, opt_in: false, serves: ["dmi"], helps: [], recorded: false },
    /// Bonding and software RAID are modules.
    Bonding { name: "bonding", files: &[], slot: [bonding], parse: hardware::parse_bonding,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["bonding"], helps: [],
        recorded: false },
    Mdstat { name: "mdstat", files: &["mdstat"], slot: [mdstat], parse: mdstat::parse_into,
        optional: true, every: SMALL_TABLES, opt_in: false, serves: ["mdadm"], helps: [],
        recorded: false },
    /// Hardware monitoring chips: none on most VMs.
    Hwmon { name: "hwmon", files: &[], slot: [hwmon], parse: hwmon::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["hwmon"], helps: [],
        recorded: false },
    /// Kernels without CONFIG_NUMA have no nodes.
    Numa { name: "numa", files: &[], slot: [numa], parse: numa::parse_into, optional: true,
        every: PER_SCRAPE, opt_in: false, serves: ["meminfo_numa"], helps: [],
        recorded: false },
    /// The memory manager's detail (opt-in as node_exporter's collectors
    /// of the same name): series by the hundred, a zone or a slab cache
    /// each, that most dashboards never query.
    Buddyinfo { name: "buddyinfo", files: &["buddyinfo"], slot: [buddyinfo],
        parse: mm::parse_buddyinfo, optional: false, every: PER_SCRAPE, opt_in: true,
        serves: ["buddyinfo"], helps: [], recorded: false, rows_after: 0 },
    Zoneinfo { name: "zoneinfo", files: &["zoneinfo"], slot: [zoneinfo],
        parse: mm::parse_zoneinfo, optional: false, every: PER_SCRAPE, opt_in: true,
        serves: ["zoneinfo"], helps: [], recorded: false },
    Slabinfo { name: "slabinfo", files: &["slabinfo"], slot: [slabinfo],
        parse: mm::parse_slabinfo, optional: false, every: PER_SCRAPE, opt_in: true,
        serves: ["slabinfo"], helps: [], recorded: false },
    /// Same-page merging: CONFIG_KSM.
    Ksm { name: "ksm", files: &[], slot: [ksm], parse: value!(mm::parse_ksm), optional: true,
        every: PER_SCRAPE, opt_in: true, serves: ["ksmd"], helps: [], recorded: false },
    /// The hung-task detector's count: CONFIG_DETECT_HUNG_TASK, 6.14 on.
    KernelHung { name: "kernel_hung", files: &["sys/kernel/hung_task_detect_count"],
        slot: [hung_tasks], parse: value!(mm::parse_hung_tasks), optional: true,
        every: PER_SCRAPE, opt_in: false, serves: ["kernel_hung"], helps: [],
        recorded: false },
    TaskLimits { name: "task_limits", files: &mm::TASK_LIMIT_FILES, slot: [task_limits],
        parse: value!(mm::parse_task_limits), optional: false, every: NAMES, opt_in: false,
        serves: ["processes"], helps: [], recorded: false },
    /// Opt-in: some kernels ask every CPU for its frequency.
    Cpuinfo { name: "cpuinfo", files: &["cpuinfo"], slot: [cpuinfo],
        parse: cpuinfo::parse_into, optional: false, every: NAMES, opt_in: true, serves: [],
        helps: [], recorded: false },
    // The hardware classes (crate::class::CLASSES gives each its spec and
    // slot; a test checks the two agree).
    PowerSupply { name: "power_supply", files: &[], slot: [class[0]],
        parse: class::parse_into, optional: true, every: PER_SCRAPE, opt_in: false,
        serves: ["powersupplyclass"], helps: [], recorded: false },
    Nvme { name: "nvme", files: &[], slot: [class[1]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["nvme"], helps: [],
        recorded: false },
    Watchdog { name: "watchdog", files: &[], slot: [class[2]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["watchdog"], helps: [],
        recorded: false },
    Rapl { name: "rapl", files: &[], slot: [class[3]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["rapl"], helps: [],
        recorded: false },
    Edac { name: "edac", files: &[], slot: [class[4]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["edac"], helps: [],
        recorded: false },
    Tape { name: "tape", files: &[], slot: [class[5]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["tapestats"], helps: [],
        recorded: false },
    FcHost { name: "fc_host", files: &[], slot: [class[6]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["fibrechannel"], helps: [],
        recorded: false },
    Infiniband { name: "infiniband", files: &[], slot: [class[7]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["infiniband"], helps: [],
        recorded: false },
    Xfs { name: "xfs", files: &[], slot: [class[8]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["xfs"], helps: [],
        recorded: false },
    Btrfs { name: "btrfs", files: &[], slot: [class[9]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["btrfs"], helps: [],
        recorded: false },
    /// NFS client and server statistics: the sunrpc and nfsd modules.
    Nfs { name: "nfs" | "net/rpc/nfs", files: &["net/rpc/nfs"], slot: [nfs],
        parse: rpc::parse_into, optional: true, every: PER_SCRAPE, opt_in: false,
        serves: ["nfs"], helps: [], recorded: false },
    Nfsd { name: "nfsd" | "net/rpc/nfsd", files: &["net/rpc/nfsd"], slot: [nfsd],
        parse: rpc::parse_into, optional: true, every: PER_SCRAPE, opt_in: false,
        serves: ["nfsd"], helps: [], recorded: false },
    /// IP Virtual Server: the ip_vs module.
    Ipvs { name: "ipvs", files: &ipvs::FILES, slot: [ipvs], parse: value!(ipvs::parse),
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["ipvs"], helps: [],
        recorded: false },
    /// ZFS: a module few kernels have.
    Zfs { name: "zfs", files: &[], slot: [zfs], parse: zfs::parse_into, optional: true,
        every: PER_SCRAPE, opt_in: false, serves: ["zfs"], helps: [], recorded: false },
    Bcache { name: "bcache", files: &[], slot: [class[10]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["bcache"], helps: [],
        recorded: false },
    /// /sys/devices/system/cpu/isolated (gathered: a sysfs file).
    CpuIsolated { name: "cpu_isolated", files: &[], slot: [cpu_isolated],
        parse: cpu::parse_list_into, optional: true, every: NAMES, opt_in: false, serves: [],
        helps: ["cpu"], recorded: false },
    /// The cgroup controllers (opt-in, as node_exporter's `cgroups`):
    /// CONFIG_PROC_CGROUPS on kernels that made it optional.
    CgroupControllers { name: "cgroup_controllers", files: &["cgroups"],
        slot: [cgroup_controllers], parse: ktables::parse_cgroups, optional: true,
        every: PER_SCRAPE, opt_in: true, serves: ["cgroups"], helps: [], recorded: false },
    /// IPsec transform errors: CONFIG_XFRM_STATISTICS (opt-in, as
    /// node_exporter's `xfrm`).
    Xfrm { name: "xfrm", files: &["net/xfrm_stat"], slot: [xfrm], parse: ktables::parse_xfrm,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["xfrm"], helps: [],
        recorded: false },
    /// The network caches' per-CPU counters, /proc/net/stat/* (gathered;
    /// opt-in, as node_exporter's `lnstat`).
    Lnstat { name: "lnstat", files: &[], slot: [lnstat], parse: ktables::parse_lnstat,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["lnstat"], helps: [],
        recorded: false },
    /// bcachefs: a module few kernels have (a class: one entry a mounted
    /// filesystem).
    Bcachefs { name: "bcachefs", files: &[], slot: [class[11]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["bcachefs"], helps: [],
        recorded: false },
    /// NFS client statistics per mount (opt-in, as node_exporter's
    /// `mountstats`): the agent's own mount namespace's, as node_exporter
    /// reads its own.
    Mountstats { name: "mountstats", files: &["self/mountstats", "self/mountinfo"],
        slot: [mountstats], parse: mountstats::parse_into, optional: true, every: PER_SCRAPE,
        opt_in: true, serves: ["mountstats"], helps: [], recorded: false },
    /// PCI functions (a class; opt-in, as node_exporter's `pcidevice`: a
    /// big server has hundreds, some twenty files each).
    Pcidevice { name: "pcidevice", files: &[], slot: [class[12]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["pcidevice"], helps: [],
        recorded: false },
    /// The kernel's word on CPU vulnerabilities (a class; opt-in, as
    /// node_exporter's `cpu_vulnerabilities`; it changes with a boot
    /// option or a microcode update).
    CpuVulnerabilities { name: "cpu_vulnerabilities", files: &[], slot: [class[13]],
        parse: class::parse_into, optional: true, every: NAMES, opt_in: true,
        serves: ["cpu_vulnerabilities"], helps: [], recorded: false },
    /// Software RAID arrays in sysfs (a class): mdadm's member counts.
    Mdraid { name: "mdraid", files: &[], slot: [class[14]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: [], helps: ["mdadm"],
        recorded: false },
    /// The sysctls the configuration names (gathered; opt-in, as
    /// node_exporter's `sysctl`).
    Sysctl { name: "sysctl", files: &[], slot: [sysctl], parse: ktables::parse_sysctl,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["sysctl"], helps: [],
        recorded: false },
    /// DRBD's replicated devices: a module (opt-in, as node_exporter's
    /// `drbd`).
    Drbd { name: "drbd", files: &["drbd"], slot: [drbd], parse: ktables::parse_drbd,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["drbd"], helps: [],
        recorded: false },
    /// Disks' queue attributes in sysfs (a class): whether each spins.
    BlockQueue { name: "block_queue", files: &[], slot: [class[15]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: [], helps: ["diskstats"],
        recorded: false },
    /// Device-mapper devices in sysfs (a class), for the multipath ones.
    DmMultipath { name: "dmmultipath", files: &[], slot: [class[16]], parse: class::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: false, serves: ["dmmultipath"], helps: [],
        recorded: false },
    /// systemd's units over D-Bus (gathered; opt-in, as node_exporter's
    /// `systemd`): a machine without a system bus has none.
    Systemd { name: "systemd", files: &[], slot: [systemd], parse: systemd::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["systemd"], helps: [],
        recorded: false },
    /// The swap areas (opt-in, as node_exporter's `swap`; a kernel built
    /// without swap has no /proc/swaps).
    Swaps { name: "swaps", files: &["swaps"], slot: [swaps], parse: ktables::parse_swaps,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["swap"], helps: [],
        recorded: false, rows_after: 1 },
    /// The network devices' root queueing disciplines (gathered over
    /// netlink; opt-in, as node_exporter's `qdisc`).
    Qdisc { name: "qdisc", files: &[], slot: [qdisc], parse: qdisc::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["qdisc"], helps: [],
        recorded: false },
    /// Network devices' drivers, link modes and driver statistics through
    /// the ethtool ioctl (gathered; opt-in, as node_exporter's `ethtool`).
    Ethtool { name: "ethtool", files: &[], slot: [ethtool], parse: ethtool::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["ethtool"], helps: [],
        recorded: false },
    /// x86's thermal throttle counts; other machines have none.
    ThermalThrottle { name: "thermal_throttle", files: &[], slot: [thermal_throttle],
        parse: hardware::parse_throttles, optional: true, every: PER_SCRAPE, opt_in: false,
        serves: [], helps: ["cpu"], recorded: false },
    /// Wireless interfaces over nl80211 (opt-in, as node_exporter's
    /// `wifi`); a kernel without cfg80211 has none.
    Wifi { name: "wifi", files: &[], slot: [wifi], parse: wifi::parse_into,
        optional: true, every: PER_SCRAPE, opt_in: true, serves: ["wifi"], helps: [],
        recorded: false },
}

const fn recorded_count() -> usize {
    let (mut n, mut i) = (0, 0);
    while i < LIST.len() {
        if INFO[i].recorded {
            n += 1;
        }
        i += 1;
    }
    n
}

impl From<Source> for &'static str {
    fn from(s: Source) -> &'static str {
        s.name()
    }
}

impl Source {
    pub const COUNT: usize = LIST.len();
    pub const ALL: [Source; Source::COUNT] = {
        let mut all = [Source::Stat; Source::COUNT];
        let mut i = 0;
        while i < Source::COUNT {
            all[i] = LIST[i];
            i += 1;
        }
        all
    };

    /// The source's row in the registry.
    pub fn info(self) -> &'static SourceInfo {
        &INFO_TABLE[self as usize]
    }

    /// The sources the history records, in registry order.
    pub const RECORDED: [Source; recorded_count()] = {
        let mut out = [Source::Stat; recorded_count()];
        let (mut n, mut i) = (0, 0);
        while i < Source::COUNT {
            if INFO[i].recorded {
                out[n] = LIST[i];
                n += 1;
            }
            i += 1;
        }
        out
    };

    /// The source's one name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The files below the proc root the source reads, in order; a source
    /// with several gets them one after another, each ending with a newline
    /// (a missing one after the first as an empty line). Empty for a
    /// [gathered](Source::gathered) source.
    pub fn files(self) -> &'static [&'static str] {
        self.info().files
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

    /// The source of a name or an alias.
    pub fn from_name(name: &str) -> Option<Source> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name || s.info().aliases.contains(&name))
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

    /// Sources a machine may lack without anything being wrong (each
    /// row's note says why).
    pub fn optional(self) -> bool {
        self.info().optional
    }

    /// Sources whose last data is kept, and served with its age, when a
    /// read fails: systemd's units, whose read fails when the bus does not
    /// answer in time (a unit's state going missing would end an alert
    /// that is still true).
    pub fn keeps_last(self) -> bool {
        matches!(self, Source::Systemd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemSample;

    #[test]
    fn names_and_aliases_name_one_source_each() {
        let mut seen = std::collections::HashSet::new();
        for s in Source::ALL {
            let i = s.info();
            assert!(
                i.name
                    .bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_'),
                "{}: a name is a configuration key and a label value",
                i.name
            );
            for n in std::iter::once(i.name).chain(i.aliases.iter().copied()) {
                assert!(seen.insert(n), "{n} names two sources");
                assert_eq!(Source::from_name(n), Some(s));
            }
            assert!(i.min_interval_ms <= i.interval_ms, "{}", i.name);
            assert!(
                !(i.recorded && i.files.is_empty()),
                "{}: recorded sources are files",
                i.name
            );
        }
        assert_eq!(seen.len(), Source::COUNT + 7);
    }

    /// The history stores sources by index: a row is only ever added at
    /// the end.
    #[test]
    fn indices_are_part_of_the_history_format() {
        let pinned = [
            (Source::Stat, 0),
            (Source::Interrupts, 1),
            (Source::Softirqs, 2),
            (Source::Meminfo, 3),
            (Source::Vmstat, 4),
            (Source::Loadavg, 5),
            (Source::PressureCpu, 6),
            (Source::PressureIrq, 9),
            (Source::Diskstats, 10),
            (Source::NetDev, 11),
            (Source::Filefd, 13),
            (Source::Bcache, 59),
        ];
        for (s, i) in pinned {
            assert_eq!(s as usize, i, "{}", s.name());
        }
        assert_eq!(Source::RECORDED.len(), 13);
    }

    /// Each row's slot is the one its data lives in: a class source's is
    /// its place in `class::CLASSES`, a pressure source's its resource's.
    #[test]
    fn every_slot_is_its_sources() {
        for s in Source::ALL {
            let mut a = SystemSample::default();
            let mut b = SystemSample::default();
            if let Some(i) = s.class_index() {
                a.class[i].push(Default::default());
                a.swap_source(&mut b, s);
                assert_eq!((a.class[i].len(), b.class[i].len()), (0, 1), "{}", s.name());
            }
            if let Some(r) = s.resource() {
                a.pressure[r as usize].some = Some(Default::default());
                a.swap_source(&mut b, s);
                assert!(b.pressure[r as usize].some.is_some(), "{}", s.name());
                assert!(a.pressure.iter().all(|p| p.some.is_none()), "{}", s.name());
            }
        }
    }
}
