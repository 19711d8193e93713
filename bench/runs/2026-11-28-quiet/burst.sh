#!/usr/bin/env bash
# The agent with its defaults (history on), then 10,000 cgroups made at
# once in every cgroup hierarchy of this machine (100 slices of 99 scopes,
# removed at the end, also on failure): the agent's CPU (every thread's
# schedstat run time) over the minute before, the first minute after the
# cgroups were made (counted from the end of the mkdirs), and the minute
# after that; the cgroups source's interval and the log's cgroup lines.
# Usage: burst.sh QUIETSTAT [HIERARCHY]: with HIERARCHY (e.g. pids), the
# 10,000 cgroups are made in that one only.
set -euo pipefail
bin=$1
only=${2:-}
. "$(dirname "$0")/../2026-11-27-cgroups-thread/cgroups-10000.sh"
if [ -n "$only" ]; then dirs=("/sys/fs/cgroup/$only/$name"); fi
agent=
# The agent stopped on exit, before the cgroups go.
extra_cleanup() {
  [ -z "$agent" ] || { kill -TERM "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; }
  agent=
}
port=9612
mkdir -p "$work/run"
"$bin" agent --store "$work/run/store" --shm-path "$work/run/shm/snapshot" \
  --listen 127.0.0.1:$port > "$work/run/agent.log" 2>&1 &
agent=$!
for _ in $(seq 100); do curl -sf 127.0.0.1:$port/metrics > /dev/null && break; sleep 0.1; done
cpu() { cat /proc/$agent/task/*/schedstat | awk '{s += $1} END {printf "%.0f\n", s}'; }
pct() { echo "scale=3; ($2 - $1) * 100 / 60000000000" | bc; }
threads() { for t in /proc/$agent/task/*; do printf "%s=%s " "$(cat $t/comm)" "$(awk '{print $1}' $t/schedstat)"; done; echo; }
sleep 30
c0=$(cpu); sleep 60; c1=$(cpu)
echo "before: $(pct "$c0" "$c1")% of a core over 60 s"
t=$(date +%s%N); make_cgroups; echo "made in $(( ($(date +%s%N) - t) / 1000000 )) ms"
c2=$(cpu); echo "threads (ns): $(threads)"; sleep 60; c3=$(cpu); echo "threads (ns): $(threads)"; sleep 60; c4=$(cpu); echo "threads (ns): $(threads)"
echo "first minute after: $(pct "$c2" "$c3")% of a core"
echo "second minute after: $(pct "$c3" "$c4")% of a core"
curl -s 127.0.0.1:$port/metrics | grep -E '^quietstat_source_(interval_seconds|reads_total|cpu_seconds_total)\{source="cgroups"' || true
grep -E "cgroups" "$work/run/agent.log" | sed 's/^/log: /' || true
