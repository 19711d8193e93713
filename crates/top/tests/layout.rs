//! The view drawn with ratatui's test backend at 80x24 and 200x60, on
//! machines made here (4 and 256 CPUs), driven by the keys a user presses.

use std::time::{Duration, Instant};

use procfs::pid::Comm;
use procfs::{Source, SourceStatus, SystemSample};
use proctable::{Exit, Proc};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use top::App;
use top::feed::{Origin, Tick};

const BTIME: u64 = 1_780_000_000;

/// /proc/stat, /proc/meminfo and /proc/loadavg of a machine of `ncpu`
/// CPUs, `k` seconds on: CPU i is busy i% of the time (capped at 100).
fn system(ncpu: usize, k: u64, base: Instant) -> SystemSample {
    let hz = 100;
    let mut stat = String::new();
    let mut tot = [0u64; 10];
    let mut rows = Vec::new();
    for i in 0..ncpu {
        let busy = (i as u64).min(100);
        let user = k * hz * busy / 100;
        let idle = k * hz - user;
        let row = [user, 0, 0, idle, 0, 0, 0, 0, 0, 0];
        for (t, v) in tot.iter_mut().zip(row) {
            *t += v;
        }
        rows.push(format!("cpu{i} {}", row.map(|v| v.to_string()).join(" ")));
    }
    stat.push_str(&format!("cpu  {}\n", tot.map(|v| v.to_string()).join(" ")));
    for r in rows {
        stat.push_str(&r);
        stat.push('\n');
    }
    stat.push_str(&format!(
        "intr {} 0\nctxt {}\nbtime {BTIME}\nprocesses {}\nprocs_running 2\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
        k * 1000,
        k * 5000,
        1000 + k * 3
    ));
    let meminfo = "MemTotal:       16000000 kB\nMemFree:         8000000 kB\nMemAvailable:   12000000 kB\nBuffers:          100000 kB\nCached:          3000000 kB\nSwapCached:            0 kB\nDirty:              1234 kB\nSwapTotal:       2000000 kB\nSwapFree:        2000000 kB\n";
    let mut s = SystemSample::default();
    for (src, text) in [
        (Source::Stat, stat.as_str()),
        (Source::Meminfo, meminfo),
        (Source::Loadavg, "0.50 0.40 0.30 2/300 4242\n"),
    ] {
        s.status[src as usize] = match s.parse_source(src, text.as_bytes()) {
            Ok(()) => SourceStatus::Ok,
            Err(e) => panic!("{src:?}: {e}"),
        };
    }
    s.taken = base + Duration::from_secs(k);
    s.unix_ns = (BTIME + 3600 + k) * 1_000_000_000;
    s
}

/// A process: `cpu_ticks` of user time so far, `rss` MiB.
fn proc_row(pid: u32, ppid: u32, comm: &str, cpu_ticks: u64, rss_mib: u64) -> Proc {
    Proc {
        pid,
        tgid: pid,
        ppid,
        comm: Comm::new(comm.as_bytes()),
        state: 'S',
        start_ticks: 100 + u64::from(pid),
        start_ns: (100 + u64::from(pid)) * 10_000_000,
        utime_ns: cpu_ticks * 10_000_000,
        num_threads: 1,
        rss_bytes: rss_mib << 20,
        uid: Some(0),
        priority: 20,
        ..Proc::default()
    }
}

fn tick(ncpu: usize, k: u64, base: Instant, procs: Vec<Proc>, exits: Vec<Exit>) -> Tick {
    let system = system(ncpu, k, base);
    Tick {
        procs_taken: Some(system.taken),
        procs_unix_ns: system.unix_ns,
        system,
        procs,
        exits,
        ..Tick::default()
    }
}

/// Two samples 2 s apart: `busy` spends 1 s of CPU in them (50%), `big`
/// holds 900 MiB, `fresh` is new in the second, `quitter` exited 3 and
/// `victim` was killed by SIGKILL between them.
fn machine(ncpu: usize) -> App {
    let base = Instant::now();
    let mut app = App::new(
        Origin::Own { backend: "bpf" },
        std::path::Path::new("/nonexistent"),
        true,
    );
    let mut first = vec![
        proc_row(1, 0, "init", 500, 10),
        proc_row(200, 1, "busy", 1000, 50),
        proc_row(300, 1, "big", 10, 900),
        proc_row(301, 300, "bigchild", 1, 5),
        proc_row(400, 1, "quitter", 5, 1),
        proc_row(401, 1, "victim", 5, 1),
    ];
    for i in 0..30 {
        first.push(proc_row(1000 + i, 1, &format!("worker{i}"), 1, 1));
    }
    app.push(tick(ncpu, 10, base, first.clone(), Vec::new()));
    let mut second: Vec<Proc> = first
        .iter()
        .filter(|p| p.pid != 400 && p.pid != 401)
        .copied()
        .collect();
    second[1].utime_ns += 1_000_000_000;
    second.push(proc_row(500, 1, "fresh", 0, 2));
    second.sort_by_key(|p| p.pid);
    let exit = |pid: u32, comm: &str, status: i32| Exit {
        pid,
        ppid: 1,
        comm: Comm::new(comm.as_bytes()),
        start_ticks: 100 + u64::from(pid),
        utime_ns: 5 * 10_000_000,
        exit_status: status,
        ..Exit::default()
    };
    app.push(tick(
        ncpu,
        12,
        base,
        second,
        vec![exit(400, "quitter", 3 << 8), exit(401, "victim", 9)],
    ));
    app
}

fn screen(app: &mut App, w: u16, h: u16) -> (Vec<String>, Terminal<TestBackend>) {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| top::draw::draw(f, app)).unwrap();
    let buf = t.backend().buffer().clone();
    let lines = (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect();
    (lines, t)
}

fn key(app: &mut App, c: KeyCode) {
    app.key(KeyEvent::new(c, KeyModifiers::NONE));
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// The process rows: the lines after the column header, up to the key bar.
fn rows(lines: &[String]) -> Vec<String> {
    let h = lines.iter().position(|l| l.contains("PID")).unwrap();
    lines[h + 1..lines.len() - 1]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .cloned()
        .collect()
}

fn command_of(row: &str) -> &str {
    row.split_whitespace().last().unwrap()
}

#[test]
fn an_80x24_screen_has_the_header_the_list_and_the_keys() {
    let mut app = machine(4);
    let (l, _) = screen(&mut app, 80, 24);
    assert!(l[0].starts_with("quietstat "), "{l:#?}");
    assert!(l[0].contains("load 0.50 0.40 0.30"), "{}", l[0]);
    assert!(l[0].contains("tasks 35"), "{}", l[0]);
    // All CPUs (CPU i is i% busy: 1.5% on average), then one line of bars.
    assert!(l[1].starts_with("cpu ["), "{}", l[1]);
    assert!(l[1].contains("2%]") || l[1].contains("1%]"), "{}", l[1]);
    assert!(l[2].contains("0[") && l[2].contains("3["), "{}", l[2]);
    assert!(l[2].contains("3%]"), "{}", l[2]);
    // 16 GB, 12 available: 4 used.
    assert!(l[3].starts_with("mem 3.8G/15.3G"), "{}", l[3]);
    assert!(l[3].contains("swp 0B/1.9G"), "{}", l[3]);
    assert!(l[4].starts_with("disk "), "{}", l[4]);
    assert!(l[4].contains("+1") && l[4].contains("x2"), "{}", l[4]);
    for name in ["PID", "USER", "CPU%v", "MEM%", "RSS", "COMMAND"] {
        assert!(l[5].contains(name), "{name}: {}", l[5]);
    }
    let r = rows(&l);
    assert_eq!(r.len(), 17, "{l:#?}");
    // busy: 1 s of CPU in 2 s.
    assert!(r[0].contains(" 200 ") && r[0].contains("50.0"), "{}", r[0]);
    assert!(l[23].starts_with("?help"), "{}", l[23]);
    assert!(l[23].trim_end().ends_with("[CPU%v]"), "{}", l[23]);
}

#[test]
fn new_and_exited_processes_are_marked_with_how_they_ended() {
    let mut app = machine(4);
    // Sorted by PID, every row fits at 200x60.
    key(&mut app, KeyCode::Char('N'));
    key(&mut app, KeyCode::Char('N'));
    let (l, _) = screen(&mut app, 200, 60);
    let r = rows(&l);
    let find = |pid: &str| {
        r.iter()
            .find(|x| {
                x.split_whitespace()
                    .nth(usize::from(x.starts_with(['+', 'x'])))
                    == Some(pid)
            })
            .unwrap_or_else(|| panic!("{pid} not on screen: {r:#?}"))
            .clone()
    };
    assert!(find("500").starts_with('+'), "{}", find("500"));
    let q = find("400");
    assert!(
        q.starts_with('x') && q.trim_end().ends_with("[exit 3] quitter"),
        "{q}"
    );
    let v = find("401");
    assert!(v.trim_end().ends_with("[SIGKILL] victim"), "{v}");
    assert!(find("200").starts_with(' '));
}

#[test]
fn keys_sort_filter_fold_and_show_help() {
    let mut app = machine(4);
    key(&mut app, KeyCode::Char('M'));
    let (l, _) = screen(&mut app, 80, 24);
    assert_eq!(command_of(&rows(&l)[0]), "big", "{l:#?}");
    assert!(l[5].contains("MEM%v"), "{}", l[5]);
    // Again: ascending.
    key(&mut app, KeyCode::Char('M'));
    let (l, _) = screen(&mut app, 80, 24);
    assert!(l[5].contains("MEM%^"), "{}", l[5]);
    // `>` moves the sort to the next column (RSS).
    key(&mut app, KeyCode::Char('>'));
    let (l, _) = screen(&mut app, 80, 24);
    assert!(l[5].contains("RSSv"), "{}", l[5]);

    // Filter as typed; Enter keeps it, the key bar says so.
    key(&mut app, KeyCode::Char('/'));
    typed(&mut app, "worker1");
    let (l, _) = screen(&mut app, 80, 24);
    assert!(l[23].starts_with("filter: worker1_"), "{}", l[23]);
    key(&mut app, KeyCode::Enter);
    let (l, _) = screen(&mut app, 80, 24);
    let r = rows(&l);
    // worker1 and worker10..worker19.
    assert_eq!(r.len(), 11, "{r:#?}");
    assert!(r.iter().all(|x| command_of(x).starts_with("worker1")));
    assert!(l[23].contains("/worker1"), "{}", l[23]);
    key(&mut app, KeyCode::Char('/'));
    key(&mut app, KeyCode::Esc);
    let (l, _) = screen(&mut app, 200, 60);
    assert_eq!(rows(&l).len(), 37);

    // Tree: bigchild under big; folding big hides it and says how many.
    key(&mut app, KeyCode::Char('t'));
    let (l, _) = screen(&mut app, 200, 60);
    let r = rows(&l);
    let big = r.iter().position(|x| x.contains(" big")).unwrap();
    assert!(r[big + 1].contains("└─ bigchild"), "{r:#?}");
    app.selected = app
        .items
        .iter()
        .position(|i| app.proc_of(i).pid == 300)
        .unwrap();
    key(&mut app, KeyCode::Char('-'));
    let (l, _) = screen(&mut app, 200, 60);
    let r = rows(&l);
    assert!(r.iter().any(|x| x.contains("big [+1]")), "{r:#?}");
    assert!(!r.iter().any(|x| x.contains("bigchild")));
    key(&mut app, KeyCode::Char('+'));
    let (l, _) = screen(&mut app, 200, 60);
    assert!(rows(&l).iter().any(|x| x.contains("bigchild")));

    // A user filter: uid 0 is root; nobody else runs here.
    key(&mut app, KeyCode::Char('u'));
    typed(&mut app, "root");
    key(&mut app, KeyCode::Enter);
    let (l, _) = screen(&mut app, 200, 60);
    assert_eq!(rows(&l).len(), 35, "exited rows have no owner: {l:#?}");
    key(&mut app, KeyCode::Char('u'));
    typed(&mut app, "no-such-user-anywhere");
    key(&mut app, KeyCode::Enter);
    let (l, _) = screen(&mut app, 200, 60);
    assert!(l[59].contains("no user named"), "{}", l[59]);

    key(&mut app, KeyCode::Char('?'));
    let (l, _) = screen(&mut app, 80, 24);
    assert!(l.iter().any(|x| x.contains("tree view")), "{l:#?}");
    // Any key closes help; q quits.
    key(&mut app, KeyCode::Char('x'));
    assert!(!app.help);
    assert_eq!(
        app.key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE)),
        top::app::Action::Quit
    );
}

#[test]
fn a_256_cpu_machine_gets_a_strip_and_keeps_the_list() {
    let mut app = machine(256);
    let (l, _) = screen(&mut app, 80, 24);
    // 256 CPUs, 64 to a line: four lines, the first saying how many.
    let strip: Vec<&String> = l
        .iter()
        .filter(|x| {
            x.starts_with("   0 ")
                || x.starts_with("  64 ")
                || x.starts_with(" 128 ")
                || x.starts_with(" 192 ")
        })
        .collect();
    assert_eq!(strip.len(), 4, "{l:#?}");
    assert!(strip[0].contains("256 CPUs"), "{}", strip[0]);
    // CPU i is i% busy: the first is idle, the last ones full.
    assert_eq!(&strip[0][5..6], " ", "{}", strip[0]);
    assert_eq!(&strip[3][5 + 63..5 + 64], "@", "{}", strip[3]);
    assert_eq!(rows(&l).len(), 14, "{l:#?}");
    let (l, _) = screen(&mut app, 200, 60);
    assert_eq!(rows(&l).len(), 37, "{l:#?}");
    assert!(l.iter().any(|x| x.contains("256 CPUs")));
    // Wide enough: the cgroup and start columns are shown.
    let head = l.iter().find(|x| x.contains("PID")).unwrap();
    assert!(head.contains("CGROUP") && head.contains("START"), "{head}");
}

#[test]
fn a_small_terminal_shows_what_fits_and_says_so() {
    let mut app = machine(4);
    let (l, _) = screen(&mut app, 60, 12);
    assert!(
        l[11].contains("terminal 60x12 is smaller than 80x24"),
        "{l:#?}"
    );
    assert!(l[0].starts_with("quietstat"));
    assert!(rows(&l).len() >= 3, "{l:#?}");
    let head = l.iter().find(|x| x.contains("PID")).unwrap();
    assert!(!head.contains("CGROUP") && !head.contains("PRI"), "{head}");
    // Even a tiny one draws without a panic.
    for (w, h) in [(1, 1), (10, 2), (20, 3), (0, 0)] {
        let _ = screen(&mut app, w, h);
    }
}

#[test]
fn without_colour_only_bold_dim_and_reverse_are_used() {
    let mut app = machine(4);
    app.color = false;
    let (_, t) = screen(&mut app, 80, 24);
    let buf = t.backend().buffer();
    for c in buf.content() {
        assert_eq!(c.fg, Color::Reset);
        assert_eq!(c.bg, Color::Reset);
    }
    let mut app = machine(4);
    let (_, t) = screen(&mut app, 80, 24);
    assert!(
        t.backend()
            .buffer()
            .content()
            .iter()
            .any(|c| c.fg != Color::Reset)
    );
}

/// A read of the cgroups at `k` seconds: `/system.slice/busy.service`
/// used `busy_ns` of CPU so far, `/user.slice` holds 900 MiB.
fn cgroups_at(k: u64, busy_ns: u64) -> cgroups::Sample {
    use cgroups::{Cgroup, Figure, Figures};
    let row = |path: &str, id: u64, cpu: u64, mem: u64| {
        let mut figures = Figures::default();
        figures.set(Figure::CpuUsageNs, cpu);
        figures.set(Figure::MemoryBytes, mem);
        figures.set(Figure::Pids, 3);
        Cgroup {
            path: path.into(),
            id,
            depth: path.matches('/').count() as u16 - u16::from(path == "/"),
            figures,
        }
    };
    cgroups::Sample {
        mono_ns: k * 1_000_000_000,
        cgroups: vec![
            row("/", 1, busy_ns, 1 << 30),
            row("/system.slice", 2, busy_ns, 10 << 20),
            row("/system.slice/busy.service", 3, busy_ns, 5 << 20),
            row("/system.slice/idle.service", 4, 0, 5 << 20),
            row("/user.slice", 5, 0, 900 << 20),
        ],
        ..cgroups::Sample::default()
    }
}

#[test]
fn the_cgroup_view_is_a_tree_sorted_folded_and_filters_the_processes() {
    let mut app = machine(4);
    // The processes' cgroups: busy in busy.service, big in user.slice.
    let base = Instant::now();
    let mut procs: Vec<Proc> = vec![
        Proc {
            cgroup_id: Some(3),
            ..proc_row(200, 1, "busy", 2000, 50)
        },
        Proc {
            cgroup_id: Some(5),
            ..proc_row(300, 1, "big", 10, 900)
        },
    ];
    procs.sort_by_key(|p| p.pid);
    for (k, busy) in [(14, 0), (16, 1_000_000_000)] {
        app.push(Tick {
            cgroups: Some(cgroups_at(k, busy)),
            ..tick(4, k, base, procs.clone(), Vec::new())
        });
    }
    key(&mut app, KeyCode::Char('C'));
    let (l, _) = screen(&mut app, 80, 24);
    let h = l.iter().position(|x| x.contains("CGROUP")).unwrap();
    for name in ["CPU%v", "MEM", "RD/s", "PSIc", "TASKS"] {
        assert!(l[h].contains(name), "{name}: {}", l[h]);
    }
    let tree: Vec<&str> = l[h + 1..h + 6].iter().map(|x| x.trim_end()).collect();
    // busy.service used 1 s of CPU in 2 s: 50%, and so did its parents.
    assert!(
        tree[0].ends_with(" /") && tree[0].contains("50.0"),
        "{tree:#?}"
    );
    assert!(tree[1].ends_with("├─ system.slice"), "{tree:#?}");
    assert!(
        tree[2].ends_with("│  ├─ busy.service") && tree[2].contains("50.0"),
        "{tree:#?}"
    );
    assert!(tree[3].ends_with("│  └─ idle.service"), "{tree:#?}");
    assert!(
        tree[4].ends_with("└─ user.slice") && tree[4].contains("900M"),
        "{tree:#?}"
    );
    assert!(l[23].contains("[CPU%v]"), "{}", l[23]);
    // By memory: user.slice first under the root.
    key(&mut app, KeyCode::Char('M'));
    let (l, _) = screen(&mut app, 80, 24);
    assert!(
        l[h + 2].trim_end().ends_with("├─ user.slice"),
        "{:#?}",
        &l[h..h + 6]
    );
    assert!(l[23].contains("[MEMv]"), "{}", l[23]);
    // system.slice folded: its two services hidden, counted.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char('-'));
    let (l, _) = screen(&mut app, 80, 24);
    assert!(
        l[h + 3].trim_end().ends_with("└─ system.slice [+2]"),
        "{:#?}",
        &l[h..h + 6]
    );
    assert!(l[h + 4].trim().is_empty(), "{:#?}", &l[h..h + 6]);
    // Enter: the process list, only system.slice's processes.
    key(&mut app, KeyCode::Enter);
    assert!(!app.cg.shown);
    let (l, _) = screen(&mut app, 80, 24);
    let r = rows(&l);
    assert_eq!(r.len(), 1, "{r:#?}");
    assert_eq!(command_of(&r[0]), "busy");
    assert!(l[23].contains("cg:system.slice"), "{}", l[23]);
    // The root's Enter shows every process again.
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::Enter);
    let (l, _) = screen(&mut app, 80, 24);
    assert_eq!(rows(&l).len(), 2);
}

#[test]
fn the_cgroup_view_says_why_it_is_empty() {
    let mut app = machine(4);
    key(&mut app, KeyCode::Char('C'));
    let (l, _) = screen(&mut app, 80, 24);
    assert!(
        l.iter().any(|x| x.contains("no read of the cgroups yet")),
        "{l:#?}"
    );
}

/// Cgroup names come from whoever made the cgroup (a delegated subtree):
/// control bytes are shown escaped, in the tree and in the key bar.
#[test]
fn cgroup_names_never_reach_the_terminal_raw() {
    use cgroups::{Cgroup, Figures};
    let mut app = machine(4);
    let row = |path: &str, id: u64| Cgroup {
        path: path.into(),
        id,
        depth: path.matches('/').count() as u16 - u16::from(path == "/"),
        figures: Figures::default(),
    };
    app.push(Tick {
        cgroups: Some(cgroups::Sample {
            cgroups: vec![row("/", 1), row("/evil\u{1b}[2J.scope", 2)],
            ..cgroups::Sample::default()
        }),
        ..Tick::default()
    });
    key(&mut app, KeyCode::Char('C'));
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Tab);
    let (l, _) = screen(&mut app, 80, 24);
    assert!(l.iter().all(|x| !x.contains('\u{1b}')), "{l:#?}");
    assert!(l.iter().any(|x| x.contains("evil\\x1b[2J.scope")), "{l:#?}");
    key(&mut app, KeyCode::Tab);
    let (l, _) = screen(&mut app, 80, 24);
    assert!(l[23].contains("cg:evil\\x1b[2J.scope"), "{}", l[23]);
}
