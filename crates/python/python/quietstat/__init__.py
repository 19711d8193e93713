"""The process table in one pass: the BPF task walk where the caller may
load it (root, or CAP_BPF with CAP_PERFMON), /proc otherwise.

    import quietstat
    t = quietstat.Table()
    t.start_times([1, 2, 3])          # clock ticks since boot, 0: no process
    t.snapshot(["pid", "comm", "rss_bytes"])   # columns, one row per process
    for p in quietstat.process_iter(["pid", "name", "cpu_times"]):
        p.info["cpu_times"].user      # psutil's names, units and types
    quietstat.Process(1).cmdline()    # psutil's Process, its exceptions

Columns are NumPy arrays when NumPy is importable (or ``numpy=True``),
lists otherwise (``numpy=False``); NumPy is never required.
"""

import array
import operator

from ._quietstat import COLUMNS, DeniedError, Error, MalformedError, NotFoundError
from ._quietstat import Table as _Table
from ._process import *  # noqa: F403 (psutil's names, listed in _process.__all__)
from ._process import (
    ATTRS,
    AccessDenied,
    NoSuchProcess,
    Process,
    TimeoutExpired,
    ZombieProcess,
    pcputimes,
    pctxsw,
    pid_exists,
    pids,
    pio,
    pmem,
    process_iter,
    puids,
    wait_procs,
)
from ._process import __all__ as _process_all

__all__ = [
    "Table",
    "Error",
    "NotFoundError",
    "DeniedError",
    "MalformedError",
    "COLUMNS",
] + _process_all

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
