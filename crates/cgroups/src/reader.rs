//! The walk: every hierarchy of the mount table that gives a figure (the
//! v2 one, and v1 ones with the cpu, cpuacct, memory, blkio or pids
//! controller), each cgroup's files read through descriptors: a directory
//! kept open from one read to the next (within a descriptor budget), each
//! file opened beneath it with `openat` (one component looked up, no path
//! walked from the root) and read whole with one `pread`, or, with
//! `keep_open`, kept open too and read again in place. A directory is
//! listed again only when its inotify watch reports a child made or
//! removed.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bpf::{BpfWalk, capacity_for};
use crate::files::{FILES, Figure, File, Version};
use crate::parse::{Figures, parse};
use crate::record::QsCgroup;

/// The BPF row's flags (`bpf/record.h`), and in [`Node`]'s: this read took
/// figures from the BPF walk.
const QS_CG_PSI: u32 = crate::record::QS_CG_PSI as u32;
const QS_CG_CPU_CTL: u32 = crate::record::QS_CG_CPU_CTL as u32;
const QS_CG_TAKEN: u32 = 1 << 31;

/// Cgroups read at most: past it, new ones are left out and counted.
pub const DEFAULT_MAX_CGROUPS: usize = 100_000;
/// Levels below a hierarchy's root walked at most.
pub const MAX_DEPTH: u16 = 32;
/// A file's text read at most (io.stat on a machine with thousands of
/// devices is the largest).
const FILE_LIMIT: usize = 1 << 20;
/// Reads after which a file found missing in a cgroup is tried again (a v2
/// cgroup gains files when its parent enables a controller).
const ABSENT_RETRY: u64 = 30;

#[derive(Debug, Clone)]
pub struct Options {
    /// Where the mount table is read (`<proc_root>/self/mountinfo`).
    pub proc_root: PathBuf,
    /// Mount points under /sys are read under this root instead.
    pub sys_root: PathBuf,
    /// The files read ([`crate::files::select`]); every one by default.
    pub files: Vec<&'static File>,
    pub max_cgroups: usize,
    /// Descriptors the reader may keep open between reads; past them,
    /// directories (and files) are opened for the read and closed.
    pub max_fds: usize,
    /// Keep each cgroup's files open between reads, not only its
    /// directory (faster; each costs the kernel a page for its text).
    pub keep_open: bool,
    /// A cgroup's files of settings (limits, periods:
    /// [`File::is_settings`]) are read at its first read and then every
    /// this many reads; the reads between give the settings last read.
    /// 1: every read.
    pub settings_every: u64,
    /// Take the v2 hierarchy's CPU times and pressure from the BPF walk
    /// ([`crate::bpf`]) when it loads, instead of `cpu.stat` (without the
    /// cpu controller) and the pressure files.
    pub bpf: bool,
}

/// [`Options::settings_every`] by default: at the agent's 10 s, a limit
/// written shows within a minute.
pub const SETTINGS_EVERY: u64 = 6;

impl Options {
    pub fn new(proc_root: &Path, sys_root: &Path) -> Options {
        Options {
            proc_root: proc_root.to_path_buf(),
            sys_root: sys_root.to_path_buf(),
            files: FILES.iter().collect(),
            max_cgroups: DEFAULT_MAX_CGROUPS,
            max_fds: default_max_fds(),
            keep_open: false,
            settings_every: SETTINGS_EVERY,
            bpf: true,
        }
    }
}

/// The v2 files the BPF walk gives, and when: `cpu.stat` unless the cpu
/// controller adds its own figures, the pressure files when the cgroup has
/// pressure accounting.
fn bpf_gives(file: &File, flags: u32) -> bool {
    match file.name {
        "cpu.stat" => flags & QS_CG_CPU_CTL == 0,
        "cpu.pressure" | "memory.pressure" | "io.pressure" => flags & QS_CG_PSI != 0,
        _ => false,
    }
}

/// Sets the figures `r` gives (as the files would print them: whole
/// microseconds; user and system split as the kernel splits them, never
/// below what they were for this cgroup, `prev`) and returns its flags.
fn fill_from_bpf(figures: &mut Figures, r: &QsCgroup, prev: &mut (u64, u64)) -> u32 {
    let us = |ns: u64| ns / 1000 * 1000;
    let (user, system) = sys::cputime::adjust(sys::cputime::RawCputime {
        utime: r.user_ns,
        stime: r.system_ns,
        runtime: r.usage_ns,
        prev_utime: prev.0,
        prev_stime: prev.1,
    });
    *prev = (user, system);
    figures.set(Figure::CpuUsageNs, us(r.usage_ns));
    figures.set(Figure::CpuUserNs, us(user));
    figures.set(Figure::CpuSystemNs, us(system));
    if r.flags & QS_CG_PSI != 0 {
        let psi = [
            Figure::IoSomeUs,
            Figure::IoFullUs,
            Figure::MemorySomeUs,
            Figure::MemoryFullUs,
            Figure::CpuSomeUs,
            Figure::CpuFullUs,
        ];
        for (f, ns) in psi.into_iter().zip(r.psi_ns) {
            figures.set(f, ns / 1000);
        }
    }
    r.flags
}

/// A quarter of the descriptor limit (the process table keeps its own
/// within the rest), at most 16,384.
pub fn default_max_fds() -> usize {
    sys::fd_limit().map_or(0, |l| (l / 4) as usize).min(16_384)
}

/// A cgroup hierarchy of the mount table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    /// Where it is mounted, as the mount table says.
    pub mount: PathBuf,
    /// Where it is read (under the sys root for a mount under /sys).
    pub dir: PathBuf,
    pub v2: bool,
    /// v1: the controllers it holds that a file here reads.
    pub controllers: Vec<String>,
}

impl Hierarchy {
    /// The files of `chosen` read in this hierarchy (64 at most).
    pub fn files(&self, chosen: &[&'static File]) -> Vec<&'static File> {
        chosen
            .iter()
            .copied()
            .filter(|f| match f.version {
                Version::V2 => self.v2,
                Version::V1(c) => self.controllers.iter().any(|x| x == c),
            })
            .take(64)
            .collect()
    }
}

/// One cgroup, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup {
    /// Its path below the hierarchies' roots: `/` for the root,
    /// `/system.slice/cron.service`.
    pub path: Arc<str>,
    /// Its directory's inode in the v2 hierarchy (the kernel's cgroup id,
    /// as a process's cgroup id gives it), or in the first v1 one when it
    /// is in no v2 hierarchy. A cgroup removed and made again under the
    /// same path has a new one.
    pub id: u64,
    /// Levels below the root (the root: 0).
    pub depth: u16,
    pub figures: Figures,
}

/// One read of every cgroup.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub mono_ns: u64,
    pub unix_ns: u64,
    /// In path order: a parent before its children.
    pub cgroups: Vec<Cgroup>,
    /// Cgroups not read: past `max_cgroups`, deeper than [`MAX_DEPTH`], or
    /// named in bytes that are not UTF-8.
    pub left_out: u64,
    /// Lines of files left out (the rest of each file used).
    pub skipped_lines: u64,
    /// Files that could not be read or parsed, and the first one's error.
    pub errors: u64,
    pub first_error: Option<String>,
}

impl Sample {
    fn error(&mut self, e: String) {
        self.errors += 1;
        self.first_error.get_or_insert(e);
    }
}

/// The hierarchies in `<proc_root>/self/mountinfo` that give a figure of
/// `files`, v2 first, each once.
pub fn hierarchies(
    proc_root: &Path,
    sys_root: &Path,
    files: &[&File],
) -> io::Result<Vec<Hierarchy>> {
    let text = std::fs::read_to_string(proc_root.join("self/mountinfo"))?;
    let mut out: Vec<(String, Hierarchy)> = Vec::new();
    for line in text.lines() {
        // id parent maj:min root mount options [optional...] - fstype source super
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        let (Some(dev), Some(mount), Some(fstype), Some(sup)) =
            (l.get(2), l.get(4), r.first(), r.get(2))
        else {
            continue;
        };
        let v2 = match *fstype {
            "cgroup2" => true,
            "cgroup" => false,
            _ => continue,
        };
        let controllers: Vec<String> = if v2 {
            Vec::new()
        } else {
            sup.split(',')
                .filter(|c| {
                    files
                        .iter()
                        .any(|f| matches!(f.version, Version::V1(x) if x == *c))
                })
                .map(str::to_string)
                .collect()
        };
        if !v2 && controllers.is_empty() || out.iter().any(|(d, _)| d == dev) {
            continue;
        }
        let mount = PathBuf::from(unescape(mount));
        let dir = match mount.strip_prefix("/sys") {
            Ok(rest) => sys_root.join(rest),
            Err(_) => mount.clone(),
        };
        out.push((
            dev.to_string(),
            Hierarchy {
                mount,
                dir,
                v2,
                controllers,
            },
        ));
    }
    let mut out: Vec<Hierarchy> = out.into_iter().map(|(_, h)| h).collect();
    out.sort_by_key(|h| !h.v2);
    Ok(out)
}

/// The mount table's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|o| b[i] == b'\\' && o.iter().all(|c| (b'0'..=b'7').contains(c)));
        match oct {
            Some(o) => {
                out.push(
                    o.iter()
                        .fold(0u8, |v, c| v.wrapping_mul(8).wrapping_add(c - b'0')),
                );
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct Hier {
    info: Hierarchy,
    files: Vec<&'static File>,
    root: Option<OwnedFd>,
}

struct Node {
    id: u64,
    /// `id` is the v2 directory's inode (else the first v1 one's).
    id_v2: bool,
    depth: u16,
    figures: Figures,
    /// The read whose figures `figures` holds.
    read: u64,
    /// The read that last read its settings (0: none yet).
    settings_at: u64,
    /// The flags of the BPF walk's row when this read took figures from
    /// it (else 0), and the user and system times it last gave.
    bpf_flags: u32,
    bpf_cputime: (u64, u64),
    /// Its directory was removed (a file beneath it is no longer there):
    /// forgotten after this read, found again, with its new id, by the next.
    stale: bool,
    per: Vec<PerHier>,
}

struct PerHier {
    dir: Option<OwnedFd>,
    /// With `keep_open`: the files, in the hierarchy's file order.
    files: Vec<Option<OwnedFd>>,
    /// Files not in this cgroup (bit per file), and when they were found so.
    absent: u64,
    absent_at: u64,
    /// The read that last found it in this hierarchy.
    seen: u64,
    /// Its inotify watch (creations and removals of its children), or -1.
    wd: i32,
    /// Its children's paths as last listed; listed again only when its
    /// watch reports a change (or it has none).
    children: Vec<Arc<str>>,
    listed: bool,
    /// Children the listing left out (too deep, or not UTF-8).
    left_out: u64,
}

impl Default for PerHier {
    fn default() -> PerHier {
        PerHier {
            dir: None,
            files: Vec::new(),
            absent: 0,
            absent_at: 0,
            seen: 0,
            wd: -1,
            children: Vec::new(),
            listed: false,
            left_out: 0,
        }
    }
}

/// Reads every cgroup of the machine's hierarchies; keeps their
/// directories (and with `keep_open` their files) open between reads.
pub struct Reader {
    opts: Options,
    hiers: Vec<Hier>,
    nodes: BTreeMap<Arc<str>, Node>,
    reads: u64,
    kept: usize,
    buf: Vec<u8>,
    dents: Vec<u8>,
    /// Child names per level, reused.
    names: Vec<Vec<u8>>,
    /// inotify: directories' children made and removed since the last
    /// read (none: every directory is listed at every read).
    notify: Option<OwnedFd>,
    /// Each watch's hierarchy and cgroup.
    watches: HashMap<i32, (usize, Arc<str>)>,
    max_watches: usize,
    events: Vec<u8>,
    /// The BPF walk, once loaded; why it is not used, once it failed;
    /// the rows of its last run by id (the root's left out: its files
    /// count the whole machine); the capacity it is loaded with next.
    bpf: Option<BpfWalk>,
    bpf_off: Option<String>,
    bpf_rows: HashMap<u64, QsCgroup>,
    bpf_capacity: u32,
}

/// Watches a reader adds at most (the user's inotify watches are shared
/// with every other program of root's).
const MAX_WATCHES: usize = 65_536;

impl Reader {
    /// Finds the hierarchies; an error when the mount table cannot be read
    /// or holds none that gives a figure of the files asked for.
    pub fn new(opts: Options) -> Result<Reader, String> {
        let mountinfo = opts.proc_root.join("self/mountinfo");
        let found = hierarchies(&opts.proc_root, &opts.sys_root, &opts.files)
            .map_err(|e| format!("cgroups: cannot read {}: {e}", mountinfo.display()))?;
        let hiers: Vec<Hier> = found
            .into_iter()
            .map(|info| {
                let files = info.files(&opts.files);
                Hier {
                    info,
                    files,
                    root: None,
                }
            })
            .filter(|h: &Hier| !h.files.is_empty())
            .collect();
        if hiers.is_empty() {
            return Err(format!(
                "cgroups: no cgroup hierarchy in {} holds a file asked for (v2, or v1 with cpu, cpuacct, memory, blkio or pids)",
                mountinfo.display()
            ));
        }
        Ok(Reader {
            opts,
            hiers,
            nodes: BTreeMap::new(),
            reads: 0,
            kept: 0,
            buf: Vec::new(),
            dents: vec![0; 32 << 10],
            names: Vec::new(),
            notify: inotify(),
            watches: HashMap::new(),
            max_watches: MAX_WATCHES,
            events: vec![0; 64 << 10],
            bpf: None,
            bpf_off: None,
            bpf_rows: HashMap::new(),
            bpf_capacity: 0,
        })
    }

    /// Why the v2 hierarchy is read from its files rather than by the BPF
    /// walk, when it is asked for and did not load (or failed).
    pub fn bpf_off(&self) -> Option<&str> {
        self.bpf_off.as_deref()
    }

    /// Whether the last read took figures from the BPF walk.
    pub fn bpf_used(&self) -> bool {
        !self.bpf_rows.is_empty()
    }

    /// Runs the BPF walk of the v2 hierarchy, when it is asked for and a
    /// file it gives is read; loaded at the first read, again larger when
    /// it had no room for every cgroup, never again once it failed (the
    /// files are read then).
    fn run_bpf(&mut self) {
        self.bpf_rows.clear();
        if !self.opts.bpf || self.bpf_off.is_some() {
            return;
        }
        let Some(v2) = self
            .hiers
            .iter()
            .find(|h| h.info.v2 && h.files.iter().any(|f| bpf_gives(f, QS_CG_PSI)))
        else {
            return;
        };
        let dir = v2.info.dir.clone();
        // A walk with no room for every cgroup is loaded again, larger,
        // and run again (once: the count it saw is the room it gets).
        for _ in 0..2 {
            if self.bpf.is_none() {
                let capacity = self.bpf_capacity.max(capacity_for(self.nodes.len()));
                match BpfWalk::load(&dir, capacity) {
                    Ok(w) => self.bpf = Some(w),
                    Err(e) => {
                        self.bpf_off = Some(e);
                        return;
                    }
                }
            }
            let Some(w) = self.bpf.as_mut() else {
                return;
            };
            match w.run() {
                Ok(r) if r.lost > 0 => {
                    self.bpf_capacity = capacity_for(r.rows.len() + r.lost as usize);
                    self.bpf = None;
                }
                Ok(r) => {
                    self.bpf_rows
                        .extend(r.rows.iter().filter(|c| c.level > 0).map(|c| (c.id, *c)));
                    return;
                }
                Err(e) => {
                    self.bpf = None;
                    self.bpf_off = Some(e);
                    return;
                }
            }
        }
    }

    pub fn hierarchies(&self) -> impl Iterator<Item = &Hierarchy> {
        self.hiers.iter().map(|h| &h.info)
    }

    /// Descriptors kept open between reads.
    pub fn kept_fds(&self) -> usize {
        self.kept
    }

    /// Reads every cgroup into `out`.
    pub fn read(&mut self, out: &mut Sample) {
        self.reads += 1;
        out.cgroups.clear();
        out.left_out = 0;
        out.skipped_lines = 0;
        out.errors = 0;
        out.first_error = None;
        out.mono_ns = sys::mono_ns();
        out.unix_ns = sys::unix_ns();
        self.drain_events();
        self.run_bpf();
        for hi in 0..self.hiers.len() {
            if self.hiers[hi].root.is_none() {
                match sys::dir::open_dir(&self.hiers[hi].info.dir) {
                    Ok(fd) => self.hiers[hi].root = Some(fd),
                    Err(e) => {
                        out.error(format!(
                            "cgroups: {}: {e}",
                            self.hiers[hi].info.dir.display()
                        ));
                        continue;
                    }
                }
            }
            let root = self.hiers[hi].root.as_ref().map_or(-1, |f| f.as_raw_fd());
            self.visit(hi, Arc::from("/"), root, None, 0, out);
        }
        let reads = self.reads;
        let mut kept = 0;
        let notify = self.notify.as_ref().map(|f| f.as_raw_fd());
        let watches = &mut self.watches;
        self.nodes.retain(|_, n| {
            let gone = n.stale || n.per.iter().all(|p| p.seen != reads);
            for p in &mut n.per {
                if p.seen != reads || gone {
                    if p.wd >= 0 {
                        watches.remove(&p.wd);
                        if let Some(fd) = notify {
                            // SAFETY: removing a watch of our inotify fd (one
                            // the kernel already dropped answers EINVAL).
                            unsafe { libc::inotify_rm_watch(fd, p.wd) };
                        }
                    }
                    *p = PerHier::default();
                }
                kept += usize::from(p.dir.is_some()) + p.files.iter().flatten().count();
            }
            !gone
        });
        self.kept = kept;
        out.cgroups
            .extend(self.nodes.iter().map(|(path, n)| Cgroup {
                path: path.clone(),
                id: n.id,
                depth: n.depth,
                figures: n.figures.clone(),
            }));
    }

    /// Reads the cgroup at `path` of hierarchy `hi` (its directory `dir`,
    /// `opened` when opened for this read), then its children.
    fn visit(
        &mut self,
        hi: usize,
        path: Arc<str>,
        dir: RawFd,
        opened: Option<OwnedFd>,
        depth: u16,
        out: &mut Sample,
    ) {
        let nh = self.hiers.len();
        let v2 = self.hiers[hi].info.v2;
        match self.nodes.get_mut(&path) {
            // Found in v1 first, in v2 now (made there later): the v2
            // inode is its id, as the kernel and the BPF walk number it.
            Some(n) if v2 && !n.id_v2 => {
                n.id = inode(dir).unwrap_or(n.id);
                n.id_v2 = true;
            }
            _ => {}
        }
        if !self.nodes.contains_key(&path) {
            if self.nodes.len() >= self.opts.max_cgroups {
                out.left_out += 1;
                return;
            }
            let id = inode(dir).unwrap_or(0);
            self.nodes.insert(
                path.clone(),
                Node {
                    id,
                    id_v2: v2,
                    depth,
                    figures: Figures::default(),
                    read: 0,
                    settings_at: 0,
                    bpf_flags: 0,
                    bpf_cputime: (0, 0),
                    stale: false,
                    per: (0..nh).map(|_| PerHier::default()).collect(),
                },
            );
        }
        // The descriptor stays open until the children are read: kept in
        // the node within the budget, else held here.
        let mut held = None;
        if let Some(fd) = opened {
            let n = self.nodes.get_mut(&path).map(|n| &mut n.per[hi]);
            match n {
                Some(p) if self.kept < self.opts.max_fds => {
                    p.dir = Some(fd);
                    self.kept += 1;
                }
                _ => held = Some(fd),
            }
        }
        if !self.read_files(hi, &path, dir, out) {
            return;
        }
        if !self.list_children(hi, &path, dir, depth, out) {
            return;
        }
        let children = self
            .nodes
            .get_mut(&path)
            .map(|n| std::mem::take(&mut n.per[hi].children))
            .unwrap_or_default();
        for child in &children {
            let name = child.rsplit('/').next().unwrap_or_default().as_bytes();
            let child = child.clone();
            let kept = self
                .nodes
                .get(&child)
                .and_then(|n| n.per[hi].dir.as_ref())
                .map(|f| f.as_raw_fd());
            match kept {
                Some(fd) => self.visit(hi, child, fd, None, depth + 1, out),
                None => match sys::dir::open_at(dir, name, libc::O_RDONLY | libc::O_DIRECTORY) {
                    Ok(fd) => {
                        let raw = fd.as_raw_fd();
                        self.visit(hi, child, raw, Some(fd), depth + 1, out);
                    }
                    // Removed since the listing, or not a directory.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {}
                    Err(e) => out.error(format!("cgroups: {child}: {e}")),
                },
            }
        }
        if let Some(n) = self.nodes.get_mut(&path) {
            n.per[hi].children = children;
        }
        drop(held);
    }

    /// Lists the children of `path` in hierarchy `hi` when they may have
    /// changed (never listed, no watch, or its watch reported a child made
    /// or removed), watching it first; false when it was removed.
    fn list_children(
        &mut self,
        hi: usize,
        path: &Arc<str>,
        dir: RawFd,
        depth: u16,
        out: &mut Sample,
    ) -> bool {
        let Some(node) = self.nodes.get_mut(path) else {
            return false;
        };
        let p = &mut node.per[hi];
        if p.listed && p.wd >= 0 {
            out.left_out += p.left_out;
            return true;
        }
        // Watched before listing: a child made meanwhile is in the listing
        // or reported by the next read's events.
        if p.wd < 0
            && self.watches.len() < self.max_watches
            && let Some(fd) = &self.notify
        {
            let full = self.hiers[hi].info.dir.join(path.trim_start_matches('/'));
            if let Ok(c) = std::ffi::CString::new(full.as_os_str().as_encoded_bytes()) {
                let mask = libc::IN_CREATE
                    | libc::IN_DELETE
                    | libc::IN_MOVED_FROM
                    | libc::IN_MOVED_TO
                    | libc::IN_ONLYDIR;
                // SAFETY: c is NUL-terminated; fd is our inotify fd.
                let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), mask) };
                if wd >= 0 {
                    p.wd = wd;
                    self.watches.insert(wd, (hi, path.clone()));
                }
            }
        }
        // The children's names, in this level's reused buffer.
        let level = usize::from(depth);
        if self.names.len() <= level {
            self.names.resize_with(level + 1, Vec::new);
        }
        let mut names = std::mem::take(&mut self.names[level]);
        names.clear();
        let listed = sys::dir::entries(dir, &mut self.dents, |name, t| {
            // A filesystem that does not say (a fixture tree on some) is
            // asked when the entry is opened.
            if (t == sys::dir::DT_DIR || t == sys::dir::DT_UNKNOWN) && name != b"." && name != b".."
            {
                names.extend_from_slice(name);
                names.push(0);
            }
        });
        let node = self.nodes.get_mut(path);
        let ok = match (listed, node) {
            (Ok(()), Some(n)) => {
                let p = &mut n.per[hi];
                p.children.clear();
                p.left_out = 0;
                for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
                    let Ok(s) = std::str::from_utf8(name) else {
                        p.left_out += 1;
                        continue;
                    };
                    if depth >= MAX_DEPTH {
                        p.left_out += 1;
                        continue;
                    }
                    p.children.push(if depth == 0 {
                        Arc::from(format!("/{s}"))
                    } else {
                        Arc::from(format!("{path}/{s}"))
                    });
                }
                p.listed = true;
                out.left_out += p.left_out;
                true
            }
            // Removed since it was opened.
            (Err(e), Some(n)) if e.raw_os_error() == Some(libc::ENOENT) => {
                n.stale = true;
                false
            }
            (Err(e), _) => {
                out.error(format!("cgroups: listing {path}: {e}"));
                true
            }
            (Ok(()), None) => false,
        };
        self.names[level] = names;
        ok
    }

    /// Marks the directories whose children changed since the last read
    /// to be listed again (all of them when the kernel's queue overflowed).
    fn drain_events(&mut self) {
        let Some(fd) = self.notify.as_ref().map(|f| f.as_raw_fd()) else {
            return;
        };
        loop {
            // SAFETY: the kernel writes at most events.len() bytes.
            let n = unsafe { libc::read(fd, self.events.as_mut_ptr().cast(), self.events.len()) };
            if n <= 0 {
                return;
            }
            let n = n as usize;
            let mut off = 0;
            // struct inotify_event { int wd; u32 mask, cookie, len; char name[len]; }
            while off + 16 <= n {
                let word = |i: usize| {
                    u32::from_ne_bytes(
                        self.events[off + i..off + i + 4]
                            .try_into()
                            .unwrap_or_default(),
                    )
                };
                let (wd, mask, len) = (word(0) as i32, word(4), word(12) as usize);
                off += 16 + len;
                if mask & libc::IN_Q_OVERFLOW != 0 {
                    for node in self.nodes.values_mut() {
                        for p in &mut node.per {
                            p.listed = false;
                        }
                    }
                    continue;
                }
                let Some((hi, path)) = self.watches.get(&wd).cloned() else {
                    continue;
                };
                if mask & libc::IN_IGNORED != 0 {
                    self.watches.remove(&wd);
                }
                if let Some(p) = self.nodes.get_mut(&path).map(|n| &mut n.per[hi]) {
                    p.listed = false;
                    if mask & libc::IN_IGNORED != 0 {
                        p.wd = -1;
                    }
                }
            }
        }
    }

    /// Reads the files of hierarchy `hi` beneath `dir` into the node's
    /// figures; false when the cgroup was removed.
    fn read_files(&mut self, hi: usize, path: &Arc<str>, dir: RawFd, out: &mut Sample) -> bool {
        let reads = self.reads;
        let keep_open = self.opts.keep_open;
        let max_fds = self.opts.max_fds;
        let Some(node) = self.nodes.get_mut(path) else {
            return false;
        };
        if node.read != reads {
            let every = self.opts.settings_every.max(1);
            if node.settings_at == 0 || reads - node.settings_at >= every {
                node.figures.clear();
                node.settings_at = reads;
            } else {
                // The settings last read stand; their files are skipped.
                node.figures.clear_counts();
            }
            node.read = reads;
            node.bpf_flags = 0;
        }
        let settings_due = node.settings_at == reads;
        let hier = &self.hiers[hi];
        // Only through v2: a v1 hierarchy's inodes are another numbering.
        if hier.info.v2
            && let Some(r) = self.bpf_rows.get(&node.id)
        {
            node.bpf_flags =
                fill_from_bpf(&mut node.figures, r, &mut node.bpf_cputime) | QS_CG_TAKEN;
        }
        let bpf_flags = node.bpf_flags;
        let p = &mut node.per[hi];
        p.seen = reads;
        if p.absent != 0 && reads - p.absent_at >= ABSENT_RETRY {
            p.absent = 0;
        }
        if keep_open && p.files.len() != hier.files.len() {
            p.files.resize_with(hier.files.len(), || None);
        }
        for (i, file) in hier.files.iter().enumerate() {
            // Not there, or every figure it gives already read from a file
            // read before it (v1's cpuacct.usage after v2's cpu.stat on a
            // host with both).
            if p.absent & (1 << i) != 0
                || (file.is_settings() && !settings_due)
                || (hier.info.v2 && bpf_flags & QS_CG_TAKEN != 0 && bpf_gives(file, bpf_flags))
                || file.keys.iter().all(|k| node.figures.get(k.1).is_some())
            {
                continue;
            }
            let name = file.name.as_bytes();
            let got = match p.files.get_mut(i) {
                Some(slot) => {
                    if slot.is_none()
                        && self.kept < max_fds
                        && let Ok(fd) = sys::dir::open_at(dir, name, libc::O_RDONLY)
                    {
                        *slot = Some(fd);
                        self.kept += 1;
                    }
                    match slot {
                        Some(fd) => {
                            sys::dir::pread_all(fd.as_raw_fd(), &mut self.buf, 4096, FILE_LIMIT)
                        }
                        None => read_at(dir, name, &mut self.buf),
                    }
                }
                None => read_at(dir, name, &mut self.buf),
            };
            match got {
                Ok(n) => match parse(file, &self.buf[..n], &mut node.figures) {
                    Ok(skipped) => out.skipped_lines += skipped as u64,
                    Err(e) => out.error(format!("cgroups: {path}: {e}")),
                },
                // A kept file of a removed cgroup.
                Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {
                    node.stale = true;
                    return false;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    if !exists(dir, b"cgroup.procs") {
                        node.stale = true;
                        return false;
                    }
                    p.absent |= 1 << i;
                    p.absent_at = reads;
                }
                Err(e) => out.error(format!("cgroups: {path}/{}: {e}", file.name)),
            }
        }
        true
    }
}

/// A non-blocking inotify instance, or none (every directory is then
/// listed at every read).
fn inotify() -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: inotify_init1 returns a new fd we own or -1.
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    // SAFETY: fd is a fresh descriptor.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn read_at(dir: RawFd, name: &[u8], buf: &mut Vec<u8>) -> io::Result<usize> {
    let fd = sys::dir::open_at(dir, name, libc::O_RDONLY)?;
    sys::dir::pread_all(fd.as_raw_fd(), buf, 4096, FILE_LIMIT)
}

fn exists(dir: RawFd, name: &[u8]) -> bool {
    sys::dir::open_at(dir, name, libc::O_PATH).is_ok()
}

fn inode(fd: RawFd) -> Option<u64> {
    // SAFETY: fstat fills a stat buffer we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; st is valid for writing.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_ino)
}
