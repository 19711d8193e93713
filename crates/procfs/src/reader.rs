//! I/O: reading kernel files under a proc and a sys root into one reused buffer.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cpu::{self, CpuList, CpuPlace, Topology};
use crate::error::{Error, ParseError, Result};
use crate::file_io::{TooLarge, open_nonblocking, too_large_or_io};
use crate::gather::{self, GatherOptions, Gatherer};
use crate::limits::DEFAULT_MAX_FILE_BYTES;
use crate::sample::{SourceCost, SourceStatus, SystemSample};
use crate::source::Source;

/// Reads system sources under a proc root and a sys root (by default `/proc` and
/// `/sys`; a fixture tree in tests). One buffer is reused for every read, and
/// the paths are built once, so a warm read allocates nothing.
pub struct Reader {
    proc_root: PathBuf,
    sys_root: PathBuf,
    paths: [PathBuf; Source::COUNT],
    kept: [Option<File>; Source::COUNT],
    keep_open: bool,
    buf: Vec<u8>,
    /// A file less the lines a read left out
    /// ([`SystemSample::parse_source_skipping`]).
    pub(crate) scratch: Vec<u8>,
    max_file_bytes: usize,
    gatherer: Gatherer,
    /// Sources whose bytes, as read, are kept for [`Reader::take_kept`]
    /// (a bit per [`Source`] index).
    keep_bytes: u128,
    kept_bytes: Vec<u8>,
    /// The textfile source on a thread of its own: wanted, and started
    /// (at the first read, so that it inherits the reading thread's CPU
    /// placement).
    pub(crate) textfile_background: bool,
    pub(crate) textfile_worker: Option<crate::textfile_worker::Worker>,
}

const INITIAL_BUF: usize = 64 << 10;

impl Reader {
    pub fn new(proc_root: impl Into<PathBuf>, sys_root: impl Into<PathBuf>) -> Self {
        let proc_root = proc_root.into();
        let sys_root = sys_root.into();
        let gatherer = Gatherer::default();
        let paths =
            Source::ALL.map(|s| gather::main_path(s, &proc_root, &sys_root, &gatherer.options));
        Reader {
            proc_root,
            sys_root,
            paths,
            kept: std::array::from_fn(|_| None),
            keep_open: false,
            buf: vec![0; INITIAL_BUF],
            scratch: Vec::new(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            gatherer,
            keep_bytes: 0,
            kept_bytes: Vec::new(),
            textfile_background: false,
            textfile_worker: None,
        }
    }

    /// Reads the textfile source on a thread of its own: a read hands back
    /// the last parse that finished and starts the next, so a large, slow
    /// or hung directory never delays another source (the agent's sampler
    /// uses this; a one-shot reader leaves it off and reads in line). The
    /// thread starts at the first read of the source with a directory set
    /// (none without one: there is nothing to read); where it cannot, the
    /// source is read in line.
    pub fn set_textfile_background(&mut self, on: bool) {
        self.textfile_background = on;
        if !on {
            self.textfile_worker = None;
        }
    }

    pub(crate) fn textfile_directory(&self) -> Option<PathBuf> {
        self.gatherer.options.textfile_directory.clone()
    }

    /// Options of the gathered sources: the root-filesystem prefix (mounts,
    /// os-release), filesystem exclusions, the statfs wait.
    /// Records every file the gathered sources open from now on (or stops,
    /// and forgets them): what a read touches, for tests and diagnosis.
    pub fn trace_opens(&mut self, on: bool) {
        self.gatherer.opened = on.then(Vec::new);
    }

    /// The files the gathered sources opened since [`Reader::trace_opens`].
    pub fn opened(&self) -> &[PathBuf] {
        self.gatherer.opened.as_deref().unwrap_or_default()
    }

    /// Lowers (or restores, with `None`) the bytes of the textfile
    /// directory read: the files past it are refused by name.
    pub fn set_textfile_max_dir_bytes(&mut self, cap: Option<usize>) {
        self.gatherer.options.textfile_max_dir_bytes = cap
            .map_or(crate::textfile::MAX_DIR_BYTES, |c| {
                c.min(crate::textfile::MAX_DIR_BYTES)
            });
    }

    pub fn set_gather_options(&mut self, options: GatherOptions) {
        self.gatherer.options = options;
        self.paths = Source::ALL
            .map(|s| gather::main_path(s, &self.proc_root, &self.sys_root, &self.gatherer.options));
    }

    /// Keeps the bytes of each source in `sources`, as read, for
    /// [`Reader::take_kept`] (a history records them).
    pub fn keep_bytes_of(&mut self, sources: &[Source]) {
        self.keep_bytes = sources.iter().fold(0, |m, s| m | 1u128 << (*s as usize));
    }

    pub(crate) fn keep(&mut self, source: Source, len: usize) {
        if self.keep_bytes & 1u128 << (source as usize) != 0 {
            crate::kept::push(&mut self.kept_bytes, source, &self.buf[..len]);
        }
    }

    /// The bytes kept since the last call ([`crate::kept::entries`] reads
    /// them); `out` is cleared and swapped in, so neither side allocates
    /// once warm.
    pub fn take_kept(&mut self, out: &mut Vec<u8>) {
        out.clear();
        std::mem::swap(out, &mut self.kept_bytes);
    }

    pub fn proc_root(&self) -> &Path {
        &self.proc_root
    }

    pub fn sys_root(&self) -> &Path {
        &self.sys_root
    }

    pub fn path(&self, source: Source) -> &Path {
        &self.paths[source as usize]
    }

    /// Keep each file open after its first read and re-read it with pread at
    /// offset 0 (one syscall per sample instead of three).
    pub fn set_keep_open(&mut self, keep: bool) {
        self.keep_open = keep;
        if !keep {
            self.kept = std::array::from_fn(|_| None);
        }
    }

    /// Refuse files larger than `bytes` (default 256 MiB) with [`Error::TooLarge`].
    pub fn set_max_file_bytes(&mut self, bytes: usize) {
        self.max_file_bytes = bytes.max(1);
    }

    pub fn max_file_bytes(&self) -> usize {
        self.max_file_bytes
    }

    /// The raw bytes of `source`.
    pub fn read_raw(&mut self, source: Source) -> Result<&[u8]> {
        match self.read_raw_io(source) {
            Ok(n) => Ok(&self.buf[..n]),
            Err(e) => Err(too_large_or_io(
                &self.paths[source as usize],
                e,
                self.max_file_bytes,
            )),
        }
    }

    /// Reads `source` into the buffer; returns its length. Errors carry no path
    /// yet, so that a missing optional file costs no allocation.
    pub(crate) fn read_raw_io(&mut self, source: Source) -> std::io::Result<usize> {
        let i = source as usize;
        let path = &self.paths[i];
        if source.gathered() {
            return self.gatherer.gather(
                source,
                &self.proc_root,
                &self.sys_root,
                &mut self.buf,
                self.max_file_bytes,
            );
        }
        if source.files().len() > 1 {
            return read_parts(
                &self.proc_root,
                source.files(),
                &mut self.buf,
                self.max_file_bytes,
            );
        }
        if !self.keep_open {
            return read_whole(path, &mut self.buf, self.max_file_bytes);
        }
        if self.kept[i].is_none() {
            self.kept[i] = Some(open_nonblocking(path)?);
        }
        let file = self.kept[i].as_ref().expect("opened above");
        let r = fill(&mut self.buf, self.max_file_bytes, |b, off| {
            file.read_at(b, off as u64)
        });
        if r.is_err() {
            // A file that vanished (or a device that went away) is reopened next time.
            self.kept[i] = None;
        }
        r
    }

    /// The bytes of the last read.
    pub(crate) fn buffer(&self, len: usize) -> &[u8] {
        &self.buf[..len]
    }

    /// Reads `source` and hands its bytes to `parse`; a parse failure is reported
    /// with the path.
    pub fn read_with<T>(
        &mut self,
        source: Source,
        parse: impl FnOnce(&[u8]) -> std::result::Result<T, ParseError>,
    ) -> Result<T> {
        let bytes = self.read_raw(source)?;
        parse(bytes).map_err(|e| Error::Parse {
            path: self.paths[source as usize].clone(),
            source: e,
        })
    }

    /// Reads a small file below the sys root (or, with `proc`, the proc root)
    /// as text. Not for the hot path.
    fn read_text(&mut self, root_is_proc: bool, rel: &str) -> Result<String> {
        let root = if root_is_proc {
            &self.proc_root
        } else {
            &self.sys_root
        };
        let path = root.join(rel);
        let n = read_whole(&path, &mut self.buf, self.max_file_bytes)
            .map_err(|e| too_large_or_io(&path, e, self.max_file_bytes))?;
        Ok(String::from_utf8_lossy(&self.buf[..n]).into_owned())
    }

    fn read_cpulist(&mut self, rel: &str) -> Result<CpuList> {
        let text = self.read_text(false, rel)?;
        CpuList::parse(&text).map_err(|e| Error::Parse {
            path: self.sys_root.join(rel),
            source: e,
        })
    }

    /// A topology id; `None` when absent, unreadable or not a number
    /// (die_id is -1 on architectures without dies).
    fn read_id(&mut self, rel: &str) -> Option<u32> {
        self.read_text(false, rel).ok()?.trim().parse::<u32>().ok()
    }

    /// CPU topology and isolation, from whatever the tree has. Nothing here
    /// is required: a file that is missing, unreadable or malformed leaves
    /// its part unknown or filled from what is known (`online`, `possible`
    /// and `present` stand in for one another; failing all three, the CPU
    /// rows of /proc/stat), and adds a line to `notes` saying so.
    pub fn read_topology(&mut self) -> Topology {
        let mut notes = Vec::new();
        let mut list = |me: &mut Self, rel: &str, required: bool| -> Option<CpuList> {
            match me.read_cpulist(rel) {
                Ok(l) => Some(l),
                Err(e) if e.is_not_found() && !required => None,
                Err(e) => {
                    notes.push(e.to_string());
                    None
                }
            }
        };
        let online = list(self, "devices/system/cpu/online", true);
        let possible = list(self, "devices/system/cpu/possible", true);
        let present = list(self, "devices/system/cpu/present", true);
        let isolated = list(self, cpu::ISOLATED_FILE, false);
        let nohz_full = list(self, "devices/system/cpu/nohz_full", false);
        let known = online
            .clone()
            .or_else(|| present.clone())
            .or_else(|| possible.clone());
        let (known, stat_note) = match known {
            Some(k) => (k, None),
            None => {
                let k = self.cpus_in_stat();
                let what = if k.is_empty() {
                    "CPU topology unknown: no CPU list in sysfs and no CPU rows in /proc/stat"
                        .to_string()
                } else {
                    format!("CPU topology from the CPU rows of /proc/stat: {k}")
                };
                (k, Some(what))
            }
        };
        notes.extend(stat_note);
        let online = online.unwrap_or_else(|| known.clone());
        let present = present.unwrap_or_else(|| known.clone());
        let possible = possible.unwrap_or_else(|| present.clone());
        let cmdline = match self.read_text(true, "cmdline") {
            Ok(t) => t,
            Err(e) => {
                if !e.is_not_found() {
                    notes.push(e.to_string());
                }
                String::new()
            }
        };
        let boot = cpu::parse_cmdline(&cmdline).unwrap_or_else(|e| {
            notes.push(format!("{}: {e}", self.proc_root.join("cmdline").display()));
            Default::default()
        });
        let mut nodes = Vec::new();
        if let Ok(dir) = std::fs::read_dir(self.sys_root.join("devices/system/node")) {
            for entry in dir.flatten() {
                let name = entry.file_name();
                let Some(n) = name
                    .to_str()
                    .and_then(|s| s.strip_prefix("node"))
                    .and_then(|s| s.parse::<u32>().ok())
                else {
                    continue;
                };
                match self.read_cpulist(&format!("devices/system/node/node{n}/cpulist")) {
                    Ok(l) => nodes.push((n, l)),
                    Err(e) => notes.push(e.to_string()),
                }
            }
        }
        let mut cpus = Vec::with_capacity(present.len());
        for &cpu in present.cpus() {
            let base = format!("devices/system/cpu/cpu{cpu}/topology");
            cpus.push(CpuPlace {
                cpu,
                online: online.contains(cpu),
                package_id: self.read_id(&format!("{base}/physical_package_id")),
                die_id: self.read_id(&format!("{base}/die_id")),
                core_id: self.read_id(&format!("{base}/core_id")),
                numa_node: nodes.iter().find(|(_, l)| l.contains(cpu)).map(|(n, _)| *n),
            });
        }
        Topology {
            online,
            possible,
            present,
            isolated,
            nohz_full,
            boot,
            cpus,
            notes,
        }
    }

    /// The CPUs /proc/stat has a row for (`cpuN`), when sysfs says nothing.
    fn cpus_in_stat(&mut self) -> CpuList {
        let Ok(text) = self.read_text(true, "stat") else {
            return CpuList::default();
        };
        let ids: Vec<u32> = text
            .lines()
            .filter_map(|l| l.strip_prefix("cpu")?.split(' ').next()?.parse().ok())
            .collect();
        CpuList::new(ids)
    }
}

/// The files `parts` below `root` one after another into `buf`, each ending
/// with a newline; a missing file after the first is an empty line. The
/// paths are joined on a stack buffer, so a warm read allocates nothing.
fn read_parts(
    root: &Path,
    parts: &[&str],
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<usize> {
    use std::os::unix::ffi::OsStrExt;
    let mut filled = 0;
    let mut path = [0u8; 4096];
    let root = root.as_os_str().as_bytes();
    for (k, part) in parts.iter().enumerate() {
        let n = root.len() + 1 + part.len();
        if n >= path.len() {
            return Err(std::io::ErrorKind::InvalidInput.into());
        }
        path[..root.len()].copy_from_slice(root);
        path[root.len()] = b'/';
        path[root.len() + 1..n].copy_from_slice(part.as_bytes());
        let p = Path::new(std::ffi::OsStr::from_bytes(&path[..n]));
        let start = filled;
        filled = match open_nonblocking(p) {
            Ok(mut f) => fill_from(buf, filled, max, |b, _| f.read(b))?,
            Err(e) if k > 0 && e.kind() == std::io::ErrorKind::NotFound => filled,
            Err(e) => return Err(e),
        };
        // Each part is one line, even when empty or missing.
        if filled == start || buf[filled - 1] != b'\n' {
            if filled == buf.len() {
                let grown = (buf.len() * 2).clamp(INITIAL_BUF, max.max(filled + 1));
                buf.resize(grown, 0);
            }
            buf[filled] = b'\n';
            filled += 1;
        }
    }
    Ok(filled)
}

/// open + read to end of file + close.
fn read_whole(path: &Path, buf: &mut Vec<u8>, max: usize) -> std::io::Result<usize> {
    let mut f = open_nonblocking(path)?;
    fill(buf, max, |b, _| f.read(b))
}

/// Reads until end of file into `buf`, growing it (by doubling, up to `max`
/// bytes) only when a file does not fit. `buf.len()` is its usable size and
/// stays zero-filled, so nothing is re-initialised between reads.
fn fill(
    buf: &mut Vec<u8>,
    max: usize,
    read: impl FnMut(&mut [u8], usize) -> std::io::Result<usize>,
) -> std::io::Result<usize> {
    fill_from(buf, 0, max, read)
}

/// As [`fill`], appending after the first `filled` bytes.
fn fill_from(
    buf: &mut Vec<u8>,
    mut filled: usize,
    max: usize,
    mut read: impl FnMut(&mut [u8], usize) -> std::io::Result<usize>,
) -> std::io::Result<usize> {
    loop {
        if filled == buf.len() {
            if buf.len() >= max {
                return Err(std::io::Error::other(TooLarge));
            }
            let new_len = (buf.len() * 2).clamp(INITIAL_BUF, max);
            buf.resize(new_len, 0);
        }
        match read(&mut buf[filled..], filled) {
            Ok(0) => return Ok(filled),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn elapsed_ns(since: Instant) -> u64 {
    since.elapsed().as_nanos().min(u64::MAX as u128) as u64
}

impl Reader {
    /// Reads `sources` into `sample`, recording per source its status and cost.
    /// Sources not listed are marked [`SourceStatus::NotRead`].
    pub fn read_sample(&mut self, sources: &[Source], sample: &mut SystemSample) {
        sample.taken = Instant::now();
        sample.unix_ns = sys::unix_ns();
        for s in &mut sample.status {
            *s = SourceStatus::NotRead;
        }
        for &source in sources {
            self.read_source(source, sample);
        }
    }

    /// Reads one source into `sample`, recording its status and cost; the
    /// other sources are left as they are.
    pub fn read_source(&mut self, source: Source, sample: &mut SystemSample) {
        // With no directory there is nothing to read: no thread is started
        // for it, and nothing is handed to one.
        if source == Source::Textfile
            && self.textfile_background
            && self.textfile_directory().is_some()
        {
            if self.textfile_worker.is_none() {
                // Where no thread can be started, the source is read in line.
                self.textfile_worker = crate::textfile_worker::Worker::start().ok();
                self.textfile_background = self.textfile_worker.is_some();
            }
            if let Some(w) = &self.textfile_worker {
                let (status, cost) = w.read(
                    self.textfile_directory(),
                    self.max_file_bytes(),
                    self.gatherer.options.textfile_max_dir_bytes,
                    &mut sample.textfile,
                );
                sample.status[source as usize] = status;
                sample.cost[source as usize] = cost;
                return;
            }
        }
        {
            let i = source as usize;
            let t0 = Instant::now();
            let (status, cost) = match self.read_raw_io(source) {
                Ok(n) => {
                    self.keep(source, n);
                    let mut scratch = std::mem::take(&mut self.scratch);
                    let bytes = self.buffer(n);
                    let read_ns = elapsed_ns(t0);
                    let len = bytes.len() as u64;
                    let t1 = Instant::now();
                    let r = sample.parse_source_skipping(source, bytes, &mut scratch);
                    let cost = SourceCost {
                        read_ns,
                        parse_ns: elapsed_ns(t1),
                        bytes: len,
                    };
                    self.scratch = scratch;
                    let status = match r {
                        Ok(()) => SourceStatus::Ok,
                        Err(e) => SourceStatus::Failed(
                            Error::Parse {
                                path: self.path(source).to_path_buf(),
                                source: e,
                            }
                            .to_string(),
                        ),
                    };
                    (status, cost)
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    (SourceStatus::Missing, SourceCost::default())
                }
                Err(e) => (
                    SourceStatus::Failed(
                        crate::file_io::too_large_or_io(
                            self.path(source),
                            e,
                            self.max_file_bytes(),
                        )
                        .to_string(),
                    ),
                    // A read that failed still took its time (a deadline
                    // that passed: the whole of it).
                    SourceCost {
                        read_ns: elapsed_ns(t0),
                        ..SourceCost::default()
                    },
                ),
            };
            sample.status[i] = status;
            sample.cost[i] = cost;
        }
    }
}
