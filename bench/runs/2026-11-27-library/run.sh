#!/usr/bin/env bash
# The library's figures beside their baselines, same run, 8,000 idle
# processes: examples/c/start_times.c (qs_pid_start_times against an
# open/read/close loop over /proc/PID/stat, alternating) and
# examples/python/start_times.py (the same, and a snapshot against
# psutil's process_iter). Release builds; run as root from the repo.
#
#   bench/runs/2026-11-27-library/run.sh [ROUNDS [OUT_DIR]]
# (figures.txt goes to OUT_DIR, this directory unless given)
set -euo pipefail
cd "$(dirname "$0")/../../.."
rounds=${1:-21}
out=${2:-bench/runs/2026-11-27-library}
mkdir -p "$out"
# The idle processes' holder may be any build; the library is measured
# in release.
cargo build -p cli
cargo build --release -p capi
venv=target/pyenv-release
[ -x $venv/bin/python ] || python3 -m venv $venv
$venv/bin/pip install --quiet -r crates/python/requirements-test.txt
VIRTUAL_ENV=$PWD/$venv PATH=$PWD/$venv/bin:$PATH $venv/bin/maturin develop --quiet --release -m crates/python/Cargo.toml
tmp=$(mktemp -d)
cc -O2 -I crates/capi/include examples/c/start_times.c -L target/release -lquietstat -o "$tmp/start_times"

before=$(ls /proc | grep -c '^[0-9]')
target/debug/quietstat bench idle --procs 8000 --duration 10m >"$tmp/idle.log" 2>&1 &
idle=$!
trap 'kill $idle 2>/dev/null; wait $idle 2>/dev/null; rm -rf "$tmp"' EXIT
while [ "$(ls /proc | grep -c '^[0-9]')" -lt $((before + 8000)) ]; do sleep 1; done
{
    echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD), $(nproc) CPUs, $(uname -r)"
    echo "## C"
    for threads in 0 2; do
        LD_LIBRARY_PATH=target/release "$tmp/start_times" "$rounds" $threads
    done
    echo "## Python"
    for threads in 0 2; do
        $venv/bin/python examples/python/start_times.py "$rounds" $threads
    done
} | tee "$out/figures.txt"
