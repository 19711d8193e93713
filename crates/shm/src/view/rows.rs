//! A process, an exit and a cgroup as the view files lay them out, and
//! back.

use super::*;

pub(super) fn comm_words(c: &Comm) -> [u64; 3] {
    let b = c.as_bytes();
    let mut raw = [0u8; 16];
    raw[..b.len().min(16)].copy_from_slice(&b[..b.len().min(16)]);
    [
        b.len() as u64,
        u64::from_le_bytes(raw[..8].try_into().unwrap_or_default()),
        u64::from_le_bytes(raw[8..].try_into().unwrap_or_default()),
    ]
}

pub(super) fn comm_from(w: &[u64]) -> Comm {
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&w[1].to_le_bytes());
    raw[8..].copy_from_slice(&w[2].to_le_bytes());
    let len = (w[0] as usize).min(16);
    Comm::new(&raw[..len])
}

/// One process row: [`PROC_WORDS`] words, laid out by
/// [`proctable::layout`].
pub fn put_proc(out: &mut Vec<u8>, p: &Proc) {
    for w in proctable::layout::put_view(p) {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// The process row [`put_proc`] wrote, from its words.
pub fn get_proc(w: &[u64]) -> Proc {
    proctable::layout::get_view(w)
}

/// An exit row's words before the command's three ([`EXIT_WORDS`] in
/// all), in file order: each read from an exit, and written back.
type ExitWord = (fn(&Exit) -> u64, fn(&mut Exit, u64));
const EXIT_LAYOUT: [ExitWord; EXIT_WORDS - 3] = [
    (|e| u64::from(e.pid), |e, w| e.pid = w as u32),
    (|e| u64::from(e.ppid), |e, w| e.ppid = w as u32),
    (|e| e.start_ns, |e, w| e.start_ns = w),
    (|e| e.start_ticks, |e, w| e.start_ticks = w),
    (|e| e.exit_ns, |e, w| e.exit_ns = w),
    (|e| e.utime_ns, |e, w| e.utime_ns = w),
    (|e| e.stime_ns, |e, w| e.stime_ns = w),
    (|e| e.minflt, |e, w| e.minflt = w),
    (|e| e.majflt, |e, w| e.majflt = w),
    (|e| e.maxrss_bytes, |e, w| e.maxrss_bytes = w),
    (
        |e| i64::from(e.exit_status) as u64,
        |e, w| e.exit_status = w as i64 as i32,
    ),
];

/// An exit as the view file's row: its figures in `EXIT_LAYOUT`'s order,
/// then the command.
pub fn put_exit(out: &mut Vec<u8>, e: &Exit) {
    for (word, _) in EXIT_LAYOUT {
        out.extend_from_slice(&word(e).to_le_bytes());
    }
    for w in comm_words(&e.comm) {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// An exit from the view file's row `w` ([`put_exit`]).
pub fn get_exit(w: &[u64]) -> Exit {
    let mut e = Exit {
        comm: comm_from(&w[EXIT_LAYOUT.len()..EXIT_WORDS]),
        ..Exit::default()
    };
    for ((_, set), &v) in EXIT_LAYOUT.iter().zip(w) {
        set(&mut e, v);
    }
    e
}

/// The bytes [`put_cgroup`] writes for `c`.
pub(super) fn cgroup_bytes(c: &cgroups::Cgroup) -> usize {
    16 + 8 * CGROUP_FIGURES + c.path.len().next_multiple_of(8)
}

/// One cgroup (see the module's notes).
pub(super) fn put_cgroup(out: &mut Vec<u8>, c: &cgroups::Cgroup) {
    out.extend_from_slice(&c.id.to_le_bytes());
    out.extend_from_slice(&c.depth.to_le_bytes());
    // Paths are at most 32 names of at most 255 bytes.
    out.extend_from_slice(&(c.path.len().min(u16::MAX as usize) as u16).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    for w in c.figures.words() {
        out.extend_from_slice(&w.to_le_bytes());
    }
    let path = &c.path.as_bytes()[..c.path.len().min(u16::MAX as usize)];
    out.extend_from_slice(path);
    out.resize(out.len() + (path.len().next_multiple_of(8) - path.len()), 0);
}

/// The cgroups of the body of the cgroup view at `path`; what is wrong
/// with it otherwise.
pub(super) fn get_cgroups(
    file: &Path,
    mut b: &[u8],
    count: u32,
    out: &mut Vec<cgroups::Cgroup>,
) -> Result<(), Error> {
    use std::sync::Arc;
    let fixed = 16 + 8 * CGROUP_FIGURES;
    for i in 0..count {
        let short = || not_view(file, format!("cgroup {i} cut short"));
        let head = b.get(..fixed).ok_or_else(short)?;
        let id = u64::from_le_bytes(head[..8].try_into().unwrap_or_default());
        let depth = u16::from_le_bytes([head[8], head[9]]);
        let len = u16::from_le_bytes([head[10], head[11]]) as usize;
        let mut words = [0u64; CGROUP_FIGURES];
        for (d, s) in words.iter_mut().zip(self::words(&head[16..])) {
            *d = s;
        }
        let padded = len.next_multiple_of(8);
        let path = b.get(fixed..fixed + len).ok_or_else(short)?;
        let path = std::str::from_utf8(path)
            .map_err(|_| not_view(file, format!("cgroup {i}: path not UTF-8")))?;
        out.push(cgroups::Cgroup {
            path: Arc::from(path),
            id,
            depth,
            figures: cgroups::Figures::from_words(words),
        });
        b = b.get(fixed + padded..).ok_or_else(short)?;
    }
    if !b.is_empty() {
        return Err(not_view(
            file,
            format!("{} bytes after the last cgroup", b.len()),
        ));
    }
    Ok(())
}

pub(super) fn words(b: &[u8]) -> impl Iterator<Item = u64> + '_ {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
}

/// Decodes `rows` process rows from `b`, then exit rows from the rest.
pub(super) fn decode_rows(b: &[u8], rows: usize, view: &mut ProcView) {
    let (procs, exits) = b.split_at((rows * PROC_WORDS * 8).min(b.len()));
    view.procs
        .extend(procs.chunks_exact(PROC_WORDS * 8).map(proc_of));
    view.exits
        .extend(exits.chunks_exact(EXIT_WORDS * 8).map(exit_of));
}

/// A process row's bytes decoded.
pub(super) fn proc_of(b: &[u8]) -> Proc {
    let mut w = [0u64; PROC_WORDS];
    for (d, s) in w.iter_mut().zip(words(b)) {
        *d = s;
    }
    get_proc(&w)
}

/// An exit row's bytes decoded.
pub(super) fn exit_of(b: &[u8]) -> Exit {
    let mut w = [0u64; EXIT_WORDS];
    for (d, s) in w.iter_mut().zip(words(b)) {
        *d = s;
    }
    get_exit(&w)
}
