//! Pure decoding of the BPF records into rows: no system call, no
//! privilege, so its tests and benchmarks run anywhere.

use std::mem::MaybeUninit;
use std::sync::Mutex;

use procfs::pid::{Comm, CtxSwitches, PidIo, SchedInfo};

use super::walk::WalkRows;
use crate::cputime::{RawCputime, adjust};
use crate::error::{Error, Result};
use crate::fields::Field;
use crate::pool::Helpers;
use crate::proc::{Delays, NS_PER_TICK, Proc, state_letter};
use crate::record::{QS_MAX_WALKERS, QsDelays, QsIo, QsTask, QsTaskName};

pub(super) fn words_as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: any u64 slice is a valid byte slice of eight times its length.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) }
}

pub(super) fn pid_io(r: &QsIo) -> PidIo {
    PidIo {
        rchar: r.rchar,
        wchar: r.wchar,
        syscr: r.syscr,
        syscw: r.syscw,
        read_bytes: r.read_bytes,
        write_bytes: r.write_bytes,
        cancelled_write_bytes: r.cancelled_write_bytes,
    }
}

pub(super) fn delays(r: &QsDelays) -> Delays {
    Delays {
        blkio_ns: r.blkio_ns,
        swapin_ns: r.swapin_ns,
        reclaim_ns: r.reclaim_ns,
        thrashing_ns: r.thrashing_ns,
        compact_ns: r.compact_ns,
        wpcopy_ns: r.wpcopy_ns,
        irq_ns: r.irq_ns,
    }
}

/// The records that follow the tasks': each slice empty, or one record per
/// task.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    pub io: &'a [QsIo],
    pub delays: &'a [QsDelays],
}

/// Rows from the walk's records, in PID order: threads are already summed
/// into their leaders' rows; see [`Extras`] for `extra`.
/// The records are in task-list (creation) order, sorted but where PIDs
/// wrapped: sorting (PID, index) keys and writing each row once in its
/// place beats moving whole rows. `order` is scratch space kept between
/// calls; `page` the page size in bytes.
pub fn decode_walk(
    tasks: &[QsTask],
    extra: Extras<'_>,
    page: u64,
    fields: crate::Fields,
    order: &mut Vec<u64>,
    out: &mut Vec<Proc>,
) {
    let all = 0..tasks.len();
    decode_walk_ranges(
        tasks,
        extra,
        std::slice::from_ref(&all),
        page,
        fields,
        order,
        out,
    );
}

/// As [`decode_walk`], for the records in `ranges` of `tasks` (and `extra`),
/// which follow one another in task-list order: the shares of a split
/// walk. A process found twice (where walkers overlapped) gets one row.
pub fn decode_walk_ranges(
    tasks: &[QsTask],
    extra: Extras<'_>,
    ranges: &[std::ops::Range<usize>],
    page: u64,
    fields: crate::Fields,
    order: &mut Vec<u64>,
    out: &mut Vec<Proc>,
) {
    walk_order(tasks, ranges, order);
    decode_order(tasks, extra, order, page, fields, out);
}

/// The rows of `order`'s keys, in its order, into `out` (cleared).
fn decode_order(
    tasks: &[QsTask],
    extra: Extras<'_>,
    order: &[u64],
    page: u64,
    fields: crate::Fields,
    out: &mut Vec<Proc>,
) {
    out.clear();
    out.reserve(order.len());
    let n = order.len();
    decode_keys(
        tasks,
        extra,
        order,
        page,
        fields,
        &mut out.spare_capacity_mut()[..n],
    );
    // SAFETY: out was empty; decode_keys initialised its first n slots,
    // for which reserve made room.
    unsafe { out.set_len(n) };
}

/// Rows per part of a split walk's decoding (see [`decode_walk_parts`]).
const DECODE_PART_ROWS: usize = 2048;

/// As [`decode_walk_ranges`], for a walk's rows, the rows decoded in parts
/// that the walk's `rows.threads` threads (this one and its helpers, idle
/// now) take in turn, as they took the walk's stretches. Filling the rows
/// is most of decoding: 2 ms at 30,000 processes on one thread. Processes
/// resident in fewer than `floor_pages` pages are left out before they
/// are decoded (a table kept small under a memory ceiling is never built
/// whole), and of the rest only the `cap` most resident (0: no cap).
/// Returns the processes the walk found, those left out included.
#[allow(clippy::too_many_arguments)]
pub(super) fn decode_walk_parts(
    rows: &WalkRows<'_>,
    helpers: &mut Helpers,
    page: u64,
    fields: crate::Fields,
    floor_pages: u64,
    cap: usize,
    order: &mut Vec<u64>,
    out: &mut Vec<Proc>,
) -> Result<usize> {
    walk_order(rows.tasks, rows.ranges, order);
    let found = order.len();
    if floor_pages > 0 {
        order.retain(|&k| rows.tasks[key_index(k)].rss_pages >= floor_pages);
    }
    if cap > 0 {
        crate::keep_largest_by(order, cap, |&k| rows.tasks[key_index(k)].rss_pages);
    }
    if rows.threads <= 1 {
        decode_order(rows.tasks, rows.extras(), order, page, fields, out);
        return Ok(found);
    }
    out.clear();
    out.reserve(order.len());
    let n = order.len();
    let mut slots = &mut out.spare_capacity_mut()[..n];
    let mut keys = &order[..];
    let count = (n / DECODE_PART_ROWS).clamp(rows.threads, 4 * QS_MAX_WALKERS as usize);
    let mut parts = Vec::with_capacity(count);
    for j in 0..count {
        let len = n * (j + 1) / count - n * j / count;
        let (k, rest_keys) = keys.split_at(len);
        let (sl, rest_slots) = slots.split_at_mut(len);
        parts.push(Mutex::new((k, sl)));
        (keys, slots) = (rest_keys, rest_slots);
    }
    helpers
        .run_shared(rows.threads, parts.len(), &|j| {
            let mut part = parts[j].lock().unwrap_or_else(|e| e.into_inner());
            let (keys, slots) = &mut *part;
            decode_keys(rows.tasks, rows.extras(), keys, page, fields, slots);
            Ok(0)
        })
        .map_err(|e| Error::Decode(format!("decoding the walk's rows: {e}")))?;
    // SAFETY: out was empty; the parts, which cover its first n slots
    // (reserved above), were each initialised by decode_keys.
    unsafe { out.set_len(n) };
    Ok(found)
}

/// A key's flag: the row after the key's holds the process's name
/// ([`QsTaskName`], a kernel thread's longer than comm).
const NAMED: u64 = 1 << 31;

/// The row index of a [`walk_order`] key.
fn key_index(key: u64) -> usize {
    (key & (NAMED - 1)) as usize
}

/// The name row after `t` in `rows`, if there is one (walk.bpf.c's
/// qs_fill_name: pid 0, the thread's pid as tgid).
fn name_row<'a>(t: &QsTask, next: Option<&'a QsTask>) -> Option<&'a QsTaskName> {
    let n = next?;
    if n.pid != 0 || n.tgid != t.pid {
        return None;
    }
    const _: () = assert!(size_of::<QsTaskName>() <= size_of::<QsTask>());
    const _: () = assert!(align_of::<QsTaskName>() <= align_of::<QsTask>());
    const _: () =
        assert!(std::mem::offset_of!(QsTaskName, pid) == std::mem::offset_of!(QsTask, pid));
    const _: () =
        assert!(std::mem::offset_of!(QsTaskName, tgid) == std::mem::offset_of!(QsTask, tgid));
    // SAFETY: a QsTaskName is laid over the first bytes of a QsTask (no
    // larger, no stricter alignment; plain integers and bytes, any bit
    // pattern valid).
    Some(unsafe { &*(n as *const QsTask).cast::<QsTaskName>() })
}

/// The name /proc shows for a kernel thread from its name row: the full
/// name (or comm), then a workqueue worker's description after `+` while
/// it runs that work, `-` after; at most 63 bytes, as /proc prints.
pub(super) fn long_name(n: &QsTaskName) -> Comm {
    let until_nul = |b: &[u8]| b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let mut buf = [0u8; 64 + 1 + 32];
    let mut len = until_nul(&n.name);
    buf[..len].copy_from_slice(&n.name[..len]);
    let desc = &n.desc[..until_nul(&n.desc)];
    if !desc.is_empty() {
        buf[len] = if n.running != 0 { b'+' } else { b'-' };
        buf[len + 1..len + 1 + desc.len()].copy_from_slice(desc);
        len += 1 + desc.len();
    }
    Comm::new(&buf[..len.min(63)])
}

/// Fills `order` with one (PID << 32 | index) key per process in `ranges`
/// of `tasks`, in PID order, [`NAMED`] set where a name row follows; of a
/// process found twice (where walkers overlapped), one. Name rows (pid 0)
/// get none.
fn walk_order(tasks: &[QsTask], ranges: &[std::ops::Range<usize>], order: &mut Vec<u64>) {
    order.clear();
    for r in ranges {
        let rows = &tasks[r.clone()];
        for (j, t) in rows.iter().enumerate() {
            if t.pid == 0 {
                continue;
            }
            let named = match name_row(t, rows.get(j + 1)) {
                Some(_) => NAMED,
                None => 0,
            };
            order.push((u64::from(t.pid) << 32) | named | (r.start + j) as u64);
        }
    }
    if !order.is_sorted() {
        // Stable sort finds the sorted runs (one per PID wrap) and merges.
        order.sort();
    }
    order.dedup_by_key(|k| *k >> 32);
}

/// Decodes the rows `keys` name (see [`walk_order`]) into `slots`, one
/// each: built in its slot, as a row built aside and moved is one more
/// copy of the whole row per task.
fn decode_keys(
    tasks: &[QsTask],
    extra: Extras<'_>,
    keys: &[u64],
    page: u64,
    fields: crate::Fields,
    slots: &mut [MaybeUninit<Proc>],
) {
    debug_assert_eq!(keys.len(), slots.len());
    for (slot, &key) in slots.iter_mut().zip(keys) {
        let i = key_index(key);
        let t = &tasks[i];
        let times = adjust(RawCputime {
            utime: t.utime_ns,
            stime: t.stime_ns,
            runtime: t.runtime_ns,
            prev_utime: t.prev_utime_ns,
            prev_stime: t.prev_stime_ns,
        });
        let p = slot.write(row(
            t,
            page,
            fields,
            times,
            extra.io.get(i).map(pid_io),
            extra.delays.get(i).map(delays),
        ));
        if key & NAMED != 0
            && let Some(n) = name_row(t, tasks.get(i + 1))
        {
            p.comm = long_name(n);
        }
    }
}

/// One row; `times` are the scaled (utime, stime). Every field is set here
/// (no struct update from a second value): the row is then written once, in
/// place, not built aside and copied.
#[inline(always)]
pub(super) fn row(
    t: &QsTask,
    page: u64,
    fields: crate::Fields,
    (utime_ns, stime_ns): (u64, u64),
    io: Option<PidIo>,
    delays: Option<Delays>,
) -> Proc {
    Proc {
        pid: t.pid,
        tgid: t.tgid,
        ppid: t.ppid,
        comm: Comm::from_task_comm(&t.comm),
        state: if fields.has(Field::State) {
            state_letter(t.state, t.exit_state)
        } else {
            '\0'
        },
        start_ns: t.start_boottime_ns,
        start_ticks: t.start_boottime_ns / NS_PER_TICK,
        utime_ns,
        stime_ns,
        minflt: t.min_flt,
        majflt: t.maj_flt,
        num_threads: t.nr_threads,
        rss_bytes: t.rss_pages * page,
        vsize_bytes: t.vm_pages * page,
        // Zero where not read (the kernel's values are offset).
        nice: if fields.has(Field::Nice) {
            t.static_prio - 120
        } else {
            0
        },
        priority: if fields.has(Field::Priority) {
            t.prio - 100
        } else {
            0
        },
        policy: t.policy,
        rt_priority: t.rt_priority,
        cpu: t.cpu,
        cgroup_id: fields.has(Field::Cgroup).then_some(t.cgroup_id),
        uid: fields.has(Field::Uid).then_some(t.euid),
        oom_score_adj: fields.has(Field::OomScoreAdj).then_some(t.oom_score_adj),
        io,
        sched: fields.has(Field::Delay).then_some(SchedInfo {
            run_delay_ns: t.run_delay_ns,
            timeslices: t.pcount,
        }),
        ctxsw: fields.has(Field::Ctxsw).then_some(CtxSwitches {
            voluntary: t.nvcsw,
            involuntary: t.nivcsw,
        }),
        // Filled by the network read, after the rows are built.
        net: None,
        delays,
        // Filled by the GPU read, after the rows are built.
        gpu: None,
        exec: t.exec_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(pid: u32) -> QsTask {
        QsTask {
            pid,
            tgid: pid,
            start_boottime_ns: u64::from(pid) * 1_000,
            ..QsTask::default()
        }
    }

    fn pids(rows: &[Proc]) -> Vec<u32> {
        rows.iter().map(|p| p.pid).collect()
    }

    /// A name row (walk.bpf.c's qs_fill_name) for kernel thread `pid`.
    fn name_row_of(pid: u32, name: &str, desc: &str, running: bool) -> QsTask {
        let mut n = QsTaskName {
            name: [0; 64],
            desc: [0; 32],
            running: u32::from(running),
            _pad: 0,
            _over: [0; 3],
            pid: 0,
            tgid: pid,
        };
        n.name[..name.len()].copy_from_slice(name.as_bytes());
        n.desc[..desc.len()].copy_from_slice(desc.as_bytes());
        let mut t = QsTask::default();
        // SAFETY: QsTaskName is laid over a QsTask's first bytes (asserted
        // in name_row); both are plain integers and bytes.
        unsafe { std::ptr::write((&raw mut t).cast::<QsTaskName>(), n) };
        t
    }

    #[test]
    fn kernel_threads_take_their_long_names_from_the_row_after() {
        let comm = |s: &str| {
            let mut c = [0u8; 16];
            c[..s.len().min(15)].copy_from_slice(&s.as_bytes()[..s.len().min(15)]);
            c
        };
        let named = |pid: u32, name: &str| QsTask {
            comm: comm(name),
            ..task(pid)
        };
        let long = "x".repeat(40);
        let tasks = vec![
            named(4, "kworker/R-rcu_gp"),
            name_row_of(4, "kworker/R-rcu_gp", "", false),
            named(10, "kworker/0:0H"),
            name_row_of(10, "kworker/0:0H", "events_highpri", false),
            named(11, "kworker/1:2"),
            name_row_of(11, "kworker/1:2", "mm_percpu_wq", true),
            // A name row of another task (a stale one) is not taken.
            named(12, "sleep"),
            name_row_of(99, "not its name", "", false),
            // Cut at 63 bytes, as /proc prints.
            named(13, &long),
            name_row_of(13, &long, "abcdefghijklmnopqrstuvwxyz01234", true),
            // Its name row did not fit: comm alone.
            named(14, "rcu_exp_par_gp_kthread_worker/0"),
        ];
        let (mut order, mut out) = (Vec::new(), Vec::new());
        decode_walk(
            &tasks,
            Extras::default(),
            4096,
            crate::Fields::stat(),
            &mut order,
            &mut out,
        );
        let names: Vec<(u32, String)> = out
            .iter()
            .map(|p| (p.pid, p.comm.to_string_lossy().into_owned()))
            .collect();
        let cut = format!("{long}+abcdefghijklmnopqrstuv");
        assert_eq!(cut.len(), 63);
        assert_eq!(
            names,
            vec![
                (4, "kworker/R-rcu_gp".to_string()),
                (10, "kworker/0:0H-events_highpri".to_string()),
                (11, "kworker/1:2+mm_percpu_wq".to_string()),
                (12, "sleep".to_string()),
                (13, cut),
                (14, "rcu_exp_par_gp_".to_string()),
            ]
        );
    }

    #[test]
    fn split_walk_rows_decode_in_pid_order_once_each() {
        // Two walkers' shares of a 10-row array: rows 0..3 and 5..9; the
        // first walker ran on past the second's start (PID 7 twice) and
        // PIDs wrapped in the second share (2 after 9).
        let mut tasks = vec![QsTask::default(); 10];
        for (i, pid) in [(0, 3), (1, 5), (2, 7), (5, 7), (6, 8), (7, 9), (8, 2)] {
            tasks[i] = task(pid);
        }
        let (mut order, mut out) = (Vec::new(), Vec::new());
        let fields = crate::Fields::stat();
        decode_walk_ranges(
            &tasks,
            Extras::default(),
            &[0..3, 5..9],
            4096,
            fields,
            &mut order,
            &mut out,
        );
        assert_eq!(pids(&out), [2, 3, 5, 7, 8, 9]);
        assert!(out.iter().all(|p| p.io.is_none()));
        // One range, as decode_walk takes it; the gap rows are not read.
        decode_walk(
            &tasks[5..9],
            Extras::default(),
            4096,
            fields,
            &mut order,
            &mut out,
        );
        assert_eq!(pids(&out), [2, 7, 8, 9]);
    }

    #[test]
    fn rows_decoded_in_parts_on_helpers_match_one_thread() {
        // Three walkers' shares of 9,000 rows, PIDs wrapped inside the
        // second, the third starting on two rows the second also walked;
        // I/O records to show each part reads its own rows' records. More
        // rows than DECODE_PART_ROWS for each thread: threads take several
        // parts each.
        let mut tasks = Vec::new();
        let mut io = Vec::new();
        let mut delays = Vec::new();
        for i in 0..9000u32 {
            let pid = match i {
                0..3000 => 300 + i,
                3000..4500 => 6300 + (i - 3000),
                4500..6000 => 3300 + (i - 4500),
                _ => 9000 + (i - 6000),
            };
            let mut t = task(pid);
            t.utime_ns = u64::from(i) * 10;
            t.runtime_ns = t.utime_ns;
            t.rss_pages = u64::from(i % 10);
            tasks.push(t);
            io.push(QsIo {
                rchar: u64::from(pid),
                ..QsIo::default()
            });
            delays.push(QsDelays {
                blkio_ns: u64::from(pid),
                irq_ns: 7,
                ..QsDelays::default()
            });
        }
        tasks[6000] = tasks[5998];
        tasks[6001] = tasks[5999];
        io[6000] = io[5998];
        io[6001] = io[5999];
        delays[6000] = delays[5998];
        delays[6001] = delays[5999];
        let ranges = [0..3000, 3000..6000, 6000..9000];
        let fields = crate::Fields::all();
        let (mut order, mut one) = (Vec::new(), Vec::new());
        let extra = Extras {
            io: &io,
            delays: &delays,
        };
        decode_walk_ranges(&tasks, extra, &ranges, 4096, fields, &mut order, &mut one);
        assert!(one.is_sorted_by_key(|p| p.pid));
        assert_eq!(one.len(), 8998);
        assert!(one.len() > 4 * DECODE_PART_ROWS);
        let mut helpers = Helpers::default();
        for threads in 1..=4 {
            let rows = WalkRows {
                tasks: &tasks,
                io: &io,
                delays: &delays,
                ranges: &ranges,
                threads,
            };
            let mut parts = vec![Proc::default(); 5];
            // The rows built over a floor of `floor` pages and a cap of
            // `cap` rows (0: none), and the processes found.
            let mut decode = |floor: u64, cap: usize, parts: &mut Vec<Proc>| {
                decode_walk_parts(
                    &rows,
                    &mut helpers,
                    4096,
                    fields,
                    floor,
                    cap,
                    &mut order,
                    parts,
                )
                .unwrap()
            };
            let found = decode(0, 0, &mut parts);
            assert_eq!(parts, one, "{threads} threads");
            assert_eq!(found, 8998);
            // Below a floor of 7 pages: left out before they are built,
            // and still counted as found.
            let found = decode(7, 0, &mut parts);
            let above: Vec<Proc> = one
                .iter()
                .filter(|p| p.rss_bytes >= 7 * 4096)
                .copied()
                .collect();
            assert!(above.len() > 2000 && above.len() < 3000, "{}", above.len());
            assert_eq!(parts, above, "{threads} threads, a floor");
            assert_eq!(found, 8998);
            // A cap of 1,500 rows: the 1,500 most resident (ties to the
            // lower PID) are built, the rows the whole table cut to the
            // cap keeps; the others are still counted as found.
            let found = decode(0, 1500, &mut parts);
            let mut largest = one.clone();
            crate::keep_largest_by(&mut largest, 1500, |p| p.rss_bytes);
            assert_eq!(largest.len(), 1500);
            assert!(largest.iter().all(|p| p.rss_bytes >= 8 * 4096));
            assert_eq!(parts, largest, "{threads} threads, a cap");
            assert_eq!(found, 8998);
        }
        assert!(one.iter().all(|p| p.io.unwrap().rchar == u64::from(p.pid)));
        assert!(one.iter().all(|p| {
            let w = p.delays.unwrap();
            w.blkio_ns == u64::from(p.pid) && w.irq_ns == 7 && w.swapin_ns == 0
        }));
    }
}
