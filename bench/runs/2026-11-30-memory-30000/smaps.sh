#!/bin/bash
: > /tmp/exp/smaps
while true; do
  CG=$(ls -d /sys/fs/cgroup/memory/qs-memlimit-* 2>/dev/null | head -1)
  [ -n "$CG" ] && [ -n "$(cat $CG/cgroup.procs 2>/dev/null)" ] && break
  sleep 0.02
done
pid=$(head -1 $CG/cgroup.procs)
while [ -d /proc/$pid ]; do
  t=$(date +%s.%N | cut -c7-14)
  awk -v t=$t '/^[0-9a-f]+-[0-9a-f]+ /{m=$1; n=$6} /^Anonymous:/{if ($2>500) printf "%s:%s=%dK ", (n==""?"anon":n), substr(m,1,6), $2} END{print ""}' /proc/$pid/smaps 2>/dev/null | sed "s/^/$t /" >> /tmp/exp/smaps
  sleep 0.3
done
