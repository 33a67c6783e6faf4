#!/usr/bin/env bash
# The fit's demonstration on this machine's own disk (issue "ssdtwin fit",
# item 4): the characterization battery run by real fio on a file, a drive
# file fitted to it, and a job the battery did not run predicted by the
# fitted twin and measured by fio, with the error. docs/fit.md gives a run's
# numbers and what the fit makes of a disk that is not an SSD of the kind
# the model was built for.
#
#   scripts/fit-local-disk.sh [SIZE] [BASE] [DIR]
#     SIZE  the file's size (default 16G; the fit scales the base's raw
#           capacity to it, with smaller blocks for a drive of a few GB)
#     BASE  the preset to start from (default generic-tlc-nvme)
#     DIR   where the file, results and fitted drive go (default a new
#           temporary directory; the file is removed at the end)
#
# Needs fio (libaio engine) and a release build (cargo build --release).
set -euo pipefail
size=${1:-16G}
base=${2:-generic-tlc-nvme}
dir=${3:-$(mktemp -d /tmp/ssdtwin-fit-local.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
twin=${SSDTWIN:-$root/target/release/ssdtwin}
[ -x "$twin" ] || { echo "build first: cargo build --release (or set SSDTWIN)" >&2; exit 1; }
command -v fio >/dev/null || { echo "needs fio (apt-get install fio)" >&2; exit 1; }

mkdir -p "$dir"
cd "$dir"
trap 'rm -f "$dir/disk.img"' EXIT
# Short battery: runtimes and pauses × 0.05 (a file on a general-purpose
# disk, not a 1 TB SSD; the fill still writes the whole file).
"$twin" fit --jobs jobs --time-scale 0.05
rm -f disk.img ./*_bw.*.log
fallocate -l "$size" disk.img
echo "battery: real fio on $dir/disk.img ($size)"
# fio exits 1 when a job fails: on a regular file the trim does (fio 3.33
# cannot trim a file, error 25); the fit warns about it and goes on.
DEV="$dir/disk.img" fio --output-format=json+ --output=battery.json jobs/battery.fio ||
    echo "fio reported a job error (see the fit's notes)"
echo "fit from $base"
"$twin" fit --base "$base" battery.json --out fitted.toml | tee fit.txt

cat > predict.fio <<'EOF'
; not in the battery: 16 KiB random reads and writes, 50/50, QD8, over 5% of the drive
[global]
filename=${DEV}
ioengine=libaio
direct=1
randseed=7

[predict]
rw=randrw
rwmixread=50
bs=16k
iodepth=8
size=5%
runtime=5s
EOF
DEV="$dir/disk.img" fio --output-format=json --output=predict-real.json predict.fio
# The file is full after the battery: the twins start full too.
DEV=twin "$twin" run --drive fitted.toml --state full --job-file predict.fio --output-format json \
    --output predict-fitted.json 2>/dev/null
DEV=twin "$twin" run --drive "$base" --state full --job-file predict.fio --output-format json \
    --output predict-base.json 2>/dev/null
python3 - "$base" <<'EOF'
import json, sys
def get(f):
    j = json.load(open(f))["jobs"][0]
    return j["read"]["iops"], j["write"]["iops"], j["read"]["clat_ns"]["mean"] / 1e3
real = get("predict-real.json")
print(f"{'16k randrw QD8':26} {'read IOPS':>10} {'write IOPS':>10} {'read clat µs':>13}")
print(f"{'measured (fio)':26} {real[0]:10.0f} {real[1]:10.0f} {real[2]:13.1f}")
for name, f in [("fitted twin", "predict-fitted.json"), (f"base ({sys.argv[1]})", "predict-base.json")]:
    v = get(f)
    err = [f"{(a / b - 1) * 100:+.1f}%" for a, b in zip(v, real)]
    print(f"{name:26} {v[0]:10.0f} {v[1]:10.0f} {v[2]:13.1f}   errors {' '.join(err)}")
EOF
echo "results in $dir"
