#!/bin/bash
set -u
N=64000
Q=$(cd "$(dirname "$0")/../../.." && pwd)/target/release/quietstat
gcc -O2 -o /tmp/spawn-idle "$(dirname "$0")/../2026-11-25-budget-64k/spawn.c" || exit 1
OLD=$(cat /proc/sys/kernel/pid_max); echo 128000 > /proc/sys/kernel/pid_max
SHM=$(mktemp -d /dev/shm/qsps.XXXX)
( sleep 300 ) | /tmp/spawn-idle $N > /tmp/psprof.spawn &
SP=$!
for i in $(seq 180); do grep -q spawned /tmp/psprof.spawn 2>/dev/null && break; sleep 1; done
$Q agent --listen "" --shm-path $SHM/snapshot --no-store 2> /tmp/psprof.agent &
A=$!
sleep 15
for f in table csv json; do
  t0=$(date +%s%N); $Q ps --backend agent --shm-path $SHM/snapshot --format $f > /dev/null; t1=$(date +%s%N)
  echo "$f: $(( (t1-t0)/1000000 )) ms"
done
t0=$(date +%s%N); $Q ps --backend agent --shm-path $SHM/snapshot > /dev/null; t1=$(date +%s%N); echo "table again: $(( (t1-t0)/1000000 )) ms"
perf record -q -g -o /tmp/ps.perf $Q ps --backend agent --shm-path $SHM/snapshot > /dev/null 2>&1
perf report -i /tmp/ps.perf --no-children --stdio --sort symbol 2>/dev/null | grep -E "^ +[0-9]" | head -25


kill -TERM $A; wait $A
kill $SP; kill $(pgrep -f "^/tmp/spawn-idle $N") 2>/dev/null
for i in $(seq 60); do [ "$(ls /proc | grep -c '^[0-9]')" -lt 1000 ] && break; sleep 1; done
echo $OLD > /proc/sys/kernel/pid_max; rm -rf $SHM
echo "procs after: $(ls /proc | grep -c '^[0-9]')"
