//! Every section on a store this test writes: samples a second apart for
//! a minute with counters that grow at rates chosen here, so each figure
//! a section shows is known before it is read.

use std::path::Path;

use procfs::Source;
use proctable::{Exit, Proc};
use report::table::Cell;
use report::{Options, Report, SECTIONS, Window};
use store::History;

const MIN: u64 = 60_000;

/// The texts of the recorded files at second `i` of the minute.
fn files(i: u64) -> Vec<(Source, String)> {
    // CPU: per second 10 user, 5 system, 85 idle ticks (of 100).
    let (u, s, id) = (1000 + 10 * i, 500 + 5 * i, 8000 + 85 * i);
    let stat = format!(
        "cpu  {u} 0 {s} {id} 0 0 0 0 0 0\ncpu0 {u} 0 {s} {id} 0 0 0 0 0 0\n\
         intr {} 0\nctxt {}\nbtime 1700000000\nprocesses {}\n\
         procs_running 3\nprocs_blocked 1\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
        5000 + 50 * i,
        10_000 + 100 * i,
        500 + 2 * i
    );
    let meminfo = "MemTotal:        1048576 kB\nMemFree:          262144 kB\n\
        MemAvailable:     524288 kB\nBuffers:               0 kB\n\
        Cached:           262144 kB\nSwapCached:            0 kB\n\
        Dirty:              1024 kB\nSwapTotal:        102400 kB\n\
        SwapFree:          51200 kB\n"
        .to_string();
    let vmstat = format!("pgfault {}\npgmajfault {}\n", 100 * i, 1000 + 10 * i);
    let loadavg = "1.50 1.00 0.50 3/200 1234\n".to_string();
    // Per second: 10 reads of 8 sectors, 20 writes of 8 sectors, 500 ms
    // busy.
    let diskstats = format!(
        "   8       0 sda {} 0 {} {} {} 0 {} {} 0 {} {} 0 0 0 0 0 0\n",
        10 * i,
        80 * i,
        20 * i,
        20 * i,
        160 * i,
        60 * i,
        500 * i,
        80 * i
    );
    let net_dev = format!(
        "Inter-|   Receive                                                |  Transmit\n \
         face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n  \
         eth0: {} {} 0 {} 0 0 0 0 {} {} 0 0 0 0 0 0\n",
        2048 * i,
        4 * i,
        i,
        1024 * i,
        2 * i
    );
    let interrupts = format!(
        "           CPU0\n  0: {}   IO-APIC   2-edge      timer\n  1: {}   IO-APIC   1-edge      i8042\nLOC: {}   Local timer interrupts\n",
        100 + 7 * i,
        3 * i,
        250 * i
    );
    let softirqs = format!(
        "                    CPU0\n          HI: 0\n       TIMER: {}\n      NET_TX: 0\n      NET_RX: {}\n       BLOCK: 0\n    IRQ_POLL: 0\n     TASKLET: 0\n       SCHED: 0\n     HRTIMER: 0\n         RCU: 0\n",
        30 * i,
        12 * i
    );
    // A quarter of each second some task waited on memory; a tenth all.
    let pressure = |some: u64, full: u64| {
        format!(
            "some avg10=0.00 avg60=0.00 avg300=0.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total={}\n",
            some * i,
            full * i
        )
    };
    let filefd = format!("{}\t0\t65536\n", 1024 + i);
    vec![
        (Source::Stat, stat),
        (Source::Meminfo, meminfo),
        (Source::Vmstat, vmstat),
        (Source::Loadavg, loadavg),
        (Source::Diskstats, diskstats),
        (Source::NetDev, net_dev),
        (Source::Interrupts, interrupts),
        (Source::Softirqs, softirqs),
        (Source::PressureCpu, pressure(100_000, 0)),
        (Source::PressureMemory, pressure(250_000, 100_000)),
        (Source::PressureIo, pressure(0, 0)),
        (Source::Filefd, filefd),
    ]
}

fn proc(pid: u32, i: u64) -> Proc {
    Proc {
        pid,
        tgid: pid,
        ppid: 1,
        comm: procfs::pid::Comm::new(format!("work{pid}").as_bytes()),
        state: 'R',
        start_ticks: 100,
        start_ns: 1_000_000_000,
        // pid 10: 50% user and 25% system of a CPU; pid 11: 10% user.
        utime_ns: if pid == 10 { 500_000_000 } else { 100_000_000 } * i,
        stime_ns: if pid == 10 { 250_000_000 * i } else { 0 },
        minflt: 40 * i,
        num_threads: 4,
        rss_bytes: 64 << 20,
        // pid 10 waits for a CPU 20% of the time, in /busy.service; pid
        // 11 is blocked on I/O 30% and on memory 10%, in /idle.service.
        cgroup_id: Some(if pid == 10 { 2 } else { 3 }),
        sched: Some(procfs::pid::SchedInfo {
            run_delay_ns: if pid == 10 { 200_000_000 * i } else { 0 },
            timeslices: 0,
        }),
        delays: (pid == 11).then_some(proctable::Delays {
            blkio_ns: 300_000_000 * i,
            reclaim_ns: 60_000_000 * i,
            thrashing_ns: 40_000_000 * i,
            ..proctable::Delays::default()
        }),
        // pid 10 receives 64 KiB and sends 8 KiB a second over TCP; pid
        // 11 keeps a GPU's engines busy 40% of the time.
        net: (pid == 10).then_some(proctable::NetBytes {
            rx_bytes: (64 << 10) * i,
            tx_bytes: (8 << 10) * i,
        }),
        gpu: (pid == 11).then_some(proctable::Gpu {
            busy_ns: 400_000_000 * i,
            mem_bytes: 1 << 30,
            clients: 1,
        }),
        ..Proc::default()
    }
}

/// The cgroups at second `i`: `/busy.service` uses 60% of a CPU (40 user,
/// 20 system), 100 MiB (20 of it inactive files), reads 1 MiB and writes
/// 2 MiB a second, and stalls for a CPU 10% of the time; `/idle.service`
/// uses nothing and stalls on I/O 25% and on memory 5% of the time;
/// `/batch.slice/job.scope` is made at 20 s and removed at 50 s.
fn walk(i: u64) -> cgroups::Sample {
    use cgroups::{Cgroup, Figure, Figures};
    let cg = |path: &str, id: u64, figs: &[(Figure, u64)]| {
        let mut figures = Figures::default();
        for (f, v) in figs {
            figures.set(*f, *v);
        }
        Cgroup {
            path: path.into(),
            id,
            depth: path.matches('/').count() as u16 - u16::from(path == "/"),
            figures,
        }
    };
    let mut cgroups = vec![
        cg(
            "/",
            1,
            &[(Figure::CpuUsageNs, 5_000_000_000 + 700_000_000 * i)],
        ),
        cg(
            "/busy.service",
            2,
            &[
                (Figure::CpuUsageNs, 600_000_000 * i),
                (Figure::CpuUserNs, 400_000_000 * i),
                (Figure::CpuSystemNs, 200_000_000 * i),
                (Figure::MemoryBytes, 100 << 20),
                (Figure::MemoryInactiveFileBytes, 20 << 20),
                (Figure::IoReadBytes, (1 << 20) * i),
                (Figure::IoWriteBytes, (2 << 20) * i),
                (Figure::Pids, 3),
                (Figure::CpuSomeUs, 100_000 * i),
                (Figure::IoSomeUs, 0),
            ],
        ),
        cg(
            "/idle.service",
            3,
            &[
                (Figure::CpuUsageNs, 1000),
                (Figure::MemoryBytes, 10 << 20),
                (Figure::IoSomeUs, 250_000 * i),
                (Figure::MemorySomeUs, 50_000 * i),
            ],
        ),
    ];
    if (20..50).contains(&i) {
        cgroups.push(cg("/batch.slice", 4, &[(Figure::CpuUsageNs, 0)]));
        cgroups.push(cg("/batch.slice/job.scope", 5, &[(Figure::CpuUsageNs, 0)]));
    }
    cgroups.sort_by(|a, b| a.path.cmp(&b.path));
    cgroups::Sample {
        cgroups,
        ..cgroups::Sample::default()
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    h: History,
    w: Window,
    t0: u64,
}

fn log(_: String) {}

fn fixture() -> Fixture {
    fixture_without(0..0)
}

/// The process tables at second `i`: pids 10 and 11 throughout.
fn tables(i: u64) -> Vec<Proc> {
    vec![proc(10, i), proc(11, i)]
}

/// A minute of samples from a minute boundary two hours ago, or the first
/// after boot on a machine up for less (the exit's times count from boot)
/// (but the seconds `skip`), the process table every 5 s, one exit at
/// 30 s; read back over that minute.
fn fixture_without(skip: std::ops::Range<u64>) -> Fixture {
    fixture_of(skip, tables)
}

/// As [`fixture_without`], with the process tables of `procs`.
fn fixture_of(skip: std::ops::Range<u64>, procs: fn(u64) -> Vec<Proc>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (mut tap, mut flusher, _) = store::writer::open(
        store::Options::private_in(root, "a test's own store", Path::new("/nonexistent")),
        log,
    )
    .unwrap();
    let boot = flusher.boot_ms();
    let mut t0 =
        (store::writer::now_ms().saturating_sub(2 * 3_600_000)).max(boot + MIN) / MIN * MIN;
    // A minute that ends at a UTC midnight puts its last sample in the
    // next day's file (the sections above read it whole; this test counts
    // one day's samples): the minute after it instead.
    if (t0 + MIN).is_multiple_of(86_400_000) {
        t0 += MIN;
    }
    assert!(
        t0 + MIN <= store::writer::now_ms(),
        "the machine has been up for less than two minutes"
    );
    for i in 0..=60 {
        let ts = t0 + i * 1000;
        if skip.contains(&i) {
            continue;
        }
        let mut kept = Vec::new();
        for (s, text) in files(i) {
            procfs::kept::append(&mut kept, s, text.as_bytes());
        }
        tap.system(ts, &kept);
        if i % 5 == 0 {
            tap.procs(ts, &procs(i));
        }
        if i % 10 == 0 {
            tap.cgroups(ts, &walk(i));
        }
        if i == 30 {
            tap.exits(
                ts,
                &[Exit {
                    pid: 12,
                    ppid: 10,
                    comm: procfs::pid::Comm::new(b"short"),
                    start_ns: (t0 - boot) * 1_000_000,
                    start_ticks: (t0 - boot) / 10,
                    exit_ns: (ts - boot) * 1_000_000,
                    utime_ns: 1_500_000_000,
                    stime_ns: 500_000_000,
                    maxrss_bytes: 8 << 20,
                    exit_status: 9,
                    ..Exit::default()
                }],
            );
        }
    }
    assert!(flusher.flush(), "the test's store was written");
    let h = History::open(&root.join("store")).unwrap();
    let w = Window::new(&h, t0, t0 + MIN, MIN).unwrap();
    Fixture {
        _dir: dir,
        h,
        w,
        t0,
    }
}

fn opts() -> Options {
    Options {
        top: 10,
        rank: report::rank("cpu").unwrap(),
        pid: None,
        comm: None,
        cgroup_sort: model::cgroup::Sort::Cpu,
        cgroup: None,
    }
}

fn run(f: &Fixture, name: &str) -> Report {
    let r = report::run(&f.h, &f.w, &[name], &opts()).unwrap();
    r.into_iter().next().unwrap()
}

/// The cells of `r`'s rows under `column`.
fn col(r: &Report, column: &str) -> Vec<Cell> {
    let i = r.table.columns.iter().position(|c| *c == column).unwrap();
    r.table.rows.iter().map(|row| row[i].clone()).collect()
}

fn n(v: f64) -> Cell {
    Cell::Num(Some(v))
}

fn t(s: &str) -> Cell {
    Cell::Text(s.into())
}

/// A number within a thousandth of `v` (the rates are over 60.0 s).
fn near(c: &Cell, v: f64) -> bool {
    matches!(c, Cell::Num(Some(x)) if (x - v).abs() < 1e-3)
}

fn assert_near(r: &Report, column: &str, want: &[f64]) {
    let got = col(r, column);
    assert_eq!(got.len(), want.len(), "{column}: {got:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(near(g, *w), "{}.{column}: {g:?}, want {w}", r.name);
    }
}

#[test]
fn every_section_reads_recorded_sources_only() {
    for s in SECTIONS {
        for src in s.sources() {
            assert!(
                store::RECORDED.contains(src),
                "section {} reads {}, which the history does not record",
                s.name(),
                src.name()
            );
        }
        assert!(report::section(s.name()).is_some());
    }
    let names = report::names();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "one section per name");
}

#[test]
fn system_sections_show_the_rates_written() {
    let f = fixture();
    let cpu = run(&f, "cpu");
    assert_eq!(col(&cpu, "time").len(), 1, "one row for the minute");
    assert_near(&cpu, "%user", &[10.0]);
    assert_near(&cpu, "%system", &[5.0]);
    assert_near(&cpu, "%idle", &[85.0]);

    let mem = run(&f, "mem");
    assert_near(&mem, "free_mib", &[256.0]);
    assert_near(&mem, "avail_mib", &[512.0]);
    assert_near(&mem, "used_mib", &[512.0]);
    assert_near(&mem, "%used", &[50.0]);
    assert_near(&mem, "dirty_mib", &[1.0]);
    assert_near(&mem, "swap_used_mib", &[50.0]);
    assert_near(&mem, "pgmajfault/s", &[10.0]);

    let load = run(&f, "load");
    assert_near(&load, "runq", &[3.0]);
    assert_near(&load, "blocked", &[1.0]);
    assert_near(&load, "ldavg-1", &[1.5]);
    assert_near(&load, "ldavg-15", &[0.5]);
    assert_near(&load, "cswch/s", &[100.0]);
    assert_near(&load, "forks/s", &[2.0]);

    let disk = run(&f, "disk");
    assert_eq!(col(&disk, "device"), [t("sda")]);
    assert_near(&disk, "tps", &[30.0]);
    assert_near(&disk, "rkB/s", &[40.0]);
    assert_near(&disk, "wkB/s", &[80.0]);
    assert_near(&disk, "%util", &[50.0]);
    // 2 ms per read and 3 per write: (20 + 60) ms over 30 requests.
    assert_near(&disk, "await_ms", &[80.0 / 30.0]);

    let net = run(&f, "net");
    assert_eq!(col(&net, "iface"), [t("eth0")]);
    assert_near(&net, "rxpck/s", &[4.0]);
    assert_near(&net, "txpck/s", &[2.0]);
    assert_near(&net, "rxkB/s", &[2.0]);
    assert_near(&net, "txkB/s", &[1.0]);
    assert_near(&net, "rxdrop/s", &[1.0]);

    let irq = run(&f, "irq");
    assert_eq!(
        col(&irq, "name"),
        [t("LOC"), t("0"), t("1")],
        "busiest first"
    );
    assert_near(&irq, "per_s", &[250.0, 7.0, 3.0]);

    let soft = run(&f, "softirq");
    let names = col(&soft, "name");
    assert_eq!(names[..2], [t("TIMER"), t("NET_RX")]);
    assert_near(
        &soft,
        "per_s",
        &[30.0, 12.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    );

    // No irq file here: cpu, memory and io.
    let psi = run(&f, "pressure");
    assert_eq!(col(&psi, "resource"), [t("cpu"), t("memory"), t("io")]);
    assert_near(&psi, "%some", &[10.0, 25.0, 0.0]);
    assert_near(&psi, "%full", &[0.0, 10.0, 0.0]);

    let fd = run(&f, "filefd");
    assert_near(&fd, "file-nr", &[1084.0]);
    assert_near(&fd, "file-max", &[65536.0]);
    assert_near(&fd, "%used", &[1084.0 * 100.0 / 65536.0]);
}

#[test]
fn process_sections_show_the_tables_and_exits_written() {
    let f = fixture();
    let p = run(&f, "proc");
    assert_eq!(col(&p, "pid"), [n(10.0), n(11.0)], "busiest first");
    assert_near(&p, "%cpu", &[75.0, 10.0]);
    // A row per process at every 5 s table after the first: 12 each.
    let w = Window::new(&f.h, f.t0, f.t0 + MIN, 5000).unwrap();
    let p = report::run(&f.h, &w, &["proc"], &opts()).unwrap().remove(0);
    assert_eq!(p.table.rows.len(), 24);
    assert_eq!(col(&p, "pid")[..2], [n(10.0), n(11.0)], "busiest first");
    assert_near(&p, "%cpu", &[75.0, 10.0].repeat(12));
    assert_near(&p, "%usr", &[50.0, 10.0].repeat(12));
    assert_near(&p, "minflt/s", &[40.0, 40.0].repeat(12));
    assert_near(&p, "rss_mib", &[64.0, 64.0].repeat(12));
    assert_eq!(col(&p, "comm")[..2], [t("work10"), t("work11")]);

    let mut o = opts();
    o.pid = Some(11);
    let only = report::run(&f.h, &w, &["proc"], &o).unwrap().remove(0);
    assert!(col(&only, "pid").iter().all(|c| *c == n(11.0)));

    // Waiting: for a CPU (pid 10), on block I/O (pid 11).
    assert_near(&p, "%wait", &[20.0, 0.0].repeat(12));
    let iod = col(&p, "%iod");
    assert!(
        iod.iter().step_by(2).all(|c| *c == Cell::Num(None)),
        "{iod:?}"
    );
    assert!(
        iod.iter().skip(1).step_by(2).all(|c| near(c, 30.0)),
        "{iod:?}"
    );

    // Bytes over TCP (pid 10), GPU use (pid 11); absent where not read.
    let rx = col(&p, "rxkB/s");
    assert!(rx.iter().step_by(2).all(|c| near(c, 64.0)), "{rx:?}");
    assert!(rx.iter().skip(1).step_by(2).all(|c| *c == Cell::Num(None)));
    let tx = col(&p, "txkB/s");
    assert!(tx.iter().step_by(2).all(|c| near(c, 8.0)), "{tx:?}");
    let gpu = col(&p, "%gpu");
    assert!(gpu.iter().step_by(2).all(|c| *c == Cell::Num(None)));
    assert!(
        gpu.iter().skip(1).step_by(2).all(|c| near(c, 40.0)),
        "{gpu:?}"
    );

    // Who waited most over the minute: pid 11 (18 s on I/O, 6 on
    // memory), then pid 10 (12 s for a CPU); their cgroups likewise.
    // Then the cgroups' own stalls, from the walks' pressure totals: the
    // root and the batch cgroups have none recorded and are not listed.
    let waits = run(&f, "waits");
    assert_eq!(
        col(&waits, "kind"),
        [
            t("process"),
            t("process"),
            t("cgroup"),
            t("cgroup"),
            t("cgroup stall"),
            t("cgroup stall")
        ]
    );
    assert_eq!(
        col(&waits, "who"),
        [
            t("11 work11"),
            t("10 work10"),
            t("/idle.service"),
            t("/busy.service"),
            t("/idle.service"),
            t("/busy.service")
        ]
    );
    assert_near(&waits, "total_s", &[24.0, 12.0, 24.0, 12.0, 18.0, 6.0]);
    let none = Cell::Num(None);
    let cpu = col(&waits, "cpu_wait_s");
    assert!(
        near(&cpu[1], 12.0) && near(&cpu[3], 12.0) && near(&cpu[5], 6.0),
        "{cpu:?}"
    );
    assert_eq!(&cpu[4], &none, "no CPU pressure recorded: absent");
    let io = col(&waits, "io_wait_s");
    assert!(
        near(&io[0], 18.0) && near(&io[2], 18.0) && near(&io[4], 15.0) && near(&io[5], 0.0),
        "{io:?}"
    );
    assert_eq!((&io[1], &io[3]), (&none, &none), "not carried: absent");
    let mem = col(&waits, "mem_wait_s");
    assert!(
        near(&mem[0], 6.0) && near(&mem[2], 6.0) && near(&mem[4], 3.0),
        "{mem:?}"
    );
    assert_near(&waits, "seen_s", &[60.0; 6]);
    let e = run(&f, "exits");
    assert_eq!(col(&e, "pid"), [n(12.0)]);
    assert_eq!(col(&e, "ppid"), [n(10.0)]);
    assert_eq!(col(&e, "comm"), [t("short")]);
    assert_eq!(col(&e, "status"), [t("SIGKILL")]);
    assert_eq!(col(&e, "lifetime"), [t("30s")]);
    assert_near(&e, "cpu_s", &[2.0]);
    assert_near(&e, "maxrss_mib", &[8.0]);
}

/// A process that ended within the range is ranked with its waits up to
/// its last table, and its cgroup keeps them; one that lived throughout
/// ranks as before. Taken at every table (5 s), the processes gone from a
/// table are done with as they go.
#[test]
fn a_process_that_ended_is_ranked_by_what_it_waited_before() {
    fn with_ended(i: u64) -> Vec<Proc> {
        let mut t = tables(i);
        if i <= 30 {
            // Waits for a CPU 90% of the time: 27 s by its last table.
            let mut p = proc(13, i);
            p.sched = Some(procfs::pid::SchedInfo {
                run_delay_ns: 900_000_000 * i,
                timeslices: 0,
            });
            t.push(p);
        }
        t
    }
    let f = fixture_of(0..0, with_ended);
    for every in [MIN, 5000] {
        let w = Window::new(&f.h, f.t0, f.t0 + MIN, every).unwrap();
        let r = report::run(&f.h, &w, &["waits"], &opts())
            .unwrap()
            .remove(0);
        let who = col(&r, "who");
        if every == MIN {
            // Taken at 0 s and 60 s only: gone by the second, it was seen
            // once, and grew by nothing.
            assert_eq!(who[..2], [t("11 work11"), t("10 work10")], "{who:?}");
            continue;
        }
        assert_eq!(
            who[..3],
            [t("13 work13"), t("11 work11"), t("10 work10")],
            "{who:?}"
        );
        // Then the cgroups' own stalls (the walks, every 10 s, the same
        // growth at any interval).
        assert_near(
            &r,
            "total_s",
            &[27.0, 24.0, 12.0, 27.0 + 24.0, 12.0, 18.0, 6.0][..],
        );
        assert_eq!(col(&r, "seen_s")[0], n(30.0));
        // pid 13 is in /idle.service with pid 11.
        assert_eq!(who[3], t("/idle.service"));
    }
}

#[test]
fn cgroup_sections_show_the_walks_written() {
    let f = fixture();
    let c = run(&f, "cgroup");
    // The minute's rates; the job came and went within it.
    assert_eq!(
        col(&c, "cgroup"),
        [t("/"), t("/busy.service"), t("/idle.service")],
        "busiest first"
    );
    assert_near(&c, "%cpu", &[70.0, 60.0, 0.0]);
    let busy = |r: &Report, column: &str| col(r, column)[1].clone();
    for (column, want) in [
        ("%usr", 40.0),
        ("%sys", 20.0),
        ("mem_mib", 100.0),
        ("wset_mib", 80.0),
        ("rkB/s", 1024.0),
        ("wkB/s", 2048.0),
        ("tasks", 3.0),
    ] {
        assert!(
            near(&busy(&c, column), want),
            "{column}: {:?}",
            busy(&c, column)
        );
    }
    // A row per cgroup at every walk after the first (10 s apart); the
    // job's first walk has no rate.
    let w = Window::new(&f.h, f.t0, f.t0 + MIN, 10_000).unwrap();
    let mut o = opts();
    o.cgroup_sort = model::cgroup::Sort::Path;
    let c = report::run(&f.h, &w, &["cgroup"], &o).unwrap().remove(0);
    assert_eq!(c.table.rows.len(), 3 * 6 + 2 * 3);
    assert_eq!(
        col(&c, "cgroup")[3..8],
        [
            t("/"),
            t("/batch.slice"),
            t("/batch.slice/job.scope"),
            t("/busy.service"),
            t("/idle.service")
        ]
    );
    assert_eq!(col(&c, "%cpu")[4], Cell::Num(None), "{:?}", c.table.rows[4]);
    // One subtree, ranked by memory.
    o.cgroup = Some("/busy.service".into());
    o.cgroup_sort = model::cgroup::Sort::parse("memory").unwrap();
    let c = report::run(&f.h, &w, &["cgroup"], &o).unwrap().remove(0);
    assert_eq!(col(&c, "cgroup"), vec![t("/busy.service"); 6]);
    assert_near(&c, "%cpu", &[60.0; 6]);

    let e = run(&f, "cgroup-events");
    let at = |s: u64| Cell::Text(store::when::format(f.t0 + s * 1000, false));
    assert_eq!(col(&e, "time"), [at(20), at(20), at(50), at(50)]);
    assert_eq!(
        col(&e, "event"),
        [t("made"), t("made"), t("removed"), t("removed")]
    );
    assert_eq!(
        col(&e, "cgroup"),
        [
            t("/batch.slice"),
            t("/batch.slice/job.scope"),
            t("/batch.slice"),
            t("/batch.slice/job.scope")
        ]
    );
    o.cgroup = Some("/batch.slice/job.scope".into());
    let e = report::run(&f.h, &f.w, &["cgroup-events"], &o)
        .unwrap()
        .remove(0);
    assert_eq!(col(&e, "id"), [n(5.0), n(5.0)]);
    // --sort is checked by the sections that use it.
    assert!(
        report::sorts("rss_bytes", &["cgroup"])
            .unwrap_err()
            .to_string()
            .contains("cpu, memory, io, pids or path")
    );
    assert!(report::sorts("memory", &["proc"]).is_err());
    assert!(report::sorts("memory", &["cgroup", "cpu"]).is_ok());
}

#[test]
fn the_store_section_counts_each_sources_samples() {
    let f = fixture();
    let s = run(&f, "store");
    assert_eq!(s.table.columns[0], "day");
    let count = |src: &str| {
        s.table
            .rows
            .iter()
            .find(|r| r[1] == t(src))
            .map(|r| r[2].clone())
    };
    for src in ["stat", "meminfo", "filefd", "interrupts"] {
        assert_eq!(count(src), Some(n(61.0)), "{src}: {:?}", s.table.rows);
    }
    assert!(
        s.table
            .rows
            .iter()
            .any(|r| matches!(&r[1], Cell::Text(x) if x.starts_with("(file, "))),
        "{:?}",
        s.table.rows
    );
}

#[test]
fn a_pause_is_a_gap_never_a_rate() {
    // Seconds 21 to 39 not recorded: with rows every 10 s, two rows
    // before, the gap, two after.
    let f = fixture_without(21..40);
    let w = Window::new(&f.h, f.t0, f.t0 + MIN, 10_000).unwrap();
    let cpu = report::run(&f.h, &w, &["cpu"], &opts()).unwrap().remove(0);
    assert_eq!(cpu.table.rows.len(), 4);
    assert_near(&cpu, "%user", &[10.0; 4]);
    assert_eq!(cpu.gaps.len(), 1);
    let (a, b, why) = &cpu.gaps[0];
    assert_eq!((*a, *b), (f.t0 + 20_000, f.t0 + 40_000));
    assert_eq!(why, "no samples");
    let text = report::render(&[cpu], &w, report::Format::Table, &[]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].starts_with("time"), "{text}");
    assert!(lines[4].starts_with("-- no data from "), "{text}");
    assert_eq!(lines.len(), 8, "{text}");
}
