# Sourced by the scripts beside it: makes 10,000 cgroups (100 slices of 99
# scopes under one cgroup of ours) in every cgroup hierarchy of this
# machine, and removes them on exit, also on failure (with the agent and
# whatever `extra_cleanup` stops first).
name=qs-bench-$$
dirs=()
for h in /sys/fs/cgroup/*/; do
  [ -e "$h/cgroup.procs" ] && dirs+=("$h$name")
done
extra_cleanup() { :; }
cleanup() {
  extra_cleanup
  for d in "${dirs[@]}"; do
    [ -d "$d" ] || continue
    find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$d" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
work=$(mktemp -d)
make_cgroups() {
  for d in "${dirs[@]}"; do
    mkdir "$d"
    for s in $(seq 0 99); do
      mkdir "$d/s$s.slice"
      for c in $(seq 0 98); do mkdir "$d/s$s.slice/c$c.scope"; done
    done
  done
  echo "cgroups_per_hierarchy=10000 hierarchies=${#dirs[@]}"
}
