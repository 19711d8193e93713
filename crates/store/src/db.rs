//! The day files: one SQLite database per UTC day, `YYYY-MM-DD.qsdb`, in
//! WAL mode with `synchronous=NORMAL`: a commit survives the agent being
//! killed at any moment (a power loss may take the last commits back, never
//! corrupt the file).

use std::path::{Path, PathBuf};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

/// The format this build writes, and the newest it reads.
pub const FORMAT: i64 = 3;
/// `PRAGMA application_id`: "QSTS".
pub const APPLICATION_ID: i64 = 0x5153_5453;
pub const SUFFIX: &str = ".qsdb";

/// The kinds of blocks.
pub const KIND_SYSTEM: i64 = 1;
pub const KIND_PROCS: i64 = 2;
pub const KIND_CGROUPS: i64 = 3;
/// Exits of processes never in one of the file's tables (most of a busy
/// machine's: a build, a shell loop): one block a flush, each independent
/// (`key` 1), `start_ms`/`end_ms` its first and last exit, the body the
/// journal's exit records ([`crate::procs::put_exits`]) compressed, with
/// their start and end times in Unix nanoseconds, not since boot.
pub const KIND_EXITS: i64 = 4;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS block(
    id INTEGER PRIMARY KEY,
    kind INTEGER NOT NULL,
    key INTEGER NOT NULL,
    start_ms INTEGER NOT NULL,
    end_ms INTEGER NOT NULL,
    samples INTEGER NOT NULL,
    body BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS block_time ON block(kind, start_ms);
CREATE TABLE IF NOT EXISTS identity(
    id INTEGER PRIMARY KEY,
    pid INTEGER NOT NULL,
    start_ticks INTEGER NOT NULL,
    start_ms INTEGER,
    ppid INTEGER,
    uid INTEGER,
    cgroup_id INTEGER,
    comm TEXT NOT NULL,
    cmdline TEXT,
    first_ms INTEGER,
    last_ms INTEGER,
    exit_ms INTEGER,
    exit_status INTEGER,
    exit_utime_ns INTEGER,
    exit_stime_ns INTEGER,
    exit_maxrss_bytes INTEGER);
CREATE INDEX IF NOT EXISTS identity_exit ON identity(exit_ms);
CREATE INDEX IF NOT EXISTS identity_pid ON identity(pid, start_ticks);
CREATE TABLE IF NOT EXISTS cgroup(
    cgroup_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    first_ms INTEGER NOT NULL,
    made INTEGER NOT NULL,
    gone_ms INTEGER,
    PRIMARY KEY(cgroup_id, path)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cgroup_first ON cgroup(first_ms);
CREATE INDEX IF NOT EXISTS cgroup_gone ON cgroup(gone_ms);
CREATE TABLE IF NOT EXISTS gap(start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, why TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS usage(
    source TEXT PRIMARY KEY,
    samples INTEGER NOT NULL,
    raw_bytes INTEGER NOT NULL,
    stored_bytes INTEGER NOT NULL);
";

/// What went wrong with a day file.
#[derive(Debug)]
pub enum OpenError {
    /// Written by a newer format: never written to.
    Newer { path: PathBuf, found: i64 },
    /// Not a store, or damaged.
    Damaged { path: PathBuf, why: String },
    /// Cannot be opened or created (permissions, disk).
    Io { path: PathBuf, why: String },
}

impl OpenError {
    /// The failure, with its kind: a newer format or a damaged file is
    /// malformed for this reader.
    pub fn error(&self) -> crate::Error {
        let kind = match self {
            OpenError::Newer { .. } | OpenError::Damaged { .. } => crate::ErrorKind::Malformed,
            OpenError::Io { .. } => crate::ErrorKind::Io,
        };
        crate::Error::new(kind, self.to_string())
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Newer { path, found } => write!(
                f,
                "{}: written in store format {found}, newer than this quietstat's {FORMAT}; it is left alone (use a newer quietstat to read it)",
                path.display()
            ),
            OpenError::Damaged { path, why } => write!(f, "{}: damaged: {why}", path.display()),
            OpenError::Io { path, why } => write!(f, "{}: {why}", path.display()),
        }
    }
}

/// The day (`YYYY-MM-DD`, UTC) of `ms` since the epoch.
pub fn day_of(ms: u64) -> String {
    let days = (ms / 86_400_000) as i64;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The first millisecond of the day named `YYYY-MM-DD`.
pub fn day_start_ms(day: &str) -> Option<u64> {
    let mut it = day.splitn(3, '-');
    let y: i64 = it.next()?.parse().ok()?;
    let m: u32 = it.next()?.parse().ok()?;
    let d: u32 = it.next()?.parse().ok()?;
    (1..=12).contains(&m).then_some(())?;
    (1..=31).contains(&d).then_some(())?;
    u64::try_from(days_from_civil(y, m, d))
        .ok()
        .map(|x| x * 86_400_000)
}

// Howard Hinnant's civil calendar conversions.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn path_for(dir: &Path, day: &str) -> PathBuf {
    dir.join(format!("{day}{SUFFIX}"))
}

/// The day files in `dir`, oldest first.
pub fn day_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let day = name.strip_suffix(SUFFIX)?;
            day_start_ms(day)?;
            Some((day.to_string(), e.path()))
        })
        .collect();
    v.sort();
    v
}

fn check_version(c: &Connection, path: &Path) -> Result<(), OpenError> {
    let damaged = |e: rusqlite::Error| OpenError::Damaged {
        path: path.to_path_buf(),
        why: e.to_string(),
    };
    let app: i64 = c
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(damaged)?;
    let version: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(damaged)?;
    if app != APPLICATION_ID && !(app == 0 && version == 0) {
        return Err(OpenError::Damaged {
            path: path.to_path_buf(),
            why: format!("not a quietstat store (application_id {app:#x})"),
        });
    }
    if version > FORMAT {
        return Err(OpenError::Newer {
            path: path.to_path_buf(),
            found: version,
        });
    }
    Ok(())
}

/// Opens (creating, with `access`'s file mode and group) a day file to
/// write; checks it when it existed. A link, FIFO or anything but a
/// regular file is refused, without blocking.
pub fn open_write(path: &Path, access: &crate::access::Access) -> Result<Connection, OpenError> {
    let existed = path.exists();
    let io = |e: rusqlite::Error| OpenError::Io {
        path: path.to_path_buf(),
        why: e.to_string(),
    };
    // Made here first, so that SQLite's WAL and shared-memory files take
    // its mode and group.
    crate::access::open_file(path, true, Some((access.file_mode(), access.gid))).map_err(|e| {
        OpenError::Io {
            path: path.to_path_buf(),
            why: e.to_string(),
        }
    })?;
    let c = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(io)?;
    let damaged = |e: rusqlite::Error| classify(path, e);
    if existed {
        check_version(&c, path)?;
        let ok: String = c
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(damaged)?;
        if ok != "ok" {
            // One line: how many problems, and the first.
            let lines: Vec<&str> = ok.lines().filter(|l| !l.trim().is_empty()).collect();
            let first = lines.iter().find(|l| !l.contains("***")).unwrap_or(&"");
            return Err(OpenError::Damaged {
                path: path.to_path_buf(),
                why: format!(
                    "integrity check: {} problems, first: {}",
                    lines.len(),
                    first.trim()
                ),
            });
        }
    }
    c.execute_batch(&format!(
        "PRAGMA auto_vacuum = INCREMENTAL;
         PRAGMA journal_mode = WAL;
         PRAGMA synchronous = NORMAL;
         PRAGMA application_id = {APPLICATION_ID};
         PRAGMA user_version = {FORMAT};
         {SCHEMA}"
    ))
    .map_err(damaged)?;
    // Room for every statement the writer runs (a dozen), so that none is
    // prepared again for each process that starts or ends; and plans that
    // do not depend on the values bound (the store is never analyzed, so
    // a plan cannot gain from them), so that a statement is not parsed
    // and planned again each time it runs with other values.
    c.set_prepared_statement_cache_capacity(WRITER_STATEMENTS);
    c.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(damaged)?;
    Ok(c)
}

/// Prepared statements a writing connection keeps.
pub const WRITER_STATEMENTS: usize = 32;

/// Damage or a plain I/O failure, as SQLite says.
pub fn classify(path: &Path, e: rusqlite::Error) -> OpenError {
    use rusqlite::ErrorCode::*;
    match e.sqlite_error_code() {
        Some(DatabaseCorrupt | NotADatabase) => OpenError::Damaged {
            path: path.to_path_buf(),
            why: e.to_string(),
        },
        _ => OpenError::Io {
            path: path.to_path_buf(),
            why: e.to_string(),
        },
    }
}

/// Opens a day file to read; a link, FIFO or anything but a regular file
/// is refused, without blocking.
pub fn open_read(path: &Path) -> Result<Connection, OpenError> {
    crate::access::check_regular(path).map_err(|e| OpenError::Io {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    let c = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| classify(path, e))?;
    check_version(&c, path)?;
    Ok(c)
}

pub fn meta_get(c: &Connection, key: &str) -> Option<i64> {
    c.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
        .ok()
        .flatten()
}

pub fn meta_set(c: &Connection, key: &str, v: i64) -> rusqlite::Result<()> {
    exec(
        c,
        "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![key, v],
    )
    .map(|_| ())
}

/// `sql` run once with `params`, through the connection's cache of
/// prepared statements: the writer runs the same few statements for every
/// process that starts or ends, and preparing one (parsing the SQL,
/// planning it) costs more than running it.
pub fn exec(c: &Connection, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
    c.prepare_cached(sql)?.execute(params)
}

/// Moves a damaged file (and its WAL) aside; the new name.
pub fn set_aside(path: &Path, now_s: u64) -> std::io::Result<PathBuf> {
    let aside = PathBuf::from(format!("{}.corrupt-{now_s}", path.display()));
    std::fs::rename(path, &aside)?;
    for ext in ["-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{ext}", path.display()));
        if p.exists() {
            let _ = std::fs::rename(&p, format!("{}{ext}", aside.display()));
        }
    }
    Ok(aside)
}

/// Bytes a day file takes with its WAL.
pub fn file_bytes(path: &Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|e| std::fs::metadata(format!("{}{e}", path.display())).ok())
        .map(|m| m.len())
        .sum()
}

pub fn remove_day(path: &Path) -> std::io::Result<()> {
    for e in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{e}", path.display()));
    }
    std::fs::remove_file(path)
}

/// A SQLite failure on the day file `path`, its kind from SQLite's code: a
/// file that is not a database or is damaged is malformed, one that cannot
/// be opened absent or denied.
pub fn sql_error(path: &Path, e: rusqlite::Error) -> crate::Error {
    crate::Error::new(sql_kind(&e), e.to_string()).context(path.display())
}

/// The kind of a SQLite failure.
pub fn sql_kind(e: &rusqlite::Error) -> crate::ErrorKind {
    use crate::ErrorKind as K;
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::DatabaseCorrupt | C::NotADatabase) => K::Malformed,
        Some(C::CannotOpen) => K::Absent,
        Some(C::PermissionDenied | C::ReadOnly | C::AuthorizationForStatementDenied) => K::Denied,
        Some(C::DatabaseBusy | C::DatabaseLocked) => K::Busy,
        _ => K::Io,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip() {
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(day_of(1_795_996_800_000), "2026-11-30");
        for d in ["2024-02-29", "2026-11-24", "2000-03-01", "2100-12-31"] {
            assert_eq!(day_of(day_start_ms(d).unwrap()), d);
            assert_eq!(day_of(day_start_ms(d).unwrap() + 86_399_999), d);
        }
        assert_eq!(day_start_ms("2026-13-01"), None);
        assert_eq!(day_start_ms("junk"), None);
    }
}
