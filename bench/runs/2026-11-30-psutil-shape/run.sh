#!/usr/bin/env bash
# The Python module's psutil shape beside psutil, same run, 8,000 idle
# processes: examples/python/psutil_shape.py (process_iter with eight
# attributes, alternating; Process method by method on a sleeper).
# Release build of the extension; run as root from the repo.
#
#   bench/runs/2026-11-30-psutil-shape/run.sh [ROUNDS [CALLS [OUT_DIR]]]
# (figures.txt goes to OUT_DIR, this directory unless given)
set -euo pipefail
cd "$(dirname "$0")/../../.."
rounds=${1:-11}
calls=${2:-2000}
out=${3:-bench/runs/2026-11-30-psutil-shape}
mkdir -p "$out"
cargo build -p cli
venv=target/pyenv-release
[ -x $venv/bin/python ] || python3 -m venv $venv
$venv/bin/pip install --quiet -r crates/python/requirements-test.txt
VIRTUAL_ENV=$PWD/$venv PATH=$PWD/$venv/bin:$PATH $venv/bin/maturin develop --quiet --release -m crates/python/Cargo.toml
tmp=$(mktemp -d)
before=$(ls /proc | grep -c '^[0-9]')
target/debug/quietstat bench idle --procs 8000 --duration 10m >"$tmp/idle.log" 2>&1 &
idle=$!
trap 'kill $idle 2>/dev/null; wait $idle 2>/dev/null; rm -rf "$tmp"' EXIT
while [ "$(ls /proc | grep -c '^[0-9]')" -lt $((before + 8000)) ]; do sleep 1; done
{
    echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD), $(nproc) CPUs, $(uname -r)"
    $venv/bin/python examples/python/psutil_shape.py "$rounds" "$calls"
} | tee "$out/figures.txt"
