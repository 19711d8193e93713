//! A viewer's side: a file's header and body read until the sequence
//! holds still, checked against the layout, refused by name when damaged.

use super::*;

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
    get_cgroups(path, p.body, p.exits, &mut view.cgroups)?;
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
pub(super) fn published_mono_ns(path: &Path, kind: u32) -> Result<Option<u64>, Error> {
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

pub(super) struct Parsed<'a> {
    pub(super) meta: Meta,
    pub(super) fields: u32,
    pub(super) count: u64,
    pub(super) exits: u32,
    pub(super) row_words: u32,
    pub(super) body: &'a [u8],
}

pub(super) fn parse<'a>(path: &Path, bytes: &'a [u8], kind: u32) -> Result<Parsed<'a>, Error> {
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
pub(super) fn check_body(path: &Path, p: &Parsed<'_>, kind: u32) -> Result<u64, Error> {
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

pub(super) fn short_body(path: &Path, got: u64, want: u64) -> Error {
    not_view(path, format!("body of {got} bytes, header says {want}"))
}

pub(super) fn not_view(path: &Path, what: String) -> Error {
    Error::NotSnapshot {
        path: path.to_path_buf(),
        what,
    }
}

/// The header of `bytes` checked (magic, version, kind); the body is all
/// that follows it, unchecked.
pub(super) fn parse_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    kind: u32,
) -> Result<Parsed<'a>, Error> {
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
pub(super) const PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Waits between tries: yields first, then sleeps a millisecond; false once
/// `PATIENCE` has passed since `start`.
pub(super) fn wait_turn(start: std::time::Instant, tries: &mut u32) -> bool {
    *tries += 1;
    if *tries < 100 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    start.elapsed() < PATIENCE
}

pub(super) fn seq_of(h: &[u8]) -> u64 {
    u64::from_le_bytes(h[SEQ..SEQ + 8].try_into().unwrap_or_default())
}

/// The header of a view file once its sequence is even (the agent is not
/// in the middle of a write); waits up to `PATIENCE` from `start`.
pub(super) fn even_header(
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
pub(super) fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
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
pub(super) fn read_at_most(f: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
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
pub(super) fn body_bytes(kind: u32, count: u64, exits: u32) -> u64 {
    if kind == KIND_SYSTEM || kind == KIND_CGROUPS {
        count
    } else {
        count
            .saturating_mul(8 * PROC_WORDS as u64)
            .saturating_add(u64::from(exits) * 8 * EXIT_WORDS as u64)
    }
}

/// How long [`read_live_procs`] waits for a table after asking for one.
pub(super) const ASK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

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
pub(super) const CHUNK_ROWS: usize = 1024;

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
pub(super) fn read_procs_streamed(path: &Path) -> Result<Option<ProcView>, Error> {
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
