#!/bin/bash
# The agent's start-up cost: CPU time (user + system) and resident memory
# once it serves, for each build and configuration given, interleaved,
# RUNS times each; medians. Usage:
#   startup.sh RUNS NAME=BINARY:CONFIG [NAME=BINARY:CONFIG ...]
# CONFIG is an agent configuration file (e.g. one turning the cgroups
# source on or off).
set -euo pipefail
runs=$1
shift
dir=$(mktemp -d /dev/shm/qs-startup.XXXXXX)
chmod 700 "$dir"
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
tick=$(getconf CLK_TCK)
declare -A cpu rss
for ((r = 0; r < runs; r++)); do
    for spec in "$@"; do
        name=${spec%%=*}
        rest=${spec#*=}
        bin=${rest%%:*}
        cfg=${rest#*:}
        : > "$dir/err"
        "$bin" agent --listen 127.0.0.1:0 --shm-path "$dir/snap" --no-store \
            --config "$cfg" 2> "$dir/err" &
        pid=$!
        for _ in $(seq 1 1000); do
            grep -q serving "$dir/err" && break
            sleep 0.01
        done
        grep -q serving "$dir/err" || { cat "$dir/err"; exit 1; }
        sleep 0.3
        t=$(awk '{print $14 + $15}' "/proc/$pid/stat")
        a=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status")
        kill "$pid"
        wait "$pid" 2>/dev/null || true
        pid=
        cpu[$name]+="$((t * 1000 / tick)) "
        rss[$name]+="$a "
    done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
printf '%-10s %18s %18s\n' build "start-up CPU (ms)" "RssAnon (KiB)"
for spec in "$@"; do
    name=${spec%%=*}
    printf '%-10s %18s %18s   runs: %s\n' "$name" "$(echo "${cpu[$name]}" | median)" \
        "$(echo "${rss[$name]}" | median)" "${cpu[$name]}"
done
