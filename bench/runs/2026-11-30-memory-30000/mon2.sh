#!/bin/bash
: > /tmp/exp/mon2
while true; do
  CG=$(ls -d /sys/fs/cgroup/memory/qs-memlimit-* 2>/dev/null | head -1)
  [ -n "$CG" ] && [ -n "$(cat $CG/cgroup.procs 2>/dev/null)" ] && break
  sleep 0.02
done
while [ -d $CG ]; do
  u=$(cat $CG/memory.usage_in_bytes 2>/dev/null); k=$(cat $CG/memory.kmem.usage_in_bytes 2>/dev/null)
  s=$(awk '$1=="rss"||$1=="cache"||$1=="shmem"{printf "%s=%d ",$1,$2/1024}' $CG/memory.stat 2>/dev/null)
  slab=$(awk 'NR>2{b=$3*$4; if (b>300000) printf "%s=%dK ", $1, b/1024}' $CG/memory.kmem.slabinfo 2>/dev/null)
  pid=$(head -1 $CG/cgroup.procs 2>/dev/null)
  fds=$(ls /proc/$pid/fd 2>/dev/null | wc -l)
  echo "$(date +%s.%N | cut -c7-14) usageK=$((u/1024)) kmemK=$((k/1024)) $s fail=$(cat $CG/memory.failcnt 2>/dev/null) fds=$fds | $slab" >> /tmp/exp/mon2
  sleep 0.3
done
