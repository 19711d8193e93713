//! The agent's side: each view file made once and rewritten in place,
//! the process file only while viewers open it.

use super::*;

/// Writes the view files. A failure to write is returned for the agent to
/// log; the snapshot goes on regardless.
pub struct ViewWriter {
    pub(super) system: Target,
    pub(super) procs: Target,
    pub(super) cgroups: Target,
    /// Opens of the process file (inotify, non-blocking); `None` where
    /// inotify is unavailable: then every table is written.
    pub(super) opens: Option<std::fs::File>,
    /// When the process file was last seen opened (never, at first: the
    /// first viewer asks for its table).
    pub(super) opened: Option<std::time::Instant>,
    pub(super) buf: Vec<u8>,
}

/// One view file, open for writing in place.
pub(super) struct Target {
    pub(super) path: PathBuf,
    pub(super) file: std::fs::File,
    pub(super) seq: u64,
}

impl Target {
    /// Makes the file anew (a file left by an agent before is removed
    /// first; a link there is never followed).
    pub(super) fn create(path: PathBuf, mode: u32) -> io::Result<Target> {
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
    pub(super) fn write(
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
pub(super) const CHUNK: usize = 64 * 1024;

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
pub(super) fn watch_opens(path: &Path) -> Option<std::fs::File> {
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

pub(super) fn header(
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
