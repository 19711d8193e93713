//! Tools that measure the observer effect: [`jitter`] (cyclictest-style
//! timer latency on one CPU, alone and beside a command) and, with BPF,
//! what interrupts a set of CPUs and who caused it.

use procfs::cpu::CpuList;

pub mod jitter;
pub mod noise;
pub mod png;
pub mod svg;

/// The online CPUs, from /sys/devices/system/cpu/online.
pub fn online_cpus() -> Result<CpuList, String> {
    let path = "/sys/devices/system/cpu/online";
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    CpuList::parse(text.trim()).map_err(|e| format!("{path}: {e}"))
}

/// Pins the calling thread to one CPU.
pub fn pin_to(cpu: u32) -> Result<(), String> {
    sys::pin_current_thread(&[cpu]).map_err(|e| format!("pinning to CPU {cpu}: {e}"))
}
