//! One sample of every system source, as read: raw counters, no rates. A
//! [`SystemSample`] is meant to be reused: [`Reader::read_sample`] refills it in
//! place, and a warm refill allocates nothing.
//!
//! Tolerance policy: a sample never fails as a whole. Each source gets a
//! [`SourceStatus`]: `Missing` when this kernel or root lacks the file (normal
//! for pressure files and schedstat), `Failed` with the error text when it
//! could not be read or parsed; the other sources are still read.

use serde::Serialize;
use serde::ser::SerializeMap;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::class::{self, ClassDevice};
use crate::cpuinfo::{self, CpuInfo};
use crate::diskstats::{self, DiskStat};
use crate::entropy::{self, Entropy};
use crate::error::{Error, ParseError};
use crate::filefd::{self, Filefd};
use crate::filesystem::{self, Mount};
use crate::hardware::{self, Bond, CpuFreq, Dmi, Thermal};
use crate::hwmon::{self, Chip};
use crate::interrupts::{self, Interrupts};
use crate::ipvs::{self, Ipvs};
use crate::loadavg::{self, Loadavg};
use crate::mdstat::{self, MdDevice};
use crate::meminfo::{self, Meminfo};
use crate::mm::{self, BuddyZone, Ksm, Slab, TaskLimits, Zone};
use crate::net_dev::{self, NetDev};
use crate::netclass::{self, NetClass};
use crate::netmisc::{self, Arp, Conntrack, UdpQueues};
use crate::netstat::{self, Netstat};
use crate::numa::{self, NumaNode};
use crate::os_release::{self, OsRelease};
use crate::pressure::{self, Pressure, Resource};
use crate::reader::Reader;
use crate::rpc::{self, RpcStats};
use crate::schedstat::{self, Schedstat};
use crate::selinux::{self, Selinux};
use crate::sockstat::{self, Sockstat};
use crate::softirqs::{self, Softirqs};
use crate::softnet::{self, SoftnetCpu};
use crate::source::Source;
use crate::stat::{self, Stat};
use crate::textfile::{self, Textfile};
use crate::time::{self, Time, Timex};
use crate::udev::{self, UdevDevice};
use crate::uname::{self, Uname};
use crate::vmstat::{self, Vmstat};
use crate::zfs::{self, Zfs};

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
    pub status: [SourceStatus; Source::COUNT],
    pub cost: [SourceCost; Source::COUNT],
}

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
            task_limits: TaskLimits::default(),
            cpuinfo: Vec::new(),
            class: Default::default(),
            nfs: RpcStats::default(),
            nfsd: RpcStats::default(),
            ipvs: Ipvs::default(),
            zfs: Zfs::default(),
            status: std::array::from_fn(|_| SourceStatus::default()),
            cost: [SourceCost::default(); Source::COUNT],
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

    /// What the data of `source` says is wrong although it was read (a
    /// textfile that failed to parse, a mount statfs could not answer), one
    /// line each, for a log; empty for every other source.
    pub fn warnings(&self, source: Source) -> Vec<String> {
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

    /// Exchanges the data, status and cost of `source` with `other`: moves a
    /// freshly read source into a published sample without copying, and
    /// hands the old buffers back for the next read.
    pub fn swap_source(&mut self, other: &mut SystemSample, source: Source) {
        use std::mem::swap;
        match source {
            Source::Stat => swap(&mut self.stat, &mut other.stat),
            Source::Interrupts => swap(&mut self.interrupts, &mut other.interrupts),
            Source::Softirqs => swap(&mut self.softirqs, &mut other.softirqs),
            Source::Meminfo => swap(&mut self.meminfo, &mut other.meminfo),
            Source::Vmstat => swap(&mut self.vmstat, &mut other.vmstat),
            Source::Loadavg => swap(&mut self.loadavg, &mut other.loadavg),
            Source::PressureCpu
            | Source::PressureMemory
            | Source::PressureIo
            | Source::PressureIrq => {
                let r = source.resource().expect("a pressure source") as usize;
                swap(&mut self.pressure[r], &mut other.pressure[r])
            }
            Source::Diskstats => swap(&mut self.diskstats, &mut other.diskstats),
            Source::NetDev => swap(&mut self.net_dev, &mut other.net_dev),
            Source::Schedstat => swap(&mut self.schedstat, &mut other.schedstat),
            Source::Filefd => swap(&mut self.filefd, &mut other.filefd),
            Source::Sockstat => swap(&mut self.sockstat, &mut other.sockstat),
            Source::Softnet => swap(&mut self.softnet, &mut other.softnet),
            Source::Entropy => swap(&mut self.entropy, &mut other.entropy),
            Source::Uname => swap(&mut self.uname, &mut other.uname),
            Source::Sockstat6 => swap(&mut self.sockstat6, &mut other.sockstat6),
            Source::Netstat => swap(&mut self.netstat, &mut other.netstat),
            Source::Netclass => swap(&mut self.netclass, &mut other.netclass),
            Source::Filesystem => swap(&mut self.filesystem, &mut other.filesystem),
            Source::Time => swap(&mut self.time, &mut other.time),
            Source::Timex => swap(&mut self.timex, &mut other.timex),
            Source::Os => swap(&mut self.os, &mut other.os),
            Source::Selinux => swap(&mut self.selinux, &mut other.selinux),
            Source::Arp => swap(&mut self.arp, &mut other.arp),
            Source::UdpQueues => swap(&mut self.udp_queues, &mut other.udp_queues),
            Source::Conntrack => swap(&mut self.conntrack, &mut other.conntrack),
            Source::Textfile => swap(&mut self.textfile, &mut other.textfile),
            Source::Udev => swap(&mut self.udev, &mut other.udev),
            Source::Cpufreq => swap(&mut self.cpufreq, &mut other.cpufreq),
            Source::ThermalZone => swap(&mut self.thermal, &mut other.thermal),
            Source::Dmi => swap(&mut self.dmi, &mut other.dmi),
            Source::Bonding => swap(&mut self.bonding, &mut other.bonding),
            Source::Mdstat => swap(&mut self.mdstat, &mut other.mdstat),
            Source::Hwmon => swap(&mut self.hwmon, &mut other.hwmon),
            Source::Numa => swap(&mut self.numa, &mut other.numa),
            Source::Buddyinfo => swap(&mut self.buddyinfo, &mut other.buddyinfo),
            Source::Zoneinfo => swap(&mut self.zoneinfo, &mut other.zoneinfo),
            Source::Slabinfo => swap(&mut self.slabinfo, &mut other.slabinfo),
            Source::Ksm => swap(&mut self.ksm, &mut other.ksm),
            Source::KernelHung => swap(&mut self.hung_tasks, &mut other.hung_tasks),
            Source::TaskLimits => swap(&mut self.task_limits, &mut other.task_limits),
            Source::Cpuinfo => swap(&mut self.cpuinfo, &mut other.cpuinfo),
            Source::Nfs => swap(&mut self.nfs, &mut other.nfs),
            Source::Nfsd => swap(&mut self.nfsd, &mut other.nfsd),
            Source::Ipvs => swap(&mut self.ipvs, &mut other.ipvs),
            Source::Zfs => swap(&mut self.zfs, &mut other.zfs),
            crate::class_sources!() => {
                let i = source.class_index().expect("a class source");
                swap(&mut self.class[i], &mut other.class[i])
            }
        }
        let i = source as usize;
        swap(&mut self.status[i], &mut other.status[i]);
        swap(&mut self.cost[i], &mut other.cost[i]);
    }

    /// Parses `bytes` as `source` into this sample.
    pub fn parse_source(&mut self, source: Source, bytes: &[u8]) -> Result<(), ParseError> {
        match source {
            Source::Stat => stat::parse_into(bytes, &mut self.stat),
            Source::Interrupts => interrupts::parse_into(bytes, &mut self.interrupts),
            Source::Softirqs => softirqs::parse_into(bytes, &mut self.softirqs),
            Source::Meminfo => meminfo::parse_into(bytes, &mut self.meminfo),
            Source::Vmstat => vmstat::parse_into(bytes, &mut self.vmstat),
            Source::Loadavg => loadavg::parse(bytes).map(|l| self.loadavg = l),
            Source::PressureCpu
            | Source::PressureMemory
            | Source::PressureIo
            | Source::PressureIrq => {
                let r = source.resource().expect("a pressure source");
                pressure::parse(bytes).map(|p| self.pressure[r as usize] = p)
            }
            Source::Diskstats => diskstats::parse_into(bytes, &mut self.diskstats),
            Source::NetDev => net_dev::parse_into(bytes, &mut self.net_dev),
            Source::Schedstat => schedstat::parse_into(bytes, &mut self.schedstat),
            Source::Filefd => filefd::parse(bytes).map(|f| self.filefd = f),
            Source::Sockstat => sockstat::parse_into(bytes, &mut self.sockstat),
            Source::Softnet => softnet::parse_into(bytes, &mut self.softnet),
            Source::Entropy => entropy::parse(bytes).map(|e| self.entropy = e),
            Source::Uname => uname::parse_into(bytes, &mut self.uname),
            Source::Sockstat6 => sockstat::parse_into(bytes, &mut self.sockstat6),
            Source::Netstat => netstat::parse_into(bytes, &mut self.netstat),
            Source::Netclass => netclass::parse_into(bytes, &mut self.netclass),
            Source::Filesystem => filesystem::parse_into(bytes, &mut self.filesystem),
            Source::Time => time::parse_time(bytes, &mut self.time),
            Source::Timex => time::parse_timex(bytes).map(|t| self.timex = t),
            Source::Os => os_release::parse_into(bytes, &mut self.os),
            Source::Selinux => selinux::parse(bytes).map(|s| self.selinux = s),
            Source::Arp => netmisc::parse_arp(bytes, &mut self.arp),
            Source::UdpQueues => netmisc::parse_udp_queues(bytes).map(|q| self.udp_queues = q),
            Source::Conntrack => netmisc::parse_conntrack(bytes).map(|c| self.conntrack = c),
            Source::Textfile => {
                textfile::parse_into(bytes, std::sync::Arc::make_mut(&mut self.textfile))
            }
            Source::Udev => udev::parse_into(bytes, &mut self.udev),
            Source::Cpufreq => hardware::parse_cpufreq(bytes, &mut self.cpufreq),
            Source::ThermalZone => hardware::parse_thermal(bytes, &mut self.thermal),
            Source::Dmi => hardware::parse_dmi(bytes, &mut self.dmi),
            Source::Bonding => hardware::parse_bonding(bytes, &mut self.bonding),
            Source::Mdstat => mdstat::parse_into(bytes, &mut self.mdstat),
            Source::Hwmon => hwmon::parse_into(bytes, &mut self.hwmon),
            Source::Numa => numa::parse_into(bytes, &mut self.numa),
            Source::Buddyinfo => mm::parse_buddyinfo(bytes, &mut self.buddyinfo),
            Source::Zoneinfo => mm::parse_zoneinfo(bytes, &mut self.zoneinfo),
            Source::Slabinfo => mm::parse_slabinfo(bytes, &mut self.slabinfo),
            Source::Ksm => mm::parse_ksm(bytes).map(|k| self.ksm = k),
            Source::KernelHung => mm::parse_hung_tasks(bytes).map(|n| self.hung_tasks = n),
            Source::TaskLimits => mm::parse_task_limits(bytes).map(|l| self.task_limits = l),
            Source::Cpuinfo => cpuinfo::parse_into(bytes, &mut self.cpuinfo),
            Source::Nfs => rpc::parse_into(bytes, &mut self.nfs),
            Source::Nfsd => rpc::parse_into(bytes, &mut self.nfsd),
            Source::Ipvs => ipvs::parse(bytes).map(|v| self.ipvs = v),
            Source::Zfs => zfs::parse_into(bytes, &mut self.zfs),
            crate::class_sources!() => {
                let i = source.class_index().expect("a class source");
                class::parse_into(bytes, &mut self.class[i])
            }
        }
    }
}

fn elapsed_ns(since: Instant) -> u64 {
    since.elapsed().as_nanos().min(u64::MAX as u128) as u64
}

impl Reader {
    /// Reads `sources` into `sample`, recording per source its status and cost.
    /// Sources not listed are marked [`SourceStatus::NotRead`].
    pub fn read_sample(&mut self, sources: &[Source], sample: &mut SystemSample) {
        sample.taken = Instant::now();
        sample.unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos().min(u64::MAX as u128) as u64)
            .unwrap_or(0);
        for s in &mut sample.status {
            *s = SourceStatus::NotRead;
        }
        for &source in sources {
            self.read_source(source, sample);
        }
    }

    /// Reads one source into `sample`, recording its status and cost; the
    /// other sources are left as they are.
    pub fn read_source(&mut self, source: Source, sample: &mut SystemSample) {
        if source == Source::Textfile && self.textfile_background {
            if self.textfile_worker.is_none() {
                // Where no thread can be started, the source is read in line.
                self.textfile_worker = crate::textfile_worker::Worker::start().ok();
                self.textfile_background = self.textfile_worker.is_some();
            }
            if let Some(w) = &self.textfile_worker {
                let (status, cost) = w.read(
                    self.textfile_directory(),
                    self.max_file_bytes(),
                    &mut sample.textfile,
                );
                sample.status[source as usize] = status;
                sample.cost[source as usize] = cost;
                return;
            }
        }
        {
            let i = source as usize;
            let t0 = Instant::now();
            let (status, cost) = match self.read_raw_io(source) {
                Ok(n) => {
                    self.keep(source, n);
                    let bytes = self.buffer(n);
                    let read_ns = elapsed_ns(t0);
                    let len = bytes.len() as u64;
                    let t1 = Instant::now();
                    let r = sample.parse_source(source, bytes);
                    let cost = SourceCost {
                        read_ns,
                        parse_ns: elapsed_ns(t1),
                        bytes: len,
                    };
                    let status = match r {
                        Ok(()) => SourceStatus::Ok,
                        Err(e) => SourceStatus::Failed(
                            Error::Parse {
                                path: self.path(source).to_path_buf(),
                                source: e,
                            }
                            .to_string(),
                        ),
                    };
                    (status, cost)
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    (SourceStatus::Missing, SourceCost::default())
                }
                Err(e) => (
                    SourceStatus::Failed(
                        crate::reader::too_large_or_io(self.path(source), e, self.max_file_bytes())
                            .to_string(),
                    ),
                    SourceCost::default(),
                ),
            };
            sample.status[i] = status;
            sample.cost[i] = cost;
        }
    }
}

/// One source's data from a sample, serialized alone (the JSON API picks
/// sources this way without serializing the rest).
pub struct SourceData<'a>(pub &'a SystemSample, pub Source);

impl Serialize for SourceData<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        match self.1 {
            Source::Stat => x.stat.serialize(s),
            Source::Interrupts => x.interrupts.serialize(s),
            Source::Softirqs => x.softirqs.serialize(s),
            Source::Meminfo => x.meminfo.serialize(s),
            Source::Vmstat => x.vmstat.serialize(s),
            Source::Loadavg => x.loadavg.serialize(s),
            Source::PressureCpu
            | Source::PressureMemory
            | Source::PressureIo
            | Source::PressureIrq => {
                let r = self.1.resource().expect("a pressure source");
                x.pressure[r as usize].serialize(s)
            }
            Source::Diskstats => x.diskstats.serialize(s),
            Source::NetDev => x.net_dev.serialize(s),
            Source::Schedstat => x.schedstat.serialize(s),
            Source::Filefd => x.filefd.serialize(s),
            Source::Sockstat => x.sockstat.serialize(s),
            Source::Softnet => x.softnet.serialize(s),
            Source::Entropy => x.entropy.serialize(s),
            Source::Uname => x.uname.serialize(s),
            Source::Sockstat6 => x.sockstat6.serialize(s),
            Source::Netstat => x.netstat.serialize(s),
            Source::Netclass => x.netclass.serialize(s),
            Source::Filesystem => x.filesystem.serialize(s),
            Source::Time => x.time.serialize(s),
            Source::Timex => x.timex.serialize(s),
            Source::Os => x.os.serialize(s),
            Source::Selinux => x.selinux.serialize(s),
            Source::Arp => x.arp.serialize(s),
            Source::UdpQueues => x.udp_queues.serialize(s),
            Source::Conntrack => x.conntrack.serialize(s),
            Source::Textfile => x.textfile.as_ref().serialize(s),
            Source::Udev => x.udev.serialize(s),
            Source::Cpufreq => x.cpufreq.serialize(s),
            Source::ThermalZone => x.thermal.serialize(s),
            Source::Dmi => x.dmi.serialize(s),
            Source::Bonding => x.bonding.serialize(s),
            Source::Mdstat => x.mdstat.serialize(s),
            Source::Hwmon => x.hwmon.serialize(s),
            Source::Numa => x.numa.serialize(s),
            Source::Buddyinfo => x.buddyinfo.serialize(s),
            Source::Zoneinfo => x.zoneinfo.serialize(s),
            Source::Slabinfo => x.slabinfo.serialize(s),
            Source::Ksm => x.ksm.serialize(s),
            Source::KernelHung => x.hung_tasks.serialize(s),
            Source::TaskLimits => x.task_limits.serialize(s),
            Source::Cpuinfo => x.cpuinfo.serialize(s),
            Source::Nfs => x.nfs.serialize(s),
            Source::Nfsd => x.nfsd.serialize(s),
            Source::Ipvs => x.ipvs.serialize(s),
            Source::Zfs => x.zfs.serialize(s),
            crate::class_sources!() => {
                let i = self.1.class_index().expect("a class source");
                x.class[i].serialize(s)
            }
        }
    }
}

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
