//! node_exporter's nfsd collector: /proc/net/rpc/nfsd.

use procfs::rpc::{RpcStats, SERVER_V4_OPS, V2, V3};

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if x.s.ok(Source::Nfsd) {
        server(out, &x.s.nfsd)?;
    }
    Ok(())
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
    super::nfs::requests(
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
