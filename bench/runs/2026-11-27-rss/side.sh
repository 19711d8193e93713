#!/usr/bin/env bash
# Two agents with their defaults side by side (own store, view and port)
# beside N idle processes: CPU (schedstat) and RSS over a window, after a
# warm-up. Usage: side.sh BEFORE AFTER N WINDOW_S
set -euo pipefail
before=$1 after=$2 n=$3 window=$4
pid_max=$(cat /proc/sys/kernel/pid_max)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "$pid_max" > /proc/sys/kernel/pid_max
  rm -rf "$work"
}
trap cleanup EXIT
if [ "$n" -gt 30000 ]; then echo $((n * 2 + 4096)) > /proc/sys/kernel/pid_max; fi
"$after" bench idle --procs "$n" --duration 30m > "$work/idle.log" 2>&1 &
pids+=($!)
sleep $((n / 2000 + 10))
i=0
for bin in "$before" "$after"; do
  "$bin" agent --store "$work/store$i" --shm-path "$work/shm$i/snapshot" --listen "127.0.0.1:$((9600 + i))" > "$work/agent$i.log" 2>&1 &
  pids+=($!)
  i=$((i + 1))
done
a0=${pids[1]} a1=${pids[2]}
sleep 30
cpu() { awk '{print $1}' /proc/$1/schedstat; }
t0=$(date +%s%N); c0=$(cpu $a0); c1=$(cpu $a1)
sleep "$window"
t1=$(date +%s%N); d0=$(cpu $a0); d1=$(cpu $a1)
for k in 0 1; do
  p=$([ $k = 0 ] && echo $a0 || echo $a1)
  c=$([ $k = 0 ] && echo $((d0 - c0)) || echo $((d1 - c1)))
  name=$([ $k = 0 ] && echo before || echo after)
  rss=$(awk '/VmRSS/{print $2}' /proc/$p/status)
  hwm=$(awk '/VmHWM/{print $2}' /proc/$p/status)
  echo "$name procs=$n window_s=$window cpu_pct=$(echo "scale=4; $c * 100 / ($t1 - $t0)" | bc) rss_mib=$(echo "scale=1; $rss / 1024" | bc) hwm_mib=$(echo "scale=1; $hwm / 1024" | bc)"
  grep -v "^$" "$work/agent$k.log" | grep -iE "processes:|budget|slow" | sed "s/^/  $name log: /" || true
done
