//! One layout of a process row as 64-bit words, for every place that
//! stores rows outside memory: the agent's view files (every word, in
//! table order) and the history store (the words it keeps per snapshot,
//! each at its own place among the stored values). Each format keeps its
//! own version number; a field is added here once, and to a format when
//! that format's version changes.
//!
//! An optional field is stored plus one, 0 meaning absent; a signed one
//! zigzag-encoded (small either side of zero, which the store's deltas
//! like); the command name is eight words of bytes, NUL-padded.

use procfs::pid::{Comm, CtxSwitches, PidIo, SchedInfo};

use crate::proc::{Delays, Gpu, NetBytes, Proc};

/// One word of a row.
pub struct RowWord {
    pub name: &'static str,
    /// Its place among the store's per-snapshot values; `None`: not stored
    /// per snapshot (the store keeps identity fields once, or not at all).
    pub stored: Option<usize>,
    pub put: fn(&Proc) -> u64,
    /// Sets the field from the word; words are decoded in table order.
    pub get: fn(&mut Proc, u64),
}

fn zigzag(v: i32) -> u64 {
    let v = i64::from(v);
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(w: u64) -> i32 {
    ((w >> 1) as i64 ^ -((w & 1) as i64)) as i32
}

fn opt(v: Option<u64>) -> u64 {
    v.map_or(0, |v| v.saturating_add(1))
}

fn io(p: &Proc, f: fn(&PidIo) -> u64) -> u64 {
    opt(p.io.as_ref().map(f))
}

fn set_io(p: &mut Proc, w: u64, f: fn(&mut PidIo) -> &mut u64) {
    if let Some(v) = w.checked_sub(1) {
        *f(p.io.get_or_insert_default()) = v;
    }
}

fn ctxsw(p: &Proc, f: fn(&CtxSwitches) -> u64) -> u64 {
    opt(p.ctxsw.as_ref().map(f))
}

fn set_ctxsw(p: &mut Proc, w: u64, f: fn(&mut CtxSwitches) -> &mut u64) {
    if let Some(v) = w.checked_sub(1) {
        *f(p.ctxsw.get_or_insert_default()) = v;
    }
}

fn set_sched(p: &mut Proc, w: u64, f: fn(&mut SchedInfo) -> &mut u64) {
    if let Some(v) = w.checked_sub(1) {
        *f(p.sched.get_or_insert_default()) = v;
    }
}

fn set_net(p: &mut Proc, w: u64, f: fn(&mut NetBytes) -> &mut u64) {
    if let Some(v) = w.checked_sub(1) {
        *f(p.net.get_or_insert_default()) = v;
    }
}

fn set_gpu(p: &mut Proc, w: u64, f: fn(&mut Gpu, u64)) {
    if let Some(v) = w.checked_sub(1) {
        f(p.gpu.get_or_insert_default(), v);
    }
}

fn set_delays(p: &mut Proc, w: u64, f: fn(&mut Delays) -> &mut u64) {
    if let Some(v) = w.checked_sub(1) {
        *f(p.delays.get_or_insert_default()) = v;
    }
}

/// Word `k` of the command name's bytes, NUL-padded.
fn comm_word(p: &Proc, k: usize) -> u64 {
    let b = p.comm.as_bytes();
    let (from, to) = ((k * 8).min(b.len()), (k * 8 + 8).min(b.len()));
    let mut w = [0u8; 8];
    w[..to - from].copy_from_slice(&b[from..to]);
    u64::from_le_bytes(w)
}

fn set_comm_word(p: &mut Proc, w: u64, k: usize) {
    let mut raw = [0u8; COMM_WORDS * 8];
    let b = p.comm.as_bytes();
    let n = b.len().min(k * 8);
    raw[..n].copy_from_slice(&b[..n]);
    raw[k * 8..k * 8 + 8].copy_from_slice(&w.to_le_bytes());
    // Stops at the first NUL: the words decoded so far are whole.
    p.comm = Comm::new(&raw);
}

/// Words of the command name: as long as /proc prints one (a kernel
/// thread's full name, a workqueue worker's with its work).
const COMM_WORDS: usize = 8;
const _: () = assert!(COMM_WORDS * 8 == procfs::pid::COMM_CAPACITY);

macro_rules! words {
    ($($name:ident $stored:expr, |$p:ident| $put:expr, |$q:ident, $w:ident| $get:expr;)*) => {
        /// Every word of a row, in view order.
        pub const WORDS: &[RowWord] = &[$(RowWord {
            name: stringify!($name),
            stored: $stored,
            put: |$p| $put,
            get: |$q, $w| $get,
        }),*];
    };
}

words! {
    pid None, |p| u64::from(p.pid), |p, w| p.pid = w as u32;
    tgid None, |p| u64::from(p.tgid), |p, w| p.tgid = w as u32;
    ppid Some(12), |p| u64::from(p.ppid), |p, w| p.ppid = w as u32;
    state Some(7), |p| u64::from(p.state as u32), |p, w| {
        p.state = char::from_u32(w as u32).unwrap_or('?')
    };
    start_ns None, |p| p.start_ns, |p, w| p.start_ns = w;
    start_ticks None, |p| p.start_ticks, |p, w| p.start_ticks = w;
    utime_ns Some(0), |p| p.utime_ns, |p, w| p.utime_ns = w;
    stime_ns Some(1), |p| p.stime_ns, |p, w| p.stime_ns = w;
    minflt Some(2), |p| p.minflt, |p, w| p.minflt = w;
    majflt Some(3), |p| p.majflt, |p, w| p.majflt = w;
    num_threads Some(4), |p| u64::from(p.num_threads), |p, w| p.num_threads = w as u32;
    rss_bytes Some(5), |p| p.rss_bytes, |p, w| p.rss_bytes = w;
    vsize_bytes Some(6), |p| p.vsize_bytes, |p, w| p.vsize_bytes = w;
    nice Some(8), |p| zigzag(p.nice), |p, w| p.nice = unzigzag(w);
    priority Some(9), |p| zigzag(p.priority), |p, w| p.priority = unzigzag(w);
    policy None, |p| u64::from(p.policy), |p, w| p.policy = w as u32;
    rt_priority None, |p| u64::from(p.rt_priority), |p, w| p.rt_priority = w as u32;
    cpu None, |p| u64::from(p.cpu), |p, w| p.cpu = w as u32;
    cgroup_id None, |p| opt(p.cgroup_id), |p, w| p.cgroup_id = w.checked_sub(1);
    io_rchar None, |p| io(p, |i| i.rchar), |p, w| set_io(p, w, |i| &mut i.rchar);
    io_wchar None, |p| io(p, |i| i.wchar), |p, w| set_io(p, w, |i| &mut i.wchar);
    io_syscr None, |p| io(p, |i| i.syscr), |p, w| set_io(p, w, |i| &mut i.syscr);
    io_syscw None, |p| io(p, |i| i.syscw), |p, w| set_io(p, w, |i| &mut i.syscw);
    io_read_bytes Some(10), |p| io(p, |i| i.read_bytes), |p, w| {
        set_io(p, w, |i| &mut i.read_bytes)
    };
    io_write_bytes Some(11), |p| io(p, |i| i.write_bytes), |p, w| {
        set_io(p, w, |i| &mut i.write_bytes)
    };
    io_cancelled_write_bytes None, |p| io(p, |i| i.cancelled_write_bytes), |p, w| {
        set_io(p, w, |i| &mut i.cancelled_write_bytes)
    };
    ctxsw_voluntary None, |p| ctxsw(p, |c| c.voluntary), |p, w| {
        set_ctxsw(p, w, |c| &mut c.voluntary)
    };
    ctxsw_involuntary None, |p| ctxsw(p, |c| c.involuntary), |p, w| {
        set_ctxsw(p, w, |c| &mut c.involuntary)
    };
    uid None, |p| opt(p.uid.map(u64::from)), |p, w| p.uid = w.checked_sub(1).map(|u| u as u32);
    oom_score_adj None, |p| opt(p.oom_score_adj.map(zigzag)), |p, w| {
        p.oom_score_adj = w.checked_sub(1).map(unzigzag)
    };
    exec None, |p| p.exec, |p, w| p.exec = w;
    run_delay_ns Some(13), |p| opt(p.sched.map(|s| s.run_delay_ns)), |p, w| {
        set_sched(p, w, |s| &mut s.run_delay_ns)
    };
    timeslices None, |p| opt(p.sched.map(|s| s.timeslices)), |p, w| {
        set_sched(p, w, |s| &mut s.timeslices)
    };
    net_rx_bytes Some(21), |p| opt(p.net.map(|n| n.rx_bytes)), |p, w| {
        set_net(p, w, |n| &mut n.rx_bytes)
    };
    net_tx_bytes Some(22), |p| opt(p.net.map(|n| n.tx_bytes)), |p, w| {
        set_net(p, w, |n| &mut n.tx_bytes)
    };
    delays_blkio_ns Some(14), |p| opt(p.delays.map(|d| d.blkio_ns)), |p, w| {
        set_delays(p, w, |d| &mut d.blkio_ns)
    };
    delays_swapin_ns Some(15), |p| opt(p.delays.map(|d| d.swapin_ns)), |p, w| {
        set_delays(p, w, |d| &mut d.swapin_ns)
    };
    delays_reclaim_ns Some(16), |p| opt(p.delays.map(|d| d.reclaim_ns)), |p, w| {
        set_delays(p, w, |d| &mut d.reclaim_ns)
    };
    delays_thrashing_ns Some(17), |p| opt(p.delays.map(|d| d.thrashing_ns)), |p, w| {
        set_delays(p, w, |d| &mut d.thrashing_ns)
    };
    delays_compact_ns Some(18), |p| opt(p.delays.map(|d| d.compact_ns)), |p, w| {
        set_delays(p, w, |d| &mut d.compact_ns)
    };
    delays_wpcopy_ns Some(19), |p| opt(p.delays.map(|d| d.wpcopy_ns)), |p, w| {
        set_delays(p, w, |d| &mut d.wpcopy_ns)
    };
    delays_irq_ns Some(20), |p| opt(p.delays.map(|d| d.irq_ns)), |p, w| {
        set_delays(p, w, |d| &mut d.irq_ns)
    };
    gpu_busy_ns Some(23), |p| opt(p.gpu.map(|g| g.busy_ns)), |p, w| {
        set_gpu(p, w, |g, v| g.busy_ns = v)
    };
    gpu_mem_bytes Some(24), |p| opt(p.gpu.map(|g| g.mem_bytes)), |p, w| {
        set_gpu(p, w, |g, v| g.mem_bytes = v)
    };
    gpu_clients None, |p| opt(p.gpu.map(|g| u64::from(g.clients))), |p, w| {
        set_gpu(p, w, |g, v| g.clients = u32::try_from(v).unwrap_or(u32::MAX))
    };
    comm_0 None, |p| comm_word(p, 0), |p, w| set_comm_word(p, w, 0);
    comm_1 None, |p| comm_word(p, 1), |p, w| set_comm_word(p, w, 1);
    comm_2 None, |p| comm_word(p, 2), |p, w| set_comm_word(p, w, 2);
    comm_3 None, |p| comm_word(p, 3), |p, w| set_comm_word(p, w, 3);
    comm_4 None, |p| comm_word(p, 4), |p, w| set_comm_word(p, w, 4);
    comm_5 None, |p| comm_word(p, 5), |p, w| set_comm_word(p, w, 5);
    comm_6 None, |p| comm_word(p, 6), |p, w| set_comm_word(p, w, 6);
    comm_7 None, |p| comm_word(p, 7), |p, w| set_comm_word(p, w, 7);
}

/// Words in a view row.
pub const VIEW_WORDS: usize = WORDS.len();

/// Values the store keeps per process and snapshot.
pub const STORED_WORDS: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < WORDS.len() {
        if WORDS[i].stored.is_some() {
            n += 1;
        }
        i += 1;
    }
    n
};

/// A row's words, in view order.
pub fn put_view(p: &Proc) -> [u64; VIEW_WORDS] {
    std::array::from_fn(|i| (WORDS[i].put)(p))
}

/// The row [`put_view`] wrote.
pub fn get_view(w: &[u64]) -> Proc {
    let mut p = Proc::default();
    for (word, &v) in WORDS.iter().zip(w) {
        (word.get)(&mut p, v);
    }
    p
}

/// The values the store keeps, each at its place.
pub fn put_stored(p: &Proc) -> [u64; STORED_WORDS] {
    let mut v = [0; STORED_WORDS];
    for w in WORDS {
        if let Some(i) = w.stored {
            v[i] = (w.put)(p);
        }
    }
    v
}

/// Sets the fields the store keeps from its values.
pub fn get_stored(p: &mut Proc, v: &[u64; STORED_WORDS]) {
    for w in WORDS {
        if let Some(i) = w.stored {
            (w.get)(p, v[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field set, none to its default.
    pub(crate) fn every_field() -> Proc {
        Proc {
            pid: 4242,
            tgid: 4241,
            ppid: 1,
            comm: Comm::new(b"kworker/0:0H-events_highpri_with_a_name_of_63_bytes_01234567890"),
            state: 'S',
            start_ns: 123_456_789_000,
            start_ticks: 12_345,
            utime_ns: 5_000_000,
            stime_ns: 7_000_000,
            minflt: 11,
            majflt: 3,
            num_threads: 6,
            rss_bytes: 1 << 20,
            vsize_bytes: 1 << 30,
            nice: -5,
            priority: -51,
            policy: 2,
            rt_priority: 50,
            cpu: 3,
            cgroup_id: Some(0),
            io: Some(PidIo {
                rchar: 1,
                wchar: 2,
                syscr: 3,
                syscw: 4,
                read_bytes: 5,
                write_bytes: 6,
                cancelled_write_bytes: 7,
            }),
            sched: Some(SchedInfo {
                run_delay_ns: 9,
                timeslices: 10,
            }),
            net: Some(NetBytes {
                rx_bytes: 11,
                tx_bytes: 12,
            }),
            delays: Some(Delays {
                blkio_ns: 13,
                swapin_ns: 14,
                reclaim_ns: 15,
                thrashing_ns: 16,
                compact_ns: 17,
                wpcopy_ns: 18,
                irq_ns: 19,
            }),
            gpu: Some(Gpu {
                busy_ns: 20,
                mem_bytes: 21,
                clients: 22,
            }),
            ctxsw: Some(CtxSwitches {
                voluntary: 8,
                involuntary: 9,
            }),
            uid: Some(0),
            oom_score_adj: Some(-1000),
            exec: u64::MAX - 1,
        }
    }

    #[test]
    fn every_field_comes_back_from_a_view_row() {
        let p = every_field();
        assert_eq!(get_view(&put_view(&p)), p);
        let none = Proc {
            cgroup_id: None,
            io: None,
            ctxsw: None,
            sched: None,
            net: None,
            delays: None,
            gpu: None,
            uid: None,
            oom_score_adj: None,
            ..p
        };
        assert_eq!(get_view(&put_view(&none)), none);
        assert_eq!(get_view(&put_view(&Proc::default())), Proc::default());
    }

    #[test]
    fn the_stored_fields_come_back_from_the_stores_values() {
        let p = every_field();
        let mut back = Proc::default();
        get_stored(&mut back, &put_stored(&p));
        let mut expected = Proc::default();
        for w in WORDS.iter().filter(|w| w.stored.is_some()) {
            (w.get)(&mut expected, (w.put)(&p));
        }
        assert_eq!(back, expected);
        assert_eq!(
            (back.utime_ns, back.nice, back.ppid, back.state),
            (p.utime_ns, p.nice, p.ppid, p.state)
        );
        let io = back.io.unwrap();
        assert_eq!((io.read_bytes, io.write_bytes), (5, 6));
    }

    #[test]
    fn names_are_unique_and_stored_places_dense() {
        let mut names: Vec<_> = WORDS.iter().map(|w| w.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), WORDS.len());
        let mut places: Vec<_> = WORDS.iter().filter_map(|w| w.stored).collect();
        places.sort_unstable();
        assert_eq!(places, (0..STORED_WORDS).collect::<Vec<_>>());
    }
}
