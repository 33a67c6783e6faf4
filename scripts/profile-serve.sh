#!/bin/bash
# Usage: scripts/profile-serve.sh plain|tls randwrite|randread (needs perf, fio, nbdinfo,
# openssl, a release build: R=path/to/ssdtwin, N=requests)
# Where the server's CPU goes per request (docs/nbd-tls.md, "Whose CPU the
# write gap is"): `perf record -e cpu-clock -g` (a software clock, so it
# works in VMs without hardware counters) around `ssdtwin serve --time-scale
# 0`, while fio sends N 4 KiB random requests at QD32 (reads after 1 GiB is
# written, so that they carry data); then the samples of the busiest thread
# other than the drive's construction, grouped by where their leaf function
# is, in µs per request. Server and fio at real-time priority (chrt -f 10;
# root or CAP_SYS_NICE).
set -eu
R=${R:-${CARGO_TARGET_DIR:-target}/release/ssdtwin}
N=${N:-200000}
mode=${1:?plain or tls}; rw=${2:?randwrite or randread}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
args=(serve --drive generic-tlc-nvme --listen 127.0.0.1:10954 --time-scale 0 -q)
URI=nbd://127.0.0.1:10954/ssdtwin
if [ "$mode" = tls ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -keyout $T/ca-key.pem -out $T/ca-cert.pem -subj "/CN=bench CA" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $T/server-key.pem -out $T/server.csr -subj /CN=localhost 2>/dev/null
  printf "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n" > $T/ext.cnf
  openssl x509 -req -days 2 -in $T/server.csr -CA $T/ca-cert.pem -CAkey $T/ca-key.pem -CAcreateserial -out $T/server-cert.pem -extfile $T/ext.cnf 2>/dev/null
  args+=(--tls require --tls-certificates $T); URI=nbds://127.0.0.1:10954/ssdtwin
fi
mkdir -p $T/home/.pki/libnbd; [ "$mode" = tls ] && cp $T/ca-cert.pem $T/home/.pki/libnbd/
perf record -F 4999 -e cpu-clock -g -o $T/perf.data -- chrt -f 10 "$R" "${args[@]}" 2>/dev/null & PP=$!
for _ in $(seq 100); do HOME=$T/home nbdinfo --size $URI >/dev/null 2>&1 && break; sleep 0.2; done
export HOME=$T/home
[ "$rw" = randread ] && chrt -f 10 fio --name=fill --ioengine=nbd --uri=$URI --rw=write --bs=1m --iodepth=4 --size=1g >/dev/null 2>&1
chrt -f 10 fio --name=s --ioengine=nbd --uri=$URI --rw=$rw --bs=4k --iodepth=32 --size=1g --number_ios=$N >/dev/null 2>&1
kill -TERM $(pgrep -P $PP); wait $PP || true
perf script -i $T/perf.data -F tid,ip,sym,dso 2>/dev/null | python3 -c "
import sys, collections
samples, cur = [], None
for line in sys.stdin:
    if not line.strip():
        if cur and cur[1]: samples.append(cur)
        cur = None
    elif not line[0].isspace():
        cur = [int(line.split()[0]), []]
    elif cur is not None:
        cur[1].append(line.split(None, 1)[-1].strip())
if cur and cur[1]: samples.append(cur)
def startup(st): return any('HugeVec' in f for f in st)
by = collections.Counter(t for t, st in samples if not startup(st))
tid = by.most_common(1)[0][0]
def where(st):
    leaf, s = st[0], ' '.join(st)
    if 'kernel' in leaf:
        if 'finish_task_switch' in s or '__schedule' in s: return 'kernel, sleeping and being woken'
        if 'recv' in s: return 'kernel, under recv'
        if 'send' in s or 'write' in s: return 'kernel, under send'
        if 'exc_page_fault' in s: return 'kernel, page faults'
        return 'kernel, other'
    if 'ring' in leaf: return 'ring (AES-GCM)'
    if 'rustls' in leaf: return 'rustls'
    if 'libc' in leaf: return 'libc (copies, allocation)'
    if 'ssdtwin_nbd' in leaf: return 'the server'
    if 'ssdtwin' in leaf: return 'the twin'
    return 'other'
c = collections.Counter(where(st) for t, st in samples if t == tid)
n = sum(c.values())
print('$mode $rw: thread %d, %.2f us a request (%d samples at 4999 Hz, $N requests)' % (tid, n / 4999 / $N * 1e6, n))
for k, v in c.most_common(): print('  %6.2f us  %5.1f %%  %s' % (v / 4999 / $N * 1e6, 100 * v / n, k))
"
