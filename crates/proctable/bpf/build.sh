#!/usr/bin/env bash
# Rebuilds proctable.bpf.o, walk.bpf.o, lookup.bpf.o, net.bpf.o and gpu.bpf.o (see scripts/build-bpf.sh for what
# it needs).
set -e
build="$(dirname "$0")/../../../scripts/build-bpf.sh"
"$build" "$(dirname "$0")" proctable record.h task.h maps.h
"$build" "$(dirname "$0")" walk record.h task.h maps.h kfuncs.h
"$build" "$(dirname "$0")" lookup record.h kfuncs.h
BPF_CPU=v3 "$build" "$(dirname "$0")" net record.h
"$build" "$(dirname "$0")" gpu record.h kfuncs.h
