//! The filesystem source: the mount table, and statfs(2) of each mount,
//! on the sampler for mounts answered from memory and on a worker for the
//! rest, with a deadline.

use super::*;

impl Gatherer {
    /// The mount table (`1/mounts`, else `mounts`), mount points as seen
    /// below the root-filesystem prefix.
    pub(super) fn mount_table(&self, proc_root: &Path) -> std::io::Result<Vec<MountEntry>> {
        let table = match read_capped(&proc_root.join("1/mounts"), MOUNTS_CAP) {
            Ok(t) => t,
            Err(_) => read_capped(&proc_root.join("mounts"), MOUNTS_CAP)?,
        };
        let rootfs = self.options.rootfs.as_os_str().as_bytes();
        let strip = if rootfs == b"/" {
            &b""[..]
        } else {
            rootfs.strip_suffix(b"/").unwrap_or(rootfs)
        };
        let mut out = Vec::new();
        for line in table.split(|&b| b == b'\n').take(crate::limits::MAX_ROWS) {
            let mut w = line.split(|&b| b == b' ');
            let (Some(device), Some(point), Some(fstype), Some(options)) =
                (w.next(), w.next(), w.next(), w.next())
            else {
                continue;
            };
            // Inside a container with the host below the prefix, the host's
            // mount points are printed with it.
            let point =
                match point.strip_prefix(strip) {
                    Some(p) if !strip.is_empty() && (p.is_empty() || p[0] == b'/') => {
                        if p.is_empty() { &b"/"[..] } else { p }
                    }
                    _ => point,
                };
            let shown = crate::filesystem::unescape(&String::from_utf8_lossy(point));
            let target = self.options.rootfs.join(shown.trim_start_matches('/'));
            out.push(MountEntry {
                fields: [device, point, fstype, options].map(<[u8]>::to_vec),
                shown,
                target,
            });
        }
        Ok(out)
    }

    pub(super) fn filesystem(&mut self, proc_root: &Path) -> std::io::Result<()> {
        let table = self.mount_table(proc_root)?;
        // Mount points where a filesystem that may wait on a peer or a
        // daemon is mounted: a path through them can hang.
        let hazards: HashSet<&[u8]> = table
            .iter()
            .filter(|m| !answers_from_memory(&m.fields[2]))
            .map(|m| m.fields[1].as_slice())
            .collect();
        let mut seen = HashSet::new();
        let mut mounts = Vec::new();
        for m in &table {
            let [device, point, fstype, _] = &m.fields;
            let fstype_text = String::from_utf8_lossy(fstype);
            let o = &self.options;
            let point_out = match &o.mount_points_include {
                Some(i) => !i.is_match(&m.shown),
                None => o.mount_points_exclude.is_match(&m.shown),
            };
            let type_out = match &o.fs_types_include {
                Some(i) => !i.is_match(&fstype_text),
                None => o.fs_types_exclude.is_match(&fstype_text),
            };
            if point_out || type_out || !seen.insert((device, point, fstype)) {
                continue;
            }
            let mut head = Vec::new();
            for field in &m.fields {
                head.extend_from_slice(field);
                head.push(b' ');
            }
            let here = self.options.rootfs == Path::new("/") && !crosses_hazard(point, &hazards);
            mounts.push((head, m.target.as_path(), here));
        }
        // Mounts that answer from memory on this thread; the rest in one
        // round trip to the worker (none when there are none).
        let away: Vec<&Path> = mounts.iter().filter(|m| !m.2).map(|m| m.1).collect();
        let mut away = self
            .statfs
            .stat_all(&away, self.options.statfs_wait)
            .into_iter();
        for (head, target, here) in &mounts {
            let r = if *here {
                statfs(target)
            } else {
                away.next().unwrap_or(Err(Unanswered::NotTried))
            };
            self.scratch.extend_from_slice(head);
            match r {
                Ok(s) => {
                    let _ = write!(
                        self.scratch,
                        "ok {} {} {} {} {} {}",
                        s.bsize, s.blocks, s.bfree, s.bavail, s.files, s.ffree
                    );
                }
                Err(reason) => {
                    self.scratch.extend_from_slice(b"error ");
                    self.scratch.extend_from_slice(reason.word().as_bytes());
                }
            }
            self.scratch.push(b'\n');
        }
        Ok(())
    }
}

/// Calls in flight at most: beyond, further mounts are reported failed
/// without a call (each in-flight call holds one thread).
pub(super) const MAX_IN_FLIGHT: usize = 64;

/// The mount table's size cap (a host with 100,000 mounts prints ~10 MB).
pub(super) const MOUNTS_CAP: u64 = 64 << 20;

/// One line of the mount table: device, mount point (as printed), type and
/// options; the mount point unescaped, and the path to it below the
/// root-filesystem prefix.
pub(super) struct MountEntry {
    pub(super) fields: [Vec<u8>; 4],
    pub(super) shown: String,
    pub(super) target: PathBuf,
}

/// Filesystem types whose statfs(2) and path lookups are answered from the
/// kernel's memory: a local disk's counters and cached mount-point dentries,
/// or a pseudo filesystem. Mounts of these, with only these on the way to
/// them, are statfs'd on the sampling thread; any other type (NFS, CIFS,
/// FUSE, Ceph, 9p, overlay, autofs, btrfs, ZFS, an unknown name) goes to
/// the worker and its wait bound.
pub(super) const ANSWERS_FROM_MEMORY: [&[u8]; 19] = [
    b"ext2",
    b"ext3",
    b"ext4",
    b"xfs",
    b"vfat",
    b"msdos",
    b"exfat",
    b"tmpfs",
    b"ramfs",
    b"rootfs",
    b"proc",
    b"sysfs",
    b"devtmpfs",
    b"devpts",
    b"cgroup",
    b"cgroup2",
    b"mqueue",
    b"tracefs",
    b"securityfs",
];

pub(super) fn answers_from_memory(fstype: &[u8]) -> bool {
    ANSWERS_FROM_MEMORY.contains(&fstype)
}

/// Whether the way to `point` (from `/`, the point itself included) passes a
/// mount point in `hazards`. Points are compared as /proc prints them
/// (escaped); a `/` is never escaped, so prefixes are prefixes.
pub(super) fn crosses_hazard(point: &[u8], hazards: &HashSet<&[u8]>) -> bool {
    if hazards.is_empty() {
        return false;
    }
    if hazards.contains(&b"/"[..]) || hazards.contains(point) {
        return true;
    }
    point
        .iter()
        .enumerate()
        .skip(1)
        .any(|(i, &b)| b == b'/' && hazards.contains(&point[..i]))
}

/// statfs(2)'s figures node_exporter reports.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StatfsOut {
    pub(super) bsize: u64,
    pub(super) blocks: u64,
    pub(super) bfree: u64,
    pub(super) bavail: u64,
    pub(super) files: u64,
    pub(super) ffree: u64,
}

pub(super) fn statfs(path: &Path) -> Result<StatfsOut, Unanswered> {
    let s = sys::statfs(path).map_err(|e| Unanswered::Errno(e.raw_os_error().unwrap_or(0)))?;
    Ok(StatfsOut {
        bsize: s.f_bsize as u64,
        blocks: s.f_blocks,
        bfree: s.f_bfree,
        bavail: s.f_bavail,
        files: s.f_files,
        ffree: s.f_ffree,
    })
}

/// Why a mount's statfs(2) gave no figures; the sample records its word
/// after `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unanswered {
    /// The call failed with this errno.
    Errno(i32),
    /// A call on the mount is still in flight (or too many are).
    Stuck,
    /// The call did not return within the wait.
    Timeout,
    /// No worker thread could be started.
    NoWorker,
    /// The worker did not get to it.
    NotTried,
}

impl Unanswered {
    pub(super) fn word(self) -> std::borrow::Cow<'static, str> {
        use Unanswered::*;
        match self {
            Stuck => "stuck".into(),
            Timeout => "timeout".into(),
            NoWorker => "no worker thread".into(),
            NotTried => "not tried".into(),
            Errno(libc::EACCES) => "EACCES".into(),
            Errno(libc::EINVAL) => "EINVAL".into(),
            Errno(libc::ENOENT) => "ENOENT".into(),
            Errno(libc::ENOTCONN) => "ENOTCONN".into(),
            Errno(libc::EIO) => "EIO".into(),
            Errno(libc::ESTALE) => "ESTALE".into(),
            Errno(libc::ENOTDIR) => "ENOTDIR".into(),
            Errno(libc::ELOOP) => "ELOOP".into(),
            Errno(libc::ENOSYS) => "ENOSYS".into(),
            Errno(libc::EINTR) => "EINTR".into(),
            Errno(n) => format!("errno{n}").into(),
        }
    }
}

/// Tests compare a reason with its word.
#[cfg(test)]
impl PartialEq<&str> for Unanswered {
    fn eq(&self, word: &&str) -> bool {
        self.word() == *word
    }
}

/// A batch of statfs calls for the worker, and what it has done so far.
pub(super) struct Batch {
    pub(super) paths: Vec<PathBuf>,
    pub(super) results: Mutex<Vec<Option<Result<StatfsOut, Unanswered>>>>,
    /// The index of the call in progress (`paths.len()` when all are done).
    pub(super) current: AtomicUsize,
    /// Set by the caller when it stopped waiting: calls not started are
    /// not made.
    pub(super) cancelled: AtomicBool,
    pub(super) done: Mutex<Option<Sender<()>>>,
}

/// statfs(2) off the calling thread, with a wait bound: a call on a hung
/// mount (an NFS server gone, a FUSE daemon stopped) keeps its worker
/// thread, and the mount is reported `stuck` without a new call until that
/// one returns. The mounts of one read go to the worker as one batch (one
/// wakeup each way, however many mounts).
#[derive(Default)]
pub(super) struct Statfs {
    /// Mount points with a call in flight; each worker removes its own
    /// when the call returns.
    pub(super) in_flight: Arc<Mutex<HashSet<PathBuf>>>,
    pub(super) worker: Option<Sender<Arc<Batch>>>,
}

impl Statfs {
    #[cfg(test)]
    pub(super) fn stat(&mut self, path: &Path, wait: Duration) -> Result<StatfsOut, Unanswered> {
        self.stat_all(&[path], wait)
            .pop()
            .expect("one result per path")
    }

    /// statfs of every path, in order. Each hung call costs the caller at
    /// most `wait`: its mount is reported `timeout` and the calls after it
    /// go to a new worker.
    pub(super) fn stat_all(
        &mut self,
        paths: &[&Path],
        wait: Duration,
    ) -> Vec<Result<StatfsOut, Unanswered>> {
        let mut out: Vec<Option<Result<StatfsOut, Unanswered>>> = vec![None; paths.len()];
        let mut todo: Vec<usize> = Vec::new();
        {
            let mut f = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            for (i, p) in paths.iter().enumerate() {
                if f.contains(*p) || f.len() >= MAX_IN_FLIGHT {
                    out[i] = Some(Err(Unanswered::Stuck));
                } else {
                    f.insert(p.to_path_buf());
                    todo.push(i);
                }
            }
        }
        while !todo.is_empty() {
            let (tx, rx) = mpsc::channel();
            let batch = Arc::new(Batch {
                paths: todo.iter().map(|&i| paths[i].to_path_buf()).collect(),
                results: Mutex::new(vec![None; todo.len()]),
                current: AtomicUsize::new(0),
                cancelled: AtomicBool::new(false),
                done: Mutex::new(Some(tx)),
            });
            let sent = self
                .worker
                .as_ref()
                .is_some_and(|w| w.send(batch.clone()).is_ok());
            if !sent {
                match self.spawn() {
                    Some(w) if w.send(batch.clone()).is_ok() => self.worker = Some(w),
                    _ => {
                        let mut f = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
                        for &i in &todo {
                            f.remove(paths[i]);
                            out[i] = Some(Err(Unanswered::NoWorker));
                        }
                        break;
                    }
                }
            }
            let finished = rx.recv_timeout(wait).is_ok();
            if !finished {
                batch.cancelled.store(true, Ordering::Release);
            }
            let current = batch.current.load(Ordering::Acquire);
            let mut results = batch.results.lock().unwrap_or_else(|e| e.into_inner());
            let mut rest = Vec::new();
            for (k, &i) in todo.iter().enumerate() {
                match results[k].take() {
                    Some(r) => out[i] = Some(r),
                    // The call in progress: it holds the worker.
                    None if k == current => out[i] = Some(Err(Unanswered::Timeout)),
                    // Not started: retried on a new worker. (A call the
                    // worker began just now leaves its path in flight;
                    // removing it here lets it be tried again at worst.)
                    None => {
                        self.in_flight
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .remove(paths[i]);
                        rest.push(i);
                    }
                }
            }
            drop(results);
            if !finished {
                // The worker is held by the hung call; it exits once the
                // call returns.
                self.worker = None;
            }
            todo = rest;
        }
        out.into_iter()
            .map(|r| r.unwrap_or(Err(Unanswered::NotTried)))
            .collect()
    }

    pub(super) fn spawn(&self) -> Option<Sender<Arc<Batch>>> {
        let (tx, rx) = mpsc::channel::<Arc<Batch>>();
        let in_flight = self.in_flight.clone();
        std::thread::Builder::new()
            .name("statfs".into())
            .spawn(move || {
                for batch in rx {
                    for (k, path) in batch.paths.iter().enumerate() {
                        if batch.cancelled.load(Ordering::Acquire) {
                            // Abandoned after a hung call: exit.
                            return;
                        }
                        batch.current.store(k, Ordering::Release);
                        let r = statfs(path);
                        in_flight
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .remove(path);
                        batch.results.lock().unwrap_or_else(|e| e.into_inner())[k] = Some(r);
                    }
                    batch.current.store(batch.paths.len(), Ordering::Release);
                    let done = batch.done.lock().unwrap_or_else(|e| e.into_inner()).take();
                    if done.is_none_or(|d| d.send(()).is_err()) {
                        // The caller stopped waiting: it has a new worker.
                        return;
                    }
                }
            })
            .ok()?;
        Some(tx)
    }
}
