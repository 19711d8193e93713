#!/bin/bash
# Clean builds, before the library (d05d507~1) and after (48e3622), each
# from an empty target directory; run from git worktrees at /tmp/wt-before
# and /tmp/wt-now (git worktree add /tmp/wt-before d05d507~1, ...).
set -u
for wt in before now; do
  for what in "build --release -p cli" "build --workspace"; do
    rm -rf /tmp/tgt-$wt
    cd /tmp/wt-$wt
    s=$(date +%s.%N)
    CARGO_TARGET_DIR=/tmp/tgt-$wt cargo $what > /tmp/bt-$wt.log 2>&1
    rc=$?
    e=$(date +%s.%N)
    echo "$wt | cargo $what | rc $rc | $(echo "$e - $s" | bc) s"
  done
done
rm -rf /tmp/tgt-before /tmp/tgt-now
