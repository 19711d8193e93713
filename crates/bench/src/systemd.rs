//! `bench systemd`: one read of a manager's units, by the agent's systemd
//! source and by node_exporter's systemd collector (Debian's
//! `prometheus-node-exporter`, one scrape with only that collector), on
//! the same real user manager with `units` units of its own (services,
//! sockets and timers, started), on its own bus (`fixtures::systemd`).
//!
//! Each side reads `reads` times in turn; each read's wall time, and the
//! CPU it cost the reader, the manager and the bus daemon (the work a read
//! makes them do counts: it is spent on the machine all the same).

use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;
use sys::Error;

use crate::agent_cost::{free_port, get, http_body, spawn_quiet};
use crate::stats::Summary;

pub struct Options {
    pub units: usize,
    pub reads: usize,
}

/// One reader's figures, per read.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub reader: String,
    pub units: usize,
    /// Units whose states and properties a read serves (those the
    /// default unit-include and unit-exclude select).
    pub units_served: usize,
    pub wall: Summary,
    /// CPU per read, milliseconds: the reader's, the manager's, the bus
    /// daemon's, and their sum.
    pub reader_cpu_ms: f64,
    pub manager_cpu_ms: f64,
    pub bus_cpu_ms: f64,
    pub total_cpu_ms: f64,
}

/// CPU time of every thread of `pid` now, ns (their schedstat run time).
fn tasks_cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// The process's user and system time, ns (its exited threads too).
fn process_cpu_ns(pid: u32) -> u64 {
    crate::child::pid_stat(pid)
        .map(|s| (s.utime_ticks + s.stime_ticks) * 1_000_000_000 / procfs::stat::USER_HZ)
        .unwrap_or(0)
}

fn unit_files(units: usize) -> (Vec<(&'static str, String)>, Vec<String>) {
    let files = vec![
        (
            "svc@.service",
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n".to_string(),
        ),
        (
            "sock@.socket",
            "[Socket]\nListenStream=%t/bench-%i.sock\n".to_string(),
        ),
        (
            "sock@.service",
            "[Service]\nExecStart=/bin/true\n".to_string(),
        ),
        ("tmr@.timer", "[Timer]\nOnActiveSec=1d\n".to_string()),
        (
            "tmr@.service",
            "[Service]\nType=oneshot\nExecStart=/bin/true\n".to_string(),
        ),
    ];
    let (sockets, timers) = (units / 10, units / 10);
    let services = units - sockets - timers;
    let mut names: Vec<String> = (0..services).map(|i| format!("svc@{i}.service")).collect();
    names.extend((0..sockets).map(|i| format!("sock@{i}.socket")));
    names.extend((0..timers).map(|i| format!("tmr@{i}.timer")));
    (files, names)
}

/// The units node_exporter's exposition has a state of.
fn units_served(body: &str) -> usize {
    body.lines()
        .filter(|l| l.starts_with("node_systemd_unit_state{") && l.contains("state=\"active\""))
        .count()
}

/// Runs both readers; `note` receives progress messages.
pub fn run(opts: &Options, note: &mut dyn FnMut(&str)) -> Result<Vec<Row>, Error> {
    if opts.units < 10 || opts.reads == 0 {
        return Err(Error::new(
            sys::ErrorKind::Invalid,
            "--units must be at least 10 and --reads at least 1",
        ));
    }
    let (files, names) = unit_files(opts.units);
    note("starting a systemd user manager");
    let m = fixtures::systemd::UserManager::start(&files);
    note(&format!("starting {} units", names.len()));
    for chunk in names.chunks(200) {
        let mut args = vec!["start"];
        args.extend(chunk.iter().map(String::as_str));
        let out = m.systemctl(&args);
        if !out.status.success() {
            return Err(Error::new(
                sys::ErrorKind::Io,
                format!(
                    "systemctl --user start: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            ));
        }
    }
    let manager = m.manager_pid();
    let bus_pid = m.bus_pid().unwrap_or(0) as u32;
    let bus = m.bus_address();
    let mut rows = Vec::new();

    // The agent's source, as the agent reads it.
    let mut r = procfs::Reader::new("/proc", "/sys");
    r.set_gather_options(procfs::GatherOptions {
        systemd: procfs::SystemdOptions {
            address: bus.clone(),
            ..Default::default()
        },
        ..Default::default()
    });
    let mut s = procfs::SystemSample::default();
    // A first read connects and authenticates: the agent does that once.
    r.read_sample(&[procfs::Source::Systemd], &mut s);
    if !s.ok(procfs::Source::Systemd) {
        return Err(Error::new(
            sys::ErrorKind::Io,
            format!(
                "the systemd source: {:?}",
                s.status[procfs::Source::Systemd as usize]
            ),
        ));
    }
    let mut wall = Vec::new();
    let (c0, m0, b0) = (
        sys::thread_cpu_ns(),
        tasks_cpu_ns(manager),
        tasks_cpu_ns(bus_pid),
    );
    for _ in 0..opts.reads {
        let t = Instant::now();
        r.read_sample(&[procfs::Source::Systemd], &mut s);
        wall.push(t.elapsed().as_nanos() as u64);
    }
    let reader = sys::thread_cpu_ns() - c0;
    let (mgr, bus_cpu) = (tasks_cpu_ns(manager) - m0, tasks_cpu_ns(bus_pid) - b0);
    let selected = s.systemd.units.iter().filter(|u| u.selected).count();
    rows.push(row(
        "quietstat (systemd source)",
        opts,
        selected,
        &mut wall,
        reader,
        mgr,
        bus_cpu,
    ));
    note(&format!(
        "quietstat: {} units listed, {selected} selected",
        s.systemd.units.len()
    ));

    // node_exporter with only its systemd collector, on the same bus.
    let port = free_port()?;
    let mut cmd = Command::new("prometheus-node-exporter");
    cmd.arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .args(["--collector.disable-defaults", "--collector.systemd"])
        .env("DBUS_SYSTEM_BUS_ADDRESS", &bus);
    let ne = spawn_quiet(cmd, "prometheus-node-exporter (Debian's package)")?;
    let ne_pid = ne.0.id();
    let end = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > end {
            return Err(Error::new(
                sys::ErrorKind::Io,
                "node_exporter did not start",
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let scrape = || -> Result<String, Error> {
        let resp = get(port, "/metrics")?;
        Ok(String::from_utf8_lossy(http_body(&resp)).into_owned())
    };
    // node_exporter connects anew each scrape; a first scrape warms it.
    let mut served = units_served(&scrape()?);
    let mut wall = Vec::new();
    let (c0, m0, b0) = (
        process_cpu_ns(ne_pid),
        tasks_cpu_ns(manager),
        tasks_cpu_ns(bus_pid),
    );
    for _ in 0..opts.reads {
        let t = Instant::now();
        served = units_served(&scrape()?);
        wall.push(t.elapsed().as_nanos() as u64);
    }
    let reader = process_cpu_ns(ne_pid) - c0;
    let (mgr, bus_cpu) = (tasks_cpu_ns(manager) - m0, tasks_cpu_ns(bus_pid) - b0);
    rows.push(row(
        "node_exporter (systemd collector)",
        opts,
        served,
        &mut wall,
        reader,
        mgr,
        bus_cpu,
    ));
    Ok(rows)
}

fn row(
    reader: &str,
    opts: &Options,
    units_served: usize,
    wall: &mut [u64],
    reader_ns: u64,
    manager_ns: u64,
    bus_ns: u64,
) -> Row {
    let per = |ns: u64| ns as f64 / 1e6 / opts.reads as f64;
    Row {
        reader: reader.to_string(),
        units: opts.units,
        units_served,
        wall: Summary::of_ns(wall),
        reader_cpu_ms: per(reader_ns),
        manager_cpu_ms: per(manager_ns),
        bus_cpu_ms: per(bus_ns),
        total_cpu_ms: per(reader_ns + manager_ns + bus_ns),
    }
}
