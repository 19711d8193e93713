#!/usr/bin/env bash
# What the agent causes on CPU 1 (playing the isolated CPU) while it walks
# 10,000 cgroups in every hierarchy: the agent pinned to CPU 0
# (`--housekeeping-cpus 0`), its overhead budget off and the cgroups source
# every second (walks back to back), `quietstat noise --cpus 1 --pid AGENT`
# over WINDOW_S; then the same agent with the cgroups source off, the
# baseline. JSON lines: the pid's part of each report.
# Usage: noise-10000.sh QUIETSTAT WINDOW_S
set -euo pipefail
bin=$1 window=$2
agent=
# Defined after the sourced file, which defines a no-op.
. "$(dirname "$0")/cgroups-10000.sh"
extra_cleanup() {
  if [ -n "$agent" ]; then
    kill -TERM "$agent" 2>/dev/null || true
    wait "$agent" 2>/dev/null || true
  fi
}
make_cgroups
for cg in true false; do
  printf 'overhead_budget_pct = 0\n[sources.cgroups]\nenabled = %s\ninterval = "1s"\n' "$cg" > "$work/agent.toml"
  "$bin" agent --config "$work/agent.toml" --no-store --housekeeping-cpus 0 \
    --shm-path "$work/snapshot-$cg" --listen 127.0.0.1:0 > "$work/agent.log" 2>&1 &
  agent=$!
  sleep 10
  echo "== cgroups source $cg"
  "$bin" noise --cpus 1 --pid "$agent" --duration "${window}s" --format json > "$work/noise.json"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps(r["pid"]))' "$work/noise.json"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("cpu1:", json.dumps({k: v for k, v in r.items() if k != "pid"})[:600])' "$work/noise.json"
  grep -c "" "$work/agent.log" > /dev/null
  kill -TERM "$agent"; wait "$agent" 2>/dev/null || true
  agent=
done
