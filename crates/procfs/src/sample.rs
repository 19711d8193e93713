//! One sample of every system source, as read: raw counters, no rates. A
//! [`SystemSample`] is meant to be reused: [`crate::Reader::read_sample`]
//! refills it in place, and a warm refill allocates nothing.
//!
//! Tolerance policy: a sample never fails as a whole. Each source gets a
//! [`SourceStatus`]: `Missing` when this kernel or root lacks the file (normal
//! for pressure files and schedstat), `Failed` with the error text when it
//! could not be read or parsed; the other sources are still read.

use serde::Serialize;
use serde::ser::SerializeMap;
use std::time::Instant;

use crate::class::{self, ClassDevice};
use crate::cpu::CpuList;
use crate::cpuinfo::CpuInfo;
use crate::diskstats::DiskStat;
use crate::entropy::Entropy;
use crate::error::ParseError;
use crate::filefd::Filefd;
use crate::filesystem::Mount;
use crate::hardware::{Bond, CpuFreq, Dmi, Thermal};
use crate::hwmon::Chip;
use crate::interrupts::Interrupts;
use crate::ipvs::Ipvs;
use crate::loadavg::Loadavg;
use crate::mdstat::MdDevice;
use crate::meminfo::Meminfo;
use crate::mm::{BuddyZone, Ksm, Slab, TaskLimits, Zone};
use crate::net_dev::NetDev;
use crate::netclass::NetClass;
use crate::netmisc::{Arp, Conntrack, UdpQueues};
use crate::netstat::Netstat;
use crate::numa::NumaNode;
use crate::os_release::OsRelease;
use crate::pressure::{Pressure, Resource};
use crate::rpc::RpcStats;
use crate::schedstat::Schedstat;
use crate::selinux::Selinux;
use crate::sockstat::Sockstat;
use crate::softirqs::Softirqs;
use crate::softnet::SoftnetCpu;
use crate::source::Source;
use crate::stat::Stat;
use crate::textfile::Textfile;
use crate::time::{Time, Timex};
use crate::udev::UdevDevice;
use crate::uname::Uname;
use crate::vmstat::Vmstat;
use crate::zfs::Zfs;

/// What became of one source in one sample.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "error")]
pub enum SourceStatus {
    /// Not asked for in this sample.
    #[default]
    NotRead,
    Ok,
    /// The file does not exist under this root.
    Missing,
    /// Read or parse failed; the message names file, line and field.
    Failed(String),
}

/// What one source cost to read in one sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SourceCost {
    /// Time in the read syscalls (open/read/close, or pread).
    pub read_ns: u64,
    /// Time in our parser.
    pub parse_ns: u64,
    pub bytes: u64,
}

/// Every system source, as read.
#[derive(Debug, Clone)]
pub struct SystemSample {
    /// When the sample started: monotonic, for rates.
    pub taken: Instant,
    /// When the sample started: wall clock, nanoseconds since the Unix epoch.
    pub unix_ns: u64,
    pub stat: Stat,
    pub interrupts: Interrupts,
    pub softirqs: Softirqs,
    pub meminfo: Meminfo,
    pub vmstat: Vmstat,
    pub loadavg: Loadavg,
    /// Indexed by [`Resource`].
    pub pressure: [Pressure; 4],
    pub diskstats: Vec<DiskStat>,
    pub net_dev: Vec<NetDev>,
    pub schedstat: Schedstat,
    pub filefd: Filefd,
    pub sockstat: Sockstat,
    pub softnet: Vec<SoftnetCpu>,
    pub entropy: Entropy,
    pub uname: Uname,
    /// /proc/net/sockstat6: IPv6 sockets (absent without IPv6).
    pub sockstat6: Sockstat,
    pub netstat: Netstat,
    /// /sys/class/net: one entry per network device.
    pub netclass: Vec<NetClass>,
    /// Mounted filesystems the exclusions leave, with statfs's figures.
    pub filesystem: Vec<Mount>,
    pub time: Time,
    pub timex: Timex,
    pub os: OsRelease,
    pub selinux: Selinux,
    pub arp: Arp,
    pub udp_queues: UdpQueues,
    pub conntrack: Conntrack,
    /// Shared, so that a consumer (the exporter) can hold it without the
    /// sample's lock, and a parse on another thread is handed over whole.
    pub textfile: std::sync::Arc<Textfile>,
    /// udev's properties of block devices (for `node_disk_info`).
    pub udev: Vec<UdevDevice>,
    /// Frequency scaling per CPU (CPUs without cpufreq are absent).
    pub cpufreq: Vec<CpuFreq>,
    pub thermal: Thermal,
    pub dmi: Dmi,
    pub bonding: Vec<Bond>,
    /// /proc/mdstat: software RAID devices.
    pub mdstat: Vec<MdDevice>,
    /// /sys/class/hwmon: one entry per chip.
    pub hwmon: Vec<Chip>,
    /// Memory per NUMA node.
    pub numa: Vec<NumaNode>,
    /// /proc/buddyinfo: free blocks per zone and order.
    pub buddyinfo: Vec<BuddyZone>,
    /// /proc/zoneinfo.
    pub zoneinfo: Vec<Zone>,
    /// /proc/slabinfo: one entry per slab cache.
    pub slabinfo: Vec<Slab>,
    /// /sys/kernel/mm/ksm: same-page merging.
    pub ksm: Ksm,
    /// Tasks the hung-task detector has reported since boot.
    pub hung_tasks: u64,
    /// /proc/cgroups: the cgroup controllers.
    pub cgroup_controllers: Vec<crate::ktables::Controller>,
    /// /proc/net/xfrm_stat: IPsec transform errors, by the kernel's name.
    pub xfrm: Vec<(String, u64)>,
    /// /proc/net/stat/*: the network caches' counters per CPU.
    pub lnstat: Vec<crate::ktables::CacheStats>,
    /// /proc/self/mountstats (and mountinfo): NFS client mounts.
    pub mountstats: Vec<crate::mountstats::NfsMount>,
    /// The configured sysctls, by dotted name, with their text.
    pub sysctl: Vec<(String, String)>,
    /// /proc/drbd: DRBD's replicated devices.
    pub drbd: Vec<crate::ktables::DrbdDevice>,
    /// systemd's units and their properties (over D-Bus).
    pub systemd: crate::systemd::Systemd,
    /// /proc/swaps: the swap areas.
    pub swaps: Vec<crate::ktables::SwapArea>,
    /// The root qdiscs (over netlink).
    pub qdisc: Vec<crate::qdisc::Qdisc>,
    /// Network devices through the ethtool ioctl.
    pub ethtool: Vec<crate::ethtool::EthtoolDevice>,
    /// cpuN/thermal_throttle: how often packages and cores were throttled.
    pub thermal_throttle: crate::hardware::Throttles,
    /// Wireless interfaces over nl80211.
    pub wifi: Vec<crate::wifi::WifiInterface>,
    pub task_limits: TaskLimits,
    /// /proc/cpuinfo: what each CPU is.
    pub cpuinfo: Vec<CpuInfo>,
    /// The hardware classes' devices, by [`Source::class_index`].
    pub class: [Vec<ClassDevice>; class::CLASSES.len()],
    /// /proc/net/rpc/nfs: the NFS client.
    pub nfs: RpcStats,
    /// /proc/net/rpc/nfsd: the NFS server.
    pub nfsd: RpcStats,
    /// IP Virtual Server totals and real servers.
    pub ipvs: Ipvs,
    /// ZFS's kstats and pools.
    pub zfs: Zfs,
    /// /sys/devices/system/cpu/isolated: CPUs isolated from the scheduler's
    /// domains.
    pub cpu_isolated: CpuList,
    pub status: [SourceStatus; Source::COUNT],
    pub cost: [SourceCost; Source::COUNT],
    /// Lines left out of the last read of each source (those whose lines
    /// stand alone, `rows_after` in [`Source::info`]).
    pub skipped: [Skipped; Source::COUNT],
}

/// Lines of one read that could not be read and were left out, the rest of
/// the file used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    pub lines: u32,
    /// Why the first was left out (its line in the file as read).
    pub first: Option<ParseError>,
}

/// The most lines of one read left out: past it the read fails (a file
/// in a format not ours, not a bad line or two).
pub const MAX_SKIPPED: u32 = 16;

impl Default for SystemSample {
    fn default() -> Self {
        SystemSample {
            taken: Instant::now(),
            unix_ns: 0,
            stat: Stat::default(),
            interrupts: Interrupts::default(),
            softirqs: Softirqs::default(),
            meminfo: Meminfo::default(),
            vmstat: Vmstat::default(),
            loadavg: Loadavg::default(),
            pressure: [Pressure::default(); 4],
            diskstats: Vec::new(),
            net_dev: Vec::new(),
            schedstat: Schedstat::default(),
            filefd: Filefd::default(),
            sockstat: Sockstat::default(),
            softnet: Vec::new(),
            entropy: Entropy::default(),
            uname: Uname::default(),
            sockstat6: Sockstat::default(),
            netstat: Netstat::default(),
            netclass: Vec::new(),
            filesystem: Vec::new(),
            time: Time::default(),
            timex: Timex::default(),
            os: OsRelease::default(),
            selinux: Selinux::default(),
            arp: Arp::default(),
            udp_queues: UdpQueues::default(),
            conntrack: Conntrack::default(),
            textfile: Default::default(),
            udev: Vec::new(),
            cpufreq: Vec::new(),
            thermal: Thermal::default(),
            dmi: Dmi::default(),
            bonding: Vec::new(),
            mdstat: Vec::new(),
            hwmon: Vec::new(),
            numa: Vec::new(),
            buddyinfo: Vec::new(),
            zoneinfo: Vec::new(),
            slabinfo: Vec::new(),
            ksm: Ksm::default(),
            hung_tasks: 0,
            cgroup_controllers: Vec::new(),
            xfrm: Vec::new(),
            lnstat: Vec::new(),
            mountstats: Vec::new(),
            sysctl: Vec::new(),
            drbd: Vec::new(),
            systemd: Default::default(),
            swaps: Vec::new(),
            qdisc: Vec::new(),
            ethtool: Vec::new(),
            thermal_throttle: Default::default(),
            wifi: Vec::new(),
            task_limits: TaskLimits::default(),
            cpuinfo: Vec::new(),
            class: Default::default(),
            nfs: RpcStats::default(),
            nfsd: RpcStats::default(),
            ipvs: Ipvs::default(),
            zfs: Zfs::default(),
            cpu_isolated: CpuList::default(),
            status: std::array::from_fn(|_| SourceStatus::default()),
            cost: [SourceCost::default(); Source::COUNT],
            skipped: [Skipped::default(); Source::COUNT],
        }
    }
}

impl SystemSample {
    /// True when `source` was read and parsed in this sample.
    pub fn ok(&self, source: Source) -> bool {
        self.status[source as usize] == SourceStatus::Ok
    }

    pub fn pressure(&self, r: Resource) -> Option<&Pressure> {
        self.ok(Source::pressure(r))
            .then(|| &self.pressure[r as usize])
    }

    /// Parses `bytes` as `source`, as [`SystemSample::parse_source`]; for
    /// a source whose lines stand alone (after its headers), a line that
    /// cannot be read is left out, counted in [`SystemSample::skipped`],
    /// and the rest parsed again without it, up to [`MAX_SKIPPED`] lines.
    /// Fails with the first error when the source's lines do not stand
    /// alone, when the line is a header, or when every line would go.
    /// `scratch` holds the file less the lines left out.
    pub fn parse_source_skipping(
        &mut self,
        source: Source,
        bytes: &[u8],
        scratch: &mut Vec<u8>,
    ) -> Result<(), ParseError> {
        let i = source as usize;
        self.skipped[i] = Skipped::default();
        let first = match self.parse_source(source, bytes) {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        let Some(headers) = source.info().rows_after else {
            return Err(first);
        };
        scratch.clear();
        scratch.extend_from_slice(bytes);
        let mut e = first;
        for n in 1..=MAX_SKIPPED {
            if e.line <= headers || !drop_line(scratch, e.line) || blank(scratch) {
                break;
            }
            match self.parse_source(source, scratch) {
                Ok(()) => {
                    self.skipped[i] = Skipped {
                        lines: n,
                        first: Some(first),
                    };
                    return Ok(());
                }
                Err(next) => e = next,
            }
        }
        Err(first)
    }

    /// Parses bytes of `source` an agent kept (its view, its history) as
    /// the agent did ([`SystemSample::parse_source_skipping`]) and sets
    /// the source's status.
    pub fn parse_kept(&mut self, source: Source, bytes: &[u8]) {
        let r = self.parse_source_skipping(source, bytes, &mut Vec::new());
        self.status[source as usize] = match r {
            Ok(()) => SourceStatus::Ok,
            Err(e) => SourceStatus::Failed(e.to_string()),
        };
    }

    /// What the data of `source` says is wrong although it was read (a
    /// textfile that failed to parse, a mount statfs could not answer,
    /// lines left out), one line each, for a log.
    pub fn warnings(&self, source: Source) -> Vec<String> {
        let skipped = &self.skipped[source as usize];
        if let Some(e) = skipped.first {
            return vec![format!(
                "{}: lines that could not be read were left out (counted in quietstat_source_errors_total); first: {e}",
                source.name()
            )];
        }
        match source {
            Source::Textfile => {
                let t = &self.textfile;
                t.dir_error
                    .iter()
                    .map(|e| format!("textfile: {e}"))
                    .chain(t.files.iter().filter_map(|f| {
                        Some(format!("textfile: {}: {}", f.path, f.error.as_ref()?))
                    }))
                    .collect()
            }
            Source::Filesystem => self
                .filesystem
                .iter()
                .filter_map(|m| {
                    let e = m.error.as_ref()?;
                    // `stuck` repeats `timeout` until the call returns.
                    let e = if e == "stuck" { "timeout" } else { e };
                    Some(format!("filesystem: statfs {}: {e}", m.mountpoint))
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Removes 1-based line `line` (and its newline) from `buf`; false when
/// there is no such line.
fn drop_line(buf: &mut Vec<u8>, line: u32) -> bool {
    let mut start = 0;
    for _ in 1..line {
        match buf[start..].iter().position(|&b| b == b'\n') {
            Some(off) => start += off + 1,
            None => return false,
        }
    }
    if start >= buf.len() {
        return false;
    }
    let end = buf[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(buf.len(), |off| start + off + 1);
    buf.drain(start..end);
    true
}

/// Whether nothing but blanks and newlines is left.
fn blank(buf: &[u8]) -> bool {
    buf.iter().all(u8::is_ascii_whitespace)
}

/// One source's data from a sample, serialized alone (the JSON API picks
/// sources this way without serializing the rest; `Serialize` comes from
/// the source registry).
pub struct SourceData<'a>(pub &'a SystemSample, pub Source);

impl Serialize for SystemSample {
    /// Sources that were not read successfully are left out of the top level;
    /// `status` says why.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("unix_ns", &self.unix_ns)?;
        for source in Source::ALL {
            if !self.ok(source) {
                continue;
            }
            m.serialize_entry(source.name(), &SourceData(self, source))?;
        }
        struct Status<'a>(&'a SystemSample);
        impl Serialize for Status<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(Source::COUNT))?;
                for source in Source::ALL {
                    m.serialize_entry(source.name(), &self.0.status[source as usize])?;
                }
                m.end()
            }
        }
        m.serialize_entry("status", &Status(self))?;
        m.end()
    }
}

/// Calls `f` with a slot: gives closures in the registry's rows their
/// parameter types.
fn parse_with<T>(
    f: impl FnOnce(&[u8], &mut T) -> Result<(), ParseError>,
    bytes: &[u8],
    slot: &mut T,
) -> Result<(), ParseError> {
    f(bytes, slot)
}

/// Assigns a parser's value to the slot (in the registry's rows).
macro_rules! value {
    ($f:path) => {
        |b: &[u8], x: &mut _| $f(b).map(|v| *x = v)
    };
}

/// The per-source code of [`SystemSample`] and [`SourceData`], from each
/// registry row's variant, slot and parser (`source.rs` hands them over).
macro_rules! source_slots {
    ($($variant:ident [$($slot:tt)+] $parse:expr;)*) => {

        impl SystemSample {
            /// Exchanges the data, status and cost of `source` with `other`:
            /// moves a freshly read source into a published sample without
            /// copying, and hands the old buffers back for the next read.
            pub fn swap_source(&mut self, other: &mut SystemSample, source: Source) {
                match source {
                    $(Source::$variant => std::mem::swap(
                        &mut self.$($slot)+,
                        &mut other.$($slot)+,
                    ),)*
                }
                let i = source as usize;
                std::mem::swap(&mut self.status[i], &mut other.status[i]);
                std::mem::swap(&mut self.cost[i], &mut other.cost[i]);
                std::mem::swap(&mut self.skipped[i], &mut other.skipped[i]);
            }

            /// Swaps the status, cost and skipped lines of `source` with
            /// `other`'s, and not its data: a failed read of a source that
            /// keeps its last data ([`Source::keeps_last`]).
            pub fn swap_status(&mut self, other: &mut SystemSample, source: Source) {
                let i = source as usize;
                std::mem::swap(&mut self.status[i], &mut other.status[i]);
                std::mem::swap(&mut self.cost[i], &mut other.cost[i]);
                std::mem::swap(&mut self.skipped[i], &mut other.skipped[i]);
            }

            /// Copies the data, status and cost of `source` from `other`,
            /// reusing this sample's buffers.
            pub fn copy_source(&mut self, other: &SystemSample, source: Source) {
                match source {
                    $(Source::$variant => self.$($slot)+.clone_from(&other.$($slot)+),)*
                }
                let i = source as usize;
                self.status[i].clone_from(&other.status[i]);
                self.cost[i] = other.cost[i];
                self.skipped[i] = other.skipped[i];
            }

            /// Parses `bytes` as `source` into this sample.
            pub fn parse_source(&mut self, source: Source, bytes: &[u8]) -> Result<(), ParseError> {
                match source {
                    $(Source::$variant => parse_with($parse, bytes, &mut self.$($slot)+),)*
                }
            }
        }

        impl Serialize for SourceData<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let x = self.0;
                match self.1 {
                    $(Source::$variant => x.$($slot)+.serialize(s),)*
                }
            }
        }
    };
}

// The parsers the rows name, by module.
use crate::{
    cpu, cpuinfo, diskstats, entropy, ethtool, filefd, filesystem, hardware, hwmon, interrupts,
    ipvs, ktables, loadavg, mdstat, meminfo, mm, mountstats, net_dev, netclass, netmisc, netstat,
    numa, os_release, pressure, qdisc, rpc, schedstat, selinux, sockstat, softirqs, softnet, stat,
    systemd, textfile, time, udev, uname, vmstat, wifi, zfs,
};

crate::source::for_each_source!();
