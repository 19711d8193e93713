//! The gathered sources and small network tables under node_exporter's
//! names: netclass, filesystem, time, timex, os, selinux, arp, udp_queues,
//! conntrack.

use procfs::{Source, SystemSample};

use super::families::*;
use super::out::{Fmt, Out, gauge_l, info, one, sample_l};

pub(super) fn node(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    if s.ok(Source::Netclass) {
        netclass(out, s)?;
    }
    if s.ok(Source::Filesystem) {
        filesystem(out, s)?;
    }
    if s.ok(Source::Time) {
        time(out, s)?;
    }
    if s.ok(Source::Timex) {
        timex(out, &s.timex)?;
    }
    if s.ok(Source::Os) {
        os(out, &s.os)?;
    }
    if s.ok(Source::Selinux) {
        let x = &s.selinux;
        one(out, &NODE_SELINUX_ENABLED, f64::from(u8::from(x.enabled)))?;
        if x.enabled {
            if let Some(m) = x.config_mode {
                one(out, &NODE_SELINUX_CONFIG_MODE, m as f64)?;
            }
            if let Some(m) = x.current_mode {
                one(out, &NODE_SELINUX_CURRENT_MODE, m as f64)?;
            }
        }
    }
    if s.ok(Source::Arp) {
        let mut m = out.family(&NODE_ARP_ENTRIES)?;
        for (dev, n) in &s.arp.devices {
            gauge_l(&mut m, &[("device", dev.as_str())], *n as f64)?;
        }
    }
    if s.ok(Source::UdpQueues) {
        let q = &s.udp_queues;
        let mut m = out.family(&NODE_UDP_QUEUES)?;
        let mut rows = vec![("v4", q.v4_tx, q.v4_rx)];
        if let Some((tx, rx)) = q.v6 {
            rows.push(("v6", tx, rx));
        }
        for (ip, tx, rx) in rows {
            gauge_l(&mut m, &[("ip", ip), ("queue", "tx")], tx as f64)?;
            gauge_l(&mut m, &[("ip", ip), ("queue", "rx")], rx as f64)?;
        }
    }
    if s.ok(Source::Cpufreq) {
        cpufreq(out, &s.cpufreq)?;
    }
    if s.ok(Source::ThermalZone) {
        let t = &s.thermal;
        {
            let mut m = out.family(&NODE_THERMAL_ZONE_TEMP)?;
            for z in &t.zones {
                let labels = [("zone", z.zone.as_str()), ("type", z.kind.as_str())];
                gauge_l(&mut m, &labels, z.temp_millicelsius as f64 / 1000.0)?;
            }
        }
        for (f, cur) in [
            (&NODE_COOLING_DEVICE_CUR_STATE, true),
            (&NODE_COOLING_DEVICE_MAX_STATE, false),
        ] {
            let mut m = out.family(f)?;
            for c in &t.cooling {
                let v = if cur { c.cur_state } else { c.max_state };
                gauge_l(
                    &mut m,
                    &[("name", c.name.as_str()), ("type", c.kind.as_str())],
                    v as f64,
                )?;
            }
        }
    }
    if s.ok(Source::Dmi) && !s.dmi.values.is_empty() {
        // Only the files this platform has are labels, as node_exporter.
        let labels: Vec<(&str, &str)> = s
            .dmi
            .values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        info(out, &NODE_DMI_INFO, &labels)?;
    }
    if s.ok(Source::Bonding) {
        for (f, active) in [(&NODE_BONDING_SLAVES, false), (&NODE_BONDING_ACTIVE, true)] {
            let mut m = out.family(f)?;
            for b in &s.bonding {
                let n = b
                    .slaves
                    .iter()
                    .filter(|(_, state)| !active || state == "up")
                    .count();
                gauge_l(&mut m, &[("master", b.master.as_str())], n as f64)?;
            }
        }
    }
    if s.ok(Source::Numa) {
        numa(out, &s.numa)?;
    }
    if s.ok(Source::Hwmon) {
        super::hwmon::hwmon(out, &s.hwmon)?;
    }
    if s.ok(Source::Mdstat) {
        md(out, &s.mdstat)?;
    }
    if s.ok(Source::Conntrack) {
        let c = &s.conntrack;
        one(out, &NODE_NF_CONNTRACK_ENTRIES, c.entries as f64)?;
        one(out, &NODE_NF_CONNTRACK_ENTRIES_LIMIT, c.limit as f64)?;
        if let Some(st) = &c.stats {
            for (f, v) in [
                (&NODE_NF_CONNTRACK_STAT_FOUND, st.found),
                (&NODE_NF_CONNTRACK_STAT_INVALID, st.invalid),
                (&NODE_NF_CONNTRACK_STAT_IGNORE, st.ignore),
                (&NODE_NF_CONNTRACK_STAT_INSERT, st.insert),
                (&NODE_NF_CONNTRACK_STAT_INSERT_FAILED, st.insert_failed),
                (&NODE_NF_CONNTRACK_STAT_DROP, st.drop),
                (&NODE_NF_CONNTRACK_STAT_EARLY_DROP, st.early_drop),
                (&NODE_NF_CONNTRACK_STAT_SEARCH_RESTART, st.search_restart),
            ] {
                one(out, f, v as f64)?;
            }
        }
    }
    Ok(())
}

type NetGet = fn(&procfs::netclass::NetClass) -> Option<i64>;

/// node_exporter's netclass families: `node_network_up` and `_info` for
/// every device, each property the device has (an attribute that could
/// not be read is left out, as node_exporter does).
fn netclass(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    let devs = &s.netclass;
    {
        let mut m = out.family(&NODE_NETWORK_UP)?;
        for d in devs {
            let up = f64::from(u8::from(d.operstate == "up"));
            gauge_l(&mut m, &[("device", d.device.as_str())], up)?;
        }
    }
    {
        let mut m = out.family(&NODE_NETWORK_INFO)?;
        for d in devs {
            gauge_l(
                &mut m,
                &[
                    ("device", d.device.as_str()),
                    ("address", d.address.as_str()),
                    ("broadcast", d.broadcast.as_str()),
                    ("duplex", d.duplex.as_str()),
                    ("operstate", d.operstate.as_str()),
                    ("ifalias", d.ifalias.as_str()),
                ],
                1.0,
            )?;
        }
    }
    let props: [(&'static Family, NetGet); 18] = [
        (&NODE_NETWORK_ADDRESS_ASSIGN_TYPE, |d| d.addr_assign_type),
        (&NODE_NETWORK_CARRIER, |d| d.carrier),
        (&NODE_NETWORK_CARRIER_CHANGES_TOTAL, |d| d.carrier_changes),
        (&NODE_NETWORK_CARRIER_UP_CHANGES_TOTAL, |d| {
            d.carrier_up_count
        }),
        (&NODE_NETWORK_CARRIER_DOWN_CHANGES_TOTAL, |d| {
            d.carrier_down_count
        }),
        (&NODE_NETWORK_DEVICE_ID, |d| d.dev_id),
        (&NODE_NETWORK_DORMANT, |d| d.dormant),
        (&NODE_NETWORK_FLAGS, |d| d.flags),
        (&NODE_NETWORK_IFACE_ID, |d| d.ifindex),
        (&NODE_NETWORK_IFACE_LINK, |d| d.iflink),
        (&NODE_NETWORK_IFACE_LINK_MODE, |d| d.link_mode),
        (&NODE_NETWORK_MTU_BYTES, |d| d.mtu),
        (&NODE_NETWORK_NAME_ASSIGN_TYPE, |d| d.name_assign_type),
        (&NODE_NETWORK_NET_DEV_GROUP, |d| d.netdev_group),
        // Mbit/s to bytes/s; -1 (unknown) gives -125000, as node_exporter.
        (&NODE_NETWORK_SPEED_BYTES, |d| {
            d.speed_mbps.map(|v| v * 1_000_000 / 8)
        }),
        (&NODE_NETWORK_TRANSMIT_QUEUE_LENGTH, |d| d.tx_queue_len),
        (&NODE_NETWORK_PROTOCOL_TYPE, |d| d.protocol_type),
        (&NODE_NETWORK_RECEIVE_NOHANDLER_TOTAL, |d| d.rx_nohandler),
    ];
    for (f, get) in props {
        if !devs.iter().any(|d| get(d).is_some()) {
            continue;
        }
        let mut m = out.family(f)?;
        for d in devs {
            if let Some(v) = get(d) {
                sample_l(&mut m, &[("device", d.device.as_str())], v as f64)?;
            }
        }
    }
    Ok(())
}

type MountGet = fn(&procfs::filesystem::Mount) -> f64;

/// `node_filesystem_*`: `device_error` for every mount, the figures only
/// for those statfs answered (as node_exporter).
fn filesystem(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    let mounts = &s.filesystem;
    let labels = |m: &procfs::filesystem::Mount| {
        [
            ("device", m.device.clone()),
            ("fstype", m.fstype.clone()),
            ("mountpoint", m.mountpoint.clone()),
        ]
    };
    {
        let mut f = out.family(&NODE_FILESYSTEM_DEVICE_ERROR)?;
        for m in mounts {
            gauge_l(&mut f, &labels(m), f64::from(u8::from(m.error.is_some())))?;
        }
    }
    let figures: [(&'static Family, MountGet); 6] = [
        (&NODE_FILESYSTEM_SIZE_BYTES, |m| m.size_bytes as f64),
        (&NODE_FILESYSTEM_FREE_BYTES, |m| m.free_bytes as f64),
        (&NODE_FILESYSTEM_AVAIL_BYTES, |m| m.avail_bytes as f64),
        (&NODE_FILESYSTEM_FILES, |m| m.files as f64),
        (&NODE_FILESYSTEM_FILES_FREE, |m| m.files_free as f64),
        (&NODE_FILESYSTEM_READONLY, |m| {
            f64::from(u8::from(m.readonly))
        }),
    ];
    for (f, get) in figures {
        let mut fam = out.family(f)?;
        for m in mounts.iter().filter(|m| m.error.is_none()) {
            gauge_l(&mut fam, &labels(m), get(m))?;
        }
    }
    Ok(())
}

fn time(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    let t = &s.time;
    // The clock as the scrape is answered (node_exporter's meaning; a
    // value as old as the source's interval would read as clock skew).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    one(out, &NODE_TIME_SECONDS, now)?;
    {
        let mut m = out.family(&NODE_TIME_ZONE_OFFSET_SECONDS)?;
        gauge_l(
            &mut m,
            &[("time_zone", t.zone.as_str())],
            t.zone_offset_secs as f64,
        )?;
    }
    {
        let mut m = out.family(&NODE_TIME_CLOCKSOURCE_AVAILABLE_INFO)?;
        for c in &t.clocksources {
            for a in &c.available {
                gauge_l(
                    &mut m,
                    &[("device", c.device.as_str()), ("clocksource", a.as_str())],
                    1.0,
                )?;
            }
        }
    }
    let mut m = out.family(&NODE_TIME_CLOCKSOURCE_CURRENT_INFO)?;
    for c in t.clocksources.iter().filter(|c| !c.current.is_empty()) {
        gauge_l(
            &mut m,
            &[
                ("device", c.device.as_str()),
                ("clocksource", c.current.as_str()),
            ],
            1.0,
        )?;
    }
    Ok(())
}

/// node_exporter's conversions of adjtimex(2)'s fields.
fn timex(out: &mut Out<'_>, t: &procfs::time::Timex) -> Fmt {
    use procfs::time::{STA_NANO, TIME_ERROR};
    // ppm with a 16-bit fraction, to a ratio.
    const PPM16: f64 = 1_000_000.0 * 65_536.0;
    let divisor = if t.status & STA_NANO != 0 { 1e9 } else { 1e6 };
    let sync = f64::from(u8::from(t.state != TIME_ERROR));
    for (f, v) in [
        (&NODE_TIMEX_SYNC_STATUS, sync),
        (&NODE_TIMEX_OFFSET_SECONDS, t.offset as f64 / divisor),
        (
            &NODE_TIMEX_FREQUENCY_ADJUSTMENT_RATIO,
            1.0 + t.freq as f64 / PPM16,
        ),
        (&NODE_TIMEX_MAXERROR_SECONDS, t.maxerror_us as f64 / 1e6),
        (
            &NODE_TIMEX_ESTIMATED_ERROR_SECONDS,
            t.esterror_us as f64 / 1e6,
        ),
        (&NODE_TIMEX_STATUS, t.status as f64),
        (&NODE_TIMEX_LOOP_TIME_CONSTANT, t.constant as f64),
        (&NODE_TIMEX_TICK_SECONDS, t.tick_us as f64 / 1e6),
        (&NODE_TIMEX_PPS_FREQUENCY_HERTZ, t.ppsfreq as f64 / PPM16),
        (&NODE_TIMEX_PPS_JITTER_SECONDS, t.jitter as f64 / divisor),
        (&NODE_TIMEX_PPS_SHIFT_SECONDS, t.shift as f64),
        (&NODE_TIMEX_PPS_STABILITY_HERTZ, t.stabil as f64 / PPM16),
        (&NODE_TIMEX_PPS_JITTER_TOTAL, t.jitcnt as f64),
        (&NODE_TIMEX_PPS_CALIBRATION_TOTAL, t.calcnt as f64),
        (&NODE_TIMEX_PPS_ERROR_TOTAL, t.errcnt as f64),
        (&NODE_TIMEX_PPS_STABILITY_EXCEEDED_TOTAL, t.stbcnt as f64),
        (&NODE_TIMEX_TAI_OFFSET_SECONDS, t.tai as f64),
    ] {
        one(out, f, v)?;
    }
    Ok(())
}

fn os(out: &mut Out<'_>, o: &procfs::os_release::OsRelease) -> Fmt {
    {
        let keys = [
            ("build_id", "BUILD_ID"),
            ("id", "ID"),
            ("id_like", "ID_LIKE"),
            ("image_id", "IMAGE_ID"),
            ("image_version", "IMAGE_VERSION"),
            ("name", "NAME"),
            ("pretty_name", "PRETTY_NAME"),
            ("variant", "VARIANT"),
            ("variant_id", "VARIANT_ID"),
            ("version", "VERSION"),
            ("version_codename", "VERSION_CODENAME"),
            ("version_id", "VERSION_ID"),
        ];
        let labels: Vec<(&str, &str)> = keys.iter().map(|(l, k)| (*l, o.get(k))).collect();
        info(out, &NODE_OS_INFO, &labels)?;
    }
    if let Some(v) = o.version() {
        let mut m = out.family(&NODE_OS_VERSION)?;
        gauge_l(
            &mut m,
            &[
                ("id", o.get("ID")),
                ("id_like", o.get("ID_LIKE")),
                ("name", o.get("NAME")),
            ],
            v,
        )?;
    }
    Ok(())
}

/// The textfile families, re-exported as written, and
/// `node_textfile_scrape_error` / `_mtime_seconds`. Counters named
/// `*_total`, gauges and untyped families keep their type; a counter
/// without `_total` (which the OpenMetrics encoder would rename) and the
/// series of histograms and summaries (`_bucket`, `_sum`, `_count`,
/// quantiles) are exported untyped under their own names, so queries
/// (`rate`, `histogram_quantile`) work unchanged. A family whose name is
/// one of the agent's fails its file.
pub(super) fn textfile(out: &mut Out<'_>, t: &procfs::textfile::Textfile) -> Fmt {
    use procfs::textfile::TextKind;
    use prometheus_client::metrics::MetricType;
    let collides = |name: &str| super::families::family(name).is_some();
    let clash: Vec<&str> = t
        .families
        .iter()
        .filter(|f| {
            f.series
                .iter()
                .any(|s| collides(&format!("{}{}", f.name, s.suffix)))
        })
        .map(|f| f.name.as_str())
        .collect();
    let error = t.error() || !clash.is_empty();
    one(out, &NODE_TEXTFILE_SCRAPE_ERROR, f64::from(u8::from(error)))?;
    {
        let mut m = out.family(&NODE_TEXTFILE_MTIME_SECONDS)?;
        for f in t.files.iter().filter(|f| f.error.is_none()) {
            gauge_l(&mut m, &[("file", f.path.as_str())], f.mtime_secs)?;
        }
    }
    let mut name = String::new();
    for f in t
        .families
        .iter()
        .filter(|f| !clash.contains(&f.name.as_str()))
    {
        for suffix in ["", "_bucket", "_sum", "_count"] {
            let series: Vec<_> = f.series.iter().filter(|s| s.suffix == suffix).collect();
            if series.is_empty() {
                continue;
            }
            name.clear();
            name.push_str(&f.name);
            name.push_str(suffix);
            let (n, t) = match (f.kind, suffix) {
                (TextKind::Counter, "") if name.ends_with("_total") => {
                    (&name[..name.len() - "_total".len()], MetricType::Counter)
                }
                (TextKind::Gauge, "") => (name.as_str(), MetricType::Gauge),
                _ => (name.as_str(), MetricType::Unknown),
            };
            let mut m = out.enc.encode_descriptor(n, &f.help, None, t)?;
            for s in series {
                let labels: Vec<(&str, &str)> = s
                    .labels
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                match (t, labels.is_empty()) {
                    (MetricType::Counter, true) => super::out::counter(&mut m, s.value)?,
                    (MetricType::Counter, false) => {
                        super::out::counter_l(&mut m, &labels, s.value)?
                    }
                    (_, true) => m.encode_gauge(&s.value)?,
                    (_, false) => gauge_l(&mut m, &labels, s.value)?,
                }
            }
        }
    }
    Ok(())
}

type FreqGet = fn(&procfs::hardware::CpuFreq) -> Option<u64>;

/// node_exporter's cpufreq families (kHz in sysfs, hertz here), each for
/// the CPUs that have the file.
fn cpufreq(out: &mut Out<'_>, cpus: &[procfs::hardware::CpuFreq]) -> Fmt {
    let figures: [(&'static Family, FreqGet); 6] = [
        (&NODE_CPU_FREQUENCY_HERTZ, |c| c.cpuinfo_cur_khz),
        (&NODE_CPU_FREQUENCY_MIN_HERTZ, |c| c.cpuinfo_min_khz),
        (&NODE_CPU_FREQUENCY_MAX_HERTZ, |c| c.cpuinfo_max_khz),
        (&NODE_CPU_SCALING_FREQUENCY_HERTZ, |c| c.scaling_cur_khz),
        (&NODE_CPU_SCALING_FREQUENCY_MIN_HERTZ, |c| c.scaling_min_khz),
        (&NODE_CPU_SCALING_FREQUENCY_MAX_HERTZ, |c| c.scaling_max_khz),
    ];
    for (f, get) in figures {
        if cpus.iter().all(|c| get(c).is_none()) {
            continue;
        }
        let mut m = out.family(f)?;
        for c in cpus {
            if let Some(khz) = get(c) {
                let cpu = c.cpu.to_string();
                gauge_l(&mut m, &[("cpu", cpu.as_str())], khz as f64 * 1000.0)?;
            }
        }
    }
    if cpus.iter().any(|c| !c.governor.is_empty()) {
        let mut m = out.family(&NODE_CPU_SCALING_GOVERNOR)?;
        for c in cpus.iter().filter(|c| !c.governor.is_empty()) {
            let cpu = c.cpu.to_string();
            for g in &c.available_governors {
                let on = f64::from(u8::from(*g == c.governor));
                gauge_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("governor", g.as_str())],
                    on,
                )?;
            }
        }
    }
    Ok(())
}

/// node_exporter's mdadm families: one `node_md_state` series per state
/// (1 for the device's), disks by state, blocks.
fn md(out: &mut Out<'_>, devs: &[procfs::mdstat::MdDevice]) -> Fmt {
    {
        let mut m = out.family(&NODE_MD_DISKS_REQUIRED)?;
        for d in devs {
            gauge_l(
                &mut m,
                &[("device", d.name.as_str())],
                d.disks_required as f64,
            )?;
        }
    }
    {
        let mut m = out.family(&NODE_MD_DISKS)?;
        for d in devs {
            for (state, n) in [
                ("active", d.disks_active),
                ("failed", d.disks_failed),
                ("spare", d.disks_spare),
            ] {
                gauge_l(
                    &mut m,
                    &[("device", d.name.as_str()), ("state", state)],
                    n as f64,
                )?;
            }
        }
    }
    {
        let mut m = out.family(&NODE_MD_STATE)?;
        for d in devs {
            for (label, state) in [
                ("active", "active"),
                ("inactive", "inactive"),
                ("recovering", "recovering"),
                ("resync", "resyncing"),
                ("check", "checking"),
            ] {
                let on = f64::from(u8::from(d.state == state));
                gauge_l(&mut m, &[("device", d.name.as_str()), ("state", label)], on)?;
            }
        }
    }
    for (f, synced) in [(&NODE_MD_BLOCKS, false), (&NODE_MD_BLOCKS_SYNCED, true)] {
        let mut m = out.family(f)?;
        for d in devs {
            let v = if synced { d.blocks_synced } else { d.blocks };
            gauge_l(&mut m, &[("device", d.name.as_str())], v as f64)?;
        }
    }
    Ok(())
}

/// node_exporter's meminfo_numa: `node_memory_numa_<Key>{node}` per meminfo
/// line (in bytes, without the suffix, as node_exporter names them) and
/// `node_memory_numa_<key>_total{node}` per numastat counter.
fn numa(out: &mut Out<'_>, nodes: &[procfs::numa::NumaNode]) -> Fmt {
    use std::collections::BTreeMap;
    type Series<'a> = BTreeMap<&'a str, Vec<(String, u64)>>;
    let (mut mem, mut stat): (Series, Series) = (BTreeMap::new(), BTreeMap::new());
    for n in nodes {
        for (k, v) in &n.meminfo {
            mem.entry(k.as_str())
                .or_default()
                .push((n.node.to_string(), *v));
        }
        for (k, v) in &n.numastat {
            stat.entry(k.as_str())
                .or_default()
                .push((n.node.to_string(), *v));
        }
    }
    let mut name = String::new();
    for (f, series) in [(&NODE_MEMORY_NUMA, &mem), (&NODE_MEMORY_NUMA_TOTAL, &stat)] {
        for (key, rows) in series {
            let help = format!("Memory information field {key}.");
            f.instance_into(key, &mut name);
            let mut m = out.family_named(f, &name, &help)?;
            for (node, v) in rows {
                sample_l(&mut m, &[("node", node.as_str())], *v as f64)?;
            }
        }
    }
    Ok(())
}
