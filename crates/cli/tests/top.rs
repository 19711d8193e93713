//! `quietstat top` in a real terminal (tmux, driven with send-keys and read
//! with capture-pane): live from an agent started here, falling back to its
//! own sampling when the agent is killed, and replaying a store recorded
//! here. And `ps --backend agent` against `ps --backend bpf`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::agent::{Proc, agent};
use common::store::{after_flush, after_reads};
use common::{BIN, assert_ok, run, wait_for};
use sys::child::Guard;

/// A tmux server of our own (its own socket) with one 80x24 session
/// running `cmd`; killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(name: &str, cmd: &str) -> Tmux {
        let socket = format!("qs-{name}-{}", std::process::id());
        // The shell says how top ended, and keeps the pane to read it.
        let script = format!("{cmd}; echo TOP-EXITED $?; sleep 600");
        let ok = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "80",
                "-y",
                "24",
            ])
            .args(["-s", name, "sh", "-c", &script])
            .env_remove("NO_COLOR")
            .env("TERM", "xterm-256color")
            .status()
            .expect("tmux (Debian package tmux)");
        assert!(ok.success());
        Tmux { socket }
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            let ok = Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", k])
                .status()
                .unwrap();
            assert!(ok.success());
        }
    }

    /// Types `text` literally.
    fn text(&self, text: &str) {
        let ok = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-l", text])
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// Waits until the screen satisfies `cond`; the screen.
    #[track_caller]
    fn expect(&self, what: &str, cond: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        let ok = wait_for(Duration::from_secs(20), || {
            last = self.screen();
            cond(&last)
        });
        assert!(ok, "{what}; the screen:\n{last}");
        last
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // The server's socket file goes with it.
        let path = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "display-message",
                "-p",
                "#{socket_path}",
            ])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
        if !path.is_empty() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The column header line and the process rows under it.
fn rows(screen: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = screen.lines().collect();
    let h = lines
        .iter()
        .position(|l| l.contains("PID") && l.contains("COMMAND"))
        .unwrap_or_else(|| panic!("no column header:\n{screen}"));
    let body = lines[h + 1..lines.len().saturating_sub(1)]
        .iter()
        .map(|s| s.to_string())
        .filter(|l| !l.trim().is_empty())
        .collect();
    (lines[h].to_string(), body)
}

fn spawn_sleeper() -> Proc {
    Proc(Guard(
        Command::new("sleep")
            .arg("3600")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    ))
}

fn wait_for_view(shm: &Path) {
    let procs = shm::view::procs_path(shm);
    assert!(
        wait_for(Duration::from_secs(20), || procs.exists()),
        "{} never appeared",
        procs.display()
    );
}

/// The process view file is written only for viewers: not while none
/// reads it, and a viewer coming after such a pause gets at once a table
/// no older than the process interval; while one reads, every table is
/// written.
#[test]
fn the_process_view_is_written_while_viewers_read_it() {
    let a = agent("[sources.processes]\ninterval = \"1s\"\n", &[]);
    after_reads(&a, "processes", 3);
    let procs = shm::view::procs_path(&a.shm);
    // (A stat, not an open: an open is what tells the agent.)
    assert_eq!(
        std::fs::metadata(&procs).unwrap().len(),
        0,
        "written unasked"
    );
    let v = shm::view::read_live_procs(&a.shm).unwrap();
    let age = sys::mono_ns().saturating_sub(v.meta.mono_ns);
    assert!(
        age <= v.meta.interval_ns + 1_000_000_000,
        "a table {age} ns old, the interval {} ns",
        v.meta.interval_ns
    );
    assert!(v.procs.iter().any(|p| p.pid == std::process::id()));
    let first = v.meta.mono_ns;
    assert!(
        wait_for(Duration::from_secs(20), || {
            shm::view::read_procs(&procs).is_ok_and(|v| v.meta.mono_ns > first)
        }),
        "no newer table written while a viewer reads"
    );
}

#[test]
fn top_live_from_the_agent_sorts_filters_folds_helps_and_outlives_it() {
    let mut a = agent("[sources.processes]\ninterval = \"1s\"\n", &[]);
    wait_for_view(&a.shm);
    let marker = spawn_sleeper();
    let t = Tmux::start(
        "live",
        &format!("{BIN} top -d 500ms --shm-path {}", a.shm.display()),
    );
    let s = t.expect("a live screen from the agent", |s| {
        s.contains("LIVE agent") && s.contains("COMMAND")
    });
    let first = s.lines().next().unwrap();
    assert!(first.starts_with("quietstat "), "{s}");
    assert!(s.lines().all(|l| l.chars().count() <= 80));

    // Sort by memory, then by time.
    t.keys(&["M"]);
    t.expect("sorted by memory", |s| s.contains("MEM%v"));
    t.keys(&["T"]);
    t.expect("sorted by time", |s| s.contains("TIME+v"));

    // Filter on the marker's pid: its row only, once the agent's table has it.
    let pid = marker.id().to_string();
    t.keys(&["/"]);
    t.text(&pid);
    t.keys(&["Enter"]);
    // Its row, and few others (a command line elsewhere could hold the
    // digits, past the screen's edge), once Enter has closed the prompt
    // (the list is filtered while the pattern is typed).
    let is_marker = |r: &String| r.split_whitespace().next() == Some(pid.as_str());
    let s = t.expect("the marker's row, filtered", |s| {
        let (_, r) = rows(s);
        r.iter().any(is_marker) && r.len() < 5 && !s.contains("filter: ")
    });
    let r = rows(&s).1;
    let marker_row = r.iter().find(|x| is_marker(x)).unwrap();
    assert!(marker_row.contains("sleep 3600"), "{s}");
    assert!(r.len() < 5, "{s}");
    assert!(
        s.lines().last().unwrap().contains(&format!("/{pid}")),
        "{s}"
    );
    // Esc clears the filter.
    t.keys(&["/", "Escape"]);
    t.expect("the whole table again", |s| rows(s).1.len() > 5);

    // Tree, then help, which any key closes.
    t.keys(&["t"]);
    t.expect("the tree", |s| {
        s.contains("tree]") && (s.contains("├─") || s.contains("└─"))
    });
    t.keys(&["?"]);
    t.expect("the help", |s| {
        s.contains("keys") && s.contains("tree view")
    });
    t.keys(&["Escape"]);
    t.expect("help closed", |s| !s.contains("tree view"));

    // The agent is killed: the view says so and samples on its own.
    a.proc.signal(libc::SIGKILL);
    a.proc.wait(Duration::from_secs(10)).unwrap();
    let s = t.expect("a notice, then own sampling", |s| {
        s.contains("the agent is gone") && s.contains("LIVE own") && drawn(s)
    });
    assert!(rows(&s).1.len() > 5, "{s}");

    t.keys(&["q"]);
    t.expect("top quit cleanly", |s| s.contains("TOP-EXITED 0"));
    drop(marker);
}

#[test]
fn top_quits_when_its_terminal_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start("hangup", "true");
    // A second session running top itself, so that its pid is the pane's.
    let out = Command::new("tmux")
        .args([
            "-L",
            &t.socket,
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_pid}",
        ])
        .args([
            "-x",
            "80",
            "-y",
            "24",
            "-s",
            "top",
            BIN,
            "top",
            "--no-agent",
            "-d",
            "500ms",
        ])
        .arg("--shm-path")
        .arg(dir.path().join("none"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    assert!(wait_for(Duration::from_secs(20), || {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains("top")
    }));
    // Drawing: past its start.
    let drawn = wait_for(Duration::from_secs(20), || {
        let out = Command::new("tmux")
            .args(["-L", &t.socket, "capture-pane", "-p", "-t", "top"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).contains("LIVE own")
    });
    assert!(drawn, "top never drew its screen");
    drop(t);
    assert!(
        wait_for(Duration::from_secs(10), || !alive()),
        "top (pid {pid}) still runs without its terminal"
    );
}

#[test]
fn top_without_an_agent_samples_here_and_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start(
        "own",
        &format!(
            "NO_COLOR=1 {BIN} top -d 500ms --shm-path {}",
            dir.path().join("none").display()
        ),
    );
    let s = t.expect("own sampling, with a notice", |s| {
        s.contains("LIVE own") && s.contains("no agent") && drawn(s)
    });
    assert!(rows(&s).1.len() > 5, "{s}");
    // Processes come and go between samples: some sample marks them.
    t.keys(&["q"]);
    t.expect("top quit", |s| s.contains("TOP-EXITED 0"));
}

/// Records with an agent started here until a process has exited and four
/// more process tables were read, then stops it.
fn record_store(dir: &Path) {
    // The replay header shows whole seconds, and a step goes to the next
    // recorded `stat` sample: two in one second would look like no step.
    // Without slack no read comes early (one at 12:00:00.995 and the read
    // at start-up, at 12:00:00.4, would share a second), and no read on
    // demand comes within a second of the last.
    let cfg = "slack = \"0s\"\n[store]\nflush_interval = \"300ms\"\nprocess_interval = \"1s\"\n[sources.processes]\ninterval = \"1s\"\n[sources.stat]\nmin_interval = \"1s\"\ndemand_min_interval = \"1s\"\n";
    let mut a = agent(cfg, &["--store", dir.to_str().unwrap()]);
    let mut quitter = Command::new("sh")
        .args(["-c", "sleep 2; exit 7"])
        .spawn()
        .unwrap();
    assert_eq!(quitter.wait().unwrap().code(), Some(7));
    after_reads(&a, "processes", 4);
    a.proc.signal(libc::SIGTERM);
    assert!(a.proc.wait(Duration::from_secs(20)).is_some());
}

/// Whether tmux has applied the whole of top's frame: under load it may
/// have taken the header and only some of the list when the pane is
/// captured. (The tests still assert what the list holds.)
fn drawn(s: &str) -> bool {
    rows(s).1.len() > 5
}

/// The time on a replay header: `REPLAY YYYY-MM-DD HH:MM:SS`.
fn replay_time(s: &str) -> String {
    let first = s.lines().next().unwrap_or("");
    let at = first
        .find("REPLAY ")
        .unwrap_or_else(|| panic!("no REPLAY header:\n{s}"));
    first[at + 7..at + 26].to_string()
}

#[test]
fn top_replays_a_recorded_store_sample_by_sample() {
    let dir = tempfile::tempdir().unwrap();
    record_store(dir.path());
    let t = Tmux::start(
        "replay",
        &format!("{BIN} top --replay --store {}", dir.path().display()),
    );
    let s = t.expect("the last sample", |s| {
        s.contains("REPLAY") && s.contains("COMMAND") && drawn(s)
    });
    let last = replay_time(&s);
    assert!(rows(&s).1.len() > 5, "{s}");
    t.keys(&["Home"]);
    let s = t.expect("the first sample", |s| replay_time(s) < last);
    let first = replay_time(&s);
    t.keys(&["Left"]);
    t.expect("a note at the first sample", |s| {
        s.contains("the first sample recorded")
    });
    t.keys(&["Right"]);
    let s = t.expect("one step on", |s| replay_time(s) > first);
    let second = replay_time(&s);
    assert!(second <= last, "{second} after {last}");
    t.keys(&["End"]);
    t.expect("back at the last", |s| replay_time(s) == last);
    // A minute back is clamped to the first sample.
    t.keys(&["["]);
    t.expect("clamped to the first", |s| replay_time(s) == first);
    // Going to a time outside the store names the range.
    t.keys(&["g"]);
    t.text("2001-01-01 00:00");
    t.keys(&["Enter"]);
    t.expect("the range named", |s| s.contains("outside the history"));
    // The process that exited 7 is shown, at some step, with its code
    // (ended processes listed first).
    t.keys(&["End", "e"]);
    t.expect("ended processes first", |s| s.contains("exited]"));
    let mut seen = false;
    for _ in 0..10 {
        if t.screen().contains("[exit 7]") {
            seen = true;
            break;
        }
        let before = replay_time(&t.screen());
        t.keys(&["Left"]);
        t.expect("a step back", |s| {
            replay_time(s) != before || s.contains("first sample")
        });
    }
    assert!(seen, "no exited row with its code:\n{}", t.screen());
    t.keys(&["q"]);
    t.expect("top quit", |s| s.contains("TOP-EXITED 0"));

    // Outside the store, from the command line: an error naming the range.
    let out = run(&[
        "top",
        "--replay",
        "--store",
        dir.path().to_str().unwrap(),
        "--at",
        "2001-01-01T00:00:00Z",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("outside the history") && err.contains(" to "),
        "{err}"
    );
}

/// `ps --format csv` rows by (pid, start).
fn ps_rows(args: &[&str]) -> BTreeMap<(String, String), Vec<String>> {
    let out = run(args);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let pid = head.iter().position(|h| *h == "pid").unwrap();
    let start = head.iter().position(|h| *h == "start_ticks").unwrap();
    lines
        .map(|l| {
            let cells: Vec<String> = l.split(',').map(str::to_string).collect();
            ((cells[pid].clone(), cells[start].clone()), cells)
        })
        .collect()
}

#[test]
fn ps_from_the_agent_agrees_with_ps_from_bpf() {
    // Half of them niced, so the rows differ in more than pid and start.
    let sleepers: Vec<Proc> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                spawn_sleeper()
            } else {
                Proc(Guard(
                    Command::new("nice")
                        .args(["-n", "7", "sleep", "3600"])
                        .spawn()
                        .unwrap(),
                ))
            }
        })
        .collect();
    let a = agent("[sources.processes]\ninterval = \"1s\"\n", &[]);
    wait_for_view(&a.shm);
    let shm_owned = a.shm.to_str().unwrap().to_string();
    let shm = shm_owned.as_str();
    let fields = "pid,ppid,comm,start,nice,priority,threads,uid";
    // The agent's table taken after the sleepers started.
    after_reads(&a, "processes", 2);
    let from_agent = ps_rows(&[
        "ps",
        "--backend",
        "agent",
        "--shm-path",
        shm,
        "--fields",
        fields,
        "--format",
        "csv",
    ]);
    let from_bpf = ps_rows(&[
        "ps",
        "--backend",
        "bpf",
        "--fields",
        fields,
        "--format",
        "csv",
    ]);
    let mut niced = 0;
    for s in &sleepers {
        let pid = s.id().to_string();
        let a = from_agent.iter().find(|(k, _)| k.0 == pid);
        let b = from_bpf.iter().find(|(k, _)| k.0 == pid);
        let (Some(a), Some(b)) = (a, b) else {
            panic!("sleeper {pid} missing: agent {a:?}, bpf {b:?}");
        };
        assert_eq!(a, b);
        assert_eq!(a.1[2], "sleep", "{a:?}");
        niced += usize::from(a.1[4] == "7");
    }
    assert_eq!(niced, 10);
    // Others come, go, exec and add threads between the two reads: only
    // identities are compared. The agent's table holds the processes that
    // lived through both reads (the sleepers above), and no identity that
    // bpf finds with another start time.
    for (pid, start) in from_agent.keys() {
        if let Some(((_, s2), _)) = from_bpf.iter().find(|(k, _)| &k.0 == pid) {
            let (a, b): (u64, u64) = (start.parse().unwrap(), s2.parse().unwrap());
            assert!(b >= a, "pid {pid}: start {start}, then {s2}");
        }
    }
    // auto takes the agent's table when it is fresh, says so in JSON, and
    // passes over a stale one.
    let backend = |extra: &[&str]| {
        let mut args = vec![
            "ps",
            "--shm-path",
            shm,
            "--format",
            "json",
            "--fields",
            "pid",
        ];
        args.extend(extra);
        let out = run(&args);
        assert_ok(&out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["backend"].as_str().unwrap().to_string()
    };
    assert_eq!(backend(&[]), "agent");
    assert_ne!(backend(&["--max-age", "1ms"]), "agent");

    // What the agent cannot give is an error with --backend agent.
    for (args, says) in [
        (vec!["--max-age", "1ms"], "older than --max-age 1ms"),
        (vec!["--fields", "pid,cmdline"], "lacks cmdline"),
        (vec!["--threads"], "has no threads"),
    ] {
        let mut all = vec!["ps", "--backend", "agent", "--shm-path", shm];
        all.extend(args);
        let out = run(&all);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{all:?}: {err}");
    }
    // Stopped: the snapshot says so, and the view files are gone.
    let mut a = a;
    a.proc.signal(libc::SIGTERM);
    assert!(a.proc.wait(Duration::from_secs(20)).is_some());
    assert!(!shm::view::procs_path(&a.shm).exists());
    let out = run(&["ps", "--backend", "agent", "--shm-path", shm]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(shm), "{err}");
    drop(sleepers);
}

/// The CPU% a cgroup row of the cgroup view starts with.
fn cgroup_cpu(row: &str) -> f64 {
    row.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1.0)
}

/// The kernel's own count of the CPU time of the v2 cgroup at `dir`
/// (`cpu.stat`'s `usage_usec`), in seconds.
fn kernel_cpu_s(dir: &Path) -> f64 {
    let stat = std::fs::read_to_string(dir.join("cpu.stat")).unwrap();
    let us: f64 = stat
        .lines()
        .find_map(|l| l.strip_prefix("usage_usec "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no usage_usec in {stat}"));
    us / 1e6
}

/// The kernel's CPU% of the cgroup at `dir` since `(at, cpu_s)`, once a
/// second has passed.
fn kernel_pct_since(dir: &Path, (at, cpu_s): (Instant, f64)) -> Option<f64> {
    let secs = at.elapsed().as_secs_f64();
    (secs >= 1.0).then(|| (kernel_cpu_s(dir) - cpu_s) * 100.0 / secs)
}

/// A CPU% shown for a cgroup agrees with the kernel's over about the same
/// time: above zero, within a third and three times it (ten points
/// besides): the loop's share of a CPU moves with what else the machine
/// runs between the two spans, but another cgroup's figure (the root's)
/// or a wrong unit falls outside.
fn agrees(shown: f64, kernel_pct: f64) -> bool {
    shown > 0.0 && shown >= kernel_pct / 3.0 && shown <= kernel_pct * 3.0 + 10.0
}

/// The cgroup view in a real terminal, live from an agent that reads the
/// cgroups and sampled here without one: a cgroup the test made, a busy
/// loop in it, shown under the root with the CPU the kernel counts for it
/// (its share of a CPU depends on what else the machine runs).
#[test]
fn top_shows_a_busy_cgroup_in_its_cgroup_view() {
    let v2 = fixtures::cgroups::v2_mount().expect("this machine mounts no cgroup v2 hierarchy");
    let name = format!("qs-top-{}", std::process::id());
    let mut made = fixtures::cgroups::Made::default();
    let dir = v2.join(&name);
    made.run_in(std::slice::from_ref(&dir), "while :; do :; done");
    let store = tempfile::tempdir().unwrap();
    let recording = (Instant::now(), kernel_cpu_s(&dir));
    let mut a = agent(
        "[sources.cgroups]\nenabled = true\ninterval = \"1s\"\n[store]\nflush_interval = \"300ms\"\n",
        &["--store", store.path().to_str().unwrap()],
    );
    wait_for_view(&a.shm);
    let shown = |s: &str| {
        s.lines()
            .find(|l| l.trim_end().ends_with(&format!("─ {name}")))
            .map(cgroup_cpu)
    };
    for (session, cmd) in [
        (
            "cg-agent",
            format!("{BIN} top -d 500ms --shm-path {}", a.shm.display()),
        ),
        ("cg-own", format!("{BIN} top -d 500ms --no-agent")),
    ] {
        let t = Tmux::start(session, &cmd);
        t.expect("the process view", |s| s.contains("COMMAND"));
        t.keys(&["C"]);
        let since = (Instant::now(), kernel_cpu_s(&dir));
        let s = t.expect("the busy cgroup, with its CPU", |s| {
            shown(s)
                .zip(kernel_pct_since(&dir, since))
                .is_some_and(|(cpu, kernel)| agrees(cpu, kernel))
        });
        assert!(s.contains("CGROUP") && s.contains("TASKS"), "{s}");
        assert!(s.lines().all(|l| l.chars().count() <= 80), "{s}");
        // Back to the processes.
        t.keys(&["C"]);
        t.expect("the process view again", |s| s.contains("COMMAND"));
        t.keys(&["q"]);
        t.expect("top quit", |s| s.contains("TOP-EXITED 0"));
    }
    // The walks were recorded: replayed, and reported.
    after_reads(&a, "cgroups", 3);
    after_flush(&a);
    a.proc.signal(libc::SIGTERM);
    assert!(a.proc.wait(Duration::from_secs(20)).is_some());
    let recorded = kernel_pct_since(&dir, recording).unwrap();
    let t = Tmux::start(
        "cg-replay",
        &format!("{BIN} top --replay --store {}", store.path().display()),
    );
    t.expect("the last sample", |s| {
        s.contains("REPLAY") && s.contains("COMMAND")
    });
    t.keys(&["C"]);
    t.expect("the busy cgroup, replayed", |s| {
        shown(s).is_some_and(|cpu| agrees(cpu, recorded))
    });
    t.keys(&["q"]);
    t.expect("top quit", |s| s.contains("TOP-EXITED 0"));
    let out = run(&[
        "report",
        "--store",
        store.path().to_str().unwrap(),
        "--source",
        "cgroup",
        "--cgroup",
        &format!("/{name}"),
        "--from",
        "-10m",
        "--interval",
        "1s",
        "--format",
        "csv",
    ]);
    assert_ok(&out);
    let csv = String::from_utf8_lossy(&out.stdout);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (path, cpu) = (
        head.iter().position(|h| *h == "cgroup").unwrap(),
        head.iter().position(|h| *h == "%cpu").unwrap(),
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.len() >= 2, "{csv}");
    assert!(rows.iter().all(|r| r[path] == format!("/{name}")), "{csv}");
    // Its rows span the recording: their mean agrees with the kernel's.
    let cpus: Vec<f64> = rows.iter().filter_map(|r| r[cpu].parse().ok()).collect();
    let mean = cpus.iter().sum::<f64>() / cpus.len().max(1) as f64;
    assert!(agrees(mean, recorded), "{csv}\nthe kernel: {recorded}%");
    drop(made);
}
