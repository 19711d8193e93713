//! The vectored start-time call looking each PID up in the kernel, against
//! /proc and against the walk, with children and threads of known start.
//! Needs CAP_BPF and CAP_PERFMON (the suite runs as root in CI).

use std::process::{Command, Stdio};

use sys::child::Guard;

use proctable::bpf::{Bpf, Method};
use proctable::dir::ProcDir;
use proctable::{BackendChoice, Fields, ProcTable, Query};

/// A `sleep` child, stopped and reaped when dropped.
fn sleeper() -> Guard {
    Guard(
        Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn sleep"),
    )
}

/// /proc/PID/stat's field 22, or None when there is no such file.
fn proc_start(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

fn has_kfunc(name: &str) -> bool {
    let btf = aya::Btf::from_sys_fs().expect("this kernel has BTF");
    btf.id_by_type_name_kind(name, aya_obj::btf::BtfKind::Func)
        .is_ok()
}

fn bpf() -> Bpf {
    let mut b = Bpf::open().unwrap_or_else(|e| panic!("the BPF backend must load (root): {e}"));
    // A kernel with bpf_task_from_vpid (6.13 and later; this one is 6.18)
    // must use the lookup, not quietly walk.
    if has_kfunc("bpf_task_from_vpid") {
        assert_eq!(b.open_lookup(), None);
    } else {
        let why = b
            .open_lookup()
            .expect("no lookup without the kernel function");
        assert!(why.contains("6.13"), "{why}");
    }
    b
}

#[test]
fn start_times_match_proc_for_processes_threads_and_pids_that_never_were() {
    let kids: Vec<Guard> = (0..3).map(|_| sleeper()).collect();
    let threads = fixtures::threads::Parked::start(2);
    let tids = threads.tids();
    assert_eq!(tids.len(), 2, "{tids:?}");
    assert!(tids.iter().all(|&t| t > 0));
    let mut asked: Vec<u32> = kids.iter().map(|k| k.0.id()).collect();
    asked.push(std::process::id());
    asked.push(2);
    asked.extend(tids);
    // Never a task: past any pid_max, the highest id, 0.
    let never = [4_194_305, 0x7fff_ffff, u32::MAX, 0];
    asked.extend(never);
    // Asked twice, and out of order.
    asked.push(kids[0].0.id());

    let mut b = bpf();
    let got = b.start_ticks(&asked).unwrap();
    let mut dir = ProcDir::open("/proc", "/sys").unwrap();
    assert_eq!(got, dir.start_ticks(&asked).unwrap());
    for (pid, start) in asked.iter().zip(&got) {
        if never.contains(pid) {
            assert_eq!(*start, None, "pid {pid}");
        } else {
            assert_eq!(*start, proc_start(*pid), "pid {pid}");
            assert!(start.is_some(), "pid {pid}");
        }
    }
    assert_eq!(b.start_ticks(&[]).unwrap(), Vec::<Option<u64>>::new());

    // Through the table, every PID the lookup gave nothing for is
    // confirmed from /proc: PID 1 too, which this machine's kernel lookup
    // does not return.
    let mut table = ProcTable::open(BackendChoice::Bpf, "/proc", "/sys").unwrap();
    asked.push(1);
    let got = table.start_ticks(&asked).unwrap();
    let want: Vec<Option<u64>> = asked.iter().map(|&p| proc_start(p)).collect();
    assert_eq!(got, want);
    assert!(got.last().unwrap().is_some());
    drop(threads);
}

/// The lookup finds what the kernel's PID lookups find: every process the
/// walk (which follows the task list) saw and /proc still shows, with its
/// start time, but one the `iter/task` iterator, which also goes by PID,
/// does not see either (this machine's PID 1: the iterator skips it
/// and `bpf_task_from_vpid` does not return it, where kill(2) and /proc
/// find it).
#[test]
fn the_lookup_agrees_with_the_walk_over_the_whole_table() {
    let mut b = bpf();
    let q = Query {
        fields: Fields::NONE,
        ..Query::default()
    };
    let mut rows = Vec::new();
    b.snapshot(&q, &mut rows).unwrap();
    let mut by_iter = Vec::new();
    Bpf::open_with(Method::Iter)
        .unwrap()
        .snapshot(&q, &mut by_iter)
        .unwrap();
    let pids: Vec<u32> = rows.iter().map(|p| p.pid).collect();
    let got = b.start_ticks(&pids).unwrap();
    let mut differ = Vec::new();
    let mut not_by_pid = Vec::new();
    for (p, start) in rows.iter().zip(&got) {
        // Agreeing, or the walk's process is no longer there (ended, or
        // its PID taken by another since).
        if *start == Some(p.start_ticks) || proc_start(p.pid) != Some(p.start_ticks) {
            continue;
        }
        if start.is_none() && !by_iter.iter().any(|i| i.pid == p.pid) {
            not_by_pid.push(p.pid);
        } else {
            differ.push((p.pid, p.start_ticks, *start));
        }
    }
    assert!(differ.is_empty(), "{differ:?}");
    assert!(not_by_pid.len() <= 1, "{not_by_pid:?}");
    assert!(got.iter().filter(|s| s.is_some()).count() > pids.len() / 2);
}

#[test]
fn arrays_longer_than_one_run_are_taken_in_runs() {
    let kid = sleeper();
    let pid = kid.0.id();
    let per_run = proctable::bpf::lookup::MAX_PIDS_PER_RUN as usize;
    // This process everywhere, the child last, past the first run.
    let me = std::process::id();
    let mut asked = vec![me; per_run + 1000];
    asked.push(pid);
    let mut b = bpf();
    let got = b.start_ticks(&asked).unwrap();
    assert_eq!(got.len(), asked.len());
    assert!(proc_start(me).is_some());
    assert!(got[..asked.len() - 1].iter().all(|s| *s == proc_start(me)));
    assert_eq!(got[asked.len() - 1], proc_start(pid));
}

/// Without the lookup (a kernel before 6.13) start times come from a walk
/// of the table: the same for processes, nothing for a thread's id.
#[test]
fn without_the_lookup_the_walk_answers_for_processes() {
    let kids: Vec<Guard> = (0..2).map(|_| sleeper()).collect();
    let threads = fixtures::threads::Parked::start(1);
    let mut asked: Vec<u32> = kids.iter().map(|k| k.0.id()).collect();
    asked.extend([std::process::id(), 4_194_305, 0]);
    asked.push(threads.tids()[0]);
    let mut b = bpf();
    b.drop_lookup("as on an older kernel");
    assert_eq!(b.lookup_unavailable(), Some("as on an older kernel"));
    let got = b.start_ticks(&asked).unwrap();
    let n = asked.len();
    for (pid, start) in asked[..n - 1].iter().zip(&got) {
        assert_eq!(*start, proc_start(*pid), "pid {pid}");
    }
    assert_eq!(got[n - 1], None, "a thread's id");
    drop(threads);
}
