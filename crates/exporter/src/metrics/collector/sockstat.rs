//! node_exporter's sockstat collector: /proc/net/sockstat and sockstat6.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Sockstat) {
        if let Some(n) = s.sockstat.sockets_used {
            one(out, &NODE_SOCKSTAT_SOCKETS_USED, n as f64)?;
        }
        sockstat(out, &s.sockstat)?;
    }
    if s.ok(Source::Sockstat6) {
        sockstat(out, &s.sockstat6)?;
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
                gauge(&mut m, v)
            };
            emit("", *v as f64)?;
            if k == "mem" {
                emit("_bytes", *v as f64 * page)?;
            }
        }
    }
    Ok(())
}
