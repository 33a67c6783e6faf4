#!/bin/bash
# Usage: scripts/bench-serve.sh (needs fio, nbdkit, a release build: R=path/to/ssdtwin, N=requests)
# CPU time per request of the server and of fio's nbd engine, and wall IOPS, for
# 4 KiB random reads and writes at QD32 over loopback, time scale 0.
R=${R:-${CARGO_TARGET_DIR:-target}/release/ssdtwin}
N=${N:-200000}
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
run_fio() { # uri rw
  fio --name=s --ioengine=nbd --uri=$1 --rw=$2 --bs=4k --iodepth=32 --size=1g --number_ios=$N --output-format=json 2>/dev/null \
   | python3 -c "
import json,sys; t=sys.stdin.read(); d=json.loads(t[t.index('{'):]); j=d['jobs'][0]; k='$2'.replace('rand','')
x=j[k]; rt=j['job_runtime']/1e3;
print('%s: %d ios, %.0f IOPS wall, fio cpu %.1f us/req' % ('$2', x['total_ios'], x['iops'], (j['usr_cpu']+j['sys_cpu'])/100*rt/x['total_ios']*1e6))"
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
$R serve --drive generic-tlc-nvme --listen 127.0.0.1:10940 --time-scale 0 --json /tmp/nbdspeed.json -q & P=$!
sleep 2
for rw in randwrite randread; do
  c0=$(cpu $P); run_fio nbd://127.0.0.1:10940/ssdtwin $rw; c1=$(cpu $P)
  echo "  ssdtwin serve cpu: $(python3 -c "print('%.2f' % (($c1-$c0)/100/$N*1e6))") us/req (clock ticks of 10 ms)"
done
kill -TERM $P; wait $P
python3 -c "import json; d=json.load(open('/tmp/nbdspeed.json'))['serve']; print('  twin (inside the lock): %.2f us/req over %d requests' % (d['twin_wall_ns_per_request']/1e3, d['requests']))"
nbdkit -f -p 10941 -i 127.0.0.1 memory 1G & K=$!
sleep 1
for rw in randwrite randread; do
  c0=$(cpu $K); run_fio nbd://127.0.0.1:10941/ $rw; c1=$(cpu $K)
  echo "  nbdkit memory cpu: $(python3 -c "print('%.2f' % (($c1-$c0)/100/$N*1e6))") us/req"
done
kill $K
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
