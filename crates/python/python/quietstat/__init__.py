"""The process table in one pass: the BPF task walk where the caller may
load it (root, or CAP_BPF with CAP_PERFMON), /proc otherwise.

    import quietstat
    t = quietstat.Table()
    t.start_times([1, 2, 3])          # clock ticks since boot, 0: no process
    t.snapshot(["pid", "comm", "rss_bytes"])   # columns, one row per process
    for p in quietstat.process_iter(["pid", "name", "cpu_times"]):
        ...                           # psutil's names and units

Columns are NumPy arrays when NumPy is importable (or ``numpy=True``),
lists otherwise (``numpy=False``); NumPy is never required.
"""

import array
import collections
import operator
import os

from ._quietstat import COLUMNS, DeniedError, Error, MalformedError, NotFoundError
from ._quietstat import Table as _Table

__all__ = [
    "Table",
    "Error",
    "NotFoundError",
    "DeniedError",
    "MalformedError",
    "COLUMNS",
    "process_iter",
    "ATTRS",
]

def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


class Table:
    """An open process table; its backend is loaded once.

    backend: "auto" (BPF where allowed, else /proc), "bpf" or "procfs".
    numpy: None (arrays when NumPy imports), True (arrays) or False (lists).
    threads: 0 or 1, the calling thread alone; up to 15, a read split
    between helper threads on the other CPUs the caller may run on.
    agent: None, or a running agent's snapshot ("" for its default,
    /run/quietstat/snapshot): snapshot() is served from the agent's table
    when it holds the fields asked and is no older than agent_max_age_ms
    (0: the agent's process interval plus a second), else read as without
    it; served_by and agent_note say which and why. start_times() always
    reads the kernel.
    """

    def __init__(self, backend="auto", proc_root="/proc", sys_root="/sys", numpy=None, threads=0,
                 agent=None, agent_max_age_ms=0):
        if numpy not in (None, True, False):
            raise ValueError("numpy: None, True or False")
        np = _numpy() if numpy is not False else None
        if numpy is True and np is None:
            raise ValueError("numpy=True, but NumPy does not import")
        self._np = np
        self._t = _Table(backend, proc_root, sys_root, threads, agent, agent_max_age_ms)

    @property
    def backend(self):
        """ "bpf" or "procfs"."""
        return self._t.backend

    @property
    def served_by(self):
        """"agent" when the last snapshot came from the agent's table, else "self"."""
        return self._t.served_by

    @property
    def agent_note(self):
        """Why the last snapshot did not come from the agent though asked."""
        return self._t.agent_note

    @property
    def backend_note(self):
        """Why "auto" did not take BPF ("" when it did)."""
        return self._t.backend_note

    def _column(self, packed):
        if self._np is not None:
            return self._np.frombuffer(packed, dtype=self._np.int64)
        return array.array("q", packed).tolist()

    def start_times(self, pids):
        """Start time of each PID in clock ticks since boot (/proc/PID/stat
        field 22), 0 for a PID that is no process, in one pass. A PID that
        is not an integer is a TypeError."""
        return self._column(self._t.start_times([operator.index(p) for p in pids]))

    def snapshot(self, fields=("pid", "comm", "state", "utime_ns", "stime_ns", "rss_bytes"), pids=None):
        """The columns ``fields`` (names in ``quietstat.COLUMNS``, as ``ps``
        and the agent's JSON API name them) for every process, or for those
        of ``pids`` that are processes, in PID order. A numeric value the
        reader may not read is -1; a text one None."""
        fields = list(fields)
        if pids is not None:
            pids = [operator.index(p) for p in pids]
        cols = self._t.snapshot(fields, pids)
        return {k: (self._column(v) if isinstance(v, bytes) else v) for k, v in cols.items()}


# psutil's shapes for the attributes both have.
pcputimes = collections.namedtuple("pcputimes", ["user", "system"])
pmem = collections.namedtuple("pmem", ["rss", "vms"])
pio = collections.namedtuple(
    "pio", ["read_count", "write_count", "read_bytes", "write_bytes", "read_chars", "write_chars"]
)
pctxsw = collections.namedtuple("pctxsw", ["voluntary", "involuntary"])

_STATUS = {
    "R": "running",
    "S": "sleeping",
    "D": "disk-sleep",
    "T": "stopped",
    "t": "tracing-stop",
    "Z": "zombie",
    "X": "dead",
    "x": "dead",
    "K": "wake-kill",
    "W": "waking",
    "I": "idle",
    "P": "parked",
}

# attribute -> (columns it needs, value from one row's columns)
ATTRS = {
    "pid": (["pid"], lambda r: r["pid"]),
    "ppid": (["ppid"], lambda r: r["ppid"]),
    "name": (["comm"], lambda r: r["comm"]),
    "status": (["state"], lambda r: _STATUS.get(r["state"], r["state"])),
    "create_time": (["start_ticks"], lambda r: _boot_time() + r["start_ticks"] / _TICKS),
    "cpu_times": (["utime_ns", "stime_ns"], lambda r: pcputimes(r["utime_ns"] / 1e9, r["stime_ns"] / 1e9)),
    "memory_info": (["rss_bytes", "vsize_bytes"], lambda r: pmem(r["rss_bytes"], r["vsize_bytes"])),
    "num_threads": (["threads"], lambda r: r["threads"]),
    "nice": (["nice"], lambda r: r["nice"]),
    "cpu_num": (["cpu"], lambda r: r["cpu"]),
    "io_counters": (
        ["syscr", "syscw", "read_bytes", "write_bytes", "rchar", "wchar"],
        lambda r: None
        if r["syscr"] < 0
        else pio(r["syscr"], r["syscw"], r["read_bytes"], r["write_bytes"], r["rchar"], r["wchar"]),
    ),
    "num_ctx_switches": (
        ["voluntary_ctxsw", "involuntary_ctxsw"],
        lambda r: None if r["voluntary_ctxsw"] < 0 else pctxsw(r["voluntary_ctxsw"], r["involuntary_ctxsw"]),
    ),
}

_TICKS = os.sysconf("SC_CLK_TCK")
_BOOT = []


def _boot_time():
    """Boot time in seconds since the epoch, as psutil reads it (btime)."""
    if not _BOOT:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("btime"):
                    _BOOT.append(float(line.split()[1]))
                    break
    return _BOOT[0]


def process_iter(attrs=None, table=None):
    """Yields one dict per process with psutil's attribute names and units
    (the attributes in ``quietstat.ATTRS``; all of them when ``attrs`` is
    None), from one snapshot."""
    attrs = list(ATTRS) if attrs is None else list(attrs)
    unknown = [a for a in attrs if a not in ATTRS]
    if unknown:
        raise ValueError("unknown attributes %s; accepted: %s" % (unknown, ", ".join(ATTRS)))
    if table is None:
        table = Table(numpy=False)
    cols = []
    for a in attrs:
        for c in ATTRS[a][0]:
            if c not in cols:
                cols.append(c)
    if "pid" not in cols:
        cols.append("pid")
    raw = table._t.snapshot(cols, None)
    data = {k: (array.array("q", v).tolist() if isinstance(v, bytes) else v) for k, v in raw.items()}
    for i in range(len(data["pid"])):
        row = {c: data[c][i] for c in cols}
        yield {a: ATTRS[a][1](row) for a in attrs}
