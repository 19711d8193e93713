//! The memory manager's detail under node_exporter's names: buddyinfo,
//! zoneinfo, slabinfo, ksmd, kernel_hung, the limits of processes, and
//! `node_cpu_info`.

use procfs::mm::{BuddyZone, Ksm, Slab, Zone};
use procfs::{Source, SystemSample};

use super::compat::ZONEINFO;
use super::families::*;
use super::out::{Fmt, Out, gauge_l, one, sample_l};

pub(super) fn mm(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    if s.ok(Source::Buddyinfo) {
        buddyinfo(out, &s.buddyinfo)?;
    }
    if s.ok(Source::Zoneinfo) {
        zoneinfo(out, &s.zoneinfo)?;
    }
    if s.ok(Source::Slabinfo) {
        slabinfo(out, &s.slabinfo)?;
    }
    if s.ok(Source::Ksm) {
        ksm(out, &s.ksm)?;
    }
    if s.ok(Source::TaskLimits) {
        let l = &s.task_limits;
        one(out, &NODE_PROCESSES_MAX_PROCESSES, l.pid_max as f64)?;
        one(out, &NODE_PROCESSES_MAX_THREADS, l.threads_max as f64)?;
    }
    if s.ok(Source::Cpuinfo) {
        let mut m = out.family(&NODE_CPU_INFO)?;
        for c in &s.cpuinfo {
            let cpu = c.processor.to_string();
            let labels = [
                ("package", c.physical_id.as_str()),
                ("core", c.core_id.as_str()),
                ("cpu", cpu.as_str()),
                ("vendor", c.vendor_id.as_str()),
                ("family", c.cpu_family.as_str()),
                ("model", c.model.as_str()),
                ("model_name", c.model_name.as_str()),
                ("microcode", c.microcode.as_str()),
                ("stepping", c.stepping.as_str()),
                ("cachesize", c.cache_size.as_str()),
            ];
            gauge_l(&mut m, &labels, 1.0)?;
        }
    }
    if s.ok(Source::KernelHung) {
        one(
            out,
            &NODE_KERNEL_HUNG_TASK_DETECT_COUNT,
            s.hung_tasks as f64,
        )?;
    }
    Ok(())
}

fn buddyinfo(out: &mut Out<'_>, zones: &[BuddyZone]) -> Fmt {
    let mut m = out.family(&NODE_BUDDYINFO_BLOCKS)?;
    for z in zones {
        let node = z.node.to_string();
        for (order, n) in z.free.iter().enumerate() {
            let size = order.to_string();
            let labels = [
                ("node", node.as_str()),
                ("zone", z.zone.as_str()),
                ("size", size.as_str()),
            ];
            gauge_l(&mut m, &labels, *n as f64)?;
        }
    }
    Ok(())
}

/// One family per zoneinfo key node_exporter exports ([`ZONEINFO`]), a
/// series per zone that has the key; then `protection_<i>`.
fn zoneinfo(out: &mut Out<'_>, zones: &[Zone]) -> Fmt {
    let nodes: Vec<String> = zones.iter().map(|z| z.node.to_string()).collect();
    let mut name = String::new();
    for (key, suffix, counter, help) in ZONEINFO {
        let rows: Vec<_> = zones
            .iter()
            .zip(&nodes)
            .filter_map(|(z, node)| Some((node, z, z.get(key)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let f = if *counter {
            &NODE_ZONEINFO_TOTAL
        } else {
            &NODE_ZONEINFO
        };
        f.instance_into(suffix, &mut name);
        let mut m = out.family_named(f, &name, help)?;
        for (node, z, v) in rows {
            let labels = [("node", node.as_str()), ("zone", z.zone.as_str())];
            sample_l(&mut m, &labels, v as f64)?;
        }
    }
    let widest = zones.iter().map(|z| z.protection.len()).max().unwrap_or(0);
    for i in 0..widest {
        NODE_ZONEINFO.instance_into(&format!("protection_{i}"), &mut name);
        let help = format!("Protection array {i}. field");
        let mut m = out.family_named(&NODE_ZONEINFO, &name, &help)?;
        for (z, node) in zones.iter().zip(&nodes) {
            if let Some(v) = z.protection.get(i) {
                let labels = [("node", node.as_str()), ("zone", z.zone.as_str())];
                gauge_l(&mut m, &labels, *v as f64)?;
            }
        }
    }
    Ok(())
}

fn slabinfo(out: &mut Out<'_>, slabs: &[Slab]) -> Fmt {
    type Field = (&'static Family, fn(&Slab) -> u64);
    let fields: [Field; 5] = [
        (&NODE_SLABINFO_ACTIVE_OBJECTS, |s| s.active_objects),
        (&NODE_SLABINFO_OBJECTS, |s| s.objects),
        (&NODE_SLABINFO_OBJECT_SIZE_BYTES, |s| s.object_size_bytes),
        (&NODE_SLABINFO_OBJECTS_PER_SLAB, |s| s.objects_per_slab),
        (&NODE_SLABINFO_PAGES_PER_SLAB, |s| s.pages_per_slab),
    ];
    for (f, get) in fields {
        let mut m = out.family(f)?;
        for s in slabs {
            gauge_l(&mut m, &[("slab", s.name.as_str())], get(s) as f64)?;
        }
    }
    Ok(())
}

/// node_exporter's ksmd: one family per file, `sleep_millisecs` in seconds
/// (divided, as node_exporter does, so the floats agree).
fn ksm(out: &mut Out<'_>, k: &Ksm) -> Fmt {
    let files: [(&'static Family, &str, f64); 9] = [
        (&NODE_KSMD_FULL_SCANS_TOTAL, "full_scans", 1.0),
        (&NODE_KSMD_MERGE_ACROSS_NODES, "merge_across_nodes", 1.0),
        (&NODE_KSMD_PAGES_SHARED, "pages_shared", 1.0),
        (&NODE_KSMD_PAGES_SHARING, "pages_sharing", 1.0),
        (&NODE_KSMD_PAGES_TO_SCAN, "pages_to_scan", 1.0),
        (&NODE_KSMD_PAGES_UNSHARED, "pages_unshared", 1.0),
        (&NODE_KSMD_PAGES_VOLATILE, "pages_volatile", 1.0),
        (&NODE_KSMD_RUN, "run", 1.0),
        (&NODE_KSMD_SLEEP_SECONDS, "sleep_millisecs", 1e3),
    ];
    for (f, file, divisor) in files {
        if let Some(v) = k.get(file) {
            one(out, f, v as f64 / divisor)?;
        }
    }
    Ok(())
}
