//! Tools that measure the observer effect: [`jitter`] (cyclictest-style
//! timer latency on one CPU, alone and beside a command) and, with BPF,
//! what interrupts a set of CPUs and who caused it.

use procfs::cpu::CpuList;
use sys::Error;

pub mod jitter;
pub mod noise;
pub mod png;
pub mod svg;

/// The online CPUs, from /sys/devices/system/cpu/online.
pub fn online_cpus() -> Result<CpuList, Error> {
    let path = "/sys/devices/system/cpu/online";
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    CpuList::parse(text.trim()).map_err(|e| Error::malformed(path, None, e.to_string()))
}

/// Pins the calling thread to one CPU.
pub fn pin_to(cpu: u32) -> Result<(), Error> {
    sys::pin_current_thread(&[cpu]).map_err(|e| Error::io(format!("pinning to CPU {cpu}"), e))
}
