#!/usr/bin/env bash
# The agent with its defaults (history on), then 10,000 cgroups made at
# once in one hierarchy (100 slices of 99 scopes, by 101 mkdir calls: a
# second or two, with no burst of processes beside it; removed at the
# end, also on failure): the agent's CPU (every thread's schedstat run
# time) over the minute before, the first minute after the mkdirs began
# and the minute after that; the cgroups source's interval and the log's
# cgroup lines.
# Usage: burst.sh QUIETSTAT [HIERARCHY] (default: pids)
set -euo pipefail
bin=$1
dir=/sys/fs/cgroup/${2:-pids}/qs-burst-$$
work=$(mktemp -d)
agent=
cleanup() {
  [ -z "$agent" ] || { kill -TERM "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; }
  if [ -d "$dir" ]; then
    find "$dir" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$dir" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
port=9612
"$bin" agent --store "$work/store" --shm-path "$work/shm/snapshot" \
  --listen 127.0.0.1:$port > "$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 100); do curl -sf 127.0.0.1:$port/metrics > /dev/null && break; sleep 0.1; done
cpu() { cat /proc/$agent/task/*/schedstat | awk '{s += $1} END {printf "%.0f\n", s}'; }
pct() { echo "scale=3; ($2 - $1) * 100 / 60000000000" | bc; }
threads() { for t in /proc/$agent/task/*; do printf "%s=%s " "$(cat $t/comm)" "$(awk '{print $1}' $t/schedstat)"; done; echo; }
sleep 30
c0=$(cpu); sleep 60; c1=$(cpu)
echo "before: $(pct "$c0" "$c1")% of a core over 60 s"
echo "threads (ns): $(threads)"
t=$(date +%s%N); c2=$(cpu)
mkdir "$dir"
mkdir "$dir"/s{0..99}.slice
for s in $(seq 0 99); do mkdir "$dir/s$s.slice"/c{0..98}.scope; done
echo "made $(find "$dir" -mindepth 1 -type d | wc -l) in $(( ($(date +%s%N) - t) / 1000000 )) ms"
sleep "$(echo "scale=3; 60 - ($(date +%s%N) - $t) / 1000000000" | bc)"
c3=$(cpu); echo "threads (ns): $(threads)"; sleep 60; c4=$(cpu); echo "threads (ns): $(threads)"
echo "first minute after: $(pct "$c2" "$c3")% of a core"
echo "second minute after: $(pct "$c3" "$c4")% of a core"
curl -s 127.0.0.1:$port/metrics | grep -E '^quietstat_source_(interval_seconds|reads_total|cpu_seconds_total)\{source="cgroups"' || true
grep -E "cgroups" "$work/agent.log" | sed 's/^/log: /' || true
