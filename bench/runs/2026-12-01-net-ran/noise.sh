#!/usr/bin/env bash
# What the agent with TCP bytes per process causes on CPU 1 (playing the
# isolated CPU) while a process pinned there holds 2,000 connections and
# makes, uses and closes loopback connections without pause: the agent
# pinned to CPU 0 (`--housekeeping-cpus 0`), its overhead budget off, the
# process table every second (`process_network` true, then false: the
# baseline), `quietstat noise --cpus 1 --pid AGENT` over WINDOW_S. JSON
# lines: the pid's part of each report, and CPU 1's totals.
# Usage: noise.sh QUIETSTAT WINDOW_S
set -euo pipefail
bin=$1 window=$2
work=$(mktemp -d)
agent= app=
cleanup() {
  for p in $agent $app; do
    kill -TERM "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
cat > "$work/app.py" <<'PY'
import socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(128)
a = l.getsockname()
held = []
for _ in range(1000):
    c = socket.create_connection(a); s, _ = l.accept()
    c.sendall(b"p"); s.recv(1)
    held += [c, s]
while True:
    c = socket.create_connection(a); s, _ = l.accept()
    c.sendall(b"x" * 4096); s.recv(4096); s.sendall(b"q"); c.recv(1)
    c.close(); s.close()
PY
taskset -c 1 python3 "$work/app.py" &
app=$!
for net in true false; do
  printf 'overhead_budget_pct = 0\nprocess_network = %s\n[sources.processes]\ninterval = "1s"\n' "$net" > "$work/agent.toml"
  "$bin" agent --config "$work/agent.toml" --no-store --housekeeping-cpus 0 \
    --shm-path "$work/snapshot-$net" --listen 127.0.0.1:0 > "$work/agent.log" 2>&1 &
  agent=$!
  sleep 10
  echo "== process_network $net"
  "$bin" noise --cpus 1 --pid "$agent" --duration "${window}s" --format json > "$work/noise.json"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps(r["pid"]))' "$work/noise.json"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); [print("cpu1:", c["kind"], c["by"], c["what"], c["count"]) for c in r["causes"] if c["kind"] in ("ipi", "wakeup")]' "$work/noise.json"
  kill -TERM "$agent"; wait "$agent" 2>/dev/null || true
  agent=
done
