//! NVIDIA's management library, for the GPUs of NVIDIA's own driver (which
//! gives no DRM fdinfo): `libnvidia-ml.so.1`, loaded at run time where it
//! is installed, never a build dependency. Where it is absent, the first
//! read says so once ([`crate::ProcTable::gpu_note`]) and nothing more is
//! tried.
//!
//! Per process and device it gives the GPU memory in use (the compute and
//! graphics processes' `usedGpuMemory`) and samples of the share of time
//! the device's streaming multiprocessors ran the process's kernels
//! (`smUtil`, a percentage over each sample's period). Those samples are
//! turned into busy time, so that every source gives the same counter: a
//! sample of `u` % at time `t` adds `u` % of the time since that
//! process's previous sample (a process's first sample adds nothing).

use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};

use crate::proc::Gpu;

/// The library's soname, as NVIDIA's driver installs it.
pub const LIBRARY: &str = "libnvidia-ml.so.1";

const SUCCESS: c_int = 0;
const ERROR_NOT_FOUND: c_int = 6;
const ERROR_INSUFFICIENT_SIZE: c_int = 7;
/// `usedGpuMemory` when the driver cannot tell (`NVML_VALUE_NOT_AVAILABLE`).
const NOT_AVAILABLE: u64 = u64::MAX;

/// `nvmlProcessInfo_t` (the `_v3` calls').
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessInfo {
    pub pid: c_uint,
    pub used_gpu_memory: u64,
    pub gpu_instance_id: c_uint,
    pub compute_instance_id: c_uint,
}

/// `nvmlProcessUtilizationSample_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct UtilSample {
    pub pid: c_uint,
    /// Microseconds since the epoch.
    pub time_stamp: u64,
    pub sm_util: c_uint,
    pub mem_util: c_uint,
    pub enc_util: c_uint,
    pub dec_util: c_uint,
}

type Device = *mut c_void;
type Plain = unsafe extern "C" fn() -> c_int;
type Count = unsafe extern "C" fn(*mut c_uint) -> c_int;
type Handle = unsafe extern "C" fn(c_uint, *mut Device) -> c_int;
type Processes = unsafe extern "C" fn(Device, *mut c_uint, *mut ProcessInfo) -> c_int;
type Utilization = unsafe extern "C" fn(Device, *mut UtilSample, *mut c_uint, u64) -> c_int;

/// The entry points used.
struct Api {
    shutdown: Plain,
    count: Count,
    handle: Handle,
    compute: Processes,
    graphics: Processes,
    utilization: Utilization,
}

/// One device's state between reads.
#[derive(Default)]
struct DeviceState {
    /// The newest sample's time seen (what the next call asks after).
    last_seen_us: u64,
    /// Per process: its previous sample's time and its busy time so far.
    busy: HashMap<u32, (u64, u64)>,
}

/// The loaded library and its devices.
pub struct Nvml {
    lib: *mut c_void,
    api: Api,
    devices: Vec<(Device, DeviceState)>,
    infos: Vec<ProcessInfo>,
    samples: Vec<UtilSample>,
}

// SAFETY: the library's handles are used from one thread at a time (the
// reader's, behind `&mut`); NVML's calls are thread-safe.
unsafe impl Send for Nvml {}

impl Nvml {
    /// Loads the library and initialises it; why not, in words.
    pub fn open() -> Result<Nvml, String> {
        let name = std::ffi::CString::new(LIBRARY).map_err(|e| e.to_string())?;
        // SAFETY: a NUL-terminated name; dlopen has no other precondition.
        let lib = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if lib.is_null() {
            return Err(format!(
                "{LIBRARY} is not installed (no NVIDIA driver): NVIDIA GPUs are not read"
            ));
        }
        let sym = |s: &str| -> Result<*mut c_void, String> {
            let c = std::ffi::CString::new(s).map_err(|e| e.to_string())?;
            // SAFETY: lib is a live handle from dlopen; c is NUL-terminated.
            let p = unsafe { libc::dlsym(lib, c.as_ptr()) };
            if p.is_null() {
                Err(format!(
                    "{LIBRARY} has no {s}: a driver older than this reader"
                ))
            } else {
                Ok(p)
            }
        };
        let loaded = (|| {
            // SAFETY: each symbol is the C function of that name in NVML's
            // header, with the signature it is transmuted to.
            unsafe {
                use std::mem::transmute;
                let init = transmute::<*mut c_void, Plain>(sym("nvmlInit_v2")?);
                let api = Api {
                    shutdown: transmute::<*mut c_void, Plain>(sym("nvmlShutdown")?),
                    count: transmute::<*mut c_void, Count>(sym("nvmlDeviceGetCount_v2")?),
                    handle: transmute::<*mut c_void, Handle>(sym("nvmlDeviceGetHandleByIndex_v2")?),
                    compute: transmute::<*mut c_void, Processes>(sym(
                        "nvmlDeviceGetComputeRunningProcesses_v3",
                    )?),
                    graphics: transmute::<*mut c_void, Processes>(sym(
                        "nvmlDeviceGetGraphicsRunningProcesses_v3",
                    )?),
                    utilization: transmute::<*mut c_void, Utilization>(sym(
                        "nvmlDeviceGetProcessUtilization",
                    )?),
                };
                let rc = init();
                if rc != SUCCESS {
                    return Err(format!("nvmlInit_v2 failed (NVML error {rc})"));
                }
                Ok(api)
            }
        })();
        let api = match loaded {
            Ok(api) => api,
            Err(e) => {
                // SAFETY: the handle from dlopen above, closed once.
                unsafe { libc::dlclose(lib) };
                return Err(e);
            }
        };
        let mut n: c_uint = 0;
        // SAFETY: the library is initialised; n is a valid out pointer.
        let rc = unsafe { (api.count)(&mut n) };
        let mut devices = Vec::new();
        for i in 0..if rc == SUCCESS { n } else { 0 } {
            let mut d: Device = std::ptr::null_mut();
            // SAFETY: as above; d is a valid out pointer.
            if unsafe { (api.handle)(i, &mut d) } == SUCCESS {
                devices.push((d, DeviceState::default()));
            }
        }
        Ok(Nvml {
            lib,
            api,
            devices,
            infos: Vec::new(),
            samples: Vec::new(),
        })
    }

    /// Every process's figures over every device, summed by PID, into
    /// `out` (appended); an error names the call that failed.
    pub fn read(&mut self, out: &mut Vec<(u32, Gpu)>) -> Result<(), String> {
        let mut memory = HashMap::new();
        for (dev, state) in &mut self.devices {
            let mut on_device = HashMap::new();
            for (name, call) in [
                ("nvmlDeviceGetComputeRunningProcesses_v3", self.api.compute),
                (
                    "nvmlDeviceGetGraphicsRunningProcesses_v3",
                    self.api.graphics,
                ),
            ] {
                processes(*dev, call, &mut self.infos)
                    .map_err(|rc| format!("{name}: NVML error {rc}"))?;
                add_memory(&self.infos, &mut on_device);
            }
            for (pid, bytes) in on_device {
                *memory.entry(pid).or_insert(0u64) += bytes;
            }
            let utilization = self.api.utilization;
            let since = state.last_seen_us;
            samples(*dev, utilization, since, &mut self.samples)
                .map_err(|rc| format!("nvmlDeviceGetProcessUtilization: NVML error {rc}"))?;
            add_samples(&self.samples, state);
            // Processes no longer on the device are forgotten.
            state.busy.retain(|pid, _| memory.contains_key(pid));
        }
        let mut sums: HashMap<u32, Gpu> = HashMap::new();
        for (pid, bytes) in memory {
            let g = sums.entry(pid).or_default();
            g.mem_bytes = bytes;
            g.clients += 1;
        }
        for (_, state) in &self.devices {
            for (pid, &(_, ns)) in &state.busy {
                if let Some(g) = sums.get_mut(pid) {
                    g.busy_ns = g.busy_ns.saturating_add(ns);
                }
            }
        }
        out.extend(sums);
        Ok(())
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        // SAFETY: the library was initialised in open and is shut down and
        // closed once, here.
        unsafe {
            (self.api.shutdown)();
            libc::dlclose(self.lib);
        }
    }
}

/// Calls `call` until `infos` holds every process it lists.
fn processes(dev: Device, call: Processes, infos: &mut Vec<ProcessInfo>) -> Result<(), c_int> {
    for _ in 0..4 {
        let mut n = c_uint::try_from(infos.capacity()).unwrap_or(c_uint::MAX);
        infos.clear();
        // SAFETY: infos has room for n entries, which the call writes at
        // most; it sets n to how many it wrote (or needs).
        let rc = unsafe { call(dev, &mut n, infos.as_mut_ptr()) };
        match rc {
            SUCCESS => {
                // SAFETY: the call initialised the first n entries.
                unsafe { infos.set_len((n as usize).min(infos.capacity())) };
                return Ok(());
            }
            ERROR_INSUFFICIENT_SIZE => infos.reserve(n as usize + 8),
            rc => return Err(rc),
        }
    }
    Err(ERROR_INSUFFICIENT_SIZE)
}

/// The samples newer than `since_us`, into `out`.
fn samples(
    dev: Device,
    call: Utilization,
    since_us: u64,
    out: &mut Vec<UtilSample>,
) -> Result<(), c_int> {
    out.clear();
    let mut n: c_uint = 0;
    // SAFETY: a null buffer asks for the count only, written to n.
    let rc = unsafe { call(dev, std::ptr::null_mut(), &mut n, since_us) };
    match rc {
        // No sample since then.
        ERROR_NOT_FOUND => return Ok(()),
        SUCCESS | ERROR_INSUFFICIENT_SIZE => {}
        rc => return Err(rc),
    }
    out.reserve(n as usize);
    let mut n = c_uint::try_from(out.capacity()).unwrap_or(c_uint::MAX);
    // SAFETY: out has room for n entries, which the call writes at most.
    let rc = unsafe { call(dev, out.as_mut_ptr(), &mut n, since_us) };
    match rc {
        SUCCESS => {
            // SAFETY: the call initialised the first n entries.
            unsafe { out.set_len((n as usize).min(out.capacity())) };
            Ok(())
        }
        ERROR_NOT_FOUND => Ok(()),
        rc => Err(rc),
    }
}

/// Adds each listed process's memory on one device to `out`, once per
/// process (a process in both the compute and the graphics list shows the
/// same figure in each).
pub fn add_memory(infos: &[ProcessInfo], out: &mut HashMap<u32, u64>) {
    for i in infos {
        let bytes = match i.used_gpu_memory {
            NOT_AVAILABLE => 0,
            b => b,
        };
        let e = out.entry(i.pid).or_insert(0);
        *e = (*e).max(bytes);
    }
}

/// Turns a device's utilisation samples into busy time per process.
fn add_samples(samples: &[UtilSample], state: &mut DeviceState) {
    let mut sorted: Vec<&UtilSample> = samples
        .iter()
        .filter(|s| s.time_stamp > state.last_seen_us)
        .collect();
    sorted.sort_unstable_by_key(|s| s.time_stamp);
    for s in sorted {
        let e = state.busy.entry(s.pid).or_insert((s.time_stamp, 0));
        let period_us = s.time_stamp.saturating_sub(e.0);
        let pct = u64::from(s.sm_util.min(100));
        e.1 =
            e.1.saturating_add(period_us.saturating_mul(1000) * pct / 100);
        e.0 = s.time_stamp;
        state.last_seen_us = state.last_seen_us.max(s.time_stamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_sizes_match_nvml_header() {
        assert_eq!(size_of::<ProcessInfo>(), 24);
        assert_eq!(size_of::<UtilSample>(), 32);
    }

    #[test]
    fn memory_once_per_process_and_unknown_as_zero() {
        let info = |pid, used| ProcessInfo {
            pid,
            used_gpu_memory: used,
            ..Default::default()
        };
        let mut out = HashMap::new();
        add_memory(&[info(10, 1 << 20), info(11, NOT_AVAILABLE)], &mut out);
        add_memory(&[info(10, 1 << 20)], &mut out);
        assert_eq!(out[&10], 1 << 20);
        assert_eq!(out[&11], 0);
    }

    #[test]
    fn samples_become_busy_time() {
        let s = |pid, t, u| UtilSample {
            pid,
            time_stamp: t,
            sm_util: u,
            ..Default::default()
        };
        let mut st = DeviceState::default();
        // Out of order, as a driver may give them: the first sample of a
        // process starts its clock.
        add_samples(&[s(7, 2_000_000, 50), s(7, 1_000_000, 90)], &mut st);
        // 1 s at 50 %.
        assert_eq!(st.busy[&7], (2_000_000, 500_000_000));
        // A sample seen again (not newer than the last) adds nothing; a
        // percentage past 100 is taken as 100.
        add_samples(&[s(7, 2_000_000, 50), s(7, 2_500_000, 250)], &mut st);
        assert_eq!(st.busy[&7], (2_500_000, 1_000_000_000));
        assert_eq!(st.last_seen_us, 2_500_000);
    }

    #[test]
    fn absent_library_says_so() {
        // No NVIDIA driver on a machine without its library: the reason
        // names the library.
        if std::path::Path::new("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1").exists() {
            return;
        }
        let why = Nvml::open().err().unwrap();
        assert!(why.contains(LIBRARY), "{why}");
    }
}
