//! node_exporter's nfs collector (/proc/net/rpc/nfs), and the encoding of
//! the sources read beside it: nfsd, ipvs and zfs, each in its own file.

use procfs::rpc::{CLIENT_V4, RpcStats, V2, V3};

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if x.s.ok(Source::Nfs) {
        client(out, &x.s.nfs)?;
    }
    Ok(())
}

/// `node_*_requests_total{proto, method}`: each named procedure of each
/// version's line, 0 where the kernel prints fewer.
pub(super) fn requests(
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
