//! The agent under hostile but fair use: clients that misbehave on real
//! loopback sockets, and files that are not what they claim to be. Each test
//! is bounded in time and in what it opens, and checks that a normal scrape
//! still answers, that memory stays bounded and that nothing panicked.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

mod common;

use common::agent::*;
use common::quietstat;

/// A scrape over a new connection: its status and how long it took.
fn timed_scrape(addr: SocketAddr) -> (u16, Duration) {
    let t = Instant::now();
    let r = get(addr, "/metrics", None);
    (r.status, t.elapsed())
}

/// How long a scrape may take beside misbehaving clients. A scrape held up
/// by one (a blocking write to a client that does not read, a request
/// waiting behind a stalled one) waits for the agent's 10 s read or write
/// timeout; a scrape not held up takes about a second at most (a debug
/// build, both CPUs busy). A bound between the two tells them apart
/// however fast the machine.
const NOT_HELD: Duration = Duration::from_secs(8);

#[track_caller]
fn assert_scrape_within(addr: SocketAddr, limit: Duration, when: &str) {
    let (status, took) = timed_scrape(addr);
    assert_eq!(status, 200, "{when}");
    assert!(took < limit, "{when}: a scrape took {took:?}");
}

/// The value of the unlabelled `name` in an exposition.
fn metric(body: &str, name: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in the exposition"))
}

/// Whether every thread of `pid` is stopped (state `T`).
fn all_threads_stopped(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .all(|t| {
            let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
            // The state follows the command's closing parenthesis.
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('T'))
        })
}

/// Every HTTP request the agent answered before this one.
fn answered(addr: SocketAddr) -> f64 {
    get(addr, "/metrics", None)
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("quietstat_http_requests_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

/// Peak resident memory of `pid` (VmHWM), bytes.
fn peak_rss(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    kb * 1024
}

/// Everything the agent logged so far.
fn drain_log(a: &Agent) -> Vec<String> {
    let mut lines = a.early.clone();
    while let Ok(l) = a.log.recv_timeout(Duration::from_millis(200)) {
        lines.push(l);
    }
    lines
}

#[track_caller]
fn assert_no_panic(lines: &[String]) {
    let bad: Vec<_> = lines.iter().filter(|l| l.contains("panicked")).collect();
    assert!(bad.is_empty(), "the agent panicked: {bad:#?}");
}

/// SO_LINGER 0: closing sends a reset instead of a FIN.
fn reset_on_close(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and option struct.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0);
}

/// A connection to `addr` whose receive window is a few KiB: the server's
/// writes to it stall as soon as a client stops reading.
fn narrow_connection(addr: SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd;
    let std::net::SocketAddr::V4(v4) = addr else {
        panic!("an IPv4 loopback address")
    };
    // SAFETY: a new socket; the option, the address and their lengths are
    // valid; the descriptor is owned by the TcpStream from here on.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let small: libc::c_int = 2048;
        let r = libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&small as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        assert_eq!(r, 0);
        let sa = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: v4.port().to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(*v4.ip()).to_be(),
            },
            sin_zero: [0; 8],
        };
        let r = libc::connect(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(r, 0);
        TcpStream::from_raw_fd(fd)
    }
}

/// Clients that ask for `/metrics` and stop reading, more of them than
/// there are encoder threads: the sampler keeps its rate and other scrapes
/// answer well before the write timeout (10 s) would free a held encoder.
#[test]
fn clients_that_stop_reading_an_answer_leave_sampling_and_other_scrapes_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("# TYPE filler gauge\n");
    for i in 0..20_000 {
        text += &format!("filler{{i=\"{i}\"}} {i}\n");
    }
    std::fs::write(dir.path().join("f.prom"), text).unwrap();
    let a = agent(
        "[sources.stat]\ninterval = \"100ms\"\n",
        &[
            "--collector.textfile.directory",
            dir.path().to_str().unwrap(),
        ],
    );
    let reads = |body: &str| metric(body, "quietstat_source_reads_total{source=\"stat\"}");
    let before = reads(&get(a.addr, "/metrics", None).body);
    let stuck: Vec<TcpStream> = (0..6)
        .map(|_| {
            let mut s = narrow_connection(a.addr);
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                .unwrap();
            s
        })
        .collect();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    for i in 0..3 {
        assert_scrape_within(a.addr, NOT_HELD, &format!("6 stuck clients, scrape {i}"));
    }
    // Every 100 ms meanwhile (a tenth of that is ample: a held lock would
    // stop it whole).
    let body = get(a.addr, "/metrics", None).body;
    let during = reads(&body) - before;
    let secs = t0.elapsed().as_secs_f64();
    assert!(during >= secs, "{during} reads of stat in {secs:.1} s");
    // Each stuck client still holds its answer's start, unfinished.
    let mut s = stuck.into_iter().next().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    assert_no_panic(&drain_log(&a));
}

/// Raises this test process's descriptor limit to `n` (root may).
fn raise_own_nofile(n: u64) {
    let lim = libc::rlimit {
        rlim_cur: n,
        rlim_max: n,
    };
    // SAFETY: setrlimit with a valid struct.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
}

#[test]
fn misbehaving_clients_neither_stop_scrapes_nor_grow_memory_nor_panic_it() {
    let a = agent("", &["--backend", "procfs"]);
    assert_scrape_within(a.addr, NOT_HELD, "at start");

    // Three clients pipelining requests without reading a byte: each fills
    // its socket buffers and stalls only its own connection.
    let pipeliners: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut s = TcpStream::connect(a.addr).unwrap();
            s.set_write_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            let req = format!("GET /metrics HTTP/1.1\r\nHost: {}\r\n\r\n", a.addr).repeat(200);
            // The write stops when the buffers are full; that is the point.
            let _ = s.write_all(req.as_bytes());
            s
        })
        .collect();
    for i in 0..5 {
        assert_scrape_within(
            a.addr,
            NOT_HELD,
            &format!("pipeliners connected, scrape {i}"),
        );
    }
    drop(pipeliners);
    assert_scrape_within(a.addr, NOT_HELD, "after the pipeliners");

    // 200 clients that reset the connection right after a request, all
    // queued while the agent is stopped, so that every one is gone when it
    // goes on: none is answered (an encoding each would keep a scrape
    // waiting for all of them). First the pipeliners' connections must be
    // gone: until then their queued requests may still be answered.
    let settled = common::wait_for(Duration::from_secs(30), || {
        metric(
            &get(a.addr, "/metrics", None).body,
            "quietstat_http_connections",
        ) == 1.0
    });
    assert!(settled, "the pipeliners' connections stayed open");
    let answered_before = answered(a.addr);
    a.proc.signal(libc::SIGSTOP);
    // The signal is taken asynchronously: wait until every thread is stopped.
    assert!(
        common::wait_for(Duration::from_secs(10), || all_threads_stopped(a.proc.id())),
        "the agent did not stop"
    );
    for _ in 0..200 {
        let s = TcpStream::connect(a.addr).unwrap();
        (&s).write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        reset_on_close(&s);
        drop(s);
    }
    a.proc.signal(libc::SIGCONT);
    assert_scrape_within(a.addr, NOT_HELD, "after 200 resets");
    // Answered since: the request that read `answered_before` and the
    // timed scrape; those whose request was read count as abandoned.
    assert_eq!(answered(a.addr) - answered_before, 2.0);
    let body = get(a.addr, "/metrics", None).body;
    let abandoned: f64 = metric(&body, "quietstat_http_requests_abandoned_total");
    assert!(
        abandoned > 0.0 && abandoned <= 200.0,
        "{abandoned} requests abandoned"
    );

    // A 64 MB header: refused once the head passes its cap, never buffered.
    let mut s = TcpStream::connect(a.addr).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ")
        .unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut sent = 0;
    for _ in 0..64 {
        match s.write_all(&chunk) {
            Ok(()) => sent += chunk.len(),
            Err(_) => break,
        }
    }
    let mut head = [0u8; 64];
    let n = s.read(&mut head).unwrap_or(0);
    let answer = String::from_utf8_lossy(&head[..n]);
    assert!(
        answer.starts_with("HTTP/1.1 431"),
        "after {sent} bytes of header: {answer:?}"
    );
    assert!(sent < 64 << 20, "the server read the whole 64 MB header");
    drop(s);
    assert_scrape_within(a.addr, NOT_HELD, "after the large header");

    // A long URL is not echoed back whole.
    let long = format!("/{}", "x".repeat(60_000));
    let r = get(a.addr, &long, None);
    assert_eq!(r.status, 404);
    assert!(r.body.len() < 300, "a 404 of {} bytes", r.body.len());

    // Line feeds without carriage returns: answered, not left hanging.
    let mut s = TcpStream::connect(a.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\nHost: x\n\n").unwrap();
    let mut buf = [0u8; 16];
    let n = s.read(&mut buf).expect("an answer to LF-only line endings");
    assert!(buf[..n].starts_with(b"HTTP/1."), "{:?}", &buf[..n]);

    // Other methods: 405 naming what is allowed.
    let mut s = TcpStream::connect(a.addr).unwrap();
    s.write_all(b"POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc")
        .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.0 405"), "{raw}");
    assert!(
        raw.to_ascii_lowercase().contains("allow: get, head"),
        "{raw}"
    );

    let peak = peak_rss(a.proc.id());
    assert!(peak < 64 << 20, "peak RSS {} MiB", peak >> 20);
    assert_no_panic(&drain_log(&a));
}

#[test]
fn a_thousand_idle_connections_under_a_256_descriptor_limit_leave_room_for_a_scrape() {
    raise_own_nofile(4096);
    let a = agent_with("", &["--backend", "procfs"], |cmd| {
        common::limit_fds(cmd, 256)
    });
    let mut idle = Vec::with_capacity(1000);
    for i in 0..1000 {
        match TcpStream::connect_timeout(&a.addr, Duration::from_secs(5)) {
            Ok(s) => idle.push(s),
            Err(e) => panic!("connection {i}: {e}"),
        }
        if i % 250 == 249 {
            assert_scrape_within(a.addr, NOT_HELD, &format!("{} idle connections", i + 1));
        }
    }
    for i in 0..5 {
        assert_scrape_within(
            a.addr,
            NOT_HELD,
            &format!("1000 idle connections, scrape {i}"),
        );
    }
    // Room was made by closing idle connections, not by refusing.
    let text = get(a.addr, "/metrics", None).body;
    let figure = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("{name} missing"))
    };
    let cap = figure("quietstat_http_connections_max");
    assert!(cap < 128.0, "a cap of {cap} under a 256-descriptor limit");
    assert!(figure("quietstat_http_connections_evicted_total") >= 1000.0 - cap);
    assert_eq!(figure("quietstat_http_connections_refused_total"), 0.0);
    drop(idle);
    assert_scrape_within(a.addr, NOT_HELD, "after the idle connections closed");
    // The agent stays well inside its limit: its own files still open.
    let fds = std::fs::read_dir(format!("/proc/{}/fd", a.proc.id()))
        .unwrap()
        .count();
    assert!(fds < 256, "{fds} descriptors open");
    let log = drain_log(&a);
    assert_no_panic(&log);
    let serving = log.iter().find(|l| l.contains("serving")).unwrap();
    assert!(serving.contains("at most"), "{serving}");
    let peak = peak_rss(a.proc.id());
    assert!(peak < 64 << 20, "peak RSS {} MiB", peak >> 20);
}

/// Runs `quietstat args` and waits at most `limit` for it to end.
fn run_within(args: &[&str], limit: Duration) -> std::process::Output {
    let child = quietstat()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::finish_within(child, limit, &format!("quietstat {args:?}"))
}

#[test]
fn fifos_and_devices_given_as_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    common::mkfifo(&fifo, 0o600);
    let f = fifo.to_str().unwrap();
    let limit = Duration::from_secs(10);
    fn agent_with_file<'a>(flag: &'a str, file: &'a str) -> Vec<&'a str> {
        vec![
            "agent",
            "--no-store",
            "--listen",
            "",
            "--shm-path",
            "",
            flag,
            file,
        ]
    }
    for (args, names) in [
        (agent_with_file("--config", f), "FIFO"),
        (agent_with_file("--config", "/dev/zero"), "character device"),
        (agent_with_file("--web.config.file", f), "FIFO"),
        (
            vec!["bench", "procfs", "--reads", "1", "--baseline", "/dev/zero"],
            "character device",
        ),
        (
            vec!["bench", "procfs", "--reads", "1", "--baseline", f],
            "FIFO",
        ),
    ] {
        let out = run_within(&args, limit);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            err.contains(names) && err.contains("regular file"),
            "{args:?}: {err}"
        );
    }
    // A FIFO where a kernel file should be: read as empty, reported, no hang
    // (a file source, and files the gathered sources read: the mount
    // table, the bonding masters).
    let tree = fixtures::Tree::copy_of("this-machine");
    std::fs::remove_file(tree.proc_root().join("stat")).unwrap();
    common::mkfifo(&tree.proc_root().join("stat"), 0o600);
    std::fs::remove_file(tree.proc_root().join("1/mounts")).unwrap();
    common::mkfifo(&tree.proc_root().join("1/mounts"), 0o600);
    common::mkfifo(&tree.sys_root().join("class/net/bonding_masters"), 0o600);
    let (p, s) = (tree.proc_root(), tree.sys_root());
    let out = run_within(
        &[
            "--proc-root",
            p.to_str().unwrap(),
            "--sys-root",
            s.to_str().unwrap(),
            "stat",
        ],
        limit,
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("stat"), "{all}");
}

#[test]
fn a_config_swapped_for_a_fifo_is_refused_at_reload_and_sigterm_still_stops_the_agent() {
    let mut a = agent("", &["--backend", "procfs"]);
    let cfg = a.dir.path().join("agent.toml");
    std::fs::remove_file(&cfg).unwrap();
    common::mkfifo(&cfg, 0o600);
    a.proc.signal(libc::SIGHUP);
    let refused = (0..50).find_map(|_| {
        let l = a.log.recv_timeout(Duration::from_millis(200)).ok()?;
        l.contains("reload refused").then_some(l)
    });
    let refused = refused.expect("no reload refusal logged");
    assert!(refused.contains("FIFO"), "{refused}");
    // Still sampling and serving.
    assert_scrape_within(a.addr, Duration::from_secs(1), "after the refused reload");
    let t = Instant::now();
    a.proc.signal(libc::SIGTERM);
    let status = a
        .proc
        .wait(Duration::from_secs(1))
        .expect("SIGTERM not honoured within 1 s");
    assert!(status.success(), "{status:?} after {:?}", t.elapsed());
}

/// Starts an agent asked to publish its snapshot at `path`, which it must
/// refuse; the agent and the line saying why.
fn agent_refusing_snapshot(path: &std::path::Path) -> (Agent, String) {
    let a = agent(
        "",
        &["--backend", "procfs", "--shm-path", path.to_str().unwrap()],
    );
    let log = drain_log(&a);
    let line = log
        .iter()
        .find(|l| l.contains("running without the shared-memory snapshot"))
        .unwrap_or_else(|| panic!("{log:#?}"))
        .clone();
    (a, line)
}

#[test]
fn the_snapshot_follows_no_link_and_trusts_no_shared_directory() {
    use std::os::unix::fs::PermissionsExt;
    // A directory every user may write to (as /tmp): refused, nothing made.
    let open = tempfile::tempdir().unwrap();
    std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let victim_dir = tempfile::tempdir().unwrap();
    let victim = victim_dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let path = open.path().join("snapshot");
    let planted = [
        path.clone(),
        open.path().join("snapshot.lock"),
        open.path().join("snapshot.tmp"),
        open.path().join(".snapshot.0000000000000000"),
    ];
    for p in &planted {
        std::os::unix::fs::symlink(&victim, p).unwrap();
    }
    let (a, line) = agent_refusing_snapshot(&path);
    assert!(line.contains("writable by every user"), "{line}");
    assert_scrape_within(a.addr, Duration::from_secs(1), "without a snapshot");
    drop(a);
    let untouched = || {
        let m = std::fs::metadata(&victim).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
    };
    untouched();

    // A directory of our own with links planted beforehand: the lock file
    // is not opened through one, the snapshot replaces the link itself.
    let own = tempfile::tempdir().unwrap();
    let path = own.path().join("snapshot");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    let a = agent(
        "",
        &["--backend", "procfs", "--shm-path", path.to_str().unwrap()],
    );
    assert!(
        !std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(shm::ShmReader::open(&path).is_ok());
    drop(a);
    untouched();
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(shm::lock_path(&path)).unwrap();
    std::os::unix::fs::symlink(&victim, shm::lock_path(&path)).unwrap();
    let a = agent(
        "",
        &["--backend", "procfs", "--shm-path", path.to_str().unwrap()],
    );
    let log = drain_log(&a);
    assert!(
        log.iter()
            .any(|l| l.contains("running without the shared-memory snapshot")),
        "{log:#?}"
    );
    drop(a);
    untouched();
}

#[test]
fn a_second_agent_on_the_same_path_or_port_leaves_the_first_alone() {
    let a = agent("", &["--backend", "procfs"]);
    let shm_path = a.shm.to_str().unwrap().to_string();
    let port = a.addr.to_string();
    let other = tempfile::tempdir().unwrap();
    let other_shm = other.path().join("snapshot");
    for (args, says) in [
        (
            vec![
                "agent",
                "--no-store",
                "--backend",
                "procfs",
                "--listen",
                "127.0.0.1:0",
                "--shm-path",
                &shm_path,
            ],
            "another agent",
        ),
        (
            vec![
                "agent",
                "--no-store",
                "--backend",
                "procfs",
                "--listen",
                &port,
                "--shm-path",
                other_shm.to_str().unwrap(),
            ],
            "Address already in use",
        ),
    ] {
        let out = run_within(&args, Duration::from_secs(20));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.matches(says).count(), 1, "said twice: {err}");
    }
    assert!(
        !other_shm.exists(),
        "the refused agent published a snapshot"
    );
    // The first agent's readers still work, fresh samples included.
    let r = shm::ShmReader::open(&a.shm).unwrap();
    assert_eq!(r.agent_pid(), a.proc.id());
    r.check_live().unwrap();
    let mut snap = shm::Snapshot::default();
    r.read_fresh(Duration::ZERO, Duration::from_secs(5), &mut snap)
        .unwrap();
    let out = run_within(
        &["stat", "--from-agent", &shm_path],
        Duration::from_secs(10),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_killed_agent_s_snapshot_is_reported_gone_not_printed_as_current() {
    let mut a = agent("", &["--backend", "procfs"]);
    let path = a.shm.to_str().unwrap().to_string();
    a.proc.signal(libc::SIGKILL);
    a.proc.wait(Duration::from_secs(5)).unwrap();
    let out = run_within(&["stat", "--from-agent", &path], Duration::from_secs(10));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "exit 0 on a dead agent's data");
    assert!(
        err.contains("is gone") && err.contains(&format!("pid {}", a.proc.id())),
        "{err}"
    );
    let out = run_within(
        &[
            "stat",
            "--from-agent",
            &path,
            "--interval",
            "200ms",
            "--count",
            "1",
        ],
        Duration::from_secs(10),
    );
    assert!(!out.status.success());
}

/// A small tmpfs mounted for a test, unmounted on drop.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let d = tempfile::tempdir().unwrap();
        let st = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(d.path())
            .status()
            .unwrap();
        assert!(st.success(), "mounting a tmpfs (the tests run as root)");
        Tmpfs(d)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
fn a_full_filesystem_under_the_snapshot_is_reported_and_the_agent_runs_on() {
    let fs = Tmpfs::mount("64k");
    // Fill it (the last write fails once it is full).
    let filler = fs.0.path().join("filler");
    let _ = std::fs::write(&filler, vec![0u8; 1 << 20]);
    let path = fs.0.path().join("snapshot");
    let (a, line) = agent_refusing_snapshot(&path);
    assert!(line.contains("No space left"), "{line}");
    for _ in 0..3 {
        assert_scrape_within(a.addr, Duration::from_secs(1), "with a full filesystem");
        std::thread::sleep(Duration::from_millis(600));
    }
    assert!(a.proc.id() > 0);
    assert_no_panic(&drain_log(&a));
    drop(a);
}

/// One GET over a new connection: status, headers (lower-case names), body.
fn get_with_headers(addr: SocketAddr, path: &str) -> (u16, Vec<(String, String)>, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect();
    (status, headers, body.to_string())
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// The agent's per-source figures from the JSON API.
fn source_costs(addr: SocketAddr) -> serde_json::Value {
    let (status, _, body) = get_with_headers(addr, "/api/v1/snapshot?sources=stat");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["agent"]["sources"].clone()
}

/// Nanoseconds spent reading and parsing, all sources, between two figures.
fn cost_between(before: &serde_json::Value, after: &serde_json::Value) -> f64 {
    let total = |v: &serde_json::Value| -> f64 {
        v.as_object()
            .unwrap()
            .values()
            .map(|s| s["read_ns"].as_f64().unwrap() + s["parse_ns"].as_f64().unwrap())
            .sum()
    };
    total(after) - total(before)
}

/// Loops `path` for `secs`; the responses' headers and bodies.
fn hammer(addr: SocketAddr, path: &str, secs: f64) -> Vec<(Vec<(String, String)>, String)> {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut seen = Vec::new();
    while Instant::now() < end {
        let (status, h, body) = get_with_headers(addr, path);
        assert_eq!(status, 200, "{body}");
        seen.push((h, body));
    }
    seen
}

#[test]
fn a_client_looping_max_age_zero_is_held_to_the_demand_floor_and_told_the_age() {
    let a = agent("", &["--backend", "procfs"]);
    let before = source_costs(a.addr);
    let secs = 3.0;
    let seen = hammer(a.addr, "/api/v1/snapshot?sources=stat&max_age_ms=0", secs);
    let after = source_costs(a.addr);
    assert!(seen.len() > 50, "only {} requests", seen.len());
    // /proc/stat over HTTP: at most one demand read per 100 ms, plus the
    // schedule's one per second.
    let reads =
        after["stat"]["reads"].as_f64().unwrap() - before["stat"]["reads"].as_f64().unwrap();
    assert!(
        reads <= secs * 10.0 + secs + 3.0,
        "{reads} reads of stat in {secs} s"
    );
    let declined = seen
        .iter()
        .filter(|(h, body)| {
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            header(h, "x-data-fresh").is_some_and(|f| f.contains("within demand floor: stat"))
                && v["fresh"]["within_demand_floor"] == serde_json::json!(["stat"])
                && header(h, "x-data-age-ms").is_some_and(|a| a.parse::<u64>().unwrap() < 1000)
        })
        .count();
    assert!(
        declined > seen.len() / 2,
        "{declined} of {} answered from the floor",
        seen.len()
    );
    let reading = cost_between(&before, &after) / secs;
    assert!(
        reading <= 0.01e9,
        "reading cost {reading} ns/s, over the 1% budget"
    );
}

#[test]
fn demand_reads_past_the_overhead_budget_are_declined_with_the_age_stated() {
    // No demand floor: only the budget (1% of a CPU: 10 ms/s) holds a
    // client asking for everything fresh.
    let config = demand_without_floors(
        1.0,
        &[
            "stat",
            "interrupts",
            "softirqs",
            "meminfo",
            "vmstat",
            "diskstats",
            "processes",
        ],
    );
    let a = agent(&config, &["--backend", "procfs"]);
    let t0 = Instant::now();
    let before = source_costs(a.addr);
    let seen = hammer(a.addr, "/metrics?max_age_ms=0", 3.0);
    let after = source_costs(a.addr);
    // The window the two figures bound, measured from outside: longer than
    // the agent's, never shorter.
    let secs = t0.elapsed().as_secs_f64();
    let over = seen
        .iter()
        .filter(|(h, _)| {
            header(h, "x-data-fresh").is_some_and(|f| f.contains("over overhead budget"))
        })
        .count();
    assert!(over > 0, "no request of {} was declined", seen.len());
    // Everything read in the window (schedule and demand) within the budget,
    // plus the one second's worth the demand bucket holds, plus the read
    // that empties it (a read is charged after it is made), plus a
    // scheduled read of each source beyond its average (the bucket counts
    // scheduled reads at their average cost a second), plus a read already
    // under way when the window opened (allowed before it, charged in it:
    // with thousands of processes on the machine a process read takes a
    // large part of a second).
    let reading = cost_between(&before, &after);
    let one_read: f64 = after
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, s)| {
            let last = |v: &serde_json::Value| v["last_cost_ns"].as_f64().unwrap_or(0.0);
            last(s).max(last(&before[k]))
        })
        .sum();
    let budget = 0.01e9;
    assert!(
        reading <= budget * (secs + 1.0) + 3.0 * one_read,
        "{reading} ns spent reading in {secs} s against {budget} ns/s (one read: {one_read} ns)"
    );
}

/// CPU time (user + system) of `pid`, seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = stat.rsplit_once(") ").unwrap().1;
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// A web configuration with a cost-31 hash (a day per check) is listening
/// at once, with a warning; a flood of wrong passwords against a cost-10
/// hash uses one CPU at most (checks one at a time), and a known wrong
/// password is refused without another check.
#[test]
fn bcrypt_hashes_are_checked_at_first_use_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("web.yml");
    let slow = "$2b$31$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";
    let hash = bcrypt::hash("right", 10).unwrap();
    std::fs::write(
        &web,
        format!("basic_auth_users:\n  slow: '{slow}'\n  prom: '{hash}'\n"),
    )
    .unwrap();
    let t = Instant::now();
    let a = agent("", &["--web.config.file", web.to_str().unwrap()]);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "serving after {:?}",
        t.elapsed()
    );
    assert!(
        a.early.iter().any(|l| l.contains("cost 31")),
        "{:#?}",
        a.early
    );
    let ask = |user: &str, password: &str| -> u16 {
        use base64::Engine;
        let cred = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let mut s = TcpStream::connect(a.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            s,
            "GET /metrics HTTP/1.0\r\nAuthorization: Basic {cred}\r\n\r\n"
        )
        .unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).unwrap();
        String::from_utf8_lossy(&head[9..12]).parse().unwrap()
    };
    assert_eq!(ask("prom", "right"), 200);
    let t = Instant::now();
    assert_eq!(ask("prom", "wrong"), 401);
    let checked = t.elapsed();
    // The same wrong password again: refused without a check.
    let t = Instant::now();
    assert_eq!(ask("prom", "wrong"), 401);
    let again = t.elapsed();
    assert!(
        again * 4 < checked,
        "checked in {checked:?}, again in {again:?}"
    );

    // Four clients, each trying new wrong passwords for 3 s.
    let pid = a.proc.id();
    let cpu0 = cpu_seconds(pid);
    let t0 = Instant::now();
    std::thread::scope(|sc| {
        for c in 0..4 {
            let ask = &ask;
            sc.spawn(move || {
                let mut i = 0;
                while t0.elapsed() < Duration::from_secs(3) {
                    let code = ask("prom", &format!("guess-{c}-{i}"));
                    assert!(code == 401 || code == 503, "{code}");
                    i += 1;
                }
            });
        }
    });
    let cores = (cpu_seconds(pid) - cpu0) / t0.elapsed().as_secs_f64();
    assert!(cores < 1.4, "the flood used {cores:.2} cores");
    assert_eq!(ask("prom", "right"), 200);
}

/// A write to a peer that went away (a scraper that dropped its
/// connection while its answer was being written, a pipe whose reader
/// exited) fails with EPIPE: the agent ignores SIGPIPE, so that no such
/// write can kill it. (A soak run lost its agent to one after 8 minutes of
/// dropped scrapes, before it did.) Checked in its signal mask, and by
/// sending it the signal itself.
#[test]
fn sigpipe_is_ignored_so_a_vanished_peer_cannot_kill_the_agent() {
    let mut a = agent("", &[]);
    let pid = a.proc.id();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let ignored = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|m| u64::from_str_radix(m.trim(), 16).unwrap())
        .unwrap();
    assert_ne!(
        ignored & (1 << (libc::SIGPIPE - 1)),
        0,
        "SIGPIPE not ignored: SigIgn {ignored:#x}"
    );
    a.proc.signal(libc::SIGPIPE);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        a.proc.0.0.try_wait().unwrap().is_none(),
        "the agent died of SIGPIPE"
    );
    assert_scrape_within(a.addr, NOT_HELD, "after a SIGPIPE");
}
