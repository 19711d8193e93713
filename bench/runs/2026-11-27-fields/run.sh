#!/usr/bin/env bash
# bench fields at 8,000 and 64,000 idle processes, and bench proctable at
# 8,000 with the build before the per-field reads (BEFORE) and this one
# (AFTER) taking turns. Usage: run.sh BEFORE AFTER OUTDIR
set -euo pipefail
before=$1 after=$2 out=$3
mkdir -p "$out"
pid_max=$(cat /proc/sys/kernel/pid_max)
trap 'echo "$pid_max" > /proc/sys/kernel/pid_max' EXIT
"$after" bench fields --procs 8000 --runs 15 > "$out/fields-8000.txt"
"$after" bench fields --procs 8000 --runs 15 --format json > "$out/fields-8000.json"
echo 131072 > /proc/sys/kernel/pid_max
"$after" bench fields --procs 64000 --runs 9 --format json > "$out/fields-64000.json"
echo "$pid_max" > /proc/sys/kernel/pid_max
for round in 1 2; do
  "$before" bench proctable --procs 8000 --runs 15 --format json > "$out/proctable-before-$round.json" 2> "$out/proctable-before-$round.err"
  "$after" bench proctable --procs 8000 --runs 15 --format json > "$out/proctable-after-$round.json" 2> "$out/proctable-after-$round.err"
done
