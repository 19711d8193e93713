//! node_exporter's cpufreq collector: /sys/devices/system/cpu/cpu*/cpufreq.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Cpufreq) {
        cpufreq(out, &s.cpufreq)?;
    }
    Ok(())
}

type FreqGet = fn(&procfs::hardware::CpuFreq) -> Option<u64>;

/// node_exporter's cpufreq families (kHz in sysfs, hertz here), each for
/// the CPUs that have the file.
fn cpufreq(out: &mut Out<'_>, cpus: &[procfs::hardware::CpuFreq]) -> Fmt {
    let figures: [(&'static Family, FreqGet); 6] = [
        (&NODE_CPU_FREQUENCY_HERTZ, |c| c.cpuinfo_cur_khz),
        (&NODE_CPU_FREQUENCY_MIN_HERTZ, |c| c.cpuinfo_min_khz),
        (&NODE_CPU_FREQUENCY_MAX_HERTZ, |c| c.cpuinfo_max_khz),
        (&NODE_CPU_SCALING_FREQUENCY_HERTZ, |c| c.scaling_cur_khz),
        (&NODE_CPU_SCALING_FREQUENCY_MIN_HERTZ, |c| c.scaling_min_khz),
        (&NODE_CPU_SCALING_FREQUENCY_MAX_HERTZ, |c| c.scaling_max_khz),
    ];
    for (f, get) in figures {
        if cpus.iter().all(|c| get(c).is_none()) {
            continue;
        }
        let mut m = out.family(f)?;
        for c in cpus {
            if let Some(khz) = get(c) {
                let cpu = c.cpu.to_string();
                gauge_l(&mut m, &[("cpu", cpu.as_str())], khz as f64 * 1000.0)?;
            }
        }
    }
    if cpus.iter().any(|c| !c.governor.is_empty()) {
        let mut m = out.family(&NODE_CPU_SCALING_GOVERNOR)?;
        for c in cpus.iter().filter(|c| !c.governor.is_empty()) {
            let cpu = c.cpu.to_string();
            for g in &c.available_governors {
                let on = f64::from(u8::from(*g == c.governor));
                gauge_l(
                    &mut m,
                    &[("cpu", cpu.as_str()), ("governor", g.as_str())],
                    on,
                )?;
            }
        }
    }
    Ok(())
}
