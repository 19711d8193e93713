//! node_exporter's cpu collector: seconds per CPU and mode (/proc/stat),
//! guest seconds, the isolated CPUs, the thermal throttle counts, and
//! `node_cpu_info` (/proc/cpuinfo, opt-in).

use super::*;
use model::units::ticks_to_secs;
use procfs::stat::{CpuMode, CpuTimes};

use crate::metrics::compat::pattern;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Stat) {
        let st = &s.stat;
        let mut m = out.family(&NODE_CPU_SECONDS_TOTAL)?;
        for c in &st.cpus {
            let cpu = c.cpu.to_string();
            for (mode, ticks) in cpu_modes(&c.times) {
                counter_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("mode", mode)],
                    ticks_to_secs(ticks),
                )?;
            }
        }
        let mut m = out.family(&NODE_CPU_GUEST_SECONDS_TOTAL)?;
        for c in &st.cpus {
            let cpu = c.cpu.to_string();
            for (mode, m2) in [("user", CpuMode::Guest), ("nice", CpuMode::GuestNice)] {
                if let Some(t) = c.times.ticks(m2) {
                    counter_l(
                        &mut m,
                        &[("cpu", cpu.as_str()), ("mode", mode)],
                        ticks_to_secs(t),
                    )?;
                }
            }
        }
    }
    if s.ok(Source::ThermalThrottle) {
        let t = &s.thermal_throttle;
        let mut m = out.family(&NODE_CPU_PACKAGE_THROTTLES_TOTAL)?;
        for (package, count) in &t.packages {
            let package = package.to_string();
            counter_l(&mut m, &[("package", package.as_str())], *count as f64)?;
        }
        let mut m = out.family(&NODE_CPU_CORE_THROTTLES_TOTAL)?;
        for (package, core, count) in &t.cores {
            let (package, core) = (package.to_string(), core.to_string());
            let labels = [("package", package.as_str()), ("core", core.as_str())];
            counter_l(&mut m, &labels, *count as f64)?;
        }
    }
    if s.ok(Source::CpuIsolated) && !s.cpu_isolated.cpus().is_empty() {
        let mut m = out.family(&NODE_CPU_ISOLATED)?;
        for c in s.cpu_isolated.cpus() {
            gauge_l(&mut m, &[("cpu", c.to_string().as_str())], 1.0)?;
        }
    }
    if s.ok(Source::Cpuinfo) {
        cpu_info(out, s)?;
        // The first CPU's flags and bugs matching node_exporter's
        // --collector.cpu.info.{flags,bugs}-include; none when unset.
        let c = &x.ctx.config;
        if let Some(first) = s.cpuinfo.first() {
            for (family, label, words, include) in [
                (
                    &NODE_CPU_FLAG_INFO,
                    "flag",
                    &first.flags,
                    &c.cpu_info_flags_include,
                ),
                (
                    &NODE_CPU_BUG_INFO,
                    "bug",
                    &first.bugs,
                    &c.cpu_info_bugs_include,
                ),
            ] {
                let Some(re) = pattern(include) else {
                    continue;
                };
                let mut m = out.family(family)?;
                for w in words.split_whitespace().filter(|w| re.is_match(w)) {
                    gauge_l(&mut m, &[(label, w)], 1.0)?;
                }
            }
        }
    }
    Ok(())
}

/// `node_cpu_info`: one series per CPU.
fn cpu_info(out: &mut Out<'_>, s: &SystemSample) -> Fmt {
    let mut m = out.family(&NODE_CPU_INFO)?;
    for c in &s.cpuinfo {
        let cpu = c.processor.to_string();
        let labels = [
            ("package", c.physical_id.as_str()),
            ("core", c.core_id.as_str()),
            ("cpu", cpu.as_str()),
            ("vendor", c.vendor_id.as_str()),
            ("family", c.cpu_family.as_str()),
            ("model", c.model.as_str()),
            ("model_name", c.model_name.as_str()),
            ("microcode", c.microcode.as_str()),
            ("stepping", c.stepping.as_str()),
            ("cachesize", c.cache_size.as_str()),
        ];
        gauge_l(&mut m, &labels, 1.0)?;
    }
    Ok(())
}

/// node_exporter's `mode`s: every column but the two guest ones, which
/// user and nice already include (they go to node_cpu_guest_seconds_total).
pub(crate) fn cpu_modes(t: &CpuTimes) -> impl Iterator<Item = (&'static str, u64)> + '_ {
    CpuMode::ALL
        .into_iter()
        .filter(|m| !matches!(m, CpuMode::Guest | CpuMode::GuestNice))
        .filter_map(|m| Some((m.name(), t.ticks(m)?)))
}
