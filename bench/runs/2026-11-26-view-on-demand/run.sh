#!/bin/bash
# N idle processes (default 64,000), the release agent with its defaults
# (history on): its CPU over 60 s with no viewer, then over 60 s with a
# viewer (`quietstat ps --backend agent` every 2 s), and the process view
# file's size. kernel.pid_max is raised if needed and restored.
set -u
N=${N:-64000}
HERE=$(cd "$(dirname "$0")" && pwd)
Q=$HERE/../../../target/release/quietstat
OUT=${OUT:-/tmp/view-on-demand}; rm -rf $OUT; mkdir -p $OUT
gcc -O2 -o /tmp/spawn-idle $HERE/../2026-11-25-budget-64k/spawn.c || exit 1
OLD_PID_MAX=$(cat /proc/sys/kernel/pid_max)
[ "$OLD_PID_MAX" -lt $((N * 2)) ] && echo $((N * 2)) > /proc/sys/kernel/pid_max
SHM=$(mktemp -d /dev/shm/qsview.XXXX)
cleanup() {
    [ -n "${A:-}" ] && kill -TERM $A 2>/dev/null && wait $A 2>/dev/null
    [ -n "${SP:-}" ] && kill $SP 2>/dev/null
    kill $(pgrep -f "^/tmp/spawn-idle $N") 2>/dev/null
    for i in $(seq 60); do [ "$(ls /proc | grep -c '^[0-9]')" -lt 1000 ] && break; sleep 1; done
    echo $OLD_PID_MAX > /proc/sys/kernel/pid_max
    rm -rf $SHM
    echo "procs after: $(ls /proc | grep -c '^[0-9]')" >> $OUT/out.txt
}
trap cleanup EXIT
echo "procs before: $(ls /proc | grep -c '^[0-9]')" > $OUT/out.txt
( sleep 400 ) | /tmp/spawn-idle $N > $OUT/spawn.out &
SP=$!
for i in $(seq 180); do grep -q spawned $OUT/spawn.out 2>/dev/null && break; sleep 1; done
echo "procs spawned: $(ls /proc | grep -c '^[0-9]')" >> $OUT/out.txt
$Q agent --listen 127.0.0.1:19490 --shm-path $SHM/snapshot --store $OUT/store 2> $OUT/agent.log &
A=$!
cpu() { awk '{print $14+$15}' /proc/$A/stat; }
sleep 40
c0=$(cpu); sleep 60; c1=$(cpu)
echo "no viewer: agent CPU $(( c1 - c0 )) ticks in 60 s; view file $(stat -c %s $SHM/snapshot.procs) bytes" >> $OUT/out.txt
( while kill -0 $A 2>/dev/null; do $Q ps --backend agent --shm-path $SHM/snapshot > /dev/null 2>> $OUT/ps.err; sleep 2; done ) &
V=$!
sleep 10
c0=$(cpu); sleep 60; c1=$(cpu)
kill $V 2>/dev/null
echo "ps every 2 s: agent CPU $(( c1 - c0 )) ticks in 60 s; view file $(stat -c %s $SHM/snapshot.procs) bytes" >> $OUT/out.txt
t0=$(date +%s%N); $Q ps --backend agent --shm-path $SHM/snapshot > /dev/null; t1=$(date +%s%N)
echo "ps --backend agent, whole process: $(( (t1 - t0) / 1000000 )) ms" >> $OUT/out.txt
cp $OUT/out.txt $HERE/out.txt
