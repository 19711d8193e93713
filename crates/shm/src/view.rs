//! The agent's view files, beside the snapshot: what a local viewer
//! (`quietstat top`, `quietstat ps`) needs that the fixed snapshot does not
//! hold, so that it reads no /proc file of its own.
//!
//! - `<snapshot>.system`: the bytes of the system sources a viewer shows
//!   (CPU, memory, load, pressure, disks, network), as the agent last read
//!   them; the viewer parses them with the agent's own parsers.
//! - `<snapshot>.procs`: the agent's last process table, and the processes
//!   that exited since the table before it.
//! - `<snapshot>.cgroups`: the agent's last read of every cgroup (when its
//!   `cgroups` source is on), written, as the process file, only while
//!   viewers read the process file.
//!
//! The process file (megabytes with tens of thousands of processes) is
//! written only while viewers read it: the agent watches it for opens
//! (inotify), writes each table while one was opened within [`WANT_FOR`],
//! and writes the latest table when a viewer comes after a pause
//! ([`read_live_procs`] wakes it, or waits for its next round).
//!
//! Each file is made once, when the agent starts, and rewritten in place
//! (three `pwrite`s: the sequence number made odd, the data, the sequence
//! made even) only when the agent has read what it holds again: the system
//! file once per read of `/proc/stat`, the process file once per
//! process-table read. A reader reads the header, the body, then the
//! header again, and takes the data only if the sequence was even and did
//! not move: it never uses half of one. No rename, no truncation: on a disk
//! filesystem (ext4 flushes a file renamed over another) a publish never
//! waits for I/O.
//!
//! # Layout, version 1 (little-endian)
//!
//! ```text
//! offset  size  field
//!      0     8  magic       b"QSTATVEW"
//!      8     4  version     1; a reader refuses any other
//!     12     4  kind        1 system, 2 processes, 3 cgroups
//!     16     4  agent_pid
//!     20     4  fields      processes: the fields read (bit i: proctable::Field::ALL[i])
//!     24     8  unix_ns     when the data was read
//!     32     8  mono_ns     the same instant, CLOCK_MONOTONIC
//!     40     8  interval_ns the agent's interval for this data
//!     48     8  count       system, cgroups: bytes of the body; processes: rows
//!     56     4  exits       processes: exit rows after the process rows;
//!                           cgroups: cgroups
//!     60     4  row_words   processes: 8-byte words per process row;
//!                           cgroups: figures per cgroup
//!     64     8  seq         odd while the agent writes
//!     72     8  reserved    0
//!     80     -  body (the file may be longer: what follows is stale)
//! ```
//!
//! A system body is `procfs::kept` entries (`source u8, length u32, bytes`).
//! A cgroup is its id (8 bytes), depth (2), path's length (2), 4 zero
//! bytes, its figures (8 bytes each, `u64::MAX` when absent, in
//! `cgroups::Figure::ALL`'s order), then its path padded with zeros to 8
//! bytes.
//! A process row is [`PROC_WORDS`] words and an exit row [`EXIT_WORDS`]
//! words, in the order [`put_proc`] and [`put_exit`] write them.

use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use procfs::pid::Comm;
use proctable::{Exit, Fields, Proc};

use crate::Error;

pub const VIEW_MAGIC: [u8; 8] = *b"QSTATVEW";
pub const VIEW_VERSION: u32 = 2;
const HEADER: usize = 80;
const SEQ: usize = 64;
const KIND_SYSTEM: u32 = 1;
const KIND_PROCS: u32 = 2;
const KIND_CGROUPS: u32 = 3;
/// Figures per cgroup.
const CGROUP_FIGURES: usize = cgroups::Figure::COUNT;
/// Words per process row.
pub const PROC_WORDS: usize = proctable::layout::VIEW_WORDS;
/// Words per exit row.
pub const EXIT_WORDS: usize = 14;
/// A body larger than this is refused (a table of about two million rows).
const MAX_BODY: u64 = 1 << 29;

/// The system sources a viewer shows, kept by the agent for its view.
pub const VIEW_SOURCES: [procfs::Source; 9] = [
    procfs::Source::Stat,
    procfs::Source::Meminfo,
    procfs::Source::Loadavg,
    procfs::Source::PressureCpu,
    procfs::Source::PressureMemory,
    procfs::Source::PressureIo,
    procfs::Source::PressureIrq,
    procfs::Source::Diskstats,
    procfs::Source::NetDev,
];

/// `<snapshot>.system`.
pub fn system_path(snapshot: &Path) -> PathBuf {
    suffixed(snapshot, ".system")
}

/// `<snapshot>.procs`.
pub fn procs_path(snapshot: &Path) -> PathBuf {
    suffixed(snapshot, ".procs")
}

fn suffixed(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// How long a viewer's opening of the process file keeps it written.
pub const WANT_FOR: std::time::Duration = std::time::Duration::from_secs(60);

/// `<snapshot>.cgroups`.
pub fn cgroups_path(snapshot: &Path) -> PathBuf {
    suffixed(snapshot, ".cgroups")
}

/// What every view file says about itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meta {
    pub agent_pid: u32,
    pub unix_ns: u64,
    pub mono_ns: u64,
    pub interval_ns: u64,
}

/// A process table as the agent published it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcView {
    pub meta: Meta,
    /// The fields the agent read; others hold zero or `None`.
    pub fields: Fields,
    pub procs: Vec<Proc>,
    /// Processes that ended since the table before this one.
    pub exits: Vec<Exit>,
}

/// Writes the view files. A failure to write is returned for the agent to
/// log; the snapshot goes on regardless.
pub struct ViewWriter {
    system: Target,
    procs: Target,
    cgroups: Target,
    /// Opens of the process file (inotify, non-blocking); `None` where
    /// inotify is unavailable: then every table is written.
    opens: Option<std::fs::File>,
    /// When the process file was last seen opened (never, at first: the
    /// first viewer asks for its table).
    opened: Option<std::time::Instant>,
    buf: Vec<u8>,
}

/// One view file, open for writing in place.
struct Target {
    path: PathBuf,
    file: std::fs::File,
    seq: u64,
}

impl Target {
    /// Makes the file anew (a file left by an agent before is removed
    /// first; a link there is never followed).
    fn create(path: PathBuf, mode: u32) -> io::Result<Target> {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)?;
        Ok(Target { path, file, seq: 0 })
    }

    /// Writes a header and its body in place, under the sequence: `fill`
    /// appends to the buffer and hands it to `put` whenever it holds a
    /// chunk, so the agent never holds a whole table's bytes.
    fn write(
        &mut self,
        buf: &mut Vec<u8>,
        fill: impl FnOnce(
            &mut Vec<u8>,
            &mut dyn FnMut(&mut Vec<u8>) -> io::Result<()>,
        ) -> io::Result<()>,
    ) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.seq += 1;
        let odd = self.seq.to_le_bytes();
        let file = &self.file;
        let mut pos = 0u64;
        let r = file.write_all_at(&odd, SEQ as u64).and_then(|()| {
            let mut put = |b: &mut Vec<u8>| -> io::Result<()> {
                if pos == 0 && b.len() >= HEADER {
                    b[SEQ..SEQ + 8].copy_from_slice(&odd);
                }
                file.write_all_at(b, pos)?;
                pos += b.len() as u64;
                b.clear();
                Ok(())
            };
            fill(buf, &mut put)?;
            put(buf)
        });
        // Even again whatever happened: a reader never waits on a failed
        // write (the data it then reads is refused by its own checks).
        self.seq += 1;
        let even = self.file.write_all_at(&self.seq.to_le_bytes(), SEQ as u64);
        r.and(even)
    }
}

/// What the agent writes at a time.
const CHUNK: usize = 64 * 1024;

impl ViewWriter {
    /// Makes the files beside `snapshot`, readable by all (`private`: by
    /// the owner only, for a /proc that hides other users' processes).
    pub fn new(snapshot: &Path, private: bool) -> io::Result<ViewWriter> {
        let mode = if private { 0o600 } else { 0o644 };
        let procs = Target::create(procs_path(snapshot), mode)?;
        Ok(ViewWriter {
            system: Target::create(system_path(snapshot), mode)?,
            cgroups: Target::create(cgroups_path(snapshot), mode)?,
            opens: watch_opens(&procs.path),
            procs,
            opened: None,
            buf: Vec::new(),
        })
    }

    /// Whether a viewer opened the process file within `within`.
    pub fn wanted_within(&mut self, within: std::time::Duration) -> bool {
        use std::io::Read;
        let Some(f) = self.opens.as_mut() else {
            return true;
        };
        let mut events = [0u8; 4096];
        let mut any = false;
        // Drained each time: a full queue (a burst of opens) is an event
        // too.
        while let Ok(n) = f.read(&mut events) {
            if n == 0 {
                break;
            }
            any = true;
        }
        if any {
            self.opened = Some(std::time::Instant::now());
        }
        self.opened.is_some_and(|t| t.elapsed() <= within)
    }

    pub fn system_path(&self) -> &Path {
        &self.system.path
    }

    pub fn procs_path(&self) -> &Path {
        &self.procs.path
    }

    /// Publishes the latest bytes of the view's sources (`procfs::kept`
    /// entries).
    pub fn publish_system(&mut self, meta: &Meta, kept: &[u8]) -> io::Result<()> {
        self.buf.clear();
        header(&mut self.buf, KIND_SYSTEM, meta, 0, kept.len() as u64, 0, 0);
        self.buf.extend_from_slice(kept);
        self.system.write(&mut self.buf, |_, _| Ok(()))
    }

    /// Publishes a process table and the exits since the one before.
    pub fn publish_procs(
        &mut self,
        meta: &Meta,
        fields: Fields,
        procs: &[Proc],
        exits: &[Exit],
    ) -> io::Result<()> {
        self.buf.clear();
        header(
            &mut self.buf,
            KIND_PROCS,
            meta,
            fields.bits(),
            procs.len() as u64,
            exits.len() as u32,
            PROC_WORDS as u32,
        );
        self.procs.write(&mut self.buf, |buf, put| {
            for p in procs {
                put_proc(buf, p);
                if buf.len() >= CHUNK {
                    put(buf)?;
                }
            }
            for e in exits {
                put_exit(buf, e);
                if buf.len() >= CHUNK {
                    put(buf)?;
                }
            }
            Ok(())
        })
    }

    /// Publishes a read of every cgroup.
    pub fn publish_cgroups(&mut self, meta: &Meta, sample: &cgroups::Sample) -> io::Result<()> {
        let body: usize = sample.cgroups.iter().map(cgroup_bytes).sum();
        self.buf.clear();
        header(
            &mut self.buf,
            KIND_CGROUPS,
            meta,
            0,
            body as u64,
            sample.cgroups.len() as u32,
            CGROUP_FIGURES as u32,
        );
        self.cgroups.write(&mut self.buf, |buf, put| {
            for c in &sample.cgroups {
                put_cgroup(buf, c);
                if buf.len() >= CHUNK {
                    put(buf)?;
                }
            }
            Ok(())
        })
    }

    /// Removes the files (the agent is stopping: a viewer then finds none,
    /// instead of stale data).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.system.path);
        let _ = std::fs::remove_file(&self.procs.path);
        let _ = std::fs::remove_file(&self.cgroups.path);
    }
}

/// An inotify descriptor watching `path` for opens, non-blocking.
fn watch_opens(path: &Path) -> Option<std::fs::File> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: plain system calls; the descriptor is owned by the File.
    unsafe {
        let fd = libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let f = std::fs::File::from_raw_fd(fd);
        (libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_OPEN) >= 0).then_some(f)
    }
}

fn header(
    out: &mut Vec<u8>,
    kind: u32,
    m: &Meta,
    fields: u32,
    count: u64,
    exits: u32,
    row_words: u32,
) {
    out.extend_from_slice(&VIEW_MAGIC);
    for v in [VIEW_VERSION, kind, m.agent_pid, fields] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [m.unix_ns, m.mono_ns, m.interval_ns, count] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&exits.to_le_bytes());
    out.extend_from_slice(&row_words.to_le_bytes());
    // The sequence (set when written) and a reserved word.
    out.extend_from_slice(&[0; 16]);
}

fn comm_words(c: &Comm) -> [u64; 3] {
    let b = c.as_bytes();
    let mut raw = [0u8; 16];
    raw[..b.len().min(16)].copy_from_slice(&b[..b.len().min(16)]);
    [
        b.len() as u64,
        u64::from_le_bytes(raw[..8].try_into().unwrap_or_default()),
        u64::from_le_bytes(raw[8..].try_into().unwrap_or_default()),
    ]
}

fn comm_from(w: &[u64]) -> Comm {
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&w[1].to_le_bytes());
    raw[8..].copy_from_slice(&w[2].to_le_bytes());
    let len = (w[0] as usize).min(16);
    Comm::new(&raw[..len])
}

/// One process row: [`PROC_WORDS`] words, laid out by
/// [`proctable::layout`].
pub fn put_proc(out: &mut Vec<u8>, p: &Proc) {
    for w in proctable::layout::put_view(p) {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// The process row [`put_proc`] wrote, from its words.
pub fn get_proc(w: &[u64]) -> Proc {
    proctable::layout::get_view(w)
}

/// One exit row: [`EXIT_WORDS`] words.
pub fn put_exit(out: &mut Vec<u8>, e: &Exit) {
    let [clen, c0, c1] = comm_words(&e.comm);
    let words: [u64; EXIT_WORDS] = [
        u64::from(e.pid),
        u64::from(e.ppid),
        e.start_ns,
        e.start_ticks,
        e.exit_ns,
        e.utime_ns,
        e.stime_ns,
        e.minflt,
        e.majflt,
        e.maxrss_bytes,
        i64::from(e.exit_status) as u64,
        clen,
        c0,
        c1,
    ];
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

pub fn get_exit(w: &[u64]) -> Exit {
    Exit {
        pid: w[0] as u32,
        ppid: w[1] as u32,
        comm: comm_from(&w[11..14]),
        start_ns: w[2],
        start_ticks: w[3],
        exit_ns: w[4],
        utime_ns: w[5],
        stime_ns: w[6],
        minflt: w[7],
        majflt: w[8],
        maxrss_bytes: w[9],
        exit_status: w[10] as i64 as i32,
    }
}

/// The bytes [`put_cgroup`] writes for `c`.
fn cgroup_bytes(c: &cgroups::Cgroup) -> usize {
    16 + 8 * CGROUP_FIGURES + c.path.len().next_multiple_of(8)
}

/// One cgroup (see the module's notes).
fn put_cgroup(out: &mut Vec<u8>, c: &cgroups::Cgroup) {
    out.extend_from_slice(&c.id.to_le_bytes());
    out.extend_from_slice(&c.depth.to_le_bytes());
    // Paths are at most 32 names of at most 255 bytes.
    out.extend_from_slice(&(c.path.len().min(u16::MAX as usize) as u16).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    for w in c.figures.words() {
        out.extend_from_slice(&w.to_le_bytes());
    }
    let path = &c.path.as_bytes()[..c.path.len().min(u16::MAX as usize)];
    out.extend_from_slice(path);
    out.resize(out.len() + (path.len().next_multiple_of(8) - path.len()), 0);
}

/// The cgroups of a cgroup view's body; what is wrong with it otherwise.
fn get_cgroups(mut b: &[u8], count: u32, out: &mut Vec<cgroups::Cgroup>) -> Result<(), String> {
    use std::sync::Arc;
    let fixed = 16 + 8 * CGROUP_FIGURES;
    for i in 0..count {
        let short = || format!("cgroup {i} cut short");
        let head = b.get(..fixed).ok_or_else(short)?;
        let id = u64::from_le_bytes(head[..8].try_into().unwrap_or_default());
        let depth = u16::from_le_bytes([head[8], head[9]]);
        let len = u16::from_le_bytes([head[10], head[11]]) as usize;
        let mut words = [0u64; CGROUP_FIGURES];
        for (d, s) in words.iter_mut().zip(self::words(&head[16..])) {
            *d = s;
        }
        let padded = len.next_multiple_of(8);
        let path = b.get(fixed..fixed + len).ok_or_else(short)?;
        let path = std::str::from_utf8(path).map_err(|_| format!("cgroup {i}: path not UTF-8"))?;
        out.push(cgroups::Cgroup {
            path: Arc::from(path),
            id,
            depth,
            figures: cgroups::Figures::from_words(words),
        });
        b = b.get(fixed + padded..).ok_or_else(short)?;
    }
    if !b.is_empty() {
        return Err(format!("{} bytes after the last cgroup", b.len()));
    }
    Ok(())
}

/// A read of every cgroup as the agent published it.
#[derive(Debug, Clone, Default)]
pub struct CgroupView {
    pub meta: Meta,
    pub cgroups: Vec<cgroups::Cgroup>,
}

/// Reads `<snapshot>.cgroups`, consistent (see the module's notes).
pub fn read_cgroups(path: &Path) -> Result<CgroupView, Error> {
    let bytes = read_file(path)?;
    let p = parse(path, &bytes, KIND_CGROUPS)?;
    let mut view = CgroupView {
        meta: p.meta,
        cgroups: Vec::with_capacity((p.exits as usize).min(p.body.len() / 16)),
    };
    get_cgroups(p.body, p.exits, &mut view.cgroups).map_err(|what| not_view(path, what))?;
    Ok(view)
}

/// The time (`mono_ns`) of the read in a cgroup view file, from its
/// header alone; `None` when the agent has published none yet (it reads
/// no cgroups, or no viewer asked).
pub fn cgroups_mono_ns(path: &Path) -> Result<Option<u64>, Error> {
    published_mono_ns(path, KIND_CGROUPS)
}

/// The time (`mono_ns`) of the data in a `kind` view file, from its header
/// alone; `None` while the file is empty (made at the agent's start,
/// nothing published into it yet).
fn published_mono_ns(path: &Path, kind: u32) -> Result<Option<u64>, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    if f.metadata().map_err(io)?.len() == 0 {
        return Ok(None);
    }
    let head = even_header(&f, path, std::time::Instant::now(), &mut 0)?;
    Ok(Some(parse_header(path, &head, kind)?.meta.mono_ns))
}

struct Parsed<'a> {
    meta: Meta,
    fields: u32,
    count: u64,
    exits: u32,
    row_words: u32,
    body: &'a [u8],
}

fn parse<'a>(path: &Path, bytes: &'a [u8], kind: u32) -> Result<Parsed<'a>, Error> {
    let p = parse_header(path, bytes, kind)?;
    let want = check_body(path, &p, kind)?;
    if want > p.body.len() as u64 {
        return Err(short_body(path, p.body.len() as u64, want));
    }
    Ok(Parsed {
        body: &p.body[..want as usize],
        ..p
    })
}

/// The body's length the header of a `kind` file gives, checked: rows of
/// the width this reader knows, and no larger than a reader takes.
fn check_body(path: &Path, p: &Parsed<'_>, kind: u32) -> Result<u64, Error> {
    let width = match kind {
        KIND_PROCS => Some((PROC_WORDS, "words a row")),
        KIND_CGROUPS => Some((CGROUP_FIGURES, "figures a cgroup")),
        _ => None,
    };
    if let Some((known, what)) = width
        && p.row_words as usize != known
    {
        return Err(not_view(
            path,
            format!("{} {what}; this reader knows {known}", p.row_words),
        ));
    }
    let want = body_bytes(kind, p.count, p.exits);
    if want > MAX_BODY {
        return Err(not_view(
            path,
            format!("header says a body of {want} bytes, more than {MAX_BODY}"),
        ));
    }
    Ok(want)
}

fn short_body(path: &Path, got: u64, want: u64) -> Error {
    not_view(path, format!("body of {got} bytes, header says {want}"))
}

fn not_view(path: &Path, what: String) -> Error {
    Error::NotSnapshot {
        path: path.to_path_buf(),
        what,
    }
}

/// The header of `bytes` checked (magic, version, kind); the body is all
/// that follows it, unchecked.
fn parse_header<'a>(path: &Path, bytes: &'a [u8], kind: u32) -> Result<Parsed<'a>, Error> {
    let bad = |what: String| not_view(path, what);
    if bytes.len() < HEADER {
        return Err(bad(format!(
            "{} bytes, shorter than the header",
            bytes.len()
        )));
    }
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap_or_default());
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap_or_default());
    if bytes[..8] != VIEW_MAGIC {
        return Err(bad(format!("magic {:?}", &bytes[..8])));
    }
    if u32_at(8) != VIEW_VERSION {
        return Err(Error::ViewVersion {
            path: path.to_path_buf(),
            found: u32_at(8),
        });
    }
    if u32_at(12) != kind {
        return Err(bad(format!("kind {}, expected {kind}", u32_at(12))));
    }
    Ok(Parsed {
        meta: Meta {
            agent_pid: u32_at(16),
            unix_ns: u64_at(24),
            mono_ns: u64_at(32),
            interval_ns: u64_at(40),
        },
        fields: u32_at(20),
        count: u64_at(48),
        exits: u32_at(56),
        row_words: u32_at(60),
        body: &bytes[HEADER..],
    })
}

/// How long a reader waits for a file being rewritten before it gives
/// up: a write takes microseconds, unless the agent is descheduled (or
/// stopped) in the middle of one.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Waits between tries: yields first, then sleeps a millisecond; false once
/// `PATIENCE` has passed since `start`.
fn wait_turn(start: std::time::Instant, tries: &mut u32) -> bool {
    *tries += 1;
    if *tries < 100 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    start.elapsed() < PATIENCE
}

fn seq_of(h: &[u8]) -> u64 {
    u64::from_le_bytes(h[SEQ..SEQ + 8].try_into().unwrap_or_default())
}

/// The header of a view file once its sequence is even (the agent is not
/// in the middle of a write); waits up to `PATIENCE` from `start`.
fn even_header(
    f: &std::fs::File,
    path: &Path,
    start: std::time::Instant,
    tries: &mut u32,
) -> Result<[u8; HEADER], Error> {
    let mut head = [0u8; HEADER];
    loop {
        let n = read_at_most(f, &mut head, 0).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if n < HEADER {
            return Err(not_view(
                path,
                format!("{n} bytes, shorter than the header"),
            ));
        }
        if seq_of(&head).is_multiple_of(2) {
            return Ok(head);
        }
        if !wait_turn(start, tries) {
            return Err(Error::Torn);
        }
    }
}

/// The header and body of a view file, consistent: read under its
/// sequence number (see the module's notes).
fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    use std::os::unix::fs::FileExt;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let (start, mut tries) = (std::time::Instant::now(), 0);
    loop {
        let head = even_header(&f, path, start, &mut tries)?;
        let s1 = seq_of(&head);
        let kind = u32::from_le_bytes(head[12..16].try_into().unwrap_or_default());
        let count = u64::from_le_bytes(head[48..56].try_into().unwrap_or_default());
        let exits = u32::from_le_bytes(head[56..60].try_into().unwrap_or_default());
        // Unchecked here (`parse` checks): past the bound, one byte more
        // than allowed is read, for `parse` to refuse.
        let len = body_bytes(kind, count, exits).min(MAX_BODY + 1) as usize;
        let mut all = vec![0u8; HEADER + len];
        let n = read_at_most(&f, &mut all, 0).map_err(io)?;
        all.truncate(n);
        let mut again = [0u8; 8];
        f.read_exact_at(&mut again, SEQ as u64).map_err(io)?;
        if u64::from_le_bytes(again) == s1 && all.len() >= HEADER && seq_of(&all) == s1 {
            return Ok(all);
        }
        if !wait_turn(start, &mut tries) {
            return Err(Error::Torn);
        }
    }
}

/// Reads into `buf` from `offset` until it is full or the file ends.
fn read_at_most(f: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The body's length in bytes for a header's kind and counts.
fn body_bytes(kind: u32, count: u64, exits: u32) -> u64 {
    if kind == KIND_SYSTEM || kind == KIND_CGROUPS {
        count
    } else {
        count
            .saturating_mul(8 * PROC_WORDS as u64)
            .saturating_add(u64::from(exits) * 8 * EXIT_WORDS as u64)
    }
}

fn words(b: &[u8]) -> impl Iterator<Item = u64> + '_ {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
}

/// How long [`read_live_procs`] waits for a table after asking for one.
const ASK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The process table of the live agent whose snapshot is `snapshot`, no
/// older than the agent's process interval. Reading the file tells the
/// agent a viewer is looking; when the table there is older (no viewer
/// was), this wakes the agent (or, without the right to, waits for its
/// next round) and waits for the table it then writes, two seconds at
/// most. Refused when the agent stopped or died, or when the file is not
/// its.
pub fn read_live_procs(snapshot: &Path) -> Result<ProcView, Error> {
    let reader = crate::ShmReader::open(snapshot)?;
    reader.check_live()?;
    let path = procs_path(snapshot);
    let fresh = |v: &ProcView| {
        let age = sys::mono_ns().saturating_sub(v.meta.mono_ns);
        age <= v.meta.interval_ns.saturating_add(1_000_000_000)
    };
    let start = std::time::Instant::now();
    let v = loop {
        let seen = reader.published_count();
        let v = read_procs(&path);
        match &v {
            Ok(t) if fresh(t) => break v,
            _ if start.elapsed() >= ASK_WAIT => break v,
            _ => {}
        }
        // Woken, the agent writes its latest table (and without the right
        // to wake it, the next is written at the agent's next read).
        reader.wake();
        reader.wait_published(seen, std::time::Duration::from_millis(100));
        reader.check_live()?;
    }?;
    if v.meta.agent_pid != reader.agent_pid() {
        return Err(Error::NotFromAgent {
            path,
            found: v.meta.agent_pid,
            running: reader.agent_pid(),
        });
    }
    Ok(v)
}

/// Why the agent's table does not serve a viewer's request
/// ([`read_agent_procs`]).
#[derive(Debug)]
pub enum Refusal {
    /// No live agent's table to read.
    View(Error),
    /// The agent does not read these fields (named); it reads `reads`.
    Lacks {
        missing: Vec<&'static str>,
        reads: Vec<&'static str>,
    },
    /// The table is `age` old, older than the `max` asked.
    TooOld {
        age: std::time::Duration,
        max: std::time::Duration,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::View(e) => write!(f, "{e}"),
            Refusal::Lacks { missing, reads } => write!(
                f,
                "the agent's table lacks {} (it reads {})",
                missing.join(","),
                reads.join(",")
            ),
            Refusal::TooOld { age, max } => write!(
                f,
                "the agent's table is {:.1}s old, older than the {} ms asked",
                age.as_secs_f64(),
                max.as_millis()
            ),
        }
    }
}

/// The live agent's latest process table ([`read_live_procs`]) when it
/// holds every field of `fields` and, with `max_age`, is no older: what
/// `quietstat ps` and the library serve from the agent.
pub fn read_agent_procs(
    snapshot: &Path,
    fields: Fields,
    max_age: Option<std::time::Duration>,
) -> Result<ProcView, Refusal> {
    let view = read_live_procs(snapshot).map_err(Refusal::View)?;
    let missing: Vec<&str> = fields
        .iter()
        .filter(|&f| f != proctable::Field::Pid && !view.fields.has(f))
        .map(proctable::Field::name)
        .collect();
    if !missing.is_empty() {
        return Err(Refusal::Lacks {
            missing,
            reads: view.fields.iter().map(proctable::Field::name).collect(),
        });
    }
    let age = std::time::Duration::from_nanos(sys::mono_ns().saturating_sub(view.meta.mono_ns));
    if let Some(max) = max_age
        && age > max
    {
        return Err(Refusal::TooOld { age, max });
    }
    Ok(view)
}

/// A library caller's wish to be served from the agent's table: where
/// the agent's snapshot is, and how old its table may be.
#[derive(Debug, Clone)]
pub struct AgentTable {
    pub snapshot: PathBuf,
    /// `None`: the agent's own rule ([`read_live_procs`]).
    pub max_age: Option<std::time::Duration>,
}

impl AgentTable {
    /// As a caller names it: `path` "" for [`crate::DEFAULT_PATH`],
    /// `max_age_ms` 0 for the agent's own rule.
    pub fn new(path: &str, max_age_ms: u64) -> AgentTable {
        let path = if path.is_empty() {
            crate::DEFAULT_PATH
        } else {
            path
        };
        AgentTable {
            snapshot: PathBuf::from(path),
            max_age: (max_age_ms > 0).then(|| std::time::Duration::from_millis(max_age_ms)),
        }
    }

    /// The rows of the agent's table ([`read_agent_procs`]) whose PID is
    /// in `pids` (sorted, as `proctable::pid_set` gives them; `None`:
    /// every row).
    pub fn rows(&self, fields: Fields, pids: Option<&[u32]>) -> Result<Vec<Proc>, Refusal> {
        let mut rows = read_agent_procs(&self.snapshot, fields, self.max_age)?.procs;
        if let Some(pids) = pids {
            rows.retain(|p| pids.binary_search(&p.pid).is_ok());
        }
        Ok(rows)
    }
}

/// The time (`mono_ns`) of the table in a process view file, from its
/// header alone: a viewer reads the rest only when it is new.
pub fn procs_mono_ns(path: &Path) -> Result<u64, Error> {
    published_mono_ns(path, KIND_PROCS)?
        .ok_or_else(|| not_view(path, "0 bytes, shorter than the header".into()))
}

/// Rows read and decoded at a time: a table of tens of thousands of rows
/// is decoded as it is read, not held as bytes whole.
const CHUNK_ROWS: usize = 1024;

/// Reads `<snapshot>.procs`, consistent (see the module's notes): once
/// with the rows decoded as they are read, then, if the agent wrote
/// meanwhile (or was writing), as the system view is read (the body at
/// once, decoded after the check): a reader that decodes slower than the
/// agent rewrites still gets a table.
pub fn read_procs(path: &Path) -> Result<ProcView, Error> {
    if let Some(v) = read_procs_streamed(path)? {
        return Ok(v);
    }
    let bytes = read_file(path)?;
    let p = parse(path, &bytes, KIND_PROCS)?;
    let mut view = ProcView {
        meta: p.meta,
        fields: Fields::from_bits(p.fields),
        procs: Vec::with_capacity(p.count as usize),
        exits: Vec::with_capacity(p.exits as usize),
    };
    decode_rows(p.body, p.count as usize, &mut view);
    Ok(view)
}

/// One read of a process view, decoded [`CHUNK_ROWS`] rows at a time;
/// `None` when the file was being written, or was written meanwhile.
fn read_procs_streamed(path: &Path) -> Result<Option<ProcView>, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut head = [0u8; HEADER];
    let n = read_at_most(&f, &mut head, 0).map_err(io)?;
    if n < HEADER || !seq_of(&head).is_multiple_of(2) {
        return Ok(None);
    }
    let p = parse_header(path, &head, KIND_PROCS)?;
    let want = check_body(path, &p, KIND_PROCS)?;
    let rows = p.count as usize;
    let mut view = ProcView {
        meta: p.meta,
        fields: Fields::from_bits(p.fields),
        procs: Vec::with_capacity(rows),
        exits: Vec::with_capacity(p.exits as usize),
    };
    // (bytes, of which rows) read at a time: the rows, then the exits.
    let mut chunks = vec![(CHUNK_ROWS * PROC_WORDS * 8, CHUNK_ROWS); rows / CHUNK_ROWS];
    let tail = rows % CHUNK_ROWS;
    chunks.push((tail * PROC_WORDS * 8, tail));
    chunks.push((p.exits as usize * EXIT_WORDS * 8, 0));
    let (mut buf, mut off, mut short) = (Vec::new(), HEADER, None);
    for (len, of_rows) in chunks {
        buf.resize(len, 0);
        let n = read_at_most(&f, &mut buf, off as u64).map_err(io)?;
        if n < len {
            short = Some(off - HEADER + n);
            break;
        }
        off += n;
        decode_rows(&buf, of_rows, &mut view);
    }
    let mut again = [0u8; 8];
    read_at_most(&f, &mut again, SEQ as u64).map_err(io)?;
    if u64::from_le_bytes(again) != seq_of(&head) {
        return Ok(None);
    }
    match short {
        Some(got) => Err(short_body(path, got as u64, want)),
        None => Ok(Some(view)),
    }
}

/// Decodes `rows` process rows from `b`, then exit rows from the rest.
fn decode_rows(b: &[u8], rows: usize, view: &mut ProcView) {
    let (procs, exits) = b.split_at((rows * PROC_WORDS * 8).min(b.len()));
    view.procs
        .extend(procs.chunks_exact(PROC_WORDS * 8).map(proc_of));
    view.exits
        .extend(exits.chunks_exact(EXIT_WORDS * 8).map(exit_of));
}

/// A process row's bytes decoded.
fn proc_of(b: &[u8]) -> Proc {
    let mut w = [0u64; PROC_WORDS];
    for (d, s) in w.iter_mut().zip(words(b)) {
        *d = s;
    }
    get_proc(&w)
}

/// An exit row's bytes decoded.
fn exit_of(b: &[u8]) -> Exit {
    let mut w = [0u64; EXIT_WORDS];
    for (d, s) in w.iter_mut().zip(words(b)) {
        *d = s;
    }
    get_exit(&w)
}

/// Reads `<snapshot>.system` into `out` (only the view's sources are set;
/// a source whose bytes do not parse is marked failed, as a live read
/// would be).
pub fn read_system(path: &Path, out: &mut procfs::SystemSample) -> Result<Meta, Error> {
    let bytes = read_file(path)?;
    decode_system(path, &bytes, out)
}

pub fn decode_system(
    path: &Path,
    bytes: &[u8],
    out: &mut procfs::SystemSample,
) -> Result<Meta, Error> {
    let p = parse(path, bytes, KIND_SYSTEM)?;
    for s in &mut out.status {
        *s = procfs::SourceStatus::NotRead;
    }
    for (src, b) in procfs::kept::entries(p.body) {
        out.parse_kept(src, b);
    }
    out.unix_ns = p.meta.unix_ns;
    Ok(p.meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use procfs::pid::{CtxSwitches, PidIo};

    fn proc_row(i: u32) -> Proc {
        Proc {
            pid: i,
            tgid: i,
            ppid: 1,
            comm: Comm::new(format!("task-{i}").as_bytes()),
            state: 'S',
            start_ns: 5_000_000 * u64::from(i),
            start_ticks: u64::from(i) / 2,
            utime_ns: 10 * u64::from(i),
            stime_ns: 3,
            minflt: 7,
            majflt: 1,
            num_threads: 4,
            rss_bytes: 4096 * u64::from(i),
            vsize_bytes: 1 << 30,
            nice: -5,
            priority: -51,
            policy: 1,
            rt_priority: 50,
            cpu: 1,
            cgroup_id: i.is_multiple_of(2).then_some(1234),
            io: i.is_multiple_of(3).then_some(PidIo {
                rchar: 1,
                wchar: 2,
                syscr: 3,
                syscw: 4,
                read_bytes: 5,
                write_bytes: 6,
                cancelled_write_bytes: 7,
            }),
            ctxsw: Some(CtxSwitches {
                voluntary: 9,
                involuntary: 8,
            }),
            oom_score_adj: i.is_multiple_of(5).then_some(-1000),
            uid: (!i.is_multiple_of(5)).then_some(1000),
            exec: 77,
        }
    }

    #[test]
    fn a_published_table_reads_back_row_for_row() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let procs: Vec<Proc> = (1..50).map(proc_row).collect();
        let exits = vec![Exit {
            pid: 99,
            ppid: 1,
            comm: Comm::new(b"gone-with-a-long"),
            start_ns: 1,
            start_ticks: 2,
            exit_ns: 3,
            utime_ns: 4,
            stime_ns: 5,
            minflt: 6,
            majflt: 7,
            maxrss_bytes: 8,
            exit_status: 9,
        }];
        let meta = Meta {
            agent_pid: 42,
            unix_ns: 1,
            mono_ns: 2,
            interval_ns: 5_000_000_000,
        };
        let fields = Fields::stat().with(proctable::Field::Uid);
        w.publish_procs(&meta, fields, &procs, &exits).unwrap();
        let v = read_procs(&procs_path(&snap)).unwrap();
        assert_eq!(v.meta, meta);
        assert_eq!(procs_mono_ns(&procs_path(&snap)).unwrap(), meta.mono_ns);
        assert_eq!(v.fields, fields);
        assert_eq!(v.procs, procs);
        assert_eq!(v.exits, exits);
        // Rewritten in place: the new, shorter table replaces the old.
        w.publish_procs(&meta, fields, &procs[..3], &[]).unwrap();
        assert_eq!(read_procs(&procs_path(&snap)).unwrap().procs, procs[..3]);
        // A file left by an agent before is replaced, not written into.
        drop(w);
        let w = ViewWriter::new(&snap, false).unwrap();
        assert_eq!(std::fs::metadata(procs_path(&snap)).unwrap().len(), 0);
        w.remove();
        assert!(!procs_path(&snap).exists());
    }

    fn cgroup_rows() -> Vec<cgroups::Cgroup> {
        (0..40u64)
            .map(|i| {
                let mut figures = cgroups::Figures::default();
                figures.set(cgroups::Figure::CpuUsageNs, i * 1000);
                if i % 3 == 0 {
                    figures.set(cgroups::Figure::MemoryBytes, i << 20);
                }
                // Paths of every length modulo 8, and the root.
                let path = match i {
                    0 => "/".to_string(),
                    _ => format!("/s{}.slice/{}", i % 4, "x".repeat(i as usize)),
                };
                cgroups::Cgroup {
                    path: path.into(),
                    id: 100 + i,
                    depth: if i == 0 { 0 } else { 2 },
                    figures,
                }
            })
            .collect()
    }

    #[test]
    fn published_cgroups_read_back_exactly_and_bad_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let path = cgroups_path(&snap);
        // Made empty: nothing published yet.
        assert_eq!(cgroups_mono_ns(&path).unwrap(), None);
        let sample = cgroups::Sample {
            cgroups: cgroup_rows(),
            ..cgroups::Sample::default()
        };
        let meta = Meta {
            agent_pid: 7,
            unix_ns: 11,
            mono_ns: 13,
            interval_ns: 10_000_000_000,
        };
        w.publish_cgroups(&meta, &sample).unwrap();
        let v = read_cgroups(&path).unwrap();
        assert_eq!(v.meta, meta);
        assert_eq!(v.cgroups, sample.cgroups);
        assert_eq!(cgroups_mono_ns(&path).unwrap(), Some(13));
        // Every cut of the file is refused, never misread.
        let bytes = std::fs::read(&path).unwrap();
        for cut in [0, HEADER - 1, HEADER, HEADER + 15, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            assert!(read_cgroups(&path).is_err(), "cut at {cut}");
        }
        // A count larger than the body holds; a figure count not ours.
        let mut bad = bytes.clone();
        bad[56..60].copy_from_slice(&41u32.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = read_cgroups(&path).unwrap_err().to_string();
        assert!(e.contains("cgroup 40 cut short"), "{e}");
        let mut bad = bytes.clone();
        bad[60..64].copy_from_slice(&3u32.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = read_cgroups(&path).unwrap_err().to_string();
        assert!(e.contains("3 figures a cgroup"), "{e}");
        // Fewer cgroups than the body holds.
        let mut bad = bytes;
        bad[56..60].copy_from_slice(&39u32.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = read_cgroups(&path).unwrap_err().to_string();
        assert!(e.contains("after the last cgroup"), "{e}");
        w.remove();
        assert!(!path.exists());
    }

    #[test]
    fn concurrent_reads_never_see_half_a_table() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let table = |g: u64| -> Vec<Proc> {
            // Tables of changing length, every row marked with its generation.
            (0..(50 + (g % 7) * 40) as u32)
                .map(|i| Proc {
                    pid: i + 1,
                    utime_ns: g,
                    ..proc_row(i + 1)
                })
                .collect()
        };
        w.publish_procs(&Meta::default(), Fields::all(), &table(0), &[])
            .unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let writer = std::thread::spawn(move || {
            let mut g = 1;
            while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                let meta = Meta {
                    mono_ns: g,
                    ..Meta::default()
                };
                w.publish_procs(&meta, Fields::all(), &table(g), &[])
                    .unwrap();
                g += 1;
            }
            g
        });
        let path = procs_path(&snap);
        let mut seen = std::collections::BTreeSet::new();
        let start = std::time::Instant::now();
        // Until twenty tables were seen (a starved writer makes it longer).
        while seen.len() < 20 && start.elapsed() < std::time::Duration::from_secs(60) {
            let v = read_procs(&path).unwrap();
            let g = v.meta.mono_ns;
            assert_eq!(v.procs.len() as u64, 50 + (g % 7) * 40, "generation {g}");
            assert!(
                v.procs.iter().all(|p| p.utime_ns == g),
                "generation {g} mixed"
            );
            seen.insert(g);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let written = writer.join().unwrap();
        assert!(seen.len() >= 20, "{written} written, {} seen", seen.len());
    }

    #[test]
    fn system_bytes_parse_as_a_live_read_would() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let mut kept = Vec::new();
        procfs::kept::append(
            &mut kept,
            procfs::Source::Loadavg,
            b"0.50 1.00 2.00 1/99 123\n",
        );
        procfs::kept::append(&mut kept, procfs::Source::Meminfo, b"bad\n");
        w.publish_system(&Meta::default(), &kept).unwrap();
        let mut s = procfs::SystemSample::default();
        read_system(&system_path(&snap), &mut s).unwrap();
        assert!(s.ok(procfs::Source::Loadavg));
        assert!(matches!(
            s.status[procfs::Source::Meminfo as usize],
            procfs::SourceStatus::Failed(_)
        ));
        assert!(!s.ok(procfs::Source::Stat));
    }

    #[test]
    fn damaged_files_are_refused_by_name_never_misread() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snapshot");
        let mut w = ViewWriter::new(&snap, false).unwrap();
        let procs: Vec<Proc> = (1..4).map(proc_row).collect();
        w.publish_procs(&Meta::default(), Fields::all(), &procs, &[])
            .unwrap();
        let good = std::fs::read(procs_path(&snap)).unwrap();
        let p = dir.path().join("damaged.procs");
        let read = |b: &[u8]| {
            std::fs::write(&p, b).unwrap();
            read_procs(&p)
        };
        // Every truncation, and a flipped version and kind.
        for n in 0..good.len() {
            let e = read(&good[..n]).unwrap_err().to_string();
            assert!(e.contains("damaged.procs"), "{n}: {e}");
        }
        assert_eq!(read(&good).unwrap().procs, procs);
        let mut v = good.clone();
        v[8] = 9;
        assert!(read(&v).unwrap_err().to_string().contains("version 9"));
        let mut k = good.clone();
        k[12] = 1;
        assert!(read(&k).is_err());
        assert!(decode_system(&p, &good, &mut procfs::SystemSample::default()).is_err());
        // A row width this reader does not know.
        let mut r = good.clone();
        r[60] += 1;
        assert!(read(&r).unwrap_err().to_string().contains("words a row"));
        let mut c = good;
        c[48..56].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(read(&c).unwrap_err().to_string().contains("more than"));
    }
}
