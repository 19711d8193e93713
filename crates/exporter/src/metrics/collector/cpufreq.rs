//! node_exporter's cpufreq collector: /sys/devices/system/cpu/cpu*/cpufreq,
//! and each CPU's `cpu MHz` from /proc/cpuinfo where that is read (which
//! node_exporter's cpu collector serves under cpufreq's family name, with
//! package and core labels).

use procfs::cpuinfo::CpuInfo;

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Cpufreq) {
        // With node_exporter's --collector.cpu.info, each CPU's current
        // frequency from /proc/cpuinfo too, in the same family.
        let cpuinfo: &[CpuInfo] = if s.ok(Source::Cpuinfo) {
            &s.cpuinfo
        } else {
            &[]
        };
        cpufreq(out, &s.cpufreq, cpuinfo)?;
    }
    Ok(())
}

type FreqGet = fn(&procfs::hardware::CpuFreq) -> Option<u64>;

/// node_exporter's cpufreq families (kHz in sysfs, hertz here), each for
/// the CPUs that have the file.
fn cpufreq(out: &mut Out<'_>, cpus: &[procfs::hardware::CpuFreq], cpuinfo: &[CpuInfo]) -> Fmt {
    let figures: [(&'static Family, FreqGet); 6] = [
        (&NODE_CPU_FREQUENCY_HERTZ, |c| c.cpuinfo_cur_khz),
        (&NODE_CPU_FREQUENCY_MIN_HERTZ, |c| c.cpuinfo_min_khz),
        (&NODE_CPU_FREQUENCY_MAX_HERTZ, |c| c.cpuinfo_max_khz),
        (&NODE_CPU_SCALING_FREQUENCY_HERTZ, |c| c.scaling_cur_khz),
        (&NODE_CPU_SCALING_FREQUENCY_MIN_HERTZ, |c| c.scaling_min_khz),
        (&NODE_CPU_SCALING_FREQUENCY_MAX_HERTZ, |c| c.scaling_max_khz),
    ];
    let from_cpuinfo = |f: &Family| std::ptr::eq(f, &NODE_CPU_FREQUENCY_HERTZ);
    for (f, get) in figures {
        let cpuinfo = if from_cpuinfo(f) { cpuinfo } else { &[] };
        if cpus.iter().all(|c| get(c).is_none()) && cpuinfo.iter().all(|c| c.khz.is_none()) {
            continue;
        }
        let mut m = out.family(f)?;
        for c in cpus {
            if let Some(khz) = get(c) {
                let cpu = c.cpu.to_string();
                gauge_l(&mut m, &[("cpu", cpu.as_str())], khz as f64 * 1000.0)?;
            }
        }
        for c in cpuinfo {
            if let Some(khz) = c.khz {
                let cpu = c.processor.to_string();
                let labels = [
                    ("package", c.physical_id.as_str()),
                    ("core", c.core_id.as_str()),
                    ("cpu", cpu.as_str()),
                ];
                gauge_l(&mut m, &labels, khz as f64 * 1000.0)?;
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
