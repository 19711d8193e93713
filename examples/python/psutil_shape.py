"""quietstat's psutil shape against psutil, alternating in one run:
``process_iter`` with the attributes a monitoring script reads, over every
process, and ``Process`` method by method on one process (this one's
child, in sleep). Prints medians and the ratio psutil / quietstat (above 1:
quietstat is faster).

    python examples/python/psutil_shape.py [ROUNDS [CALLS]]
"""

import statistics
import subprocess
import sys
import time

import psutil

import quietstat

ATTRS = ["pid", "ppid", "name", "status", "cpu_times", "create_time", "memory_info", "num_threads"]
METHODS = [
    "name",
    "exe",
    "cmdline",
    "status",
    "ppid",
    "create_time",
    "cpu_times",
    "memory_info",
    "memory_percent",
    "num_threads",
    "io_counters",
    "num_ctx_switches",
    "nice",
    "uids",
    "username",
    "cwd",
    "num_fds",
    "is_running",
    "parent",
]


def per_call_us(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    ours_ms, theirs_ms = [], []
    n = 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        n = len(list(psutil.process_iter(ATTRS)))
        theirs_ms.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        n = len(list(quietstat.process_iter(ATTRS)))
        ours_ms.append((time.perf_counter() - t0) * 1e3)
    med = statistics.median
    print("processes %d rounds %d" % (n, rounds))
    print(
        "process_iter_ms_median quietstat %.2f psutil %.2f ratio %.1f"
        % (med(ours_ms), med(theirs_ms), med(theirs_ms) / med(ours_ms))
    )
    child = subprocess.Popen(["sleep", "600"])
    try:
        time.sleep(0.05)
        ours, theirs = quietstat.Process(child.pid), psutil.Process(child.pid)
        worst = 0.0
        for m in METHODS:
            a, b = [], []
            for _ in range(3):
                b.append(per_call_us(getattr(theirs, m), calls))
                a.append(per_call_us(getattr(ours, m), calls))
            ratio = med(a) / med(b)
            worst = max(worst, ratio)
            print("method %-16s quietstat_us %7.2f psutil_us %7.2f quietstat/psutil %.2f" % (m, med(a), med(b), ratio))
        print("method_worst_ratio %.2f" % worst)
    finally:
        child.kill()
        child.wait()


main()
