#!/bin/bash
# One scrape's size, and CPU and peak RSS over 20 scrapes, of the agent and
# of Debian's node_exporter 1.5 reading the same fixture tree.
# Usage: run.sh FIXTURE [agent flags...]
set -u
F=$(cd "$(dirname "$0")/../../../fixtures/$1" && pwd); shift
Q=$(cd "$(dirname "$0")/../../.." && pwd)/target/release/quietstat
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
# Equal work: every scrape reads every source again, as node_exporter
# reads on each scrape (max_age_ms=0, no demand floor, no budget).
keys=$($Q agent --collector.nope 2>&1 | grep -o "source names ([^)]*)" | sed 's/source names (//; s/)//; s/,//g')
EQ=/tmp/expo_equal.toml
echo "overhead_budget_pct = 0.0" > $EQ
for k in $keys; do printf '[sources.%s]\nmin_interval = "0s"\ndemand_min_interval = "0s"\n' $k >> $EQ; done
QUERY=""
measure() { # name pid port
    for i in $(seq 1 100); do curl -sf -m 5 127.0.0.1:$3/metrics -o /dev/null && break; sleep 0.2; done
    sleep 2
    local c0=$(cpu $2) t0=$(date +%s.%N) bytes series
    for i in $(seq 1 20); do curl -sf -m 120 "127.0.0.1:$3/metrics$QUERY" -o /tmp/expo_$3.txt; done
    local t1=$(date +%s.%N) c1=$(cpu $2)
    bytes=$(wc -c < /tmp/expo_$3.txt); series=$(grep -vc '^#' /tmp/expo_$3.txt)
    echo "$1: bytes=$bytes series=$series cpu_ms_per_scrape=$(( (c1-c0)*10/20 )) wall_s=$(echo "$t1-$t0"|bc) hwm_kB=$(awk '/VmHWM/{print $2}' /proc/$2/status) rss_kB=$(awk '/VmRSS/{print $2}' /proc/$2/status)"
}
$Q agent --listen 127.0.0.1:19601 --shm-path "" --no-store --proc-root $F/proc --sys-root $F/sys --rootfs $F/rootfs --backend procfs "$@" > /tmp/expo_agent.log 2>&1 &
A=$!
measure "agent $* (as scheduled)" $A 19601
kill $A; wait $A 2>/dev/null
$Q agent --config $EQ --listen 127.0.0.1:19603 --shm-path "" --no-store --proc-root $F/proc --sys-root $F/sys --rootfs $F/rootfs --backend procfs "$@" > /tmp/expo_agent.log 2>&1 &
A=$!
QUERY="?max_age_ms=0"
measure "agent $* (every source read at each scrape)" $A 19603
QUERY=""
kill $A; wait $A 2>/dev/null
prometheus-node-exporter --web.listen-address=127.0.0.1:19602 --path.procfs=$F/proc --path.sysfs=$F/sys --path.rootfs=$F/rootfs > /tmp/expo_ne.log 2>&1 &
N=$!
measure "node_exporter 1.5 (defaults)" $N 19602
kill $N; wait $N 2>/dev/null
