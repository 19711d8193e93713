//! The journal: what the sampler hands the store, in a file in memory
//! (tmpfs) mapped into the agent. Appending is a copy into the mapping (no
//! system call, no disk); the writer moves what it holds into the day's
//! SQLite file every flush and then drops it. A kill -9 leaves the journal
//! in the file; the next start writes what the database lacks (records
//! carry a sequence number), so every sample appended before the kill is
//! kept.
//!
//! The file: the offset of the first live record (u64), then records:
//! `length (u32) | crc32 (u32) | seq (u64) | kind (u8) | time (u64, ms
//! since the epoch) | payload`, little-endian; the CRC covers everything
//! after it. A zero length ends the records.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

const HEAD: usize = 4 + 4 + 8 + 1 + 8;

/// What a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// System sources' bytes as read ([`procfs::kept`] entries).
    System = 1,
    /// Process rows of 13 values (an earlier build's `Procs` and
    /// `ProcsDelta`, before the waits were stored): left unread, as a
    /// record of a kind the chain does not take (the system samples around
    /// them are kept).
    EarlierProcs = 2,
    /// Processes that ended ([`crate::procs::put_exits`]).
    Exits = 3,
    EarlierProcsDelta = 4,
    /// A walk of the cgroups, whole ([`crate::cgroups::put_whole`]).
    Cgroups = 5,
    /// Process rows of 21 values (an earlier build's, with the waits but
    /// before network bytes and GPU use were stored): left unread as
    /// [`Kind::EarlierProcs`] are.
    WaitsProcs = 6,
    WaitsProcsDelta = 7,
    /// A process table ([`crate::procs::put_rows`]).
    Procs = 8,
    /// What changed in the process table since the record before
    /// ([`crate::procs::put_delta_rows`]).
    ProcsDelta = 9,
}

impl Kind {
    /// An earlier build's process rows, of another width: not read.
    pub fn earlier_procs(self) -> bool {
        matches!(
            self,
            Kind::EarlierProcs | Kind::EarlierProcsDelta | Kind::WaitsProcs | Kind::WaitsProcsDelta
        )
    }

    fn from_u8(b: u8) -> Option<Kind> {
        [
            Kind::System,
            Kind::EarlierProcs,
            Kind::Exits,
            Kind::EarlierProcsDelta,
            Kind::Cgroups,
            Kind::WaitsProcs,
            Kind::WaitsProcsDelta,
            Kind::Procs,
            Kind::ProcsDelta,
        ]
        .into_iter()
        .find(|k| *k as u8 == b)
    }
}

/// One record, as read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub seq: u64,
    pub kind: Kind,
    pub ts_ms: u64,
    pub payload: &'a [u8],
}

/// The records of `bytes`, in order, up to the first that is torn, fails
/// its CRC or does not follow its predecessor's sequence number.
pub fn records(bytes: &[u8]) -> impl Iterator<Item = Record<'_>> {
    let mut pos = 0;
    let mut last: Option<u64> = None;
    std::iter::from_fn(move || {
        let h = bytes.get(pos..pos + HEAD)?;
        let len = u32::from_le_bytes(h[0..4].try_into().ok()?) as usize;
        if len == 0 {
            return None;
        }
        let crc = u32::from_le_bytes(h[4..8].try_into().ok()?);
        let body = bytes.get(pos + 8..pos + HEAD + len)?;
        if crc32fast::hash(body) != crc {
            return None;
        }
        let seq = u64::from_le_bytes(h[8..16].try_into().ok()?);
        if last.is_some_and(|l| seq <= l) {
            return None;
        }
        let kind = Kind::from_u8(h[16])?;
        let ts_ms = u64::from_le_bytes(h[17..25].try_into().ok()?);
        last = Some(seq);
        pos += HEAD + len;
        Some(Record {
            seq,
            kind,
            ts_ms,
            payload: &body[HEAD - 8..],
        })
    })
}

/// Bytes before the records: the offset of the first live one (u64), then
/// the header naming the store ([`Owner`]), in the first page.
const DATA: usize = 4096;
/// The header's mark, after the offset (an older build's journal has its
/// first record's length there, never these bytes).
const MAGIC: &[u8; 4] = b"QSJ2";
/// Where the records began in an older build's journal.
const LEGACY_DATA: usize = 8;

/// The store a journal belongs to: its path and its id
/// ([`crate::access::store_id`]; 0 when it could not be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub store: PathBuf,
    pub id: u64,
}

impl Owner {
    fn encode(&self, out: &mut [u8]) {
        use std::os::unix::ffi::OsStrExt;
        let p = self.store.as_os_str().as_bytes();
        let n = p.len().min(DATA - 22);
        out[8..12].copy_from_slice(MAGIC);
        out[12..20].copy_from_slice(&self.id.to_le_bytes());
        out[20..22].copy_from_slice(&(n as u16).to_le_bytes());
        out[22..22 + n].copy_from_slice(&p[..n]);
    }

    /// The owner a journal's first page names; `None` for an older
    /// build's journal (or a file that is not one).
    pub fn decode(page: &[u8]) -> Option<Owner> {
        use std::os::unix::ffi::OsStrExt;
        if page.get(8..12)? != MAGIC {
            return None;
        }
        let id = u64::from_le_bytes(page.get(12..20)?.try_into().ok()?);
        let n = u16::from_le_bytes(page.get(20..22)?.try_into().ok()?) as usize;
        let p = page.get(22..22 + n)?;
        Some(Owner {
            store: PathBuf::from(std::ffi::OsStr::from_bytes(p)),
            id,
        })
    }
}

/// A journal file read without touching it (`report`, the orphan sweep):
/// its owner and the records it holds from its live start.
pub struct Snapshot {
    pub owner: Option<Owner>,
    bytes: Vec<u8>,
    from: usize,
}

impl Snapshot {
    /// Reads `path` (a regular file of this user's, not followed).
    pub fn read(path: &Path) -> std::io::Result<Snapshot> {
        use std::io::Read;
        let mut f = crate::access::open_file(path, false, None)?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        let owner = Owner::decode(&bytes);
        let data = if owner.is_some() { DATA } else { LEGACY_DATA };
        let start = bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes) as usize;
        let from = if data + start < bytes.len() {
            data + start
        } else {
            bytes.len()
        };
        Ok(Snapshot { owner, bytes, from })
    }

    pub fn records(&self) -> impl Iterator<Item = Record<'_>> {
        records(&self.bytes[self.from..])
    }
}

/// The file in a store naming its agent's journal (one path, a line).
pub const NAMED_IN_STORE: &str = "journal-path";

/// Where journals are looked for: the default directories of this user
/// (`/run/quietstat/`, `/dev/shm/quietstat-<uid>/`), every user's
/// `/dev/shm/quietstat-*/` that can be read, and `extra` (a configured
/// journal's directory).
pub fn places(extra: Option<&Path>) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = vec![
        "/run/quietstat".into(),
        format!("/dev/shm/quietstat-{}", crate::access::euid()).into(),
    ];
    for e in std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
    {
        if e.file_name().to_string_lossy().starts_with("quietstat-")
            && e.file_type().is_ok_and(|t| t.is_dir())
        {
            v.push(e.path());
        }
    }
    if let Some(x) = extra {
        v.push(x.to_path_buf());
    }
    v.sort();
    v.dedup();
    v
}

/// The journals in `dirs` that name a store (regular files of this user's
/// or readable, with the header), with their path.
pub fn found(dirs: &[PathBuf]) -> Vec<(PathBuf, Owner)> {
    use std::os::unix::fs::FileExt;
    let mut out = Vec::new();
    for d in dirs {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            if !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let Ok(f) = crate::access::open_file(&e.path(), false, None) else {
                continue;
            };
            let mut page = vec![0u8; DATA];
            if f.read_exact_at(&mut page, 0).is_ok()
                && let Some(o) = Owner::decode(&page)
            {
                out.push((e.path(), o));
            }
        }
    }
    out
}

/// Removes the journals whose store is gone (its directory missing, or
/// another store made at its path) and whose agent is gone, and an older
/// build's `/dev/shm/quietstat-journal-*` files (which name no store);
/// calls `log` with one line each: path, size, samples lost, and why.
/// A journal whose store exists is left for that store's next start.
pub fn sweep(dirs: &[PathBuf], ours: &Path, log: &dyn Fn(String)) {
    let me = crate::access::euid();
    let mut gone = Vec::new();
    for (path, owner) in found(dirs) {
        use std::os::unix::fs::MetadataExt;
        // Only this user's: another user's store may merely be out of
        // this user's sight.
        let mine = std::fs::symlink_metadata(&path).is_ok_and(|m| m.uid() == me);
        if path == ours || !mine || in_use(&path) {
            continue;
        }
        let why = if !owner.store.is_dir() {
            format!("its store {} no longer exists", owner.store.display())
        } else {
            let now = crate::access::store_id(&owner.store, None);
            if owner.id != 0 && now != 0 && now != owner.id {
                format!(
                    "{} is another store now (id {now:016x}, the journal's {:016x})",
                    owner.store.display(),
                    owner.id
                )
            } else {
                continue;
            }
        };
        gone.push((path, why));
    }
    for e in std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
    {
        use std::os::unix::fs::MetadataExt;
        let legacy = e
            .file_name()
            .to_string_lossy()
            .starts_with("quietstat-journal-");
        if legacy && e.metadata().is_ok_and(|m| m.is_file() && m.uid() == me) && !in_use(&e.path())
        {
            gone.push((
                e.path(),
                "an older build's journal, which names no store".into(),
            ));
        }
    }
    for (path, why) in gone {
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        let samples = Snapshot::read(&path).map_or(0, |s| s.records().count());
        match std::fs::remove_file(&path) {
            Ok(()) => log(format!(
                "store: removed the journal {} ({} MiB, {samples} samples never written): {why}",
                path.display(),
                size >> 20
            )),
            Err(e) => log(format!(
                "store: cannot remove the journal {} ({why}): {e}",
                path.display()
            )),
        }
    }
}

/// Whether an agent holds the journal at `path` (its lock is taken).
pub fn in_use(path: &Path) -> bool {
    let Ok(f) = crate::access::open_file(path, false, None) else {
        return false;
    };
    // SAFETY: flock on an open descriptor; released at once (and by the
    // close).
    unsafe {
        if libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) != 0 {
            return true;
        }
        libc::flock(f.as_raw_fd(), libc::LOCK_UN);
    }
    false
}

/// The mapped journal: `start (u64) | records...`. Live records run from
/// `start` to `head`; those before `start` are in the database. Nothing a
/// record holds is moved while it is live unless its copy is complete
/// before `start` (one aligned 8-byte store) points at it, so a kill at
/// any instant leaves every live record readable.
pub struct Journal {
    ptr: *mut u8,
    cap: usize,
    start: usize,
    head: usize,
    next_seq: u64,
    /// End of the bytes handed to the writer and not yet released (0: none).
    taken: usize,
    /// Records dropped because the journal was full.
    pub dropped: u64,
    /// `None`: in this process's memory only (no file could be used).
    path: Option<PathBuf>,
    _file: Option<File>,
}

// SAFETY: the mapping is owned by the Journal and only touched through
// &mut self (callers share it behind a Mutex).
unsafe impl Send for Journal {}

impl Drop for Journal {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.cap) };
    }
}

impl Journal {
    /// Opens (creating) the journal at `path` with room for `cap` bytes;
    /// records already there stay, to be written. Sequence numbers go on
    /// after both what it holds and `after_seq`.
    ///
    /// Its directory must be one only this user (or root) can write; a
    /// new file is made with `O_EXCL|O_NOFOLLOW`, an old one must be this
    /// user's, private and a regular file; its pages are reserved
    /// (`posix_fallocate`) before it is mapped, so a full filesystem is an
    /// error now, never a SIGBUS later. One agent per journal: a second is
    /// refused with [`std::io::ErrorKind::WouldBlock`].
    pub fn open(
        path: &Path,
        cap: usize,
        after_seq: u64,
        owner: &Owner,
    ) -> std::io::Result<Journal> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        crate::access::check_dir(dir).map_err(std::io::Error::other)?;
        let made = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path);
        let file = match made {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let f = crate::access::open_file(path, true, None)?;
                let m = f.metadata()?;
                let me = crate::access::euid();
                if m.uid() != me || m.mode() & 0o077 != 0 {
                    return Err(std::io::Error::other(format!(
                        "owned by uid {} with mode {:o}, not by this user (uid {me}) and private; remove it or give [store] journal",
                        m.uid(),
                        m.mode() & 0o7777
                    )));
                }
                f
            }
            Err(e) => return Err(e),
        };
        // A reader testing the lock (`report`) holds it for a moment: a few
        // tries before another agent is taken to hold it.
        let mut tries = 0;
        // SAFETY: flock on an open descriptor.
        while unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            tries += 1;
            if tries == 20 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::WouldBlock,
                    "in use by another agent",
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // Another store's journal at this path (the configuration named
        // another store since): moved aside for that store, never mixed.
        let mut page = vec![0u8; DATA.min(file.metadata()?.len() as usize)];
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut page, 0)?;
        if let Some(theirs) = Owner::decode(&page)
            && (theirs.store != owner.store
                || (theirs.id != owner.id && theirs.id != 0 && owner.id != 0))
        {
            let aside = PathBuf::from(format!("{}.{:016x}", path.display(), theirs.id));
            drop(file);
            std::fs::rename(path, &aside)?;
            return Journal::open(path, cap, after_seq, owner);
        }
        // A journal made larger (by an agent with a higher memory
        // ceiling) is kept whole: none of its records is lost.
        let cap = cap.max(file.metadata()?.len() as usize);
        // SAFETY: a valid fd.
        let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, cap as libc::off_t) };
        if r != 0 {
            let e = std::io::Error::from_raw_os_error(r);
            if file.metadata().is_ok_and(|m| m.len() == 0) {
                let _ = std::fs::remove_file(path);
            }
            return Err(std::io::Error::new(
                e.kind(),
                format!("reserving {} MiB: {e}", cap >> 20),
            ));
        }
        // SAFETY: a shared read-write mapping of a file of `cap` bytes,
        // all of them allocated.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                cap,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Journal::over(
            ptr.cast(),
            cap,
            after_seq,
            Some(path.to_path_buf()),
            Some(file),
            owner,
        ))
    }

    /// A journal in this process's memory only, for when no file can be
    /// used: recording goes on, and a kill -9 loses what it holds (at most
    /// one flush interval of samples).
    pub fn anonymous(cap: usize, owner: &Owner) -> std::io::Result<Journal> {
        // SAFETY: a private anonymous mapping of `cap` bytes.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                cap,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Journal::over(ptr.cast(), cap, 0, None, None, owner))
    }

    fn over(
        ptr: *mut u8,
        cap: usize,
        after_seq: u64,
        path: Option<PathBuf>,
        file: Option<File>,
        owner: &Owner,
    ) -> Journal {
        let mut j = Journal {
            ptr,
            cap,
            start: 0,
            head: 0,
            next_seq: after_seq + 1,
            taken: 0,
            dropped: 0,
            path,
            _file: file,
        };
        let start = u64::from_le_bytes(j.bytes()[..8].try_into().unwrap_or_default()) as usize;
        if Owner::decode(j.bytes()).is_none() {
            // New, or an older build's: its live records (if any) are kept,
            // under the header.
            let legacy: Vec<(u64, Kind, u64, Vec<u8>)> = if start < cap - LEGACY_DATA {
                records(&j.bytes()[LEGACY_DATA + start..])
                    .filter(|r| r.seq > after_seq)
                    .map(|r| (r.seq, r.kind, r.ts_ms, r.payload.to_vec()))
                    .collect()
            } else {
                Vec::new()
            };
            j.bytes_mut()[..DATA + 4].fill(0);
            owner.encode(j.bytes_mut());
            j.set_start(0);
            for (seq, kind, ts, payload) in legacy {
                j.next_seq = j.next_seq.max(seq);
                j.append(kind, ts, &payload);
            }
            return j;
        }
        j.start = if start < cap - DATA { start } else { 0 };
        let (len, last) = records(j.live_from(j.start)).fold((0, None), |(end, _), r| {
            (end + HEAD + r.payload.len(), Some(r.seq))
        });
        j.head = j.start + len;
        if let Some(l) = last {
            j.next_seq = j.next_seq.max(l + 1);
        }
        j.terminate();
        j
    }

    /// The file, unless the journal is in this process's memory only.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `cap` mapped bytes, borrowed with self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.cap) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as `bytes`, exclusively.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.cap) }
    }

    /// The record area from offset `from`.
    fn live_from(&self, from: usize) -> &[u8] {
        &self.bytes()[DATA + from..]
    }

    fn terminate(&mut self) {
        let h = DATA + self.head;
        if let Some(t) = self.bytes_mut().get_mut(h..h + 4) {
            t.copy_from_slice(&[0; 4]);
        }
    }

    fn set_start(&mut self, start: usize) {
        self.start = start;
        // One aligned 8-byte store: a kill sees the old offset or the new.
        // SAFETY: the mapping is page-aligned, so its first 8 bytes are.
        unsafe { std::ptr::write_volatile(self.ptr.cast::<u64>(), (start as u64).to_le()) };
    }

    /// Live bytes.
    pub fn len(&self) -> usize {
        self.head - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.head == self.start
    }

    /// Room for `need` more bytes (and a terminator) after `head`.
    fn fits(&self, need: usize) -> bool {
        DATA + self.head + need + 4 <= self.cap
    }

    /// Appends a record; false if it (or older ones, to make room) was
    /// dropped.
    pub fn append(&mut self, kind: Kind, ts_ms: u64, payload: &[u8]) -> bool {
        self.append_with(kind, ts_ms, payload.len(), &mut |dst| {
            dst.copy_from_slice(payload)
        })
    }

    /// Appends a record of `len` bytes that `fill` writes in place (no
    /// copy through a buffer); false as for [`Journal::append`].
    pub fn append_with(
        &mut self,
        kind: Kind,
        ts_ms: u64,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
        let need = HEAD + len;
        if DATA + need + 4 > self.cap {
            self.dropped += 1;
            return false;
        }
        let mut ok = true;
        if !self.fits(need) {
            if self.taken > 0 {
                // The writer holds the oldest: this one waits for nobody.
                self.dropped += 1;
                return false;
            }
            // Drop the oldest until the live records fit at the front with
            // room to spare, then move them there.
            while self.len() + need + 4 > (self.cap - DATA) / 2 && !self.is_empty() {
                ok = false;
                self.drop_first();
            }
            self.compact();
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let h = DATA + self.head;
        let b = &mut self.bytes_mut()[h..h + need];
        b[8..16].copy_from_slice(&seq.to_le_bytes());
        b[16] = kind as u8;
        b[17..25].copy_from_slice(&ts_ms.to_le_bytes());
        fill(&mut b[HEAD..]);
        let crc = crc32fast::hash(&b[8..]);
        b[4..8].copy_from_slice(&crc.to_le_bytes());
        // The length last: a record is there once its length is.
        b[0..4].copy_from_slice(&(len as u32).to_le_bytes());
        self.head += need;
        self.terminate();
        ok
    }

    fn drop_first(&mut self) {
        let Some(r) = records(&self.live_from(self.start)[..self.len() + 4]).next() else {
            self.set_start(self.head);
            return;
        };
        let next = self.start + HEAD + r.payload.len();
        self.set_start(next);
        self.dropped += 1;
    }

    /// Moves the live records to the front, when they do not overlap
    /// where they go (else they stay): the copy is complete before `start`
    /// points at it.
    fn compact(&mut self) {
        let len = self.len();
        if self.start == 0 || len > self.start {
            return;
        }
        let (s, h) = (DATA + self.start, DATA + self.head);
        self.bytes_mut().copy_within(s..h, DATA);
        // The old copy ends where a terminator now goes.
        self.bytes_mut()[DATA + len..DATA + len + 4].copy_from_slice(&[0; 4]);
        self.set_start(0);
        self.head = len;
    }

    /// Copies the live records into `out` for the writer; the journal keeps
    /// them until [`Journal::release`].
    pub fn take(&mut self, out: &mut Vec<u8>) {
        out.clear();
        let (s, h) = (DATA + self.start, DATA + self.head);
        out.extend_from_slice(&self.bytes()[s..h]);
        self.taken = self.head;
    }

    /// As [`Journal::take`], without the copy: the live records' place in
    /// the mapping. They stay put until [`Journal::release`] (appending
    /// never moves records while some are taken), and the mapping lives as
    /// long as the journal.
    pub fn take_in_place(&mut self) -> (*const u8, usize) {
        self.taken = self.head;
        // SAFETY: within the mapping.
        let p = unsafe { self.ptr.add(DATA + self.start) };
        (p.cast_const(), self.head - self.start)
    }

    /// The sequence number of the last record appended (0: none yet).
    pub fn last_seq(&self) -> u64 {
        self.next_seq - 1
    }

    /// Whether the record `seq` is still live (not dropped, not released).
    pub fn holds(&self, seq: u64) -> bool {
        // The first live record's sequence number, from its header: its
        // checksum (over a whole process table, megabytes) is not
        // recomputed for this; the journal wrote it.
        let first = if self.is_empty() {
            self.next_seq
        } else {
            let h = DATA + self.start;
            u64::from_le_bytes(self.bytes()[h + 8..h + 16].try_into().unwrap_or_default())
        };
        seq >= first && seq < self.next_seq
    }

    /// Whether some live record is above `committed` (not yet written).
    pub fn holds_above(&self, committed: u64) -> bool {
        !self.is_empty() && self.last_seq() > committed
    }

    /// Drops what the last [`Journal::take`] handed out (it is in the
    /// database now), except the last whole process table and what follows
    /// it: the deltas after it apply to it, so a writer that starts over
    /// (a failed write, a restart after a kill) rebuilds the tables from
    /// the journal alone. With `written` false keeps it all for the next
    /// try.
    pub fn release(&mut self, written: bool) {
        if written && self.taken > self.start {
            // Walked by the records' headers (the journal wrote them; their
            // checksums, over megabytes of tables, are not recomputed).
            let mut keep = self.taken;
            let mut at = self.start;
            while at + HEAD <= self.taken {
                let h = &self.bytes()[DATA + at..DATA + at + HEAD];
                let len = u32::from_le_bytes(h[0..4].try_into().unwrap_or_default()) as usize;
                if len == 0 {
                    break;
                }
                if h[16] == Kind::Procs as u8 {
                    keep = at;
                }
                at += HEAD + len;
            }
            self.set_start(keep.min(self.taken));
        }
        self.taken = 0;
        if self.is_empty() && self.start > 0 {
            // Empty: start over at the front (the terminator first, so a
            // kill in between still finds the journal empty).
            self.bytes_mut()[DATA..DATA + 4].copy_from_slice(&[0; 4]);
            self.set_start(0);
            self.head = 0;
        } else {
            // What arrived while the writer wrote goes to the front, so the
            // journal touches only the pages one flush needs.
            self.compact();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn owner() -> Owner {
        Owner {
            store: "/var/lib/quietstat".into(),
            id: 7,
        }
    }

    /// An earlier build's process records (rows of another width) are
    /// read past, not into a table, and the records after them are kept.
    #[test]
    fn an_earlier_builds_process_records_are_passed_over() {
        let mut a = Journal::anonymous(8192, &owner()).unwrap();
        assert!(a.append(Kind::System, 1, b"one"));
        assert!(a.append(Kind::EarlierProcs, 2, &[7u8; 152]));
        assert!(a.append(Kind::EarlierProcsDelta, 3, &[7u8; 40]));
        assert!(a.append(Kind::WaitsProcs, 4, &[7u8; 216]));
        assert!(a.append(Kind::WaitsProcsDelta, 5, &[7u8; 40]));
        assert!(a.append(Kind::System, 6, b"two"));
        let mut out = Vec::new();
        a.take(&mut out);
        let kinds: Vec<Kind> = records(&out).map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::System,
                Kind::EarlierProcs,
                Kind::EarlierProcsDelta,
                Kind::WaitsProcs,
                Kind::WaitsProcsDelta,
                Kind::System
            ]
        );
        let mut chain = crate::procs::Chain::default();
        for r in records(&out) {
            assert!(chain.feed(r.kind, r.seq, r.payload).is_none());
        }
    }

    #[test]
    fn a_journal_others_could_write_or_own_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        std::fs::write(&p, b"").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = Journal::open(&p, 8192, 0, &owner())
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains("mode 666") && e.contains("[store] journal"),
            "{e}"
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(Journal::open(&p, 8192, 0, &owner()).is_ok());
        // Another owner (the suite runs as root, who can give it away).
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: chown of a file this test made.
        let r = unsafe { libc::chown(c.as_ptr(), 65534, 65534) };
        assert_eq!(r, 0, "chown: {}", std::io::Error::last_os_error());
        let e = Journal::open(&p, 8192, 0, &owner())
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("owned by uid 65534"), "{e}");
    }

    #[test]
    fn one_agent_per_journal_and_planted_files_are_refused_without_blocking() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let j = Journal::open(&p, 8192, 0, &owner()).unwrap();
        let e = Journal::open(&p, 8192, 0, &owner()).err().expect("refused");
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock, "{e}");
        drop(j);
        assert!(Journal::open(&p, 8192, 0, &owner()).is_ok());
        // A FIFO or a link where the journal goes: refused, never waited on.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = Journal::open(&fifo, 8192, 0, &owner())
            .err()
            .expect("refused");
        assert!(e.to_string().contains("FIFO"), "{e}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        let e = Journal::open(&link, 8192, 0, &owner())
            .err()
            .expect("refused");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // A directory others may write to (no sticky bit): refused.
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = Journal::open(&open.join("j"), 8192, 0, &owner())
            .err()
            .expect("refused");
        assert!(e.to_string().contains("writable by every user"), "{e}");
        // In memory only: it works the same.
        let mut a = Journal::anonymous(8192, &owner()).unwrap();
        assert!(a.path().is_none());
        assert!(a.append(Kind::System, 1, b"one"));
        let mut out = Vec::new();
        a.take(&mut out);
        assert_eq!(
            records(&out).map(|r| r.payload).collect::<Vec<_>>(),
            [b"one"]
        );
    }

    /// A journal names its store; another store's journal at the path is
    /// moved aside, never mixed; an older build's journal keeps its
    /// records under the new header.
    #[test]
    fn journals_name_their_store_and_older_ones_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let mut j = Journal::open(&p, 8192, 0, &owner()).unwrap();
        assert!(j.append(Kind::System, 1, b"mine"));
        drop(j);
        let snap = Snapshot::read(&p).unwrap();
        assert_eq!(snap.owner, Some(owner()));
        assert_eq!(snap.records().count(), 1);
        let other = Owner {
            store: "/srv/other".into(),
            id: 9,
        };
        let j = Journal::open(&p, 8192, 0, &other).unwrap();
        assert!(j.is_empty());
        let aside = dir.path().join(format!("j.{:016x}", 7));
        assert_eq!(Snapshot::read(&aside).unwrap().records().count(), 1);
        assert_eq!(found(&[dir.path().to_path_buf()]).len(), 2);
        drop(j);

        // An older build's layout: records right after the offset.
        let legacy = dir.path().join("legacy");
        let mut raw = vec![0u8; 8192];
        let mut at = LEGACY_DATA;
        for (seq, payload) in [(4u64, &b"four"[..]), (5, b"five")] {
            let mut b = vec![0u8; HEAD + payload.len()];
            b[8..16].copy_from_slice(&seq.to_le_bytes());
            b[16] = Kind::Exits as u8;
            b[HEAD..].copy_from_slice(payload);
            let crc = crc32fast::hash(&b[8..]);
            b[4..8].copy_from_slice(&crc.to_le_bytes());
            b[0..4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
            raw[at..at + b.len()].copy_from_slice(&b);
            at += b.len();
        }
        std::fs::write(&legacy, &raw).unwrap();
        std::fs::set_permissions(&legacy, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        assert_eq!(Snapshot::read(&legacy).unwrap().records().count(), 2);
        // Seq 4 is in the store already: only 5 is kept.
        let mut j = Journal::open(&legacy, 8192, 4, &owner()).unwrap();
        let mut out = Vec::new();
        j.take(&mut out);
        let seqs: Vec<u64> = records(&out).map(|r| r.seq).collect();
        assert_eq!(seqs, [5]);
    }

    #[test]
    fn records_survive_reopening_and_a_release_drops_only_what_was_taken() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let mut j = Journal::open(&p, 8192, 0, &owner()).unwrap();
        assert!(j.append(Kind::System, 1000, b"one"));
        assert!(j.append(Kind::Exits, 2000, b"two"));
        let mut out = Vec::new();
        j.take(&mut out);
        assert!(j.append(Kind::Exits, 3000, b"three"));
        drop(j);
        // Reopened (as after a kill): all three, in order.
        let mut j = Journal::open(&p, 8192, 0, &owner()).unwrap();
        let mut all = Vec::new();
        j.take(&mut all);
        let got: Vec<_> = records(&all)
            .map(|r| (r.seq, r.kind, r.payload.to_vec()))
            .collect();
        assert_eq!(
            got,
            [
                (1, Kind::System, b"one".to_vec()),
                (2, Kind::Exits, b"two".to_vec()),
                (3, Kind::Exits, b"three".to_vec())
            ]
        );
        j.release(true);
        assert!(j.is_empty());
        assert!(j.append(Kind::System, 4000, b"four"));
        j.take(&mut all);
        assert_eq!(records(&all).next().unwrap().seq, 4);
    }

    #[test]
    fn a_journal_reopened_smaller_keeps_its_size_and_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let mut j = Journal::open(&p, 16384, 0, &owner()).unwrap();
        // More than the smaller size would hold.
        for i in 0..150u64 {
            assert!(j.append(Kind::System, i, &[1; 40]));
        }
        drop(j);
        let mut j = Journal::open(&p, 4096, 0, &owner()).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 16384);
        let mut all = Vec::new();
        j.take(&mut all);
        assert_eq!(records(&all).count(), 150);
        assert_eq!(j.dropped, 0);
    }

    #[test]
    fn a_full_journal_drops_its_oldest_records_and_counts_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(&dir.path().join("j"), 5120, 10, &owner()).unwrap();
        let mut out = Vec::new();
        for i in 0..100u64 {
            j.append(Kind::System, i, &[7; 40]);
        }
        assert!(j.dropped > 0);
        j.take(&mut out);
        let seqs: Vec<u64> = records(&out).map(|r| r.seq).collect();
        // The newest is kept, with those just before it, in order.
        assert_eq!(*seqs.last().unwrap(), 110);
        assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1));
        assert_eq!(j.dropped + seqs.len() as u64, 100);
    }

    #[test]
    fn a_torn_or_flipped_record_ends_the_journal_there() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let mut j = Journal::open(&p, 8192, 0, &owner()).unwrap();
        j.append(Kind::System, 1, b"aaaa");
        j.append(Kind::System, 2, b"bbbb");
        drop(j);
        let mut raw = std::fs::read(&p).unwrap();
        raw[DATA + HEAD + 4 + HEAD + 1] ^= 0xff;
        std::fs::write(&p, &raw).unwrap();
        let mut j = Journal::open(&p, 8192, 0, &owner()).unwrap();
        let mut out = Vec::new();
        j.take(&mut out);
        assert_eq!(records(&out).count(), 1);
        // Appending goes on after the good record.
        j.release(false);
        j.append(Kind::System, 3, b"c");
        j.take(&mut out);
        assert_eq!(records(&out).map(|r| r.seq).collect::<Vec<_>>(), [1, 2]);
    }
}

#[cfg(test)]
mod crash_tests {
    use super::*;

    use super::tests::owner;

    /// A copy of the file after every step (what a kill then would leave)
    /// holds every record not yet released, through releases and the
    /// compactions that move live records to the front.
    #[test]
    fn records_not_yet_released_survive_releases_and_compactions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let mut j = Journal::open(&p, 6144, 0, &owner()).unwrap();
        let mut released = 0u64;
        for round in 0..200u64 {
            j.append(Kind::System, round, &[round as u8; 50]);
            if round % 3 == 0 {
                let (p, n) = j.take_in_place();
                // SAFETY: the taken records stay put until the release.
                let out = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
                let last = records(&out).last().map_or(released, |r| r.seq);
                // One more arrives while the writer writes.
                j.append(Kind::Exits, round, &[1; 20]);
                j.release(true);
                released = last;
            }
            let copy = std::fs::read(&p).unwrap();
            let c = dir.path().join("copy");
            std::fs::write(&c, &copy).unwrap();
            std::fs::set_permissions(&c, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .unwrap();
            let mut back = Journal::open(&c, 6144, 0, &owner()).unwrap();
            let mut got = Vec::new();
            back.take(&mut got);
            let seqs: Vec<u64> = records(&got).map(|r| r.seq).collect();
            let expect: Vec<u64> = (released + 1..j.next_seq).collect();
            assert_eq!(seqs, expect, "round {round}");
        }
        // The journal wrapped (compacted) many times and dropped nothing.
        assert_eq!(j.dropped, 0);
    }
}
