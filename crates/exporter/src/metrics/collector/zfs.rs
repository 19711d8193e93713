//! node_exporter's zfs collector: /proc/spl/kstat/zfs.

use super::*;

/// node_exporter's ZFS names: `node_zfs_<file's name>_<statistic>` with
/// `-` as `_`, untyped, the kstat's path as help; per pool and dataset
/// likewise; each pool's state as one series per possible state.
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if x.s.ok(Source::Zfs) {
        zfs(out, &x.s.zfs)?;
    }
    Ok(())
}

fn zfs(out: &mut Out<'_>, z: &procfs::zfs::Zfs) -> Fmt {
    use procfs::zfs::FILES;
    let clean = |s: &str| s.replace('-', "_");
    let mut name = String::new();
    for (file, values) in &z.kstats {
        let Some((_, short)) = FILES.iter().find(|(f, _)| f == file) else {
            continue;
        };
        for (stat, v) in values {
            NODE_ZFS.instance_into(&format!("{short}_{}", clean(stat)), &mut name);
            let help = format!("kstat.zfs.misc.{file}.{stat}");
            let mut m = out.family_named(&NODE_ZFS, &name, &help)?;
            gauge(&mut m, *v as f64)?;
        }
    }
    // One family per statistic, every pool (or dataset) a series.
    let mut io: Vec<(&str, Vec<(&str, u64)>)> = Vec::new();
    type Rows<'a> = Vec<(&'a str, &'a str, u64)>;
    let mut ds: Vec<(&str, Rows)> = Vec::new();
    for p in &z.pools {
        for (k, v) in &p.io {
            match io.iter_mut().find(|(n, _)| n == k) {
                Some((_, rows)) => rows.push((&p.name, *v)),
                None => io.push((k, vec![(&p.name, *v)])),
            }
        }
        for d in &p.datasets {
            for (k, v) in &d.values {
                match ds.iter_mut().find(|(n, _)| n == k) {
                    Some((_, rows)) => rows.push((&p.name, &d.name, *v)),
                    None => ds.push((k, vec![(&p.name, &d.name, *v)])),
                }
            }
        }
    }
    for (k, rows) in io {
        NODE_ZFS_ZPOOL.instance_into(&clean(k), &mut name);
        let help = format!("kstat.zfs.misc.io.{k}");
        let mut m = out.family_named(&NODE_ZFS_ZPOOL, &name, &help)?;
        for (pool, v) in rows {
            sample_l(&mut m, &[("zpool", pool)], v as f64)?;
        }
    }
    for (k, rows) in ds {
        NODE_ZFS_ZPOOL_DATASET.instance_into(&clean(k), &mut name);
        let help = format!("kstat.zfs.misc.objset.{k}");
        let mut m = out.family_named(&NODE_ZFS_ZPOOL_DATASET, &name, &help)?;
        for (pool, dataset, v) in rows {
            sample_l(&mut m, &[("zpool", pool), ("dataset", dataset)], v as f64)?;
        }
    }
    let mut m = out.family(&NODE_ZFS_ZPOOL_STATE)?;
    for p in &z.pools {
        let Some(state) = &p.state else { continue };
        for s in [
            "online",
            "degraded",
            "faulted",
            "offline",
            "removed",
            "unavail",
            "suspended",
        ] {
            let v = f64::from(u8::from(state == s));
            gauge_l(&mut m, &[("zpool", p.name.as_str()), ("state", s)], v)?;
        }
    }
    Ok(())
}
