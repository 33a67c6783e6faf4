#!/bin/bash
# Usage: scripts/latency-stalls.sh tcp|unix [SESSIONS] (needs fio, nbdinfo, a release build:
# R=path/to/ssdtwin; root or CAP_SYS_NICE for chrt)
# Where a QD1 session's mean latency through `serve --time-scale 1` is raised
# by stalls (docs/nbd-latency.md): SESSIONS fio sessions of 20 000 4 KiB random
# reads at QD1 against one server (generic-tlc-nvme, 2 GB, full), server and
# fio at real-time priority; per session fio's total latency (mean, median,
# 99.9th percentile, max, and how many of fio's percentile points are above
# 1 ms), the growth of the ksoftirqd threads' run-queue wait
# (/proc/PID/schedstat) and their wake-ups, and the machine's steal time (the
# VM's host running something else, /proc/stat).
R=${R:-${CARGO_TARGET_DIR:-target}/release/ssdtwin}
t=${1:?tcp or unix}; S=${2:-8}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if [ "$t" = tcp ]; then URI=nbd://127.0.0.1:10963/ssdtwin; L=(--listen 127.0.0.1:10963)
else URI="nbd+unix:///ssdtwin?socket=$T/s.sock"; L=(--unix $T/s.sock); fi
chrt -f 10 "$R" serve --drive generic-tlc-nvme --set ftl.user_capacity_bytes=2000003072 --state full --time-scale 1 -q "${L[@]}" & P=$!
for _ in $(seq 200); do nbdinfo --size "$URI" >/dev/null 2>&1 && break; sleep 0.2; done
ks() { for p in $(pgrep -x 'ksoftirqd/[0-9]+'); do awk -v p=$p '{printf "%s:%s:%s ", p, $2, $3}' /proc/$p/schedstat; done; }
steal() { awk '/^cpu /{print $9}' /proc/stat; }
for _ in $(seq "$S"); do
  a=$(ks); s0=$(steal)
  chrt -f 10 fio --name=l --ioengine=nbd --uri="$URI" --rw=randread --bs=4k --iodepth=1 --size=1g --number_ios=20000 \
    --lat_percentiles=1 --output-format=json 2>/dev/null > $T/l.json
  b=$(ks); s1=$(steal)
  python3 - "$a" "$b" $((s1 - s0)) $T/l.json <<'PY'
import json, sys
t = open(sys.argv[4]).read(); x = json.loads(t[t.index('{'):])['jobs'][0]['read']['lat_ns']
def parse(s): return {e.split(':')[0]: (int(e.split(':')[1]), int(e.split(':')[2])) for e in s.split()}
a, b = parse(sys.argv[1]), parse(sys.argv[2])
wait = sum(b[k][0] - a[k][0] for k in b if k in a) / 1e6
wakeups = sum(b[k][1] - a[k][1] for k in b if k in a)
p = x['percentile']
print('mean %6.1f us  p50 %5.1f  p99.9 %7.1f  max %8.1f us  points >1 ms: %s | ksoftirqd: %4d runs, waited %7.2f ms | steal %d ms'
      % (x['mean'] / 1e3, p['50.000000'] / 1e3, p['99.900000'] / 1e3, x['max'] / 1e3, sum(1 for v in p.values() if v > 1e6),
         wakeups, wait, 10 * int(sys.argv[3])))
PY
done
kill -INT $P; wait $P
