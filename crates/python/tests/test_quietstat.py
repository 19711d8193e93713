"""The Python module against /proc and psutil, on both backends, for
processes these tests start."""

import os
import subprocess
import sys
import time

import psutil
import pytest

import quietstat

BACKENDS = ["bpf", "procfs"]
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python", "start_times.py")


def proc_start(pid):
    """Field 22 of /proc/PID/stat, 0 when there is no such process."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return 0
    return int(text[text.rindex(")") + 2 :].split()[19])


def state(pid):
    with open("/proc/%d/stat" % pid) as f:
        text = f.read()
    return text[text.rindex(")") + 2]


@pytest.fixture(scope="module")
def sleepers():
    """Five children in sleep, each seen by /proc as sleeping (S)."""
    kids = [subprocess.Popen(["sleep", "600"]) for _ in range(5)]
    deadline = time.time() + 10
    while time.time() < deadline and not all(state(k.pid) == "S" for k in kids):
        time.sleep(0.01)
    assert all(state(k.pid) == "S" for k in kids), "the sleepers never slept"
    yield [k.pid for k in kids]
    for k in kids:
        k.kill()
        k.wait()


@pytest.mark.parametrize("threads", [0, 2])
@pytest.mark.parametrize("backend", BACKENDS)
def test_start_times_agree_with_proc(backend, threads, sleepers):
    t = quietstat.Table(backend=backend, numpy=False, threads=threads)
    assert t.backend == backend
    pids = sleepers + [0, -3, 0x7FFFFFF0]
    got = t.start_times(pids)
    assert got[: len(sleepers)] == [proc_start(p) for p in sleepers]
    assert all(v > 0 for v in got[: len(sleepers)])
    assert got[len(sleepers) :] == [0, 0, 0]
    assert t.start_times([]) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hundred_thousand_pids_in_one_call(backend, sleepers):
    t = quietstat.Table(backend=backend, numpy=False)
    got = t.start_times(range(1, 100001))
    assert len(got) == 100000
    assert got[0] == proc_start(1)
    for p in sleepers:
        if p <= 100000:
            assert got[p - 1] == proc_start(p)
    assert 0 in got


def test_a_reused_pid_gives_the_new_process():
    """ns_last_pid makes the next fork take a PID just freed (tried until
    no other fork on the machine took it in between)."""
    t = quietstat.Table(numpy=False)
    for _ in range(50):
        first = subprocess.Popen(["sleep", "600"])
        before = t.start_times([first.pid])[0]
        first.kill()
        first.wait()
        time.sleep(0.02)
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(first.pid - 1))
        second = subprocess.Popen(["sleep", "600"])
        try:
            if second.pid != first.pid:
                continue
            after = t.start_times([second.pid])[0]
            assert before > 0 and after == proc_start(second.pid) and after != before
            return
        finally:
            second.kill()
            second.wait()
    pytest.fail("PID reuse could not be arranged through ns_last_pid")


@pytest.mark.parametrize("backend", BACKENDS)
def test_snapshot_columns_as_lists_and_arrays(backend, sleepers):
    lists = quietstat.Table(backend=backend, numpy=False)
    cols = lists.snapshot(
        ["pid", "ppid", "comm", "state", "start_ticks", "threads", "cmdline", "run_delay_ns", "timeslices"]
    )
    assert isinstance(cols["pid"], list) and isinstance(cols["comm"], list)
    rows = {p: i for i, p in enumerate(cols["pid"])}
    for p in sleepers:
        i = rows[p]
        assert cols["ppid"][i] == os.getpid()
        assert cols["comm"][i] == "sleep"
        assert cols["state"][i] == "S"
        assert cols["start_ticks"][i] == proc_start(p)
        assert cols["threads"][i] == 1
        assert cols["cmdline"][i] == "sleep 600"
        # A sleeper's wait for a CPU stands still: /proc/PID/schedstat's.
        with open("/proc/%d/schedstat" % p) as f:
            _, delay, slices = (int(x) for x in f.read().split())
        assert (cols["run_delay_ns"][i], cols["timeslices"][i]) == (delay, slices)
    assert cols["pid"] == sorted(cols["pid"])
    only = lists.snapshot(["pid"], pids=sleepers[:2] + [0x7FFFFFF0])
    assert only["pid"] == sorted(sleepers[:2])

    numpy = pytest.importorskip("numpy")
    arrays = quietstat.Table(backend=backend, numpy=True).snapshot(["pid", "rss_bytes"])
    assert isinstance(arrays["pid"], numpy.ndarray) and arrays["pid"].dtype == numpy.int64
    assert set(sleepers) <= set(arrays["pid"].tolist())


def test_numpy_is_not_required(monkeypatch, sleepers):
    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy fails
    t = quietstat.Table()
    assert isinstance(t.start_times(sleepers), list)
    with pytest.raises(ValueError, match="NumPy"):
        quietstat.Table(numpy=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_process_iter_agrees_with_psutil(backend, sleepers):
    t = quietstat.Table(backend=backend, numpy=False)
    attrs = ["pid", "ppid", "name", "status", "create_time", "cpu_times", "memory_info"]
    attrs += ["num_threads", "nice", "cpu_num", "io_counters", "num_ctx_switches"]
    ours = {p.pid: p.info for p in quietstat.process_iter(attrs, table=t) if p.pid in sleepers}
    assert sorted(ours) == sorted(sleepers)
    for p in psutil.process_iter(attrs):
        if p.pid not in ours:
            continue
        theirs, mine = p.info, ours[p.pid]
        for a in ["pid", "ppid", "name", "status", "num_threads", "nice"]:
            assert mine[a] == theirs[a], a
        assert abs(mine["create_time"] - theirs["create_time"]) < 0.02
        assert mine["memory_info"].vms == theirs["memory_info"].vms
        # /proc/PID/stat's RSS (ours) is the kernel's per-CPU-batched
        # counter; psutil reads statm, which sums the batches.
        slack = 64 * os.cpu_count() * os.sysconf("SC_PAGE_SIZE")
        assert abs(mine["memory_info"].rss - theirs["memory_info"].rss) <= slack
        assert abs(mine["cpu_times"].user - theirs["cpu_times"].user) < 0.05
        assert abs(mine["cpu_times"].system - theirs["cpu_times"].system) < 0.05
        assert tuple(mine["num_ctx_switches"]) == tuple(theirs["num_ctx_switches"])
        assert tuple(mine["io_counters"]) == tuple(theirs["io_counters"])[:6]
        assert mine["cpu_num"] == theirs["cpu_num"]


def test_errors_name_what_was_wrong():
    with pytest.raises(ValueError, match="procfs"):
        quietstat.Table(backend="nope")
    with pytest.raises(ValueError, match="threads"):
        quietstat.Table(threads=99)
    with pytest.raises(ValueError, match="accepted"):
        next(quietstat.process_iter(["pid", "colour"]))
    with pytest.raises(ValueError, match="rss_bytes"):
        quietstat.Table().snapshot(["rss"])
    with pytest.raises(TypeError):
        quietstat.Table().start_times(["one"])
    with pytest.raises(quietstat.Error):
        quietstat.Table(backend="procfs", proc_root="/nonexistent").snapshot(["pid"])


def test_a_failed_read_is_raised_by_its_kind():
    # A root that is not there: a FileNotFoundError and a quietstat.Error,
    # naming the path.
    with pytest.raises(FileNotFoundError, match="/nonexistent") as e:
        quietstat.Table(backend="procfs", proc_root="/nonexistent").snapshot(["pid"])
    assert isinstance(e.value, quietstat.NotFoundError)
    assert isinstance(e.value, quietstat.Error)
    assert issubclass(quietstat.DeniedError, PermissionError)
    assert issubclass(quietstat.DeniedError, quietstat.Error)
    assert issubclass(quietstat.MalformedError, ValueError)
    assert issubclass(quietstat.MalformedError, quietstat.Error)


def test_the_example_runs():
    out = subprocess.run([sys.executable, EXAMPLE, "2"], capture_output=True, text=True, check=True)
    assert "disagreements 0" in out.stdout, out.stdout + out.stderr


AGENT_BIN = os.path.join(os.path.dirname(__file__), "..", "..", "..", "target", "debug", "quietstat")


@pytest.fixture
def agent(tmp_path):
    """A running agent (the debug build the suite built) with its snapshot
    in a private directory; stopped and reaped at the end."""
    shm = tmp_path / "snapshot"
    p = subprocess.Popen(
        [AGENT_BIN, "agent", "--no-store", "--listen", "127.0.0.1:0", "--shm-path", str(shm)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for line in p.stderr:
            if line.startswith("quietstat agent: serving "):
                break
        else:
            pytest.fail("the agent did not start")
        yield shm
    finally:
        p.terminate()
        p.wait(timeout=30)


def test_snapshot_from_the_agent_when_fresh_and_complete(agent, sleepers):
    t = quietstat.Table(backend="procfs", agent=str(agent), numpy=False)
    s = t.snapshot(fields=("pid", "start_ticks", "ppid"), pids=sleepers)
    assert t.served_by == "agent", t.agent_note
    assert t.agent_note == ""
    assert s["pid"] == sorted(sleepers)
    assert s["start_ticks"] == [proc_start(p) for p in sorted(sleepers)]
    # Too old for what is asked: read by the table, and the reason given.
    strict = quietstat.Table(backend="procfs", agent=str(agent), agent_max_age_ms=1, numpy=False)
    time.sleep(0.005)
    s = strict.snapshot(fields=("pid",), pids=sleepers)
    assert strict.served_by == "self"
    assert "older than" in strict.agent_note
    assert s["pid"] == sorted(sleepers)
    # A field the agent never reads: read by the table.
    t.snapshot(fields=("pid", "oom_score_adj"), pids=sleepers)
    assert t.served_by == "self"
    assert "lacks" in t.agent_note
    # No agent there: read by the table, the path named.
    gone = quietstat.Table(backend="procfs", agent="/nonexistent/snapshot")
    gone.snapshot(fields=("pid",), pids=sleepers)
    assert gone.served_by == "self"
    assert "/nonexistent/snapshot" in gone.agent_note


@pytest.mark.parametrize("backend", BACKENDS)
def test_tcp_bytes_of_a_process(backend):
    # This process's connecting end receives 200,000 bytes from its
    # accepted end: the BPF backend counts them; /proc cannot say.
    import socket

    n = 200_000
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname()) as c:
            a, _ = listener.accept()
            with a:
                a.sendall(b"x" * n)
                got = 0
                while got < n:
                    got += len(c.recv(1 << 20))
                cols = quietstat.Table(backend=backend, numpy=False).snapshot(
                    ["pid", "net_rx_bytes", "net_tx_bytes"], pids=[os.getpid()]
                )
    assert cols["pid"] == [os.getpid()]
    if backend == "bpf":
        assert n <= cols["net_rx_bytes"][0] < n + 16
    else:
        # Absent: -1, as every number /proc does not give.
        assert cols["net_rx_bytes"] == [-1] and cols["net_tx_bytes"] == [-1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_delay_accounting_of_a_process(backend):
    # Both backends give the kernel's delay accounting as root (zeros
    # while kernel.task_delayacct is 0, but given): the procfs one asks
    # taskstats.
    names = ["blkio_delay_ns", "swapin_delay_ns", "reclaim_delay_ns",
             "thrashing_delay_ns", "compact_delay_ns", "wpcopy_delay_ns",
             "irq_delay_ns"]
    cols = quietstat.Table(backend=backend, numpy=False).snapshot(
        ["pid"] + names, pids=[os.getpid()]
    )
    assert cols["pid"] == [os.getpid()]
    for name in names:
        assert cols[name][0] >= 0, name


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpu_columns_of_a_process(backend):
    # Both backends read GPU figures; this process holds no GPU: zeros,
    # given (not -1).
    names = ["gpu_busy_ns", "gpu_mem_bytes", "gpu_clients"]
    cols = quietstat.Table(backend=backend, numpy=False).snapshot(
        ["pid"] + names, pids=[os.getpid()]
    )
    assert cols["pid"] == [os.getpid()]
    for name in names:
        assert cols[name] == [0], name
