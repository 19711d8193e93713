//! A process table in the journal as what changed since the last one:
//! rows hashed to tell which changed, births and ends, applied back in
//! order.

use super::*;

/// A delta from the table `old` to the table `new` (both [`fill_rows`]
/// rows in identity order) as a journal payload: `base seq | n | the rows
/// born or changed | the identities gone`. An idle process costs nothing.
pub fn put_delta_rows(out: &mut Vec<u8>, base: u64, old: &[u8], new: &[u8]) {
    let new = new.chunks_exact(ROW).map(|r| (row_of(r), ()));
    put_table_delta(
        out,
        base,
        old.chunks_exact(ROW),
        key_of,
        |o, r, _| o == &r[..],
        new,
        |()| {},
    );
}

pub(super) fn row_of(r: &[u8]) -> [u8; ROW] {
    r.try_into().unwrap_or([0; ROW])
}

/// What the sampler keeps of the last table it gave, to tell what changed
/// in the next: each row's identity and a hash of the row (24 bytes a
/// process, not the row's 248). A row that differs from the last in
/// one 8-byte word always hashes differently (each step of the hash is a
/// bijection of its state); rows differing in several words could collide,
/// which would leave that process's recorded values at their earlier ones
/// until it next changes. The hash's seed is drawn when the `Seen` is
/// made (once per agent).
#[derive(Debug, Default)]
pub struct Seen {
    pub(super) marks: Vec<Mark>,
    /// The next table's marks, made while the last's are compared.
    pub(super) next: Vec<Mark>,
    pub(super) seed: [u64; 2],
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Mark {
    pub(super) start_ticks: u64,
    pub(super) hash: u64,
    pub(super) pid: u32,
}

impl Mark {
    pub(super) fn key(&self) -> (u32, u64) {
        (self.pid, self.start_ticks)
    }
}

impl Seen {
    pub fn new() -> Seen {
        use std::hash::BuildHasher;
        let r = std::collections::hash_map::RandomState::new();
        Seen {
            seed: [r.hash_one(1u8), r.hash_one(2u8)],
            ..Seen::default()
        }
    }

    /// The processes of the table kept.
    pub fn len(&self) -> usize {
        self.marks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    pub(super) fn mark(&self, r: &[u8; ROW]) -> Mark {
        let (pid, start_ticks) = key_of(r);
        Mark {
            pid,
            start_ticks,
            hash: row_hash(self.seed, r),
        }
    }

    /// Keeps the table `rows` ([`fill_rows`] rows in identity order) in
    /// place of the last.
    pub fn keep(&mut self, rows: &[u8]) {
        let mut marks = std::mem::take(&mut self.marks);
        marks.clear();
        marks.extend(rows.chunks_exact(ROW).map(|r| self.mark(&row_of(r))));
        self.marks = marks;
    }

    /// Forgets the table kept: the next one goes whole.
    pub fn forget(&mut self) {
        self.marks.clear();
    }

    /// The delta from the table kept to `procs` in pid order (as the walk
    /// lists them, each made a row only to be hashed), which is kept in its
    /// place. `None` (`out` unspecified, the table kept unchanged)
    /// when `procs` are not in pid order.
    pub fn put_delta_procs(&mut self, out: &mut Vec<u8>, base: u64, procs: &[Proc]) -> Option<()> {
        if !in_pid_order(procs) {
            return None;
        }
        let new = procs.iter().map(|p| {
            let mut r = [0; ROW];
            fill_row(&mut r, p);
            r
        });
        self.put_delta(out, base, new);
        Some(())
    }

    /// As [`put_delta_rows`], from the table kept to `rows` ([`fill_rows`]
    /// rows in identity order), which is kept in its place.
    pub fn put_delta_rows(&mut self, out: &mut Vec<u8>, base: u64, rows: &[u8]) {
        self.put_delta(out, base, rows.chunks_exact(ROW).map(row_of));
    }

    pub(super) fn put_delta(
        &mut self,
        out: &mut Vec<u8>,
        base: u64,
        new: impl Iterator<Item = [u8; ROW]>,
    ) {
        let mut next = std::mem::take(&mut self.next);
        next.clear();
        let old = std::mem::take(&mut self.marks);
        // Each row hashed once: compared with the old mark, then kept.
        put_table_delta(
            out,
            base,
            old.iter(),
            Mark::key,
            |o, _, m: &Mark| o.hash == m.hash,
            new.map(|r| {
                let m = self.mark(&r);
                (r, m)
            }),
            |m| next.push(m),
        );
        self.marks = next;
        self.next = old;
    }
}

/// The hash [`Seen`] keeps of a row: two chains over alternate words, each
/// step `(h ^ word) * odd`, a bijection of `h` for a given word.
pub(super) fn row_hash(seed: [u64; 2], r: &[u8; ROW]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = seed;
    for (i, w) in r.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
        h[i & 1] = (h[i & 1] ^ w).wrapping_mul(K);
    }
    h[0] ^ h[1].rotate_left(32)
}

/// The delta from the `old` table (anything with a key in identity order,
/// `same` telling an unchanged row) to the rows `new`, each with what the
/// caller made of it (`M`: a hash, or nothing), which `kept` then takes.
pub(super) fn put_table_delta<O: Copy, M>(
    out: &mut Vec<u8>,
    base: u64,
    old: impl Iterator<Item = O>,
    key: impl Fn(O) -> (u32, u64),
    same: impl Fn(O, &[u8; ROW], &M) -> bool,
    new: impl Iterator<Item = ([u8; ROW], M)>,
    mut kept: impl FnMut(M),
) {
    out.clear();
    put_u64(out, base);
    put_u32(out, 0);
    let mut gone = Vec::new();
    let mut a = old.peekable();
    let mut n = 0u32;
    for (r, m) in new {
        let k = key_of(&r);
        while let Some(o) = a.next_if(|o| key(*o) < k) {
            gone.push(key(o));
        }
        match a.next_if(|o| key(*o) == k) {
            Some(o) if same(o, &r, &m) => {}
            _ => {
                out.extend_from_slice(&r);
                n += 1;
            }
        }
        kept(m);
    }
    gone.extend(a.map(key));
    out[8..12].copy_from_slice(&n.to_le_bytes());
    for (pid, start) in gone {
        put_u32(out, pid);
        put_u64(out, start);
    }
}

/// The sequence number of the table a delta applies to.
pub fn delta_base(payload: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(payload.get(..8)?.try_into().ok()?))
}

/// The rows born or changed and the identities gone of a delta payload,
/// checked for size.
pub(super) fn delta_parts(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = u32::from_le_bytes(payload.get(8..12)?.try_into().ok()?) as usize;
    let rows_end = n.checked_mul(ROW)?.checked_add(12)?;
    let changed = payload.get(12..rows_end)?;
    let gone = payload.get(rows_end..)?;
    (gone.len() % 12 == 0).then_some((changed, gone))
}

pub(super) fn gone_keys(gone: &[u8]) -> impl Iterator<Item = (u32, u64)> + '_ {
    gone.chunks_exact(12).map(key_of)
}

/// Applies a [`put_delta_rows`] payload to the table `rows` in place, with
/// no second table: the identities gone are removed in one pass forward,
/// changed rows overwritten where they are, and births moved in from the
/// back in one pass. `None` (and `rows` untouched) when the payload is
/// not a delta.
pub fn apply_delta_rows(rows: &mut Vec<u8>, payload: &[u8]) -> Option<()> {
    let (changed, gone) = delta_parts(payload)?;
    rows.truncate(rows.len() / ROW * ROW);
    // Ends: compact forward.
    let mut gone = gone_keys(gone).peekable();
    let mut w = 0;
    for r in 0..rows.len() / ROW {
        let k = key_of(&rows[r * ROW..]);
        while gone.next_if(|g| *g < k).is_some() {}
        if gone.next_if(|g| *g == k).is_some() {
            continue;
        }
        if w != r {
            rows.copy_within(r * ROW..(r + 1) * ROW, w * ROW);
        }
        w += 1;
    }
    rows.truncate(w * ROW);
    // Changes in place; births noted.
    let mut births = Vec::new();
    for (i, c) in changed.chunks_exact(ROW).enumerate() {
        let k = key_of(c);
        match search(rows, k) {
            Ok(at) => rows[at * ROW..(at + 1) * ROW].copy_from_slice(c),
            Err(_) => births.push(i),
        }
    }
    // Births: merge from the back, each old row moved at most once.
    let old = rows.len() / ROW;
    rows.resize((old + births.len()) * ROW, 0);
    let (mut i, mut k) = (old, old + births.len());
    for &b in births.iter().rev() {
        let born = &changed[b * ROW..(b + 1) * ROW];
        let bk = key_of(born);
        while i > 0 && key_of(&rows[(i - 1) * ROW..]) > bk {
            i -= 1;
            k -= 1;
            rows.copy_within(i * ROW..(i + 1) * ROW, k * ROW);
        }
        k -= 1;
        rows[k * ROW..(k + 1) * ROW].copy_from_slice(born);
    }
    Some(())
}

/// The row of identity `k` in `rows` (in identity order), or where it
/// would go.
pub(super) fn search(rows: &[u8], k: (u32, u64)) -> Result<usize, usize> {
    let (mut lo, mut hi) = (0, rows.len() / ROW);
    while lo < hi {
        let mid = (lo + hi) / 2;
        match key_of(&rows[mid * ROW..]).cmp(&k) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(mid),
        }
    }
    Err(lo)
}

/// Rebuilds whole tables from a journal's process records: a whole table
/// ([`crate::journal::Kind::Procs`]), then deltas, each applying to the
/// record before it. Fed records in journal order; one it has already
/// applied (a sequence number not above its own) is passed over.
#[derive(Default)]
pub struct Chain {
    /// The sequence number of the table in `rows`; `None`: no table.
    pub(super) seq: Option<u64>,
    pub(super) rows: Vec<u8>,
}

impl Chain {
    /// Feeds one record: the whole table it gives, if it gives one (not
    /// for a record already applied, nor for a delta whose table is gone).
    pub fn feed(&mut self, kind: crate::journal::Kind, seq: u64, payload: &[u8]) -> Option<&[u8]> {
        if !self.accepts(kind, seq, payload) {
            return None;
        }
        self.commit(kind, seq, payload);
        self.seq.map(|_| &self.rows[..])
    }

    /// Whether record `seq` gives a table: a process record not yet
    /// applied, a delta only onto the table it names (one whose table is
    /// gone makes the chain forget its table until the next whole one).
    pub fn accepts(&mut self, kind: crate::journal::Kind, seq: u64, payload: &[u8]) -> bool {
        if self.seq.is_some_and(|s| seq <= s) {
            return false;
        }
        match kind {
            crate::journal::Kind::Procs => true,
            crate::journal::Kind::ProcsDelta => {
                let ok = self.seq.is_some()
                    && delta_base(payload) == self.seq
                    && delta_parts(payload).is_some();
                if !ok {
                    self.seq = None;
                }
                ok
            }
            _ => false,
        }
    }

    /// For a record [`Chain::accepts`]: the delta it makes from the table
    /// held ([`Chain::rows`]): the payload itself for a delta, one made
    /// into `buf` for a whole table.
    pub fn delta_of<'a>(
        &self,
        kind: crate::journal::Kind,
        payload: &'a [u8],
        buf: &'a mut Vec<u8>,
    ) -> &'a [u8] {
        if kind != crate::journal::Kind::Procs {
            return payload;
        }
        let whole = &payload[..payload.len() / ROW * ROW];
        let sorted;
        let whole = if in_order(whole) {
            whole
        } else {
            let mut v = whole.to_vec();
            sort_rows(&mut v, &mut Vec::new());
            sorted = v;
            &sorted[..]
        };
        put_delta_rows(buf, self.seq.unwrap_or(0), self.rows(), whole);
        buf
    }

    /// For a record [`Chain::accepts`]: applied to the table held.
    pub fn commit(&mut self, kind: crate::journal::Kind, seq: u64, payload: &[u8]) {
        match kind {
            crate::journal::Kind::Procs => {
                self.rows.clear();
                self.rows
                    .extend_from_slice(&payload[..payload.len() / ROW * ROW]);
                sort_rows(&mut self.rows, &mut Vec::new());
            }
            crate::journal::Kind::ProcsDelta => {
                if apply_delta_rows(&mut self.rows, payload).is_none() {
                    self.seq = None;
                    return;
                }
            }
            _ => return,
        }
        self.seq = Some(seq);
    }

    /// The table held (journal rows in identity order); empty when none.
    pub fn rows(&self) -> &[u8] {
        if self.seq.is_some() { &self.rows } else { &[] }
    }

    /// Forgets the table (the writer's run ahead of what was committed):
    /// the next feeding rebuilds it from the journal's whole table.
    pub fn forget(&mut self) {
        self.seq = None;
    }
}
