//! The walk: every hierarchy of the mount table that gives a figure (the
//! v2 one, and v1 ones with the cpu, cpuacct, memory, blkio or pids
//! controller), each cgroup's files read through descriptors: a directory
//! kept open from one read to the next (within a descriptor budget), each
//! file opened beneath it with `openat` (one component looked up, no path
//! walked from the root) and read whole with one `pread`, or, with
//! `keep_open`, kept open too and read again in place. A directory is
//! listed again only when its inotify watch reports a child made or
//! removed.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bpf::{BpfWalk, Link, capacity_for, mode_of};
use crate::files::{FILES, Figure, File, Version};
use crate::parse::{Figures, parse};
use crate::record::QsCgroup;

use crate::record::{
    QS_CG_BASE, QS_CG_BLKGS, QS_CG_BLKIO, QS_CG_CFS, QS_CG_CPU_CTL, QS_CG_CPUACCT, QS_CG_MEMCG,
    QS_CG_PIDS, QS_CG_POPULATED, QS_CG_PSI,
};

mod dir;
mod given;
mod hierarchy;
mod walk;

use dir::*;
use given::*;
pub use hierarchy::{Hierarchy, hierarchies};

/// Cgroups read at most: past it, new ones are left out and counted.
pub const DEFAULT_MAX_CGROUPS: usize = 100_000;
/// New cgroups a read takes at most once the first read is made: a
/// cgroup's first read (its directory opened and watched, its children
/// listed, its settings read) costs 30-45 us on a small VM, ten times a
/// read after it, so a burst of 10,000 would cost one walk a third of a
/// second. Past it, the new ones are left out of that read (counted in
/// [`Sample::left_out`]) and taken by the reads after it, this many at a
/// time. The first read made to its end takes every cgroup.
pub const DEFAULT_MAX_NEW_PER_READ: usize = 1_000;
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
    /// Levels below the root read at most ([`MAX_DEPTH`] unless lowered):
    /// the cgroups deeper are left out (counted in `left_out`).
    pub max_depth: u16,
    /// New cgroups a read after the first takes at most
    /// ([`DEFAULT_MAX_NEW_PER_READ`]).
    pub max_new_per_read: usize,
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
    /// v1's `memory.stat` of a cgroup the BPF walk read, without tasks
    /// and whose charge did not move, is read again once every this many
    /// reads, each cgroup at its own turn (so that each read takes its
    /// share); the reads between carry its figures. 1: every read.
    pub memory_stat_every: u64,
    /// Read each hierarchy by the BPF walk ([`crate::bpf`]) when it loads:
    /// its figures are taken from it instead of their files (v2's CPU
    /// times and pressure; v1's cpuacct, cpu, memory but `memory.stat`,
    /// pids, and the blkio files of a cgroup that did no I/O).
    pub bpf: bool,
}

/// [`Options::settings_every`] by default: at the agent's 10 s, a limit
/// written shows within a minute.
pub const SETTINGS_EVERY: u64 = 6;

/// [`Options::memory_stat_every`] by default: at the agent's 10 s, an idle
/// cgroup's page lists, as the kernel ages them, show within five minutes.
pub const MEMORY_STAT_EVERY: u64 = 30;

impl Options {
    pub fn new(proc_root: &Path, sys_root: &Path) -> Options {
        Options {
            proc_root: proc_root.to_path_buf(),
            sys_root: sys_root.to_path_buf(),
            files: FILES.iter().collect(),
            max_cgroups: DEFAULT_MAX_CGROUPS,
            max_depth: MAX_DEPTH,
            max_new_per_read: DEFAULT_MAX_NEW_PER_READ,
            max_fds: default_max_fds(),
            keep_open: false,
            settings_every: SETTINGS_EVERY,
            memory_stat_every: MEMORY_STAT_EVERY,
            bpf: true,
        }
    }
}

/// A quarter of the descriptor limit (the process table keeps its own
/// within the rest), at most 16,384.
pub fn default_max_fds() -> usize {
    sys::fd_limit().map_or(0, |l| (l / 4) as usize).min(16_384)
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
    /// Cgroups not read: past `max_cgroups`, deeper than [`MAX_DEPTH`],
    /// named in bytes that are not UTF-8, or new past `max_new_per_read`
    /// (those are read by a later read).
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

struct Hier {
    info: Hierarchy,
    files: Vec<&'static File>,
    root: Option<OwnedFd>,
    /// The BPF walk's link to this hierarchy's root, once made, and the
    /// load of the walk it was made with ([`Reader::walk_era`]); why the
    /// walk is not used here, once linking or a run failed.
    link: Option<(Link, u32)>,
    bpf_off: Option<String>,
    /// What the walk gives of each of `files`.
    given: Vec<Given>,
    /// This read's figures come from the walk's last run (its rows in the
    /// walk's mapped array); false: the files are read.
    walked: bool,
    /// The last run's rows by this hierarchy's inode (the root's left
    /// out: its files count the whole machine), built only when a
    /// cgroup's row is not where the read before found it (a cgroup made
    /// or removed moves the rows after it).
    rows: HashMap<u64, u32, foldhash::fast::RandomState>,
    rows_built: bool,
    /// Flags the last run's rows may be trusted for: without every
    /// possible CPU's offset, not cpuacct's sums.
    trusted: u32,
}

impl Hier {
    fn new(info: Hierarchy, files: Vec<&'static File>) -> Hier {
        Hier {
            given: files.iter().map(|f| Given::of(f)).collect(),
            info,
            files,
            root: None,
            link: None,
            bpf_off: None,
            walked: false,
            rows: HashMap::default(),
            rows_built: false,
            trusted: 0,
        }
    }

    /// The root's directory, or -1 before it is opened.
    fn root_fd(&self) -> RawFd {
        self.root.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// Where in `rows`, the walk's run of this hierarchy, the cgroup
    /// with inode `ino` is (none: not in it, or the walk did not run),
    /// looked for first at `hint` (where the read before found it).
    fn find_row(&mut self, rows: &[QsCgroup], ino: u64, hint: u32) -> Option<u32> {
        if !self.walked || ino == 0 {
            return None;
        }
        if rows
            .get(hint as usize)
            .is_some_and(|r| r.id == ino && r.level > 0)
        {
            return Some(hint);
        }
        if !self.rows_built {
            self.rows.clear();
            self.rows.extend(
                rows.iter()
                    .enumerate()
                    .filter(|(_, c)| c.level > 0)
                    .map(|(i, c)| (c.id, i as u32)),
            );
            self.rows_built = true;
        }
        self.rows.get(&ino).copied()
    }

    /// Row `i` of `rows`, the walk's run of this hierarchy, and its
    /// trusted flags.
    fn row<'r>(&self, rows: &'r [QsCgroup], i: u32) -> Option<(&'r QsCgroup, u32)> {
        let r = rows.get(i as usize)?;
        Some((r, r.flags & self.trusted))
    }
}

/// A node's index in [`Reader::nodes`].
type Ix = u32;

struct Node {
    /// Its path below the roots: the key it is found by.
    path: Arc<str>,
    /// Counts the nodes its slot held: a child's [`Child::era`] names this
    /// one.
    era: u32,
    live: bool,
    id: u64,
    /// `id` is the v2 directory's inode (else the first v1 one's).
    id_v2: bool,
    depth: u16,
    figures: Figures,
    /// The read whose figures `figures` holds.
    read: u64,
    /// The read that last read its settings (0: none yet).
    settings_at: u64,
    /// Its figures before this read cleared them: what a file skipped this
    /// read (v1's `memory.stat`, see [`memory_stat_due`]) carries on.
    carried: Figures,
    /// The user and system times the BPF walk last gave (v2).
    bpf_cputime: (u64, u64),
    /// Its directory was removed (a file beneath it is no longer there):
    /// forgotten after this read, found again, with its new id, by the next.
    stale: bool,
    per: Pers,
}

/// A node's state in each hierarchy it was found in, by the hierarchy's
/// index, made at its first visit there. Most cgroups are in a few of a
/// host's hierarchies: 10,000 made in v2 alone, beside nine v1
/// hierarchies, would keep ten entries each (1.3 KB a cgroup) where one
/// is used.
#[derive(Default)]
struct Pers(Vec<(usize, PerHier)>);

impl Pers {
    /// Its state in hierarchy `hi`, made when it has none.
    fn at(&mut self, hi: usize) -> &mut PerHier {
        let at = match self.0.iter().position(|(h, _)| *h == hi) {
            Some(at) => at,
            None => {
                // One more entry, not room for four.
                self.0.reserve_exact(1);
                self.0.push((hi, PerHier::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }

    fn iter(&self) -> impl Iterator<Item = &PerHier> {
        self.0.iter().map(|(_, p)| p)
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut PerHier> {
        self.0.iter_mut().map(|(_, p)| p)
    }

    /// Keeps the hierarchies whose state `keep` accepts.
    fn retain(&mut self, mut keep: impl FnMut(&mut PerHier) -> bool) {
        self.0.retain_mut(|(_, p)| keep(p));
    }
}

/// A child as its parent's listing names it, and the node that was last
/// found for it.
struct Child {
    path: Arc<str>,
    node: Ix,
    era: u32,
}

struct PerHier {
    dir: Option<OwnedFd>,
    /// Its directory's inode here (0: not yet known): its BPF row's key.
    ino: u64,
    /// Where the walk's last run wrote its row (a hint: checked by inode).
    row: u32,
    /// v1's `memory.stat`: the charge (pages) when it was last read, and
    /// the read that read it.
    stat_pages: u64,
    stat_at: u64,
    /// With `keep_open`: the files, in the hierarchy's file order.
    files: Vec<Option<OwnedFd>>,
    /// Files not in this cgroup (bit per file), and when they were found so.
    absent: u64,
    absent_at: u64,
    /// The read that last found it in this hierarchy.
    seen: u64,
    /// Its inotify watch (creations and removals of its children), or -1.
    wd: i32,
    /// Its children as last listed; listed again only when its watch
    /// reports a change (or it has none).
    children: Vec<Child>,
    listed: bool,
    /// Children the listing left out (too deep, or not UTF-8).
    left_out: u64,
}

impl PerHier {
    /// Whether the files found missing are tried again at read `reads`.
    /// Once every [`ABSENT_RETRY`] reads, at this cgroup's turn.
    fn retry_absent(&self, reads: u64) -> bool {
        self.absent != 0 && reads > self.absent_at && turn(self.ino, reads, ABSENT_RETRY)
    }
}

impl Default for PerHier {
    fn default() -> PerHier {
        PerHier {
            dir: None,
            ino: 0,
            row: 0,
            stat_pages: 0,
            stat_at: 0,
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
    /// The BPF walk, loaded at the first read that runs it, for every
    /// hierarchy; why it is not used, once it did not load; the capacity
    /// it is loaded with next; how many times it was loaded (a hierarchy
    /// links to each load anew).
    walk: Option<BpfWalk>,
    walk_off: Option<String>,
    walk_capacity: u32,
    walk_era: u32,
    /// The hierarchy whose rows the walk's last run wrote.
    walked_hier: Option<usize>,
    /// Every cgroup in a slot of its own (a read reaches a child from its
    /// parent's listing by index, not by path); the slots of cgroups gone
    /// are `free` for the next ones.
    nodes: Vec<Node>,
    free: Vec<Ix>,
    /// The live nodes by path (a cgroup first listed is found here).
    by_path: HashMap<Arc<str>, Ix, foldhash::fast::RandomState>,
    /// The live nodes in path order, sorted again only when one was
    /// added or removed.
    order: Vec<Ix>,
    order_stale: bool,
    reads: u64,
    /// Reads made to the end (one a walk outgrew stops short).
    complete: u64,
    /// New cgroups this read has taken.
    made: usize,
    /// A walk that meets at least this many cgroups and has no room for
    /// them stops the read ([`Reader::set_hand_over`]).
    hand_over: Option<usize>,
    /// This read stopped so: the cgroups the walk met.
    outgrown: Option<usize>,
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
}

/// Watches a reader adds at most (the user's inotify watches are shared
/// with every other program of root's).
const MAX_WATCHES: usize = 65_536;

impl Reader {
    /// Finds the hierarchies; an error when the mount table cannot be read
    /// or holds none that gives a figure of the files asked for.
    pub fn new(opts: Options) -> Result<Reader, sys::Error> {
        let mountinfo = opts.proc_root.join("self/mountinfo");
        let found = hierarchies(&opts.proc_root, &opts.sys_root, &opts.files).map_err(|e| {
            sys::Error::io(format!("cgroups: cannot read {}", mountinfo.display()), e)
        })?;
        let hiers: Vec<Hier> = found
            .into_iter()
            .map(|info| {
                let files = info.files(&opts.files);
                Hier::new(info, files)
            })
            .filter(|h: &Hier| !h.files.is_empty())
            .collect();
        if hiers.is_empty() {
            return Err(sys::Error::new(
                sys::ErrorKind::Absent,
                format!(
                    "cgroups: no cgroup hierarchy in {} holds a file asked for (v2, or v1 with cpu, cpuacct, memory, blkio or pids)",
                    mountinfo.display()
                ),
            ));
        }
        Ok(Reader {
            opts,
            hiers,
            walk: None,
            walk_off: None,
            walk_capacity: 0,
            walk_era: 0,
            walked_hier: None,
            nodes: Vec::new(),
            free: Vec::new(),
            by_path: HashMap::default(),
            order: Vec::new(),
            order_stale: false,
            reads: 0,
            made: 0,
            complete: 0,
            hand_over: None,
            outgrown: None,
            kept: 0,
            buf: Vec::new(),
            dents: vec![0; 32 << 10],
            names: Vec::new(),
            notify: inotify(),
            watches: HashMap::new(),
            max_watches: MAX_WATCHES,
            events: vec![0; 64 << 10],
        })
    }

    /// Why a hierarchy is read from its files rather than by the BPF walk,
    /// when it is asked for and did not load (or failed): the first one's
    /// reason.
    pub fn bpf_off(&self) -> Option<&str> {
        self.walk_off
            .as_deref()
            .or_else(|| self.hiers.iter().find_map(|h| h.bpf_off.as_deref()))
    }

    /// The rows of the walk's last run, when it was of hierarchy `hi`.
    fn rows_of(walk: &Option<BpfWalk>, walked: Option<usize>, hi: usize) -> &[QsCgroup] {
        match walk {
            Some(w) if walked == Some(hi) => w.last(),
            _ => &[],
        }
    }

    /// How many hierarchies the last read took figures from the BPF walk.
    pub fn bpf_used(&self) -> usize {
        self.walked().count()
    }

    /// The hierarchies whose last read took figures from the BPF walk.
    pub fn walked(&self) -> impl Iterator<Item = &Hierarchy> {
        self.hiers.iter().filter(|h| h.walked).map(|h| &h.info)
    }

    /// Runs the BPF walk of hierarchy `hi`, when it is asked for and a
    /// file it may give is read there; the walk is loaded at the first
    /// read, again larger when it had no room for every cgroup of a
    /// hierarchy, never again once it did not load; a hierarchy it cannot
    /// be linked to or run in is read from its files from then on.
    fn run_bpf(&mut self, hi: usize) {
        let nodes = self.by_path.len();
        let h = &mut self.hiers[hi];
        h.walked = false;
        h.rows_built = false;
        self.walked_hier = None;
        if !self.opts.bpf
            || self.walk_off.is_some()
            || h.bpf_off.is_some()
            || h.given.iter().all(|g| *g == Given::Nothing)
        {
            return;
        }
        // A tree of files (fixtures) is no hierarchy to walk: said before
        // the walk is loaded and the kernel's BTF parsed.
        let mode = match &h.link {
            Some((l, _)) => l.mode(),
            None => match mode_of(&h.info.dir) {
                Ok(m) => m,
                Err(e) => {
                    h.bpf_off = Some(e.to_string());
                    return;
                }
            },
        };
        // A walk with no room for every cgroup is loaded again, larger,
        // and run again (once: the count it saw is the room it gets).
        for _ in 0..2 {
            if self.walk.is_none() {
                let capacity = self.walk_capacity.max(capacity_for(nodes));
                match BpfWalk::load(capacity) {
                    Ok(w) => {
                        self.walk = Some(w);
                        self.walk_era += 1;
                    }
                    Err(e) => {
                        self.walk_off = Some(format!("{}: {e}", h.info.dir.display()));
                        return;
                    }
                }
            }
            let Some(w) = self.walk.as_mut() else {
                return;
            };
            if h.link.as_ref().is_none_or(|(_, era)| *era != self.walk_era) {
                h.link = None;
                match w.link(&h.info.dir, mode) {
                    Ok(l) => h.link = Some((l, self.walk_era)),
                    Err(e) => {
                        h.bpf_off = Some(e.to_string());
                        return;
                    }
                }
            }
            let Some((link, _)) = h.link.as_ref() else {
                return;
            };
            match w.run(link) {
                Ok(r) if r.lost > 0 => {
                    let met = r.rows.len() + r.lost as usize;
                    self.walk_capacity = capacity_for(met);
                    self.walk = None;
                    if self.hand_over.is_some_and(|n| met >= n) {
                        self.outgrown = Some(met);
                        return;
                    }
                }
                Ok(r) => {
                    // Per-CPU sums over some CPUs only are no sums.
                    h.trusted = if r.per_cpu {
                        !0
                    } else {
                        !(QS_CG_CPUACCT as u32)
                    };
                    h.walked = true;
                    self.walked_hier = Some(hi);
                    return;
                }
                Err(e) => {
                    h.link = None;
                    h.bpf_off = Some(format!("{}: {e}", h.info.dir.display()));
                    return;
                }
            }
        }
    }

    pub fn hierarchies(&self) -> impl Iterator<Item = &Hierarchy> {
        self.hiers.iter().map(|h| &h.info)
    }

    /// Reads from the next on go `depth` levels below the root at most
    /// (`None`: [`MAX_DEPTH`]); the cgroups deeper are forgotten.
    pub fn set_max_depth(&mut self, depth: Option<u16>) {
        self.opts.max_depth = depth.map_or(MAX_DEPTH, |d| d.min(MAX_DEPTH));
    }

    /// The depth set by [`Reader::set_max_depth`] (`None`: none lower
    /// than [`MAX_DEPTH`]).
    pub fn max_depth(&self) -> Option<u16> {
        (self.opts.max_depth < MAX_DEPTH).then_some(self.opts.max_depth)
    }

    /// Descriptors kept open between reads.
    pub fn kept_fds(&self) -> usize {
        self.kept
    }

    /// The node of `path`, made (with id `id`, found in hierarchy `hi`)
    /// when it has none; none when it is new past `max_cgroups`.
    fn node_of(
        &mut self,
        path: &Arc<str>,
        id: impl FnOnce() -> u64,
        hi: usize,
        depth: u16,
    ) -> Option<Ix> {
        if let Some(i) = self.by_path.get(path) {
            return Some(*i);
        }
        if self.by_path.len() >= self.opts.max_cgroups {
            return None;
        }
        self.made += 1;
        let node = Node {
            path: path.clone(),
            era: 0,
            live: true,
            id: id(),
            id_v2: self.hiers[hi].info.v2,
            depth,
            figures: Figures::default(),
            read: 0,
            settings_at: 0,
            carried: Figures::default(),
            bpf_cputime: (0, 0),
            stale: false,
            per: Pers::default(),
        };
        let i = match self.free.pop() {
            Some(i) => {
                let slot = &mut self.nodes[i as usize];
                let era = slot.era.wrapping_add(1);
                *slot = node;
                slot.era = era;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as Ix
            }
        };
        self.by_path.insert(path.clone(), i);
        self.order_stale = true;
        Some(i)
    }

    /// The live node a listed child names: the one last found for it, or
    /// the one its path now has.
    fn child_node(&self, c: &mut Child) -> Option<Ix> {
        if let Some(n) = self.nodes.get(c.node as usize)
            && n.live
            && n.era == c.era
        {
            return Some(c.node);
        }
        let i = *self.by_path.get(&c.path)?;
        c.node = i;
        c.era = self.nodes[i as usize].era;
        Some(i)
    }

    /// Reads every cgroup into `out`.
    pub fn read(&mut self, out: &mut Sample) {
        self.reads += 1;
        self.made = 0;
        self.outgrown = None;
        out.cgroups.clear();
        out.left_out = 0;
        out.skipped_lines = 0;
        out.errors = 0;
        out.first_error = None;
        out.mono_ns = sys::mono_ns();
        out.unix_ns = sys::unix_ns();
        self.drain_events();
        for hi in 0..self.hiers.len() {
            self.run_bpf(hi);
            if self.outgrown.is_some() {
                // Nothing forgotten: the nodes keep what the last read saw.
                return;
            }
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
            let root = self.hiers[hi].root_fd();
            let Some(i) = self.node_of(&Arc::from("/"), || inode(root).unwrap_or(0), hi, 0) else {
                out.left_out += 1;
                continue;
            };
            self.visit(hi, i, Dir::open(root), out);
        }
        let reads = self.reads;
        let mut kept = 0;
        let notify = self.notify.as_ref().map(|f| f.as_raw_fd());
        let watches = &mut self.watches;
        for (i, n) in self.nodes.iter_mut().enumerate() {
            if !n.live {
                continue;
            }
            let gone = n.stale || n.per.iter().all(|p| p.seen != reads);
            // A hierarchy it was not found in this read is forgotten.
            n.per.retain(|p| {
                let keep = p.seen == reads && !gone;
                if !keep && p.wd >= 0 {
                    watches.remove(&p.wd);
                    if let Some(fd) = notify {
                        // SAFETY: removing a watch of our inotify fd (one
                        // the kernel already dropped answers EINVAL).
                        unsafe { libc::inotify_rm_watch(fd, p.wd) };
                    }
                }
                if keep {
                    kept += usize::from(p.dir.is_some()) + p.files.iter().flatten().count();
                }
                keep
            });
            if gone {
                self.by_path.remove(&n.path);
                n.live = false;
                n.per = Pers::default();
                self.free.push(i as Ix);
                self.order_stale = true;
            }
        }
        self.kept = kept;
        if self.order_stale {
            let nodes = &self.nodes;
            self.order.clear();
            self.order.extend(self.by_path.values().copied());
            self.order
                .sort_unstable_by(|a, b| nodes[*a as usize].path.cmp(&nodes[*b as usize].path));
            self.order_stale = false;
        }
        out.cgroups.extend(self.order.iter().map(|i| {
            let n = &self.nodes[*i as usize];
            Cgroup {
                path: n.path.clone(),
                id: n.id,
                depth: n.depth,
                figures: n.figures.clone(),
            }
        }));
        self.complete += 1;
    }

    /// A walk that meets `past` cgroups or more and has no room for them
    /// (it must be loaded again, larger: the kernel's BTF parsed, the
    /// program verified) stops the read instead, with no cgroup read
    /// ([`Reader::outgrown`]); the next read loads it. The agent walks on
    /// its sampler's thread while the cgroups are few, and hands a walk
    /// that outgrew them to a thread of its own before that load. `None`
    /// (the default): loaded again within the read.
    pub fn set_hand_over(&mut self, past: Option<usize>) {
        self.hand_over = past;
    }

    /// The cgroups the walk met, when the last read stopped because it
    /// outgrew them ([`Reader::set_hand_over`]).
    pub fn outgrown(&self) -> Option<usize> {
        self.outgrown
    }
}

#[cfg(test)]
mod tests {
    use super::given::turn;
    use super::{Options, Reader, Sample};

    /// A cgroup keeps state for the hierarchies it is in, not for every
    /// hierarchy of the host: on the v1 fixture (five hierarchies), each
    /// node's entries are those whose directory holds its path.
    #[test]
    fn a_cgroup_keeps_state_only_for_the_hierarchies_it_is_in() {
        let (proc_root, sys_root) = fixtures::roots("cgroup-v1");
        let mut r = Reader::new(Options::new(&proc_root, &sys_root)).unwrap();
        let mut s = Sample::default();
        for _ in 0..2 {
            r.read(&mut s);
            let mut fewer = 0;
            for n in r.nodes.iter().filter(|n| n.live) {
                let mut in_hiers: Vec<usize> = (0..r.hiers.len())
                    .filter(|&h| {
                        r.hiers[h]
                            .info
                            .dir
                            .join(n.path.trim_start_matches('/'))
                            .is_dir()
                    })
                    .collect();
                let mut kept: Vec<usize> = n.per.0.iter().map(|(h, _)| *h).collect();
                kept.sort_unstable();
                in_hiers.sort_unstable();
                assert_eq!(kept, in_hiers, "{}", n.path);
                fewer += usize::from(kept.len() < r.hiers.len());
            }
            assert!(
                fewer > 0,
                "every cgroup of the fixture is in every hierarchy"
            );
        }
    }

    /// Every cgroup has one turn in any `every` reads running, and each read
    /// takes about its share of them, also for inodes the kernel numbers
    /// with a stride (a directory and its files).
    #[test]
    fn turns_come_once_per_period_and_spread_over_its_reads() {
        for stride in [1u64, 2, 6, 30, 31, 64] {
            let inos: Vec<u64> = (0..10_000).map(|i| 5_000 + i * stride).collect();
            for every in [6u64, 30] {
                for start in [1u64, 17] {
                    let mut per_read = vec![0usize; every as usize];
                    for ino in &inos {
                        let turns: Vec<u64> = (start..start + every)
                            .filter(|r| turn(*ino, *r, every))
                            .collect();
                        assert_eq!(turns.len(), 1, "ino {ino} every {every}");
                        per_read[(turns[0] - start) as usize] += 1;
                    }
                    let share = inos.len() / every as usize;
                    assert!(
                        per_read
                            .iter()
                            .all(|n| *n > share / 2 && *n < share * 3 / 2),
                        "stride {stride} every {every}: {per_read:?}"
                    );
                }
            }
        }
    }
}
