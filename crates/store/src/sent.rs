//! What each remote-write receiver has acknowledged, kept beside the day
//! files in `sent.qsdb` (SQLite, WAL, `synchronous=NORMAL`: a position
//! written survives a kill -9 at any instant), and the samples the
//! store's retention removed, so that a receiver that had not yet been
//! sent them counts them as dropped instead of losing them silently.
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

/// What one receiver has acknowledged (Unix ms).
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

/// A receiver's position, as `report` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receiver {
    pub name: String,
    pub position: Position,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS position(
    receiver TEXT PRIMARY KEY,
    through_ms INTEGER NOT NULL,
    ahead_from_ms INTEGER,
    ahead_to_ms INTEGER,
    written_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS removed(
    id INTEGER PRIMARY KEY,
    from_ms INTEGER NOT NULL,
    to_ms INTEGER NOT NULL,
    samples INTEGER NOT NULL);
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
        c.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; {SCHEMA}"
        ))
        .map_err(sql(&path))?;
        Ok(Sent { c, path })
    }

    /// `receiver`'s position, if it has one.
    pub fn get(&self, receiver: &str) -> Result<Option<Position>, Error> {
        self.c
            .query_row(
                "SELECT through_ms, ahead_from_ms, ahead_to_ms, written_ms FROM position WHERE receiver = ?1",
                [receiver],
                |r| position(r, 0),
            )
            .optional()
            .map_err(sql(&self.path))
    }

    /// Writes `receiver`'s position (after the receiver acknowledged).
    pub fn set(&self, receiver: &str, p: &Position) -> Result<(), Error> {
        self.c
            .prepare_cached(
                "INSERT OR REPLACE INTO position(receiver, through_ms, ahead_from_ms, ahead_to_ms, written_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    receiver,
                    p.through as i64,
                    p.ahead.map(|a| a.0 as i64),
                    p.ahead.map(|a| a.1 as i64),
                    p.written as i64
                ])
            })
            .map(|_| ())
            .map_err(sql(&self.path))
    }

    /// Records that the retention removed `samples` system samples taken
    /// in [from, to].
    pub fn removed(&self, from: u64, to: u64, samples: u64) -> Result<(), Error> {
        self.c
            .execute(
                "INSERT INTO removed(from_ms, to_ms, samples) VALUES (?1, ?2, ?3)",
                params![from as i64, to as i64, samples as i64],
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

    /// The system samples removed after `after` (Unix ms), and the end
    /// of the last removal: a removal that straddles `after` counts in
    /// proportion to its span after it (an estimate; the rest exact).
    pub fn removed_after(&self, after: u64) -> Result<(u64, u64), Error> {
        let mut st = self
            .c
            .prepare_cached("SELECT from_ms, to_ms, samples FROM removed WHERE to_ms > ?1")
            .map_err(sql(&self.path))?;
        let rows = st
            .query_map([after as i64], |r| {
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
            "SELECT receiver, through_ms, ahead_from_ms, ahead_to_ms, written_ms FROM position ORDER BY receiver",
        )
        .map_err(sql(&path))?;
    let rows = st
        .query_map([], |r| {
            Ok(Receiver {
                name: r.get(0)?,
                position: position(r, 1)?,
            })
        })
        .map_err(sql(&path))?;
    rows.collect::<Result<Vec<_>, _>>().map_err(sql(&path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_written_is_read_back_and_replaced() {
        let d = tempfile::tempdir().unwrap();
        let access = crate::access::Access::private("test");
        let s = Sent::open(d.path(), &access).unwrap();
        assert_eq!(s.get("a").unwrap(), None);
        let p = Position {
            through: 10,
            ahead: Some((20, 30)),
            written: 40,
        };
        s.set("a", &p).unwrap();
        assert_eq!(s.get("a").unwrap(), Some(p));
        let q = Position {
            through: 30,
            ahead: None,
            written: 50,
        };
        s.set("a", &q).unwrap();
        drop(s);
        let all = receivers(d.path()).unwrap();
        assert_eq!(
            all,
            vec![Receiver {
                name: "a".into(),
                position: q
            }]
        );
    }

    #[test]
    fn removals_after_a_position_are_counted_and_those_before_are_not() {
        let d = tempfile::tempdir().unwrap();
        let s = Sent::open(d.path(), &crate::access::Access::private("test")).unwrap();
        s.removed(0, 99, 7).unwrap();
        s.removed(100, 199, 11).unwrap();
        assert_eq!(s.removed_after(99).unwrap(), (11, 199));
        assert_eq!(s.removed_after(199).unwrap(), (0, 199));
        // Straddling: the part after the position, in proportion.
        assert_eq!(s.removed_after(150).unwrap(), (11 * 49 / 99, 199));
        assert_eq!(s.removed_after(0).unwrap(), (7 * 99 / 99 + 11, 199));
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
