//! Both backends against the live kernel, with children of known behaviour.
//! The BPF half needs CAP_BPF and CAP_PERFMON (the suite runs as root in CI);
//! without them these tests fail, naming why, rather than skip.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use proctable::bpf::{Bpf, Method};
use proctable::dir::ProcDir;
use proctable::{Fields, Proc, Query};

struct Kids(Vec<Child>);

impl Drop for Kids {
    fn drop(&mut self) {
        // Each child leads its own process group: killing the group also
        // ends what a shell child started (the `sleep` of a loop).
        for c in &mut self.0 {
            // SAFETY: the group of our own child; kill has no memory effects.
            unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
            let _ = c.wait();
        }
    }
}

fn spawn(script: &str) -> Child {
    Command::new("sh")
        .args(["-c", script])
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn sh")
}

fn bpf_with(method: Method) -> Bpf {
    let b = Bpf::open_with(method)
        .unwrap_or_else(|e| panic!("the BPF backend must load here (run as root): {e}"));
    // This kernel (6.18) has the open-coded task iterator: the walk must
    // load, not quietly fall back.
    assert_eq!(
        b.method(),
        method,
        "walk unavailable: {:?}",
        b.walk_unavailable()
    );
    b
}

fn bpf() -> Bpf {
    bpf_with(Method::Walk)
}

const METHODS: [Method; 2] = [Method::Walk, Method::Iter];

/// Field 1-based from /proc/PID/stat, split after the last ')'.
fn proc_stat(pid: u32) -> Vec<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let close = text.rfind(')').unwrap();
    let mut v = vec![
        String::new(),
        String::new(),
        text[text.find('(').unwrap() + 1..close].to_string(),
    ];
    v.extend(text[close + 1..].split_whitespace().map(String::from));
    v
}

fn find(rows: &[Proc], pid: u32) -> &Proc {
    rows.iter()
        .find(|p| p.pid == pid)
        .unwrap_or_else(|| panic!("pid {pid} missing"))
}

#[test]
fn backends_agree_field_by_field_with_each_other_and_proc() {
    for method in METHODS {
        agree(method);
    }
}

fn agree(method: Method) {
    let kids = Kids(vec![
        spawn("while :; do :; done"),
        spawn("while :; do :; done"),
        spawn("exec sleep 1000"),
        spawn("printf 'a) (b' > /proc/$$/comm; exec 3</dev/null; while :; do sleep 100; done"),
        Command::new("python3")
            .process_group(0)
            .args([
                "-c",
                "import threading,time,os\n\
                 b=threading.Barrier(21)\n\
                 def work():\n\
                 \x20sum(range(400000))\n\
                 \x20b.wait()\n\
                 \x20time.sleep(1000)\n\
                 ts=[threading.Thread(target=work) for _ in range(20)]\n\
                 [t.start() for t in ts]\n\
                 b.wait()\n\
                 open('/dev/null','w').write('x'*100000)\n\
                 open('/tmp/qs-live-threads-%d' % os.getpid(),'w').close()\n\
                 time.sleep(1000)",
            ])
            .spawn()
            .expect("python3"),
        // Threads that burn CPU, fault and write, then exit: their counters
        // are only in the process's signal_struct now.
        Command::new("python3")
            .process_group(0)
            .args([
                "-c",
                "import threading,time\n\
                 def work():\n\
                 \x20x=bytearray(8000000)\n\
                 \x20sum(range(2000000))\n\
                 \x20open('/dev/null','w').write('y'*50000)\n\
                 ts=[threading.Thread(target=work) for _ in range(3)]\n\
                 [t.start() for t in ts]\n\
                 [t.join() for t in ts]\n\
                 time.sleep(1000)",
            ])
            .spawn()
            .expect("python3"),
        // Another user's process (nobody), for the uid.
        Command::new("sleep")
            .arg("1000")
            .uid(65534)
            .process_group(0)
            .spawn()
            .expect("sleep as nobody"),
    ]);
    // The 20 live threads have burnt their CPU and wait.
    let ready = format!("/tmp/qs-live-threads-{}", kids.0[4].id());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !std::path::Path::new(&ready).exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{ready} never appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_file(&ready);
    let joined = kids.0[5].id();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while proc_stat(joined).get(20).map(String::as_str) != Some("1") {
        assert!(
            std::time::Instant::now() < deadline,
            "{joined}'s threads never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(700));
    // OOM adjustments (raising needs no privilege; lowering needs
    // CAP_SYS_RESOURCE, which a container may not give root).
    for (k, adj) in [(2, 300), (6, 500)] {
        std::fs::write(
            format!("/proc/{}/oom_score_adj", kids.0[k].id()),
            adj.to_string(),
        )
        .unwrap();
    }
    let pids: Vec<u32> = kids.0.iter().map(|c| c.id()).collect();
    let query = Query {
        fields: Fields::all(),
        threads: false,
        pids: Some(pids.clone()),
    };
    let mut dir = ProcDir::open("/proc", "/sys").unwrap();
    let mut b = bpf_with(method);
    let (mut from_bpf, mut from_dir) = (Vec::new(), Vec::new());
    let t = std::time::Instant::now();
    b.snapshot(&query, &mut from_bpf).unwrap();
    dir.snapshot(&query, &mut from_dir).unwrap();
    // CPU burners run between the reads: allow what that time can add.
    let slack_ticks = 2 + (t.elapsed().as_millis() / 10) as u64;
    assert_eq!(from_bpf.len(), pids.len(), "bpf rows: {from_bpf:?}");
    assert_eq!(from_dir.len(), pids.len());
    for (i, &pid) in pids.iter().enumerate() {
        let (a, d) = (find(&from_bpf, pid), find(&from_dir, pid));
        let s = proc_stat(pid);
        let burner = i < 2;
        // comm: the kernel keeps 15 bytes; both show them.
        assert_eq!(a.comm.as_bytes(), d.comm.as_bytes(), "comm of {pid}");
        assert_eq!(a.comm.to_string_lossy(), s[2]);
        assert_eq!((a.tgid, a.ppid), (d.tgid, d.ppid), "{pid}");
        assert_eq!(a.ppid.to_string(), s[4]);
        assert_eq!(a.start_ticks, d.start_ticks, "start of {pid}");
        assert_eq!(a.start_ticks.to_string(), s[22]);
        assert_eq!(a.num_threads, d.num_threads);
        assert_eq!(a.num_threads.to_string(), s[20]);
        assert_eq!(
            (a.nice, a.priority, a.policy, a.rt_priority),
            (d.nice, d.priority, d.policy, d.rt_priority)
        );
        assert_eq!(a.nice.to_string(), s[19]);
        assert_eq!(a.vsize_bytes, d.vsize_bytes, "vsize of {pid}");
        assert_eq!(a.vsize_bytes.to_string(), s[23]);
        assert_eq!(a.cgroup_id, d.cgroup_id, "cgroup of {pid}");
        assert!(a.cgroup_id.is_some());
        assert_eq!(a.uid, d.uid, "uid of {pid}");
        let status = std::fs::read(format!("/proc/{pid}/status")).unwrap();
        assert_eq!(
            a.uid,
            Some(procfs::pid::parse_status_euid(&status).unwrap())
        );
        let adj = std::fs::read(format!("/proc/{pid}/oom_score_adj")).unwrap();
        let adj = procfs::pid::parse_oom_score_adj(&adj).unwrap();
        assert_eq!(
            (a.oom_score_adj, d.oom_score_adj),
            (Some(adj), Some(adj)),
            "oom of {pid}"
        );
        match i {
            2 => assert_eq!(adj, 300),
            6 => assert_eq!(adj, 500),
            _ => {}
        }
        let cpu = |p: &Proc| p.utime_ticks() + p.stime_ticks();
        if burner {
            assert!(cpu(a) > 0, "burner {pid} used no CPU");
            assert!(
                cpu(d).abs_diff(cpu(a)) <= slack_ticks,
                "cpu of {pid}: {a:?} vs {d:?}"
            );
            assert_eq!(a.state, 'R');
            // Read by BPF first: the wait for a CPU only grows.
            let (sa, sd) = (a.sched.unwrap(), d.sched.unwrap());
            assert!(sa.run_delay_ns <= sd.run_delay_ns && sa.timeslices <= sd.timeslices);
            assert!(sa.timeslices > 0, "{pid}: {sa:?}");
        } else {
            assert_eq!(a.utime_ticks(), d.utime_ticks(), "utime of {pid}");
            assert_eq!(a.stime_ticks(), d.stime_ticks(), "stime of {pid}");
            assert_eq!(a.utime_ticks().to_string(), s[14]);
            assert_eq!(a.stime_ticks().to_string(), s[15]);
            assert_eq!(
                (a.minflt, a.majflt),
                (d.minflt, d.majflt),
                "faults of {pid}"
            );
            assert_eq!(a.minflt.to_string(), s[10]);
            assert_eq!(a.rss_bytes, d.rss_bytes, "rss of {pid}");
            assert_eq!(a.state, d.state);
            assert_eq!(a.io, d.io, "io of {pid}");
            assert_eq!(a.ctxsw, d.ctxsw, "ctxsw of {pid}");
            let sched = std::fs::read(format!("/proc/{pid}/schedstat")).unwrap();
            let sched = procfs::pid::parse_schedstat(&sched).unwrap();
            assert_eq!(
                (a.sched, d.sched),
                (Some(sched), Some(sched)),
                "delay of {pid}"
            );
        }
    }
    assert_eq!(find(&from_bpf, kids.0[6].id()).uid, Some(65534));
    // The dead threads' CPU, faults and writes are in its row.
    let j = find(&from_bpf, joined);
    assert!(j.utime_ticks() + j.stime_ticks() >= 3, "{j:?}");
    assert!(j.minflt >= 3 * 8_000_000 / 4096, "{j:?}");
    assert!(j.io.unwrap().wchar >= 150_000, "{j:?}");
    // The thread-heavy child: 21 threads, the same TIDs from both; its row
    // carries the CPU its live threads used (the leader only waited).
    let py = kids.0[4].id();
    assert_eq!(find(&from_bpf, py).num_threads, 21);
    let p = find(&from_bpf, py);
    assert!(p.utime_ticks() + p.stime_ticks() >= 5, "{p:?}");
    assert!(find(&from_bpf, py).io.unwrap().wchar >= 100_000);
    let threads = Query {
        fields: Fields::stat(),
        threads: true,
        pids: Some(vec![py]),
    };
    b.snapshot(&threads, &mut from_bpf).unwrap();
    dir.snapshot(&threads, &mut from_dir).unwrap();
    let tids = |rows: &[Proc]| {
        rows.iter()
            .map(|p| (p.pid, p.tgid, p.start_ticks))
            .collect::<Vec<_>>()
    };
    assert_eq!(from_bpf.len(), 21);
    assert_eq!(tids(&from_bpf), tids(&from_dir));
    // The vectored identity check: one gone PID gives None.
    let mut asked = pids.clone();
    asked.push(u32::MAX >> 2);
    let starts = b.start_ticks(&asked).unwrap();
    assert_eq!(starts, dir.start_ticks(&asked).unwrap());
    assert_eq!(starts.last(), Some(&None));
    assert!(starts[..pids.len()].iter().all(Option::is_some));
}

#[test]
fn whole_tables_match_but_for_processes_that_came_or_went() {
    for method in METHODS {
        for threads in [false, true] {
            whole_tables_match(method, threads);
        }
    }
}

/// The kernel threads: (pid, whether it is a workqueue worker) from
/// /proc/PID/stat's flags (PF_KTHREAD, PF_WQ_WORKER).
fn kernel_threads() -> Vec<(u32, bool)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let after = &text[text.rfind(')').unwrap() + 2..];
        let flags: u64 = after.split_whitespace().nth(6).unwrap().parse().unwrap();
        if flags & 0x0020_0000 != 0 {
            out.push((pid, flags & 0x20 != 0));
        }
    }
    out
}

/// Each of `pids`' names as /proc/PID/comm shows it (None: gone).
fn proc_names(pids: &[(u32, bool)]) -> Vec<Option<String>> {
    pids.iter()
        .map(|(pid, _)| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .ok()
                .map(|s| s.trim_end_matches('\n').to_string())
        })
        .collect()
}

/// A kernel thread's name from the walk is the one /proc gives (and so
/// ps and psutil): a name longer than comm in full
/// (`kworker/R-kvfree_rcu_reclaim`), a workqueue worker's with its last
/// work (`kworker/0:0H-events_highpri`, `+` while it runs it). A worker's
/// description changes as it takes work from other queues: /proc is read
/// just before and just after the walk, and a worker whose name changed
/// between the two is not judged; nor is the sign (`+`/`-`), which flips
/// with every work item it runs.
#[test]
fn kernel_threads_are_named_as_proc_names_them() {
    let mut b = bpf();
    let threads = kernel_threads();
    let q = Query::default();
    let mut rows = Vec::new();
    let before = proc_names(&threads);
    b.snapshot(&q, &mut rows).unwrap();
    let after = proc_names(&threads);
    let unsigned = |s: &str| s.replace('+', "-");
    let (mut long, mut described, mut judged) = (0, 0, 0);
    for (((pid, worker), before), after) in threads.iter().zip(&before).zip(&after) {
        let (Some(before), Some(after)) = (before, after) else {
            continue;
        };
        let Some(row) = rows.iter().find(|p| p.pid == *pid) else {
            continue;
        };
        let got = row.comm.to_string_lossy();
        if *worker && unsigned(before) != unsigned(after) {
            continue;
        }
        judged += 1;
        if *worker {
            assert_eq!(unsigned(&got), unsigned(before), "worker {pid}");
        } else {
            assert_eq!(&got, before, "kernel thread {pid}");
        }
        // Longer than a comm: a full name, or a worker's description.
        if got.len() > 15 {
            *(if *worker { &mut described } else { &mut long }) += 1;
        }
    }
    // This kernel has both kinds (rcu_exp_par_gp_kthread_worker/0,
    // kworker/0:0H-events_highpri).
    assert!(
        judged > 10 && long > 0 && described > 0,
        "{judged} {long} {described}"
    );
}

/// A kernel thread's name without a workqueue worker's description (what
/// follows `kworker/N:N` after its `+` or `-`).
fn own_name(name: &[u8]) -> &[u8] {
    if !name.starts_with(b"kworker/") {
        return name;
    }
    let end = name
        .iter()
        .position(|b| *b == b'+' || *b == b'-')
        .unwrap_or(name.len());
    &name[..end]
}

fn whole_tables_match(method: Method, threads: bool) {
    let mut dir = ProcDir::open("/proc", "/sys").unwrap();
    let mut b = bpf_with(method);
    let q = Query {
        threads,
        ..Query::default()
    };
    let (mut a, mut d, mut a2) = (Vec::new(), Vec::new(), Vec::new());
    b.snapshot(&q, &mut a).unwrap();
    dir.snapshot(&q, &mut d).unwrap();
    b.snapshot(&q, &mut a2).unwrap();
    // Present in both BPF scans (alive throughout) => present in procfs's.
    for p in a
        .iter()
        .filter(|p| a2.iter().any(|q| q.identity() == p.identity()))
    {
        let other = d.iter().find(|q| q.pid == p.pid);
        assert_eq!(other.map(Proc::identity), Some(p.identity()), "{p:?}");
        // Both name a workqueue worker with its current work
        // (kworker/0:0H-events_highpri, `+` while it runs it), which
        // changes between two reads: only the worker's own name is
        // compared. Any other name is the same, or longer from /proc.
        assert!(
            own_name(other.unwrap().comm.as_bytes()).starts_with(own_name(p.comm.as_bytes())),
            "{p:?} against {other:?}"
        );
    }
    // procfs rows missing from BPF: processes (threads) that came or went
    // between the scans, and from the iterator PID 1 (its threads), on a
    // kernel whose task iterator does not visit it (seen on this machine's
    // VM; `bpftool iter` with a one-line program shows the same). The walk
    // follows the list from init_task by hand and finds PID 1.
    let may_miss_init = matches!(method, Method::Iter);
    for p in &d {
        if (p.tgid != 1 || !may_miss_init) && !a.iter().chain(&a2).any(|q| q.pid == p.pid) {
            let alive = std::path::Path::new(&format!("/proc/{}", p.pid)).exists();
            assert!(
                !alive || p.start_ticks > a[0].start_ticks,
                "procfs-only row {p:?}"
            );
        }
    }
}

#[test]
fn walk_grows_its_array_when_the_tasks_do_not_fit() {
    let mut small = bpf();
    small.set_walk_capacity(8).unwrap();
    assert_eq!(small.walk_capacity(), Some(8));
    let mut big = bpf();
    let q = Query::default();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    small.snapshot(&q, &mut a).unwrap();
    big.snapshot(&q, &mut b).unwrap();
    assert!(small.walk_capacity().unwrap() as usize >= a.len());
    assert_eq!(small.walk_reloads(), 2, "set once, grown once");
    assert_eq!(big.walk_reloads(), 0, "sized for the machine at open");
    assert!(a.len() > 8, "{} rows", a.len());
    // The same processes but for any that came or went between the walks.
    let ids = |rows: &[Proc]| rows.iter().map(Proc::identity).collect::<Vec<_>>();
    let (ia, ib) = (ids(&a), ids(&b));
    let common = ia.iter().filter(|i| ib.contains(i)).count();
    assert!(common + 5 >= ia.len().max(ib.len()), "{ia:?} vs {ib:?}");
    // Threads mode grows too, and rows are one per thread.
    small.set_walk_capacity(8).unwrap();
    let threads = Query {
        threads: true,
        ..Query::default()
    };
    small.snapshot(&threads, &mut a).unwrap();
    assert!(
        a.len() > b.len(),
        "{} threads, {} processes",
        a.len(),
        b.len()
    );
}

#[test]
fn processes_exiting_mid_scan_are_skipped_never_half_read() {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = Command::new("true").status();
                n += 1;
            }
            n
        })
    };
    let mut dir = ProcDir::open("/proc", "/sys").unwrap();
    // Reads split between threads, in parts small enough for this table.
    let mut split = ProcDir::open("/proc", "/sys").unwrap();
    split.set_threads(proctable::Threads::Fixed(2));
    split.set_part_pids(16);
    let mut walk = bpf();
    let mut iter = bpf_with(Method::Iter);
    let all = Query {
        fields: Fields::all(),
        ..Query::default()
    };
    let mut rows = Vec::new();
    for _ in 0..40 {
        dir.snapshot(&all, &mut rows)
            .expect("procfs scan with exits");
        assert!(
            rows.iter().all(|p| p.start_ticks > 0 || p.pid <= 2),
            "half-read row"
        );
        split
            .snapshot(&all, &mut rows)
            .expect("split procfs scan with exits");
        assert!(
            rows.iter().all(|p| p.start_ticks > 0 || p.pid <= 2),
            "half-read row (split)"
        );
        walk.snapshot(&all, &mut rows).expect("bpf walk with exits");
        iter.snapshot(&all, &mut rows)
            .expect("bpf iterator with exits");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(churn.join().unwrap() > 10, "the churn thread ran");
}

#[test]
fn exit_capture_finds_a_thousand_short_lived_children() {
    let mut b = bpf();
    b.enable_exits(64 * 1024).unwrap();
    let mut exits = Vec::new();
    b.drain_exits(&mut exits);
    let before = b.exit_stats().unwrap();
    let q = Query::default();
    let mut first = Vec::new();
    b.snapshot(&q, &mut first).unwrap();
    let mut children = Vec::new();
    for i in 0..1000 {
        // SAFETY: the child only calls _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            // SAFETY: in the child: _exit is async-signal-safe.
            unsafe { libc::_exit(i % 200) };
        }
        children.push((pid as u32, i % 200));
    }
    for &(pid, _) in &children {
        let mut status = 0;
        // SAFETY: our own child; status is a valid out-parameter.
        unsafe { libc::waitpid(pid as i32, &mut status, 0) };
    }
    let mut second = Vec::new();
    b.snapshot(&q, &mut second).unwrap();
    exits.clear();
    b.drain_exits(&mut exits);
    let after = b.exit_stats().unwrap();
    assert_eq!(after.lost, before.lost, "no exit lost");
    let me = std::process::id();
    // A forked child is named after the thread that forked it.
    let thread_comm = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
    for &(pid, code) in &children {
        assert!(!second.iter().any(|p| p.pid == pid), "{pid} still listed");
        let e = exits
            .iter()
            .find(|e| e.pid == pid)
            .unwrap_or_else(|| panic!("exit of {pid} not captured ({} captured)", exits.len()));
        assert_eq!(e.exit_code(), Some(code), "{e:?}");
        assert_eq!(e.ppid, me);
        assert!(e.start_ns > 0 && e.exit_ns >= e.start_ns);
        assert!(e.maxrss_bytes > 0, "{e:?}");
        assert_eq!(e.comm.to_string_lossy(), thread_comm.trim_end());
    }
}

extern "C" fn exit_code(arg: *mut libc::c_void) -> libc::c_int {
    arg as usize as libc::c_int
}

/// A child that exits at once with `code`, made without copying this
/// process's page tables (its BPF mappings make a fork cost a
/// millisecond): clone with CLONE_VM and CLONE_VFORK, this thread waiting
/// until it has exited. Returns its PID.
fn exit_with(code: i32, stack: &mut [u64]) -> i32 {
    // SAFETY: the child runs exit_code on its own stack (the top of
    // `stack`, 16-byte aligned) and exits with its value; the caller is
    // suspended until then, so the stack is not reused meanwhile.
    unsafe {
        let top = stack.as_mut_ptr().add(stack.len()).cast::<libc::c_void>();
        libc::clone(
            exit_code,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            code as usize as *mut libc::c_void,
        )
    }
}

/// The exit ring's data is mapped once (the usual consumer maps it twice,
/// and every page of both counts in RSS), and reading goes round its end:
/// more exits than the 4 MiB ring holds, drained as they come, each found
/// with its status.
#[test]
fn exit_ring_is_mapped_once_and_read_round_its_end() {
    let page = sys::page_size();
    let ring = proctable::record::QS_EXIT_RING_BYTES;
    let mut b = bpf();
    b.enable_exits(64 * 1024).unwrap();
    let sizes: Vec<u64> = std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|l| l.contains("anon_inode:bpf-map"))
        .filter_map(|l| {
            let (a, b) = l.split_whitespace().next()?.split_once('-')?;
            Some(u64::from_str_radix(b, 16).ok()? - u64::from_str_radix(a, 16).ok()?)
        })
        .collect();
    assert!(
        sizes.contains(&(page + ring)),
        "no mapping of one page and the data: {sizes:?}"
    );
    assert!(
        !sizes.contains(&(page + 2 * ring)),
        "the data mapped twice: {sizes:?}"
    );
    let mut exits = Vec::new();
    b.drain_exits(&mut exits);
    exits.clear();
    // About 120 bytes a record: 40,000 go round a 4 MiB ring. Each round's
    // children are zombies until all are forked, so their PIDs are
    // distinct within the round (PIDs wrap over the rounds).
    let me = std::process::id();
    let mut read = 0;
    let mut stack = vec![0u64; 8192];
    for round in 0..20 {
        let mut want = std::collections::HashMap::new();
        for i in 0..2000 {
            let code = (round * 7 + i) % 250;
            let pid = exit_with(code, &mut stack);
            assert!(pid > 0, "clone: {}", std::io::Error::last_os_error());
            want.insert(pid as u32, code);
        }
        for &pid in want.keys() {
            let mut status = 0;
            // SAFETY: our own child; status is a valid out-parameter.
            unsafe { libc::waitpid(pid as i32, &mut status, 0) };
        }
        exits.clear();
        b.drain_exits(&mut exits);
        read += exits.len();
        let mut found = 0;
        for e in exits.iter().filter(|e| e.ppid == me) {
            if let Some(code) = want.get(&e.pid) {
                assert_eq!(e.exit_code(), Some(*code), "round {round}: {e:?}");
                found += 1;
            }
        }
        assert_eq!(
            found,
            want.len(),
            "round {round}: of {} exits read",
            exits.len()
        );
    }
    assert_eq!(b.exit_stats().unwrap().lost, 0, "no exit lost");
    assert!(
        read as u64 * 120 > ring,
        "{read} exits did not go round the ring"
    );
}

/// Exit capture without BPF (taskstats, as root): every child found with
/// the same exit status, parent, name and CPU time as the BPF capture
/// records for it, a multi-threaded one summed over its threads.
#[test]
fn taskstats_captures_the_same_exits_as_bpf() {
    let possible = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap();
    let mut ts = proctable::taskstats::TaskstatsExits::open(possible.trim())
        .expect("taskstats registration (root, CONFIG_TASKSTATS)");
    let mut b = bpf();
    b.enable_exits(64 * 1024).unwrap();
    let (mut from_ts, mut from_bpf) = (Vec::new(), Vec::new());
    ts.drain(&mut from_ts);
    b.drain_exits(&mut from_bpf);
    let mut kids: Vec<(Child, i32)> = (1..=40)
        .map(|k| {
            let c = Command::new("sh")
                .args(["-c", &format!("exit {k}")])
                .spawn()
                .unwrap();
            (c, k)
        })
        .collect();
    // A CPU burner and a 6-thread process whose threads burn too.
    kids.push((
        Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exit 77",
            ])
            .spawn()
            .unwrap(),
        77,
    ));
    kids.push((
        Command::new("python3")
            .args([
                "-c",
                "import threading,os\n\
                 def burn():\n    x=0\n    for i in range(3000000): x+=i\n\
                 ts=[threading.Thread(target=burn) for _ in range(5)]\n\
                 [t.start() for t in ts]\n[t.join() for t in ts]\nos._exit(99)",
            ])
            .spawn()
            .unwrap(),
        99,
    ));
    // Each waited for but left a zombie (WNOWAIT): once the leader is
    // reported, every thread is gone, and its /proc stat is the kernel's
    // own total of them all. Then reaped.
    let mut reaped = Vec::new();
    for (c, k) in &mut kids {
        // SAFETY: a zeroed siginfo is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOWAIT;
        // SAFETY: waits for our own child, into a local.
        let waited = unsafe { libc::waitid(libc::P_PID, c.id(), &mut info, flags) };
        assert_eq!(waited, 0);
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", c.id())).unwrap();
        let f: Vec<u64> = stat
            .rsplit_once(") ")
            .unwrap()
            .1
            .split(' ')
            .skip(7)
            .take(4)
            .map(|x| x.parse().unwrap())
            .collect();
        // minflt, cminflt, majflt, cmajflt
        reaped.push((c.id(), *k, f[0], f[2]));
        c.wait().unwrap();
    }
    // Taskstats holds a multi-threaded group for its late threads.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let seen = |v: &Vec<proctable::Exit>| reaped.iter().all(|r| v.iter().any(|e| e.pid == r.0));
    while !(seen(&from_ts) && seen(&from_bpf)) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        ts.drain(&mut from_ts);
        b.drain_exits(&mut from_bpf);
    }
    assert_eq!(ts.overflows(), 0);
    for (pid, code, minflt, majflt) in reaped {
        let t = from_ts
            .iter()
            .find(|e| e.pid == pid)
            .unwrap_or_else(|| panic!("taskstats missed {pid}"));
        let e = from_bpf.iter().find(|e| e.pid == pid).unwrap();
        assert_eq!(t.exit_code(), Some(code), "{t:?}");
        assert_eq!(
            (t.exit_status, t.ppid),
            (e.exit_status, e.ppid),
            "{t:?} vs {e:?}"
        );
        assert_eq!(t.comm, e.comm);
        // Every thread's faults, even of a thread still on its way out when
        // another ended the group (the python child: its workers end as it
        // calls exit).
        assert_eq!((t.minflt, t.majflt), (minflt, majflt), "taskstats {t:?}");
        assert_eq!((e.minflt, e.majflt), (minflt, majflt), "BPF {e:?}");
        // Both are scaled to the exact runtime, read as each task begins to
        // exit (taskstats) or as the group ends (BPF, a thread still on its
        // way out read then): a few ms apart at most.
        let cpu = |x: &proctable::Exit| (x.utime_ns + x.stime_ns) as i64;
        assert!(
            (cpu(t) - cpu(e)).abs() <= 15_000_000,
            "cpu of {pid}: {t:?} vs {e:?}"
        );
        // Whole seconds of wall clock against the boot clock.
        assert!(
            t.start_ns.abs_diff(e.start_ns) <= 2_000_000_000,
            "{t:?} vs {e:?}"
        );
        assert!(t.maxrss_bytes > 0);
        if code >= 77 {
            assert!(
                cpu(t) > 50_000_000,
                "the threads' CPU time is summed: {t:?}"
            );
        }
    }
}

/// A command line is read once per program: served from the cache while
/// the process runs it, read again after an exec, even of a program with
/// the same name; kernel threads have none.
#[test]
fn command_lines_are_read_once_per_program() {
    use proctable::{BackendChoice, Field, ProcTable};
    use std::io::Write;
    let wait_for = |pid: u32, text: &[u8]| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default() != text {
            assert!(
                std::time::Instant::now() < deadline,
                "{pid} never showed {text:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    for choice in [BackendChoice::Bpf, BackendChoice::Procfs] {
        let mut table = ProcTable::open(choice, "/proc", "/sys").unwrap();
        let mut kids = Kids(vec![
            Command::new("sh")
                .args(["-c", "read line; exec sh -c 'read again; sleep 1000'"])
                .process_group(0)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn sh"),
        ]);
        let pid = kids.0[0].id();
        let query = Query {
            fields: Fields::NONE.with(Field::Pid).with(Field::Cmdline),
            threads: false,
            pids: Some(vec![2, pid]),
        };
        let mut rows = Vec::new();
        let mut line = |table: &mut ProcTable| {
            table.snapshot(&query, &mut rows).unwrap();
            assert_eq!(
                table.cmdline(&rows[0]),
                None,
                "kthreadd has no command line"
            );
            let row = rows.iter().find(|p| p.pid == pid).expect("the child's row");
            table.cmdline(row).map(str::to_string)
        };
        wait_for(
            pid,
            b"sh\0-c\0read line; exec sh -c 'read again; sleep 1000'\0",
        );
        let first = "sh -c read line; exec sh -c 'read again; sleep 1000'";
        assert_eq!(line(&mut table).as_deref(), Some(first), "{choice:?}");
        let reads = table.cmdline_reads();
        assert_eq!(line(&mut table).as_deref(), Some(first));
        assert_eq!(
            table.cmdline_reads(),
            reads,
            "{choice:?}: read again without an exec"
        );
        // The same name (sh) after the exec.
        kids.0[0]
            .stdin
            .as_mut()
            .unwrap()
            .write_all(b"go\n")
            .unwrap();
        wait_for(pid, b"sh\0-c\0read again; sleep 1000\0");
        let second = "sh -c read again; sleep 1000";
        assert_eq!(line(&mut table).as_deref(), Some(second), "{choice:?}");
        assert_eq!(table.cmdline_reads(), reads + 1, "{choice:?}");
    }
}

/// The values of `p` for the fields of one group, and whether they are all
/// unset (zero, `None`, no state letter).
fn group_values(p: &Proc, f: proctable::Field) -> (Vec<i128>, bool) {
    use proctable::Field as F;
    let n = |v: u64| v as i128;
    let v: Vec<i128> = match f {
        F::Ppid => vec![n(p.ppid.into())],
        F::Comm => vec![n(p.comm.as_bytes().len() as u64)],
        F::State => vec![p.state as i128],
        F::Cpu => vec![n(p.cpu.into())],
        F::Utime | F::Stime => vec![n(p.utime_ns + p.stime_ns)],
        F::Minflt | F::Majflt => vec![n(p.minflt), n(p.majflt)],
        F::Rss | F::Vsize => vec![n(p.rss_bytes), n(p.vsize_bytes)],
        F::Nice => vec![p.nice.into()],
        F::Priority => vec![p.priority.into()],
        F::Policy => vec![n(p.policy.into()), n(p.rt_priority.into())],
        F::Cgroup => vec![p.cgroup_id.map_or(-1, |v| v as i128)],
        F::Uid => vec![p.uid.map_or(-1, |v| v.into())],
        F::OomScoreAdj => vec![p.oom_score_adj.map_or(-1, |v| v.into())],
        F::Io => vec![p.io.map_or(-1, |io| io.rchar as i128)],
        F::Cmdline => vec![n(p.exec)],
        _ => vec![],
    };
    let unset = match f {
        F::Cgroup | F::Uid | F::OomScoreAdj | F::Io => v.iter().all(|&x| x == -1),
        // A process's CPU can be 0 and 0 is a valid state of none.
        F::Cpu | F::Policy => v.iter().all(|&x| x == 0),
        _ => v.iter().all(|&x| x == 0),
    };
    (v, unset)
}

/// Each group of kernel fields is read only when one of its fields is asked:
/// the others come back unset even right after a walk that read them into
/// the same rows, and what is read equals a full read.
#[test]
fn the_walk_reads_only_the_groups_asked_for() {
    use proctable::Field as F;
    let kid = Command::new("nice")
        .args(["-n", "5", "sleep", "1000"])
        .process_group(0)
        .stdin(Stdio::null())
        .spawn()
        .expect("nice sleep");
    let kids = Kids(vec![kid]);
    let pid = kids.0[0].id();
    // nice has exec'd sleep once its name shows.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while proc_stat(pid)[2] != "sleep" {
        assert!(std::time::Instant::now() < deadline, "sleep never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Values a wrong group would show: a parent, a name, a nice of 5, faults,
    // memory, CPU time.
    let checked = [
        F::Ppid,
        F::Comm,
        F::State,
        F::Utime,
        F::Minflt,
        F::Rss,
        F::Nice,
        F::Priority,
        F::Cgroup,
        F::Uid,
        F::OomScoreAdj,
        F::Io,
        F::Cmdline,
    ];
    for method in METHODS {
        let mut b = bpf_with(method);
        let mut full = Vec::new();
        let all = Query {
            fields: Fields::all(),
            ..Query::default()
        };
        b.snapshot(&all, &mut full).unwrap();
        let whole = *find(&full, pid);
        for &f in &checked {
            let (v, unset) = group_values(&whole, f);
            assert!(!unset, "{method:?}: {f:?} unset in a full read: {v:?}");
        }
        for &asked in &checked {
            let fields = Fields::NONE.with(F::Pid).with(F::Start).with(asked);
            let q = Query {
                fields,
                ..Query::default()
            };
            let mut rows = Vec::new();
            // A full read first leaves every value in the walk's rows.
            b.snapshot(&all, &mut rows).unwrap();
            b.snapshot(&q, &mut rows).unwrap();
            let p = find(&rows, pid);
            assert_eq!(p.identity(), whole.identity());
            for &f in &checked {
                let (v, unset) = group_values(p, f);
                // The command-line cache is keyed by the name too.
                let with = asked == F::Cmdline && f == F::Comm;
                if f == asked {
                    assert_eq!(
                        v,
                        group_values(&whole, f).0,
                        "{method:?}: {f:?} asked alone"
                    );
                } else if !with {
                    assert!(
                        unset,
                        "{method:?}: {f:?} read when only {asked:?} was asked: {v:?}"
                    );
                }
            }
        }
    }
}

/// A read and a build give the rows a snapshot gives, into a table that
/// held other rows, on both backends; a build with no read before it is an
/// error, not the last read's rows again.
#[test]
fn a_read_then_a_build_give_the_snapshot_rows() {
    use proctable::{BackendChoice, ProcTable};
    let kids = Kids((0..3).map(|_| spawn("exec sleep 1000")).collect());
    let ours: Vec<u32> = kids.0.iter().map(Child::id).collect();
    for choice in [BackendChoice::Bpf, BackendChoice::Procfs] {
        let mut t = ProcTable::open(choice, "/proc", "/sys").unwrap();
        let q = Query::default();
        let mut snap = Vec::new();
        t.snapshot(&q, &mut snap).unwrap();
        let mut built = vec![Proc::default(); 5];
        t.read(&q).unwrap();
        t.build(&q, &mut built).unwrap();
        assert!(built.is_sorted_by_key(|p| p.pid), "{choice:?}");
        assert!(
            built.iter().all(|p| p.pid != 0),
            "{choice:?}: an old row left"
        );
        for &pid in &ours {
            let (a, b) = (find(&snap, pid), find(&built, pid));
            assert_eq!(
                (a.identity(), a.ppid, a.comm, a.rss_bytes),
                (b.identity(), b.ppid, b.comm, b.rss_bytes),
                "{choice:?}"
            );
        }
        let e = t.build(&q, &mut built).unwrap_err().to_string();
        assert!(e.contains("no process-table read"), "{choice:?}: {e}");
    }
}

/// Children resident in a known amount of memory each, killed and reaped
/// when dropped.
struct Resident(Vec<i32>);

impl Drop for Resident {
    fn drop(&mut self) {
        for &pid in &self.0 {
            // SAFETY: our own child; status is not read.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// A child that maps `bytes` more anonymous memory than this process,
/// touches every page of it and waits to be killed.
fn resident_child(bytes: usize) -> i32 {
    // SAFETY: the child calls only mmap, writes to the memory it mapped
    // and pause (async-signal-safe), never returning into the test.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                libc::_exit(1);
            }
            for off in (0..bytes).step_by(4096) {
                std::ptr::write_volatile(p.cast::<u8>().add(off), 1);
            }
            loop {
                libc::pause();
            }
        }
    }
    pid
}

/// Resident pages of `pid` (statm's second field).
fn statm_rss_pages(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|f| f.parse().ok()))
        .unwrap_or(0)
}

#[test]
fn a_capped_walk_writes_rows_only_for_the_most_resident() {
    const CAP: usize = 10;
    let mb = 1 << 20;
    // Twelve children, more than the cap, each resident in more than
    // the test's other processes: the cap falls among them, wherever the
    // rest of the machine's processes are.
    let kids = Resident((0..12).map(|i| resident_child((40 + 8 * i) * mb)).collect());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while kids
        .0
        .iter()
        .enumerate()
        .any(|(i, &pid)| statm_rss_pages(pid) * 4096 < ((40 + 8 * i) * mb) as u64)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "children not resident"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut capped = Bpf::open_with_exit_ring(1 << 20, CAP, false)
        .unwrap_or_else(|e| panic!("the BPF backend must load here (run as root): {e}"));
    assert_eq!(
        capped.method(),
        Method::Walk,
        "{:?}",
        capped.walk_unavailable()
    );
    let q = Query::default();
    let mut rows = Vec::new();
    // The first walk has no count to bound it by: it writes every process
    // (they fit its rows here) and counts them by resident pages.
    capped.snapshot(&q, &mut rows).unwrap();
    let (first, left_out) = capped.walk_written().unwrap();
    assert_eq!(left_out, 0);
    assert!(first as usize > 2 * CAP, "{first} rows");
    assert_eq!(rows.len(), CAP);
    // The second is bounded by the first's count: rows for about the cap,
    // the others left out unwritten, and counted as found.
    capped.snapshot(&q, &mut rows).unwrap();
    let (written, left_out) = capped.walk_written().unwrap();
    assert!(
        written as usize <= 2 * CAP,
        "{written} rows for a cap of {CAP}"
    );
    assert!(written as usize >= CAP, "{written} rows for a cap of {CAP}");
    assert_eq!(capped.found() as u64, written + left_out);
    assert_eq!(rows.len(), CAP);
    let mut whole = Vec::new();
    bpf().snapshot(&q, &mut whole).unwrap();
    let found = capped.found();
    assert!(
        found.abs_diff(whole.len()) < 20,
        "{found} of {}",
        whole.len()
    );
    // Each child the whole table has well inside the cap is among the rows.
    let mut checked = 0;
    for &pid in &kids.0 {
        let me = find(&whole, pid as u32);
        let above = whole.iter().filter(|p| p.rss_bytes > me.rss_bytes).count();
        if above + 2 <= CAP {
            checked += 1;
            assert!(
                rows.iter().any(|p| p.pid == pid as u32),
                "{pid} ({} bytes, {above} above) missing from {:?}",
                me.rss_bytes,
                rows.iter()
                    .map(|p| (p.pid, p.rss_bytes))
                    .collect::<Vec<_>>()
            );
        }
    }
    assert!(
        checked > 0,
        "the machine has {CAP} processes larger than the children"
    );
    // A lower cap bounds the next walk by the count already made.
    capped.set_rows_cap(CAP / 2);
    capped.snapshot(&q, &mut rows).unwrap();
    let (written, _) = capped.walk_written().unwrap();
    assert!(
        written as usize <= CAP,
        "{written} rows for a cap of {}",
        CAP / 2
    );
    assert_eq!(rows.len(), CAP / 2);
    // A cap lifted leaves the walk at the cap it was opened with, its rows
    // never reloaded.
    capped.set_rows_cap(0);
    capped.snapshot(&q, &mut rows).unwrap();
    let (written, left_out) = capped.walk_written().unwrap();
    assert!(
        written as usize <= 2 * CAP && left_out > 0,
        "{written} rows"
    );
    assert_eq!(capped.walk_reloads(), 0);
}

/// The total of /proc/pressure/cpu's `some` line (µs).
fn cpu_pressure_some_us() -> u64 {
    let text = std::fs::read_to_string("/proc/pressure/cpu").unwrap();
    let some = text.lines().find(|l| l.starts_with("some")).unwrap();
    some.rsplit("total=").next().unwrap().parse().unwrap()
}

/// Two busy loops pinned on one CPU each wait for it about half the time:
/// over a second, each one's run delay grows by about half a second
/// (more, where other tasks share that CPU), and its time on the CPU plus
/// its wait make up the second, from either backend; the kernel's CPU
/// pressure rises with them.
#[test]
fn a_process_waiting_for_its_cpu_shows_a_run_delay_of_about_half_the_time() {
    let pin = |cpu: &str| {
        Command::new("taskset")
            .args(["-c", cpu, "sh", "-c", "while :; do :; done"])
            .process_group(0)
            .spawn()
            .expect("taskset")
    };
    let cpu = (std::thread::available_parallelism().unwrap().get() - 1).to_string();
    let kids = Kids(vec![pin(&cpu), pin(&cpu)]);
    std::thread::sleep(Duration::from_millis(200));
    let pids: Vec<u32> = kids.0.iter().map(|c| c.id()).collect();
    let query = Query {
        fields: Fields::NONE
            .with(proctable::Field::Delay)
            .with(proctable::Field::Utime)
            .with(proctable::Field::Stime),
        threads: false,
        pids: Some(pids.clone()),
    };
    let mut b = bpf();
    let mut dir = ProcDir::open("/proc", "/sys").unwrap();
    let read = |b: &mut Bpf, dir: &mut ProcDir| {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        b.snapshot(&query, &mut x).unwrap();
        dir.snapshot(&query, &mut y).unwrap();
        (x, y)
    };
    let (psi0, t0) = (cpu_pressure_some_us(), std::time::Instant::now());
    let (b0, d0) = read(&mut b, &mut dir);
    std::thread::sleep(Duration::from_secs(1));
    let (b1, d1) = read(&mut b, &mut dir);
    let wall_ns = t0.elapsed().as_nanos() as u64;
    let psi_ns = (cpu_pressure_some_us() - psi0) * 1000;
    for (before, after) in [(&b0, &b1), (&d0, &d1)] {
        for &pid in &pids {
            let (p0, p1) = (find(before, pid), find(after, pid));
            let delay = p1.sched.unwrap().run_delay_ns - p0.sched.unwrap().run_delay_ns;
            let ran = (p1.utime_ns + p1.stime_ns) - (p0.utime_ns + p0.stime_ns);
            assert!(
                delay >= wall_ns * 4 / 10 && delay <= wall_ns,
                "{pid} waited {delay} ns of {wall_ns}"
            );
            // Runnable throughout: on the CPU or waiting for it (ticks
            // and the reads' own time between them, a tenth either way).
            assert!(
                (ran + delay).abs_diff(wall_ns) <= wall_ns / 10,
                "{pid}: ran {ran} and waited {delay} ns of {wall_ns}"
            );
        }
    }
    assert!(
        psi_ns >= wall_ns * 3 / 10,
        "cpu pressure {psi_ns} ns of {wall_ns}"
    );
}
