#!/usr/bin/env bash
# The agent with its defaults beside 10,000 cgroups made in every cgroup
# hierarchy of this machine (100 slices of 100, removed at the end, also on
# failure): its CPU (schedstat) over a window after a warm-up, RSS, and the
# log (budget lines). Usage: agent-10000.sh QUIETSTAT WINDOW_S
set -euo pipefail
bin=$1 window=$2
work=$(mktemp -d)
name=qs-agent-bench-$$
dirs=()
for h in /sys/fs/cgroup/*/; do
  [ -e "$h/cgroup.procs" ] && dirs+=("$h$name")
done
agent=
cleanup() {
  [ -n "$agent" ] && kill -TERM "$agent" 2>/dev/null && wait "$agent" 2>/dev/null || true
  for d in "${dirs[@]}"; do
    [ -d "$d" ] || continue
    find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$d" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
for d in "${dirs[@]}"; do
  mkdir "$d"
  for s in $(seq 0 99); do
    mkdir "$d/s$s.slice"
    for c in $(seq 0 98); do mkdir "$d/s$s.slice/c$c.scope"; done
  done
done
"$bin" agent --store "$work/store" --shm-path "$work/shm/snapshot" --listen 127.0.0.1:9611 > "$work/agent.log" 2>&1 &
agent=$!
sleep 30
cpu() { awk '{print $1}' /proc/$agent/schedstat; }
t0=$(date +%s%N); c0=$(cpu)
sleep "$window"
t1=$(date +%s%N); c1=$(cpu)
echo "cgroups_per_hierarchy=10000 hierarchies=${#dirs[@]} window_s=$window cpu_pct=$(echo "scale=4; ($c1 - $c0) * 100 / ($t1 - $t0)" | bc) rss_mib=$(awk '/VmRSS/{printf "%.1f", $2/1024}' /proc/$agent/status)"
curl -s 127.0.0.1:9611/metrics | grep -E '^quietstat_source_(configured_interval|interval|read_seconds_total|reads_total)[^ ]*source="cgroups"|^quietstat_cgroups' || true
grep -v '^$' "$work/agent.log" | grep -iE "cgroups|budget|slow" || true
