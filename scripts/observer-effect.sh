#!/usr/bin/env bash
# The observer effect of a collector on an "isolated" CPU (CPU 1; CPU 0 is
# housekeeping), with N idle processes present. For each collector, pinned
# to CPU 0: `quietstat jitter` on CPU 1 alone, then beside the collector
# (with vs without, one command); for the agent also `quietstat noise` on
# CPU 1 for the whole window, charged to the agent. Root; needs atop,
# sysstat (pidstat), prometheus-node-exporter and curl.
#
#   scripts/observer-effect.sh [PROCS] [JITTER_SECONDS] [NOISE_SECONDS] > results.jsonl
set -euo pipefail
Q=${QUIETSTAT:-$(dirname "$0")/../target/release/quietstat}
PROCS=${1:-8000}
JIT=${2:-60}
NOISE=${3:-300}
tmp=$(mktemp -d)
cleanup() {
    [ -n "${IDLE:-}" ] && kill "$IDLE" 2>/dev/null || true
    [ -n "${AGENT:-}" ] && kill "$AGENT" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

"$Q" bench idle --procs "$PROCS" --duration 2h 2>"$tmp/idle.log" & IDLE=$!
until grep -q "idle processes" "$tmp/idle.log"; do sleep 1; done

jitter() { # label, command...
    local label=$1; shift
    "$Q" jitter --cpu 1 --interval 1ms --duration "${JIT}s" --priority 95 --settle 5s \
        --format json -- "$@" | python3 -c "import json,sys; v=json.load(sys.stdin); v['collector']='$label'; print(json.dumps(v))"
}

# The agent: noise over the whole window, then jitter with vs without.
taskset -c 0 "$Q" agent --housekeeping-cpus 0 --listen 127.0.0.1:0 --shm-path "$tmp/snapshot" \
    2>"$tmp/agent.log" & AGENT=$!
sleep 6
"$Q" noise --cpus 1 --pid "$AGENT" --duration "${NOISE}s" --format json \
    | python3 -c "import json,sys; v=json.load(sys.stdin); print(json.dumps({'collector':'agent','noise':v['pid'],'seconds':v['duration_s']}))"
kill "$AGENT"; wait "$AGENT" 2>/dev/null || true; AGENT=
jitter agent taskset -c 0 "$Q" agent --housekeeping-cpus 0 --listen 127.0.0.1:0 --shm-path "$tmp/snapshot2"
jitter atop taskset -c 0 atop -w "$tmp/atop.raw" 1
jitter pidstat setsid sh -c "trap 'trap - TERM; kill 0' TERM; taskset -c 0 pidstat -u -r -d -w 1 >/dev/null & wait"
jitter node_exporter setsid sh -c "trap 'trap - TERM; kill 0' TERM; taskset -c 0 prometheus-node-exporter --web.listen-address=127.0.0.1:19101 >/dev/null 2>&1 & sleep 1; while :; do taskset -c 0 curl -s 127.0.0.1:19101/metrics >/dev/null; sleep 1; done"
