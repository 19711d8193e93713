//! GPU use per process ([`crate::Field::Gpu`]): the time the GPU's engines
//! spent on the process's clients and the GPU memory they hold, from the
//! kernel's DRM client stats in `/proc/PID/fdinfo/FD` ([`fdinfo`]), and
//! from NVIDIA's management library where its driver is loaded
//! ([`nvml`]; that driver gives no fdinfo).
//!
//! Only the descriptors of a GPU's device file are read. They are found by
//! a scan, at the first read and then at most every [`SCAN_EVERY`] (unless
//! set): on the BPF backend the kernel's task-file iterator visits every
//! descriptor and writes out those of a character device of a GPU's major
//! ([`DRM_MAJOR`], [`ACCEL_MAJOR`]; `crate::bpf::gpu`), opening none; on
//! the procfs backend each `/proc/PID/fd` is listed and its links read,
//! those to `/dev/dri/` and `/dev/accel/` kept (a system call per
//! descriptor). Between scans, each read reads the fdinfo of the
//! descriptors the last scan found, a file each: a process that opens a
//! GPU shows at the next scan, one that closes it at the next read.
//!
//! A client is one open of the device (a `struct drm_file`). Reached
//! through several descriptors, dup'd or inherited, it is counted once, by
//! its `drm-client-id`: for the first process found holding it (the lowest
//! PID), as a socket two processes hold is charged to one. Sums over
//! processes (a cgroup's, the machine's) so count each client once. A
//! client's busy time never goes back between reads (drivers may show a
//! smaller figure for a moment; the kernel's documentation says to keep
//! the larger).

pub mod fdinfo;
pub mod nvml;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::proc::{Gpu, Proc};

/// The least time between two scans for GPU descriptors, unless set.
pub const SCAN_EVERY: Duration = Duration::from_secs(30);

/// The character-device major of DRM's device files (`/dev/dri/*`).
pub const DRM_MAJOR: u32 = 226;
/// That of compute accelerators' (`/dev/accel/*`, the DRM accel
/// subsystem).
pub const ACCEL_MAJOR: u32 = 261;

/// Where a scan on procfs looks for a GPU's device file.
const DEVICE_DIRS: [&[u8]; 2] = [b"/dev/dri/", b"/dev/accel/"];

/// One client, for counting it once: its device and id, or where no id
/// is given, the descriptor it was read through.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    device: String,
    id: Option<u64>,
    holder: (u32, u32),
}

/// The GPU reader of a process table.
pub(crate) struct Gpus {
    proc_root: PathBuf,
    /// The GPU descriptors the last scan found, as (TGID, descriptor),
    /// sorted; those whose fdinfo no longer names a driver are dropped.
    holders: Vec<(u32, u32)>,
    last_scan: Option<Instant>,
    scan_every: Duration,
    scans: u64,
    /// The last read's figures by TGID, sorted.
    sums: Vec<(u32, Gpu)>,
    /// Each client's busy time as last given.
    busy: HashMap<Key, u64>,
    buf: Vec<u8>,
    /// The first fdinfo file the last read could not parse, and why.
    error: Option<String>,
    nvml: Option<Result<nvml::Nvml, String>>,
}

impl Gpus {
    pub(crate) fn new(proc_root: &Path) -> Gpus {
        Gpus {
            proc_root: proc_root.to_path_buf(),
            holders: Vec::new(),
            last_scan: None,
            scan_every: SCAN_EVERY,
            scans: 0,
            sums: Vec::new(),
            busy: HashMap::new(),
            buf: Vec::new(),
            error: None,
            nvml: None,
        }
    }

    /// Whether a scan of every process for GPU descriptors is due.
    pub(crate) fn due(&self) -> bool {
        self.last_scan
            .is_none_or(|t| t.elapsed() >= self.scan_every)
    }

    pub(crate) fn set_scan_every(&mut self, every: Duration) {
        self.scan_every = every;
    }

    /// Scans run so far.
    pub(crate) fn scans(&self) -> u64 {
        self.scans
    }

    /// The descriptors of GPUs the last scan found, as (TGID, descriptor),
    /// less those found closed since.
    pub(crate) fn holders(&self) -> &[(u32, u32)] {
        &self.holders
    }

    /// Takes a scan's descriptors (in any order): of every process
    /// (`whole`), or of some only, after which the next read of a whole
    /// table scans again.
    pub(crate) fn found(&mut self, mut holders: Vec<(u32, u32)>, whole: bool) {
        holders.sort_unstable();
        holders.dedup();
        self.holders = holders;
        self.last_scan = whole.then(Instant::now);
        self.scans += 1;
    }

    /// The scan on procfs, of every process (`None`) or of those named:
    /// their descriptors whose link names a file under `/dev/dri/` or
    /// `/dev/accel/`.
    pub(crate) fn scan_procfs(&mut self, pids: Option<&[u32]>) {
        let mut found = Vec::new();
        let listed: Vec<u32> = match pids {
            Some(p) => p.to_vec(),
            None => match std::fs::read_dir(&self.proc_root) {
                Ok(dir) => dir
                    .flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .collect(),
                Err(_) => Vec::new(),
            },
        };
        let mut path = PathBuf::new();
        for tgid in listed {
            path.clone_from(&self.proc_root);
            path.push(tgid.to_string());
            path.push("fd");
            // Gone, or not ours to read: nothing found.
            let Ok(fds) = std::fs::read_dir(&path) else {
                continue;
            };
            for fd in fds.flatten() {
                let Some(n) = fd.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                    continue;
                };
                let Ok(target) = std::fs::read_link(fd.path()) else {
                    continue;
                };
                let target = target.as_os_str().as_encoded_bytes();
                if DEVICE_DIRS.iter().any(|d| target.starts_with(d)) {
                    found.push((tgid, n));
                }
            }
        }
        self.found(found, pids.is_none());
    }

    /// Reads the fdinfo of every descriptor the last scan found, and asks
    /// NVIDIA's library where `nvml` (tried once, at the first read that
    /// asks).
    pub(crate) fn read(&mut self, with_nvml: bool) {
        self.sums.clear();
        self.error = None;
        let mut busy = HashMap::with_capacity(self.busy.len());
        let mut kept = Vec::with_capacity(self.holders.len());
        let mut path = self.proc_root.clone();
        let holders = std::mem::take(&mut self.holders);
        for &(tgid, fd) in &holders {
            path.push(tgid.to_string());
            path.push("fdinfo");
            path.push(fd.to_string());
            let read = read_into(&path, &mut self.buf);
            let shown = format!("{}", path.display());
            path.pop();
            path.pop();
            path.pop();
            // Closed, or the process ended.
            if read.is_err() {
                continue;
            }
            let client = match fdinfo::parse(&self.buf) {
                // No longer a DRM client's (the number reused for another
                // file), or a driver with no stats.
                Ok(None) => continue,
                Ok(Some(c)) => c,
                Err(e) => {
                    kept.push((tgid, fd));
                    self.error.get_or_insert_with(|| format!("{shown}: {e}"));
                    continue;
                }
            };
            kept.push((tgid, fd));
            let key = Key {
                holder: match client.id {
                    Some(_) => (0, 0),
                    None => (tgid, fd),
                },
                device: client.device,
                id: client.id,
            };
            if busy.contains_key(&key) {
                continue;
            }
            let ns = client
                .busy_ns
                .max(self.busy.get(&key).copied().unwrap_or(0));
            busy.insert(key, ns);
            let g = self.entry(tgid);
            g.busy_ns = g.busy_ns.saturating_add(ns);
            g.mem_bytes = g.mem_bytes.saturating_add(client.mem_bytes);
            g.clients += 1;
        }
        self.holders = kept;
        self.busy = busy;
        if with_nvml {
            self.read_nvml();
        }
    }

    /// What NVIDIA's library gives, added to the processes' sums.
    fn read_nvml(&mut self) {
        let state = self.nvml.get_or_insert_with(nvml::Nvml::open);
        let Ok(lib) = state else {
            return;
        };
        let mut got = Vec::new();
        if let Err(e) = lib.read(&mut got) {
            self.error.get_or_insert(e);
        }
        for (pid, g) in got {
            let e = self.entry(pid);
            e.busy_ns = e.busy_ns.saturating_add(g.busy_ns);
            e.mem_bytes = e.mem_bytes.saturating_add(g.mem_bytes);
            e.clients += g.clients;
        }
    }

    /// The sums' entry of `tgid`, added where absent (kept sorted).
    fn entry(&mut self, tgid: u32) -> &mut Gpu {
        let i = match self.sums.binary_search_by_key(&tgid, |s| s.0) {
            Ok(i) => i,
            Err(i) => {
                self.sums.insert(i, (tgid, Gpu::default()));
                i
            }
        };
        &mut self.sums[i].1
    }

    /// Gives every process row (not a thread's) its figures: zero for one
    /// that holds no GPU.
    pub(crate) fn apply(&self, out: &mut [Proc]) {
        for p in out.iter_mut().filter(|p| p.pid == p.tgid) {
            p.gpu = Some(
                self.sums
                    .binary_search_by_key(&p.tgid, |s| s.0)
                    .map_or_else(|_| Gpu::default(), |i| self.sums[i].1),
            );
        }
    }

    /// Why a figure is missing: the first fdinfo file the last read could
    /// not parse, or what NVIDIA's library answered.
    pub(crate) fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Why NVIDIA's library is not read, once tried.
    pub(crate) fn nvml_unavailable(&self) -> Option<&str> {
        match &self.nvml {
            Some(Err(why)) => Some(why),
            _ => None,
        }
    }
}

/// Reads the file at `path` into `buf` (cleared first); at most 64 KiB.
fn read_into(path: &Path, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    std::fs::File::open(path)?
        .take(64 * 1024)
        .read_to_end(buf)
        .map(drop)
}
