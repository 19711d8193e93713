//! The writer's work on a day file: the journal's records written in
//! blocks, the processes' and cgroups' identities kept, old data let go.

use super::*;

impl Inner {
    pub(super) fn open_day(&mut self, day: &str) -> Result<(), Error> {
        if self.day.as_ref().is_some_and(|(d, _)| d == day) {
            return Ok(());
        }
        self.day = None;
        crate::access::prepare_dir(&self.opts.dir, &self.opts.access).map_err(|e| Error {
            detail: format!(
                "{}; recording waits until it can (or give --store DIR, or --no-store)",
                e.detail
            ),
            ..e.context("store")
        })?;
        let path = db::path_for(&self.opts.dir, day);
        let c = match db::open_write(&path, &self.opts.access) {
            Ok(c) => c,
            Err(OpenError::Damaged { path, why }) => {
                let aside = db::set_aside(&path, now_ms() / 1000).map_err(|e| {
                    Error::io(
                        format!(
                            "store: {} is damaged ({why}) and cannot be moved aside",
                            path.display()
                        ),
                        e,
                    )
                })?;
                (self.log)(format!(
                    "store: {} is damaged ({why}); moved aside to {} and recording goes on in a new file; other days are intact (sqlite3 .recover may save what the damaged one holds)",
                    path.display(),
                    aside.display()
                ));
                db::open_write(&path, &self.opts.access).map_err(|e| e.error().context("store"))?
            }
            Err(e @ OpenError::Newer { .. }) => {
                let msg = format!("store: {e}; not recording");
                self.disabled = Some(msg.clone());
                (self.log)(msg.clone());
                return Err(Error::new(ErrorKind::Malformed, msg));
            }
            Err(e) => {
                let kind = e.error().kind;
                let e = e.to_string();
                return Err(Error::new(
                    kind,
                    format!("store: {e}; sampling and serving go on, {}", remedy(&e)),
                ));
            }
        };
        self.need_key = true;
        self.procs.reset();
        self.cg_rows = None;
        // The file's last table: a process started after it was in none.
        self.last_table_ms = c
            .query_row(
                "SELECT coalesce(max(end_ms), 0) FROM block WHERE kind = ?1",
                params![KIND_PROCS],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_or(0) as u64;
        self.day = Some((day.to_string(), c));
        Ok(())
    }

    pub(super) fn write_day(
        &mut self,
        day: &str,
        recs: &[Record],
        gaps: &[(u64, u64, &str)],
    ) -> Result<(), Error> {
        self.open_day(day)?;
        let window = recs[0].ts_ms / KEY_EVERY_MS;
        let key = self.need_key || window != self.last_window;
        if key {
            self.sys.reset();
            self.cg_key_due = true;
        }
        let Some((_, c)) = self.day.as_mut() else {
            return Err(Error::other("store: no file open"));
        };
        let path = db::path_for(&self.opts.dir, day);
        let err = |e: rusqlite::Error| {
            let kind = db::sql_kind(&e);
            let e = e.to_string();
            Error::new(
                kind,
                format!(
                    "store: writing {}: {e}; sampling and serving go on, {}",
                    path.display(),
                    remedy(&e)
                ),
            )
        };
        let tx = c.transaction().map_err(err)?;
        let mut rows = 0u64;
        for (a, b, why) in gaps {
            exec(
                &tx,
                "INSERT INTO gap(start_ms, end_ms, why) VALUES (?1, ?2, ?3)",
                params![*a as i64, *b as i64, why],
            )
            .map_err(err)?;
            rows += 1;
        }
        let mut written: Vec<(String, u64, u64, u64)> = Vec::new();
        rows += write_system(&tx, &mut self.sys, recs, key, &mut written).map_err(err)?;
        // Process tables and exits.
        let boot_ms = self.boot_ms;
        let proc_root = self.opts.proc_root.clone();
        let mut snaps = Vec::new();
        let mut dbuf = Vec::new();
        let mut times = Vec::new();
        let mut prev_ts = self.last_ms;
        let mut first = true;
        let cg_key = self.cg_key_due;
        let mut cg_body = Vec::new();
        let mut cg_times = Vec::new();
        let mut cg_cpu_ns = 0;
        let mut short = Vec::new();
        for r in recs {
            match r.kind {
                Kind::Procs | Kind::ProcsDelta => {
                    if !self.chain.accepts(r.kind, r.seq, r.payload) {
                        continue;
                    }
                    let mut identify = |s: &Static| -> u32 {
                        identity_id(&tx, s, r.ts_ms, boot_ms, &proc_root).unwrap_or(0)
                    };
                    // A keyframe from the table after; else the delta,
                    // from the table before.
                    let ch = if (key && first) || self.procs.is_empty() {
                        self.chain.commit(r.kind, r.seq, r.payload);
                        self.procs
                            .encode_key(self.chain.rows(), &mut snaps, &mut identify)
                    } else {
                        let delta = self.chain.delta_of(r.kind, r.payload, &mut dbuf);
                        let ch = self.procs.encode_delta(
                            self.chain.rows(),
                            delta,
                            &mut snaps,
                            &mut identify,
                        );
                        self.chain.commit(r.kind, r.seq, r.payload);
                        ch
                    };
                    first = false;
                    rows += ch.born as u64;
                    for id in ch.gone {
                        exec(
                            &tx,
                            "UPDATE identity SET last_ms = ?1 WHERE id = ?2 AND last_ms IS NULL",
                            params![prev_ts as i64, id],
                        )
                        .map_err(err)?;
                    }
                    times.push(r.ts_ms);
                    prev_ts = r.ts_ms;
                }
                Kind::Exits => {
                    let last_table = self.last_table_ms.max(*times.last().unwrap_or(&0));
                    rows +=
                        write_exits(&tx, &self.procs, r.payload, boot_ms, last_table, &mut short)
                            .map_err(err)?;
                }
                Kind::Cgroups => {
                    let cpu = sys::thread_cpu_ns();
                    let Some(walk) = crate::cgroups::whole(r.payload, r.ts_ms) else {
                        continue;
                    };
                    self.cg.encode(&walk, self.cg_key_due, &mut cg_body);
                    self.cg_key_due = false;
                    rows += cgroup_rows(&tx, &mut self.cg_rows, &mut self.cg_prev, &walk, r.ts_ms)
                        .map_err(err)?;
                    cg_times.push(r.ts_ms);
                    cg_cpu_ns += sys::thread_cpu_ns().saturating_sub(cpu);
                }
                // An earlier build's rows, of another width: not read.
                Kind::System
                | Kind::EarlierProcs
                | Kind::EarlierProcsDelta
                | Kind::WaitsProcs
                | Kind::WaitsProcsDelta => {}
            }
        }
        if !cg_times.is_empty() {
            let cpu = sys::thread_cpu_ns();
            let (raw, z) =
                insert_timed_block(&tx, KIND_CGROUPS, cg_key, &cg_times, &cg_body).map_err(err)?;
            rows += 1;
            written.push(("cgroups".into(), cg_times.len() as u64, raw, z));
            cg_cpu_ns += sys::thread_cpu_ns().saturating_sub(cpu);
        }
        if !times.is_empty() {
            let (raw, z) = insert_timed_block(&tx, KIND_PROCS, key, &times, &snaps).map_err(err)?;
            rows += 1;
            written.push(("processes".into(), times.len() as u64, raw, z));
            self.last_table_ms = times[times.len() - 1];
        }
        if !short.is_empty() {
            let (raw, z) = insert_exits_block(&tx, &short).map_err(err)?;
            rows += 1;
            written.push(("exits".into(), short.len() as u64, raw, z));
        }
        write_usage(&tx, &written).map_err(err)?;
        let last = recs[recs.len() - 1];
        db::meta_set(&tx, "journal_seq", last.seq as i64).map_err(err)?;
        db::meta_set(&tx, "last_ms", last.ts_ms as i64).map_err(err)?;
        db::meta_set(&tx, "boot_ms", boot_ms as i64).map_err(err)?;
        tx.commit().map_err(err)?;
        for (src, _, _, z) in written {
            self.stats.add_written(&src, z);
        }
        self.stats.rows.fetch_add(rows, Relaxed);
        self.stats.cgroups_cpu_ns.fetch_add(cg_cpu_ns, Relaxed);
        self.committed = last.seq;
        self.last_ms = last.ts_ms;
        self.stats.committed_ms.fetch_max(last.ts_ms, Relaxed);
        self.need_key = false;
        self.last_window = window;
        Ok(())
    }

    /// Age and size limits: whole old days go first, then the oldest blocks
    /// of the only day left. Day files dated after today (a wall clock
    /// that was ahead) are never aged out; over the size cap they go
    /// first, before any real day.
    pub(super) fn retain(&mut self) {
        let now = settled_now(self.clock_start);
        let today = db::day_of(now);
        let files = db::day_files(&self.opts.dir);
        let open = self.day.as_ref().map(|(d, _)| d.clone());
        let cutoff = now.saturating_sub(self.opts.retention.as_millis() as u64);
        let mut kept = Vec::new();
        for (day, path) in files {
            let end = db::day_start_ms(&day).unwrap_or(0) + 86_400_000;
            if end <= cutoff && Some(&day) != open.as_ref() {
                self.ledger_day(&path);
                if let Err(e) = db::remove_day(&path) {
                    (self.log)(format!(
                        "store: removing {} (past retention): {e}",
                        path.display()
                    ));
                }
            } else {
                kept.push((day, path));
            }
        }
        // Removal order under the cap: future days, then the oldest.
        kept.sort_by_key(|(d, _)| (*d <= today, d.clone()));
        let total = |k: &[(String, PathBuf)]| k.iter().map(|(_, p)| db::file_bytes(p)).sum::<u64>();
        let mut bytes = total(&kept);
        let mut rounds = 0;
        while bytes > self.opts.max_bytes && rounds < 64 {
            rounds += 1;
            // A future day, or one older than the day being written.
            let first = kept.iter().position(|(d, _)| {
                Some(d) != open.as_ref() && (*d > today || open.as_ref().is_none_or(|o| d < o))
            });
            if let Some(i) = first.filter(|_| kept.len() > 1) {
                self.ledger_day(&kept[i].1);
                let _ = db::remove_day(&kept[i].1);
                kept.remove(i);
            } else if let Some((_, c)) = self.day.as_ref() {
                self.ledger(c, OLDEST_CHAINS);
                // With them, the oldest eighth (in time) of the processes
                // never in a table, recorded by their exits alone (most
                // of a busy machine's rows), and the processes that ended
                // and the cgroups removed before the oldest block left:
                // no block names them.
                let r = c.execute_batch(&format!(
                    "DELETE FROM block WHERE true {OLDEST_CHAINS};
                     DELETE FROM identity WHERE first_ms IS NULL AND exit_ms <
                       (SELECT min(exit_ms) + (max(exit_ms) - min(exit_ms)) / 8 + 1 FROM identity);
                     DELETE FROM identity WHERE first_ms IS NOT NULL AND exit_ms < {BEFORE_OLDEST_BLOCK};
                     DELETE FROM cgroup WHERE gone_ms < {BEFORE_OLDEST_BLOCK};
                     PRAGMA incremental_vacuum;
                     PRAGMA wal_checkpoint(TRUNCATE);"
                ));
                if r.is_err() {
                    break;
                }
                // A chain whose keyframe went is gone whole; the next
                // blocks written start new chains.
                self.need_key = true;
                self.cg_key_due = true;
            } else {
                break;
            }
            bytes = total(&kept);
        }
        self.stats.bytes_on_disk.store(bytes, Relaxed);
    }

    /// Notes in the remote-write ledger ([`crate::sent`]) the system
    /// samples of the day file at `path`, about to be removed.
    fn ledger_day(&self, path: &Path) {
        if let Ok(c) = db::open_read(path) {
            self.ledger(&c, "");
        }
    }

    /// Notes in the remote-write ledger the records of each lane in the
    /// blocks of `c` that `and` selects (all: ""), about to be removed;
    /// only when a receiver was ever configured (its file exists).
    fn ledger(&self, c: &Connection, and: &str) {
        if !self.opts.dir.join(crate::sent::FILE).exists() {
            return;
        }
        let sent = match crate::sent::Sent::open(&self.opts.dir, &self.opts.access) {
            Ok(s) => s,
            Err(e) => return (self.log)(format!("store: remote-write ledger: {e}")),
        };
        for lane in crate::sent::Lane::ALL {
            let q = format!(
                "SELECT min(start_ms), max(end_ms), coalesce(sum(samples), 0) FROM block WHERE kind = {} {and}",
                lane.kind()
            );
            let Ok((Some(from), Some(to), n)) = c.query_row(&q, [], |r| {
                Ok((
                    r.get::<_, Option<i64>>(0)?,
                    r.get::<_, Option<i64>>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            }) else {
                continue;
            };
            if let Err(e) = sent.removed(lane, from as u64, to as u64, n as u64) {
                (self.log)(format!("store: remote-write ledger: {e}"));
            }
        }
    }
}

/// The blocks the size cap removes from the only day left at once: the
/// oldest eighth, and of each kind the rest of the chain it cuts (up to
/// that kind's next keyframe; all of that kind when there is none), which
/// could no longer be read without its keyframe.
/// The start of the oldest block left (every row ended before it when
/// none is left).
const BEFORE_OLDEST_BLOCK: &str =
    "coalesce((SELECT min(start_ms) FROM block), 9223372036854775807)";

const OLDEST_CHAINS: &str = "AND id IN (SELECT b.id FROM block b WHERE b.start_ms < coalesce(
    (SELECT min(k.start_ms) FROM block k WHERE k.kind = b.kind AND k.key = 1 AND k.start_ms >
        (SELECT start_ms FROM block ORDER BY start_ms LIMIT 1 OFFSET (SELECT count(*) / 8 FROM block))),
    9223372036854775807))";

/// The system sources' records of `recs` as one block; their sizes per
/// source go to `written`. The rows inserted.
fn write_system(
    tx: &Connection,
    enc: &mut SysEncoder,
    recs: &[Record],
    key: bool,
    written: &mut Vec<(String, u64, u64, u64)>,
) -> rusqlite::Result<u64> {
    let sys: Vec<(u64, &[u8])> = recs
        .iter()
        .filter(|r| r.kind == Kind::System)
        .map(|r| (r.ts_ms, r.payload))
        .collect();
    if sys.is_empty() {
        return Ok(0);
    }
    let mut body = Vec::new();
    let sizes = enc.encode(&sys, &mut body);
    exec(
        tx,
        "INSERT INTO block(kind, key, start_ms, end_ms, samples, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            KIND_SYSTEM,
            key,
            sys[0].0 as i64,
            sys[sys.len() - 1].0 as i64,
            sys.len() as i64,
            body
        ],
    )?;
    for (src, raw, z) in sizes {
        written.push((
            src.name().to_string(),
            sys.len() as u64,
            raw as u64,
            z as u64,
        ));
    }
    Ok(1)
}

/// How much later than the last table a process must have started to
/// have been in none: a table is stamped when its read began, and
/// taskstats gives a start to within a second.
const NEVER_IN_A_TABLE_MS: u64 = 2_000;

/// An exits record: each exit's figures on its identity row, when the
/// process was in one of the file's tables (the last of them at
/// `last_table_ms`); the others, into `short` with their times made Unix
/// nanoseconds, for one block a flush ([`KIND_EXITS`]): no row and no
/// index entry each. A process that started after the last table was in
/// none, without a lookup. The rows inserted.
fn write_exits(
    tx: &Connection,
    procs: &Encoder,
    payload: &[u8],
    boot_ms: u64,
    last_table_ms: u64,
    short: &mut Vec<proctable::Exit>,
) -> rusqlite::Result<u64> {
    for e in procs::exits(payload) {
        let start_ms = boot_ms + e.start_ns / 1_000_000;
        let id = match procs.id_of(e.pid, e.start_ticks) {
            Some(id) => Some(id),
            None if start_ms > last_table_ms + NEVER_IN_A_TABLE_MS => None,
            None => exit_identity(tx, e.pid, e.start_ticks)?,
        };
        let Some(id) = id else {
            let boot_ns = boot_ms * 1_000_000;
            short.push(proctable::Exit {
                start_ns: boot_ns + e.start_ns,
                exit_ns: boot_ns + e.exit_ns,
                ..e
            });
            continue;
        };
        exec(
            tx,
            "UPDATE identity SET ppid = coalesce(ppid, ?2), exit_ms = ?3, exit_status = ?4,
                exit_utime_ns = ?5, exit_stime_ns = ?6, exit_maxrss_bytes = ?7 WHERE id = ?1",
            params![
                id,
                e.ppid,
                (boot_ms + e.exit_ns / 1_000_000) as i64,
                e.exit_status,
                e.utime_ns as i64,
                e.stime_ns as i64,
                e.maxrss_bytes as i64
            ],
        )?;
    }
    Ok(0)
}

/// One [`KIND_EXITS`] block of `exits` (times in Unix nanoseconds).
/// Returns its raw and stored sizes.
fn insert_exits_block(tx: &Connection, exits: &[proctable::Exit]) -> rusqlite::Result<(u64, u64)> {
    let mut raw = Vec::new();
    procs::put_exits(&mut raw, exits);
    let z = compress(&raw);
    let ms = |e: &proctable::Exit| (e.exit_ns / 1_000_000) as i64;
    let first = exits.iter().map(ms).min().unwrap_or(0);
    let last = exits.iter().map(ms).max().unwrap_or(0);
    exec(
        tx,
        "INSERT INTO block(kind, key, start_ms, end_ms, samples, body) VALUES (?1, 1, ?2, ?3, ?4, ?5)",
        params![KIND_EXITS, first, last, exits.len() as i64, z],
    )?;
    Ok((raw.len() as u64, z.len() as u64))
}

/// What this write added to each source's totals.
fn write_usage(tx: &Connection, written: &[(String, u64, u64, u64)]) -> rusqlite::Result<()> {
    for (src, samples, raw, z) in written {
        exec(tx,
            "INSERT INTO usage(source, samples, raw_bytes, stored_bytes) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(source) DO UPDATE SET samples = samples + excluded.samples,
               raw_bytes = raw_bytes + excluded.raw_bytes, stored_bytes = stored_bytes + excluded.stored_bytes",
            params![src, *samples as i64, *raw as i64, *z as i64],
        )?;
    }
    Ok(())
}

/// What to do about a failed write, for the log line: `why` as SQLite or
/// the system said it.
pub(super) fn remedy(why: &str) -> &'static str {
    let w = why.to_ascii_lowercase();
    if w.contains("full") || w.contains("no space") || w.contains("quota") {
        "recording resumes when there is room (free space on that filesystem, or lower max_size, or give --store DIR)"
    } else if w.contains("read-only") || w.contains("readonly") || w.contains("permission") {
        "recording resumes when the directory is writable (or give --store DIR, or --no-store)"
    } else {
        "recording resumes when it can (or give --store DIR, or --no-store)"
    }
}

/// Inserts a block of `kind` holding the samples taken at `times`: their
/// times as deltas, then `payload` (the samples), compressed. Returns its
/// raw and stored sizes.
pub(super) fn insert_timed_block(
    tx: &Connection,
    kind: i64,
    key: bool,
    times: &[u64],
    payload: &[u8],
) -> rusqlite::Result<(u64, u64)> {
    let mut body = Vec::with_capacity(payload.len() + 4 * times.len() + 8);
    put_varint(&mut body, times.len() as u64);
    let mut last = 0;
    for t in times {
        put_delta(&mut body, last, *t);
        last = *t;
    }
    body.extend_from_slice(payload);
    let z = compress(&body);
    let (first, end) = (times[0], times[times.len() - 1]);
    exec(
        tx,
        "INSERT INTO block(kind, key, start_ms, end_ms, samples, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![kind, key, first as i64, end as i64, times.len() as i64, z],
    )?;
    Ok((body.len() as u64, z.len() as u64))
}

/// The rows of `cgroup` a walk at `ts` makes and closes: one for each
/// cgroup the day file has no open row of (made since the walk before
/// when `prev` holds that walk and not it: this run's last walk, else the
/// day file's open rows), `gone_ms` on the open rows of cgroups the walk
/// did not find. Returns the rows made.
pub(super) fn cgroup_rows(
    tx: &Connection,
    open: &mut Option<HashMap<u64, Arc<str>, Fast>>,
    prev: &mut Option<HashSet<u64, Fast>>,
    walk: &cgroups::Sample,
    ts: u64,
) -> rusqlite::Result<u64> {
    let open = match open {
        Some(o) => o,
        None => {
            let mut st = tx.prepare("SELECT cgroup_id, path FROM cgroup WHERE gone_ms IS NULL")?;
            let rows = st.query_map([], |r| {
                Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?))
            })?;
            let mut m = HashMap::default();
            for row in rows {
                let (id, path) = row?;
                m.insert(id, Arc::from(path));
            }
            // The file's last walk (this run's, or one before a restart).
            if prev.is_none() && !m.is_empty() {
                *prev = Some(m.keys().copied().collect());
            }
            open.insert(m)
        }
    };
    let now: HashMap<u64, &Arc<str>, Fast> = walk.cgroups.iter().map(|c| (c.id, &c.path)).collect();
    let gone: Vec<(u64, Arc<str>)> = open
        .iter()
        .filter(|(id, path)| now.get(*id).is_none_or(|p| *p != *path))
        .map(|(id, p)| (*id, p.clone()))
        .collect();
    for (id, path) in gone {
        exec(
            tx,
            "UPDATE cgroup SET gone_ms = ?3 WHERE cgroup_id = ?1 AND path = ?2 AND gone_ms IS NULL",
            params![id as i64, &*path, ts as i64],
        )?;
        open.remove(&id);
    }
    let mut made = 0;
    for c in &walk.cgroups {
        if open.contains_key(&c.id) {
            continue;
        }
        let new = prev.as_ref().is_some_and(|p| !p.contains(&c.id));
        made += exec(
            tx,
            "INSERT OR IGNORE INTO cgroup(cgroup_id, path, first_ms, made) VALUES (?1, ?2, ?3, ?4)",
            params![c.id as i64, &*c.path, ts as i64, new],
        )? as u64;
        open.insert(c.id, c.path.clone());
    }
    *prev = Some(now.into_keys().collect());
    Ok(made)
}

/// [`exit_identity`]'s query.
pub(super) const EXIT_IDENTITY: &str = "SELECT id FROM identity WHERE pid = ?1
    AND start_ticks BETWEEN ?2 - ?3 AND ?2 + ?3 AND exit_ms IS NULL
    ORDER BY abs(start_ticks - ?2) LIMIT 1";

/// The identity row an exit belongs to when its start time is not exact:
/// taskstats (the exit capture without BPF) gives it to within a second
/// either way ([`proctable::taskstats::START_WITHIN_TICKS`]; the agent
/// gives an exit the exact start of the table it was last seen in, but a
/// process that ended while the table that first showed it was being read
/// is not settled). The nearest row of that pid within that window that
/// has not ended: a process ends once, and a row that has is another
/// process's (one that took the pid within a second of its start).
pub(super) fn exit_identity(
    tx: &Connection,
    pid: u32,
    start_ticks: u64,
) -> rusqlite::Result<Option<u32>> {
    let within = proctable::taskstats::START_WITHIN_TICKS as i64;
    tx.prepare_cached(EXIT_IDENTITY)?
        .query_row(params![pid, start_ticks as i64, within], |r| {
            r.get::<_, u32>(0)
        })
        .optional()
}

/// [`identity_id`]'s lookup.
pub(super) const IDENTITY_OF: &str = "SELECT id FROM identity WHERE pid = ?1 AND start_ticks = ?2";

/// The id of the identity row for `s` in this day's file, added (with its
/// command line, read now) when missing.
pub(super) fn identity_id(
    tx: &Connection,
    s: &Static,
    seen_ms: u64,
    boot_ms: u64,
    proc_root: &Path,
) -> rusqlite::Result<u32> {
    if let Some(id) = tx
        .prepare_cached(IDENTITY_OF)?
        .query_row(params![s.pid, s.start_ticks as i64], |r| r.get::<_, u32>(0))
        .optional()?
    {
        return Ok(id);
    }
    let cmdline = (!proc_root.as_os_str().is_empty())
        .then(|| proctable::read_cmdline_of(proc_root, s.pid, s.start_ticks))
        .flatten();
    let start_ms = boot_ms + s.start_ticks * 10;
    exec(
        tx,
        "INSERT INTO identity(pid, start_ticks, start_ms, uid, cgroup_id, comm, cmdline, first_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            s.pid,
            s.start_ticks as i64,
            start_ms as i64,
            s.uid,
            s.cgroup_id.map(|g| g as i64),
            String::from_utf8_lossy(s.comm.as_bytes()),
            cmdline,
            (seen_ms > 0).then_some(seen_ms as i64)
        ],
    )?;
    Ok(tx.last_insert_rowid() as u32)
}
