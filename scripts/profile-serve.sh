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
trap '[ -n "${KEEP:-}" ] && cp $T/perf.data "$KEEP"; rm -rf "$T"' EXIT
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
# PIN=1: the server on CPU 0, fio on CPU 1 (taskset).
SRV=(chrt -f 10) CLI=(chrt -f 10)
[ -n "${PIN:-}" ] && SRV=(taskset -c 0 chrt -f 10) CLI=(taskset -c 1 chrt -f 10)
if [ -n "${COUNT:-}" ]; then
  # COUNT=1: count instead of sampling: the server's system calls by
  # name, its context switches and CPU time, per request (perf stat
  # follows every thread the server starts).
  perf stat -x, -e 'syscalls:sys_enter_*',task-clock,context-switches -o $T/stat.txt -- "${SRV[@]}" "$R" "${args[@]}" 2>/dev/null & PP=$!
else
  perf record -F 4999 -e cpu-clock -g -o $T/perf.data -- "${SRV[@]}" "$R" "${args[@]}" 2>/dev/null & PP=$!
fi
for _ in $(seq 100); do HOME=$T/home nbdinfo --size $URI >/dev/null 2>&1 && break; sleep 0.2; done
export HOME=$T/home
[ "$rw" = randread ] && "${CLI[@]}" fio --name=fill --ioengine=nbd --uri=$URI --rw=write --bs=1m --iodepth=4 --size=1g >/dev/null 2>&1
"${CLI[@]}" fio --name=s --ioengine=nbd --uri=$URI --rw=$rw --bs=4k --iodepth=32 --size=1g --number_ios=$N --output-format=json > $T/fio.json 2>/dev/null
kill -TERM $(pgrep -P $PP); wait $PP || true
python3 -c "
import json; t=open('$T/fio.json').read(); j=json.loads(t[t.index('{'):])['jobs'][0]; x=j['$rw'.replace('rand','')]
print('$mode $rw: %.1f K IOPS, fio CPU %.2f us a request' % (x['iops']/1e3, (j['usr_cpu']+j['sys_cpu'])/100*j['job_runtime']/1e3/x['total_ios']*1e6))"
if [ -n "${COUNT:-}" ]; then
  # Everything the server did (its start and the fill included, for
  # reads: subtract a plaintext/TLS pair's difference, not absolutes).
  python3 -c "
rows=[l.split(',') for l in open('$T/stat.txt') if l.count(',')>=3 and not l.startswith('#')]
for r in rows:
    try: v=float(r[0])
    except ValueError: continue
    if v<=0: continue
    if r[2]=='task-clock': print('  %10.3f us of CPU a request' % (v/$N*1e3))
    else: print('  %10.3f a request  %s' % (v/$N, r[2].replace('syscalls:sys_enter_','')))"
  exit 0
fi
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
