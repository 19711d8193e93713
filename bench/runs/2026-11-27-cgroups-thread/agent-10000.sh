#!/usr/bin/env bash
# Agents beside 10,000 cgroups made in every cgroup hierarchy of this
# machine (100 slices of 99 scopes, removed at the end, also on failure),
# the cgroups source on, one agent at a time, each for WINDOW_S after a
# 20 s warm-up:
#   - for each binary given, with the overhead budget off (every source at
#     its configured interval): the age of stat's data sampled every 100 ms
#     (a walk on the sampler's thread holds stat back while it lasts), the
#     CPU of every thread of the agent (utime + stime of /proc/PID/stat)
#     and the cgroups source's reads;
#   - each binary with its defaults (the budget on): CPU, RSS, the
#     budget's log lines;
#   - the first binary's scrape: bytes and series with the default export,
#     and with every cgroup exported (depth 32, max 100000).
# Usage: agent-10000.sh WINDOW_S QUIETSTAT [BASELINE_QUIETSTAT]
set -euo pipefail
window=$1
shift
agent=
stop_agent() {
  if [ -n "$agent" ]; then
    kill -TERM "$agent" 2>/dev/null || true
    wait "$agent" 2>/dev/null || true
    agent=
  fi
}
. "$(dirname "$0")/cgroups-10000.sh"
extra_cleanup() { stop_agent; }
make_cgroups
echo "window_s=$window"
port=9611
start() { # BIN CONFIG_TEXT
  rm -rf "$work/run"; mkdir -p "$work/run"
  printf '%b' "$2" > "$work/run/agent.toml"
  "$1" agent --config "$work/run/agent.toml" --store "$work/run/store" \
    --shm-path "$work/run/shm/snapshot" --listen 127.0.0.1:$port > "$work/run/agent.log" 2>&1 &
  agent=$!
  for _ in $(seq 100); do curl -sf 127.0.0.1:$port/metrics > /dev/null && return; sleep 0.1; done
  echo "agent did not serve"; exit 1
}
metric() { curl -s 127.0.0.1:$port/metrics | awk -v m="$1" '$1 == m {print $2}'; }
# Every thread's CPU, in ns (clock ticks of 10 ms: over a minute, 0.02%).
tick_ns=$(( 1000000000 / $(getconf CLK_TCK) ))
cpu() { awk -v t="$tick_ns" '{sub(/.*\) /, ""); printf "%.0f\n", ($12 + $13) * t}' /proc/$agent/stat; }
on='[sources.cgroups]\nenabled = true\n'
for bin in "$@"; do
  start "$bin" "overhead_budget_pct = 0\n$on"
  sleep 20
  t0=$(date +%s%N); c0=$(cpu)
  end=$(( $(date +%s) + window ))
  ages=$work/ages
  : > "$ages"
  while [ "$(date +%s)" -lt "$end" ]; do
    metric 'quietstat_source_age_seconds{source="stat"}' >> "$ages"
    sleep 0.1
  done
  t1=$(date +%s%N); c1=$(cpu)
  echo "== $bin, budget off"
  echo "cpu_pct=$(echo "scale=4; ($c1 - $c0) * 100 / ($t1 - $t0)" | bc) stat_age_samples=$(wc -l < "$ages") stat_age_max_s=$(sort -g "$ages" | tail -1) stat_age_median_s=$(sort -g "$ages" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') stat_ages_over_1.1s=$(awk '$1 > 1.1' "$ages" | wc -l)"
  curl -s 127.0.0.1:$port/metrics | grep -E '^quietstat_source_(read_seconds_total|reads_total|cpu_seconds_total)\{source="cgroups"' || true
  stop_agent
done
for bin in "$@"; do
echo "== $bin, defaults (budget on)"
start "$bin" "$on"
sleep 30
t0=$(date +%s%N); c0=$(cpu)
sleep "$window"
t1=$(date +%s%N); c1=$(cpu)
echo "cpu_pct=$(echo "scale=4; ($c1 - $c0) * 100 / ($t1 - $t0)" | bc) rss_mib=$(awk '/VmRSS/{printf "%.1f", $2/1024}' /proc/$agent/status)"
curl -s 127.0.0.1:$port/metrics | grep -E '^quietstat_source_(interval_seconds|read_seconds_total|reads_total)\{source="(cgroups|stat)"|^quietstat_cgroups' || true
curl -s 127.0.0.1:$port/metrics > "$work/scrape"
echo "scrape_bytes=$(wc -c < "$work/scrape") container_series=$(grep -c '^container_' "$work/scrape") cgroup_series=$(grep -cE '^(container_|quietstat_cgroup)' "$work/scrape")"
grep -iE "slow|budget" "$work/run/agent.log" | grep -E "cgroups|stat:" | sed 's/^/log: /' || true
stop_agent
done
bin=$1
echo "== $bin, every cgroup exported"
start "$bin" "$on[cgroup_metrics]\ndepth = 32\nmax = 100000\n"
sleep 5
curl -s 127.0.0.1:$port/metrics > "$work/scrape"
n=$(awk '$1 == "quietstat_cgroups_exported" {print $2}' "$work/scrape")
s=$(grep -cE '^(container_|quietstat_cgroup_tasks)' "$work/scrape")
echo "exported=$n scrape_bytes=$(wc -c < "$work/scrape") cgroup_series=$s series_per_cgroup=$(echo "scale=2; $s / $n" | bc)"
stop_agent
