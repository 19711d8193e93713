#!/usr/bin/env bash
# What a consumer asking for fresh data gets beside 10,000 cgroups in every
# cgroup hierarchy (made and removed by cgroups-10000.sh), each binary with
# its defaults (the cgroups source on, the overhead budget on), one agent
# at a time: after a 30 s warm-up, for WINDOW_S, a request every 0.5 s for
# /proc/stat no older than 500 ms; counts the answers declined over the
# overhead budget (X-Data-Fresh), the agent's CPU over the window and the
# cgroup walks made in it.
# Usage: demand-10000.sh WINDOW_S QUIETSTAT [QUIETSTAT ...]
set -euo pipefail
window=$1
shift
. "$(dirname "$0")/../2026-11-27-cgroups-thread/cgroups-10000.sh"
agent=
# The agent stopped after each binary, and on exit before the cgroups go.
extra_cleanup() {
  [ -z "$agent" ] || { kill -TERM "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; }
  agent=
}
make_cgroups
port=9612
echo "window_s=$window"
tick_ns=$(( 1000000000 / $(getconf CLK_TCK) ))
cpu() { awk -v t="$tick_ns" '{sub(/.*\) /, ""); printf "%.0f\n", ($12 + $13) * t}' /proc/$agent/stat; }
metric() { curl -s 127.0.0.1:$port/metrics | awk -v m="$1" '$1 == m {print $2}'; }
for bin in "$@"; do
  rm -rf "$work/run"; mkdir -p "$work/run"
  "$bin" agent --no-store --shm-path "$work/run/shm/snapshot" \
    --listen 127.0.0.1:$port > "$work/run/agent.log" 2>&1 &
  agent=$!
  for _ in $(seq 100); do curl -sf 127.0.0.1:$port/metrics > /dev/null && break; sleep 0.1; done
  sleep 30
  w0=$(metric 'quietstat_source_reads_total{source="cgroups"}')
  t0=$(date +%s%N); c0=$(cpu)
  end=$(( $(date +%s) + window ))
  asked=0; over=0
  while [ "$(date +%s)" -lt "$end" ]; do
    h=$(curl -s -D - -o /dev/null "127.0.0.1:$port/api/v1/snapshot?sources=stat&max_age_ms=500" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-data-fresh" {print $2}')
    asked=$((asked + 1))
    case "$h" in *"over overhead budget"*) over=$((over + 1));; esac
    sleep 0.5
  done
  t1=$(date +%s%N); c1=$(cpu)
  w1=$(metric 'quietstat_source_reads_total{source="cgroups"}')
  echo "== $bin"
  echo "asked=$asked declined_over_budget=$over cgroup_walks=$(echo "$w1 - $w0" | bc) cpu_pct=$(echo "scale=4; ($c1 - $c0) * 100 / ($t1 - $t0)" | bc)"
  curl -s 127.0.0.1:$port/metrics | grep -E '^quietstat_source_(interval_seconds|demand_reads_total)\{source="(cgroups|stat)"' || true
  extra_cleanup
done
