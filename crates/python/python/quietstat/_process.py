"""psutil's shape: ``Process(pid)`` and ``process_iter(attrs, ad_value)``,
with psutil's names, units, namedtuples and exceptions, read by the
library's tables: a method reads one process through a /proc table (one
file, as psutil reads it), ``process_iter`` the whole table in one
vectored read (BPF where the caller may load it), building only the
attributes asked for. What differs from psutil is in docs/library.md."""

import collections
import os
import pwd
import select
import signal
import threading
import time

from ._quietstat import Error
from ._quietstat import Table as _Table

# psutil's shapes for the attributes both have (the fields this library
# reads; psutil's Linux tuples have more: docs/library.md).
pcputimes = collections.namedtuple("pcputimes", ["user", "system"])
pmem = collections.namedtuple("pmem", ["rss", "vms"])
pio = collections.namedtuple(
    "pio", ["read_count", "write_count", "read_bytes", "write_bytes", "read_chars", "write_chars"]
)
pctxsw = collections.namedtuple("pctxsw", ["voluntary", "involuntary"])
puids = collections.namedtuple("puids", ["real", "effective", "saved"])

STATUS_RUNNING = "running"
STATUS_SLEEPING = "sleeping"
STATUS_DISK_SLEEP = "disk-sleep"
STATUS_STOPPED = "stopped"
STATUS_TRACING_STOP = "tracing-stop"
STATUS_ZOMBIE = "zombie"
STATUS_DEAD = "dead"
STATUS_WAKE_KILL = "wake-kill"
STATUS_WAKING = "waking"
STATUS_IDLE = "idle"
STATUS_PARKED = "parked"

_STATUS = {
    "R": STATUS_RUNNING,
    "S": STATUS_SLEEPING,
    "D": STATUS_DISK_SLEEP,
    "T": STATUS_STOPPED,
    "t": STATUS_TRACING_STOP,
    "Z": STATUS_ZOMBIE,
    "X": STATUS_DEAD,
    "x": STATUS_DEAD,
    "K": STATUS_WAKE_KILL,
    "W": STATUS_WAKING,
    "I": STATUS_IDLE,
    "P": STATUS_PARKED,
}


class NoSuchProcess(Error):
    """The process is gone, or its PID now names another process (its start
    time differs): psutil's meaning."""

    def __init__(self, pid, name=None, msg=None):
        self.pid, self.name = pid, name
        self.msg = msg or "process no longer exists"
        Error.__init__(self, "%s (pid=%s%s)" % (self.msg, pid, ", name=%r" % name if name else ""))


class ZombieProcess(NoSuchProcess):
    """The process has exited and waits for its parent to reap it: what it
    no longer has (command line, executable, directory, descriptors) cannot
    be read."""

    def __init__(self, pid, name=None, ppid=None, msg=None):
        NoSuchProcess.__init__(self, pid, name, msg or "process still exists but it's a zombie")
        self.ppid = ppid


class AccessDenied(Error):
    """The caller may not read that of the process (another user's, without
    the privilege)."""

    def __init__(self, pid=None, name=None, msg=None):
        self.pid, self.name = pid, name
        self.msg = msg or "access denied"
        Error.__init__(self, "%s (pid=%s%s)" % (self.msg, pid, ", name=%r" % name if name else ""))


class TimeoutExpired(Error):
    """``wait(timeout)`` ran out of time."""

    def __init__(self, seconds, pid=None, name=None):
        self.seconds, self.pid, self.name = seconds, pid, name
        Error.__init__(self, "timeout after %s seconds (pid=%s)" % (seconds, pid))


# Process objects hold at most this many pidfds between them (the rest read
# /proc): a script that calls nice() on every process of a table keeps its
# descriptors for its own files.
_PIDFD_LIMIT = 64
_PIDFDS = [0]
_PIDFDS_LOCK = threading.Lock()


def _pidfd_closed():
    with _PIDFDS_LOCK:
        _PIDFDS[0] -= 1


_TICKS = os.sysconf("SC_CLK_TCK")
_BOOT = []
_MEM_TOTAL = []
_TABLES = {}


def _boot_time():
    """Boot time in seconds since the epoch, as psutil reads it (btime)."""
    if not _BOOT:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("btime"):
                    _BOOT.append(float(line.split()[1]))
                    break
    return _BOOT[0]


def _mem_total():
    if not _MEM_TOTAL:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    _MEM_TOTAL.append(int(line.split()[1]) * 1024)
                    break
    return _MEM_TOTAL[0]


def _table(kind):
    """The module's tables, opened once for each effective user (a table
    opened with root's rights reads what another user may not): "one"
    reads a process from its own /proc files (a walk of every task would
    cost a method call what a table costs), "all" the whole table the
    fastest way the caller may."""
    key = (kind, os.geteuid())
    t = _TABLES.get(key)
    if t is None:
        t = _Table("procfs" if kind == "one" else "auto", "/proc", "/sys", 0, None, 0)
        _TABLES[key] = t
    return t


def _ints(v):
    return memoryview(v).cast("q").tolist() if isinstance(v, bytes) else v


def _tuples(kind, *cols):
    """One ``kind`` namedtuple a process from the columns ``cols``; None for
    a process whose first column is -1 (the caller may not read it)."""
    new = tuple.__new__
    return [new(kind, t) if t[0] >= 0 else None for t in zip(*cols)]


def _create_times(ticks):
    """Seconds since the epoch for starts in clock ticks since boot, as
    psutil computes them."""
    boot = _boot_time()
    return [boot + s / _TICKS for s in ticks]


def _memory_percents(sizes):
    """Byte counts as percentages of the machine's memory."""
    total = _mem_total()
    return [b / total * 100 for b in sizes]


# Each attribute the tables read: the columns it needs, and its values
# from those columns (lists, one value a process; None where the caller
# may not read it), built column by column, one namedtuple a process.
# Process methods take it for one process, process_iter for all.
_FROM_COLUMNS = {
    "pid": (["pid"], lambda c: c["pid"]),
    "ppid": (["ppid"], lambda c: c["ppid"]),
    "name": (["comm"], lambda c: c["comm"]),
    "status": (["state"], lambda c: [_STATUS.get(s, s) for s in c["state"]]),
    "create_time": (["start_ticks"], lambda c: _create_times(c["start_ticks"])),
    "cpu_times": (
        ["utime_ns", "stime_ns"],
        lambda c: _tuples(pcputimes, [u / 1e9 for u in c["utime_ns"]], [s / 1e9 for s in c["stime_ns"]]),
    ),
    "memory_info": (["rss_bytes", "vsize_bytes"], lambda c: _tuples(pmem, c["rss_bytes"], c["vsize_bytes"])),
    "memory_percent": (["rss_bytes"], lambda c: _memory_percents(c["rss_bytes"])),
    "num_threads": (["threads"], lambda c: c["threads"]),
    "nice": (["nice"], lambda c: c["nice"]),
    "cpu_num": (["cpu"], lambda c: c["cpu"]),
    "io_counters": (
        ["syscr", "syscw", "read_bytes", "write_bytes", "rchar", "wchar"],
        lambda c: _tuples(pio, c["syscr"], c["syscw"], c["read_bytes"], c["write_bytes"], c["rchar"], c["wchar"]),
    ),
    "num_ctx_switches": (
        ["voluntary_ctxsw", "involuntary_ctxsw"],
        lambda c: _tuples(pctxsw, c["voluntary_ctxsw"], c["involuntary_ctxsw"]),
    ),
}

# Attributes read from the process's own files, by method.
_FROM_FILES = ["exe", "cmdline", "cwd", "num_fds", "uids", "username"]

ATTRS = list(_FROM_COLUMNS) + _FROM_FILES


class Process:
    """One process, as psutil's ``Process``: identified by its PID and start
    time, so that a PID reused by another process is never read as this
    one (``NoSuchProcess``). Each method reads the process's current
    values (one /proc file for most); inside ``oneshot()`` the columnar
    ones come from one read."""

    __slots__ = ("_pid", "_start", "_name", "_cache", "_last_cpu", "_exe", "_ctime", "_pidfd", "info")

    def __init__(self, pid=None):
        if pid is None:
            pid = os.getpid()
        if not isinstance(pid, int) or isinstance(pid, bool):
            raise TypeError("pid must be an integer (got %r)" % (pid,))
        if pid < 0:
            raise ValueError("pid must be a positive integer (got %d)" % pid)
        start = _table("one").start_times([pid])
        start = _ints(start)[0]
        if start == 0:
            raise NoSuchProcess(pid, msg="process PID not found")
        self._pid, self._start, self._name = pid, start, None
        self._cache, self._last_cpu, self._exe, self._ctime = None, None, None, None
        self._pidfd = None

    @classmethod
    def _known(cls, pid, start, name):
        p = object.__new__(cls)
        p._pid, p._start, p._name = pid, start, name
        p._cache, p._last_cpu, p._exe, p._ctime = None, None, None, None
        p._pidfd = None
        return p

    def __del__(self):
        fd = getattr(self, "_pidfd", None)
        if fd is not None and fd >= 0:
            try:
                os.close(fd)
                _pidfd_closed()
            except (OSError, TypeError, AttributeError):
                pass

    def __copy__(self):
        # Not the pidfd: each copy opens its own (and closes it).
        p = Process._known(self._pid, self._start, self._name)
        if hasattr(self, "info"):
            p.info = self.info
        return p

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        return (Process._known, (self._pid, self._start, self._name))

    def _handle(self):
        """A pidfd on this process, opened at the first call that uses one
        and checked to be this process (its start time read after it was
        opened; a pidfd names the process that held the PID then); closed
        with the object. None where there is none (a thread's ID, the
        descriptors run out, or the objects hold ``_PIDFD_LIMIT``): the
        caller then reads /proc."""
        fd = self._pidfd
        if fd is not None:
            return fd if fd >= 0 else None
        with _PIDFDS_LOCK:
            if _PIDFDS[0] >= _PIDFD_LIMIT:
                return None
            _PIDFDS[0] += 1
        try:
            fd = os.pidfd_open(self._pid)
        except (OSError, AttributeError) as e:
            _pidfd_closed()
            if isinstance(e, ProcessLookupError):
                raise NoSuchProcess(self._pid, self._name)
            self._pidfd = -1  # none to be had: /proc from now on
            return None
        try:
            same = self.is_running()
        except BaseException:
            os.close(fd)
            _pidfd_closed()
            raise
        if not same:
            os.close(fd)
            _pidfd_closed()
            raise NoSuchProcess(self._pid, self._name)
        self._pidfd = fd
        return fd

    # Identity ------------------------------------------------------------

    @property
    def pid(self):
        return self._pid

    def __eq__(self, other):
        if not isinstance(other, Process):
            return NotImplemented
        return (self._pid, self._start) == (other._pid, other._start)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self._pid, self._start))

    def __repr__(self):
        try:
            r = self._row(["comm", "state"])
            return "quietstat.Process(pid=%d, name=%r, status=%r)" % (
                self._pid,
                r["comm"],
                _STATUS.get(r["state"], r["state"]),
            )
        except NoSuchProcess:
            return "quietstat.Process(pid=%d, status='terminated')" % self._pid

    __str__ = __repr__

    def is_running(self):
        """Whether the process runs still: its PID names a process started
        when this one was (a zombie runs, as psutil has it)."""
        return _ints(_table("one").start_times([self._pid]))[0] == self._start

    # Reads -------------------------------------------------------------

    def _row(self, cols):
        """This process's `cols` (and its start time, to check it is still
        this process) from one read of its /proc files."""
        cache = self._cache
        if cache:
            return cache
        key = tuple(cols) if cache is None else None
        want = _WANT.get(key)
        if want is None:
            want = list(dict.fromkeys(list(cols) + ["start_ticks", "comm"] + (_ONESHOT if key is None else [])))
            _WANT[key] = want
        got = _table("one").snapshot(want, [self._pid])
        start = got["start_ticks"]
        if not start or int.from_bytes(start, "little", signed=True) != self._start:
            raise NoSuchProcess(self._pid, self._name)
        row = {k: (int.from_bytes(v, "little", signed=True) if isinstance(v, bytes) else v[0]) for k, v in got.items()}
        self._name = row["comm"]
        if cache is not None:
            self._cache = row
        return row

    def _file(self, fn):
        """`fn()` on a file of this process, its errors said psutil's way."""
        try:
            return fn()
        except FileNotFoundError:
            self._gone_or_zombie()
            raise
        except ProcessLookupError:
            raise NoSuchProcess(self._pid, self._name)
        except PermissionError:
            raise AccessDenied(self._pid, self._name)

    def _gone_or_zombie(self):
        r = self._row(["state", "ppid"])
        if r["state"] == "Z":
            raise ZombieProcess(self._pid, self._name, r["ppid"])

    def _attr(self, name):
        cols, values = _FROM_COLUMNS[name]
        r = self._row(cols)
        v = values({c: [r[c]] for c in cols})[0]
        if v is None:
            raise AccessDenied(self._pid, self._name)
        return v

    def name(self):
        """The task name as /proc shows it: ``comm`` (at most 15 bytes),
        or a kernel thread's full name (``kworker/1:1-events``)."""
        return self._row(["comm"])["comm"]

    def ppid(self):
        return self._attr("ppid")

    def status(self):
        return self._attr("status")

    def create_time(self):
        """Seconds since the epoch, from the boot time and the start in
        clock ticks, as psutil computes it: part of the process's identity,
        so given after it ended too (as psutil's)."""
        if self._ctime is None:
            self._ctime = _create_times([self._start])[0]
        return self._ctime

    def cpu_times(self):
        return self._attr("cpu_times")

    def memory_info(self):
        return self._attr("memory_info")

    def memory_percent(self, memtype="rss"):
        """RSS (or vms) as a percentage of the machine's memory."""
        if memtype not in ("rss", "vms"):
            raise ValueError("memtype %r; accepted: rss, vms" % (memtype,))
        return _memory_percents([getattr(self.memory_info(), memtype)])[0]

    def num_threads(self):
        return self._attr("num_threads")

    def io_counters(self):
        return self._attr("io_counters")

    def num_ctx_switches(self):
        return self._attr("num_ctx_switches")

    def cpu_num(self):
        return self._attr("cpu_num")

    def nice(self, value=None):
        """The nice value; with ``value``, sets it."""
        if value is None:
            # A system call, then the pidfd says the process was still this
            # one after it: no /proc file read.
            fd = self._handle()
            if fd is None:
                return self._attr("nice")
            try:
                v = os.getpriority(os.PRIO_PROCESS, self._pid)
            except ProcessLookupError:
                raise NoSuchProcess(self._pid, self._name)
            try:
                signal.pidfd_send_signal(fd, 0)
            except PermissionError:
                pass  # another user's: it is there
            except ProcessLookupError:
                raise NoSuchProcess(self._pid, self._name)
            return v
        if not self.is_running():
            raise NoSuchProcess(self._pid, self._name)
        self._file(lambda: os.setpriority(os.PRIO_PROCESS, self._pid, value))

    def cpu_percent(self, interval=None):
        """CPU time used over ``interval`` seconds (blocking), or since the
        last call (0.0 the first time), as a percentage of one CPU: psutil's
        meaning (above 100 for a process on several CPUs)."""
        if interval is not None and interval < 0:
            raise ValueError("interval is not positive (got %r)" % (interval,))

        def now():
            t = self.cpu_times()
            return t.user + t.system, time.monotonic()

        if interval:
            cpu0, t0 = now()
            time.sleep(interval)
        else:
            if self._last_cpu is None:
                self._last_cpu = now()
                return 0.0
            cpu0, t0 = self._last_cpu
        cpu1, t1 = now()
        self._last_cpu = (cpu1, t1)
        if t1 <= t0:
            return 0.0
        return round((cpu1 - cpu0) / (t1 - t0) * 100, 1)

    def exe(self):
        """The executable's path; "" for a kernel thread. Kept after the
        first read, as psutil keeps it (a later exec is not seen)."""
        if self._exe is not None:
            return self._exe
        try:
            exe = self._file(lambda: os.readlink("/proc/%d/exe" % self._pid))
        except FileNotFoundError:
            # No executable: a kernel thread (psutil says "" too).
            if not self.is_running():
                raise NoSuchProcess(self._pid, self._name)
            exe = ""
        if not self.is_running():
            raise NoSuchProcess(self._pid, self._name)
        self._exe = exe
        return exe

    def cmdline(self):
        """The arguments, as the process left them (empty for a kernel
        thread)."""

        def read():
            with open("/proc/%d/cmdline" % self._pid, "rb") as f:
                return f.read()

        data = self._file(read)
        if not data:
            self._gone_or_zombie()
            if not self.is_running():
                raise NoSuchProcess(self._pid, self._name)
            return []
        text = data.decode("utf-8", "surrogateescape")
        if text.endswith("\0"):
            text = text[:-1]
        args = text.split("\0")
        # A process that rewrote its arguments as one line (setproctitle),
        # split as psutil splits it.
        if len(args) == 1 and " " in text:
            args = text.split(" ")
        return args

    def cwd(self):
        try:
            return self._file(lambda: os.readlink("/proc/%d/cwd" % self._pid))
        except FileNotFoundError:
            raise NoSuchProcess(self._pid, self._name)

    def num_fds(self):
        """Open file descriptors."""
        try:
            return self._file(lambda: len(os.listdir("/proc/%d/fd" % self._pid)))
        except FileNotFoundError:
            raise NoSuchProcess(self._pid, self._name)

    def uids(self):
        """Real, effective and saved user ids (``/proc/PID/status``)."""

        def read():
            with open("/proc/%d/status" % self._pid, "rb") as f:
                for line in f:
                    if line.startswith(b"Uid:"):
                        return puids(*(int(x) for x in line.split()[1:4]))
            raise NoSuchProcess(self._pid, self._name)

        try:
            uids = self._file(read)
        except FileNotFoundError:
            raise NoSuchProcess(self._pid, self._name)
        if not self.is_running():
            raise NoSuchProcess(self._pid, self._name)
        return uids

    def username(self):
        """The real user's name; its number when no user has it."""
        uid = self.uids().real
        try:
            return pwd.getpwuid(uid).pw_name
        except KeyError:
            return str(uid)

    def parent(self):
        """The parent, or None when there is none (PID 0's children) or it
        started after this process (its PID was reused)."""
        ppid = self.ppid()
        if ppid == 0:
            return None
        try:
            p = Process(ppid)
        except NoSuchProcess:
            return None
        return p if p._start <= self._start else None

    def parents(self):
        out, p = [], self.parent()
        while p is not None:
            out.append(p)
            p = p.parent()
        return out

    def children(self, recursive=False):
        """The children (with ``recursive``, all descendants), from one
        read of the whole table; a child started before this process is a
        reused PID's, not this one's."""
        if not self.is_running():
            raise NoSuchProcess(self._pid, self._name)
        got = _table("all").snapshot(["pid", "ppid", "start_ticks", "comm"], None)
        pids, ppids, starts = _ints(got["pid"]), _ints(got["ppid"]), _ints(got["start_ticks"])
        names = got["comm"]
        kids = collections.defaultdict(list)
        for i in range(len(pids)):
            kids[ppids[i]].append(i)
        out, todo, seen = [], [(self._pid, self._start)], set()
        while todo:
            pid, start = todo.pop(0)
            for i in kids.get(pid, ()):
                if starts[i] < start or pids[i] in seen:
                    continue
                seen.add(pids[i])
                out.append(Process._known(pids[i], starts[i], names[i]))
                if recursive:
                    todo.append((pids[i], starts[i]))
        return out

    def wait(self, timeout=None):
        """Waits for the process to end: a child's exit code (its status
        reaped, negative for a signal, as psutil), None for another's.
        Waits on a pidfd (no polling) where the kernel has them."""
        if timeout is not None and timeout < 0:
            raise ValueError("timeout must be positive or zero (got %r)" % (timeout,))
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self.is_running():
            return self._reap() if self._is_child() else None
        try:
            fd = os.pidfd_open(self._pid)
        except (AttributeError, OSError):
            fd = None
        # Readable once the process has ended (a zombie runs still).
        exited = fd is not None and bool(select.select([fd], [], [], 0)[0])
        try:
            while self.is_running():
                if self._is_child():
                    code = self._reap(block=False)
                    if code is not _RUNNING:
                        return code
                elif exited:
                    # Ended: a zombie now, for its own parent to reap.
                    return None
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutExpired(timeout, self._pid, self._name)
                if fd is not None:
                    exited = bool(select.select([fd], [], [], left)[0])
                else:
                    time.sleep(min(0.04, left) if left is not None else 0.04)
        finally:
            if fd is not None:
                os.close(fd)
        return self._reap() if self._is_child() else None

    def _is_child(self):
        try:
            return self._row(["ppid"])["ppid"] == os.getpid()
        except NoSuchProcess:
            return False

    def _reap(self, block=True):
        try:
            pid, status = os.waitpid(self._pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return _RUNNING
        if os.WIFSIGNALED(status):
            return -os.WTERMSIG(status)
        return os.WEXITSTATUS(status)

    # Signals -------------------------------------------------------------

    def send_signal(self, sig):
        """Sends ``sig``, unless the PID now names another process."""
        if not self.is_running():
            raise NoSuchProcess(self._pid, self._name)
        try:
            os.kill(self._pid, sig)
        except ProcessLookupError:
            raise NoSuchProcess(self._pid, self._name)
        except PermissionError:
            raise AccessDenied(self._pid, self._name)

    def terminate(self):
        self.send_signal(15)

    def kill(self):
        self.send_signal(9)

    # Several at once -------------------------------------------------------

    def oneshot(self):
        """A context in which the columnar methods share one read."""
        return _OneShot(self)

    def as_dict(self, attrs=None, ad_value=None):
        """The attributes ``attrs`` (all of ``quietstat.ATTRS`` when None) in
        a dict; ``ad_value`` for one the caller may not read (or a zombie
        no longer has)."""
        attrs = _check_attrs(attrs)
        out = {}
        with self.oneshot():
            for a in attrs:
                try:
                    out[a] = getattr(self, a)() if a != "pid" else self._pid
                except (AccessDenied, ZombieProcess):
                    out[a] = ad_value
        return out


_RUNNING = object()

# The columns a read of some columns asks for (with the start time and the
# name), by those columns; None: a oneshot() read's.
_WANT = {}

# The columns a oneshot() read takes (every columnar attribute's).
_ONESHOT = list(dict.fromkeys(c for cols, _ in _FROM_COLUMNS.values() for c in cols))


class _OneShot:
    def __init__(self, p):
        self._p = p
        self._outer = False

    def __enter__(self):
        self._outer = self._p._cache is None
        if self._outer:
            self._p._cache = {}
        return self._p

    def __exit__(self, *exc):
        if self._outer:
            self._p._cache = None
        return False


def _check_attrs(attrs):
    if attrs is None or (not isinstance(attrs, str) and len(attrs) == 0):
        return list(ATTRS)
    if isinstance(attrs, str):
        raise TypeError("attrs is a list of names, not a string (%r)" % (attrs,))
    attrs = list(attrs)
    unknown = [a for a in attrs if a not in ATTRS]
    if unknown:
        raise ValueError("unknown attributes %s; accepted: %s" % (unknown, ", ".join(ATTRS)))
    return attrs


def process_iter(attrs=None, ad_value=None, table=None):
    """Yields a ``Process`` for every process, in PID order, from one read
    of the whole table; with ``attrs`` (a list of names of
    ``quietstat.ATTRS``; an empty one: all), each with an ``info`` dict of
    them, as psutil's ``process_iter`` gives. Attributes the table reads
    are built column by column, none the caller did not ask for; the others
    (exe, cmdline, cwd, ...) are read per process. ``ad_value`` stands for
    an attribute the caller may not read; a process gone meanwhile is left
    out. ``table``: a ``quietstat.Table`` to read with (else the module's
    own)."""
    want_info = attrs is not None
    attrs = _check_attrs(attrs) if want_info else []
    t = _table("all") if table is None else table._t
    cols = ["pid", "start_ticks", "comm"]
    for a in attrs:
        for c in _FROM_COLUMNS.get(a, ((),))[0]:
            if c not in cols:
                cols.append(c)
    raw = t.snapshot(cols, None)
    data = {k: _ints(v) for k, v in raw.items()}
    pids, starts, names = data["pid"], data["start_ticks"], data["comm"]
    n = len(pids)
    if not want_info:
        for i in range(n):
            yield Process._known(pids[i], starts[i], names[i])
        return
    columnar = [a for a in attrs if a in _FROM_COLUMNS]
    files = [a for a in attrs if a not in _FROM_COLUMNS]
    values = [_FROM_COLUMNS[a][1](data) for a in columnar]
    for j, v in enumerate(values):
        if None in v:
            values[j] = [ad_value if x is None else x for x in v]
    infos = [dict(zip(columnar, v)) for v in zip(*values)] if columnar else [{} for _ in range(n)]
    known = Process._known
    for i in range(n):
        p = known(pids[i], starts[i], names[i])
        info = infos[i]
        if files:
            try:
                for a in files:
                    try:
                        info[a] = getattr(p, a)()
                    except (AccessDenied, ZombieProcess):
                        info[a] = ad_value
            except NoSuchProcess:
                continue
        p.info = info
        yield p


def pids():
    """Every PID, in order."""
    return _ints(_table("all").snapshot(["pid"], None)["pid"])


def pid_exists(pid):
    return pid >= 0 and _ints(_table("one").start_times([pid]))[0] != 0


def wait_procs(procs, timeout=None, callback=None):
    """psutil's ``wait_procs``: waits for ``procs`` to end, at most
    ``timeout`` seconds in all; returns (gone, alive), each gone process
    with its exit code (a child's; None for another's) as ``returncode``
    in its ``info``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    gone, alive = [], []
    for p in procs:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            code = p.wait(left)
        except TimeoutExpired:
            alive.append(p)
            continue
        info = getattr(p, "info", None) or {}
        info["returncode"] = code
        p.info = info
        gone.append(p)
        if callback is not None:
            callback(p)
    return gone, alive


__all__ = [
    "STATUS_RUNNING",
    "STATUS_SLEEPING",
    "STATUS_DISK_SLEEP",
    "STATUS_STOPPED",
    "STATUS_TRACING_STOP",
    "STATUS_ZOMBIE",
    "STATUS_DEAD",
    "STATUS_WAKE_KILL",
    "STATUS_WAKING",
    "STATUS_IDLE",
    "STATUS_PARKED",
    "Process",
    "process_iter",
    "pids",
    "pid_exists",
    "wait_procs",
    "NoSuchProcess",
    "ZombieProcess",
    "AccessDenied",
    "TimeoutExpired",
    "ATTRS",
    "pcputimes",
    "pmem",
    "pio",
    "pctxsw",
    "puids",
]
