#!/usr/bin/env bash
# The fit end to end with real clients (issue "ssdtwin fit", item 4): the
# characterization battery run by real fio (ioengine=nbd) through
# `ssdtwin serve` in real time against a small twin of a preset, a drive
# file fitted to fio's JSON from another preset, and the fitted drive set
# beside the served one: its parameters, and jobs the battery did not run.
# docs/fit.md gives a run's numbers.
#
#   scripts/fit-through-serve.sh [TARGET] [BASE] [CAPACITY] [DIR]
#     TARGET    the preset served (default intel-660p-512gb)
#     BASE      the preset the fit starts from (default intel-660p-1tb)
#     CAPACITY  the served twin's capacity (default 4g: the server holds
#               every byte fio writes in memory)
#     DIR       where results go (default a new temporary directory)
#
# Needs fio with its nbd engine (Debian's fio) and a release build.
set -euo pipefail
target=${1:-intel-660p-512gb}
base=${2:-intel-660p-1tb}
capacity=${3:-4g}
dir=${4:-$(mktemp -d /tmp/ssdtwin-fit-serve.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
twin=${SSDTWIN:-$root/target/release/ssdtwin}
[ -x "$twin" ] || { echo "build first: cargo build --release (or set SSDTWIN)" >&2; exit 1; }
fio --enghelp=nbd >/dev/null 2>&1 || { echo "needs fio with the nbd engine (apt-get install fio)" >&2; exit 1; }

mkdir -p "$dir"
cd "$dir"
"$twin" show "$target" --capacity "$capacity" > target.toml
"$twin" fit --jobs jobs --time-scale 0.05
# The battery as written, but through NBD: every ioengine line becomes
# fio's nbd engine on the server's socket (filename is then ignored).
sock="$dir/nbd.sock"
sed -e "s|^ioengine=.*|ioengine=nbd\nuri=nbd+unix:///ssdtwin?socket=$sock|" jobs/battery.fio > battery-nbd.fio

"$twin" serve --drive target.toml --unix "$sock" --time-scale 1 --json serve.json > serve.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
echo "battery: real fio through ssdtwin serve ($target, $capacity, real time)"
start=$(date +%s)
DEV=nbd fio --output-format=json+ --output=battery.json battery-nbd.fio
echo "battery took $(( $(date +%s) - start )) s"
# fio's nbd engine connects once per job: the server runs until stopped.
kill -TERM $server
wait $server || true
trap - EXIT

echo "fit from $base"
"$twin" fit --base "$base" battery.json --out fitted.toml | tee fit.txt

# Jobs the battery did not run, simulated on the served drive and on the
# fitted one (no server: the twin's own numbers).
cat > unseen.fio <<'EOF'
[global]
filename=${DEV}
randseed=3
stonewall
[randread-qd8]
rw=randread
bs=4k
iodepth=8
runtime=300ms
[randwrite-16k-qd8]
rw=randwrite
bs=16k
iodepth=8
size=20%
runtime=500ms
[seqwrite-256k-qd4]
rw=write
bs=256k
iodepth=4
size=30%
EOF
for d in target fitted; do
    DEV=twin "$twin" run --drive $d.toml --state filled:50 --job-file unseen.fio --output-format json \
        --output unseen-$d.json 2>/dev/null
done
python3 - <<'EOF'
import json
def jobs(f):
    out = {}
    for j in json.load(open(f))["jobs"]:
        d = "read" if j["read"]["io_bytes"] else "write"
        out[j["jobname"]] = j[d]["bw_bytes"] / 1e6
    return out
t, f = jobs("unseen-target.json"), jobs("unseen-fitted.json")
print(f"{'not in the battery (half-full drive)':38} {'served MB/s':>12} {'fitted MB/s':>12} {'error':>8}")
for k in t:
    print(f"{k:38} {t[k]:12.1f} {f[k]:12.1f} {(f[k] / t[k] - 1) * 100:+7.1f}%")
EOF
echo "results in $dir"
