//! node_exporter's bcache collector: /sys/fs/bcache.

use super::*;

/// node_exporter's bcache: per cache set, per backing device (`bdevN`),
/// per cache device (`cacheN`); sizes dehumanized as it does (and the
/// btree read time, printed in microseconds, scaled by 1e-9 as it does).
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::Bcache) {
        Some(d) => bcache(out, d),
        None => Ok(()),
    }
}

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
                crate::metrics::out::sample_l(&mut m, &[("uuid", s.name.as_str())], v * scale)?;
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
            &NODE_BCACHE_WRITEBACK_RATE_PROPORTIONAL_TERM,
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
                        crate::metrics::out::sample_l(&mut m, &labels, v)?;
                    }
                }
            }
        }
    }
    Ok(())
}
