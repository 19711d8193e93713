#!/usr/bin/env bash
# Agents beside 10,000 cgroups in every hierarchy (cgroups-10000.sh), one at
# a time, the cgroups source on, otherwise defaults: VmRSS and VmHWM after
# SECONDS. Usage: rss-10000.sh SECONDS QUIETSTAT...
set -euo pipefail
secs=$1; shift
agent=
. "$(dirname "$0")/../2026-11-27-cgroups-thread/cgroups-10000.sh"
extra_cleanup() { if [ -n "$agent" ]; then kill -TERM "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; agent=; fi; }
make_cgroups
for bin in "$@"; do
  rm -rf "$work/run"; mkdir -p "$work/run"
  printf '[sources.cgroups]\nenabled = true\n' > "$work/run/agent.toml"
  "$bin" agent --config "$work/run/agent.toml" --store "$work/run/store" --shm-path "$work/run/shm/snapshot" --listen 127.0.0.1:9613 > "$work/run/agent.log" 2>&1 &
  agent=$!
  sleep "$secs"
  echo "$bin $(grep -E 'VmRSS|VmHWM' /proc/$agent/status | tr -s ' \t' ' ' | tr '\n' ' ')"
  extra_cleanup
done
