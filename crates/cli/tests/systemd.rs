//! node_exporter's systemd collector, against a real systemd: a user
//! manager started here on a bus of its own (`fixtures::systemd`), with a
//! unit made to fail, one restarted, a timer, a socket and a service with
//! a tasks limit. The agent's series are compared with Debian's
//! node_exporter's on the same bus, series by series; then the bus is
//! stopped (SIGSTOP) and the agent must go on serving within its read's
//! deadline, the last units read served with their age.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::agent::{Agent, agent_with, get};
use common::exposition::{Series, node_exporter_env, parse_exposition, value};
use common::wait_for;
use fixtures::systemd::UserManager;

fn units(dir: &std::path::Path) -> Vec<(&'static str, String)> {
    let flag = dir.join("flaky-ran-once");
    let sock = dir.join("echo.sock");
    vec![
        (
            "broken.service",
            "[Service]\nType=oneshot\nExecStart=/bin/false\n".to_string(),
        ),
        (
            "flaky.service",
            format!(
                "[Unit]\nStartLimitIntervalSec=0\n[Service]\nExecStart=/bin/sh -c 'test -e {f} || {{ touch {f}; exit 1; }}; exec sleep 600'\nRestart=on-failure\nRestartSec=100ms\n",
                f = flag.display()
            ),
        ),
        (
            "capped.service",
            "[Service]\nExecStart=/bin/sleep 600\nTasksMax=7\n".to_string(),
        ),
        (
            "tick.timer",
            "[Timer]\nOnActiveSec=1s\nAccuracySec=1ms\n".to_string(),
        ),
        (
            "tick.service",
            "[Service]\nType=oneshot\nExecStart=/bin/true\n".to_string(),
        ),
        (
            "echo.socket",
            format!("[Socket]\nListenStream={}\nAccept=yes\n", sock.display()),
        ),
        (
            "echo@.service",
            "[Service]\nExecStart=/bin/true\nStandardInput=socket\n".to_string(),
        ),
    ]
}

/// The flags both exporters are given.
const FLAGS: [&str; 6] = [
    "--collector.systemd",
    "--collector.systemd.enable-restarts-metrics",
    "--collector.systemd.enable-start-time-metrics",
    "--collector.systemd.enable-task-metrics",
    // Leave out the units of the host's user configuration (gpg, dirmngr).
    "--collector.systemd.unit-exclude=(gpg|dirmngr|pk-debconf).*|.+\\.(automount|device|mount|scope|slice)",
    "--collector.systemd.unit-include=.+\\.(service|socket|timer|target)",
];

fn systemd_series(text: &str) -> Series {
    parse_exposition(text)
        .0
        .into_iter()
        .filter(|((n, _), _)| n.starts_with("node_systemd_"))
        .collect()
}

fn scrape(a: &Agent) -> String {
    get(a.addr, "/metrics", None).body
}

#[test]
fn a_real_managers_units_are_served_as_node_exporter_serves_them() {
    let dir = tempfile::tempdir().unwrap();
    let m = UserManager::start(&units(dir.path()));
    let started = m.systemctl(&[
        "start",
        "flaky.service",
        "capped.service",
        "tick.timer",
        "echo.socket",
    ]);
    assert!(started.status.success(), "{started:?}");
    // Made to fail: not started "successfully".
    assert!(!m.systemctl(&["start", "broken.service"]).status.success());
    for _ in 0..2 {
        assert!(m.connect(&dir.path().join("echo.sock")));
    }
    let bus = m.bus_address();
    // Read each second, so that reads fall while the bus is stopped below.
    let a = agent_with("[sources.systemd]\ninterval = \"1s\"\n", &FLAGS, |c| {
        c.env("DBUS_SYSTEM_BUS_ADDRESS", &bus);
    });
    // The restart, the timer's trigger and the two connections accepted,
    // as the agent serves them.
    let mut mine = Series::new();
    let settled = wait_for(Duration::from_secs(60), || {
        mine = systemd_series(&scrape(&a));
        fn name(n: &str) -> [(&str, &str); 1] {
            [("name", n)]
        }
        value(
            &mine,
            "node_systemd_service_restart_total",
            &name("flaky.service"),
        ) == Some(1.0)
            && value(
                &mine,
                "node_systemd_timer_last_trigger_seconds",
                &name("tick.timer"),
            )
            .is_some_and(|v| v > 0.0)
            && value(
                &mine,
                "node_systemd_socket_accepted_connections_total",
                &name("echo.socket"),
            ) == Some(2.0)
            && value(
                &mine,
                "node_systemd_unit_state",
                &[
                    ("name", "flaky.service"),
                    ("state", "active"),
                    ("type", "simple"),
                ],
            ) == Some(1.0)
    });
    assert!(settled, "the units never settled as expected: {mine:#?}");
    let state = |n: &str, s: &str, t: &str| {
        value(
            &mine,
            "node_systemd_unit_state",
            &[("name", n), ("state", s), ("type", t)],
        )
    };
    assert_eq!(state("broken.service", "failed", "oneshot"), Some(1.0));
    assert_eq!(state("broken.service", "active", "oneshot"), Some(0.0));
    assert_eq!(state("echo.socket", "active", ""), Some(1.0));
    assert_eq!(
        value(
            &mine,
            "node_systemd_unit_tasks_max",
            &[("name", "capped.service")]
        ),
        Some(7.0)
    );
    assert!(
        value(
            &mine,
            "node_systemd_unit_start_time_seconds",
            &[("name", "capped.service")]
        )
        .is_some_and(|v| v > 1.7e9)
    );
    assert!(
        !mine
            .keys()
            .any(|(_, l)| l.iter().any(|(k, v)| k == "name" && v.starts_with("gpg"))),
        "an excluded unit is served"
    );
    // "degraded", not "running": a unit failed.
    assert_eq!(value(&mine, "node_systemd_system_running", &[]), Some(0.0));
    assert!(value(&mine, "node_systemd_units", &[("state", "failed")]).is_some_and(|v| v >= 1.0));

    // node_exporter on the same bus with the same flags: every series it
    // serves, the agent serves with the same value (start times and
    // trigger times alike: both read the manager's own).
    let mut ne_args = vec!["--collector.disable-defaults"];
    ne_args.extend(FLAGS);
    let (_ne, addr) = node_exporter_env(&ne_args, &[("DBUS_SYSTEM_BUS_ADDRESS", &bus)]);
    let theirs = systemd_series(&get(addr, "/metrics", None).body);
    let mine = systemd_series(&scrape(&a));
    assert!(theirs.len() > 50, "node_exporter served {theirs:#?}");
    let mut differ = BTreeMap::new();
    for (k, v) in &theirs {
        match mine.get(k) {
            Some(w) if (w - v).abs() <= 1e-6 * v.abs().max(1.0) => {}
            other => {
                differ.insert(k.clone(), (*v, other.copied()));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "node_exporter's series the agent serves otherwise: {differ:#?}"
    );
    // What the agent serves beyond: only families node_exporter's later
    // releases added.
    for (n, _) in mine.keys().filter(|k| !theirs.contains_key(*k)) {
        assert!(
            n == "node_systemd_virtualization_info" || n == "node_systemd_version",
            "{n} served by the agent alone"
        );
    }

    // systemd's own socket (--collector.systemd.private's way, here the
    // user manager's): the same units and states, without the bus.
    let mut r = procfs::Reader::new("/proc", "/sys");
    r.set_gather_options(procfs::GatherOptions {
        systemd: procfs::SystemdOptions {
            address: format!("unix:path={}", m.private_socket().display()),
            bus: false,
            ..Default::default()
        },
        ..Default::default()
    });
    let mut s = procfs::SystemSample::default();
    r.read_sample(&[procfs::Source::Systemd], &mut s);
    assert!(
        s.ok(procfs::Source::Systemd),
        "{:?}",
        s.status[procfs::Source::Systemd as usize]
    );
    let broken = s
        .systemd
        .units
        .iter()
        .find(|u| u.name == "broken.service")
        .unwrap();
    assert_eq!(
        (broken.active.as_str(), broken.kind.as_str()),
        ("failed", "oneshot")
    );

    // A unit's type changes only when the manager loads its units again:
    // the type the agent keeps is read anew then.
    let unit = m.dir.path().join("config/systemd/user/broken.service");
    std::fs::write(&unit, "[Service]\nType=exec\nExecStart=/bin/false\n").unwrap();
    assert!(m.systemctl(&["daemon-reload"]).status.success());
    let retyped = wait_for(Duration::from_secs(30), || {
        let mine = systemd_series(&scrape(&a));
        value(
            &mine,
            "node_systemd_unit_state",
            &[
                ("name", "broken.service"),
                ("state", "failed"),
                ("type", "exec"),
            ],
        ) == Some(1.0)
    });
    assert!(retyped, "the new type is not served after daemon-reload");

    // The bus stops answering: the read ends at its deadline, the reads
    // after it do not wait again until the bus answers, the units read
    // last are still served, and their age grows.
    let read_seconds = |all: &Series| {
        value(
            all,
            "quietstat_source_read_seconds_total",
            &[("source", "systemd")],
        )
        .unwrap()
    };
    let before = read_seconds(&parse_exposition(&scrape(&a)).0);
    let bus_pid = m.bus_pid().expect("the bus's pid");
    // SAFETY: the bus daemon the manager started for this test.
    unsafe { libc::kill(bus_pid, libc::SIGSTOP) };
    let _cont = Cont(bus_pid);
    // Reads fall due while it is stopped.
    std::thread::sleep(Duration::from_millis(2500));
    let t0 = Instant::now();
    let body = scrape(&a);
    let took = t0.elapsed();
    let (all, _) = parse_exposition(&body);
    let up = value(&all, "quietstat_source_up", &[("source", "systemd")]);
    let read_age = value(
        &all,
        "quietstat_source_age_seconds",
        &[("source", "systemd")],
    );
    assert!(
        read_age.is_some_and(|a| a < 2.0),
        "no read while stopped: {read_age:?}"
    );
    assert_eq!(up, Some(0.0), "a read with the bus stopped succeeded");
    let age = value(&all, "quietstat_systemd_units_age_seconds", &[]).unwrap();
    assert!(age >= 1.0, "age {age}");
    assert_eq!(
        value(
            &systemd_series(&body),
            "node_systemd_unit_state",
            &[
                ("name", "broken.service"),
                ("state", "failed"),
                ("type", "exec")
            ]
        ),
        Some(1.0),
        "the last units read are no longer served: {:#?}",
        systemd_series(&body)
    );
    // A read that waited on the stopped bus would take as long as it
    // stays stopped.
    assert!(took < Duration::from_secs(20), "a scrape took {took:?}");
    // Two or three reads fell in the 2.5 s: one waited its deadline (a
    // second), the others not at all.
    let waited = read_seconds(&all) - before;
    assert!(
        (0.9..1.9).contains(&waited),
        "the reads while stopped took {waited} s"
    );
    drop(_cont);
    // Answering again: fresh.
    let fresh = wait_for(Duration::from_secs(30), || {
        let (all, _) = parse_exposition(&scrape(&a));
        value(&all, "quietstat_source_up", &[("source", "systemd")]) == Some(1.0)
            && value(&all, "quietstat_systemd_units_age_seconds", &[]).is_some_and(|v| v < 1.0)
    });
    assert!(fresh, "the source did not recover once the bus answered");
}

/// SIGCONT to a stopped process on drop (a failed assertion too).
struct Cont(i32);

impl Drop for Cont {
    fn drop(&mut self) {
        // SAFETY: the process this test stopped.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// A bus that accepts connections and never answers: the first read
/// fails at its deadline, the agent starts and serves all the same, and
/// the reads after it do not wait again (nor connect again) while the bus
/// has not answered.
#[test]
fn a_bus_that_never_answers_costs_the_deadline_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bus");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = connections.clone();
    // Accepted and held, never read.
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        for c in listener.incoming() {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            kept.push(c);
        }
    });
    let addr = format!("unix:path={}", path.display());
    let a = agent_with(
        "systemd_read_deadline = \"300ms\"\n[sources.systemd]\ninterval = \"1s\"\n",
        &["--collector.systemd"],
        |c| {
            c.env("DBUS_SYSTEM_BUS_ADDRESS", &addr);
        },
    );
    let stat = |all: &Series, n: &str| value(all, n, &[("source", "systemd")]).unwrap();
    let mut all = Series::new();
    assert!(wait_for(Duration::from_secs(30), || {
        all = parse_exposition(&scrape(&a)).0;
        stat(&all, "quietstat_source_reads_total") >= 2.0
    }));
    let stat = |n: &str| stat(&all, n);
    assert_eq!(stat("quietstat_source_up"), 0.0);
    let (reads, secs) = (
        stat("quietstat_source_reads_total"),
        stat("quietstat_source_read_seconds_total"),
    );
    // Each read after the first waiting its 300 ms would make 0.6 s.
    assert!(reads >= 2.0 && secs < 0.5, "{reads} reads took {secs} s");
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(!all.keys().any(|(n, _)| n.starts_with("node_systemd_")));
    assert_eq!(
        value(
            &all,
            "node_scrape_collector_success",
            &[("collector", "systemd")]
        ),
        Some(0.0)
    );
}
