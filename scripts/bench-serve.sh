#!/bin/bash
# Usage: scripts/bench-serve.sh (needs fio, nbdkit, openssl, a release build: R=path/to/ssdtwin, N=requests)
# CPU time per request of the server and of fio's nbd engine, and wall IOPS, for
# 4 KiB random reads and writes at QD32 over loopback, time scale 0; then the
# same through TLS (--tls=require, an ECDSA P-256 certificate; fio's libnbd
# finds the CA in $HOME/.pki/libnbd).
# ROUNDS=N: repeat the plaintext and TLS measurements N times, alternating.
# RT=1: run the servers and fio at real-time priority (chrt -f 10; needs root
# or CAP_SYS_NICE), so that other processes on a shared machine do not set
# the rates; the pair then has the cores to itself (the kernel keeps 5 % of
# each second for everything else).
# PIN=1: the server on CPU 0 and fio on CPU 1 (taskset), so that neither
# takes the other's core: the rate is then the slower one's, and the
# server's CPU per request is its own cost, not a share of a core it
# trades with fio. (Needs 2 CPUs.)
# CORK=1: TLS writes with scripts/msg-more-shim.c loaded into fio (needs cc),
# so that each write's two TLS records leave in one TCP segment, as a
# plaintext write's header and payload do (docs/nbd-tls.md, sixth round): a
# measurement of the client's segmentation, not a configuration.
R=${R:-${CARGO_TARGET_DIR:-target}/release/ssdtwin}
N=${N:-200000}
PRIO=()
[ -n "${RT:-}" ] && PRIO=(chrt -f 10)
SRV=("${PRIO[@]}") CLI=("${PRIO[@]}")
[ -n "${PIN:-}" ] && SRV=(taskset -c 0 "${PRIO[@]}") CLI=(taskset -c 1 "${PRIO[@]}")
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
# The server's CPU per request between two readings of cpu, and its share
# of the run's wall time (busy: 100 % would be a server that never waits).
busy() { python3 -c "c=($2-$1)/100; rt=float(open('$T/rt').read()); print('%.2f us/req, busy %.0f %% of the run' % (c/$N*1e6, 100*c/rt))"; }
run_fio() { # uri rw
  "${CLI[@]}" fio --name=s --ioengine=nbd --uri=$1 --rw=$2 --bs=4k --iodepth=32 --size=1g --number_ios=$N --output-format=json 2>/dev/null \
   | python3 -c "
import json,sys; t=sys.stdin.read(); d=json.loads(t[t.index('{'):]); j=d['jobs'][0]; k='$2'.replace('rand','')
x=j[k]; rt=j['job_runtime']/1e3; open('$T/rt','w').write(str(rt))
print('%s: %d ios, %.0f IOPS wall, fio cpu %.1f us/req' % ('$2', x['total_ios'], x['iops'], (j['usr_cpu']+j['sys_cpu'])/100*rt/x['total_ios']*1e6))"
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
T=$(mktemp -d)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -keyout $T/ca-key.pem -out $T/ca-cert.pem -subj "/CN=bench CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $T/server-key.pem -out $T/server.csr -subj /CN=localhost 2>/dev/null
printf "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n" > $T/ext.cnf
openssl x509 -req -days 2 -in $T/server.csr -CA $T/ca-cert.pem -CAkey $T/ca-key.pem -CAcreateserial -out $T/server-cert.pem -extfile $T/ext.cnf 2>/dev/null
mkdir -p $T/home/.pki/libnbd && cp $T/ca-cert.pem $T/home/.pki/libnbd/
SHIM=()
if [ -n "${CORK:-}" ]; then
  cc -O2 -shared -fPIC -o $T/msg-more-shim.so "$(dirname "$0")/msg-more-shim.c" -ldl || exit 1
  SHIM=(env LD_PRELOAD=$T/msg-more-shim.so)
fi
wait_for() { for _ in $(seq 100); do HOME=${2:-$HOME} nbdinfo --size "$1" >/dev/null 2>&1 && return; sleep 0.2; done; }
for round in $(seq ${ROUNDS:-1}); do
[ "${ROUNDS:-1}" -gt 1 ] && echo "round $round:"
"${SRV[@]}" $R serve --drive generic-tlc-nvme --listen 127.0.0.1:10940 --time-scale 0 --json /tmp/nbdspeed.json -q & P=$!
wait_for nbd://127.0.0.1:10940/ssdtwin
for rw in randwrite randread; do
  c0=$(cpu $P); run_fio nbd://127.0.0.1:10940/ssdtwin $rw; c1=$(cpu $P)
  echo "  ssdtwin serve cpu: $(busy $c0 $c1) (clock ticks of 10 ms)"
done
kill -TERM $P; wait $P
python3 -c "import json; d=json.load(open('/tmp/nbdspeed.json'))['serve']; print('  twin (inside the lock): %.2f us/req over %d requests' % (d['twin_wall_ns_per_request']/1e3, d['requests']))"
"${SRV[@]}" $R serve --drive generic-tlc-nvme --listen 127.0.0.1:10942 --time-scale 0 --tls require --tls-certificates $T --json /tmp/nbdspeed-tls.json -q & P=$!
wait_for nbds://127.0.0.1:10942/ssdtwin $T/home
echo "TLS:${CORK:+ (writes with msg-more-shim.so)}"
for rw in randwrite randread; do
  # The shim only for writes (a read's header has no payload to go with).
  CLI0=("${CLI[@]}"); [ $rw = randwrite ] && CLI=("${CLI[@]}" "${SHIM[@]}")
  c0=$(cpu $P); HOME=$T/home run_fio nbds://127.0.0.1:10942/ssdtwin $rw; c1=$(cpu $P)
  CLI=("${CLI0[@]}")
  echo "  ssdtwin serve --tls require cpu: $(busy $c0 $c1)"
done
kill -TERM $P; wait $P
python3 -c "import json; d=json.load(open('/tmp/nbdspeed-tls.json'))['serve']; print('  of its cpu, polling for input before sleeping: %.2f us/req (both runs)' % (d['tls_poll_wall_ns_total']/1e3/d['requests']))"
done
rm -rf $T /tmp/nbdspeed.json /tmp/nbdspeed-tls.json
command -v nbdkit >/dev/null || { echo "nbdkit is not installed: no yardstick rows"; exit 0; }
"${SRV[@]}" nbdkit -f -p 10941 -i 127.0.0.1 memory 1G & K=$!
sleep 1
for rw in randwrite randread; do
  c0=$(cpu $K); run_fio nbd://127.0.0.1:10941/ $rw; c1=$(cpu $K)
  echo "  nbdkit memory cpu: $(busy $c0 $c1)"
done
kill $K
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
