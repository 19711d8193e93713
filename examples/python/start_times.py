"""The kernel proposal's experiment from Python: the start times of every
process through psutil-style per-process reads of /proc/PID/stat, then in
one quietstat call, alternating; and a snapshot of the attributes a
monitoring script reads against psutil's process_iter.

    python examples/python/start_times.py [ROUNDS [THREADS]]
"""

import os
import statistics
import sys
import time

import quietstat

try:
    import psutil
except ImportError:
    psutil = None


def proc_start(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return 0
    return int(text[text.rindex(")") + 2 :].split()[19])


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    t0 = time.perf_counter()
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    table = quietstat.Table(threads=threads)
    open_ms = (time.perf_counter() - t0) * 1e3
    naive_ms, vec_ms, snap_ms, psutil_ms = [], [], [], []
    attrs = ["pid", "ppid", "name", "status", "cpu_times", "create_time", "memory_info", "num_threads"]
    cols = ["pid", "ppid", "comm", "state", "utime_ns", "stime_ns", "start_ticks", "rss_bytes", "threads"]
    for _ in range(rounds):
        t0 = time.perf_counter()
        naive = [proc_start(p) for p in pids]
        naive_ms.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        ours = table.start_times(pids)
        vec_ms.append((time.perf_counter() - t0) * 1e3)
        if psutil is not None:
            t0 = time.perf_counter()
            list(psutil.process_iter(attrs))
            psutil_ms.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        table.snapshot(cols)
        snap_ms.append((time.perf_counter() - t0) * 1e3)
    differ = sum(1 for a, b in zip(naive, list(ours)) if a and b and a != b)
    med = statistics.median
    print("pids %d rounds %d threads %d backend %s" % (len(pids), rounds, threads, table.backend))
    print("open_ms %.1f" % open_ms)
    print("naive_proc_loop_ms_median %.2f" % med(naive_ms))
    print("start_times_ms_median %.2f ratio %.1f" % (med(vec_ms), med(naive_ms) / med(vec_ms)))
    if psutil_ms:
        print("psutil_process_iter_ms_median %.2f" % med(psutil_ms))
        print("snapshot_ms_median %.2f ratio %.1f" % (med(snap_ms), med(psutil_ms) / med(snap_ms)))
    print("disagreements %d" % differ)


main()
