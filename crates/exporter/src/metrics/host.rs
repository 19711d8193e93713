//! The host's small sources: file handles, entropy, uname, socket counts
//! and softnet, under node_exporter's names.

use procfs::{Source, SystemSample};

use super::compat::netstat_exported;
use super::families::*;
use super::out::{Fmt, Out, counter_l, info, one};

pub(super) fn host(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    if s.ok(Source::Filefd) {
        one(out, &NODE_FILEFD_ALLOCATED, s.filefd.allocated as f64)?;
        one(out, &NODE_FILEFD_MAXIMUM, s.filefd.maximum as f64)?;
    }
    if s.ok(Source::Entropy) {
        one(
            out,
            &NODE_ENTROPY_AVAILABLE_BITS,
            s.entropy.available_bits as f64,
        )?;
        one(
            out,
            &NODE_ENTROPY_POOL_SIZE_BITS,
            s.entropy.pool_size_bits as f64,
        )?;
    }
    if s.ok(Source::Uname) {
        let u = &s.uname;
        info(
            out,
            &NODE_UNAME_INFO,
            &[
                ("sysname", u.sysname.as_str()),
                ("release", u.release.as_str()),
                ("version", u.version.as_str()),
                ("machine", u.machine.as_str()),
                ("nodename", u.nodename.as_str()),
                ("domainname", u.domainname.as_str()),
            ],
        )?;
    }
    if s.ok(Source::Sockstat) {
        if let Some(n) = s.sockstat.sockets_used {
            one(out, &NODE_SOCKSTAT_SOCKETS_USED, n as f64)?;
        }
        sockstat(out, &s.sockstat)?;
    }
    if s.ok(Source::Sockstat6) {
        sockstat(out, &s.sockstat6)?;
    }
    if s.ok(Source::Netstat) {
        let mut name = String::new();
        for (k, v) in s.netstat.values.iter().filter(|(k, _)| netstat_exported(k)) {
            let mut m = out.family_of(&NODE_NETSTAT, k, &mut name)?;
            m.encode_gauge(&(*v as f64))?;
        }
    }
    if s.ok(Source::Softnet) {
        for (f, get) in [
            (
                &NODE_SOFTNET_PROCESSED_TOTAL,
                (|c| c.processed) as fn(&procfs::softnet::SoftnetCpu) -> u64,
            ),
            (&NODE_SOFTNET_DROPPED_TOTAL, |c| c.dropped),
            (&NODE_SOFTNET_TIMES_SQUEEZED_TOTAL, |c| c.time_squeezed),
        ] {
            let mut m = out.family(f)?;
            for (i, c) in s.softnet.iter().enumerate() {
                counter_l(&mut m, &[("cpu", i.to_string().as_str())], get(c) as f64)?;
            }
        }
    }
    Ok(())
}

/// `node_sockstat_<PROTOCOL>_<key>` for every pair, and for `mem` (pages)
/// also `_mem_bytes`, as node_exporter does.
fn sockstat(out: &mut Out<'_>, s: &procfs::sockstat::Sockstat) -> Fmt {
    let page = sys::page_size() as f64;
    let (mut key, mut name) = (String::new(), String::new());
    for line in &s.lines {
        for (k, v) in &line.values {
            let mut emit = |suffix: &str, v: f64| -> Fmt {
                key.clear();
                key.push_str(&line.protocol);
                key.push('_');
                key.push_str(k);
                key.push_str(suffix);
                let mut m = out.family_of(&NODE_SOCKSTAT, &key, &mut name)?;
                m.encode_gauge(&v)
            };
            emit("", *v as f64)?;
            if k == "mem" {
                emit("_bytes", *v as f64 * page)?;
            }
        }
    }
    Ok(())
}
