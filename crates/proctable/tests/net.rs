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

fn net_of(bpf: &mut Bpf, pid: u32) -> NetBytes {
    let query = Query {
        fields: Fields::NONE
            .with(Field::Start)
            .with(Field::Ppid)
            .with(Field::Net),
        threads: false,
        pids: None,
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

/// `pid`'s figures, checked against `ss` read just before and just after:
/// when the two agree (no acknowledgement arrived in between), so must
/// ours.
fn checked_by_ss(bpf: &mut Bpf, pid: u32) -> NetBytes {
    for _ in 0..50 {
        let before = ss_sums(pid);
        let ours = net_of(bpf, pid);
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
    let first = checked_by_ss(&mut bpf, peer.pid());
    near(first.rx_bytes, UP1 + DOWN1, 1);
    near(first.tx_bytes, UP1 + DOWN1, 1);

    // Made after: the connecting end owned when it connects; the accepted
    // end unheld until the next read's scan finds its holder.
    peer.say(&format!("{UP2} {DOWN2}"));
    let _ = net_of(&mut bpf, peer.pid());
    let (scans, _) = bpf.net_scans().unwrap();
    let second = checked_by_ss(&mut bpf, peer.pid());
    assert!(bpf.net_scans().unwrap().0 > scans, "a holder scan ran");
    assert_eq!(bpf.net_scans().unwrap().1, 0, "no connection is unheld");
    let payload = UP1 + DOWN1 + UP2 + DOWN2;
    near(second.rx_bytes, payload, 2);
    near(second.tx_bytes, payload, 2);

    // A connection made and closed between two reads, and the others
    // closed: still charged, which only the ended sockets' sums can give
    // (a figure never goes below what an earlier read gave, and that was
    // the first two connections' bytes alone).
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
    // ended sockets' sums can give its bytes.
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
/// accepted: the connection is the worker's once a holder scan has run
/// over the listener and its children, found from /proc whatever the
/// query's fields (this one asks for no parent), and not the listener's.
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
sys.stdin.readline()
pid = os.fork()
if pid == 0:
    s, _ = l.accept()
    n = int(sys.argv[1])
    got = 0
    while got < n:
        got += len(s.recv(1 << 20))
    s.sendall(b"k")
    print("worker", os.getpid(), flush=True)
    time.sleep(3600)
else:
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
    let query = Query {
        fields: Fields::NONE.with(Field::Net),
        threads: false,
        pids: None,
    };
    let read = |bpf: &mut Bpf| {
        let mut out = Vec::new();
        bpf.snapshot(&query, &mut out).unwrap();
        let of = |pid: u32| out.iter().find(|p| p.pid == pid).and_then(|p| p.net);
        (of(worker).unwrap(), of(child.id()).unwrap())
    };
    // The first read sees the connection unheld; the next one's scan
    // (the listener and, from /proc, its worker) gives it its holder.
    let (unheld, _) = read(&mut bpf);
    assert_eq!(unheld, NetBytes::default(), "not the worker's yet");
    assert_eq!(bpf.net_scans().unwrap().1, 1, "one connection is unheld");
    let _ = read(&mut bpf);
    let (w, listener) = read(&mut bpf);
    assert_eq!(bpf.net_scans().unwrap().1, 0, "no connection is unheld");
    near(w.rx_bytes, N as u64, 1);
    assert_eq!(
        listener,
        NetBytes::default(),
        "the listener holds no connection"
    );
    drop(c);
    let _ = child.kill();
    let _ = child.wait();
}
