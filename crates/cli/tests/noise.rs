//! `quietstat noise` and `quietstat jitter` on the real kernel (root: BPF,
//! SCHED_FIFO). CPU 1 plays the isolated CPU, CPU 0 the housekeeping one.

use std::process::{Command, Stdio};
use std::time::Duration;

use sys::child::Guard;

mod common;

use common::*;

/// Every test here measures or loads CPU 1 (a SCHED_FIFO jitter thread
/// there starves the helper's spinner, and membarrier then sends it no
/// IPI): they take turns.
static CPU1: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cpu1() -> std::sync::MutexGuard<'static, ()> {
    CPU1.lock().unwrap_or_else(|e| e.into_inner())
}

fn noise(pid: u32, secs: u32) -> serde_json::Value {
    noise_with(pid, secs, "auto")
}

fn noise_with(pid: u32, secs: u32, backend: &str) -> serde_json::Value {
    let out = quietstat()
        .args([
            "noise",
            "--cpus",
            "1",
            "--format",
            "json",
            "--backend",
            backend,
        ])
        .args(["--duration"])
        .arg(format!("{secs}s"))
        .arg("--pid")
        .arg(pid.to_string())
        .output()
        .unwrap();
    assert_ok(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_process_sending_cross_cpu_calls_is_caught() {
    let _cpu1 = cpu1();
    let helper = Guard(
        quietstat()
            .args([
                "noise-helper",
                "--from",
                "0",
                "--target",
                "1",
                "--duration",
                "20s",
            ])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // A thread on CPU 1 that sleeps 10 ms at a time: the helper's spinner
    // there never sleeps, so without it a context switch on CPU 1 within
    // the window depends on some kernel thread waking there (one run of
    // the suite saw none in 2 s).
    let _sleeper = Sleeper::on_cpu(1);
    std::thread::sleep(Duration::from_millis(300));
    // Both ways of counting: BPF programs, and trace events in a tracefs
    // instance (the fallback where BPF is not allowed).
    for backend in ["bpf", "tracefs"] {
        let r = noise_with(helper.0.id(), 2, backend);
        assert_eq!(r["backend"], backend);
        assert_eq!(r["lost_events"], 0, "{backend}");
        let p = &r["pid"];
        // One membarrier a millisecond, each an IPI to CPU 1: about 2000.
        let ipis = p["ipis_sent"].as_u64().unwrap();
        assert!(ipis >= 200, "{backend}: {ipis} IPIs: {p}");
        let sites = p["ipi_sites"].to_string();
        assert!(sites.contains("membarrier"), "{backend}: {sites}");
        let causes = r["causes"].as_array().unwrap();
        let from_cpu0 = causes
            .iter()
            .find(|c| c["kind"] == "ipi" && c["by"] == "from_cpu" && c["what"] == "CPU 0")
            .expect("IPIs from CPU 0");
        assert!(from_cpu0["count"].as_u64().unwrap() >= ipis);
        assert!(
            r["unavailable"].as_array().unwrap().is_empty(),
            "{backend}: {}",
            r["unavailable"]
        );
        // Every kind the tool counts turned up on a busy CPU 1.
        for kind in ["ipi", "timer", "switch", "runtime", "vector"] {
            assert!(
                causes.iter().any(|c| c["kind"] == kind),
                "{backend}: no {kind}"
            );
        }
    }
}

/// A thread on one CPU waking every 10 ms, stopped and joined on drop
/// (panics included, so that it never wakes an "isolated" CPU in the tests
/// that follow).
struct Sleeper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sleeper {
    fn on_cpu(cpu: u32) -> Sleeper {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            sys::pin_current_thread(&[cpu]).expect("pinning the sleeper");
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Sleeper {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// CPU 1 taken out of the scheduler's load balancing for as long as this
/// lives, as `isolcpus=domain` or an isolated cpuset does on the machines
/// the agent's quiet is promised to. Without it CPU 1 is isolated only by
/// our choice of CPUs: whenever CPU 0 goes idle (the agent's sampler going
/// to sleep in `futex_wait`), the kernel's newly-idle balance may pull a
/// task queued on CPU 1 and, dequeuing it, send CPU 1 a reschedule IPI
/// from the agent's own thread (traced: `futex_wait` -> `schedule` ->
/// `sched_balance_newidle` -> `detach_task` -> `update_curr` ->
/// `__resched_curr`). A cgroup-v1 cpuset does it: the root cpuset stops
/// balancing and a child holding CPU 0 alone balances, so CPU 1 is in no
/// scheduling domain. Restored on drop, panics included.
///
/// The memory-reclaim kernel threads (kswapd, kcompactd) are moved to CPU
/// 0 too, as the kernel confines its threads to housekeeping CPUs where
/// CPUs are isolated: a page the agent allocates while free memory is
/// below the low watermark (a page cache filled by builds) wakes kswapd
/// wherever it last ran, and a run found it woken on CPU 1 from the
/// agent's thread (`ttwu_queue_wakelist`). Their affinity is restored on
/// drop.
///
/// And the unbound workqueues' workers are kept to CPU 0
/// (`/sys/devices/virtual/workqueue/cpumask`), as the kernel keeps them to
/// housekeeping CPUs where CPUs are isolated (nohz_full, or
/// `workqueue.unbound_cpus`): work the agent's system calls queue (a file
/// or cgroup it closes, freed through `kvfree_rcu`; a write's conversion
/// on ext4) wakes an unbound worker wherever it last ran, and runs found
/// workers woken on CPU 1 from the agent's thread while another program
/// kept them busy there (a soak making and removing cgroups and writing a
/// history to disk). Restored on drop.
struct Cpu1OutOfBalancing {
    root: &'static str,
    child: String,
    /// (pid, the CPU mask it had) of each kernel thread moved.
    moved: Vec<(i32, libc::cpu_set_t)>,
    /// The unbound workqueues' CPU mask before.
    wq_mask: Option<String>,
}

const WQ_CPUMASK: &str = "/sys/devices/virtual/workqueue/cpumask";

/// Moves each reclaim kernel thread to CPU 0; their pids and old masks.
fn reclaim_threads_to_cpu0() -> Vec<(i32, libc::cpu_set_t)> {
    let mut moved = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if !(comm.starts_with("kswapd") || comm.starts_with("kcompactd")) {
            continue;
        }
        // SAFETY: a zeroed cpu_set_t is a valid empty set; the calls read
        // and write one set of its size.
        unsafe {
            let mut old: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            if libc::sched_getaffinity(pid, size, &mut old) != 0 {
                continue;
            }
            let mut cpu0: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut cpu0);
            if libc::sched_setaffinity(pid, size, &cpu0) == 0 {
                moved.push((pid, old));
            }
        }
    }
    assert!(
        moved.iter().any(|(pid, _)| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.starts_with("kswapd"))
        }),
        "no kswapd thread could be moved to CPU 0"
    );
    moved
}

impl Cpu1OutOfBalancing {
    fn new() -> Cpu1OutOfBalancing {
        let root = "/sys/fs/cgroup/cpuset";
        let flag = format!("{root}/cpuset.sched_load_balance");
        let was = std::fs::read_to_string(&flag).unwrap_or_else(|e| {
            panic!(
                "{flag}: {e}: this test needs the cgroup-v1 cpuset hierarchy at {root} \
                 (root) to take CPU 1 out of load balancing"
            )
        });
        assert_eq!(
            was.trim(),
            "1",
            "{flag} is already 0: another test or tool has changed it"
        );
        let child = format!("{root}/quietstat-test-housekeeping-{}", std::process::id());
        std::fs::create_dir(&child).unwrap();
        let guard = Cpu1OutOfBalancing {
            root,
            child,
            moved: Vec::new(),
            wq_mask: None,
        };
        for (file, value) in [("cpuset.cpus", "0"), ("cpuset.mems", "0")] {
            std::fs::write(format!("{}/{file}", guard.child), value).unwrap();
        }
        std::fs::write(&flag, "0").unwrap();
        let mut guard = guard;
        guard.moved = reclaim_threads_to_cpu0();
        let mask = std::fs::read_to_string(WQ_CPUMASK).unwrap_or_else(|e| {
            panic!("{WQ_CPUMASK}: {e}: needed to keep unbound workers on CPU 0")
        });
        std::fs::write(WQ_CPUMASK, "1").unwrap_or_else(|e| panic!("{WQ_CPUMASK} = 1: {e}"));
        guard.wq_mask = Some(mask.trim().to_string());
        guard
    }
}

impl Drop for Cpu1OutOfBalancing {
    fn drop(&mut self) {
        for (pid, old) in &self.moved {
            // SAFETY: one set of its size, as read before.
            unsafe { libc::sched_setaffinity(*pid, std::mem::size_of::<libc::cpu_set_t>(), old) };
        }
        if let Some(mask) = &self.wq_mask {
            let _ = std::fs::write(WQ_CPUMASK, mask);
        }
        let _ = std::fs::write(format!("{}/cpuset.sched_load_balance", self.root), "1");
        let _ = std::fs::remove_dir(&self.child);
    }
}

#[test]
fn the_agent_sends_no_ipi_and_wakes_nothing_on_an_isolated_cpu() {
    let _cpu1 = cpu1();
    let _isolated = Cpu1OutOfBalancing::new();
    let idle = bench::spawn::Idle::start(2000).unwrap();
    // In memory, as the agent's snapshot is where it is deployed (/run):
    // a snapshot on a disk's filesystem (ext4 here) has the agent's page
    // faults on it start the filesystem's work, and waking its unbound
    // workers (ext4-rsv-conversion) sends IPIs to CPU 1 whenever other
    // writes to that disk (another test's, a soak's) keep them busy there.
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    // Its log goes to a file: a pipe would make each line wake this test's
    // reader thread, wherever it last ran.
    let log = dir.path().join("agent.log");
    // The cgroup walk too, every second, on its own thread.
    let config = dir.path().join("agent.toml");
    std::fs::write(
        &config,
        "[sources.cgroups]\nenabled = true\ninterval = \"1s\"\n",
    )
    .unwrap();
    let agent = Guard(
        quietstat()
            .arg("agent")
            .arg("--config")
            .arg(&config)
            .args([
                "--no-store",
                "--housekeeping-cpus",
                "0",
                "--listen",
                "127.0.0.1:0",
                "--shm-path",
            ])
            .arg(dir.path().join("snapshot"))
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    // Wait until it serves (it has read everything once by then).
    let serving = (0..600).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("serving http://")
    });
    assert!(
        serving,
        "the agent never served: {}",
        std::fs::read_to_string(&log).unwrap()
    );
    let r = noise(agent.0.id(), 30);
    let p = &r["pid"];
    // Zeros mean nothing unless the agent ran for the whole window.
    assert_eq!(p["alive_whole_window"], true, "{p}");
    assert_eq!(p["ipis_sent"], 0, "{p}");
    assert_eq!(p["wakeups_caused"], 0, "{p}");
    assert_eq!(p["switches_in"], 0, "{p}");
    assert_eq!(idle.count(), 2000);
    // And the cgroups were walked all along.
    let text = std::fs::read_to_string(&log).unwrap();
    let addr = text
        .lines()
        .find_map(|l| l.split_once("serving http://")?.1.split('/').next())
        .unwrap()
        .parse()
        .unwrap();
    let body = common::agent::get(addr, "/metrics", None).body;
    let walks: f64 = body
        .lines()
        .find_map(|l| l.strip_prefix("quietstat_source_reads_total{source=\"cgroups\"} "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no cgroup walks: {text}"));
    assert!(walks >= 25.0, "{walks} walks in 30 s");
}

#[test]
fn a_pid_that_ends_mid_window_is_flagged() {
    let _cpu1 = cpu1();
    let short = Guard(Command::new("sleep").arg("0.5").spawn().unwrap());
    let r = noise(short.0.id(), 2);
    assert_eq!(r["pid"]["alive_whole_window"], false, "{}", r["pid"]);
    let helper = Guard(Command::new("sleep").arg("30").spawn().unwrap());
    let r = noise(helper.0.id(), 1);
    assert_eq!(r["pid"]["alive_whole_window"], true, "{}", r["pid"]);
}

#[test]
fn jitter_measures_alone_and_beside_a_command() {
    let _cpu1 = cpu1();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("h.svg");
    let out = quietstat()
        .args([
            "jitter",
            "--cpu",
            "1",
            "--interval",
            "1ms",
            "--duration",
            "1s",
            "--format",
            "json",
        ])
        .arg("--histogram")
        .arg(&svg)
        .args(["--settle", "200ms", "--", "sleep", "30"])
        .output()
        .unwrap();
    assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["fifo"], true, "running as root, SCHED_FIFO is permitted");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["label"], "with sleep 30");
    let mut legend = Vec::new();
    for r in runs {
        let s = &r["summary"];
        let samples = s["samples"].as_u64().unwrap();
        // One second at 1 ms: each deadline measured or counted overrun.
        assert_eq!(samples + r["overruns"].as_u64().unwrap(), 1000);
        assert!(r["steal_ms"].is_u64(), "steal is read from /proc/stat");
        assert!(s["min_us"].as_f64().unwrap() <= s["p99_us"].as_f64().unwrap());
        legend.push(format!(
            "{} ({samples} samples)",
            r["label"].as_str().unwrap()
        ));
    }
    let pic = std::fs::read_to_string(&svg).unwrap();
    assert!(
        legend.iter().all(|l| pic.contains(l.as_str())),
        "{legend:?}"
    );
    // The command was stopped.
    let out = Command::new("pgrep")
        .args(["-f", "^sleep 30$"])
        .output()
        .unwrap();
    assert!(out.stdout.is_empty(), "sleep 30 left running");
}

#[test]
fn jitter_writes_a_png_and_refuses_other_picture_formats() {
    let _cpu1 = cpu1();
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("h.png");
    let run = |pic: &std::path::Path| {
        quietstat()
            .args(["jitter", "--cpu", "1", "--duration", "300ms"])
            .arg("--histogram")
            .arg(pic)
            .output()
            .unwrap()
    };
    let out = run(&png);
    assert_ok(&out);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let jpg = dir.path().join("h.jpg");
    let out = run(&jpg);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("h.jpg") && err.contains("*.svg, *.png"),
        "{err}"
    );
    assert!(!jpg.exists());
}
