//! Cgroup walks in the history: each walk as what changed since the walk
//! before it in the chain (the cgroups gone, the figures that changed as
//! deltas, the cgroups new since, whole), so an idle cgroup costs nothing
//! after the chain's first walk. A chain's first walk (a keyframe, and
//! every journal record, which stands alone) names its figures, so a
//! build that adds, drops or reorders figures reads older walks by name.
//!
//! A walk: `key (u8)`, on a key the figure names (`n`, then each as
//! bytes), then `left_out`, `errors`, the ids gone (count, then ascending
//! as deltas), the cgroups changed (count, then ascending by id: the id as
//! a delta, a mask of the figures that changed, each one's delta), the
//! cgroups new (count, then each: the id as a delta, the path, a mask of
//! the figures present, each one's value). Varints throughout, deltas
//! wrapping (any order reads back; ascending ids make them short); a
//! cgroup whose path changed (a rename keeps its id) is gone and new.

use std::collections::HashMap;
use std::sync::Arc;

use foldhash::fast::RandomState as Fast;

use cgroups::{Cgroup, Figure, Figures, Sample};

use crate::codec::{get_bytes, get_delta, get_varint, put_bytes, put_delta, put_varint};

/// Absent, in [`Figures::words`].
const NONE: u64 = u64::MAX;

/// At most this many figures a walk names (a mask is one `u64`).
const MAX_FIGURES: usize = 64;
const _: () = assert!(Figure::COUNT <= MAX_FIGURES);

/// At most this many cgroups in a walk read back (the reader's own cap is
/// 100,000): a damaged walk cannot make memory grow without bound.
const MAX_CGROUPS: u64 = 1 << 20;

/// The writer's (and the sampler's) side: the last walk's figures by id.
#[derive(Default)]
pub struct Encoder {
    live: HashMap<u64, (Arc<str>, [u64; Figure::COUNT]), Fast>,
    /// The ids of the walk being encoded, sorted (reused).
    ids: Vec<u64>,
}

impl Encoder {
    /// Forgets the last walk: the next one is whole.
    pub fn reset(&mut self) {
        self.live.clear();
    }

    /// Appends `s` to `out`: whole when `key` or after
    /// [`Encoder::reset`], else what changed since the walk encoded before.
    pub fn encode(&mut self, s: &Sample, key: bool, out: &mut Vec<u8>) {
        let key = key || self.live.is_empty();
        let by_id: HashMap<u64, &Cgroup, Fast> = s.cgroups.iter().map(|c| (c.id, c)).collect();
        // Gone: not in this walk, or under another path.
        let mut gone: Vec<u64> = self
            .live
            .iter()
            .filter(|(id, (path, _))| by_id.get(*id).is_none_or(|c| c.path != *path))
            .map(|(id, _)| *id)
            .collect();
        gone.sort_unstable();
        for id in &gone {
            self.live.remove(id);
        }
        self.ids.clear();
        self.ids.extend(by_id.keys());
        self.ids.sort_unstable();
        put_head(out, key, s);
        if !key {
            put_varint(out, gone.len() as u64);
            let mut last = 0;
            for id in gone {
                put_delta(out, last, id);
                last = id;
            }
            // Changed: known before, some word different.
            let changed: Vec<(u64, u64)> = self
                .ids
                .iter()
                .filter_map(|id| {
                    let (_, old) = self.live.get(id)?;
                    let new = by_id[id].figures.words();
                    let mask = mask_of(|i| old[i] != new[i]);
                    Some((*id, mask))
                })
                .filter(|(_, mask)| *mask != 0)
                .collect();
            put_varint(out, changed.len() as u64);
            let mut last = 0;
            for (id, mask) in changed {
                put_delta(out, last, id);
                last = id;
                put_varint(out, mask);
                let (_, old) = &self.live[&id];
                let new = by_id[&id].figures.words();
                for i in bits(mask) {
                    put_delta(out, old[i], new[i]);
                }
            }
        }
        // New: every cgroup on a key, else those not known before.
        let live = &self.live;
        let born: Vec<u64> = self
            .ids
            .iter()
            .copied()
            .filter(|id| key || !live.contains_key(id))
            .collect();
        put_varint(out, born.len() as u64);
        let mut last = 0;
        for id in born {
            put_new(out, &mut last, by_id[&id]);
        }
        // Room for the walk at once: grown one cgroup at a time, the map
        // would hold its old table beside the new one at each doubling (a
        // first walk of 10,000 cgroups peaked at 7 MB, not 5).
        self.live
            .reserve(s.cgroups.len().saturating_sub(self.live.len()));
        for c in &s.cgroups {
            match self.live.get_mut(&c.id) {
                Some((_, words)) => *words = *c.figures.words(),
                None => {
                    self.live.insert(c.id, (c.path.clone(), *c.figures.words()));
                }
            }
        }
    }
}

/// `s` whole, standing alone: a journal record (in the walk's order: no
/// map, no sort on the sampler's thread).
pub fn put_whole(out: &mut Vec<u8>, s: &Sample) {
    put_head(out, true, s);
    put_varint(out, s.cgroups.len() as u64);
    let mut last = 0;
    for c in &s.cgroups {
        put_new(out, &mut last, c);
    }
}

/// A walk's head: whether it is a keyframe (then the figure names), and
/// on a keyframe no cgroup gone or changed.
fn put_head(out: &mut Vec<u8>, key: bool, s: &Sample) {
    out.push(u8::from(key));
    if key {
        put_varint(out, Figure::COUNT as u64);
        for f in Figure::ALL {
            put_bytes(out, f.name().as_bytes());
        }
    }
    put_varint(out, s.left_out);
    put_varint(out, s.errors);
    if key {
        put_varint(out, 0);
        put_varint(out, 0);
    }
}

/// A new cgroup: its id as a delta from the one before, its path and the
/// figures it has.
fn put_new(out: &mut Vec<u8>, last: &mut u64, c: &Cgroup) {
    put_delta(out, *last, c.id);
    *last = c.id;
    put_bytes(out, c.path.as_bytes());
    let w = c.figures.words();
    let mask = mask_of(|i| w[i] != NONE);
    put_varint(out, mask);
    for i in bits(mask) {
        put_varint(out, w[i]);
    }
}

fn mask_of(f: impl Fn(usize) -> bool) -> u64 {
    (0..Figure::COUNT)
        .filter(|i| f(*i))
        .fold(0, |m, i| m | 1 << i)
}

fn bits(mask: u64) -> impl Iterator<Item = usize> {
    (0..MAX_FIGURES).filter(move |i| mask & (1 << i) != 0)
}

/// A keyframe's figure names ([`put_head`]), each as this build knows it
/// (`None`: one it does not).
fn get_names(b: &[u8], pos: &mut usize) -> Option<Vec<Option<Figure>>> {
    let n = get_varint(b, pos)?;
    if n as usize > MAX_FIGURES {
        return None;
    }
    (0..n)
        .map(|_| {
            Some(Figure::from_name(
                std::str::from_utf8(get_bytes(b, pos)?).ok()?,
            ))
        })
        .collect()
}

/// A new cgroup ([`put_new`]): its id, a delta from `*id` (updated), and
/// its path; each figure present is given to `set` by its place among the
/// chain's `width` names. `None` when damaged.
fn get_new<'a>(
    b: &'a [u8],
    pos: &mut usize,
    id: &mut u64,
    width: usize,
    mut set: impl FnMut(usize, u64),
) -> Option<&'a str> {
    *id = get_delta(b, pos, *id)?;
    let path = std::str::from_utf8(get_bytes(b, pos)?).ok()?;
    let mask = get_varint(b, pos)?;
    (width == MAX_FIGURES || mask >> width == 0).then_some(())?;
    for i in bits(mask) {
        set(i, get_varint(b, pos)?);
    }
    Some(path)
}

/// The reading side: a chain's walks applied one after another.
#[derive(Default, Clone)]
pub struct Decoder {
    /// The chain's figures, by their place in its walks (one this build
    /// does not know: `None`, its values dropped).
    figures: Vec<Option<Figure>>,
    /// The cgroups of the last walk, by id: path and words in the chain's
    /// order of figures.
    live: HashMap<u64, (Arc<str>, Vec<u64>)>,
    left_out: u64,
    errors: u64,
}

impl Decoder {
    /// Whether a walk has been applied since the chain began.
    pub fn is_empty(&self) -> bool {
        self.figures.is_empty()
    }

    /// Applies the walk at `b[*pos..]`; `None` (the decoder then holds no
    /// walk) when it is damaged or follows no keyframe.
    pub fn apply(&mut self, b: &[u8], pos: &mut usize) -> Option<()> {
        let r = self.apply_inner(b, pos);
        if r.is_none() {
            *self = Decoder::default();
        }
        r
    }

    fn apply_inner(&mut self, b: &[u8], pos: &mut usize) -> Option<()> {
        let key = *b.get(*pos)?;
        *pos += 1;
        match key {
            1 => {
                self.figures = get_names(b, pos)?;
                self.live.clear();
            }
            0 if !self.figures.is_empty() => {}
            _ => return None,
        }
        let width = self.figures.len();
        let in_width = |mask: u64| width == MAX_FIGURES || mask >> width == 0;
        self.left_out = get_varint(b, pos)?;
        self.errors = get_varint(b, pos)?;
        let n = get_varint(b, pos)?;
        let mut id = 0;
        for _ in 0..n.min(MAX_CGROUPS) {
            id = get_delta(b, pos, id)?;
            self.live.remove(&id)?;
        }
        let n = get_varint(b, pos)?;
        let mut id = 0;
        for _ in 0..n.min(MAX_CGROUPS) {
            id = get_delta(b, pos, id)?;
            let mask = get_varint(b, pos)?;
            in_width(mask).then_some(())?;
            let (_, words) = self.live.get_mut(&id)?;
            for i in bits(mask) {
                words[i] = get_delta(b, pos, words[i])?;
            }
        }
        let n = get_varint(b, pos)?;
        if n > MAX_CGROUPS || self.live.len() as u64 + n > MAX_CGROUPS {
            return None;
        }
        let mut id = 0;
        for _ in 0..n {
            let mut words = vec![NONE; width];
            let path = get_new(b, pos, &mut id, width, |i, v| words[i] = v)?;
            self.live.insert(id, (path.into(), words));
        }
        Some(())
    }

    /// The last walk applied, as read: its cgroups in path order (a parent
    /// before its children), taken at `ts_ms`.
    pub fn sample(&self, ts_ms: u64) -> Sample {
        let mut cgroups: Vec<Cgroup> = self
            .live
            .iter()
            .map(|(id, (path, words))| {
                let mut figures = Figures::default();
                for (f, v) in self.figures.iter().zip(words) {
                    if let Some(f) = f
                        && *v != NONE
                    {
                        figures.set(*f, *v);
                    }
                }
                Cgroup {
                    path: path.clone(),
                    id: *id,
                    depth: depth_of(path),
                    figures,
                }
            })
            .collect();
        cgroups.sort_by(|a, b| a.path.cmp(&b.path));
        Sample {
            mono_ns: ts_ms.saturating_mul(1_000_000),
            unix_ns: ts_ms.saturating_mul(1_000_000),
            cgroups,
            left_out: self.left_out,
            errors: self.errors,
            ..Sample::default()
        }
    }
}

/// Levels below the root: `/` 0, `/a` 1, `/a/b` 2.
fn depth_of(path: &str) -> u16 {
    path.split('/').filter(|p| !p.is_empty()).count() as u16
}

/// The walk a journal record holds ([`put_whole`]), read straight into
/// its cgroups in the record's order (the walk's: path order, sorted
/// again only if not), without the chain's map: the writer reads every
/// walk so, and a walk of 14,000 cgroups is then one vector, not a map
/// and a sort.
pub fn whole(payload: &[u8], ts_ms: u64) -> Option<Sample> {
    let b = payload;
    let mut pos = 0;
    if *b.first()? != 1 {
        return None;
    }
    pos += 1;
    let figures = get_names(b, &mut pos)?;
    let left_out = get_varint(b, &mut pos)?;
    let errors = get_varint(b, &mut pos)?;
    // A keyframe: no cgroup gone or changed.
    if get_varint(b, &mut pos)? != 0 || get_varint(b, &mut pos)? != 0 {
        return None;
    }
    let n = get_varint(b, &mut pos)?;
    if n > MAX_CGROUPS {
        return None;
    }
    // Each cgroup takes a few bytes at least: no capacity beyond the record.
    let mut cgroups = Vec::with_capacity((n as usize).min(b.len() / 3));
    let mut id = 0;
    for _ in 0..n {
        let mut f = Figures::default();
        let path = get_new(b, &mut pos, &mut id, figures.len(), |i, v| {
            if let Some(fig) = figures[i] {
                f.set(fig, v);
            }
        })?;
        cgroups.push(Cgroup {
            path: path.into(),
            id,
            depth: depth_of(path),
            figures: f,
        });
    }
    if !cgroups.is_sorted_by(|a, b| a.path <= b.path) {
        cgroups.sort_by(|a, b| a.path.cmp(&b.path));
    }
    Some(Sample {
        mono_ns: ts_ms.saturating_mul(1_000_000),
        unix_ns: ts_ms.saturating_mul(1_000_000),
        cgroups,
        left_out,
        errors,
        ..Sample::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cg(path: &str, id: u64, figs: &[(Figure, u64)]) -> Cgroup {
        let mut figures = Figures::default();
        for (f, v) in figs {
            figures.set(*f, *v);
        }
        Cgroup {
            path: path.into(),
            id,
            depth: depth_of(path),
            figures,
        }
    }

    fn walk(cgs: Vec<Cgroup>) -> Sample {
        let mut cgroups = cgs;
        cgroups.sort_by(|a, b| a.path.cmp(&b.path));
        Sample {
            cgroups,
            left_out: 3,
            errors: 1,
            ..Sample::default()
        }
    }

    #[test]
    fn walks_come_back_as_encoded_across_a_chain() {
        let a = walk(vec![
            cg("/", 1, &[(Figure::CpuUsageNs, 5_000_000_000)]),
            cg(
                "/a.slice",
                20,
                &[(Figure::CpuUsageNs, 7), (Figure::MemoryBytes, 4096)],
            ),
            cg("/a.slice/b.service", 31, &[(Figure::Pids, 2)]),
        ]);
        // A changed, a removed, a new one, a renamed one (same id).
        let b = walk(vec![
            cg("/", 1, &[(Figure::CpuUsageNs, 5_000_000_900)]),
            cg(
                "/a.slice",
                20,
                &[(Figure::CpuUsageNs, 7), (Figure::MemoryBytes, 0)],
            ),
            cg("/c.scope", 44, &[(Figure::OomKills, 1)]),
            cg("/d.slice", 31, &[(Figure::Pids, 2)]),
        ]);
        let mut enc = Encoder::default();
        let mut body = Vec::new();
        enc.encode(&a, false, &mut body);
        let key_len = body.len();
        enc.encode(&b, false, &mut body);
        // An unchanged walk: no cgroup, a few bytes.
        let before = body.len();
        enc.encode(&b, false, &mut body);
        assert_eq!(body.len() - before, 6);
        let mut d = Decoder::default();
        let mut pos = 0;
        for want in [&a, &b, &b] {
            d.apply(&body, &mut pos).unwrap();
            let got = d.sample(1000);
            assert_eq!(got.cgroups, want.cgroups);
            assert_eq!((got.left_out, got.errors), (3, 1));
        }
        assert_eq!(pos, body.len());
        // A delta read without its keyframe is refused.
        let mut d = Decoder::default();
        let mut pos = key_len;
        assert!(d.apply(&body, &mut pos).is_none());
        // A journal record stands alone.
        let mut rec = Vec::new();
        put_whole(&mut rec, &b);
        assert_eq!(whole(&rec, 5).unwrap().cgroups, b.cgroups);
    }

    #[test]
    fn figures_are_read_by_name_and_unknown_ones_dropped() {
        let mut body = vec![1];
        put_varint(&mut body, 2);
        put_bytes(&mut body, b"a_figure_from_a_newer_build");
        put_bytes(&mut body, b"pids");
        for v in [0, 0, 0, 0, 1] {
            put_varint(&mut body, v);
        }
        put_varint(&mut body, 9);
        put_bytes(&mut body, b"/x");
        put_varint(&mut body, 0b11);
        put_varint(&mut body, 77);
        put_varint(&mut body, 5);
        let s = whole(&body, 0).unwrap();
        assert_eq!(s.cgroups.len(), 1);
        assert_eq!(
            s.cgroups[0].figures.iter().collect::<Vec<_>>(),
            vec![(Figure::Pids, 5)]
        );
    }

    #[test]
    fn damaged_walks_are_refused_without_panic() {
        let mut body = Vec::new();
        put_whole(
            &mut body,
            &walk(vec![cg(
                "/a",
                2,
                &[(Figure::CpuUsageNs, 1 << 40), (Figure::Pids, 3)],
            )]),
        );
        for cut in 0..body.len() {
            assert!(whole(&body[..cut], 0).is_none(), "cut at {cut}");
        }
        for i in 0..body.len() {
            for bit in 0..8 {
                let mut b = body.clone();
                b[i] ^= 1 << bit;
                let _ = whole(&b, 0);
            }
        }
        // A count past the cap is refused, not allocated.
        let mut b = vec![1, 0, 0, 0, 0, 0];
        put_varint(&mut b, u64::MAX);
        assert!(whole(&b, 0).is_none());
    }
}
