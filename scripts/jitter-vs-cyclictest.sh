#!/usr/bin/env bash
# quietstat jitter beside cyclictest (Debian's rt-tests) on one CPU, in
# many short rounds alternated back to back, so that the machine's slow
# drifts fall on both tools alike. Prints each round with the host's steal
# time on the CPU during each tool's run (/proc/stat), then per tool the
# median over rounds of avg, p50 and p99 and their ratios: over all rounds,
# and over the calm rounds (at most 20 ms, two clock ticks, of steal during
# either tool's run), the nearest a shared host comes to an idle machine.
#   scripts/jitter-vs-cyclictest.sh [ROUNDS] [SECONDS] [CPU]
# Needs root (SCHED_FIFO 95), cyclictest (apt-get install rt-tests) and a
# release build (cargo build --release).
set -euo pipefail
rounds=${1:-12} secs=${2:-10} cpu=${3:-1}
qs=${QUIETSTAT:-target/release/quietstat}
command -v cyclictest >/dev/null || { echo "cyclictest missing: apt-get install rt-tests" >&2; exit 1; }
[ -x "$qs" ] || { echo "$qs missing: cargo build --release" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
steal() { awk -v c="cpu$cpu" '$1 == c { print $9 }' /proc/stat; }
for r in $(seq "$rounds"); do
    "$qs" jitter --cpu "$cpu" --interval 1ms --duration "${secs}s" --priority 95 \
        --format json > "$out/q$r.json"
    s0=$(steal)
    # -N: cyclictest keeps nanoseconds (by default it truncates every sample
    # and its average to whole microseconds, about 1 us low on the average);
    # -h: a histogram of 1 ns buckets up to 1 ms, beyond it overflows.
    cyclictest -m -q -N -p 95 -i 1000 -a "$cpu" -t 1 -D "$secs" -h 1000000 > "$out/c$r.txt"
    echo $(( ($(steal) - s0) * 10 )) > "$out/s$r.txt"
done
python3 - "$out" "$rounds" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rows = {"quietstat jitter": [], "cyclictest": []}
for r in range(1, rounds + 1):
    run = json.load(open(f"{out}/q{r}.json"))["runs"][0]
    s = run["summary"]
    rows["quietstat jitter"].append((s["samples"], s["avg_us"], s["p50_us"], s["p99_us"], s["max_us"], run["steal_ms"]))
    hist, avg, mx, over = [], None, None, 0
    for line in open(f"{out}/c{r}.txt"):
        if line.startswith("# Avg Latencies:"):
            avg = float(line.split(":")[1]) / 1e3
        elif line.startswith("# Max Latencies:"):
            mx = float(line.split(":")[1]) / 1e3
        elif line.startswith("# Histogram Overflows:"):
            over = int(line.split(":")[1])
        elif not line.startswith("#") and line.strip():
            ns, n = line.split()[:2]
            if n != "000000":
                hist.append((int(ns) / 1e3, int(n)))
    total = sum(n for _, n in hist) + over
    def q(p):
        acc = 0
        for us, n in hist:
            acc += n
            if acc >= p * total:
                return us
        return float("inf")
    rows["cyclictest"].append((total, avg, q(0.5), q(0.99), mx, int(open(f"{out}/s{r}.txt").read())))
print(f"{'round':>5} {'tool':<17} {'samples':>8} {'avg':>8} {'p50':>8} {'p99':>8} {'max':>9} {'steal ms':>9}")
for r in range(rounds):
    for tool, v in rows.items():
        n, a, p50, p99, m, st = v[r]
        print(f"{r + 1:>5} {tool:<17} {n:>8} {a:>8.1f} {p50:>8.1f} {p99:>8.1f} {m:>9.0f} {st:>9}")
calm = [r for r in range(rounds) if all(v[r][5] <= 20 for v in rows.values())]
for name, pick in (("all", range(rounds)), ("calm", calm)):
    print()
    if not pick:
        print(f"no {name} rounds")
        continue
    med = {t: [statistics.median(v[r][i] for r in pick) for i in (1, 2, 3)] for t, v in rows.items()}
    for t, (a, p50, p99) in med.items():
        print(f"median over {len(pick)} {name} rounds, {t:<17}: avg {a:.1f} us, p50 {p50:.1f} us, p99 {p99:.1f} us")
    q, c = med["quietstat jitter"], med["cyclictest"]
    print(f"quietstat / cyclictest ({name}): avg {q[0] / c[0]:.3f}, p50 {q[1] / c[1]:.3f}, p99 {q[2] / c[2]:.3f}")
EOF
