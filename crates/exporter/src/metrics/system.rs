//! The system families, from the latest raw sample, units converted by
//! `model::units`.

use model::units::{ms_to_secs, ns_to_secs, sectors_to_bytes, ticks_to_secs, us_to_secs};
use procfs::pressure::Resource;
use procfs::stat::CpuMode;
use procfs::{Source, SystemSample};

use super::compat::{SOFTIRQ_VECTORS, cpu_modes, disk_excluded, meminfo_family, vmstat_exported};
use super::families::*;
use super::out::{Fmt, Out, counter_l, gauge_l, one, sample_l};

pub(super) fn system(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    if s.ok(Source::Stat) {
        let st = &s.stat;
        let mut m = out.family(&NODE_CPU_SECONDS_TOTAL)?;
        for c in &st.cpus {
            let cpu = c.cpu.to_string();
            for (mode, ticks) in cpu_modes(&c.times) {
                counter_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("mode", mode)],
                    ticks_to_secs(ticks),
                )?;
            }
        }
        let mut m = out.family(&NODE_CPU_GUEST_SECONDS_TOTAL)?;
        for c in &st.cpus {
            let cpu = c.cpu.to_string();
            for (mode, m2) in [("user", CpuMode::Guest), ("nice", CpuMode::GuestNice)] {
                if let Some(t) = c.times.ticks(m2) {
                    counter_l(
                        &mut m,
                        &[("cpu", cpu.as_str()), ("mode", mode)],
                        ticks_to_secs(t),
                    )?;
                }
            }
        }
        one(out, &NODE_INTR_TOTAL, st.intr_total as f64)?;
        one(out, &NODE_CONTEXT_SWITCHES_TOTAL, st.ctxt as f64)?;
        one(out, &NODE_FORKS_TOTAL, st.processes as f64)?;
        one(out, &NODE_BOOT_TIME_SECONDS, st.btime_secs as f64)?;
        if let Some(r) = st.procs_running {
            one(out, &NODE_PROCS_RUNNING, r as f64)?;
        }
        if let Some(b) = st.procs_blocked {
            one(out, &NODE_PROCS_BLOCKED, b as f64)?;
        }
        if !st.softirq_counts.is_empty() {
            let mut m = out.family(&NODE_SOFTIRQS_TOTAL)?;
            for (v, n) in SOFTIRQ_VECTORS.iter().zip(&st.softirq_counts) {
                counter_l(&mut m, &[("vector", *v)], *n as f64)?;
            }
        }
    }
    if s.ok(Source::CpuIsolated) && !s.cpu_isolated.cpus().is_empty() {
        let mut m = out.family(&NODE_CPU_ISOLATED)?;
        for c in s.cpu_isolated.cpus() {
            gauge_l(&mut m, &[("cpu", c.to_string().as_str())], 1.0)?;
        }
    }
    if s.ok(Source::Loadavg) {
        one(out, &NODE_LOAD1, s.loadavg.load1)?;
        one(out, &NODE_LOAD5, s.loadavg.load5)?;
        one(out, &NODE_LOAD15, s.loadavg.load15)?;
    }
    if s.ok(Source::Meminfo) {
        let (mut part, mut name) = (String::new(), String::new());
        for (k, v) in s.meminfo.all().iter() {
            let f = meminfo_family(k, &mut part);
            let mut m = out.family_of(f, &part, &mut name)?;
            m.encode_gauge(&(v as f64))?;
        }
    }
    if s.ok(Source::Vmstat) {
        let mut name = String::new();
        for (k, v) in s.vmstat.all().iter().filter(|(k, _)| vmstat_exported(k)) {
            let mut m = out.family_of(&NODE_VMSTAT, k, &mut name)?;
            m.encode_gauge(&(v as f64))?;
        }
    }
    for (r, waiting, stalled) in [
        (
            Resource::Cpu,
            Some(&NODE_PRESSURE_CPU_WAITING_SECONDS_TOTAL),
            None,
        ),
        (
            Resource::Memory,
            Some(&NODE_PRESSURE_MEMORY_WAITING_SECONDS_TOTAL),
            Some(&NODE_PRESSURE_MEMORY_STALLED_SECONDS_TOTAL),
        ),
        (
            Resource::Io,
            Some(&NODE_PRESSURE_IO_WAITING_SECONDS_TOTAL),
            Some(&NODE_PRESSURE_IO_STALLED_SECONDS_TOTAL),
        ),
        (
            Resource::Irq,
            None,
            Some(&NODE_PRESSURE_IRQ_STALLED_SECONDS_TOTAL),
        ),
    ] {
        let Some(p) = s.pressure(r) else { continue };
        if let (Some(n), Some(l)) = (waiting, p.some) {
            one(out, n, us_to_secs(l.total_usec))?;
        }
        if let (Some(n), Some(l)) = (stalled, p.full) {
            one(out, n, us_to_secs(l.total_usec))?;
        }
    }
    if s.ok(Source::Diskstats) {
        disks(out, s)?;
    }
    if s.ok(Source::NetDev) {
        net(out, s)?;
    }
    if s.ok(Source::Interrupts) {
        let t = &s.interrupts;
        let cpus: Vec<String> = t.cpus().iter().map(u32::to_string).collect();
        let per_cpu =
            |r: &procfs::Row<'_>| r.counts.len() >= cpus.len() && !r.description.is_empty();
        let mut m = out.family(&NODE_INTERRUPTS_TOTAL)?;
        for row in t.rows().filter(per_cpu) {
            // node_exporter: for a numbered IRQ, `info` is the chip (first
            // word after the counts) and `devices` the rest; for a named one
            // (NMI, LOC) `info` is the whole description.
            let mut words = row.description.split_whitespace();
            let numbered = row.label.bytes().all(|b| b.is_ascii_digit());
            let (info, devices) = if numbered {
                let info = words.next().unwrap_or("").to_string();
                (info, words.collect::<Vec<_>>().join(" "))
            } else {
                (words.collect::<Vec<_>>().join(" "), String::new())
            };
            for (cpu, n) in cpus.iter().zip(row.counts) {
                counter_l(
                    &mut m,
                    &[
                        ("cpu", cpu.as_str()),
                        ("devices", devices.as_str()),
                        ("info", info.as_str()),
                        ("type", row.label),
                    ],
                    *n as f64,
                )?;
            }
        }
    }
    if s.ok(Source::Interrupts)
        && s.interrupts
            .rows()
            .any(|r| r.counts.len() < s.interrupts.cpus().len() || r.description.is_empty())
    {
        // ERR and MIS: one system-wide count, no description; node_exporter
        // drops them.
        let mut m = out.family(&QUIETSTAT_INTERRUPTS_UNSPLIT_TOTAL)?;
        for row in s.interrupts.rows() {
            if row.counts.len() < s.interrupts.cpus().len() || row.description.is_empty() {
                counter_l(&mut m, &[("type", row.label)], row.total as f64)?;
            }
        }
    }
    if s.ok(Source::Softirqs) {
        let t = &s.softirqs;
        let cpus: Vec<String> = t.cpus().iter().map(u32::to_string).collect();
        let mut m = out.family(&QUIETSTAT_SOFTIRQS_CPU_TOTAL)?;
        for row in t.rows() {
            let vector = row.label.to_ascii_lowercase();
            for (cpu, n) in cpus.iter().zip(row.counts) {
                counter_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("vector", vector.as_str())],
                    *n as f64,
                )?;
            }
        }
    }
    if s.ok(Source::Schedstat) {
        for (name, f) in [
            (&NODE_SCHEDSTAT_RUNNING_SECONDS_TOTAL, 0),
            (&NODE_SCHEDSTAT_WAITING_SECONDS_TOTAL, 1),
            (&NODE_SCHEDSTAT_TIMESLICES_TOTAL, 2),
        ] {
            let mut m = out.family(name)?;
            for c in &s.schedstat.cpus {
                let v = match f {
                    0 => ns_to_secs(c.running_ns),
                    1 => ns_to_secs(c.waiting_ns),
                    _ => c.timeslices as f64,
                };
                counter_l(&mut m, &[("cpu", c.cpu.to_string().as_str())], v)?;
            }
        }
    }
    Ok(())
}

fn disks(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    use procfs::diskstats::DiskStat;
    type Get = fn(&DiskStat) -> Option<f64>;
    let fields: [(&Family, Get); 17] = [
        (&NODE_DISK_READS_COMPLETED_TOTAL, |d| {
            Some(d.reads_completed as f64)
        }),
        (&NODE_DISK_READS_MERGED_TOTAL, |d| {
            Some(d.reads_merged as f64)
        }),
        (&NODE_DISK_READ_BYTES_TOTAL, |d| {
            Some(sectors_to_bytes(d.read_sectors) as f64)
        }),
        (&NODE_DISK_READ_TIME_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.read_time_ms))
        }),
        (&NODE_DISK_WRITES_COMPLETED_TOTAL, |d| {
            Some(d.writes_completed as f64)
        }),
        (&NODE_DISK_WRITES_MERGED_TOTAL, |d| {
            Some(d.writes_merged as f64)
        }),
        (&NODE_DISK_WRITTEN_BYTES_TOTAL, |d| {
            Some(sectors_to_bytes(d.write_sectors) as f64)
        }),
        (&NODE_DISK_WRITE_TIME_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.write_time_ms))
        }),
        (&NODE_DISK_IO_NOW, |d| Some(d.io_in_progress as f64)),
        (&NODE_DISK_IO_TIME_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.io_time_ms))
        }),
        (&NODE_DISK_IO_TIME_WEIGHTED_SECONDS_TOTAL, |d| {
            Some(ms_to_secs(d.io_weighted_time_ms))
        }),
        (&NODE_DISK_DISCARDS_COMPLETED_TOTAL, |d| {
            d.discards_completed.map(|v| v as f64)
        }),
        (&NODE_DISK_DISCARDS_MERGED_TOTAL, |d| {
            d.discards_merged.map(|v| v as f64)
        }),
        (&NODE_DISK_DISCARDED_SECTORS_TOTAL, |d| {
            d.discard_sectors.map(|v| v as f64)
        }),
        (&NODE_DISK_DISCARD_TIME_SECONDS_TOTAL, |d| {
            d.discard_time_ms.map(ms_to_secs)
        }),
        (&NODE_DISK_FLUSH_REQUESTS_TOTAL, |d| {
            d.flushes_completed.map(|v| v as f64)
        }),
        (&NODE_DISK_FLUSH_REQUESTS_TIME_SECONDS_TOTAL, |d| {
            d.flush_time_ms.map(ms_to_secs)
        }),
    ];
    let disks: Vec<(String, &DiskStat)> = s
        .diskstats
        .iter()
        .map(|d| (d.name.to_string(), d))
        .filter(|(n, _)| !disk_excluded(n))
        .collect();
    {
        // udev's labels where its database has the device, empty otherwise
        // (as node_exporter).
        let udev = if s.ok(Source::Udev) { &s.udev[..] } else { &[] };
        let mut m = out.family(&NODE_DISK_INFO)?;
        for (dev, d) in &disks {
            let u = udev
                .iter()
                .find(|u| u.major == d.major && u.minor == d.minor);
            let get = |k: &str| u.map_or("", |u| u.get(k));
            let (major, minor) = (d.major.to_string(), d.minor.to_string());
            gauge_l(
                &mut m,
                &[
                    ("device", dev.as_str()),
                    ("major", major.as_str()),
                    ("minor", minor.as_str()),
                    ("path", get("ID_PATH")),
                    ("wwn", get("ID_WWN")),
                    ("model", get("ID_MODEL")),
                    ("serial", u.map_or("", |u| u.serial())),
                    ("revision", get("ID_REVISION")),
                ],
                1.0,
            )?;
        }
    }
    for (name, get) in fields {
        if disks.iter().all(|(_, d)| get(d).is_none()) {
            continue;
        }
        let mut m = out.family(name)?;
        for (dev, d) in &disks {
            if let Some(v) = get(d) {
                sample_l(&mut m, &[("device", dev.as_str())], v)?;
            }
        }
    }
    Ok(())
}

fn net(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    use procfs::net_dev::NetDev;
    type Get = fn(&NetDev) -> u64;
    let fields: [(&Family, &str, Get); 16] = [
        (&NODE_NETWORK_RECEIVE_TOTAL, "bytes", |d| d.rx_bytes),
        (&NODE_NETWORK_RECEIVE_TOTAL, "packets", |d| d.rx_packets),
        (&NODE_NETWORK_RECEIVE_TOTAL, "errs", |d| d.rx_errs),
        (&NODE_NETWORK_RECEIVE_TOTAL, "drop", |d| d.rx_drop),
        (&NODE_NETWORK_RECEIVE_TOTAL, "fifo", |d| d.rx_fifo),
        (&NODE_NETWORK_RECEIVE_TOTAL, "frame", |d| d.rx_frame),
        (&NODE_NETWORK_RECEIVE_TOTAL, "compressed", |d| {
            d.rx_compressed
        }),
        (&NODE_NETWORK_RECEIVE_TOTAL, "multicast", |d| d.rx_multicast),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "bytes", |d| d.tx_bytes),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "packets", |d| d.tx_packets),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "errs", |d| d.tx_errs),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "drop", |d| d.tx_drop),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "fifo", |d| d.tx_fifo),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "colls", |d| d.tx_colls),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "carrier", |d| d.tx_carrier),
        (&NODE_NETWORK_TRANSMIT_TOTAL, "compressed", |d| {
            d.tx_compressed
        }),
    ];
    let devs: Vec<(String, &NetDev)> = s.net_dev.iter().map(|d| (d.name.to_string(), d)).collect();
    let mut name = String::new();
    for (f, key, get) in fields {
        let mut m = out.family_of(f, key, &mut name)?;
        for (dev, d) in &devs {
            counter_l(&mut m, &[("device", dev.as_str())], get(d) as f64)?;
        }
    }
    Ok(())
}
