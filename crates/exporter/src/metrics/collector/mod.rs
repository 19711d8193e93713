//! node_exporter's collectors, one file each (as node_exporter's
//! `collector/<name>_linux.go`): each file's `encode` writes the families
//! of its collector from the latest sample, for the sources that were read.
//! [`ENCODERS`] lists them by collector name, in the order of the source
//! registry's `serves` and `helps` columns ([`collectors`]); a test checks
//! the two agree. `textfile` is encoded apart, after the state's lock is
//! let go ([`textfile::textfile`]).

use std::path::Path;

use agent::State;
use procfs::class::{ClassDevice, parse_uint};
use procfs::{Source, SystemSample};

use super::Context;
use super::families::*;
use super::out::{Fmt, Out, counter, counter_l, gauge, gauge_l, info, info_l, one, sample_l};

mod arp;
mod bcache;
mod bcachefs;
mod bonding;
mod btrfs;
mod buddyinfo;
mod cgroups;
mod conntrack;
mod cpu;
mod cpu_vulnerabilities;
mod cpufreq;
mod diskstats;
mod dmi;
mod dmmultipath;
mod drbd;
mod edac;
mod entropy;
mod ethtool;
mod fibrechannel;
mod filefd;
mod filesystem;
mod hwmon;
mod infiniband;
mod interrupts;
mod ipvs;
mod kernel_hung;
mod ksmd;
mod lnstat;
mod loadavg;
mod mdadm;
mod meminfo;
mod meminfo_numa;
mod mountstats;
mod netclass;
mod netdev;
mod netstat;
mod nfs;
mod nfsd;
mod nvme;
mod os;
mod pcidevice;
mod powersupplyclass;
mod pressure;
mod processes;
mod qdisc;
mod rapl;
mod schedstat;
mod selinux;
mod slabinfo;
mod sockstat;
mod softirqs;
mod softnet;
mod stat;
mod swap;
mod sysctl;
mod systemd;
mod tapestats;
pub(super) mod textfile;
mod thermal_zone;
mod time;
mod timex;
mod udp_queues;
mod uname;
mod vmstat;

pub use vmstat::vmstat_exported;
#[cfg(test)]
pub(crate) use {meminfo::meminfo_family, netstat::netstat_exported};
mod watchdog;
mod wifi;
mod xfrm;
mod xfs;
mod zfs;
mod zoneinfo;

/// What an encoder reads.
pub(super) struct Input<'a> {
    pub st: &'a State,
    pub s: &'a SystemSample,
    pub ctx: &'a Context,
}

type Encode = fn(&mut Out<'_>, &Input<'_>) -> Fmt;

/// Every collector's encoder but textfile's, by name.
pub(super) const ENCODERS: &[(&str, Encode)] = &[
    ("cpu", cpu::encode),
    ("stat", stat::encode),
    ("interrupts", interrupts::encode),
    ("softirqs", softirqs::encode),
    ("meminfo", meminfo::encode),
    ("vmstat", vmstat::encode),
    ("loadavg", loadavg::encode),
    ("pressure", pressure::encode),
    ("diskstats", diskstats::encode),
    ("netdev", netdev::encode),
    ("schedstat", schedstat::encode),
    ("filefd", filefd::encode),
    ("sockstat", sockstat::encode),
    ("softnet", softnet::encode),
    ("entropy", entropy::encode),
    ("uname", uname::encode),
    ("netstat", netstat::encode),
    ("netclass", netclass::encode),
    ("filesystem", filesystem::encode),
    ("time", time::encode),
    ("timex", timex::encode),
    ("os", os::encode),
    ("selinux", selinux::encode),
    ("arp", arp::encode),
    ("udp_queues", udp_queues::encode),
    ("conntrack", conntrack::encode),
    ("cpufreq", cpufreq::encode),
    ("thermal_zone", thermal_zone::encode),
    ("dmi", dmi::encode),
    ("bonding", bonding::encode),
    ("mdadm", mdadm::encode),
    ("hwmon", hwmon::encode),
    ("meminfo_numa", meminfo_numa::encode),
    ("buddyinfo", buddyinfo::encode),
    ("zoneinfo", zoneinfo::encode),
    ("slabinfo", slabinfo::encode),
    ("ksmd", ksmd::encode),
    ("kernel_hung", kernel_hung::encode),
    ("processes", processes::encode),
    ("powersupplyclass", powersupplyclass::encode),
    ("nvme", nvme::encode),
    ("watchdog", watchdog::encode),
    ("rapl", rapl::encode),
    ("edac", edac::encode),
    ("tapestats", tapestats::encode),
    ("fibrechannel", fibrechannel::encode),
    ("infiniband", infiniband::encode),
    ("xfs", xfs::encode),
    ("btrfs", btrfs::encode),
    ("nfs", nfs::encode),
    ("nfsd", nfsd::encode),
    ("ipvs", ipvs::encode),
    ("zfs", zfs::encode),
    ("bcache", bcache::encode),
    ("cgroups", cgroups::encode),
    ("xfrm", xfrm::encode),
    ("lnstat", lnstat::encode),
    ("bcachefs", bcachefs::encode),
    ("mountstats", mountstats::encode),
    ("pcidevice", pcidevice::encode),
    ("cpu_vulnerabilities", cpu_vulnerabilities::encode),
    ("sysctl", sysctl::encode),
    ("drbd", drbd::encode),
    ("dmmultipath", dmmultipath::encode),
    ("systemd", systemd::encode),
    ("swap", swap::encode),
    ("qdisc", qdisc::encode),
    ("ethtool", ethtool::encode),
    ("wifi", wifi::encode),
];

/// The devices of hardware class `source`, when it was read.
fn class<'a>(x: &Input<'a>, source: Source) -> Option<&'a [ClassDevice]> {
    let i = source.class_index()?;
    x.s.ok(source).then(|| x.s.class[i].as_slice())
}

#[cfg(test)]
mod tests {
    use super::super::compat::collectors;
    use super::*;

    #[test]
    fn every_collector_has_one_encoder_in_the_registry_order() {
        let want: Vec<&str> = collectors()
            .iter()
            .map(|c| c.name)
            .filter(|n| *n != "textfile")
            .collect();
        let have: Vec<&str> = ENCODERS.iter().map(|(n, _)| *n).collect();
        assert_eq!(have, want);
        assert!(collectors().iter().any(|c| c.name == "textfile"));
    }
}
