//! Devices of a sysfs class, for the hardware sources whose devices are
//! directories of one-value attribute files: power supplies, NVMe
//! controllers, watchdogs, RAPL power zones, EDAC memory controllers, SCSI
//! tapes, Fibre Channel hosts and InfiniBand adapters.
//!
//! Each source has a [`ClassSpec`]: the directory whose entries are the
//! devices and the attribute paths read below each. The reader gathers,
//! per device, `@<name>` then `<attribute path> <value>` lines for the
//! attributes the device has (a `*` component of a path stands for each
//! entry of that directory, so `ports/*/state` gathers as
//! `ports/1/state`); an attribute that could not be read is left out. A
//! file of several `<name> <values>` lines (XFS's `stats`, btrfs's
//! `commit_stats`) gathers as one line each, `<path>:<name> <values>`. The
//! parser here keeps every line as text; [`ClassDevice::uint`] and friends
//! read the values.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err, set, slot};

/// Where a class source's devices are and what is read of each.
#[derive(Debug)]
pub struct ClassSpec {
    /// The directory below the sys root whose entries are the devices.
    pub dir: &'static str,
    /// Only entries whose name starts with this are devices.
    pub prefix: &'static str,
    /// The name is `prefix` and a number, nothing else (`st0`, not `st0a`).
    pub numbered: bool,
    /// Entries of `dir` that are not devices.
    pub skip: &'static [&'static str],
    /// Attribute paths below a device directory.
    pub attrs: &'static [&'static str],
    /// A missing directory is a machine without such devices (the source
    /// is read, with none) rather than a missing source.
    pub missing_is_empty: bool,
}

impl ClassSpec {
    /// Whether directory entry `name` is one of the class's devices.
    pub fn is_device(&self, name: &str) -> bool {
        if self.skip.contains(&name) {
            return false;
        }
        match name.strip_prefix(self.prefix) {
            None => false,
            Some(rest) if self.numbered => {
                !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
            }
            Some(_) => true,
        }
    }
}

/// `/sys/class/power_supply/<supply>/` (node_exporter's powersupplyclass).
pub const POWER_SUPPLY: ClassSpec = ClassSpec {
    dir: "class/power_supply",
    prefix: "",
    numbered: false,
    skip: &[],
    attrs: &[
        "authentic",
        "calibrate",
        "capacity",
        "capacity_alert_max",
        "capacity_alert_min",
        "capacity_level",
        "charge_control_limit",
        "charge_control_limit_max",
        "charge_counter",
        "charge_empty",
        "charge_empty_design",
        "charge_full",
        "charge_full_design",
        "charge_now",
        "charge_term_current",
        "charge_type",
        "constant_charge_current",
        "constant_charge_current_max",
        "constant_charge_voltage",
        "constant_charge_voltage_max",
        "current_boot",
        "current_max",
        "current_now",
        "cycle_count",
        "energy_empty",
        "energy_empty_design",
        "energy_full",
        "energy_full_design",
        "energy_now",
        "health",
        "input_current_limit",
        "manufacturer",
        "model_name",
        "online",
        "power_now",
        "precharge_current",
        "present",
        "scope",
        "serial_number",
        "status",
        "technology",
        "temp",
        "temp_alert_max",
        "temp_alert_min",
        "temp_ambient",
        "temp_ambient_max",
        "temp_ambient_min",
        "temp_max",
        "temp_min",
        "time_to_empty_now",
        "time_to_full_now",
        "type",
        "usb_type",
        "voltage_boot",
        "voltage_max",
        "voltage_max_design",
        "voltage_min",
        "voltage_min_design",
        "voltage_now",
        "voltage_ocv",
    ],
    missing_is_empty: false,
};

/// `/sys/class/nvme/nvmeN/`, and its namespaces (`nvmeNnM`, or
/// `nvmeNcCnM` for a path of a multipath namespace): ANA state, size in
/// 512-byte sectors, blocks in use (`nuse`: the controller is asked, at
/// most every 5 s a namespace) and block size.
pub const NVME: ClassSpec = ClassSpec {
    dir: "class/nvme",
    prefix: "nvme",
    numbered: false,
    skip: &[],
    attrs: &[
        "firmware_rev",
        "model",
        "serial",
        "state",
        "cntlid",
        "nvme*/ana_state",
        "nvme*/size",
        "nvme*/nuse",
        "nvme*/queue/logical_block_size",
    ],
    missing_is_empty: false,
};

/// `/sys/class/watchdog/watchdogN/`.
pub const WATCHDOG: ClassSpec = ClassSpec {
    dir: "class/watchdog",
    prefix: "watchdog",
    numbered: true,
    skip: &[],
    attrs: &[
        "bootstatus",
        "fw_version",
        "nowayout",
        "timeleft",
        "timeout",
        "pretimeout",
        "access_cs0",
        "options",
        "identity",
        "state",
        "status",
        "pretimeout_governor",
    ],
    missing_is_empty: false,
};

/// `/sys/class/powercap/<zone>/` (RAPL power zones: `intel-rapl:N[:M]`
/// and the like; an entry without a `name` is a control type, not a zone).
pub const RAPL: ClassSpec = ClassSpec {
    dir: "class/powercap",
    prefix: "",
    numbered: false,
    skip: &[],
    attrs: &["name", "energy_uj", "max_energy_range_uj"],
    missing_is_empty: false,
};

/// `/sys/devices/system/edac/mc/mcN/`, its chip-select rows and their
/// channels.
pub const EDAC: ClassSpec = ClassSpec {
    dir: "devices/system/edac/mc",
    prefix: "mc",
    numbered: true,
    skip: &[],
    attrs: &[
        "ce_count",
        "ce_noinfo_count",
        "ue_count",
        "ue_noinfo_count",
        "csrow*/ce_count",
        "csrow*/ue_count",
        "csrow*/ch*_ce_count",
        "csrow*/ch*_ue_count",
        "csrow*/ch*_dimm_label",
    ],
    missing_is_empty: true,
};

/// `/sys/class/scsi_tape/stN/stats/`.
pub const TAPE: ClassSpec = ClassSpec {
    dir: "class/scsi_tape",
    prefix: "st",
    numbered: true,
    skip: &[],
    attrs: &[
        "stats/in_flight",
        "stats/io_ns",
        "stats/other_cnt",
        "stats/read_byte_cnt",
        "stats/read_cnt",
        "stats/read_ns",
        "stats/resid_cnt",
        "stats/write_byte_cnt",
        "stats/write_cnt",
        "stats/write_ns",
    ],
    missing_is_empty: false,
};

/// `/sys/class/fc_host/hostN/`.
pub const FC_HOST: ClassSpec = ClassSpec {
    dir: "class/fc_host",
    prefix: "host",
    numbered: false,
    skip: &[],
    attrs: &[
        "speed",
        "port_state",
        "port_type",
        "symbolic_name",
        "node_name",
        "port_id",
        "port_name",
        "fabric_name",
        "dev_loss_tmo",
        "supported_classes",
        "supported_speeds",
        "statistics/*",
    ],
    missing_is_empty: false,
};

/// `/sys/class/infiniband/<device>/ports/<n>/`.
pub const INFINIBAND: ClassSpec = ClassSpec {
    dir: "class/infiniband",
    prefix: "",
    numbered: false,
    skip: &[],
    attrs: &[
        "board_id",
        "fw_ver",
        "hca_type",
        "ports/*/state",
        "ports/*/phys_state",
        "ports/*/rate",
        "ports/*/counters/*",
        "ports/*/counters_ext/*",
    ],
    missing_is_empty: false,
};

/// `/sys/fs/xfs/<device>/stats/stats`: one mounted XFS filesystem each
/// (the directory `stats` beside them holds all of them together).
pub const XFS: ClassSpec = ClassSpec {
    dir: "fs/xfs",
    prefix: "",
    numbered: false,
    skip: &["stats"],
    attrs: &["stats/stats"],
    missing_is_empty: true,
};

/// `/sys/fs/btrfs/<uuid>/`: one mounted btrfs filesystem each.
pub const BTRFS: ClassSpec = ClassSpec {
    dir: "fs/btrfs",
    prefix: "",
    numbered: false,
    skip: &["features"],
    attrs: &[
        "label",
        "metadata_uuid",
        "allocation/global_rsv_size",
        "allocation/*/bytes_reserved",
        "allocation/*/*/used_bytes",
        "allocation/*/*/total_bytes",
        "devices/*/size",
        "commit_stats",
    ],
    missing_is_empty: true,
};

/// `/sys/fs/bcache/<set uuid>/`: a cache set, its backing devices
/// (`bdevN`) and cache devices (`cacheN`). Sizes are printed humanized
/// (`1.1M`); [`dehumanize`] reads them.
pub const BCACHE: ClassSpec = ClassSpec {
    dir: "fs/bcache",
    prefix: "",
    numbered: false,
    skip: &[
        "register",
        "register_quiet",
        "register_async",
        "pendings_cleanup",
    ],
    attrs: &[
        "average_key_size",
        "btree_cache_size",
        "cache_available_percent",
        "congested",
        "root_usage_percent",
        "tree_depth",
        "internal/active_journal_entries",
        "internal/btree_nodes",
        "internal/btree_read_average_duration_us",
        "internal/cache_read_races",
        "bdev*/dirty_data",
        "bdev*/writeback_rate_debug",
        "bdev*/stats_total/bypassed",
        "bdev*/stats_total/cache_hits",
        "bdev*/stats_total/cache_misses",
        "bdev*/stats_total/cache_bypass_hits",
        "bdev*/stats_total/cache_bypass_misses",
        "bdev*/stats_total/cache_miss_collisions",
        "bdev*/stats_total/cache_readaheads",
        "cache*/io_errors",
        "cache*/metadata_written",
        "cache*/written",
    ],
    missing_is_empty: true,
};

/// `/sys/fs/bcachefs/<uuid>/`: one mounted bcachefs filesystem each, its
/// counters (`counters/<name>`: since mount and since the filesystem's
/// creation) and its devices (`dev-N`). Sizes are printed humanized
/// (`2.05G`, read as decimal fractions: [`human_bytes`]); its tables
/// (`errors`, `compression_stats`, `btree_write_stats`, `io_done`,
/// `io_errors`) gather as one attribute a line. Without the directory
/// the source is missing, and node_exporter's collector fails likewise.
pub const BCACHEFS: ClassSpec = ClassSpec {
    dir: "fs/bcachefs",
    prefix: "",
    numbered: false,
    skip: &[],
    attrs: &[
        "btree_cache_size",
        "btree_write_stats",
        "compression_stats",
        "errors",
        "counters/*",
        "dev-*/bucket_size",
        "dev-*/durability",
        "dev-*/io_done",
        "dev-*/io_errors",
        "dev-*/label",
        "dev-*/nbuckets",
        "dev-*/state",
    ],
    missing_is_empty: false,
};

/// `/sys/bus/pci/devices/<segment:bus:device.function>/`: each PCI
/// function, its identity, link, SR-IOV and power attributes; the
/// gatherer adds `parent <location>`, the upstream bridge's location from
/// the device's link into /sys/devices, where it has one.
pub const PCIDEVICE: ClassSpec = ClassSpec {
    dir: "bus/pci/devices",
    prefix: "",
    numbered: false,
    skip: &[],
    attrs: &[
        "class",
        "vendor",
        "device",
        "subsystem_vendor",
        "subsystem_device",
        "revision",
        "max_link_speed",
        "max_link_width",
        "current_link_speed",
        "current_link_width",
        "numa_node",
        "sriov_drivers_autoprobe",
        "sriov_numvfs",
        "sriov_totalvfs",
        "sriov_vf_total_msix",
        "d3cold_allowed",
        "power_state",
    ],
    missing_is_empty: false,
};

/// `/sys/devices/system/cpu/vulnerabilities/*`: the kernel's word on each
/// CPU vulnerability, one file each (`Not affected`, `Vulnerable...`,
/// `Mitigation: ...`); the directory is the one "device".
pub const CPU_VULNERABILITIES: ClassSpec = ClassSpec {
    dir: "devices/system/cpu",
    prefix: "vulnerabilities",
    numbered: false,
    skip: &[],
    attrs: &["*"],
    missing_is_empty: false,
};

/// `/sys/block/mdN/md/`: each software RAID array's level, its member
/// count and how many members it lacks (node_exporter's mdadm reads these
/// beside /proc/mdstat).
pub const MDRAID: ClassSpec = ClassSpec {
    dir: "block",
    prefix: "md",
    numbered: true,
    skip: &[],
    attrs: &["md/level", "md/raid_disks", "md/degraded"],
    missing_is_empty: true,
};

/// `/sys/block/<disk>/queue/rotational`: whether each disk spins
/// (node_exporter's `rotational` label of `node_disk_info`; partitions
/// have no queue of their own). Only the disks diskstats serves are read
/// ([`crate::GatherOptions::disks`]).
pub const BLOCK_QUEUE: ClassSpec = ClassSpec {
    dir: "block",
    prefix: "",
    numbered: false,
    skip: &[],
    attrs: &["queue/rotational"],
    missing_is_empty: true,
};

/// `/sys/block/dm-N/`: device-mapper devices, their name, whether
/// suspended, and size; the gatherer adds each one's `dm/uuid` (which it
/// reads to find the multipath ones: their UUIDs start with `mpath-`) and
/// `path <device> <state>` for each path of a multipath device (its
/// `slaves/`, each one's `device/state`).
pub const DM_MULTIPATH: ClassSpec = ClassSpec {
    dir: "block",
    prefix: "dm-",
    numbered: true,
    skip: &[],
    attrs: &["dm/name", "dm/suspended", "size"],
    missing_is_empty: true,
};

/// A size as bcachefs prints it (`prt_human_readable_u64`): a number,
/// perhaps with a decimal fraction, and a binary multiplier (`k`, `M`,
/// `G`, `T`, `P`, `E`, either case), truncated to whole bytes as
/// node_exporter reads it (`2.05G` is 2,201,170,739).
pub fn human_bytes(v: &str) -> Option<u64> {
    let v = v.trim();
    let last = v.chars().last()?;
    let (num, power) = match "kmgtpe".find(last.to_ascii_lowercase()) {
        Some(p) => (&v[..v.len() - 1], p as i32 + 1),
        None => (v, 0),
    };
    let x: f64 = num.trim().parse().ok()?;
    (x.is_finite() && x >= 0.0).then(|| (x * 1024f64.powi(power)) as u64)
}

/// A size as bcache prints it (`bch_hprint`): a whole number, or a number
/// and a binary multiplier (`k`, `M`, `G`, ...), whose one or two digits
/// after the point are 1024ths scaled to 100 (`1.1M` is 1 + 1/10.24 MiB);
/// negative with a leading `-`. Read as node_exporter reads it.
pub fn dehumanize(v: &str) -> Option<i64> {
    let v = v.trim();
    if let Some(rest) = v.strip_prefix('-') {
        return dehumanize(rest).map(|x| -x);
    }
    let last = v.chars().last()?;
    let (mant, mul) = if last.is_ascii_digit() {
        (v.parse::<f64>().ok()?, 1.0)
    } else {
        let power = "kMGTPEZY".find(last)? as i32 + 1;
        let num = &v[..v.len() - last.len_utf8()];
        let mant = match num.split_once('.') {
            None => num.parse::<f64>().ok()?,
            Some((i, f)) => i.parse::<f64>().ok()? + f.parse::<f64>().ok()? / 10.24,
        };
        (mant, 1024f64.powi(power))
    };
    Some((mant * mul) as i64)
}

/// The class sources, as a pattern: `procfs::class_sources!() => ...` in a
/// `match` on a [`crate::Source`] (the list is written once; [`CLASSES`]
/// gives each its spec, and a test checks the two agree).
#[macro_export]
macro_rules! class_sources {
    () => {
        $crate::Source::PowerSupply
            | $crate::Source::Nvme
            | $crate::Source::Watchdog
            | $crate::Source::Rapl
            | $crate::Source::Edac
            | $crate::Source::Tape
            | $crate::Source::FcHost
            | $crate::Source::Infiniband
            | $crate::Source::Xfs
            | $crate::Source::Btrfs
            | $crate::Source::Bcache
            | $crate::Source::Bcachefs
            | $crate::Source::Pcidevice
            | $crate::Source::CpuVulnerabilities
            | $crate::Source::Mdraid
            | $crate::Source::BlockQueue
            | $crate::Source::DmMultipath
    };
}

/// The class sources and their specs; a source's index here is its slot
/// in [`crate::SystemSample::class`].
pub static CLASSES: [(crate::Source, ClassSpec); 17] = [
    (crate::Source::PowerSupply, POWER_SUPPLY),
    (crate::Source::Nvme, NVME),
    (crate::Source::Watchdog, WATCHDOG),
    (crate::Source::Rapl, RAPL),
    (crate::Source::Edac, EDAC),
    (crate::Source::Tape, TAPE),
    (crate::Source::FcHost, FC_HOST),
    (crate::Source::Infiniband, INFINIBAND),
    (crate::Source::Xfs, XFS),
    (crate::Source::Btrfs, BTRFS),
    (crate::Source::Bcache, BCACHE),
    (crate::Source::Bcachefs, BCACHEFS),
    (crate::Source::Pcidevice, PCIDEVICE),
    (crate::Source::CpuVulnerabilities, CPU_VULNERABILITIES),
    (crate::Source::Mdraid, MDRAID),
    (crate::Source::BlockQueue, BLOCK_QUEUE),
    (crate::Source::DmMultipath, DM_MULTIPATH),
];

/// One device: its directory's name and the attributes read, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClassDevice {
    pub name: String,
    /// `(attribute path, value)`, values as the file has them (trimmed).
    pub attrs: Vec<(String, String)>,
}

impl ClassDevice {
    /// The text of attribute `path`.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == path)
            .map(|(_, v)| v.as_str())
    }

    /// Attribute `path` as a whole number: decimal, or hexadecimal with
    /// `0x` (Fibre Channel statistics).
    pub fn uint(&self, path: &str) -> Option<u64> {
        parse_uint(self.get(path)?)
    }

    /// Attribute `path` as a signed whole number (temperatures, currents).
    pub fn int(&self, path: &str) -> Option<i64> {
        self.get(path)?.trim().parse().ok()
    }

    /// The attributes below `dir/` (`ports/1/`), each as (the rest of its
    /// path, value).
    pub fn below(&self, dir: &str) -> Vec<(&str, &str)> {
        self.attrs
            .iter()
            .filter_map(|(k, v)| {
                let rest = k.strip_prefix(dir)?.strip_prefix('/')?;
                Some((rest, v.as_str()))
            })
            .collect()
    }

    /// The distinct first components of the attributes below `dir/`
    /// (`ports` gives the port numbers; `""` the device's own entries), in
    /// order of appearance.
    pub fn children<'a>(&'a self, dir: &str) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        for (k, _) in &self.attrs {
            let rest = if dir.is_empty() {
                Some(k.as_str())
            } else {
                k.strip_prefix(dir).and_then(|r| r.strip_prefix('/'))
            };
            let Some(rest) = rest else {
                continue;
            };
            let child = rest.split('/').next().unwrap_or(rest);
            if !out.contains(&child) {
                out.push(child);
            }
        }
        out
    }
}

/// A whole number in decimal, or in hexadecimal after `0x`.
pub fn parse_uint(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Attributes one device may have.
const MAX_ATTRS: usize = 1 << 16;

/// Parses the gathered records into `out`.
pub fn parse_into(buf: &[u8], out: &mut Vec<ClassDevice>) -> Result<(), ParseError> {
    // Devices, and attributes of the current one.
    let (mut used, mut attrs) = (0, 0);
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(name) = text.strip_prefix('@') {
            records::open(n, name, used, "device")?;
            if let Some(d) = used.checked_sub(1).map(|i| &mut out[i]) {
                d.attrs.truncate(attrs);
            }
            let d = slot(out, used);
            used += 1;
            attrs = 0;
            set(&mut d.name, name);
            continue;
        }
        let d = records::current(&mut out[..used], n, "device")?;
        let (k, v) = text.split_once(' ').unwrap_or((text, ""));
        if k.is_empty() {
            return Err(err(
                n,
                "attribute",
                ParseErrorKind::Invalid,
                "`<attribute> <value>`",
            ));
        }
        if attrs >= MAX_ATTRS {
            return Err(err(
                n,
                "attribute",
                ParseErrorKind::TooMany,
                "at most 65536 attributes a device",
            ));
        }
        let e = slot(&mut d.attrs, attrs);
        attrs += 1;
        set(&mut e.0, k);
        set(&mut e.1, v);
    }
    if let Some(d) = used.checked_sub(1).map(|i| &mut out[i]) {
        d.attrs.truncate(attrs);
    }
    out.truncate(used);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let mut v = crate::parsed(parse_into, b"@host0\nspeed 16 Gbit\nstatistics/rx_frames 0x1f\n@mlx5_0\nports/1/state 4: ACTIVE\nports/1/counters/port_rcv_data 100\nports/2/state 1: DOWN\nempty\n");
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].get("speed"), Some("16 Gbit"));
        assert_eq!(v[0].uint("statistics/rx_frames"), Some(31));
        assert_eq!(v[1].children("ports"), ["1", "2"]);
        let p1 = v[1].below("ports/1");
        assert_eq!(
            p1,
            [("state", "4: ACTIVE"), ("counters/port_rcv_data", "100")]
        );
        assert_eq!(v[1].get("empty"), Some(""));
        // A warm parse of fewer attributes drops the rest.
        parse_into(b"@host0\nspeed 8 Gbit\n", &mut v).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].attrs.len(), 1);
        assert_eq!(
            parse_into(b"speed 1\n", &mut v).unwrap_err().field,
            "device"
        );
        assert_eq!(parse_into(b"@a/b\n", &mut v).unwrap_err().field, "device");
        assert_eq!(
            parse_into(b"@a\n x\n", &mut v).unwrap_err().field,
            "attribute"
        );
    }

    #[test]
    fn the_pattern_and_the_specs_list_the_same_sources() {
        for s in crate::Source::ALL {
            let in_pattern = matches!(s, crate::class_sources!());
            assert_eq!(in_pattern, s.class_spec().is_some(), "{}", s.name());
        }
    }

    #[test]
    fn sizes_read_as_bcache_prints_them() {
        assert_eq!(dehumanize("512"), Some(512));
        assert_eq!(dehumanize("1.1M"), Some(1150976));
        assert_eq!(dehumanize("20.4G"), Some(21894266880));
        assert_eq!(dehumanize("-2.0k"), Some(-2048));
        assert_eq!(dehumanize("3k"), Some(3072));
        assert_eq!(dehumanize("1.5Q"), None);
        assert_eq!(dehumanize(""), None);
    }

    #[test]
    fn sizes_read_as_bcachefs_prints_them() {
        assert_eq!(human_bytes("2.05G"), Some(2_201_170_739));
        assert_eq!(human_bytes("28.2k"), Some(28_876));
        assert_eq!(human_bytes("10.8T"), Some(11_874_725_579_980));
        assert_eq!(human_bytes("720"), Some(720));
        assert_eq!(human_bytes("512k"), Some(524_288));
        assert_eq!(human_bytes("1.5Q"), None);
        assert_eq!(human_bytes("-1k"), None);
        assert_eq!(human_bytes(""), None);
        assert_eq!(human_bytes("k"), None);
    }

    #[test]
    fn device_names_follow_the_spec() {
        assert!(TAPE.is_device("st0"));
        assert!(!TAPE.is_device("st0a") && !TAPE.is_device("nst0") && !TAPE.is_device("st"));
        assert!(EDAC.is_device("mc0") && !EDAC.is_device("power"));
        assert!(POWER_SUPPLY.is_device("BAT0"));
        assert_eq!(parse_uint("0x10"), Some(16));
        assert_eq!(parse_uint("N/A"), None);
    }
}
