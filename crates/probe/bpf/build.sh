#!/usr/bin/env bash
# Rebuilds noise.bpf.o (see scripts/build-bpf.sh for what it needs).
exec "$(dirname "$0")/../../../scripts/build-bpf.sh" "$(dirname "$0")" noise noise.h
