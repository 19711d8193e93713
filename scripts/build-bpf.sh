#!/usr/bin/env bash
# Rebuilds DIR/NAME.bpf.o from DIR/NAME.bpf.c and the DIR/HEADERs it includes,
# and records the
# sources' hashes in DIR/NAME.bpf.o.sources (a test fails when they differ).
# Needs clang, llvm-strip, bpftool and libbpf-dev (the bpf/ helper headers):
#   apt-get install -y clang llvm bpftool libbpf-dev
# The kernel types come from the running kernel's BTF; the objects are CO-RE,
# so they load on other kernels with BTF.
#   scripts/build-bpf.sh DIR NAME HEADER...
# BPF_CPU (v1 unless set) is the instruction set: v3 for atomic exchanges.
set -euo pipefail
dir=$1 name=$2
headers=("${@:3}")
cd "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$tmp/vmlinux.h"
# -O2: the verifier needs optimised code; -g: BTF for CO-RE relocations
# (stripped of DWARF below); -D__TARGET_ARCH_x86: the PT_REGS layout.
clang -O2 -g -target bpf -mcpu="${BPF_CPU:-v1}" -D__TARGET_ARCH_x86 -I"$tmp" -I. \
    -c "$name.bpf.c" -o "$tmp/$name.bpf.o"
strip=$(command -v llvm-strip || ls /usr/bin/llvm-strip-* | head -n1)
"$strip" -g "$tmp/$name.bpf.o"
cp "$tmp/$name.bpf.o" "$name.bpf.o"
sha256sum "${headers[@]}" "$name.bpf.c" > "$name.bpf.o.sources"
echo "built $(pwd)/$name.bpf.o ($(stat -c %s "$name.bpf.o") bytes)"
