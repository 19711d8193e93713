//! node_exporter's softnet collector: /proc/net/softnet_stat.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Softnet) {
        type Get = fn(&procfs::softnet::SoftnetCpu) -> u64;
        let counters: [(&Family, Get); 6] = [
            (&NODE_SOFTNET_PROCESSED_TOTAL, |c| c.processed),
            (&NODE_SOFTNET_DROPPED_TOTAL, |c| c.dropped),
            (&NODE_SOFTNET_TIMES_SQUEEZED_TOTAL, |c| c.time_squeezed),
            (&NODE_SOFTNET_CPU_COLLISION_TOTAL, |c| c.cpu_collision),
            (&NODE_SOFTNET_RECEIVED_RPS_TOTAL, |c| c.received_rps),
            (&NODE_SOFTNET_FLOW_LIMIT_COUNT_TOTAL, |c| c.flow_limit_count),
        ];
        let cpus: Vec<String> = s.softnet.iter().map(|c| c.cpu.to_string()).collect();
        for (f, get) in counters {
            let mut m = out.family(f)?;
            for (c, cpu) in s.softnet.iter().zip(&cpus) {
                counter_l(&mut m, &[("cpu", cpu.as_str())], get(c) as f64)?;
            }
        }
        let mut m = out.family(&NODE_SOFTNET_BACKLOG_LEN)?;
        for (c, cpu) in s.softnet.iter().zip(&cpus) {
            gauge_l(&mut m, &[("cpu", cpu.as_str())], c.backlog_len as f64)?;
        }
    }
    Ok(())
}
