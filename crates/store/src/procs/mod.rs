//! Process tables in the store: the journal's fixed rows, and the block
//! encoding keyed by identity (pid, start time): a keyframe lists every
//! live process; after it, a snapshot lists only the processes that were
//! born, changed (the changed fields, as deltas) or ended. An idle process
//! costs nothing between keyframes.

use std::collections::HashMap;

use procfs::pid::Comm;
use proctable::{Exit, Proc};

use crate::codec::{get_delta, get_varint, put_delta, put_varint};

mod delta;

pub use delta::*;

/// The dynamic fields stored per process: the words of
/// [`proctable::layout`] with a stored place (user and system CPU time,
/// faults, threads, sizes, state, nice and priority, storage bytes read and
/// written, parent pid; from format 2 the run delay and the delay
/// accounting's seven waits; from format 3 the TCP bytes received and
/// sent, GPU busy time and GPU memory). Their places are the format's: a
/// change needs a new format version.
pub const NV: usize = proctable::layout::STORED_WORDS;
const _: () = assert!(NV == 25, "the stored values are the format");
/// The values format 1 stored; its masks have [`NEW`] just above them.
const NV_1: usize = 13;
/// In a mask: the values are absolute (a birth, or a keyframe's row). Its
/// bit is format 1's (just above its 13 values), so that format 1's rows
/// read the same: the values later formats added take the bits above it,
/// in order, so that each format's rows read the same with the values
/// added after it absent.
const NEW: u64 = 1 << NV_1;
const ALL: u64 = {
    let mut m = 0;
    let mut i = 0;
    while i < NV {
        m |= bit(i);
        i += 1;
    }
    m
};

/// Value `i`'s bit in a row's mask.
const fn bit(i: usize) -> u64 {
    if i < NV_1 { 1 << i } else { 1 << (i + 1) }
}
pub type Values = [u64; NV];

/// What is stored once per process: its identity row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Static {
    pub pid: u32,
    pub start_ticks: u64,
    pub start_ns: u64,
    pub uid: Option<u32>,
    pub cgroup_id: Option<u64>,
    pub comm: Comm,
}

pub fn values(p: &Proc) -> Values {
    proctable::layout::put_stored(p)
}

/// A process row rebuilt from its identity and stored values: the fields
/// `model` derives from (those not stored are left at their defaults).
pub fn rebuild(s: &Static, v: &Values) -> Proc {
    let mut p = Proc {
        pid: s.pid,
        tgid: s.pid,
        comm: s.comm,
        start_ns: s.start_ns,
        start_ticks: s.start_ticks,
        cgroup_id: s.cgroup_id,
        uid: s.uid,
        ..Default::default()
    };
    proctable::layout::get_stored(&mut p, v);
    p
}

fn put_u32(o: &mut Vec<u8>, v: u32) {
    o.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(o: &mut Vec<u8>, v: u64) {
    o.extend_from_slice(&v.to_le_bytes());
}
fn put_comm(o: &mut Vec<u8>, c: &[u8]) {
    let c = &c[..c.len().min(15)];
    o.push(c.len() as u8);
    o.extend_from_slice(c);
    o.extend(std::iter::repeat_n(0, 15 - c.len()));
}

struct Cursor<'a>(&'a [u8]);
impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let (a, b) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn comm(&mut self) -> Option<Comm> {
        let b = self.take(16)?;
        Some(Comm::new(&b[1..1 + (b[0] as usize).min(15)]))
    }
}

const NONE32: u32 = u32::MAX;
const NONE64: u64 = u64::MAX;

/// A process table as a journal payload (fixed rows, no encoding work on
/// the sampling thread beyond the copy).
pub fn put_rows(out: &mut Vec<u8>, procs: &[Proc]) {
    out.clear();
    out.resize(rows_len(procs), 0);
    fill_rows(out, procs);
}

/// The bytes [`fill_rows`] writes.
pub fn rows_len(procs: &[Proc]) -> usize {
    procs.len() * ROW
}

/// Writes the rows into `dst` ([`rows_len`] bytes), each field at its
/// fixed place.
pub fn fill_rows(dst: &mut [u8], procs: &[Proc]) {
    for (p, d) in procs.iter().zip(dst.chunks_exact_mut(ROW)) {
        fill_row(d, p);
    }
}

/// One process's journal row.
fn fill_row(d: &mut [u8], p: &Proc) {
    d[0..4].copy_from_slice(&p.pid.to_le_bytes());
    d[4..12].copy_from_slice(&p.start_ticks.to_le_bytes());
    d[12..20].copy_from_slice(&p.start_ns.to_le_bytes());
    d[20..24].copy_from_slice(&p.uid.unwrap_or(NONE32).to_le_bytes());
    d[24..32].copy_from_slice(&p.cgroup_id.unwrap_or(NONE64).to_le_bytes());
    let c = p.comm.as_bytes();
    let c = &c[..c.len().min(15)];
    d[32] = c.len() as u8;
    d[33..33 + c.len()].copy_from_slice(c);
    d[33 + c.len()..48].fill(0);
    for (v, o) in values(p).iter().zip(d[48..].chunks_exact_mut(8)) {
        o.copy_from_slice(&v.to_le_bytes());
    }
}

/// The key (pid, start ticks) and values of a journal row, without its
/// fixed facts (read only for a process seen for the first time).
fn key_values(r: &[u8]) -> ((u32, u64), Values) {
    let mut v = [0; NV];
    for (x, b) in v.iter_mut().zip(r[48..].chunks_exact(8)) {
        *x = u64::from_le_bytes(b.try_into().unwrap_or_default());
    }
    (key_of(r), v)
}

const ROW: usize = 4 + 8 + 8 + 4 + 8 + 16 + NV * 8;

/// The rows of a [`put_rows`] payload.
pub fn rows(payload: &[u8]) -> impl Iterator<Item = (Static, Values)> + '_ {
    payload.chunks_exact(ROW).filter_map(|r| {
        let mut c = Cursor(r);
        let s = Static {
            pid: c.u32()?,
            start_ticks: c.u64()?,
            start_ns: c.u64()?,
            uid: Some(c.u32()?).filter(|u| *u != NONE32),
            cgroup_id: Some(c.u64()?).filter(|g| *g != NONE64),
            comm: c.comm()?,
        };
        let mut v = [0; NV];
        for x in &mut v {
            *x = c.u64()?;
        }
        Some((s, v))
    })
}

/// The identity of a journal row, or of a delta's identity gone: (pid,
/// start ticks), the order rows are kept in.
fn key_of(r: &[u8]) -> (u32, u64) {
    (
        u32::from_le_bytes(r[0..4].try_into().unwrap_or_default()),
        u64::from_le_bytes(r[4..12].try_into().unwrap_or_default()),
    )
}

/// Puts the rows of `rows` ([`fill_rows`] output) in identity order, in
/// place: the walk lists processes in pid order already, so this is a
/// check unless a backend did not.
pub fn sort_rows(rows: &mut Vec<u8>, spare: &mut Vec<u8>) {
    if in_order(rows) {
        return;
    }
    let mut order: Vec<((u32, u64), usize)> = rows
        .chunks_exact(ROW)
        .enumerate()
        .map(|(i, r)| (key_of(r), i))
        .collect();
    order.sort_unstable();
    spare.clear();
    for (_, i) in order {
        spare.extend_from_slice(&rows[i * ROW..(i + 1) * ROW]);
    }
    std::mem::swap(rows, spare);
}

/// Whether processes are listed in pid order (as the walk lists them).
pub fn in_pid_order(procs: &[Proc]) -> bool {
    procs.windows(2).all(|w| w[0].pid < w[1].pid)
}

/// Whether the rows are in identity order.
fn in_order(rows: &[u8]) -> bool {
    rows.chunks_exact(ROW).map(key_of).is_sorted()
}

/// Exits as a journal payload.
pub fn put_exits(out: &mut Vec<u8>, exits: &[Exit]) {
    out.clear();
    for e in exits {
        put_u32(out, e.pid);
        put_u32(out, e.ppid);
        put_u64(out, e.start_ticks);
        put_u64(out, e.start_ns);
        put_u64(out, e.exit_ns);
        put_u64(out, e.utime_ns);
        put_u64(out, e.stime_ns);
        put_u64(out, e.maxrss_bytes);
        put_u32(out, e.exit_status as u32);
        put_comm(out, e.comm.as_bytes());
    }
}

const EXIT_ROW: usize = 4 + 4 + 8 * 6 + 4 + 16;

pub fn exits(payload: &[u8]) -> impl Iterator<Item = Exit> + '_ {
    payload.chunks_exact(EXIT_ROW).filter_map(|r| {
        let mut c = Cursor(r);
        Some(Exit {
            pid: c.u32()?,
            ppid: c.u32()?,
            start_ticks: c.u64()?,
            start_ns: c.u64()?,
            exit_ns: c.u64()?,
            utime_ns: c.u64()?,
            stime_ns: c.u64()?,
            maxrss_bytes: c.u64()?,
            exit_status: c.u32()? as i32,
            comm: c.comm()?,
            ..Default::default()
        })
    })
}

/// What the encoder learned from one snapshot, for the identity table.
#[derive(Debug, Default)]
pub struct Changes {
    /// New identities (each given its id by the caller).
    pub born: usize,
    /// Identities gone since the previous snapshot.
    pub gone: Vec<u32>,
}

/// The writer's side: the stored id of each live identity. The values it
/// last stored are the journal chain's table before the one encoded
/// ([`Chain::rows`]), so an idle process costs neither memory here nor
/// work: a table is encoded from its delta.
#[derive(Default)]
pub struct Encoder {
    live: HashMap<(u32, u64), u32, std::hash::BuildHasherDefault<IdHasher>>,
    /// The changes of one snapshot, reused.
    body: Vec<u8>,
}

impl Encoder {
    /// Forgets everything (a new day file, or a write that failed).
    pub fn reset(&mut self) {
        self.live.clear();
    }

    /// Whether nothing is known: the next table must be a keyframe.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// The id of a live identity, if stored.
    pub fn id_of(&self, pid: u32, start_ticks: u64) -> Option<u32> {
        self.live.get(&(pid, start_ticks)).copied()
    }

    fn id_or_new(
        &mut self,
        r: &[u8],
        identify: &mut dyn FnMut(&Static) -> u32,
        ch: &mut Changes,
    ) -> Option<(u32, bool)> {
        let k = key_of(r);
        if let Some(id) = self.live.get(&k) {
            return Some((*id, false));
        }
        let (s, _) = rows(r).next()?;
        let id = identify(&s);
        self.live.insert(k, id);
        ch.born += 1;
        Some((id, true))
    }

    /// A keyframe: every process of `table` (journal rows in identity
    /// order) with its values whole; identities not in it have gone.
    pub fn encode_key(
        &mut self,
        table: &[u8],
        out: &mut Vec<u8>,
        identify: &mut dyn FnMut(&Static) -> u32,
    ) -> Changes {
        let mut ch = Changes::default();
        out.push(1);
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        let mut n = 0u64;
        let mut seen: HashMap<(u32, u64), u32, std::hash::BuildHasherDefault<IdHasher>> =
            HashMap::with_capacity_and_hasher(table.len() / ROW, Default::default());
        for r in table.chunks_exact(ROW) {
            let Some((id, _)) = self.id_or_new(r, identify, &mut ch) else {
                continue;
            };
            seen.insert(key_of(r), id);
            put_varint(&mut body, u64::from(id));
            put_whole(&mut body, &key_values(r).1);
            n += 1;
        }
        ch.gone = self
            .live
            .iter()
            .filter(|(k, _)| !seen.contains_key(k))
            .map(|(_, id)| *id)
            .collect();
        self.live = seen;
        self.finish(out, body, n, &mut ch);
        ch
    }

    /// What changed from `old` (the table before, journal rows in identity
    /// order) by `delta` ([`put_delta_rows`]): the changed fields of each
    /// changed row as deltas, births whole, and the identities gone.
    pub fn encode_delta(
        &mut self,
        old: &[u8],
        delta: &[u8],
        out: &mut Vec<u8>,
        identify: &mut dyn FnMut(&Static) -> u32,
    ) -> Changes {
        let mut ch = Changes::default();
        out.push(0);
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        let mut n = 0u64;
        let (changed, gone) = delta_parts(delta).unwrap_or((&[], &[]));
        for r in changed.chunks_exact(ROW) {
            let Some((id, born)) = self.id_or_new(r, identify, &mut ch) else {
                continue;
            };
            let (k, v) = key_values(r);
            let before = match search(old, k) {
                Ok(i) if !born => Some(key_values(&old[i * ROW..(i + 1) * ROW]).1),
                _ => None,
            };
            put_varint(&mut body, u64::from(id));
            match before {
                Some(b) => {
                    let mask = (0..NV).fold(0u64, |m, i| m | if b[i] != v[i] { bit(i) } else { 0 });
                    put_varint(&mut body, mask);
                    for i in (0..NV).filter(|&i| mask & bit(i) != 0) {
                        put_delta(&mut body, b[i], v[i]);
                    }
                }
                None => put_whole(&mut body, &v),
            }
            n += 1;
        }
        for k in gone_keys(gone) {
            if let Some(id) = self.live.remove(&k) {
                ch.gone.push(id);
            }
        }
        self.finish(out, body, n, &mut ch);
        ch
    }

    fn finish(&mut self, out: &mut Vec<u8>, body: Vec<u8>, n: u64, ch: &mut Changes) {
        put_varint(out, n);
        out.extend_from_slice(&body);
        self.body = body;
        ch.gone.sort_unstable();
        put_varint(out, ch.gone.len() as u64);
        for id in &ch.gone {
            put_varint(out, u64::from(*id));
        }
    }
}

/// A row's values whole (a birth, or a keyframe's row).
fn put_whole(body: &mut Vec<u8>, v: &Values) {
    put_varint(body, NEW | ALL);
    for x in v {
        put_delta(body, 0, *x);
    }
}

/// Hashes identity ids and (pid, start time) keys: a multiply per word.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | u64::from(*b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(29) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A map keyed by identity id.
pub type IdMap<V> = HashMap<u32, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The reader's side: the values per id as of the last decoded snapshot.
#[derive(Default, Clone)]
pub struct Decoder {
    pub live: IdMap<Values>,
}

impl Decoder {
    /// Applies one encoded snapshot at `*pos`; `None` if malformed.
    pub fn apply(&mut self, b: &[u8], pos: &mut usize) -> Option<()> {
        let key = *b.get(*pos)? == 1;
        *pos += 1;
        if key {
            self.live.clear();
        }
        let n = get_varint(b, pos)?;
        for _ in 0..n {
            let id = u32::try_from(get_varint(b, pos)?).ok()?;
            let mask = get_varint(b, pos)?;
            let v = self.live.entry(id).or_insert([0; NV]);
            if mask & NEW != 0 {
                *v = [0; NV];
            }
            for (i, x) in v.iter_mut().enumerate() {
                if mask & bit(i) != 0 {
                    *x = get_delta(b, pos, *x)?;
                }
            }
        }
        let gone = get_varint(b, pos)?;
        for _ in 0..gone {
            let id = u32::try_from(get_varint(b, pos)?).ok()?;
            self.live.remove(&id);
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_changed_in_any_one_word_hashes_differently() {
        let mut row = [0u8; ROW];
        fill_row(&mut row, &p(42, 7, 1_000));
        for seed in [[0, 0], [1, u64::MAX], Seen::new().seed] {
            let h = row_hash(seed, &row);
            for w in 0..ROW / 8 {
                for x in [1u64, 1 << 63, 0x5555_5555_5555_5555, u64::MAX, 3 << 40] {
                    let mut r = row;
                    for (b, m) in r[w * 8..w * 8 + 8].iter_mut().zip(x.to_le_bytes()) {
                        *b ^= m;
                    }
                    assert_ne!(row_hash(seed, &r), h, "word {w} xor {x:#x}");
                }
            }
        }
    }

    fn p(pid: u32, start: u64, utime: u64) -> Proc {
        Proc {
            pid,
            tgid: pid,
            ppid: 1,
            comm: Comm::new(b"worker"),
            state: 'S',
            start_ticks: start,
            utime_ns: utime,
            rss_bytes: 4096,
            nice: -5,
            priority: 15,
            uid: Some(1000),
            ..Default::default()
        }
    }

    /// `tables` encoded in turn, the first a keyframe: the body, each
    /// identity's facts by the id it was given, and each table's bytes.
    fn encode_tables(tables: &[Vec<Proc>]) -> (Vec<u8>, IdMap<Static>, Vec<usize>) {
        let mut enc = Encoder::default();
        let mut next = 0;
        let mut statics = IdMap::default();
        let mut body = Vec::new();
        let mut sizes = Vec::new();
        let mut old = Vec::new();
        for (i, t) in tables.iter().enumerate() {
            let mut rows = Vec::new();
            put_rows(&mut rows, t);
            let before = body.len();
            let mut identify = |s: &Static| {
                next += 1;
                statics.insert(next, s.clone());
                next
            };
            if i == 0 {
                enc.encode_key(&rows, &mut body, &mut identify);
            } else {
                let mut delta = Vec::new();
                put_delta_rows(&mut delta, 0, &old, &rows);
                enc.encode_delta(&old, &delta, &mut body, &mut identify);
            }
            old = rows;
            sizes.push(body.len() - before);
        }
        (body, statics, sizes)
    }

    /// A format 1 day file's process blocks (13 values, the absolute mark
    /// just above them) read the same with format 2's decoder: the values
    /// format 2 added are absent.
    #[test]
    fn format_1_rows_read_the_same_with_the_waits_absent() {
        let old: Vec<u64> = (0..NV_1 as u64).map(|i| 100 + i).collect();
        let mut b = vec![1];
        put_varint(&mut b, 1);
        put_varint(&mut b, 5);
        put_varint(&mut b, 1 << NV_1 | ((1 << NV_1) - 1));
        for x in &old {
            put_delta(&mut b, 0, *x);
        }
        put_varint(&mut b, 0);
        // Then a change of value 0 and of value 12 only.
        b.push(0);
        put_varint(&mut b, 1);
        put_varint(&mut b, 5);
        put_varint(&mut b, 1 | 1 << 12);
        put_delta(&mut b, 100, 150);
        put_delta(&mut b, 112, 90);
        put_varint(&mut b, 0);
        let mut dec = Decoder::default();
        let mut pos = 0;
        dec.apply(&b, &mut pos).unwrap();
        assert_eq!(dec.live[&5][..NV_1], old[..]);
        assert!(dec.live[&5][NV_1..].iter().all(|v| *v == 0));
        dec.apply(&b, &mut pos).unwrap();
        assert_eq!(pos, b.len());
        let v = dec.live[&5];
        assert_eq!((v[0], v[1], v[12]), (150, 101, 90));
        let p = rebuild(&Static::default(), &v);
        assert_eq!((p.sched, p.delays, p.net, p.gpu), (None, None, None, None));
    }

    /// The run delay, the delay accounting's waits, the TCP bytes and the
    /// GPU use come back from the store, and a change of one of them alone
    /// is stored as that change.
    #[test]
    fn the_waits_come_back_from_the_store() {
        let with = |blkio: u64| Proc {
            sched: Some(procfs::pid::SchedInfo {
                run_delay_ns: 7_000,
                timeslices: 0,
            }),
            delays: Some(proctable::Delays {
                blkio_ns: blkio,
                irq_ns: 3,
                ..Default::default()
            }),
            net: Some(proctable::NetBytes {
                rx_bytes: 1 << 40,
                tx_bytes: 0,
            }),
            gpu: Some(proctable::Gpu {
                busy_ns: 5_000_000,
                mem_bytes: 1 << 30,
                // Not stored: a table's clients are its own.
                clients: 0,
            }),
            ..p(10, 1, 5)
        };
        let tables = [vec![with(1_000)], vec![with(9_000_000)]];
        let (body, statics, sizes) = encode_tables(&tables);
        // The second: its kind and count, the id, a mask of two bytes
        // (the bit is past the seventh), one delta of up to five bytes and
        // the empty gone list.
        assert!(sizes[1] <= 12 && sizes[1] < sizes[0] / 2, "{sizes:?}");
        let mut dec = Decoder::default();
        let mut pos = 0;
        for t in &tables {
            dec.apply(&body, &mut pos).unwrap();
            let got = rebuild(&statics[&1], &dec.live[&1]);
            assert_eq!(got.sched, t[0].sched);
            assert_eq!(got.delays, t[0].delays);
            assert_eq!(got.net, t[0].net);
            assert_eq!(got.gpu, t[0].gpu);
        }
    }

    #[test]
    fn tables_come_back_by_identity_with_only_changes_between_keyframes() {
        let tables = [
            vec![p(10, 1, 0), p(11, 2, 5)],
            // 10 changed, 11 idle, 12 born.
            vec![p(10, 1, 7), p(11, 2, 5), p(12, 3, 0)],
            // 11 ended; pid 12 reused by another process (new start).
            vec![p(10, 1, 7), p(12, 9, 1)],
        ];
        let (body, statics, sizes) = encode_tables(&tables);
        // The idle process costs nothing in the second table.
        assert!(sizes[1] < sizes[0] + 8, "{sizes:?}");
        let mut dec = Decoder::default();
        let mut pos = 0;
        for t in &tables {
            dec.apply(&body, &mut pos).unwrap();
            let mut got: Vec<Proc> = dec
                .live
                .iter()
                .map(|(id, v)| rebuild(&statics[id], v))
                .collect();
            got.sort_by_key(|p| (p.pid, p.start_ticks));
            assert_eq!(got.len(), t.len());
            for (g, w) in got.iter().zip(t) {
                assert_eq!(
                    (g.pid, g.start_ticks, g.utime_ns, g.nice, g.priority, g.uid),
                    (w.pid, w.start_ticks, w.utime_ns, w.nice, w.priority, w.uid)
                );
                assert_eq!(g.comm, w.comm);
            }
        }
        assert_eq!(pos, body.len());
        // Pid 12 is two identities.
        assert_eq!(statics.values().filter(|s| s.pid == 12).count(), 2);
    }
}
