"""psutil's Process and process_iter, the cases of psutil's own process
tests that the two share, run against psutil and quietstat in the same
session: the same names, types and units, the same exceptions on a process
that is gone, a zombie, or another user's."""

import json
import os
import pwd
import signal
import subprocess
import sys
import time

import psutil
import pytest

import quietstat

MODULES = [psutil, quietstat]
IDS = ["psutil", "quietstat"]


@pytest.fixture(params=MODULES, ids=IDS)
def mod(request):
    return request.param


def spawn(*argv):
    return subprocess.Popen(list(argv) or ["sleep", "600"])


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        text = f.read()
    return text[text.rindex(")") + 2]


@pytest.fixture
def sleeper():
    """A child in sleep, seen by /proc as sleeping (S)."""
    p = spawn()
    deadline = time.time() + 10
    while proc_state(p.pid) != "S":
        assert time.time() < deadline, "the sleeper never slept"
        time.sleep(0.01)
    yield p
    p.kill()
    p.wait()


def test_the_calling_process_read_method_by_method(mod):
    p = mod.Process()
    assert p.pid == os.getpid()
    assert isinstance(p.name(), str) and p.name()
    assert p.name() == open("/proc/self/comm").read().strip()
    assert p.cmdline() == open("/proc/self/cmdline").read().rstrip("\0").split("\0")
    assert p.exe() == os.path.realpath(sys.executable)
    assert p.cwd() == os.getcwd()
    assert p.status() == mod.STATUS_RUNNING
    assert p.ppid() == os.getppid()
    assert p.parent().pid == os.getppid()
    assert isinstance(p.create_time(), float)
    assert abs(p.create_time() - psutil.Process().create_time()) < 0.02
    assert p.create_time() <= time.time()
    t = p.cpu_times()
    assert isinstance(t, tuple) and (t.user, t.system) == (t[0], t[1])
    assert isinstance(t.user, float) and t.user > 0 and t.system >= 0
    m = p.memory_info()
    assert isinstance(m.rss, int) and isinstance(m.vms, int) and 0 < m.rss < m.vms
    assert (m.rss, m.vms) == (m[0], m[1])
    assert 0 < p.memory_percent() < 100
    assert p.num_threads() == len(os.listdir("/proc/self/task"))
    io = p.io_counters()
    assert all(isinstance(v, int) and v >= 0 for v in io[:6])
    assert io.read_chars > 0 and io.read_count > 0
    c = p.num_ctx_switches()
    assert c.voluntary >= 0 and c.involuntary >= 0 and (c.voluntary + c.involuntary) > 0
    assert p.nice() == os.getpriority(os.PRIO_PROCESS, 0)
    assert tuple(p.uids()) == os.getresuid()
    assert p.username() == pwd.getpwuid(os.getuid()).pw_name
    before = p.num_fds()
    with open(__file__):
        assert p.num_fds() == before + 1
    assert p.is_running()
    assert p == mod.Process(os.getpid()) and hash(p) == hash(mod.Process(os.getpid()))


def test_values_agree_with_psutils(sleeper):
    ours, theirs = quietstat.Process(sleeper.pid), psutil.Process(sleeper.pid)
    for m in ["name", "cmdline", "exe", "cwd", "status", "ppid", "num_threads", "nice", "uids", "username", "num_fds"]:
        assert getattr(ours, m)() == getattr(theirs, m)(), m
    assert abs(ours.create_time() - theirs.create_time()) < 0.02
    assert ours.memory_info().vms == theirs.memory_info().vms
    # RSS: /proc/PID/stat's counter (ours) is batched per CPU; psutil reads
    # statm, which sums the batches.
    slack = 64 * os.cpu_count() * os.sysconf("SC_PAGE_SIZE")
    assert abs(ours.memory_info().rss - theirs.memory_info().rss) <= slack
    assert tuple(ours.io_counters()) == tuple(theirs.io_counters())[:6]
    assert tuple(ours.num_ctx_switches()) == tuple(theirs.num_ctx_switches())
    assert ours.parent() == quietstat.Process(os.getpid())


def outcome(fn):
    """What a call did: its value's type, or the name of the exception."""
    try:
        v = fn()
    except Exception as e:  # noqa: BLE001 (the exception is the outcome)
        return type(e).__name__
    return "value"


METHODS = ["name", "cmdline", "exe", "cwd", "status", "ppid", "cpu_times", "memory_info"]
METHODS += ["num_threads", "io_counters", "num_ctx_switches", "nice", "uids", "username", "num_fds", "children"]


def test_a_process_that_ended_raises_no_such_process_from_every_method(mod):
    child = spawn()
    p = mod.Process(child.pid)
    child.kill()
    child.wait()
    assert not p.is_running()
    for m in METHODS:
        with pytest.raises(mod.NoSuchProcess) as e:
            getattr(p, m)()
        assert e.value.pid == child.pid, m
    # The start time is the process's identity: given after it ended.
    assert abs(p.create_time() - time.time()) < 60
    with pytest.raises(mod.NoSuchProcess):
        mod.Process(child.pid)
    assert not mod.pid_exists(child.pid)


def test_nice_of_another_users_process_and_of_copies():
    """nice() of a process another user runs (the pidfd's signal 0 is
    refused, which still says it is there), and from a copy and a pickle,
    each with its own pidfd."""
    import copy
    import pickle

    child = spawn()
    try:
        os.setpriority(os.PRIO_PROCESS, child.pid, 7)
        assert as_nobody(lambda: quietstat.Process(child.pid).nice()) == 7
        assert psutil.Process(child.pid).nice() == 7
        p = quietstat.Process(child.pid)
        assert p.nice() == 7
        for q in [copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))]:
            assert q == p and q.nice() == 7
    finally:
        child.kill()
        child.wait()
    with pytest.raises(quietstat.NoSuchProcess):
        p.nice()


def test_process_objects_hold_a_bounded_number_of_descriptors(sleeper):
    """nice() on a thousand Process objects holds no more than 64 pidfds
    between them (the rest read /proc, with the same answer), and they
    are closed with the objects."""
    import gc

    def fds():
        return len(os.listdir("/proc/self/fd"))

    # The module's own table (its descriptors kept) read once before.
    quietstat.Process(sleeper.pid).nice()
    gc.collect()
    before = fds()
    procs = [quietstat.Process(sleeper.pid) for _ in range(1000)]
    assert {p.nice() for p in procs} == {os.getpriority(os.PRIO_PROCESS, sleeper.pid)}
    assert before < fds() <= before + 64
    del procs
    gc.collect()
    assert fds() == before


def test_a_zombie_raises_as_psutil_does(sleeper):
    # A child that exits while we do not reap it.
    child = subprocess.Popen(["true"])
    deadline = time.time() + 10
    while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE:
        assert time.time() < deadline, "the child never became a zombie"
        time.sleep(0.01)
    try:
        ours, theirs = quietstat.Process(child.pid), psutil.Process(child.pid)
        assert ours.status() == quietstat.STATUS_ZOMBIE == theirs.status()
        assert ours.is_running() and theirs.is_running()
        got = {m: (outcome(getattr(ours, m)), outcome(getattr(theirs, m))) for m in METHODS}
        assert all(a == b for a, b in got.values()), got
        with pytest.raises(quietstat.ZombieProcess) as e:
            ours.exe()
        assert isinstance(e.value, quietstat.NoSuchProcess) and isinstance(e.value, quietstat.Error)
        assert e.value.ppid == os.getpid()
        assert ours.wait() == 0
        assert not ours.is_running()
    finally:
        child.wait()


def test_a_reused_pid_is_not_the_process_it_was():
    """ns_last_pid makes the next fork take a PID just freed (tried until
    no other fork on the machine took it in between)."""
    for _ in range(50):
        first = spawn()
        p = quietstat.Process(first.pid)
        # nice() holds a pidfd on the first process from here on.
        assert p.nice() == os.getpriority(os.PRIO_PROCESS, first.pid)
        first.kill()
        first.wait()
        time.sleep(0.02)
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(first.pid - 1))
        second = spawn()
        try:
            if second.pid != first.pid:
                continue
            assert not p.is_running()
            for m in ["name", "cpu_times", "memory_info", "children", "nice"]:
                with pytest.raises(quietstat.NoSuchProcess):
                    getattr(p, m)()
            with pytest.raises(quietstat.NoSuchProcess):
                p.send_signal(signal.SIGTERM)
            assert second.poll() is None, "the signal reached the new process"
            assert quietstat.Process(second.pid) != p
            return
        finally:
            second.kill()
            second.wait()
    pytest.fail("PID reuse could not be arranged through ns_last_pid")


def as_nobody(fn):
    """fn()'s JSON-able result from a child that dropped to user nobody."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            nobody = pwd.getpwnam("nobody")
            os.setgroups([])
            os.setresgid(nobody.pw_gid, nobody.pw_gid, nobody.pw_gid)
            os.setresuid(nobody.pw_uid, nobody.pw_uid, nobody.pw_uid)
            os.write(w, json.dumps(fn()).encode())
        except BaseException as e:  # noqa: BLE001 (reported to the parent)
            os.write(w, json.dumps({"error": repr(e)}).encode())
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        out = json.loads(f.read())
    os.waitpid(pid, 0)
    return out


def test_ad_value_stands_for_what_another_user_may_not_read(mod):
    attrs = ["pid", "name", "exe", "cwd", "io_counters", "num_fds", "status"]

    def read():
        return {str(p.pid): p.info for p in mod.process_iter(attrs, ad_value="denied") if p.pid == 1}

    got = as_nobody(read)
    assert "error" not in got, got
    one = got["1"]
    assert one["name"] == psutil.Process(1).name()
    assert one["status"] == psutil.Process(1).status()
    for a in ["exe", "cwd", "io_counters", "num_fds"]:
        assert one[a] == "denied", (a, one)


def test_access_denied_to_another_user(mod):
    def read():
        p = mod.Process(1)
        out = {}
        for m in ["exe", "cwd", "io_counters", "num_fds", "name"]:
            out[m] = outcome(getattr(p, m))
        out["subclass"] = issubclass(mod.AccessDenied, quietstat.Error) if mod is quietstat else True
        return out

    got = as_nobody(read)
    assert got == {
        "exe": "AccessDenied",
        "cwd": "AccessDenied",
        "io_counters": "AccessDenied",
        "num_fds": "AccessDenied",
        "name": "value",
        "subclass": True,
    }


def test_children_and_descendants_agree_with_psutil(mod):
    tree = subprocess.Popen(["sh", "-c", "sleep 600 & sleep 600 & (sleep 600 & wait) & wait"])
    try:
        deadline = time.time() + 10
        while len(psutil.Process(tree.pid).children(recursive=True)) < 4:
            assert time.time() < deadline, "the tree never grew"
            time.sleep(0.01)
        p = mod.Process(tree.pid)
        kids = sorted(c.pid for c in p.children())
        all_of = sorted(c.pid for c in p.children(recursive=True))
        theirs = psutil.Process(tree.pid)
        assert kids == sorted(c.pid for c in theirs.children())
        assert all_of == sorted(c.pid for c in theirs.children(recursive=True))
        assert len(kids) == 3 and len(all_of) == 4
        assert all(isinstance(c, mod.Process) for c in p.children())
        assert mod.Process(os.getpid()).children() == [] or all(
            c.ppid() == os.getpid() for c in mod.Process(os.getpid()).children()
        )
    finally:
        os.killpg(os.getpgid(tree.pid), 0)
        for c in psutil.Process(tree.pid).children(recursive=True):
            c.kill()
        tree.kill()
        tree.wait()


def test_wait_gives_a_childs_exit_code_and_times_out(mod):
    # Held: a Popen dropped while its child runs reaps it when collected.
    child = spawn("sh", "-c", "exit 7")
    p = mod.Process(child.pid)
    assert p.wait(timeout=10) == 7
    sleeper = spawn()
    p = mod.Process(sleeper.pid)
    t0 = time.monotonic()
    with pytest.raises(mod.TimeoutExpired):
        p.wait(timeout=0.2)
    assert time.monotonic() - t0 >= 0.19
    sleeper.kill()
    assert p.wait(timeout=10) == -signal.SIGKILL


def test_wait_on_another_process_returns_once_it_ended_unreaped():
    # The shell's background sleep becomes a child of the sleep the shell
    # execs, which never reaps it: a zombie that is not our child.
    parent = spawn("sh", "-c", "sleep 0.3 & exec sleep 600")
    try:
        deadline = time.time() + 10
        while not psutil.Process(parent.pid).children():
            assert time.time() < deadline, "the shell never forked"
            time.sleep(0.01)
        orphan = quietstat.Process(psutil.Process(parent.pid).children()[0].pid)
        t0 = time.monotonic()
        assert orphan.wait(timeout=10) is None
        assert time.monotonic() - t0 < 5
        assert orphan.status() == quietstat.STATUS_ZOMBIE
        # Ended before the call: the same at once.
        assert orphan.wait(timeout=0) is None
    finally:
        parent.kill()
        parent.wait()


def test_cpu_percent_agrees_with_psutils_over_the_same_interval():
    """A busy child's share of a CPU, which depends on what else runs: so
    against psutil's over the same interval, and for the blocking form
    against the CPU time the child took around the call."""
    busy = spawn(sys.executable, "-c", "while True: pass")
    try:
        ours, theirs = quietstat.Process(busy.pid), psutil.Process(busy.pid)
        assert theirs.cpu_percent() == 0.0 and ours.cpu_percent() == 0.0
        time.sleep(0.5)
        a, b = theirs.cpu_percent(), ours.cpu_percent()
        assert b > 0 and abs(a - b) <= 10, (a, b)
        before = sum(ours.cpu_times())
        share = ours.cpu_percent(interval=0.3)
        took = sum(ours.cpu_times()) - before
        # The call's own interval lies inside this one and lasts at least
        # 0.3 s: it cannot show more than all of that CPU time over 0.3 s.
        assert 0 < share <= took / 0.3 * 100 + 0.1, (share, took)
    finally:
        busy.kill()
        busy.wait()


def test_process_iter_yields_processes_with_info(mod, sleeper):
    attrs = ["pid", "ppid", "name", "status", "cpu_times", "create_time", "memory_info", "num_threads"]
    got = {p.pid: p for p in mod.process_iter(attrs)}
    assert sleeper.pid in got and 1 in got
    p = got[sleeper.pid]
    assert isinstance(p, mod.Process)
    assert sorted(p.info) == sorted(attrs)
    assert p.info["name"] == "sleep" and p.info["ppid"] == os.getpid()
    assert p.info["status"] == mod.STATUS_SLEEPING
    assert isinstance(p.info["cpu_times"].user, float)
    assert isinstance(p.info["memory_info"].rss, int)
    assert p.name() == "sleep"
    # Without attrs: Process objects; an empty list: every attribute.
    assert all(isinstance(q, mod.Process) for q in mod.process_iter())
    full = [q for q in mod.process_iter([]) if q.pid == sleeper.pid][0]
    assert {"pid", "name", "exe", "cmdline", "username"} <= set(full.info)
    assert full.info["cmdline"] == ["sleep", "600"]


def kernel_threads():
    """(pid, whether it is a workqueue worker) of every kernel thread, from
    /proc/PID/stat's flags (PF_KTHREAD, PF_WQ_WORKER)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                text = f.read()
        except OSError:
            continue
        flags = int(text[text.rindex(")") + 2:].split()[6])
        if flags & 0x00200000:
            out.append((int(name), bool(flags & 0x20)))
    return out


def test_kernel_threads_have_the_names_psutil_gives():
    """process_iter's and Process's names of kernel threads are psutil's:
    full names, a worker's with its work. psutil is asked just before and
    just after; a worker whose work changed between the two is not judged,
    nor the sign (+ while it runs a work item, - after) that flips with
    every item."""
    threads = kernel_threads()

    def names(mod):
        """Each thread's name from `mod`'s Process, those still there."""
        out = {}
        for pid, _ in threads:
            try:
                out[pid] = mod.Process(pid).name()
            except mod.NoSuchProcess:
                pass
        return out

    before = names(psutil)
    ours = {p.pid: p.info["name"] for p in quietstat.process_iter(["name"])}
    one = names(quietstat)
    after = names(psutil)
    judged, longer = 0, 0
    for pid, worker in threads:
        if pid not in before or pid not in after or pid not in ours or pid not in one:
            continue
        if worker:
            norm = lambda s: s.replace("+", "-")
            if norm(before[pid]) != norm(after[pid]):
                continue
            assert norm(ours[pid]) == norm(before[pid]), pid
            assert norm(one[pid]) == norm(before[pid]), pid
        else:
            assert ours[pid] == before[pid] == one[pid], pid
        judged += 1
        longer += len(ours[pid]) > 15
    assert judged > 10 and longer > 0, (judged, longer)


def test_errors_say_what_was_wrong():
    with pytest.raises(ValueError, match="accepted"):
        next(quietstat.process_iter(["pid", "colour"]))
    with pytest.raises(TypeError):
        quietstat.Process("1")
    with pytest.raises(ValueError):
        quietstat.Process(-1)
    with pytest.raises(ValueError, match="memtype"):
        quietstat.Process().memory_percent("uss")
    assert issubclass(quietstat.ZombieProcess, quietstat.NoSuchProcess)
    assert issubclass(quietstat.NoSuchProcess, quietstat.Error)
    assert issubclass(quietstat.AccessDenied, quietstat.Error)


def test_the_psutil_example_runs():
    example = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python", "psutil_shape.py")
    out = subprocess.run([sys.executable, example, "1", "10"], capture_output=True, text=True, check=True)
    assert "process_iter_ms_median" in out.stdout and "method_worst_ratio" in out.stdout, out.stdout + out.stderr
