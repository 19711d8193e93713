//! node_exporter's netstat collector: /proc/net/{netstat,snmp,snmp6}, the
//! keys it exports.

use super::*;

use crate::metrics::compat::netstat_exported;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Netstat) {
        let mut name = String::new();
        for (k, v) in s.netstat.values.iter().filter(|(k, _)| netstat_exported(k)) {
            let mut m = out.family_of(&NODE_NETSTAT, k, &mut name)?;
            gauge(&mut m, *v as f64)?;
        }
    }
    Ok(())
}
