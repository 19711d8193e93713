//! The sampler's end of the history: each sample copied into the journal,
//! a process table as what changed since the last one.

use super::*;

/// Bytes of other records after which a new whole process table goes into
/// the journal even when the table is small (the journal keeps everything
/// after its last whole table).
pub const WHOLE_AFTER_MIN: usize = 1 << 20;

/// The sampler's end: copies into the journal, never waits on the disk.
pub struct Tap {
    pub(super) journal: Arc<Mutex<Journal>>,
    pub(super) stats: Arc<Stats>,
    /// Exits or a table's delta, encoded, reused.
    pub(super) buf: Vec<u8>,
    /// What is kept of the last table given, to tell what changed.
    pub(super) last: procs::Seen,
    /// The record holding the last table (a whole one or a delta), and
    /// the last whole one.
    pub(super) last_seq: Option<u64>,
    pub(super) whole_seq: Option<u64>,
    /// Bytes appended since the last whole table, and its size.
    pub(super) since_whole: usize,
    pub(super) whole_len: usize,
}

impl Tap {
    pub(super) fn new(journal: Arc<Mutex<Journal>>, stats: Arc<Stats>) -> Tap {
        Tap {
            journal,
            stats,
            buf: Vec::new(),
            last: procs::Seen::new(),
            last_seq: None,
            whole_seq: None,
            since_whole: 0,
            whole_len: 0,
        }
    }

    pub(super) fn append(
        &mut self,
        kind: Kind,
        ts_ms: u64,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) {
        let mut j = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        j.append_with(kind, ts_ms, len, fill);
        self.since_whole += len;
        self.stats.dropped.store(j.dropped, Relaxed);
    }

    /// System sources' bytes as read ([`procfs::kept`] entries).
    pub fn system(&mut self, ts_ms: u64, kept: &[u8]) {
        if !kept.is_empty() {
            self.append(Kind::System, ts_ms, kept.len(), &mut |d| {
                d.copy_from_slice(kept)
            });
        }
    }

    /// The process table: what changed since the last one (births, changed
    /// rows, ends), or the whole table when the journal no longer holds
    /// the last whole one (the writer released it, or a full journal
    /// dropped it), or once more bytes than half of one (and at least
    /// [`WHOLE_AFTER_MIN`]) were appended since, so that the journal's
    /// chain stays short.
    pub fn procs(&mut self, ts_ms: u64, procs: &[proctable::Proc]) {
        let mut j = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        let chained = self.last_seq.is_some_and(|s| j.holds(s))
            && self.whole_seq.is_some_and(|s| j.holds(s))
            && self.since_whole <= (self.whole_len / 2).max(WHOLE_AFTER_MIN);
        let before = j.last_seq();
        if chained {
            let base = self.last_seq.unwrap_or(0);
            // Rows made one at a time and hashed; a walk not in pid order
            // (none lists so) costs a table of rows.
            if self
                .last
                .put_delta_procs(&mut self.buf, base, procs)
                .is_none()
            {
                let mut rows = Vec::new();
                procs::put_rows(&mut rows, procs);
                procs::sort_rows(&mut rows, &mut Vec::new());
                self.last.put_delta_rows(&mut self.buf, base, &rows);
            }
            j.append(Kind::ProcsDelta, ts_ms, &self.buf);
            self.since_whole += self.buf.len();
        } else {
            let len = procs::rows_len(procs);
            let last = &mut self.last;
            last.forget();
            if procs::in_pid_order(procs) {
                // Written where the journal keeps it: no table of rows here.
                j.append_with(Kind::Procs, ts_ms, len, &mut |d| {
                    procs::fill_rows(d, procs);
                    last.keep(d);
                });
            } else {
                procs::put_rows(&mut self.buf, procs);
                procs::sort_rows(&mut self.buf, &mut Vec::new());
                j.append(Kind::Procs, ts_ms, &self.buf);
                last.keep(&self.buf);
            }
            self.whole_seq = Some(j.last_seq());
            self.whole_len = len;
            self.since_whole = 0;
        }
        // A record too large for the journal is not there: the next table
        // goes whole.
        self.last_seq = Some(j.last_seq()).filter(|s| *s != before);
        self.stats.dropped.store(j.dropped, Relaxed);
        drop(j);
        if self.buf.capacity() > 1 << 20 && self.buf.len() < 1 << 18 {
            // A large table's sort or delta: not kept for the next one.
            self.buf = Vec::new();
        }
    }

    /// A walk of the cgroups, whole.
    pub fn cgroups(&mut self, ts_ms: u64, s: &cgroups::Sample) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        crate::cgroups::put_whole(&mut buf, s);
        self.append(Kind::Cgroups, ts_ms, buf.len(), &mut |d| {
            d.copy_from_slice(&buf)
        });
        self.buf = buf;
    }

    pub fn exits(&mut self, ts_ms: u64, exits: &[proctable::Exit]) {
        if exits.is_empty() {
            return;
        }
        let mut buf = std::mem::take(&mut self.buf);
        procs::put_exits(&mut buf, exits);
        self.append(Kind::Exits, ts_ms, buf.len(), &mut |d| {
            d.copy_from_slice(&buf)
        });
        // What a burst of exits grew it to, given back (tables keep it
        // at their own size, 4 MiB and more at 64,000 processes).
        sys::trim_capacity(&mut buf, 4 << 20);
        self.buf = buf;
    }
}
