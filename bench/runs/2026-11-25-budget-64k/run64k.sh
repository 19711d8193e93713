#!/bin/bash
# 64,000 idle processes, the release agent with its defaults (history on), 200 s.
set -u
OUT=${OUT:-/tmp/run64k}; rm -rf $OUT; mkdir -p $OUT
SHM=$(mktemp -d /dev/shm/qs64k.XXXX)
( sleep 260 ) | /tmp/spawn 64000 > $OUT/spawn.out &
SPAWNPIPE=$!
for i in $(seq 120); do grep -q spawned $OUT/spawn.out 2>/dev/null && break; sleep 1; done
echo "procs: $(ls /proc | wc -l)" > $OUT/procs
/work/main/target/release/quietstat agent --listen 127.0.0.1:19480 --shm-path $SHM/snapshot --store $OUT/store $EXTRA 2> $OUT/agent.log &
A=$!
for t in 30 60 90 120 150 180 200; do
  sleep $(( t - ${prev:-0} )); prev=$t
  echo "t=$t $(curl -s localhost:19480/metrics | grep -E '^quietstat_source_interval_seconds\{source="processes"\}|^quietstat_source_last_cost_seconds\{source="processes"\}|^quietstat_agent_cpu_seconds_total' | tr '\n' ' ')" >> $OUT/metrics
done
kill -TERM $A; wait $A
echo "agent exit $?" >> $OUT/procs
pkill -P $SPAWNPIPE sleep 2>/dev/null
kill $(pgrep -f "^/tmp/spawn 64000") 2>/dev/null
sleep 3
echo "after: $(ls /proc | wc -l)" >> $OUT/procs
rm -rf $SHM
