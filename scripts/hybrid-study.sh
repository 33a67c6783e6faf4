#!/usr/bin/env bash
# The 2008 hybrid-mapped drives' QD1 random writes by size and by the share
# of random writes in a sequential stream (issue 33, item 2): what the twin
# gives, for comparison with uFLIP's "granularity" and "mix" patterns and
# the iometer-2008 suite's `random-write-sizes` and `sequentiality` tests.
#
# Each point starts from a fresh (secure-erased) drive and writes at QD1
# for RUNTIME of simulated time (default 180s, the suite's step),
# offsets with replacement (`norandommap`), as the suite does: "size"
# and "mix" over an 8 GB span, "locality" (uFLIP's pattern: 4 KiB random
# writes confined to a smaller span) over 4–256 MB. Prints one CSV row per
# point: drive, pattern, bs, percentage_random, span, IOPS, MB/s, mean and
# maximum latency (ms). SET="path=value ..." overrides drive fields
# (`--set`), e.g. SET="ftl.hybrid.association=full" for FAST.
#
#   scripts/hybrid-study.sh [DRIVE...]   (default: ocz-core-64gb ocz-slc-64gb)
#   SSDTWIN=target/release/ssdtwin RUNTIME=180s scripts/hybrid-study.sh
set -euo pipefail
bin=${SSDTWIN:-target/release/ssdtwin}
runtime=${RUNTIME:-180s}
sets=()
for kv in ${SET:-}; do sets+=(--set "$kv"); done
drives=("$@")
[ ${#drives[@]} -eq 0 ] && drives=(ocz-core-64gb ocz-slc-64gb)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
row() { # drive pattern bs pct span args...
    local d=$1 p=$2 bs=$3 pct=$4 span=$5
    shift 5
    "$bin" run -d "$d" "${sets[@]}" -q --json "$tmp" --name=w --bs="$bs" --iodepth=1 --size="$span" \
        --runtime="$runtime" --time_based=1 --norandommap=1 "$@"
    jq -r --arg d "$d" --arg p "$p" --arg bs "$bs" --arg pct "$pct" --arg span "$span" \
        '.jobs[0].write | [$d, $p, $bs, $pct, $span, (.iops*100|round/100),
          (.bw_bytes/1e6*1000|round/1000), (.lat_ns.mean/1e6*1000|round/1000),
          (.lat_ns.max/1e6*10|round/10)] | @csv' "$tmp"
}
echo '"drive","pattern","bs","percentage_random","span","iops","mb_s","mean_ms","max_ms"'
for d in "${drives[@]}"; do
    for bs in 4k 8k 16k 32k 64k 128k; do
        row "$d" size "$bs" 100 8g --rw=randwrite
    done
    for pct in 0 1 5 10 25 50; do
        row "$d" mix 4k "$pct" 8g --rw=randwrite --percentage_random="$pct"
    done
    for span in 4m 16m 64m 256m; do
        row "$d" locality 4k 100 "$span" --rw=randwrite
    done
done
