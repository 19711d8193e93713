#!/usr/bin/env bash
# Rebuilds cgroups.bpf.o (see scripts/build-bpf.sh for what it needs).
set -e
"$(dirname "$0")/../../../scripts/build-bpf.sh" "$(dirname "$0")" cgroups record.h
