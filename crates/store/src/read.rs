//! Reading the history back: system samples rebuilt as the readers parsed
//! them live (so `model` derives the same figures), process tables at any
//! recorded instant, exits, gaps, and the store's own size per source.

use crate::{Error, ErrorKind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use procfs::{Source, SourceStatus, SystemSample};
use proctable::Proc;
use rusqlite::{Connection, params};

use crate::blocks::{MAX_RAW, SysDecoder, decompress};
use crate::codec::{get_delta, get_varint};
use crate::db::{self, KIND_CGROUPS, KIND_EXITS, KIND_PROCS, KIND_SYSTEM};
use crate::journal::{self, Kind};
use crate::procs::{Decoder, IdMap, Static, rebuild};

/// A store opened to read. Day files are opened one at a time, as a read
/// needs them (3,650 days work under any descriptor limit); a file that
/// cannot be read, or fails part way, is named once in
/// [`History::skipped`] and the others are read.
pub struct History {
    pub dir: PathBuf,
    days: Vec<(String, PathBuf)>,
    /// Records of the store's journal that no day file holds, when no
    /// agent holds that journal (its agent was killed): read-only copies,
    /// in order.
    tail: Vec<(Kind, u64, Vec<u8>)>,
    /// The journals of this store holding unwritten samples: path, samples,
    /// and whether an agent holds it.
    journals: Vec<(PathBuf, usize, bool)>,
    /// Files (or parts) that could not be read, with why (a newer format,
    /// damage); one line each.
    skipped: std::sync::Mutex<Vec<String>>,
}

/// A cgroup made or removed, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupChange {
    /// The walk that first found it (made), or first did not (removed).
    pub ts_ms: u64,
    pub made: bool,
    pub id: u64,
    pub path: String,
}

/// A process that ended, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ExitRow {
    pub pid: u32,
    pub ppid: Option<u32>,
    pub comm: String,
    pub cmdline: Option<String>,
    pub start_ms: Option<u64>,
    /// When it was first seen in a process table (`None`: it started and
    /// ended between two).
    pub first_ms: Option<u64>,
    pub exit_ms: u64,
    /// The wait status (`code << 8 | signal`).
    pub status: i32,
    pub utime_ns: u64,
    pub stime_ns: u64,
    pub maxrss_bytes: u64,
}

/// A stretch without data, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Gap {
    pub start_ms: u64,
    pub end_ms: u64,
    pub why: String,
}

/// One day's file and what each source takes in it.
#[derive(Debug, Clone)]
pub struct DayUsage {
    pub day: String,
    pub path: PathBuf,
    pub file_bytes: u64,
    /// (source, samples, raw bytes, stored bytes).
    pub sources: Vec<(String, u64, u64, u64)>,
    pub identities: u64,
}

/// A block of samples as the writer inserts it: decompressed, where its
/// samples begin, and their times.
fn timed_block(z: &[u8]) -> Option<(Vec<u8>, usize, Vec<u64>)> {
    let body = decompress(z, MAX_RAW)?;
    let mut pos = 0;
    let n = get_varint(&body, &mut pos)?;
    let mut times = Vec::new();
    let mut last = 0;
    for _ in 0..n.min(1 << 20) {
        last = get_delta(&body, &mut pos, last)?;
        times.push(last);
    }
    Some((body, pos, times))
}

/// Replays a block of a decoder's records: `step` applies the next record
/// (the body, where it begins) and is told its time when that is in
/// [from, to]. `None` when the block or a record does not decode.
fn replay_block(
    z: &[u8],
    from: u64,
    to: u64,
    mut step: impl FnMut(&[u8], &mut usize, Option<u64>) -> Option<()>,
) -> Option<()> {
    let (body, mut pos, times) = timed_block(z)?;
    for ts in times {
        step(&body, &mut pos, (ts >= from && ts <= to).then_some(ts))?;
    }
    Some(())
}

/// A time as SQLite's signed integers hold it.
fn sqlt(ms: u64) -> i64 {
    ms.min(i64::MAX as u64) as i64
}

/// The cgroups made (first seen, not in the walk before) and removed in
/// [?1, ?2].
const CGROUP_CHANGES: &str =
    "SELECT first_ms, 1, cgroup_id, path FROM cgroup WHERE made = 1 AND first_ms BETWEEN ?1 AND ?2
     UNION ALL
     SELECT gone_ms, 0, cgroup_id, path FROM cgroup WHERE gone_ms BETWEEN ?1 AND ?2";

/// The processes that ended in [?1, ?2], in order.
const EXITS: &str = "SELECT pid, ppid, comm, cmdline, start_ms, first_ms, exit_ms, exit_status,
     exit_utime_ns, exit_stime_ns, exit_maxrss_bytes
     FROM identity WHERE exit_ms BETWEEN ?1 AND ?2 ORDER BY exit_ms, id";

/// The row of an exit known only by its record (never in a table: no
/// command line, no first sighting), started and ended at those Unix ms.
fn exit_row(e: &proctable::Exit, start_ms: u64, exit_ms: u64) -> ExitRow {
    ExitRow {
        pid: e.pid,
        ppid: Some(e.ppid),
        comm: String::from_utf8_lossy(e.comm.as_bytes()).into_owned(),
        cmdline: None,
        start_ms: Some(start_ms),
        first_ms: None,
        exit_ms,
        status: e.exit_status,
        utime_ns: e.utime_ns,
        stime_ns: e.stime_ns,
        maxrss_bytes: e.maxrss_bytes,
    }
}

/// The gaps that overlap [?1, ?2], in order.
const GAPS: &str =
    "SELECT start_ms, end_ms, why FROM gap WHERE end_ms >= ?1 AND start_ms <= ?2 ORDER BY start_ms";

/// The rows `query` finds in [from, to] (its `?1` and `?2`) in the day
/// file `c` at `path`, each made by `row`, added to `out`.
fn query_into<T>(
    c: &Connection,
    path: &Path,
    query: &str,
    from: u64,
    to: u64,
    out: &mut Vec<T>,
    row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<(), Error> {
    let mut st = c.prepare(query).map_err(sql(path))?;
    let rows = st
        .query_map(params![sqlt(from), sqlt(to)], row)
        .map_err(sql(path))?;
    for r in rows {
        out.push(r.map_err(sql(path))?);
    }
    Ok(())
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| crate::db::sql_error(path, e)
}

impl History {
    /// Opens every day file in `dir`, and the samples a killed agent's
    /// journal holds that no day file does.
    pub fn open(dir: &Path) -> Result<History, Error> {
        let mut h = History::open_days(dir)?;
        h.read_journals();
        Ok(h)
    }

    /// Opens every day file in `dir`, without the journals: what the
    /// writer has committed (for a reader in the recording agent itself).
    pub fn open_days(dir: &Path) -> Result<History, Error> {
        let md =
            std::fs::metadata(dir).map_err(|e| Error::io(format!("store {}", dir.display()), e))?;
        if !md.is_dir() {
            return Err(Error::invalid(format!(
                "store {}: not a directory",
                dir.display()
            )));
        }
        if let Err(e) = std::fs::read_dir(dir) {
            return Err(if e.kind() == std::io::ErrorKind::PermissionDenied {
                Error::new(ErrorKind::Denied, crate::access::unreadable(dir, &md))
            } else {
                Error::io(format!("store {}", dir.display()), e)
            });
        }
        let days = db::day_files(dir);
        for (_, path) in &days {
            if let Some(md) = crate::access::denied(path) {
                return Err(Error::new(
                    ErrorKind::Denied,
                    crate::access::unreadable(path, &md),
                ));
            }
        }
        Ok(History {
            dir: dir.to_path_buf(),
            days,
            tail: Vec::new(),
            journals: Vec::new(),
            skipped: Default::default(),
        })
    }

    /// The records of `lane` (system reads, walks, tables) recorded after
    /// `ms` (Unix ms), by whole blocks: a block holding `ms` counts whole.
    pub fn records_after(&self, lane: crate::sent::Lane, ms: u64) -> u64 {
        let mut n = 0u64;
        self.each_day(ms, u64::MAX, false, &mut |_, path, c| {
            n += c
                .query_row(
                    "SELECT coalesce(sum(samples), 0) FROM block WHERE kind = ?1 AND end_ms > ?2",
                    params![lane.kind(), sqlt(ms)],
                    |r| r.get::<_, i64>(0),
                )
                .map_err(sql(path))? as u64;
            Ok(true)
        });
        n
    }

    /// Finds this store's journals (the one its agent named in the store,
    /// and the default places), and keeps the unwritten tail of those no
    /// agent holds. Never writes to them.
    fn read_journals(&mut self) {
        let store = std::fs::canonicalize(&self.dir).unwrap_or_else(|_| self.dir.clone());
        let id = crate::access::store_id(&self.dir, None);
        let named = std::fs::read_to_string(self.dir.join(journal::NAMED_IN_STORE))
            .ok()
            .map(|t| PathBuf::from(t.trim_end_matches('\n')));
        let places = journal::places(named.as_deref().and_then(Path::parent));
        let committed = crate::writer::committed_seq(&self.dir, crate::writer::now_ms()).0;
        for (path, owner) in journal::found(&places) {
            if owner.store != store || (owner.id != 0 && id != 0 && owner.id != id) {
                continue;
            }
            let Ok(snap) = journal::Snapshot::read(&path) else {
                continue;
            };
            let live = journal::in_use(&path);
            let mut n = 0;
            let mut chain = crate::procs::Chain::default();
            for r in snap.records() {
                let table = chain.feed(r.kind, r.seq, r.payload);
                if r.seq <= committed {
                    continue;
                }
                n += 1;
                if live {
                    continue;
                }
                match (r.kind, table) {
                    // Each table whole, as the day files give it.
                    (Kind::Procs | Kind::ProcsDelta, Some(t)) => {
                        self.tail.push((Kind::Procs, r.ts_ms, t.to_vec()))
                    }
                    (Kind::Procs | Kind::ProcsDelta, None) => {}
                    // An earlier build's rows, of another width: not read.
                    (k, _) if k.earlier_procs() => {}
                    (k, _) => self.tail.push((k, r.ts_ms, r.payload.to_vec())),
                }
            }
            if n > 0 {
                self.journals.push((path, n, live));
            }
        }
        self.tail.sort_by_key(|r| r.1);
    }

    /// This store's journals holding samples no day file holds: path,
    /// samples, and whether an agent holds it (else `report` shows them).
    pub fn journals(&self) -> &[(PathBuf, usize, bool)] {
        &self.journals
    }

    /// What could not be read so far, one line per file (or part).
    pub fn skipped(&self) -> Vec<String> {
        self.skipped
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn skip(&self, why: String) {
        let mut s = self.skipped.lock().unwrap_or_else(|e| e.into_inner());
        if !s.contains(&why) {
            s.push(why);
        }
    }

    /// Calls `f` with each day file overlapping [from, to], opened one at
    /// a time (oldest first; newest first with `rev`). A file that cannot
    /// be opened, or whose read fails, is named in `skipped` and the next
    /// one is read; `f` returns false to stop.
    fn each_day(
        &self,
        from: u64,
        to: u64,
        rev: bool,
        f: &mut dyn FnMut(&str, &Path, &Connection) -> Result<bool, Error>,
    ) {
        let mut days: Vec<&(String, PathBuf)> = self
            .days
            .iter()
            .filter(|(d, _)| {
                let s = db::day_start_ms(d).unwrap_or(0);
                s <= to && s.saturating_add(86_400_000) > from
            })
            .collect();
        if rev {
            days.reverse();
        }
        for (day, path) in days {
            let c = match db::open_read(path) {
                Ok(c) => c,
                Err(e) => {
                    self.skip(e.to_string());
                    continue;
                }
            };
            match f(day, path, &c) {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => self.skip(format!("{e} (the rest of that day is not shown)")),
            }
        }
    }

    /// The first and last recorded instants (ms since the epoch).
    pub fn range(&self) -> Option<(u64, u64)> {
        let bound = |sql: &str, rev: bool| {
            let mut out = None;
            self.each_day(0, u64::MAX, rev, &mut |_, path, c| {
                out = c
                    .query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
                    .map_err(self::sql(path))?;
                Ok(out.is_none())
            });
            out.map(|v| v as u64)
        };
        let tail = (
            self.tail.first().map(|r| r.1),
            self.tail.last().map(|r| r.1),
        );
        let lo = bound("SELECT min(start_ms) FROM block", false);
        let hi = bound("SELECT max(end_ms) FROM block", true);
        let lo = match (lo, tail.0) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        let hi = hi.max(tail.1)?;
        (hi > 0).then_some((lo, hi))
    }

    /// The blocks of `kind` needed for [from, to]: from the last keyframe
    /// at or before `from`.
    fn blocks(
        c: &Connection,
        path: &Path,
        kind: i64,
        from: u64,
        to: u64,
        after: Option<i64>,
    ) -> Result<Vec<Block>, Error> {
        let row = |r: &rusqlite::Row<'_>| {
            Ok(Block {
                id: r.get(0)?,
                key: r.get(1)?,
                end_ms: r.get::<_, i64>(2)? as u64,
                body: r.get(3)?,
            })
        };
        if let Some(after) = after {
            let mut st = c
                .prepare_cached(
                    "SELECT id, key, end_ms, body FROM block WHERE kind = ?1 AND id > ?2 AND start_ms <= ?3 ORDER BY start_ms, id",
                )
                .map_err(sql(path))?;
            let rows = st
                .query_map(params![kind, after, sqlt(to)], row)
                .map_err(sql(path))?;
            return rows.collect::<Result<Vec<_>, _>>().map_err(sql(path));
        }
        let start: i64 = c
            .query_row(
                "SELECT coalesce(max(start_ms), 0) FROM block WHERE kind = ?1 AND key = 1 AND start_ms <= ?2",
                params![kind, sqlt(from)],
                |r| r.get(0),
            )
            .map_err(sql(path))?;
        let mut st = c
            .prepare_cached(
                "SELECT id, key, end_ms, body FROM block WHERE kind = ?1 AND start_ms >= ?2 AND start_ms <= ?3 ORDER BY start_ms, id",
            )
            .map_err(sql(path))?;
        let rows = st
            .query_map(params![kind, start, sqlt(to)], row)
            .map_err(sql(path))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(sql(path))
    }

    /// Calls `f` with every system sample in [from, to] holding any of
    /// `sources`, rebuilt as read live (only those sources); `taken` is
    /// `base` plus the sample's time, so intervals between samples are
    /// exact; `f` returns false to stop. It goes on from where `cur` left
    /// off when `from` is past it, and leaves `cur` where this read ended.
    /// Returns the blocks that could not be decoded (skipped).
    pub fn system_from(
        &self,
        cur: &mut Cursor,
        from: u64,
        to: u64,
        sources: &[Source],
        f: &mut dyn FnMut(u64, &SystemSample) -> bool,
    ) -> Result<usize, Error> {
        let want = sources
            .iter()
            .fold(0u128, |m, s| m | 1u128 << (*s as usize));
        if cur.want != want {
            cur.system = None;
            cur.want = want;
        }
        let base = Instant::now();
        let mut sample = SystemSample::default();
        let mut bad = 0;
        let mut go = true;
        self.each_day(from, to, false, &mut |day, path, c| {
            let (done0, mut dec) =
                match resume(&mut cur.system, &mut cur.resumed, day, from, c, KIND_SYSTEM) {
                    Some((id, end, d)) => (Some((id, end)), d),
                    None => (None, SysDecoder::default()),
                };
            let after = done0.map(|d| d.0);
            let mut chained = after.is_some();
            let mut done = done0;
            for blk in Self::blocks(c, path, KIND_SYSTEM, from, to, after)? {
                if blk.key {
                    dec.reset();
                    chained = true;
                }
                if !chained {
                    continue;
                }
                // The state before a block with records to give: where the
                // next read goes on if this one stops inside it.
                let before = (blk.end_ms >= from)
                    .then_some(done)
                    .flatten()
                    .map(|(id, end)| (id, end, dec.clone()));
                let Some(block) = dec.decode(&blk.body, want) else {
                    bad += 1;
                    chained = false;
                    done = None;
                    continue;
                };
                for (ts, files) in block.times.iter().zip(block.files) {
                    if *ts < from || *ts > to || files.is_empty() {
                        continue;
                    }
                    for s in &mut sample.status {
                        *s = SourceStatus::NotRead;
                    }
                    for (src, bytes) in files {
                        sample.parse_kept(src, &bytes);
                    }
                    sample.taken = base + Duration::from_millis(ts.saturating_sub(from));
                    sample.unix_ns = ts * 1_000_000;
                    if !f(*ts, &sample) {
                        go = false;
                        cur.system = before.map(|(block, end_ms, dec)| Left {
                            day: day.to_string(),
                            block,
                            end_ms,
                            dec,
                        });
                        return Ok(false);
                    }
                }
                done = Some((blk.id, blk.end_ms));
            }
            cur.system = done.filter(|_| chained).map(|(block, end_ms)| Left {
                day: day.to_string(),
                block,
                end_ms,
                dec,
            });
            Ok(true)
        });
        // What a killed agent left in its journal, after every day file.
        for (_, ts, payload) in self.tail.iter().filter(|r| r.0 == Kind::System) {
            if !go {
                break;
            }
            if *ts < from || *ts > to {
                continue;
            }
            for s in &mut sample.status {
                *s = SourceStatus::NotRead;
            }
            let mut any = false;
            for (src, bytes) in procfs::kept::entries(payload) {
                if want & (1u128 << (src as usize)) == 0 {
                    continue;
                }
                any = true;
                sample.parse_kept(src, bytes);
            }
            if any {
                sample.taken = base + Duration::from_millis(ts.saturating_sub(from));
                sample.unix_ns = ts * 1_000_000;
                go = f(*ts, &sample);
            }
        }
        Ok(bad)
    }

    /// As [`History::system_from`], from the keyframe, to the end of
    /// [from, to].
    pub fn system(
        &self,
        from: u64,
        to: u64,
        sources: &[Source],
        f: &mut dyn FnMut(u64, &SystemSample),
    ) -> Result<usize, Error> {
        self.system_from(&mut Cursor::default(), from, to, sources, &mut |ts, s| {
            f(ts, s);
            true
        })
    }

    /// Calls `f` with every recorded process table in [from, to]: its time,
    /// and a way to rebuild its rows.
    pub fn procs(
        &self,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &Snapshot),
    ) -> Result<usize, Error> {
        self.procs_read(&mut Cursor::default(), from, to, false, &mut |ts, s| {
            f(ts, s);
            true
        })
    }

    /// As [`History::procs`]; `f` returns false to stop. It goes on from
    /// where `cur` left off when `from` is past it, and leaves `cur` where
    /// this read ended.
    pub fn procs_from(
        &self,
        cur: &mut Cursor,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &Snapshot) -> bool,
    ) -> Result<usize, Error> {
        self.procs_read(cur, from, to, true, f)
    }

    /// [`History::procs_from`]; with `resumable`, the decoder is copied at
    /// each block's start, for `cur` to go on from that block when `f`
    /// stops within it (a copy of every live row a block: a read that
    /// never stops, [`History::procs`], makes none).
    fn procs_read(
        &self,
        cur: &mut Cursor,
        from: u64,
        to: u64,
        resumable: bool,
        f: &mut dyn FnMut(u64, &Snapshot) -> bool,
    ) -> Result<usize, Error> {
        let mut bad = 0;
        let mut go = true;
        self.each_day(from, to, false, &mut |day, path, c| {
            let (done0, mut dec) =
                match resume(&mut cur.procs, &mut cur.resumed, day, from, c, KIND_PROCS) {
                    Some((id, end, d)) => (Some((id, end)), d),
                    None => (None, Decoder::default()),
                };
            let after = done0.map(|d| d.0);
            // The identities: those of the day not yet known.
            if cur.ids_day != day {
                cur.ids.clear();
                cur.ids_day = day.to_string();
            }
            let known = cur.ids.keys().max().copied();
            cur.ids.extend(identities(c, path, known)?);
            let ids = &cur.ids;
            let mut chained = after.is_some();
            let mut done = done0;
            for blk in Self::blocks(c, path, KIND_PROCS, from, to, after)? {
                if blk.key {
                    dec.live.clear();
                    chained = true;
                }
                if !chained {
                    continue;
                }
                let before = (resumable && blk.end_ms >= from)
                    .then_some(done)
                    .flatten()
                    .map(|(id, end)| (id, end, dec.clone()));
                let ok = replay_block(&blk.body, from, to, |body, pos, at| {
                    dec.apply(body, pos)?;
                    if let Some(ts) = at {
                        let live = &dec;
                        go = f(ts, &Snapshot { live, ids });
                    }
                    go.then_some(())
                });
                if !go {
                    cur.procs = before.map(|(block, end_ms, dec)| Left {
                        day: day.to_string(),
                        block,
                        end_ms,
                        dec,
                    });
                    return Ok(false);
                }
                if ok.is_none() {
                    bad += 1;
                    chained = false;
                    done = None;
                    continue;
                }
                done = Some((blk.id, blk.end_ms));
            }
            cur.procs = done.filter(|_| chained).map(|(block, end_ms)| Left {
                day: day.to_string(),
                block,
                end_ms,
                dec,
            });
            Ok(true)
        });
        // A killed agent's journal: each table it holds, whole.
        for (_, ts, payload) in self.tail.iter().filter(|r| r.0 == Kind::Procs) {
            if !go {
                break;
            }
            if *ts < from || *ts > to {
                continue;
            }
            let mut dec = Decoder::default();
            let mut ids = IdMap::default();
            for (i, (st, vals)) in crate::procs::rows(payload).enumerate() {
                dec.live.insert(i as u32, vals);
                ids.insert(i as u32, st);
            }
            go = f(
                *ts,
                &Snapshot {
                    live: &dec,
                    ids: &ids,
                },
            );
        }
        Ok(bad)
    }

    /// Calls `f` with every recorded walk of the cgroups in [from, to]:
    /// its time, and the decoder holding it (`sample` rebuilds it).
    /// Returns the blocks that could not be decoded (skipped).
    pub fn cgroups(
        &self,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &crate::cgroups::Decoder),
    ) -> Result<usize, Error> {
        self.cgroups_from(&mut Cursor::default(), from, to, &mut |ts, d| {
            f(ts, d);
            true
        })
    }

    /// As [`History::cgroups`]; `f` returns false to stop. It goes on
    /// from where `cur` left off when `from` is past it, and leaves `cur`
    /// where this read ended.
    pub fn cgroups_from(
        &self,
        cur: &mut Cursor,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &crate::cgroups::Decoder) -> bool,
    ) -> Result<usize, Error> {
        let mut bad = 0;
        let mut go = true;
        self.each_day(from, to, false, &mut |day, path, c| {
            let (done0, mut dec) = match resume(
                &mut cur.cgroups,
                &mut cur.resumed,
                day,
                from,
                c,
                KIND_CGROUPS,
            ) {
                Some((id, end, d)) => (Some((id, end)), d),
                None => (None, crate::cgroups::Decoder::default()),
            };
            let after = done0.map(|d| d.0);
            let mut done = done0;
            for blk in Self::blocks(c, path, KIND_CGROUPS, from, to, after)? {
                if !blk.key && dec.is_empty() {
                    continue;
                }
                let before = (blk.end_ms >= from)
                    .then_some(done)
                    .flatten()
                    .map(|(id, end)| (id, end, dec.clone()));
                let ok = replay_block(&blk.body, from, to, |body, pos, at| {
                    dec.apply(body, pos)?;
                    if let Some(ts) = at {
                        go = f(ts, &dec);
                    }
                    go.then_some(())
                });
                if !go {
                    cur.cgroups = before.map(|(block, end_ms, dec)| Left {
                        day: day.to_string(),
                        block,
                        end_ms,
                        dec,
                    });
                    return Ok(false);
                }
                if ok.is_none() {
                    bad += 1;
                    dec = crate::cgroups::Decoder::default();
                    done = None;
                    continue;
                }
                done = Some((blk.id, blk.end_ms));
            }
            cur.cgroups = done
                .filter(|_| !dec.is_empty())
                .map(|(block, end_ms)| Left {
                    day: day.to_string(),
                    block,
                    end_ms,
                    dec,
                });
            Ok(true)
        });
        // A killed agent's journal: each walk whole.
        for (_, ts, payload) in self.tail.iter().filter(|r| r.0 == Kind::Cgroups) {
            if !go {
                break;
            }
            if *ts < from || *ts > to {
                continue;
            }
            let mut dec = crate::cgroups::Decoder::default();
            if dec.apply(payload, &mut 0).is_some() {
                go = f(*ts, &dec);
            }
        }
        Ok(bad)
    }

    /// The cgroups made or removed in [from, to] (made: not in the walk
    /// before; removed: not in the walk at `gone_ms`), in time order.
    pub fn cgroup_changes(&self, from: u64, to: u64) -> Result<Vec<CgroupChange>, Error> {
        let mut out = Vec::new();
        self.each_day(from, to, false, &mut |_, path, c| {
            // A day file of a build that recorded no cgroups has no table.
            let has: bool = c
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'cgroup'",
                    [],
                    |r| r.get(0),
                )
                .map_err(sql(path))?;
            if !has {
                return Ok(true);
            }
            query_into(c, path, CGROUP_CHANGES, from, to, &mut out, |r| {
                Ok(CgroupChange {
                    ts_ms: r.get::<_, i64>(0)? as u64,
                    made: r.get(1)?,
                    id: r.get::<_, i64>(2)? as u64,
                    path: r.get(3)?,
                })
            })?;
            Ok(true)
        });
        out.sort_by(|a, b| (a.ts_ms, &a.path).cmp(&(b.ts_ms, &b.path)));
        Ok(out)
    }

    /// Processes that ended in [from, to], in order.
    pub fn exits(&self, from: u64, to: u64) -> Result<Vec<ExitRow>, Error> {
        let mut out = Vec::new();
        self.each_day(from, to, false, &mut |_, path, c| {
            query_into(c, path, EXITS, from, to, &mut out, |r| {
                Ok(ExitRow {
                    pid: r.get(0)?,
                    ppid: r.get(1)?,
                    comm: r.get(2)?,
                    cmdline: r.get(3)?,
                    start_ms: r.get::<_, Option<i64>>(4)?.map(|v| v as u64),
                    first_ms: r.get::<_, Option<i64>>(5)?.map(|v| v as u64),
                    exit_ms: r.get::<_, i64>(6)? as u64,
                    status: r.get(7)?,
                    utime_ns: r.get::<_, Option<i64>>(8)?.unwrap_or(0) as u64,
                    stime_ns: r.get::<_, Option<i64>>(9)?.unwrap_or(0) as u64,
                    maxrss_bytes: r.get::<_, Option<i64>>(10)?.unwrap_or(0) as u64,
                })
            })?;
            // Exits of processes in none of the file's tables: blocks of
            // them, their times Unix nanoseconds.
            let mut st = c
                .prepare_cached(
                    "SELECT body FROM block WHERE kind = ?1 AND end_ms >= ?2 AND start_ms <= ?3 ORDER BY start_ms, id",
                )
                .map_err(sql(path))?;
            let bodies = st
                .query_map(params![KIND_EXITS, sqlt(from), sqlt(to)], |r| r.get::<_, Vec<u8>>(0))
                .map_err(sql(path))?;
            for body in bodies {
                let body = body.map_err(sql(path))?;
                let Some(raw) = crate::blocks::decompress(&body, crate::blocks::MAX_RAW) else {
                    continue;
                };
                for e in crate::procs::exits(&raw) {
                    let exit_ms = e.exit_ns / 1_000_000;
                    if (from..=to).contains(&exit_ms) {
                        out.push(exit_row(&e, e.start_ns / 1_000_000, exit_ms));
                    }
                }
            }
            Ok(true)
        });
        // A killed agent's journal: exits not yet written (in this boot:
        // a journal lives in memory).
        let boot = crate::writer::boot_ms();
        for (_, _, payload) in self.tail.iter().filter(|r| r.0 == Kind::Exits) {
            for e in crate::procs::exits(payload) {
                let exit_ms = boot + e.exit_ns / 1_000_000;
                if exit_ms < from || exit_ms > to {
                    continue;
                }
                out.push(exit_row(&e, boot + e.start_ns / 1_000_000, exit_ms));
            }
        }
        // In the order they ended (the day files' rows, then blocks, then
        // the journal were each in order).
        out.sort_by_key(|e| e.exit_ms);
        Ok(out)
    }

    /// Recorded gaps overlapping [from, to].
    pub fn gaps(&self, from: u64, to: u64) -> Result<Vec<Gap>, Error> {
        let mut out = Vec::new();
        // A gap is recorded in the day file of its end.
        self.each_day(from, u64::MAX, false, &mut |_, path, c| {
            query_into(c, path, GAPS, from, to, &mut out, |r| {
                Ok(Gap {
                    start_ms: r.get::<_, i64>(0)? as u64,
                    end_ms: r.get::<_, i64>(1)? as u64,
                    why: r.get(2)?,
                })
            })?;
            Ok(true)
        });
        Ok(out)
    }

    /// What each day's file takes, per source.
    pub fn usage(&self) -> Result<Vec<DayUsage>, Error> {
        let mut out = Vec::new();
        self.each_day(0, u64::MAX, false, &mut |day, path, c| {
            let mut st = c
                .prepare("SELECT source, samples, raw_bytes, stored_bytes FROM usage ORDER BY stored_bytes DESC")
                .map_err(sql(path))?;
            let sources = st
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)? as u64,
                        r.get::<_, i64>(2)? as u64,
                        r.get::<_, i64>(3)? as u64,
                    ))
                })
                .map_err(sql(path))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(sql(path))?;
            let identities: i64 = c
                .query_row("SELECT count(*) FROM identity", [], |r| r.get(0))
                .map_err(sql(path))?;
            out.push(DayUsage {
                day: day.to_string(),
                path: path.to_path_buf(),
                file_bytes: db::file_bytes(path),
                sources,
                identities: identities as u64,
            });
            Ok(true)
        });
        Ok(out)
    }
}

/// The identities of a day file (those after id `after`, when given).
fn identities(c: &Connection, path: &Path, after: Option<u32>) -> Result<IdMap<Static>, Error> {
    let mut st = c
        .prepare_cached(
            "SELECT id, pid, start_ticks, start_ms, uid, cgroup_id, comm FROM identity WHERE id > ?1",
        )
        .map_err(sql(path))?;
    let after = after.map_or(-1, i64::from);
    let rows = st
        .query_map([after], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                Static {
                    pid: r.get(1)?,
                    start_ticks: r.get::<_, i64>(2)? as u64,
                    start_ns: 0,
                    uid: r.get(4)?,
                    cgroup_id: r.get::<_, Option<i64>>(5)?.map(|g| g as u64),
                    comm: procfs::pid::Comm::new(r.get_ref(6)?.as_bytes().unwrap_or_default()),
                },
            ))
        })
        .map_err(sql(path))?;
    rows.collect::<Result<IdMap<_>, _>>().map_err(sql(path))
}

/// A block of the day files, as a reader takes it.
struct Block {
    id: i64,
    key: bool,
    end_ms: u64,
    body: Vec<u8>,
}

/// What a reader of one kind of record holds after block `block` of the
/// day file `day` (its last record at `end_ms`).
struct Left<D> {
    day: String,
    block: i64,
    end_ms: u64,
    dec: D,
}

/// Where reads of the history left off, for a reader that comes back for
/// what was added since (a remote-write sender, after every flush): the
/// next read from past that point goes on from the decoders' states
/// instead of decoding each chain again from its keyframe, so each block
/// is decoded once. A read from anywhere else starts from the keyframe,
/// as without one.
#[derive(Default)]
pub struct Cursor {
    system: Option<Left<SysDecoder>>,
    /// The sources the system reader decodes.
    want: u128,
    procs: Option<Left<Decoder>>,
    /// The identities of the day file `ids_day` read so far.
    ids: IdMap<Static>,
    ids_day: String,
    cgroups: Option<Left<crate::cgroups::Decoder>>,
    /// The reads that went on from where one left off.
    resumed: u64,
}

impl Cursor {
    /// The reads that went on from where one left off (instead of from a
    /// keyframe).
    pub fn resumed(&self) -> u64 {
        self.resumed
    }
}

/// The block after which `left` goes on (id, end), and its decoder: when
/// it is of `day`, `from` is past its end, and its block is still there
/// (the size cap removes the oldest blocks).
fn resume<D>(
    left: &mut Option<Left<D>>,
    resumed: &mut u64,
    day: &str,
    from: u64,
    c: &Connection,
    kind: i64,
) -> Option<(i64, u64, D)> {
    let l = left.take()?;
    if l.day != day || l.end_ms >= from {
        return None;
    }
    let there: bool = c
        .query_row(
            "SELECT count(*) > 0 FROM block WHERE id = ?1 AND kind = ?2",
            params![l.block, kind],
            |r| r.get(0),
        )
        .ok()?;
    *resumed += u64::from(there);
    there.then_some((l.block, l.end_ms, l.dec))
}

/// A recorded process table, rebuilt on demand.
pub struct Snapshot<'a> {
    live: &'a Decoder,
    ids: &'a IdMap<Static>,
}

impl Snapshot<'_> {
    pub fn len(&self) -> usize {
        self.live.live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.live.live.is_empty()
    }

    /// Each process's fixed facts and stored values, in no order, without
    /// rebuilding rows (a reader that needs a few of 64,000 rebuilds those).
    pub fn each(&self, f: &mut dyn FnMut(&Static, &crate::procs::Values)) {
        for (id, v) in &self.live.live {
            if let Some(s) = self.ids.get(id) {
                f(s, v);
            }
        }
    }

    /// Every process, rebuilt; sorted by pid.
    pub fn procs(&self) -> Vec<Proc> {
        // Sorted as small references first: a row is hundreds of bytes.
        let mut refs: Vec<(u32, u64, &Static, &crate::procs::Values)> = self
            .live
            .live
            .iter()
            .filter_map(|(id, vals)| {
                let s = self.ids.get(id)?;
                Some((s.pid, s.start_ticks, s, vals))
            })
            .collect();
        refs.sort_unstable_by_key(|r| (r.0, r.1));
        refs.into_iter().map(|(_, _, s, v)| rebuild(s, v)).collect()
    }
}
