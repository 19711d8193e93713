//! Backend choice: `auto` takes BPF when it loads and otherwise procfs,
//! keeping the reason BPF was not used so the caller can log it once.

use std::path::{Path, PathBuf};

use crate::bpf::Bpf;
use crate::cmdline::Cmdlines;
use crate::dir::ProcDir;
use crate::error::{Error, Result};
use crate::fields::Field;
use crate::gpu::Gpus;
use crate::pool::Threads;
use crate::proc::{Exit, Proc};
use crate::query::Query;
use crate::taskstats::TaskstatsExits;

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    Auto,
    Bpf,
    Procfs,
}

impl BackendChoice {
    pub fn parse(s: &str) -> Option<BackendChoice> {
        Some(match s {
            "auto" => BackendChoice::Auto,
            "bpf" => BackendChoice::Bpf,
            "procfs" => BackendChoice::Procfs,
            _ => return None,
        })
    }
}

/// The backend in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Bpf,
    Procfs,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Bpf => "bpf",
            Backend::Procfs => "procfs",
        }
    }
}

enum Inner {
    Bpf(Box<Bpf>),
    Procfs(Box<ProcDir>),
}

/// A process table on one backend.
pub struct ProcTable {
    inner: Inner,
    fallback: Option<String>,
    sys_root: PathBuf,
    /// Exit capture on the procfs backend, once enabled.
    taskstats: Option<TaskstatsExits>,
    cmdlines: Cmdlines,
    /// The procfs backend's rows between [`ProcTable::read`] and
    /// [`ProcTable::build`] (it makes rows as it reads); `None`: no read
    /// waiting.
    staged: Option<Vec<Proc>>,
    /// The vector staged rows were read into last, kept for the next read.
    spare: Vec<Proc>,
    /// GPU figures, once a query asked for them.
    gpus: Option<Gpus>,
    proc_root: PathBuf,
    /// Why the BPF scan for GPU descriptors is not used, if it failed (the
    /// procfs scan is used instead).
    gpu_scan_error: Option<String>,
    /// Whether GPU reads ask NVIDIA's library.
    nvml: bool,
}

impl ProcTable {
    /// Opens a backend. BPF reads the live kernel, so it is only tried when
    /// `proc_root` is `/proc`; `auto` on another root is procfs.
    pub fn open(
        choice: BackendChoice,
        proc_root: impl AsRef<Path>,
        sys_root: impl AsRef<Path>,
    ) -> Result<ProcTable> {
        ProcTable::open_inner(choice, proc_root, sys_root, false, None)
    }

    /// As [`ProcTable::open`], the BPF backend's exit ring buffer
    /// `exit_ring_bytes` rather than 4 MiB
    /// ([`crate::bpf::Bpf::open_with_exit_ring`]): what an agent under a
    /// tight memory ceiling opens; with a `rows_cap` (0: none), the walk
    /// writes rows for about that many processes, the most resident, in
    /// rows for an eighth more (for an agent whose rows that ceiling caps
    /// from the start; see [`ProcTable::set_rows_cap`]); with `net`, the
    /// network programs loaded at the same time.
    pub fn open_with_exit_ring(
        choice: BackendChoice,
        proc_root: impl AsRef<Path>,
        sys_root: impl AsRef<Path>,
        exit_ring_bytes: u64,
        rows_cap: usize,
        net: bool,
    ) -> Result<ProcTable> {
        ProcTable::open_inner(
            choice,
            proc_root,
            sys_root,
            false,
            Some((exit_ring_bytes, rows_cap, net)),
        )
    }

    /// As [`ProcTable::open`], loading on BPF what
    /// [`ProcTable::start_ticks`] uses at the same time (one parse of the
    /// kernel's BTF for both): what the library's handles open.
    pub fn open_with_lookup(
        choice: BackendChoice,
        proc_root: impl AsRef<Path>,
        sys_root: impl AsRef<Path>,
    ) -> Result<ProcTable> {
        ProcTable::open_inner(choice, proc_root, sys_root, true, None)
    }

    fn open_inner(
        choice: BackendChoice,
        proc_root: impl AsRef<Path>,
        sys_root: impl AsRef<Path>,
        with_lookup: bool,
        exit_ring: Option<(u64, usize, bool)>,
    ) -> Result<ProcTable> {
        let bpf = || match (with_lookup, exit_ring) {
            (true, _) => Bpf::open_with_lookup(),
            (false, Some((bytes, cap, net))) => Bpf::open_with_exit_ring(bytes, cap, net),
            (false, None) => Bpf::open(),
        };
        let live = proc_root.as_ref() == Path::new("/proc");
        let table = |inner, fallback| ProcTable {
            inner,
            fallback,
            sys_root: sys_root.as_ref().to_path_buf(),
            taskstats: None,
            cmdlines: Cmdlines::new(proc_root.as_ref()),
            staged: None,
            spare: Vec::new(),
            gpus: None,
            proc_root: proc_root.as_ref().to_path_buf(),
            gpu_scan_error: None,
            nvml: true,
        };
        let procfs = |fallback| -> Result<ProcTable> {
            Ok(table(
                Inner::Procfs(Box::new(ProcDir::open(&proc_root, &sys_root)?)),
                fallback,
            ))
        };
        match choice {
            BackendChoice::Procfs => procfs(None),
            BackendChoice::Bpf => Ok(table(Inner::Bpf(Box::new(bpf()?)), None)),
            BackendChoice::Auto if !live => procfs(Some(format!(
                "proc root is {}, not the live /proc",
                proc_root.as_ref().display()
            ))),
            BackendChoice::Auto => match bpf() {
                Ok(b) => Ok(table(Inner::Bpf(Box::new(b)), None)),
                Err(e) => procfs(Some(e.to_string())),
            },
        }
    }

    pub fn backend(&self) -> Backend {
        match self.inner {
            Inner::Bpf(_) => Backend::Bpf,
            Inner::Procfs(_) => Backend::Procfs,
        }
    }

    /// Why `auto` did not take BPF, if it did not.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// Loads what [`ProcTable::start_ticks`] uses now rather than at its
    /// first call (the BPF backend's PID lookup; procfs needs nothing).
    pub fn open_lookup(&mut self) {
        if let Inner::Bpf(b) = &mut self.inner {
            b.open_lookup();
        }
    }

    /// What a library caller is told about the backend: why `auto` did not
    /// take BPF, and why start times walk the table rather than look each
    /// PID up (once tried); "" when neither.
    pub fn note(&self) -> String {
        let lookup = self
            .bpf()
            .and_then(Bpf::lookup_unavailable)
            .map(|why| format!("start times walk the table: {why}"));
        [self.fallback_reason().map(String::from), lookup]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The BPF backend, if in use.
    pub fn bpf(&self) -> Option<&Bpf> {
        match &self.inner {
            Inner::Bpf(b) => Some(b),
            Inner::Procfs(_) => None,
        }
    }

    /// The backend in words, for a log line: `bpf (walk)`, `bpf (iterator:
    /// WHY)` or `procfs`.
    pub fn describe(&self) -> String {
        match self.bpf() {
            Some(b) => match b.walk_unavailable() {
                None => "bpf (walk)".to_string(),
                Some(why) => format!("bpf (iterator; the walk is unavailable: {why})"),
            },
            None => "procfs".to_string(),
        }
    }

    /// The BPF backend, for exit capture.
    pub fn bpf_mut(&mut self) -> Option<&mut Bpf> {
        match &mut self.inner {
            Inner::Bpf(b) => Some(b),
            Inner::Procfs(_) => None,
        }
    }

    /// From the next build on, processes resident in fewer than `bytes`
    /// are left out of the rows where the backend can leave them out
    /// before building them (the BPF walk); elsewhere every row is built.
    /// 0: none.
    pub fn set_rss_floor(&mut self, bytes: u64) {
        if let Inner::Bpf(b) = &mut self.inner {
            b.set_rss_floor(bytes);
        }
    }

    /// From the next build on, at most `cap` processes are built where
    /// the backend can choose them before building them (the BPF walk:
    /// those resident in the most memory; from the next read on, the walk
    /// writes rows for about `cap` processes only); elsewhere every row is
    /// built. 0: no cap.
    pub fn set_rows_cap(&mut self, cap: usize) {
        if let Inner::Bpf(b) = &mut self.inner {
            b.set_rows_cap(cap);
        }
    }

    /// The processes the last build found, those below the RSS floor
    /// included (0 before the first).
    pub fn found(&self, built: &[Proc]) -> usize {
        match &self.inner {
            Inner::Bpf(b) => b.found().max(built.len()),
            Inner::Procfs(_) => built.len(),
        }
    }

    /// How many threads a snapshot is split between, on either backend
    /// (see [`Threads`]).
    pub fn set_threads(&mut self, threads: Threads) {
        match &mut self.inner {
            Inner::Bpf(b) => b.set_walkers(threads),
            Inner::Procfs(d) => d.set_threads(threads),
        }
    }

    /// Starts capturing every process that ends, with its final counters,
    /// until [`ProcTable::drain_exits`] takes them: through the BPF ring
    /// buffer on the bpf backend (its wakeup watermark beyond the ring, so
    /// it never wakes anyone), else through taskstats (needs
    /// CAP_NET_ADMIN). Returns which.
    pub fn enable_exits(&mut self) -> Result<&'static str> {
        match &mut self.inner {
            Inner::Bpf(b) => b.enable_exits(u32::MAX).map(|()| "bpf"),
            Inner::Procfs(_) => {
                if self.taskstats.is_none() {
                    let path = self.sys_root.join("devices/system/cpu/possible");
                    let io_err = |source| Error::Io {
                        path: path.clone(),
                        source,
                    };
                    let possible = std::fs::read_to_string(&path).map_err(io_err)?;
                    self.taskstats =
                        Some(TaskstatsExits::open(possible.trim()).map_err(Error::Taskstats)?);
                }
                Ok("taskstats")
            }
        }
    }

    /// Appends the exits captured since the last call (nothing blocks);
    /// returns how many.
    pub fn drain_exits(&mut self, out: &mut Vec<Exit>) -> usize {
        match (&mut self.inner, &mut self.taskstats) {
            (Inner::Bpf(b), _) => b.drain_exits(out),
            (Inner::Procfs(_), Some(t)) => t.drain(out),
            (Inner::Procfs(_), None) => 0,
        }
    }

    /// Gives exits captured through taskstats, whose start is known to
    /// within a second, the exact start of the process `seen` (a table of
    /// this backend read before they ended, sorted by PID) shows
    /// ([`crate::taskstats::settle_starts`]); BPF's exits are exact and left
    /// alone.
    pub fn settle_exits(&self, exits: &mut [Exit], seen: &[Proc]) {
        if self.taskstats.is_some() && self.bpf().is_none() {
            crate::taskstats::settle_starts(exits, seen);
        }
    }

    /// Exit records lost since capture began: dropped by the full BPF ring
    /// buffer, or taskstats receive-buffer overflows (each at least one
    /// record). `None` when exits are not captured.
    pub fn exits_lost(&self) -> Option<u64> {
        match (&self.inner, &self.taskstats) {
            (Inner::Bpf(b), _) => b.exit_stats().ok().map(|s| s.lost),
            (Inner::Procfs(_), Some(t)) => Some(t.overflows()),
            (Inner::Procfs(_), None) => None,
        }
    }

    /// Processes left out because a file of theirs could not be parsed
    /// (procfs backend), and the first such error.
    pub fn unreadable(&self) -> (u64, Option<&str>) {
        match &self.inner {
            Inner::Bpf(_) => (0, None),
            Inner::Procfs(d) => d.unreadable(),
        }
    }

    /// Fills `out` (cleared first) with one row per selected process or
    /// thread, sorted by PID.
    pub fn snapshot(&mut self, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        if query.fields.has(Field::Gpu) {
            self.read_gpus(query);
        }
        match &mut self.inner {
            Inner::Bpf(b) => b.snapshot(query, out),
            Inner::Procfs(d) => d.snapshot(query, out),
        }?;
        self.finish(query, out)
    }

    /// The first half of [`ProcTable::snapshot`]: reads the table without
    /// making the caller's rows; [`ProcTable::build`] makes them. The BPF
    /// backend keeps what it read in the program's array (or its buffer)
    /// and builds the rows from it, in place: a caller that hands tables to
    /// readers under a lock reads outside the lock and builds under it
    /// into the table it hands out, with one table in memory, not two.
    /// The procfs backend makes rows as it reads, into a table of its own
    /// that `build` swaps with the caller's.
    pub fn read(&mut self, query: &Query) -> Result<()> {
        self.staged = None;
        if query.fields.has(Field::Gpu) {
            self.read_gpus(query);
        }
        match &mut self.inner {
            Inner::Bpf(b) => b.read(query),
            Inner::Procfs(d) => {
                let mut rows = std::mem::take(&mut self.spare);
                d.snapshot(query, &mut rows)?;
                self.staged = Some(rows);
                Ok(())
            }
        }
    }

    /// The second half of [`ProcTable::snapshot`]: fills `out` from the
    /// last [`ProcTable::read`], which was of the same `query`.
    pub fn build(&mut self, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        match &mut self.inner {
            Inner::Bpf(b) => b.build(query, out)?,
            Inner::Procfs(_) => {
                let rows = self.staged.take().ok_or_else(|| {
                    crate::Error::Decode("no process-table read to build rows from".into())
                })?;
                self.spare = std::mem::replace(out, rows);
            }
        }
        self.finish(query, out)
    }

    fn finish(&mut self, query: &Query, out: &mut [Proc]) -> Result<()> {
        if !out.is_sorted_by_key(|p| p.pid) {
            out.sort_unstable_by_key(|p| p.pid);
        }
        if query.fields.has(Field::Cmdline) {
            self.cmdlines.update(out)?;
        }
        if query.fields.has(Field::Gpu)
            && let Some(g) = self.gpus.as_ref()
        {
            g.apply(out);
        }
        Ok(())
    }

    /// Reads the GPU figures (see [`crate::gpu`]), scanning for GPU
    /// descriptors first when a scan is due: in the kernel on BPF (on
    /// procfs when that scan cannot load), else through /proc.
    fn read_gpus(&mut self, query: &Query) {
        let gpus = self.gpus.get_or_insert_with(|| Gpus::new(&self.proc_root));
        // A query by PID scans those processes, at each read.
        let pids = query.pids.as_deref();
        if pids.is_some() || gpus.due() {
            let mut found = Vec::new();
            let scanned = match &mut self.inner {
                Inner::Bpf(b) => match b.gpu_files(pids, &mut found) {
                    Ok(()) => true,
                    Err(e) => {
                        self.gpu_scan_error = Some(e.to_string());
                        false
                    }
                },
                Inner::Procfs(_) => false,
            };
            if scanned {
                gpus.found(found, pids.is_none());
            } else {
                gpus.scan_procfs(pids);
            }
        }
        gpus.read(self.nvml);
    }

    /// The most time between two sweeps of every TCP socket by the
    /// network read ([`crate::bpf::net::SWEEP_EVERY`] unless set; BPF
    /// only): between them, a read visits the sockets of the processes
    /// that ran.
    pub fn set_net_sweep_every(&mut self, every: std::time::Duration) {
        if let Inner::Bpf(b) = &mut self.inner {
            b.set_net_sweep_every(every);
        }
    }

    /// The least time between two scans for GPU descriptors
    /// ([`crate::gpu::SCAN_EVERY`] unless set).
    pub fn set_gpu_scan_every(&mut self, every: std::time::Duration) {
        self.gpus
            .get_or_insert_with(|| Gpus::new(&self.proc_root))
            .set_scan_every(every);
    }

    /// Whether GPU reads ask NVIDIA's library where it is installed (yes
    /// unless set).
    pub fn set_gpu_nvml(&mut self, on: bool) {
        self.nvml = on;
    }

    /// Scans for GPU descriptors run so far, and the descriptors the last
    /// one found still open, as (TGID, descriptor); `None` before GPU
    /// figures were asked for.
    pub fn gpu_holders(&self) -> Option<(u64, &[(u32, u32)])> {
        self.gpus.as_ref().map(|g| (g.scans(), g.holders()))
    }

    /// What a user is told about GPU figures: why the kernel's scan is not
    /// used, an fdinfo file that could not be parsed, why NVIDIA's library
    /// is not read; "" when none, or before GPU figures were asked for.
    pub fn gpu_note(&self) -> String {
        let Some(g) = self.gpus.as_ref() else {
            return String::new();
        };
        let scan = self
            .gpu_scan_error
            .as_ref()
            .map(|e| format!("GPU descriptors are found through /proc: {e}"));
        let slow = self
            .bpf()
            .and_then(Bpf::gpu_scan_method)
            .and_then(|(_, why)| why)
            .map(|why| format!("GPU descriptors are found a descriptor at a time: {why}"));
        let lost = self
            .bpf()
            .map(Bpf::gpu_scan_lost)
            .filter(|&n| n > 0)
            .map(|n| format!("{n} GPU descriptors past the scan's room were not read"));
        [
            scan.as_deref(),
            slow.as_deref(),
            lost.as_deref(),
            g.error(),
            g.nvml_unavailable(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ")
    }

    /// The command line of `p`'s process, from the last snapshot that asked
    /// for [`Field::Cmdline`]: read from /proc the first time a process (or
    /// the program it exec'd) is seen, then kept (see `cmdline.rs`). `None`
    /// for kernel threads, zombies and processes that went before they
    /// were read. At most [`crate::CMDLINE_MAX`] bytes.
    pub fn cmdline(&self, p: &Proc) -> Option<&str> {
        self.cmdlines.get(p)
    }

    /// Command lines read from /proc so far (the rest came from the cache).
    pub fn cmdline_reads(&self) -> u64 {
        self.cmdlines.reads()
    }

    /// Start time in clock ticks of the process or thread each PID names,
    /// as /proc/PID/stat's field 22 (`None`: no such task). The BPF
    /// backend looks each PID up in the kernel (see [`crate::bpf::lookup`];
    /// on a kernel without that it walks the table) and confirms each PID
    /// that gave nothing from /proc: one failed open for a PID that names
    /// nothing, and the answer /proc gives for a task the kernel's lookup
    /// does not return (a thread's id on the walk; a machine's PID 1 seen
    /// so) or one that started between the two.
    pub fn start_ticks(&mut self, pids: &[u32]) -> Result<Vec<Option<u64>>> {
        match &mut self.inner {
            Inner::Bpf(b) => {
                let mut ticks = b.start_ticks(pids)?;
                for (t, &pid) in ticks.iter_mut().zip(pids) {
                    if t.is_none() && pid > 0 {
                        *t = proc_start_ticks(pid);
                    }
                }
                Ok(ticks)
            }
            Inner::Procfs(d) => d.start_ticks(pids),
        }
    }
}

/// /proc/PID/stat's start time, `None` when there is no such file or it
/// does not parse.
fn proc_start_ticks(pid: u32) -> Option<u64> {
    use std::io::Read;
    let mut buf = [0u8; 1024];
    let mut f = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let n = f.read(&mut buf).ok()?;
    procfs::pid::parse_start_ticks(&buf[..n]).ok()
}
