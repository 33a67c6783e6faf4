#!/bin/bash
# Usage: scripts/bench-latency.sh (needs fio, a release build: R=path/to/ssdtwin, N=requests)
# What a real client sees through `ssdtwin serve`: fio's total latency
# (`lat`, mean and median) for QD1 4 KiB random reads and writes on a full
# 16 GB generic-tlc-nvme, at time scale 0 (the transport's floor) and 1
# (real time, replies sent the measured transport delay early), over TCP
# and a Unix socket; then rates at time scale 0: one connection at QD32,
# and 4 connections (fio numjobs=4, QD8 each) sharing the export through
# NBD multi-conn.
# RT=1: the server and fio at real-time priority (chrt -f 10; root or
# CAP_SYS_NICE), so that other processes on a shared machine do not delay
# requests (then the means, not only the medians, are the path's own).
R=${R:-${CARGO_TARGET_DIR:-target}/release/ssdtwin}
N=${N:-20000}
PRIO=()
[ -n "${RT:-}" ] && PRIO=(chrt -f 10)
lat() { # uri rw iodepth numjobs
  "${PRIO[@]}" fio --name=l --ioengine=nbd --uri="$1" --rw=$2 --bs=4k --iodepth=${3:-1} --numjobs=${4:-1} --group_reporting \
      --size=1g --number_ios=$N --lat_percentiles=1 --output-format=json 2>/dev/null | python3 -c "
import json,sys; t=sys.stdin.read(); d=json.loads(t[t.index('{'):]); j=d['jobs'][0]; x=j['$2'.replace('rand','')]
print('  %-9s qd%-2s x%s: lat mean %6.1f us, p50 %6.1f us, %6.0f IOPS' % ('$2', '${3:-1}', '${4:-1}', x['lat_ns']['mean']/1e3, x['lat_ns']['percentile']['50.000000']/1e3, x['iops']))"
}
serve() { # scale listen-args...
  local scale=$1; shift
  "${PRIO[@]}" $R serve --drive generic-tlc-nvme --set ftl.user_capacity_bytes=16000000000 --state full \
     --time-scale $scale --json /tmp/bench-latency.json -q "$@" & P=$!
  for _ in $(seq 100); do nbdinfo --size "$URI" >/dev/null 2>&1 && break; sleep 0.2; done
}
stop() {
  kill -INT $P; wait $P
  python3 -c "
import json; d=json.load(open('/tmp/bench-latency.json')); s=d['serve']; j=d['jobs'][0]
print('  twin:', ', '.join('%s mean %.1f us p50 %.1f us' % (k, j[k]['clat_ns']['mean']/1e3, j[k]['clat_ns']['percentile']['50.000000']/1e3) for k in ('read','write') if j[k]['total_ios']), '; transport delays (us):', [round(x/1e3,1) for x in s['transport_delay_ns']])" 2>/dev/null
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in tcp unix; do
  for scale in 0 1; do
    if [ $t = tcp ]; then URI=nbd://127.0.0.1:10950/ssdtwin; serve $scale --listen 127.0.0.1:10950
    else URI="nbd+unix:///ssdtwin?socket=/tmp/bench-latency.sock"; serve $scale --unix /tmp/bench-latency.sock; fi
    echo "$t, time scale $scale:"
    lat "$URI" randread; lat "$URI" randwrite
    if [ $scale = 0 ]; then lat "$URI" randread 32; lat "$URI" randwrite 32; lat "$URI" randread 8 4; lat "$URI" randwrite 8 4; fi
    stop
  done
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
