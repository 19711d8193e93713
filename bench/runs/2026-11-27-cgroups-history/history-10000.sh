#!/usr/bin/env bash
# What recording the cgroups costs, beside 10,000 cgroups made in every
# cgroup hierarchy of this machine (100 slices of 99 scopes, removed at
# the end, also on failure): the same agent, the cgroups source on every
# 10 s and the overhead budget off (every walk taken), with and without
# its store, one at a time, each for WINDOW_S after a 20 s warm-up: the
# agent's CPU (utime + stime of /proc/PID/stat, every thread) and RSS;
# then, for the recording one, what its day file holds for the cgroups
# (walks, raw and stored bytes, keyframe and delta blocks, rows of
# `cgroup`) and how long `report --source cgroup` takes over it.
# Usage: history-10000.sh WINDOW_S QUIETSTAT
set -euo pipefail
window=$1
bin=$2
agent=
stop_agent() {
  if [ -n "$agent" ]; then
    kill -TERM "$agent" 2>/dev/null || true
    wait "$agent" 2>/dev/null || true
    agent=
  fi
}
. "$(dirname "$0")/../2026-11-27-cgroups-thread/cgroups-10000.sh"
extra_cleanup() { stop_agent; }
make_cgroups
echo "window_s=$window"
port=9612
tick_ns=$(( 1000000000 / $(getconf CLK_TCK) ))
cpu() { awk -v t="$tick_ns" '{sub(/.*\) /, ""); printf "%.0f\n", ($12 + $13) * t}' /proc/$agent/stat; }
conf='overhead_budget_pct = 0\n[sources.cgroups]\nenabled = true\n'
for store in --no-store "--store $work/store"; do
  rm -rf "$work/run"; mkdir -p "$work/run"
  printf '%b' "$conf" > "$work/run/agent.toml"
  # shellcheck disable=SC2086
  "$bin" agent --config "$work/run/agent.toml" $store \
    --shm-path "$work/run/shm/snapshot" --listen 127.0.0.1:$port > "$work/run/agent.log" 2>&1 &
  agent=$!
  sleep 20
  t0=$(date +%s%N); c0=$(cpu)
  sleep "$window"
  t1=$(date +%s%N); c1=$(cpu)
  echo "== ${store%% *}"
  echo "cpu_pct=$(echo "scale=4; ($c1 - $c0) * 100 / ($t1 - $t0)" | bc) rss_mib=$(awk '/VmRSS/{printf "%.1f", $2/1024}' /proc/$agent/status)"
  curl -s 127.0.0.1:$port/metrics | grep -E '^quietstat_source_reads_total\{source="cgroups"|^quietstat_store_(write_seconds_total|written_bytes_total\{source="cgroups"|flushes_total)|^quietstat_cgroups ' || true
  stop_agent
done
db=$(ls "$work"/store/*.qsdb | tail -1)
echo "== day file"
sqlite3 "$db" "select 'usage', source, samples, raw_bytes, stored_bytes, stored_bytes / samples as stored_per_walk from usage where source = 'cgroups'"
sqlite3 "$db" "select 'blocks key=' || key, count(*), sum(samples), sum(length(body)), sum(length(body)) / sum(samples) as bytes_per_walk from block where kind = 3 group by key"
sqlite3 "$db" "select 'cgroup_rows', count(*) from cgroup"
echo "== reading back"
s=$(date +%s%N)
"$bin" report --store "$work/store" --source cgroup --from -10m --interval 1m --top 5 > "$work/report.txt"
e=$(date +%s%N)
echo "report_cgroup_10m_ms=$(( (e - s) / 1000000 )) rows=$(grep -c '/' "$work/report.txt")"
head -12 "$work/report.txt" | sed 's/^/report: /'
