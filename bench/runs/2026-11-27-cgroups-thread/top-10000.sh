#!/usr/bin/env bash
# `quietstat top` beside 10,000 cgroups in every cgroup hierarchy of this
# machine, with an agent whose cgroups source is on (otherwise its
# defaults):
#   - first screen: start to exit of `top --first-screen` on an 80x24
#     pseudo-terminal (script(1)), RUNS times each way, the ways alternating:
#     the process view (the baseline), the cgroup view from the agent's view
#     file (`--cgroups`), the cgroup view walked by top itself (`--cgroups
#     --no-agent`); medians in ms;
#   - CPU of `top -d 2s` over WINDOW_S, the process view and the cgroup view
#     side by side (two tmux sessions at once), each top's utime + stime.
# Usage: top-10000.sh QUIETSTAT RUNS WINDOW_S
set -euo pipefail
bin=$1 runs=$2 window=$3
agent=
sock=qs-bench-top-$$
# Defined after the sourced file, which defines a no-op.
. "$(dirname "$0")/cgroups-10000.sh"
extra_cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  if [ -n "$agent" ]; then
    kill -TERM "$agent" 2>/dev/null || true
    wait "$agent" 2>/dev/null || true
  fi
}
make_cgroups
snap=$work/shm/snapshot
printf '[sources.cgroups]\nenabled = true\n' > "$work/agent.toml"
"$bin" agent --config "$work/agent.toml" --no-store --shm-path "$snap" --listen 127.0.0.1:9612 > "$work/agent.log" 2>&1 &
agent=$!
# Its first walk is part of its start.
for _ in $(seq 300); do [ -e "$snap.procs" ] && break; sleep 0.1; done
sleep 5
first() { # ARGS...: ms from start to exit of top --first-screen
  local t0 t1
  t0=$(date +%s%N)
  script -qec "stty cols 80 rows 24; exec $bin top --first-screen --shm-path $snap $*" /dev/null > /dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: > "$work/procs"; : > "$work/cg"; : > "$work/own"
for _ in $(seq "$runs"); do
  first >> "$work/procs"
  first --cgroups >> "$work/cg"
  first --cgroups --no-agent >> "$work/own"
done
echo "first_screen_ms: process view $(median < "$work/procs"), cgroup view from the agent $(median < "$work/cg"), cgroup view walked here $(median < "$work/own") (medians of $runs)"
echo "  process view: $(tr '\n' ' ' < "$work/procs")"
echo "  cgroup view, agent: $(tr '\n' ' ' < "$work/cg")"
echo "  cgroup view, own: $(tr '\n' ' ' < "$work/own")"
tick_ns=$(( 1000000000 / $(getconf CLK_TCK) ))
cpu() { awk -v t="$tick_ns" '{sub(/.*\) /, ""); printf "%.0f\n", ($12 + $13) * t}' "/proc/$1/stat"; }
for v in procs cgroups; do
  flag=; [ "$v" = cgroups ] && flag=--cgroups
  tmux -L "$sock" -f /dev/null new-session -d -s "$v" -x 80 -y 24 \
    "exec $bin top -d 2s --shm-path $snap $flag"
done
sleep 10
p1=$(tmux -L "$sock" list-panes -t procs -F '#{pane_pid}')
p2=$(tmux -L "$sock" list-panes -t cgroups -F '#{pane_pid}')
t0=$(date +%s%N); a0=$(cpu "$p1"); b0=$(cpu "$p2")
sleep "$window"
t1=$(date +%s%N); a1=$(cpu "$p1"); b1=$(cpu "$p2")
tmux -L "$sock" capture-pane -p -t cgroups | head -12 | sed 's/^/screen: /'
echo "top_cpu_pct over ${window}s at -d 2s: process view $(echo "scale=4; ($a1 - $a0) * 100 / ($t1 - $t0)" | bc), cgroup view $(echo "scale=4; ($b1 - $b0) * 100 / ($t1 - $t0)" | bc)"
grep -iE "cgroups" "$work/agent.log" | sed 's/^/log: /' || true
