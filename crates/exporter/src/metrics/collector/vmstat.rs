//! node_exporter's vmstat collector: the /proc/vmstat keys it exports.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Vmstat) {
        let mut name = String::new();
        let served = crate::metrics::compat::fields_filter(
            &x.ctx.config.vmstat_fields,
            agent::config::DEFAULT_VMSTAT_FIELDS,
            vmstat_exported,
        );
        for (k, v) in s.vmstat.all().iter().filter(|(k, _)| served(k)) {
            let mut m = out.family_of(&NODE_VMSTAT, k, &mut name)?;
            gauge(&mut m, v as f64)?;
        }
    }
    Ok(())
}

/// node_exporter's default `--collector.vmstat.fields`:
/// `^(oom_kill|pgpg|pswp|pg.*fault).*`.
pub fn vmstat_exported(name: &str) -> bool {
    name.starts_with("oom_kill")
        || name.starts_with("pgpg")
        || name.starts_with("pswp")
        || (name.starts_with("pg") && name[2..].contains("fault"))
}
