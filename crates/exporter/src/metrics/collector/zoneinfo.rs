//! node_exporter's zoneinfo collector: /proc/zoneinfo.

use super::*;
use procfs::mm::Zone;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Zoneinfo) {
        zoneinfo(out, &s.zoneinfo)?;
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

/// node_exporter's zoneinfo names: `(key in /proc/zoneinfo, name after
/// node_zoneinfo_, whether a counter, help)`. Keys not listed are not
/// exported; `protection: (...)` gives `protection_<i>`.
pub const ZONEINFO: &[(&str, &str, bool, &str)] = &[
    ("min", "min_pages", false, "Zone watermark pages_min"),
    ("low", "low_pages", false, "Zone watermark pages_low"),
    ("high", "high_pages", false, "Zone watermark pages_high"),
    (
        "spanned",
        "spanned_pages",
        false,
        "Total pages spanned by the zone, including holes",
    ),
    (
        "present",
        "present_pages",
        false,
        "Physical pages existing within the zone",
    ),
    (
        "managed",
        "managed_pages",
        false,
        "Present pages managed by the buddy system",
    ),
    (
        "nr_free_pages",
        "nr_free_pages",
        false,
        "Total number of free pages in the zone",
    ),
    (
        "nr_active_anon",
        "nr_active_anon_pages",
        false,
        "Number of anonymous pages recently more used",
    ),
    (
        "nr_inactive_anon",
        "nr_inactive_anon_pages",
        false,
        "Number of anonymous pages recently less used",
    ),
    (
        "nr_isolated_anon",
        "nr_isolated_anon_pages",
        false,
        "Temporary isolated pages from anon lru",
    ),
    (
        "nr_anon_pages",
        "nr_anon_pages",
        false,
        "Number of anonymous pages currently used by the system",
    ),
    (
        "nr_anon_transparent_hugepages",
        "nr_anon_transparent_hugepages",
        false,
        "Number of anonymous transparent huge pages currently used by the system",
    ),
    (
        "nr_active_file",
        "nr_active_file_pages",
        false,
        "Number of active pages with file-backing",
    ),
    (
        "nr_inactive_file",
        "nr_inactive_file_pages",
        false,
        "Number of inactive pages with file-backing",
    ),
    (
        "nr_isolated_file",
        "nr_isolated_file_pages",
        false,
        "Temporary isolated pages from file lru",
    ),
    (
        "nr_file_pages",
        "nr_file_pages",
        false,
        "Number of file pages",
    ),
    (
        "nr_slab_reclaimable",
        "nr_slab_reclaimable_pages",
        false,
        "Number of reclaimable slab pages",
    ),
    (
        "nr_slab_unreclaimable",
        "nr_slab_unreclaimable_pages",
        false,
        "Number of unreclaimable slab pages",
    ),
    (
        "nr_kernel_stack",
        "nr_kernel_stacks",
        false,
        "Number of kernel stacks",
    ),
    (
        "nr_mapped",
        "nr_mapped_pages",
        false,
        "Number of mapped pages",
    ),
    ("nr_dirty", "nr_dirty_pages", false, "Number of dirty pages"),
    (
        "nr_writeback",
        "nr_writeback_pages",
        false,
        "Number of writeback pages",
    ),
    (
        "nr_shmem",
        "nr_shmem_pages",
        false,
        "Number of shmem pages (included tmpfs/GEM pages)",
    ),
    (
        "nr_unevictable",
        "nr_unevictable_pages",
        false,
        "Number of unevictable pages",
    ),
    (
        "nr_dirtied",
        "nr_dirtied",
        true,
        "Page dirtyings since bootup",
    ),
    (
        "nr_written",
        "nr_written",
        true,
        "Page writings since bootup",
    ),
    ("numa_hit", "numa_hit", true, "Allocated in intended node"),
    (
        "numa_miss",
        "numa_miss",
        true,
        "Allocated in non intended node",
    ),
    (
        "numa_foreign",
        "numa_foreign",
        true,
        "Was intended here, hit elsewhere",
    ),
    (
        "numa_interleave",
        "numa_interleave",
        true,
        "Interleaver preferred this zone",
    ),
    (
        "numa_local",
        "numa_local",
        true,
        "Allocation from local node",
    ),
    (
        "numa_other",
        "numa_other",
        true,
        "Allocation from other node",
    ),
];
