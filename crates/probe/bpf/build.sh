#!/usr/bin/env bash
# Rebuilds noise.bpf.o from noise.bpf.c and noise.h, and records the
# sources' hash in noise.bpf.o.sources (a test fails when they differ).
# Needs clang, llvm-strip, bpftool and libbpf-dev (the bpf/ helper headers):
#   apt-get install -y clang llvm bpftool libbpf-dev
# The kernel types come from the running kernel's BTF; the object is CO-RE,
# so it loads on other kernels with BTF.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$tmp/vmlinux.h"
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$tmp" -I. \
    -c noise.bpf.c -o "$tmp/noise.bpf.o"
strip=$(command -v llvm-strip || ls /usr/bin/llvm-strip-* | head -n1)
"$strip" -g "$tmp/noise.bpf.o"
cp "$tmp/noise.bpf.o" noise.bpf.o
sha256sum noise.h noise.bpf.c > noise.bpf.o.sources
echo "built $(pwd)/noise.bpf.o ($(stat -c %s noise.bpf.o) bytes)"
