#!/usr/bin/env bash
# Textfile: 40,000 series of one family, scraped from node_exporter (Debian's
# 1.5) and from the agent, side by side in one run; the agent's own parse
# cost from its figures. Then the time from start to listening with a
# cost-31 bcrypt hash in the web configuration.
# Run from the repository root after `cargo build --release`.
set -euo pipefail
bin=${BIN:-target/release/quietstat}
dir=$(mktemp -d)
trap 'kill ${ne:-} ${qa:-} 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir "$dir/text"
{
    echo "# HELP big A family of many series."
    echo "# TYPE big gauge"
    for i in $(seq 0 39999); do echo "big{job=\"batch\",instance=\"host-$i\"} $i"; done
} > "$dir/text/big.prom"
echo "textfile: $(wc -l < "$dir/text/big.prom") lines, $(stat -c %s "$dir/text/big.prom") bytes"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
scrapes() { for _ in 1 2 3 4 5; do curl -s -o /dev/null -w '%{time_total}\n' "$1"; done | median; }

prometheus-node-exporter --web.listen-address=127.0.0.1:19300 --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$dir/text" 2>/dev/null &
ne=$!
printf '[sources.textfile]\ninterval = "1s"\n' > "$dir/agent.toml"
"$bin" agent --no-store --listen 127.0.0.1:19301 --shm-path "$dir/snap" --config "$dir/agent.toml" \
    --collector.textfile.directory "$dir/text" 2>"$dir/agent.log" &
qa=$!
sleep 5
echo "node_exporter scrape, median of 5 (s): $(scrapes http://127.0.0.1:19300/metrics)"
echo "agent scrape, median of 5 (s): $(scrapes http://127.0.0.1:19301/metrics)"
sleep 3
curl -s http://127.0.0.1:19301/metrics | grep -E 'quietstat_source_(reads|read_seconds|parse_seconds|cpu_seconds)_total\{source="(textfile|stat)"\}'
echo "agent log:"; cat "$dir/agent.log"
kill $ne $qa; wait $ne $qa 2>/dev/null || true

printf 'basic_auth_users:\n  slow: %s\n' "'\$2b\$31\$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy'" > "$dir/web.yml"
t0=$(date +%s.%N)
"$bin" agent --no-store --listen 127.0.0.1:19302 --shm-path "$dir/snap2" --web.config.file "$dir/web.yml" 2>"$dir/web.log" &
qa=$!
until grep -q "serving" "$dir/web.log"; do sleep 0.01; done
t1=$(date +%s.%N)
echo "listening with a cost-31 hash after $(echo "$t1 - $t0" | bc) s"
grep -i "cost 31" "$dir/web.log"
kill $qa; wait $qa 2>/dev/null || true
