//! The agent as a user runs it: the real binary, real HTTP, a real
//! Prometheus and node_exporter from Debian's packages, the real kernel.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sys::child::Guard;

mod common;

use common::agent::*;
use common::exposition::*;
use common::prom::*;
use common::*;

fn scrape(a: &Agent, query: &str) -> Series {
    let r = get(a.addr, &format!("/metrics{query}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    parse_exposition(&r.body).0
}

#[test]
fn agent_serves_metrics_json_and_shared_memory_then_stops_cleanly() {
    let mut a = agent("", &[]);
    // Text format by default, OpenMetrics when asked.
    let text = get(a.addr, "/metrics", None);
    assert_eq!(text.status, 200);
    assert!(
        text.content_type.starts_with("text/plain; version=0.0.4"),
        "{}",
        text.content_type
    );
    assert!(
        text.body
            .contains("# TYPE node_cpu_seconds_total counter\n")
    );
    assert!(!text.body.contains("# EOF"));
    let om = get(
        a.addr,
        "/metrics",
        Some("application/openmetrics-text;version=1.0.0"),
    );
    assert!(
        om.content_type.starts_with("application/openmetrics-text"),
        "{}",
        om.content_type
    );
    assert!(om.body.contains("# TYPE node_cpu_seconds counter\n"));
    assert!(om.body.ends_with("# EOF\n"));

    let (s, types) = parse_exposition(&text.body);
    for family in [
        "node_cpu_seconds_total",
        "node_intr_total",
        "node_context_switches_total",
        "node_forks_total",
        "node_boot_time_seconds",
        "node_load1",
        "node_memory_MemTotal_bytes",
        "quietstat_irq_total",
        "node_softirqs_total",
        "node_network_receive_bytes_total",
        "quietstat_source_reads_total",
        "quietstat_agent_cpu_seconds_total",
    ] {
        assert!(s.keys().any(|(n, _)| n == family), "{family} missing");
    }
    assert_eq!(types["node_vmstat_pgfault"], "untyped");
    // Its heap in use, as the allocator counts it: some (a process that
    // has parsed every source holds more than 100 KB), and below 1 GiB.
    let heap = value(&s, "quietstat_agent_heap_bytes", &[]).expect("heap served");
    assert!(
        heap > 100_000.0 && heap < (1u64 << 30) as f64,
        "heap {heap}"
    );
    // The agent's figures match /proc where they must.
    let mem_total = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb: f64 = mem_total
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        value(&s, "node_memory_MemTotal_bytes", &[]),
        Some(kb * 1024.0)
    );

    // JSON: only the sources asked for, each with age and status.
    let j = get(
        a.addr,
        "/api/v1/snapshot?sources=loadavg,pressure/cpu",
        None,
    );
    assert_eq!(j.status, 200, "{}", j.body);
    let v: serde_json::Value = serde_json::from_str(&j.body).unwrap();
    let sources = v["sources"].as_object().unwrap();
    assert!(sources.contains_key("loadavg"));
    assert!(!sources.contains_key("stat"));
    assert_eq!(sources["loadavg"]["status"]["status"], "ok");
    assert!(sources["loadavg"]["data"]["load1"].is_number());
    // Bad requests are named.
    let bad = get(a.addr, "/api/v1/snapshot?sources=cpu_info", None);
    assert_eq!(bad.status, 400);
    assert!(
        bad.body.contains("\"cpu_info\"") && bad.body.contains("accepted"),
        "{}",
        bad.body
    );
    let bad = get(a.addr, "/metrics?max_age_ms=soon", None);
    assert_eq!(bad.status, 400);
    assert!(bad.body.contains("max_age_ms"), "{}", bad.body);
    assert_eq!(get(a.addr, "/nope", None).status, 404);

    // Shared memory: the same counters, no syscall.
    let r = shm::ShmReader::open(&a.shm).unwrap();
    let mut snap = shm::Snapshot::default();
    r.read(&mut snap).unwrap();
    assert_eq!(r.agent_pid(), a.proc.id());
    assert!(snap.ctxt > 0 && snap.intr_total > 0 && snap.mem_total_bytes as f64 == kb * 1024.0);
    assert_eq!(
        snap.cpus.len(),
        std::thread::available_parallelism().unwrap().get()
    );
    // A fresh sample on request.
    let before = snap.mono_ns;
    r.read_fresh(Duration::ZERO, Duration::from_secs(5), &mut snap)
        .unwrap();
    assert!(snap.mono_ns > before);

    // SIGTERM: exits 0, the snapshot is marked stale, the port is closed.
    a.proc.signal(libc::SIGTERM);
    let status = a
        .proc
        .wait(Duration::from_secs(10))
        .expect("stopped on SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(matches!(r.read(&mut snap), Err(shm::Error::Stopped)));
    assert!(TcpStream::connect(a.addr).is_err());
}

/// The sum of `name`'s series with `labels` (besides those summed over).
fn sum(s: &Series, name: &str, labels: &[(&str, &str)]) -> f64 {
    s.iter()
        .filter(|((n, l), _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v))
        })
        .map(|(_, v)| *v)
        .sum()
}

/// Series that grow as CPUs x IRQs are served only when their collector
/// is turned on, as node_exporter's; the per-IRQ sums always, equal to
/// the per-CPU series of the same scrape.
#[test]
fn per_cpu_interrupt_families_are_served_only_when_turned_on() {
    let a = agent("", &[]);
    let s = scrape(&a, "");
    let has = |s: &Series, f: &str| s.keys().any(|(n, _)| n == f);
    assert!(!has(&s, "node_interrupts_total"));
    assert!(!has(&s, "node_softirqs_functions_total"));
    assert!(has(&s, "quietstat_irq_total") && has(&s, "node_softirqs_total"));
    // As node_exporter, only the collectors served are listed: not those
    // off by default, nor those whose sources are all off (buddyinfo).
    let listed = |s: &Series, c: &str| {
        value(s, "node_scrape_collector_success", &[("collector", c)]).is_some()
    };
    assert!(listed(&s, "cpu") && listed(&s, "meminfo"));
    for c in ["interrupts", "softirqs", "buddyinfo", "slabinfo"] {
        assert!(!listed(&s, c), "{c} listed while off");
    }
    drop(a);

    for (config, flags) in [
        ("", &["--collector.interrupts", "--collector.softirqs"][..]),
        ("collectors = [\"interrupts\", \"softirqs\"]\n", &[][..]),
    ] {
        let a = agent(config, flags);
        let s = scrape(&a, "");
        assert!(listed(&s, "interrupts") && listed(&s, "softirqs"));
        let irqs: BTreeSet<String> = s
            .keys()
            .filter(|(n, _)| n == "quietstat_irq_total")
            .map(|(_, l)| l.iter().find(|(k, _)| k == "type").unwrap().1.clone())
            .collect();
        assert!(irqs.contains("LOC") || irqs.contains("0"), "{irqs:?}");
        for irq in &irqs {
            let total = sum(&s, "quietstat_irq_total", &[("type", irq)]);
            let per_cpu = sum(&s, "node_interrupts_total", &[("type", irq)]);
            assert_eq!(total, per_cpu, "IRQ {irq}");
        }
        // node_exporter's labels: the CPU's number and the vector as
        // /proc/softirqs names it.
        let cpus = std::thread::available_parallelism().unwrap().get();
        for kind in ["HI", "TIMER", "NET_TX", "NET_RX", "RCU"] {
            for cpu in 0..cpus {
                let labels = [("cpu", cpu.to_string()), ("type", kind.to_string())];
                let l: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
                assert!(
                    value(&s, "node_softirqs_functions_total", &l).is_some(),
                    "{kind} on CPU {cpu}"
                );
            }
        }
    }
}

#[test]
fn sighup_reloads_the_configuration_file() {
    let a = agent("[sources.stat]\ninterval = \"1s\"\n", &[]);
    let conf = |s: &Series| {
        value(
            s,
            "quietstat_source_configured_interval_seconds",
            &[("source", "stat")],
        )
    };
    assert_eq!(conf(&scrape(&a, "")), Some(1.0));
    let cfg = a.dir.path().join("agent.toml");
    std::fs::write(&cfg, "[sources.stat]\ninterval = \"2s\"\n").unwrap();
    a.proc.signal(libc::SIGHUP);
    let end = Instant::now() + Duration::from_secs(10);
    while conf(&scrape(&a, "")) != Some(2.0) {
        assert!(Instant::now() < end, "not reloaded");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A bad file is refused and the running configuration kept.
    std::fs::write(&cfg, "[sources.stat]\ninterval = \"0s\"\n").unwrap();
    a.proc.signal(libc::SIGHUP);
    let line = loop {
        let l = a
            .log
            .recv_timeout(Duration::from_secs(10))
            .expect("a log line");
        if l.contains("reload refused") {
            break l;
        }
    };
    assert!(line.contains("sources.stat.interval"), "{line}");
    assert_eq!(conf(&scrape(&a, "")), Some(2.0));
}

#[test]
fn a_source_over_its_budget_share_is_slowed_and_logged_once() {
    // 0.01% of a CPU: 100 us/s shared by weight, about 25 us/s for the
    // process table. Its procfs backend costs more than that every 5 s on
    // any machine (the BPF walk of a small machine's 70 processes may not).
    // The line comes once the slow is final: at the first read at its
    // new interval, up to 25 s later.
    let a = agent("overhead_budget_pct = 0.01\n", &["--backend", "procfs"]);
    let is_it =
        |l: &str| l.starts_with("quietstat agent: processes:") && l.contains("overhead budget");
    let end = Instant::now() + Duration::from_secs(70);
    let line = match a.early.iter().find(|l| is_it(l)) {
        Some(l) => l.clone(),
        None => loop {
            assert!(Instant::now() < end, "no budget line for processes");
            if let Ok(l) = a.log.recv_timeout(Duration::from_secs(1))
                && is_it(&l)
            {
                break l;
            }
        },
    };
    assert!(
        line.contains("slowed from every 5s to every") && line.contains("us per read"),
        "{line}"
    );
    let s = scrape(&a, "");
    let now = value(
        &s,
        "quietstat_source_interval_seconds",
        &[("source", "processes")],
    )
    .unwrap();
    let conf = value(
        &s,
        "quietstat_source_configured_interval_seconds",
        &[("source", "processes")],
    )
    .unwrap();
    assert_eq!(conf, 5.0);
    assert!(now > conf && now <= 25.0, "interval in force {now} s");
    assert_eq!(
        now % 5.0,
        0.0,
        "a whole multiple of the configured interval"
    );
}

#[test]
fn the_json_api_lists_processes_only_when_configured_to() {
    let procs = |a: &Agent| -> serde_json::Value {
        let r = get(a.addr, "/api/v1/snapshot?sources=processes", None);
        assert_eq!(r.status, 200, "{}", r.body);
        let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        v["sources"]["processes"].clone()
    };
    let a = agent("", &["--backend", "procfs"]);
    let p = procs(&a);
    assert!(p["count"].as_u64().unwrap() > 0, "{p}");
    assert!(p["rows"].is_null(), "rows exposed by default: {p}");
    assert!(
        p["rows_note"]
            .as_str()
            .unwrap()
            .contains("http_process_rows")
    );
    assert!(p["exits"]["since_last_read"].is_u64(), "{p}");
    drop(a);
    // Beyond loopback without TLS or authentication: said at start.
    let a = agent(
        "http_process_rows = true\n",
        &["--backend", "procfs", "--listen", "0.0.0.0:0"],
    );
    assert!(
        a.early
            .iter()
            .any(|l| l.contains("warning: listening on 0.0.0.0") && l.contains("without TLS")),
        "{:#?}",
        a.early
    );
    let a = Agent {
        addr: SocketAddr::from(([127, 0, 0, 1], a.addr.port())),
        ..a
    };
    let p = procs(&a);
    let me = a.proc.id() as u64;
    let rows = p["rows"].as_array().expect("rows when configured");
    assert!(
        rows.iter().any(|r| r["pid"] == me),
        "the agent itself is not listed"
    );
}

#[test]
fn bad_configuration_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("a.toml");
    std::fs::write(&cfg, "[sources.processes]\ninterval = \"5 parsecs\"\n").unwrap();
    let out = quietstat()
        .args(["agent", "--print-config", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("sources.processes.interval") && err.contains("5 parsecs"),
        "{err}"
    );
    let out = quietstat()
        .args([
            "agent",
            "--print-config",
            "--listen",
            "127.0.0.1:1234",
            "--config",
        ])
        .arg(Path::new("/nonexistent/agent.toml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/agent.toml"), "{err}");
    let out = quietstat()
        .args(["agent", "--print-config", "--listen", "127.0.0.1:1234"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("listen = \"127.0.0.1:1234\""), "{text}");
    assert!(
        text.contains("[sources.interrupts]\nenabled = true\ninterval = \"5s\""),
        "{text}"
    );
}

#[test]
fn every_agent_thread_runs_on_the_housekeeping_cpus() {
    // With the cgroup walk's thread, started once a walk finds a thousand
    // cgroups (docs/cgroups.md): a thousand made here, in the pids
    // hierarchy, walked every second.
    let mut made = fixtures::cgroups::Made::default();
    let top = made.make(
        Path::new("/sys/fs/cgroup/pids").join(format!("qs-placement-{}", std::process::id())),
    );
    for i in 0..1_000 {
        made.make(top.join(format!("c{i}")));
    }
    let a = agent(
        "[sources.cgroups]\nenabled = true\ninterval = \"1s\"\n",
        &["--housekeeping-cpus", "0"],
    );
    let moved = |l: &String| l.contains("walks go on a thread of their own");
    assert!(
        a.early.iter().any(moved)
            || wait_for(Duration::from_secs(20), || a
                .log
                .try_iter()
                .any(|l| moved(&l))),
        "the walks did not move to their thread: {:?}",
        a.early
    );
    // A walk there, and the HTTP side's connection thread.
    for _ in 0..4 {
        scrape(&a, "");
    }
    std::thread::sleep(Duration::from_secs(2));
    let pid = a.proc.id();
    let mut n = 0;
    let mut names = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let t = t.unwrap().path();
        names.push(std::fs::read_to_string(t.join("comm")).unwrap());
        let status = std::fs::read_to_string(t.join("status")).unwrap();
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_string();
        assert_eq!(cpus, "0", "{status}");
        n += 1;
    }
    assert!(n >= 3, "{n} threads");
    // The kernel keeps 15 bytes of a thread's name.
    assert!(
        names.iter().any(|c| c.starts_with("quietstat-cgrou")),
        "{names:?}"
    );
}

fn reads(s: &Series, source: &str) -> f64 {
    value(s, "quietstat_source_reads_total", &[("source", source)]).unwrap()
}

#[test]
fn fifty_scrapers_leave_the_read_rate_unchanged() {
    let a = agent("", &[]);
    let before = scrape(&a, "");
    let t0 = Instant::now();
    let addr = a.addr;
    let scrapers: Vec<_> = (0..50)
        .map(|_| {
            std::thread::spawn(move || {
                for i in 0..30 {
                    let r = get(
                        addr,
                        if i % 2 == 0 {
                            "/metrics"
                        } else {
                            "/api/v1/snapshot"
                        },
                        None,
                    );
                    assert_eq!(r.status, 200);
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        })
        .collect();
    for s in scrapers {
        s.join().unwrap();
    }
    let secs = t0.elapsed().as_secs_f64();
    let after = scrape(&a, "");
    // 1500 requests in `secs`: the 1 s sources were read once a second
    // (plus at most one at either edge), the 5 s ones once per 5 s.
    for (src, every) in [
        ("stat", 1.0),
        ("meminfo", 1.0),
        ("interrupts", 5.0),
        ("processes", 5.0),
    ] {
        let n = reads(&after, src) - reads(&before, src);
        assert!(
            n <= (secs / every).ceil() + 1.0,
            "{src}: {n} reads in {secs:.1} s"
        );
        assert!(
            n >= (secs / every).floor() - 1.0,
            "{src}: {n} reads in {secs:.1} s"
        );
    }
}

#[test]
fn concurrent_max_age_requests_share_one_read_each() {
    // Without the overhead budget: whether a consumer's read is declined
    // depends on what the scheduled reads leave of it, little on a big
    // machine (30,000 processes) or a busy one (a read asked for is
    // charged its wall time), which is not what this test is about
    // (`demand_reads_past_the_overhead_budget_are_declined_with_the_age_stated`
    // and `budget::demand_gets_what_the_scheduled_reads_leave_at_their_average`
    // are).
    let a = agent("overhead_budget_pct = 0.0\n", &[]);
    let before = scrape(&a, "");
    let addr = a.addr;
    let t0 = Instant::now();
    // 20 clients asking for data no older than 300 ms, 20 times each over
    // more than two seconds, so the 1 s schedule alone cannot satisfy them.
    let clients: Vec<_> = (0..20)
        .map(|_| {
            std::thread::spawn(move || {
                for _ in 0..20 {
                    let asked = Instant::now();
                    let r = get(addr, "/api/v1/snapshot?sources=stat&max_age_ms=300", None);
                    let waited = asked.elapsed().as_secs_f64() * 1e3;
                    assert_eq!(r.status, 200, "{}", r.body);
                    let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
                    let age = v["sources"]["stat"]["age_ms"].as_f64().unwrap();
                    // Data no older than 300 ms when asked: its age when
                    // served is at most that plus the time the answer
                    // took, however busy the machine (1 ms: rounding).
                    assert!(
                        age <= 300.0 + 1.0 + waited,
                        "served {age} ms old, {waited:.1} ms after it was asked"
                    );
                    std::thread::sleep(Duration::from_millis(110));
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    let secs = t0.elapsed().as_secs_f64();
    let after = scrape(&a, "");
    let n = reads(&after, "stat") - reads(&before, "stat");
    // At most one read per 300 ms window plus the schedule's one a second:
    // 400 requests must not mean 400 reads.
    let bound = (secs / 0.3).ceil() + secs.ceil() + 2.0;
    assert!(
        n <= bound,
        "{n} reads of stat for 400 requests in {secs:.1} s (bound {bound})"
    );
    let demand = value(
        &after,
        "quietstat_source_demand_reads_total",
        &[("source", "stat")],
    )
    .unwrap();
    assert!(demand >= 1.0, "max_age_ms never caused a read");
    // A source nobody asked for was not read on demand.
    assert_eq!(
        value(
            &after,
            "quietstat_source_demand_reads_total",
            &[("source", "interrupts")]
        ),
        Some(0.0)
    );
}

#[test]
fn promtool_accepts_the_output() {
    // Delay accounting on while the agent starts (it looks then, and on a
    // reload), and back as it was once it has served.
    struct Restore(String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::fs::write("/proc/sys/kernel/task_delayacct", &self.0);
        }
    }
    let sysctl = "/proc/sys/kernel/task_delayacct";
    let restore = Restore(std::fs::read_to_string(sysctl).unwrap().trim().into());
    std::fs::write(sysctl, "1").unwrap();
    let a = agent(
        "process_network = true\nprocess_gpu = true\n[process_metrics]\nmode = \"top\"\ntop_n = 5\n",
        &[],
    );
    let body = get(a.addr, "/metrics", None).body;
    drop(restore);
    let mut child = Command::new(which("promtool"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Exit 1 is a parse error; 3 is lint findings. The only findings allowed
    // are node_exporter's own names, which dashboards need verbatim
    // (node_exporter's output gets the same findings): camelCase
    // node_memory_* and node_netstat_*, and entropy counted in bits.
    assert_ne!(out.status.code(), Some(1), "{report}");
    for line in report.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            ((line.starts_with("node_memory_") || line.starts_with("node_netstat_"))
                && line.contains("camelCase"))
                || (line.starts_with("node_entropy_")
                    && line.contains("base unit \"bytes\" instead of \"bits\"")),
            "promtool: {line}"
        );
    }
    assert!(body.contains("quietstat_process_cpu_seconds_total{pid="));
    // The BPF backend (root, here) reads the run delay with the task.
    assert!(body.contains("quietstat_process_run_delay_seconds_total{pid="));
    // Asked for: the bytes of the selected processes' TCP sockets.
    assert!(body.contains("quietstat_process_network_receive_bytes_total{pid="));
    // With kernel.task_delayacct on at its start: the delays by cause.
    assert!(
        body.contains("quietstat_process_delay_seconds_total{pid=")
            && body.contains(",cause=\"blkio\"}"),
        "no delay accounting"
    );
    // Asked for: GPU use, per selected process and per cgroup (zeros on a
    // machine without a GPU, but served).
    assert!(body.contains("quietstat_process_gpu_busy_seconds_total{pid="));
    assert!(body.contains("quietstat_process_gpu_memory_bytes{pid="));
    assert!(body.contains("quietstat_cgroup_gpu_busy_seconds_total{id=\"/\"} 0\n"));
    // And the TCP bytes per cgroup, the root's summing every process's.
    assert!(body.contains("quietstat_cgroup_network_receive_bytes_total{id=\"/\"} "));
    assert!(body.contains("quietstat_cgroup_network_transmit_bytes_total{id=\"/\"} "));
}

#[test]
fn a_real_prometheus_scrapes_the_agent() {
    let texts = tempfile::tempdir().unwrap();
    std::fs::write(
        texts.path().join("backup.prom"),
        "# HELP backup_last_success_seconds When the backup last succeeded.\n# TYPE backup_last_success_seconds gauge\nbackup_last_success_seconds{job=\"home\"} 1.7e9\n",
    )
    .unwrap();
    let a = agent(
        "",
        &[
            "--collector.textfile.directory",
            texts.path().to_str().unwrap(),
            "--collector.buddyinfo",
            "--collector.zoneinfo",
            "--collector.slabinfo",
            "--collector.ksmd",
            "--collector.cpu.info",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let (_prom, paddr) = prometheus(
        dir.path(),
        &format!(
            "  - job_name: quietstat\n    static_configs:\n      - targets: ['{}']\n",
            a.addr
        ),
    );
    let q = "/api/v1/query?query=node_context_switches_total%7Bjob%3D%22quietstat%22%7D";
    let v = prometheus_until(paddr, q, |v| {
        v["data"]["result"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    });
    let first = &v["data"]["result"][0];
    let val: f64 = first["value"][1].as_str().unwrap().parse().unwrap();
    assert!(val > 0.0);
    assert_eq!(first["metric"]["instance"], a.addr.to_string());
    // The scrape used OpenMetrics and Prometheus stored our own series too.
    let r = get(paddr, "/api/v1/query?query=quietstat_agent_info", None);
    assert!(r.body.contains("\"backend\""), "{}", r.body);
    let r = get(paddr, "/api/v1/targets", None);
    assert!(r.body.contains("\"health\":\"up\""), "{}", r.body);
    // The host's families, as node_exporter's dashboards query them.
    let v = prometheus_until(paddr, "/api/v1/query?query=node_uname_info", |v| {
        v["data"]["result"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    });
    let m = &v["data"]["result"][0]["metric"];
    for label in [
        "nodename",
        "sysname",
        "release",
        "version",
        "machine",
        "domainname",
    ] {
        assert!(
            m[label].as_str().is_some_and(|s| !s.is_empty()),
            "{label}: {m}"
        );
    }
    assert_eq!(m["sysname"], "Linux");
    for family in [
        "node_filefd_allocated",
        "node_filefd_maximum",
        "node_entropy_available_bits",
        "node_entropy_pool_size_bits",
        "node_sockstat_sockets_used",
        "node_sockstat_TCP_inuse",
        "node_sockstat_TCP_mem_bytes",
        "node_softnet_processed_total",
        "node_softnet_dropped_total",
        "node_softnet_times_squeezed_total",
        "node_netstat_Tcp_ActiveOpens",
        "node_netstat_Udp_InDatagrams",
        "node_sockstat_TCP6_inuse",
        "node_scrape_collector_success",
        "node_scrape_collector_duration_seconds",
        "quietstat_build_info",
        "node_network_up",
        "node_network_info",
        "node_network_mtu_bytes",
        "node_network_speed_bytes",
        "node_network_carrier",
        "node_network_transmit_queue_length",
        "node_filesystem_size_bytes",
        "node_filesystem_avail_bytes",
        "node_filesystem_free_bytes",
        "node_filesystem_files_free",
        "node_filesystem_readonly",
        "node_filesystem_device_error",
        "node_time_seconds",
        "node_time_zone_offset_seconds",
        "node_time_clocksource_current_info",
        "node_time_clocksource_available_info",
        "node_timex_sync_status",
        "node_timex_offset_seconds",
        "node_timex_maxerror_seconds",
        "node_timex_pps_jitter_total",
        "node_os_info",
        "node_os_version",
        "node_selinux_enabled",
        "node_arp_entries",
        "node_udp_queues",
        "node_nf_conntrack_entries",
        "node_nf_conntrack_entries_limit",
        "node_nf_conntrack_stat_found",
        "node_textfile_scrape_error",
        "node_textfile_mtime_seconds",
        "backup_last_success_seconds",
        "node_buddyinfo_blocks",
        "node_zoneinfo_managed_pages",
        "node_zoneinfo_numa_hit_total",
        "node_slabinfo_objects",
        "node_ksmd_pages_shared",
        "node_kernel_hung_tasks_total",
        "node_processes_pids",
        "node_processes_state",
        "node_processes_max_processes",
        "node_cpu_info",
    ] {
        let r = get(paddr, &format!("/api/v1/query?query={family}"), None);
        let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        assert!(
            v["data"]["result"]
                .as_array()
                .is_some_and(|r| !r.is_empty()),
            "{family}: {}",
            r.body
        );
    }
}

#[test]
fn prometheus_scrapes_through_tls_and_basic_auth_from_a_node_exporter_web_config() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("web.yml");
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    std::fs::write(
        &web,
        format!(
            "tls_server_config:\n  cert_file: {}\n  key_file: {}\nbasic_auth_users:\n  prom: '{hash}'\n",
            data.join("server.crt").display(),
            data.join("server.key").display()
        ),
    )
    .unwrap();
    let a = agent("", &["--web.config.file", web.to_str().unwrap()]);
    assert!(
        a.early.iter().any(|l| l.contains("serving https://")),
        "{:#?}",
        a.early
    );
    // Plain HTTP gets no metrics from a TLS port.
    let mut s = TcpStream::connect(a.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    assert!(
        !String::from_utf8_lossy(&raw).contains("node_"),
        "served over plain HTTP"
    );

    let job = |name: &str, password: &str| {
        format!(
            "  - job_name: {name}\n    scheme: https\n    tls_config:\n      ca_file: {}\n    basic_auth:\n      username: prom\n      password: {password}\n    static_configs:\n      - targets: ['{}']\n",
            data.join("ca.crt").display(),
            a.addr
        )
    };
    let (_prom, paddr) = prometheus(
        dir.path(),
        &(job("good", "s3cret") + &job("wrong", "guess")),
    );
    let targets = prometheus_until(paddr, "/api/v1/targets", |v| {
        let t = v["data"]["activeTargets"].as_array();
        t.is_some_and(|t| t.len() == 2 && t.iter().all(|t| t["health"] != "unknown"))
    });
    for t in targets["data"]["activeTargets"].as_array().unwrap() {
        match t["labels"]["job"].as_str().unwrap() {
            "good" => assert_eq!(t["health"], "up", "{t}"),
            _ => {
                assert_eq!(t["health"], "down", "{t}");
                assert!(t["lastError"].as_str().unwrap().contains("401"), "{t}");
            }
        }
    }
    let q = "/api/v1/query?query=node_context_switches_total%7Bjob%3D%22good%22%7D";
    prometheus_until(paddr, q, |v| {
        v["data"]["result"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    });
}

/// Labels node_exporter's releases after Debian's 1.5 added to families
/// both serve, which the agent serves as the current release does: left
/// out of the agent's series before the two are compared.
const LATER_LABELS: &[(&str, &str)] = &[
    ("node_disk_info", "rotational"),
    ("node_network_info", "adminstate"),
    ("node_nvme_info", "cntlid"),
];

fn without_later_labels(s: Series) -> Series {
    s.into_iter()
        .map(|((name, mut labels), v)| {
            for (_, later) in LATER_LABELS.iter().filter(|(f, _)| *f == name) {
                labels.retain(|(k, _)| k != later);
            }
            ((name, labels), v)
        })
        .collect()
}

/// node_exporter and the agent side by side: for every family both export,
/// the same label sets and values within what changed between two reads a
/// moment apart (ours before and after node_exporter's).
#[test]
fn node_exporter_and_the_agent_agree_family_by_family() {
    // Every `max_age_ms=0` request reads again: no floor, no budget.
    let texts = tempfile::tempdir().unwrap();
    std::fs::write(
        texts.path().join("jobs.prom"),
        "# HELP jobs_done_total Jobs done.\n# TYPE jobs_done_total counter\njobs_done_total{queue=\"a\"} 12\njobs_done_total{queue=\"b\"} 3\n",
    )
    .unwrap();
    let texts_flag = format!("--collector.textfile.directory={}", texts.path().display());
    // node_exporter's opt-in collectors this machine has the files for.
    let opt_in = [
        "--collector.buddyinfo",
        "--collector.zoneinfo",
        "--collector.slabinfo",
        "--collector.ksmd",
        "--collector.processes",
        "--collector.cpu.info",
    ];
    let mut flags = vec![texts_flag.as_str(), "--collector.interrupts"];
    flags.extend(opt_in);
    let a = agent(&demand_without_floors(0.0, &all_sources()), &flags);
    let mut ne_args: Vec<String> = ["--collector.interrupts", "--collector.stat.softirq"]
        .iter()
        .chain(&opt_in)
        .map(|s| s.to_string())
        .collect();
    ne_args.push(texts_flag.clone());
    // Debian's build excludes /run, /mnt and /media too; upstream's
    // default, which the agent keeps:
    ne_args.push(format!(
        "--collector.filesystem.mount-points-exclude={}",
        procfs::DEFAULT_MOUNT_POINTS_EXCLUDE
    ));
    let (_ne, naddr) = node_exporter(&ne_args);
    let before = without_later_labels(scrape(&a, "?max_age_ms=0"));
    let ne_text = get(naddr, "/metrics", None).body;
    let after = without_later_labels(scrape(&a, "?max_age_ms=0"));
    let (theirs, their_types) = parse_exposition(&ne_text);
    let (_, our_types) = parse_exposition(&get(a.addr, "/metrics", None).body);

    let families = |s: &Series| s.keys().map(|(n, _)| n.clone()).collect::<BTreeSet<_>>();
    let common: BTreeSet<String> = families(&before)
        .intersection(&families(&theirs))
        .cloned()
        .collect();
    for f in [
        "node_cpu_seconds_total",
        "node_intr_total",
        "node_context_switches_total",
        "node_forks_total",
        "node_boot_time_seconds",
        "node_procs_running",
        "node_load1",
        "node_memory_MemTotal_bytes",
        "node_memory_Active_anon_bytes",
        "node_vmstat_pgfault",
        "node_disk_reads_completed_total",
        "node_network_receive_bytes_total",
        "node_interrupts_total",
        "node_softirqs_total",
        "node_pressure_cpu_waiting_seconds_total",
        "node_scrape_collector_duration_seconds",
        "node_scrape_collector_success",
        "node_uname_info",
        "node_filefd_allocated",
        "node_entropy_available_bits",
        "node_sockstat_TCP_inuse",
        "node_softnet_processed_total",
        "node_netstat_Tcp_ActiveOpens",
        "node_netstat_TcpExt_ListenDrops",
        "node_sockstat_TCP6_inuse",
        "node_network_up",
        "node_network_info",
        "node_network_mtu_bytes",
        "node_filesystem_avail_bytes",
        "node_filesystem_device_error",
        "node_time_seconds",
        "node_timex_sync_status",
        "node_os_info",
        "node_selinux_enabled",
        "node_arp_entries",
        "node_udp_queues",
        "node_nf_conntrack_entries",
        "node_textfile_scrape_error",
        "node_textfile_mtime_seconds",
        "jobs_done_total",
        "node_buddyinfo_blocks",
        "node_zoneinfo_min_pages",
        "node_zoneinfo_nr_free_pages",
        "node_zoneinfo_numa_hit_total",
        "node_zoneinfo_protection_0",
        "node_slabinfo_objects",
        "node_slabinfo_object_size_bytes",
        "node_ksmd_run",
        "node_ksmd_sleep_seconds",
        "node_processes_pids",
        "node_processes_state",
        "node_processes_max_threads",
        "node_cpu_info",
    ] {
        assert!(common.contains(f), "{f} not exported by both");
    }
    // Every family node_exporter's collectors export here and the agent
    // does not is named in docs/metrics.md, with the reason (go_*,
    // process_* and promhttp_* describe node_exporter's own process).
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/metrics.md"),
    )
    .unwrap();
    let absent: Vec<_> = families(&theirs)
        .difference(&families(&before))
        .filter(|f| f.starts_with("node_") && !doc.contains(&format!("`{f}`")))
        .cloned()
        .collect();
    assert!(
        absent.is_empty(),
        "node_exporter's families absent here and not named in docs/metrics.md: {absent:?}"
    );
    let mut problems = Vec::new();
    for f in &common {
        if our_types.get(f) != their_types.get(f) {
            problems.push(format!(
                "{f}: type {:?} vs node_exporter {:?}",
                our_types.get(f),
                their_types.get(f)
            ));
        }
        if f.starts_with("node_scrape_collector_") {
            // Per collector: each side lists its own collectors, and
            // durations are each side's own; a collector both run must
            // succeed on both or fail on both.
            if f == "node_scrape_collector_success" {
                for ((n, l), v) in before.iter().filter(|((n, _), _)| n == f) {
                    if let Some(t) = theirs.get(&(n.clone(), l.clone()))
                        && t != v
                    {
                        problems.push(format!("{f}{l:?}: node_exporter {t}, ours {v}"));
                    }
                }
            }
            continue;
        }
        let labels = |s: &Series| -> BTreeSet<Vec<(String, String)>> {
            s.keys()
                .filter(|(n, _)| n == f)
                .map(|(_, l)| l.clone())
                .collect()
        };
        let (ours, their) = (labels(&before), labels(&theirs));
        // Which process states exist changes from one moment to the next
        // (a process in D or Z now, none a moment later); each side's
        // counts must be counts.
        if f == "node_processes_state" {
            for ((n, l), v) in before.iter().chain(&theirs) {
                if n == f && (*v < 1.0 || v.fract() != 0.0) {
                    problems.push(format!("{f}{l:?}: {v} is not a count"));
                }
            }
            continue;
        }
        // Network devices node_exporter reads over netlink may omit some
        // (e.g. lo); everything it has, we must have.
        let missing: Vec<_> = their.difference(&ours).collect();
        let extra: Vec<_> = ours.difference(&their).collect();
        if !missing.is_empty() || (!extra.is_empty() && !f.starts_with("node_network_")) {
            problems.push(format!(
                "{f}: labels only node_exporter has {missing:?}; only we have {extra:?}"
            ));
            continue;
        }
        // Gauges of the instant (I/Os in flight, runnable and blocked
        // processes) jump both ways between any two reads, by as much as
        // the machine's load: the same file read a moment apart gives
        // unrelated values, so only their form is compared (whole numbers,
        // not negative; the label sets were compared above).
        // So are free blocks per order and the objects of a slab cache
        // (every allocation on the machine moves them), the pages dirty or
        // under writeback (a flush moves tens of megabytes at once: 61 MB
        // under writeback for node_exporter, 26 then 12 MB for the reads
        // around it, seen once), and the sockets open now (the suite's
        // other tests open and close connections all along: 8 established
        // for node_exporter, 23 then 18 for the reads around it, seen
        // once).
        // The exporter's own process: each side describes itself (types
        // and label sets were compared above).
        if f.starts_with("process_") {
            continue;
        }
        if f.starts_with("node_sockstat_")
            || matches!(
                f.as_str(),
                "node_netstat_Tcp_CurrEstab"
                    | "node_udp_queues"
                    | "node_nf_conntrack_entries"
                    | "node_memory_Dirty_bytes"
                    | "node_memory_Writeback_bytes"
                    | "node_zoneinfo_nr_dirty_pages"
                    | "node_zoneinfo_nr_writeback_pages"
                    | "node_disk_io_now"
                    | "node_procs_running"
                    | "node_procs_blocked"
                    | "node_buddyinfo_blocks"
                    | "node_slabinfo_active_objects"
                    | "node_slabinfo_objects"
                    | "node_processes_pids"
                    | "node_processes_threads"
            )
        {
            for l in &their {
                let t = theirs[&(f.clone(), l.clone())];
                let b = before[&(f.clone(), l.clone())];
                for v in [t, b] {
                    if v < 0.0 || v.fract() != 0.0 {
                        problems.push(format!("{f}{l:?}: {v} is not a count"));
                    }
                }
            }
            continue;
        }
        for l in &their {
            let key = (f.clone(), l.clone());
            let (b, t, c) = (before[&key], theirs[&key], after[&key]);
            let (lo, hi) = (b.min(c), b.max(c));
            // Gauges that move on their own between reads (free memory,
            // load, I/O in flight) get slack; counters must lie between.
            let slack = match f.as_str() {
                n if n.starts_with("node_memory_") => 16.0 * 1024.0 * 1024.0 + hi * 0.001,
                // The same slack in pages for a zone's page counts (its
                // watermarks and sizes do not move, protection_N neither).
                n if n.starts_with("node_zoneinfo_nr_") && !n.ends_with("_total") => {
                    4096.0 + hi * 0.001
                }
                n if n.starts_with("node_load") => 0.5,
                // Files and sockets node_exporter itself opens to answer.
                "node_filefd_allocated" => 64.0,
                // Disk space and inodes move with every write on the machine.
                "node_filesystem_free_bytes" | "node_filesystem_avail_bytes" => {
                    1024.0 * 1024.0 * 1024.0
                }
                "node_filesystem_files_free" => 100_000.0,
                // The clock as each side answers.
                "node_time_seconds" => 10.0,
                // Kernel NTP state moves while a daemon disciplines the clock.
                n if n.starts_with("node_timex_") => hi.abs() * 1e-3 + 1e-3,
                // Neighbours the machine's traffic adds.
                "node_arp_entries" => 4.0,
                // Counters printed with 6 significant digits by either side.
                _ => hi.abs() * 1e-6 + 1e-9,
            };
            if t < lo - slack || t > hi + slack {
                problems.push(format!("{f}{l:?}: node_exporter {t}, ours {b} then {c}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} disagreements:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn bench_consumers_reports_every_variant_and_cleans_up() {
    let child = quietstat()
        .args([
            "bench",
            "consumers",
            "--consumers",
            "2",
            "--reads",
            "200",
            "--format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bench_pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_ok(&out);
    let rows = json_lines(&out);
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "proc-stat",
            "shm-max-age-0ms",
            "shm-max-age-1ms",
            "shm-max-age-10ms",
            "shm-max-age-100ms",
            "shm-max-age-1000ms",
            "shm-100ms-every-1ms",
            "http-json"
        ]
    );
    let reads = |v: &str| {
        rows.iter().find(|r| r["variant"] == v).unwrap()["proc_stat_reads"]
            .as_u64()
            .unwrap()
    };
    // Consumers reading /proc/stat themselves read it every time.
    assert!(reads("proc-stat") >= 400);
    // Max age 0: every request a fresh read, shared by requests made
    // together, and the agent's own schedule (one read a second) besides.
    let row = rows
        .iter()
        .find(|r| r["variant"] == "shm-max-age-0ms")
        .unwrap();
    let scheduled = row["elapsed_s"].as_f64().unwrap().ceil() as u64 + 1;
    assert!(
        (1..=400 + scheduled).contains(&reads("shm-max-age-0ms")),
        "{} reads in {} s",
        reads("shm-max-age-0ms"),
        row["elapsed_s"]
    );
    // Max age 1 s: the snapshot serves them; at most the schedule reads.
    assert!(
        reads("shm-max-age-1000ms") <= 2,
        "{}",
        reads("shm-max-age-1000ms")
    );
    // No agent or consumer is left behind: the agent's command line names
    // the benchmark's temporary directory.
    let mark = format!("quietstat-bench-consumers-{bench_pid}");
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            assert!(
                !String::from_utf8_lossy(&cmd).contains(&mark),
                "left running: {}",
                String::from_utf8_lossy(&cmd)
            );
        }
    }
}

/// Without BPF (the procfs backend), exits are captured through taskstats:
/// children that end between two reads of the process table are counted,
/// and listed with their exit status.
#[test]
fn exits_are_captured_through_taskstats_without_bpf() {
    let a = agent("", &["--backend", "procfs"]);
    assert!(
        a.early
            .iter()
            .any(|l| l.contains("exit capture: taskstats")),
        "{:?}",
        a.early
    );
    let captured =
        |a: &Agent| value(&scrape(a, ""), "quietstat_process_exits_total", &[]).unwrap_or(0.0);
    let before = captured(&a);
    for _ in 0..5 {
        Command::new("sh").args(["-c", "exit 42"]).status().unwrap();
    }
    let end = Instant::now() + Duration::from_secs(15);
    while captured(&a) < before + 5.0 {
        assert!(Instant::now() < end, "exits not captured: {}", captured(&a));
        std::thread::sleep(Duration::from_millis(200));
    }
    let lost = value(&scrape(&a, ""), "quietstat_process_exits_lost_total", &[]);
    assert_eq!(lost, Some(0.0));
}

/// Keys of a JSON object, recursively, as `a.b.c` paths (array elements
/// merged), for comparing the shape of two outputs.
fn key_paths(v: &serde_json::Value, prefix: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let p = format!("{prefix}.{k}");
                out.insert(p.clone());
                key_paths(v, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for v in a {
                key_paths(v, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn stat_from_agent_gives_the_same_rates_under_the_same_names_as_stat() {
    let a = agent("[sources.processes]\nenabled = false\n", &[]);
    let stat = |extra: &[&str]| {
        let out = quietstat()
            .args([
                "stat",
                "--interval",
                "300ms",
                "--count",
                "2",
                "--format",
                "json",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert_ok(&out);
        let lines = json_lines(&out);
        assert_eq!(lines.len(), 2);
        lines
    };
    let direct = stat(&[]);
    let from_agent = stat(&["--from-agent", a.shm.to_str().unwrap()]);
    let (mut d, mut f) = (Default::default(), Default::default());
    key_paths(&direct[1], "", &mut d);
    key_paths(&from_agent[1], "", &mut f);
    // Every figure the snapshot carries is named as stat names it: the
    // agent's keys are a subset of stat's (disks, nets, IRQs are not in the
    // snapshot), and the CPU, system and memory figures are there.
    let extra: Vec<_> = f.difference(&d).collect();
    assert!(extra.is_empty(), "names only --from-agent uses: {extra:?}");
    for key in [
        ".rates.cpu_all.user",
        ".rates.cpus[].busy",
        ".rates.interrupts_per_sec",
        ".rates.context_switches_per_sec",
        ".rates.forks_per_sec",
        ".rates.memory.available_bytes",
        ".rates.load1",
    ] {
        assert!(f.contains(key), "{key} missing from --from-agent: {f:?}");
    }
    // The agent's samples carry the wall-clock time they were read at.
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let at = from_agent[1]["unix_ns"].as_u64().unwrap();
    assert!(
        now_ns.abs_diff(at) < 60_000_000_000,
        "sample time {at}, now {now_ns}"
    );
    let api: serde_json::Value =
        serde_json::from_str(&get(a.addr, "/api/v1/snapshot?sources=stat", None).body).unwrap();
    let at = api["unix_ns"].as_u64().unwrap();
    assert!(
        now_ns.abs_diff(at) < 60_000_000_000,
        "JSON API sample time {at}, now {now_ns}"
    );
    let r = &from_agent[1]["rates"];
    assert!(r["interrupts_per_sec"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["cpu_all"]["idle"].as_f64().is_some(), "{r}");
    let secs = r["interval_secs"].as_f64().unwrap();
    assert!((0.1..2.0).contains(&secs), "interval {secs}");
}

/// The standard `process_*` families every Prometheus exporter serves about
/// itself describe the agent's process, as /proc shows it.
#[test]
fn the_standard_process_families_describe_the_agent() {
    let a = agent("", &[]);
    let pid = a.proc.id();
    let s = scrape(&a, "");
    let v = |n: &str| value(&s, n, &[]).unwrap_or_else(|| panic!("no {n}"));
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib = |key: &str| -> f64 {
        let l = status.lines().find(|l| l.starts_with(key)).unwrap();
        l.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() * 1024.0
    };
    let rss = v("process_resident_memory_bytes");
    assert!(
        rss > kib("VmRSS:") / 2.0 && rss < kib("VmRSS:") * 2.0,
        "{rss}"
    );
    let vsz = v("process_virtual_memory_bytes");
    assert!(
        vsz > kib("VmSize:") / 2.0 && vsz < kib("VmSize:") * 2.0,
        "{vsz}"
    );
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as f64;
    let open = v("process_open_fds");
    assert!(open >= 3.0 && (open - fds).abs() <= 8.0, "{open} vs {fds}");
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let soft: f64 = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
        .unwrap();
    assert_eq!(v("process_max_fds"), soft);
    let started = v("process_start_time_seconds");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(now - started >= 0.0 && now - started < 60.0, "{started}");
    assert!(v("process_cpu_seconds_total") > 0.0);
}

/// node_exporter's `--web.listen-address` and `--web.telemetry-path`: the
/// exposition moves to the path given, the landing page and a wrong path's
/// answer name it, and a path that is no path is refused at start.
#[test]
fn the_exposition_answers_at_the_telemetry_path_given() {
    let a = agent(
        "",
        &[
            "--web.listen-address",
            "127.0.0.1:0",
            "--web.telemetry-path",
            "/probe/metrics",
        ],
    );
    assert!(
        a.early
            .iter()
            .any(|l| l.contains("/probe/metrics and /api/v1/snapshot")),
        "{:?}",
        a.early
    );
    let r = get(a.addr, "/probe/metrics", None);
    assert_eq!(r.status, 200);
    assert!(r.body.contains("node_load1 "), "{}", r.body);
    let r = get(a.addr, "/metrics", None);
    assert_eq!(r.status, 404);
    assert!(r.body.contains("try /probe/metrics"), "{}", r.body);
    assert!(
        get(a.addr, "/", None)
            .body
            .contains("/probe/metrics[?max_age_ms=N]")
    );
    for bad in ["metrics", "/", "/api/v1/snapshot", "/m?x=1"] {
        let out = quietstat()
            .args([
                "agent",
                "--no-store",
                "--shm-path",
                "",
                "--listen",
                "127.0.0.1:0",
            ])
            .args(["--web.telemetry-path", bad])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--web.telemetry-path") && err.contains(bad),
            "{bad}: {err}"
        );
    }
}

/// node_exporter's `--log.format` and `--log.level`: every line one JSON
/// object (or one logfmt record), and no line below the level set.
#[test]
fn log_lines_take_node_exporters_format_and_level() {
    use std::io::BufRead;
    let run = |args: &[&str], until: &dyn Fn(&str) -> bool| -> Vec<String> {
        let mut child = quietstat()
            .args(["agent", "--no-store", "--shm-path", ""])
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let guard = Guard(child);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(l);
            }
        });
        let mut lines = Vec::new();
        let end = Instant::now() + Duration::from_secs(30);
        while !lines.iter().any(|l: &String| until(l)) {
            assert!(Instant::now() < end, "{lines:#?}");
            if let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) {
                lines.push(l);
            }
        }
        // SAFETY: our own child, not yet reaped.
        unsafe { libc::kill(guard.0.id() as i32, libc::SIGTERM) };
        // Every line it wrote, up to its exit.
        lines.extend(rx.iter());
        lines
    };
    let lines = run(&["--listen", "127.0.0.1:0", "--log.format", "json"], &|l| {
        l.contains("serving http://")
    });
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"));
        assert!(v["ts"].as_str().is_some_and(|t| t.ends_with('Z')), "{l}");
        assert!(
            ["info", "warn", "error"].contains(&v["level"].as_str().unwrap()),
            "{l}"
        );
    }
    // Only warnings and worse: the warning of an open address is written,
    // no info line (serving, the snapshot's path, placement) is.
    let lines = run(
        &[
            "--listen",
            "0.0.0.0:0",
            "--log.format",
            "logfmt",
            "--log.level",
            "warn",
        ],
        &|l| l.contains("beyond this machine"),
    );
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("ts=") && l.contains(" level=warn msg=\"")),
        "{lines:#?}"
    );
    for bad in [["--log.level", "loud"], ["--log.format", "xml"]] {
        let out = quietstat()
            .args(["agent", "--print-config"])
            .args(bad)
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(bad[0]),
            "{bad:?}"
        );
    }
}

/// node_exporter's flags the agent does not take are refused by name, with
/// why; its older spellings of the filters are taken.
#[test]
fn node_exporter_flags_not_taken_are_refused_by_name() {
    for flag in [
        "--runtime.gomaxprocs=1",
        "--collector.bcache.priorityStats",
        "--collector.rapl.enable-zone-label",
        "--collector.nosuch.option=x",
    ] {
        let out = quietstat()
            .args(["agent", "--print-config", flag])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        let name = flag.split('=').next().unwrap();
        assert!(
            err.contains(&format!("node_exporter's {name} is not taken here: ")),
            "{err}"
        );
    }
    let out = quietstat()
        .args([
            "agent",
            "--print-config",
            "--collector.filesystem.ignored-mount-points=^/x",
            "--collector.diskstats.ignored-devices=^sr",
            "--collector.netdev.device-blacklist=^lo$",
        ])
        .output()
        .unwrap();
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "filesystem_mount_points_exclude = \"^/x\"",
        "diskstats_device_exclude = \"^sr\"",
        "netdev_device_exclude = \"^lo$\"",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
}

/// node_exporter's `--web.disable-exporter-metrics`: no family about the
/// agent itself; the collectors' success and the machine's figures stay.
#[test]
fn exporter_metrics_can_be_left_out() {
    let a = agent("", &["--web.disable-exporter-metrics"]);
    let body = get(a.addr, "/metrics", None).body;
    let names: BTreeSet<&str> = body
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();
    assert!(names.contains("node_load1"), "{names:?}");
    assert!(names.contains("node_scrape_collector_success"), "{names:?}");
    // The machine's own quietstat_* figures (IRQ totals, processes,
    // exits) stay; the agent's go.
    let own: Vec<&&str> = names
        .iter()
        .filter(|n| {
            [
                "process_",
                "quietstat_agent_",
                "quietstat_source_",
                "quietstat_http_",
                "quietstat_store_",
                "quietstat_build_info",
            ]
            .iter()
            .any(|p| n.starts_with(p))
        })
        .collect();
    assert!(own.is_empty(), "{own:?}");
    // Served by default.
    let a = agent("", &[]);
    let body = get(a.addr, "/metrics", None).body;
    assert!(body.contains("\nprocess_open_fds ") && body.contains("\nquietstat_source_up{"));
}

/// This machine's cgroups under cAdvisor's names: the root's CPU time from
/// the v2 hierarchy, its memory from the v1 one, every counter rising.
#[test]
fn the_agent_serves_this_machines_cgroups() {
    let a = agent(
        "[sources.cgroups]\nenabled = true\ninterval = \"1s\"\n",
        &[],
    );
    let value = |body: &str, line: &str| -> Option<f64> {
        body.lines()
            .find_map(|l| l.strip_prefix(line)?.strip_prefix(' ')?.parse().ok())
    };
    let first = get(a.addr, "/metrics", None).body;
    let cpu = "container_cpu_usage_seconds_total{id=\"/\"}";
    let before = value(&first, cpu).unwrap_or_else(|| panic!("{first}"));
    assert!(
        value(&first, "container_memory_usage_bytes{id=\"/\"}").is_some_and(|v| v > 0.0),
        "{first}"
    );
    assert!(value(&first, "quietstat_cgroups").is_some_and(|v| v >= 1.0));
    assert_eq!(
        value(&first, "quietstat_source_up{source=\"cgroups\"}"),
        Some(1.0)
    );
    // Served by default; not once the source is turned off.
    let plain = agent("", &[]);
    let body = get(plain.addr, "/metrics", None).body;
    assert!(
        value(&body, cpu).is_some()
            && value(&body, "quietstat_source_up{source=\"cgroups\"}") == Some(1.0),
        "{body}"
    );
    let off = agent("[sources.cgroups]\nenabled = false\n", &[]);
    let body = get(off.addr, "/metrics", None).body;
    assert!(
        !body.contains("container_cpu_usage_seconds_total"),
        "{body}"
    );
    // A second read a second later: the root's CPU time went on.
    assert!(wait_for(Duration::from_secs(10), || {
        let body = get(a.addr, "/metrics", None).body;
        value(&body, cpu).is_some_and(|v| v > before)
    }));
}

/// A cgroup's TCP bytes: its process's, counted while it lives and kept
/// once it ended, and its parent's (the root's) no less; and those of a
/// process that lived and ended between two scrapes, counted by the
/// process tables it lived in.
#[test]
fn a_cgroup_keeps_the_tcp_bytes_of_its_processes_that_ended() {
    const N: u64 = 3 << 20;
    let v2 = fixtures::cgroups::v2_mount().expect("this machine mounts no cgroup v2 hierarchy");
    let name = format!("qs-net-{}", std::process::id());
    let sender = tempfile::NamedTempFile::new().unwrap();
    // Sends N bytes over a loopback connection of its own, waits for a
    // byte back (whose segment acknowledges them all), then stays.
    std::fs::write(
        sender.path(),
        "import socket, sys, time\n\
         l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen()\n\
         c = socket.create_connection(l.getsockname()); s, _ = l.accept()\n\
         n = int(sys.argv[1]); c.sendall(b'x' * n); got = 0\n\
         while got < n: got += len(s.recv(1 << 20))\n\
         s.sendall(b'k'); c.recv(1)\n\
         len(sys.argv) > 2 and open(sys.argv[2], 'w').close()\n\
         time.sleep(600)\n",
    )
    .unwrap();
    let a = agent(
        "process_network = true\n[sources.processes]\ninterval = \"1s\"\n[sources.cgroups]\nenabled = true\ninterval = \"1s\"\n",
        &[],
    );
    let mut made = fixtures::cgroups::Made::default();
    let pid = made.run_in(
        &[v2.join(&name)],
        &format!("exec python3 {} {N}", sender.path().display()),
    );
    let id = format!("/{name}");
    let tx = |s: &Series, id: &str| {
        value(
            s,
            "quietstat_cgroup_network_transmit_bytes_total",
            &[("id", id)],
        )
    };
    let mut last = Series::default();
    assert!(
        wait_for(Duration::from_secs(20), || {
            last = scrape(&a, "");
            tx(&last, &id).is_some_and(|v| v >= N as f64)
        }),
        "the cgroup's bytes: {:?}",
        tx(&last, &id)
    );
    let sent = tx(&last, &id).unwrap();
    assert!(sent <= N as f64 + 6.0, "{sent} bytes charged for {N}");
    assert!(tx(&last, "/").unwrap() >= sent);
    // The process ends; two process tables later its cgroup still has
    // its bytes.
    // SAFETY: a signal to the child this test started (sh exec'd python3).
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    for c in &mut made.children {
        c.wait().unwrap();
    }
    let tables = reads(&last, "processes");
    assert!(wait_for(Duration::from_secs(20), || {
        last = scrape(&a, "");
        reads(&last, "processes") >= tables + 2.0
    }));
    // A table between the kill and the reaping may have added the close's
    // acknowledged FIN.
    let kept = tx(&last, &id).unwrap();
    assert!(
        (sent..=sent + 2.0).contains(&kept),
        "{kept} bytes kept of the {sent} charged while the process lived"
    );

    // A second process sends and ends with no scrape in its life: the
    // process tables it lived in count its bytes (watched through the
    // JSON API, which encodes no cgroup).
    let tables = || -> f64 {
        let r = get(a.addr, "/api/v1/snapshot?sources=loadavg", None);
        let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        v["agent"]["sources"]["processes"]["reads"]
            .as_f64()
            .unwrap()
    };
    let after_tables = |n: f64| {
        let from = tables();
        assert!(
            wait_for(Duration::from_secs(20), || tables() >= from + n),
            "fewer than {n} process tables in 20 s"
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("sent");
    const N2: u64 = 1 << 20;
    let second = made.run_in(
        &[v2.join(&name)],
        &format!(
            "exec python3 {} {N2} {}",
            sender.path().display(),
            marker.display()
        ),
    );
    assert!(
        wait_for(Duration::from_secs(20), || marker.exists()),
        "the second sender never finished sending"
    );
    // A table begun after it finished reads its bytes; then it ends.
    after_tables(2.0);
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(second as i32, libc::SIGKILL) };
    made.children.last_mut().unwrap().wait().unwrap();
    after_tables(2.0);
    last = scrape(&a, "");
    let both = tx(&last, &id).unwrap();
    assert!(
        both >= kept + N2 as f64 && both <= kept + N2 as f64 + 8.0,
        "{both} bytes kept, against {kept} before and {N2} sent by a process no scrape saw"
    );
}

/// A cgroup whose process is in a network namespace of its own is served
/// that namespace's interfaces under cAdvisor's names: a veth pair there,
/// datagrams sent out of one end to a neighbour written in by hand, so
/// that the end counts them sent; loopback left out, as cAdvisor does.
#[test]
fn a_cgroup_in_a_network_namespace_of_its_own_is_served_its_interfaces() {
    const N: u64 = 2000;
    const SIZE: u64 = 1000;
    let v2 = fixtures::cgroups::v2_mount().expect("this machine mounts no cgroup v2 hierarchy");
    let name = format!("qs-netns-{}", std::process::id());
    let a = agent(
        "[sources.processes]\ninterval = \"1s\"\n[sources.cgroups]\nenabled = true\ninterval = \"1s\"\n",
        &[],
    );
    let mut made = fixtures::cgroups::Made::default();
    made.run_in(
        &[v2.join(&name)],
        &format!(
            "exec unshare --net sh -c 'ip link add qsa type veth peer name qsb && \
             ip addr add 10.9.0.1/24 dev qsa && ip link set qsa up && ip link set qsb up && \
             ip neigh add 10.9.0.2 lladdr 02:00:00:00:00:02 dev qsa nud permanent && \
             exec python3 -c \"import socket, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nfor _ in range({N}): s.sendto(b\\\"x\\\" * {SIZE}, (\\\"10.9.0.2\\\", 9))\ntime.sleep(600)\"'"
        ),
    );
    let id = format!("/{name}");
    let sent = |s: &Series| {
        value(
            s,
            "container_network_transmit_packets_total",
            &[("id", &id), ("interface", "qsa")],
        )
    };
    let mut last = Series::default();
    assert!(
        wait_for(Duration::from_secs(20), || {
            last = scrape(&a, "");
            sent(&last).is_some_and(|v| v >= N as f64)
        }),
        "qsa's packets: {:?}",
        sent(&last)
    );
    let bytes = value(
        &last,
        "container_network_transmit_bytes_total",
        &[("id", &id), ("interface", "qsa")],
    )
    .unwrap();
    // Each datagram with its UDP, IP and Ethernet headers.
    assert!(bytes >= (N * (SIZE + 42)) as f64, "{bytes} bytes sent");
    let received = value(
        &last,
        "container_network_receive_packets_total",
        &[("id", &id), ("interface", "qsb")],
    )
    .unwrap();
    assert!(received >= N as f64, "{received} packets received by qsb");
    // Loopback is left out; the root's processes share the agent's
    // namespace and are served none.
    assert!(!last.keys().any(|(n, l)| {
        n.starts_with("container_network_")
            && l.iter()
                .any(|(k, v)| (k == "interface" && v == "lo") || (k == "id" && v == "/"))
    }));
    drop(made);
}
