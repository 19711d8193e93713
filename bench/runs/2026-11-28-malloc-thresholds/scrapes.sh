#!/bin/bash
# Usage: scrapes.sh BINARY [BINARY ...]: an agent on fixtures/cpu4096 per binary,
# 60 scrapes of /metrics after a first; its CPU ticks (1/100 s) over them and
# RssAnon after; three rounds, the binaries taking turns.
# agent CPU ms for 60 scrapes of fixtures/cpu4096, per binary, alternating
F=/work/main/fixtures/cpu4096
for round in 1 2 3; do
for b in "$@"; do
  d=$(mktemp -d /dev/shm/qs-scr.XXXX); chmod 700 $d
  $b agent --listen 127.0.0.1:0 --shm-path $d/snap --no-store --proc-root $F/proc --sys-root $F/sys --rootfs $F/rootfs 2> $d/err &
  pid=$!
  for _ in $(seq 1 500); do grep -q serving $d/err && break; sleep 0.02; done
  port=$(grep -o 'http://127.0.0.1:[0-9]*' $d/err | head -1)
  curl -s $port/metrics > /dev/null
  sleep 1
  t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  for i in $(seq 1 60); do curl -s $port/metrics -o /dev/null; done
  t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  rss=$(awk '/RssAnon/ {print $2}' /proc/$pid/status)
  kill $pid; wait $pid 2>/dev/null
  echo "$(basename $b) cpu_ticks_60_scrapes=$((t1-t0)) rssanon_kib=$rss"
  rm -rf $d
done; done
