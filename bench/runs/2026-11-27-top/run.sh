#!/usr/bin/env bash
# Two `quietstat top -d 2s`, the build before a change (BEFORE) and after
# (AFTER), side by side on one agent's view, beside N idle processes: each
# top's CPU from /proc/PID/schedstat over WINDOW seconds, ROUNDS times.
# kernel.pid_max is raised for N and restored; everything started is
# stopped by PID at the end, however the run ends. Run as root.
#
#   run.sh BEFORE AFTER [N [WINDOW [ROUNDS]]]
set -euo pipefail
before=$1 after=$2 n=${3:-64000} window=${4:-120} rounds=${5:-2}
pid_max=$(cat /proc/sys/kernel/pid_max)
dir=$(mktemp -d /dev/shm/qs-top-XXXX)
pids=()
cleanup() {
    for s in before after; do tmux kill-session -t "qs-top-$s" 2>/dev/null || true; done
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    echo "$pid_max" > /proc/sys/kernel/pid_max
    rm -rf "$dir"
}
trap cleanup EXIT
procs() { ls /proc | grep -c '^[0-9]'; }
start=$(procs)
[ $((start + n + 4096)) -gt "$pid_max" ] && echo $(((start + n) * 2)) > /proc/sys/kernel/pid_max
"$after" bench idle --procs "$n" --duration 60m > "$dir/idle.log" 2>&1 &
pids+=($!)
while [ "$(procs)" -lt $((start + n)) ]; do sleep 1; done
"$after" agent --no-store --listen 127.0.0.1:0 --shm-path "$dir/snapshot" > "$dir/agent.log" 2>&1 &
pids+=($!)
sleep 10
for s in before after; do
    bin=$before; [ $s = after ] && bin=$after
    tmux new-session -d -s "qs-top-$s" -x 120 -y 40 "$bin top -d 2s --shm-path $dir/snapshot"
done
sleep 15
tb=$(pgrep -f "^$before top -d 2s"); ta=$(pgrep -f "^$after top -d 2s")
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $(uname -r), $(procs) processes"
for r in $(seq "$rounds"); do
    b0=$(cut -d' ' -f1 "/proc/$tb/schedstat"); a0=$(cut -d' ' -f1 "/proc/$ta/schedstat")
    sleep "$window"
    b1=$(cut -d' ' -f1 "/proc/$tb/schedstat"); a1=$(cut -d' ' -f1 "/proc/$ta/schedstat")
    echo "round $r: before $(echo "scale=4; ($b1-$b0)/($window*10000000)" | bc)% after $(echo "scale=4; ($a1-$a0)/($window*10000000)" | bc)% of a core"
done
