//! The hardware classes under node_exporter's names: powersupplyclass,
//! nvme, watchdog, rapl, edac, tapestats, fibrechannel, infiniband, xfs,
//! btrfs, bcache.

use std::path::Path;

use procfs::class::{ClassDevice, parse_uint};
use procfs::{Source, SystemSample};

use super::families::*;
use super::out::{Fmt, Out, counter_l, gauge_l, info_l};

/// node_exporter's power supply families: `(attribute, name after
/// node_power_supply_, divisor)`; micro-units become units, tenths of a
/// degree degrees (divided, as node_exporter does, so the floats agree).
const POWER_SUPPLY: &[(&str, &str, f64)] = &[
    ("authentic", "authentic", 1.0),
    ("calibrate", "calibrate", 1.0),
    ("capacity", "capacity", 1.0),
    ("capacity_alert_max", "capacity_alert_max", 1.0),
    ("capacity_alert_min", "capacity_alert_min", 1.0),
    ("cycle_count", "cyclecount", 1.0),
    ("online", "online", 1.0),
    ("present", "present", 1.0),
    ("time_to_empty_now", "time_to_empty_seconds", 1.0),
    ("time_to_full_now", "time_to_full_seconds", 1.0),
    ("current_boot", "current_boot", 1e6),
    ("current_max", "current_max", 1e6),
    ("current_now", "current_ampere", 1e6),
    ("energy_empty", "energy_empty", 1e6),
    ("energy_empty_design", "energy_empty_design", 1e6),
    ("energy_full", "energy_full", 1e6),
    ("energy_full_design", "energy_full_design", 1e6),
    ("energy_now", "energy_watthour", 1e6),
    ("voltage_boot", "voltage_boot", 1e6),
    ("voltage_max", "voltage_max", 1e6),
    ("voltage_max_design", "voltage_max_design", 1e6),
    ("voltage_min", "voltage_min", 1e6),
    ("voltage_min_design", "voltage_min_design", 1e6),
    ("voltage_now", "voltage_volt", 1e6),
    ("voltage_ocv", "voltage_ocv", 1e6),
    ("charge_control_limit", "charge_control_limit", 1e6),
    ("charge_control_limit_max", "charge_control_limit_max", 1e6),
    ("charge_counter", "charge_counter", 1e6),
    ("charge_empty", "charge_empty", 1e6),
    ("charge_empty_design", "charge_empty_design", 1e6),
    ("charge_full", "charge_full", 1e6),
    ("charge_full_design", "charge_full_design", 1e6),
    ("charge_now", "charge_ampere", 1e6),
    ("charge_term_current", "charge_term_current", 1e6),
    ("constant_charge_current", "constant_charge_current", 1e6),
    (
        "constant_charge_current_max",
        "constant_charge_current_max",
        1e6,
    ),
    ("constant_charge_voltage", "constant_charge_voltage", 1e6),
    (
        "constant_charge_voltage_max",
        "constant_charge_voltage_max",
        1e6,
    ),
    ("precharge_current", "precharge_current", 1e6),
    ("input_current_limit", "input_current_limit", 1e6),
    ("power_now", "power_watt", 1e6),
    ("temp", "temp_celsius", 10.0),
    ("temp_alert_max", "temp_alert_max_celsius", 10.0),
    ("temp_alert_min", "temp_alert_min_celsius", 10.0),
    ("temp_ambient", "temp_ambient_celsius", 10.0),
    ("temp_ambient_max", "temp_ambient_max_celsius", 10.0),
    ("temp_ambient_min", "temp_ambient_min_celsius", 10.0),
    ("temp_max", "temp_max_celsius", 10.0),
    ("temp_min", "temp_min_celsius", 10.0),
];

/// `node_power_supply_info`'s labels after `power_supply`: the attributes
/// of the same names, each where the supply has it.
const POWER_SUPPLY_INFO: &[&str] = &[
    "capacity_level",
    "charge_type",
    "health",
    "manufacturer",
    "model_name",
    "serial_number",
    "status",
    "technology",
    "type",
    "usb_type",
    "scope",
];

/// Fibre Channel statistics: `(file, name after node_fibrechannel_)`.
const FC_COUNTERS: &[(&str, &str)] = &[
    ("dumped_frames", "dumped_frames"),
    ("error_frames", "error_frames"),
    ("invalid_crc_count", "invalid_crc"),
    ("rx_frames", "rx_frames"),
    ("rx_words", "rx_words"),
    ("tx_frames", "tx_frames"),
    ("tx_words", "tx_words"),
    ("seconds_since_last_reset", "seconds_since_last_reset"),
    ("invalid_tx_word_count", "invalid_tx_words"),
    ("link_failure_count", "link_failure"),
    ("loss_of_sync_count", "loss_of_sync"),
    ("loss_of_signal_count", "loss_of_signal"),
    ("nos_count", "nos"),
    ("fcp_packet_aborts", "fcp_packet_aborts"),
];

/// InfiniBand port counters: `(path below the port, name after
/// node_infiniband_, scale, help)`; data counters count 4-byte words.
const IB_COUNTERS: &[(&str, &str, f64, &str)] = &[
    (
        "counters_ext/port_multicast_rcv_packets",
        "legacy_multicast_packets_received",
        1.0,
        "Number of multicast packets received",
    ),
    (
        "counters_ext/port_multicast_xmit_packets",
        "legacy_multicast_packets_transmitted",
        1.0,
        "Number of multicast packets transmitted",
    ),
    (
        "counters_ext/port_rcv_data_64",
        "legacy_data_received_bytes",
        4.0,
        "Number of data octets received on all links",
    ),
    (
        "counters_ext/port_rcv_packets_64",
        "legacy_packets_received",
        1.0,
        "Number of data packets received on all links",
    ),
    (
        "counters_ext/port_unicast_rcv_packets",
        "legacy_unicast_packets_received",
        1.0,
        "Number of unicast packets received",
    ),
    (
        "counters_ext/port_unicast_xmit_packets",
        "legacy_unicast_packets_transmitted",
        1.0,
        "Number of unicast packets transmitted",
    ),
    (
        "counters_ext/port_xmit_data_64",
        "legacy_data_transmitted_bytes",
        4.0,
        "Number of data octets transmitted on all links",
    ),
    (
        "counters_ext/port_xmit_packets_64",
        "legacy_packets_transmitted",
        1.0,
        "Number of data packets received on all links",
    ),
    (
        "counters/link_downed",
        "link_downed",
        1.0,
        "Number of times the link failed to recover from an error state and went down",
    ),
    (
        "counters/link_error_recovery",
        "link_error_recovery",
        1.0,
        "Number of times the link successfully recovered from an error state",
    ),
    (
        "counters/multicast_rcv_packets",
        "multicast_packets_received",
        1.0,
        "Number of multicast packets received (including errors)",
    ),
    (
        "counters/multicast_xmit_packets",
        "multicast_packets_transmitted",
        1.0,
        "Number of multicast packets transmitted (including errors)",
    ),
    (
        "counters/port_rcv_constraint_errors",
        "port_constraint_errors_received",
        1.0,
        "Number of packets received on the switch physical port that are discarded",
    ),
    (
        "counters/port_xmit_constraint_errors",
        "port_constraint_errors_transmitted",
        1.0,
        "Number of packets not transmitted from the switch physical port",
    ),
    (
        "counters/port_rcv_data",
        "port_data_received_bytes",
        4.0,
        "Number of data octets received on all links",
    ),
    (
        "counters/port_xmit_data",
        "port_data_transmitted_bytes",
        4.0,
        "Number of data octets transmitted on all links",
    ),
    (
        "counters/port_rcv_discards",
        "port_discards_received",
        1.0,
        "Number of inbound packets discarded by the port because the port is down or congested",
    ),
    (
        "counters/port_xmit_discards",
        "port_discards_transmitted",
        1.0,
        "Number of outbound packets discarded by the port because the port is down or congested",
    ),
    (
        "counters/port_rcv_errors",
        "port_errors_received",
        1.0,
        "Number of packets containing an error that were received on this port",
    ),
    (
        "counters/port_rcv_packets",
        "port_packets_received",
        1.0,
        "Number of packets received on all VLs by this port (including errors)",
    ),
    (
        "counters/port_xmit_packets",
        "port_packets_transmitted",
        1.0,
        "Number of packets transmitted on all VLs from this port (including errors)",
    ),
    (
        "counters/port_xmit_wait",
        "port_transmit_wait",
        1.0,
        "Number of ticks during which the port had data to transmit but no data was sent during the entire tick",
    ),
    (
        "counters/unicast_rcv_packets",
        "unicast_packets_received",
        1.0,
        "Number of unicast packets received (including errors)",
    ),
    (
        "counters/unicast_xmit_packets",
        "unicast_packets_transmitted",
        1.0,
        "Number of unicast packets transmitted (including errors)",
    ),
];

/// node_exporter's XFS families: `(line of stats, column, name after
/// node_xfs_, help)`, all counters.
const XFS: &[(&str, usize, &str, &str)] = &[
    (
        "extent_alloc",
        0,
        "extent_allocation_extents_allocated",
        "Number of extents allocated for a filesystem.",
    ),
    (
        "extent_alloc",
        1,
        "extent_allocation_blocks_allocated",
        "Number of blocks allocated for a filesystem.",
    ),
    (
        "extent_alloc",
        2,
        "extent_allocation_extents_freed",
        "Number of extents freed for a filesystem.",
    ),
    (
        "extent_alloc",
        3,
        "extent_allocation_blocks_freed",
        "Number of blocks freed for a filesystem.",
    ),
    (
        "abt",
        0,
        "allocation_btree_lookups",
        "Number of allocation B-tree lookups for a filesystem.",
    ),
    (
        "abt",
        1,
        "allocation_btree_compares",
        "Number of allocation B-tree compares for a filesystem.",
    ),
    (
        "abt",
        2,
        "allocation_btree_records_inserted",
        "Number of allocation B-tree records inserted for a filesystem.",
    ),
    (
        "abt",
        3,
        "allocation_btree_records_deleted",
        "Number of allocation B-tree records deleted for a filesystem.",
    ),
    (
        "blk_map",
        0,
        "block_mapping_reads",
        "Number of block map for read operations for a filesystem.",
    ),
    (
        "blk_map",
        1,
        "block_mapping_writes",
        "Number of block map for write operations for a filesystem.",
    ),
    (
        "blk_map",
        2,
        "block_mapping_unmaps",
        "Number of block unmaps (deletes) for a filesystem.",
    ),
    (
        "blk_map",
        3,
        "block_mapping_extent_list_insertions",
        "Number of extent list insertions for a filesystem.",
    ),
    (
        "blk_map",
        4,
        "block_mapping_extent_list_deletions",
        "Number of extent list deletions for a filesystem.",
    ),
    (
        "blk_map",
        5,
        "block_mapping_extent_list_lookups",
        "Number of extent list lookups for a filesystem.",
    ),
    (
        "blk_map",
        6,
        "block_mapping_extent_list_compares",
        "Number of extent list compares for a filesystem.",
    ),
    (
        "bmbt",
        0,
        "block_map_btree_lookups",
        "Number of block map B-tree lookups for a filesystem.",
    ),
    (
        "bmbt",
        1,
        "block_map_btree_compares",
        "Number of block map B-tree compares for a filesystem.",
    ),
    (
        "bmbt",
        2,
        "block_map_btree_records_inserted",
        "Number of block map B-tree records inserted for a filesystem.",
    ),
    (
        "bmbt",
        3,
        "block_map_btree_records_deleted",
        "Number of block map B-tree records deleted for a filesystem.",
    ),
    (
        "dir",
        0,
        "directory_operation_lookup",
        "Number of file name directory lookups which miss the operating systems directory name lookup cache.",
    ),
    (
        "dir",
        1,
        "directory_operation_create",
        "Number of times a new directory entry was created for a filesystem.",
    ),
    (
        "dir",
        2,
        "directory_operation_remove",
        "Number of times an existing directory entry was created for a filesystem.",
    ),
    (
        "dir",
        3,
        "directory_operation_getdents",
        "Number of times the directory getdents operation was performed for a filesystem.",
    ),
    (
        "rw",
        0,
        "write_calls",
        "Number of write(2) system calls made to files in a filesystem.",
    ),
    (
        "rw",
        1,
        "read_calls",
        "Number of read(2) system calls made to files in a filesystem.",
    ),
    (
        "ig",
        0,
        "inode_operation_attempts",
        "Number of times the OS looked for an XFS inode in the inode cache.",
    ),
    (
        "ig",
        1,
        "inode_operation_found",
        "Number of times the OS looked for and found an XFS inode in the inode cache.",
    ),
    (
        "ig",
        2,
        "inode_operation_recycled",
        "Number of times the OS found an XFS inode in the cache, but could not use it as it was being recycled.",
    ),
    (
        "ig",
        3,
        "inode_operation_missed",
        "Number of times the OS looked for an XFS inode in the cache, but did not find it.",
    ),
    (
        "ig",
        4,
        "inode_operation_duplicates",
        "Number of times the OS tried to add a missing XFS inode to the inode cache, but found it had already been added by another process.",
    ),
    (
        "ig",
        5,
        "inode_operation_reclaims",
        "Number of times the OS reclaimed an XFS inode from the inode cache to free memory for another purpose.",
    ),
    (
        "ig",
        6,
        "inode_operation_attribute_changes",
        "Number of times the OS explicitly changed the attributes of an XFS inode.",
    ),
    (
        "vnodes",
        0,
        "vnode_active",
        "Number of vnodes not on free lists for a filesystem.",
    ),
    (
        "vnodes",
        1,
        "vnode_allocate",
        "Number of times vn_alloc called for a filesystem.",
    ),
    (
        "vnodes",
        2,
        "vnode_get",
        "Number of times vn_get called for a filesystem.",
    ),
    (
        "vnodes",
        3,
        "vnode_hold",
        "Number of times vn_hold called for a filesystem.",
    ),
    (
        "vnodes",
        4,
        "vnode_release",
        "Number of times vn_rele called for a filesystem.",
    ),
    (
        "vnodes",
        5,
        "vnode_reclaim",
        "Number of times vn_reclaim called for a filesystem.",
    ),
    (
        "vnodes",
        6,
        "vnode_remove",
        "Number of times vn_remove called for a filesystem.",
    ),
];

pub(super) fn classes(out: &mut Out<'_>, s: &SystemSample, sys_root: &Path) -> Fmt {
    let devices = |source: Source| -> Option<&[ClassDevice]> {
        let i = source.class_index()?;
        s.ok(source).then(|| s.class[i].as_slice())
    };
    if let Some(d) = devices(Source::PowerSupply) {
        power_supply(out, d)?;
    }
    if let Some(d) = devices(Source::Nvme) {
        let mut m = out.family(&NODE_NVME_INFO)?;
        for n in d {
            let g = |a| n.get(a).unwrap_or("");
            let labels = [
                ("device", n.name.as_str()),
                ("firmware_revision", g("firmware_rev")),
                ("model", g("model")),
                ("serial", g("serial")),
                ("state", g("state")),
            ];
            info_l(&mut m, &labels)?;
        }
    }
    if let Some(d) = devices(Source::Watchdog) {
        watchdog(out, d)?;
    }
    if let Some(d) = devices(Source::Rapl) {
        rapl(out, d, &sys_root.join(procfs::class::RAPL.dir))?;
    }
    if let Some(d) = devices(Source::Edac) {
        edac(out, d)?;
    }
    if let Some(d) = devices(Source::Tape) {
        tape(out, d)?;
    }
    if let Some(d) = devices(Source::FcHost) {
        fibrechannel(out, d)?;
    }
    if let Some(d) = devices(Source::Infiniband) {
        infiniband(out, d)?;
    }
    if let Some(d) = devices(Source::Xfs) {
        xfs(out, d)?;
    }
    if let Some(d) = devices(Source::Btrfs) {
        btrfs(out, d)?;
    }
    if let Some(d) = devices(Source::Bcache) {
        bcache(out, d)?;
    }
    Ok(())
}

fn power_supply(out: &mut Out<'_>, supplies: &[ClassDevice]) -> Fmt {
    let mut name = String::new();
    for (attr, suffix, divisor) in POWER_SUPPLY {
        let rows: Vec<_> = supplies
            .iter()
            .filter_map(|p| Some((p.name.as_str(), p.int(attr)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_POWER_SUPPLY.instance_into(suffix, &mut name);
        let help = format!("{suffix} value of /sys/class/power_supply/<power_supply>.");
        let mut m = out.family_named(&NODE_POWER_SUPPLY, &name, &help)?;
        for (supply, v) in rows {
            gauge_l(&mut m, &[("power_supply", supply)], v as f64 / divisor)?;
        }
    }
    let mut m = out.family(&NODE_POWER_SUPPLY_INFO)?;
    for p in supplies {
        let mut labels = vec![("power_supply", p.name.as_str())];
        for key in POWER_SUPPLY_INFO {
            if let Some(v) = p.get(key).filter(|v| !v.is_empty()) {
                labels.push((key, v));
            }
        }
        info_l(&mut m, &labels)?;
    }
    Ok(())
}

fn watchdog(out: &mut Out<'_>, dogs: &[ClassDevice]) -> Fmt {
    for (f, attr) in [
        (&NODE_WATCHDOG_BOOTSTATUS, "bootstatus"),
        (&NODE_WATCHDOG_FW_VERSION, "fw_version"),
        (&NODE_WATCHDOG_NOWAYOUT, "nowayout"),
        (&NODE_WATCHDOG_TIMELEFT_SECONDS, "timeleft"),
        (&NODE_WATCHDOG_TIMEOUT_SECONDS, "timeout"),
        (&NODE_WATCHDOG_PRETIMEOUT_SECONDS, "pretimeout"),
        (&NODE_WATCHDOG_ACCESS_CS0, "access_cs0"),
    ] {
        let rows: Vec<_> = dogs
            .iter()
            .filter_map(|d| Some((d.name.as_str(), d.int(attr)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let mut m = out.family(f)?;
        for (name, v) in rows {
            gauge_l(&mut m, &[("name", name)], v as f64)?;
        }
    }
    let mut m = out.family(&NODE_WATCHDOG_INFO)?;
    for d in dogs {
        let g = |a| d.get(a).unwrap_or("");
        let labels = [
            ("name", d.name.as_str()),
            ("options", g("options")),
            ("identity", g("identity")),
            ("state", g("state")),
            ("status", g("status")),
            ("pretimeout_governor", g("pretimeout_governor")),
        ];
        info_l(&mut m, &labels)?;
    }
    Ok(())
}

/// node_exporter's RAPL names: `package-0` is zone `package` index 0; a
/// name without an index is numbered by its use so far (`dram` 0, 1, ...).
fn rapl(out: &mut Out<'_>, zones: &[ClassDevice], dir: &Path) -> Fmt {
    use std::collections::BTreeMap;
    let mut uses: BTreeMap<String, u64> = BTreeMap::new();
    // (metric name, help, index, path, joules), grouped by name.
    let mut series: BTreeMap<String, Vec<(String, String, f64)>> = BTreeMap::new();
    for z in zones {
        let (Some(raw), Some(uj)) = (z.get("name"), z.uint("energy_uj")) else {
            continue;
        };
        let (base, index) = match raw.split_once('-') {
            Some((b, i)) if !i.contains('-') && i.parse::<u64>().is_ok() => {
                (b.to_string(), i.parse().unwrap_or(0))
            }
            _ => (raw.to_string(), uses.get(raw).copied().unwrap_or(0)),
        };
        uses.insert(base.clone(), index + 1);
        let path = dir.join(&z.name).display().to_string();
        series
            .entry(base)
            .or_default()
            .push((index.to_string(), path, uj as f64 / 1e6));
    }
    let mut name = String::new();
    for (zone, rows) in &series {
        let key: String = zone
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        NODE_RAPL_JOULES_TOTAL.instance_into(&key, &mut name);
        let help = format!("Current RAPL {zone} value in joules");
        let mut m = out.family_named(&NODE_RAPL_JOULES_TOTAL, &name, &help)?;
        for (index, path, j) in rows {
            counter_l(
                &mut m,
                &[("index", index.as_str()), ("path", path.as_str())],
                *j,
            )?;
        }
    }
    Ok(())
}

/// Per controller (`mcN` as N); per chip-select row, with the errors no row
/// was named for as row `unknown`.
fn edac(out: &mut Out<'_>, mcs: &[ClassDevice]) -> Fmt {
    let id = |mc: &ClassDevice| mc.name.trim_start_matches("mc").to_string();
    for (f, attr) in [
        (&NODE_EDAC_CORRECTABLE_ERRORS_TOTAL, "ce_count"),
        (&NODE_EDAC_UNCORRECTABLE_ERRORS_TOTAL, "ue_count"),
    ] {
        let mut m = out.family(f)?;
        for mc in mcs {
            if let Some(v) = mc.uint(attr) {
                counter_l(&mut m, &[("controller", id(mc).as_str())], v as f64)?;
            }
        }
    }
    for (f, noinfo, row) in [
        (
            &NODE_EDAC_CSROW_CORRECTABLE_ERRORS_TOTAL,
            "ce_noinfo_count",
            "ce_count",
        ),
        (
            &NODE_EDAC_CSROW_UNCORRECTABLE_ERRORS_TOTAL,
            "ue_noinfo_count",
            "ue_count",
        ),
    ] {
        let mut m = out.family(f)?;
        for mc in mcs {
            let c = id(mc);
            if let Some(v) = mc.uint(noinfo) {
                counter_l(
                    &mut m,
                    &[("controller", c.as_str()), ("csrow", "unknown")],
                    v as f64,
                )?;
            }
            for (path, v) in &mc.attrs {
                let Some((csrow, file)) = path.split_once('/') else {
                    continue;
                };
                let (Some(n), true, Some(v)) =
                    (csrow.strip_prefix("csrow"), file == row, parse_uint(v))
                else {
                    continue;
                };
                counter_l(
                    &mut m,
                    &[("controller", c.as_str()), ("csrow", n)],
                    v as f64,
                )?;
            }
        }
    }
    Ok(())
}

fn tape(out: &mut Out<'_>, tapes: &[ClassDevice]) -> Fmt {
    let fields: [(&'static Family, &str, f64); 10] = [
        (&NODE_TAPE_IO_NOW, "stats/in_flight", 1.0),
        (&NODE_TAPE_IO_TIME_SECONDS_TOTAL, "stats/io_ns", 1e-9),
        (&NODE_TAPE_IO_OTHERS_TOTAL, "stats/other_cnt", 1.0),
        (&NODE_TAPE_READ_BYTES_TOTAL, "stats/read_byte_cnt", 1.0),
        (&NODE_TAPE_READS_COMPLETED_TOTAL, "stats/read_cnt", 1.0),
        (&NODE_TAPE_READ_TIME_SECONDS_TOTAL, "stats/read_ns", 1e-9),
        (&NODE_TAPE_RESIDUAL_TOTAL, "stats/resid_cnt", 1.0),
        (&NODE_TAPE_WRITTEN_BYTES_TOTAL, "stats/write_byte_cnt", 1.0),
        (&NODE_TAPE_WRITES_COMPLETED_TOTAL, "stats/write_cnt", 1.0),
        (&NODE_TAPE_WRITE_TIME_SECONDS_TOTAL, "stats/write_ns", 1e-9),
    ];
    for (f, attr, scale) in fields {
        let mut m = out.family(f)?;
        for t in tapes {
            if let Some(v) = t.uint(attr) {
                let labels = [("device", t.name.as_str())];
                match f.kind {
                    Kind::Counter => counter_l(&mut m, &labels, v as f64 * scale)?,
                    _ => gauge_l(&mut m, &labels, v as f64 * scale)?,
                }
            }
        }
    }
    Ok(())
}

fn fibrechannel(out: &mut Out<'_>, hosts: &[ClassDevice]) -> Fmt {
    {
        let mut m = out.family(&NODE_FIBRECHANNEL_INFO)?;
        for h in hosts {
            let g = |a| h.get(a).unwrap_or("");
            let labels = [
                ("fc_host", h.name.as_str()),
                ("speed", g("speed")),
                ("port_state", g("port_state")),
                ("port_type", g("port_type")),
                ("port_id", g("port_id")),
                ("port_name", g("port_name")),
                ("fabric_name", g("fabric_name")),
                ("symbolic_name", g("symbolic_name")),
                ("supported_classes", g("supported_classes")),
                ("supported_speeds", g("supported_speeds")),
                ("dev_loss_tmo", g("dev_loss_tmo")),
            ];
            info_l(&mut m, &labels)?;
        }
    }
    let mut name = String::new();
    for (file, suffix) in FC_COUNTERS {
        let path = format!("statistics/{file}");
        // All ones: a counter the HBA firmware does not implement.
        let rows: Vec<_> = hosts
            .iter()
            .filter_map(|h| Some((h.name.as_str(), h.uint(&path).filter(|v| *v != u64::MAX)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_FIBRECHANNEL_TOTAL.instance_into(suffix, &mut name);
        let help = format!("Fibre Channel host statistics: {file}");
        let mut m = out.family_named(&NODE_FIBRECHANNEL_TOTAL, &name, &help)?;
        for (host, v) in rows {
            counter_l(&mut m, &[("fc_host", host)], v as f64)?;
        }
    }
    Ok(())
}

/// `4: ACTIVE` as 4.
fn leading_id(v: &str) -> Option<f64> {
    v.split(':').next()?.trim().parse().ok()
}

/// `100 Gb/sec (4X EDR)` as bytes per second.
fn ib_rate(v: &str) -> Option<f64> {
    let gbits: f64 = v.split_whitespace().next()?.parse().ok()?;
    Some(gbits * 125_000_000.0)
}

fn infiniband(out: &mut Out<'_>, devices: &[ClassDevice]) -> Fmt {
    // (device, port, values by path below the port)
    let mut ports = Vec::new();
    for d in devices {
        for port in d.children("ports") {
            let dir = format!("ports/{port}");
            let values = d.below(&dir);
            ports.push((d.name.as_str(), port, values));
        }
    }
    fn get<'a>(values: &[(&str, &'a str)], k: &str) -> Option<&'a str> {
        values.iter().find(|(p, _)| *p == k).map(|(_, v)| *v)
    }
    type Gauge = (
        &'static str,
        &'static str,
        &'static str,
        fn(&str) -> Option<f64>,
    );
    let gauges: [Gauge; 3] = [
        (
            "state",
            "state_id",
            "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, 5: act defer)",
            leading_id,
        ),
        (
            "phys_state",
            "physical_state_id",
            "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: polling, 3: disable, 4: shift, 5: link up, 6: link error recover, 7: phytest)",
            leading_id,
        ),
        (
            "rate",
            "rate_bytes_per_second",
            "Maximum signal transfer rate",
            ib_rate,
        ),
    ];
    let mut name = String::new();
    for (file, key, help, parse) in gauges {
        let rows: Vec<_> = ports
            .iter()
            .filter_map(|(d, p, v)| Some((*d, *p, parse(get(v, file)?)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_INFINIBAND.instance_into(key, &mut name);
        let mut m = out.family_named(&NODE_INFINIBAND, &name, help)?;
        for (d, p, v) in rows {
            gauge_l(&mut m, &[("device", d), ("port", p)], v)?;
        }
    }
    for (file, suffix, scale, help) in IB_COUNTERS {
        let rows: Vec<_> = ports
            .iter()
            .filter_map(|(d, p, v)| Some((*d, *p, parse_uint(get(v, file)?)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_INFINIBAND_TOTAL.instance_into(suffix, &mut name);
        let mut m = out.family_named(&NODE_INFINIBAND_TOTAL, &name, help)?;
        for (d, p, v) in rows {
            counter_l(&mut m, &[("device", d), ("port", p)], v as f64 * scale)?;
        }
    }
    Ok(())
}

/// Per mounted filesystem: the columns of `stats/stats` node_exporter names.
fn xfs(out: &mut Out<'_>, filesystems: &[ClassDevice]) -> Fmt {
    let mut name = String::new();
    let mut key = String::new();
    for (line, column, suffix, help) in XFS {
        key.clear();
        key.push_str("stats/stats:");
        key.push_str(line);
        let rows: Vec<_> = filesystems
            .iter()
            .filter_map(|f| {
                let v = f.get(&key)?.split_whitespace().nth(*column)?;
                Some((f.name.as_str(), parse_uint(v)?))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_XFS_TOTAL.instance_into(suffix, &mut name);
        let mut m = out.family_named(&NODE_XFS_TOTAL, &name, help)?;
        for (device, v) in rows {
            counter_l(&mut m, &[("device", device)], v as f64)?;
        }
    }
    Ok(())
}

/// node_exporter's allocation ratio of a btrfs layout on `devices` devices.
fn btrfs_ratio(layout: &str, devices: usize) -> f64 {
    let n = devices as f64;
    match layout {
        "single" | "raid0" => 1.0,
        "dup" | "raid1" | "raid10" => 2.0,
        "raid5" => n / (n - 1.0),
        "raid6" => n / (n - 2.0),
        _ => 0.0,
    }
}

/// Per filesystem: its sysfs allocation figures; per device, the ioctls'
/// sizes and error counters (sysfs's device size where they gave none).
fn btrfs(out: &mut Out<'_>, filesystems: &[ClassDevice]) -> Fmt {
    use procfs::btrfs::IoctlDevice;
    const TYPES: [&str; 3] = ["data", "metadata", "system"];
    let uuid = |f: &ClassDevice| f.get("metadata_uuid").unwrap_or(&f.name).to_string();
    {
        let mut m = out.family(&NODE_BTRFS_INFO)?;
        for f in filesystems {
            let (u, label) = (uuid(f), f.get("label").unwrap_or(""));
            gauge_l(&mut m, &[("uuid", u.as_str()), ("label", label)], 1.0)?;
        }
    }
    {
        let mut m = out.family(&NODE_BTRFS_GLOBAL_RSV_SIZE_BYTES)?;
        for f in filesystems {
            if let Some(v) = f.uint("allocation/global_rsv_size") {
                gauge_l(&mut m, &[("uuid", uuid(f).as_str())], v as f64)?;
            }
        }
    }
    {
        let mut m = out.family(&NODE_BTRFS_RESERVED_BYTES)?;
        for f in filesystems {
            let u = uuid(f);
            for t in TYPES {
                if let Some(v) = f.uint(&format!("allocation/{t}/bytes_reserved")) {
                    gauge_l(
                        &mut m,
                        &[("uuid", u.as_str()), ("block_group_type", t)],
                        v as f64,
                    )?;
                }
            }
        }
    }
    for (fam, file) in [
        (&NODE_BTRFS_USED_BYTES, Some("used_bytes")),
        (&NODE_BTRFS_SIZE_BYTES, Some("total_bytes")),
        (&NODE_BTRFS_ALLOCATION_RATIO, None),
    ] {
        let mut m = out.family(fam)?;
        for f in filesystems {
            let u = uuid(f);
            let devices = f.children("devices").len();
            for t in TYPES {
                let dir = format!("allocation/{t}");
                for layout in f.children(&dir) {
                    let (Some(used), Some(total)) = (
                        f.uint(&format!("{dir}/{layout}/used_bytes")),
                        f.uint(&format!("{dir}/{layout}/total_bytes")),
                    ) else {
                        continue;
                    };
                    let v = match file {
                        Some("used_bytes") => used as f64,
                        Some(_) => total as f64,
                        None => btrfs_ratio(layout, devices),
                    };
                    let labels = [
                        ("uuid", u.as_str()),
                        ("block_group_type", t),
                        ("mode", layout),
                    ];
                    gauge_l(&mut m, &labels, v)?;
                }
            }
        }
    }
    // Devices: the ioctls' where there are any, else sysfs's sizes; each
    // filesystem's ioctl lines parsed once.
    let devices: Vec<(String, Vec<IoctlDevice>)> = filesystems
        .iter()
        .map(|f| {
            let devs = f
                .attrs
                .iter()
                .filter_map(|(k, v)| IoctlDevice::parse(k.strip_prefix("ioctl:")?, v))
                .collect();
            (uuid(f), devs)
        })
        .collect();
    let base = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
    {
        let mut m = out.family(&NODE_BTRFS_DEVICE_SIZE_BYTES)?;
        for (f, (u, devs)) in filesystems.iter().zip(&devices) {
            if devs.is_empty() {
                for d in f.children("devices") {
                    if let Some(sectors) = f.uint(&format!("devices/{d}/size")) {
                        let labels = [("uuid", u.as_str()), ("device", d)];
                        gauge_l(&mut m, &labels, (sectors * 512) as f64)?;
                    }
                }
            }
            for d in devs {
                let dev = base(&d.path);
                let labels = [
                    ("uuid", u.as_str()),
                    ("device", dev.as_str()),
                    ("btrfs_dev_uuid", d.uuid.as_str()),
                ];
                gauge_l(&mut m, &labels, d.total_bytes as f64)?;
            }
        }
    }
    {
        let mut m = out.family(&NODE_BTRFS_DEVICE_UNUSED_BYTES)?;
        for (u, devs) in &devices {
            for d in devs {
                let dev = base(&d.path);
                let labels = [
                    ("uuid", u.as_str()),
                    ("device", dev.as_str()),
                    ("btrfs_dev_uuid", d.uuid.as_str()),
                ];
                gauge_l(
                    &mut m,
                    &labels,
                    d.total_bytes.saturating_sub(d.bytes_used) as f64,
                )?;
            }
        }
    }
    let mut m = out.family(&NODE_BTRFS_DEVICE_ERRORS_TOTAL)?;
    for (u, devs) in &devices {
        for d in devs {
            let dev = base(&d.path);
            for (kind, v) in ["write", "read", "flush", "corruption", "generation"]
                .iter()
                .zip(d.errors)
            {
                let labels = [
                    ("uuid", u.as_str()),
                    ("type", kind),
                    ("device", dev.as_str()),
                    ("btrfs_dev_uuid", d.uuid.as_str()),
                ];
                counter_l(&mut m, &labels, v as f64)?;
            }
        }
    }
    Ok(())
}

/// node_exporter's bcache: per cache set, per backing device (`bdevN`),
/// per cache device (`cacheN`); sizes dehumanized as it does (and the
/// btree read time, printed in microseconds, scaled by 1e-9 as it does).
fn bcache(out: &mut Out<'_>, sets: &[ClassDevice]) -> Fmt {
    use procfs::class::dehumanize;
    let num = |d: &ClassDevice, k: &str| -> Option<f64> {
        let v = d.get(k)?;
        dehumanize(v.strip_suffix("/sec").unwrap_or(v)).map(|x| x as f64)
    };
    let set_fields: [(&'static Family, &str, f64); 10] = [
        (
            &NODE_BCACHE_AVERAGE_KEY_SIZE_SECTORS,
            "average_key_size",
            1.0,
        ),
        (&NODE_BCACHE_BTREE_CACHE_SIZE_BYTES, "btree_cache_size", 1.0),
        (
            &NODE_BCACHE_CACHE_AVAILABLE_PERCENT,
            "cache_available_percent",
            1.0,
        ),
        (&NODE_BCACHE_CONGESTED, "congested", 1.0),
        (&NODE_BCACHE_ROOT_USAGE_PERCENT, "root_usage_percent", 1.0),
        (&NODE_BCACHE_TREE_DEPTH, "tree_depth", 1.0),
        (
            &NODE_BCACHE_ACTIVE_JOURNAL_ENTRIES,
            "internal/active_journal_entries",
            1.0,
        ),
        (&NODE_BCACHE_BTREE_NODES, "internal/btree_nodes", 1.0),
        (
            &NODE_BCACHE_BTREE_READ_AVERAGE_DURATION_SECONDS,
            "internal/btree_read_average_duration_us",
            1e-9,
        ),
        (
            &NODE_BCACHE_CACHE_READ_RACES_TOTAL,
            "internal/cache_read_races",
            1.0,
        ),
    ];
    for (f, attr, scale) in set_fields {
        let mut m = out.family(f)?;
        for s in sets {
            if let Some(v) = num(s, attr) {
                super::out::sample_l(&mut m, &[("uuid", s.name.as_str())], v * scale)?;
            }
        }
    }
    let bdev_fields: [(&'static Family, &str); 13] = [
        (&NODE_BCACHE_DIRTY_DATA_BYTES, "dirty_data"),
        (
            &NODE_BCACHE_DIRTY_TARGET_BYTES,
            "writeback_rate_debug:target:",
        ),
        (&NODE_BCACHE_WRITEBACK_RATE, "writeback_rate_debug:rate:"),
        (
            &NODE_BCACHE_WRITEBACK_RATE_PROPORTINAL_TERM,
            "writeback_rate_debug:proportional:",
        ),
        (
            &NODE_BCACHE_WRITEBACK_RATE_INTEGRAL_TERM,
            "writeback_rate_debug:integral:",
        ),
        (
            &NODE_BCACHE_WRITEBACK_CHANGE,
            "writeback_rate_debug:change:",
        ),
        (&NODE_BCACHE_BYPASSED_BYTES_TOTAL, "stats_total/bypassed"),
        (&NODE_BCACHE_CACHE_HITS_TOTAL, "stats_total/cache_hits"),
        (&NODE_BCACHE_CACHE_MISSES_TOTAL, "stats_total/cache_misses"),
        (
            &NODE_BCACHE_CACHE_BYPASS_HITS_TOTAL,
            "stats_total/cache_bypass_hits",
        ),
        (
            &NODE_BCACHE_CACHE_BYPASS_MISSES_TOTAL,
            "stats_total/cache_bypass_misses",
        ),
        (
            &NODE_BCACHE_CACHE_MISS_COLLISIONS_TOTAL,
            "stats_total/cache_miss_collisions",
        ),
        (
            &NODE_BCACHE_CACHE_READAHEADS_TOTAL,
            "stats_total/cache_readaheads",
        ),
    ];
    let cache_fields: [(&'static Family, &str); 3] = [
        (&NODE_BCACHE_IO_ERRORS, "io_errors"),
        (
            &NODE_BCACHE_METADATA_WRITTEN_BYTES_TOTAL,
            "metadata_written",
        ),
        (&NODE_BCACHE_WRITTEN_BYTES_TOTAL, "written"),
    ];
    for (prefix, label, fields) in [
        ("bdev", "backing_device", &bdev_fields[..]),
        ("cache", "cache_device", &cache_fields[..]),
    ] {
        for (f, attr) in fields {
            let mut m = out.family(f)?;
            for s in sets {
                let numbered = |c: &&str| {
                    c.strip_prefix(prefix)
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                };
                for dev in s.children("").into_iter().filter(numbered) {
                    let key = format!("{dev}/{attr}");
                    if let Some(v) = num(s, &key) {
                        let labels = [("uuid", s.name.as_str()), (label, dev)];
                        super::out::sample_l(&mut m, &labels, v)?;
                    }
                }
            }
        }
    }
    Ok(())
}
