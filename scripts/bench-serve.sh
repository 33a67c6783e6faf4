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
# CLIENT=qemu: QEMU's NBD client instead of fio (qemu-io, which takes the
# TLS credentials as --object, as qemu-img bench does not; qemu-img bench
# for the plaintext rows too, as a yardstick of qemu-io's own cost; and
# qemu-img convert, an image copy writing 4 KiB at a time, TLS or not).
# QEMU corks a write's header and payload into one segment, TLS or not
# (block/nbd.c, nbd_co_send_request; io/channel-tls.c passes the cork to
# the socket), and keeps at most 16 requests in flight (MAX_NBD_REQUESTS),
# whatever the depth asked: the rows are QD16 on the wire.
R=${R:-${CARGO_TARGET_DIR:-target}/release/ssdtwin}
N=${N:-200000}
PRIO=()
[ -n "${RT:-}" ] && PRIO=(chrt -f 10)
SRV=("${PRIO[@]}") CLI=("${PRIO[@]}")
[ -n "${PIN:-}" ] && SRV=(taskset -c 0 "${PRIO[@]}") CLI=(taskset -c 1 "${PRIO[@]}")
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
# The server's CPU per request between two readings of cpu, and its share
# of the run's wall time (busy: 100 % would be a server that never waits).
busy() { python3 -c "c=($2-$1)/100; rt=float(open('$T/rt').read()); n=int(open('$T/n').read()); print('%.2f us/req, busy %.0f %% of the run' % (c/n*1e6, 100*c/rt))"; }
run_fio() { # uri rw
  "${CLI[@]}" fio --name=s --ioengine=nbd --uri=$1 --rw=$2 --bs=4k --iodepth=32 --size=1g --number_ios=$N --output-format=json 2>/dev/null \
   | python3 -c "
import json,sys; t=sys.stdin.read(); d=json.loads(t[t.index('{'):]); j=d['jobs'][0]; k='$2'.replace('rand','')
x=j[k]; rt=j['job_runtime']/1e3; open('$T/rt','w').write(str(rt)); open('$T/n','w').write(str(x['total_ios']))
print('%s: %d ios, %.0f IOPS wall, fio cpu %.1f us/req' % ('$2', x['total_ios'], x['iops'], (j['usr_cpu']+j['sys_cpu'])/100*rt/x['total_ios']*1e6))"
}
# QEMU's client: qemu-io reads N aio_write/aio_read commands of 4 KiB at
# consecutive offsets (wrapping at 1 GiB) from a file, draining every 4096
# (aio_flush waits for them; no NBD flush is sent) so that its buffers
# stay bounded; its wall time and CPU are the run's.
run_qemu() { # image-opts rw [--object ...]
  local opts=$1 rw=$2; shift 2
  local cmd=aio_write; [ $rw = randread ] && cmd=aio_read
  python3 -c "
for i in range($N):
    print('$cmd -q %d 4k' % (i % 262144 * 4096))
    if i % 4096 == 4095: print('aio_flush')
print('aio_flush')" > $T/cmds
  "${CLI[@]}" /usr/bin/time -o $T/time -f '%e %U %S' qemu-io -t none "$@" --image-opts "$opts" < $T/cmds > /dev/null || return
  python3 -c "
e,u,s=map(float,open('$T/time').read().split()); open('$T/rt','w').write(str(e)); open('$T/n','w').write('$N')
print('%s (qemu-io): %d ios, %.0f IOPS wall, qemu-io cpu %.1f us/req' % ('$rw', $N, $N/e, (u+s)/$N*1e6))"
}
# qemu-img convert of an image whose every other 4 KiB is zeros onto the
# export (16 coroutines, out of order, the zeros skipped as the export
# starts zeroed): a copy that writes 4 KiB at a time, at most 65 536.
run_convert() { # image-opts [--object ...]
  local opts=$1; shift
  local n=$(( N < 65536 ? N : 65536 ))
  [ -s $T/src.img ] || python3 -c "
with open('$T/src.img','wb') as f:
    for i in range($n): f.write(b'\xaa'*4096+bytes(4096))"
  "${CLI[@]}" /usr/bin/time -o $T/time -f '%e %U %S' qemu-img convert -n --target-is-zero -W -m 16 -S 4k "$@" -f raw $T/src.img --target-image-opts "$opts" || return
  python3 -c "
e,u,s=map(float,open('$T/time').read().split()); open('$T/rt','w').write(str(e)); open('$T/n','w').write('$n')
print('randwrite (qemu-img convert): %d ios, %.0f IOPS wall, qemu-img cpu %.1f us/req' % ($n, $n/e, (u+s)/$n*1e6))"
}
run_qemu_bench() { # image-opts rw
  local w=(); [ $2 = randwrite ] && w=(-w)
  "${CLI[@]}" /usr/bin/time -o $T/time -f '%e %U %S' qemu-img bench "${w[@]}" -d 32 -c $N -s 4096 -t none --image-opts "$1" > $T/out || return
  python3 -c "
import re; e=float(re.search(r'completed in ([0-9.]+) seconds', open('$T/out').read()).group(1))
_,u,s=map(float,open('$T/time').read().split()); open('$T/rt','w').write(str(e)); open('$T/n','w').write('$N')
print('%s (qemu-img bench): %d ios, %.0f IOPS wall, qemu-img cpu %.1f us/req' % ('$2', $N, $N/e, (u+s)/$N*1e6))"
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
plain_up() { "${SRV[@]}" $R serve --drive generic-tlc-nvme --listen 127.0.0.1:10940 --time-scale 0 --json /tmp/nbdspeed.json -q & P=$!; wait_for nbd://127.0.0.1:10940/ssdtwin; }
tls_up() { "${SRV[@]}" $R serve --drive generic-tlc-nvme --listen 127.0.0.1:10942 --time-scale 0 --tls require --tls-certificates $T --json /tmp/nbdspeed-tls.json -q & Q=$!; wait_for nbds://127.0.0.1:10942/ssdtwin $T/home; }
twin_line() { python3 -c "import json; d=json.load(open('/tmp/nbdspeed.json'))['serve']; print('  twin (inside the lock): %.2f us/req over %d requests' % (d['twin_wall_ns_per_request']/1e3, d['requests']))"; }
poll_line() { python3 -c "import json; d=json.load(open('/tmp/nbdspeed-tls.json'))['serve']; print('  TLS, of its cpu, polling for input before sleeping: %.2f us/req (all runs)' % (d['tls_poll_wall_ns_total']/1e3/d['requests']))"; }
QOPTS=driver=nbd,server.type=inet,server.host=127.0.0.1,export=ssdtwin
if [ "${CLIENT:-}" = qemu ]; then
  # qemu-io's own cost per command, with no NBD behind it.
  run_qemu driver=null-co,size=1G randwrite | sed 's/randwrite (qemu-io)/qemu-io against null-co, writes/'
  # Both servers up, and each client's plaintext and TLS runs next to
  # each other, so that the machine moves as little as it can between
  # the two (only the running one uses its core).
  TLSOBJ=(--object tls-creds-x509,id=tls0,endpoint=client,dir=$T)
  for round in $(seq ${ROUNDS:-1}); do
    [ "${ROUNDS:-1}" -gt 1 ] && echo "round $round:"
    plain_up; tls_up
    for rw in randwrite randread; do
      c0=$(cpu $P); run_qemu_bench $QOPTS,server.port=10940 $rw; c1=$(cpu $P)
      echo "  ssdtwin serve cpu: $(busy $c0 $c1)"
      if [ $rw = randwrite ]; then
        c0=$(cpu $P); run_convert driver=raw,file.$(echo $QOPTS,server.port=10940 | sed 's/,/,file./g'); c1=$(cpu $P)
        echo "  ssdtwin serve cpu: $(busy $c0 $c1)"
        c0=$(cpu $Q); echo -n "TLS: "; run_convert driver=raw,file.$(echo $QOPTS,server.port=10942,tls-creds=tls0 | sed 's/,/,file./g') "${TLSOBJ[@]}"; c1=$(cpu $Q)
        echo "  ssdtwin serve --tls require cpu: $(busy $c0 $c1)"
      fi
      c0=$(cpu $P); run_qemu $QOPTS,server.port=10940 $rw; c1=$(cpu $P)
      echo "  ssdtwin serve cpu: $(busy $c0 $c1)"
      c0=$(cpu $Q); echo -n "TLS: "; run_qemu $QOPTS,server.port=10942,tls-creds=tls0 $rw "${TLSOBJ[@]}"; c1=$(cpu $Q)
      echo "  ssdtwin serve --tls require cpu: $(busy $c0 $c1)"
    done
    kill -TERM $P $Q; wait $P $Q
    twin_line; poll_line
  done
  rm -rf $T /tmp/nbdspeed.json /tmp/nbdspeed-tls.json
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi
for round in $(seq ${ROUNDS:-1}); do
[ "${ROUNDS:-1}" -gt 1 ] && echo "round $round:"
plain_up
for rw in randwrite randread; do
  c0=$(cpu $P); run_fio nbd://127.0.0.1:10940/ssdtwin $rw; c1=$(cpu $P)
  echo "  ssdtwin serve cpu: $(busy $c0 $c1) (clock ticks of 10 ms)"
done
kill -TERM $P; wait $P
twin_line
tls_up; P=$Q
echo "TLS:${CORK:+ (writes with msg-more-shim.so)}"
for rw in randwrite randread; do
  # The shim only for writes (a read's header has no payload to go with).
  CLI0=("${CLI[@]}"); [ $rw = randwrite ] && CLI=("${CLI[@]}" "${SHIM[@]}")
  c0=$(cpu $P); HOME=$T/home run_fio nbds://127.0.0.1:10942/ssdtwin $rw; c1=$(cpu $P)
  CLI=("${CLI0[@]}")
  echo "  ssdtwin serve --tls require cpu: $(busy $c0 $c1)"
done
kill -TERM $P; wait $P
poll_line
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
