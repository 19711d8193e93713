//! The NFS client and server statistics, IP Virtual Server and ZFS under
//! node_exporter's names (its nfs, nfsd, ipvs and zfs collectors).

use procfs::rpc::{CLIENT_V4, RpcStats, SERVER_V4_OPS, V2, V3};
use procfs::{Source, SystemSample};

use super::families::*;
use super::out::{Fmt, Out, counter_l, one};

pub(super) fn nfs(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    if s.ok(Source::Nfs) {
        client(out, &s.nfs)?;
    }
    if s.ok(Source::Nfsd) {
        server(out, &s.nfsd)?;
    }
    if s.ok(Source::Ipvs) {
        ipvs(out, &s.ipvs)?;
    }
    if s.ok(Source::Zfs) {
        zfs(out, &s.zfs)?;
    }
    Ok(())
}

/// node_exporter's ZFS names: `node_zfs_<file's name>_<statistic>` with
/// `-` as `_`, untyped, the kstat's path as help; per pool and dataset
/// likewise; each pool's state as one series per possible state.
fn zfs(out: &mut Out<'_>, z: &procfs::zfs::Zfs) -> Fmt {
    use super::out::{gauge_l, sample_l};
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
            m.encode_gauge(&(*v as f64))?;
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

/// Totals, then per real server summed over node_exporter's label set.
fn ipvs(out: &mut Out<'_>, v: &procfs::ipvs::Ipvs) -> Fmt {
    use std::collections::BTreeMap;
    for (f, n) in [
        (&NODE_IPVS_CONNECTIONS_TOTAL, v.connections),
        (&NODE_IPVS_INCOMING_PACKETS_TOTAL, v.incoming_packets),
        (&NODE_IPVS_OUTGOING_PACKETS_TOTAL, v.outgoing_packets),
        (&NODE_IPVS_INCOMING_BYTES_TOTAL, v.incoming_bytes),
        (&NODE_IPVS_OUTGOING_BYTES_TOTAL, v.outgoing_bytes),
    ] {
        one(out, f, n as f64)?;
    }
    let mut sums: BTreeMap<[String; 6], [u64; 3]> = BTreeMap::new();
    for b in &v.backends {
        let key = [
            b.local_address.clone(),
            b.local_port.to_string(),
            b.remote_address.clone(),
            b.remote_port.to_string(),
            b.proto.clone(),
            b.local_mark.clone(),
        ];
        let s = sums.entry(key).or_default();
        s[0] += b.active_connections;
        s[1] += b.inactive_connections;
        s[2] += b.weight;
    }
    for (i, f) in [
        &NODE_IPVS_BACKEND_CONNECTIONS_ACTIVE,
        &NODE_IPVS_BACKEND_CONNECTIONS_INACTIVE,
        &NODE_IPVS_BACKEND_WEIGHT,
    ]
    .into_iter()
    .enumerate()
    {
        let mut m = out.family(f)?;
        for (k, s) in &sums {
            let labels: Vec<(&str, &str)> = f
                .labels
                .iter()
                .copied()
                .zip(k.iter().map(String::as_str))
                .collect();
            super::out::gauge_l(&mut m, &labels, s[i] as f64)?;
        }
    }
    Ok(())
}

/// `node_*_requests_total{proto, method}`: each named procedure of each
/// version's line, 0 where the kernel prints fewer.
fn requests(
    out: &mut Out<'_>,
    f: &'static Family,
    lines: &[(&str, &str, Vec<Option<&str>>)],
    r: &RpcStats,
) -> Fmt {
    let mut m = out.family(f)?;
    for (proto, key, names) in lines {
        let counts = r.procedures(key);
        for (i, name) in names.iter().enumerate() {
            let Some(name) = name else { continue };
            let v = counts.get(i).copied().unwrap_or(0);
            counter_l(&mut m, &[("proto", *proto), ("method", *name)], v as f64)?;
        }
    }
    Ok(())
}

fn client(out: &mut Out<'_>, r: &RpcStats) -> Fmt {
    {
        let mut m = out.family(&NODE_NFS_PACKETS_TOTAL)?;
        counter_l(&mut m, &[("protocol", "udp")], r.at("net", 1) as f64)?;
        counter_l(&mut m, &[("protocol", "tcp")], r.at("net", 2) as f64)?;
    }
    one(out, &NODE_NFS_CONNECTIONS_TOTAL, r.at("net", 3) as f64)?;
    one(out, &NODE_NFS_RPCS_TOTAL, r.at("rpc", 0) as f64)?;
    one(
        out,
        &NODE_NFS_RPC_RETRANSMISSIONS_TOTAL,
        r.at("rpc", 1) as f64,
    )?;
    one(
        out,
        &NODE_NFS_RPC_AUTHENTICATION_REFRESHES_TOTAL,
        r.at("rpc", 2) as f64,
    )?;
    let all = |names: &[&'static str]| names.iter().map(|n| Some(*n)).collect::<Vec<_>>();
    requests(
        out,
        &NODE_NFS_REQUESTS_TOTAL,
        &[
            ("2", "proc2", all(&V2)),
            ("3", "proc3", all(&V3)),
            ("4", "proc4", all(&CLIENT_V4)),
        ],
        r,
    )
}

fn server(out: &mut Out<'_>, r: &RpcStats) -> Fmt {
    let counters: [(&'static Family, &str, usize); 11] = [
        (&NODE_NFSD_REPLY_CACHE_HITS_TOTAL, "rc", 0),
        (&NODE_NFSD_REPLY_CACHE_MISSES_TOTAL, "rc", 1),
        (&NODE_NFSD_REPLY_CACHE_NOCACHE_TOTAL, "rc", 2),
        (&NODE_NFSD_FILE_HANDLES_STALE_TOTAL, "fh", 0),
        (&NODE_NFSD_DISK_BYTES_READ_TOTAL, "io", 0),
        (&NODE_NFSD_DISK_BYTES_WRITTEN_TOTAL, "io", 1),
        (&NODE_NFSD_SERVER_THREADS, "th", 0),
        (&NODE_NFSD_READ_AHEAD_CACHE_SIZE_BLOCKS, "ra", 0),
        (&NODE_NFSD_READ_AHEAD_CACHE_NOT_FOUND_TOTAL, "ra", 11),
        (&NODE_NFSD_CONNECTIONS_TOTAL, "net", 3),
        (&NODE_NFSD_SERVER_RPCS_TOTAL, "rpc", 0),
    ];
    for (f, key, i) in counters {
        one(out, f, r.at(key, i) as f64)?;
    }
    {
        let mut m = out.family(&NODE_NFSD_PACKETS_TOTAL)?;
        counter_l(&mut m, &[("proto", "udp")], r.at("net", 1) as f64)?;
        counter_l(&mut m, &[("proto", "tcp")], r.at("net", 2) as f64)?;
    }
    {
        let mut m = out.family(&NODE_NFSD_RPC_ERRORS_TOTAL)?;
        for (error, i) in [("fmt", 2), ("auth", 3), ("cInt", 4)] {
            counter_l(&mut m, &[("error", error)], r.at("rpc", i) as f64)?;
        }
    }
    // node_exporter leaves out each version's Null (and some v4 ops).
    let but_null = |names: &[&'static str]| {
        names
            .iter()
            .map(|n| (*n != "Null").then_some(*n))
            .collect::<Vec<_>>()
    };
    requests(
        out,
        &NODE_NFSD_REQUESTS_TOTAL,
        &[
            ("2", "proc2", but_null(&V2)),
            ("3", "proc3", but_null(&V3)),
            ("4", "proc4ops", SERVER_V4_OPS.to_vec()),
        ],
        r,
    )
}
