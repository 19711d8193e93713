//! node_exporter's netstat collector: /proc/net/{netstat,snmp,snmp6}, the
//! keys it exports.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Netstat) {
        let mut name = String::new();
        let served = crate::metrics::compat::fields_filter(
            &x.ctx.config.netstat_fields,
            agent::config::DEFAULT_NETSTAT_FIELDS,
            netstat_exported,
        );
        for (k, v) in s.netstat.values.iter().filter(|(k, _)| served(k)) {
            let mut m = out.family_of(&NODE_NETSTAT, k, &mut name)?;
            gauge(&mut m, *v as f64)?;
        }
    }
    Ok(())
}

/// node_exporter's default `--collector.netstat.fields`:
/// `^(.*_(InErrors|InErrs)|Ip_Forwarding|Ip(6|Ext)_(InOctets|OutOctets)|Icmp6?_(InMsgs|OutMsgs)|TcpExt_(Listen.*|Syncookies.*|TCPSynRetrans|TCPTimeouts|TCPOFOQueue|TCPRcvQDrop)|Tcp_(ActiveOpens|InSegs|OutSegs|OutRsts|PassiveOpens|RetransSegs|CurrEstab)|Udp6?_(InDatagrams|OutDatagrams|NoPorts|RcvbufErrors|SndbufErrors))$`,
/// matched by hand.
pub fn netstat_exported(key: &str) -> bool {
    let Some((proto, field)) = key.split_once('_') else {
        return false;
    };
    if key.ends_with("_InErrors") || key.ends_with("_InErrs") {
        return true;
    }
    match proto {
        "Ip" => field == "Forwarding",
        "Ip6" | "IpExt" => matches!(field, "InOctets" | "OutOctets"),
        "Icmp" | "Icmp6" => matches!(field, "InMsgs" | "OutMsgs"),
        "TcpExt" => {
            field.starts_with("Listen")
                || field.starts_with("Syncookies")
                || matches!(
                    field,
                    "TCPSynRetrans" | "TCPTimeouts" | "TCPOFOQueue" | "TCPRcvQDrop"
                )
        }
        "Tcp" => matches!(
            field,
            "ActiveOpens"
                | "InSegs"
                | "OutSegs"
                | "OutRsts"
                | "PassiveOpens"
                | "RetransSegs"
                | "CurrEstab"
        ),
        "Udp" | "Udp6" => matches!(
            field,
            "InDatagrams" | "OutDatagrams" | "NoPorts" | "RcvbufErrors" | "SndbufErrors"
        ),
        _ => false,
    }
}
