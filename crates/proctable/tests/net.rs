//! Network bytes per process from the BPF backend, against a child of the
//! test's own that sends and receives known amounts over loopback TCP: its
//! sockets made before the programs were loaded and after, live and after
//! they close, compared with what it sent and with what `ss` reads from
//! the same sockets; and in a network namespace of its own, live (against
//! `ss` run in that namespace) and after they close.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use proctable::bpf::Bpf;
use proctable::{Field, Fields, NetBytes, Query};

/// The child: each line it reads names the bytes to send each way over a
/// new loopback connection (made with its own listener), which it leaves
/// open; `close` closes them all. It answers each line with `done`.
const CHILD: &str = r#"
import socket, sys, threading
held = []
for line in sys.stdin:
    words = line.split()
    if words[0] == "close":
        for s in held:
            s.close()
        held = []
    else:
        up, down = int(words[0]), int(words[1])
        l = socket.socket()
        l.bind(("127.0.0.1", 0))
        l.listen()
        c = socket.create_connection(l.getsockname())
        s, _ = l.accept()
        for (src, dst, n) in ((c, s, up), (s, c, down)):
            t = threading.Thread(target=src.sendall, args=(b"x" * n,))
            t.start()
            got = 0
            while got < n:
                got += len(dst.recv(1 << 20))
            t.join()
            # A byte back, whose segment acknowledges all the data.
            dst.sendall(b"k")
            src.recv(1)
        held += [l, c, s]
    print("done", flush=True)
"#;

/// One test at a time: each one's BPF instance owns every TCP socket of
/// the machine, so another test's connection, unheld until a scan, would
/// show in its count of unheld connections.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    /// The child, in a network namespace of its own with `own_netns`.
    fn start(own_netns: bool) -> Peer {
        let mut cmd = if own_netns {
            let mut c = Command::new("unshare");
            c.args([
                "--net",
                "sh",
                "-c",
                "ip link set lo up && exec python3 -c \"$0\"",
            ])
            .arg(CHILD);
            c
        } else {
            let mut c = Command::new("python3");
            c.arg("-c").arg(CHILD);
            c
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 (and unshare, ip) to start the peer");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Peer {
            child,
            stdin,
            stdout,
        }
    }

    fn say(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).unwrap();
        assert_eq!(answer.trim(), "done", "the peer's answer to {line:?}");
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `pid`'s figures from a read of the whole table: its descriptors are
/// visited if it ran since the read before.
fn net_of(bpf: &mut Bpf, pid: u32) -> NetBytes {
    net_in(bpf, pid, None)
}

/// `pid`'s figures from a read that names it: its descriptors are visited
/// whether or not it ran.
fn net_named(bpf: &mut Bpf, pid: u32) -> NetBytes {
    net_in(bpf, pid, Some(vec![pid]))
}

/// `pid`'s figures from a read of the whole table, or of `pids`.
fn net_in(bpf: &mut Bpf, pid: u32, pids: Option<Vec<u32>>) -> NetBytes {
    let query = Query {
        fields: Fields::NONE
            .with(Field::Start)
            .with(Field::Ppid)
            .with(Field::Net),
        threads: false,
        pids,
    };
    let mut out = Vec::new();
    bpf.snapshot(&query, &mut out).expect("a snapshot");
    assert_eq!(bpf.net_unavailable(), None);
    let row = out
        .iter()
        .find(|p| p.pid == pid)
        .unwrap_or_else(|| panic!("no row for {pid}"));
    row.net.expect("network bytes were asked for")
}

/// Bytes the kernel counts for `payload` bytes of data on connections
/// opened and closed: each SYN and FIN takes one byte of sequence space,
/// and the peer's two answers one each, so at most 6 a connection either
/// way.
fn near(got: u64, payload: u64, connections: u64) {
    assert!(
        got >= payload && got <= payload + 6 * connections && got <= payload + payload / 100,
        "{got} bytes counted for {payload} bytes of data on {connections} connections"
    );
}

/// `pid`'s figures once `done` holds of them: the kernel destroys a
/// closed socket once its peer acknowledged the close, after `close`
/// returned.
fn wait_for(bpf: &mut Bpf, pid: u32, done: impl Fn(&NetBytes) -> bool) -> NetBytes {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let n = net_of(bpf, pid);
        if done(&n) {
            return n;
        }
        if std::time::Instant::now() >= deadline {
            let ss = Command::new("ss").args(["-tanpie"]).output().unwrap();
            panic!(
                "{pid}'s closed sockets were never charged: {n:?}\n{}",
                String::from_utf8_lossy(&ss.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `pid`'s figures from a read that names it, checked against `ss` read
/// just before and just after: when the two agree (no acknowledgement
/// arrived in between), so must ours. (A whole table's read may leave
/// the acknowledgement of a process that did not run since the read
/// before to the next sweep.)
fn checked_by_ss(bpf: &mut Bpf, pid: u32) -> NetBytes {
    for _ in 0..50 {
        let before = ss_sums(pid);
        let ours = net_named(bpf, pid);
        if ss_sums(pid) == before {
            assert_eq!(ours, before, "against ss");
            return ours;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the sockets of {pid} never stood still for ss");
}

/// The sums `ss` reads for `pid`'s sockets: bytes_received and
/// bytes_acked, as the kernel's TCP_INFO gives them.
fn ss_sums(pid: u32) -> NetBytes {
    // In the process's own network namespace (nsenter, util-linux): ss
    // lists the sockets of the namespace it runs in.
    let out = Command::new("nsenter")
        .args(["-t", &pid.to_string(), "-n", "ss", "-tinpH"])
        .output()
        .expect("nsenter and ss (iproute2)");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut sum = NetBytes::default();
    let mut mine = false;
    let value = |line: &str, key: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .map_or(0, |v| v.parse().unwrap())
    };
    for line in text.lines() {
        if !line.starts_with(char::is_whitespace) {
            mine = line.contains(&format!("pid={pid},"));
        } else if mine {
            sum.rx_bytes += value(line, "bytes_received:");
            sum.tx_bytes += value(line, "bytes_acked:");
        }
    }
    sum
}

#[test]
fn a_process_is_charged_what_its_tcp_sockets_carry() {
    let _serial = serial();
    const UP1: u64 = 3 << 20;
    const DOWN1: u64 = 1 << 20;
    const UP2: u64 = 2 << 20;
    const DOWN2: u64 = 5 << 20;
    const UP3: u64 = 4 << 20;
    const DOWN3: u64 = 1 << 20;
    let mut peer = Peer::start(false);
    // Made before the programs are loaded: owned by the load's scan.
    peer.say(&format!("{UP1} {DOWN1}"));
    let mut bpf = Bpf::open().expect("the BPF backend");
    bpf.set_net_scan_every(Duration::ZERO);
    let loaded = net_of(&mut bpf, peer.pid());
    near(loaded.rx_bytes, UP1 + DOWN1, 1);
    near(loaded.tx_bytes, UP1 + DOWN1, 1);
    let first = checked_by_ss(&mut bpf, peer.pid());
    near(first.rx_bytes, UP1 + DOWN1, 1);
    near(first.tx_bytes, UP1 + DOWN1, 1);

    // Made after: the connecting end owned when it connects; the accepted
    // end unheld until the peer's descriptors are visited. With no sweep
    // after the first read, a whole table's read visits the processes
    // that ran: the peer's, which gives it the accepted end too.
    bpf.set_net_sweep_every(Duration::MAX);
    let sweeps = bpf.net_sweeps();
    peer.say(&format!("{UP2} {DOWN2}"));
    let payload = UP1 + DOWN1 + UP2 + DOWN2;
    let ran = net_of(&mut bpf, peer.pid());
    assert_eq!(bpf.net_sweeps(), sweeps, "no sweep");
    near(ran.rx_bytes, payload, 2);
    near(ran.tx_bytes, payload, 2);
    let second = checked_by_ss(&mut bpf, peer.pid());
    assert_eq!(bpf.net_scans().unwrap().1, 0, "no connection is unheld");
    near(second.rx_bytes, payload, 2);
    near(second.tx_bytes, payload, 2);

    // A connection made and closed between two reads, and the others
    // closed: still charged, which only the visits as a socket closes and
    // is destroyed can give (no read finds it in a table of descriptors,
    // nor in the sweep).
    peer.say(&format!("{UP3} {DOWN3}"));
    peer.say("close");
    let payload = payload + UP3 + DOWN3;
    let closed = wait_for(&mut bpf, peer.pid(), |n| {
        n.rx_bytes >= payload && n.tx_bytes >= payload
    });
    assert!(closed.rx_bytes > second.rx_bytes + UP3);
    near(closed.rx_bytes, payload, 3);
    near(closed.tx_bytes, payload, 3);
    assert_eq!(ss_sums(peer.pid()), NetBytes::default(), "no socket left");
    assert_eq!(bpf.net_lost(), Some(0));

    // A process with no socket is charged nothing.
    assert_eq!(net_of(&mut bpf, std::process::id()), NetBytes::default());
}

#[test]
fn sockets_of_another_network_namespace_are_charged_live_and_once_they_end() {
    let _serial = serial();
    const UP: u64 = 1 << 20;
    const DOWN: u64 = 2 << 20;
    let mut bpf = Bpf::open().expect("the BPF backend");
    bpf.set_net_scan_every(Duration::ZERO);
    let mut peer = Peer::start(true);
    let pid = peer.pid();
    // The shell execs python3: the same PID.
    peer.say(&format!("{UP} {DOWN}"));
    // Live: read in the test's namespace, checked against ss in the
    // peer's.
    let _ = net_of(&mut bpf, pid);
    let live = checked_by_ss(&mut bpf, pid);
    near(live.rx_bytes, UP + DOWN, 1);
    near(live.tx_bytes, UP + DOWN, 1);
    assert_eq!(bpf.net_scans().unwrap().1, 0, "no connection is unheld");
    // A second connection made and closed between two reads: only the
    // visits as a socket closes and is destroyed can give its bytes.
    peer.say(&format!("{DOWN} {UP}"));
    peer.say("close");
    let payload = 2 * (UP + DOWN);
    let closed = wait_for(&mut bpf, pid, |n| {
        n.rx_bytes >= payload && n.tx_bytes >= payload
    });
    near(closed.rx_bytes, payload, 2);
    near(closed.tx_bytes, payload, 2);
}

/// A server whose worker, a child it forked, holds the connection it
/// accepted: the connection is the worker's, not the listener's, once its
/// descriptors were visited as those of a process that ran. What the
/// worker's socket receives while it sleeps is not charged by a whole
/// table's read, but by a read that names it, and by a sweep. A sweep sees
/// a connection no visit gave a holder as unheld, and a holder scan over
/// the listener and its children (found from /proc whatever the query's
/// fields: this one asks for no parent) gives it one.
#[test]
fn a_connection_accepted_by_a_forked_worker_is_charged_to_the_worker() {
    let _serial = serial();
    const N: usize = 3 << 20;
    let server = r#"
import os, socket, sys, time
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen()
print(l.getsockname()[1], flush=True)
while sys.stdin.readline():
    if os.fork() == 0:
        s, _ = l.accept()
        n = int(sys.argv[1])
        got = 0
        while got < n:
            got += len(s.recv(1 << 20))
        s.sendall(b"k")
        print("worker", os.getpid(), flush=True)
        time.sleep(3600)
time.sleep(3600)
"#;
    let mut child = Command::new("python3")
        .args(["-c", server, &N.to_string()])
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    struct Group(u32);
    impl Drop for Group {
        fn drop(&mut self) {
            // SAFETY: our child's own process group; no memory effects.
            unsafe { libc::kill(-(self.0 as i32), libc::SIGKILL) };
        }
    }
    let _group = Group(child.id());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let port: u16 = line.trim().parse().unwrap();
    // Loaded (by a first read that asks for them) before the connection:
    // the accepted end is unheld until a scan finds its holder.
    let mut bpf = Bpf::open().expect("the BPF backend");
    bpf.set_net_scan_every(Duration::ZERO);
    let _ = net_of(&mut bpf, child.id());
    // No sweep after that first read: a whole table's read visits the
    // processes that ran.
    bpf.set_net_sweep_every(Duration::MAX);
    // A worker forked to accept a connection that sends N bytes: its PID
    // and the connection's end here.
    let mut fork = || {
        writeln!(stdin, "fork").unwrap();
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.write_all(&vec![b'x'; N]).unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        let worker: u32 = line
            .trim()
            .strip_prefix("worker ")
            .unwrap()
            .parse()
            .unwrap();
        (worker, c)
    };
    let (worker, mut c) = fork();
    let query = Query {
        fields: Fields::NONE.with(Field::Net),
        threads: false,
        pids: None,
    };
    let read_of = |bpf: &mut Bpf, worker: u32| {
        let mut out = Vec::new();
        bpf.snapshot(&query, &mut out).unwrap();
        let of = |pid: u32| out.iter().find(|p| p.pid == pid).and_then(|p| p.net);
        (of(worker).unwrap(), of(child.id()).unwrap())
    };
    let read = |bpf: &mut Bpf| read_of(bpf, worker);
    // The worker ran since the last read: the next visits its descriptors
    // and gives it the connection.
    let (w, listener) = read(&mut bpf);
    assert_eq!(bpf.net_scans().unwrap().1, 0, "no connection is unheld");
    near(w.rx_bytes, N as u64, 1);
    assert_eq!(
        listener,
        NetBytes::default(),
        "the listener holds no connection"
    );

    // The worker sleeps: what its socket receives now is charged when a
    // read visits its descriptors (a query that names it), or by a sweep;
    // not by a whole table's read between sweeps.
    let sleeping = || {
        std::fs::read_to_string(format!("/proc/{worker}/stat"))
            .unwrap()
            .rsplit(") ")
            .next()
            .unwrap()
            .starts_with('S')
    };
    while !sleeping() {
        std::thread::sleep(Duration::from_millis(10));
    }
    // A read for what ran up to its sleep; from here on it does not run.
    let (asleep, _) = read(&mut bpf);
    let settled = |total: u64| {
        for _ in 0..500 {
            if ss_sums(worker).rx_bytes >= total {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the worker's socket never received {total} bytes");
    };
    const M: usize = 64 << 10;
    let sweeps = bpf.net_sweeps().unwrap();
    c.write_all(&vec![b'y'; M]).unwrap();
    settled((N + M) as u64);
    let (between, _) = read(&mut bpf);
    assert_eq!(between, asleep, "not visited: it did not run");
    let named = net_named(&mut bpf, worker);
    assert_eq!(bpf.net_sweeps(), Some(sweeps), "a read by PID visits");
    near(named.rx_bytes, (N + M) as u64, 1);
    assert_eq!(named, ss_sums(worker), "against ss");
    c.write_all(&vec![b'z'; M]).unwrap();
    settled((N + 2 * M) as u64);
    bpf.set_net_sweep_every(Duration::ZERO);
    let (swept, _) = read(&mut bpf);
    assert!(bpf.net_sweeps().unwrap() > sweeps, "a sweep ran");
    near(swept.rx_bytes, (N + 2 * M) as u64, 1);
    assert_eq!(swept, ss_sums(worker), "against ss");

    // Every read a sweep: a second worker's connection is seen unheld by
    // the first, and the next one's holder scan (the listener and, from
    // /proc, its children) gives it to the worker.
    let (second, c2) = fork();
    let (unheld, _) = read_of(&mut bpf, second);
    assert_eq!(unheld, NetBytes::default(), "not the worker's yet");
    assert_eq!(bpf.net_scans().unwrap().1, 1, "one connection is unheld");
    let (scans, _) = bpf.net_scans().unwrap();
    let (held, listener) = read_of(&mut bpf, second);
    assert!(bpf.net_scans().unwrap().0 > scans, "a holder scan ran");
    assert_eq!(bpf.net_scans().unwrap().1, 0, "no connection is unheld");
    near(held.rx_bytes, N as u64, 1);
    assert_eq!(listener, NetBytes::default(), "nor the listener's");
    drop((c, c2));
    let _ = child.kill();
    let _ = child.wait();
}
