//! What each remote-write receiver has acknowledged, kept beside the day
//! files in `sent.qsdb` (SQLite, WAL, `synchronous=NORMAL`: a position
//! written survives a kill -9 at any instant), and the samples the
//! store's retention removed, so that a receiver that had not yet been
//! sent them counts them as dropped instead of losing them silently.
//!
//! Each receiver has a position per lane: the system reads, the cgroup
//! walks and the process tables are recorded at their own instants and
//! sent each in time order, so each is tracked on its own.
//!
//! A position is written only after the receiver answered 2xx. It has two
//! parts: `through` (every recorded sample at or before it is
//! acknowledged) and, for a receiver sent the newest samples first, a
//! later span `[ahead_from, ahead_to]` acknowledged ahead of the backlog.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::Error;

/// The file's name in the store directory.
pub const FILE: &str = "sent.qsdb";

/// Removals kept in the ledger at most (the oldest go first).
const LEDGER_ROWS: i64 = 10_000;

/// What is recorded at its own instants, and sent in time order on its
/// own: each receiver has a position per lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lane {
    /// The system sources, every read.
    System,
    /// The walks of the cgroups.
    Cgroups,
    /// The process tables, one per `process_interval`.
    Procs,
}

impl Lane {
    pub const ALL: [Lane; 3] = [Lane::System, Lane::Cgroups, Lane::Procs];

    /// How the file and `report` name it.
    pub fn name(self) -> &'static str {
        match self {
            Lane::System => "system",
            Lane::Cgroups => "cgroups",
            Lane::Procs => "processes",
        }
    }

    fn named(name: &str) -> Option<Lane> {
        Lane::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Its blocks' kind in the day files.
    pub fn kind(self) -> i64 {
        match self {
            Lane::System => crate::db::KIND_SYSTEM,
            Lane::Cgroups => crate::db::KIND_CGROUPS,
            Lane::Procs => crate::db::KIND_PROCS,
        }
    }
}

/// What one receiver has acknowledged of one lane (Unix ms).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Position {
    /// Every recorded sample at or before this is acknowledged.
    pub through: u64,
    /// A span acknowledged ahead of `through` (newest first); `None` when
    /// there is none.
    pub ahead: Option<(u64, u64)>,
    /// When it was last written.
    pub written: u64,
}

/// A receiver's position in one lane, as `report` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receiver {
    pub name: String,
    pub lane: Lane,
    pub position: Position,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS position(
    receiver TEXT NOT NULL,
    lane TEXT NOT NULL,
    through_ms INTEGER NOT NULL,
    ahead_from_ms INTEGER,
    ahead_to_ms INTEGER,
    written_ms INTEGER NOT NULL,
    PRIMARY KEY(receiver, lane));
CREATE TABLE IF NOT EXISTS removed(
    id INTEGER PRIMARY KEY,
    lane TEXT NOT NULL,
    from_ms INTEGER NOT NULL,
    to_ms INTEGER NOT NULL,
    samples INTEGER NOT NULL);
";

/// A file written before the lanes (one position per receiver, the
/// system reads'): its rows become the system lane's.
const BEFORE_LANES: &str = "
ALTER TABLE position RENAME TO position_before_lanes;
ALTER TABLE removed RENAME TO removed_before_lanes;
";
const FROM_BEFORE_LANES: &str = "
INSERT INTO position SELECT receiver, 'system', through_ms, ahead_from_ms, ahead_to_ms, written_ms FROM position_before_lanes;
INSERT INTO removed SELECT id, 'system', from_ms, to_ms, samples FROM removed_before_lanes;
DROP TABLE position_before_lanes;
DROP TABLE removed_before_lanes;
";

/// The positions file of a store, open to write.
pub struct Sent {
    c: Connection,
    path: PathBuf,
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| crate::db::sql_error(path, e)
}

fn position(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Position> {
    let from: Option<i64> = r.get(at + 1)?;
    let to: Option<i64> = r.get(at + 2)?;
    Ok(Position {
        through: r.get::<_, i64>(at)? as u64,
        ahead: from.zip(to).map(|(f, t)| (f as u64, t as u64)),
        written: r.get::<_, i64>(at + 3)? as u64,
    })
}

impl Sent {
    /// Opens (making it, with the day files' mode and group) the positions
    /// file of the store in `dir`.
    pub fn open(dir: &Path, access: &crate::access::Access) -> Result<Sent, Error> {
        let path = dir.join(FILE);
        crate::access::open_file(&path, true, Some((access.file_mode(), access.gid)))
            .map_err(|e| Error::io(path.display().to_string(), e))?;
        let c = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_NOFOLLOW
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql(&path))?;
        c.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sql(&path))?;
        c.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
            .map_err(sql(&path))?;
        let before_lanes: bool = c
            .query_row(
                "SELECT count(*) = 0 AND (SELECT count(*) FROM sqlite_master WHERE name = 'position') > 0 FROM pragma_table_info('position') WHERE name = 'lane'",
                [],
                |r| r.get(0),
            )
            .map_err(sql(&path))?;
        let batch = if before_lanes {
            format!("BEGIN; {BEFORE_LANES} {SCHEMA} {FROM_BEFORE_LANES} COMMIT;")
        } else {
            SCHEMA.to_string()
        };
        c.execute_batch(&batch).map_err(sql(&path))?;
        Ok(Sent { c, path })
    }

    /// `receiver`'s position in `lane`, if it has one.
    pub fn get(&self, receiver: &str, lane: Lane) -> Result<Option<Position>, Error> {
        self.c
            .query_row(
                "SELECT through_ms, ahead_from_ms, ahead_to_ms, written_ms FROM position WHERE receiver = ?1 AND lane = ?2",
                [receiver, lane.name()],
                |r| position(r, 0),
            )
            .optional()
            .map_err(sql(&self.path))
    }

    /// Writes `receiver`'s position in `lane` (after the receiver
    /// acknowledged).
    pub fn set(&self, receiver: &str, lane: Lane, p: &Position) -> Result<(), Error> {
        self.c
            .prepare_cached(
                "INSERT OR REPLACE INTO position(receiver, lane, through_ms, ahead_from_ms, ahead_to_ms, written_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    receiver,
                    lane.name(),
                    p.through as i64,
                    p.ahead.map(|a| a.0 as i64),
                    p.ahead.map(|a| a.1 as i64),
                    p.written as i64
                ])
            })
            .map(|_| ())
            .map_err(sql(&self.path))
    }

    /// Records that the retention removed `samples` records of `lane`
    /// (system reads, walks, tables) taken in [from, to].
    pub fn removed(&self, lane: Lane, from: u64, to: u64, samples: u64) -> Result<(), Error> {
        self.c
            .execute(
                "INSERT INTO removed(lane, from_ms, to_ms, samples) VALUES (?1, ?2, ?3, ?4)",
                params![lane.name(), from as i64, to as i64, samples as i64],
            )
            .and_then(|_| {
                self.c.execute(
                    "DELETE FROM removed WHERE id <= (SELECT max(id) FROM removed) - ?1",
                    [LEDGER_ROWS],
                )
            })
            .map(|_| ())
            .map_err(sql(&self.path))
    }

    /// The records of `lane` removed after `after` (Unix ms), and the end
    /// of the last removal: a removal that straddles `after` counts in
    /// proportion to its span after it (an estimate; the rest exact).
    pub fn removed_after(&self, lane: Lane, after: u64) -> Result<(u64, u64), Error> {
        let mut st = self
            .c
            .prepare_cached(
                "SELECT from_ms, to_ms, samples FROM removed WHERE lane = ?1 AND to_ms > ?2",
            )
            .map_err(sql(&self.path))?;
        let rows = st
            .query_map(params![lane.name(), after as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)? as u64,
                    r.get::<_, i64>(1)? as u64,
                    r.get::<_, i64>(2)? as u64,
                ))
            })
            .map_err(sql(&self.path))?;
        let (mut n, mut end) = (0, after);
        for row in rows {
            let (from, to, samples) = row.map_err(sql(&self.path))?;
            n += if from > after {
                samples
            } else {
                // u128: samples times a span of ms does not overflow.
                (samples as u128 * (to - after) as u128 / (to - from).max(1) as u128) as u64
            };
            end = end.max(to);
        }
        Ok((n, end))
    }
}

/// Every receiver's position in the store in `dir` (none when no
/// receiver was ever configured), read only.
pub fn receivers(dir: &Path) -> Result<Vec<Receiver>, Error> {
    let path = dir.join(FILE);
    if !path.exists() {
        return Ok(Vec::new());
    }
    crate::access::check_regular(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
    let c = Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql(&path))?;
    let mut st = c
        .prepare(
            "SELECT receiver, lane, through_ms, ahead_from_ms, ahead_to_ms, written_ms FROM position",
        )
        .map_err(sql(&path))?;
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                position(r, 2)?,
            ))
        })
        .map_err(sql(&path))?;
    let mut out = Vec::new();
    for row in rows {
        let (name, lane, position) = row.map_err(sql(&path))?;
        // A lane a later build added is not this build's to show.
        if let Some(lane) = Lane::named(&lane) {
            out.push(Receiver {
                name,
                lane,
                position,
            });
        }
    }
    out.sort_by(|a, b| (&a.name, a.lane).cmp(&(&b.name, b.lane)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_written_is_read_back_and_replaced() {
        let d = tempfile::tempdir().unwrap();
        let access = crate::access::Access::private("test");
        let s = Sent::open(d.path(), &access).unwrap();
        assert_eq!(s.get("a", Lane::System).unwrap(), None);
        let p = Position {
            through: 10,
            ahead: Some((20, 30)),
            written: 40,
        };
        s.set("a", Lane::System, &p).unwrap();
        assert_eq!(s.get("a", Lane::System).unwrap(), Some(p));
        assert_eq!(s.get("a", Lane::Cgroups).unwrap(), None);
        let q = Position {
            through: 30,
            ahead: None,
            written: 50,
        };
        s.set("a", Lane::System, &q).unwrap();
        s.set("a", Lane::Procs, &p).unwrap();
        drop(s);
        let all = receivers(d.path()).unwrap();
        assert_eq!(
            all,
            vec![
                Receiver {
                    name: "a".into(),
                    lane: Lane::System,
                    position: q
                },
                Receiver {
                    name: "a".into(),
                    lane: Lane::Procs,
                    position: p
                }
            ]
        );
    }

    #[test]
    fn removals_after_a_position_are_counted_and_those_before_are_not() {
        let d = tempfile::tempdir().unwrap();
        let s = Sent::open(d.path(), &crate::access::Access::private("test")).unwrap();
        let sys = Lane::System;
        s.removed(sys, 0, 99, 7).unwrap();
        s.removed(sys, 100, 199, 11).unwrap();
        s.removed(Lane::Cgroups, 100, 199, 3).unwrap();
        assert_eq!(s.removed_after(sys, 99).unwrap(), (11, 199));
        assert_eq!(s.removed_after(sys, 199).unwrap(), (0, 199));
        // Straddling: the part after the position, in proportion.
        assert_eq!(s.removed_after(sys, 150).unwrap(), (11 * 49 / 99, 199));
        assert_eq!(s.removed_after(sys, 0).unwrap(), (7 * 99 / 99 + 11, 199));
        assert_eq!(s.removed_after(Lane::Cgroups, 0).unwrap(), (3, 199));
        assert_eq!(s.removed_after(Lane::Procs, 0).unwrap(), (0, 0));
    }

    #[test]
    fn a_file_written_before_the_lanes_becomes_the_system_lane() {
        let d = tempfile::tempdir().unwrap();
        let c = Connection::open(d.path().join(FILE)).unwrap();
        c.execute_batch(
            "CREATE TABLE position(receiver TEXT PRIMARY KEY, through_ms INTEGER NOT NULL, ahead_from_ms INTEGER, ahead_to_ms INTEGER, written_ms INTEGER NOT NULL);
             CREATE TABLE removed(id INTEGER PRIMARY KEY, from_ms INTEGER NOT NULL, to_ms INTEGER NOT NULL, samples INTEGER NOT NULL);
             INSERT INTO position VALUES ('r', 100, NULL, NULL, 5);
             INSERT INTO removed VALUES (1, 200, 300, 9);",
        )
        .unwrap();
        drop(c);
        let s = Sent::open(d.path(), &crate::access::Access::private("test")).unwrap();
        let p = s.get("r", Lane::System).unwrap().unwrap();
        assert_eq!((p.through, p.ahead, p.written), (100, None, 5));
        assert_eq!(s.removed_after(Lane::System, 0).unwrap(), (9, 300));
        s.set("r", Lane::Cgroups, &p).unwrap();
        drop(s);
        // Opened again: already converted, kept as it is.
        let s = Sent::open(d.path(), &crate::access::Access::private("test")).unwrap();
        assert_eq!(s.get("r", Lane::Cgroups).unwrap(), Some(p));
        assert_eq!(s.get("r", Lane::System).unwrap(), Some(p));
    }
}

/// One receiver's figures, served as `quietstat_remote_write_*`.
#[derive(Debug, Default)]
pub struct Stats {
    /// How the position and the labels name it.
    pub name: String,
    /// Samples the receiver acknowledged.
    pub sent: std::sync::atomic::AtomicU64,
    /// Bytes of the requests it acknowledged (snappy, as on the wire).
    pub bytes: std::sync::atomic::AtomicU64,
    /// Requests that failed and are sent again, by why.
    pub failed: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Samples never to be sent, by reason.
    pub dropped: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Samples recorded and not yet acknowledged (by whole blocks).
    pub pending: std::sync::atomic::AtomicU64,
    /// The send position: every recorded sample at or before it is the
    /// receiver's (Unix ms).
    pub position_ms: std::sync::atomic::AtomicU64,
    /// Whether its last request was answered 2xx (or refused: it answered).
    pub up: std::sync::atomic::AtomicBool,
}

impl Stats {
    pub fn named(name: &str) -> Stats {
        Stats {
            name: name.into(),
            ..Stats::default()
        }
    }

    /// Adds `n` to `map[key]`.
    pub fn count(
        map: &std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
        key: &'static str,
        n: u64,
    ) {
        *map.lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default() += n;
    }

    /// `map`'s counts, copied.
    pub fn counts(
        map: &std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    ) -> Vec<(&'static str, u64)> {
        map.lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect()
    }
}
