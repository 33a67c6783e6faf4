#!/usr/bin/env bash
# The 2008 hybrid-mapped drives' QD1 random writes by size and by the share
# of random writes in a sequential stream (issue 33, item 2): what the twin
# gives, for comparison with uFLIP's "granularity" and "mix" patterns and
# the iometer-2008 suite's `random-write-sizes` and `sequentiality` tests.
#
# Each point starts from a fresh (secure-erased) drive and writes over an
# 8 GB span at QD1 for RUNTIME of simulated time (default 60s), offsets
# with replacement (`norandommap`), as the suite does. Prints one CSV row
# per point: drive, pattern, bs, percentage_random, IOPS, MB/s, mean and
# maximum latency (ms).
#
#   scripts/hybrid-study.sh [DRIVE...]   (default: ocz-core-64gb ocz-slc-64gb)
#   SSDTWIN=target/release/ssdtwin RUNTIME=60s scripts/hybrid-study.sh
set -euo pipefail
bin=${SSDTWIN:-target/release/ssdtwin}
runtime=${RUNTIME:-60s}
drives=("$@")
[ ${#drives[@]} -eq 0 ] && drives=(ocz-core-64gb ocz-slc-64gb)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
row() { # drive pattern bs pct args...
    local d=$1 p=$2 bs=$3 pct=$4
    shift 4
    "$bin" run -d "$d" -q --json "$tmp" --name=w --bs="$bs" --iodepth=1 --size=8g \
        --runtime="$runtime" --time_based=1 --norandommap=1 "$@"
    jq -r --arg d "$d" --arg p "$p" --arg bs "$bs" --arg pct "$pct" \
        '.jobs[0].write | [$d, $p, $bs, $pct, (.iops*100|round/100),
          (.bw_bytes/1e6*1000|round/1000), (.lat_ns.mean/1e6*1000|round/1000),
          (.lat_ns.max/1e6*10|round/10)] | @csv' "$tmp"
}
echo '"drive","pattern","bs","percentage_random","iops","mb_s","mean_ms","max_ms"'
for d in "${drives[@]}"; do
    for bs in 4k 8k 16k 32k 64k 128k; do
        row "$d" size "$bs" 100 --rw=randwrite
    done
    for pct in 0 1 5 10 25 50; do
        row "$d" mix 4k "$pct" --rw=randwrite --percentage_random="$pct"
    done
done
